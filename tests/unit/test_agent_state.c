/* SPDX-License-Identifier: MIT */
/*
 * test_agent_state.c - the agent's state memfd (supervisor/agent/
 * agent_state.c): a ledger driven through 150000 pseudo-random changes
 * (clients, devices, memory, channel groups and channels, dups, frees,
 * scheduling) with the journal attached is rebuilt from the memfd, as a
 * restarted agent rebuilds it, at several points, across two snapshots
 * (the active area filled twice), and must agree with the live ledger on
 * every charge and count. A record with a bad crc ends the journal; a
 * snapshot too large for an area marks the state unresumable; a damaged
 * header is refused; a slot's record goes RECEIVED -> PERFORMING ->
 * ANSWERING -> FREE with a good crc at each step, and one damaged in its
 * fields or its copy of the top-level struct is not valid. After a
 * restart the files' index is new: a file may hold a rebuilt client, which
 * forbids continuing another client on it; until a rebuilt client has its
 * release watch back every file may, then only its own file does.
 *
 * Pins (a UVM mapping's hold on memory, ledger.h) across a restart: a pin
 * held at the restart keeps its memory charged in the rebuilt ledger
 * until the ledger goes, whether its handle was freed before the restart
 * or after; one taken and dropped before it leaves nothing; a snapshot
 * keeps memory held by pins alone; a handle value reused while the old
 * memory is pinned names the right allocation; serials go on past a
 * restart; a state of the format before pins were journalled is refused.
 * A snapshot keeps an object whose parent is unknown a root, and a dup
 * that outlived its original on the original's GPU.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "agent/agent_state.h"
#include "check.h"

#define OPS 150000u
#define CHECK_EVERY 10000u
#define CLIENTS 4u
#define HANDLES 64u
#define CHUNK (1ull << 20)
#define CLASS_ANY 0x1234u
#define MAX_PINS 256u
#define AREA_RECS (GS_STATE_AREA_BYTES / sizeof(struct gs_state_rec))
#define STATE_FORMAT_BEFORE_PINS 1u

static uint32_t rng_state = 12345u;
static uint32_t rng(uint32_t n)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return (rng_state >> 8) % n;
}

static void make_ident(struct gs_state_ident *id)
{
	memset(id, 0, sizeof(*id));
	strcpy(id->id, "ctr-1");
	strcpy(id->sandbox_id, "0123456789abcdef");
	strcpy(id->policy_name, "small");
	id->init_pid = 4242;
	id->trap_version = 0xabcdefull;
}

/* The pins one_op holds (a UVM mapping's each), dropped in any order. */
static uint32_t pins[MAX_PINS];
static unsigned n_pins;

static void pin_op(struct ledger *l, uint32_t client, uint32_t h)
{
	uint32_t pin = n_pins < MAX_PINS ? ledger_pin(l, client, h) : LEDGER_NO_PIN;

	if (pin != LEDGER_NO_PIN)
		pins[n_pins++] = pin;
}

static void unpin_op(struct ledger *l)
{
	if (!n_pins)
		return;
	unsigned i = rng(n_pins);
	ledger_unpin(l, pins[i], NULL);
	pins[i] = pins[--n_pins];
}

/* One change: a client, device 1 of each client, objects under it. */
static void one_op(struct ledger *l)
{
	uint32_t client = 0xc1000000u + rng(CLIENTS);
	uint32_t h = 0x100u + rng(HANDLES);

	switch (rng(10)) {
	case 0: ledger_note_client(l, client, -1); break;
	case 1: ledger_add(l, client, client, 1, RM_CLASS_DEVICE, CLASS_ANY, 0, 0); break;
	case 2: case 3: ledger_add(l, client, 1, h, RM_CLASS_VIDMEM, CLASS_ANY, LEDGER_NO_GPU,
	                           CHUNK * (1 + rng(4))); break;
	case 4: ledger_add(l, client, 1, h, RM_CLASS_CHANNEL_GROUP, CLASS_ANY, LEDGER_NO_GPU, 0); break;
	case 5: ledger_add(l, client, h, h + HANDLES, RM_CLASS_CHANNEL, CLASS_ANY, LEDGER_NO_GPU, 0); break;
	case 6: ledger_dup(l, client, 1, h + 2 * HANDLES, 0xc1000000u + rng(CLIENTS), 0x100u + rng(HANDLES)); break;
	case 7: ledger_set_scheduled(l, client, h, rng(2)); break;
	case 8: ledger_free(l, client, h, NULL); break;
	default: if (rng(8) == 0) ledger_free(l, client, client, NULL); break;
	}
}

