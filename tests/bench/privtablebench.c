/* SPDX-License-Identifier: MIT */
/*
 * privtablebench - what making a device allocation in a private fd table
 * costs (supervisor/core/tasks/private_table.c): the worker's handoff to the
 * spawner, a helper thread, its unshare of an empty table, the pidfd_getfd
 * of the call's dup and the listener, the borrow's walk of the trapped
 * task's /proc/TID/fd, the ID_VALID check and the ioctl. Run as root:
 *
 *   privtablebench ROUNDS [FDS]
 *
 * A child holding FDS open files (default 16; none of them a GPU node) is
 * trapped in a seccomp user notification; each round makes one call for
 * it on /dev/null (an ioctl the null device refuses at once, so the
 * figure is the private table's, not a driver's). Prints the median and
 * the 90th percentile microseconds per call.
 * GPUSANDBOX_TEST_SHARED_TABLE_DEVICE_ALLOC=1 in the environment makes the
 * calls in the calling thread's shared table (the borrow and the check
 * without the helper, as before the private table), for comparison.
 * Nothing is asserted: a figure to compare.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/trap_child.h"
#include "gs_error.h"
#include "private_table.h"

#define DEFAULT_FDS 16
#define NS_PER_US 1000.0
#define NS_PER_S 1000000000LL
#define PERCENTILE_90 90
#define PERCENT 100

static _Noreturn void trapped_child(int sock, unsigned fds)
{
	for (unsigned i = 0; i < fds; i++)
		(void)open("/dev/null", O_RDONLY);
	trap_child_and_wait(sock);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct seccomp_notif req;
	struct gs_error err = { 0 };
	int sv[2];

	if (argc < 2 || atoi(argv[1]) <= 0) {
		fprintf(stderr, "usage: privtablebench ROUNDS [FDS]\n");
		return 2;
	}
	int rounds = atoi(argv[1]);
	unsigned fds = argc > 2 ? (unsigned)atoi(argv[2]) : DEFAULT_FDS;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 1;
	pid_t child = fork();
	if (child == 0)
		trapped_child(sv[1], fds);
	int listener = fdpass_recv(sv[0]);
	memset(&req, 0, sizeof(req));
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	long long *ns = calloc((size_t)rounds, sizeof(*ns));
	if (listener < 0 || null < 0 || !ns || ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0 ||
	    gs_private_table_start(&err) < 0) {
		fprintf(stderr, "privtablebench: setup failed\n");
		return 1;
	}
	int avail = 0;
	for (int i = 0; i < rounds; i++) {
		struct gs_private_call pc = { .tid = child, .listener = listener, .notif_id = req.id,
		                              .dup = null, .request = FIONREAD, .arg = &avail };
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		enum gs_private_outcome o = gs_private_table_call(&pc);
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (o != GS_PRIVATE_PERFORMED) {
			fprintf(stderr, "privtablebench: call %d not made (%d)\n", i, (int)o);
			return 1;
		}
		ns[i] = (b.tv_sec - a.tv_sec) * NS_PER_S + (b.tv_nsec - a.tv_nsec);
	}
	qsort(ns, (size_t)rounds, sizeof(*ns), cmp_ll);
	printf("%s table: %d calls, trapped task with %u fds: median %.1f us, p90 %.1f us\n",
	       getenv("GPUSANDBOX_TEST_SHARED_TABLE_DEVICE_ALLOC") ? "shared" : "private", rounds, fds,
	       (double)ns[rounds / 2] / NS_PER_US,
	       (double)ns[(size_t)rounds * PERCENTILE_90 / PERCENT] / NS_PER_US);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}
