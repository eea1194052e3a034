/* SPDX-License-Identifier: MIT */
/*
 * off_cache.h - what the duty cycle needs to turn one GPU's channels off
 * without the sandbox lock (issue #17 item 5).
 *
 * A notify worker holds the sandbox lock while it handles a call, reads
 * of the workload's memory included, and a workload can make such a read
 * wait as long as it likes (memory mapped from a FUSE file system it
 * serves). The off phase must not wait for it: each locked pass that turns
 * channels off records, per client, our own dup of its file, its
 * subdevice and the channels it disabled; when the lock cannot be had at
 * an off edge, those are disabled again from here. An on edge always waits
 * for the lock: while it cannot be had the channels stay off (fail
 * closed).
 *
 * Naming handles without the lock is safe: the dup keeps the client's
 * file, and so the client, alive, and the control names only that client's
 * handles on its own file. A handle freed since then makes the control
 * fail, which is ignored (the next locked pass is exact again).
 */
#ifndef GPUSANDBOX_OFF_CACHE_H
#define GPUSANDBOX_OFF_CACHE_H

#include <stdint.h>

#include "ledger.h"
#include "nvrm_abi.h"

struct gs_off_entry {
	int         fd;          /* our dup of the client's file */
	nv_handle_t client, subdevice;
	uint32_t    n;
	nv_handle_t channels[NV2080_CTRL_FIFO_DISABLE_CHANNELS_MAX_ENTRIES];
};

struct gs_off_cache {
	struct gs_off_entry *e;
	uint32_t             n, cap;
};

/* Closes every dup and forgets the entries. */
void gs_off_cache_clear(struct gs_off_cache *c);
/* Records one batch (n <= the control's maximum) that fd's client just
 * disabled; fd is duplicated. -1 when it cannot be kept (the lockless off
 * then misses it; the locked passes do not). */
int  gs_off_cache_add(struct gs_off_cache *c, int fd, nv_handle_t client, nv_handle_t subdevice,
                      const struct ledger_channel *chs, uint32_t n);
/* Disables every recorded channel again; returns the batches the driver
 * accepted. */
uint32_t gs_off_cache_disable(const struct gs_off_cache *c);
void gs_off_cache_fini(struct gs_off_cache *c);

#endif
