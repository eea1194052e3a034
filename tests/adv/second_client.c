/* SPDX-License-Identifier: MIT */
/*
 * second_client - a second client on one control file (issue #29 item 2:
 * libnvcuvid's later decoders and nvJPEG's hardware backend make one).
 *
 *   second_client basic   - client A, 512 MiB under it; client B on A's
 *                           file, 512 MiB under B; then 256 MiB more under
 *                           A must be refused (both charged: the fake's
 *                           peak is the judge). B must carry the
 *                           workload's process: a dup of A's memory into
 *                           B passes the fake's default share policy
 *                           (same process) only then.
 *   second_client flip T  - the client_flip race on the second-client
 *                           path: the struct flips between a client and
 *                           1 GiB under A (768 MiB held), from a thread
 *                           (T=thread) or from another process mapping the
 *                           same page (T=proc). The client it asks for is
 *                           A's handle (hRoot), which the driver refuses as
 *                           a duplicate: what counts is that the call went
 *                           the second-client way (the audit says so) and
 *                           that no flip got memory past the quota.
 *                           tests/adv/run.sh runs T=proc only: T=thread's
 *                           baseline was not reliably sensitive on a loaded
 *                           machine (0 to 15 flips won in 600 tries, 0 in
 *                           CI once), so it is not in the suite; a same-mm
 *                           writer's stop is in tests/unit/test_inject.
 *                           An optional third argument: the tries (600).
 *   second_client clients - under --clients 3, clients on one file: the
 *                           second and third fit, the fourth is refused.
 *   second_client midinject - client A and 512 MiB under it, then a
 *                           second client on A's file, made with a bare
 *                           ioctl whose return is printed if this process
 *                           lives on (tests/agent injectkill-crun kills the
 *                           agent while it injects this call: with the
 *                           defence the caller dies with its tracer).
 *   second_client signal  - SIGUSR1 sent by another process to the
 *                           caller once it is seen stopped for the
 *                           injection (the supervisor's test build holds
 *                           it there 20 ms), at most once a round: each
 *                           signal sent is handled exactly once.
 * Prints key=value lines.
 */
#define _GNU_SOURCE
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
#include <time.h>
#include <unistd.h>

#include "adv.h"

#define HALF (512ull * RMC_MIB)
#define FLIP_TRIES 600
#define SIGNAL_ROUNDS 10
#define SIGNAL_POLLS 20000
#define SIGNAL_POLL_US 100
#define SIGNAL_SETTLE_US 100000
#define H_FLIP0 0x5c00f000u

static int basic(void)
{
	struct rmc_session a;
	nv_handle_t b = 0, mem_a = 0x7a000001u, mem_b = 0x7b000001u, dup = 0x7b000002u;

	adv_session_or_die(&a, -1, "second_client");
	rmc_status_t st_a = rmc_alloc_vidmem(a.fd, NULL, a.client, a.device, mem_a, HALF);
	rmc_status_t st_b = rmc_alloc_client(a.fd, NULL, &b);
	printf("mem_a=%s\nsecond=%s\n", rmc_status_str(st_a), rmc_status_str(st_b));
	if (st_b != NV_OK)
		return 0;
	nv_handle_t dev_b = 0x7b0000d0u;
	rmc_status_t st_dev = rmc_alloc_device(a.fd, b, dev_b);
	rmc_status_t st_mb = rmc_alloc_vidmem(a.fd, NULL, b, dev_b, mem_b, HALF);
	rmc_status_t st_over = rmc_alloc_vidmem(a.fd, NULL, a.client, a.device, 0x7a000002u, ADV_CHUNK);
	rmc_status_t st_dup = rmc_dup(a.fd, NULL, b, dev_b, &dup, a.client, mem_a);
	rmc_status_t st_free = rmc_free(a.fd, NULL, b, b, b);
	/* B freed: A's file holds A alone, and a third client is made again. */
	nv_handle_t c = 0;
	rmc_status_t st_c = rmc_alloc_client(a.fd, NULL, &c);
	printf("device_b=%s\nmem_b=%s\nover=%s\ndup=%s\nfree_b=%s\nthird=%s\n", rmc_status_str(st_dev),
	       rmc_status_str(st_mb), rmc_status_str(st_over), rmc_status_str(st_dup),
	       rmc_status_str(st_free), rmc_status_str(st_c));
	struct adv_tally t = { 0 };
	adv_count(&t, st_a);
	adv_count(&t, st_mb);
	adv_count(&t, st_over);
	adv_print_summary(&t);
	return 0;
}

/* A second client whose injection the harness interrupts by killing the
 * agent (midinject above). Line-buffered: what is printed before a kill
 * stays printed. */
