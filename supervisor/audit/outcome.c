/* SPDX-License-Identifier: MIT */
/*
 * outcome.c - the words the audit log and the metrics use for a decision:
 * its verdict's name and what became of it (audit.h, enum gs_outcome).
 * The log's writer is audit.c.
 */
#include "audit.h"

const char *gs_verdict_name(enum gs_verdict v)
{
	switch (v) {
	case GS_VERDICT_ALLOW: return "allow";
	case GS_VERDICT_DENY: return "deny";
	case GS_VERDICT_CONTINUE: return "continue";
	case GS_VERDICT_REFUSE: return "refuse";
	case GS_VERDICT_RELEASE: return "release";
	}
	return "unknown";
}

/* DENY is the verdict of a limit (verdict.c: the memory quota and the
 * counted resources); REFUSE that of the allowlist and the sandbox's own
 * rules. An allowed call the driver failed is the driver's outcome, and its
 * NV_ERR_NO_MEMORY is a full GPU: the quota had room for the call. */
enum gs_outcome gs_decision_outcome(const struct gs_decision *d)
{
	switch (d->verdict) {
	case GS_VERDICT_DENY: return GS_OUTCOME_QUOTA;
	case GS_VERDICT_REFUSE: return GS_OUTCOME_POLICY;
	case GS_VERDICT_CONTINUE: return GS_OUTCOME_CONTINUED;
	case GS_VERDICT_RELEASE: return GS_OUTCOME_RELEASED;
	case GS_VERDICT_ALLOW: break;
	}
	if (d->answered)
		return GS_OUTCOME_ANSWERED;
	if (d->has_status && d->status == NV_ERR_NO_MEMORY)
		return GS_OUTCOME_DEVICE_FULL;
	if ((d->has_status && d->status != NV_OK) || d->errnum)
		return GS_OUTCOME_DRIVER;
	return GS_OUTCOME_OK;
}

bool gs_outcome_is_refusal(enum gs_outcome o)
{
	return o == GS_OUTCOME_QUOTA || o == GS_OUTCOME_POLICY || o == GS_OUTCOME_DRIVER ||
	       o == GS_OUTCOME_DEVICE_FULL;
}

const char *gs_outcome_name(enum gs_outcome o)
{
	switch (o) {
	case GS_OUTCOME_OK: return "ok";
	case GS_OUTCOME_CONTINUED: return "continued";
	case GS_OUTCOME_RELEASED: return "released";
	case GS_OUTCOME_QUOTA: return "quota";
	case GS_OUTCOME_POLICY: return "policy";
	case GS_OUTCOME_DRIVER: return "driver";
	case GS_OUTCOME_DEVICE_FULL: return "device_full";
	case GS_OUTCOME_ANSWERED: return "answered";
	}
	return "unknown";
}
