/* SPDX-License-Identifier: MIT */
/*
 * rmbench.c - per-call cost of RM calls in the shape of CUDA's 2 MiB
 * cuMemAlloc + cuMemFree (shared/traces: RM_ALLOC 0x40, RM_CONTROL
 * 0x503c0104 REGISTER_VIDMEM, 0x503c0105 UNREGISTER_VIDMEM, RM_FREE),
 * timed from inside the workload, natively or under gpusandbox.
 *
 *   rmbench [-n PAIRS] [-s SIZE] [-p LIVE_OBJECTS] [-k CLIENTS] [-r] [-u] [-N NEW_CLIENTS]
 *           [-w MS]
 *
 * The registration registers the allocation's whole 64 KiB pages, as the
 * driver wants: a SIZE under 64 KiB needs -r.
 * -u maps each allocation through UVM after its RM_ALLOC, as every
 * cuMemAlloc does since CUDA maps what it allocates
 * (UVM_MAP_EXTERNAL_ALLOCATION, into one external range made at start,
 * each map replacing the last): a pair is then five trapped calls. A
 * resident allocation stays mapped in a range of its own throughout, as
 * a CUDA context's own buffers do, so the UVM file keeps a mapping (the
 * supervisor lets a UVM file and its mappers go with its last mapping).
 * -p prefills that many live objects (4 KiB allocations) before the loop,
 * -k opens that many other clients (each on its own control file), -r
 * leaves out the two registration controls, -N times the creation and
 * free of that many new clients (open, RM_ALLOC client, RM_FREE, close)
 * after the loop, -w sleeps that long before the loop (time for a tracer
 * to attach to the supervisor once the set-up is done). It prints one line of "key=value" figures: medians in
 * microseconds per call and the number of each call made. It asserts
 * nothing about time: the figures are for reading (scripts/bench-fake.sh).
 * A call that fails stops the run with status 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/syscall.h>

#include "nvuvm_abi.h"
#include "rmclient.h"

#define CLASS_THIRD_PARTY_P2P   0x503cu
#define CMD_REGISTER_VIDMEM     0x503c0104u
#define CMD_UNREGISTER_VIDMEM   0x503c0105u
/* NV503C_CTRL_REGISTER_VIDMEM_PARAMS {hMemory, address, size, offset}
 * and UNREGISTER's {hMemory}: inputs only (ctrl503c.h, 580). */
#define REGISTER_PARAMS_SIZE    32u
#define UNREGISTER_PARAMS_SIZE  4u
#define P2P_ALLOC_PARAMS_SIZE   4u
#define H_P2P                   0x5c0000f0u
#define PAIR_ADDRESS            0x7f0000000000ull
#define H_PREFILL_BASE          0x5d000000u
#define PREFILL_SIZE            4096u
#define FD_HEADROOM             64u
#define DEFAULT_PAIRS           2000u
/* -u: where the external range lies (2 MiB aligned: the memory's page
 * size), and the map's struct on the branches the fake plays up to 580. */
#define UVM_RANGE_BASE          0x7f4000000000ull
#define UVM_RESIDENT_BASE       0x7f5000000000ull
#define H_RESIDENT              0x5c0000f1u
#define UVM_MAP_GPUS            UVM_MAX_GPUS_570
#define UVM_GPU_UUID_BYTE       0x11u

enum { T_ALLOC, T_MAP, T_REG, T_UNREG, T_FREE, T_CLIENT, T_CLIENT_FREE, N_TIMERS };
static const char *const timer_name[N_TIMERS] = {
	"alloc", "map", "register", "unregister", "free", "client_alloc", "client_free",
};

/* -u: the UVM file (-1: no map) and the map's struct. */
static int uvm_fd = -1;
static uint8_t map_bytes[UVM_MAP_EXTERNAL_SIZE(UVM_MAP_GPUS)];

static struct uvm_map_external_tail *map_tail(void)
{
	return (struct uvm_map_external_tail *)(map_bytes + UVM_MAP_EXTERNAL_TAIL_OFF(UVM_MAP_GPUS));
}

static rmc_status_t uvm_range(uint64_t base, uint64_t size)
{
	struct uvm_create_external_range_params range = { .base = base, .length = size };

	if (syscall(SYS_ioctl, uvm_fd, UVM_CREATE_EXTERNAL_RANGE, &range) < 0)
		return RMC_SYSERR(errno);
	return range.rm_status;
}