/* One change of memory and its pins: memory made (a handle reused too),
 * dup'ed, freed, its client freed; a pin taken (a mapping), a second on
 * the same memory (a mapping split in two), one dropped. No hardware: a
 * snapshot loses the count a dup took over (docs/agent.md), which
 * check_journal's mix meets seldom and this one would mask nothing with. */
static void one_pin_op(struct ledger *l)
{
	uint32_t client = 0xc1000000u + rng(CLIENTS);
	uint32_t h = 0x100u + rng(HANDLES);

	switch (rng(10)) {
	case 0: ledger_note_client(l, client, -1); break;
	case 1:
		if (!ledger_has(l, client, 1))
			ledger_add(l, client, client, 1, RM_CLASS_DEVICE, CLASS_ANY, 0, 0);
		break;
	case 2: case 3: ledger_add(l, client, 1, h, RM_CLASS_VIDMEM, CLASS_ANY, LEDGER_NO_GPU,
	                           CHUNK * (1 + rng(4))); break;
	case 4: ledger_dup(l, client, 1, h, 0xc1000000u + rng(CLIENTS), 0x100u + rng(HANDLES)); break;
	case 5: ledger_free(l, client, h, NULL); break;
	case 6: case 7: pin_op(l, client, h); break;
	case 8:
		if (n_pins && n_pins < MAX_PINS && rng(3) == 0) {
			uint32_t again = ledger_pin_again(l, pins[rng(n_pins)]);
			pins[n_pins++] = again;
		} else {
			unpin_op(l);
		}
		break;
	default: if (rng(16) == 0) ledger_free(l, client, client, NULL); break;
	}
}

/* The memfd as a restarted agent has it: another mapping of the same file. */
static int rebuilt_agrees(const struct gs_agent_state *st, const struct ledger *live)
{
	struct gs_agent_state again = { .memfd = -1 };
	struct gs_error err = { 0 };
	struct ledger l2;
	int ok;

	if (gs_state_open(&again, dup(st->memfd), &err) < 0)
		return 0;
	ledger_init(&l2);
	ok = gs_state_replay(&again, &l2, &err) == 0 && l2.used[0] == live->used[0] &&
	     ledger_live_objects(&l2) == ledger_live_objects(live) && l2.channels == live->channels &&
	     l2.channel_groups == live->channel_groups && l2.scheduled_groups == live->scheduled_groups &&
	     again.next_seq == st->next_seq && l2.n_resumed_pins == n_pins;
	if (!ok)
		fprintf(stderr, "used %llu/%llu objects %u/%u channels %u/%u groups %u/%u sched %u/%u seq %llu/%llu "
		        "pins %u/%u\n",
		        (unsigned long long)l2.used[0], (unsigned long long)live->used[0],
		        ledger_live_objects(&l2), ledger_live_objects(live), l2.channels, live->channels,
		        l2.channel_groups, live->channel_groups, l2.scheduled_groups, live->scheduled_groups,
		        (unsigned long long)again.next_seq, (unsigned long long)st->next_seq, l2.n_resumed_pins,
		        n_pins);
	ledger_fini(&l2);
	gs_state_close(&again);
	return ok;
}

