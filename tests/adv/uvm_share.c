/* SPDX-License-Identifier: MIT */
/*
 * uvm_share - the supervisor's UVM map must not change who may dup the
 * workload's memory.
 *
 * The supervisor performs UVM_MAP_EXTERNAL_ALLOCATION through a client of
 * its own, after the workload's client shares the memory with that client
 * (RM_SHARE, RS_SHARE_TYPE_CLIENT; exec_uvm.c). A handle's first share
 * starts an empty list unless it asks for RS_SHARE_ACTION_FLAG_COMPOSE
 * (clientShareResource_IMPL, resserv/src/rs_client.c, 580.95.05; modelled
 * by the fake, fake_share.c), so a share without it takes away the
 * driver's default policy: a second client of the workload's own process
 * could no longer dup memory it had mapped (NV_ERR_INSUFFICIENT_PERMISSIONS),
 * where the driver alone lets it.
 *
 * And the share must not outlive the map: a policy naming the
 * supervisor's client would outlive that client (an agent restarted while
 * its containers live), and RM gives a client any free handle its maker
 * asks for, so another process could take the old handle and dup the
 * workload's memory. The fake's own count of CLIENT policies is read after
 * the map and a later trapped call (the supervisor revokes after it
 * answers): nothing in this program shares anything.
 *
 * Client A maps 2 MiB of its video memory through UVM; client B, on a
 * second control file of the same process, dups it. Prints map= dup=
 * (hex RM status) policies= and SUMMARY. map and dup must be 0x0, as
 * without gpusandbox, and policies 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "adv.h"

#define MAP_SIZE (2ull * RMC_MIB)

int main(void)
{
	struct rmc_session a, b;
	struct adv_tally t = { 0 };
	nv_handle_t ha, hb;
	rmc_status_t first, mapped, dup;
	static struct adv_uvm_map m;

	adv_session_or_die(&a, -1, "uvm_share A");
	adv_session_or_die(&b, -1, "uvm_share B");
	ha = rmc_next_handle(&a);
	first = adv_alloc_rm(&a, NULL, ha, MAP_SIZE);
	adv_count(&t, first);
	int uvm = adv_uvm_with_range(MAP_SIZE, "uvm_share");
	adv_uvm_fill_map(&m, a.fd, a.client, ha, MAP_SIZE);
	mapped = adv_uvm_map(uvm, &m);
	hb = rmc_next_handle(&b);
	dup = rmc_dup(b.fd, NULL, b.client, b.device, &hb, a.client, ha);
	uint64_t policies = UINT64_MAX;
	(void)rmc_fake_stat("share_client_policies", &policies);
	if (dup == NV_OK)
		(void)adv_free_rm(&b, NULL, hb);
	(void)adv_free_rm(&a, NULL, ha);
	close(uvm);
	printf("first=0x%x map=0x%x dup=0x%x policies=%lld\n", first, mapped, dup,
	       policies == UINT64_MAX ? -1ll : (long long)policies);
	adv_print_summary(&t);
	return 0;
}
