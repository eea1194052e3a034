/* SPDX-License-Identifier: MIT */
/*
 * audit_policy.h - what the audit log's start record says about the run:
 * the effective policy (every limit, per GPU; the groups; the GPUs; the
 * managed mode; the compute share) and the user's labels (--label).
 *
 * A reviewer reads the start record first: it must say what the sandbox
 * enforced, not only one memory quota (issue #15).
 */
#ifndef GPUSANDBOX_AUDIT_POLICY_H
#define GPUSANDBOX_AUDIT_POLICY_H

#include <json-c/json.h>
#include <stdbool.h>

#include "groups.h"
#include "quota.h"

#define GS_LABELS_MAX 16u
/* A key: a lower-case letter, then up to 62 of [a-z0-9_.-] (Kubernetes'
 * label names, lower case), so it is one JSON key a shell can type. */
#define GS_LABEL_KEY_MAX 64u
/* A value: up to 255 bytes of valid UTF-8 with no control character. */
#define GS_LABEL_VALUE_MAX 256u

struct gs_audit_labels {
	unsigned n;
	char key[GS_LABELS_MAX][GS_LABEL_KEY_MAX];
	char value[GS_LABELS_MAX][GS_LABEL_VALUE_MAX];
};

/* Adds one --label KEY=VALUE. Returns 0, or -1 with *why set to what is
 * wrong (the key's shape, the value, a key given twice, too many). */
int gs_audit_label_add(struct gs_audit_labels *l, const char *kv, const char **why);

/* {"mem": bytes or null, "mem_gpu": {"N": bytes}, "channels": n or null,
 *  "channel_groups", "active_channel_groups", "engines": {"video.decoders":
 *  n or null, ...}, "gpus": [minors] or null (all), "gpu_uuids": [...],
 *  "groups": [names], "allow_classes": ["0x..."], "allow_controls": [...],
 *  "managed": "deny" | "allow-unaccounted", "p2p_register": "perform" |
 *  "answer", "sm": {"target", "period_ms"}
 *  or null}. */
json_object *gs_audit_policy_json(const struct gs_quota *q, const struct gs_rules *r);

/* {"KEY": "VALUE", ...}; an empty object without labels. */
json_object *gs_audit_labels_json(const struct gs_audit_labels *l);

/* The start record's who and where: "uid" (number, or null when uid < 0),
 * "user" (or null), "cwd" (or null), "policy_file": {"path", "sha256": the
 * file's SHA-256 as read now, or null when it cannot be read} or null when
 * no file. Text is cleaned to valid UTF-8. */
void gs_audit_identity_add(json_object *o, long uid, const char *user, const char *cwd,
                           const char *policy_file);

#endif
