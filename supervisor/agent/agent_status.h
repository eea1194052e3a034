/* SPDX-License-Identifier: MIT */
/*
 * agent_status.h - the agent's live view (--status-socket): what `gpusandbox
 * status` prints and the DaemonSet's probes ask.
 *
 * One JSON document per connection, then the connection is closed: the
 * agent's pid, its container count, and per container its id, sandbox,
 * Kubernetes names, quota request, and per GPU the memory held, its peak
 * and the quota, the compute share and the refusals.
 */
#ifndef GPUSANDBOX_AGENT_STATUS_H
#define GPUSANDBOX_AGENT_STATUS_H

#include <json-c/json.h>

#include "agent_sandbox.h"

/* The status format's version ("format" in the document). */
#define GS_STATUS_FORMAT 1

/* Listens on path (0600) and answers each connection on a thread of its
 * own. Returns 0, or -1 (err). */
int gs_agent_status_start(struct gs_agent *a, const char *path, struct gs_error *err);

/* The document, as the socket sends it (tests, and the thread). */
json_object *gs_agent_status_json(struct gs_agent *a);

#endif
