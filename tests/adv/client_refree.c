/* SPDX-License-Identifier: MIT */
/*
 * client_refree - a client freed while its file stays open, and made
 * again at the same handle on another file.
 *
 * The ledger ties a client's charges to the open file the client lives on
 * and releases them when that file is released (RM frees a file's
 * clients then: ledger.h). A client freed with RM_FREE leaves its file
 * open; the supervisor sees the free (RM_FREE is trapped) and drops the
 * client's entry at once. Issue #31's study proposed letting RM_FREE
 * through the filter, a missed free "only over-charging". This case shows
 * one where it under-charges: round 1 makes client H on file A and holds
 * 768 MiB, then frees H with RM_FREE, A kept open. Round 2 makes a client
 * with the same handle H on file B and allocates up to 768 MiB. Then A is
 * closed, and round 3 fills file C up. Seen, the free leaves B its 768 MiB
 * and C one chunk: the driver never holds more than the quota. Unseen
 * (the baseline, GPUSANDBOX_TEST_FREE_UNTRAPPED), H's entry stays on A, B's
 * memory is charged under it (ledger_bind_client: an entry whose file
 * lives keeps its charges), A's close releases it all, and C gets a full
 * quota beside B's memory, which the driver still holds.
 *
 * Prints free= round1_ok= round2_ok= round3_ok= settled= and SUMMARY.
 */
#include <stdio.h>
#include <unistd.h>

#include "adv.h"

#define REFREED_CLIENT 0xc1d0f4eeu
#define RF_SETTLE_MS   3000
#define HOLD_CHUNKS    3

int main(void)
{
	struct rmc_session a = { 0 }, b = { 0 }, c;
	struct adv_tally t = { 0 };
	rmc_status_t st, freed;
	int r1, r2, r3, settled;

	if ((st = rmc_session_open_client(&a, -1, REFREED_CLIENT)) != NV_OK) {
		printf("setup_a=%s\n", rmc_status_str(st));
		return ADV_EXIT_SETUP;
	}
	r1 = adv_hold_chunks(&a, HOLD_CHUNKS, &t);
	/* The client and everything under it, by the driver; A stays open. */
	freed = rmc_free(a.fd, NULL, REFREED_CLIENT, REFREED_CLIENT, REFREED_CLIENT);
	if ((st = rmc_session_open_client(&b, -1, REFREED_CLIENT)) != NV_OK) {
		printf("free=%s setup_b=%s\n", rmc_status_str(freed), rmc_status_str(st));
		return ADV_EXIT_SETUP;
	}
	r2 = adv_hold_chunks(&b, HOLD_CHUNKS, &t);
	close(a.fd);
	settled = adv_wait_fake_idle(RF_SETTLE_MS) == 0;
	adv_session_or_die(&c, -1, "client_refree");
	r3 = adv_hold_chunks(&c, ADV_MAX_CHUNKS, &t);
	printf("free=%s round1_ok=%d round2_ok=%d round3_ok=%d settled=%d\n", rmc_status_str(freed), r1, r2, r3,
	       settled);
	adv_print_summary(&t);
	return 0;
}
