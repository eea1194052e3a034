/* SPDX-License-Identifier: MIT */
/*
 * mm_keep.c - kept answer memory (mm_keep.h says why it may be written).
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "gpusandbox.h"
#include "mm_keep.h"

static void slot_empty(struct gs_mm_keep *k, unsigned i)
{
	if (k->slot[i].pidfd >= 0)
		close(k->slot[i].pidfd);
	if (k->slot[i].memfd >= 0)
		close(k->slot[i].memfd);
	if (k->slot[i].tid == k->proven_tid)
		k->proven_tid = 0;
	k->slot[i] = (typeof(k->slot[i])){ .tid = 0, .pidfd = -1, .memfd = -1 };
}

void gs_mm_keep_init(struct gs_mm_keep *k)
{
	k->on = true;
	k->owner = NULL;
	k->calls = 0;
	k->proven_tid = 0;
	for (unsigned i = 0; i < GS_MM_KEEP_SLOTS; i++)
		k->slot[i] = (typeof(k->slot[i])){ .tid = 0, .pidfd = -1, .memfd = -1 };
}

void gs_mm_keep_fini(struct gs_mm_keep *k)
{
	if (!k->on)
		return;
	for (unsigned i = 0; i < GS_MM_KEEP_SLOTS; i++)
		slot_empty(k, i);
	k->owner = NULL;
	k->proven_tid = 0;
}

static void own(struct gs_mm_keep *k, const void *owner)
{
	if (k->owner != owner) {
		gs_mm_keep_fini(k);
		k->owner = owner;
	}
}

static int slot_of(const struct gs_mm_keep *k, pid_t tid)
{
	for (unsigned i = 0; i < GS_MM_KEEP_SLOTS; i++)
		if (k->slot[i].tid == tid)
			return (int)i;
	return -1;
}

/* Was tid's slot found alive for notification id (gs_mm_keep_marks), or
 * made for it (gs_mm_keep_mark)? Then it is the trapped task's. */
static bool proven_for(const struct gs_mm_keep *k, pid_t tid, uint64_t id)
{
	return tid != 0 && k->proven_tid == tid && k->proven_id == id;
}

static void prove(struct gs_mm_keep *k, pid_t tid, uint64_t id)
{
	k->proven_tid = tid;
	k->proven_id = id;
}

/* tid's slot, its task looked at unless already proven for id: -1 when
 * there is none or its task has exited (emptied). */
static int live_slot(struct gs_mm_keep *k, pid_t tid, uint64_t id)
{
	int i = slot_of(k, tid);

	if (i < 0 || proven_for(k, tid, id))
		return i;
	if (gs_pidfd_exited(k->slot[i].pidfd)) {
		slot_empty(k, (unsigned)i);
		return -1;
	}
	return i;
}

/* Slot i's file lent into *m (m->kept: not closed by the call); false
 * when there is no slot or it holds marks alone. */
static bool lend(struct gs_mm_keep *k, int i, struct gs_task_mem *m)
{
	if (i < 0 || k->slot[i].memfd < 0)
		return false;
	k->slot[i].used = k->calls;
	*m = (struct gs_task_mem){ .fd = k->slot[i].memfd, .pidfd = -1, .kept = true };
	return true;
}

bool gs_mm_keep_take(struct gs_mm_keep *k, const void *owner, pid_t tid, uint64_t id, struct gs_task_mem *m)
{
	if (!k->on)
		return false;
	own(k, owner);
	k->calls++;
	return lend(k, live_slot(k, tid, id), m);
}

bool gs_mm_keep_take_unlooked(struct gs_mm_keep *k, const void *owner, pid_t tid, uint64_t id,
                              struct gs_task_mem *m, bool *looked)
{
	if (!k->on)
		return false;
	own(k, owner);
	k->calls++;
	*looked = proven_for(k, tid, id);
	return lend(k, slot_of(k, tid), m);
}

bool gs_mm_keep_look(struct gs_mm_keep *k, pid_t tid, uint64_t id, struct gs_task_mem *m)
{
	int i = k->on ? slot_of(k, tid) : -1;

	if (i >= 0 && m->kept && k->slot[i].memfd == m->fd) {
		if (!gs_pidfd_exited(k->slot[i].pidfd)) {
			prove(k, tid, id);
			return true;
		}
		slot_empty(k, (unsigned)i);
	}
	*m = GS_TASK_MEM_CLOSED;
	return false;
}

void gs_mm_keep_forget(struct gs_mm_keep *k, pid_t tid)
{
	if (!k->on)
		return;
	int i = slot_of(k, tid);
	if (i >= 0)
		slot_empty(k, (unsigned)i);
}

/* A free slot, else the one used longest ago, emptied. */
static unsigned free_slot(struct gs_mm_keep *k)
{
	unsigned victim = 0;

	for (unsigned i = 0; i < GS_MM_KEEP_SLOTS; i++) {
		if (k->slot[i].tid == 0) {
			victim = i;
			break;
		}
		if (k->slot[i].used < k->slot[victim].used)
			victim = i;
	}
	slot_empty(k, victim);
	return victim;
}

/* A slot of tid's own made afresh around pidfd (taken over), tid's old
 * slot, if any, emptied first. */
static int fresh_slot(struct gs_mm_keep *k, int old, pid_t tid, int pidfd)
{
	if (old >= 0)
		slot_empty(k, (unsigned)old);
	unsigned i = free_slot(k);
	k->slot[i].tid = tid;
	k->slot[i].pidfd = pidfd;
	return (int)i;
}

/* tid's slot for notification id, given pidfd, a pidfd of tid (taken
 * over): the slot found alive or made for id, which keeps its own pidfd
 * (of the same task) and marks, pidfd closed; else a fresh one around
 * pidfd. */
static int slot_for(struct gs_mm_keep *k, pid_t tid, uint64_t id, int pidfd)
{
	int i = slot_of(k, tid);

	if (i >= 0 && proven_for(k, tid, id)) {
		/* mm_keep.h: why what was learned through another pidfd of
		 * tid may go on this slot. */
		close(pidfd);
		return i;
	}
	return fresh_slot(k, i, tid, pidfd);
}

void gs_mm_keep_put(struct gs_mm_keep *k, const void *owner, pid_t tid, uint64_t id, struct gs_task_mem *m)
{
	if (!k->on || m->kept || m->fd < 0 || m->pidfd < 0) {
		task_mem_close(m);
		return;
	}
	own(k, owner);
	int i = slot_for(k, tid, id, m->pidfd);
	if (k->slot[i].memfd >= 0)
		close(k->slot[i].memfd);
	k->slot[i].memfd = m->fd;
	*m = GS_TASK_MEM_CLOSED;
	k->slot[i].used = ++k->calls;
}

uint32_t gs_mm_keep_marks(struct gs_mm_keep *k, const void *owner, pid_t tid, uint64_t id)
{
	if (!k->on)
		return 0;
	own(k, owner);
	k->proven_tid = 0;
	int i = live_slot(k, tid, id);
	if (i < 0)
		return 0;
	prove(k, tid, id);
	k->slot[i].used = ++k->calls;
	return k->slot[i].marks;
}

void gs_mm_keep_mark(struct gs_mm_keep *k, const void *owner, pid_t tid, uint64_t id, int pidfd,
                     uint32_t marks)
{
	if (!k->on || pidfd < 0) {
		if (pidfd >= 0)
			close(pidfd);
		return;
	}
	own(k, owner);
	int i = slot_for(k, tid, id, pidfd);
	prove(k, tid, id);
	k->slot[i].marks |= marks;
	k->slot[i].used = ++k->calls;
}
