/* SPDX-License-Identifier: MIT */
/*
 * refusals.h - what the sandbox refused, for one line on stderr at exit.
 *
 * Without --trace or --audit-log a refusal was silent: the workload saw its
 * own CUDA error ("out of memory") and nobody could tell the quota from a
 * full GPU (issue #15). The executor notes every refusal here, and the
 * command line prints one line at exit when there was any:
 *   gpusandbox: 3 calls refused: video memory quota exceeded (--mem 1g) x3
 */
#ifndef GPUSANDBOX_REFUSALS_H
#define GPUSANDBOX_REFUSALS_H

#include <stdint.h>
#include <stdio.h>

#include "audit.h"
#include "quota.h"

/* Distinct kinds kept; more are counted together as "other". */
#define GS_REFUSAL_KINDS 16u
#define GS_REFUSAL_REASON 120u

struct gs_refusal_kind {
	enum gs_outcome outcome;       /* quota, policy or device_full */
	char        reason[GS_REFUSAL_REASON];
	const char *resource;          /* a static name ("vidmem", "channels"), or NULL */
	int         gpu;
	uint64_t    limit;
	uint64_t    n;
};

struct gs_refusals {
	struct gs_refusal_kind kind[GS_REFUSAL_KINDS];
	unsigned n_kinds;
	uint64_t total;
	uint64_t other;                /* refusals of kinds past GS_REFUSAL_KINDS */
};

/* Notes one decision if it was refused (by a quota or the policy) or the
 * driver said its GPU was full. */
void gs_refusals_note(struct gs_refusals *r, const struct gs_decision *d);
/* Prints the line, if anything was refused. Returns the count printed. */
uint64_t gs_refusals_print(const struct gs_refusals *r, const struct gs_quota *q, FILE *f);

#endif
