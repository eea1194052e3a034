/* SPDX-License-Identifier: MIT */
/*
 * executor.h - the executor's entry point: decides and answers one trapped
 * notification of a sandbox. Called by a runner (runner.c), never by the
 * sandbox object itself.
 */
#ifndef GPUSANDBOX_EXECUTOR_H
#define GPUSANDBOX_EXECUTOR_H

#include "session.h"
#include "scratch.h"

/* Decides and answers the notification in scratch->req (an ioctl, or under
 * managed = deny an mmap) with the worker's scratch; the caller holds
 * sb->lock. */
void gs_execute_notification(struct gs_session *sb, struct gs_scratch *scratch);

#endif
