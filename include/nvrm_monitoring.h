/* SPDX-License-Identifier: MIT */
/*
 * nvrm_monitoring.h - the layouts of the monitoring queries nvidia-smi sends
 * that the fake driver models and the tests send (issue #29 item 3). The
 * supervisor copies their params flat, at the size of their row in
 * nvrm/v<branch>/controls.def, and reads only the session statistics
 * (exec_pids.c: zeroed for a sandbox that can hold no session).
 *
 * Facts (field order, sizes) from open-gpu-kernel-modules at 580.95.05
 * (ctrl2080gpu.h, ctrl2080fb.h, ctrl2080ecc.h), the same at 580.142;
 * ECC_GET_UNREPAIRABLE_MEMORY_FLAG from 590.44.01 (in no 580 tag of the
 * mirror; driver 580.159.04 sends it). Compiled with gcc on x86_64 in a
 * throwaway program; no NVIDIA text is reproduced.
 */
#ifndef GPUSANDBOX_NVRM_MONITORING_H
#define GPUSANDBOX_NVRM_MONITORING_H

#include <stddef.h>
#include <stdint.h>

/* GPU_GET_NVENC_SW_SESSION_STATS and GPU_GET_NVFBC_SW_SESSION_STATS: a
 * count of the GPU's sessions (every client's) and the averages of their
 * frame rate and latency. */
struct nv2080_sw_session_stats {
	uint32_t session_count;
	uint32_t average_fps;
	uint32_t average_latency;
};
_Static_assert(sizeof(struct nv2080_sw_session_stats) == 12, "SW_SESSION_STATS size");

/* FB_GET_OFFLINED_PAGES: the retired pages, in the struct (no pointer). */
#define NV2080_CTRL_FB_OFFLINED_PAGES_MAX_PAGES 64u
struct nv2080_fb_offlined_address_info {
	uint64_t page_address_ecc_on;
	uint64_t page_address_ecc_off;
	uint32_t rbc_address;
	uint32_t source;
	uint32_t status;
	uint32_t timestamp;
};
_Static_assert(sizeof(struct nv2080_fb_offlined_address_info) == 32, "OFFLINED_ADDRESS_INFO size");
struct nv2080_fb_get_offlined_pages {
	struct nv2080_fb_offlined_address_info offlined[NV2080_CTRL_FB_OFFLINED_PAGES_MAX_PAGES];
	uint32_t valid_entries;
	uint8_t  retirement_pending_bool;
	uint8_t  retirement_pending;
};
_Static_assert(sizeof(struct nv2080_fb_get_offlined_pages) == 2056, "FB_GET_OFFLINED_PAGES size");
_Static_assert(offsetof(struct nv2080_fb_get_offlined_pages, valid_entries) == 2048,
               "FB_GET_OFFLINED_PAGES.validEntries");

/* ECC_GET_REPAIR_STATUS: two NvBool; ECC_GET_UNREPAIRABLE_MEMORY_FLAG: one. */
struct nv2080_ecc_repair_status {
	uint8_t tpc_repair_pending;
	uint8_t channel_repair_pending;
};
_Static_assert(sizeof(struct nv2080_ecc_repair_status) == 2, "ECC_GET_REPAIR_STATUS size");
struct nv2080_ecc_unrepairable_memory {
	uint8_t unrepairable_memory;
};
_Static_assert(sizeof(struct nv2080_ecc_unrepairable_memory) == 1, "ECC_GET_UNREPAIRABLE_MEMORY_FLAG size");

/* NV208F GPU_VERIFY_INFOROM: the verification's result and a checksum. */
struct nv208f_verify_inforom {
	uint32_t result;
	uint32_t checksum;
};
_Static_assert(sizeof(struct nv208f_verify_inforom) == 8, "GPU_VERIFY_INFOROM size");

/* Two setters an administrator's nvidia-smi sends, which stay refused:
 * GPU_SET_COMPUTE_MODE_RULES (nvidia-smi -c; group privileged) and the
 * diagnostics object's BIF_CONFIG_REG_WRITE (a PCI config register write,
 * exported non-privileged at 580.95.05, g_subdevice_diag_nvoc.c; in no
 * group, unknown to gpusandbox). */
struct nv2080_set_compute_mode_rules {
	uint32_t rules;
	uint32_t flags;
};
_Static_assert(sizeof(struct nv2080_set_compute_mode_rules) == 8, "SET_COMPUTE_MODE_RULES size");
#define NV208F_CTRL_CMD_BIF_CONFIG_REG_WRITE 0x208f0703u
struct nv208f_bif_config_reg_write {
	uint8_t  reg_index;
	uint32_t data;
};
_Static_assert(sizeof(struct nv208f_bif_config_reg_write) == 8, "BIF_CONFIG_REG_WRITE size");

#endif
