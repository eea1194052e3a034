/* SPDX-License-Identifier: MIT */
/*
 * GPU tier (issue #31, a measurement): does the driver take longer for an
 * RM_ALLOC of video memory made by another process through a dup of the
 * client's control file (what the supervisor does) than for the client's
 * own process? Sets a client up as raw_rm_alloc.c does, then times 2 MiB
 * RM_ALLOC/RM_FREE pairs made by this process and by a forked child that
 * took the control file with pidfd_getfd, in alternating rounds. Prints
 * figures; asserts nothing.
 *
 * Build: cc -static -O2 -Iinclude -o xproc_alloc tests/gpu/xproc_alloc.c
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include "raw_rm.h"

#define CHUNK (2ull << 20)
#define PAIRS 3000
#define ROUNDS 3
#define NS_PER_US 1000.0

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / NS_PER_US;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* PAIRS allocations and frees on ctl; prints mean and median of each. */
static void loop(const char *who, int round, uint32_t client)
{
	static double ta[PAIRS], tf[PAIRS];
	double sa = 0, sf = 0;

	for (int i = 0; i < PAIRS; i++) {
		double t0 = now_us();
		nv_status_t st = alloc_vidmem_of(client, H_MEM0, CHUNK);
		double t1 = now_us();
		nv_status_t sf_st = rm_free(client, H_DEVICE, H_MEM0);
		double t2 = now_us();
		if (st != NV_OK || sf_st != NV_OK) {
			printf("who=%s round=%d failed alloc=0x%x free=0x%x at %d\n", who, round, st, sf_st, i);
			return;
		}
		ta[i] = t1 - t0;
		tf[i] = t2 - t1;
		sa += ta[i];
		sf += tf[i];
	}
	qsort(ta, PAIRS, sizeof(ta[0]), cmp);
	qsort(tf, PAIRS, sizeof(tf[0]), cmp);
	printf("who=%s round=%d alloc_mean_us=%.2f alloc_median_us=%.2f free_mean_us=%.2f free_median_us=%.2f\n",
	       who, round, sa / PAIRS, ta[PAIRS / 2], sf / PAIRS, tf[PAIRS / 2]);
	fflush(stdout);
}

int main(void)
{
	uint32_t client;

	if (attach_first_gpu(&client))
		return 2;
	for (int r = 1; r <= ROUNDS; r++) {
		loop("own", r, client);
		pid_t parent = getpid(), kid = fork();
		if (kid == 0) {
			int pidfd = (int)syscall(SYS_pidfd_open, parent, 0);
			int theirs = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, ctl, 0);
			if (theirs < 0) { perror("pidfd_getfd"); _exit(2); }
			ctl = theirs;
			loop("other", r, client);
			_exit(0);
		}
		waitpid(kid, NULL, 0);
	}
	rm_free(client, client, client);
	return 0;
}
