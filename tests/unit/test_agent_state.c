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
	     again.next_seq == st->next_seq;
	if (!ok)
		fprintf(stderr, "used %llu/%llu objects %u/%u channels %u/%u groups %u/%u sched %u/%u seq %llu/%llu\n",
		        (unsigned long long)l2.used[0], (unsigned long long)live->used[0],
		        ledger_live_objects(&l2), ledger_live_objects(live), l2.channels, live->channels,
		        l2.channel_groups, live->channel_groups, l2.scheduled_groups, live->scheduled_groups,
		        (unsigned long long)again.next_seq, (unsigned long long)st->next_seq);
	ledger_fini(&l2);
	gs_state_close(&again);
	return ok;
}

static void check_journal(void)
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
	for (unsigned i = 1; i <= OPS; i++) {
		one_op(&l);
		if (st.hdr->active_area != last_area) {
			flips++;
			last_area = st.hdr->active_area;
		}
		if (i % CHECK_EVERY == 0)
			CHECK(rebuilt_agrees(&st, &l));
	}
	CHECK(flips >= 2);            /* both snapshots were read back */
	CHECK(!st.hdr->unresumable);
	CHECK(l.used[0] > 0 && l.channels > 0);

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

int main(void)
{
	check_resumed_files();
	check_journal();
	check_overflow();
	check_slot();
	return check_summary();
}
