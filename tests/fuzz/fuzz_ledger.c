/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ledger.c - fuzz target for the ledger (supervisor/core/ledger/ledger.c).
 *
 * Every input is a sequence of operations (add, dup, free, a client's file
 * closing, reap, and pins: a UVM mapping's reference on memory, taken and
 * dropped), six bytes each, run both on the ledger and on a model
 * written for clarity, not speed: a flat array of objects whose subtree is
 * found by searching parents. After every operation the ledger must agree
 * with the model on the bytes charged per GPU, the live objects and the
 * live channels and channel groups; at the end, freeing every client must
 * bring every charge back to zero. Handles come from a small set that
 * includes 0 and the client handles themselves: the workload chooses its
 * handles, and handle 0 was the ledger's "no parent" (issue #17 item 12:
 * an endless loop at 100 % CPU).
 *
 * Once a WATCH operation has run (a UVM channel registration was
 * continued), each channel handle that goes is listed with pins on its
 * channel's record and its parent group's, which keep both counted until
 * a SETTLE (every listed pair unregistered): the model takes the same
 * references, on the channel and on the group the freed handle hung
 * under.
 *
 * The journal (ledger.h, struct ledger_change) is kept too. Before the
 * end, the ledger is rebuilt from it, and from a snapshot of the live
 * ledger, as a restarted agent rebuilds it: both must agree with the live
 * ledger on the charges, the live objects and the pins held (every pin
 * then a resumed one), the journal on the channel counts too (a snapshot
 * loses a count a dup took over, docs/agent.md). Then, in the rebuilt
 * ledger, freeing every client leaves charged what the model keeps: the
 * memory pins held at the "restart" (a resumed pin is never dropped) and
 * what hangs under no client.
 *
 * Built as a libFuzzer target by `make fuzz` and linked with replay_main.c
 * into build/tests/fuzz/ledger_replay, which CI runs over the committed
 * corpus (tests/fuzz/corpus/ledger) under ASan/UBSan. A hang is caught by
 * the replay's per-input alarm or libFuzzer's -timeout.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger.h"
#include "ledger_obj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define OP_BYTES    6
#define MAX_OPS     512
#define MODEL_MAX   (MAX_OPS + 1)  /* at most one object per operation */
#define MIB         (1ull << 20)
#define N_CLIENTS   3
#define N_HANDLES   8
#define N_KINDS     (RM_CLASS_PROCESS_BOUND + 1)
/* GPU arguments from -1 (none) to GS_MAX_GPUS (out of range). */
#define N_GPU_ARGS  (GS_MAX_GPUS + 2)

enum op { OP_CLIENT, OP_ADD, OP_DUP, OP_FREE, OP_CLOSE, OP_REAP, OP_PIN, OP_UNPIN, OP_WATCH, OP_SETTLE,
          N_OPS };
#define MAX_PINS 64
/* A change per operation, a snapshot one per object and one per
 * allocation, and up to two pins taken and dropped per channel listed. */
#define MAX_CHANGES (8 * MODEL_MAX)

static const uint32_t clients[N_CLIENTS] = { 0, 0xc1d00001u, 0xc1d00002u };
/* 0, small handles, and a client's handle used as an object's. */
static const uint32_t handles[N_HANDLES] = { 0, 1, 2, 3, 0xc1d00001u, 5, 0xcaf00000u, 7 };

/* What the driver keeps while any handle to it lives: memory (bytes on a
 * GPU), or a hardware channel or channel group. A channel outside any group
 * also holds the group RM makes for it (kchannelConstruct_IMPL at 580.142). */
struct model_alloc {
	uint64_t bytes;
	int      gpu;
	unsigned refs;       /* handles and pins */
	unsigned pins;
	int      kind;
	bool     implicit_group;
};

struct model_obj {
	bool     live;
	uint32_t client, handle, parent;
	bool     has_parent;
	int      kind, gpu;
	int      alloc;       /* index into allocs, or -1 */
	bool     counted;     /* a channel or group made by an add */
	int      file_fd;     /* a client's open file (our pipe end), or -1 */
};

