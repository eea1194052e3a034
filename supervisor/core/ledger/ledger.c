/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gpusandbox.h"
#include "ledger.h"
#include "ledger_obj.h"
#include "ledger_pins.h"
#include "ledger_watch.h"

#define NONE LEDGER_NONE
#define INITIAL_OBJS 64u
#define INITIAL_TABLE 128u   /* power of two */
#define LEDGER_FIRST_SERIAL 1u /* 0 names no allocation */

static void journal_free(const struct ledger *l, uint32_t client, uint32_t handle)
{
	const struct ledger_change ch = { .op = LEDGER_OP_FREE, .client = client, .handle = handle };

	ledger_journal(l, &ch);
}

/* The instant a channel or group is dated at (struct ledger clock_ns). */
static uint64_t ledger_now(const struct ledger *l)
{
	return l->clock_ns ? l->clock_ns() : gs_monotonic_ns();
}

int ledger_init(struct ledger *l)
{
	memset(l, 0, sizeof(*l));
	l->free_obj = NONE;
	l->free_alloc = NONE;
	l->hw_head = l->hw_tail = NONE;
	l->next_serial = LEDGER_FIRST_SERIAL;
	l->client_epoch = 1;
	l->max_files = UINT32_MAX;
	l->table_cap = INITIAL_TABLE;
	l->table = malloc(sizeof(uint32_t) * l->table_cap);
	if (!l->table)
		return -1;
	memset(l->table, 0xff, sizeof(uint32_t) * l->table_cap);
	l->self = getpid();
	return 0;
}

void ledger_fini(struct ledger *l)
{
	for (uint32_t i = 0; i < l->n_files; i++)
		close(l->files[i].epfd);
	free(l->files);
	for (uint32_t i = 0; i < l->n_objs; i++)
		if (l->objs[i].used && l->objs[i].watch_epfd >= 0)
			close(l->objs[i].watch_epfd);
	free(l->objs);
	free(l->table);
	free(l->allocs);
	free(l->watched);
	free(l->unreg);
	free(l->kept);
	memset(l, 0, sizeof(*l));
}

/* ---- objects and allocations --------------------------------------------- */

static uint32_t obj_new(struct ledger *l)
{
	uint32_t idx;

	if (l->free_obj != NONE) {
		idx = l->free_obj;
		l->free_obj = l->objs[idx].next_sibling;
	} else {
		if (!GS_ROOM_FOR_ONE(l->objs, l->n_objs, l->cap_objs, INITIAL_OBJS))
			return NONE;
		idx = l->n_objs++;
	}
	memset(&l->objs[idx], 0, sizeof(l->objs[idx]));
	l->objs[idx].alloc = NONE;
	l->objs[idx].first_child = l->objs[idx].next_sibling = l->objs[idx].prev_sibling = NONE;
	l->objs[idx].parent = 0;
	l->objs[idx].has_parent = false;
	l->objs[idx].watch_epfd = -1;
	l->objs[idx].watch_tfd = -1;
	l->objs[idx].route_wfd = -1;
	l->objs[idx].gpu = LEDGER_NO_GPU;
	l->objs[idx].used = true;
	return idx;
}

/* The watched clients, in no order: added when a client gets its watch,
 * removed (swapped with the last) when it is freed. */
static int watched_add(struct ledger *l, uint32_t idx)
{
	if (!GS_ROOM_FOR_ONE(l->watched, l->n_watched, l->cap_watched, INITIAL_OBJS))
		return -1;
	l->objs[idx].watch_pos = l->n_watched;
	l->watched[l->n_watched++] = idx;
	return 0;
}

static void watched_remove(struct ledger *l, uint32_t idx)
{
	uint32_t pos = l->objs[idx].watch_pos;
	uint32_t last = l->watched[--l->n_watched];

	l->watched[pos] = last;
	l->objs[last].watch_pos = pos;
}

/* The object a handle stands for: a dup of a hardware object (recorded
 * as OTHER) resolves to the handle that carries its count. */
static uint32_t resolve(const struct ledger *l, uint32_t idx)
{
	const struct ledger_obj *o;

	if (idx == NONE)
		return NONE;
	o = &l->objs[idx];
	if (o->kind == RM_CLASS_OTHER && o->alloc != NONE && l->allocs[o->alloc].owner != NONE)
		return l->allocs[o->alloc].owner;
	return idx;
}

uint32_t ledger_obj_find_resolved(const struct ledger *l, uint32_t client, uint32_t handle)
{
	return resolve(l, ledger_obj_find(l, client, handle));
}

