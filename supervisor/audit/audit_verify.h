/* SPDX-License-Identifier: MIT */
/*
 * audit_verify.h - `gpusandbox audit verify`: the hash chain of audit logs.
 */
#ifndef GPUSANDBOX_AUDIT_VERIFY_H
#define GPUSANDBOX_AUDIT_VERIFY_H

/* Exit statuses of `gpusandbox audit verify`. */
enum gs_audit_verify_exit {
	GS_AUDIT_VERIFIED = 0,   /* every chain complete, sealed and intact */
	GS_AUDIT_BROKEN   = 1,   /* a chain does not verify: see the messages */
	GS_AUDIT_USAGE    = 2,   /* bad usage or an unreadable file */
};

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sha256.h"

/* `gpusandbox audit verify`: argv[0] is "verify". Returns the exit
 * status. (`gpusandbox audit` dispatches here: review.c.) */
int gs_audit_verify(int argc, char **argv);

/* Is the record's "hash" (the last field of the line, copied to claimed)
 * the SHA-256 of its text before that field, closed with "}"? */
bool gs_audit_hash_matches(const char *text, size_t len, char claimed[GS_SHA256_HEX]);

/* The longest line read as a record, by `verify` and by every view alike
 * (review_read.c), so that they cannot disagree about a log: a start
 * record holds the command line, which the kernel bounds at about 2 MiB.
 * A longer line is skipped and reported, never buffered whole (one 1 GiB
 * line took `verify` 3 GB before, issue #32). */
#define GS_AUDIT_LINE_MAX (4u << 20)
#define GS_AUDIT_LINE_MAX_TEXT "4 MiB"

enum gs_audit_line {
	GS_LINE_EOF,        /* no more lines */
	GS_LINE_RECORD,     /* a whole line, its newline dropped */
	GS_LINE_OVERLONG,   /* longer than GS_AUDIT_LINE_MAX: skipped, the rest read past */
	GS_LINE_UNENDED,    /* the file ended before the line's newline: cut short */
};

/* Reads the next line of f into buf (GS_AUDIT_LINE_MAX bytes). */
enum gs_audit_line gs_audit_read_line(FILE *f, char *buf, size_t *len);

#endif
