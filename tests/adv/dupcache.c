/* SPDX-License-Identifier: MIT */
/*
 * dupcache - the supervisor's kept dups of a workload's file (issue #16,
 * supervisor/core/tasks/dupcache.h) must neither be used for a file the fd
 * number no longer names nor keep a closed file alive for long.
 *
 *   dupcache swap    a session A makes a pair on fd number N (the
 *                    supervisor now keeps a dup of A), then dup2()s
 *                    another session's control file B onto N (A stays
 *                    open on another number) and allocates 2 MiB on N
 *                    under A's client. The driver, given B, refuses A's
 *                    client (strict client validation); performed on the
 *                    kept dup of A, it allocates. Then 2 MiB under B's
 *                    client on N, which must be made (on B). Judged by
 *                    the fake's own video memory count around each call.
 *   dupcache close   PAIRS pairs of 2 MiB on one control file, counting
 *                    the closes of its descriptors the fake sees (run
 *                    with --count-closes: each dup the supervisor drops
 *                    is one), then closes the file and, staying alive and
 *                    idle, waits for the fake to release it (files_open
 *                    and clients_live back to 0); then the same for a
 *                    child process that makes the pairs and exits.
 *                    Last, GPU_CALLS REGISTER_FDs on a GPU node: a GPU
 *                    node is never kept (the driver would grant its GPU
 *                    to whatever holds it), so each one's dup is closed.
 *
 * Prints key=value tokens and SUMMARY (the 2 MiB allocations).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adv.h"

#define PAIR_SIZE (2ull * RMC_MIB)
#define PAIRS 200
/* How long the close test waits for the release: a deadline for
 * liveness only, far above the supervisor's idle bound (5 ms), a sweep
 * and a FUSE release's delay on a loaded machine, below the run's end
 * (the baseline keeps the file until then). The check is that the file
 * is released at all, never how fast. */
#define RELEASE_WAIT_MS 5000
#define POLL_US 1000
#define US_PER_MS 1000
#define GPU_CALLS 20
#define GPU_NODE "/dev/nvidia0"
/* The fd number the swap test uses for both files. */
#define FD_N 150

static uint64_t fake_stat_or(const char *key, uint64_t dflt)
{
	uint64_t v;

	return rmc_fake_stat(key, &v) == 0 ? v : dflt;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* One 2 MiB alloc and its free; the alloc's status. */
static rmc_status_t pair(struct rmc_session *s, struct adv_tally *t)
{
	nv_handle_t h = rmc_next_handle(s);
	rmc_status_t st = adv_alloc_rm(s, NULL, h, PAIR_SIZE);

	adv_count(t, st);
	if (st == NV_OK)
		adv_free_rm(s, NULL, h);
	return st;
}

/* The fake's video memory in use after one 2 MiB allocation on s (kept),
 * minus before: what the fake really allocated. */
static long long alloc_delta(struct rmc_session *s, struct adv_tally *t, rmc_status_t *st)
{
	uint64_t before = fake_stat_or("gpu0.vidmem_used", 0);

	*st = adv_alloc_rm(s, NULL, rmc_next_handle(s), PAIR_SIZE);
	adv_count(t, *st);
	return (long long)fake_stat_or("gpu0.vidmem_used", 0) - (long long)before;
}

static int run_swap(void)
{
	struct rmc_session a, b, on_n;
	struct adv_tally t = { 0 };
	rmc_status_t st_stale, st_new;
	long long d_stale, d_new;

	adv_session_or_die(&a, -1, "session A");
	adv_session_or_die(&b, -1, "session B");
	/* A on N, kept open on its old number too. */
	if (dup2(a.fd, FD_N) < 0) {
		perror("dup2");
		return ADV_EXIT_SETUP;
	}
	on_n = a;
	on_n.fd = FD_N;
	printf("first_pair=%s\n", rmc_status_str(pair(&on_n, &t)));
	/* N now names B; A lives on (a.fd). */
	dup2(b.fd, FD_N);
	d_stale = alloc_delta(&on_n, &t, &st_stale);
	on_n = b;
	on_n.fd = FD_N;
	d_new = alloc_delta(&on_n, &t, &st_new);
	printf("stale_status=%s stale_fake_delta=%lld new_status=0x%x new_fake_delta=%lld\n",
	       rmc_status_str(st_stale), d_stale, st_new, d_new);
	adv_print_summary(&t);
	return 0;
}

/* Waits until the fake has no client and no open device file left;
 * the milliseconds it took, or -1 after RELEASE_WAIT_MS. */
static long long wait_released(uint64_t since)
{
	while (now_ms() - since <= RELEASE_WAIT_MS) {
		if (fake_stat_or("clients_live", 1) == 0 && fake_stat_or("files_open", 1) == 0)
			return (long long)(now_ms() - since);
		usleep(POLL_US);
	}
	return -1;
}

/* PAIRS pairs on a new session, then the file closed (or, for a process
 * about to exit, left to the exit). No RM_FREE of the client: the
 * release of the file frees it. */
static int pairs_on_session(struct adv_tally *t, const char *label, bool close_it)
{
	struct rmc_session s;
	int ok = 0;

	adv_session_or_die(&s, -1, label);
	for (int i = 0; i < PAIRS; i++)
		ok += pair(&s, t) == NV_OK;
	if (close_it)
		close(s.fd);
	return ok;
}

/* GPU_CALLS calls performed on a GPU node (REGISTER_FD, linking it to a
 * control file; their answers do not matter): the closes the fake saw. */
static long long gpu_node_closes(void)
{
	int ctl = rmc_open_ctl(), gpu = open(GPU_NODE, O_RDWR | O_CLOEXEC);
	uint64_t before = fake_stat_or("fd_closes", 0);
	int32_t target = ctl;

	if (ctl < 0 || gpu < 0)
		return -1;
	for (int i = 0; i < GPU_CALLS; i++)
		(void)syscall(SYS_ioctl, gpu, NV_IOC_WORD(NV_ESC_REGISTER_FD, sizeof(target)), &target);
	return (long long)(fake_stat_or("fd_closes", 0) - before);
}

static int run_close(void)
{
	struct adv_tally t = { 0 };
	uint64_t closes0 = fake_stat_or("fd_closes", 0), t0;
	int ok = pairs_on_session(&t, "closer", true);
	long long freed, exit_freed = -1;
	pid_t child;

	t0 = now_ms();
	/* Closes the fake saw during the pairs and our own close. */
	printf("pairs=%d pairs_ok=%d fd_closes=%llu\n", PAIRS, ok,
	       (unsigned long long)(fake_stat_or("fd_closes", 0) - closes0));
	freed = wait_released(t0);
	child = fork();
	if (child == 0) {
		struct adv_tally ct = { 0 };
		pairs_on_session(&ct, "exiter", false);
		_exit(0);
	}
	if (child > 0 && waitpid(child, NULL, 0) == child)
		exit_freed = wait_released(now_ms());
	printf("freed_ms=%lld exit_freed_ms=%lld\n", freed, exit_freed);
	printf("gpu_calls=%d gpu_fd_closes=%lld\n", GPU_CALLS, gpu_node_closes());
	adv_print_summary(&t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "swap") == 0)
		return run_swap();
	if (argc == 2 && strcmp(argv[1], "close") == 0)
		return run_close();
	fprintf(stderr, "usage: dupcache swap|close\n");
	return ADV_EXIT_SETUP;
}