static void check_journal(void (*op)(struct ledger *l))
{
	struct gs_state_ident id;
	struct gs_agent_state st;
	struct gs_error err = { 0 };
	struct ledger l;
	unsigned flips = 0, last_area = 0;

	make_ident(&id);
	CHECK(gs_state_create(&st, &id, &err) == 0);
	ledger_init(&l);
	gs_state_attach(&st, &l);
	n_pins = 0;
	for (unsigned i = 1; i <= OPS; i++) {
		op(&l);
		if (st.hdr->active_area != last_area) {
			flips++;
			last_area = st.hdr->active_area;
		}
		if (i % CHECK_EVERY == 0)
			CHECK(rebuilt_agrees(&st, &l));
	}
	CHECK(flips >= 2);            /* both snapshots were read back */
	CHECK(!st.hdr->unresumable);
	CHECK(l.used[0] > 0 && (op == one_pin_op ? n_pins > 0 : l.channels > 0));

	/* A torn last record ends the journal one record early. */
	struct gs_state_rec *last = &st.areas[st.hdr->active_area][st.n_in_area - 1];
	last->ch.bytes ^= 1;
	struct gs_agent_state again = { .memfd = -1 };
	struct ledger l2;
	ledger_init(&l2);
	CHECK(gs_state_open(&again, dup(st.memfd), &err) == 0);
	CHECK(gs_state_replay(&again, &l2, &err) == 0);
	CHECK(again.n_in_area == st.n_in_area - 1);
	ledger_fini(&l2);
	gs_state_close(&again);

	/* A damaged header is refused. */
	st.hdr->ident.init_pid++;
	CHECK(gs_state_open(&again, dup(st.memfd), &err) < 0);
	ledger_fini(&l);
	gs_state_close(&st);
}

/* More live objects than one area holds: the snapshot cannot be written,
 * and the state says a restart cannot resume it. */
static void check_overflow(void)
{
	struct gs_state_ident id;
	struct gs_agent_state st;
	struct gs_error err = { 0 };
	struct ledger l;
	const uint32_t n = GS_STATE_AREA_BYTES / sizeof(struct gs_state_rec) + 16;

	make_ident(&id);
	CHECK(gs_state_create(&st, &id, &err) == 0);
	ledger_init(&l);
	gs_state_attach(&st, &l);
	ledger_note_client(&l, 0xc1, -1);
	ledger_add(&l, 0xc1, 0xc1, 1, RM_CLASS_DEVICE, CLASS_ANY, 0, 0);
	for (uint32_t i = 0; i < n; i++)
		ledger_add(&l, 0xc1, 1, 0x1000 + i, RM_CLASS_VIDMEM, CLASS_ANY, LEDGER_NO_GPU, CHUNK);
	CHECK(st.hdr->unresumable == 1);
	ledger_fini(&l);
	gs_state_close(&st);
}

static void check_slot(void)
{
	struct gs_state_ident id;
	struct gs_agent_state st;
	struct gs_error err = { 0 };
	struct seccomp_notif req = { .id = 77, .pid = 4243 };
	uint8_t top[48] = { 1, 2, 3 };
	const struct gs_alloc_note note = { 0xc1, 1, 0x55, false, top, sizeof(top) };

	make_ident(&id);
	CHECK(gs_state_create(&st, &id, &err) == 0);
	struct gs_state_worker w = { &st, gs_state_slot_claim(&st, 3) };
	CHECK(w.slot == 0 && st.slots[0].listener_index == 3);
	gs_state_received(&st, w.slot, &req);
	CHECK(st.slots[0].phase == GS_SLOT_RECEIVED && st.slots[0].id == 77 && gs_state_slot_valid(&st.slots[0]));
	gs_state_before_alloc(&w, &note);
	CHECK(st.slots[0].phase == GS_SLOT_PERFORMING && st.slots[0].made && st.slots[0].object == 0x55 &&
	      st.slots[0].top_len == sizeof(top) && st.slots[0].top[2] == 3 && gs_state_slot_valid(&st.slots[0]));
	gs_state_before_answer(&w);
	CHECK(st.slots[0].phase == GS_SLOT_ANSWERING && gs_state_slot_valid(&st.slots[0]));
	gs_state_answered(&st, w.slot);
	CHECK(st.slots[0].phase == GS_SLOT_FREE);
	gs_state_before_answer(&w);
	st.slots[0].id++;
	CHECK(!gs_state_slot_valid(&st.slots[0]));
	st.slots[0].id--;
	CHECK(gs_state_slot_valid(&st.slots[0]));
	st.slots[0].top[1] ^= 1;
	CHECK(!gs_state_slot_valid(&st.slots[0]));
	gs_state_close(&st);
}

