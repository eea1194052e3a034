/* SPDX-License-Identifier: MIT */
/*
 * uvm_hold - video memory kept past its handle by a UVM external mapping
 * (issue #17 item 9).
 *
 * UVM_MAP_EXTERNAL_ALLOCATION dups the RM memory it maps and keeps it for
 * as long as the mapping lives (uvm_map_external.c, 580.95.05; modelled by
 * the fake, fake_uvm.c). So: allocate 768 MiB (A), create an external
 * range and map A there, free A's handle, then allocate 768 MiB (B). The
 * driver still holds A: with B granted it holds 1.5 GiB, past --mem 1g.
 * Judged by the fake driver's own peak, never the supervisor's word.
 *
 *   uvm_hold free   A's handle freed with RM_FREE
 *   uvm_hold close  A's client dies with its control file (closed), and B
 *                   is made by a second client
 *   uvm_hold race   while the map is in the driver's hands, a second
 *                   thread flips its hMemory between A and a 2 MiB C (a
 *                   continued map would have mapped what the flip left)
 *   uvm_hold p2p    A backs a range of P2P pages (UVM_ALLOC_DEVICE_P2P)
 *                   instead of a mapping: the same hold
 *
 * A second argument WAIT (tests/agent's uvmrestart-runc): once A is
 * mapped, writes WAIT.ready and waits until the file WAIT exists before
 * it frees A (the agent is restarted meanwhile).
 *
 * Prints map= free= second= (hex RM status; free is the close's errno
 * there) and, for race, flips=; then SUMMARY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "adv.h"

#define HOLD_SIZE (768ull * RMC_MIB)
#define SMALL_SIZE (2ull * RMC_MIB)
/* Where the range lies in the VA space (UVM wants 4 KiB alignment; the
 * fake wants the mapping on the memory's page size, 2 MiB). */
#define RANGE_BASE 0x7f2000000000ull
#define MAX_GPUS UVM_MAX_GPUS_570 /* the fake plays 580 */
#define FLIP_ROUNDS 2000
#define WAIT_STEP_NS 20000000L       /* 20 ms */
#define WAIT_MAX_STEPS 1500          /* 30 s */
#define PATH_LEN 512

struct map_call {
	uint8_t bytes[UVM_MAP_EXTERNAL_SIZE(MAX_GPUS)];
};

static struct uvm_map_external_tail *tail_of(struct map_call *m)
{
	return (struct uvm_map_external_tail *)(m->bytes + UVM_MAP_EXTERNAL_TAIL_OFF(MAX_GPUS));
}

static void fill_map(struct map_call *m, int ctl, nv_handle_t client, nv_handle_t mem, uint64_t len)
{
	struct uvm_map_external_head head = { .base = RANGE_BASE, .length = len };
	struct uvm_gpu_mapping_attrs gpu = { .gpu_uuid = { 0x11 } };

	memset(m, 0, sizeof(*m));
	memcpy(m->bytes, &head, sizeof(head));
	memcpy(m->bytes + sizeof(head), &gpu, sizeof(gpu));
	*tail_of(m) = (struct uvm_map_external_tail){ .gpu_count = 1, .rm_ctrl_fd = ctl,
	                                              .h_client = client, .h_memory = mem,
	                                              .rm_status = NV_ERR_GENERIC };
}

/* /dev/nvidia-uvm, initialized, with an external range of len bytes. */
static int uvm_with_range(uint64_t len)
{
	int fd = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
	struct uvm_initialize_params init = { 0 };
	struct uvm_create_external_range_params range = { .base = RANGE_BASE, .length = len };

	if (fd < 0 || syscall(SYS_ioctl, fd, UVM_INITIALIZE, &init) < 0 ||
	    syscall(SYS_ioctl, fd, UVM_CREATE_EXTERNAL_RANGE, &range) < 0 || range.rm_status != NV_OK) {
		printf("uvm_hold: UVM setup failed (range status 0x%x)\n", range.rm_status);
		fflush(stdout);
		exit(ADV_EXIT_SETUP);
	}
	return fd;
}

static rmc_status_t map(int uvm, struct map_call *m)
{
	if (syscall(SYS_ioctl, uvm, UVM_MAP_EXTERNAL_ALLOCATION, m->bytes) < 0)
		return RMC_SYSERR(errno);
	return tail_of(m)->rm_status;
}

/* The flipper of the race: hMemory between a and c until told to stop. */
struct flip {
	struct map_call *m;
	nv_handle_t a, c;
	atomic_bool stop;
	unsigned long flips;
};

