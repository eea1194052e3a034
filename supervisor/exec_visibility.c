/* SPDX-License-Identifier: MIT */
/*
 * exec_visibility.c - --gpus: which GPUs the workload may see and use,
 * enforced in the driver's own calls rather than by environment variables.
 *
 * A GPU is named by its /dev/nvidiaN minor, which is nvidia-smi's index on
 * ordinary systems. RM knows GPUs by a gpuId in its listing controls and by
 * a device instance in NV01_DEVICE_0; the supervisor maps both itself:
 *  - gpuId -> minor from CARD_INFO, which it performs on its own account;
 *  - gpuId -> device instance from GET_ID_INFO_V2 on the workload's client,
 *    asked at each device allocation (instances exist once GPUs are
 *    attached, and follow the attach order).
 * Enforcement: NV01_DEVICE_0 for a hidden GPU is refused, so nothing on it
 * can be created, raw ioctls included. The listings (CARD_INFO, probed and
 * attached ids, id info, UUID from gpuId) are filtered so programs
 * enumerate only their GPUs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "exec_int.h"

#define CARD_INFO_ENTRIES NV0000_CTRL_GPU_MAX_IDS

/* Performs CARD_INFO through our dup; returns entries filled, or -1. */
static int read_cards(struct call *c, struct nv_card_info *cards, unsigned n)
{
	uint32_t size = n * (uint32_t)sizeof(*cards);

	memset(cards, 0, size);
	if (exec_escape(c, NV_ESC_CARD_INFO, size, cards) < 0)
		return -1;
	return (int)n;
}

static void learn_cards(struct gs_sandbox *sb, const struct nv_card_info *cards, unsigned n)
{
	for (unsigned i = 0; i < n && sb->n_gpu_map < GS_MAX_GPUS; i++) {
		bool known = false;
		if (!cards[i].valid)
			continue;
		for (unsigned j = 0; j < sb->n_gpu_map; j++)
			known |= sb->gpu_map[j].gpu_id == cards[i].gpu_id;
		if (!known)
			sb->gpu_map[sb->n_gpu_map++] = (struct gs_gpu_entry){
				.gpu_id = cards[i].gpu_id, .minor = cards[i].minor_number };
	}
}

/* Makes sure the gpuId -> minor map exists (CARD_INFO needs a control fd;
 * every call that needs the map comes through one). */
static void ensure_map(struct call *c)
{
	struct nv_card_info cards[CARD_INFO_ENTRIES];

	if (c->sb->n_gpu_map || read_cards(c, cards, CARD_INFO_ENTRIES) < 0)
		return;
	learn_cards(c->sb, cards, CARD_INFO_ENTRIES);
}

static struct gs_gpu_entry *entry_of(struct gs_sandbox *sb, uint32_t gpu_id)
{
	for (unsigned i = 0; i < sb->n_gpu_map; i++)
		if (sb->gpu_map[i].gpu_id == gpu_id)
			return &sb->gpu_map[i];
	return NULL;
}

/* Unknown GPUs are hidden: fail closed. */
static bool gpu_id_visible(struct call *c, uint32_t gpu_id)
{
	struct gs_gpu_entry *e;

	ensure_map(c);
	e = entry_of(c->sb, gpu_id);
	return e && gs_gpu_visible(&c->sb->quota, e->minor);
}

bool gpu_instance_visible(struct call *c, nv_handle_t client, uint32_t instance)
{
	struct gs_sandbox *sb = c->sb;

	if (!sb->quota.visible_set)
		return true;
	ensure_map(c);
	for (unsigned i = 0; i < sb->n_gpu_map; i++) {
		struct gs_gpu_entry *e = &sb->gpu_map[i];
		if (!gs_gpu_visible(&sb->quota, e->minor))
			continue;
		/* Asked every time, never cached: RM numbers device instances
		 * in attach order, so a GPU's instance can change once every
		 * user has detached it (seen on two H200s: the only attached
		 * GPU was instance 0, whichever it was). */
		struct nv0000_id_info_v2_params p = { .gpu_id = e->gpu_id };
		struct nvos54 q = { .h_client = client, .h_object = client,
		                    .cmd = NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2,
		                    .params = (uintptr_t)&p, .params_size = sizeof(p) };
		if (exec_escape(c, NV_ESC_RM_CONTROL, sizeof(q), &q) == 0 && q.status == NV_OK &&
		    p.device_instance == instance)
			return true;
	}
	return false;
}

/* Keeps the visible ids of a list, in order, and pads with INVALID;
 * flags (may be NULL) move with their ids. */
static void filter_ids(struct call *c, uint32_t *ids, uint32_t *flags)
{
	unsigned out = 0;

	for (unsigned i = 0; i < NV0000_CTRL_GPU_MAX_IDS; i++) {
		if (ids[i] == NV0000_CTRL_GPU_INVALID_ID || !gpu_id_visible(c, ids[i]))
			continue;
		ids[out] = ids[i];
		if (flags)
			flags[out] = flags[i];
		out++;
	}
	for (unsigned i = out; i < NV0000_CTRL_GPU_MAX_IDS; i++) {
		ids[i] = NV0000_CTRL_GPU_INVALID_ID;
		if (flags)
			flags[i] = 0;
	}
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
		if (psize >= sizeof(struct nv0000_probed_ids_params)) {
			struct nv0000_probed_ids_params *q = (void *)p;
			filter_ids(c, q->gpu_ids, q->gpu_flags);
			filter_ids(c, q->excluded_gpu_ids, NULL);
		}
		break;
	case NV0000_CTRL_CMD_GPU_GET_ID_INFO:
	case NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2:
	case NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID: {
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

/* CARD_INFO, performed by us: the map learns every card, the workload sees
 * only its own. */
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
	if (rc == 0) {
		learn_cards(c->sb, cards, n);
		for (unsigned i = 0; c->sb->quota.visible_set && i < n; i++)
			if (cards[i].valid && !gs_gpu_visible(&c->sb->quota, cards[i].minor_number))
				memset(&cards[i], 0, sizeof(cards[i]));
	}
	if (mem_write(c->tid, c->argp, buf, c->size) < 0 && rc == 0)
		rc = -EFAULT;
	c->d.call = "CARD_INFO";
	c->d.verdict = GS_VERDICT_ALLOW;
	return answer_value(rc);
}