/* The one-client-per-file rule across a restart (ledger.h). */
static void check_resumed_files(void)
{
	const struct ledger_change note = { .op = LEDGER_OP_NOTE_CLIENT, .client = 0xc1 };
	struct epoll_event ev = { .events = 0 };
	struct ledger l;
	int mine[2], other[2], epfd;

	CHECK(pipe(mine) == 0 && pipe(other) == 0);
	ledger_init(&l);
	CHECK(ledger_replay(&l, &note) == 0);
	CHECK(l.n_resumed == 1);
	CHECK(ledger_file_may_hold_resumed_client(&l, other[0]));   /* its file is unknown */
	/* The watch an earlier process made on the client's file. */
	epfd = epoll_create1(EPOLL_CLOEXEC);
	CHECK(epfd >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, mine[0], &ev) == 0);
	CHECK(ledger_adopt_watch(&l, 0xc1, epfd, mine[0]) == 0);
	CHECK(l.n_resumed == 0 && l.n_adopted == 1);
	CHECK(ledger_file_may_hold_resumed_client(&l, mine[0]));
	CHECK(!ledger_file_may_hold_resumed_client(&l, other[0]));
	/* A second watch for the same client is refused (and closed). */
	CHECK(ledger_adopt_watch(&l, 0xc1, epoll_create1(EPOLL_CLOEXEC), 0) < 0);
	/* The file closes: the client is reaped, no file holds it. */
	close(mine[0]);
	CHECK(ledger_reap_dead_clients(&l, NULL) == 1);
	CHECK(l.n_adopted == 0 && !ledger_file_may_hold_resumed_client(&l, other[0]));
	ledger_fini(&l);
	close(mine[1]);
	close(other[0]);
	close(other[1]);
}


/* ---- pins across a restart --------------------------------------------- */

#define P_CLIENT 0xc1d00001u
#define P_DEVICE 0x5c000001u
#define P_GROUP 0x5c000002u
#define P_MEM_A 0x5c000003u
#define P_MEM_B 0x5c000004u
#define P_BYTES_A (64 * CHUNK)
#define P_BYTES_B (32 * CHUNK)
#define P_BYTES_X (16 * CHUNK)

/* A ledger journalled in a new state, with a client, a device on GPU 0
 * and a channel group (whose scheduling fills the journal: pin_compact). */
static void pin_start(struct gs_agent_state *st, struct ledger *l)
{
	struct gs_state_ident id;
	struct gs_error err = { 0 };

	make_ident(&id);
	CHECK(gs_state_create(st, &id, &err) == 0);
	ledger_init(l);
	gs_state_attach(st, l);
	CHECK(ledger_note_client(l, P_CLIENT, -1) == 1);
	CHECK(ledger_add(l, P_CLIENT, P_CLIENT, P_DEVICE, RM_CLASS_DEVICE, CLASS_ANY, 0, 0) == 0);
	CHECK(ledger_add(l, P_CLIENT, P_DEVICE, P_GROUP, RM_CLASS_CHANNEL_GROUP, CLASS_ANY, LEDGER_NO_GPU, 0) == 0);
}

static void pin_add(struct ledger *l, uint32_t h, uint64_t bytes)
{
	CHECK(ledger_add(l, P_CLIENT, P_DEVICE, h, RM_CLASS_VIDMEM, CLASS_ANY, LEDGER_NO_GPU, bytes) == 0);
}

