/* SPDX-License-Identifier: MIT */
/*
 * holdbench - what holding a threaded caller's fd table still costs
 * (gs_quiesce_begin and gs_quiesce_end, supervisor/core/tasks/quiesce.c): the
 * begin of every continued client allocation and UVM channel
 * registration of a CUDA process, whose threads share its table. Run as
 * root:
 *
 *   holdbench ROUNDS [THREADS]
 *
 * Starts a process with THREADS sleeping threads (default 16, about a
 * PyTorch process's), then ROUNDS times begins a quiesce for its main
 * thread (its threads found by /proc/TID/task, as when no table is shared
 * beyond a thread group) and ends it, the call not continued. Prints the
 * median and the 90th percentile of each in microseconds and the tasks
 * seized per begin. Nothing is asserted: a figure to compare.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "quiesce.h"
#include "taskset.h"

#define MAX_ROUNDS 2000
#define MAX_THREADS 256
#define DEFAULT_THREADS 16
#define SETTLE_US 100000
#define PERCENTILE_90 0.9

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static _Noreturn void family(int threads)
{
	pthread_t t;

	for (int i = 0; i < threads; i++)
		pthread_create(&t, NULL, sleeper, NULL);
	sleeper(NULL);
	_exit(0);
}

static void print_figure(const char *name, double *v, int n)
{
	bench_sort(v, n);
	printf("%s_median_us=%.1f %s_p90_us=%.1f ", name, v[n / 2], name, v[(int)(n * PERCENTILE_90)]);
}

int main(int argc, char **argv)
{
	static double begin_us[MAX_ROUNDS], end_us[MAX_ROUNDS];
	int rounds = argc > 1 ? atoi(argv[1]) : 0;
	int threads = argc > 2 ? atoi(argv[2]) : DEFAULT_THREADS;
	struct gs_taskset ts;
	int done = 0;

	if (rounds < 1 || rounds > MAX_ROUNDS || threads < 1 || threads > MAX_THREADS) {
		fprintf(stderr, "usage: holdbench ROUNDS(1-%d) [THREADS(1-%d)]\n", MAX_ROUNDS, MAX_THREADS);
		return 2;
	}
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	gs_taskset_process_tree(&ts, getpid());
	pid_t child = fork();
	if (child == 0)
		family(threads);
	usleep(SETTLE_US);
	struct gs_quiesce_who who = { &ts, NULL, NULL, true, NULL, false, NULL, NULL, false, NULL };
	for (; done < rounds; done++) {
		struct gs_quiesce *q = NULL;
		const char *why = NULL;
		double t0 = bench_now_us();
		if (gs_quiesce_begin(child, &who, &q, &why) < 0) {
			fprintf(stderr, "holdbench: %s\n", why);
			break;
		}
		double t1 = bench_now_us();
		gs_quiesce_end(q, false);
		begin_us[done] = t1 - t0;
		end_us[done] = bench_now_us() - t1;
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	if (done < 1)
		return 1;
	printf("rounds=%d threads=%d ", done, threads);
	print_figure("begin", begin_us, done);
	print_figure("end", end_us, done);
	printf("\n");
	return 0;
}
