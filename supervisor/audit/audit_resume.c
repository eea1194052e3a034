/* SPDX-License-Identifier: MIT */
/*
 * audit_resume.c - a sandbox's chain taken up again in the log a dead
 * supervisor of the same sandbox was writing (the agent resuming a
 * container from its keeper), so that `gpusandbox audit verify` finds one
 * intact chain across the restart.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "audit.h"

/* Records are a few KiB at most (a call stack of a refusal): the last
 * record of the sandbox is looked for in the log's tail. */
#define TAIL_MAX (1u << 20)

/* The last whole line of buf (len bytes) that is a record of sandbox_id:
 * its seq, hash and event. False when none. */
static bool last_record(char *buf, size_t len, bool from_start, const char *sandbox_id, uint64_t *seq,
                        char hash[GS_SHA256_HEX], bool *sealed)
{
	char *line = buf, *nl;
	bool found = false;

	/* A tail that starts inside a line: that line is not whole. */
	if (!from_start && (nl = memchr(buf, '\n', len)) != NULL)
		line = nl + 1;
	while ((nl = memchr(line, '\n', len - (size_t)(line - buf))) != NULL) {
		*nl = '\0';
		json_object *o = json_tokener_parse(line), *v;
		const char *h;
		if (o && json_object_object_get_ex(o, "sandbox", &v) &&
		    strcmp(json_object_get_string(v), sandbox_id) == 0 &&
		    json_object_object_get_ex(o, "hash", &v) && (h = json_object_get_string(v)) &&
		    strlen(h) == GS_SHA256_HEX - 1 && json_object_object_get_ex(o, "seq", &v)) {
			*seq = (uint64_t)json_object_get_int64(v);
			memcpy(hash, h, GS_SHA256_HEX);
			*sealed = json_object_object_get_ex(o, "event", &v) &&
			          strcmp(json_object_get_string(v), "seal") == 0;
			found = true;
		}
		json_object_put(o);
		line = nl + 1;
	}
	return found;
}

int gs_audit_resume_chain(struct gs_audit *a, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
	size_t want = size > (off_t)TAIL_MAX ? TAIL_MAX : (size_t)(size > 0 ? size : 0);
	char *buf = want ? malloc(want + 1) : NULL;
	char hash[GS_SHA256_HEX];
	uint64_t seq = 0;
	bool sealed = false;
	int rc = GS_AUDIT_CHAIN_NONE;

	if (buf && pread(fd, buf, want, size - (off_t)want) == (ssize_t)want &&
	    last_record(buf, want, want == (size_t)size, a->sandbox_id, &seq, hash, &sealed)) {
		rc = sealed ? GS_AUDIT_CHAIN_SEALED : GS_AUDIT_CHAIN_GOES_ON;
		if (!sealed) {
			a->seq = seq + 1;
			memcpy(a->prev, hash, sizeof(a->prev));
		}
	}
	free(buf);
	if (fd >= 0)
		close(fd);
	return rc;
}
