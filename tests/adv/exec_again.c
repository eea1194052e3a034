/* SPDX-License-Identifier: MIT */
/*
 * exec_again - a workload that execs itself between its RM calls and keeps
 * its tid (issue #31: the worker's kept answer memory, mm_keep.h).
 *
 * Each stage opens a session (a device allocation, whose answer the
 * supervisor writes into this process), allocates and frees one chunk,
 * and prints each status; stage 1 then execs stage 2, the same task in a
 * new address space. The worker kept stage 1's /proc/TID/mem, and the
 * task's pidfd still says it has not exited: that file's address space
 * has no task left and takes no write, so every answer of stage 2 must be
 * written again through a fresh open (answer_write). Its baseline
 * (GPUSANDBOX_TEST_MM_KEEP_NO_REOPEN) does not open again: stage 2's first
 * answer that carries bytes (the allocation's outputs) is lost, and the
 * call fails (EFAULT) where the driver succeeded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "adv.h"

#define STAGE_LAST 2

int main(int argc, char **argv)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };
	const int stage = argc > 1 ? atoi(argv[1]) : 1;
	rmc_status_t open_st = rmc_session_open(&s, -1), alloc_st = open_st, free_st = open_st;

	if (open_st == NV_OK) {
		nv_handle_t h = rmc_next_handle(&s);
		alloc_st = adv_alloc_rm(&s, NULL, h, ADV_CHUNK);
		adv_count(&t, alloc_st);
		free_st = alloc_st == NV_OK ? adv_free_rm(&s, NULL, h) : alloc_st;
	}
	printf("stage%d_open=0x%x stage%d_alloc=0x%x stage%d_free=0x%x pid=%d\n", stage, open_st, stage,
	       alloc_st, stage, free_st, (int)getpid());
	fflush(stdout);
	if (stage < STAGE_LAST) {
		char next[16];
		snprintf(next, sizeof(next), "%d", stage + 1);
		execl("/proc/self/exe", argv[0], next, (char *)NULL);
		printf("exec failed\n");
		return 1;
	}
	adv_print_summary(&t);
	return 0;
}
