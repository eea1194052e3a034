/* SPDX-License-Identifier: MIT */
/*
 * off_cache.c - turning a GPU's channels off without the sandbox lock (see
 * off_cache.h for why it is safe).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpusandbox.h"
#include "off_cache.h"
#include "rm_own.h"

#define INITIAL_ENTRIES 8u

void gs_off_cache_clear(struct gs_off_cache *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		close(c->e[i].fd);
	c->n = 0;
}

static bool grow(struct gs_off_cache *c)
{
	return GS_ROOM_FOR_ONE(c->e, c->n, c->cap, INITIAL_ENTRIES);
}

int gs_off_cache_add(struct gs_off_cache *c, int fd, nv_handle_t client, nv_handle_t subdevice,
                     const struct ledger_channel *chs, uint32_t n)
{
	if (n > NV2080_CTRL_FIFO_DISABLE_CHANNELS_MAX_ENTRIES || !grow(c))
		return -1;
	int keep = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (keep < 0)
		return -1;
	struct gs_off_entry *e = &c->e[c->n++];
	e->fd = keep;
	e->client = client;
	e->subdevice = subdevice;
	e->n = n;
	for (uint32_t i = 0; i < n; i++)
		e->channels[i] = chs[i].handle;
	return 0;
}

uint32_t gs_off_cache_disable(const struct gs_off_cache *c)
{
	uint32_t ok = 0;

	for (uint32_t i = 0; i < c->n; i++) {
		const struct gs_off_entry *e = &c->e[i];
		struct nv2080_fifo_disable_channels p = { .b_disable = 1, .num_channels = e->n };
		for (uint32_t j = 0; j < e->n; j++) {
			p.h_client_list[j] = e->client;
			p.h_channel_list[j] = e->channels[j];
		}
		if (rm_own_control(e->fd, e->client, e->subdevice, NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS, &p,
		                   sizeof(p)) == NV_OK)
			ok++;
	}
	return ok;
}

void gs_off_cache_fini(struct gs_off_cache *c)
{
	gs_off_cache_clear(c);
	free(c->e);
	memset(c, 0, sizeof(*c));
}
