/* SPDX-License-Identifier: MIT */
/*
 * uvm_maps.c - the UVM external mappings a sandbox holds (uvm_maps.h).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpusandbox.h"
#include "ledger_watch.h"
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

static void drop_space(struct gs_uvm_maps *m, struct ledger *l, uint32_t space,
                       uint64_t released[GS_MAX_GPUS])
{
	for (uint32_t i = 0; i < m->n_maps;) {
		if (m->maps[i].space == space)
			drop_record(m, l, i, released);
		else
			i++;
	}
	if (m->spaces[space].epfd >= 0)
		close(m->spaces[space].epfd);
	m->spaces[space].epfd = -1;
}

void gs_uvm_maps_fini(struct gs_uvm_maps *m, struct ledger *l)
{
	uint64_t released[GS_MAX_GPUS] = { 0 };

	for (uint32_t s = 0; s < m->n_spaces; s++)
		if (m->spaces[s].epfd >= 0)
			drop_space(m, l, s, released);
	free(m->spaces);
	free(m->maps);
	gs_uvm_maps_init(m);
}

int gs_uvm_space_of(struct gs_uvm_maps *m, struct ledger *l, int fd)
{
	uint32_t free_slot = UINT32_MAX;

	for (uint32_t s = 0; s < m->n_spaces; s++) {
		const struct gs_uvm_space *sp = &m->spaces[s];
		if (sp->epfd < 0) {
			free_slot = s;
			continue;
		}
		int same = ledger_watch_is_file_at(l->self, sp->epfd, sp->tfd, fd);
		if (same < 0)
			return -1;
		if (same)
			return (int)s;
	}
	int epfd = ledger_watch_file(l, fd);
	if (epfd < 0)
		return -1;
	if (free_slot == UINT32_MAX) {
		if (!GS_ROOM_FOR_ONE(m->spaces, m->n_spaces, m->cap_spaces, INITIAL_SPACES)) {
			close(epfd);
			return -1;
		}
		free_slot = m->n_spaces++;
	}
	m->spaces[free_slot] = (struct gs_uvm_space){ .epfd = epfd, .tfd = fd };
	return (int)free_slot;
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
                    uint64_t first, uint64_t last, bool contained_only, uint64_t released[GS_MAX_GPUS])
{
	int rc = 0;

	/* Downwards over the records there were: a record dropped takes the
	 * last one's place, which was looked at already or is a split made
	 * here (outside the cut); splits are appended past them. */
	for (uint32_t i = m->n_maps; i-- > 0;) {
		const struct gs_uvm_map *r = &m->maps[i];
		bool hit = r->space == space && on_gpu(r, uuid) && r->first <= last && r->last >= first;
		if (hit && contained_only)
			hit = r->first >= first && r->last <= last;
		if (hit && cut_one(m, l, i, first, last, released) < 0)
			rc = -1;
	}
	return rc;
}

void gs_uvm_maps_cut_starting(struct gs_uvm_maps *m, struct ledger *l, uint32_t space,
                              uint64_t base, uint64_t released[GS_MAX_GPUS])
{
	for (uint32_t i = 0; i < m->n_maps;) {
		if (m->maps[i].space == space && m->maps[i].first == base)
			drop_record(m, l, i, released);
		else
			i++;
	}
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
		if (m->spaces[s].epfd < 0 || ledger_watch_alive_at(l->self, m->spaces[s].epfd, m->spaces[s].tfd))
			continue;
		drop_space(m, l, s, released);
		n++;
	}
	return n;
}

uint32_t gs_uvm_maps_live(const struct gs_uvm_maps *m)
{
	return m->n_maps;
}
