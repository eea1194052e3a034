/* SPDX-License-Identifier: MIT */
/*
 * ledger_holds.c - pins taken by handle: on the memory a UVM mapping
 * holds (ledger_pin), and on the channel ID and group that a UVM
 * registration of a channel may hold once the channel's handle has gone
 * (ledger.h, struct ledger_unreg). What a pin is and how it is
 * journalled: ledger.h and ledger_pins.c; what carries a hardware count
 * once its last handle goes: ledger.c (pass_count_on). ledger.c calls
 * into this file only through l->channel_freed.
 */
#include <stdlib.h>

#include "gpusandbox.h"
#include "ledger_obj.h"

/* CUDA makes about 20 channels per context. */
#define INITIAL_UNREGS 32u

uint32_t ledger_pin(struct ledger *l, uint32_t h_client, uint32_t handle)
{
	uint32_t idx = ledger_obj_find(l, h_client, handle);

	/* Memory only: a hardware record has an owner (a channel's pins are
	 * note_channel_free's). */
	if (idx == LEDGER_NONE || l->objs[idx].alloc == LEDGER_NONE ||
	    l->allocs[l->objs[idx].alloc].owner != LEDGER_NONE)
		return LEDGER_NO_PIN;
	return ledger_pin_again(l, l->objs[idx].alloc);
}

/* Pins on what a registration of the channel by the handle obj holds:
 * the channel's hardware record, which carries its ID (and, for a
 * channel outside any group, the group RM made for it: ledger.c,
 * count_object), and the record of the group the handle hangs under,
 * which RM dups for UVM (nvGpuOpsGetChannelTsgInfo, nv_gpu_ops.c,
 * 580.95.05). RM never dups a channel (KernelChannel keeps resserv's
 * resCanCopy, which says no), so the handle is the channel's own and its
 * parent its group, or a dup of it. */
static void pin_channel(struct ledger *l, uint32_t obj, uint32_t pins[2])
{
	const struct ledger_obj *o = &l->objs[obj];
	uint32_t parent = o->has_parent ? ledger_obj_find(l, o->client, o->parent) : LEDGER_NONE;

	pins[0] = ledger_pin_again(l, o->alloc);
	pins[1] = LEDGER_NO_PIN;
	if (parent != LEDGER_NONE && l->objs[parent].alloc != LEDGER_NONE && l->allocs[l->objs[parent].alloc].group)
		pins[1] = ledger_pin_again(l, l->objs[parent].alloc);
}

/* A handle of a channel goes (free_subtree, before the count moves). */
static void note_channel_free(struct ledger *l, uint32_t obj)
{
	struct ledger_unreg u = { .client = l->objs[obj].client, .handle = l->objs[obj].handle };

	pin_channel(l, obj, u.pins);
	if (!GS_ROOM_FOR_ONE(l->unreg, l->n_unreg, l->cap_unreg, INITIAL_UNREGS)) {
		/* Nothing will unregister it: counted until the ledger goes. */
		ledger_pin_keep(l, u.pins[0]);
		ledger_pin_keep(l, u.pins[1]);
		return;
	}
	l->unreg[l->n_unreg++] = u;
}

void ledger_watch_channel_frees(struct ledger *l)
{
	const struct ledger_change ch = { .op = LEDGER_OP_WATCH_CHANNELS };

	if (l->channel_freed)
		return;
	l->channel_freed = note_channel_free;
	ledger_journal(l, &ch);
}

bool ledger_watches_channel_frees(const struct ledger *l)
{
	return l->channel_freed != NULL;
}

void ledger_unreg_done(struct ledger *l, uint32_t i, uint64_t released[GS_MAX_GPUS])
{
	ledger_unpin(l, l->unreg[i].pins[0], released);
	ledger_unpin(l, l->unreg[i].pins[1], released);
	l->unreg[i] = l->unreg[--l->n_unreg];
}

bool ledger_each_channel_handle(const struct ledger *l, bool (*fn)(void *ctx, uint32_t client, uint32_t handle),
                                void *ctx)
{
	for (uint32_t i = 0; i < l->n_objs; i++) {
		const struct ledger_obj *o = &l->objs[i];
		if (o->used && o->alloc != LEDGER_NONE && l->allocs[o->alloc].channel && !fn(ctx, o->client, o->handle))
			return false;
	}
	return true;
}
