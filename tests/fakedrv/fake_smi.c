/* SPDX-License-Identifier: MIT */
/*
 * fake_smi.c - what nvidia-smi's views ask of the driver beyond the memory
 * and process reports (issue #29 item 3), modelled for an H200 (GH100, no
 * display engine, no NVENC), from open-gpu-kernel-modules at 580.95.05:
 *
 *  - NV04_DISPLAY_COMMON: the parent must be a device; GH100 is not in the
 *    class's lists (g_gpu_class_list.c), so the resource factory answers
 *    NV_ERR_NOT_SUPPORTED (gpuIsClassSupported, alloc_free.c).
 *  - NV20_SUBDEVICE_DIAG: the parent must be a subdevice, one per parent
 *    (resource_list.h: not multi-instance; alloc_free.c answers a second
 *    NV_ERR_STATE_IN_USE); its constructor does nothing else
 *    (diagapiConstruct_IMPL, subdevice_diag.c).
 *  - GPU_GET_NVENC_SW_SESSION_STATS / GET_NVFBC_SW_SESSION_STATS: the count
 *    of the GPU's software sessions of every client, with the averages of
 *    what the sessions reported (subdevice_ctrl_gpu_kernel.c): here the
 *    live NVENC_SW_SESSION / NVFBC_SW_SESSION objects of all clients on the
 *    GPU, with averages 0 (no fake session reports a frame).
 *  - FB_GET_OFFLINED_PAGES: NV_ERR_NOT_SUPPORTED, and the InfoROM object's
 *    BBX_GET_LAST_FLUSH_TIME NV_ERR_NOT_READY: what driver 580.159.04
 *    answered on an H200 natively (an RM call log of nvidia-smi -q without
 *    gpusandbox, 2026-12-02; both handlers run on GSP, not in the open
 *    source). Hopper remaps rows instead of retiring pages.
 *  - ECC_GET_REPAIR_STATUS, ECC_GET_UNREPAIRABLE_MEMORY_FLAG (590.44.01):
 *    nothing pending, memory repairable (NV_OK natively).
 *  - NV208F GPU_VERIFY_INFOROM on the diagnostics object: NV_OK, result
 *    and checksum 0 (the result values are not in the open headers).
 *  - the setters the tests keep refused: GPU_SET_COMPUTE_MODE_RULES and the
 *    diagnostics object's BIF_CONFIG_REG_WRITE. Both are performed and
 *    counted (compute_mode_sets, diag_config_writes in the stats): the
 *    fake's own account of whether one reached the driver.
 * Each checks its size as the driver's exported-method table does
 * (NV_ERR_INVALID_PARAM_STRUCT, rs_resource.c) and the object it is sent to.
 */
#include <string.h>

#include "fake_rm_int.h"
#include "nvrm_monitoring.h"

/* BBX_GET_LAST_FLUSH_TIME's params (nvrm/v580/controls.def). */
#define BBX_LAST_FLUSH_TIME_SIZE 16u

static bool parent_has_class(const struct client *c, nv_handle_t h_parent, uint32_t cls)
{
	for (size_t j = 0; j < c->n; j++)
		if (c->objs[j].parent == h_parent && c->objs[j].cls == cls)
			return true;
	return false;
}

nv_status_t fake_smi_alloc_check(const struct client *c, nv_handle_t h_parent, enum obj_kind parent_kind,
                                 uint32_t cls)
{
	switch (cls) {
	case NV04_DISPLAY_COMMON:
		if (parent_has_class(c, h_parent, cls))
			return NV_ERR_STATE_IN_USE;
		return parent_kind != K_DEVICE ? NV_ERR_INVALID_OBJECT_PARENT : NV_ERR_NOT_SUPPORTED;
	case NV20_SUBDEVICE_DIAG:
		if (parent_has_class(c, h_parent, cls))
			return NV_ERR_STATE_IN_USE;
		return parent_kind != K_SUBDEVICE ? NV_ERR_INVALID_OBJECT_PARENT : NV_OK;
	default:
		return NV_OK;
	}
}

