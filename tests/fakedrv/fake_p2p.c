/* SPDX-License-Identifier: MIT */
/*
 * fake_p2p.c - the fake RM's NV50_THIRD_PARTY_P2P registrations: what
 * NV503C_CTRL_CMD_REGISTER_VIDMEM and UNREGISTER_VIDMEM do on the real
 * driver, and how many of them it performed (the stats file), so that a
 * test of --p2p-register judges by the driver's account.
 *
 * Modelled on src/nvidia/src/kernel/gpu/bus/third_party_p2p_ctrl.c
 * (thirdpartyp2pCtrlCmdRegisterVidmem_IMPL, ..UnregisterVidmem_IMPL) and
 * third_party_p2p.c (CliAddThirdPartyP2PVidmemInfo,
 * CliDelThirdPartyP2PVidmemInfo, CliUnregisterMemoryFromThirdPartyP2P) of
 * NVIDIA/open-gpu-kernel-modules at 580.95.05:
 *  - the control's object must be an NV50_THIRD_PARTY_P2P (another object
 *    does not export it: NOT_SUPPORTED), and the params the driver's size
 *    (INVALID_PARAM_STRUCT, rs_resource.c);
 *  - REGISTER: hMemory is memory of the client under the P2P object's
 *    device (else OBJECT_NOT_FOUND), video memory (else NOT_SUPPORTED);
 *    size non-zero, size, address and offset 64 KiB aligned, no overflow,
 *    offset + size within the allocation (else INVALID_ARGUMENT); one
 *    registration per memory and object, ranges not overlapping
 *    (INSERT_DUPLICATE_NAME);
 *  - UNREGISTER: the memory must be registered with the object
 *    (OBJECT_NOT_FOUND);
 *  - freeing the memory (vidmemDestruct) or the object drops its
 *    registrations.
 * The fake has one device per GPU, so "under the same device" is "on the
 * same GPU" here.
 */
#include <stdlib.h>
#include <string.h>

#include "fake_rm_int.h"

struct registration {
	const struct res *p2p, *mem;
	uint64_t          first, last;   /* the registered address range */
};

static struct registration *regs;
static size_t n_regs, cap_regs;

static struct registration *find(const struct res *p2p, const struct res *mem)
{
	for (size_t i = 0; i < n_regs; i++)
		if (regs[i].p2p == p2p && regs[i].mem == mem)
			return &regs[i];
	return NULL;
}

static bool overlaps(const struct res *p2p, uint64_t first, uint64_t last)
{
	for (size_t i = 0; i < n_regs; i++)
		if (regs[i].p2p == p2p && first <= regs[i].last && regs[i].first <= last)
			return true;
	return false;
}

static nv_status_t check_range(const struct nv503c_register_vidmem_params *p, uint64_t bytes)
{
	const uint64_t align = NV503C_P2P_PAGE_64K - 1;

	if (p->size == 0 || (p->size & align) || (p->address & align) || (p->offset & align))
		return NV_ERR_INVALID_ARGUMENT;
	if (p->address + p->size < p->address || p->size + p->offset < p->size)
		return NV_ERR_INVALID_ARGUMENT;
	if (bytes < p->offset + p->size)
		return NV_ERR_INVALID_ARGUMENT;
	return NV_OK;
}

static nv_status_t do_register(struct client *c, struct obj *p2p,
                               const struct nv503c_register_vidmem_params *p)
{
	struct obj *m = fake_find_obj(c, p->h_memory);

	if (!m || (m->res->kind != K_VIDMEM && m->res->kind != K_SYSMEM) ||
	    m->res->gpu != p2p->res->gpu)
		return NV_ERR_OBJECT_NOT_FOUND;
	if (m->res->kind != K_VIDMEM)
		return NV_ERR_NOT_SUPPORTED;
	nv_status_t st = check_range(p, m->res->bytes);
	if (st != NV_OK)
		return st;
	if (find(p2p->res, m->res) || overlaps(p2p->res, p->address, p->address + p->size - 1))
		return NV_ERR_INSERT_DUPLICATE_NAME;
	if (n_regs == cap_regs) {
		size_t cap = cap_regs ? 2 * cap_regs : 16;
		struct registration *r = realloc(regs, cap * sizeof(*r));
		if (!r)
			return NV_ERR_NO_MEMORY;
		regs = r;
		cap_regs = cap;
	}
	regs[n_regs++] = (struct registration){ p2p->res, m->res, p->address, p->address + p->size - 1 };
	return NV_OK;
}

static nv_status_t do_unregister(struct client *c, struct obj *p2p,
                                 const struct nv503c_unregister_vidmem_params *p)
{
	struct obj *m = fake_find_obj(c, p->h_memory);
	struct registration *r = m ? find(p2p->res, m->res) : NULL;

	if (!r)
		return NV_ERR_OBJECT_NOT_FOUND;
	*r = regs[--n_regs];
	return NV_OK;
}

bool fake_p2p_is_registration(uint32_t cmd)
{
	return cmd == NV503C_CTRL_CMD_REGISTER_VIDMEM || cmd == NV503C_CTRL_CMD_UNREGISTER_VIDMEM;
}

nv_status_t fake_p2p_control(struct client *c, struct obj *o, uint32_t cmd, const void *params,
                             uint32_t params_size)
{
	const bool reg = cmd == NV503C_CTRL_CMD_REGISTER_VIDMEM;
	nv_status_t st;

	if (!o || o->cls != NV50_THIRD_PARTY_P2P)
		return NV_ERR_NOT_SUPPORTED;
	if (!params || params_size != (reg ? sizeof(struct nv503c_register_vidmem_params)
	                                   : sizeof(struct nv503c_unregister_vidmem_params)))
		return NV_ERR_INVALID_PARAM_STRUCT;
	st = reg ? do_register(c, o, params) : do_unregister(c, o, params);
	/* The driver's account: every one it performed, and how it ended. */
	if (reg && st == NV_OK)
		fake_st.p2p_registered++;
	else if (reg)
		fake_st.p2p_register_failed++;
	else if (st == NV_OK)
		fake_st.p2p_unregistered++;
	else
		fake_st.p2p_unregister_failed++;
	return st;
}

void fake_p2p_forget(const struct res *r)
{
	for (size_t i = 0; i < n_regs;) {
		if (regs[i].p2p == r || regs[i].mem == r)
			regs[i] = regs[--n_regs];
		else
			i++;
	}
}

size_t fake_p2p_live(void)
{
	return n_regs;
}
