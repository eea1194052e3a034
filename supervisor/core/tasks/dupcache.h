/* SPDX-License-Identifier: MIT */
/*
 * dupcache.h - a worker's few dups of workload files kept between calls
 * (issue #16), so that a call on a file the worker already holds costs one
 * kcmp instead of pidfd_getfd + fstat + close.
 *
 * What makes it sound (SECURITY.md, "The dup cache"; docs/perf.md):
 * - A call uses a kept dup F only when kcmp(KCMP_FILE) says that the
 *   trapped task's fd number names F at that instant: exactly what a fresh
 *   pidfd_getfd gives (the file behind the number at one instant). F's
 *   identity (the driver's control node) was checked when it was kept and
 *   cannot change. Only control files are kept, never a GPU node, which
 *   in our fd table would let the driver grant that GPU to any device
 *   allocation we perform (executor.c, dup_for_call). The trapped task is then proven by NOTIF_ID_VALID, as for a
 *   fresh dup: a kcmp on a reused tid proves nothing by itself.
 * - Holding F keeps the open file, its RM clients and their memory alive
 *   (still charged: the safe side for quotas). So a kept dup is closed
 *   when unused for GS_DUP_CACHE_IDLE_MS (a janitor thread, whatever the
 *   worker is doing, blocked in RECV included), when a reconcile must see
 *   every closed file released (gs_dup_cache_drop_owner, before every
 *   full reconcile of the session), and when its worker stops
 *   (gs_dup_cache_detach). A workload that closes the file or exits thus
 *   sees the driver release it at most one bound (plus a sweep) later.
 * - A cache is one worker's: only that worker takes and parks its slots,
 *   under its session's lock; the janitor and the droppers only close a
 *   parked dup, by compare-and-swap, never one in use. No lock on the hot
 *   path.
 *
 * A cache that was never attached (gs_dup_cache_attached false) is not
 * used: the caller takes a fresh dup each call, as before.
 */
#ifndef GPUSANDBOX_DUPCACHE_H
#define GPUSANDBOX_DUPCACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Slots per worker: the files of a few threads of a few processes (a
 * CUDA process makes its RM calls on one control file). A sandbox holds
 * at most workers x slots files alive past their close, each for at most
 * the idle bound. */
#define GS_DUP_CACHE_SLOTS 8u
/* How long a kept dup may sit unused. The 2 MiB loop's calls come tens
 * of microseconds apart, so a burst keeps hitting; a file the workload
 * closed is released at most this much (plus one sweep) late, far under
 * what anything waits for a release: the compute share's grace for
 * unreachable channels (UNREACHABLE_GRACE_MS, 1000 ms), the agent's
 * release wait at teardown (1 s, and its workers are gone by then). The
 * janitor wakes at most about once per bound while calls flow. */
#define GS_DUP_CACHE_IDLE_MS 5u

/* A slot's fd when it holds no dup, and while its worker uses the dup. */
#define GS_DUP_EMPTY  (-1)
#define GS_DUP_IN_USE (-2)

struct gs_dup_slot {
	/* The parked dup, GS_DUP_EMPTY, or GS_DUP_IN_USE. */
	atomic_int       fd;
	/* The key it was taken for (the worker's own, read by nobody else). */
	pid_t            tid;
	int              wfd;
	/* When it was parked (CLOCK_MONOTONIC ns), for the janitor. */
	_Atomic uint64_t parked_ns;
	/* One thing the worker learned about the kept file (the worker's
	 * own, opaque here; epoch 0: none). Cleared by every take that
	 * misses: the slot gets another file only after a miss, so while
	 * takes hit it is about the same open file. */
	uint32_t         fact_key;
	uint64_t         fact_epoch;
};

struct gs_dup_cache {
	struct gs_dup_slot  slot[GS_DUP_CACHE_SLOTS];
	/* The session it serves (dropped with gs_dup_cache_drop_owner). */
	const void         *owner;
	bool                attached;
	/* GPUSANDBOX_TEST_DUPCACHE_NO_KCMP: trust the key without kcmp, so
	 * that tests/adv dupcache_swap shows what the kcmp prevents. */
	bool                test_no_kcmp;
	struct gs_dup_cache *next;   /* the janitor's list */
};

/* Starts serving owner's calls: the slots empty, the cache on the
 * janitor's list (started on first use). Returns 0, or -1 with errno when
 * the janitor cannot start (the cache then stays unattached: unused). */
int gs_dup_cache_attach(struct gs_dup_cache *dc, const void *owner);
/* Off the janitor's list, every dup closed. Safe on a cache never
 * attached, and twice. */
void gs_dup_cache_detach(struct gs_dup_cache *dc);
static inline bool gs_dup_cache_attached(const struct gs_dup_cache *dc)
{
	return dc->attached;
}

/* The hot path, by the cache's worker under its session's lock.
 * gs_dup_cache_take: a kept dup of the file that task tid's fd wfd names
 * now (kcmp), or -1: then *slot is the slot to park a fresh dup in (its
 * old dup, of another file, closed) or -1 when none may be used. Either
 * way a slot returned is in use until gs_dup_cache_park or _release. */
int gs_dup_cache_take(struct gs_dup_cache *dc, pid_t tid, int wfd, int *slot);
/* Parks fd (a dup of a control file that tid's wfd named) in the slot. */
void gs_dup_cache_park(struct gs_dup_cache *dc, int slot, int fd, pid_t tid, int wfd);
/* Gives the slot up empty (the caller closes its fd, if any). */
void gs_dup_cache_release(struct gs_dup_cache *dc, int slot);
/* The slot's fact (struct gs_dup_slot), for a slot in use: is it (key,
 * epoch)? And its setting, about the file the slot's user holds and
 * parks there. */
static inline bool gs_dup_cache_fact_is(const struct gs_dup_cache *dc, int slot, uint32_t key, uint64_t epoch)
{
	return epoch != 0 && dc->slot[slot].fact_epoch == epoch && dc->slot[slot].fact_key == key;
}
static inline void gs_dup_cache_fact_set(struct gs_dup_cache *dc, int slot, uint32_t key, uint64_t epoch)
{
	dc->slot[slot].fact_key = key;
	dc->slot[slot].fact_epoch = epoch;
}

/* Closes every parked dup of owner's caches (not those in use), and
 * waits for a janitor's close in progress: once it returns, every file
 * that only our parked dups held is released. */
void gs_dup_cache_drop_owner(const void *owner);

#endif