struct model {
	struct model_obj   objs[MODEL_MAX];
	struct model_alloc allocs[MODEL_MAX];
	unsigned           n_objs, n_allocs;
	/* Pins held: the ledger's, and the model allocation each stands for. */
	uint32_t           pin[MAX_PINS];
	int                pin_alloc[MAX_PINS];
	unsigned           n_pins;
	/* Channel handles listed since WATCH: the allocations each pins. */
	bool               watch;
	int                unreg_alloc[MODEL_MAX][2];
	unsigned           n_unreg, n_unreg_pins;
};

static int model_find(const struct model *m, uint32_t client, uint32_t handle)
{
	for (unsigned i = 0; i < m->n_objs; i++)
		if (m->objs[i].live && m->objs[i].client == client && m->objs[i].handle == handle)
			return (int)i;
	return -1;
}

static void model_pin_alloc(struct model *m, int a)
{
	m->allocs[a].refs++;
	m->allocs[a].pins++;
	m->n_unreg_pins++;
}

/* A channel handle goes while watched: its channel, and the group its
 * parent (parent_alloc) is, stay held until SETTLE. */
static void model_list_channel(struct model *m, const struct model_obj *o, int parent_alloc)
{
	if (!m->watch || o->alloc < 0 || m->allocs[o->alloc].kind != RM_CLASS_CHANNEL)
		return;
	int *u = m->unreg_alloc[m->n_unreg++];
	u[0] = o->alloc;
	u[1] = parent_alloc >= 0 && m->allocs[parent_alloc].kind == RM_CLASS_CHANNEL_GROUP ? parent_alloc : -1;
	model_pin_alloc(m, u[0]);
	if (u[1] >= 0)
		model_pin_alloc(m, u[1]);
}

/* Recursion is fine here: the model has at most MODEL_MAX objects.
 * parent_alloc: the allocation of the object idx hangs under (-1: none). */
static void model_free_under(struct model *m, int idx, int parent_alloc)
{
	struct model_obj *o = &m->objs[idx];

	o->live = false;
	for (unsigned i = 0; i < m->n_objs; i++)
		if (m->objs[i].live && m->objs[i].has_parent && m->objs[i].client == o->client &&
		    m->objs[i].parent == o->handle)
			model_free_under(m, (int)i, o->alloc);
	model_list_channel(m, o, parent_alloc);
	if (o->alloc >= 0)
		m->allocs[o->alloc].refs--;
	if (o->file_fd >= 0)
		close(o->file_fd);
	o->file_fd = -1;
}

static void model_free_at(struct model *m, int idx)
{
	const struct model_obj *o = &m->objs[idx];
	int parent = o->has_parent ? model_find(m, o->client, o->parent) : -1;

	model_free_under(m, idx, parent >= 0 ? m->objs[parent].alloc : -1);
}

static struct model_obj *model_add(struct model *m, uint32_t c, uint32_t p, uint32_t h, int kind,
                                   int gpu, uint64_t bytes)
{
	int old = model_find(m, c, h), pi;
	struct model_obj *o;

	if (old >= 0)
		model_free_at(m, old);
	pi = model_find(m, c, p);
	o = &m->objs[m->n_objs++];
	*o = (struct model_obj){ .live = true, .client = c, .handle = h, .parent = p,
	                         .has_parent = pi >= 0, .kind = kind, .alloc = -1, .file_fd = -1 };
	o->gpu = kind == RM_CLASS_DEVICE || pi < 0 ? gpu : m->objs[pi].gpu;
	o->counted = kind == RM_CLASS_CHANNEL || kind == RM_CLASS_CHANNEL_GROUP;
	bool charged = bytes && o->gpu >= 0 && (unsigned)o->gpu < GS_MAX_GPUS;
	if (charged || o->counted) {
		/* A channel is in a group when its parent is one (a dup of one
		 * included); outside any, it holds the group RM makes for it. */
		int pa = o->has_parent ? m->objs[pi].alloc : -1;
		bool in_group = pa >= 0 && m->allocs[pa].kind == RM_CLASS_CHANNEL_GROUP;
		o->alloc = (int)m->n_allocs++;
		m->allocs[o->alloc] = (struct model_alloc){ .bytes = charged ? bytes : 0, .gpu = o->gpu,
		                                            .refs = 1, .kind = kind,
		                                            .implicit_group = kind == RM_CLASS_CHANNEL && !in_group };
	}
	return o;
}

