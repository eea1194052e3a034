/* SPDX-License-Identifier: MIT */
/*
 * fake_uvm_gpu.c - UVM_REGISTER_GPU: a GPU registered, by UUID, in the
 * caller's VA space (its UVM file).
 *
 * The driver (tag 580.95.05 of NVIDIA/open-gpu-kernel-modules):
 * uvm_api_register_gpu (kernel-open/nvidia-uvm/uvm_va_space.c) retains the
 * GPU by UUID (gpu_retain_by_uuid_locked, uvm_gpu.c), which asks RM for
 * the GPU's info on every registration (nvUvmInterfaceGetGpuInfo ->
 * nvGpuOpsGetGpuInfo, src/nvidia/src/kernel/rmapi/nv_gpu_ops.c): an
 * unknown UUID is NV_ERR_GPU_UUID_NOT_FOUND, and a caller whose process
 * holds no open node of that GPU (osIsGpuAccessible, the same fd-table
 * walk as a device allocation's: fake_nodes.c) gets
 * NV_ERR_INSUFFICIENT_PERMISSIONS. No RM device of the caller's is needed.
 * A GPU registered twice in one VA space is NV_ERR_INVALID_DEVICE
 * (uvm_va_space_register_gpu). The registration lasts until
 * UVM_UNREGISTER_GPU (not modelled) or the file's last close.
 *
 * What a registration gives, managed memory that may live on that GPU,
 * is not modelled: the stats count the VA spaces that have each GPU
 * registered (gpu<g>.uvm_registered, and _peak), which is what a test of
 * --gpus judges.
 *
 * Everything here runs with fake_st.lock held.
 */
#include <stdlib.h>

#include "fake_rm_int.h"
#include "nvuvm_abi.h"

struct gpu_reg {
	uint64_t file;
	int      gpu;
};

static struct gpu_reg *regs;
static size_t nregs, cap_regs;
static unsigned live[FAKE_MAX_GPUS], peak[FAKE_MAX_GPUS];

nv_status_t fake_uvm_gpu_register(pid_t caller, uint64_t file, struct uvm_register_gpu_params *p)
{
	int g = fake_gpu_of_raw_uuid(p->gpu_uuid);

	if (g < 0)
		return NV_ERR_GPU_UUID_NOT_FOUND;
	if (!fake_holds_gpu_node(caller, g))
		return NV_ERR_INSUFFICIENT_PERMISSIONS;
	for (size_t i = 0; i < nregs; i++)
		if (regs[i].file == file && regs[i].gpu == g)
			return NV_ERR_INVALID_DEVICE;
	if (nregs == cap_regs) {
		size_t cap = cap_regs ? cap_regs * 2 : 8;
		struct gpu_reg *r = realloc(regs, cap * sizeof(*r));
		if (!r)
			return NV_ERR_NO_MEMORY;
		regs = r;
		cap_regs = cap;
	}
	regs[nregs++] = (struct gpu_reg){ file, g };
	if (++live[g] > peak[g])
		peak[g] = live[g];
	p->numa_enabled = 0;
	p->numa_node_id = -1;
	return NV_OK;
}

void fake_uvm_gpu_release_file(uint64_t file)
{
	for (size_t i = 0; i < nregs;) {
		if (regs[i].file == file) {
			live[regs[i].gpu]--;
			regs[i] = regs[--nregs];
		} else {
			i++;
		}
	}
}

unsigned fake_uvm_gpu_registered(unsigned g)
{
	return g < FAKE_MAX_GPUS ? live[g] : 0;
}

unsigned fake_uvm_gpu_registered_peak(unsigned g)
{
	return g < FAKE_MAX_GPUS ? peak[g] : 0;
}
