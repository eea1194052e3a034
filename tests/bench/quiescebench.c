/* SPDX-License-Identifier: MIT */
/*
 * quiescebench - what finding the sharers of a caller's fd table costs
 * (gs_fd_sharers, supervisor/core/tasks/quiesce.c), the walk of /proc that a
 * continued client allocation makes, with many other processes on the
 * host. Run as root:
 *
 *   quiescebench HOST_PROCESSES ROUNDS [THREADS]
 *
 * Starts HOST_PROCESSES sleeping processes (THREADS threads each, default
 * 1: a host's daemons have many) in our PID namespace, and a
 * caller in a PID namespace of its own (as a sandbox's task is) with one
 * CLONE_FILES sharer beside it; then times gs_fd_sharers for the caller.
 * Prints the median microseconds per walk and the sharers found (1, the
 * sharer, or the walk is wrong). GPUSANDBOX_TEST_QUIESCE_FULL_WALK=1 in
 * the environment walks every process, as before the namespace skip.
 * Nothing is asserted: a figure to compare.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "quiesce.h"
#include "taskset.h"

#define STACK_BYTES (64 * 1024)
#define MAX_ROUNDS 1000
#define MAX_FOUND 8
#define SETTLE_US 100000

static pid_t sharer_pid;

static void *pause_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int sleeper(void *arg)
{
	(void)arg;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;)
		pause();
	return 0;
}

/* The caller: the first task of a new PID namespace, with a CLONE_FILES
 * sibling of another process sharing its fd table. */
static int caller_main(void *arg)
{
	char *stack = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int *pipe_w = arg;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	pid_t s = clone(sleeper, stack + STACK_BYTES, CLONE_FILES | SIGCHLD, NULL);
	(void)!write(*pipe_w, &s, sizeof(s));   /* its pid in our namespace: not the host's */
	for (;;)
		pause();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: quiescebench HOST_PROCESSES ROUNDS [THREADS]\n");
		return 2;
	}
	int hosts = atoi(argv[1]), rounds = atoi(argv[2]), threads = argc > 3 ? atoi(argv[3]) : 1, p[2];
	double t[MAX_ROUNDS];
	pid_t found[MAX_FOUND];
	int n = -1;

	if (rounds < 1 || rounds > MAX_ROUNDS || pipe(p) < 0)
		return 2;
	for (int i = 0; i < hosts; i++)
		if (fork() == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (int k = 1; k < threads; k++) {
				pthread_t th;
				pthread_create(&th, NULL, pause_thread, NULL);
			}
			for (;;)
				pause();
		}
	char *stack = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t caller = clone(caller_main, stack + STACK_BYTES, CLONE_NEWPID | SIGCHLD, &p[1]);
	if (caller < 0 || read(p[0], &sharer_pid, sizeof(sharer_pid)) != sizeof(sharer_pid)) {
		perror("quiescebench: clone");
		return 1;
	}
	usleep(SETTLE_US);
	struct gs_taskset tasks;
	gs_taskset_process_tree(&tasks, getpid());
	for (int r = 0; r < rounds; r++) {
		double t0 = bench_now_us();
		n = gs_fd_sharers(caller, &tasks, found, MAX_FOUND);
		t[r] = bench_now_us() - t0;
	}
	bench_sort(t, rounds);
	printf("host_processes=%d threads_each=%d full_walk=%s walk_us_median=%.0f walk_us_min=%.0f "
	       "sharers_found=%d\n", hosts,
	       threads, getenv("GPUSANDBOX_TEST_QUIESCE_FULL_WALK") ? "yes" : "no", t[rounds / 2], t[0], n);
	/* Every child dies with us (PR_SET_PDEATHSIG). */
	return 0;
}
