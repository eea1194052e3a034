/* SPDX-License-Identifier: MIT */
/*
 * test_uvm_channels.c - what a UVM channel registration may keep after
 * the channel's handles go (issue #17 item 4): the ledger's listing of
 * channel handles that go once a registration was continued, the pins
 * that keep the channel and its group counted, and their release by
 * uvm_maps.c once every pair is unregistered (uvm_maps.h, ledger.h).
 *
 * The driver keeps a registered channel's ID and dups its group
 * (nvGpuOpsRetainChannel, nvGpuOpsGetChannelTsgInfo, nv_gpu_ops.c,
 * 580.95.05). The "UVM file" here is a pipe: it refuses the unregister
 * the supervisor makes (ENOTTY), which must keep the counts (fail
 * closed); the unregister that works is tests/adv/uvm_channel's, on the
 * fake driver. Each check reads the ledger's own counts.
 */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ledger.h"
#include "uvm_maps.h"

#define CLIENT  0xc1d00001u
#define DEVICE  0x5c000001u
#define GROUP   0x5c000002u
#define CHANNEL 0x5c000003u
#define DUP     0x5c000004u
#define LONE    0x5c000005u
#define GPU 0

static uint32_t channels(const struct ledger *l)
{
	return l->count[GS_QK_CHANNELS];
}

static uint32_t groups(const struct ledger *l)
{
	return l->count[GS_QK_CHANNEL_GROUPS];
}

/* A client, a device, a channel group and a channel in it; the journal
 * (may be NULL) told of each. */
static void ledger_with_channel_journal(struct ledger *l, ledger_journal_fn journal, void *ctx)
{
	CHECK(ledger_init(l) == 0);
	l->journal = journal;
	l->journal_ctx = ctx;
	CHECK(ledger_note_client(l, CLIENT, -1) == 1);
	CHECK(ledger_add(l, CLIENT, CLIENT, DEVICE, RM_CLASS_DEVICE, NV01_DEVICE_0, GPU, 0) == 0);
	CHECK(ledger_add(l, CLIENT, DEVICE, GROUP, RM_CLASS_CHANNEL_GROUP, KEPLER_CHANNEL_GROUP_A, LEDGER_NO_GPU,
	                 0) == 0);
	CHECK(ledger_add(l, CLIENT, GROUP, CHANNEL, RM_CLASS_CHANNEL, HOPPER_CHANNEL_GPFIFO_A, LEDGER_NO_GPU, 0) == 0);
	CHECK(channels(l) == 1 && groups(l) == 1);
}

static void ledger_with_channel(struct ledger *l)
{
	ledger_with_channel_journal(l, NULL, NULL);
}

/* Before any registration nothing is listed: a freed group goes at once
 * (the common case pays nothing). */
static void test_unwatched(void)
{
	struct ledger l;

	ledger_with_channel(&l);
	ledger_free(&l, CLIENT, GROUP, NULL);
	CHECK(channels(&l) == 0 && groups(&l) == 0 && l.n_unreg == 0);
	ledger_fini(&l);
}

/* Once watched, the group's free lists the channel's handle and keeps
 * the channel and the group counted until it is unregistered. */
static void test_group_freed(void)
{
	struct ledger l;

	ledger_with_channel(&l);
	ledger_watch_channel_frees(&l);
	ledger_free(&l, CLIENT, GROUP, NULL);
	CHECK(l.n_unreg == 1 && l.unreg[0].client == CLIENT && l.unreg[0].handle == CHANNEL);
	CHECK(l.unreg[0].pins[0] != LEDGER_NO_PIN && l.unreg[0].pins[1] != LEDGER_NO_PIN);
	CHECK(channels(&l) == 1 && groups(&l) == 1 && ledger_live_objects(&l) == 2);
	ledger_unreg_done(&l, 0, NULL);
	CHECK(l.n_unreg == 0 && channels(&l) == 0 && groups(&l) == 0);
	ledger_fini(&l);
}

/* A channel outside any group: its record carries the group RM made for
 * it (one pin holds both counts). */
static void test_lone(void)
{
	struct ledger l;

	ledger_with_channel(&l);
	ledger_watch_channel_frees(&l);
	CHECK(ledger_add(&l, CLIENT, DEVICE, LONE, RM_CLASS_CHANNEL, HOPPER_CHANNEL_GPFIFO_A, LEDGER_NO_GPU, 0) == 0);
	CHECK(channels(&l) == 2 && groups(&l) == 2);
	ledger_free(&l, CLIENT, LONE, NULL);
	CHECK(l.n_unreg == 1 && l.unreg[0].handle == LONE && l.unreg[0].pins[1] == LEDGER_NO_PIN);
	CHECK(channels(&l) == 2 && groups(&l) == 2);
	ledger_unreg_done(&l, 0, NULL);
	CHECK(channels(&l) == 1 && groups(&l) == 1);
	ledger_fini(&l);
}

/* A dup of the channel: each handle is listed as it goes (UVM knows a
 * registration by the pair it was made with); the count passes to the
 * dup, then is held by the pins until both pairs are unregistered. */
