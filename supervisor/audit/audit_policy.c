/* SPDX-License-Identifier: MIT */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "audit_policy.h"
#include "policy.h"
#include "sha256.h"
#include "utf8.h"

#define NUM_BUF 16
#define PERCENT 100.0
#define RATIO_BUF 32
#define ASCII_DEL 0x7f
#define ASCII_SPACE 0x20

static bool label_key_ok(const char *k, size_t len)
{
	if (len == 0 || len >= GS_LABEL_KEY_MAX || k[0] < 'a' || k[0] > 'z')
		return false;
	for (size_t i = 1; i < len; i++) {
		char c = k[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

/* Valid UTF-8, no control character: one line of readable text. */
static bool label_value_ok(const char *v)
{
	size_t len = strlen(v);

	if (len >= GS_LABEL_VALUE_MAX || !gs_utf8_valid(v, len))
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)v[i] < ASCII_SPACE || (unsigned char)v[i] == ASCII_DEL)
			return false;
	return true;
}

int gs_audit_label_add(struct gs_audit_labels *l, const char *kv, const char **why)
{
	const char *eq = strchr(kv, '=');
	size_t klen = eq ? (size_t)(eq - kv) : 0;

	if (!eq || !label_key_ok(kv, klen)) {
		*why = "the key must be a lower-case letter then up to 62 of a-z, 0-9, '_', '.', '-'";
		return -1;
	}
	if (!label_value_ok(eq + 1)) {
		*why = "the value must be valid UTF-8 with no control character, under 256 bytes";
		return -1;
	}
	for (unsigned i = 0; i < l->n; i++) {
		if (strlen(l->key[i]) == klen && strncmp(l->key[i], kv, klen) == 0) {
			*why = "the key is given twice";
			return -1;
		}
	}
	if (l->n == GS_LABELS_MAX) {
		*why = "more than 16 labels";
		return -1;
	}
	memcpy(l->key[l->n], kv, klen);
	l->key[l->n][klen] = '\0';
	snprintf(l->value[l->n], sizeof(l->value[l->n]), "%s", eq + 1);
	l->n++;
	return 0;
}

static json_object *count_or_null(uint32_t v)
{
	return v == GS_COUNT_UNLIMITED ? NULL : json_object_new_int64(v);
}

static json_object *bytes_or_null(uint64_t v)
{
	return v == GS_QUOTA_UNLIMITED ? NULL : json_object_new_uint64(v);
}

static json_object *hex_list(const uint32_t *v, uint32_t n)
{
	json_object *a = json_object_new_array();
	char buf[NUM_BUF];

	for (uint32_t i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "0x%x", v[i]);
		json_object_array_add(a, json_object_new_string(buf));
	}
	return a;
}

/* Per-GPU memory quotas (gpu.N.mem), by RM device instance. */
static json_object *mem_gpu_json(const struct gs_quota *q)
{
	json_object *o = json_object_new_object();
	char key[NUM_BUF];

	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		if (q->mem_gpu[g] == GS_MEM_GPU_UNSET)
			continue;
		snprintf(key, sizeof(key), "%u", g);
		json_object_object_add(o, key, bytes_or_null(q->mem_gpu[g]));
	}
	return o;
}

/* The GPUs the workload may use: null for all. UUIDs given are resolved
 * into the minors by then; they are listed as given too. */
static void gpus_json(json_object *o, const struct gs_quota *q)
{
	json_object *minors = NULL, *uuids = json_object_new_array();

	if (q->visible_set) {
		minors = json_object_new_array();
		for (unsigned g = 0; g < GS_MAX_GPUS; g++)
			if ((q->visible >> g) & 1u)
				json_object_array_add(minors, json_object_new_int((int)g));
	}
	for (uint32_t i = 0; i < q->n_uuids && i < GS_MAX_GPUS; i++) {
		char *u = gs_utf8_clean(q->uuids[i]);
		json_object_array_add(uuids, u ? json_object_new_string(u) : NULL);
		free(u);
	}
	json_object_object_add(o, "gpus", minors);
	json_object_object_add(o, "gpu_uuids", uuids);
}

