/* SPDX-License-Identifier: MIT */
/* suggest.c - the closest word of a list, for "did you mean ...?". */
#include <string.h>

#include "suggest.h"

/* A prefix hint needs this many characters in common: "m" is no hint. */
#define PREFIX_MIN 3u

unsigned gs_edit_distance(const char *a, const char *b)
{
	size_t la = strnlen(a, GS_SUGGEST_CAP), lb = strnlen(b, GS_SUGGEST_CAP);
	unsigned row[GS_SUGGEST_CAP + 1];

	/* One row of the classic table: row[j] = distance(a[0..i), b[0..j)). */
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0], next;
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned sub = diag + (a[i - 1] != b[j - 1]);
			unsigned del = row[j] + 1, ins = row[j - 1] + 1;
			next = sub < del ? sub : del;
			next = next < ins ? next : ins;
			diag = row[j];
			row[j] = next;
		}
	}
	return row[lb];
}

static int is_prefix_hint(const char *word, const char *cand)
{
	size_t lw = strlen(word), lc = strlen(cand), m = lw < lc ? lw : lc;

	return m >= PREFIX_MIN && strncmp(word, cand, m) == 0;
}

const char *gs_suggest(const char *word, size_t n, const char *(*get)(size_t i, const void *ctx),
                       const void *ctx)
{
	const char *best = NULL;
	unsigned best_d = GS_SUGGEST_MAX_EDITS + 1;

	for (size_t i = 0; i < n; i++) {
		const char *c = get(i, ctx);
		unsigned d;
		if (!c)
			continue;
		d = gs_edit_distance(word, c);
		if (d < best_d) {
			best = c;
			best_d = d;
		}
	}
	if (best)
		return best;
	for (size_t i = 0; i < n; i++) {
		const char *c = get(i, ctx);
		if (c && is_prefix_hint(word, c))
			return c;
	}
	return NULL;
}
