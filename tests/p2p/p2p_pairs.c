/* SPDX-License-Identifier: MIT */
/*
 * p2p_pairs.c - CUDA's cuMemAlloc + cuMemFree pair, registration controls
 * included, then registration controls the driver refuses, for
 * tests/p2p/run.sh (--p2p-register).
 *
 *   p2p_pairs PAIRS
 *
 * Each pair is what CUDA sends for a 2 MiB allocation (shared/traces):
 * RM_ALLOC 0x40 under the device, NV503C_CTRL_CMD_REGISTER_VIDMEM of the
 * whole allocation with its NV50_THIRD_PARTY_P2P object, UNREGISTER_VIDMEM,
 * RM_FREE. Then one of each call the driver refuses
 * (third_party_p2p_ctrl.c, rs_resource.c at 580.95.05), each printed with
 * the status the workload saw: a wrong paramsSize, an object that is not a
 * P2P object, the client used through another open file, a client unknown
 * here, a range beyond the allocation, a memory handle that names nothing.
 * It prints one line, "pairs_ok=N reg_ok=N unreg_ok=N" and the statuses;
 * the judge is the fake's own count of what it performed (its stats).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmclient.h"

#define H_P2P          0x5c0000f0u
#define H_NOWHERE      0x5c0000f1u
#define CLIENT_UNKNOWN 0xc1d00badu
#define PAIR_BYTES     (2ull << 20)
/* A 64 KiB-aligned virtual address, as CUDA registers its allocations. */
#define PAIR_ADDRESS   0x7f0000000000ull
#define P2P_ALLOC_PARAMS_SIZE 4u

static rmc_status_t reg(int fd, nv_handle_t client, nv_handle_t obj, nv_handle_t mem,
                        uint64_t size, uint32_t params_size)
{
	struct nv503c_register_vidmem_params p = { .h_memory = mem, .address = PAIR_ADDRESS,
	                                           .size = size, .offset = 0 };
	return rmc_control(fd, NULL, client, obj, NV503C_CTRL_CMD_REGISTER_VIDMEM, &p, params_size);
}

static rmc_status_t unreg(int fd, nv_handle_t client, nv_handle_t obj, nv_handle_t mem)
{
	struct nv503c_unregister_vidmem_params p = { .h_memory = mem };
	return rmc_control(fd, NULL, client, obj, NV503C_CTRL_CMD_UNREGISTER_VIDMEM, &p,
	                   rmc_ctrl_size(NV503C_CTRL_CMD_UNREGISTER_VIDMEM, sizeof(p)));
}

static uint32_t reg_size(void)
{
	return rmc_ctrl_size(NV503C_CTRL_CMD_REGISTER_VIDMEM,
	                     sizeof(struct nv503c_register_vidmem_params));
}

/* The refused calls, on a live 2 MiB allocation h. */
static void refusals(struct rmc_session *s, struct rmc_session *other, nv_handle_t h)
{
	printf(" wrong_size=0x%x", reg(s->fd, s->client, H_P2P, h, PAIR_BYTES, reg_size() - 8));
	printf(" not_p2p=0x%x", reg(s->fd, s->client, s->subdevice, h, PAIR_BYTES, reg_size()));
	printf(" other_file=0x%x", reg(other->fd, s->client, H_P2P, h, PAIR_BYTES, reg_size()));
	printf(" unknown_client=0x%x", reg(s->fd, CLIENT_UNKNOWN, H_P2P, h, PAIR_BYTES, reg_size()));
	printf(" beyond=0x%x", reg(s->fd, s->client, H_P2P, h, 2 * PAIR_BYTES, reg_size()));
	printf(" no_memory=0x%x", reg(s->fd, s->client, H_P2P, H_NOWHERE, PAIR_BYTES, reg_size()));
}

int main(int argc, char **argv)
{
	struct rmc_session s, other;
	unsigned pairs = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 10;
	unsigned pairs_ok = 0, reg_ok = 0, unreg_ok = 0;
	uint32_t p2p_params = 0;
	nv_handle_t h = H_P2P;

	if (rmc_session_open(&s, -1) != NV_OK || rmc_session_open(&other, -1) != NV_OK) {
		fprintf(stderr, "p2p_pairs: set-up failed\n");
		return 2;
	}
	/* Without the object (a driver without the class, or p2p-register
	 * none) CUDA goes on and registers nothing: so do the pairs. */
	rmc_status_t p2p = rmc_alloc(s.fd, NULL, s.client, s.subdevice, &h, NV50_THIRD_PARTY_P2P, &p2p_params,
	                             P2P_ALLOC_PARAMS_SIZE);
	printf("p2p_object=0x%x ", p2p);
	for (unsigned i = 0; i < pairs; i++) {
		nv_handle_t m = rmc_next_handle(&s);
		if (rmc_alloc_vidmem(s.fd, NULL, s.client, s.device, m, PAIR_BYTES) != NV_OK)
			break;
		bool r = p2p == NV_OK ? reg(s.fd, s.client, H_P2P, m, PAIR_BYTES, reg_size()) == NV_OK : true;
		bool u = p2p == NV_OK ? unreg(s.fd, s.client, H_P2P, m) == NV_OK : true;
		reg_ok += p2p == NV_OK && r;
		unreg_ok += p2p == NV_OK && u;
		pairs_ok += rmc_free(s.fd, NULL, s.client, s.device, m) == NV_OK && r && u;
	}
	printf("pairs_ok=%u reg_ok=%u unreg_ok=%u", pairs_ok, reg_ok, unreg_ok);
	nv_handle_t m = rmc_next_handle(&s);
	if (p2p == NV_OK && rmc_alloc_vidmem(s.fd, NULL, s.client, s.device, m, PAIR_BYTES) == NV_OK)
		refusals(&s, &other, m);
	printf("\n");
	return 0;
}
