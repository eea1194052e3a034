/* SPDX-License-Identifier: MIT */
/*
 * sm_escape - workloads that try to keep channels out of --sm's reach, for
 * tests/sm/escape.sh (issue #32, section 2). On the fake driver.
 *
 *   sm_escape MODE WARM_MS MEASURE_MS
 *
 * MODE:
 *   internal-group    makes a lone channel (right under its device): RM
 *                     makes it a channel group of its own, under a handle
 *                     RM generates and never tells (tests/fakedrv/
 *                     fake_chgrp.c). Guesses that handle in RM's range and
 *                     makes a second channel under it, a channel the
 *                     supervisor never sees a group of.
 *   internal-resched  the same lone channel; finds RM's group by scheduling
 *                     the guessed handles, then schedules it again every
 *                     RESCHEDULE_US (10 ms), which turns the channel back on in an
 *                     off phase (the group's GPFIFO_SCHEDULE).
 *   group-churn       a fresh channel group of CHANNELS_PER_GROUP channels,
 *                     scheduled, every CHURN_MS (less than the settling
 *                     time --sm waits before it switches a new group), the
 *                     previous one freed after the new one runs.
 *   lone-churn        the same with a lone channel (RM makes its group),
 *                     whose settling time runs from the channel's birth.
 * After WARM_MS, the share of GPU time is measured over MEASURE_MS from the
 * FAKE DRIVER's busy account (gpu0.busy_ms against now_ms; one client, so
 * the GPU's busy time is ours), while the attack goes on. With
 * GPUSANDBOX_TEST_SM_CLOCK=FILE every duration (CHURN_MS, WARM_MS,
 * MEASURE_MS) is of the test's clock in FILE (include/test_clock.h), which
 * the fake keeps too; the polls (RESCHEDULE_US, CHURN_POLL_US) stay real
 * sleeps: the clock moves only while the supervisor's duty thread sleeps.
 * Prints: share=S found=0xH|none hidden=STATUS churns=N; exit 0, or 2 when
 * set-up fails.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rmclient.h"
#include "test_clock.h"

#define HOPPER_CHANNEL_GPFIFO_A 0xc86fu
#define TSG_PARAMS 20
#define CHANNEL_PARAMS 368
#define CHANNELS_PER_GROUP 2
#define H_LONE 0x5d00c000u
#define H_HIDDEN 0x5d00c001u
#define H_GROUP_BASE 0x5d00d000u
#define H_LONE_BASE 0x5d00f000u
#define H_CHAN_BASE 0x5d00e000u
/* RM's generated handles (RS_UNIQUE_HANDLE_BASE, resserv/rs_client.h,
 * 580.95.05), and how many of them we try. */
#define RM_HANDLE_BASE 0xcaf00000u
#define RM_HANDLE_TRIES 64u
/* Each re-schedule in an off phase costs the fake's drain (--busy-lag-ms,
 * 1 ms) and our answer's latency before the disable lands again: at 5 ms
 * that alone was 0.27 of the GPU with the duty at its floor, for any
 * group, known or not (a limit of re-asserting, not of this attack), and
 * the margin to the cap too thin for a loaded machine. 10 ms keeps the
 * baseline's win (the channel back on within 10 ms of each off edge). */
#define RESCHEDULE_US 10000
#define CHURN_POLL_US 1000
#define CHURN_MS 400
#define EXIT_SETUP 2
#define US_PER_MS 1000

static uint8_t chan_params[CHANNEL_PARAMS];
static uint8_t group_params[TSG_PARAMS];

/* The test's clock (GPUSANDBOX_TEST_SM_CLOCK, include/test_clock.h), or
 * NULL: CLOCK_MONOTONIC. The churn's period, the warm-up and the
 * measurement are timed on it, the clock the supervisor's settling time
 * and grace and the fake's busy account are read on. */
static gs_test_clock *test_clock;

