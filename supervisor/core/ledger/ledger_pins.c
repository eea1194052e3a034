/* SPDX-License-Identifier: MIT */
/*
 * ledger_pins.c - the ledger's allocations and the pins on them, with the
 * pins' journal, replay and snapshot (ledger_pins.h; why pins exist and
 * what a resumed pin is: ledger.h, above ledger_pin). Uses nothing of
 * ledger.c.
 *
 * Every change of a pin is journalled by the allocation's serial, after
 * it is made: a pin taken (a mapping recorded, or split in two) and a pin
 * dropped (a mapping cut, unmapped or never recorded). So a replay nets
 * out a pin taken and dropped before the restart (no phantom charge: every
 * cuMemAlloc maps its memory), and keeps one still held at the restart.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gpusandbox.h"
#include "ledger_pins.h"

#define INITIAL_ALLOCS 64u

static bool on_gpu(int gpu)
{
	return gpu >= 0 && (unsigned)gpu < GS_MAX_GPUS;
}

uint32_t ledger_alloc_new(struct ledger *l, uint64_t bytes, int gpu, uint64_t serial)
{
	uint32_t idx;

	if (l->free_alloc != LEDGER_NONE) {
		idx = l->free_alloc;
		l->free_alloc = (uint32_t)l->allocs[idx].bytes;
	} else {
		if (!GS_ROOM_FOR_ONE(l->allocs, l->n_allocs, l->cap_allocs, INITIAL_ALLOCS))
			return LEDGER_NONE;
		idx = l->n_allocs++;
	}
	/* A replayed serial is kept, and the ones given from now on come
	 * after it: never one a journalled pin may still name. */
	if (!serial)
		serial = l->next_serial++;
	else if (serial >= l->next_serial)
		l->next_serial = serial + 1;
	l->allocs[idx] = (struct ledger_alloc){ .bytes = bytes, .serial = serial, .gpu = gpu, .refs = 1,
	                                        .owner = LEDGER_NONE };
	/* A hardware record of an object whose GPU is unknown charges nothing
	 * but still counts while a handle (a dup) keeps it. */
	if (on_gpu(gpu)) {
		l->used[gpu] += bytes;
		if (l->used[gpu] > l->peak[gpu])
			l->peak[gpu] = l->used[gpu];
	}
	return idx;
}

/* The keeper's record idx went with its last handle: what it kept goes
 * as the driver frees its internal dups (_semsurfFreeMemory, sem_surf.c,
 * from the destructor of the last copy). Depth is bounded: what a keeper
 * keeps is memory, whose records keep nothing (ledger_keep copies a
 * kept keeper's pins rather than pinning the keeper). */
static void drop_kept(struct ledger *l, uint32_t idx, uint64_t released[GS_MAX_GPUS])
{
	const uint32_t i = l->allocs[idx].kept_idx;
	const struct ledger_kept k = l->kept[i];

	/* The last entry takes the place of this one. */
	l->kept[i] = l->kept[--l->n_kept];
	if (i < l->n_kept)
		l->allocs[l->kept[i].alloc].kept_idx = i;
	for (uint32_t p = 0; p < k.n; p++)
		ledger_unpin(l, k.pins[p], released);
}

void ledger_alloc_unref(struct ledger *l, uint32_t idx, uint64_t released[GS_MAX_GPUS])
{
	struct ledger_alloc *a = &l->allocs[idx];

	if (--a->refs) {
		/* Only pins left: the memory's last handle is gone, and only
		 * a mapping keeps it (ledger_pin_orphaned). */
		if (a->refs == a->pins)
			l->orphaned_pins = true;
		return;
	}
	if (on_gpu(a->gpu)) {
		l->used[a->gpu] -= a->bytes;
		if (released)
			released[a->gpu] += a->bytes;
	}
	/* The driver lets go of a channel ID or group only now. */
	if (a->held & LEDGER_HELD_CHANNEL)
		l->count[GS_QK_CHANNELS]--;
	if (a->held & LEDGER_HELD_GROUP)
		l->count[GS_QK_CHANNEL_GROUPS]--;
	a->held = 0;
	if (a->keeps) {
		a->keeps = false;
		drop_kept(l, idx, released);
		a = &l->allocs[idx];
	}
	a->bytes = l->free_alloc; /* free list threads through bytes */
	l->free_alloc = idx;
}

/* ---- pins: references on allocations that are not handles ------------------
 * UVM's external mappings dup the memory they map and keep it while they
 * live, and its channel registrations keep a channel's ID and its group
 * (uvm_maps.c): a pin is such a reference, counted on the allocation
 * like a handle, so the bytes stay charged, and the hardware counted,
 * until the last handle and the last pin are gone. ledger_pin and
 * ledger_pin_channel (by handle) are in ledger.c. */

static void journal_pin(const struct ledger *l, enum ledger_op op, uint64_t serial)
{
	const struct ledger_change ch = { .op = op, .serial = serial, .pins = op == LEDGER_OP_PIN };

	ledger_journal(l, &ch);
}

uint32_t ledger_pin_again(struct ledger *l, uint32_t pin)
{
	if (pin == LEDGER_NO_PIN)
		return pin;
	l->allocs[pin].refs++;
	l->allocs[pin].pins++;
	journal_pin(l, LEDGER_OP_PIN, l->allocs[pin].serial);
	return pin;
}