static bool is_hardware(int kind)
{
	return kind == RM_CLASS_DEVICE || kind == RM_CLASS_CHANNEL || kind == RM_CLASS_CHANNEL_GROUP ||
	       kind == RM_CLASS_ENGINE;
}

/* ---- one operation on both ----------------------------------------------- */

static void op_client(struct ledger *l, struct model *m, uint32_t c)
{
	int fds[2];

	if (model_find(m, c, c) >= 0) {
		if (ledger_note_client(l, c, -1) != 0)
			abort(); /* known: nothing new */
		return;
	}
	if (pipe2(fds, O_CLOEXEC) < 0)
		abort();
	close(fds[1]);
	if (ledger_note_client(l, c, fds[0]) != 1)
		abort();
	model_add(m, c, c, c, RM_CLASS_CLIENT, LEDGER_NO_GPU, 0)->file_fd = fds[0];
}

static void op_dup(struct ledger *l, struct model *m, uint32_t c, uint32_t p, uint32_t h,
                   uint32_t sc, uint32_t sh)
{
	int si = model_find(m, sc, sh);
	int kind = si >= 0 ? m->objs[si].kind : RM_CLASS_OTHER;
	int gpu = si >= 0 ? m->objs[si].gpu : LEDGER_NO_GPU;
	struct model_obj *o;

	if (ledger_dup(l, c, p, h, sc, sh) < 0)
		abort();
	o = model_add(m, c, p, h, is_hardware(kind) ? RM_CLASS_OTHER : kind, gpu, 0);
	o->counted = false;
	/* The source may have gone with the handle the dup replaced. */
	si = model_find(m, sc, sh);
	if (si >= 0 && m->objs[si].alloc >= 0) {
		o->alloc = m->objs[si].alloc;
		m->allocs[o->alloc].refs++;
	}
}

static void op_reap(struct ledger *l, struct model *m)
{
	unsigned want = 0;

	for (unsigned i = 0; i < m->n_objs; i++) {
		struct model_obj *o = &m->objs[i];
		/* A closed client file: freed, with what hangs under it. */
		if (o->live && o->kind == RM_CLASS_CLIENT && o->file_fd == -2) {
			model_free_at(m, (int)i);
			want++;
		}
	}
	if (ledger_reap_dead_clients(l, NULL) != want)
		abort();
}

static void op_close(struct model *m, uint32_t c)
{
	int i = model_find(m, c, c);

	if (i >= 0 && m->objs[i].file_fd >= 0) {
		close(m->objs[i].file_fd);
		m->objs[i].file_fd = -2; /* closed, not reaped yet */
	}
}

/* A pin is taken only on memory the ledger charges through an allocation
 * of its own (never a hardware object's count): the model must know that
 * allocation, which then lives on while the pin does. */
static void op_pin(struct ledger *l, struct model *m, uint32_t c, uint32_t h)
{
	/* The model's own room for pins bounds how many are taken. */
	if (m->n_pins == MAX_PINS)
		return;
	uint32_t pin = ledger_pin(l, c, h);
	int i = model_find(m, c, h);

	if (pin == LEDGER_NO_PIN)
		return;
	if (i < 0 || m->objs[i].alloc < 0)
		abort(); /* a pin on what the model does not hold */
	struct model_alloc *a = &m->allocs[m->objs[i].alloc];
	if (a->kind == RM_CLASS_CHANNEL || a->kind == RM_CLASS_CHANNEL_GROUP)
		abort();
	a->refs++;
	a->pins++;
	m->pin[m->n_pins] = pin;
	m->pin_alloc[m->n_pins++] = m->objs[i].alloc;
}

