/* SPDX-License-Identifier: MIT */
/*
 * runtime_default.h - the container runtimes' default seccomp profile
 * (Docker's, moby's, containerd's "RuntimeDefault"), resolved for a plain
 * OCI linux.seccomp object: what `gpusandbox profile` starts from when no
 * --base is given, so that a GPU container keeps every refusal its runtime
 * would have applied (runtime_default.c says which facts, and how they are
 * resolved).
 */
#ifndef GPUSANDBOX_RUNTIME_DEFAULT_H
#define GPUSANDBOX_RUNTIME_DEFAULT_H

#include <stdbool.h>

#include <json-c/json.h>

/* A new linux.seccomp object (the caller owns it). */
json_object *gs_runtime_default_profile(void);

/* Does the profile allow the system call name unconditionally (tests)? */
bool gs_runtime_default_allows(const char *name);

#endif
