/* SPDX-License-Identifier: MIT */
/*
 * sm_workload - a compute-bound workload for the fake driver, for --sm.
 *
 *   sm_workload MODE WARM_MS MEASURE_MS
 *
 * Makes CLIENTS sessions (one control file each, as CUDA does), each with
 * a channel group of two channels, schedules the groups, and waits
 * WARM_MS for the duty-cycle loop to settle. Then it measures its own
 * share of GPU time over MEASURE_MS from the fake driver's busy account
 * (stats gpu0.busy_ms and now_ms): the fake counts the GPU busy while a
 * channel of it can run. MODE:
 *   steady      one client, nothing else;
 *   two         two clients (two files) on the GPU;
 *   reschedule  re-schedules its groups every RESCHEDULE_US, trying to
 *               get disabled channels back;
 *   handoff     the process that made the context forks a child and
 *               exits; the child, holding the file only by inheritance,
 *               goes on (gpusandbox must find the file in it);
 *   churn       (issue #17 item 13) during the warm-up, CHURN_PROCS
 *               short-lived processes each make a client and exit, more
 *               than the supervisor's ring of GS_MAX_CREATORS creators:
 *               if a sample naming our own process no longer counted as
 *               ours, the loop would see no use and lift the cap;
 *   stall       (issue #17 item 5) after the warm-up, one RM_CONTROL whose
 *               NVOS54 lies in a page of $GS_STALL_FILE (tests/sm/stallfs:
 *               a read of it answers only after its stall): the
 *               supervisor's notify worker waits in its read of our memory,
 *               holding the sandbox lock. The call is made in an on phase
 *               (a workload on a GPU sees its work progress; here the
 *               fake's gpu0.channels_disabled says it), and the share is
 *               measured over it, while our channels stay scheduled;
 *   tenant      one client among other sandboxes on the GPU: its share
 *               is its client's part of the busy time, which the fake
 *               time-slices between the clients that can run
 *               (gpu0.client.0xH.busy_ms). With IDLE_AT_MS it stops
 *               working then (un-schedules its group), prints the fake's
 *               clock at that instant (idle_at_fake_ms=), and idles to
 *               the end. Over its measurement it prints a trace line every
 *               TRACE_MS (trace now_ms=T busy_ms=B: the fake's clock and
 *               its client's busy time), from which tests/sm/multi.sh
 *               times the idle hand-over on the fake's account.
 * Under GPUSANDBOX_TEST_SM_CLOCK=FILE (tests/sm/run.sh's exact cases) its
 * waits and its clock are the test's clock in FILE (include/test_clock.h),
 * which the fake's now_ms and the supervisor's --sm thread share.
 * Every mode also sends FIFO_DISABLE_CHANNELS itself (to turn its channels
 * back on), which the supervisor must refuse.
 *   sm_workload tenant WARM_MS MEASURE_MS [IDLE_AT_MS]
 * Prints: share=S own_disable=STATUS SUMMARY-free lines; exit 0, or 2 when
 * set-up fails.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rmclient.h"
#include "test_clock.h"

#define HOPPER_CHANNEL_GPFIFO_A 0xc86fu
#define TSG_PARAMS 20
#define CHANNEL_PARAMS 368
#define CHANNELS_PER_GROUP 2
#define MAX_CLIENTS 2
#define H_GROUP 0x5d00a000u
#define H_CHAN 0x5d00b000u
#define RESCHEDULE_US 5000
#define EXIT_SETUP 2
#define US_PER_MS 1000
#define OUT_BUF 256
#define CHURN_PROCS 1100   /* past the supervisor's 1024 creators */
#define ON_PHASE_TRIES 2000
#define ON_PHASE_POLL_US 200
#define TRACE_MS 25
#define CHURN_CHAN_PROCS 40
#define CHURN_RUN_WAIT_MS 3000
#define CHURN_CHAN_AFTER_MS 1500
#define CHURN_RUN_POLL_MS 5
#define TEST_CLOCK_POLL_US 1000

static uint8_t chan_params[CHANNEL_PARAMS];
static uint8_t group_params[TSG_PARAMS];

static uint64_t stat_or_die(const char *key)
{
	uint64_t v;
	if (rmc_fake_stat(key, &v) < 0) {
		fprintf(stderr, "sm_workload: no fake stat %s\n", key);
		exit(EXIT_SETUP);
	}
	return v;
}

static void set_scheduled(struct rmc_session *s, bool on)
{
	struct nva06c_gpfifo_schedule_params sp = { .enable = on };
	(void)rmc_control(s->fd, NULL, s->client, H_GROUP, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &sp,
	                  rmc_ctrl_size(NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, sizeof(sp)));
}

