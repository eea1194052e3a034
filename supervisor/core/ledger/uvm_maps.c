/* SPDX-License-Identifier: MIT */
/*
 * uvm_maps.c - the UVM external mappings a sandbox holds (uvm_maps.h).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gpusandbox.h"
#include "nvuvm_abi.h"
#include "rm_own.h"
#include "uvm_maps.h"

#define INITIAL_SPACES 4u
#define INITIAL_MAPS 64u

void gs_uvm_maps_init(struct gs_uvm_maps *m)
{
	memset(m, 0, sizeof(*m));
}

static void drop_record(struct gs_uvm_maps *m, struct ledger *l, uint32_t i,
                        uint64_t released[GS_MAX_GPUS])
{
	ledger_unpin(l, m->maps[i].pin, released);
	m->maps[i] = m->maps[--m->n_maps];
}

/* Takes a record's mapping away through our dup (gs_uvm_unmap). */
bool gs_uvm_unmap(int fd, const uint8_t *uuid, uint64_t first, uint64_t last)
{
	struct uvm_unmap_external_params p = { .base = first, .length = last - first + 1,
	                                       .rm_status = NV_ERR_GENERIC };

	memcpy(p.gpu_uuid, uuid, UVM_UUID_BYTES);
	if (gs_driver_ioctl(fd, UVM_UNMAP_EXTERNAL, &p, true) < 0)
		return false;
	return p.rm_status == NV_OK || p.rm_status == NV_ERR_INVALID_ADDRESS ||
	       p.rm_status == NV_ERR_INVALID_DEVICE;
}

static bool unmap_record(const struct gs_uvm_maps *m, uint32_t i)
{
	const struct gs_uvm_map *r = &m->maps[i];

	return gs_uvm_unmap(m->spaces[r->space].fd, r->gpu_uuid, r->first, r->last);
}

/* Unmaps record i and drops it with its pin; false (kept) when it could
 * not be unmapped. */
static bool unmap_and_drop(struct gs_uvm_maps *m, struct ledger *l, uint32_t i,
                           uint64_t released[GS_MAX_GPUS])
{
	if (!unmap_record(m, i))
		return false;
	drop_record(m, l, i, released);
	return true;
}

/* UVM's answer to our unregister, or NV_ERR_OPERATING_SYSTEM when the
 * ioctl itself failed. */
static nv_status_t unregister_status(int fd, bool short_form, uint32_t h_client, uint32_t h_channel)
{
	/* The GPU of the 580 form is not used: UVM finds a registration by
	 * its pair in the whole VA space (uvm_api_unregister_channel). */
	struct uvm_unregister_channel_params p = { .h_client = h_client, .h_channel = h_channel,
	                                           .rm_status = NV_ERR_GENERIC };
	struct uvm_unregister_channel_params_590 q = { .h_client = h_client, .h_channel = h_channel,
	                                               .rm_status = NV_ERR_GENERIC };

	if (gs_driver_ioctl(fd, UVM_UNREGISTER_CHANNEL, short_form ? (void *)&q : (void *)&p, true) < 0)
		return NV_ERR_OPERATING_SYSTEM;
	return short_form ? q.rm_status : p.rm_status;
}

bool gs_uvm_unregister_counted(struct gs_uvm_maps *m, int fd, uint32_t h_client, uint32_t h_channel)
{
	nv_status_t st = unregister_status(fd, m->unregister_short, h_client, h_channel);

	m->n_unreg_ok += st == NV_OK;
	m->n_unreg_none += st == NV_ERR_INVALID_CHANNEL;
	m->n_unreg_failed += st != NV_OK && st != NV_ERR_INVALID_CHANNEL;
	return st == NV_OK || st == NV_ERR_INVALID_CHANNEL;
}

/* Can what the ledger lists be unregistered now? Not while a continued
 * registration may still be inside the kernel (our unregister could
 * come before it lands), nor after an agent restart (uvm_maps.h). */