/* The ledger a restarted agent rebuilds from st's memfd; *again is its
 * state, the journal of what it does next (closed by the caller). */
static bool pin_restart(const struct gs_agent_state *st, struct gs_agent_state *again, struct ledger *l2)
{
	struct gs_error err = { 0 };

	again->memfd = -1;
	ledger_init(l2);
	if (gs_state_open(again, dup(st->memfd), &err) < 0)
		return false;
	if (gs_state_replay(again, l2, &err) < 0)
		return false;
	gs_state_attach(again, l2);
	return true;
}

static void pin_done(struct gs_agent_state *st, struct ledger *l)
{
	ledger_fini(l);
	gs_state_close(st);
}

/* The active area fills (scheduling toggled) and a snapshot replaces it. */
static void pin_compact(struct gs_agent_state *st, struct ledger *l)
{
	uint32_t area = st->hdr->active_area;

	for (unsigned i = 0; i <= AREA_RECS && st->hdr->active_area == area; i++)
		ledger_set_scheduled(l, P_CLIENT, P_GROUP, i % 2 == 0);
	CHECK(st->hdr->active_area != area && !st->hdr->unresumable);
}

static bool area_has_op(const struct gs_agent_state *st, uint32_t op)
{
	const struct gs_state_rec *r = st->areas[st->hdr->active_area];

	for (uint32_t i = 0; i < st->n_in_area; i++)
		if (r[i].ch.op == op)
			return true;
	return false;
}

/* A pin held at the restart keeps its memory charged in the rebuilt
 * ledger until the ledger goes: B's handle freed before the restart, A's
 * after it (with a pin of the resumed agent's own), and then the client
 * itself. */
static void check_pin_survives(void)
{
	struct gs_agent_state st, again;
	struct ledger l, l2;

	pin_start(&st, &l);
	pin_add(&l, P_MEM_A, P_BYTES_A);
	pin_add(&l, P_MEM_B, P_BYTES_B);
	CHECK(ledger_pin(&l, P_CLIENT, P_MEM_A) != LEDGER_NO_PIN);
	CHECK(ledger_pin(&l, P_CLIENT, P_MEM_B) != LEDGER_NO_PIN);
	ledger_free(&l, P_CLIENT, P_MEM_B, NULL);
	CHECK(l.used[0] == P_BYTES_A + P_BYTES_B);
	CHECK(pin_restart(&st, &again, &l2));
	CHECK(l2.used[0] == P_BYTES_A + P_BYTES_B);
	CHECK(l2.n_resumed_pins == 2);
	/* A mapping of A made after the resume: its pin goes with its record
	 * (A's handle freed, the take-back unmaps it), the resumed one stays;
	 * a second drop of that pin is not one of this process's pins. */
	uint32_t after = ledger_pin(&l2, P_CLIENT, P_MEM_A);
	CHECK(after != LEDGER_NO_PIN);
	ledger_free(&l2, P_CLIENT, P_MEM_A, NULL);
	CHECK(ledger_pin_orphaned(&l2, after));
	ledger_unpin(&l2, after, NULL);
	CHECK(l2.used[0] == P_BYTES_A + P_BYTES_B);
	ledger_unpin(&l2, after, NULL);
	CHECK(l2.used[0] == P_BYTES_A + P_BYTES_B && l2.n_resumed_pins == 2);
	ledger_free(&l2, P_CLIENT, P_CLIENT, NULL);
	CHECK(l2.used[0] == P_BYTES_A + P_BYTES_B);
	pin_done(&again, &l2);
	pin_done(&st, &l);
}

/* Pins taken and dropped before the restart leave nothing: unpinned then
 * freed (CUDA's cuMemFree), freed then taken back (the supervisor's
 * unmap of an orphan), a mapping split in two and both halves gone. */
