/* SPDX-License-Identifier: MIT */
/*
 * fd_pass - charges follow the open file, not the process.
 *
 * Process A opens /dev/nvidiactl, creates a client and allocates 512 MiB,
 * sends the fd (SCM_RIGHTS) and its handles to process B over a unix
 * socket, and exits. RM binds clients to the open file, so A's client and
 * its 512 MiB live on in B's copy of the file. B then allocates 256 MiB
 * chunks on A's client through the received fd until refused, then opens
 * its own fd and client and does the same. A supervisor that released A's
 * charges when A exited would let B reach 1.5 GiB.
 *
 * Prints a_alloc=0x... recv_ok= recv_nomem= own_ok= own_nomem= and SUMMARY.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adv.h"

#define FDP_A_SIZE (512ull * RMC_MIB)

/* What A tells B alongside the fd. */
struct handoff {
	nv_handle_t client;
	nv_handle_t device;
	nv_handle_t next_mem;
	rmc_status_t a_alloc;
};

static void process_a(int sock)
{
	struct rmc_session s;
	struct handoff h;

	adv_session_or_die(&s, -1, "A");
	h.client = s.client;
	h.device = s.device;
	h.a_alloc = adv_alloc_rm(&s, NULL, rmc_next_handle(&s), FDP_A_SIZE);
	h.next_mem = s.next_mem;
	if (adv_send_fd(sock, s.fd, &h, sizeof(h)) < 0)
		_exit(ADV_EXIT_SETUP);
	/* Exit without freeing: only B's copy keeps the file (and A's
	 * client) alive now. */
	_exit(0);
}

int main(void)
{
	int sv[2], status;
	struct handoff h;
	struct rmc_session recv_s, own_s;
	struct adv_fill recv_f = { 0 }, own_f = { 0 };
	struct adv_tally total = { 0 };
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("socketpair");
		return ADV_EXIT_SETUP;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return ADV_EXIT_SETUP;
	}
	if (pid == 0) {
		close(sv[0]);
		process_a(sv[1]);
	}
	close(sv[1]);

	/* B */
	memset(&recv_s, 0, sizeof(recv_s));
	recv_s.fd = adv_recv_fd(sv[0], &h, sizeof(h));
	waitpid(pid, &status, 0); /* A is gone before B allocates */
	if (recv_s.fd < 0) {
		printf("B: no fd received (A exit status 0x%x)\n", status);
		return ADV_EXIT_SETUP;
	}
	printf("a_alloc=0x%x (%s) a_exited=1\n", h.a_alloc, rmc_status_str(h.a_alloc));
	recv_s.client = h.client;
	recv_s.device = h.device;
	recv_s.next_mem = h.next_mem;
	adv_fill(&recv_s, NULL, adv_alloc_rm, adv_free_rm, ADV_CHUNK, "B_on_A_fd", &recv_f);

	adv_session_or_die(&own_s, -1, "B_own");
	adv_fill(&own_s, NULL, adv_alloc_rm, adv_free_rm, ADV_CHUNK, "B_own_fd", &own_f);

	printf("recv_ok=%d recv_nomem=%d own_ok=%d own_nomem=%d\n", recv_f.tally.ok,
	       recv_f.tally.nomem, own_f.tally.ok, own_f.tally.nomem);
	adv_count(&total, h.a_alloc);
	adv_add(&total, &recv_f.tally);
	adv_add(&total, &own_f.tally);
	adv_print_summary(&total);
	return 0;
}
