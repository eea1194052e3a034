/* SPDX-License-Identifier: MIT */
/*
 * audit_rotate.h - an audit log that rotates by size and count (the
 * agent's --audit-max-size, --audit-max-files).
 *
 * PATH is the file being written; PATH.1 the one before, up to
 * PATH.(N-1), the oldest kept. When PATH has reached the size, the writer
 * (audit.c) ends it with a "rotate" record, the files move up one number
 * (the oldest is deleted), and a new PATH begins with a "continued"
 * record. The chain goes on across the files: "continued" has the next
 * seq and, as "prev", the hash of the "rotate" record that ended the file
 * before it; so each file verifies on its own (a chain that begins with
 * "continued" and ends with "rotate" is whole for that file), and the
 * files given in order, oldest first, verify as one chain in which a
 * missing, swapped or edited file breaks the seq and prev links.
 */
#ifndef GPUSANDBOX_AUDIT_ROTATE_H
#define GPUSANDBOX_AUDIT_ROTATE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "gs_error.h"

/* At least the file being written and one before it. */
#define GS_AUDIT_ROTATE_MIN_FILES 2u
#define GS_AUDIT_ROTATE_MAX_FILES 1000u
/* Below this, a file would hold a record or two: refused as a typo. */
#define GS_AUDIT_ROTATE_MIN_SIZE 1024ull

struct gs_audit_rotation {
	bool     on;
	char     path[PATH_MAX];
	uint64_t max_size;       /* rotate once the file holds this many bytes */
	unsigned max_files;      /* PATH and PATH.1 .. PATH.(max_files - 1) */
	uint64_t size;           /* bytes in PATH */
	bool     rotating;       /* writing the rotate/continued pair */
};

/* Checks the two options together. Returns 0, or -1 with err set. */
int gs_audit_rotation_check(uint64_t max_size, unsigned max_files, struct gs_error *err);

/* Rotation from now on of the log open on fd at path, whose size so far
 * counts. Returns 0, or -1 with err set (the options checked). */
int gs_audit_rotation_start(struct gs_audit_rotation *r, int fd, const char *path, uint64_t max_size,
                            unsigned max_files, struct gs_error *err);

/* Moves PATH to PATH.1 (and each PATH.K up one, the oldest deleted), then
 * makes a new, empty PATH (mode 0600, close-on-exec, never an existing
 * file) and returns its descriptor, or -1 with err set. */
int gs_audit_rotate_files(const struct gs_audit_rotation *r, struct gs_error *err);

#endif