bool fake_smi_models(uint32_t cmd)
{
	switch (cmd) {
	case NV2080_CTRL_GPU_GET_NVENC_SW_SESSION_STATS:
	case NV2080_CTRL_GPU_GET_NVFBC_SW_SESSION_STATS:
	case NV2080_CTRL_CMD_FB_GET_OFFLINED_PAGES:
	case NV2080_CTRL_CMD_ECC_GET_REPAIR_STATUS:
	case NV2080_CTRL_CMD_ECC_GET_UNREPAIRABLE_MEMORY_FLAG:
	case NV2080_CTRL_CMD_GPU_SET_COMPUTE_MODE_RULES:
	case NV208F_CTRL_CMD_BIF_CONFIG_REG_WRITE:
	case NV208F_CTRL_CMD_GPU_VERIFY_INFOROM:
	case NV90E7_CTRL_CMD_BBX_GET_LAST_FLUSH_TIME:
		return true;
	default:
		return false;
	}
}

/* The GPU's sessions of class cls, every client's. */
static uint32_t sessions_on(int gpu, uint32_t cls)
{
	uint32_t n = 0;

	for (size_t i = 0; i < fake_st.nclients; i++) {
		const struct client *c = fake_st.clients[i];
		for (size_t j = 0; j < c->n; j++)
			n += c->objs[j].cls == cls && c->objs[j].res->gpu == gpu;
	}
	return n;
}

static size_t params_size_of(uint32_t cmd)
{
	switch (cmd) {
	case NV2080_CTRL_GPU_GET_NVENC_SW_SESSION_STATS:
	case NV2080_CTRL_GPU_GET_NVFBC_SW_SESSION_STATS:
		return sizeof(struct nv2080_sw_session_stats);
	case NV2080_CTRL_CMD_FB_GET_OFFLINED_PAGES:
		return sizeof(struct nv2080_fb_get_offlined_pages);
	case NV2080_CTRL_CMD_ECC_GET_REPAIR_STATUS:
		return sizeof(struct nv2080_ecc_repair_status);
	case NV2080_CTRL_CMD_ECC_GET_UNREPAIRABLE_MEMORY_FLAG:
		return sizeof(struct nv2080_ecc_unrepairable_memory);
	case NV2080_CTRL_CMD_GPU_SET_COMPUTE_MODE_RULES:
		return sizeof(struct nv2080_set_compute_mode_rules);
	case NV208F_CTRL_CMD_GPU_VERIFY_INFOROM:
		return sizeof(struct nv208f_verify_inforom);
	case NV90E7_CTRL_CMD_BBX_GET_LAST_FLUSH_TIME:
		return BBX_LAST_FLUSH_TIME_SIZE;
	default:
		return sizeof(struct nv208f_bif_config_reg_write);
	}
}

/* The class of the object a control is asked of: its number's top half. */
nv_status_t fake_smi_control(const struct obj *o, uint32_t cmd, void *params, uint32_t size, bool *dirty)
{
	if (!o || o->cls != NV_CTRL_CMD_CLASS(cmd))
		return NV_ERR_NOT_SUPPORTED;
	if (!params || size != params_size_of(cmd))
		return NV_ERR_INVALID_PARAM_STRUCT;
	switch (cmd) {
	case NV2080_CTRL_GPU_GET_NVENC_SW_SESSION_STATS:
	case NV2080_CTRL_GPU_GET_NVFBC_SW_SESSION_STATS: {
		struct nv2080_sw_session_stats *p = params;
		uint32_t cls = cmd == NV2080_CTRL_GPU_GET_NVENC_SW_SESSION_STATS ? NVENC_SW_SESSION : NVFBC_SW_SESSION;
		p->session_count = sessions_on(o->res->gpu, cls);
		p->average_fps = 0;
		p->average_latency = 0;
		break;
	}
	case NV2080_CTRL_CMD_GPU_SET_COMPUTE_MODE_RULES:
		fake_st.compute_mode_sets++;
		return NV_OK;
	case NV208F_CTRL_CMD_BIF_CONFIG_REG_WRITE:
		fake_st.diag_config_writes++;
		return NV_OK;
	case NV2080_CTRL_CMD_FB_GET_OFFLINED_PAGES:
		return NV_ERR_NOT_SUPPORTED;
	case NV90E7_CTRL_CMD_BBX_GET_LAST_FLUSH_TIME:
		return NV_ERR_NOT_READY;
	default:
		/* The repair flags and the InfoROM check: nothing pending or
		 * lost, result and checksum 0. */
		memset(params, 0, size);
		break;
	}
	*dirty = true;
	return NV_OK;
}
