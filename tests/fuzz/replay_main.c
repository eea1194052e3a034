/* SPDX-License-Identifier: MIT */
/*
 * replay_main.c - runs a fuzz target over files, for machines without
 * libFuzzer (CI). Usage: policy_replay FILE... Each file is one input; a
 * crash or an abort() in the target is the failure. Prints "PASS FILE" per
 * input and "N passed, M failed" (M counts files that cannot be read).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Larger than any input the target accepts, so a cut is never silent. */
#define REPLAY_MAX_BYTES ((2u << 20) + 1)
/* A target that loops on an input is a failure too: a signal ends the
 * replay without its summary line, which the runner counts as failed.
 * The bound is on the CPU time the input costs (ITIMER_PROF, SIGPROF),
 * not on the clock: on a loaded 2-core CI machine the largest input
 * (review/many-sandboxes, about 3 s of CPU) took more than 10 s of wall
 * time, and a clock bound failed it. The wall-clock alarm is only a
 * hang's cap, for a target that would block. */
#define REPLAY_CPU_LIMIT_S 30
#define REPLAY_HANG_CAP_S 600

static void limit_input(unsigned cpu_s, unsigned wall_s)
{
	struct itimerval cpu = { .it_value = { .tv_sec = cpu_s } };

	(void)setitimer(ITIMER_PROF, &cpu, NULL);
	alarm(wall_s);
}

int main(int argc, char **argv)
{
	unsigned passed = 0, failed = 0;
	uint8_t *buf = malloc(REPLAY_MAX_BYTES);

	if (!buf)
		return 2;
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		size_t n;

		if (!f) {
			printf("FAIL %s: cannot open\n", argv[i]);
			failed++;
			continue;
		}
		n = fread(buf, 1, REPLAY_MAX_BYTES, f);
		fclose(f);
		limit_input(REPLAY_CPU_LIMIT_S, REPLAY_HANG_CAP_S);
		LLVMFuzzerTestOneInput(buf, n);
		limit_input(0, 0);
		printf("PASS %s\n", argv[i]);
		passed++;
	}
	free(buf);
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
