/* SPDX-License-Identifier: MIT */
/*
 * idmap.h - sandbox ids to indices, for the readers of audit logs
 * (review_read.c, audit_verify.c).
 *
 * The ids come from the log, and a hostile log chooses them: under a
 * fixed, public hash (the FNV-1a these readers used) anyone can compute
 * ids that all land in one bucket, and 100,000 of them in a 3.3 MB log
 * made every lookup walk the whole table (issue #32: `audit summary`
 * 110 s instead of 0.4 s). Here the hash is SipHash-2-4 under a key drawn
 * from getrandom(2) for each map, so no log can know which ids collide,
 * and the table stays at most half full, so a lookup's expected probes
 * stay a small constant whatever the input.
 *
 * The map keeps only indices; the caller keeps the ids (id_of reads one
 * back), so an entry costs four bytes and the ids are not held twice.
 */
#ifndef GPUSANDBOX_IDMAP_H
#define GPUSANDBOX_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GS_IDMAP_KEY_WORDS 2

/* The id stored for value (an index into the caller's array). */
typedef const char *(*gs_idmap_id_fn)(const void *ctx, uint32_t value);

struct gs_idmap {
	uint32_t      *slots;      /* value + 1; 0: empty */
	size_t         cap, n;     /* cap a power of two, over twice n */
	uint64_t       key[GS_IDMAP_KEY_WORDS];
	gs_idmap_id_fn id_of;
	const void    *ctx;
	/* The longest probe sequence any lookup walked: what a flood would
	 * make long (tests/unit/test_review counts it, not the clock). */
	size_t         max_probe;
	/* Tests only: the old fixed FNV-1a hash, to show the flood it let
	 * through (the baseline of test_review's hash-flood case). */
	bool           fixed_hash;
};

/* A map with a fresh random key. Returns 0, or -1 when getrandom fails
 * (then no map: a predictable key would be no defence). */
int  gs_idmap_init(struct gs_idmap *m, gs_idmap_id_fn id_of, const void *ctx);
void gs_idmap_free(struct gs_idmap *m);
/* The value stored for id; if none, stores next (the index the caller
 * will fill next) and sets *added. Returns -1 only when out of memory. */
long gs_idmap_get_or_add(struct gs_idmap *m, const char *id, uint32_t next, bool *added);
/* The value stored for id, or -1. */
long gs_idmap_find(struct gs_idmap *m, const char *id);

/* SipHash-2-4 of data under key (Aumasson and Bernstein, 2012). */
uint64_t gs_siphash24(const uint64_t key[GS_IDMAP_KEY_WORDS], const void *data, size_t len);

#endif
