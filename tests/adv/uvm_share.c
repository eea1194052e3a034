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
 * And the share is one per client (issue #31): the supervisor shares the
 * workload's client object with its own client once, inherited by the
 * memory (rsAccessGetActiveShareList, resserv/src/rs_access_map.c,
 * 580.95.05), rather than each memory for one map. The fake's own counts
 * of CLIENT policies are read after three maps: none on any memory, one
 * on A's client object (nothing in this program shares anything).
 *
 * Client A maps 2 MiB of its video memory through UVM; client B, on a
 * second control file of the same process, dups it. Then two more maps of
 * new memory at the same range, and B dups the last. Prints map= dup=
 * (hex RM status) map2= dup2= obj_policies= client_policies=
 * token_policies= (OS_SECURITY_TOKEN ones, anywhere) maps= (the
 * fake's count of maps made) and SUMMARY.
 *
 * "replace": between the first map and the second, A replaces its
 * client's inherited policy list (NV0000_CTRL_CMD_CLIENT_SET_INHERITED_
 * SHARE_POLICY without COMPOSE, as libcuda may: the driver's default
 * policy alone), which takes the supervisor's client share away; the
 * later maps must still be made (the supervisor shares again when its dup
 * is refused: exec_uvm.c dup_for_map). Its baseline
 * (GPUSANDBOX_TEST_NO_RESHARE) does not share again, and the fake refuses
 * the later maps (INSUFFICIENT_PERMISSIONS).
 *
 * "memory": the second memory's own list is edited before its map
 * (RM_SHARE of it, the default policy alone, without COMPOSE), so it does
 * not inherit the client's share; the supervisor's dup is refused, shared
 * again, refused again, and the memory must be shared alone (as before
 * issue #31) and mapped; its baseline (GPUSANDBOX_TEST_NO_RESHARE) is
 * refused (mid=, that map's status). No CLIENT policy may be left on any
 * memory: the per-memory share is revoked after the answer.
 *
 * Under --uvm-map as-user (the *_as_user cases of run.sh) the supervisor
 * maps the workload's own memory as its uid after one share of the
 * client by token (own_rm.h): the same statuses, no CLIENT policy and no
 * client of the supervisor's (the fake's clients_peak is A's and B's),
 * except under "memory", whose edited list refuses the token's dup too,
 * so that its map goes through the supervisor's client as before.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adv.h"

#define MAP_SIZE (2ull * RMC_MIB)

#define MAPS 3

/* A's client's list replaced by the driver's default policy alone. */
static rmc_status_t replace_inherited(struct rmc_session *a)
{
	struct rs_share_policy pid_only = { .access_mask = RS_ACCESS_DUP_OBJECT_BIT,
	                                    .type = RS_SHARE_TYPE_PID };

	return rmc_control(a->fd, NULL, a->client, a->client, NV0000_CTRL_CMD_CLIENT_SET_INHERITED_SHARE_POLICY,
	                   &pid_only, sizeof(pid_only));
}

/* mem's own list: the default policy alone (no COMPOSE). */
static rmc_status_t edit_memory_list(struct rmc_session *a, nv_handle_t mem)
{
	struct nvos57 q = { .h_client = a->client, .h_object = mem,
	                    .policy = { .access_mask = RS_ACCESS_DUP_OBJECT_BIT, .type = RS_SHARE_TYPE_PID } };

	int r = rmc_escape(a->fd, NULL, NV_ESC_RM_SHARE, &q, sizeof(q));

	return r ? RMC_SYSERR(-r) : q.status;
}

static uint64_t fake_stat(const char *name)
{
	uint64_t v = UINT64_MAX;

	(void)rmc_fake_stat(name, &v);
	return v;
}

static long long shown(uint64_t v)
{
	return v == UINT64_MAX ? -1ll : (long long)v;
}

int main(int argc, char **argv)
{
	const int replace = argc > 1 && !strcmp(argv[1], "replace");
	const int memory = argc > 1 && !strcmp(argv[1], "memory");
	struct rmc_session a, b;
	struct adv_tally t = { 0 };
	nv_handle_t ha[MAPS], hb = 0, hb2;
	rmc_status_t first = NV_OK, mapped[MAPS], dup = NV_OK, dup2, replaced = NV_OK;
	static struct adv_uvm_map m;

	adv_session_or_die(&a, -1, "uvm_share A");
	adv_session_or_die(&b, -1, "uvm_share B");
	int uvm = adv_uvm_with_range(MAP_SIZE, "uvm_share");
	for (int i = 0; i < MAPS; i++) {
		ha[i] = rmc_next_handle(&a);
		rmc_status_t st = adv_alloc_rm(&a, NULL, ha[i], MAP_SIZE);
		adv_count(&t, st);
		if (i == 0)
			first = st;
		if (memory && i == 1)
			replaced = edit_memory_list(&a, ha[i]);
		adv_uvm_fill_map(&m, a.fd, a.client, ha[i], MAP_SIZE);
		mapped[i] = adv_uvm_map(uvm, &m);
		if (i == 0) {
			hb = rmc_next_handle(&b);
			dup = rmc_dup(b.fd, NULL, b.client, b.device, &hb, a.client, ha[0]);
			if (replace)
				replaced = replace_inherited(&a);
		}
	}
	hb2 = rmc_next_handle(&b);
	dup2 = rmc_dup(b.fd, NULL, b.client, b.device, &hb2, a.client, ha[MAPS - 1]);
	uint64_t obj_policies = fake_stat("share_object_policies");
	uint64_t client_policies = fake_stat("share_client_object_policies");
	uint64_t token_policies = fake_stat("share_token_policies");
	uint64_t maps = fake_stat("uvm_maps");
	if (dup == NV_OK)
		(void)adv_free_rm(&b, NULL, hb);
	if (dup2 == NV_OK)
		(void)adv_free_rm(&b, NULL, hb2);
	for (int i = 0; i < MAPS; i++)
		(void)adv_free_rm(&a, NULL, ha[i]);
	close(uvm);
	printf("first=0x%x map=0x%x dup=0x%x replaced=0x%x mid=0x%x map2=0x%x dup2=0x%x obj_policies=%lld "
	       "client_policies=%lld token_policies=%lld maps=%lld\n",
	       first, mapped[0], dup, replaced, mapped[1], mapped[MAPS - 1], dup2, shown(obj_policies),
	       shown(client_policies), shown(token_policies), shown(maps));
	adv_print_summary(&t);
	return 0;
}