void ledger_unpin(struct ledger *l, uint32_t pin, uint64_t released[GS_MAX_GPUS])
{
	if (pin == LEDGER_NO_PIN)
		return;
	struct ledger_alloc *a = &l->allocs[pin];
	const uint64_t serial = a->serial;

	/* Every pin of this process is a record's, and a record's pin is
	 * one more than the resumed ones: a call that would drop a resumed
	 * pin drops none of ours, and keeps the charge. */
	if (a->pins <= a->resumed_pins)
		return;
	a->pins--;
	ledger_alloc_unref(l, pin, released);
	journal_pin(l, LEDGER_OP_UNPIN, serial);
}

void ledger_pin_keep(struct ledger *l, uint32_t pin)
{
	if (pin == LEDGER_NO_PIN || l->allocs[pin].resumed_pins >= l->allocs[pin].pins)
		return;
	l->allocs[pin].resumed_pins++;
	l->n_resumed_pins++;
}

bool ledger_pin_orphaned(const struct ledger *l, uint32_t pin)
{
	return pin != LEDGER_NO_PIN && l->allocs[pin].refs == l->allocs[pin].pins;
}

/* ---- the pins' replay and snapshot -------------------------------------- */

/* The live allocation named serial, or NONE. A scan: only a replay looks
 * an allocation up by serial, once per pin record, and the allocations it
 * makes come from records of the same journal area, so a restart costs
 * at most (records / 2)^2 steps (67 M for an area of 16384: well under a
 * second, once). */
static uint32_t find_serial(const struct ledger *l, uint64_t serial)
{
	for (uint32_t i = 0; i < l->n_allocs; i++)
		if (l->allocs[i].refs && l->allocs[i].serial == serial)
			return i;
	return LEDGER_NONE;
}

/* n more resumed pins on allocation i; false when they cannot be counted. */
static bool add_resumed(struct ledger *l, uint32_t i, uint32_t n)
{
	struct ledger_alloc *a = &l->allocs[i];

	if (n == 0 || a->refs > UINT32_MAX - n || l->n_resumed_pins > UINT32_MAX - n)
		return false;
	a->refs += n;
	a->pins += n;
	a->resumed_pins += n;
	l->n_resumed_pins += n;
	return true;
}

/* On memory (a mapping) or on a hardware record (a channel's
 * registration). */
static int replay_pin(struct ledger *l, const struct ledger_change *ch)
{
	uint32_t i = find_serial(l, ch->serial);

	if (i == LEDGER_NONE)
		return -1;
	return add_resumed(l, i, ch->pins) ? 0 : -1;
}

/* While the journal is replayed every pin is a replayed one. */
static int replay_unpin(struct ledger *l, const struct ledger_change *ch)
{
	uint32_t i = find_serial(l, ch->serial);

	if (i == LEDGER_NONE || l->allocs[i].resumed_pins == 0)
		return -1;
	l->allocs[i].pins--;
	l->allocs[i].resumed_pins--;
	l->n_resumed_pins--;
	ledger_alloc_unref(l, i, NULL);
	return 0;
}

/* One more of a kind the ledger counts, with its peak (ledger.c's
 * count_up: this file uses nothing of ledger.c). */
static void count_held(struct ledger *l, enum gs_quota_kind k)
{
	if (++l->count[k] > l->count_peak[k])
		l->count_peak[k] = l->count[k];
}

/* An allocation held by pins alone: made with no handle, its pins its
 * only references. Memory names its GPU; hardware (kind: the counts it
 * carries, LEDGER_HELD_*) may have none. */
static int replay_held(struct ledger *l, const struct ledger_change *ch)
{
	bool hw = ch->kind != 0;

	if ((ch->kind & ~LEDGER_HELD_ALL) || (!hw && !on_gpu(ch->gpu)) || ch->pins == 0 || ch->serial == 0 ||
	    l->n_resumed_pins > UINT32_MAX - ch->pins || find_serial(l, ch->serial) != LEDGER_NONE)
		return -1;
	uint32_t i = ledger_alloc_new(l, ch->bytes, ch->gpu, ch->serial);
	if (i == LEDGER_NONE)
		return -1;
	/* Its references are its pins (the counts were checked above). */
	l->allocs[i].refs = 0;
	(void)add_resumed(l, i, ch->pins);
	l->allocs[i].held = (uint8_t)ch->kind;
	if (ch->kind & LEDGER_HELD_CHANNEL)
		count_held(l, GS_QK_CHANNELS);
	if (ch->kind & LEDGER_HELD_GROUP)
		count_held(l, GS_QK_CHANNEL_GROUPS);
	return 0;
}

int ledger_pins_replay(struct ledger *l, const struct ledger_change *ch)
{
	switch (ch->op) {
	case LEDGER_OP_PIN:
		return replay_pin(l, ch);
	case LEDGER_OP_UNPIN:
		return replay_unpin(l, ch);
	case LEDGER_OP_HELD:
		return replay_held(l, ch);
	default:
		return -1;
	}
}

void ledger_pins_snapshot(const struct ledger *l, const uint32_t *first, ledger_journal_fn emit, void *ctx)
{
	for (uint32_t i = 0; i < l->n_allocs; i++) {
		const struct ledger_alloc *a = &l->allocs[i];
		if (!a->refs || !a->pins)
			continue;
		struct ledger_change ch = { .op = LEDGER_OP_PIN, .serial = a->serial, .pins = a->pins };
		if (first[i] == LEDGER_NONE) {
			ch.op = LEDGER_OP_HELD;
			ch.kind = a->held;
			ch.gpu = a->gpu;
			ch.bytes = a->bytes;
		}
		emit(ctx, &ch);
	}
}
