/* SPDX-License-Identifier: MIT */
/*
 * suggest.h - "did you mean ...?" for a mistyped word (a policy key, a
 * command-line option): the closest of a list by edit distance.
 */
#ifndef GPUSANDBOX_SUGGEST_H
#define GPUSANDBOX_SUGGEST_H

#include <stddef.h>

/* The candidate closest to word: within GS_SUGGEST_MAX_EDITS edits
 * (insertions, deletions, substitutions), or one of the two a prefix of
 * the other ("memory" for "mem"). NULL when none is close enough, so that a
 * word unlike every candidate gets no misleading hint. get(i) returns
 * candidate i (NULL to skip it). */
#define GS_SUGGEST_MAX_EDITS 2u
const char *gs_suggest(const char *word, size_t n, const char *(*get)(size_t i, const void *ctx),
                       const void *ctx);

/* The edit distance (Levenshtein) of a and b, capped at GS_SUGGEST_CAP. */
#define GS_SUGGEST_CAP 64u
unsigned gs_edit_distance(const char *a, const char *b);

#endif