static bool is_group_handle(const struct ledger *l, uint32_t client, uint32_t handle)
{
	uint32_t p = ledger_obj_find_resolved(l, client, handle);

	return p != NONE && l->objs[p].kind == RM_CLASS_CHANNEL_GROUP;
}

/* One more of a kind the ledger counts (ledger.h: count), with its peak. */
static void count_up(struct ledger *l, enum gs_quota_kind k)
{
	if (++l->count[k] > l->count_peak[k])
		l->count_peak[k] = l->count[k];
}

/* Channels and channel groups are a finite hardware pool: count the live
 * ones. Dups (ledger_dup passes RM_CLASS_OTHER) are not new channels. A
 * channel allocated outside any channel group gets one RM makes for it
 * (kchannelConstruct_IMPL, src/nvidia/src/kernel/gpu/fifo/kernel_channel.c
 * at 580.142: "Internally allocate a TSG to wrap this channel", freed
 * with the channel), so it counts a group too.
 * The hardware list holds these, the video engines, and the subdevices
 * --sm stops channels through (ledger_subdevice_of, at every window
 * edge under the session lock): what is walked often, apart from the
 * millions of memory objects a workload may hold. */
static bool is_hw_kind(uint8_t kind)
{
	return kind == RM_CLASS_CHANNEL || kind == RM_CLASS_CHANNEL_GROUP || kind == RM_CLASS_ENGINE ||
	       kind == RM_CLASS_SUBDEVICE;
}

static void hw_list_add(struct ledger *l, uint32_t idx)
{
	struct ledger_obj *o = &l->objs[idx];

	/* At the tail: listed oldest first, as the scan of the array listed
	 * a ledger that never reused a slot. */
	if (o->on_hw_list)
		return;
	o->hw_next = NONE;
	o->hw_prev = l->hw_tail;
	if (l->hw_tail != NONE)
		l->objs[l->hw_tail].hw_next = idx;
	else
		l->hw_head = idx;
	l->hw_tail = idx;
	o->on_hw_list = true;
}

static void hw_list_remove(struct ledger *l, uint32_t idx)
{
	struct ledger_obj *o = &l->objs[idx];

	if (!o->on_hw_list)
		return;
	if (o->hw_prev != NONE)
		l->objs[o->hw_prev].hw_next = o->hw_next;
	else
		l->hw_head = o->hw_next;
	if (o->hw_next != NONE)
		l->objs[o->hw_next].hw_prev = o->hw_prev;
	else
		l->hw_tail = o->hw_prev;
	o->on_hw_list = false;
}

static void count_object(struct ledger *l, struct ledger_obj *o, int delta)
{
	if (delta > 0) {
		if (o->kind == RM_CLASS_CHANNEL) {
			count_up(l, GS_QK_CHANNELS);
			o->counted = true;
			if (!o->has_parent || !is_group_handle(l, o->client, o->parent)) {
				o->implicit_group = true;
				count_up(l, GS_QK_CHANNEL_GROUPS);
			}
		} else if (o->kind == RM_CLASS_CHANNEL_GROUP) {
			count_up(l, GS_QK_CHANNEL_GROUPS);
			o->counted = true;
		}
		return;
	}
	if (!o->counted)
		return;
	if (o->kind == RM_CLASS_CHANNEL)
		l->count[GS_QK_CHANNELS]--;
	if (o->kind == RM_CLASS_CHANNEL_GROUP || o->implicit_group)
		l->count[GS_QK_CHANNEL_GROUPS]--;
	if (o->scheduled)
		l->count[GS_QK_ACTIVE_CHANNEL_GROUPS]--;
	o->counted = o->scheduled = o->implicit_group = false;
}

/* The counted handle of a hardware object is being freed while a dup
 * still refers to it: the driver keeps the object, so the dup takes the
 * count, the scheduling state and the class over. False when no dup was
 * found. */
static bool hand_over(struct ledger *l, uint32_t from)
{
	struct ledger_obj *o = &l->objs[from];
	uint32_t a = o->alloc;

	for (uint32_t i = 0; i < l->n_objs; i++) {
		struct ledger_obj *d = &l->objs[i];
		if (i == from || !d->used || d->alloc != a)
			continue;
		d->kind = o->kind;
		d->cls = o->cls;
		d->counted = o->counted;
		d->implicit_group = o->implicit_group;
		d->scheduled = o->scheduled;
		d->sm_disabled = o->sm_disabled;
		d->since_ns = o->since_ns;
		l->allocs[a].owner = i;
		o->counted = o->scheduled = o->implicit_group = false;
		o->kind = RM_CLASS_OTHER;
		hw_list_remove(l, from);
		hw_list_add(l, i);
		return true;
	}
	return false;
}

