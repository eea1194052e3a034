/* SPDX-License-Identifier: MIT */
/*
 * close_reopen - shedding charges by closing the device is legitimate.
 *
 * Round 1: open /dev/nvidiactl, allocate 256 MiB chunks up to the quota,
 * then close the fd without freeing anything (RM frees the file's clients
 * and their memory on the last close). Round 2: reopen and fill the quota
 * again. Round 2 must get as much as round 1 (the supervisor must release
 * what the driver released), while the driver's peak must still stay at or
 * below the quota (it must not release before the driver did).
 *
 * FUSE delivers the fake driver's release asynchronously, whereas the real
 * driver frees a file's clients before close(2) returns. To test the
 * supervisor and not FUSE's timing, we wait (bounded) for the fake to report
 * zero vidmem in use before reopening.
 *
 * Prints round1_ok= round2_ok= settled= and SUMMARY.
 */
#include <stdio.h>
#include <unistd.h>

#include "adv.h"

#define CR_SETTLE_MS   3000
#define CR_FALLBACK_US 200000

static int round_fill(const char *label, struct adv_tally *total)
{
	struct rmc_session s;
	struct adv_fill f = { 0 };

	adv_session_or_die(&s, -1, label);
	adv_fill(&s, NULL, adv_alloc_rm, adv_free_rm, ADV_CHUNK, label, &f);
	adv_add(total, &f.tally);
	/* No RM_FREE: closing the file is what releases the client. */
	close(s.fd);
	return f.held;
}

int main(void)
{
	struct adv_tally total = { 0 };
	int r1, r2, settled;

	r1 = round_fill("round1", &total);
	settled = adv_wait_fake_idle(CR_SETTLE_MS) == 0;
	if (!settled)
		usleep(CR_FALLBACK_US); /* no stats available: a fixed pause */
	r2 = round_fill("round2", &total);
	printf("round1_ok=%d round2_ok=%d settled=%d\n", r1, r2, settled);
	adv_print_summary(&total);
	return 0;
}
