/* SPDX-License-Identifier: MIT */
/*
 * ledgerbench.c - the ledger's share of a call, in process, with many live
 * objects and clients (issue #16): what the fake driver cannot show, since
 * the fake itself slows down with every object it holds.
 *
 *   ledgerbench OBJECTS CLIENTS
 *
 * Fills the ledger with OBJECTS live 4 KiB allocations under one client and
 * CLIENTS other clients, each on its own open file (a pipe: the ledger
 * watches any file), then times, in ns per operation (median of rounds):
 *   pair        the ledger's work for a 2 MiB pair: bind the client for the
 *               charge (one kcmp), add, free;
 *   new_client  a new client's: find or add its file, the bounded reconcile,
 *               note the client, then free it and find its file again;
 *   full_reap   one full reconcile (every watched client looked at);
 *   engines     one count of video engines (a walk of the hardware list);
 *   channels    one count of channels per GPU (the same list; what --sm
 *               counts and lists every period under the session lock);
 * and the process's resident memory (VmRSS) after the ledger's start,
 * after the fill and after the other clients: bytes per live object and
 * per client (issue #31: the supervisor's memory per million objects).
 * Prints one line of key=value; asserts nothing about time.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "ledger.h"

#define H_CLIENT      0xc1d00001u
#define H_DEVICE      0x5c000001u
#define H_FILL_BASE   0x5d000000u
#define H_MEM         0x5c001000u
#define H_SUBDEVICE   0x5c002000u
#define H_NEW_CLIENT  0xc1e00000u
#define H_OTHER_BASE  0xc1f00000u
#define FILL_BYTES    4096u
#define PAIR_BYTES    (2u << 20)
#define ROUNDS        9
#define OPS_PER_ROUND 2000
#define SLOW_OPS      20
#define FD_HEADROOM   256u

#define KIB 1024.0

/* VmRSS of this process, in KiB (0 if unread). */
static unsigned long rss_kib(void)
{
	char line[256];
	unsigned long kib = 0;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %lu", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

static double median(double *v, int n)
{
	bench_sort(v, n);
	return v[n / 2];
}

static bool any_engine(uint32_t cls, const void *arg)
{
	(void)cls;
	(void)arg;
	return true;
}

/* An H200's 7 engines of a kind. */
static uint32_t seven_instances(void *ctx, int gpu)
{
	(void)ctx;
	(void)gpu;
	return 7;
}

static int new_file(void)
{
	int p[2];

	if (pipe(p) < 0) {
		perror("ledgerbench: pipe");
		exit(1);
	}
	close(p[1]);
	return p[0];
}

static double time_pairs(struct ledger *l, int fd, int ops)
{
	uint64_t rel[GS_MAX_GPUS];
	double t0 = bench_now_ns();

	for (int i = 0; i < ops; i++) {
		(void)ledger_bind_client(l, H_CLIENT, fd, rel);
		(void)ledger_add(l, H_CLIENT, H_DEVICE, H_MEM, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU,
		                 PAIR_BYTES);
		ledger_free(l, H_CLIENT, H_MEM, rel);
	}
	return (bench_now_ns() - t0) / ops;
}

static void reap_some(struct ledger *l)
{
	uint64_t rel[GS_MAX_GPUS] = { 0 };
	struct ledger_owner owner;

	while (ledger_reap_dead_client_within(l, LEDGER_REAP_SOME, rel, &owner))
		;
}

static double time_new_clients(struct ledger *l, int ops)
{
	uint64_t rel[GS_MAX_GPUS];
	double t = 0;

	for (int i = 0; i < ops; i++) {
		int fd = new_file();
		double t0 = bench_now_ns();
		(void)ledger_file_of(l, fd);
		reap_some(l);
		(void)ledger_note_client(l, H_NEW_CLIENT, fd);
		ledger_free(l, H_NEW_CLIENT, H_NEW_CLIENT, rel);
		(void)ledger_file_of(l, fd);
		t += bench_now_ns() - t0;
		close(fd);
	}
	return t / ops;
}

static void raise_fd_limit(unsigned need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need) {
		rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: ledgerbench OBJECTS CLIENTS\n");
		return 2;
	}
	unsigned objects = (unsigned)strtoul(argv[1], NULL, 0);
	unsigned clients = (unsigned)strtoul(argv[2], NULL, 0);
	double pair[ROUNDS], fresh[ROUNDS], reap[ROUNDS], eng[ROUNDS], chan[ROUNDS], subdev[ROUNDS];
	uint64_t rel[GS_MAX_GPUS] = { 0 };
	uint32_t counts[GS_MAX_GPUS];
	struct ledger l;

	/* Each other client holds a file and the ledger a watch of it. */
	raise_fd_limit(2 * clients + FD_HEADROOM);
	if (ledger_init(&l) < 0)
		return 1;
	const unsigned long rss_start = rss_kib();
	int fd = new_file();
	ledger_note_client(&l, H_CLIENT, fd);
	ledger_add(&l, H_CLIENT, H_CLIENT, H_DEVICE, RM_CLASS_DEVICE, 0x80, 0, 0);
	for (unsigned i = 0; i < objects; i++)
		if (ledger_add(&l, H_CLIENT, H_DEVICE, H_FILL_BASE + i, RM_CLASS_VIDMEM, 0x40,
		               LEDGER_NO_GPU, FILL_BYTES) < 0)
			return 1;
	/* Made after the fill, so that a walk of every object meets it last:
	 * --sm looks it up at every window edge (ledger_subdevice_of). */
	if (ledger_add(&l, H_CLIENT, H_DEVICE, H_SUBDEVICE, RM_CLASS_SUBDEVICE, 0x2080, 0, 0) < 0)
		return 1;
	const unsigned long rss_filled = rss_kib();
	for (unsigned k = 0; k < clients; k++) {
		int cfd = new_file();
		(void)ledger_file_of(&l, cfd);
		ledger_note_client(&l, H_OTHER_BASE + k, cfd);
	}
	const unsigned long rss_clients = rss_kib();
	for (int r = 0; r < ROUNDS; r++) {
		pair[r] = time_pairs(&l, fd, OPS_PER_ROUND);
		fresh[r] = time_new_clients(&l, SLOW_OPS);
		double t0 = bench_now_ns();
		(void)ledger_reap_dead_clients(&l, rel);
		reap[r] = bench_now_ns() - t0;
		t0 = bench_now_ns();
		const struct ledger_engine_query q = { .match = any_engine, .per_session = seven_instances,
		                                       .client = H_CLIENT, .gpu = 0 };
		(void)ledger_count_engine_sessions(&l, &q);
		eng[r] = bench_now_ns() - t0;
		t0 = bench_now_ns();
		ledger_count_channels(&l, counts);
		chan[r] = bench_now_ns() - t0;
		t0 = bench_now_ns();
		if (ledger_subdevice_of(&l, H_CLIENT, 0) != H_SUBDEVICE)
			return 1;
		subdev[r] = bench_now_ns() - t0;
	}
	printf("objects=%u clients=%u live=%u pair_ns=%.0f new_client_ns=%.0f full_reap_ns=%.0f "
	       "engines_ns=%.0f channels_ns=%.0f subdevice_ns=%.0f rss_start_kib=%lu rss_filled_kib=%lu "
	       "rss_clients_kib=%lu bytes_per_object=%.0f bytes_per_client=%.0f\n",
	       objects, clients, ledger_live_objects(&l), median(pair, ROUNDS), median(fresh, ROUNDS),
	       median(reap, ROUNDS), median(eng, ROUNDS), median(chan, ROUNDS), median(subdev, ROUNDS),
	       rss_start, rss_filled, rss_clients,
	       objects ? (double)(rss_filled - rss_start) * KIB / objects : 0.0,
	       clients ? (double)(rss_clients - rss_filled) * KIB / clients : 0.0);
	ledger_fini(&l);
	return 0;
}
