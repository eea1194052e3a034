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

#include "sha256.h"

/* `gpusandbox audit verify`: argv[0] is "verify". Returns the exit
 * status. (`gpusandbox audit` dispatches here: review.c.) */
int gs_audit_verify(int argc, char **argv);

/* Is the record's "hash" (the last field of the line, copied to claimed)
 * the SHA-256 of its text before that field, closed with "}"? */
bool gs_audit_hash_matches(const char *text, size_t len, char claimed[GS_SHA256_HEX]);

#endif
