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
	k->slot[i].tid = 0;
	k->slot[i].pidfd = k->slot[i].memfd = -1;
}

void gs_mm_keep_init(struct gs_mm_keep *k)
{
	k->on = true;
	k->owner = NULL;
	k->calls = 0;
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
}

static void own(struct gs_mm_keep *k, const void *owner)
{
	if (k->owner != owner) {
		gs_mm_keep_fini(k);
		k->owner = owner;
	}
}

bool gs_mm_keep_take(struct gs_mm_keep *k, const void *owner, pid_t tid, struct gs_task_mem *m)
{
	if (!k->on)
		return false;
	own(k, owner);
	k->calls++;
	for (unsigned i = 0; i < GS_MM_KEEP_SLOTS; i++) {
		if (k->slot[i].tid != tid)
			continue;
		if (gs_pidfd_exited(k->slot[i].pidfd)) {
			slot_empty(k, i);
			return false;
		}
		k->slot[i].used = k->calls;
		*m = (struct gs_task_mem){ .fd = k->slot[i].memfd, .pidfd = -1, .kept = true };
		return true;
	}
	return false;
}

void gs_mm_keep_forget(struct gs_mm_keep *k, pid_t tid)
{
	if (!k->on)
		return;
	for (unsigned i = 0; i < GS_MM_KEEP_SLOTS; i++)
		if (k->slot[i].tid == tid)
			slot_empty(k, i);
}

void gs_mm_keep_put(struct gs_mm_keep *k, const void *owner, pid_t tid, struct gs_task_mem *m)
{
	unsigned victim = 0;

	if (!k->on || m->kept || m->fd < 0 || m->pidfd < 0) {
		task_mem_close(m);
		return;
	}
	own(k, owner);
	gs_mm_keep_forget(k, tid);
	/* A free slot, else the one used longest ago. */
	for (unsigned i = 0; i < GS_MM_KEEP_SLOTS; i++) {
		if (k->slot[i].tid == 0) {
			victim = i;
			break;
		}
		if (k->slot[i].used < k->slot[victim].used)
			victim = i;
	}
	slot_empty(k, victim);
	k->slot[victim].tid = tid;
	k->slot[victim].pidfd = m->pidfd;
	k->slot[victim].memfd = m->fd;
	k->slot[victim].used = ++k->calls;
	*m = GS_TASK_MEM_CLOSED;
}

