/* SPDX-License-Identifier: MIT */
/*
 * policy.h - the policy file (gpusandbox.policy(5)).
 *
 * One statement per line, "key = value", "#" starts a comment. Everything
 * the command line can say has a key (but --hide and --allow-mps, which
 * are about the host a run is on, not the workload), plus per-GPU memory, the allowlist
 * (groups and explicit classes and controls) and video engine caps. A file
 * is parsed completely before anything runs; the first error stops it and
 * is reported as FILE:LINE:COLUMN with the line and a caret under the
 * offending text (and, for a second definition, where the first one was).
 */
#ifndef GPUSANDBOX_POLICY_H
#define GPUSANDBOX_POLICY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "groups.h"
#include "quota.h"

/* Bytes of a policy file we read; a longer one is refused, not cut. */
#define GS_POLICY_MAX_BYTES (1u << 20)
/* Room for a diagnostic: a message and up to two quoted lines. */
#define GS_POLICY_DIAG_MAX 2048u
/* run-as.user, .group, .groups: a name or number, or a list of them. */
#define GS_POLICY_ID_MAX 256u

/* What the audit log records (--audit-level, audit-level; audit.h says
 * what each level writes). STANDARD is the default. */
enum gs_audit_level { GS_AUDIT_LEVEL_REFUSALS, GS_AUDIT_LEVEL_STANDARD, GS_AUDIT_LEVEL_ALL };
/* "refusals", "standard", "all": 0, or -1 for another word. */
int gs_audit_level_parse(const char *s, enum gs_audit_level *level);
const char *gs_audit_level_name(enum gs_audit_level level);
/* "on" or "off": 0, or -1 for another word. */
int gs_parse_on_off(const char *s, bool *on);

struct gs_policy {
	struct gs_quota quota;
	struct gs_rules rules;
	/* The RM tables that allow.class / allow.control names and numbers
	 * are checked against: gs_policy_init sets the newest
	 * (gs_rm_abi_default); a caller that knows the driver may set it
	 * before parsing. */
	const struct gs_rm_abi *abi;
	bool            has_audit_log;
	char            audit_log[PATH_MAX];
	bool            has_audit_level, has_audit_stacks;
	enum gs_audit_level audit_level;
	bool            audit_stacks;
	/* Who the workload runs as (--user, --group, --groups); "" unset.
	 * Resolved by the launcher (contain.c), not here. */
	char            user[GS_POLICY_ID_MAX];
	char            group[GS_POLICY_ID_MAX];
	char            groups[GS_POLICY_ID_MAX];
};

/* Fills p with the built-in defaults (no limits, the default groups). */
void gs_policy_init(struct gs_policy *p);

/* Parses len bytes of text named name (used in diagnostics) into p, which
 * must have been initialised. Returns 0, or -1 with a complete diagnostic
 * (one or more lines, each ending in '\n') in diag. */
int gs_policy_parse(const char *name, const char *text, size_t len, struct gs_policy *p,
                    char *diag, size_t diag_len);

/* Reads and parses a file. Returns 0 or -1 with diag set (also for a file
 * that cannot be read). */
int gs_policy_load(const char *path, struct gs_policy *p, char *diag, size_t diag_len);

#endif