static bool may_settle(const struct gs_uvm_maps *m)
{
	return !m->spaces_unknown && (gs_inflight_count(m->registers) == 0 || m->test_settle_in_flight);
}

struct unregister_in {
	struct gs_uvm_maps *m;
	int                 fd;
};

static bool unregister_pair(void *ctx, uint32_t client, uint32_t handle)
{
	struct unregister_in *in = ctx;

	return gs_uvm_unregister_counted(in->m, in->fd, client, handle);
}

unsigned gs_uvm_settle_unregisters(struct gs_uvm_maps *m, struct ledger *l)
{
	/* The pins are on hardware records, which charge no bytes. */
	uint64_t released[GS_MAX_GPUS] = { 0 };
	unsigned n = 0;

	if (!l->n_unreg || !may_settle(m))
		return 0;
	for (uint32_t i = l->n_unreg; i-- > 0;) {
		bool all = true;
		for (uint32_t s = 0; s < m->n_spaces && all; s++) {
			struct unregister_in in = { m, m->spaces[s].fd };
			if (m->spaces[s].fd >= 0 && m->spaces[s].registrant)
				all = unregister_pair(&in, l->unreg[i].client, l->unreg[i].handle);
		}
		if (all) {
			ledger_unreg_done(l, i, released);
			m->n_settled++;
			n++;
		}
	}
	return n;
}

/* Before a registrant space is let go: every pair it may hold, the live
 * channels' and the listed ones', unregistered from it. */
static bool unregister_all(struct gs_uvm_maps *m, const struct ledger *l, uint32_t space)
{
	struct unregister_in in = { m, m->spaces[space].fd };

	if (!may_settle(m))
		return false;
	for (uint32_t i = 0; i < l->n_unreg; i++)
		if (!unregister_pair(&in, l->unreg[i].client, l->unreg[i].handle))
			return false;
	return ledger_each_channel_handle(l, unregister_pair, &in);
}

static void close_space(struct gs_uvm_space *sp)
{
	for (unsigned i = 0; i < sp->n_mappers; i++)
		close(sp->mapper[i].pidfd);
	sp->n_mappers = 0;
	if (sp->fd >= 0)
		close(sp->fd);
	sp->fd = -1;
	sp->registrant = false;
}

/* Takes back every mapping of space, and unregisters from a registrant
 * every pair it may hold; true when all went (the space is then closed),
 * false when some could not be (kept, with the dup, for another try). force: drop them all and close anyway (the
 * sandbox ends: nothing of it can use a mapping any more). */
static bool drop_space(struct gs_uvm_maps *m, struct ledger *l, uint32_t space, bool force,
                       uint64_t released[GS_MAX_GPUS])
{
	bool all = true;

	for (uint32_t i = m->n_maps; i-- > 0;) {
		if (m->maps[i].space != space || unmap_and_drop(m, l, i, released))
			continue;
		if (force)
			drop_record(m, l, i, released);
		else
			all = false;
	}
	if (m->spaces[space].registrant && !unregister_all(m, l, space))
		all = false;
	if (all || force)
		close_space(&m->spaces[space]);
	return all;
}

void gs_uvm_maps_fini(struct gs_uvm_maps *m, struct ledger *l)
{
	uint64_t released[GS_MAX_GPUS] = { 0 };

	for (uint32_t s = 0; s < m->n_spaces; s++)
		if (m->spaces[s].fd >= 0)
			(void)drop_space(m, l, s, true, released);
	const bool short_form = m->unregister_short, test = m->test_settle_in_flight;

	gs_inflight_put(m->registers);
	free(m->spaces);
	free(m->maps);
	gs_uvm_maps_init(m);
	m->unregister_short = short_form;
	m->test_settle_in_flight = test;
}

int gs_uvm_space_held(const struct gs_uvm_maps *m, pid_t self, pid_t tid, int wfd)
{
	for (uint32_t s = 0; s < m->n_spaces; s++)
		if (m->spaces[s].fd >= 0 && syscall(SYS_kcmp, self, tid, KCMP_FILE, m->spaces[s].fd, wfd) == 0)
			return (int)s;
	return -1;
}

