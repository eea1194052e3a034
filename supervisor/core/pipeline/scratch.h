/* SPDX-License-Identifier: MIT */
/*
 * scratch.h - a worker's working memory: the notification it is handling
 * and the answer, and the executor's copies for one call.
 */
#ifndef GPUSANDBOX_SCRATCH_H
#define GPUSANDBOX_SCRATCH_H

#include <linux/seccomp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dupcache.h"
#include "mm_keep.h"
#include "gs_error.h"
#include "rm_tables.h"

/* The executor's working memory for one call: our copies of the nested
 * params and of the lists they point to (NV_RMAPI_MAX_PARAMS_SIZE each,
 * about 4 MiB in all). It belongs to whoever runs calls (a worker), not to
 * a sandbox: a worker runs one call at a time, whichever sandbox it is
 * for, and nothing in it outlives the call but the kept dups (dups,
 * below). */
/* An RM_ALLOC about to be performed: the handle being made, whether the
 * ledger had it already, and our copy of the top-level struct. */
struct gs_alloc_note {
	uint32_t    client, parent, object;
	bool        preexisting;
	const void *top;
	size_t      top_len;
};

struct gs_scratch {
	/* The notification being handled and its answer, sized by the
	 * running kernel (it may know bigger structs than our headers). */
	struct seccomp_notif      *req;
	struct seccomp_notif_resp *resp;
	size_t                     req_size, resp_size;
	/* The listener the notification came from, and where its answer
	 * goes: a sandbox of the agent has one per process the runtime
	 * started (the container's init, each exec), a worker per listener. */
	int                        listener;
	/* The task whose notification this worker received and has not yet
	 * answered (0: none). Set after RECV, cleared under the session lock
	 * before the answer is sent, read by quiesce (gs_session.task_held). */
	atomic_int                 trapped_tid;
	/* GPUSANDBOX_PROFILE: this call's waits for the session lock so far
	 * (the runner's before the call, exec_retake_lock's), ns. */
	uint64_t                   lock_wait_ns;
	/* The call in flight, told to whoever records it (the agent's state
	 * memfd, agent_state.c, so that a restarted agent can finish or undo
	 * it); NULL: nobody. before_alloc: an RM_ALLOC is about to be
	 * performed, with the handle being made; before_answer: the answer
	 * is about to be sent. */
	void (*before_alloc)(void *ctx, const struct gs_alloc_note *note);
	void (*before_answer)(void *ctx);
	void  *flight_ctx;
	/* Who receives an injected ioctl (exec_inject.c) where the runner
	 * cannot hand its listener on (gs_session.release_receiver NULL: the
	 * agent, one worker per listener): started (on) once the caller's
	 * sharers are stopped, stopped (off) once the injection is over, by
	 * the worker that holds the session lock. on returns false when it
	 * cannot start (the second client is then refused). NULL: nobody,
	 * and no injection. */
	bool (*inject_receiver)(void *ctx, bool on);
	void  *inject_ctx;
	/* With inject_receiver: an injection on this listener found the
	 * caller's wait interruptible (its call lost at our interrupt: a
	 * profile without WAIT_KILLABLE_RECV, which the agent cannot ask of
	 * the runtime's filter). No injection on it again: a second client is
	 * refused there, rather than restarted and lost at every try. Set
	 * before the receiver is stopped (off), which may say so. */
	bool   inject_wait_interruptible;
	uint8_t *params;
	uint8_t *embedded[RM_EMBEDDED_MAX_PTRS];
	/* How far into params an earlier call (our copy, or the driver's
	 * copy-out) may have written; gs_scratch_params() zeroes it. */
	size_t   params_dirty;
	/* This call's reads of the workload, kept so that a second level can
	 * be served from the first read and only changed bytes written back
	 * (issue #16). Forgotten at the start of every notification
	 * (gs_scratch_forget): nothing in them outlives the call. */
	struct gs_scratch_seen {
		uint64_t addr;
		size_t   len;      /* 0: nothing kept */
		uint8_t *bytes;
	} window, top_in, params_in;
	/* The few dups of workload files this worker keeps between calls
	 * (dupcache.h: checked by kcmp at each use, closed when idle): the
	 * one thing here that outlives a call, for a bounded time. Used only
	 * once attached by the runner to its session. */
	struct gs_dup_cache dups;
	/* The answer memory of the tasks this worker answered last, kept
	 * open between their calls (mm_keep.h). */
	struct gs_mm_keep   mms;
};

/* What is kept: the top-level struct with the rest of its page (the
 * window), the top as read, and params up to GS_SCRATCH_KEEP_MAX bytes
 * (larger ones are written back whole). */
#define GS_SCRATCH_PAGE      4096u
#define GS_SCRATCH_TOP_MAX   512u
#define GS_SCRATCH_WINDOW_MAX (GS_SCRATCH_TOP_MAX + GS_SCRATCH_PAGE)
#define GS_SCRATCH_KEEP_MAX  4096u

void gs_scratch_forget(struct gs_scratch *s);
/* Keeps len bytes read at addr in *seen (not kept if too large). */
void gs_scratch_keep(struct gs_scratch_seen *seen, size_t max, uint64_t addr, const void *bytes,
                     size_t len);
/* The kept bytes of seen if they are exactly [addr, addr + len), else NULL. */
const void *gs_scratch_kept(const struct gs_scratch_seen *seen, uint64_t addr, size_t len);

/*
 * The driver copies its own parameter size out of our params buffer, which
 * may be more than we copied in (a table that is smaller than the driver's
 * struct: NV50_P2P on 590+ before its row, every channel class on 610+).
 * So the buffer must hold nothing from an earlier call: this zeroes what
 * earlier calls may have written and returns the buffer. may_write is how
 * far this call's writes can reach: what we copy, and for an alloc the
 * driver's own copy-out (GS_ALLOC_PARAMS_DRIVER_BOUND).
 */
uint8_t *gs_scratch_params(struct gs_scratch *s, size_t may_write);

/* Every alloc params struct of every driver tag gen-rm-tables measured is
 * under this (largest: 0xa084 on 570, 1696 bytes); the generator fails if
 * one is not. */
#define GS_ALLOC_PARAMS_DRIVER_BOUND 4096u

int  gs_scratch_init(struct gs_scratch *s, struct gs_error *err);
void gs_scratch_fini(struct gs_scratch *s);

#endif
