/* SPDX-License-Identifier: MIT */
/*
 * ledger_table.c - the ledger's index of objects by (client, handle)
 * (ledger_obj.h): ledger.c adds and takes out an object's entry as it
 * makes and frees the object, every file of the ledger looks objects up.
 * Uses nothing of ledger.c.
 */
#include <stdlib.h>
#include <string.h>

#include "ledger_obj.h"

#define NONE LEDGER_NONE

static uint64_t key_of(uint32_t client, uint32_t handle)
{
	return ((uint64_t)client << 32) | handle;
}

static uint32_t hash_key(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL; /* murmur3 finaliser constants */
	k ^= k >> 33;
	return (uint32_t)k;
}

/* ---- hash table (linear probing, tombstone-free deletion) ---------------- */

static uint32_t table_find_slot(const struct ledger *l, uint64_t key)
{
	uint32_t mask = l->table_cap - 1;
	for (uint32_t i = hash_key(key) & mask;; i = (i + 1) & mask) {
		uint32_t o = l->table[i];
		if (o == NONE)
			return i;
		if (key_of(l->objs[o].client, l->objs[o].handle) == key)
			return i;
	}
}

uint32_t ledger_obj_find(const struct ledger *l, uint32_t client, uint32_t handle)
{
	return l->table[table_find_slot(l, key_of(client, handle))];
}

static int table_grow(struct ledger *l)
{
	uint32_t old_cap = l->table_cap;
	uint32_t *old = l->table;
	uint32_t *t = malloc(sizeof(uint32_t) * old_cap * 2);

	if (!t)
		return -1;
	memset(t, 0xff, sizeof(uint32_t) * old_cap * 2);
	l->table = t;
	l->table_cap = old_cap * 2;
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i] != NONE) {
			const struct ledger_obj *o = &l->objs[old[i]];
			l->table[table_find_slot(l, key_of(o->client, o->handle))] = old[i];
		}
	free(old);
	return 0;
}

int ledger_table_insert(struct ledger *l, uint32_t idx)
{
	/* Keep the load under 1/2 so probes stay short. */
	if ((l->table_used + 1) * 2 > l->table_cap && table_grow(l) < 0)
		return -1;
	const struct ledger_obj *o = &l->objs[idx];
	l->table[table_find_slot(l, key_of(o->client, o->handle))] = idx;
	l->table_used++;
	if (o->client == o->handle)
		l->client_epoch++;
	return 0;
}

void ledger_table_remove(struct ledger *l, uint32_t client, uint32_t handle)
{
	uint32_t mask = l->table_cap - 1;
	uint32_t i = table_find_slot(l, key_of(client, handle));

	if (l->table[i] == NONE)
		return;
	l->table[i] = NONE;
	l->table_used--;
	if (client == handle)
		l->client_epoch++;
	/* Re-insert the rest of the probe run so lookups still find them. */
	for (uint32_t j = (i + 1) & mask; l->table[j] != NONE; j = (j + 1) & mask) {
		uint32_t o = l->table[j];
		l->table[j] = NONE;
		const struct ledger_obj *ob = &l->objs[o];
		l->table[table_find_slot(l, key_of(ob->client, ob->handle))] = o;
	}
}
