/* SPDX-License-Identifier: MIT */
/*
 * continue_swap - an RM call the supervisor continues because its fd is
 * not the driver's, run by the kernel on the driver's file.
 *
 * A call on a file that cannot reach the driver (a pipe here) is
 * continued: it is taken for another device's ioctl that shares a trapped
 * byte (SECURITY.md, "What the filter traps"). The kernel resolves the fd
 * number again when it runs the continued call. So a second thread
 * dup2()s the workload's own control file and a pipe onto one number in
 * turn while the main thread asks for 256 MiB chunks of video memory
 * (RM_ALLOC, NVOS64) through that number, never freeing one. A call the
 * supervisor saw on the control file is performed and charged; one it saw
 * on the pipe and the kernel ran on the control file reaches the driver
 * unseen, uncharged. Judged by the fake driver's peak against --mem 1g.
 *
 *   continue_swap        the words as RM_ALLOC takes them (NVOS64)
 *   continue_swap size   the same calls with a size the driver does not
 *                        take for RM_ALLOC: continued without a hold (the
 *                        size is in a register), and the driver, whatever
 *                        file the number names, rejects them: nothing is
 *                        allocated (the fake checks sizes as nv.c does)
 *   continue_swap proc   the swapper a CLONE_FILES process, not a thread:
 *                        the caller is alone in its thread group, so the
 *                        supervisor's look that counts it alone first
 *                        (issue #31: no stop, no second look) must not be
 *                        taken once such a clone was made (tables_shared)
 *
 * Prints mode= attempts= ok= swaps= and SUMMARY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adv.h"

#define ATTEMPTS 20000
/* A size RM_ALLOC does not take (neither NVOS21's nor NVOS64's). */
#define WRONG_SIZE (sizeof(struct nvos64) + 8)
#define SWAPPER_STACK (64 * 1024)

struct swapper {
	int ctl, pipe_end, number;
	atomic_bool stop;
	unsigned long swaps;
};

static void *swap_loop(void *arg)
{
	struct swapper *w = arg;

	while (!atomic_load(&w->stop)) {
		(void)dup2(w->ctl, w->number);
		(void)dup2(w->pipe_end, w->number);
		w->swaps++;
	}
	return NULL;
}

/* proc: the swapper shares our fd table (CLONE_FILES) and, so that its
 * count and our stop reach each other, our memory, but not our thread
 * group. */
static int swap_proc(void *arg)
{
	swap_loop(arg);
	return 0;
}

static pid_t start_proc(struct swapper *w)
{
	char *stack = mmap(NULL, SWAPPER_STACK, PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

	if (stack == MAP_FAILED)
		return -1;
	return clone(swap_proc, stack + SWAPPER_STACK, CLONE_FILES | CLONE_VM | SIGCHLD, w);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "nvos64";
	struct rmc_how wrong = { .req_word = NV_IOC_WORD(NV_ESC_RM_ALLOC, WRONG_SIZE) };
	const struct rmc_how *how = strcmp(mode, "size") == 0 ? &wrong : NULL;
	struct rmc_session s;
	struct adv_tally t = { 0 };
	struct swapper w = { 0 };
	int p[2], attempts = 0;
	const bool as_proc = strcmp(mode, "proc") == 0;
	pthread_t th;
	pid_t proc = -1;

	adv_session_or_die(&s, -1, "continue_swap");
	if (pipe(p) < 0 || (w.number = dup(p[0])) < 0) {
		perror("continue_swap: pipe");
		return ADV_EXIT_SETUP;
	}
	w.ctl = s.fd;
	w.pipe_end = p[0];
	if (as_proc ? (proc = start_proc(&w)) < 0 : pthread_create(&th, NULL, swap_loop, &w) != 0)
		return ADV_EXIT_SETUP;
	/* The same client and parents, reached through the swapped number. */
	struct rmc_session via = s;
	via.fd = w.number;
	for (; attempts < ATTEMPTS && t.ok < ADV_MAX_CHUNKS; attempts++) {
		rmc_status_t st = adv_alloc_rm(&via, how, rmc_next_handle(&s), ADV_CHUNK);
		/* The pipe's own answer (ENOTTY) is not an attempt on the GPU. */
		if (st != RMC_SYSERR(ENOTTY))
			adv_count(&t, st);
		via.next_mem = s.next_mem;
	}
	atomic_store(&w.stop, true);
	if (as_proc)
		(void)waitpid(proc, NULL, 0);
	else
		pthread_join(th, NULL);
	printf("mode=%s attempts=%d ok=%d swaps=%lu\n", mode, attempts, t.ok, w.swaps);
	adv_print_summary(&t);
	return 0;
}