static void schedule(struct rmc_session *s)
{
	set_scheduled(s, true);
}

/* Our client's part of gpu0's busy time (tenant mode). */
static uint64_t own_busy_ms(const struct rmc_session *s)
{
	char key[64];
	uint64_t v = 0;

	snprintf(key, sizeof(key), "gpu0.client.%#x.busy_ms", s->client);
	return rmc_fake_stat(key, &v) < 0 ? 0 : v;
}

/* Until the fake's clock reaches end_ms: a line every TRACE_MS with the
 * fake's clock and our client's busy time, both the fake's account. */
static void trace_own_busy(const struct rmc_session *s, uint64_t end_ms)
{
	for (;;) {
		uint64_t t = stat_or_die("now_ms");
		printf("trace now_ms=%llu busy_ms=%llu\n", (unsigned long long)t,
		       (unsigned long long)own_busy_ms(s));
		if (t >= end_ms)
			return;
		usleep(TRACE_MS * US_PER_MS);
	}
}

/* One RM_CONTROL whose NVOS54 is in the stalling file's page, never
 * touched by us, so the supervisor's read is the page's first. Returns
 * whether the call went out. */
static bool stalled_control(int fd)
{
	const char *path = getenv("GS_STALL_FILE");
	int sf = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	void *page = sf >= 0 ? mmap(NULL, sizeof(struct nvos54), PROT_READ, MAP_SHARED, sf, 0) : MAP_FAILED;

	if (page == MAP_FAILED) {
		fprintf(stderr, "sm_workload: cannot map GS_STALL_FILE\n");
		return false;
	}
	uint64_t off = 1;
	for (int i = 0; i < ON_PHASE_TRIES && (rmc_fake_stat("gpu0.channels_disabled", &off) < 0 || off); i++)
		usleep(ON_PHASE_POLL_US);
	(void)rmc_escape(fd, NULL, NV_ESC_RM_CONTROL, page, sizeof(struct nvos54));
	munmap(page, sizeof(struct nvos54));
	close(sf);
	return true;
}

/* A client with a channel group of CHANNELS_PER_GROUP channels, scheduled. */
static bool open_with_channels(struct rmc_session *s)
{
	nv_handle_t g = H_GROUP;
	if (rmc_session_open(s, -1) != NV_OK ||
	    rmc_alloc(s->fd, NULL, s->client, s->device, &g, KEPLER_CHANNEL_GROUP_A, group_params, 0) != NV_OK)
		return false;
	for (int i = 0; i < CHANNELS_PER_GROUP; i++) {
		nv_handle_t h = H_CHAN + (nv_handle_t)i;
		if (rmc_alloc(s->fd, NULL, s->client, H_GROUP, &h, HOPPER_CHANNEL_GPFIFO_A, chan_params, 0) != NV_OK)
			return false;
	}
	schedule(s);
	return true;
}

static uint64_t own_busy_ms(const struct rmc_session *s);

/* tenant-churn-chan: each child makes a client WITH channels (a new CUDA
 * context, as a real process churn does), waits until the fake has run
 * them (its own busy time > 0), and exits; a child whose channels never
 * ran within CHURN_RUN_WAIT_MS counts as stuck: the compute share lost a
 * channel made mid-plan (seen on an H100 as a hung context). */