/* The counted handle of a hardware object is being freed while only
 * pins (UVM's registrations of a channel) keep it: the driver keeps the
 * channel's ID and its group, so the counts stay, carried by the
 * allocation until its last pin goes (ledger_alloc_unref). With no
 * handle left nothing can schedule it: it leaves the scheduled count. */
static void hold_on_pins(struct ledger *l, uint32_t from)
{
	struct ledger_obj *o = &l->objs[from];
	struct ledger_alloc *a = &l->allocs[o->alloc];

	if (!o->counted)
		return;
	a->held = (uint8_t)((o->kind == RM_CLASS_CHANNEL ? LEDGER_HELD_CHANNEL : 0) |
	                    (o->kind == RM_CLASS_CHANNEL_GROUP || o->implicit_group ? LEDGER_HELD_GROUP : 0));
	a->owner = NONE;
	if (o->scheduled)
		l->count[GS_QK_ACTIVE_CHANNEL_GROUPS]--;
	o->counted = o->scheduled = o->implicit_group = false;
}

/* The handle that carries a hardware object's count is being freed:
 * a dup takes the count over, or else the pins hold it. */
static void pass_count_on(struct ledger *l, uint32_t from)
{
	const struct ledger_alloc *a = &l->allocs[l->objs[from].alloc];

	/* refs - pins: the handles, this one included. No dup, no scan of
	 * every object (a client's exit frees each registered channel). */
	if (a->refs - a->pins > 1 && hand_over(l, from))
		return;
	if (a->pins)
		hold_on_pins(l, from);
}

bool ledger_is_scheduled(const struct ledger *l, uint32_t h_client, uint32_t h_group)
{
	uint32_t idx = ledger_obj_find_resolved(l, h_client, h_group);
	return idx != NONE && l->objs[idx].scheduled;
}

/* What the runlist schedules as a unit: a channel group, or a channel with
 * no group of its own (RM gives it an implicit one), which channel-level
 * GPFIFO_SCHEDULE enables; --active-channel-groups counts both. */
static bool is_schedulable(const struct ledger *l, const struct ledger_obj *o)
{
	if (o->kind == RM_CLASS_CHANNEL_GROUP)
		return true;
	if (o->kind != RM_CLASS_CHANNEL)
		return false;
	/* Handle 0 is a handle: only has_parent says there is none. */
	return !o->has_parent || !is_group_handle(l, o->client, o->parent);
}

bool ledger_is_channel_group(const struct ledger *l, uint32_t h_client, uint32_t handle)
{
	return is_group_handle(l, h_client, handle);
}

bool ledger_is_lone_channel(const struct ledger *l, uint32_t h_client, uint32_t handle)
{
	uint32_t idx = ledger_obj_find_resolved(l, h_client, handle);

	return idx != NONE && l->objs[idx].kind == RM_CLASS_CHANNEL && is_schedulable(l, &l->objs[idx]);
}

void ledger_set_scheduled(struct ledger *l, uint32_t h_client, uint32_t h_group, bool on)
{
	uint32_t idx = ledger_obj_find_resolved(l, h_client, h_group);
	struct ledger_obj *o;

	if (idx == NONE)
		return;
	o = &l->objs[idx];
	if (!is_schedulable(l, o) || !o->counted || o->scheduled == on)
		return;
	o->scheduled = on;
	/* Only the first schedule starts the settling time: a workload that
	 * re-schedules must not keep its channels "new" forever. */
	if (on && !o->since_ns)
		o->since_ns = ledger_now(l);
	if (on)
		count_up(l, GS_QK_ACTIVE_CHANNEL_GROUPS);
	else
		l->count[GS_QK_ACTIVE_CHANNEL_GROUPS]--;
	const struct ledger_change ch = { .op = LEDGER_OP_SCHEDULED, .client = h_client,
	                                  .handle = h_group, .on = on };
	ledger_journal(l, &ch);
}

static void link_child(struct ledger *l, uint32_t parent, uint32_t child)
{
	struct ledger_obj *p = &l->objs[parent];
	struct ledger_obj *c = &l->objs[child];

	c->next_sibling = p->first_child;
	c->prev_sibling = NONE;
	if (p->first_child != NONE)
		l->objs[p->first_child].prev_sibling = child;
	p->first_child = child;
}