static void op_unpin(struct ledger *l, struct model *m, unsigned which)
{
	if (!m->n_pins)
		return;
	which %= m->n_pins;
	ledger_unpin(l, m->pin[which], NULL);
	m->allocs[m->pin_alloc[which]].refs--;
	m->allocs[m->pin_alloc[which]].pins--;
	m->n_pins--;
	m->pin[which] = m->pin[m->n_pins];
	m->pin_alloc[which] = m->pin_alloc[m->n_pins];
}

/* Every listed handle unregistered: the pins go. */
static void op_settle(struct ledger *l, struct model *m)
{
	while (l->n_unreg)
		ledger_unreg_done(l, 0, NULL);
	for (unsigned i = 0; i < m->n_unreg; i++)
		for (int k = 0; k < 2; k++) {
			int a = m->unreg_alloc[i][k];
			if (a < 0)
				continue;
			m->allocs[a].refs--;
			m->allocs[a].pins--;
			m->n_unreg_pins--;
		}
	m->n_unreg = 0;
}

static void run_op(struct ledger *l, struct model *m, const uint8_t *b)
{
	uint32_t c = clients[b[1] % N_CLIENTS];
	uint32_t h = handles[b[2] % N_HANDLES], p = handles[b[3] % N_HANDLES];
	int kind = b[4] % N_KINDS;
	int gpu = (int)((b[4] / N_KINDS) % N_GPU_ARGS) - 1;
	uint64_t bytes = (uint64_t)b[5] * MIB;

	/* The client handles are parents too. */
	if (b[3] & 0x80)
		p = c;
	switch (b[0] % N_OPS) {
	case OP_CLIENT:
		op_client(l, m, c);
		break;
	case OP_ADD:
		if (ledger_add(l, c, p, h, (enum rm_class_kind)kind, 0, gpu, bytes) < 0)
			abort();
		model_add(m, c, p, h, kind, gpu, bytes);
		break;
	case OP_DUP:
		op_dup(l, m, c, p, h, clients[b[4] % N_CLIENTS], handles[b[5] % N_HANDLES]);
		break;
	case OP_FREE:
		ledger_free(l, c, h, NULL);
		if (model_find(m, c, h) >= 0)
			model_free_at(m, model_find(m, c, h));
		break;
	case OP_CLOSE:
		op_close(m, c);
		break;
	case OP_REAP:
		op_reap(l, m);
		break;
	case OP_PIN:
		op_pin(l, m, c, h);
		break;
	case OP_UNPIN:
		op_unpin(l, m, b[5]);
		break;
	case OP_WATCH:
		ledger_watch_channel_frees(l);
		m->watch = true;
		break;
	case OP_SETTLE:
		op_settle(l, m);
		break;
	}
}

/* ---- the journal, and the ledger rebuilt from it --------------------------- */

struct changes {
	struct ledger_change ch[MAX_CHANGES];
	unsigned             n;
};

static void collect(void *ctx, const struct ledger_change *ch)
{
	struct changes *c = ctx;

	if (c->n == MAX_CHANGES)
		abort(); /* more changes than operations: a change journalled twice */
	c->ch[c->n++] = *ch;
}

/* The bytes on each GPU the model holds once every client is freed (its
 * files left alone: they are the live model's). */
static void model_after_clients(const struct model *m, uint64_t held[GS_MAX_GPUS])
{
	static struct model after;

	after = *m;
	for (unsigned i = 0; i < after.n_objs; i++)
		after.objs[i].file_fd = -1;
	for (unsigned i = 0; i < N_CLIENTS; i++) {
		int at = model_find(&after, clients[i], clients[i]);
		if (at >= 0)
			model_free_at(&after, at);
	}
	memset(held, 0, sizeof(uint64_t) * GS_MAX_GPUS);
	for (unsigned i = 0; i < after.n_allocs; i++)
		if (after.allocs[i].refs && after.allocs[i].bytes)
			held[after.allocs[i].gpu] += after.allocs[i].bytes;
}