#define MIDINJECT_PARAMS 128u
static int midinject(void)
{
	struct rmc_session a;
	static uint8_t params[MIDINJECT_PARAMS];
	struct nvos64 c = { .h_class = NV01_ROOT_CLIENT, .p_alloc_parms = (uintptr_t)params };

	setvbuf(stdout, NULL, _IOLBF, 0);
	adv_session_or_die(&a, -1, "second_client");
	rmc_status_t st_a = rmc_alloc_vidmem(a.fd, NULL, a.client, a.device, 0x7a000001u, HALF);
	printf("mem_a=%s\n", rmc_status_str(st_a));
	long ret = syscall(SYS_ioctl, a.fd, NV_IOC_WORD(NV_ESC_RM_ALLOC, sizeof(c)), &c);
	printf("lived_on=1 ret=%#lx status=%#x\n", (unsigned long)ret, c.status);
	return 0;
}

/* Under --clients 3: A, then clients on A's file until refused; the
 * second and third fit, the fourth is refused (the injected clients are
 * counted as clients, not as the one file). */
static int clients(void)
{
	struct rmc_session a;
	nv_handle_t h[3] = { 0 };
	rmc_status_t st[3];

	adv_session_or_die(&a, -1, "second_client");
	for (int i = 0; i < 3; i++)
		st[i] = rmc_alloc_client(a.fd, NULL, &h[i]);
	printf("second=%s\nthird=%s\nfourth=%s\n", rmc_status_str(st[0]), rmc_status_str(st[1]),
	       rmc_status_str(st[2]));
	struct adv_tally t = { 0 };
	for (int i = 0; i < 3; i++)
		adv_count(&t, st[i]);
	adv_print_summary(&t);
	return 0;
}

static volatile struct nvos64 *flip_call;
static atomic_bool flip_stop;
/* The flipper's finished cycles, in the same shared page as the call
 * (FLIP_CYCLES_AT: past the struct), so that a process flipper counts
 * them too: each try waits for the flipper to have moved since the last
 * one. Without it, on a loaded machine the 600 tries could all be made
 * before a new flipper thread first ran (CI: 600 refused, no client made,
 * the baseline not sensitive). */
#define FLIP_CYCLES_AT 2048
#define FLIP_WAIT_YIELDS 1000000
static _Atomic uint64_t *flip_cycles;

/* Each class held for FLIP_HOLD_SPINS turns of a busy loop, so that a
 * look and the kernel's later copy each meet either with about even odds
 * (a flip back at the next store left NV01_ROOT visible only where the
 * flipper was preempted between the two stores: on a loaded machine the
 * baseline's look then never saw a client in 600 tries). */
#define FLIP_HOLD_SPINS 2000

static void hold_class(uint32_t cls)
{
	flip_call->h_class = cls;
	for (volatile int i = 0; i < FLIP_HOLD_SPINS; i++)
		;
	/* Off the CPU in either class as often: a look made while the
	 * flipper waits for a CPU meets the class it left. */
	sched_yield();
}

static void flip_forever(void)
{
	while (!atomic_load(&flip_stop)) {
		hold_class(NV01_ROOT);
		hold_class(NV01_MEMORY_LOCAL_USER);
		atomic_fetch_add(flip_cycles, 1);
	}
}

/* Until the flipper has finished a cycle since the last call: false if it
 * never does (counted, not judged here: the baseline's check says it). */
static bool flipper_moved(uint64_t *seen)
{
	for (long i = 0; i < FLIP_WAIT_YIELDS; i++) {
		uint64_t now = atomic_load(flip_cycles);
		if (now != *seen) {
			*seen = now;
			return true;
		}
		sched_yield();
	}
	return false;
}

static void *flip_thread(void *arg)
{
	(void)arg;
	flip_forever();
	return NULL;
}

