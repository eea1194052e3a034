/* SPDX-License-Identifier: MIT */
/*
 * client_reuse - re-using a dead client's handle on a new file.
 *
 * RM frees a file's clients when the file closes, and a client handle can
 * then be requested again on another file. Round 1 creates client H on file
 * A and holds 768 MiB, then closes A. Round 2 creates a client with the same
 * handle H on file B and allocates 768 MiB (legit: A's memory is gone).
 * Round 3 opens file C and fills up: it must get exactly one more chunk, and
 * the driver's peak must stay within the quota.
 *
 * What this does not reach: the supervisor reaps closed files when it
 * continues a client allocation, so a stale entry for H can only survive in
 * the window between that and the kernel running the continued call. That
 * race cannot be hit on demand; ledger_bind_client's handling of it is
 * covered by tests/unit/test_core.c (test_ledger_bind_client).
 *
 * Prints round1_ok= round2_ok= round3_ok= settled= and SUMMARY.
 */
#include <stdio.h>
#include <unistd.h>

#include "adv.h"

#define REUSED_CLIENT 0xc1d0beefu
#define CR_SETTLE_MS  3000
#define HOLD_CHUNKS   3
/* Client params: an NvHandle the driver fills in (our own size bound). */
#define CLIENT_PARAMS 128

/* A session whose client handle is chosen by us. */
static rmc_status_t open_with_client(struct rmc_session *s, nv_handle_t h)
{
	uint8_t params[CLIENT_PARAMS] = { 0 };
	rmc_status_t st;

	s->device = RMC_H_DEVICE;
	s->subdevice = RMC_H_SUBDEVICE;
	s->next_mem = RMC_H_MEM_BASE;
	s->fd = rmc_open_ctl();
	if (s->fd < 0)
		return RMC_SYSERR(1);
	s->client = h;
	st = rmc_alloc(s->fd, NULL, 0, 0, &s->client, NV01_ROOT_CLIENT, params, 0);
	if (st != NV_OK)
		return st;
	st = rmc_alloc_device(s->fd, s->client, s->device);
	if (st != NV_OK)
		return st;
	return rmc_alloc_subdevice(s->fd, s->client, s->device, s->subdevice);
}

static int hold(struct rmc_session *s, int max, struct adv_tally *t)
{
	int ok = 0;

	for (int i = 0; i < max; i++) {
		rmc_status_t st = adv_alloc_rm(s, NULL, rmc_next_handle(s), ADV_CHUNK);
		adv_count(t, st);
		if (st != NV_OK)
			break;
		ok++;
	}
	return ok;
}

int main(void)
{
	struct rmc_session a = { 0 }, b = { 0 }, c;
	struct adv_tally t = { 0 };
	rmc_status_t st;
	int r1, r2, r3, settled;

	if ((st = open_with_client(&a, REUSED_CLIENT)) != NV_OK) {
		printf("setup_a=%s\n", rmc_status_str(st));
		return ADV_EXIT_SETUP;
	}
	r1 = hold(&a, HOLD_CHUNKS, &t);
	close(a.fd); /* no RM_FREE: the driver frees H with the file */
	settled = adv_wait_fake_idle(CR_SETTLE_MS) == 0;
	if ((st = open_with_client(&b, REUSED_CLIENT)) != NV_OK) {
		printf("setup_b=%s\n", rmc_status_str(st));
		return ADV_EXIT_SETUP;
	}
	r2 = hold(&b, HOLD_CHUNKS, &t);
	adv_session_or_die(&c, -1, "client_reuse");
	r3 = hold(&c, ADV_MAX_CHUNKS, &t);
	printf("round1_ok=%d round2_ok=%d round3_ok=%d settled=%d\n", r1, r2, r3, settled);
	adv_print_summary(&t);
	return 0;
}
