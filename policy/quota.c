/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "quota.h"

#define KIB_SHIFT 10u

/* ---- the quota kinds ---------------------------------------------------------- */

#define ENGINE_ROW(e, key_) \
	[GS_QK_ENGINE_FIRST + (e)] = { \
		.key = key_, .record_key = key_, .resource = key_, \
		.refusal = "video engine quota exceeded", .dflt = GS_COUNT_UNLIMITED, \
		.counts_on = GS_COUNT_ON_ENGINE, .counted_by = GS_COUNTED_ENGINE_SESSIONS, .engine = (e), .flags = GS_QK_ZERO_OK | GS_QK_VIDEO_CAP, \
	}

/* One row per kind: adding a kind is a row here, its enum value, its
 * way of counting (counted_by, and for a new one a case in count_of_kind,
 * supervisor/core/pipeline/exec_policy.c) and its
 * hand-written documentation (docs/hacking.md, "A quota kind"). Channels
 * and groups are capped by default (GS_DEFAULT_CHANNELS says why). */
static const struct gs_quota_kind_row kind_rows[GS_QK_N] = {
	[GS_QK_CHANNELS] = {
		.key = "channels", .option = "channels", .record_key = "channels",
		.resource = "channels", .refusal = "channel quota exceeded",
		.help = "at most N live GPFIFO channels in the whole sandbox;\n"
		        "channels are a finite hardware pool shared by all\n"
		        "tenants of a GPU. The next one fails like an\n"
		        "exhausted pool (NV_ERR_INSUFFICIENT_RESOURCES).\n"
		        "Default 640; N may be 'unlimited'.",
		.dflt = GS_DEFAULT_CHANNELS,
		.counts_on = GS_COUNT_ON_GROUPED_CHANNEL | GS_COUNT_ON_LONE_CHANNEL,
		.engine = GS_ENGINE_NONE,
	},
	[GS_QK_CHANNEL_GROUPS] = {
		.key = "channel-groups", .option = "channel-groups", .record_key = "channel_groups",
		.resource = "channel_groups", .refusal = "channel group quota exceeded",
		.help = "at most N live channel groups (TSGs); default 128,\n"
		        "which bounds the memory RM allocates for them\n"
		        "outside --mem; N may be 'unlimited'",
		.dflt = GS_DEFAULT_CHANNEL_GROUPS,
		/* kchannelConstruct_IMPL makes a group for a lone channel
		 * (ledger.c, count_object). */
		.counts_on = GS_COUNT_ON_GROUP | GS_COUNT_ON_LONE_CHANNEL,
		.engine = GS_ENGINE_NONE,
	},
	[GS_QK_ACTIVE_CHANNEL_GROUPS] = {
		.key = "active-channel-groups", .option = "active-channel-groups",
		.record_key = "active_channel_groups", .resource = "scheduled_channel_groups",
		.refusal = "active channel group limit reached",
		.help = "at most N channel groups scheduled at once\n"
		        "(GPFIFO_SCHEDULE enabled)",
		.dflt = GS_COUNT_UNLIMITED, .counts_on = GS_COUNT_ON_SCHEDULE, .engine = GS_ENGINE_NONE,
	},
	ENGINE_ROW(GS_ENGINE_NVDEC, "video.decoders"),
	ENGINE_ROW(GS_ENGINE_NVENC, "video.encoders"),
	ENGINE_ROW(GS_ENGINE_NVJPG, "video.jpeg"),
	ENGINE_ROW(GS_ENGINE_OFA, "video.ofa"),
	/* Each RM client holds driver state in kernel memory (its resource
	 * server tree) that no quota charges; a sandbox has one per control
	 * file it opened (client_clauses, verdict.c). */
	[GS_QK_CLIENTS] = {
		.key = "clients", .option = "clients", .record_key = "clients",
		.resource = "clients", .refusal = "client quota exceeded",
		.help = "at most N RM clients at once (one per open\n"
		        "/dev/nvidiactl that made one); each holds driver\n"
		        "state in kernel memory outside --mem. The next\n"
		        "fails with NV_ERR_INSUFFICIENT_RESOURCES",
		.dflt = GS_COUNT_UNLIMITED, .counts_on = GS_COUNT_ON_CLIENT,
		.counted_by = GS_COUNTED_CLIENT_FILES, .engine = GS_ENGINE_NONE,
		.flags = GS_QK_COUNT_IF_CAPPED,
	},
};

