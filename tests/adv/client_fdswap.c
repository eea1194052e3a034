/* SPDX-License-Identifier: MIT */
/*
 * client_fdswap - swapping the file behind a continued client allocation.
 *
 * The supervisor continues a client allocation only on a control file
 * with no client (client_flip.c shows why), but it looks at the file
 * behind the fd number when the call traps, and the kernel resolves the
 * number again after CONTINUE. Here a swapper keeps dup2'ing, onto the
 * number N the calls use, now a fresh control file (no client: the call
 * is continued) and now the session's file S (which holds a client and
 * 768 MiB), and flips the class in step: a client (0) with the fresh
 * file, 1 GiB of video memory under S's client with S. A continued call
 * that the kernel then runs on S with the flipped class allocates 1 GiB
 * that the supervisor never charged: the fake's peak goes over --mem 1g.
 * (A third thread flipping on its own, as client_flip.c does, wins too,
 * but less often: the flips in step with the swaps make the baseline win
 * within the attempts every time.) The call struct lives in shared memory,
 * so that the swapper of another tgid reaches it as a thread would.
 *
 *   client_fdswap thread [TRIES]  the swapper is a thread of this process
 *   client_fdswap proc     the swapper is a process of another tgid that
 *                          shares this fd table: made with clone3 where
 *                          the kernel takes it (gpusandbox's filter
 *                          answers ENOSYS, so that it sees every such
 *                          process made: filter.h), else with clone
 *                          (CLONE_FILES); prints clone3= (ok or ENOSYS)
 *   client_fdswap busy     no attack: a PyTorch-like process, whose other
 *                          threads keep making RM controls (trapped, and
 *                          received by other workers meanwhile) while one
 *                          thread makes clients; every client must be made
 *
 * Each attempt uses a fresh control file (its client, if one was made,
 * goes with it when it is closed). Stops early once the fake's own
 * account shows a win. Every CALM_EVERY-th attempt is made while the
 * swapper, still running and still sharing the fd table, holds off with
 * the fresh file on N and the client class set: a legitimate client
 * allocation through the quiesce, which must be made. (Racing, a client
 * is made only when the swapper happens to stop between its class write
 * and its next dup2; PTRACE_INTERRUPT mostly stops it right after a dup2,
 * so on a loaded 2-core machine some runs made none in 24000.) Prints
 * attempts= made= refused= won= calm= calm_made= and SUMMARY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adv.h"

#define TRIES 6000
/* A third argument may ask for more: the baselines (quiesce off), which
 * stop at their first win, take up to 4 x TRIES, so that a loaded
 * machine that makes the race rarer does not pass off a defence that
 * is off as "not sensitive" (one clean-suite run won 0 of 6000). */
#define TRIES_MAX (4 * TRIES)
#define CALM_EVERY 500
#define HOLD_CHUNKS 3
#define H_SWAP0 0x5c10e000u
/* The fd numbers the attack uses: N for the calls, FRESH_SLOT for the
 * current fresh control file (the swapper copies it onto N). */
#define FD_N 200
#define FRESH_SLOT 201
/* The fake's account is read every few attempts (a file read). */
#define CHECK_EVERY 8
#define SWAPPER_STACK (256 * 1024)
/* busy: the threads making controls, and the clients made meanwhile. */
#define BUSY_THREADS 6
#define BUSY_CLIENTS 300

/* In shared memory (see main): the swapper of another tgid writes it. */
static volatile struct nvos64 *call;
/* Also shared: hold tells the swapper to hold off, held that it does. */
struct swap_ctl {
	atomic_int hold, held;
};
static struct swap_ctl *ctl;
static struct nv_memory_allocation_params gib;
static atomic_bool stop;
static int session_fd;
static nv_handle_t session_client;

/* The struct as a client allocation (hRoot 0: RM picks the handle; RM
 * reads a client's handle from hRoot, so S's would be refused as taken)
 * or as S's video memory. Two stores each: a read between them is
 * refused either way (a client at S's handle, memory under no client). */
static void as_client(void)
{
	call->h_class = NV01_ROOT;
	call->h_root = 0;
}

static void as_vidmem(void)
{
	call->h_class = NV01_MEMORY_LOCAL_USER;
	call->h_root = session_client;
}

/* Runs until killed (the process) or told to stop (the thread). */
static int swap_loop(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		if (atomic_load(&ctl->hold)) {
			dup2(FRESH_SLOT, FD_N);
			as_client();
			atomic_store(&ctl->held, 1);
			while (atomic_load(&ctl->hold))
				;  /* spinning: a live sharer the quiesce must stop */
			atomic_store(&ctl->held, 0);
			continue;
		}
		dup2(FRESH_SLOT, FD_N);
		as_client();
		dup2(session_fd, FD_N);
		as_vidmem();
	}
	return 0;
}

static void *swapper_thread(void *arg)
{
	swap_loop(arg);
	return NULL;
}

static struct rmc_session *busy_session;

static void *control_loop(void *arg)
{
	struct nv0000_probed_ids_params probed;

	(void)arg;
	while (!atomic_load(&stop))
		(void)rmc_control(busy_session->fd, NULL, busy_session->client, busy_session->client,
		                  NV0000_CTRL_CMD_GPU_GET_PROBED_IDS, &probed, sizeof(probed));
	return NULL;
}

