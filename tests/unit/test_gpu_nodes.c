/* SPDX-License-Identifier: MIT */
/*
 * test_gpu_nodes.c - the process-wide GPU-node lock
 * (supervisor/core/gpu_nodes.c, workload.c's borrow).
 *
 * The lock is what keeps one sandbox's device allocation from meeting
 * another's GPU node in the agent's fd table, so each check is about
 * exclusion: while one thread holds a kept node (or a borrow), another
 * thread's enter waits, and it goes on once the last node is closed. A
 * pipe end stands for a GPU node (the lock counts what it is given to
 * keep); a borrow from a task with no GPU node still holds the lock, as
 * the device allocation it covers must run alone. The agent tier's
 * gpunode-runc shows the driver's side of it against the fake.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "gpu_nodes.h"
#include "workload.h"

/* Long enough for a thread that could take the lock to have taken it. */
#define BLOCKED_WAIT_MS 100
#define NS_PER_MS 1000000L

static atomic_bool other_entered;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * NS_PER_MS };
	nanosleep(&ts, NULL);
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void *other_thread(void *arg)
{
	(void)arg;
	gs_gpu_nodes_enter();
	atomic_store(&other_entered, true);
	gs_gpu_nodes_leave();
	return NULL;
}

/* Does another thread's enter wait while *release is still to be done?
 * Calls release, then checks the other thread got in. */
static bool excludes(void (*release)(void *), void *ctx)
{
	pthread_t t;

	atomic_store(&other_entered, false);
	if (pthread_create(&t, NULL, other_thread, NULL) != 0)
		return false;
	sleep_ms(BLOCKED_WAIT_MS);
	bool waited = !atomic_load(&other_entered);
	release(ctx);
	pthread_join(t, NULL);
	return waited && atomic_load(&other_entered);
}

static void close_node(void *ctx)
{
	gs_gpu_node_close(*(int *)ctx);
}

static void test_kept_node(void)
{
	int p[2];

	CHECK(pipe(p) == 0);
	CHECK(!gs_gpu_nodes_held());
	CHECK(gs_gpu_node_keep(p[1]));
	CHECK(gs_gpu_nodes_held() && gs_gpu_node_kept(p[1]) && !gs_gpu_node_kept(p[0]));
	/* Closing an fd that is not kept leaves the lock held. */
	gs_gpu_node_close(p[0]);
	CHECK(gs_gpu_nodes_held());
	CHECK(excludes(close_node, &p[1]));
	CHECK(!gs_gpu_nodes_held() && !fd_open(p[1]));
}

/* Two nodes at once: the lock goes with the last. */
static void test_two_nodes(void)
{
	int a[2], b[2];

	CHECK(pipe(a) == 0 && pipe(b) == 0);
	CHECK(gs_gpu_node_keep(a[0]) && gs_gpu_node_keep(b[0]));
	gs_gpu_node_close(a[0]);
	CHECK(gs_gpu_nodes_held() && !fd_open(a[0]));
	CHECK(excludes(close_node, &b[0]));
	CHECK(!gs_gpu_nodes_held());
	close(a[1]);
	close(b[1]);
}

static void return_borrow(void *ctx)
{
	return_gpu_nodes(ctx);
}

/* A borrow from a task holding no GPU node: nothing borrowed, and still
 * the device allocation it covers runs under the lock. */
static void test_empty_borrow(void)
{
	struct gs_pidfd_cache pc;
	struct borrowed_fds b = { .n = 0 };

	gs_pidfd_cache_init(&pc);
	borrow_gpu_nodes(&pc, getpid(), &b);
	CHECK(b.n == 0 && gs_gpu_nodes_held());
	CHECK(excludes(return_borrow, &b));
	CHECK(!gs_gpu_nodes_held());
	/* Returned twice (a call path that never borrowed): no effect. */
	return_gpu_nodes(&b);
	CHECK(!gs_gpu_nodes_held());
	gs_pidfd_cache_fini(&pc);
}

/* More nodes than a thread may keep: refused, nothing kept. */
static void test_keep_bound(void)
{
	int fds[MAX_BORROWED_GPU_FDS + 8];
	unsigned kept = 0;

	for (unsigned i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		fds[i] = open("/dev/null", O_RDONLY);
		if (fds[i] >= 0 && gs_gpu_node_keep(fds[i]))
			kept++;
		else if (fds[i] >= 0)
			close(fds[i]), fds[i] = -1;
	}
	CHECK(kept > 0 && kept < sizeof(fds) / sizeof(fds[0]));
	for (unsigned i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			gs_gpu_node_close(fds[i]);
	CHECK(!gs_gpu_nodes_held());
}

int main(void)
{
	test_kept_node();
	test_two_nodes();
	test_empty_borrow();
	test_keep_bound();
	return check_summary();
}
