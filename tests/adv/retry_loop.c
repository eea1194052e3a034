/* SPDX-License-Identifier: MIT */
/*
 * retry_loop - a program that retries an allocation that cannot succeed,
 * as CUDA's caching allocators do after an out-of-memory error.
 *
 * Asks RETRY_ATTEMPTS times for RETRY_CHUNK of video memory, more than the
 * quota run under (tests/audit/run.sh uses --mem 1g), then closes the file:
 * what it held (one chunk that fits) is released when the file closes, and
 * the audit log must credit that release to this process. Prints
 * refused=N (attempts the driver's way refused: NV_ERR_NO_MEMORY), held=N
 * and SUMMARY.
 */
#include <stdio.h>
#include <unistd.h>

#include "adv.h"

#define RETRY_ATTEMPTS 200
#define RETRY_CHUNK    (2048ull * RMC_MIB)   /* twice the 1 GiB quota */
#define RETRY_BASE     0xcafe0000u

int main(void)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };
	rmc_status_t st;
	int held;

	adv_session_or_die(&s, -1, "retry_loop");
	/* One chunk that fits, held until the file closes. */
	st = adv_alloc_rm(&s, NULL, RETRY_BASE, ADV_CHUNK);
	adv_count(&t, st);
	held = st == NV_OK;
	for (unsigned i = 0; i < RETRY_ATTEMPTS; i++)
		adv_count(&t, adv_alloc_rm(&s, NULL, RETRY_BASE + 1 + i, RETRY_CHUNK));
	/* No RM_FREE: closing the file releases the held chunk. */
	close(s.fd);
	printf("refused=%d held=%d\n", t.nomem, held);
	adv_print_summary(&t);
	return 0;
}
