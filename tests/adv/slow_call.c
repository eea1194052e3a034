/* SPDX-License-Identifier: MIT */
/*
 * slow_call.c - one process's slow driver call must not hold up another
 * process of the same sandbox (issue #16).
 *
 * Run on a fake that answers REGISTER_VIDMEM late (--slow-control
 * 503c0104:MS) while it serves other requests, as the real driver runs two
 * processes' calls side by side. Process A makes that call SLOW_CALLS
 * times: the first ones teach the supervisor the command is slow (three
 * in a row, exec_escape), the last is the one measured. Process B, once A is inside its second call, makes QUICK_PAIRS
 * 2 MiB allocations and frees, then looks whether A's call is still in
 * flight. It prints "overlapped=1" when B finished all of them before A's
 * slow call returned: natively always, under a supervisor that serves one
 * call at a time never (B's first call waits behind A's). An ordering, not
 * a timing, is what is judged.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rmclient.h"

#define CLASS_THIRD_PARTY_P2P   0x503cu
#define CMD_REGISTER_VIDMEM     0x503c0104u
#define P2P_ALLOC_PARAMS_SIZE   4u
#define H_P2P                   0x5c0000f0u
#define SLOW_CALLS              4
#define QUICK_PAIRS             20
/* Time for A's call to reach the driver before B starts. */
#define B_START_DELAY_US        300000u
#define PAIR_BYTES              (2ull << 20)

struct shared {
	atomic_int a_in_measured_call;
	atomic_int a_done;
};

static int slow_process(struct shared *sh)
{
	struct rmc_session s;
	uint32_t p2p = 0;
	nv_handle_t h = H_P2P;
	rmc_status_t st = rmc_session_open(&s, -1);

	if (st == NV_OK)
		st = rmc_alloc(s.fd, NULL, s.client, s.subdevice, &h, CLASS_THIRD_PARTY_P2P, &p2p,
		               P2P_ALLOC_PARAMS_SIZE);
	/* A registration the driver accepts (third_party_p2p_ctrl.c): video
	 * memory of the client, the whole 64 KiB-aligned range; unregistered
	 * after each, as CUDA does before a free. */
	nv_handle_t mem = rmc_next_handle(&s);
	if (st == NV_OK)
		st = rmc_alloc_vidmem(s.fd, NULL, s.client, s.device, mem, PAIR_BYTES);
	for (int i = 0; i < SLOW_CALLS && st == NV_OK; i++) {
		struct nv503c_register_vidmem_params reg = { .h_memory = mem, .size = PAIR_BYTES };
		struct nv503c_unregister_vidmem_params unreg = { .h_memory = mem };
		if (i == SLOW_CALLS - 1)
			atomic_store(&sh->a_in_measured_call, 1);
		st = rmc_control(s.fd, NULL, s.client, H_P2P, CMD_REGISTER_VIDMEM, &reg,
		                 rmc_ctrl_size(CMD_REGISTER_VIDMEM, sizeof(reg)));
		if (st == NV_OK)
			st = rmc_control(s.fd, NULL, s.client, H_P2P, NV503C_CTRL_CMD_UNREGISTER_VIDMEM,
			                 &unreg, rmc_ctrl_size(NV503C_CTRL_CMD_UNREGISTER_VIDMEM, sizeof(unreg)));
	}
	atomic_store(&sh->a_done, 1);
	printf("slow_status=%s\n", rmc_status_str(st));
	return st == NV_OK ? 0 : 1;
}

static int quick_process(struct shared *sh)
{
	struct rmc_session s;
	rmc_status_t st = rmc_session_open(&s, -1);
	int done = 0;

	while (!atomic_load(&sh->a_in_measured_call))
		usleep(1000);
	usleep(B_START_DELAY_US);
	int a_done_before = atomic_load(&sh->a_done);
	if (st == NV_OK)
		st = rmc_vidmem_pairs(&s, QUICK_PAIRS, PAIR_BYTES, &done);
	int overlapped = !a_done_before && !atomic_load(&sh->a_done);
	printf("quick_status=%s quick_pairs=%d a_done_before=%d overlapped=%d\n", rmc_status_str(st),
	       done, a_done_before, overlapped);
	return st == NV_OK ? 0 : 1;
}

int main(void)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int st_a, st_b;

	if (sh == MAP_FAILED)
		return 2;
	memset(sh, 0, sizeof(*sh));
	fflush(stdout);
	pid_t a = fork();
	if (a == 0) {
		int rc = slow_process(sh);
		fflush(stdout);
		_exit(rc);
	}
	pid_t b = fork();
	if (b == 0) {
		int rc = quick_process(sh);
		fflush(stdout);
		_exit(rc);
	}
	if (a < 0 || b < 0 || waitpid(a, &st_a, 0) < 0 || waitpid(b, &st_b, 0) < 0)
		return 2;
	int a_ok = WIFEXITED(st_a) && WEXITSTATUS(st_a) == 0;
	int b_ok = WIFEXITED(st_b) && WEXITSTATUS(st_b) == 0;
	printf("a_ok=%d b_ok=%d\n", a_ok, b_ok);
	/* tests/adv/run.sh reads a SUMMARY line from every program. */
	printf("SUMMARY ok=%d nomem=0 other=%d\n", a_ok + b_ok, !a_ok + !b_ok);
	return 0;
}
