/* SPDX-License-Identifier: MIT */
/*
 * dup_cross - a dup in a second client keeps memory after the first
 * client dies with its file (issue #17, item 3: charge until the driver
 * really frees, at the last reference).
 *
 * Client A (its own control file) allocates 768 MiB; client B (a second
 * control file of the same process, which RM's default share policy
 * allows to dup A's objects) dups it; A's file is closed, so RM frees A
 * and its handle, but not the memory B's dup holds. B then asks for 768
 * MiB more, which must be refused (NO_MEMORY under --mem 1g); after B
 * frees its dup, the same request must succeed (the charge went with the
 * last reference).
 *
 * Prints first= dup= second= third= (statuses) and SUMMARY.
 */
#include <stdio.h>
#include <unistd.h>

#include "adv.h"

#define CROSS_SIZE (768ull * RMC_MIB)

int main(void)
{
	struct rmc_session a, b;
	struct adv_tally t = { 0 };
	nv_handle_t ha, hb, h2, h3;
	rmc_status_t first, dup, second, third;

	adv_session_or_die(&a, -1, "dup_cross A");
	adv_session_or_die(&b, -1, "dup_cross B");
	ha = rmc_next_handle(&a);
	first = adv_alloc_rm(&a, NULL, ha, CROSS_SIZE);
	adv_count(&t, first);
	hb = rmc_next_handle(&b);
	dup = rmc_dup(b.fd, NULL, b.client, b.device, &hb, a.client, ha);
	/* A dies with its file; the memory lives on in B's dup. */
	close(a.fd);

	h2 = rmc_next_handle(&b);
	second = adv_alloc_rm(&b, NULL, h2, CROSS_SIZE);
	adv_count(&t, second);
	if (second == NV_OK)
		(void)adv_free_rm(&b, NULL, h2);
	if (dup == NV_OK)
		(void)adv_free_rm(&b, NULL, hb);
	h3 = rmc_next_handle(&b);
	third = adv_alloc_rm(&b, NULL, h3, CROSS_SIZE);
	adv_count(&t, third);

	printf("first=%s dup=%s second=%s third=%s\n", rmc_status_str(first), rmc_status_str(dup),
	       rmc_status_str(second), rmc_status_str(third));
	adv_print_summary(&t);
	return 0;
}
