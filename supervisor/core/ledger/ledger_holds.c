/* SPDX-License-Identifier: MIT */
/*
 * ledger_holds.c - pins taken by handle on the memory a UVM mapping
 * holds (ledger_pin), and what settles and walks the channel handles the
 * ledger lists for UVM (ledger.h, struct ledger_unreg; the listing
 * itself is ledger.c's, made as a handle goes), and the references the
 * driver keeps of its own for a keeper object (ledger_keep). What a pin
 * is and how it is journalled: ledger.h and ledger_pins.c. Uses ledger.c's lookups;
 * ledger.c uses nothing of it.
 */
#include <stdlib.h>

#include "gpusandbox.h"
#include "ledger.h"
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

/* ---- references the driver keeps (ledger.h, ledger_keep) ---------------- */

/* What handle keeps alive, as allocations to pin: its own record when it
 * is memory of ours (a dup shares it), the pins of a keeper's entry when
 * it is a keeper (the driver's dup of a semaphore surface keeps the
 * surface's memory), nothing for hardware (an owner) or an object that
 * charges nothing. Appends to out; false when out would overflow. */
static bool kept_by(const struct ledger *l, uint32_t h_client, uint32_t handle, uint32_t *out, uint32_t *n)
{
	uint32_t idx = ledger_obj_find(l, h_client, handle);
	uint32_t a = idx != LEDGER_NONE ? l->objs[idx].alloc : LEDGER_NONE;

	if (a == LEDGER_NONE || l->allocs[a].owner != LEDGER_NONE)
		return true;
	if (!l->allocs[a].keeps) {
		if (*n >= LEDGER_KEPT_MAX)
			return false;
		out[(*n)++] = a;
		return true;
	}
	const struct ledger_kept *k = &l->kept[l->allocs[a].kept_idx];
	for (uint32_t p = 0; p < k->n; p++) {
		if (*n >= LEDGER_KEPT_MAX)
			return false;
		out[(*n)++] = k->pins[p];
	}
	return true;
}

int ledger_keep(struct ledger *l, uint32_t h_client, uint32_t h_keeper, const uint32_t *handles, uint32_t n)
{
	uint32_t keeper = ledger_obj_find(l, h_client, h_keeper);
	struct ledger_kept k = { .n = 0 };

	/* A keeper is a plain object: memory and hardware have a record of
	 * their own that means something else. */
	if (keeper == LEDGER_NONE || l->objs[keeper].alloc != LEDGER_NONE || n > LEDGER_KEPT_HANDLES)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (!kept_by(l, h_client, handles[i], k.pins, &k.n))
			return -1;
	if (k.n == 0)
		return 0;
	/* Everything that can fail comes before the first change. */
	if (!GS_ROOM_FOR_ONE(l->kept, l->n_kept, l->cap_kept, LEDGER_KEPT_MAX))
		return -1;
	k.alloc = ledger_alloc_new(l, 0, l->objs[keeper].gpu, 0);
	if (k.alloc == LEDGER_NONE)
		return -1;
	l->allocs[k.alloc].keeps = true;
	l->allocs[k.alloc].kept_idx = l->n_kept;
	l->objs[keeper].alloc = k.alloc;
	for (uint32_t p = 0; p < k.n; p++)
		(void)ledger_pin_again(l, k.pins[p]);
	l->kept[l->n_kept++] = k;
	return 0;
}

uint32_t ledger_kept_pins(const struct ledger *l)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < l->n_kept; i++)
		n += l->kept[i].n;
	return n;
}