static void unlink_child(struct ledger *l, uint32_t child)
{
	struct ledger_obj *c = &l->objs[child];
	uint32_t parent_idx = c->has_parent ? ledger_obj_find(l, c->client, c->parent) : NONE;

	if (c->prev_sibling != NONE)
		l->objs[c->prev_sibling].next_sibling = c->next_sibling;
	else if (parent_idx != NONE && l->objs[parent_idx].first_child == child)
		l->objs[parent_idx].first_child = c->next_sibling;
	if (c->next_sibling != NONE)
		l->objs[c->next_sibling].prev_sibling = c->prev_sibling;
}

/* Frees a subtree iteratively: the workload controls its depth, so no
 * recursion on its account. */
static void free_subtree(struct ledger *l, uint32_t root, uint64_t released[GS_MAX_GPUS])
{
	uint32_t cur;

	unlink_child(l, root);
	l->objs[root].next_sibling = NONE;
	cur = root;
	for (;;) {
		/* Descend to a leaf. */
		while (l->objs[cur].first_child != NONE)
			cur = l->objs[cur].first_child;
		struct ledger_obj *o = &l->objs[cur];
		uint32_t next = o->next_sibling;
		uint32_t up = NONE;
		if (cur != root && o->has_parent)
			up = ledger_obj_find(l, o->client, o->parent);
		/* Detach cur from its parent before freeing it. */
		if (up != NONE) {
			l->objs[up].first_child = next;
			if (next != NONE)
				l->objs[next].prev_sibling = NONE;
		}
		/* A channel UVM may have registered by this handle keeps
		 * its count until it is unregistered (ledger.h). */
		if (l->channel_freed && o->alloc != NONE && l->allocs[o->alloc].channel)
			l->channel_freed(l, cur);
		if (o->alloc != NONE && l->allocs[o->alloc].owner == cur && l->allocs[o->alloc].refs > 1)
			pass_count_on(l, cur);
		if (o->alloc != NONE)
			ledger_alloc_unref(l, o->alloc, released);
		count_object(l, o, -1);
		hw_list_remove(l, cur);
		if (o->watch_epfd >= 0) {
			watched_remove(l, cur);
			close(o->watch_epfd);
			l->live_clients--;
		}
		l->n_resumed -= o->resumed;
		l->n_adopted -= o->adopted;
		ledger_table_remove(l, o->client, o->handle);
		o->used = false;
		o->next_sibling = l->free_obj;
		l->free_obj = cur;
		if (cur == root)
			return;
		cur = next != NONE ? next : up;
		if (cur == NONE)
			return; /* inconsistent tree: stop rather than loop */
	}
}

/* ---- release watch (the primitives are in ledger_files.c) ------------------ */

bool ledger_obj_watch_alive(const struct ledger *l, const struct ledger_obj *o)
{
	return ledger_watch_alive_at(l->self, o->watch_epfd, o->watch_tfd);
}

int ledger_obj_watch_is_file(const struct ledger *l, const struct ledger_obj *o, int fd)
{
	return ledger_watch_is_file_at(l->self, o->watch_epfd, o->watch_tfd, fd);
}

bool ledger_client_on_file(struct ledger *l, uint32_t h_client, int fd)
{
	uint32_t idx = ledger_obj_find(l, h_client, h_client);

	return idx != NONE && ledger_obj_watch_is_file(l, &l->objs[idx], fd) == 1;
}

/* ---- public API ----------------------------------------------------------- */

/* A client rebuilt from a journal (ledger_replay) has no release watch.
 * The callers of ledger_note_client call it after the driver accepted a
 * call on the client through fd (RM's strict client validation: the
 * client's own file), so that file is watched from now on. */
static void adopt_watch(struct ledger *l, uint32_t idx, int fd)
{
	struct ledger_obj *o = &l->objs[idx];

	o->resumed = false;
	l->n_resumed--;
	l->client_epoch++;
	o->watch_epfd = ledger_watch_file(l, fd);
	o->watch_tfd = fd;
	if (o->watch_epfd >= 0 && watched_add(l, idx) < 0) {
		close(o->watch_epfd);
		o->watch_epfd = -1;
	}
	/* Told as a client noted again: whoever keeps watches learns it. */
	const struct ledger_change ch = { .op = LEDGER_OP_NOTE_CLIENT, .client = o->client };
	if (o->watch_epfd >= 0)
		ledger_journal(l, &ch);
}

int ledger_client_watch(const struct ledger *l, uint32_t h_client, int *tfd)
{
	uint32_t idx = ledger_obj_find(l, h_client, h_client);

	if (idx == NONE || l->objs[idx].kind != RM_CLASS_CLIENT)
		return -1;
	*tfd = l->objs[idx].watch_tfd;
	return l->objs[idx].watch_epfd;
}