static rmc_status_t uvm_map(const struct rmc_session *r, uint64_t base, nv_handle_t h, uint64_t size)
{
	struct uvm_map_external_head head = { .base = base, .length = size };
	struct uvm_gpu_mapping_attrs gpu;

	memset(&gpu, 0, sizeof(gpu));
	memset(gpu.gpu_uuid, UVM_GPU_UUID_BYTE, sizeof(gpu.gpu_uuid));
	memcpy(map_bytes, &head, sizeof(head));
	memcpy(map_bytes + sizeof(head), &gpu, sizeof(gpu));
	*map_tail() = (struct uvm_map_external_tail){ .gpu_count = 1, .rm_ctrl_fd = r->fd, .h_client = r->client,
	                                              .h_memory = h, .rm_status = NV_ERR_GENERIC };
	if (syscall(SYS_ioctl, uvm_fd, UVM_MAP_EXTERNAL_ALLOCATION, map_bytes) < 0)
		return RMC_SYSERR(errno);
	return map_tail()->rm_status;
}

struct samples {
	double  *us;
	unsigned n;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(struct samples *s)
{
	if (!s->n)
		return 0;
	qsort(s->us, s->n, sizeof(double), cmp_double);
	return s->us[s->n / 2];
}

static void die_on(rmc_status_t st, const char *what)
{
	if (st == NV_OK)
		return;
	fprintf(stderr, "rmbench: %s: %s\n", what, rmc_status_str(st));
	exit(1);
}

/* Records the time since t0 and passes the call's status on. */
static rmc_status_t timed_call(struct samples *s, rmc_status_t st, double t0)
{
	s->us[s->n++] = now_us() - t0;
	return st;
}

/* One pair as CUDA makes it: alloc, register, unregister, free. */
static void one_pair(struct rmc_session *r, uint64_t size, bool controls, struct samples t[N_TIMERS])
{
	nv_handle_t h = RMC_H_MEM_BASE;
	/* What the driver accepts (third_party_p2p_ctrl.c): the allocation's
	 * 64 KiB-aligned range at a 64 KiB-aligned address. */
	struct nv503c_register_vidmem_params reg = { .h_memory = h, .address = PAIR_ADDRESS,
	                                             .size = size & ~(uint64_t)(NV503C_P2P_PAGE_64K - 1) };
	uint32_t unreg = h;
	rmc_status_t st;
	double t0;

	t0 = now_us();
	st = rmc_alloc_vidmem(r->fd, NULL, r->client, r->device, h, size);
	die_on(timed_call(&t[T_ALLOC], st, t0), "RM_ALLOC 0x40");
	if (uvm_fd >= 0) {
		t0 = now_us();
		die_on(timed_call(&t[T_MAP], uvm_map(r, UVM_RANGE_BASE, h, size), t0), "UVM_MAP_EXTERNAL_ALLOCATION");
	}
	if (controls) {
		t0 = now_us();
		st = rmc_control(r->fd, NULL, r->client, H_P2P, CMD_REGISTER_VIDMEM, &reg,
		                 rmc_ctrl_size(CMD_REGISTER_VIDMEM, REGISTER_PARAMS_SIZE));
		die_on(timed_call(&t[T_REG], st, t0), "REGISTER_VIDMEM");
		t0 = now_us();
		st = rmc_control(r->fd, NULL, r->client, H_P2P, CMD_UNREGISTER_VIDMEM, &unreg,
		                 rmc_ctrl_size(CMD_UNREGISTER_VIDMEM, UNREGISTER_PARAMS_SIZE));
		die_on(timed_call(&t[T_UNREG], st, t0), "UNREGISTER_VIDMEM");
	}
	t0 = now_us();
	st = rmc_free(r->fd, NULL, r->client, r->device, h);
	die_on(timed_call(&t[T_FREE], st, t0), "RM_FREE");
}

/* A UVM file with the pairs' external range, and the resident mapping. */
static void uvm_setup(const struct rmc_session *r, uint64_t size)
{
	struct uvm_initialize_params init = { 0 };

	uvm_fd = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
	if (uvm_fd < 0)
		die_on(RMC_SYSERR(errno), "opening /dev/nvidia-uvm");
	if (syscall(SYS_ioctl, uvm_fd, UVM_INITIALIZE, &init) < 0)
		die_on(RMC_SYSERR(errno), "UVM_INITIALIZE");
	die_on(init.rm_status, "UVM_INITIALIZE");
	die_on(uvm_range(UVM_RANGE_BASE, size), "the pairs' external range");
	die_on(uvm_range(UVM_RESIDENT_BASE, size), "the resident range");
	die_on(rmc_alloc_vidmem(r->fd, NULL, r->client, r->device, H_RESIDENT, size), "the resident RM_ALLOC");
	die_on(uvm_map(r, UVM_RESIDENT_BASE, H_RESIDENT, size), "the resident map");
}

static void prefill(struct rmc_session *r, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		die_on(rmc_alloc_vidmem(r->fd, NULL, r->client, r->device, H_PREFILL_BASE + i,
		                        PREFILL_SIZE), "prefill RM_ALLOC");
}

static void open_clients(unsigned k)
{
	for (unsigned i = 0; i < k; i++) {
		int fd = rmc_open_ctl();
		nv_handle_t h = 0;
		if (fd < 0)
			die_on(RMC_SYSERR(-fd), "opening another control file");
		die_on(rmc_alloc_client(fd, NULL, &h), "another client");
	}
}

static void new_clients(unsigned n, struct samples t[N_TIMERS])
{
	for (unsigned i = 0; i < n; i++) {
		int fd = rmc_open_ctl();
		nv_handle_t h = 0;
		rmc_status_t st;
		double t0;

		if (fd < 0)
			die_on(RMC_SYSERR(-fd), "opening a control file");
		t0 = now_us();
		st = rmc_alloc_client(fd, NULL, &h);
		die_on(timed_call(&t[T_CLIENT], st, t0), "new client");
		t0 = now_us();
		st = rmc_free(fd, NULL, h, h, h);
		die_on(timed_call(&t[T_CLIENT_FREE], st, t0), "freeing the new client");
		close(fd);
	}
}

static void raise_fd_limit(unsigned k)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < k + FD_HEADROOM) {
		rl.rlim_cur = rl.rlim_max < k + FD_HEADROOM ? rl.rlim_max : k + FD_HEADROOM;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	unsigned pairs = DEFAULT_PAIRS, live = 0, clients = 0, fresh = 0, wait_ms = 0;
	uint64_t size = 2 * RMC_MIB;
	bool controls = true;
	struct rmc_session r;
	struct samples t[N_TIMERS];
	int opt;

	bool maps = false;

	while ((opt = getopt(argc, argv, "n:s:p:k:N:ruw:")) != -1) {
		switch (opt) {
		case 'n': pairs = (unsigned)strtoul(optarg, NULL, 0); break;
		case 's': if (rmc_parse_size(optarg, &size)) return 2; break;
		case 'p': live = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'k': clients = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'N': fresh = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'r': controls = false; break;
		case 'u': maps = true; break;
		case 'w': wait_ms = (unsigned)strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: rmbench [-n PAIRS] [-s SIZE] [-p LIVE] [-k CLIENTS] [-N NEW] [-r] [-u] [-w MS]\n");
			return 2;
		}
	}
	for (unsigned i = 0; i < N_TIMERS; i++) {
		unsigned cap = i == T_CLIENT || i == T_CLIENT_FREE ? fresh : pairs;
		t[i] = (struct samples){ calloc(cap ? cap : 1, sizeof(double)), 0 };
		if (!t[i].us)
			return 1;
	}
	raise_fd_limit(clients + fresh);
	die_on(rmc_session_open(&r, -1), "opening a session");
	if (controls) {
		uint32_t p2p_params = 0;
		nv_handle_t h = H_P2P;
		die_on(rmc_alloc(r.fd, NULL, r.client, r.subdevice, &h, CLASS_THIRD_PARTY_P2P, &p2p_params,
		                 P2P_ALLOC_PARAMS_SIZE), "RM_ALLOC NV50_THIRD_PARTY_P2P");
	}
	if (maps)
		uvm_setup(&r, size);
	prefill(&r, live);
	open_clients(clients);
	if (wait_ms)
		usleep(wait_ms * 1000u);
	double t0 = now_us();
	for (unsigned i = 0; i < pairs; i++)
		one_pair(&r, size, controls, t);
	double loop = now_us() - t0;
	new_clients(fresh, t);
	printf("pairs=%u size=%llu live=%u clients=%u pair_us=%.2f", pairs, (unsigned long long)size,
	       live, clients, pairs ? loop / pairs : 0.0);
	for (unsigned i = 0; i < N_TIMERS; i++)
		if (t[i].n)
			printf(" %s_us=%.2f", timer_name[i], median(&t[i]));
	printf("\n");
	return 0;
}
