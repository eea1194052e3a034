/* SPDX-License-Identifier: MIT */
/*
 * gpu_uuid.c - resolves the GPU UUIDs given to --gpus into /dev/nvidiaN
 * minors, once, before the workload starts.
 *
 * The supervisor asks the driver on its own account: its own open of the
 * control node and its own RM client, freed (with the file) at the end. No
 * workload fd is involved, and nothing is held afterwards. RM answers
 * GET_UUID_FROM_GPU_ID from its cache for probed GPUs; a GPU without a
 * cached UUID is attached for the question and detached again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "gpu_uuid.h"
#include "nvrm_abi.h"
#include "rm_own.h"

#define CTL_PATH "/dev/nvidiactl"

/* Every question goes to the client itself. */
static nv_status_t control(int fd, nv_handle_t client, uint32_t cmd, void *p, uint32_t n)
{
	return rm_own_control(fd, client, client, cmd, p, n);
}

static nv_status_t uuid_of(int fd, nv_handle_t client, uint32_t gpu_id, char *out, size_t len)
{
	struct nv0000_uuid_from_gpu_id_params p = { .gpu_id = gpu_id,
	                                            .flags = NV0000_UUID_FLAGS_ASCII_SHA1 };
	nv_status_t st = control(fd, client, NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID, &p, sizeof(p));

	if (st != NV_OK)
		return st;
	size_t n = p.uuid_str_len < sizeof(p.gpu_uuid) ? p.uuid_str_len : sizeof(p.gpu_uuid);
	n = strnlen((const char *)p.gpu_uuid, n);
	if (n >= len)
		return NV_ERR_INVALID_ARGUMENT;
	memcpy(out, p.gpu_uuid, n);
	out[n] = '\0';
	return NV_OK;
}

/* The UUID of one card, attaching it only when RM has none cached. */
static nv_status_t card_uuid(int fd, nv_handle_t client, uint32_t gpu_id, char *out, size_t len)
{
	struct nv0000_attach_ids_params at;
	struct nv0000_gpu_ids_params de;
	nv_status_t st = uuid_of(fd, client, gpu_id, out, len);

	if (st == NV_OK)
		return st;
	memset(&at, 0xff, sizeof(at));
	at.gpu_ids[0] = gpu_id;
	if (control(fd, client, NV0000_CTRL_CMD_GPU_ATTACH_IDS, &at, sizeof(at)) != NV_OK)
		return st;
	st = uuid_of(fd, client, gpu_id, out, len);
	memset(&de, 0xff, sizeof(de));
	de.gpu_ids[0] = gpu_id;
	(void)control(fd, client, NV0000_CTRL_CMD_GPU_DETACH_IDS, &de, sizeof(de));
	return st;
}

int gs_resolve_gpu_uuids(struct gs_quota *q, struct gs_error *err)
{
	struct nv_card_info cards[NV0000_CTRL_GPU_MAX_IDS];
	bool found[GS_MAX_GPUS] = { false };
	nv_handle_t client = 0;
	int fd, rc = -1;

	if (!q->n_uuids)
		return 0;
	fd = open(CTL_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return gs_fail(err, errno, "cannot open %s to look up GPU UUIDs", CTL_PATH);
	memset(cards, 0, sizeof(cards));
	if (ioctl(fd, NV_IOC_WORD(NV_ESC_CARD_INFO, sizeof(cards)), cards) < 0 ||
	    rm_own_alloc(fd, 0, 0, &client, NV01_ROOT_CLIENT, &client, 0) != NV_OK) {
		client = 0;
		gs_fail(err, errno, "cannot ask the driver for GPU UUIDs");
		goto out;
	}
	for (unsigned i = 0; i < NV0000_CTRL_GPU_MAX_IDS; i++) {
		char uuid[NV0000_GPU_MAX_GID_LENGTH];
		if (!cards[i].valid || cards[i].minor_number >= GS_MAX_GPUS ||
		    card_uuid(fd, client, cards[i].gpu_id, uuid, sizeof(uuid)) != NV_OK)
			continue;
		for (uint32_t u = 0; u < q->n_uuids; u++)
			if (strcasecmp(uuid, q->uuids[u]) == 0) {
				q->visible |= 1ull << cards[i].minor_number;
				q->uuid_minor[u] = cards[i].minor_number;
				found[u] = true;
			}
	}
	for (uint32_t u = 0; u < q->n_uuids; u++)
		if (!found[u]) {
			gs_fail(err, 0, "--gpus: no GPU has UUID %s", q->uuids[u]);
			goto out;
		}
	rc = 0;
out:
	if (client)
		(void)rm_own_free(fd, client, client, client);
	close(fd);
	return rc;
}