int ledger_adopt_watch(struct ledger *l, uint32_t h_client, int epfd, int tfd)
{
	uint32_t idx = ledger_obj_find(l, h_client, h_client);
	struct ledger_obj *o = idx != NONE ? &l->objs[idx] : NULL;

	if (!o || o->kind != RM_CLASS_CLIENT || o->watch_epfd >= 0) {
		close(epfd);
		return -1;
	}
	if (watched_add(l, idx) < 0) {
		close(epfd);
		return -1;
	}
	o->watch_epfd = epfd;
	o->watch_tfd = tfd;
	l->client_epoch++;
	if (o->resumed) {
		o->resumed = false;
		l->n_resumed--;
	}
	o->adopted = true;
	l->n_adopted++;
	return 0;
}

bool ledger_file_may_hold_resumed_client(const struct ledger *l, int fd)
{
	if (l->n_resumed)
		return true;
	for (uint32_t i = 0; l->n_adopted && i < l->n_watched; i++) {
		const struct ledger_obj *o = &l->objs[l->watched[i]];
		if (o->adopted && ledger_obj_watch_is_file(l, o, fd) != 0)
			return true;   /* this file, or cannot tell */
	}
	return false;
}

static int note_client(struct ledger *l, uint32_t h_client, int fd_for_watch)
{
	uint32_t idx = ledger_obj_find(l, h_client, h_client);

	if (idx != NONE) {
		if (l->objs[idx].resumed && l->objs[idx].watch_epfd < 0 && fd_for_watch >= 0)
			adopt_watch(l, idx, fd_for_watch);
		return 0;
	}
	idx = obj_new(l);
	if (idx == NONE)
		return -1;
	l->objs[idx].client = h_client;
	l->objs[idx].handle = h_client;
	l->objs[idx].kind = RM_CLASS_CLIENT;
	l->objs[idx].watch_epfd = ledger_watch_file(l, fd_for_watch);
	l->objs[idx].watch_tfd = fd_for_watch;
	if (l->objs[idx].watch_epfd >= 0 && watched_add(l, idx) < 0) {
		close(l->objs[idx].watch_epfd);
		l->objs[idx].watch_epfd = -1;
	}
	if (ledger_table_insert(l, idx) < 0) {
		if (l->objs[idx].watch_epfd >= 0) {
			watched_remove(l, idx);
			close(l->objs[idx].watch_epfd);
		}
		l->objs[idx].used = false;
		l->objs[idx].next_sibling = l->free_obj;
		l->free_obj = idx;
		return -1;
	}
	l->live_clients++;
	return 1;
}

int ledger_note_client(struct ledger *l, uint32_t h_client, int fd_for_watch)
{
	int rc = note_client(l, h_client, fd_for_watch);
	const struct ledger_change ch = { .op = LEDGER_OP_NOTE_CLIENT, .client = h_client };

	if (rc == 1)
		ledger_journal(l, &ch);
	return rc;
}

int ledger_bind_client(struct ledger *l, uint32_t h_client, int fd, uint64_t released[GS_MAX_GPUS])
{
	uint32_t idx = ledger_obj_find(l, h_client, h_client);

	if (idx != NONE) {
		struct ledger_obj *o = &l->objs[idx];
		/* Same file (the common case): one kcmp and done. Otherwise the
		 * entry is stale only if its own file is gone; with RM's client
		 * validation relaxed a live client may be reached through a
		 * second file, and then its charges must stay. */
		int same = ledger_obj_watch_is_file(l, o, fd);
		if (same == 1)
			return 1;
		if (o->watch_epfd < 0 || ledger_obj_watch_alive(l, o))
			return 0;
		free_subtree(l, idx, released);
		journal_free(l, h_client, h_client);
	}
	if (ledger_note_client(l, h_client, fd) < 0)
		return -1;
	/* A new entry is bound to fd when its watch was made on it. */
	idx = ledger_obj_find(l, h_client, h_client);
	return idx != NONE && l->objs[idx].watch_epfd >= 0 ? 1 : 0;
}

bool ledger_has(const struct ledger *l, uint32_t h_client, uint32_t handle)
{
	return ledger_obj_find(l, h_client, handle) != NONE;
}

bool ledger_object_facts(const struct ledger *l, uint32_t h_client, uint32_t handle,
                         struct ledger_facts *out)
{
	uint32_t idx = ledger_obj_find(l, h_client, handle);