static void check_pin_dropped(void)
{
	struct gs_agent_state st, again;
	struct ledger l, l2;
	uint32_t a, b, half;

	pin_start(&st, &l);
	pin_add(&l, P_MEM_A, P_BYTES_A);
	pin_add(&l, P_MEM_B, P_BYTES_B);
	a = ledger_pin(&l, P_CLIENT, P_MEM_A);
	half = ledger_pin_again(&l, a);
	ledger_unpin(&l, a, NULL);
	ledger_unpin(&l, half, NULL);
	ledger_free(&l, P_CLIENT, P_MEM_A, NULL);
	b = ledger_pin(&l, P_CLIENT, P_MEM_B);
	ledger_free(&l, P_CLIENT, P_MEM_B, NULL);
	CHECK(l.used[0] == P_BYTES_B);
	ledger_unpin(&l, b, NULL);
	CHECK(l.used[0] == 0);
	CHECK(pin_restart(&st, &again, &l2));
	CHECK(l2.used[0] == 0);
	CHECK(l2.n_resumed_pins == 0);
	pin_done(&again, &l2);
	pin_done(&st, &l);
}

/* A snapshot keeps A, held by two pins alone (its handle freed), and B's
 * pin; the journal after it drops one of A's. */
static void check_pin_snapshot(void)
{
	struct gs_agent_state st, again;
	struct ledger l, l2;
	uint32_t a;

	pin_start(&st, &l);
	pin_add(&l, P_MEM_A, P_BYTES_A);
	pin_add(&l, P_MEM_B, P_BYTES_B);
	a = ledger_pin(&l, P_CLIENT, P_MEM_A);
	CHECK(ledger_pin_again(&l, a) == a);
	CHECK(ledger_pin(&l, P_CLIENT, P_MEM_B) != LEDGER_NO_PIN);
	ledger_free(&l, P_CLIENT, P_MEM_A, NULL);
	pin_compact(&st, &l);
	CHECK(area_has_op(&st, LEDGER_OP_HELD));
	ledger_unpin(&l, a, NULL);
	CHECK(l.used[0] == P_BYTES_A + P_BYTES_B);
	CHECK(pin_restart(&st, &again, &l2));
	CHECK(l2.used[0] == P_BYTES_A + P_BYTES_B);
	CHECK(l2.n_resumed_pins == 2);
	ledger_free(&l2, P_CLIENT, P_CLIENT, NULL);
	CHECK(l2.used[0] == P_BYTES_A + P_BYTES_B);
	pin_done(&again, &l2);
	pin_done(&st, &l);
}

/* RM lets the client reuse A's handle value for B while A is still
 * mapped; A's mapping then goes. The rebuilt ledger holds B, not A, and
 * B's pin keeps it past the free of the handle. Through the journal, and
 * through a snapshot made while both lived (where the serials are not in
 * the order of the records). */
static void check_pin_reused_handle(bool snapshot)
{
	struct gs_agent_state st, again;
	struct ledger l, l2;
	uint32_t a;

	pin_start(&st, &l);
	pin_add(&l, P_MEM_B, P_BYTES_X);   /* made first, snapshot last: serials out of order */
	pin_add(&l, P_MEM_A, P_BYTES_A);
	a = ledger_pin(&l, P_CLIENT, P_MEM_A);
	ledger_free(&l, P_CLIENT, P_MEM_A, NULL);
	pin_add(&l, P_MEM_A, P_BYTES_B);
	CHECK(ledger_pin(&l, P_CLIENT, P_MEM_A) != LEDGER_NO_PIN);
	if (snapshot)
		pin_compact(&st, &l);
	ledger_unpin(&l, a, NULL);
	ledger_free(&l, P_CLIENT, P_MEM_B, NULL);
	CHECK(l.used[0] == P_BYTES_B);
	CHECK(pin_restart(&st, &again, &l2));
	CHECK(l2.used[0] == P_BYTES_B);
	ledger_free(&l2, P_CLIENT, P_MEM_A, NULL);
	CHECK(l2.used[0] == P_BYTES_B);
	pin_done(&again, &l2);
	pin_done(&st, &l);
}

