/* SPDX-License-Identifier: MIT */
/*
 * fake_engines.c - the GPU's engine list, as NV2080_CTRL_CMD_GPU_GET_ENGINES_V2
 * answers it on a subdevice (subdeviceCtrlCmdGpuGetEnginesV2_IMPL,
 * src/nvidia/src/kernel/gpu/subdevice/subdevice_ctrl_gpu_kernel.c,
 * 580.95.05): a count, then one NV2080_ENGINE_TYPE_* per engine instance
 * (cl2080_notification.h), the list as long as the branch's
 * NV2080_GPU_MAX_ENGINES_LIST_SIZE (0x3e on 535, 0x40 on 550, 0x54 from
 * 570: the tables' size of the control). A size other than the branch's is
 * refused by RM's control dispatch before the handler runs
 * (NV_ERR_INVALID_PARAM_STRUCT).
 *
 * What the fake GPU has (--engines): by default an H200's video engines,
 * 7 NVDEC, 7 NVJPG, 1 OFA and no NVENC (GH100: cuvidGetDecoderCaps said
 * nvdecs=7 on an H200, 580.159.04, tests/gpu/nvdec_check.sh), besides a
 * graphics engine, ten copy engines and SEC2. --engines none makes the
 * control fail NOT_SUPPORTED, a driver that does not answer.
 */
#include <stdio.h>
#include <string.h>

#include "fake_rm_int.h"

/* NV2080_ENGINE_TYPE_* the fake lists besides the video engines. */
#define ENGINE_TYPE_GR0   0x01u
#define ENGINE_TYPE_COPY0 0x09u
#define ENGINE_TYPE_SEC2  0x26u
#define FAKE_COPY_ENGINES 10u

/* NV2080_ENGINE_TYPE_* of instance i of a video engine kind (the second
 * range, from 570 on, for NVENC3 and OFA1: nvrm_abi.h). */
static uint32_t video_type(enum fake_engine e, unsigned i)
{
	switch (e) {
	case FE_NVDEC:
		return NV2080_ENGINE_TYPE_NVDEC0 + i;
	case FE_NVENC:
		return i < 3 ? NV2080_ENGINE_TYPE_NVENC0 + i : NV2080_ENGINE_TYPE_NVENC3;
	case FE_NVJPG:
		return NV2080_ENGINE_TYPE_NVJPEG0 + i;
	case FE_OFA:
		return i == 0 ? NV2080_ENGINE_TYPE_OFA0 : NV2080_ENGINE_TYPE_OFA1;
	case FE_N:
		break;
	}
	return 0;
}

const unsigned fake_engine_max[FE_N] = { [FE_NVDEC] = 8, [FE_NVENC] = 4, [FE_NVJPG] = 8, [FE_OFA] = 2 };
static const char *const engine_names[FE_N] = { "nvdec", "nvenc", "nvjpg", "ofa" };

int fake_parse_engines(const char *s, struct fake_config *cfg)
{
	char buf[128], *save = NULL;

	if (strcmp(s, "none") == 0) {
		cfg->no_engine_list = true;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char name[16];
		unsigned n, e;
		if (sscanf(tok, "%15[a-z]=%u", name, &n) != 2)
			return -1;
		for (e = 0; e < FE_N && strcmp(name, engine_names[e]) != 0; e++)
			;
		if (e == FE_N || n > fake_engine_max[e])
			return -1;
		cfg->engines[e] = n;
	}
	return 0;
}

nv_status_t fake_engines_control(int gpu, const struct nvos54 *ctl, void *params)
{
	uint32_t size = fake_ctrl_size(ctl->cmd);
	const size_t head = offsetof(struct nv2080_gpu_get_engines_v2_params, engine_list);
	uint32_t list[NV2080_GPU_MAX_ENGINES_LIST_SIZE];
	uint32_t n = 0;

	if (fake_st.cfg.no_engine_list)
		return NV_ERR_NOT_SUPPORTED;
	if (!size || ctl->params_size != size || size > sizeof(struct nv2080_gpu_get_engines_v2_params))
		return NV_ERR_INVALID_PARAM_STRUCT;
	(void)gpu; /* every fake GPU has the same engines */
	list[n++] = ENGINE_TYPE_GR0;
	for (unsigned i = 0; i < FAKE_COPY_ENGINES; i++)
		list[n++] = ENGINE_TYPE_COPY0 + i;
	for (unsigned e = 0; e < FE_N; e++)
		for (unsigned i = 0; i < fake_st.cfg.engines[e]; i++)
			list[n++] = video_type((enum fake_engine)e, i);
	list[n++] = ENGINE_TYPE_SEC2;
	/* At most 34 entries: below every branch's list (0x3e and up). */
	if (n > (size - head) / sizeof(uint32_t))
		return NV_ERR_INVALID_STATE;
	memset(params, 0, size);
	memcpy(params, &n, sizeof(n));
	memcpy((uint8_t *)params + head, list, n * sizeof(list[0]));
	return NV_OK;
}
