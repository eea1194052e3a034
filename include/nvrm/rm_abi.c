/* SPDX-License-Identifier: MIT */
/*
 * rm_abi.c - the RM ABI layer: identity rows joined with one driver
 * branch's parameter rows, and the lookups every other layer uses.
 *
 * Everything here is our own data: class ids, control numbers, names,
 * sizes and offsets are facts read from open-gpu-kernel-modules (the tag is
 * in each branch's .def files); docs/rm-tables.md says where each fact came
 * from. No NVIDIA code or header text is reproduced.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nvrm_abi.h"
#include "rm_tables.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- identity rows (every branch) ---------------------------------------- */

static const struct rm_class_info class_rows[] = {
#define RM_CLASS(num_, name_, kind_, group_, also_, engine_) \
	{ .cls = (num_), .name = #name_, .kind = RM_CLASS_##kind_, .group = GS_GROUP_##group_, \
	  .also = GS_GROUP_##also_, .engine = GS_ENGINE_##engine_ },
#include "nvrm/classes.def"
#undef RM_CLASS
};
#define N_CLASSES ARRAY_LEN(class_rows)

static const struct rm_ctrl_info ctrl_rows[] = {
#define RM_CTRL(num_, name_, group_, also_, unreloc_) \
	{ .cmd = num_##u, .name = #name_, .group = GS_GROUP_##group_, .also = GS_GROUP_##also_, \
	  .unrelocatable = (unreloc_) },
#define RM_CTRL_OPAQUE(name_, num_, group_, also_) \
	{ .cmd = num_##u, .name = #name_, .group = GS_GROUP_##group_, .also = GS_GROUP_##also_ },
#include "nvrm/controls.def"
#undef RM_CTRL
#undef RM_CTRL_OPAQUE
};
#define N_CTRLS ARRAY_LEN(ctrl_rows)

static const struct rm_escape escape_rows[] = {
#define RM_ESCAPE(nr_, name_, size_, alt_, action_, bound_) \
	{ (nr_), #name_, (size_), (alt_), RM_ACT_##action_, (bound_) },
#include "nvrm/escapes.def"
#undef RM_ESCAPE
};

/* ---- per-branch rows ------------------------------------------------------ */

/* A parameter row. A branch that drops a class or control its base has
 * gives it size RM_PARAMS_ABSENT. */
#define RM_PARAMS_ABSENT UINT32_MAX
#define RM_PARAMS_REQUIRED true
#define RM_PARAMS_OPTIONAL false

struct rm_class_params {
	uint32_t cls;
	uint32_t size;
	bool     required;
};

struct rm_ctrl_params {
	uint32_t               cmd;
	uint32_t               size;
	unsigned               n_embedded;
	struct rm_embedded_ptr embedded[RM_EMBEDDED_MAX_PTRS];
};

#define EMB(ptr_, cnt_, esz_, max_) \
	{ (ptr_), (cnt_), (esz_), (max_), 0 }
#define EMB_FIXED(ptr_, esz_, n_) \
	{ (ptr_), RM_EMBEDDED_FIXED_COUNT, (esz_), (n_), (n_) }
#define RM_CLASS_PARAMS(name_, size_, req_) { (name_), (size_), RM_PARAMS_##req_ },
#define RM_CTRL_PARAMS(name_, size_, n_, ...) { (name_), (size_), (n_), { __VA_ARGS__ } },

static const struct rm_class_params v580_classes[] = {
#include "nvrm/v580/classes.def"
};
static const struct rm_ctrl_params v580_ctrls[] = {
#include "nvrm/v580/controls.def"
};

#undef RM_CLASS_PARAMS
#undef RM_CTRL_PARAMS
#undef EMB
#undef EMB_FIXED

struct rm_abi_branch {
	const char *branch;            /* the driver's major version */
	unsigned    major;
	const char *source;
	/* Rows this branch does not list come from base (NULL: none). */
	const struct rm_abi_branch *base;
	const struct rm_class_params *classes;
	size_t n_classes;
	const struct rm_ctrl_params *ctrls;
	size_t n_ctrls;
};

#define V580_MAJOR 580u
static const struct rm_abi_branch branch_580 = {
	"580", V580_MAJOR, "open-gpu-kernel-modules 580.142 (1a5075f8)", NULL,
	v580_classes, ARRAY_LEN(v580_classes), v580_ctrls, ARRAY_LEN(v580_ctrls),
};

/* ---- the joined tables ------------------------------------------------------ */

struct gs_rm_abi {
	const struct rm_abi_branch *b;
	struct rm_class_info classes[N_CLASSES];
	struct rm_ctrl_info  ctrls[N_CTRLS];
	const struct rm_escape *escape_by_nr[256];
};

/* Oldest first. */
static struct gs_rm_abi abis[] = {
	{ .b = &branch_580 },
};
static pthread_once_t abis_once = PTHREAD_ONCE_INIT;

/* Every table starts with a uint32_t key, so one comparator serves all. */
static int cmp_u32_key(const void *key, const void *elem)
{
	uint32_t a = *(const uint32_t *)key;
	uint32_t b = *(const uint32_t *)elem;

	return (a > b) - (a < b);
}

/* The branch's own row wins over its base's; a row of size
 * RM_PARAMS_ABSENT says the class is gone on this branch. */
static const struct rm_class_params *class_params(const struct rm_abi_branch *b, uint32_t cls)
{
	for (; b; b = b->base) {
		const struct rm_class_params *p =
			bsearch(&cls, b->classes, b->n_classes, sizeof(*p), cmp_u32_key);
		if (p)
			return p->size == RM_PARAMS_ABSENT ? NULL : p;
	}
	return NULL;
}

static const struct rm_ctrl_params *ctrl_params(const struct rm_abi_branch *b, uint32_t cmd)
{
	for (; b; b = b->base) {
		const struct rm_ctrl_params *p =
			bsearch(&cmd, b->ctrls, b->n_ctrls, sizeof(*p), cmp_u32_key);
		if (p)
			return p->size == RM_PARAMS_ABSENT ? NULL : p;
	}
	return NULL;
}

static void join(struct gs_rm_abi *abi)
{
	for (size_t i = 0; i < N_CLASSES; i++) {
		const struct rm_class_params *p = class_params(abi->b, class_rows[i].cls);
		abi->classes[i] = class_rows[i];
		if (p) {
			abi->classes[i].known = true;
			abi->classes[i].params_size = p->size;
			abi->classes[i].params_required = p->required;
		}
	}
	for (size_t i = 0; i < N_CTRLS; i++) {
		const struct rm_ctrl_params *p = ctrl_params(abi->b, ctrl_rows[i].cmd);
		abi->ctrls[i] = ctrl_rows[i];
		if (p) {
			abi->ctrls[i].known = true;
			abi->ctrls[i].params_size = p->size;
			abi->ctrls[i].n_embedded = p->n_embedded;
			memcpy(abi->ctrls[i].embedded, p->embedded, sizeof(p->embedded));
		}
	}
	for (size_t i = 0; i < ARRAY_LEN(escape_rows); i++)
		abi->escape_by_nr[escape_rows[i].nr] = &escape_rows[i];
}

static void join_all(void)
{
	for (size_t i = 0; i < ARRAY_LEN(abis); i++)
		join(&abis[i]);
}

static const struct gs_rm_abi *ready(const struct gs_rm_abi *abi)
{
	pthread_once(&abis_once, join_all);
	return abi;
}

/* ---- choosing tables ---------------------------------------------------------- */

size_t gs_rm_abi_count(void)
{
	return ARRAY_LEN(abis);
}

const struct gs_rm_abi *gs_rm_abi_at(size_t i)
{
	return i < ARRAY_LEN(abis) ? ready(&abis[i]) : NULL;
}

const struct gs_rm_abi *gs_rm_abi_default(void)
{
	return ready(&abis[ARRAY_LEN(abis) - 1]);
}

const char *gs_rm_abi_branch(const struct gs_rm_abi *abi)
{
	return abi->b->branch;
}

const char *gs_rm_abi_source(const struct gs_rm_abi *abi)
{
	return abi->b->source;
}

const struct gs_rm_abi *gs_rm_abi_by_branch(const char *branch)
{
	for (size_t i = 0; i < ARRAY_LEN(abis); i++)
		if (strcmp(abis[i].b->branch, branch) == 0)
			return ready(&abis[i]);
	return NULL;
}

#define VERSION_MAJOR_MAX 9999u

/* The driver's major version: the digits before the first dot. */
static int version_major(const char *version, unsigned *major)
{
	unsigned m = 0;
	const char *p = version;

	if (!version || *p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		m = m * 10 + (unsigned)(*p - '0');
		if (m > VERSION_MAJOR_MAX)
			return -1;
	}
	if (*p != '.' && *p != '\0')
		return -1;
	*major = m;
	return 0;
}

/*
 * A branch-level match: the tables of a branch hold for every release of
 * it. That is what abi-drift.md found within a branch: the RM parameter
 * structs and control numbers are frozen once a branch is released (layout
 * changes land on a new branch; 580.65.06 .. 580.142 agree on every row,
 * and 580.159 was measured to agree on a GPU), while across branches they
 * differ (535 in 11 of 89 asserted layouts, 590 in a handful). So a 580.x
 * driver gets the 580 tables, and any other branch has none until its rows
 * are added.
 */
const struct gs_rm_abi *gs_rm_abi_for_version(const char *version)
{
	unsigned major;

	if (version_major(version, &major) < 0)
		return NULL;
	for (size_t i = 0; i < ARRAY_LEN(abis); i++)
		if (abis[i].b->major == major)
			return ready(&abis[i]);
	return NULL;
}

const struct gs_rm_abi *gs_rm_abi_nearest(const char *version)
{
	unsigned major;
	const struct gs_rm_abi *best = &abis[0];

	if (version_major(version, &major) < 0)
		return NULL;
	for (size_t i = 0; i < ARRAY_LEN(abis); i++)
		if (abis[i].b->major <= major)
			best = &abis[i];
	return ready(best);
}

/* ---- lookups -------------------------------------------------------------------- */

const struct rm_class_info *rm_class_row(const struct gs_rm_abi *abi, uint32_t cls)
{
	return bsearch(&cls, abi->classes, N_CLASSES, sizeof(abi->classes[0]), cmp_u32_key);
}

const struct rm_ctrl_info *rm_ctrl_row(const struct gs_rm_abi *abi, uint32_t cmd)
{
	return bsearch(&cmd, abi->ctrls, N_CTRLS, sizeof(abi->ctrls[0]), cmp_u32_key);
}

const struct rm_class_info *rm_class_lookup(const struct gs_rm_abi *abi, uint32_t cls)
{
	const struct rm_class_info *ci = rm_class_row(abi, cls);
	return ci && ci->known ? ci : NULL;
}

const struct rm_ctrl_info *rm_ctrl_lookup(const struct gs_rm_abi *abi, uint32_t cmd)
{
	const struct rm_ctrl_info *ci = rm_ctrl_row(abi, cmd);
	return ci && ci->known ? ci : NULL;
}

bool rm_ctrl_has_unrelocatable_pointers(const struct gs_rm_abi *abi, uint32_t cmd)
{
	const struct rm_ctrl_info *ci = rm_ctrl_row(abi, cmd);

	if (ci && ci->unrelocatable)
		return true;
	/* Defensive: a row that claims more pointers than the struct can
	 * hold cannot be relocated completely. */
	return ci && ci->n_embedded > RM_EMBEDDED_MAX_PTRS;
}

const struct rm_escape *rm_escape_find(const struct gs_rm_abi *abi, uint32_t nr)
{
	return nr < ARRAY_LEN(abi->escape_by_nr) ? abi->escape_by_nr[nr] : NULL;
}

const char *rm_escape_name(const struct gs_rm_abi *abi, uint32_t nr)
{
	const struct rm_escape *e = rm_escape_find(abi, nr);
	return e ? e->name : NULL;
}

size_t rm_class_table_size(const struct gs_rm_abi *abi)
{
	(void)abi;
	return N_CLASSES;
}

const struct rm_class_info *rm_class_table_at(const struct gs_rm_abi *abi, size_t i)
{
	return i < N_CLASSES ? &abi->classes[i] : NULL;
}

size_t rm_ctrl_table_size(const struct gs_rm_abi *abi)
{
	(void)abi;
	return N_CTRLS;
}

const struct rm_ctrl_info *rm_ctrl_table_at(const struct gs_rm_abi *abi, size_t i)
{
	return i < N_CTRLS ? &abi->ctrls[i] : NULL;
}
