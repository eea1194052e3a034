/* SPDX-License-Identifier: MIT */
/*
 * alloc_loop PAIRS [MIB] - allocates and frees MIB (default 2) of video
 * memory PAIRS times, as a caching allocator's churn does, and prints
 * pairs=N failed=N ns_per_pair=N. tests/audit/run.sh counts the records
 * each audit level writes for it (issue #15: 7714 records for 3000 pairs
 * before the levels); tests/audit/bench.sh prints the per-pair cost with
 * and without --audit-log. Time is printed, never asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "adv.h"

#define LOOP_BASE 0xa1100000u
#define NS_PER_S 1000000000ull

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct rmc_session s;
	unsigned long pairs, mib = 2, failed = 0;
	uint64_t t0, t1;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: alloc_loop PAIRS [MIB]\n");
		return 2;
	}
	pairs = strtoul(argv[1], NULL, 10);
	if (argc == 3)
		mib = strtoul(argv[2], NULL, 10);
	adv_session_or_die(&s, -1, "alloc_loop");
	t0 = now_ns();
	for (unsigned long i = 0; i < pairs; i++) {
		nv_handle_t h = LOOP_BASE + (nv_handle_t)(i & 0xffff);
		if (adv_alloc_rm(&s, NULL, h, mib * RMC_MIB) != NV_OK) {
			failed++;
			continue;
		}
		if (adv_free_rm(&s, NULL, h) != NV_OK)
			failed++;
	}
	t1 = now_ns();
	printf("pairs=%lu failed=%lu ns_per_pair=%llu\n", pairs, failed,
	       pairs ? (unsigned long long)((t1 - t0) / pairs) : 0ull);
	rmc_session_close(&s);
	return failed ? 1 : 0;
}