static int churn_channels(void)
{
	int stuck = 0;
	for (int i = 0; i < CHURN_CHAN_PROCS; i++) {
		pid_t p = fork();
		if (p == 0) {
			struct rmc_session c;
			if (!open_with_channels(&c))
				_exit(2);
			for (int t = 0; t < CHURN_RUN_WAIT_MS; t += CHURN_RUN_POLL_MS) {
				if (own_busy_ms(&c) > 0)
					_exit(0);
				usleep(CHURN_RUN_POLL_MS * US_PER_MS);
			}
			_exit(1);
		}
		int st = 0;
		if (p > 0 && waitpid(p, &st, 0) == p && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
			stuck++;
	}
	return stuck;
}

/* Each child makes a client of its own and exits at once. */
static void churn(void)
{
	for (int i = 0; i < CHURN_PROCS; i++) {
		pid_t p = fork();
		if (p == 0) {
			struct rmc_session c;
			_exit(rmc_session_open(&c, -1) == NV_OK ? 0 : 1);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
}

/* The test's clock (GPUSANDBOX_TEST_SM_CLOCK), or NULL: CLOCK_MONOTONIC. */
static gs_test_clock *test_clock;

static uint64_t now_ms(void)
{
	struct timespec ts;
	if (test_clock)
		return gs_test_clock_now(test_clock) / 1000000;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Waits ms on our clock: on the test's, until the supervisor's --sm
 * thread has moved it that far (polled every TEST_CLOCK_POLL_US). */
static void wait_ms(long ms)
{
	if (!test_clock) {
		usleep((useconds_t)ms * US_PER_MS);
		return;
	}
	for (uint64_t until = now_ms() + (uint64_t)ms; now_ms() < until;)
		usleep(TEST_CLOCK_POLL_US);
}

/* A tenant that churns waits for the end of its warm-up at a fixed time
 * from its start, as the other tenants' measurement is placed: were it
 * shifted by the churn's length, it would outlast the other tenants and
 * measure the tenant alone, on its own duty cycle (tests/sm/multi.sh
 * fight-churn). False (said on stderr) when the churn outlasted the
 * warm-up: the case cannot be judged. */
static bool warm_until(uint64_t end_ms)
{
	uint64_t now = now_ms();

	if (now >= end_ms) {
		fprintf(stderr, "sm_workload: the churn outlasted the warm-up by %llu ms\n",
		        (unsigned long long)(now - end_ms));
		return false;
	}
	wait_ms((long)(end_ms - now));
	return true;
}

/* Schedules the group again and again for ms milliseconds. */
static void reschedule_for(struct rmc_session *s, long ms)
{
	uint64_t stop = now_ms() + (uint64_t)ms;
	while (now_ms() < stop) {
		schedule(s);
		usleep(RESCHEDULE_US);
	}
}

int main(int argc, char **argv)
{
	struct rmc_session s[MAX_CLIENTS];
	int clients = 1;

	/* tenant-reschedule and tenant-churn: a tenant of tests/sm/multi.sh
	 * that fights its cap the way reschedule and churn do, measured like a
	 * tenant (its own part of the fake's busy time). */
	if (argc != 4 && !(argc == 5 && strcmp(argv[1], "tenant") == 0)) {
		fprintf(stderr, "usage: sm_workload steady|two|reschedule|handoff|tenant|tenant-reschedule|tenant-churn-chan|"
		                "tenant-churn WARM_MS MEASURE_MS [IDLE_AT_MS]\n");
		return EXIT_SETUP;
	}
	const char *mode = argv[1];
	long warm_ms = atol(argv[2]), measure_ms = atol(argv[3]);
	const bool tenant = strncmp(mode, "tenant", strlen("tenant")) == 0;
	const long idle_at_ms = argc == 5 ? atol(argv[4]) : -1;
	const char *clock_file = getenv("GPUSANDBOX_TEST_SM_CLOCK");
	if (clock_file && !(test_clock = gs_test_clock_map(clock_file))) {
		perror("sm_workload: GPUSANDBOX_TEST_SM_CLOCK");
		return EXIT_SETUP;
	}
	const uint64_t started = now_ms();
	if (strcmp(mode, "two") == 0)
		clients = 2;
	/* handoff: the process that makes the context (A) forks a child (B)
	 * and exits; B, which only inherited the file, goes on. Our process
	 * relays B's output: B is reparented to the supervisor, not to us. */
	bool handoff = strcmp(mode, "handoff") == 0;
	int relay[2] = { -1, -1 };
	if (handoff) {
		if (pipe(relay) < 0)
			return EXIT_SETUP;
		pid_t a = fork();
		if (a < 0)
			return EXIT_SETUP;
		if (a > 0) {
			char buf[OUT_BUF];
			ssize_t n;
			close(relay[1]);
			waitpid(a, NULL, 0);
			while ((n = read(relay[0], buf, sizeof(buf))) > 0)
				fwrite(buf, 1, (size_t)n, stdout);
			return 0;
		}
		close(relay[0]);
	}
	for (int c = 0; c < clients; c++) {
		nv_handle_t g = H_GROUP;
		if (rmc_session_open(&s[c], -1) != NV_OK ||
		    rmc_alloc(s[c].fd, NULL, s[c].client, s[c].device, &g, KEPLER_CHANNEL_GROUP_A,
		              group_params, 0) != NV_OK) {
			fprintf(stderr, "sm_workload: set-up failed\n");
			return EXIT_SETUP;
		}
		for (int i = 0; i < CHANNELS_PER_GROUP; i++) {
			nv_handle_t h = H_CHAN + (nv_handle_t)i;
			if (rmc_alloc(s[c].fd, NULL, s[c].client, H_GROUP, &h, HOPPER_CHANNEL_GPFIFO_A,
			              chan_params, 0) != NV_OK) {
				fprintf(stderr, "sm_workload: channel set-up failed\n");
				return EXIT_SETUP;
			}
		}
		schedule(&s[c]);
	}
	if (handoff) {
		pid_t b = fork();
		if (b < 0)
			_exit(EXIT_SETUP);
		if (b > 0)
			_exit(0);  /* A goes; the file lives on in B */
		dup2(relay[1], STDOUT_FILENO);
		close(relay[1]);
	}
	/* reschedule: the whole run, warm-up included, so the measurement sees
	 * the loop after it has answered the attack. */
	bool resched = strcmp(mode, "reschedule") == 0 || strcmp(mode, "tenant-reschedule") == 0;
	if (strcmp(mode, "tenant-churn-chan") == 0) {
		/* The churn meets a plan in force (B joins 200 ms after us),
		 * and has the rest of the warm-up: on the test's clock each
		 * child waits for one of our windows (2.3-3.1 s for 40). */
		wait_ms(CHURN_CHAN_AFTER_MS);
		uint64_t t = now_ms();
		int stuck = churn_channels();
		printf("churned_with_channels=%d stuck=%d in %ld ms\n", CHURN_CHAN_PROCS, stuck,
		       (long)(now_ms() - t));
		if (!warm_until(started + (uint64_t)warm_ms))
			return EXIT_SETUP;
	} else if (strcmp(mode, "churn") == 0 || strcmp(mode, "tenant-churn") == 0) {
		uint64_t t = now_ms();
		churn();
		long spent = (long)(now_ms() - t);
		printf("churned=%d in %ld ms\n", CHURN_PROCS, spent);
		/* Alone: the whole warm-up after the churn, so the loop has
		 * had time to act on samples it no longer counts as ours. A
		 * tenant: the churn inside its warm-up, so that its
		 * measurement starts where the others' does (warm_until). */
		if (!tenant)
			wait_ms(warm_ms);
		else if (!warm_until(started + (uint64_t)warm_ms))
			return EXIT_SETUP;
	} else if (resched)
		reschedule_for(&s[0], warm_ms);
	else if (idle_at_ms >= 0 && idle_at_ms < warm_ms) {
		wait_ms(idle_at_ms);
		set_scheduled(&s[0], false);  /* no more work: the GPU is idle for us */
		printf("idle_at_ms=%llu idle_at_fake_ms=%llu\n", (unsigned long long)(now_ms() - started),
		       (unsigned long long)stat_or_die("now_ms"));
		wait_ms(warm_ms - idle_at_ms);
	} else
		wait_ms(warm_ms);

	/* The warm-up is over: the driver's next call follows (tests/agent/sm.sh
	 * fail-50: a workload killed at once never prints this). */
	printf("warm_done=1\n");
	fflush(stdout);
	/* Turning our own channels back on must be refused. */
	struct nv2080_fifo_disable_channels dc = { .b_disable = 0, .num_channels = 1 };
	dc.h_client_list[0] = s[0].client;
	dc.h_channel_list[0] = H_CHAN;
	rmc_status_t own = rmc_control(s[0].fd, NULL, s[0].client, s[0].subdevice,
	                               NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS, &dc, sizeof(dc));

	uint64_t b0 = stat_or_die("gpu0.busy_ms"), t0 = stat_or_die("now_ms"), o0 = own_busy_ms(&s[0]);
	uint64_t v0 = stat_or_die("gpu0.overlap_ms");
	if (resched) {
		reschedule_for(&s[0], measure_ms);
	} else if (strcmp(mode, "stall") == 0) {
		uint64_t t = now_ms();
		if (!stalled_control(s[0].fd))
			return EXIT_SETUP;
		printf("stalled_ms=%llu\n", (unsigned long long)(now_ms() - t));
	} else if (tenant) {
		trace_own_busy(&s[0], t0 + (uint64_t)measure_ms);
	} else {
		wait_ms(measure_ms);
	}
	uint64_t b1 = stat_or_die("gpu0.busy_ms"), t1 = stat_or_die("now_ms"), o1 = own_busy_ms(&s[0]);
	uint64_t v1 = stat_or_die("gpu0.overlap_ms");
	double gpu = t1 > t0 ? (double)(b1 - b0) / (double)(t1 - t0) : -1;
	double share = !tenant ? gpu : t1 > t0 ? (double)(o1 - o0) / (double)(t1 - t0) : -1;
	double overlap = t1 > t0 ? (double)(v1 - v0) / (double)(t1 - t0) : -1;
	printf("share=%.3f own_disable=%s clients=%d gpu_busy=%.3f overlap=%.3f\n", share,
	       rmc_status_str(own), clients, gpu, overlap);
	fflush(stdout);
	return 0;
}
