/* SPDX-License-Identifier: MIT */
/*
 * race_size - time-of-check/time-of-use attack on the RM_ALLOC parameters.
 *
 * Thread A holds 768 MiB (3 chunks), then repeatedly issues one class-0x40
 * RM_ALLOC from a shared NVOS64 + NV_MEMORY_ALLOCATION_PARAMS pair and frees
 * whatever it got. Thread B spins rewriting those parameters while A is
 * trapped in the supervisor, so that a supervisor which checks the bytes and
 * then lets the kernel re-read them (CONTINUE) would have the driver
 * allocate something other than what was checked. Modes (argv[1]):
 *
 *   size   nested size flips 256 MiB (fits) <-> 8 GiB (does not)
 *   class  top-level hClass flips 0x3e (sysmem, not charged) <-> 0x40,
 *          nested size fixed at 512 MiB (over quota as vidmem)
 *   both   (8 GiB, 0x40) <-> (256 MiB, 0x3e), size and class together
 *   ptr    top-level pAllocParms flips between a 256 MiB and an 8 GiB
 *          params block (each block itself never changes)
 *   proc   like size, but the rewriting is done by another PROCESS that
 *          shares the memory (MAP_SHARED), which stopping the workload's
 *          other threads would not stop
 *   all    all of them in turn (default)
 *
 * A supervisor that performs the call from its own copy lets the driver see
 * exactly what it checked: each attempt is either a fitting allocation or
 * NV_ERR_NO_MEMORY, and the driver's peak stays <= 1 GiB. Without one, the
 * fake driver sees 8 GiB (or a 512 MiB vidmem) some of the time.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adv.h"

#define RACE_HOLD_CHUNKS   3                    /* 768 MiB held before racing */
#define RACE_SMALL         ADV_CHUNK            /* fits next to the hold */
#define RACE_BIG           (8ull * RMC_GIB)     /* never fits */
#define RACE_CLASS_SIZE    (512ull * RMC_MIB)   /* fits only as sysmem */
#define RACE_MAX_ITERS     1500
/* A race that has seen both outcomes (a grant and a refusal) may stop
 * after this long; one that has not goes on to RACE_MAX_ITERS. The clock
 * only shortens a run that already proved itself: on a loaded machine,
 * where the flipper seldom runs, the race is not cut short before both
 * outcomes (what run.sh checks) could be seen. */
#define RACE_SECONDS       2.0
/* Busy-wait between two rewrites so each state lasts long enough to be
 * read, instead of the second store following the first at once. */
#define RACE_DWELL_SPINS   64
/* attr with LOCATION = PCI (sysmem), so the 0x3e form is a valid one. */
#define RACE_ATTR_SYSMEM   (1u << NVOS32_ATTR_LOCATION_SHIFT)

enum race_mode { MODE_SIZE, MODE_CLASS, MODE_BOTH, MODE_PTR, MODE_PROC, MODE_COUNT };
static const char *const mode_names[MODE_COUNT] = { "size", "class", "both", "ptr", "proc" };

/* The raced memory, in a MAP_SHARED mapping so that the "proc" mode's
 * separate process writes the very bytes A passes. Aligned fields so every
 * store B makes is one atomic 4- or 8-byte write: A's call sees either
 * state, never a torn mix. */
struct race_mem {
	struct nvos64 args __attribute__((aligned(64)));
	struct nv_memory_allocation_params params __attribute__((aligned(64)));
	/* For MODE_PTR: two fixed blocks pAllocParms alternates between. */
	struct nv_memory_allocation_params small __attribute__((aligned(64)));
	struct nv_memory_allocation_params big __attribute__((aligned(64)));
	int stop;
	unsigned long flips;  /* B's full rounds (both states), for A's wait */
	enum race_mode mode;
};
static struct race_mem *R_;
#define R (*R_) /* short name for the shared block */

static void dwell(void)
{
	for (volatile int i = 0; i < RACE_DWELL_SPINS; i++)
		;
}

static void set_state(int over)
{
	switch (R.mode) {
	case MODE_SIZE:
	case MODE_PROC:
		__atomic_store_n(&R.params.size, over ? RACE_BIG : RACE_SMALL, __ATOMIC_RELAXED);
		break;
	case MODE_PTR:
		__atomic_store_n(&R.args.p_alloc_parms,
				 (uint64_t)(uintptr_t)(over ? &R.big : &R.small), __ATOMIC_RELAXED);
		break;
	case MODE_CLASS:
		__atomic_store_n(&R.args.h_class, over ? NV01_MEMORY_LOCAL_USER : NV01_MEMORY_SYSTEM,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&R.params.attr, over ? 0u : RACE_ATTR_SYSMEM, __ATOMIC_RELAXED);
		break;
	case MODE_BOTH:
	default:
		__atomic_store_n(&R.params.size, over ? RACE_BIG : RACE_SMALL, __ATOMIC_RELAXED);
		__atomic_store_n(&R.args.h_class, over ? NV01_MEMORY_LOCAL_USER : NV01_MEMORY_SYSTEM,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&R.params.attr, over ? 0u : RACE_ATTR_SYSMEM, __ATOMIC_RELAXED);
		break;
	}
}

