/* SPDX-License-Identifier: MIT */
/*
 * client_reuse - re-using a dead client's handle on a new file.
 *
 * RM frees a file's clients when the file closes, and a client handle can
 * then be requested again on another file. Round 1 creates client H on file
 * A and holds 768 MiB, then closes A. Round 2 creates a client with the same
 * handle H on file B and allocates 768 MiB (legit: A's memory is gone).
 * Round 3 opens file C and fills up: it must get exactly one more chunk, and
 * the driver's peak must stay within the quota.
 *
 * What this does not reach: the supervisor reaps closed files when it
 * continues a client allocation, so a stale entry for H can only survive in
 * the window between that and the kernel running the continued call. That
 * race cannot be hit on demand; ledger_bind_client's handling of it is
 * covered by tests/unit/test_core.c (test_ledger_bind_client).
 *
 * Prints round1_ok= round2_ok= round3_ok= settled= and SUMMARY.
 */
#include <stdio.h>
#include <unistd.h>

#include "adv.h"

#define REUSED_CLIENT 0xc1d0beefu
#define CR_SETTLE_MS  3000
#define HOLD_CHUNKS   3

int main(void)
{
	struct rmc_session a = { 0 }, b = { 0 }, c;
	struct adv_tally t = { 0 };
	rmc_status_t st;
	int r1, r2, r3, settled;

	if ((st = rmc_session_open_client(&a, -1, REUSED_CLIENT)) != NV_OK) {
		printf("setup_a=%s\n", rmc_status_str(st));
		return ADV_EXIT_SETUP;
	}
	r1 = adv_hold_chunks(&a, HOLD_CHUNKS, &t);
	close(a.fd); /* no RM_FREE: the driver frees H with the file */
	settled = adv_wait_fake_idle(CR_SETTLE_MS) == 0;
	if ((st = rmc_session_open_client(&b, -1, REUSED_CLIENT)) != NV_OK) {
		printf("setup_b=%s\n", rmc_status_str(st));
		return ADV_EXIT_SETUP;
	}
	r2 = adv_hold_chunks(&b, HOLD_CHUNKS, &t);
	adv_session_or_die(&c, -1, "client_reuse");
	r3 = adv_hold_chunks(&c, ADV_MAX_CHUNKS, &t);
	printf("round1_ok=%d round2_ok=%d round3_ok=%d settled=%d\n", r1, r2, r3, settled);
	adv_print_summary(&t);
	return 0;
}