/* busy: each client on a fresh control file, the file then closed. */
static int busy_run(struct rmc_session *s)
{
	pthread_t th[BUSY_THREADS];
	int made = 0, refused = 0;

	busy_session = s;
	for (int k = 0; k < BUSY_THREADS; k++)
		pthread_create(&th[k], NULL, control_loop, NULL);
	for (int i = 0; i < BUSY_CLIENTS; i++) {
		int fd = rmc_open_ctl();
		nv_handle_t h = 0;
		if (fd >= 0 && rmc_alloc_client(fd, NULL, &h) == NV_OK)
			made++;
		else
			refused++;
		if (fd >= 0)
			close(fd);
	}
	atomic_store(&stop, true);
	for (int k = 0; k < BUSY_THREADS; k++)
		pthread_join(th[k], NULL);
	printf("swapper=none attempts=%d made=%d refused=%d won=0\n", BUSY_CLIENTS, made, refused);
	return 0;
}

/* The driver's own account: more video memory than the quota in use. */
static bool driver_over_quota(void)
{
	uint64_t used = 0;

	return rmc_fake_stat("gpu0.vidmem_used", &used) == 0 && used > 4 * ADV_CHUNK;
}

/* One attempt on a fresh control file; 1 if the call went through. */
static int attempt(int i, int *refused)
{
	int fresh = rmc_open_ctl();

	if (fresh < 0)
		return 0;
	dup2(fresh, FRESH_SLOT);
	close(fresh);
	dup2(FRESH_SLOT, FD_N);
	call->h_object_new = H_SWAP0 + (nv_handle_t)i;
	call->status = 0;
	int made = 0;
	if (syscall(SYS_ioctl, FD_N, NV_IOC_WORD(NV_ESC_RM_ALLOC, sizeof(*call)), (void *)call) == 0) {
		if (call->status == NV_OK)
			made = 1;
		else
			(*refused)++;
	}
	return made;
}

/* One attempt while the swapper holds off (fresh file on N, client class),
 * still alive and sharing the fd table. */
static int calm_attempt(int i, int *refused)
{
	atomic_store(&ctl->hold, 1);
	while (!atomic_load(&ctl->held))
		sched_yield();
	int made = attempt(i, refused);
	atomic_store(&ctl->hold, 0);
	while (atomic_load(&ctl->held))
		sched_yield();
	return made;
}

/* The swapper process: another tgid, its own memory, this fd table. By
 * clone3 first (fork's return, no new stack: no CLONE_VM), as a workload
 * that meant to slip past a filter watching clone would; by clone when
 * clone3 is refused. *clone3_errno: 0 or why clone3 failed. */
static pid_t clone_sharing_files(int *clone3_errno)
{
	struct clone_args ca = { .flags = CLONE_FILES, .exit_signal = SIGCHLD };
	long pid = syscall(SYS_clone3, &ca, sizeof(ca));

	if (pid == 0) {
		swap_loop(NULL);
		_exit(0);
	}
	*clone3_errno = pid < 0 ? errno : 0;
	if (pid > 0)
		return (pid_t)pid;
	char *stack = mmap(NULL, SWAPPER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1,
	                   0);
	return clone(swap_loop, stack + SWAPPER_STACK, CLONE_FILES | SIGCHLD, NULL);
}

int main(int argc, char **argv)
{
	bool as_proc = argc > 1 && strcmp(argv[1], "proc") == 0;
	int tries = argc > 2 ? atoi(argv[2]) : TRIES;
	struct rmc_session s;
	struct adv_tally t = { 0 };
	int made = 0, refused = 0, i, won = 0, calm = 0, calm_made = 0;
	pthread_t swap;
	pid_t swap_pid = -1;
	int clone3_errno = 0;

	adv_session_or_die(&s, -1, "client_fdswap");
	session_fd = s.fd;
	for (int k = 0; k < HOLD_CHUNKS; k++)
		adv_count(&t, adv_alloc_rm(&s, NULL, rmc_next_handle(&s), ADV_CHUNK));
	if (argc > 1 && strcmp(argv[1], "busy") == 0) {
		busy_run(&s);
		adv_print_summary(&t);
		return 0;
	}
	rmc_fill_vidmem_params(&gib, s.client, 4 * ADV_CHUNK);
	call = mmap(NULL, sizeof(*call), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (call == MAP_FAILED || ctl == MAP_FAILED) {
		printf("client_fdswap: setup failed\n");
		return ADV_EXIT_SETUP;
	}
	session_client = s.client;
	call->h_object_parent = s.device;
	as_client();
	call->p_alloc_parms = (uintptr_t)&gib;
	if (rmc_open_ctl() < 0 || dup2(s.fd, FRESH_SLOT) < 0 || dup2(s.fd, FD_N) < 0) {
		printf("client_fdswap: setup failed\n");
		return ADV_EXIT_SETUP;
	}
	if (as_proc) {
		swap_pid = clone_sharing_files(&clone3_errno);
	} else {
		pthread_create(&swap, NULL, swapper_thread, NULL);
	}
	if (tries < 1 || tries > TRIES_MAX)
		tries = TRIES;
	for (i = 0; i < tries && !won; i++) {
		if (i % CALM_EVERY == CALM_EVERY - 1) {
			calm_made += calm_attempt(i, &refused);
			calm++;
			continue;
		}
		made += attempt(i, &refused);
		if (i % CHECK_EVERY == 0)
			won = driver_over_quota();
	}
	atomic_store(&stop, true);
	if (as_proc) {
		kill(swap_pid, SIGKILL);
		waitpid(swap_pid, NULL, 0);
	} else {
		pthread_join(swap, NULL);
	}
	won = won || driver_over_quota();
	printf("swapper=%s attempts=%d made=%d refused=%d won=%d calm=%d calm_made=%d\n",
	       as_proc ? "proc" : "thread", i, made + calm_made, refused, won, calm, calm_made);
	if (as_proc)
		printf("clone3=%s\n", clone3_errno == 0 ? "ok" : clone3_errno == ENOSYS ? "ENOSYS" : strerror(clone3_errno));
	adv_print_summary(&t);
	return 0;
}