static void *flipper(void *unused)
{
	(void)unused;
	while (!__atomic_load_n(&R.stop, __ATOMIC_RELAXED)) {
		set_state(1);
		dwell();
		set_state(0);
		dwell();
		__atomic_add_fetch(&R.flips, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void race(struct rmc_session *s, enum race_mode mode, struct adv_tally *t)
{
	pthread_t b;
	pid_t flip_pid = -1;
	double deadline;
	int iters = 0;

	memset(&R, 0, sizeof(R));
	R.mode = mode;
	rmc_fill_vidmem_params(&R.params, s->client,
			       mode == MODE_CLASS ? RACE_CLASS_SIZE : RACE_SMALL);
	rmc_fill_vidmem_params(&R.small, s->client, RACE_SMALL);
	rmc_fill_vidmem_params(&R.big, s->client, RACE_BIG);
	R.args.h_class = NV01_MEMORY_LOCAL_USER;
	R.args.p_alloc_parms = (uint64_t)(uintptr_t)&R.params;
	if (mode == MODE_PROC) {
		fflush(stdout);
		flip_pid = fork();
		if (flip_pid == 0) {
			flipper(NULL);
			_exit(0);
		}
		if (flip_pid < 0) {
			printf("mode=%s: fork failed\n", mode_names[mode]);
			return;
		}
	} else if (pthread_create(&b, NULL, flipper, NULL) != 0) {
		printf("mode=%s: pthread_create failed\n", mode_names[mode]);
		return;
	}

	deadline = now_s() + RACE_SECONDS;
	while (iters < RACE_MAX_ITERS && !(t->ok >= 1 && t->nomem >= 1 && now_s() >= deadline)) {
		nv_handle_t h = rmc_next_handle(s);
		rmc_status_t st;
		int r;

		/* B has flipped since A's last call: on a loaded machine B may
		 * not run for a whole time slice, and a race whose calls all
		 * met one state proved nothing (the class baseline once saw
		 * only sysmem). Not a clock: B's own count. */
		unsigned long f0 = __atomic_load_n(&R.flips, __ATOMIC_RELAXED);
		while (__atomic_load_n(&R.flips, __ATOMIC_RELAXED) == f0)
			sched_yield();
		/* Everything but the raced fields is A's to reset. */
		R.args.h_root = s->client;
		R.args.h_object_parent = s->device;
		R.args.h_object_new = h;
		R.args.params_size = 0;
		R.args.status = NV_OK;
		R.params.owner = s->client;
		r = rmc_escape(s->fd, NULL, NV_ESC_RM_ALLOC, &R.args, sizeof(R.args));
		st = r < 0 ? RMC_SYSERR(-r) : R.args.status;
		adv_count(t, st);
		/* Whatever A got (a fitting chunk or sysmem) goes back at once,
		 * so each attempt starts at the 768 MiB edge again. */
		if (st == NV_OK)
			(void)rmc_free(s->fd, NULL, s->client, s->device, h);
		iters++;
	}
	__atomic_store_n(&R.stop, 1, __ATOMIC_RELAXED);
	if (flip_pid > 0)
		waitpid(flip_pid, NULL, 0);
	else
		pthread_join(b, NULL);
	printf("mode=%s iters=%d ok=%d nomem=%d other=%d\n", mode_names[mode], iters, t->ok,
	       t->nomem, t->other);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct rmc_session s;
	struct adv_tally total = { 0 };
	nv_handle_t hold[RACE_HOLD_CHUNKS];
	int held = 0;
	int first = 0, last = MODE_COUNT - 1;

	if (argc > 1 && strcmp(argv[1], "all") != 0) {
		for (first = 0; first < MODE_COUNT; first++)
			if (strcmp(argv[1], mode_names[first]) == 0)
				break;
		if (first == MODE_COUNT) {
			fprintf(stderr, "usage: race_size [size|class|both|ptr|proc|all]\n");
			return ADV_EXIT_SETUP;
		}
		last = first;
	}

	R_ = mmap(NULL, sizeof(*R_), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (R_ == MAP_FAILED) {
		perror("mmap");
		return ADV_EXIT_SETUP;
	}
	adv_session_or_die(&s, -1, "race_size");
	for (int i = 0; i < RACE_HOLD_CHUNKS; i++) {
		nv_handle_t h = rmc_next_handle(&s);
		rmc_status_t st = rmc_alloc_vidmem(s.fd, NULL, s.client, s.device, h, ADV_CHUNK);

		if (st == NV_OK)
			hold[held++] = h;
		else
			printf("hold chunk %d: %s\n", i, rmc_status_str(st));
	}
	printf("hold=%d MiB\n", (int)(held * (ADV_CHUNK / RMC_MIB)));

	for (int m = first; m <= last; m++) {
		struct adv_tally t = { 0 };

		race(&s, (enum race_mode)m, &t);
		adv_add(&total, &t);
	}
	while (held > 0)
		(void)rmc_free(s.fd, NULL, s.client, s.device, hold[--held]);
	adv_print_summary(&total);
	return 0;
}