	if (idx == NONE)
		return false;
	const struct ledger_obj *o = &l->objs[idx];
	out->cls = o->cls;
	out->kind = (enum rm_class_kind)o->kind;
	out->gpu = o->gpu;
	out->bytes = o->alloc != NONE ? l->allocs[o->alloc].bytes : 0;
	return true;
}

int ledger_gpu_of(const struct ledger *l, uint32_t h_client, uint32_t handle)
{
	uint32_t idx = ledger_obj_find(l, h_client, handle);
	return idx == NONE ? LEDGER_NO_GPU : l->objs[idx].gpu;
}

/* serial: the allocation's, when the object makes one (a replay's; 0: a
 * new one). A new allocation is on the object's GPU; a replayed one on
 * the journal's (gpu): a dup that outlived its original holds memory of
 * the original's GPU under a parent that may be on another (ledger_add
 * journals the allocation's GPU, a snapshot too). */
static int add_obj(struct ledger *l, uint32_t h_client, uint32_t h_parent, uint32_t handle,
                   enum rm_class_kind kind, uint32_t cls, int gpu, uint64_t bytes, uint64_t serial)
{
	uint32_t parent_idx, idx = ledger_obj_find(l, h_client, handle);

	if (idx != NONE)
		free_subtree(l, idx, NULL);
	parent_idx = ledger_obj_find(l, h_client, h_parent);
	idx = obj_new(l);
	if (idx == NONE)
		return -1;
	struct ledger_obj *o = &l->objs[idx];
	o->client = h_client;
	o->handle = handle;
	o->parent = parent_idx != NONE ? h_parent : 0;
	o->has_parent = parent_idx != NONE;
	o->kind = (uint8_t)kind;
	o->cls = cls;
	if (kind == RM_CLASS_DEVICE)
		o->gpu = gpu;
	else
		o->gpu = parent_idx != NONE ? l->objs[parent_idx].gpu : gpu;
	if (ledger_table_insert(l, idx) < 0) {
		o->used = false;
		return -1;
	}
	if (parent_idx != NONE)
		link_child(l, parent_idx, idx);
	count_object(l, &l->objs[idx], +1);
	if (is_hw_kind(l->objs[idx].kind))
		hw_list_add(l, idx);
	/* Groups start settling when first scheduled; channels are dated. */
	if (kind != RM_CLASS_CHANNEL_GROUP)
		l->objs[idx].since_ns = ledger_now(l);
	bool hw = kind == RM_CLASS_CHANNEL || kind == RM_CLASS_CHANNEL_GROUP || kind == RM_CLASS_ENGINE;
	int a_gpu = serial ? gpu : o->gpu;
	bool on_gpu = a_gpu >= 0 && (unsigned)a_gpu < GS_MAX_GPUS;
	/* Hardware gets its record whatever its GPU: without one a dup could
	 * not keep the count after the counted handle goes (fuzz_ledger). A
	 * replayed ADD with a serial made one (a pin may name it). */
	if ((bytes && on_gpu) || hw || serial) {
		uint32_t a = ledger_alloc_new(l, on_gpu ? bytes : 0, a_gpu, serial);
		if (a == NONE)
			return -1;
		l->objs[idx].alloc = a;
		if (hw)
			l->allocs[a].owner = idx;
		l->allocs[a].channel = kind == RM_CLASS_CHANNEL;
		l->allocs[a].group = kind == RM_CLASS_CHANNEL_GROUP;
	}
	return 0;
}

/* What a journalled ADD of (h_client, handle) says of the allocation it
 * made: its serial and GPU (the GPU as asked when it made none: a
 * device's deviceId). */
static void journal_alloc_of(const struct ledger *l, uint32_t h_client, uint32_t handle,
                             struct ledger_change *ch)
{
	uint32_t idx = ledger_obj_find(l, h_client, handle);

	if (idx == NONE || l->objs[idx].alloc == NONE)
		return;
	ch->serial = l->allocs[l->objs[idx].alloc].serial;
	ch->gpu = l->allocs[l->objs[idx].alloc].gpu;
}

int ledger_add(struct ledger *l, uint32_t h_client, uint32_t h_parent, uint32_t handle,
               enum rm_class_kind kind, uint32_t cls, int gpu, uint64_t bytes)
{
	struct ledger_change ch = { .op = LEDGER_OP_ADD, .client = h_client, .parent = h_parent,
	                            .handle = handle, .kind = kind, .cls = cls, .gpu = gpu, .bytes = bytes };