const struct gs_quota_kind_row *gs_quota_kind_row(enum gs_quota_kind k)
{
	return &kind_rows[k];
}

static const char *row_key(const struct gs_quota_kind_row *r) { return r->key; }
static const char *row_option(const struct gs_quota_kind_row *r) { return r->option; }
static const char *row_resource(const struct gs_quota_kind_row *r) { return r->resource; }

static int kind_named(const char *name, const char *(*field)(const struct gs_quota_kind_row *))
{
	for (int k = 0; name && k < GS_QK_N; k++)
		if (field(&kind_rows[k]) && strcmp(field(&kind_rows[k]), name) == 0)
			return k;
	return -1;
}

int gs_quota_kind_by_key(const char *key)
{
	return kind_named(key, row_key);
}

int gs_quota_kind_by_option(const char *option)
{
	return kind_named(option, row_option);
}

int gs_quota_kind_by_resource(const char *resource)
{
	return kind_named(resource, row_resource);
}

int gs_parse_kind_count(enum gs_quota_kind k, const char *s, uint32_t *out)
{
	return kind_rows[k].flags & GS_QK_ZERO_OK ? gs_parse_count0(s, out) : gs_parse_count(s, out);
}

void gs_quota_init(struct gs_quota *q)
{
	q->mem_per_gpu = GS_QUOTA_UNLIMITED;
	for (unsigned k = 0; k < GS_QK_N; k++)
		q->count[k] = kind_rows[k].dflt;
	q->sm_percent = GS_SM_UNLIMITED;
	q->sm_period_ms = GS_SM_PERIOD_DEFAULT_MS;
	q->sm_mode = GS_SM_MODE_CAP;
	q->visible_set = false;
	q->visible = 0;
	q->n_uuids = 0;
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		q->mem_gpu[g] = GS_MEM_GPU_UNSET;
	q->managed = GS_MANAGED_ALLOW_UNACCOUNTED;
	q->p2p_register = GS_P2P_REGISTER_AUTO;
	q->files = GS_COUNT_UNLIMITED;
	q->objects = GS_COUNT_UNLIMITED;
	q->fd_import = GS_FD_IMPORT_OWN;
}

bool gs_quota_has_mem(const struct gs_quota *q)
{
	if (q->mem_per_gpu != GS_QUOTA_UNLIMITED)
		return true;
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		if (q->mem_gpu[g] != GS_MEM_GPU_UNSET && q->mem_gpu[g] != GS_QUOTA_UNLIMITED)
			return true;
	return false;
}

int gs_parse_gpus(const char *s, struct gs_quota *q, const char **why)
{
	const char *p = s;
	uint64_t set = 0;

	if (!s || !*s) {
		*why = "empty GPU list";
		return -1;
	}
	/* Every GPU of the host: the same as no list at all. */
	if (strcasecmp(s, GS_GPUS_ALL) == 0) {
		q->visible_set = false;
		q->visible = 0;
		q->n_uuids = 0;
		return 0;
	}
	while (*p) {
		char *end;
		unsigned long v;

		if (strncasecmp(p, "MIG-", 4) == 0) {
			*why = "MIG devices are not supported";
			return -1;
		}
		if (strncasecmp(p, "GPU-", 4) == 0) {
			size_t len = strcspn(p, ",");
			if (len >= GS_GPU_UUID_MAX || len < 5 || strspn(p + 4, "0123456789abcdefABCDEF-") < len - 4) {
				*why = "malformed GPU UUID";
				return -1;
			}
			if (q->n_uuids >= GS_MAX_GPUS) {
				*why = "too many GPUs";
				return -1;
			}
			memcpy(q->uuids[q->n_uuids], p, len);
			q->uuids[q->n_uuids++][len] = '\0';
			p += len;
			if (*p == ',' && p[1])
				p++;
			else if (*p) {
				*why = "expected ',' between GPUs";
				return -1;
			}
			continue;
		}
		if (!isdigit((unsigned char)*p)) {
			*why = "expected a GPU index";
			return -1;
		}
		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || v >= GS_MAX_GPUS) {
			*why = "GPU index out of range";
			return -1;
		}
		if (set & (1ull << v)) {
			*why = "GPU listed twice";
			return -1;
		}
		set |= 1ull << v;
		p = end;
		if (*p == ',' && p[1])
			p++;
		else if (*p) {
			*why = "expected ',' between GPU indices";
			return -1;
		}
	}
	q->visible_set = true;
	q->visible |= set;
	return 0;
}

