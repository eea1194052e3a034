/* SPDX-License-Identifier: MIT */
/*
 * test_dupcache.c - a worker's kept dups (supervisor/core/tasks/dupcache.c).
 *
 * The "workload" is this process and its fds are pipe ends: a pipe's read
 * end sees EOF exactly when the last reference to its write end is gone,
 * which is how each check sees whether a kept dup still holds a file the
 * workload closed. A kept dup is given back for the fd number that names
 * its file (kcmp), never for one dup2'd over; the janitor closes one left
 * idle; a fact learned of a kept file lasts until a take misses;
 * gs_dup_cache_drop_owner closes the parked ones of its owner only,
 * never one in use; detach closes the rest. All but the janitor's check
 * run in a child whose janitor never expires a dup
 * (GPUSANDBOX_TEST_DUPCACHE_NO_EXPIRY, read when it starts), so that a
 * loaded machine's delays cannot close a dup under a check.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dupcache.h"

/* Far above the idle bound (GS_DUP_CACHE_IDLE_MS) on a loaded machine. */
#define RELEASE_WAIT_MS 2000
#define POLL_MS 1

static int owner_a, owner_b;

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* The write end's file is released: its read end reads EOF. */
static bool write_end_gone(int rd)
{
	char c;

	return read(rd, &c, 1) == 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* A pipe whose write end is wfd (the workload's number) and read end *rd
 * (non-blocking). */
static int workload_pipe(int *rd)
{
	int p[2];

	if (pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0)
		return -1;
	*rd = p[0];
	return p[1];
}

/* The end of a check: the cache detached, then the check's fds closed. */
static void detach_and_close(struct gs_dup_cache *dc, const int *fds, unsigned n)
{
	gs_dup_cache_detach(dc);
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
}

/* A miss, then a fresh dup parked, then the same dup given back. */
static int keep_one(struct gs_dup_cache *dc, int wfd)
{
	int slot, fd = gs_dup_cache_take(dc, getpid(), wfd, &slot);

	CHECK(fd < 0 && slot >= 0);
	fd = fcntl(wfd, F_DUPFD_CLOEXEC, 0); /* what pidfd_getfd gives */
	gs_dup_cache_park(dc, slot, fd, getpid(), wfd);
	return fd;
}

static void test_hit_and_swap(void)
{
	struct gs_dup_cache dc = { 0 };
	int rd, rd2, slot, wfd = workload_pipe(&rd), other = workload_pipe(&rd2);

	CHECK(gs_dup_cache_attach(&dc, &owner_a) == 0);
	int kept = keep_one(&dc, wfd);
	CHECK(gs_dup_cache_take(&dc, getpid(), wfd, &slot) == kept);
	gs_dup_cache_park(&dc, slot, kept, getpid(), wfd);
	/* The number now names another file: never the kept dup, which is
	 * closed (and with it the first pipe's last write reference). */
	CHECK(dup2(other, wfd) == wfd);
	CHECK(gs_dup_cache_take(&dc, getpid(), wfd, &slot) < 0 && slot >= 0);
	CHECK(!fd_open(kept) && errno == EBADF);
	CHECK(write_end_gone(rd));
	gs_dup_cache_release(&dc, slot);
	/* Another number, the same key's slot empty: a miss. */
	CHECK(gs_dup_cache_take(&dc, getpid(), other, &slot) < 0);
	gs_dup_cache_release(&dc, slot);
	detach_and_close(&dc, (int[]){ wfd, other, rd, rd2 }, 4);
}

/* A slot's fact (bind_client_for_charge's "this kept file is the
 * client's") holds while takes hit, and goes with the first miss, after
 * which the slot may get another file: a swap of the number, and the
 * same number reopened on another file. */
static void test_fact_kept_until_miss(void)
{
	struct gs_dup_cache dc = { 0 };
	int rd, rd2, slot, wfd = workload_pipe(&rd), other = workload_pipe(&rd2);
	const uint32_t key = 0xc1d00001u;
	const uint64_t epoch = 7;

	CHECK(gs_dup_cache_attach(&dc, &owner_a) == 0);
	int kept = keep_one(&dc, wfd);
	CHECK(gs_dup_cache_take(&dc, getpid(), wfd, &slot) == kept);
	CHECK(!gs_dup_cache_fact_is(&dc, slot, key, epoch));
	gs_dup_cache_fact_set(&dc, slot, key, epoch);
	gs_dup_cache_park(&dc, slot, kept, getpid(), wfd);
	CHECK(gs_dup_cache_take(&dc, getpid(), wfd, &slot) == kept);
	CHECK(gs_dup_cache_fact_is(&dc, slot, key, epoch));
	CHECK(!gs_dup_cache_fact_is(&dc, slot, key, epoch + 1));
	CHECK(!gs_dup_cache_fact_is(&dc, slot, key + 1, epoch));
	CHECK(!gs_dup_cache_fact_is(&dc, slot, key, 0));
	gs_dup_cache_park(&dc, slot, kept, getpid(), wfd);
	/* Another file behind the number: the miss clears the fact, and the
	 * fresh dup parked in the slot does not inherit it. */
	CHECK(dup2(other, wfd) == wfd);
	CHECK(gs_dup_cache_take(&dc, getpid(), wfd, &slot) < 0 && slot >= 0);
	CHECK(!gs_dup_cache_fact_is(&dc, slot, key, epoch));
	int fresh = fcntl(wfd, F_DUPFD_CLOEXEC, 0);
	gs_dup_cache_park(&dc, slot, fresh, getpid(), wfd);
	CHECK(gs_dup_cache_take(&dc, getpid(), wfd, &slot) == fresh);
	CHECK(!gs_dup_cache_fact_is(&dc, slot, key, epoch));
	/* A slot given up empty (the call's answer lost) misses next, and
	 * the fact set before goes with that miss. */
	gs_dup_cache_fact_set(&dc, slot, key, epoch);
	close(fresh);
	gs_dup_cache_release(&dc, slot);
	CHECK(gs_dup_cache_take(&dc, getpid(), wfd, &slot) < 0 && slot >= 0);
	CHECK(!gs_dup_cache_fact_is(&dc, slot, key, epoch));
	gs_dup_cache_release(&dc, slot);
	detach_and_close(&dc, (int[]){ wfd, other, rd, rd2 }, 4);
}

static void test_janitor_closes_idle(void)
{
	struct gs_dup_cache dc = { 0 };
	int rd, wfd = workload_pipe(&rd), waited = 0;

	CHECK(gs_dup_cache_attach(&dc, &owner_a) == 0);
	keep_one(&dc, wfd);
	/* The workload closes its file: only our kept dup holds it (that it
	 * does hold it, test_drop_owner shows). */
	close(wfd);
	while (!write_end_gone(rd) && waited < RELEASE_WAIT_MS) {
		sleep_ms(POLL_MS);
		waited += POLL_MS;
	}
	CHECK(waited < RELEASE_WAIT_MS);
	printf("janitor released an idle kept dup after about %d ms (bound %u ms)\n", waited,
	       GS_DUP_CACHE_IDLE_MS);
	gs_dup_cache_detach(&dc);
	close(rd);
}

static void test_drop_owner(void)
{
	struct gs_dup_cache a = { 0 }, b = { 0 };
	int rd_a, rd_b, slot;
	int wa = workload_pipe(&rd_a), wb = workload_pipe(&rd_b);

	CHECK(gs_dup_cache_attach(&a, &owner_a) == 0);
	CHECK(gs_dup_cache_attach(&b, &owner_b) == 0);
	int ka = keep_one(&a, wa);
	int kb = keep_one(&b, wb);
	close(wb);
	/* In use: dropping the owner leaves it to its call. */
	CHECK(gs_dup_cache_take(&a, getpid(), wa, &slot) == ka);
	gs_dup_cache_drop_owner(&owner_a);
	CHECK(fd_open(ka));
	gs_dup_cache_park(&a, slot, ka, getpid(), wa);
	close(wa);
	/* Parked: closed, and the file released before the drop returns;
	 * the other owner's dup stays. */
	gs_dup_cache_drop_owner(&owner_a);
	CHECK(!fd_open(ka));
	CHECK(write_end_gone(rd_a));
	CHECK(fd_open(kb) && !write_end_gone(rd_b));
	/* Detach closes what is left. */
	gs_dup_cache_detach(&b);
	CHECK(!fd_open(kb) && write_end_gone(rd_b));
	gs_dup_cache_detach(&a);
	gs_dup_cache_detach(&a);
	close(rd_a);
	close(rd_b);
}

static void test_unattached(void)
{
	struct gs_dup_cache dc = { 0 };
	int slot, rd, wfd = workload_pipe(&rd);

	CHECK(!gs_dup_cache_attached(&dc));
	CHECK(gs_dup_cache_take(&dc, getpid(), wfd, &slot) < 0 && slot == -1);
	gs_dup_cache_detach(&dc);
	close(wfd);
	close(rd);
}

/* The checks that must not race the janitor, in a child whose janitor
 * never expires a dup; true when all of them passed. */
static bool without_expiry(void)
{
	int status;
	pid_t child = fork();

	if (child == 0) {
		setenv("GPUSANDBOX_TEST_DUPCACHE_NO_EXPIRY", "1", 1);
		test_hit_and_swap();
		test_fact_kept_until_miss();
		test_drop_owner();
		test_unattached();
		printf("without expiry: ");
		int rc = check_summary();
		fflush(stdout);
		_exit(rc);
	}
	return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

int main(void)
{
	CHECK(without_expiry());
	test_janitor_closes_idle();
	return check_summary();
}
