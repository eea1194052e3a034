/* SPDX-License-Identifier: MIT */
/*
 * review_pool.c - each distinct text of a log kept once (review.h).
 *
 * A record's digest held its texts in fixed arrays, about 700 bytes of
 * its 850 (issue #32: a 1 GB log took 1.5 GB to summarize). The texts a
 * log repeats (a process name, a call, a verdict, a reason, a call
 * stack) are few, so each record now points at one interned copy. The
 * pool's index is the keyed idmap: a log cannot flood it either. A log
 * of all-distinct texts costs at most what its lines held, which the
 * line limit bounds per record.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "gpusandbox.h"
#include "review.h"

#define POOL_INITIAL 256u

static const char *pool_text(const void *ctx, uint32_t i)
{
	return ((const struct review_pool *)ctx)->strings[i];
}

int review_pool_init(struct review_pool *p)
{
	memset(p, 0, sizeof(*p));
	return gs_idmap_init(&p->map, pool_text, p);
}

void review_pool_free(struct review_pool *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->strings[i]);
	free(p->strings);
	gs_idmap_free(&p->map);
	memset(p, 0, sizeof(*p));
}

const char *review_intern(struct review_pool *p, const char *s)
{
	bool added;
	long i;

	if (!s || !s[0])
		return "";
	i = gs_idmap_find(&p->map, s);
	if (i >= 0)
		return p->strings[i];
	if (!GS_ROOM_FOR_ONE(p->strings, p->n, p->cap, POOL_INITIAL))
		return NULL;
	/* Stored first, so that the map can read it back as it inserts. */
	p->strings[p->n] = strdup(s);
	if (!p->strings[p->n])
		return NULL;
	if (gs_idmap_get_or_add(&p->map, s, (uint32_t)p->n, &added) < 0) {
		free(p->strings[p->n]);
		return NULL;
	}
	return p->strings[p->n++];
}
