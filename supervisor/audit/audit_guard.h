/* SPDX-License-Identifier: MIT */
/*
 * audit_guard.h - keeping the workload away from its audit log
 * (issue #32 section 2, attack (b); docs/security/audit-log.md).
 *
 * The hash chain tells that a log was rewritten; it cannot stop it. A root
 * workload (the default identity) that knows or finds the log's path can
 * truncate and rewrite it. Two protections, each said in the start record
 * ("protections"):
 *  - the log is masked in the workload's mount namespace: its directory
 *    when that directory is the log's own (private and holding only logs),
 *    else the file itself (the run's mounts, contain.c, do the masking;
 *    gs_audit_guard_mask_target only chooses the path);
 *  - the file is made append-only (FS_APPEND_FL): nobody, root included,
 *    may truncate or rewrite it without CAP_LINUX_IMMUTABLE, which the
 *    workload never holds (gs_contain_drop_identity). The supervisor keeps
 *    writing through its O_APPEND descriptor.
 */
#ifndef GPUSANDBOX_AUDIT_GUARD_H
#define GPUSANDBOX_AUDIT_GUARD_H

#include <limits.h>
#include <stdbool.h>

#include <json-c/json.h>

enum gs_audit_mask {
	GS_AUDIT_MASK_NONE = 0,
	GS_AUDIT_MASK_FILE,  /* /dev/null bound over the log */
	GS_AUDIT_MASK_DIR,   /* an empty tmpfs nobody may enter over its directory */
};

struct gs_audit_guard {
	bool        applied;       /* the guard ran: the start record says what it did */
	bool        append_only;
	bool        append_set;    /* gpusandbox set it (this process or another: the marker) */
	bool        shared_lock;   /* LOCK_SH held on the log while this process writes */
	const char *append_why;    /* how, or why not (static text) */
	enum gs_audit_mask mask;   /* what the workload's mount namespace masks */
	const char *mask_why;      /* why the directory is not masked, or why nothing is */
	char        mask_path[PATH_MAX];
};

/* Makes the log behind fd append-only where the file system and our
 * capabilities allow, and takes a shared lock on it for as long as this
 * process writes (gs_audit_guard_release tells the last writer by it). */
void gs_audit_guard_file(struct gs_audit_guard *g, int fd);

/* What the workload's mount namespace must mask for the log behind fd:
 * path is --audit-log's (NULL for --audit-fd: the descriptor's own path,
 * when it still names the same file). cwd: the directory the workload
 * starts in (a directory holding it is never masked). Sets mask and
 * mask_path, or mask_why. */
void gs_audit_guard_mask_target(struct gs_audit_guard *g, int fd, const char *path, const char *cwd);

/* Nothing masked, and why (the agent: the runtime makes the container's
 * mount namespace; a test switch). */
void gs_audit_guard_no_mask(struct gs_audit_guard *g, const char *why);

/* The start record's "protections" object. */
json_object *gs_audit_guard_json(const struct gs_audit_guard *g);

/* At the end of this process's writing: the last writer of the file (no
 * other holds its shared lock) clears the append-only flag gpusandbox
 * set, so that the log can be rotated or removed; one an operator set
 * stays. */
void gs_audit_guard_release(struct gs_audit_guard *g, int fd);

#endif