static json_object *sm_json(const struct gs_quota *q)
{
	json_object *o;
	char buf[RATIO_BUF];

	if (q->sm_percent >= GS_SM_UNLIMITED)
		return NULL;
	o = json_object_new_object();
	snprintf(buf, sizeof(buf), "%.2f", q->sm_percent / PERCENT);
	json_object_object_add(o, "target", json_object_new_double_s(q->sm_percent / PERCENT, buf));
	json_object_object_add(o, "period_ms", json_object_new_int((int)q->sm_period_ms));
	json_object_object_add(o, "mode", json_object_new_string(gs_sm_mode_name(q->sm_mode)));
	return o;
}

json_object *gs_audit_policy_json(const struct gs_quota *q, const struct gs_rules *r)
{
	json_object *o = json_object_new_object();
	json_object *engines = json_object_new_object();
	json_object *groups = json_object_new_array();

	json_object_object_add(o, "mem", bytes_or_null(q->mem_per_gpu));
	json_object_object_add(o, "mem_gpu", mem_gpu_json(q));
	/* Each quota kind under its row's name; the video caps together. */
	for (int k = 0; k < GS_QK_N; k++) {
		const struct gs_quota_kind_row *row = gs_quota_kind_row((enum gs_quota_kind)k);
		json_object_object_add(row->flags & GS_QK_VIDEO_CAP ? engines : o, row->record_key,
		                       count_or_null(q->count[k]));
	}
	json_object_object_add(o, "engines", engines);
	gpus_json(o, q);
	for (int g = 0; g < GS_GROUP_N; g++)
		if (r->groups & GS_GROUP_BIT(g))
			json_object_array_add(groups, json_object_new_string(gs_group_name((enum gs_group)g)));
	json_object_object_add(o, "groups", groups);
	json_object_object_add(o, "allow_classes", hex_list(r->classes, r->n_classes));
	json_object_object_add(o, "allow_controls", hex_list(r->controls, r->n_controls));
	json_object_object_add(o, "managed", json_object_new_string(gs_managed_name(q->managed)));
	json_object_object_add(o, "p2p_register", json_object_new_string(gs_p2p_register_name(q->p2p_register)));
	/* Only when it differs: the default's records stay as they were. */
	if (q->fd_import != GS_FD_IMPORT_OWN)
		json_object_object_add(o, "fd_import", json_object_new_string(gs_fd_import_name(q->fd_import)));
	json_object_object_add(o, "sm", sm_json(q));
	return o;
}

json_object *gs_audit_labels_json(const struct gs_audit_labels *l)
{
	json_object *o = json_object_new_object();

	for (unsigned i = 0; l && i < l->n; i++)
		json_object_object_add(o, l->key[i], json_object_new_string(l->value[i]));
	return o;
}

/* A policy is at most GS_POLICY_MAX_BYTES bytes (policy.h); one that is
 * longer, or not a regular file, has no hash (null): it was not the
 * policy loaded either. */
#define SHA_CHUNK 8192
static json_object *file_sha256(const char *path)
{
	char hex[GS_SHA256_HEX], buf[SHA_CHUNK];
	uint8_t d[GS_SHA256_BYTES];
	struct gs_sha256 s;
	struct stat st;
	size_t total = 0, n;
	FILE *f = fopen(path, "re");

	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode)) {
		fclose(f);
		return NULL;
	}
	gs_sha256_init(&s);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && total <= GS_POLICY_MAX_BYTES) {
		gs_sha256_update(&s, buf, n);
		total += n;
	}
	bool ok = !ferror(f) && total <= GS_POLICY_MAX_BYTES;
	fclose(f);
	if (!ok)
		return NULL;
	gs_sha256_final(&s, d);
	for (unsigned i = 0; i < GS_SHA256_BYTES; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	return json_object_new_string(hex);
}

static json_object *text_or_null(const char *text)
{
	char *clean = text ? gs_utf8_clean(text) : NULL;
	json_object *o = clean ? json_object_new_string(clean) : NULL;

	free(clean);
	return o;
}

void gs_audit_identity_add(json_object *o, long uid, const char *user, const char *cwd,
                           const char *policy_file)
{
	json_object *pf = NULL;

	json_object_object_add(o, "uid", uid >= 0 ? json_object_new_int64(uid) : NULL);
	json_object_object_add(o, "user", text_or_null(user));
	json_object_object_add(o, "cwd", text_or_null(cwd));
	if (policy_file) {
		pf = json_object_new_object();
		json_object_object_add(pf, "path", text_or_null(policy_file));
		json_object_object_add(pf, "sha256", file_sha256(policy_file));
	}
	json_object_object_add(o, "policy_file", pf);
}