static void *flipper(void *arg)
{
	struct flip *f = arg;
	volatile nv_handle_t *h = &tail_of(f->m)->h_memory;

	while (!atomic_load(&f->stop)) {
		*h = f->a;
		*h = f->c;
		f->flips++;
	}
	return NULL;
}

/* The race: the map is made FLIP_ROUNDS times (each over the last) while
 * the flipper runs; a supervisor that read hMemory once and let the
 * driver read it again could pin one and map the other. */
static rmc_status_t map_racing(int uvm, struct map_call *m, nv_handle_t a, nv_handle_t c,
                               unsigned long *flips)
{
	struct flip f = { .m = m, .a = a, .c = c };
	pthread_t t;
	rmc_status_t st = NV_ERR_GENERIC;

	if (pthread_create(&t, NULL, flipper, &f) != 0)
		return RMC_SYSERR(EAGAIN);
	for (int i = 0; i < FLIP_ROUNDS; i++) {
		tail_of(m)->rm_status = NV_ERR_GENERIC;
		rmc_status_t r = map(uvm, m);
		if (r == NV_OK)
			st = NV_OK;
	}
	atomic_store(&f.stop, true);
	pthread_join(t, NULL);
	/* The last map names A, as the attacker wants it held. */
	tail_of(m)->h_memory = a;
	rmc_status_t last = map(uvm, m);
	*flips = f.flips;
	return st == NV_OK ? last : st;
}

/* WAIT.ready, then WAIT itself (made by the harness). */
static void wait_for_go(const char *wait)
{
	struct timespec step = { 0, WAIT_STEP_NS };
	char ready[PATH_LEN];
	int fd;

	snprintf(ready, sizeof(ready), "%s.ready", wait);
	fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < WAIT_MAX_STEPS && access(wait, F_OK) != 0; i++)
		nanosleep(&step, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "free";
	struct rmc_session s, s2;
	struct adv_tally t = { 0 };
	static struct map_call m;
	nv_handle_t a, b, c = 0;
	rmc_status_t first, mapped, freed = NV_OK, second;
	unsigned long flips = 0;

	adv_session_or_die(&s, -1, "uvm_hold");
	a = rmc_next_handle(&s);
	first = adv_alloc_rm(&s, NULL, a, HOLD_SIZE);
	adv_count(&t, first);
	int uvm = uvm_with_range(HOLD_SIZE);
	fill_map(&m, s.fd, s.client, a, HOLD_SIZE);
	if (strcmp(mode, "p2p") == 0) {
		struct uvm_free_params gone = { .base = RANGE_BASE, .length = HOLD_SIZE };
		struct uvm_alloc_device_p2p_params p = { .base = RANGE_BASE, .length = HOLD_SIZE,
		                                         .gpu_uuid = { 0x11 }, .rm_ctrl_fd = s.fd,
		                                         .h_client = s.client, .h_memory = a,
		                                         .rm_status = NV_ERR_GENERIC };
		/* The P2P range is a range of its own: the external one goes. */
		(void)syscall(SYS_ioctl, uvm, UVM_FREE, &gone);
		mapped = syscall(SYS_ioctl, uvm, UVM_ALLOC_DEVICE_P2P, &p) < 0 ? RMC_SYSERR(errno)
		                                                                : p.rm_status;
	} else if (strcmp(mode, "race") == 0) {
		c = rmc_next_handle(&s);
		adv_count(&t, adv_alloc_rm(&s, NULL, c, SMALL_SIZE));
		mapped = map_racing(uvm, &m, a, c, &flips);
	} else {
		mapped = map(uvm, &m);
	}
	if (argc > 2)
		wait_for_go(argv[2]);
	if (strcmp(mode, "close") == 0) {
		/* The client, and A's handle with it, die with the file. */
		freed = close(s.fd) == 0 ? NV_OK : RMC_SYSERR(errno);
		adv_session_or_die(&s2, -1, "uvm_hold");
	} else {
		freed = adv_free_rm(&s, NULL, a);
		if (c)
			(void)adv_free_rm(&s, NULL, c);
		s2 = s;
	}
	b = rmc_next_handle(&s2);
	second = adv_alloc_rm(&s2, NULL, b, HOLD_SIZE);
	adv_count(&t, second);

	printf("mode=%s first=0x%x map=0x%x free=0x%x second=0x%x flips=%lu\n", mode, first, mapped,
	       freed, second, flips);
	adv_print_summary(&t);
	close(uvm);
	return 0;
}