/* A client's own object charging memory: an add of kind CLIENT with
 * bytes on a client's handle, which the supervisor never makes (it
 * charges memory classes only, exec_alloc.c) and a snapshot writes as
 * the client it is, without the bytes. */
static bool model_client_charges(const struct model *m)
{
	for (unsigned i = 0; i < m->n_objs; i++) {
		const struct model_obj *o = &m->objs[i];
		if (o->live && o->kind == RM_CLASS_CLIENT && o->client == o->handle && !o->has_parent &&
		    o->alloc >= 0)
			return true;
	}
	return false;
}

/* A ledger rebuilt from c agrees with the live one and the model; then
 * freeing its clients leaves what the model keeps. */
static void check_rebuilt(const struct ledger *live, const struct model *m, const struct changes *c,
                          bool exact_counts)
{
	struct ledger l;
	uint64_t held[GS_MAX_GPUS];

	if (ledger_init(&l) < 0)
		abort();
	for (unsigned i = 0; i < c->n; i++)
		if (ledger_replay(&l, &c->ch[i]) < 0)
			abort(); /* a journal of this ledger's own changes */
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		if (ledger_used(&l, (int)g) != ledger_used(live, (int)g))
			abort(); /* a charge lost, or moved, across the restart */
	if (ledger_live_objects(&l) != ledger_live_objects(live) || l.n_resumed_pins != m->n_pins + m->n_unreg_pins)
		abort();
	if (exact_counts && (l.channels != live->channels || l.channel_groups != live->channel_groups))
		abort();
	for (unsigned i = 0; i < N_CLIENTS; i++)
		ledger_free(&l, clients[i], clients[i], NULL);
	model_after_clients(m, held);
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		if (ledger_used(&l, (int)g) != held[g])
			abort(); /* a resumed pin dropped, or a phantom */
	ledger_fini(&l);
}

/* The agent restarts: from the journal, and from a snapshot of now. */
static void check_restart(const struct ledger *live, const struct model *m, const struct changes *journal)
{
	static struct changes snap;

	check_rebuilt(live, m, journal, true);
	snap.n = 0;
	if (ledger_snapshot(live, collect, &snap) < 0)
		abort();
	if (!model_client_charges(m))
		check_rebuilt(live, m, &snap, false);
}

/* ---- agreement ------------------------------------------------------------ */

/* The video sessions' count (ledger_count_engine_sessions, with I = 3 on
 * GPU 0, 2 on GPU 1, 0 read as 1 elsewhere) against a plain one over the
 * ledger's objects: per group (a client on a GPU, or a GPU's every
 * client), ceil(objects / I). */
static uint32_t fuzz_instances(void *ctx, int gpu)
{
	(void)ctx;
	return gpu == 0 ? 3u : gpu == 1 ? 2u : 0u;
}

static bool any_class(uint32_t cls, const void *arg)
{
	(void)cls;
	(void)arg;
	return true;
}

static bool counted_engine(const struct ledger_obj *o)
{
	return o->used && o->kind == RM_CLASS_ENGINE;
}

/* Same group: the same client on the same GPU, or, grouped by GPU, any
 * client on the same GPU. */
static bool same_group(const struct ledger_obj *a, const struct ledger_obj *b, bool by_gpu)
{
	return a->gpu == b->gpu && (by_gpu || a->client == b->client);
}

