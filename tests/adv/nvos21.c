/* SPDX-License-Identifier: MIT */
/*
 * nvos21 - vidmem allocations through the 32-byte NVOS21 form of RM_ALLOC
 * (request 0xC020462B). The driver tells NVOS21 from NVOS64 only by the
 * ioctl size, so a supervisor must decode both; this also runs the NVOS21
 * form wrapped in XFER, where the size is only in the XFER header.
 */
#include <stdio.h>

#include "adv.h"

int main(void)
{
	struct rmc_session s;
	struct adv_fill direct = { 0 }, wrapped = { 0 };
	struct adv_tally total = { 0 };
	const struct rmc_how how = { .nvos21 = true };
	const struct rmc_how how_xfer = { .nvos21 = true, .xfer = true };

	adv_session_or_die(&s, -1, "nvos21");
	adv_fill(&s, &how, adv_alloc_rm, adv_free_rm, ADV_CHUNK, "nvos21", &direct);
	adv_fill_release(&s, &how, adv_free_rm, &direct);
	adv_fill(&s, &how_xfer, adv_alloc_rm, adv_free_rm, ADV_CHUNK, "nvos21_xfer", &wrapped);
	printf("direct_ok=%d direct_nomem=%d xfer_ok=%d xfer_nomem=%d\n",
	       direct.tally.ok, direct.tally.nomem, wrapped.tally.ok, wrapped.tally.nomem);
	adv_add(&total, &direct.tally);
	adv_add(&total, &wrapped.tally);
	adv_print_summary(&total);
	return 0;
}
