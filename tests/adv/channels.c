/* SPDX-License-Identifier: MIT */
/*
 * channels - the channel and channel-group quotas.
 *
 * Run under --channels 8 --channel-groups 4 (the adversarial runner passes
 * both to every sandboxed test). Phases:
 *  1. channel groups (0xa06c) until refused: 4, then INSUFFICIENT_RESOURCES;
 *  2. channels (0xc86f) under group 0 until refused: 8, then refused;
 *  3. free group 0, the parent: its 8 channels go with it, so 8 more fit
 *     under group 1;
 *  4. race: at the limit, a second thread flips the top-level hClass
 *     between a harmless class (sysmem 0x3e) and a channel,
 *     and hObjectParent between the device and a group, while this thread
 *     allocates. The driver's own channel count must never pass 8.
 *  5. GPFIFO_SCHEDULE under --active-channel-groups 2: groups 1 and 2
 *     schedule, group 3 is refused, and after disabling group 1 it goes.
 * Prints groups_ok= ch_ok= ch_after_free= race_ok= race_refused=
 * sched= (four statuses) and SUMMARY.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "adv.h"

#define HOPPER_CHANNEL_GPFIFO_A 0xc86fu
#define TSG_PARAMS 20
#define CHANNEL_PARAMS 368
#define MAX_TRIES 64
#define RACE_TRIES 3000
#define H_GROUP0 0x5c00a000u
#define H_CHAN0 0x5c00b000u
#define H_RACE0 0x5c00c000u

static uint8_t chan_params[CHANNEL_PARAMS];
static uint8_t group_params[TSG_PARAMS];
static volatile struct nvos64 race_call;
static atomic_bool race_stop;
static nv_handle_t race_device, race_group;

static int fill(struct rmc_session *s, nv_handle_t parent, nv_handle_t base, uint32_t cls,
                void *params, struct adv_tally *t, rmc_status_t *last)
{
	int ok = 0;

	for (int i = 0; i < MAX_TRIES; i++) {
		nv_handle_t h = base + (nv_handle_t)i;
		*last = rmc_alloc(s->fd, NULL, s->client, parent, &h, cls, params, 0);
		adv_count(t, *last);
		if (*last != NV_OK)
			break;
		ok++;
	}
	return ok;
}

static void *flipper(void *arg)
{
	(void)arg;
	while (!atomic_load(&race_stop)) {
		race_call.h_class = HOPPER_CHANNEL_GPFIFO_A;
		race_call.h_object_parent = race_group;
		race_call.h_class = NV01_MEMORY_SYSTEM;
		race_call.h_object_parent = race_device;
	}
	return NULL;
}

int main(void)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };
	rmc_status_t last;
	int groups_ok, ch_ok, ch_after, race_ok = 0, race_refused = 0;
	pthread_t th;

	adv_session_or_die(&s, -1, "channels");
	groups_ok = fill(&s, s.device, H_GROUP0, KEPLER_CHANNEL_GROUP_A, group_params, &t, &last);
	printf("groups_stop=%s\n", rmc_status_str(last));
	ch_ok = fill(&s, H_GROUP0, H_CHAN0, HOPPER_CHANNEL_GPFIFO_A, chan_params, &t, &last);
	printf("channels_stop=%s\n", rmc_status_str(last));
	rmc_free(s.fd, NULL, s.client, s.device, H_GROUP0);
	ch_after = fill(&s, H_GROUP0 + 1, H_CHAN0 + MAX_TRIES, HOPPER_CHANNEL_GPFIFO_A, chan_params, &t,
	                &last);

	/* Phase 4: the same struct, rewritten under the trapped call. It
	 * starts as the harmless class: a client class (0) would be continued
	 * rather than performed, which is the open gap SECURITY.md describes,
	 * not what this test is about. */
	race_device = s.device;
	race_group = H_GROUP0 + 2;
	race_call.h_class = NV01_MEMORY_SYSTEM;
	race_call.h_object_parent = race_device;
	pthread_create(&th, NULL, flipper, NULL);
	adv_race_allocs(s.fd, &race_call, s.client, H_RACE0, (uintptr_t)chan_params, RACE_TRIES,
	                &race_ok, &race_refused);
	atomic_store(&race_stop, true);
	pthread_join(th, NULL);
	printf("groups_ok=%d ch_ok=%d ch_after_free=%d race_ok=%d race_refused=%d\n", groups_ok, ch_ok,
	       ch_after, race_ok, race_refused);

	/* Phase 5: scheduling. */
	static const struct { nv_handle_t group; uint8_t enable; } steps[] = {
		{ H_GROUP0 + 1, 1 }, { H_GROUP0 + 2, 1 }, { H_GROUP0 + 3, 1 },
		{ H_GROUP0 + 1, 0 }, { H_GROUP0 + 3, 1 },
	};
	printf("sched=");
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct nva06c_gpfifo_schedule_params sp = { .enable = steps[i].enable };
		rmc_status_t st = rmc_control(s.fd, NULL, s.client, steps[i].group,
		                              NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &sp,
		                              rmc_ctrl_size(NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, sizeof(sp)));
		printf("%s%s", i ? "," : "", rmc_status_str(st));
	}
	printf("\n");
	adv_print_summary(&t);
	return 0;
}