int gs_parse_count0(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (s && strcasecmp(s, GS_COUNT_UNLIMITED_WORD) == 0) {
		*out = GS_COUNT_UNLIMITED;
		return 0;
	}
	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v >= GS_COUNT_UNLIMITED)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int gs_parse_count(const char *s, uint32_t *out)
{
	uint32_t v;

	if (gs_parse_count0(s, &v) < 0 || v == 0)
		return -1;
	*out = v;
	return 0;
}

/* A decimal number in [lo, hi] followed by nothing or by suffix. */
static int parse_bounded(const char *s, const char *suffix, unsigned long lo, unsigned long hi,
                         uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || (*end && strcmp(end, suffix) != 0) || v < lo || v > hi)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int gs_parse_percent(const char *s, uint32_t *out)
{
	return parse_bounded(s, "%", 1, GS_SM_UNLIMITED, out);
}

int gs_parse_period_ms(const char *s, uint32_t *out)
{
	return parse_bounded(s, "ms", GS_SM_PERIOD_MIN_MS, GS_SM_PERIOD_MAX_MS, out);
}

/* The index of s in names (an enum's names, indexed by its values), or -1. */
static int name_index(const char *const *names, unsigned n, const char *s)
{
	for (unsigned i = 0; i < n; i++)
		if (names[i] && strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

/* The name of value m in names, "?" for a value it has no name for. */
static const char *name_at(const char *const *names, unsigned n, unsigned m)
{
	return m < n && names[m] ? names[m] : "?";
}

#define N_NAMES(names) ((unsigned)(sizeof(names) / sizeof((names)[0])))

/* An enum's parser and namer from its table of names: the words the
 * policy file and the command line take, and what the audit writes. */
#define NAMED_ENUM(type, names, parse, name)                     \
	int parse(const char *s, type *out)                      \
	{                                                        \
		int m = name_index(names, N_NAMES(names), s);    \
		if (m < 0)                                       \
			return -1;                               \
		*out = (type)m;                                  \
		return 0;                                        \
	}                                                        \
	const char *name(type m)                                 \
	{                                                        \
		return name_at(names, N_NAMES(names), (unsigned)m); \
	}

static const char *const managed_names[] = {
	[GS_MANAGED_ALLOW_UNACCOUNTED] = "allow-unaccounted",
	[GS_MANAGED_DENY] = "deny",
};
NAMED_ENUM(enum gs_managed, managed_names, gs_parse_managed, gs_managed_name)

static const char *const sm_mode_names[] = {
	[GS_SM_MODE_CAP] = "cap",
	[GS_SM_MODE_GUARANTEE] = "guarantee",
};
NAMED_ENUM(enum gs_sm_mode, sm_mode_names, gs_parse_sm_mode, gs_sm_mode_name)

static const char *const p2p_register_names[] = {
	[GS_P2P_REGISTER_AUTO] = "auto",
	[GS_P2P_REGISTER_PERFORM] = "perform",
	[GS_P2P_REGISTER_ANSWER] = "answer",
	[GS_P2P_REGISTER_NONE] = "none",
};
NAMED_ENUM(enum gs_p2p_register, p2p_register_names, gs_parse_p2p_register, gs_p2p_register_name)

static const char *const fd_import_names[] = {
	[GS_FD_IMPORT_OWN] = "own",
	[GS_FD_IMPORT_FOREIGN] = "foreign",
};
NAMED_ENUM(enum gs_fd_import, fd_import_names, gs_parse_fd_import, gs_fd_import_name)

static const char *const uvm_map_names[] = {
	[GS_UVM_MAP_DUP] = "dup",
	[GS_UVM_MAP_AS_USER] = "as-user",
};
NAMED_ENUM(enum gs_uvm_map_mode, uvm_map_names, gs_parse_uvm_map_mode, gs_uvm_map_mode_name)

static int suffix_shift(const char *suffix, unsigned *shift)
{
	static const struct {
		char letter;
		unsigned shift;
	} units[] = {
		{ 'k', 1 * KIB_SHIFT }, { 'm', 2 * KIB_SHIFT },
		{ 'g', 3 * KIB_SHIFT }, { 't', 4 * KIB_SHIFT },
	};

	if (*suffix == '\0' || strcasecmp(suffix, "b") == 0) {
		*shift = 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (tolower((unsigned char)suffix[0]) != units[i].letter)
			continue;
		const char *rest = suffix + 1;
		/* "Gi" as Kubernetes writes a quantity (the pod's annotation
		 * gpusandbox.io/mem: 4Gi): binary, as every suffix here. */
		if (*rest == '\0' || strcasecmp(rest, "b") == 0 || strcasecmp(rest, "ib") == 0 ||
		    strcasecmp(rest, "i") == 0) {
			*shift = units[i].shift;
			return 0;
		}
	}
	return -1;
}

int gs_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift;

	if (!s || !isdigit((unsigned char)s[0]))
		return -1; /* rejects "", "-1", " 1" */
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	if (suffix_shift(end, &shift) < 0)
		return -1;
	if (v == 0)
		return -1;
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

void gs_print_gpus(FILE *f, const struct gs_quota *q)
{
	const char *sep = "";

	for (unsigned g = 0; q->visible_set && g < GS_MAX_GPUS; g++)
		if (q->visible & (1ull << g)) {
			fprintf(f, "%s%u", sep, g);
			sep = ",";
		}
	/* UUIDs were checked by gs_parse_gpus(): "GPU-" and hex. */
	for (unsigned i = 0; i < q->n_uuids; i++) {
		fprintf(f, "%s%s", sep, q->uuids[i]);
		sep = ",";
	}
}

const char *gs_format_size(uint64_t bytes, char *buf, unsigned len)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	unsigned i = 0;

	if (bytes == GS_QUOTA_UNLIMITED) {
		snprintf(buf, len, "unlimited");
		return buf;
	}
	while (v >= 1024.0 && i + 1 < sizeof(names) / sizeof(names[0])) {
		v /= 1024.0;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.2f %s", v, names[i]);
	return buf;
}

#define OPTION_KIB 1024ull

const char *gs_option_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "kmgt";
	unsigned u = 0;

	if (!bytes || bytes % OPTION_KIB) {
		snprintf(buf, len, "%" PRIu64, bytes);
		return buf;
	}
	bytes /= OPTION_KIB;
	while (u + 1 < sizeof(units) - 1 && bytes % OPTION_KIB == 0) {
		bytes /= OPTION_KIB;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 "%c", bytes, units[u]);
	return buf;
}

/* A bare number or a k-suffixed one under GS_MEM_MIN is almost always MiB
 * meant (HAMi and MPS count in MiB): suggest the same digits with 'm'. */
static void suggest_unit(const char *s, char *why, size_t len, size_t used)
{
	size_t digits = strspn(s, "0123456789");

	if (s[digits] == '\0' || tolower((unsigned char)s[digits]) == 'k' ||
	    tolower((unsigned char)s[digits]) == 'b')
		snprintf(why + used, len - used, "; did you mean %.*sm?", (int)digits, s);
}

/* "0", "000", "0g": zero in any unit. */
static bool is_zero_size(const char *s)
{
	size_t zeros = s ? strspn(s, "0") : 0;
	unsigned shift;

	return zeros > 0 && suffix_shift(s + zeros, &shift) == 0;
}

int gs_parse_mem_quota(const char *s, uint64_t *out, char *why, size_t len)
{
	char have[32], min[32];
	uint64_t v;
	int n;

	if (is_zero_size(s)) {
		snprintf(why, len, "a quota of 0 leaves no room even for a CUDA context; "
		                   "to run without a memory limit, leave it out");
		return -1;
	}
	if (gs_parse_size(s, &v) < 0) {
		snprintf(why, len, "invalid size '%s' (use bytes or k/m/g/t, e.g. 4g or 4Gi)", s ? s : "");
		return -1;
	}
	if (v < GS_MEM_MIN) {
		n = snprintf(why, len,
		             "'%s' is %s, too small to hold a CUDA context (one takes hundreds of "
		             "MiB; the least accepted is %s); a number without a suffix is bytes",
		             s, gs_format_size(v, have, sizeof(have)),
		             gs_format_size(GS_MEM_MIN, min, sizeof(min)));
		if (n > 0 && (size_t)n < len)
			suggest_unit(s, why, len, (size_t)n);
		return -1;
	}
	*out = v;
	return 0;
}

const char *gs_engine_key(enum gs_engine e)
{
	return e >= 0 && e < GS_ENGINE_N ? kind_rows[gs_quota_kind_of_engine(e)].key : NULL;
}
