/* SPDX-License-Identifier: MIT */
/*
 * ioctl_time - an LD_PRELOAD library that times every ioctl() a process
 * makes through libc, by kind, so that the same program's calls can be
 * compared natively and under gpusandbox (issue #16: where PyTorch init's
 * extra time goes). Under the sandbox a trapped call's time as the
 * workload sees it includes the trap and the supervisor's work.
 *
 *   cc -O2 -shared -fPIC -o ioctl_time.so tests/gpu/ioctl_time.c -ldl
 *   IOCTL_TIME_DIR=dir LD_PRELOAD=./ioctl_time.so program ...
 *
 * At exit each process writes dir/PID.txt, one line per kind:
 *   KIND VALUE COUNT TOTAL_NS MAX_NS
 * KIND: alloc (VALUE: the RM class), control (the control command), rm
 * (another RM escape number), uvm (a UVM command), other (the request
 * word). A first line "# wall_ns N calls_ns M" gives the process's time
 * from load to exit and its time inside ioctl. Summed across runs by
 * tests/gpu/ioctl_time_summary.py. Nothing here decides anything: it is a
 * measuring tool for the GPU runs (docs/perf.md).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvrm_abi.h"

#define SLOTS 4096u /* distinct (kind, value) pairs; far more than CUDA uses */
#define UVM_MAX_CMD 0x1000ul /* UVM's commands are small plain integers */
#define NVOS21_CLASS_OFF 12  /* hClass in NVOS21 and NVOS64 alike */
#define NVOS54_CMD_OFF 8     /* cmd in NVOS54 */
#define PATH_MAX_LEN 512

enum kind { K_EMPTY, K_ALLOC, K_CONTROL, K_RM, K_UVM, K_OTHER };
static const char *const kind_names[] = { "?", "alloc", "control", "rm", "uvm", "other" };

struct slot {
	_Atomic uint64_t key; /* kind << 32 | value; 0: empty */
	_Atomic uint64_t count, total_ns, max_ns;
};

static struct slot slots[SLOTS];
static _Atomic uint64_t calls_ns;
static uint64_t loaded_ns;
static int (*real_ioctl)(int, unsigned long, ...);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t key_of(unsigned long req, const void *arg)
{
	uint32_t v;

	if (req < UVM_MAX_CMD)
		return (uint64_t)K_UVM << 32 | (uint32_t)req;
	if (((req >> 8) & 0xff) != NV_IOCTL_MAGIC || !arg)
		return (uint64_t)K_OTHER << 32 | (uint32_t)req;
	switch (NV_IOC_NR(req)) {
	case NV_ESC_RM_ALLOC:
		memcpy(&v, (const char *)arg + NVOS21_CLASS_OFF, sizeof(v));
		return (uint64_t)K_ALLOC << 32 | v;
	case NV_ESC_RM_CONTROL:
		memcpy(&v, (const char *)arg + NVOS54_CMD_OFF, sizeof(v));
		return (uint64_t)K_CONTROL << 32 | v;
	default:
		return (uint64_t)K_RM << 32 | NV_IOC_NR(req);
	}
}

static struct slot *slot_of(uint64_t key)
{
	for (unsigned i = 0, h = (unsigned)(key * 0x9e3779b97f4a7c15ull >> 52); i < SLOTS; i++) {
		struct slot *s = &slots[(h + i) % SLOTS];
		uint64_t k = atomic_load(&s->key), zero = 0;
		if (k == key)
			return s;
		if (k == 0 && atomic_compare_exchange_strong(&s->key, &zero, key))
			return s;
		if (atomic_load(&s->key) == key)
			return s;
	}
	return NULL;
}

static void note(uint64_t key, uint64_t ns)
{
	struct slot *s = slot_of(key);

	atomic_fetch_add(&calls_ns, ns);
	if (!s)
		return;
	atomic_fetch_add(&s->count, 1);
	atomic_fetch_add(&s->total_ns, ns);
	uint64_t m = atomic_load(&s->max_ns);
	while (ns > m && !atomic_compare_exchange_weak(&s->max_ns, &m, ns))
		;
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!real_ioctl)
		real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	uint64_t key = key_of(req, arg);
	uint64_t t0 = now_ns();
	int rc = real_ioctl(fd, req, arg);
	note(key, now_ns() - t0);
	return rc;
}

/* A forked child starts its own account: what it inherited is its
 * parent's, written by the parent. */
static void reset_in_child(void)
{
	memset(slots, 0, sizeof(slots));
	atomic_store(&calls_ns, 0);
	loaded_ns = now_ns();
}

__attribute__((constructor)) static void on_load(void)
{
	loaded_ns = now_ns();
	pthread_atfork(NULL, NULL, reset_in_child);
}

__attribute__((destructor)) static void on_exit_write(void)
{
	const char *dir = getenv("IOCTL_TIME_DIR");
	char path[PATH_MAX_LEN];

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%d.txt", dir, (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "# wall_ns %llu calls_ns %llu\n", (unsigned long long)(now_ns() - loaded_ns),
	        (unsigned long long)atomic_load(&calls_ns));
	for (unsigned i = 0; i < SLOTS; i++) {
		uint64_t k = atomic_load(&slots[i].key);
		if (!k)
			continue;
		fprintf(f, "%s 0x%x %llu %llu %llu\n", kind_names[k >> 32], (unsigned)(uint32_t)k,
		        (unsigned long long)slots[i].count, (unsigned long long)slots[i].total_ns,
		        (unsigned long long)slots[i].max_ns);
	}
	fclose(f);
}
