/* SPDX-License-Identifier: MIT */
/*
 * group_dup - channel-group quotas count the driver's hardware, not
 * handles (issue #17, item 4). Run with --channel-groups 4 and
 * --active-channel-groups 2 (tests/adv/run.sh passes both).
 *
 * keep:  GROUP_TRIES times, allocate a channel group, RM_DUP_OBJECT it,
 *        free the group's handle. The dup keeps the group in the driver,
 *        so the fifth must be refused (INSUFFICIENT_RESOURCES). Then the
 *        dups are freed.
 * lone:  GROUP_TRIES channels straight under the device. RM makes a
 *        channel group for each (kernel_channel.c), so the fifth must be
 *        refused. Then they are freed.
 * sched: three groups g0..g2. GPFIFO_SCHEDULE g0; through a dup of g1;
 *        then g2 (must be refused: two are scheduled); then dup g0, free
 *        g0's handle (the driver keeps it scheduled through the dup) and
 *        try g2 again (must be refused). The driver's own count of
 *        scheduled runlist units (gpu0.channel_groups_scheduled) is read
 *        after each step; its maximum is fake_sched_max.
 *
 * The fake driver's channel_groups_peak must stay within 4 (the harness
 * checks it); without gpusandbox every step succeeds.
 * Prints keep= lone= sched= (statuses) fake_sched_max= and SUMMARY.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "adv.h"

#define HOPPER_CHANNEL_GPFIFO_A 0xc86fu
#define TSG_PARAMS     20
#define CHANNEL_PARAMS 368
#define GROUP_TRIES    6
#define H_GROUP0 0x5c00d000u
#define H_DUP0   0x5c00d100u
#define H_CHAN0  0x5c00d200u
#define H_SGRP0  0x5c00d300u
#define H_SDUP0  0x5c00d400u

static uint8_t group_params[TSG_PARAMS];
static uint8_t chan_params[CHANNEL_PARAMS];

static void append(char *list, size_t cap, int i, rmc_status_t st)
{
	size_t n = strlen(list);
	snprintf(list + n, cap - n, "%s%s", i ? "," : "", rmc_status_str(st));
}

static rmc_status_t alloc_group(struct rmc_session *s, nv_handle_t h)
{
	return rmc_alloc(s->fd, NULL, s->client, s->device, &h, KEPLER_CHANNEL_GROUP_A, group_params, 0);
}

static rmc_status_t dup_of(struct rmc_session *s, nv_handle_t src, nv_handle_t h)
{
	return rmc_dup(s->fd, NULL, s->client, s->device, &h, s->client, src);
}

static void keep_through_dups(struct rmc_session *s, struct adv_tally *t)
{
	char out[256] = "";
	bool dup_ok[GROUP_TRIES] = { false };

	for (int i = 0; i < GROUP_TRIES; i++) {
		rmc_status_t st = alloc_group(s, H_GROUP0 + i);
		adv_count(t, st);
		if (st == NV_OK) {
			dup_ok[i] = dup_of(s, H_GROUP0 + i, H_DUP0 + i) == NV_OK;
			(void)rmc_free(s->fd, NULL, s->client, s->device, H_GROUP0 + i);
		}
		append(out, sizeof(out), i, st);
	}
	for (int i = 0; i < GROUP_TRIES; i++)
		if (dup_ok[i])
			(void)rmc_free(s->fd, NULL, s->client, s->device, H_DUP0 + i);
	printf("keep=%s\n", out);
}

static void lone_channels(struct rmc_session *s, struct adv_tally *t)
{
	char out[256] = "";
	rmc_status_t st[GROUP_TRIES];

	for (int i = 0; i < GROUP_TRIES; i++) {
		nv_handle_t h = H_CHAN0 + i;
		st[i] = rmc_alloc(s->fd, NULL, s->client, s->device, &h, HOPPER_CHANNEL_GPFIFO_A,
		                  chan_params, 0);
		adv_count(t, st[i]);
		append(out, sizeof(out), i, st[i]);
	}
	for (int i = 0; i < GROUP_TRIES; i++)
		if (st[i] == NV_OK)
			(void)rmc_free(s->fd, NULL, s->client, s->device, H_CHAN0 + i);
	printf("lone=%s\n", out);
}

static rmc_status_t schedule(struct rmc_session *s, nv_handle_t h, uint64_t *max)
{
	struct nva06c_gpfifo_schedule_params sp = { .enable = 1 };
	rmc_status_t st = rmc_control(s->fd, NULL, s->client, h, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &sp,
	                              sizeof(sp));
	uint64_t n;

	if (rmc_fake_stat("gpu0.channel_groups_scheduled", &n) == 0 && n > *max)
		*max = n;
	return st;
}

static void schedule_through_dups(struct rmc_session *s, struct adv_tally *t)
{
	char out[256] = "";
	uint64_t max = 0;
	int i = 0;

	for (int g = 0; g < 3; g++)
		adv_count(t, alloc_group(s, H_SGRP0 + g));
	append(out, sizeof(out), i++, schedule(s, H_SGRP0, &max));
	(void)dup_of(s, H_SGRP0 + 1, H_SDUP0 + 1);
	append(out, sizeof(out), i++, schedule(s, H_SDUP0 + 1, &max));
	append(out, sizeof(out), i++, schedule(s, H_SGRP0 + 2, &max));
	(void)dup_of(s, H_SGRP0, H_SDUP0);
	(void)rmc_free(s->fd, NULL, s->client, s->device, H_SGRP0);
	append(out, sizeof(out), i++, schedule(s, H_SGRP0 + 2, &max));
	printf("sched=%s\nfake_sched_max=%llu\n", out, (unsigned long long)max);
}

int main(void)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };

	adv_session_or_die(&s, -1, "group_dup");
	keep_through_dups(&s, &t);
	lone_channels(&s, &t);
	schedule_through_dups(&s, &t);
	adv_print_summary(&t);
	return 0;
}
