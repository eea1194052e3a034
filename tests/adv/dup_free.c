/* SPDX-License-Identifier: MIT */
/*
 * dup_free - a duplicated handle keeps the memory alive.
 *
 * Allocate 768 MiB (h1), RM_DUP_OBJECT it to h2, free h1, then allocate
 * 768 MiB again (h3). RM keeps the memory until every handle to it is
 * freed, so h2 still holds 768 MiB and h3 must be refused: a supervisor
 * that released the charge on the first free would let the driver reach
 * 1.5 GiB. Finally free h2 and allocate 768 MiB (h4), which must succeed
 * (the charge must be released when the last handle goes).
 *
 * Prints first= dup= free1= second= free2= third= (hex RM status) and
 * SUMMARY.
 */
#include <stdio.h>

#include "adv.h"

#define DUP_SIZE (768ull * RMC_MIB)

int main(void)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };
	nv_handle_t h1, h2, h3, h4;
	rmc_status_t first, dup, free1, second, free2, third;

	adv_session_or_die(&s, -1, "dup_free");
	h1 = rmc_next_handle(&s);
	first = adv_alloc_rm(&s, NULL, h1, DUP_SIZE);
	adv_count(&t, first);

	/* Same client, same parent (the device): a second handle on the same
	 * memory object. */
	h2 = rmc_next_handle(&s);
	dup = rmc_dup(s.fd, NULL, s.client, s.device, &h2, s.client, h1);
	free1 = adv_free_rm(&s, NULL, h1);

	h3 = rmc_next_handle(&s);
	second = adv_alloc_rm(&s, NULL, h3, DUP_SIZE);
	adv_count(&t, second);
	if (second == NV_OK)
		(void)adv_free_rm(&s, NULL, h3);

	free2 = dup == NV_OK ? adv_free_rm(&s, NULL, h2) : NV_OK;
	h4 = rmc_next_handle(&s);
	third = adv_alloc_rm(&s, NULL, h4, DUP_SIZE);
	adv_count(&t, third);

	printf("first=0x%x dup=0x%x free1=0x%x second=0x%x free2=0x%x third=0x%x\n", first,
	       dup, free1, second, free2, third);
	printf("second is %s (must be NO_MEMORY when the dup succeeded)\n",
	       rmc_status_str(second));
	adv_print_summary(&t);
	return 0;
}