static uint64_t now_ms(void)
{
	struct timespec ts;
	if (test_clock)
		return gs_test_clock_now(test_clock) / 1000000;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t stat_or_die(const char *key)
{
	uint64_t v;
	if (rmc_fake_stat(key, &v) < 0) {
		fprintf(stderr, "sm_escape: no fake stat %s\n", key);
		exit(EXIT_SETUP);
	}
	return v;
}

static rmc_status_t schedule(const struct rmc_session *s, nv_handle_t group)
{
	struct nva06c_gpfifo_schedule_params sp = { .enable = 1 };
	return rmc_control(s->fd, NULL, s->client, group, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &sp,
	                   rmc_ctrl_size(NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, sizeof(sp)));
}

static rmc_status_t make_channel(const struct rmc_session *s, nv_handle_t parent, nv_handle_t h)
{
	return rmc_alloc(s->fd, NULL, s->client, parent, &h, HOPPER_CHANNEL_GPFIFO_A, chan_params, 0);
}

static bool ours(const struct rmc_session *s, nv_handle_t h)
{
	return h == s->client || h == s->device || h == s->subdevice;
}

/* RM's group of our lone channel: the first generated handle under which
 * a channel can be made. *st: the last try's status. */
static nv_handle_t hide_channel(const struct rmc_session *s, rmc_status_t *st)
{
	for (uint32_t k = 0; k < RM_HANDLE_TRIES; k++) {
		nv_handle_t h = RM_HANDLE_BASE + k;
		if (ours(s, h))
			continue;
		*st = make_channel(s, h, H_HIDDEN);
		if (*st == NV_OK)
			return h;
	}
	return 0;
}

/* The same group found by scheduling it (no second channel). */
static nv_handle_t find_by_schedule(const struct rmc_session *s)
{
	for (uint32_t k = 0; k < RM_HANDLE_TRIES; k++) {
		nv_handle_t h = RM_HANDLE_BASE + k;
		if (!ours(s, h) && schedule(s, h) == NV_OK)
			return h;
	}
	return 0;
}

/* A group of CHANNELS_PER_GROUP channels, scheduled. */
static bool make_group(const struct rmc_session *s, nv_handle_t g, nv_handle_t ch)
{
	if (rmc_alloc(s->fd, NULL, s->client, s->device, &g, KEPLER_CHANNEL_GROUP_A, group_params, 0) != NV_OK)
		return false;
	for (nv_handle_t i = 0; i < CHANNELS_PER_GROUP; i++)
		if (make_channel(s, g, ch + i) != NV_OK)
			return false;
	return schedule(s, g) == NV_OK;
}

struct attack {
	const char   *mode;
	nv_handle_t   found;   /* RM's group, when found */
	unsigned      churns;
	unsigned      gen;     /* the live group's generation (group-churn) */
	uint64_t      last_churn;
};

/* One step of the attack, for as long as the run goes on. */
static bool attack_step(const struct rmc_session *s, struct attack *a)
{
	if (strcmp(a->mode, "internal-resched") == 0) {
		if (a->found)
			(void)schedule(s, a->found);
		usleep(RESCHEDULE_US);
		return true;
	}
	bool groups = strcmp(a->mode, "group-churn") == 0, lone = strcmp(a->mode, "lone-churn") == 0;
	if ((groups || lone) && now_ms() - a->last_churn >= CHURN_MS) {
		unsigned next = a->gen + 1;
		nv_handle_t base = groups ? H_GROUP_BASE : H_LONE_BASE;
		bool made = groups ? make_group(s, base + (next % 2), H_CHAN_BASE + (next % 2) * CHANNELS_PER_GROUP)
		                   : make_channel(s, s->device, base + (next % 2)) == NV_OK;
		if (!made)
			return false;
		(void)rmc_free(s->fd, NULL, s->client, s->device, base + (a->gen % 2));
		a->gen = next;
		a->churns++;
		a->last_churn = now_ms();
	}
	usleep(CHURN_POLL_US);
	return true;
}

static bool run_for(const struct rmc_session *s, struct attack *a, long ms)
{
	uint64_t stop = now_ms() + (uint64_t)ms;
	while (now_ms() < stop)
		if (!attack_step(s, a))
			return false;
	return true;
}

int main(int argc, char **argv)
{
	struct rmc_session s;
	struct attack a = { 0 };
	rmc_status_t hidden = NV_ERR_GENERIC;

	if (argc != 4) {
		fprintf(stderr, "usage: sm_escape internal-group|internal-resched|group-churn|lone-churn WARM_MS MEASURE_MS\n");
		return EXIT_SETUP;
	}
	a.mode = argv[1];
	long warm_ms = atol(argv[2]), measure_ms = atol(argv[3]);
	const char *clock_file = getenv("GPUSANDBOX_TEST_SM_CLOCK");
	if (clock_file && !(test_clock = gs_test_clock_map(clock_file))) {
		perror("sm_escape: GPUSANDBOX_TEST_SM_CLOCK");
		return EXIT_SETUP;
	}
	if (rmc_session_open(&s, -1) != NV_OK) {
		fprintf(stderr, "sm_escape: session set-up failed\n");
		return EXIT_SETUP;
	}
	if (strcmp(a.mode, "group-churn") == 0 || strcmp(a.mode, "lone-churn") == 0) {
		bool made = strcmp(a.mode, "group-churn") == 0 ? make_group(&s, H_GROUP_BASE, H_CHAN_BASE)
		                                              : make_channel(&s, s.device, H_LONE_BASE) == NV_OK;
		if (!made)
			return EXIT_SETUP;
		a.last_churn = now_ms();
	} else {
		if (make_channel(&s, s.device, H_LONE) != NV_OK) {
			fprintf(stderr, "sm_escape: lone channel set-up failed\n");
			return EXIT_SETUP;
		}
		a.found = strcmp(a.mode, "internal-group") == 0 ? hide_channel(&s, &hidden)
		                                                 : find_by_schedule(&s);
	}
	if (!run_for(&s, &a, warm_ms))
		return EXIT_SETUP;
	uint64_t b0 = stat_or_die("gpu0.busy_ms"), t0 = stat_or_die("now_ms");
	if (!run_for(&s, &a, measure_ms))
		return EXIT_SETUP;
	uint64_t b1 = stat_or_die("gpu0.busy_ms"), t1 = stat_or_die("now_ms");
	double share = t1 > t0 ? (double)(b1 - b0) / (double)(t1 - t0) : -1;
	printf("share=%.3f found=%#x hidden=%s churns=%u\n", share, a.found, rmc_status_str(hidden),
	       a.churns);
	fflush(stdout);
	return 0;
}