int gs_uvm_space_of(struct gs_uvm_maps *m, struct ledger *l, int fd)
{
	uint32_t free_slot = UINT32_MAX;

	for (uint32_t s = 0; s < m->n_spaces; s++) {
		const struct gs_uvm_space *sp = &m->spaces[s];
		if (sp->fd < 0) {
			free_slot = s;
			continue;
		}
		long same = syscall(SYS_kcmp, l->self, l->self, KCMP_FILE, sp->fd, fd);
		if (same < 0)
			return -1;
		if (same == 0)
			return (int)s;
	}
	int ours = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (ours < 0)
		return -1;
	if (free_slot == UINT32_MAX) {
		if (!GS_ROOM_FOR_ONE(m->spaces, m->n_spaces, m->cap_spaces, INITIAL_SPACES)) {
			close(ours);
			return -1;
		}
		free_slot = m->n_spaces++;
	}
	m->spaces[free_slot] = (struct gs_uvm_space){ .fd = ours };
	return (int)free_slot;
}

/* Has the process behind pidfd exited? A pidfd polls readable then. */
static bool exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

int gs_uvm_space_note_mapper(struct gs_uvm_maps *m, uint32_t space, pid_t tgid, int pidfd)
{
	struct gs_uvm_space *sp = &m->spaces[space];
	unsigned slot = sp->n_mappers;

	for (unsigned i = 0; i < sp->n_mappers; i++) {
		bool gone = exited(sp->mapper[i].pidfd);
		if (sp->mapper[i].tgid == tgid && !gone) {
			close(pidfd); /* known already */
			return 0;
		}
		if (gone && slot == sp->n_mappers)
			slot = i;
	}
	if (slot == GS_UVM_MAPPERS) {
		close(pidfd);
		return -1;
	}
	if (slot < sp->n_mappers)
		close(sp->mapper[slot].pidfd);
	else
		sp->n_mappers++;
	sp->mapper[slot].tgid = tgid;
	sp->mapper[slot].pidfd = pidfd;
	return 0;
}

bool gs_uvm_space_knows_leader(const struct gs_uvm_maps *m, uint32_t space, pid_t tid)
{
	const struct gs_uvm_space *sp = &m->spaces[space];

	for (unsigned i = 0; i < sp->n_mappers; i++)
		if (sp->mapper[i].tgid == tid && !exited(sp->mapper[i].pidfd))
			return true;
	return false;
}

static bool space_has_records(const struct gs_uvm_maps *m, uint32_t space)
{
	for (uint32_t i = 0; i < m->n_maps; i++)
		if (m->maps[i].space == space)
			return true;
	/* A registrant stays until reaped (gs_uvm_maps_reap): it may hold
	 * registrations we do not know of. */
	return m->spaces[space].registrant;
}

void gs_uvm_space_tidy(struct gs_uvm_maps *m, uint32_t space)
{
	if (space < m->n_spaces && m->spaces[space].fd >= 0 && !space_has_records(m, space))
		close_space(&m->spaces[space]);
}

static bool on_gpu(const struct gs_uvm_map *r, const uint8_t *uuid)
{
	return !uuid || memcmp(r->gpu_uuid, uuid, UVM_UUID_BYTES) == 0;
}

static int append(struct gs_uvm_maps *m, const struct gs_uvm_map *r)
{
	if (!GS_ROOM_FOR_ONE(m->maps, m->n_maps, m->cap_maps, INITIAL_MAPS))
		return -1;
	m->maps[m->n_maps++] = *r;
	return 0;
}

/* [first, last] leaves record i, which it overlaps: the record shrinks to
 * what lies outside, or splits in two around it (the upper part a new
 * record with a pin of its own). Returns 1 when the record went, 0 when
 * it stays (shrunk), -1 when the split could not be recorded. */