/* The resumed agent's own pins journal serials after the replayed ones:
 * a second restart tells its memory (X, held by its pin alone) from A. */
static void check_pin_second_restart(void)
{
	struct gs_agent_state st, again, third;
	struct ledger l, l2, l3;

	pin_start(&st, &l);
	pin_add(&l, P_MEM_A, P_BYTES_A);
	CHECK(ledger_pin(&l, P_CLIENT, P_MEM_A) != LEDGER_NO_PIN);
	CHECK(pin_restart(&st, &again, &l2));
	pin_add(&l2, P_MEM_B, P_BYTES_X);
	CHECK(ledger_pin(&l2, P_CLIENT, P_MEM_B) != LEDGER_NO_PIN);
	ledger_free(&l2, P_CLIENT, P_MEM_B, NULL);
	CHECK(l2.used[0] == P_BYTES_A + P_BYTES_X);
	CHECK(pin_restart(&again, &third, &l3));
	CHECK(l3.used[0] == P_BYTES_A + P_BYTES_X);
	CHECK(l3.n_resumed_pins == 2);
	pin_done(&third, &l3);
	pin_done(&again, &l2);
	pin_done(&st, &l);
}

/* A pin record that names no allocation the ledger holds is not of this
 * ledger's journal: the replay fails (and the agent kills the container). */
static void check_pin_bad_records(void)
{
	const struct ledger_change unpin = { .op = LEDGER_OP_UNPIN, .serial = 77 };
	const struct ledger_change pin = { .op = LEDGER_OP_PIN, .serial = 77, .pins = 1 };
	const struct ledger_change held0 = { .op = LEDGER_OP_HELD, .serial = 78, .gpu = 0, .bytes = CHUNK };
	const struct ledger_change held = { .op = LEDGER_OP_HELD, .serial = 78, .gpu = 0, .bytes = CHUNK, .pins = 1 };
	struct ledger l;

	ledger_init(&l);
	CHECK(ledger_replay(&l, &unpin) < 0);
	CHECK(ledger_replay(&l, &pin) < 0);
	CHECK(ledger_replay(&l, &held0) < 0);
	CHECK(ledger_replay(&l, &held) == 0 && l.used[0] == CHUNK && l.n_resumed_pins == 1);
	CHECK(ledger_replay(&l, &held) < 0);   /* the same serial twice */
	ledger_fini(&l);
}

/* A state written before pins were journalled (format 1: another record
 * layout) is refused, whatever its crc: the container is then killed. */
static void check_old_format(void)
{
	struct gs_state_ident id;
	struct gs_agent_state st, again = { .memfd = -1 };
	struct gs_error err = { 0 };

	make_ident(&id);
	CHECK(gs_state_create(&st, &id, &err) == 0);
	CHECK(gs_state_open(&again, dup(st.memfd), &err) == 0);
	gs_state_close(&again);
	st.hdr->ident.format = STATE_FORMAT_BEFORE_PINS;
	st.hdr->ident.crc = gs_state_crc(&st.hdr->ident, offsetof(struct gs_state_ident, crc));
	CHECK(gs_state_open(&again, dup(st.memfd), &err) < 0);
	gs_state_close(&st);
}


/* ---- a snapshot rebuilds the same charges --------------------------------- */

#define SNAP_MAX 64u

struct snap_copy {
	struct ledger_change ch[SNAP_MAX];
	unsigned n;
};

static void snap_keep(void *ctx, const struct ledger_change *ch)
{
	struct snap_copy *c = ctx;

	if (c->n < SNAP_MAX)
		c->ch[c->n++] = *ch;
}

/* l2: l rebuilt from a snapshot of it. */
static bool from_snapshot(const struct ledger *l, struct ledger *l2)
{
	static struct snap_copy c;

	c.n = 0;
	ledger_init(l2);
	if (ledger_snapshot(l, snap_keep, &c) < 0 || c.n == SNAP_MAX)
		return false;
	for (unsigned i = 0; i < c.n; i++)
		if (ledger_replay(l2, &c.ch[i]) < 0)
			return false;
	return true;
}

