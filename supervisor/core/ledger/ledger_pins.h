/* SPDX-License-Identifier: MIT */
/*
 * ledger_pins.h - the ledger's allocations and the pins on them, with
 * their journal (ledger_pins.c). Private to the ledger: ledger.c uses
 * these, ledger_pins.c uses nothing of ledger.c (check-layers.sh forbids
 * a circle between two files of one layer).
 *
 * An allocation is what the driver frees only with its last reference:
 * video memory, or a hardware object (channel, channel group, video
 * engine) that dups may keep alive. Each has a serial, the journal's name
 * for it (ledger.h, above struct ledger_change, says why a serial).
 */
#ifndef GPUSANDBOX_LEDGER_PINS_H
#define GPUSANDBOX_LEDGER_PINS_H

#include <stdint.h>

#include "ledger_base.h"

#define LEDGER_NONE UINT32_MAX
_Static_assert(LEDGER_NO_PIN == LEDGER_NONE, "a pin is an allocation's index, NONE when there is none");

struct ledger_alloc {
	uint64_t bytes;
	uint64_t serial;   /* never 0, never reused in one ledger's life (ledger.h) */
	int      gpu;
	uint32_t refs;     /* handles and pins referring to it; NONE-linked when free */
	uint32_t pins;     /* of those, pins (UVM mappings, uvm_maps.c) */
	/* Of those, pins rebuilt from a journal (ledger_replay): no mapping
	 * record of this process holds them, so nothing ever drops them. The
	 * memory stays charged until the ledger goes (SECURITY.md). */
	uint32_t resumed_pins;
	/* Hardware objects: the handle that carries the count (and the
	 * scheduling state); a dup takes it over when that handle is freed
	 * first. NONE for memory, and for hardware held by pins alone. */
	uint32_t owner;
	/* Hardware held by pins alone (UVM's registration of a channel keeps
	 * its ID and its group, uvm_maps.h): the counts its last handle
	 * carried, LEDGER_HELD_*, released with its last pin. */
	uint8_t  held;
	bool     channel;  /* a channel's hardware record (ledger.h, struct ledger_unreg) */
	bool     group;    /* a channel group's */
	/* A keeper's record (ledger_keep): its last reference drops the
	 * pins of its entry in l->kept. Holds no bytes of its own. */
	bool     keeps;
	uint32_t kept_idx;   /* a keeper's: its entry in l->kept */
};
_Static_assert(sizeof(struct ledger_alloc) == 48, "a keeper's fields fit the allocation's padding");
/* The pins a keeper's record holds (ledger.h, ledger_keep). */
struct ledger_kept {
	uint32_t alloc;                   /* the keeper's record */
	uint32_t n;
	uint32_t pins[LEDGER_KEPT_MAX];   /* allocations of memory it keeps */
};
#define LEDGER_HELD_CHANNEL 0x1u
#define LEDGER_HELD_GROUP   0x2u
#define LEDGER_HELD_ALL     (LEDGER_HELD_CHANNEL | LEDGER_HELD_GROUP)

/* Tells the journal, if any, of a change just made. */
static inline void ledger_journal(const struct ledger *l, const struct ledger_change *ch)
{
	if (l->journal)
		l->journal(l->journal_ctx, ch);
}

/* A new allocation with one reference, charging bytes on gpu when gpu is
 * one of ours. serial: the journal's (replay), or 0 for a new one. NONE
 * when there is no memory for it. */
uint32_t ledger_alloc_new(struct ledger *l, uint64_t bytes, int gpu, uint64_t serial);
/* Drops one reference; the last one releases the charge into released
 * (may be NULL). */
void ledger_alloc_unref(struct ledger *l, uint32_t idx, uint64_t released[GS_MAX_GPUS]);

/* Makes pin one that is never dropped, as a resumed one: what it holds
 * stays charged and counted until the ledger goes (fail closed, when a
 * pin's owner could not be recorded). */
void ledger_pin_keep(struct ledger *l, uint32_t pin);

/* Replays LEDGER_OP_PIN, LEDGER_OP_UNPIN or LEDGER_OP_HELD (ledger_replay
 * calls it with the journal off). 0, or -1 when the change names no
 * allocation the ledger holds, or is malformed, or there is no memory. */
int ledger_pins_replay(struct ledger *l, const struct ledger_change *ch);
/* The snapshot's pins, after every object: a LEDGER_OP_PIN for an
 * allocation a handle still holds (first[a] != NONE: ledger_snapshot
 * emitted its ADD), a LEDGER_OP_HELD for one held by pins alone. */
void ledger_pins_snapshot(const struct ledger *l, const uint32_t *first, ledger_journal_fn emit, void *ctx);

#endif
