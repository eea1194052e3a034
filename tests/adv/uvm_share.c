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
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "adv.h"

#define MAP_SIZE (2ull * RMC_MIB)
#define RANGE_BASE 0x7f4000000000ull
#define MAX_GPUS UVM_MAX_GPUS_570 /* the fake plays 580 */

static uint8_t map_bytes[UVM_MAP_EXTERNAL_SIZE(MAX_GPUS)];

static struct uvm_map_external_tail *tail(void)
{
	return (struct uvm_map_external_tail *)(map_bytes + UVM_MAP_EXTERNAL_TAIL_OFF(MAX_GPUS));
}

/* Maps (client, mem) at RANGE_BASE on the fake's first GPU through a
 * fresh UVM file with an external range there; the file is returned in
 * *uvm_out (the mapping lives while it is open). */
static rmc_status_t map_through_uvm(int ctl, nv_handle_t client, nv_handle_t mem, int *uvm_out)
{
	struct uvm_initialize_params init = { 0 };
	struct uvm_create_external_range_params range = { .base = RANGE_BASE, .length = MAP_SIZE };
	struct uvm_map_external_head head = { .base = RANGE_BASE, .length = MAP_SIZE };
	struct uvm_gpu_mapping_attrs gpu = { .gpu_uuid = { 0x11 } };
	int fd = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);

	*uvm_out = fd;
	if (fd < 0 || syscall(SYS_ioctl, fd, UVM_INITIALIZE, &init) < 0 ||
	    syscall(SYS_ioctl, fd, UVM_CREATE_EXTERNAL_RANGE, &range) < 0 || range.rm_status != NV_OK) {
		printf("uvm_share: UVM setup failed (range status 0x%x)\n", range.rm_status);
		fflush(stdout);
		_exit(ADV_EXIT_SETUP);
	}
	memcpy(map_bytes, &head, sizeof(head));
	memcpy(map_bytes + sizeof(head), &gpu, sizeof(gpu));
	*tail() = (struct uvm_map_external_tail){ .gpu_count = 1, .rm_ctrl_fd = ctl, .h_client = client,
	                                          .h_memory = mem, .rm_status = NV_ERR_GENERIC };
	if (syscall(SYS_ioctl, fd, UVM_MAP_EXTERNAL_ALLOCATION, map_bytes) < 0)
		return RMC_SYSERR(errno);
	return tail()->rm_status;
}

int main(void)
{
	struct rmc_session a, b;
	struct adv_tally t = { 0 };
	nv_handle_t ha, hb;
	rmc_status_t first, mapped, dup;
	int uvm;

	adv_session_or_die(&a, -1, "uvm_share A");
	adv_session_or_die(&b, -1, "uvm_share B");
	ha = rmc_next_handle(&a);
	first = adv_alloc_rm(&a, NULL, ha, MAP_SIZE);
	adv_count(&t, first);
	mapped = map_through_uvm(a.fd, a.client, ha, &uvm);
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
