/* SPDX-License-Identifier: MIT */
/*
 * ledger_snapshot.c - the changes that rebuild the ledger as it is now
 * (ledger.h, ledger_snapshot): a snapshot that replaces a journal. Uses
 * ledger.c's lookups; ledger.c uses nothing of it.
 */
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "ledger_obj.h"

#define NONE LEDGER_NONE

/* One object as the changes that make it: a client, an object with its own
 * charge, or a dup of the first handle met on the same allocation. first
 * maps an allocation to that handle's object (NONE: not met yet). */
static void snapshot_obj(const struct ledger *l, uint32_t idx, uint32_t *first, ledger_journal_fn emit,
                         void *ctx)
{
	const struct ledger_obj *o = &l->objs[idx];
	/* A root's parent is its own handle: add_obj frees an object of that
	 * handle before it looks the parent up, so it finds none, where
	 * parent 0 (a root's o->parent) would find a handle 0 of the client
	 * made since, and hang the object, and its GPU, under it. */
	struct ledger_change ch = { .client = o->client, .parent = o->has_parent ? o->parent : o->handle,
	                            .handle = o->handle, .kind = o->kind, .cls = o->cls, .gpu = o->gpu };

	if (o->kind == RM_CLASS_CLIENT && o->client == o->handle && !o->has_parent) {
		ch.op = LEDGER_OP_NOTE_CLIENT;
	} else if (o->alloc != NONE && first[o->alloc] != NONE) {
		ch.op = LEDGER_OP_DUP;
		ch.src_client = l->objs[first[o->alloc]].client;
		ch.src_handle = l->objs[first[o->alloc]].handle;
	} else {
		ch.op = LEDGER_OP_ADD;
		if (o->alloc != NONE) {
			/* The first handle met on a hardware record stands for it,
			 * as a dup that takes the count over does (hand_over). */
			uint32_t owner = l->allocs[o->alloc].owner;
			if (owner != NONE) {
				ch.kind = l->objs[owner].kind;
				ch.cls = l->objs[owner].cls;
			}
			ch.bytes = l->allocs[o->alloc].bytes;
			ch.serial = l->allocs[o->alloc].serial;
			ch.gpu = l->allocs[o->alloc].gpu;
			first[o->alloc] = idx;
		}
	}
	emit(ctx, &ch);
	if (o->scheduled) {
		struct ledger_change sch = { .op = LEDGER_OP_SCHEDULED, .client = o->client,
		                             .handle = o->handle, .on = 1 };
		emit(ctx, &sch);
	}
}

/* Depth first from each root, without recursion (the workload sets the
 * depth): a child after its parent. */
int ledger_snapshot(const struct ledger *l, ledger_journal_fn emit, void *ctx)
{
	uint32_t *first = malloc(sizeof(uint32_t) * (l->n_allocs ? l->n_allocs : 1));

	if (!first)
		return -1;
	memset(first, 0xff, sizeof(uint32_t) * (l->n_allocs ? l->n_allocs : 1));
	for (uint32_t root = 0; root < l->n_objs; root++) {
		if (!l->objs[root].used || l->objs[root].has_parent)
			continue;
		uint32_t cur = root;
		for (;;) {
			snapshot_obj(l, cur, first, emit, ctx);
			if (l->objs[cur].first_child != NONE) {
				cur = l->objs[cur].first_child;
				continue;
			}
			while (cur != root && l->objs[cur].next_sibling == NONE)
				cur = ledger_obj_find(l, l->objs[cur].client, l->objs[cur].parent);
			if (cur == root || cur == NONE)
				break;
			cur = l->objs[cur].next_sibling;
		}
	}
	ledger_pins_snapshot(l, first, emit, ctx);
	if (ledger_watches_channel_frees(l)) {
		const struct ledger_change ch = { .op = LEDGER_OP_WATCH_CHANNELS };
		emit(ctx, &ch);
	}
	free(first);
	return 0;
}
