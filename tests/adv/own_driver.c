/* SPDX-License-Identifier: MIT */
/*
 * own_driver - the workload serves its own "driver" and feeds its answers
 * to the supervisor (issue #17 item 10).
 *
 * argv[1] is the control file of a second gs-fakedrv (the harness mounts it
 * outside /dev before the sandbox starts; a workload that can mount FUSE in
 * a user namespace can do the same): a file that answers like the driver
 * but is not the driver. The attack:
 *  1. on the real driver, client X holds 768 MiB (within --mem 1g);
 *  2. on the look-alike, a client with the same handle X, with a device,
 *     is freed: a supervisor that takes the look-alike for the driver
 *     performs the free there, sees NV_OK and drops client X's charges;
 *  3. on the real driver, a second client allocates 768 MiB, and the
 *     look-alike's own video memory is allocated through the sandbox too.
 * Judged by the real fake's account: its peak must stay within the quota.
 *
 * Prints real1= evil_client= evil_free= real2= evil_mem= and SUMMARY.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "adv.h"

#define HOLD (768ull * RMC_MIB)

int main(int argc, char **argv)
{
	struct rmc_session real, evil, again;
	struct adv_tally t = { 0 };
	rmc_status_t real1, evil_client, evil_free = NV_ERR_GENERIC, real2, evil_mem = NV_ERR_GENERIC;
	int efd;

	if (argc != 2) {
		fprintf(stderr, "usage: own_driver LOOKALIKE_CTL\n");
		return ADV_EXIT_SETUP;
	}
	adv_session_or_die(&real, -1, "own_driver");
	real1 = adv_alloc_rm(&real, NULL, rmc_next_handle(&real), HOLD);
	adv_count(&t, real1);

	efd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (efd < 0) {
		perror("own_driver: open look-alike");
		return ADV_EXIT_SETUP;
	}
	evil_client = rmc_session_open_client(&evil, efd, real.client);
	if (evil_client == NV_OK) {
		evil_mem = adv_alloc_rm(&evil, NULL, rmc_next_handle(&evil), HOLD);
		evil_free = rmc_free(efd, NULL, real.client, real.client, real.client);
	}

	adv_session_or_die(&again, -1, "own_driver");
	real2 = adv_alloc_rm(&again, NULL, rmc_next_handle(&again), HOLD);
	adv_count(&t, real2);

	printf("real1=0x%x evil_client=0x%x evil_mem=0x%x evil_free=0x%x real2=0x%x\n", real1,
	       evil_client, evil_mem, evil_free, real2);
	printf("real2 is %s (must be NO_MEMORY: client X still holds 768 MiB)\n",
	       rmc_status_str(real2));
	adv_print_summary(&t);
	return 0;
}