static int flip(const char *how, int tries)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };
	static struct nv_memory_allocation_params gib;
	int ok = 0, refused = 0, clients = 0;
	bool proc = strcmp(how, "proc") == 0;
	pthread_t th;
	pid_t child = -1;

	adv_session_or_die(&s, -1, "second_client");
	for (int i = 0; i < 3; i++)
		adv_count(&t, adv_alloc_rm(&s, NULL, rmc_next_handle(&s), ADV_CHUNK));
	/* A page the flipper process maps too (proc), or our own (thread). */
	flip_call = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (flip_call == MAP_FAILED)
		return ADV_EXIT_SETUP;
	flip_cycles = (_Atomic uint64_t *)((char *)flip_call + FLIP_CYCLES_AT);
	uint64_t seen = 0;
	int stalled = 0;
	rmc_fill_vidmem_params(&gib, s.client, 4 * ADV_CHUNK);
	flip_call->h_root = s.client;
	flip_call->h_object_parent = s.device;
	flip_call->h_class = NV01_MEMORY_LOCAL_USER;
	flip_call->p_alloc_parms = (uintptr_t)&gib;
	flip_call->params_size = 0;
	if (proc) {
		child = fork();
		if (child == 0) {
			flip_forever();
			_exit(0);
		}
	} else {
		pthread_create(&th, NULL, flip_thread, NULL);
	}
	for (int i = 0; i < tries; i++) {
		stalled += !flipper_moved(&seen);
		flip_call->h_object_new = H_FLIP0 + (nv_handle_t)i;
		flip_call->status = 0;
		if (syscall(SYS_ioctl, s.fd, NV_IOC_WORD(NV_ESC_RM_ALLOC, sizeof(struct nvos64)),
		            (void *)flip_call) < 0)
			continue;
		if (flip_call->status != NV_OK) {
			refused++;
			continue;
		}
		ok++;
		/* A client made: freed, so that the clients do not pile up. */
		nv_handle_t h = flip_call->h_object_new;
		if (rmc_free(s.fd, NULL, h, h, h) == NV_OK)
			clients++;
	}
	atomic_store(&flip_stop, true);
	if (proc) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	} else {
		pthread_join(th, NULL);
	}
	printf("flip_ok=%d flip_refused=%d clients_made=%d flipper_stalled=%d\n", ok, refused, clients,
	       stalled);
	adv_print_summary(&t);
	return 0;
}

/* Shared with the sender process: the caller's round, and the signals
 * sent (each once the caller was seen stopped for an injection). */
struct signal_share {
	atomic_int round, sent, done;
};
static atomic_int handled;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

/* Is task tid of process pid in a ptrace stop ('t' in its stat)? The
 * caller is only while the supervisor injects into it. */
static bool traced_now(pid_t pid, pid_t tid)
{
	char path[64], buf[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 't';
}

/* Another process (a sharer of neither the caller's fd table nor its
 * memory, so not stopped with it): one SIGUSR1 per round, once the caller
 * is seen stopped for the injection. */
static void sender_process(struct signal_share *sh, pid_t pid, pid_t tid)
{
	int last = -1;

	while (!atomic_load(&sh->done)) {
		int r = atomic_load(&sh->round);
		if (r != last && traced_now(pid, tid)) {
			syscall(SYS_tgkill, pid, tid, SIGUSR1);
			atomic_fetch_add(&sh->sent, 1);
			last = r;
		}
		usleep(SIGNAL_POLL_US);
	}
	_exit(0);
}

static int signals(void)
{
	struct rmc_session a;
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct signal_share *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
	                               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int ok = 0, refused = 0, other = 0;

	sigaction(SIGUSR1, &sa, NULL);
	adv_session_or_die(&a, -1, "second_client");
	pid_t me = getpid();
	pid_t child = fork();
	if (child == 0)
		sender_process(sh, me, me);
	for (int i = 0; i < SIGNAL_ROUNDS; i++) {
		nv_handle_t h = 0;
		int sent = atomic_load(&sh->sent);
		rmc_status_t st = rmc_alloc_client(a.fd, NULL, &h);
		/* A signal sent for this round is pending or handled by now. */
		for (int w = 0; w < SIGNAL_POLLS && atomic_load(&handled) < atomic_load(&sh->sent) &&
		                atomic_load(&sh->sent) > sent; w++)
			usleep(SIGNAL_POLL_US);
		atomic_fetch_add(&sh->round, 1);
		if (st == NV_OK) {
			ok++;
			(void)rmc_free(a.fd, NULL, h, h, h);
		} else if (st == NV_ERR_NOT_SUPPORTED) {
			refused++;
		} else {
			other++;
		}
	}
	atomic_store(&sh->done, 1);
	waitpid(child, NULL, 0);
	usleep(SIGNAL_SETTLE_US); /* a second delivery would come by now */
	printf("rounds=%d sent=%d handled=%d ok=%d refused=%d other=%d\n", SIGNAL_ROUNDS,
	       atomic_load(&sh->sent), atomic_load(&handled), ok, refused, other);
	struct adv_tally t = { .ok = ok, .other = refused + other };
	adv_print_summary(&t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "flip") == 0)
		return flip(argc > 2 ? argv[2] : "thread", argc > 3 ? atoi(argv[3]) : FLIP_TRIES);
	if (argc > 1 && strcmp(argv[1], "signal") == 0)
		return signals();
	if (argc > 1 && strcmp(argv[1], "clients") == 0)
		return clients();
	if (argc > 1 && strcmp(argv[1], "midinject") == 0)
		return midinject();
	return basic();
}