/* A root (its parent unknown to the ledger) stays a root, though a handle
 * 0 of its client was made after it: freeing that handle leaves it. */
static void check_snapshot_root(void)
{
	struct ledger l, l2;

	ledger_init(&l);
	CHECK(ledger_note_client(&l, P_CLIENT, -1) == 1);
	CHECK(ledger_add(&l, P_CLIENT, P_DEVICE, P_MEM_A, RM_CLASS_VIDMEM, CLASS_ANY, 1, CHUNK) == 0);
	CHECK(ledger_add(&l, P_CLIENT, P_CLIENT, 0, RM_CLASS_DEVICE, CLASS_ANY, 2, 0) == 0);
	CHECK(from_snapshot(&l, &l2));
	CHECK(l2.used[1] == CHUNK && l2.used[2] == 0);
	ledger_free(&l, P_CLIENT, 0, NULL);
	ledger_free(&l2, P_CLIENT, 0, NULL);
	CHECK(l.used[1] == CHUNK && l2.used[1] == CHUNK);
	ledger_fini(&l2);
	ledger_fini(&l);
}

/* A dup under GPU 2's device of GPU 1's memory, its original freed, holds
 * GPU 1's memory: rebuilt there, not on its parent's GPU. */
static void check_snapshot_dup_gpu(void)
{
	struct ledger l, l2;

	ledger_init(&l);
	CHECK(ledger_note_client(&l, P_CLIENT, -1) == 1);
	CHECK(ledger_add(&l, P_CLIENT, P_CLIENT, 1, RM_CLASS_DEVICE, CLASS_ANY, 1, 0) == 0);
	CHECK(ledger_add(&l, P_CLIENT, P_CLIENT, 2, RM_CLASS_DEVICE, CLASS_ANY, 2, 0) == 0);
	CHECK(ledger_add(&l, P_CLIENT, 1, P_MEM_A, RM_CLASS_VIDMEM, CLASS_ANY, LEDGER_NO_GPU, CHUNK) == 0);
	CHECK(ledger_dup(&l, P_CLIENT, 2, P_MEM_B, P_CLIENT, P_MEM_A) == 0);
	ledger_free(&l, P_CLIENT, P_MEM_A, NULL);
	CHECK(l.used[1] == CHUNK && l.used[2] == 0);
	CHECK(from_snapshot(&l, &l2));
	CHECK(l2.used[1] == CHUNK && l2.used[2] == 0);
	ledger_fini(&l2);
	ledger_fini(&l);
}

/* The seal is CRC-32 (IEEE) at every length, as the byte-wise loop an
 * older agent sealed its memfd with (gs_state_crc now takes eight bytes a
 * step): the standard check value, and a bit-wise reference at every
 * length and alignment up to a slot's size. */
#define CRC_CHECK_VALUE 0xcbf43926u
#define CRC_REF_MAX 160

static uint32_t crc_bitwise(const uint8_t *b, size_t len)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < len; i++) {
		c ^= b[i];
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
	}
	return c ^ 0xffffffffu;
}

static void check_crc(void)
{
	uint8_t buf[CRC_REF_MAX + 8];
	bool all = true;

	CHECK(gs_state_crc("123456789", 9) == CRC_CHECK_VALUE);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131u + 7u);
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len <= CRC_REF_MAX; len++)
			all &= gs_state_crc(buf + off, len) == crc_bitwise(buf + off, len);
	CHECK(all);
}

int main(void)
{
	check_crc();
	check_resumed_files();
	check_journal(one_op);
	check_journal(one_pin_op);
	check_overflow();
	check_slot();
	check_pin_survives();
	check_pin_dropped();
	check_pin_snapshot();
	check_pin_reused_handle(false);
	check_pin_reused_handle(true);
	check_pin_second_restart();
	check_pin_bad_records();
	check_old_format();
	check_snapshot_root();
	check_snapshot_dup_gpu();
	return check_summary();
}
