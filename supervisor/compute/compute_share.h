/* SPDX-License-Identifier: MIT */
/*
 * compute_share.h - --sm: a hard cap on the workload's share of GPU time,
 * enforced from outside the process with the driver's own channel
 * controls. See compute_share.c for the mechanism and its safety rules.
 */
#ifndef GPUSANDBOX_COMPUTE_SHARE_H
#define GPUSANDBOX_COMPUTE_SHARE_H

#include "compute_state.h"

/* Starts the duty-cycle thread for sb (sb->quota.sm_percent < 100). */
int  gs_sm_start(struct gs_compute_share *cs, struct gs_session *sb, struct gs_error *err);
/* Stops the thread and re-enables every channel it disabled that still
 * exists. Safe to call when never started. */
void gs_sm_stop(struct gs_compute_share *cs);
/* Fills the summary's compute-share part. */
void gs_sm_summary(const struct gs_compute_share *cs, struct gs_sm_summary *out);

#endif
