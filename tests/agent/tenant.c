/* SPDX-License-Identifier: MIT */
/*
 * tenant - one container of tests/agent's neighbour cases (issue #32:
 * what one container does must cost only that container). Static, for
 * the busybox container.
 *
 *   tenant flood N WAIT    N RM clients, each on a control file of its
 *                          own and used once (a control), held; prints "flood ok= refused=
 *                          first_refusal="; writes WAIT.ready, and exits
 *                          once the file WAIT exists
 *   tenant storm T WAIT    T idle threads, held as above; prints
 *                          "storm threads="
 *   tenant objects N WAIT  a session (client, device, subdevice), then N
 *                          video memory objects of 2 MiB, held; prints
 *                          "objects ok= refused= first_refusal=", held as
 *                          flood
 *   tenant victim K P      K clients on files of their own, then a
 *                          session and P pairs of 2 MiB video memory
 *                          (allocate, free); prints "victim clients_ok=
 *                          pairs_ok= client_us_median= client_us_max=
 *                          pair_us_median=" (the times are figures for
 *                          tests/bench/tenantbench.sh, never judged)
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adv.h"

#define WAIT_STEP_NS 20000000L /* 20 ms */
#define WAIT_MAX_STEPS 3000    /* 60 s */
#define PATH_LEN 512
#define STORM_STACK (64u * 1024u)
#define PAIR_BYTES (2ull << 20)
#define NS_PER_US 1000ull
#define NS_PER_S 1000000000ull
#define MAX_TIMED 4096

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Says ready, then waits for the file WAIT (the harness's go). */
static void hold_until(const char *wait)
{
	struct timespec step = { 0, WAIT_STEP_NS };
	char ready[PATH_LEN];
	int fd;

	snprintf(ready, sizeof(ready), "%s.ready", wait);
	fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < WAIT_MAX_STEPS && access(wait, F_OK) != 0; i++)
		nanosleep(&step, NULL);
}

/* A client on a new control file, used once as CUDA does at once (a
 * control on the client: the agent learns the client from the driver's
 * answer and watches its file from then on, one descriptor each). The
 * file stays open while it lives. */
static rmc_status_t client_on_new_file(void)
{
	struct nv0000_gpu_ids_params ids;
	nv_handle_t h = 0;
	int fd = rmc_open_ctl();

	if (fd < 0)
		return RMC_SYSERR(-fd);
	rmc_status_t st = rmc_alloc_client(fd, NULL, &h);
	if (st == NV_OK) {
		memset(&ids, 0, sizeof(ids));
		st = rmc_control(fd, NULL, h, h, NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS, &ids,
		                 rmc_ctrl_size(NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS, sizeof(ids)));
	}
	if (st != NV_OK)
		close(fd);
	return st;
}

static int flood(int n, const char *wait)
{
	int ok = 0;
	rmc_status_t first = NV_OK;

	for (int i = 0; i < n; i++) {
		rmc_status_t st = client_on_new_file();
		if (st == NV_OK)
			ok++;
		else if (first == NV_OK)
			first = st;
	}
	printf("flood ok=%d refused=%d first_refusal=%s\n", ok, n - ok,
	       first == NV_OK ? "none" : rmc_status_str(first));
	fflush(stdout);
	hold_until(wait);
	return 0;
}

static int objects(int n, const char *wait)
{
	struct rmc_session s;
	rmc_status_t first = NV_OK;
	int ok = 0;

	adv_session_or_die(&s, -1, "tenant objects");
	for (int i = 0; i < n; i++) {
		rmc_status_t st = rmc_alloc_vidmem(s.fd, NULL, s.client, s.device, rmc_next_handle(&s),
		                                   PAIR_BYTES);
		if (st == NV_OK)
			ok++;
		else if (first == NV_OK)
			first = st;
	}
	printf("objects ok=%d refused=%d first_refusal=%s\n", ok, n - ok,
	       first == NV_OK ? "none" : rmc_status_str(first));
	fflush(stdout);
	hold_until(wait);
	return 0;
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int storm(int n, const char *wait)
{
	pthread_attr_t attr;
	pthread_t t;
	int made = 0;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STORM_STACK);
	while (made < n && pthread_create(&t, &attr, idle_thread, NULL) == 0)
		made++;
	printf("storm threads=%d\n", made);
	fflush(stdout);
	hold_until(wait);
	return made == n ? 0 : 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t median_us(uint64_t *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return v[n / 2] / NS_PER_US;
}

static int victim(int k, int pairs)
{
	static uint64_t client_ns[MAX_TIMED], pair_ns[MAX_TIMED];
	struct rmc_session s;
	int ok = 0, pairs_ok = 0, timed = 0;

	if (k > MAX_TIMED || pairs > MAX_TIMED)
		return ADV_EXIT_SETUP;
	for (int i = 0; i < k; i++) {
		uint64_t t0 = now_ns();
		if (client_on_new_file() == NV_OK)
			client_ns[ok++] = now_ns() - t0;
	}
	uint64_t client_max = 0;
	for (int i = 0; i < ok; i++)
		client_max = client_ns[i] > client_max ? client_ns[i] : client_max;
	if (rmc_session_open(&s, -1) == NV_OK) {
		for (; timed < pairs; timed++) {
			int done = 0;
			uint64_t t0 = now_ns();
			if (rmc_vidmem_pairs(&s, 1, PAIR_BYTES, &done) != NV_OK)
				break;
			pair_ns[pairs_ok++] = now_ns() - t0;
		}
	}
	printf("victim clients_ok=%d pairs_ok=%d client_us_median=%llu client_us_max=%llu "
	       "pair_us_median=%llu\n", ok, pairs_ok, (unsigned long long)median_us(client_ns, ok),
	       (unsigned long long)(client_max / NS_PER_US),
	       (unsigned long long)median_us(pair_ns, pairs_ok));
	return ok == k && pairs_ok == pairs ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "flood") == 0)
		return flood(atoi(argv[2]), argv[3]);
	if (argc == 4 && strcmp(argv[1], "objects") == 0)
		return objects(atoi(argv[2]), argv[3]);
	if (argc == 4 && strcmp(argv[1], "storm") == 0)
		return storm(atoi(argv[2]), argv[3]);
	if (argc == 4 && strcmp(argv[1], "victim") == 0)
		return victim(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: tenant flood N WAIT | objects N WAIT | storm T WAIT | victim K PAIRS\n");
	return ADV_EXIT_SETUP;
}