static void test_dup(void)
{
	struct ledger l;

	ledger_with_channel(&l);
	ledger_watch_channel_frees(&l);
	CHECK(ledger_dup(&l, CLIENT, DEVICE, DUP, CLIENT, CHANNEL) == 0);
	ledger_free(&l, CLIENT, CHANNEL, NULL);
	CHECK(l.n_unreg == 1 && l.unreg[0].handle == CHANNEL && channels(&l) == 1);
	ledger_unreg_done(&l, 0, NULL);
	CHECK(channels(&l) == 1); /* the dup still holds it */
	ledger_free(&l, CLIENT, DUP, NULL);
	CHECK(l.n_unreg == 1 && l.unreg[0].handle == DUP && channels(&l) == 1);
	ledger_unreg_done(&l, 0, NULL);
	CHECK(channels(&l) == 0 && groups(&l) == 1);
	ledger_fini(&l);
}

static void journal_into(void *ctx, const struct ledger_change *ch)
{
	struct ledger *copy = ctx;
	CHECK(ledger_replay(copy, ch) == 0);
}

/* The journal rebuilds the same counts: the listing's pins come back as
 * resumed pins (held until the ledger goes), the watch with them, and a
 * replayed free lists nothing of its own. */
static void test_replay(void)
{
	struct ledger l, copy;

	CHECK(ledger_init(&copy) == 0);
	ledger_with_channel_journal(&l, journal_into, &copy);
	ledger_watch_channel_frees(&l);
	CHECK(ledger_add(&l, CLIENT, DEVICE, LONE, RM_CLASS_CHANNEL, HOPPER_CHANNEL_GPFIFO_A, LEDGER_NO_GPU, 0) == 0);
	ledger_free(&l, CLIENT, GROUP, NULL);
	ledger_free(&l, CLIENT, LONE, NULL);
	CHECK(l.n_unreg == 2 && channels(&l) == 2 && groups(&l) == 2);
	CHECK(ledger_watches_channel_frees(&copy) && copy.n_unreg == 0);
	CHECK(channels(&copy) == 2 && groups(&copy) == 2 && copy.n_resumed_pins == 3);
	/* One pair unregistered before the restart nets out. */
	ledger_unreg_done(&l, 1, NULL);
	CHECK(channels(&copy) == channels(&l) && groups(&copy) == groups(&l));
	ledger_fini(&l);
	ledger_fini(&copy);
}

/* uvm_maps settles the listing: with no registrant file, at once; with
 * one whose unregister fails (a pipe), never, counts kept; once that
 * file is let go at the sandbox's end, the listing stays (nothing proved
 * it unregistered). After an agent restart (spaces_unknown) never. */
static void test_settle(void)
{
	struct ledger l;
	struct gs_uvm_maps m;
	uint64_t released[GS_MAX_GPUS] = { 0 };
	int p[2];

	CHECK(pipe(p) == 0);
	ledger_with_channel(&l);
	gs_uvm_maps_init(&m);
	ledger_watch_channel_frees(&l);
	ledger_free(&l, CLIENT, GROUP, NULL);
	CHECK(l.n_unreg == 1 && groups(&l) == 1);
	CHECK(gs_uvm_maps_take_back_orphans(&m, &l, released) == 1);
	CHECK(l.n_unreg == 0 && channels(&l) == 0 && groups(&l) == 0);

	CHECK(ledger_add(&l, CLIENT, DEVICE, GROUP, RM_CLASS_CHANNEL_GROUP, KEPLER_CHANNEL_GROUP_A, LEDGER_NO_GPU,
	                 0) == 0);
	CHECK(ledger_add(&l, CLIENT, GROUP, CHANNEL, RM_CLASS_CHANNEL, HOPPER_CHANNEL_GPFIFO_A, LEDGER_NO_GPU, 0) == 0);
	int s = gs_uvm_space_of(&m, &l, p[1]);
	CHECK(s >= 0 && gs_uvm_space_note_registrant(&m, &l, (uint32_t)s) == 0);
	ledger_free(&l, CLIENT, GROUP, NULL);
	CHECK(gs_uvm_maps_take_back_orphans(&m, &l, released) == 0);
	CHECK(l.n_unreg == 1 && channels(&l) == 1 && groups(&l) == 1);
	/* A registrant with no records is not let go by a tidy. */
	gs_uvm_space_tidy(&m, (uint32_t)s);
	CHECK(m.spaces[s].fd >= 0);
	gs_uvm_maps_fini(&m, &l);
	CHECK(l.n_unreg == 1 && channels(&l) == 1 && groups(&l) == 1);
	ledger_fini(&l);

	ledger_with_channel(&l);
	gs_uvm_maps_init(&m);
	m.spaces_unknown = true;
	ledger_watch_channel_frees(&l);
	ledger_free(&l, CLIENT, GROUP, NULL);
	CHECK(gs_uvm_maps_take_back_orphans(&m, &l, released) == 0 && l.n_unreg == 1 && groups(&l) == 1);
	gs_uvm_maps_fini(&m, &l);
	ledger_fini(&l);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	test_unwatched();
	test_group_freed();
	test_lone();
	test_dup();
	test_replay();
	test_settle();
	return check_summary();
}
