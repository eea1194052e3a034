/* SPDX-License-Identifier: MIT */
/*
 * agent_conn.h - one connection from an OCI runtime to the agent's
 * listenerPath: the container process state (JSON) and the seccomp
 * listener fd (SCM_RIGHTS), as runtime-spec's config-linux.md describes.
 */
#ifndef GPUSANDBOX_AGENT_CONN_H
#define GPUSANDBOX_AGENT_CONN_H

#include <sys/types.h>

#include "agent_request.h"
#include "gs_error.h"

/* OCI container ids as runc accepts them are shorter; a longer one is
 * refused rather than cut. */
#define GS_AGENT_ID_MAX 128
#define GS_AGENT_META_MAX 256
#define GS_AGENT_STATUS_MAX 16

/* Kubernetes names: a pod name is a DNS subdomain (253), the others are
 * shorter; a uid is 36. */
#define GS_AGENT_K8S_MAX 254

/* Who the container is to Kubernetes, from the state's annotations as the
 * CRI runtime wrote them (containerd: io.kubernetes.cri.*, CRI-O:
 * io.kubernetes.pod.* and io.kubernetes.container.name). Each is "" when
 * absent, or when its value is not a plain name (letters, digits, '.',
 * '_', '-'; not starting with '.'): it goes into file names. Recorded for
 * reading, never a ground for a decision: the runtime's word, and a
 * runtime that copies pod annotations into the spec lets the pod's author
 * write some of them. */
struct gs_agent_k8s {
	char pod[GS_AGENT_K8S_MAX];
	char pod_namespace[GS_AGENT_K8S_MAX];
	char pod_uid[GS_AGENT_K8S_MAX];
	char container[GS_AGENT_K8S_MAX];
	char dropped[GS_AGENT_META_MAX]; /* the first annotation ignored, for the log */
};

struct gs_agent_hello {
	int   listener;                  /* the seccompFd, owned by the caller */
	pid_t pid;                       /* the process the filter is for; 0 if unknown */
	pid_t init_pid;                  /* state.pid: the container's init */
	char  id[GS_AGENT_ID_MAX];       /* state.id */
	char  status[GS_AGENT_STATUS_MAX];
	char  metadata[GS_AGENT_META_MAX]; /* the profile's listenerMetadata */
	struct gs_agent_k8s k8s;         /* state.annotations */
	struct gs_agent_request request; /* state.annotations gpusandbox.io/mem, /sm */
};

/* Reads one state message and its fds from conn, without waiting for the
 * runtime to close the connection (runc 1.1 never does), for at most
 * GS_AGENT_HELLO_TIMEOUT_MS. Checks that the fd named seccompFd is a
 * seccomp listener. Returns 0, or -1 (err set, no fd left open). */
#define GS_AGENT_HELLO_TIMEOUT_MS 5000
int gs_agent_receive_hello(int conn, struct gs_agent_hello *h, struct gs_error *err);

/* A unix socket listening on path, made 0600 from birth (only root may
 * connect). A stale socket at path is replaced; anything else there is
 * not. Returns the fd, or -1 (err). */
int gs_agent_listen(const char *path, struct gs_error *err);

#endif