	if (add_obj(l, h_client, h_parent, handle, kind, cls, gpu, bytes, 0) < 0)
		return -1;
	/* The lookup only when someone listens (the agent's containers). */
	if (l->journal) {
		journal_alloc_of(l, h_client, handle, &ch);
		ledger_journal(l, &ch);
	}
	return 0;
}

/* The new handle (h_client, handle) is one more reference on allocation a. */
static void refer_to_alloc(struct ledger *l, uint32_t h_client, uint32_t handle, uint32_t a)
{
	l->objs[ledger_obj_find(l, h_client, handle)].alloc = a;
	l->allocs[a].refs++;
}

int ledger_dup_pinned(struct ledger *l, uint32_t h_client, uint32_t h_parent, uint32_t handle,
                      uint32_t pin, uint32_t cls)
{
	if (pin == LEDGER_NO_PIN || pin >= l->n_allocs || !l->allocs[pin].pins)
		return -1;
	if (add_obj(l, h_client, h_parent, handle, RM_CLASS_VIDMEM, cls, l->allocs[pin].gpu, 0, 0) < 0)
		return -1;
	refer_to_alloc(l, h_client, handle, pin);
	/* Journalled as a handle that charges nothing: a replay has no record
	 * of the export's pin to hang it on, and keeps that pin for good
	 * (a resumed pin), so the memory stays charged (ledger.h). */
	const struct ledger_change ch = { .op = LEDGER_OP_ADD, .client = h_client, .parent = h_parent,
	                                  .handle = handle, .kind = RM_CLASS_VIDMEM, .cls = cls,
	                                  .gpu = l->allocs[pin].gpu };
	ledger_journal(l, &ch);
	return 0;
}

int ledger_dup(struct ledger *l, uint32_t h_client, uint32_t h_parent, uint32_t handle,
               uint32_t src_client, uint32_t src_handle)
{
	uint32_t src = ledger_obj_find(l, src_client, src_handle);
	uint32_t cls = src != NONE ? l->objs[src].cls : 0;
	enum rm_class_kind kind = src != NONE ? (enum rm_class_kind)l->objs[src].kind : RM_CLASS_OTHER;
	int gpu = src != NONE ? l->objs[src].gpu : LEDGER_NO_GPU;

	/* A dup is another handle, not another device or hardware channel. */
	if (kind == RM_CLASS_DEVICE || kind == RM_CLASS_CHANNEL || kind == RM_CLASS_CHANNEL_GROUP ||
	    kind == RM_CLASS_ENGINE)
		kind = RM_CLASS_OTHER;
	if (add_obj(l, h_client, h_parent, handle, kind, cls, gpu, 0, 0) < 0)
		return -1;
	/* Look src up again: ledger_add may have grown the object array. */
	src = ledger_obj_find(l, src_client, src_handle);
	if (src != NONE && l->objs[src].alloc != NONE)
		refer_to_alloc(l, h_client, handle, l->objs[src].alloc);
	const struct ledger_change ch = { .op = LEDGER_OP_DUP, .client = h_client, .parent = h_parent,
	                                  .handle = handle, .src_client = src_client,
	                                  .src_handle = src_handle };
	ledger_journal(l, &ch);
	return 0;
}

void ledger_free(struct ledger *l, uint32_t h_client, uint32_t handle,
                 uint64_t released[GS_MAX_GPUS])
{
	uint32_t idx = ledger_obj_find(l, h_client, handle);

	if (idx != NONE) {
		free_subtree(l, idx, released);
		journal_free(l, h_client, handle);
	}
}

unsigned ledger_reap_dead_clients(struct ledger *l, uint64_t released[GS_MAX_GPUS])
{
	unsigned n = 0;
	struct ledger_owner owner;

	while (ledger_reap_dead_client(l, released, &owner))
		n++;
	return n;
}

/* Walks the watched clients only: a reap costs one kcmp per live client,
 * whatever the number of objects under them. */
bool ledger_reap_dead_client(struct ledger *l, uint64_t released[GS_MAX_GPUS],
                             struct ledger_owner *owner)
{
	return ledger_reap_dead_client_within(l, UINT32_MAX, released, owner);
}

bool ledger_reap_dead_client_within(struct ledger *l, uint32_t max_checks,
                                    uint64_t released[GS_MAX_GPUS], struct ledger_owner *owner)
{
	uint32_t n = max_checks < l->n_watched ? max_checks : l->n_watched;

	for (uint32_t k = 0; k < n; k++) {
		if (l->reap_cursor >= l->n_watched)
			l->reap_cursor = 0;
		uint32_t i = l->watched[l->reap_cursor];
		struct ledger_obj *o = &l->objs[i];
		if (ledger_obj_watch_alive(l, o)) {
			l->reap_cursor++;
			continue;
		}
		/* The last watched client takes its place: look at it next. */
		*owner = o->owner;
		const uint32_t client = o->client;
		free_subtree(l, i, released);
		journal_free(l, client, client);
		return true;
	}
	return false;
}

