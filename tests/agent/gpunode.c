/* SPDX-License-Identifier: MIT */
/*
 * gpunode - a static client for the agent tier's gpunode-runc case: one
 * container's device allocation must not pass the driver's check on
 * another container's GPU node.
 *
 * The driver grants an NV01_DEVICE_0 to a process that holds the GPU's
 * node anywhere in its fd table (nv_is_gpu_accessible; the fake models it
 * with --gpu-node-check, tests/fakedrv/fake_nodes.c). The agent performs
 * every container's device allocations from one process, with the
 * container's own nodes borrowed for the call.
 *
 *   gpunode hold INSTANCE STOP PAD
 *     (container A, given nvidia0) opens /dev/nvidia0, then PAD more fds
 *     (of /dev/null) above it: the agent's borrow reads every fd of ours,
 *     so it holds nvidia0 (our lowest) through PAD more reads, a wider
 *     window. Then makes and frees devices on INSTANCE until the file
 *     STOP exists, writing STOP.ready after the first. Prints
 *     "hold devices=N failed=M first=STATUS".
 *   gpunode race INSTANCE MS MIN
 *     (container B, given nvidia1 only) opens /dev/nvidia1 and tries a
 *     device on INSTANCE (GPU 0's) for MS milliseconds and at least MIN
 *     times, stopping at the first one granted. Prints "race attempts=N
 *     wins=W refused=STATUS".
 *   gpunode stall FILE MARK
 *     (container A of gpunode-stall-runc, given nvidia0) makes one
 *     RM_CONTROL on its /dev/nvidia0 fd whose NVOS54 lies in a page mapped
 *     from FILE (tests/sm/stallfs: its reads answer when released), never
 *     touched by us: the agent's worker for A waits in its read of our
 *     memory while holding its dup of our nvidia0. Creates MARK.start just
 *     before the call and MARK.done after it. Prints
 *     "stall start=T0 end=T1" (CLOCK_MONOTONIC ms).
 *   gpunode own INSTANCE N
 *     (container B, given nvidia1) opens /dev/nvidia1 and the control node,
 *     makes and frees N devices on INSTANCE (its own GPU), then a client on
 *     a second control file (a first call on a fresh file). Prints
 *     "own devices=D failed=F client=STATUS start=T0 end=T1".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adv.h"

#define H_DEVICE 0x6e0de000u
#define PATH_LEN 512
#define NS_PER_MS 1000000LL
#define MS_PER_S 1000LL
#define EXIT_USAGE 2

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * MS_PER_S + ts.tv_nsec / NS_PER_MS;
}

static rmc_status_t make_device(int fd, nv_handle_t client, uint32_t instance)
{
	struct nv0080_alloc_params p = { .device_id = instance, .h_client_share = client };
	nv_handle_t h = H_DEVICE;

	return rmc_alloc(fd, NULL, client, client, &h, NV01_DEVICE_0, &p, 0);
}

/* Our control file and a client on it, or exit. */
static int client_or_die(nv_handle_t *client)
{
	int fd = rmc_open_ctl();

	if (fd < 0 || rmc_alloc_client(fd, NULL, client) != NV_OK) {
		fprintf(stderr, "gpunode: no client\n");
		exit(ADV_EXIT_SETUP);
	}
	return fd;
}

static int hold(uint32_t instance, const char *stop, unsigned pad)
{
	char ready[PATH_LEN];
	unsigned devices = 0, failed = 0;
	rmc_status_t first = NV_OK;
	nv_handle_t client;

	if (open("/dev/nvidia0", O_RDWR) < 0)
		return ADV_EXIT_SETUP;
	for (unsigned i = 0; i < pad; i++)
		if (open("/dev/null", O_RDONLY) < 0)
			return ADV_EXIT_SETUP;
	int fd = client_or_die(&client);
	snprintf(ready, sizeof(ready), "%s.ready", stop);
	while (access(stop, F_OK) != 0) {
		rmc_status_t st = make_device(fd, client, instance);
		if (st != NV_OK) {
			if (!failed++)
				first = st;
			continue;
		}
		if (devices++ == 0)
			close(open(ready, O_WRONLY | O_CREAT, 0644));
		(void)rmc_free(fd, NULL, client, client, H_DEVICE);
	}
	printf("hold devices=%u failed=%u first=%s\n", devices, failed, rmc_status_str(first));
	return 0;
}

