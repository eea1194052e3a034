/* SPDX-License-Identifier: MIT */
/*
 * default_caps - channels and channel groups are capped when no option
 * names them (issue #17 item 13).
 *
 * RM allocates video memory inside the driver for every channel group and
 * channel (context buffers, instance blocks) that no memory object names,
 * so --mem cannot charge it; unbounded groups would hold unbounded
 * memory, and drain the hardware pool every tenant shares. Run under
 * gpusandbox with no channel option, on a fake whose pool (2048) is far
 * above the default caps: channel groups until refused, then channels in
 * the first group until refused. Judged by the fake's channel_groups_peak
 * and channels_peak against the defaults (128 and 640); the baseline,
 * without gpusandbox, gets MAX_TRIES of each.
 * Prints groups_ok= groups_stop= ch_ok= ch_stop= and SUMMARY.
 */
#include <stdio.h>

#include "adv.h"

#define HOPPER_CHANNEL_GPFIFO_A 0xc86fu
#define TSG_PARAMS 20
#define CHANNEL_PARAMS 368
/* Well past the defaults, well under the fake's pool. */
#define MAX_TRIES 1024
#define H_GROUP0 0x5c010000u
#define H_CHAN0  0x5c020000u

static uint8_t group_params[TSG_PARAMS];
static uint8_t chan_params[CHANNEL_PARAMS];

/* Allocates cls under parent until refused or MAX_TRIES; *last is the
 * status that stopped it. */
static int fill(struct rmc_session *s, nv_handle_t parent, nv_handle_t base, uint32_t cls,
                void *params, struct adv_tally *t, rmc_status_t *last)
{
	int ok = 0;

	*last = NV_OK;
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

int main(void)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };
	rmc_status_t groups_stop, ch_stop;

	adv_session_or_die(&s, -1, "default_caps");
	int groups_ok = fill(&s, s.device, H_GROUP0, KEPLER_CHANNEL_GROUP_A, group_params, &t,
	                     &groups_stop);
	printf("groups_ok=%d groups_stop=%s\n", groups_ok, rmc_status_str(groups_stop));
	int ch_ok = groups_ok ? fill(&s, H_GROUP0, H_CHAN0, HOPPER_CHANNEL_GPFIFO_A, chan_params, &t,
	                             &ch_stop)
	                      : 0;
	printf("ch_ok=%d ch_stop=%s\n", ch_ok, groups_ok ? rmc_status_str(ch_stop) : "none");
	adv_print_summary(&t);
	return 0;
}