void ledger_set_client_owner(struct ledger *l, uint32_t h_client, const struct ledger_owner *owner)
{
	uint32_t idx = ledger_obj_find(l, h_client, h_client);

	if (idx != NONE && l->objs[idx].kind == RM_CLASS_CLIENT)
		l->objs[idx].owner = *owner;
}

pid_t ledger_client_owner(const struct ledger *l, uint32_t h_client)
{
	uint32_t idx = ledger_obj_find(l, h_client, h_client);

	return idx != NONE && l->objs[idx].kind == RM_CLASS_CLIENT ? l->objs[idx].owner.pid : 0;
}

int ledger_max_gpu(const struct ledger *l)
{
	int max = -1;
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		if (l->peak[g])
			max = (int)g;
	return max;
}

uint32_t ledger_live_objects(const struct ledger *l)
{
	return l->table_used;
}

/* ---- UVM's channel registrations (ledger.h, struct ledger_unreg) ---------- */

/* CUDA makes about 20 channels per context. */
#define INITIAL_UNREGS 32u

/* Pins on what a registration of the channel by the handle obj holds:
 * the channel's hardware record, which carries its ID (and, for a
 * channel outside any group, the group RM made for it: count_object,
 * above), and the record of the group the handle hangs under,
 * which RM dups for UVM (nvGpuOpsGetChannelTsgInfo, nv_gpu_ops.c,
 * 580.95.05). RM never dups a channel (KernelChannel keeps resserv's
 * resCanCopy, which says no), so the handle is the channel's own and its
 * parent its group, or a dup of it. */
static void pin_channel(struct ledger *l, uint32_t obj, uint32_t pins[2])
{
	const struct ledger_obj *o = &l->objs[obj];
	uint32_t parent = o->has_parent ? ledger_obj_find(l, o->client, o->parent) : NONE;

	pins[0] = ledger_pin_again(l, o->alloc);
	pins[1] = LEDGER_NO_PIN;
	if (parent != NONE && l->objs[parent].alloc != NONE && l->allocs[l->objs[parent].alloc].group)
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

/* ---- replay (the agent's state journal) ------------------------------------ */

int ledger_replay(struct ledger *l, const struct ledger_change *ch)
{
	ledger_journal_fn saved = l->journal;
	void (*freed)(struct ledger *l, uint32_t obj) = l->channel_freed;
	int rc = 0;

	l->journal = NULL;
	/* A replayed FREE lists no channel handle: the pins the listing took
	 * were journalled before that FREE, and their drops after it. */
	l->channel_freed = NULL;
	switch (ch->op) {
	case LEDGER_OP_NOTE_CLIENT:
		/* No file to watch: the client's charges stay until it is
		 * freed through the supervisor (the safe side). */
		rc = note_client(l, ch->client, -1) < 0 ? -1 : 0;
		if (rc == 0) {
			uint32_t idx = ledger_obj_find(l, ch->client, ch->client);
			if (idx != NONE && !l->objs[idx].resumed) {
				l->objs[idx].resumed = true;
				l->n_resumed++;
			}
		}
		break;
	case LEDGER_OP_ADD:
		rc = add_obj(l, ch->client, ch->parent, ch->handle, (enum rm_class_kind)ch->kind, ch->cls,
		             ch->gpu, ch->bytes, ch->serial);
		break;
	case LEDGER_OP_DUP:
		rc = ledger_dup(l, ch->client, ch->parent, ch->handle, ch->src_client, ch->src_handle);
		break;
	case LEDGER_OP_FREE:
		ledger_free(l, ch->client, ch->handle, NULL);
		break;
	case LEDGER_OP_SCHEDULED:
		ledger_set_scheduled(l, ch->client, ch->handle, ch->on != 0);
		break;
	case LEDGER_OP_PIN:
	case LEDGER_OP_UNPIN:
	case LEDGER_OP_HELD:
		rc = ledger_pins_replay(l, ch);
		break;
	case LEDGER_OP_WATCH_CHANNELS:
		ledger_watch_channel_frees(l);
		freed = l->channel_freed;
		l->channel_freed = NULL;
		break;
	default:
		rc = -1;
	}
	l->channel_freed = freed;
	l->journal = saved;
	return rc;
}
