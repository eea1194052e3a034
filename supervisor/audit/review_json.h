/* SPDX-License-Identifier: MIT */
/*
 * review_json.h - fields of a parsed record, by name and type
 * (review_digest.c). A field of another type than expected is absent.
 */
#ifndef GPUSANDBOX_REVIEW_JSON_H
#define GPUSANDBOX_REVIEW_JSON_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "review.h"

const char *review_json_str(json_object *o, const char *key);
bool review_json_u64(json_object *o, const char *key, uint64_t *out);
bool review_json_i64(json_object *o, const char *key, int64_t *out);
bool review_json_double(json_object *o, const char *key, double *out);

/* The decision-like fields of a record into its digest, its texts kept
 * in pool, or left in scratch when pool is NULL (a streaming view).
 * Returns 0, or -1 when out of memory. */
int review_digest_fields(struct review_rec *r, json_object *o, struct review_pool *pool,
                         struct review_rec_text *scratch);
/* What a start, summary or sm_adjust record says about its sandbox.
 * Returns 0, or -1 when out of memory. */
int review_digest_sandbox(struct review_sandbox *sb, const struct review_rec *r, json_object *o,
                          struct review_pool *pool);

#endif
