/* SPDX-License-Identifier: MIT */
/*
 * fake_selftest_engines.c - the self-test of the fake's engine list
 * (fake_engines.c, after subdeviceCtrlCmdGpuGetEnginesV2_IMPL in
 * subdevice_ctrl_gpu_kernel.c at 580.95.05): GET_ENGINES_V2 on a subdevice
 * lists an H200's video engines by default (7 NVDEC, 7 NVJPG, 1 OFA, no
 * NVENC), one NV2080_ENGINE_TYPE_* per instance, with the played branch's
 * params size only; and the per-kind live and peak counts the video quota
 * tests judge by.
 */
#include <string.h>
#include <unistd.h>

#include "fake_selftest.h"

#define H_SUB     0x5d100002u
#define H_GROUP   0x5d100003u
#define H_CHAN    0x5d100004u
#define H_DEC0    0x5d100100u
#define H200_NVDEC 7u
#define H200_NVJPG 7u
#define H200_OFA   1u
#define DECODERS_MADE 3u

/* NV2080_GPU_MAX_ENGINES_LIST_SIZE of the played branch (ctrl2080gpu.h):
 * 0x3e on 535, 0x40 on 550, 0x54 from 570. */
static uint32_t branch_params_size(void)
{
	int b = driver_branch();
	uint32_t entries = b >= 570 ? 0x54u : b >= 550 ? 0x40u : 0x3eu;

	return (uint32_t)sizeof(uint32_t) * (1u + entries);
}

static void count_types(const struct nv2080_gpu_get_engines_v2_params *p, unsigned *dec, unsigned *enc,
                        unsigned *jpg, unsigned *ofa)
{
	*dec = *enc = *jpg = *ofa = 0;
	for (uint32_t i = 0; i < p->engine_count && i < NV2080_GPU_MAX_ENGINES_LIST_SIZE; i++) {
		uint32_t t = p->engine_list[i];
		*dec += t >= NV2080_ENGINE_TYPE_NVDEC0 && t <= NV2080_ENGINE_TYPE_NVDEC7;
		*enc += (t >= NV2080_ENGINE_TYPE_NVENC0 && t <= NV2080_ENGINE_TYPE_NVENC2) ||
		        t == NV2080_ENGINE_TYPE_NVENC3;
		*jpg += t >= NV2080_ENGINE_TYPE_NVJPEG0 && t <= NV2080_ENGINE_TYPE_NVJPEG7;
		*ofa += t == NV2080_ENGINE_TYPE_OFA0 || t == NV2080_ENGINE_TYPE_OFA1;
	}
}

static void list_checks(int fd, nv_handle_t hc, nv_handle_t hdev)
{
	struct nv2080_gpu_get_engines_v2_params p;
	struct nv2080_alloc_params sp = { 0 };
	nv_handle_t hsub = H_SUB;
	uint32_t size = branch_params_size();
	unsigned dec, enc, jpg, ofa;

	check(alloc64(fd, hc, hdev, &hsub, NV20_SUBDEVICE_0, &sp) == NV_OK, "engines: a subdevice");
	memset(&p, 0, sizeof(p));
	check(control(fd, hc, hsub, NV2080_CTRL_CMD_GPU_GET_ENGINES_V2, 0, &p, size) == NV_OK,
	      "GET_ENGINES_V2 with the branch's size (%u)", size);
	count_types(&p, &dec, &enc, &jpg, &ofa);
	check(dec == H200_NVDEC && jpg == H200_NVJPG && ofa == H200_OFA && enc == 0,
	      "an H200's video engines: %u NVDEC, %u NVJPG, %u OFA, %u NVENC", dec, jpg, ofa, enc);
	check(stat_get("gpu0.nvdec_engines") == H200_NVDEC && stat_get("gpu0.nvjpg_engines") == H200_NVJPG,
	      "the stats name the same instances");
	check(control(fd, hc, hsub, NV2080_CTRL_CMD_GPU_GET_ENGINES_V2, 0, &p, size - sizeof(uint32_t)) ==
	      NV_ERR_INVALID_PARAM_STRUCT, "GET_ENGINES_V2 with another size is refused");
	check(control(fd, hc, hdev, NV2080_CTRL_CMD_GPU_GET_ENGINES_V2, 0, &p, size) == NV_ERR_NOT_SUPPORTED,
	      "GET_ENGINES_V2 on the device is not supported");
}

/* Engine objects under one channel: each counts, each free gives back. */
static void count_checks(int fd, nv_handle_t hc, nv_handle_t hdev)
{
	static uint8_t chan[NV_CHANNEL_ALLOC_PARAMS_SIZE], tsg[NV_CHANNEL_GROUP_ALLOC_PARAMS_SIZE];
	nv_handle_t group = H_GROUP, ch = H_CHAN;
	unsigned made = 0;

	check(alloc64(fd, hc, hdev, &group, KEPLER_CHANNEL_GROUP_A, tsg) == NV_OK &&
	      alloc64(fd, hc, group, &ch, HOPPER_CHANNEL_GPFIFO_A, chan) == NV_OK, "engines: a channel");
	for (unsigned i = 0; i < DECODERS_MADE; i++) {
		nv_handle_t h = H_DEC0 + i;
		made += alloc64(fd, hc, ch, &h, NVB8B0_VIDEO_DECODER, NULL) == NV_OK;
	}
	check(made == DECODERS_MADE && stat_get("gpu0.nvdec_live") == DECODERS_MADE &&
	      stat_get("gpu0.nvdec_peak") >= DECODERS_MADE, "%u decoders under one channel, all counted", made);
	check(rm_free(fd, hc, ch, H_DEC0) == NV_OK && stat_get("gpu0.nvdec_live") == DECODERS_MADE - 1,
	      "a freed decoder is given back");
	check(rm_free(fd, hc, hdev, group) == NV_OK && stat_get("gpu0.nvdec_live") == 0,
	      "the channel's group freed: its decoders go with it");
}

void engine_checks(void)
{
	int fd = open_ctl();
	nv_handle_t hdev, hc = make_client(fd, &hdev);

	list_checks(fd, hc, hdev);
	count_checks(fd, hc, hdev);
	rm_free(fd, hc, hc, hc);
	close(fd);
}
