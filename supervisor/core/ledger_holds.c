/* SPDX-License-Identifier: MIT */
/*
 * ledger_holds.c - pins taken by handle on the memory a UVM mapping
 * holds (ledger_pin), and what settles and walks the channel handles the
 * ledger lists for UVM (ledger.h, struct ledger_unreg; the listing
 * itself is ledger.c's, made as a handle goes). What a pin is and how it
 * is journalled: ledger.h and ledger_pins.c. Uses ledger.c's lookups;
 * ledger.c uses nothing of it.
 */
#include <stdlib.h>

#include "gpusandbox.h"
#include "ledger_obj.h"

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

bool ledger_pin_facts(const struct ledger *l, uint32_t pin, int *gpu, uint64_t *bytes)
{
	if (pin == LEDGER_NO_PIN || pin >= l->n_allocs)
		return false;
	*gpu = l->allocs[pin].gpu;
	*bytes = l->allocs[pin].bytes;
	return true;
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