/* Tries until it wins, or until both ms have passed and min_attempts were
 * made: the clock alone does not end a race that a loaded machine slowed
 * (run.sh judges the attempts). */
static int race(uint32_t instance, long long ms, unsigned min_attempts)
{
	unsigned attempts = 0, wins = 0;
	rmc_status_t refused = NV_OK;
	nv_handle_t client;

	/* GPU 1's node when there is one; on a one-GPU machine, no GPU node
	 * at all (tests/gpu/gpunode_real.sh): a stronger case still. */
	if (open("/dev/nvidia1", O_RDWR) < 0 && errno != ENOENT)
		return ADV_EXIT_SETUP;
	int fd = client_or_die(&client);
	for (long long end = now_ms() + ms; (now_ms() < end || attempts < min_attempts) && !wins; attempts++) {
		rmc_status_t st = make_device(fd, client, instance);
		if (st == NV_OK)
			wins++;
		else
			refused = st;
	}
	printf("race attempts=%u wins=%u refused=%s\n", attempts, wins, rmc_status_str(refused));
	return 0;
}

static void mark(const char *base, const char *suffix)
{
	char path[PATH_LEN];

	snprintf(path, sizeof(path), "%s%s", base, suffix);
	close(open(path, O_WRONLY | O_CREAT, 0644));
}

static int stall(const char *file, const char *mark_base)
{
	int gpu = open("/dev/nvidia0", O_RDWR);
	int sf = open(file, O_RDONLY);
	void *page = sf >= 0 ? mmap(NULL, sizeof(struct nvos54), PROT_READ, MAP_SHARED, sf, 0)
	                     : MAP_FAILED;

	if (gpu < 0 || page == MAP_FAILED)
		return ADV_EXIT_SETUP;
	mark(mark_base, ".start");
	long long t0 = now_ms();
	(void)rmc_escape(gpu, NULL, NV_ESC_RM_CONTROL, page, sizeof(struct nvos54));
	long long t1 = now_ms();
	mark(mark_base, ".done");
	printf("stall start=%lld end=%lld\n", t0, t1);
	return 0;
}

static int own(uint32_t instance, unsigned n)
{
	unsigned devices = 0, failed = 0;
	nv_handle_t client, second;
	long long t0 = now_ms();

	/* GPU 1's node when there is one; on a one-GPU machine, no GPU node
	 * at all (tests/gpu/gpunode_real.sh): a stronger case still. */
	if (open("/dev/nvidia1", O_RDWR) < 0 && errno != ENOENT)
		return ADV_EXIT_SETUP;
	int fd = client_or_die(&client);
	for (unsigned i = 0; i < n; i++) {
		if (make_device(fd, client, instance) != NV_OK) {
			failed++;
			continue;
		}
		devices++;
		(void)rmc_free(fd, NULL, client, client, H_DEVICE);
	}
	int fd2 = rmc_open_ctl();
	rmc_status_t st = fd2 < 0 ? NV_ERR_GENERIC : rmc_alloc_client(fd2, NULL, &second);
	long long t1 = now_ms();
	printf("own devices=%u failed=%u client=%s start=%lld end=%lld\n", devices, failed,
	       rmc_status_str(st), t0, t1);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "hold") == 0)
		return hold((uint32_t)strtoul(argv[2], NULL, 0), argv[3], (unsigned)atoi(argv[4]));
	if (argc == 5 && strcmp(argv[1], "race") == 0)
		return race((uint32_t)strtoul(argv[2], NULL, 0), atoll(argv[3]), (unsigned)atoi(argv[4]));
	if (argc == 4 && strcmp(argv[1], "stall") == 0)
		return stall(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "own") == 0)
		return own((uint32_t)strtoul(argv[2], NULL, 0), (unsigned)atoi(argv[3]));
	fprintf(stderr, "usage: gpunode hold INSTANCE STOP PAD | race INSTANCE MS MIN | stall FILE MARK |"
	                " own INSTANCE N\n");
	return EXIT_USAGE;
}
