/* SPDX-License-Identifier: MIT */
/*
 * runner.h - drives a sandbox: the notify thread of the command line.
 */
#ifndef GPUSANDBOX_RUNNER_H
#define GPUSANDBOX_RUNNER_H

#include <sys/types.h>

#include "gs_error.h"
#include "executor.h"
#include "session.h"

/* Receives one notification and answers it, with the calling worker's
 * scratch. Returns 1 if one was handled,
 * 0 if there was nothing to do (the target went away), -1 when the listener
 * is unusable (every workload task is gone, or a hard error). */
int gs_session_handle_one(struct gs_session *sb, struct gs_scratch *scratch,
                          struct gs_error *err);

/* Serves the listener from a dedicated thread blocked in RECV, so a trap
 * costs one wake-up and no poll. If the thread fails (or the audit log
 * cannot be written) it kills the workload, which ends the run. */
int  gs_session_start(struct gs_session *sb, pid_t workload, struct gs_error *err);
/* Stops and joins the thread; afterwards the ledger is the caller's. */
void gs_session_stop(struct gs_session *sb);
/* Writes the summary record. */
void gs_session_summarize(struct gs_session *sb, int exit_status, int term_signal);

#endif
