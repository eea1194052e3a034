/* SPDX-License-Identifier: MIT */
/*
 * lone_channels - --active-channel-groups counts a channel that is in no
 * group and is scheduled on its own (NVA06F GPFIFO_SCHEDULE), as video
 * engines' channels are (nvJPEG on an H200).
 *
 * Run under a policy that allows the video group (where the channel-level
 * control is) and --active-channel-groups 2. Allocates 3 channels directly
 * under the device and schedules each: 2 go, the third is refused with
 * NV_ERR_INSUFFICIENT_RESOURCES. Scheduling one again is allowed, and after
 * one is disabled the third goes. The fake driver's own count of scheduled
 * runlist units (gpu0.channel_groups_scheduled), read from its stats right
 * after the third channel's attempt, must not pass 2 (fake_scheduled=).
 * Without gpusandbox every call succeeds (baseline-lone_channels).
 * Prints chan_ok= sched= (statuses) fake_scheduled= and SUMMARY.
 */
#include <stdint.h>
#include <stdio.h>

#include "adv.h"

#define HOPPER_CHANNEL_GPFIFO_A 0xc86fu
#define CHANNEL_PARAMS 368
#define N_CHANNELS 3
#define H_CHAN0 0x5c00f000u

int main(void)
{
	static uint8_t chan[CHANNEL_PARAMS];
	static const struct {
		unsigned chan;
		uint8_t  enable;
	} steps[] = { { 0, 1 }, { 1, 1 }, { 2, 1 }, { 1, 1 }, { 0, 0 }, { 2, 1 } };
	struct rmc_session s;
	uint64_t fake_scheduled = UINT64_MAX;
	int ok = 0;

	adv_session_or_die(&s, -1, "lone_channels");
	for (unsigned i = 0; i < N_CHANNELS; i++) {
		nv_handle_t h = H_CHAN0 + i;
		ok += rmc_alloc(s.fd, NULL, s.client, s.device, &h, HOPPER_CHANNEL_GPFIFO_A, chan, 0) ==
		      NV_OK;
	}
	printf("chan_ok=%d\n", ok);
	printf("sched=");
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct nva06c_gpfifo_schedule_params sp = { .enable = steps[i].enable };
		rmc_status_t st = rmc_control(s.fd, NULL, s.client, H_CHAN0 + steps[i].chan,
		                              NVA06F_CTRL_CMD_GPFIFO_SCHEDULE, &sp,
		                              rmc_ctrl_size(NVA06F_CTRL_CMD_GPFIFO_SCHEDULE, sizeof(sp)));
		printf("%s%s", i ? "," : "", rmc_status_str(st));
		/* The driver's own count once all three have been tried. */
		if (i == N_CHANNELS - 1 && rmc_fake_stat("gpu0.channel_groups_scheduled", &fake_scheduled) < 0)
			fake_scheduled = UINT64_MAX;
	}
	printf("\n");
	printf("fake_scheduled=%llu\n", (unsigned long long)fake_scheduled);
	printf("SUMMARY ok=0 nomem=0 other=0\n");
	return 0;
}
