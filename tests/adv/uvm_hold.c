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
 *   uvm_hold handoff
 *                   a child process allocates and maps A, passes its UVM
 *                   file to this process (SCM_RIGHTS) and exits, its exit
 *                   closing its control file (A's client dies with it);
 *                   this process keeps the UVM file open, waits for the
 *                   child, and makes B with a client of its own
 *   uvm_hold handoff_free
 *                   the same, the child freeing A's handle before it exits
 *   uvm_hold intr   as free, but SIGUSR1 (caught, without SA_RESTART)
 *                   makes the map give its call up: EINTR, never asked
 *                   again (tests/agent's uvmkill-runc signals it while the
 *                   agent that took the call is dead and the driver has
 *                   made the mapping)
 *
 * The handoff is the hold a supervisor that follows mappings by process
 * could miss: the process that mapped is gone, the file that holds the
 * mapping lives on in another. Without gpusandbox the kept UVM file keeps
 * A (the fake's uvm_mappings is 1 while this process holds the file, and
 * its peak 1.5 GiB).
 *
 * A second argument WAIT (tests/agent's uvmrestart-runc): once A is
 * mapped, writes WAIT.ready and waits until the file WAIT exists before
 * it frees A (the agent is restarted meanwhile).
 *
 * Prints map= free= second= (hex RM status; free is the close's errno
 * for close, and the child's exit status for handoff) and, for race,
 * flips= and race_maps= (the racing rounds that mapped), for the
 * handoffs held_mappings= (the fake's uvm_mappings read while this
 * process still holds the UVM file, after B); then SUMMARY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adv.h"
#include "nvuvm_abi.h"

#define HOLD_SIZE (768ull * RMC_MIB)
#define SMALL_SIZE (2ull * RMC_MIB)
#define FLIP_ROUNDS 2000
#define WAIT_STEP_NS 20000000L       /* 20 ms */
#define WAIT_MAX_STEPS 1500          /* 30 s */
#define PATH_LEN 512

/* What the fake's uvm_mappings reads when it could not be read. */
#define NO_STAT UINT64_MAX

/* The flipper of the race: hMemory between a and c until told to stop. */
struct flip {
	struct adv_uvm_map *m;
	nv_handle_t a, c;
	atomic_bool stop;
	unsigned long flips;
};

static void *flipper(void *arg)
{
	struct flip *f = arg;
	volatile nv_handle_t *h = &adv_uvm_tail(f->m)->h_memory;

	while (!atomic_load(&f->stop)) {
		*h = f->a;
		*h = f->c;
		f->flips++;
	}
	return NULL;
}

/* The race: the map is made FLIP_ROUNDS times (each over the last) while
 * the flipper runs; a supervisor that read hMemory once and let the
 * driver read it again could pin one and map the other. Most rounds read
 * C, which does not fill A's range (refused), and how many read A is up
 * to the scheduler (none, on a loaded machine: CI's clean clone of
 * ed49944), so that count (*race_maps) is told, not required. The last
 * map, after the flipper, names A: its status is returned. */
static rmc_status_t map_racing(int uvm, struct adv_uvm_map *m, nv_handle_t a, nv_handle_t c,
                               unsigned long *flips, unsigned *race_maps)
{
	struct flip f = { .m = m, .a = a, .c = c };
	pthread_t t;

	*race_maps = 0;
	if (pthread_create(&t, NULL, flipper, &f) != 0)
		return RMC_SYSERR(EAGAIN);
	for (int i = 0; i < FLIP_ROUNDS; i++) {
		adv_uvm_tail(m)->rm_status = NV_ERR_GENERIC;
		*race_maps += adv_uvm_map(uvm, m) == NV_OK;
	}
	atomic_store(&f.stop, true);
	pthread_join(t, NULL);
	/* The last map names A, as the attacker wants it held. */
	adv_uvm_tail(m)->h_memory = a;
	*flips = f.flips;
	return adv_uvm_map(uvm, m);
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* SIGUSR1 interrupts a call waiting for its answer, which then fails
 * with EINTR instead of being made again (no SA_RESTART). */
static void give_up_on_usr1(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };

	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGUSR1, &sa, NULL);
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

/* What the handoff's child tells this process alongside its UVM file. */
struct handoff {
	rmc_status_t first, mapped, freed;
};

/* The handoff's child: A, mapped, its UVM file sent to the parent; then
 * it exits, closing its control file (after freeing A's handle when
 * free_first). */
static void handoff_child(int sock, bool free_first)
{
	static struct adv_uvm_map m;
	struct rmc_session s;
	struct handoff h = { .freed = NV_OK };

	adv_session_or_die(&s, -1, "uvm_hold child");
	nv_handle_t a = rmc_next_handle(&s);
	h.first = adv_alloc_rm(&s, NULL, a, HOLD_SIZE);
	int uvm = adv_uvm_with_range(HOLD_SIZE, "uvm_hold child");
	adv_uvm_fill_map(&m, s.fd, s.client, a, HOLD_SIZE);
	h.mapped = adv_uvm_map(uvm, &m);
	if (free_first)
		h.freed = adv_free_rm(&s, NULL, a);
	_exit(adv_send_fd(sock, uvm, &h, sizeof(h)) == 0 ? 0 : ADV_EXIT_SETUP);
}

/* The handoff's parent: the child's UVM file received and kept, the child
 * waited for, then B made by a client of this process's own. */
static int handoff(const char *mode, bool free_first)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };
	struct handoff h = { 0 };
	uint64_t held = NO_STAT;
	int sv[2], status = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("uvm_hold: socketpair");
		return ADV_EXIT_SETUP;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("uvm_hold: fork");
		return ADV_EXIT_SETUP;
	}
	if (pid == 0) {
		close(sv[0]);
		handoff_child(sv[1], free_first);
	}
	close(sv[1]);
	int uvm = adv_recv_fd(sv[0], &h, sizeof(h));
	waitpid(pid, &status, 0); /* the mapper is gone before B */
	if (uvm < 0) {
		printf("uvm_hold: no UVM file from the child (exit status 0x%x)\n", status);
		return ADV_EXIT_SETUP;
	}
	adv_count(&t, h.first);
	adv_session_or_die(&s, -1, "uvm_hold");
	rmc_status_t second = adv_alloc_rm(&s, NULL, rmc_next_handle(&s), HOLD_SIZE);
	adv_count(&t, second);
	/* The fake's own word, while the kept file could still hold A. */
	if (rmc_fake_stat("uvm_mappings", &held) < 0)
		held = NO_STAT;
	printf("mode=%s first=0x%x map=0x%x child_free=0x%x free=0x%x second=0x%x held_mappings=%lld\n",
	       mode, h.first, h.mapped, h.freed, (unsigned)status, second,
	       held == NO_STAT ? -1ll : (long long)held);
	adv_print_summary(&t);
	close(uvm);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "free";
	struct rmc_session s, s2;
	struct adv_tally t = { 0 };
	static struct adv_uvm_map m;
	nv_handle_t a, b, c = 0;
	rmc_status_t first, mapped, freed = NV_OK, second;
	unsigned long flips = 0;
	unsigned race_maps = 0;

	if (strncmp(mode, "handoff", strlen("handoff")) == 0)
		return handoff(mode, strcmp(mode, "handoff_free") == 0);
	adv_session_or_die(&s, -1, "uvm_hold");
	a = rmc_next_handle(&s);
	first = adv_alloc_rm(&s, NULL, a, HOLD_SIZE);
	adv_count(&t, first);
	int uvm = adv_uvm_with_range(HOLD_SIZE, "uvm_hold");
	adv_uvm_fill_map(&m, s.fd, s.client, a, HOLD_SIZE);
	if (strcmp(mode, "p2p") == 0) {
		struct uvm_free_params gone = { .base = ADV_UVM_RANGE_BASE, .length = HOLD_SIZE };
		struct uvm_alloc_device_p2p_params p = { .base = ADV_UVM_RANGE_BASE, .length = HOLD_SIZE,
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
		mapped = map_racing(uvm, &m, a, c, &flips, &race_maps);
	} else {
		if (strcmp(mode, "intr") == 0)
			give_up_on_usr1();
		mapped = adv_uvm_map(uvm, &m);
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

	printf("mode=%s first=0x%x map=0x%x free=0x%x second=0x%x flips=%lu race_maps=%u\n", mode, first,
	       mapped, freed, second, flips, race_maps);
	adv_print_summary(&t);
	close(uvm);
	return 0;
}
