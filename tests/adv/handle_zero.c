/* SPDX-License-Identifier: MIT */
/*
 * handle_zero - objects whose handle is 0 (issue #17 item 12).
 *
 * Run against a fake driver that picks handle 0 while it is free
 * (--handle-zero): make a device and let the driver choose its handle (0),
 * allocate video memory under it, free the memory, then the device, make
 * the device again (0 again) and allocate once more. Every step is valid
 * for the driver. The supervisor's ledger once took handle 0 for "no
 * parent": the memory stayed linked under the device after its free, the
 * device's free walked it again and closed the free list on itself, and
 * the next free under that client (the client's own, at this program's
 * exit at the latest) went round the cycle for ever, at 100 % CPU and deaf
 * to SIGTERM. run.sh judges by the run ending, and by the fake's account
 * that everything was freed.
 *
 * Prints dev= mem= free_mem= free_dev= dev2= again= (hex RM status) and
 * SUMMARY.
 */
#include <stdio.h>

#include "adv.h"

#define PIECE (64ull * RMC_MIB)
/* Ask the driver to choose the handle. */
#define DRIVER_PICKS 0u

int main(void)
{
	struct adv_tally t = { 0 };
	nv_handle_t client = 0, mem = RMC_H_MEM_BASE, again = RMC_H_MEM_BASE + 1;
	rmc_status_t dev, st_mem, free_mem, free_dev, dev2, st_again;
	int fd = rmc_open_ctl();

	if (fd < 0 || rmc_alloc_client(fd, NULL, &client) != NV_OK) {
		fprintf(stderr, "handle_zero: no client\n");
		return ADV_EXIT_SETUP;
	}
	dev = rmc_alloc_device(fd, client, DRIVER_PICKS);
	/* Parent 0: the device the driver named 0. */
	st_mem = rmc_alloc_vidmem(fd, NULL, client, 0, mem, PIECE);
	adv_count(&t, st_mem);
	free_mem = rmc_free(fd, NULL, client, 0, mem);
	free_dev = rmc_free(fd, NULL, client, client, 0);
	dev2 = rmc_alloc_device(fd, client, DRIVER_PICKS);
	st_again = rmc_alloc_vidmem(fd, NULL, client, 0, again, PIECE);
	adv_count(&t, st_again);
	printf("dev=0x%x mem=0x%x free_mem=0x%x free_dev=0x%x dev2=0x%x again=0x%x\n", dev, st_mem,
	       free_mem, free_dev, dev2, st_again);
	adv_print_summary(&t);
	return 0;
}