static int cut_one(struct gs_uvm_maps *m, struct ledger *l, uint32_t i, uint64_t first, uint64_t last,
                   uint64_t released[GS_MAX_GPUS])
{
	struct gs_uvm_map *r = &m->maps[i];

	if (first <= r->first && last >= r->last) {
		drop_record(m, l, i, released);
		return 1;
	}
	if (first > r->first && last < r->last) {
		struct gs_uvm_map upper = *r;
		upper.first = last + 1;
		upper.pin = ledger_pin_again(l, r->pin);
		if (append(m, &upper) < 0) {
			ledger_unpin(l, upper.pin, NULL);
			return -1;
		}
		m->maps[i].last = first - 1; /* append may have moved the array */
		return 0;
	}
	if (first <= r->first)
		r->first = last + 1;
	else
		r->last = first - 1;
	return 0;
}

int gs_uvm_maps_cut(struct gs_uvm_maps *m, struct ledger *l, uint32_t space, const uint8_t *uuid,
                    uint64_t first, uint64_t last, uint64_t released[GS_MAX_GPUS])
{
	int rc = 0;

	/* Downwards over the records there were: a record dropped takes the
	 * last one's place, which was looked at already or is a split made
	 * here (outside the cut); splits are appended past them. */
	for (uint32_t i = m->n_maps; i-- > 0;) {
		const struct gs_uvm_map *r = &m->maps[i];
		bool hit = r->space == space && on_gpu(r, uuid) && r->first <= last && r->last >= first;
		if (hit && cut_one(m, l, i, first, last, released) < 0)
			rc = -1;
	}
	return rc;
}

int gs_uvm_maps_add(struct gs_uvm_maps *m, struct ledger *l, uint32_t space, const uint8_t *uuid,
                    uint64_t first, uint64_t last, uint32_t pin, uint64_t released[GS_MAX_GPUS])
{
	struct gs_uvm_map r = { .space = space, .first = first, .last = last, .pin = pin };

	memcpy(r.gpu_uuid, uuid, UVM_UUID_BYTES);
	if (append(m, &r) < 0) {
		ledger_unpin(l, pin, released);
		return -1;
	}
	return 0;
}

unsigned gs_uvm_maps_reap(struct gs_uvm_maps *m, struct ledger *l, uint64_t released[GS_MAX_GPUS])
{
	unsigned n = 0;

	for (uint32_t s = 0; s < m->n_spaces; s++) {
		struct gs_uvm_space *sp = &m->spaces[s];
		bool live = false;
		if (sp->fd < 0)
			continue;
		for (unsigned i = 0; i < sp->n_mappers && !live; i++)
			live = !exited(sp->mapper[i].pidfd);
		if (live)
			continue;
		n += drop_space(m, l, s, false, released);
	}
	return n;
}

unsigned gs_uvm_maps_take_back_orphans(struct gs_uvm_maps *m, struct ledger *l,
                                       uint64_t released[GS_MAX_GPUS])
{
	unsigned n = 0;
	bool kept = false;

	n += gs_uvm_settle_unregisters(m, l);
	if (!l->orphaned_pins)
		return n;
	l->orphaned_pins = false;
	for (uint32_t i = m->n_maps; i-- > 0;) {
		if (!ledger_pin_orphaned(l, m->maps[i].pin))
			continue;
		uint32_t space = m->maps[i].space;
		if (unmap_and_drop(m, l, i, released)) {
			n++;
			gs_uvm_space_tidy(m, space);
		} else {
			kept = true;
		}
	}
	/* One that could not be unmapped is tried again next time (a listed
	 * channel handle, whatever this flag says: l->n_unreg). */
	l->orphaned_pins = kept;
	return n;
}

uint32_t gs_uvm_maps_live(const struct gs_uvm_maps *m)
{
	return m->n_maps;
}

int gs_uvm_space_note_registrant(struct gs_uvm_maps *m, struct ledger *l, uint32_t space)
{
	if (!m->registers && !(m->registers = gs_inflight_new()))
		return -1;
	m->spaces[space].registrant = true;
	m->n_registers++;
	ledger_watch_channel_frees(l);
	return 0;
}
