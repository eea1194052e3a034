/* SPDX-License-Identifier: MIT */
/*
 * exec_visibility.c - --gpus: which GPUs the workload may see and use,
 * enforced in the driver's own calls rather than by environment variables.
 *
 * A GPU is named by its /dev/nvidiaN minor, which is nvidia-smi's index on
 * ordinary systems. RM knows GPUs by a gpuId in its listing controls and by
 * a device instance in NV01_DEVICE_0; the supervisor maps both itself:
 *  - gpuId -> minor from CARD_INFO, which it performs at start on its own
 *    control file (driver.c), never from an answer given to the workload;
 *  - gpuId -> device instance from GET_ID_INFO_V2 on the workload's client,
 *    asked at each device allocation (instances exist once GPUs are
 *    attached, and follow the attach order). The ledger keys a device,
 *    and everything under it, by the minor found this way, so per-GPU
 *    quotas, the memory report and the audit name the GPU --gpus names.
 * Enforcement: NV01_DEVICE_0 for a hidden GPU is refused (through RM_ALLOC
 * and RM_ALLOC_OBJECT), so nothing on it can be created, raw ioctls
 * included. The listings (CARD_INFO, probed and attached ids, id info,
 * UUID from gpuId, accounting state by gpuId) are filtered so programs enumerate only their GPUs:
 * which ids and cards stay is the pure verdict's (gs_gpu_id_visible,
 * gs_filter_gpu_ids, gs_card_visible in verdict.c); here is the act stage
 * that performs the listing and applies it to our copy of the answer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "exec_int.h"
#include "verdict.h"

/* The listings' verdict (verdict.c, pure) on the supervisor's own map. */
static bool gpu_id_visible(const struct call *c, uint32_t gpu_id)
{
	return gs_gpu_id_visible(&c->sb->quota, c->sb->gpu_map, c->sb->n_gpu_map, gpu_id);
}

static void filter_ids(const struct call *c, uint32_t *ids, uint32_t *flags)
{
	gs_filter_gpu_ids(&c->sb->quota, c->sb->gpu_map, c->sb->n_gpu_map, ids, flags);
}

/* Asked every time, never cached: RM numbers device instances in attach
 * order, lowest free slot first (gpumgrAllocDeviceInstance, gpu_mgr.c at
 * 580.142), so a GPU's instance is not its minor and can change once every
 * user has detached it (seen on two H200s: the only attached GPU was
 * instance 0, whichever it was). */
int gpu_minor_of_instance(struct call *c, nv_handle_t client, uint32_t instance)
{
	struct gs_session *sb = c->sb;

	for (unsigned i = 0; i < sb->n_gpu_map; i++) {
		struct nv0000_id_info_v2_params p = { .gpu_id = sb->gpu_map[i].gpu_id };
		struct nvos54 q = { .h_client = client, .h_object = client,
		                    .cmd = NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2,
		                    .params = (uintptr_t)&p, .params_size = sizeof(p) };
		if (exec_escape(c, NV_ESC_RM_CONTROL, sizeof(q), &q) == 0 && q.status == NV_OK &&
		    p.device_instance == instance)
			return (int)sb->gpu_map[i].minor;
	}
	return -1;
}

bool gpu_instance_visible(struct call *c, nv_handle_t client, uint32_t instance)
{
	int minor;

	if (!c->sb->quota.visible_set)
		return true;
	minor = gpu_minor_of_instance(c, client, instance);
	return minor >= 0 && gs_gpu_visible(&c->sb->quota, (unsigned)minor);
}

void visibility_after_control(struct call *c, struct nvos54 *top, uint32_t psize)
{
	uint8_t *p = c->scratch->params;

	if (!c->sb->quota.visible_set)
		return;
	switch (top->cmd) {
	case NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS:
		if (psize >= sizeof(struct nv0000_gpu_ids_params))
			filter_ids(c, ((struct nv0000_gpu_ids_params *)(void *)p)->gpu_ids, NULL);
		break;
	case NV0000_CTRL_CMD_GPU_GET_PROBED_IDS:
		/* 256 bytes on 535..575 (no gpuFlags), 384 on 580+; the
		 * verdict refused any other size. */
		if (psize >= offsetof(struct nv0000_probed_ids_params, gpu_flags)) {
			struct nv0000_probed_ids_params *q = (void *)p;
			bool has_flags = psize >= sizeof(*q);
			filter_ids(c, q->gpu_ids, has_flags ? q->gpu_flags : NULL);
			filter_ids(c, q->excluded_gpu_ids, NULL);
		}
		break;
	case NV0000_CTRL_CMD_GPU_GET_ID_INFO:
	case NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2:
	case NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID:
	/* nvidia-smi asks it per GPU (monitoring): a hidden GPU's
	 * accounting mode is not the workload's to read. */
	case NV0000_CTRL_CMD_GPUACCT_GET_ACCOUNTING_STATE: {
		uint32_t gpu_id;
		if (psize < sizeof(gpu_id))
			break;
		memcpy(&gpu_id, p, sizeof(gpu_id));
		/* A hidden GPU does not exist for the workload. */
		if (!gpu_id_visible(c, gpu_id)) {
			memset(p + sizeof(gpu_id), 0, psize - sizeof(gpu_id));
			top->status = NV_ERR_INVALID_ARGUMENT;
		}
		break;
	}
	default:
		break;
	}
}

/* CARD_INFO, performed by us: the workload sees only its own cards. The
 * answer is not learned from: the map is the supervisor's own, read at
 * start from its own control file (driver.c). */
struct answer handle_card_info(struct call *c)
{
	uint8_t buf[NV_IOC_MAX_DIRECT_SIZE];
	struct nv_card_info *cards = (void *)buf;
	unsigned n = c->size / (unsigned)sizeof(*cards);

	if (c->size > sizeof(buf))
		return answer_errno(EINVAL);
	if (!notif_still_valid(c))
		return answer_none();
	memset(buf, 0, c->size);
	int rc = exec_escape(c, NV_ESC_CARD_INFO, c->size, buf);
	for (unsigned i = 0; rc == 0 && i < n; i++)
		if (!gs_card_visible(&c->sb->quota, &cards[i]))
			memset(&cards[i], 0, sizeof(cards[i]));
	if (answer_write(c, c->argp, buf, c->size) < 0 && rc == 0)
		rc = -EFAULT;
	c->d.call = "CARD_INFO";
	c->d.verdict = GS_VERDICT_ALLOW;
	return answer_value(rc);
}