static void check_engine_sessions_by(const struct ledger *l, bool by_gpu)
{
	const struct ledger_engine_query q = { .match = any_class, .per_session = fuzz_instances,
	                                       .by_gpu = by_gpu, .client = clients[1], .gpu = 0 };
	const struct ledger_obj callers = { .client = q.client, .gpu = q.gpu };
	struct ledger_engine_count got = ledger_count_engine_sessions(l, &q);
	uint32_t sessions = 0, objects = 0, held = 0;

	for (uint32_t i = 0; i < l->n_objs; i++) {
		const struct ledger_obj *o = &l->objs[i];
		uint32_t n = 0, first = i, per;
		if (!counted_engine(o))
			continue;
		objects++;
		held += same_group(o, &callers, by_gpu);
		for (uint32_t j = 0; j < l->n_objs; j++) {
			const struct ledger_obj *p = &l->objs[j];
			if (counted_engine(p) && same_group(p, o, by_gpu)) {
				n++;
				first = j < first ? j : first;
			}
		}
		if (first != i)
			continue; /* the group is counted at its first object */
		per = fuzz_instances(NULL, o->gpu);
		per = per ? per : 1;
		sessions += (n + per - 1) / per;
	}
	if (got.sessions != sessions || got.objects != objects || got.held != held)
		abort();
}

static void check_engine_sessions(const struct ledger *l)
{
	check_engine_sessions_by(l, false);
	check_engine_sessions_by(l, true);
}

static void check_agree(const struct ledger *l, const struct model *m)
{
	uint64_t used[GS_MAX_GPUS] = { 0 };
	uint32_t live = 0, channels = 0, groups = 0;

	/* Hardware counts while any handle to it lives (a dup keeps it). */
	for (unsigned i = 0; i < m->n_allocs; i++) {
		const struct model_alloc *a = &m->allocs[i];
		if (!a->refs)
			continue;
		if (a->bytes)
			used[a->gpu] += a->bytes;
		channels += a->kind == RM_CLASS_CHANNEL;
		groups += a->kind == RM_CLASS_CHANNEL_GROUP || a->implicit_group;
	}
	for (unsigned i = 0; i < m->n_objs; i++)
		live += m->objs[i].live;
	if (l->n_unreg != m->n_unreg)
		abort();
	/* Held by pins alone exactly when every handle on it went. */
	for (unsigned i = 0; i < m->n_pins; i++) {
		const struct model_alloc *a = &m->allocs[m->pin_alloc[i]];
		if (ledger_pin_orphaned(l, m->pin[i]) != (a->refs == a->pins))
			abort();
	}
	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		if (ledger_used(l, (int)g) != used[g] || ledger_peak(l, (int)g) < used[g])
			abort(); /* a leaked, lost or negative charge */
	}
	check_engine_sessions(l);
	if (ledger_live_objects(l) != live || l->channels != channels || l->channel_groups != groups) {
		fprintf(stderr, "fuzz_ledger: ledger live %u channels %u groups %u, model %u %u %u\n",
		        ledger_live_objects(l), l->channels, l->channel_groups, live, channels, groups);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct model m;
	static struct changes journal;
	struct ledger l;
	size_t n_ops = size / OP_BYTES;

	if (n_ops > MAX_OPS)
		n_ops = MAX_OPS;
	memset(&m, 0, sizeof(m));
	journal.n = 0;
	if (ledger_init(&l) < 0)
		abort();
	l.journal = collect;
	l.journal_ctx = &journal;
	for (size_t i = 0; i < n_ops; i++) {
		run_op(&l, &m, data + i * OP_BYTES);
		check_agree(&l, &m);
	}
	check_restart(&l, &m, &journal);
	/* The end of a sandbox: every pin dropped, every client freed,
	 * nothing stays charged. */
	while (m.n_pins)
		op_unpin(&l, &m, 0);
	for (unsigned i = 0; i < N_CLIENTS; i++) {
		int at = model_find(&m, clients[i], clients[i]);
		ledger_free(&l, clients[i], clients[i], NULL);
		if (at >= 0)
			model_free_at(&m, at);
	}
	check_agree(&l, &m);
	for (unsigned i = 0; i < m.n_objs; i++)
		if (m.objs[i].live && m.objs[i].file_fd >= 0)
			close(m.objs[i].file_fd);
	ledger_fini(&l);
	return 0;
}
