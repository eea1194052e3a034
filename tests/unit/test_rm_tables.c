/* SPDX-License-Identifier: MIT */
/*
 * test_rm_tables.c - checks of the RM ABI layer (include/rm_tables.c and
 * its rows, the .def files under include/nvrm).
 *
 * Prints one line per failure and "N passed, M failed" last; exits non-zero
 * on any failure. The expected numbers are the facts gathered for driver
 * 580 (docs/rm-tables.md); the trace lists below are the controls and
 * classes seen in shared/traces (H200, driver 580.x).
 */
#include <stdio.h>
#include <string.h>

#include "nvrm_abi.h"
#include "rm_tables.h"

/* The tables under test: the newest driver branch gpusandbox knows. */
#define RM_ABI gs_rm_abi_default()

static unsigned n_pass, n_fail;

#define CHECK(cond) check((cond), #cond, __LINE__)

static void check(int ok, const char *what, int line)
{
	if (ok) {
		n_pass++;
	} else {
		n_fail++;
		printf("FAIL line %d: %s\n", line, what);
	}
}

/* Controls in the traces with the paramsSize CUDA sent. */
static const struct { uint32_t cmd, psz; } trace_ctrls[] = {
	{ 0x00000101, 40 },
	{ 0x0000013a, 1352 },
	{ 0x000001f0, 4 },
	{ 0x00000201, 128 },
	{ 0x00000202, 40 },
	{ 0x00000205, 32 },
	{ 0x00000214, 384 },
	{ 0x00000215, 132 },
	{ 0x0000021b, 12 },
	{ 0x00000279, 12 },
	{ 0x0000027b, 4 },
	{ 0x00000288, 3076 },
	{ 0x00000289, 4 },
	{ 0x00000a04, 2244 },
	{ 0x00000d01, 12 },
	{ 0x00000d04, 12 },
	{ 0x00800280, 4 },
	{ 0x00800289, 8 },
	{ 0x00800292, 804 },
	{ 0x00801307, 3 },
	{ 0x00801402, 3 },
	{ 0x0080170d, 24 },
	{ 0x00801909, 1 },
	{ 0x20800102, 564 },
	{ 0x20800110, 132 },
	{ 0x20800111, 64 },
	{ 0x20800119, 4 },
	{ 0x2080012f, 1464 },
	{ 0x20800131, 4 },
	{ 0x20800145, 0 },
	{ 0x20800146, 0 },
	{ 0x2080014a, 268 },
	{ 0x20800170, 340 },
	{ 0x2080018d, 3812 },
	{ 0x2080018e, 14408 },
	{ 0x20800195, 260 },
	{ 0x208001a3, 56 },
	{ 0x20800406, 264 },
	{ 0x20801201, 32 },
	{ 0x20801210, 32 },
	{ 0x20801218, 16 },
	{ 0x2080121b, 9240 },
	{ 0x20801227, 48 },
	{ 0x2080122a, 24 },
	{ 0x2080122b, 24 },
	{ 0x20801230, 32 },
	{ 0x20801303, 1028 },
	{ 0x20801701, 16 },
	{ 0x20801801, 16 },
	{ 0x20801803, 200 },
	{ 0x20801823, 420 },
	{ 0x2080182a, 112 },
	{ 0x2080182b, 28 },
	{ 0x2080200a, 8 },
	{ 0x2080220c, 0 },
	{ 0x20802210, 0 },
	{ 0x20802a0a, 136 },
	{ 0x20803002, 13344 },
	{ 0x20803601, 72 },
	{ 0x20803801, 1928 },
	{ 0x20808159, 332 },
	{ 0x20808162, 1 },
	{ 0x20809001, 8 },
	{ 0x20809009, 8 },
	{ 0x20809038, 4 },
	{ 0x20809064, 520 },
	{ 0x2080a026, 532 },
	{ 0x2080a084, 4 },
	{ 0x20810108, 992 },
	{ 0x503c0102, 16 },
	{ 0x503c0104, 32 },
	{ 0x503c0105, 4 },
	{ 0x83de0309, 4 },
	{ 0x906f0101, 16 },
	{ 0x90e60102, 8 },
	{ 0xa06c0101, 3 },
	{ 0xa06c0103, 8 },
	{ 0xa06c0105, 8 },
	{ 0xc36f0108, 4 },
	{ 0xcb330101, 6 },
};

/* Classes allocated in the traces. */
static const uint32_t trace_classes[] = {
	0x0, 0x3e, 0x40, 0x79, 0x80, 0xde, 0x2080, 0x2081, 0x503c, 0x50a0, 0x83de, 0x9067, 0x90e6, 0x90f1, 0xa06c, 0xc639, 0xc640, 0xc661, 0xc86f, 0xc8b5, 0xcb33, 0xcbc0
};

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static void test_sorted_unique(void)
{
	size_t i, n;

	n = rm_class_table_size(RM_ABI);
	CHECK(n >= 200);
	for (i = 1; i < n; i++)
		CHECK(rm_class_table_at(RM_ABI, i - 1)->cls < rm_class_table_at(RM_ABI, i)->cls);
	CHECK(rm_class_table_at(RM_ABI, n) == NULL);

	n = rm_ctrl_table_size(RM_ABI);
	CHECK(n >= 100);
	for (i = 1; i < n; i++)
		CHECK(rm_ctrl_table_at(RM_ABI, i - 1)->cmd < rm_ctrl_table_at(RM_ABI, i)->cmd);
	CHECK(rm_ctrl_table_at(RM_ABI, n) == NULL);
}

/* Every row must round-trip through the lookup and be self-consistent. */
static void test_rows_consistent(void)
{
	size_t i, n;
	unsigned k;

	for (i = 0, n = rm_class_table_size(RM_ABI); i < n; i++) {
		const struct rm_class_info *ci = rm_class_table_at(RM_ABI, i);

		CHECK(rm_class_lookup(RM_ABI, ci->cls) == ci);
		CHECK(ci->name != NULL && ci->name[0] != '\0');
		/* a required class always has something to copy */
		CHECK(!ci->params_required || ci->params_size > 0);
		CHECK(ci->params_size <= NV_RMAPI_MAX_PARAMS_SIZE);
	}
	for (i = 0, n = rm_ctrl_table_size(RM_ABI); i < n; i++) {
		const struct rm_ctrl_info *ci = rm_ctrl_table_at(RM_ABI, i);

		CHECK(rm_ctrl_lookup(RM_ABI, ci->cmd) == ci);
		CHECK(ci->name != NULL && ci->name[0] != '\0');
		CHECK(ci->n_embedded <= RM_EMBEDDED_MAX_PTRS);
		for (k = 0; k < ci->n_embedded && k < RM_EMBEDDED_MAX_PTRS; k++) {
			const struct rm_embedded_ptr *e = &ci->embedded[k];

			/* NvP64 fields are 8-aligned and inside the params */
			CHECK(e->ptr_offset % 8 == 0);
			CHECK(ci->params_size >= 8u &&
			      e->ptr_offset + 8u <= ci->params_size);
			CHECK(e->elem_size > 0);
			CHECK(e->max_count > 0);
			/* the driver never copies more than 1 MiB by default;
			 * our own bound for the uncapped ones is the same */
			CHECK((uint64_t)e->max_count * e->elem_size <=
			      NV_RMAPI_MAX_PARAMS_SIZE);
			if (e->count_offset == RM_EMBEDDED_FIXED_COUNT) {
				CHECK(e->fixed_count > 0);
				CHECK(e->fixed_count <= e->max_count);
			} else {
				CHECK(e->count_offset + 4u <= ci->params_size);
				/* count and pointer must not overlap */
				CHECK(e->count_offset + 4u <= e->ptr_offset ||
				      e->ptr_offset + 8u <= e->count_offset);
			}
		}
		/* a control flagged unrelocatable carries no (partial)
		 * relocation entries that could be mistaken as complete */
		if (rm_ctrl_has_unrelocatable_pointers(RM_ABI, ci->cmd))
			CHECK(ci->n_embedded == 0);
	}
}

static void expect_class(uint32_t cls, uint32_t size, bool req,
			 enum rm_class_kind kind, int line)
{
	const struct rm_class_info *ci = rm_class_lookup(RM_ABI, cls);

	check(ci != NULL, "class known", line);
	if (!ci)
		return;
	check(ci->params_size == size, "class params_size", line);
	check(ci->params_required == req, "class params_required", line);
	check(ci->kind == kind, "class kind", line);
}
#define EXPECT_CLASS(c, s, r, k) expect_class((c), (s), (r), (k), __LINE__)

static void test_classes(void)
{
	static const uint32_t channels[] = {
		0xc36f, 0xc46f, 0xc56f, 0xc86f, 0xc96f, 0xca6f,
	};
	static const uint32_t events[] = { 0x5, 0x78, 0x79, 0x7e };
	size_t i;

	EXPECT_CLASS(0x0000, 4, false, RM_CLASS_CLIENT);
	EXPECT_CLASS(0x0001, 4, false, RM_CLASS_CLIENT);
	EXPECT_CLASS(0x0041, 4, false, RM_CLASS_CLIENT);
	EXPECT_CLASS(0x0080, 56, false, RM_CLASS_DEVICE);
	EXPECT_CLASS(0x2080, 4, false, RM_CLASS_SUBDEVICE);
	EXPECT_CLASS(0x0040, 128, true, RM_CLASS_VIDMEM);
	EXPECT_CLASS(0x003e, 128, true, RM_CLASS_SYSMEM);
	EXPECT_CLASS(0x0042, 128, true, RM_CLASS_OTHER);
	EXPECT_CLASS(0x50a0, 128, true, RM_CLASS_VIRTUAL);
	EXPECT_CLASS(0x0070, 24, true, RM_CLASS_VIRTUAL);
	EXPECT_CLASS(0x0071, 40, true, RM_CLASS_PROCESS_BOUND);
	EXPECT_CLASS(0xa06c, 20, true, RM_CLASS_CHANNEL_GROUP);
	for (i = 0; i < LEN(channels); i++)
		EXPECT_CLASS(channels[i], 368, true, RM_CLASS_CHANNEL);
	for (i = 0; i < LEN(events); i++)
		EXPECT_CLASS(events[i], 24, true, RM_CLASS_EVENT);
	EXPECT_CLASS(0x9067, 12, true, RM_CLASS_OTHER);
	EXPECT_CLASS(0x90f1, 56, true, RM_CLASS_OTHER);
	EXPECT_CLASS(0xcbc0, 16, false, RM_CLASS_OTHER);
	EXPECT_CLASS(0xc8b5, 8, false, RM_CLASS_OTHER);
	EXPECT_CLASS(0xc661, 2, false, RM_CLASS_OTHER);
	EXPECT_CLASS(0xcb33, 4, false, RM_CLASS_OTHER);
	EXPECT_CLASS(0x83de, 12, true, RM_CLASS_OTHER);
	EXPECT_CLASS(0x503c, 4, false, RM_CLASS_OTHER);
	EXPECT_CLASS(0x2081, 4, false, RM_CLASS_OTHER);
	EXPECT_CLASS(0xc639, 8, true, RM_CLASS_OTHER);
	EXPECT_CLASS(0xc640, 8, true, RM_CLASS_OTHER);
	EXPECT_CLASS(0x00de, 8, true, RM_CLASS_OTHER);
	EXPECT_CLASS(0x90e6, 0, false, RM_CLASS_OTHER);

	for (i = 0; i < LEN(trace_classes); i++)
		CHECK(rm_class_lookup(RM_ABI, trace_classes[i]) != NULL);

	CHECK(rm_class_lookup(RM_ABI, 0xdead) == NULL);
	CHECK(rm_class_lookup(RM_ABI, 0xffffffffu) == NULL);
	CHECK(rm_class_lookup(RM_ABI, 0x0003) == NULL);
}

static void test_controls(void)
{
	const struct rm_ctrl_info *ci;
	size_t i;

	/* FIFO_GET_CHANNELLIST: two u32 lists sharing numChannels@0 */
	ci = rm_ctrl_lookup(RM_ABI, 0x0080170d);
	CHECK(ci != NULL);
	if (ci) {
		CHECK(ci->params_size == 24);
		CHECK(ci->n_embedded == 2);
		CHECK(ci->embedded[0].ptr_offset == 8);
		CHECK(ci->embedded[0].count_offset == 0);
		CHECK(ci->embedded[0].elem_size == 4);
		CHECK(ci->embedded[1].ptr_offset == 16);
		CHECK(ci->embedded[1].count_offset == 0);
		CHECK(ci->embedded[1].elem_size == 4);
		CHECK(!rm_ctrl_has_unrelocatable_pointers(RM_ABI, ci->cmd));
	}

	/* FB_GET_INFO V1: fbInfoListSize@0, fbInfoList@8, {index,data} */
	ci = rm_ctrl_lookup(RM_ABI, NV2080_CTRL_CMD_FB_GET_INFO);
	CHECK(ci != NULL);
	if (ci) {
		CHECK(ci->params_size == 16);
		CHECK(ci->n_embedded == 1);
		CHECK(ci->embedded[0].ptr_offset == 8);
		CHECK(ci->embedded[0].count_offset == 0);
		CHECK(ci->embedded[0].elem_size == 8);
		CHECK(ci->embedded[0].max_count == 128);
		CHECK(!rm_ctrl_has_unrelocatable_pointers(RM_ABI, ci->cmd));
	}

	/* FB_GET_INFO_V2: flat, no pointers */
	ci = rm_ctrl_lookup(RM_ABI, NV2080_CTRL_CMD_FB_GET_INFO_V2);
	CHECK(ci != NULL);
	if (ci) {
		CHECK(ci->params_size == 1028);
		CHECK(ci->n_embedded == 0);
		CHECK(!rm_ctrl_has_unrelocatable_pointers(RM_ABI, ci->cmd));
	}

	/* GR_GET_INFO (embedded) vs GR_GET_INFO_V2 (flat) */
	ci = rm_ctrl_lookup(RM_ABI, 0x20801201);
	CHECK(ci && ci->params_size == 32 && ci->n_embedded == 1 &&
	      ci->embedded[0].ptr_offset == 8 && ci->embedded[0].elem_size == 8);
	ci = rm_ctrl_lookup(RM_ABI, 0x20801228);
	CHECK(ci && ci->params_size == 488 && ci->n_embedded == 0);

	/* GPU_GET_ENGINE_CLASSLIST: count@4, not @0 */
	ci = rm_ctrl_lookup(RM_ABI, 0x20800124);
	CHECK(ci && ci->n_embedded == 1 && ci->embedded[0].count_offset == 4 &&
	      ci->embedded[0].ptr_offset == 8);

	/* DMA_UPDATE_PDE_2: one fixed 16-byte buffer */
	ci = rm_ctrl_lookup(RM_ABI, 0x0080180f);
	CHECK(ci && ci->n_embedded == 1 &&
	      ci->embedded[0].count_offset == RM_EMBEDDED_FIXED_COUNT &&
	      ci->embedded[0].fixed_count == 1 &&
	      ci->embedded[0].elem_size == 16 && ci->embedded[0].ptr_offset == 48);

	/* BUS_GET_INFO V1: busInfoListSize@0, busInfoList@8, {index,data}
	 * u32 pairs, at most the V2 array (52) */
	ci = rm_ctrl_lookup(RM_ABI, 0x20801802);
	CHECK(ci && ci->params_size == 16 && ci->n_embedded == 1 &&
	      ci->embedded[0].ptr_offset == 8 && ci->embedded[0].count_offset == 0 &&
	      ci->embedded[0].elem_size == 8 && ci->embedded[0].max_count == 52 &&
	      !rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0x20801802));

	/* read-only queries nvidia-smi and JAX make: flat params */
	{
		static const struct { uint32_t cmd, size; } flat[] = {
			{ 0x00800288, 4 },    { 0x00de0001, 8 },    { 0x2080014b, 5 },
			{ 0x20800157, 0 },    { 0x20800513, 1432 }, { 0x20801357, 4 },
			{ 0x20802068, 4 },    { 0x20803001, 48 },   { 0x20800133, 8 },
			/* nvidia-smi default view, -q and dmon (2026-12-02) */
			{ 0x00000b02, 12 },   { 0x2080013f, 136 },  { 0x20800156, 16 },
			{ 0x208001a4, 16 },   { 0x208001b2, 4 },    { 0x20801813, 76 },
			{ 0x20801819, 32 },   { 0x20801829, 12 },   { 0x20801830, 4 },
			{ 0x20803083, 39 },   { 0x90e70113, 16 },   { 0x90e70119, 8 },
			/* nvidia-smi -q (2026-12-02, round 2) */
			{ 0x2080016d, 12 },   { 0x2080017b, 12 },   { 0x20801322, 2056 },
			{ 0x20803404, 2 },    { 0x20803406, 1 },    { 0x208f1105, 8 },
		};
		for (i = 0; i < LEN(flat); i++) {
			ci = rm_ctrl_lookup(RM_ABI, flat[i].cmd);
			check(ci && ci->params_size == flat[i].size && ci->n_embedded == 0 &&
			      !rm_ctrl_has_unrelocatable_pointers(RM_ABI, flat[i].cmd),
			      "flat monitoring control", __LINE__);
		}
	}
	/* GSS-legacy and BinaryApi commands nvidia-smi sends (bit 14 clear,
	 * answered natively to an unprivileged user): in monitoring, flat
	 * (docs/security/monitoring.md); a bit-15 number it was not seen to
	 * send has no row */
	static const uint32_t smi_opaque[] = { 0x2080852e, 0x20808546, 0x2080a080, 0x2080a612,
	                                       0x2080a618, 0x20810110, 0x20810111 };
	for (size_t k = 0; k < sizeof(smi_opaque) / sizeof(smi_opaque[0]); k++) {
		const struct rm_ctrl_info *row = rm_ctrl_lookup(RM_ABI, smi_opaque[k]);
		CHECK(row != NULL && row->group == GS_GROUP_MONITORING && row->n_embedded == 0);
	}
	CHECK(rm_ctrl_lookup(RM_ABI, 0x2080a097) == NULL);
	/* GPU_DETACH_IDS: a no-op on Linux, flat, 128 bytes (issue #29). */
	ci = rm_ctrl_lookup(RM_ABI, 0x00000216);
	CHECK(ci && ci->params_size == 128 && ci->n_embedded == 0 && ci->group == GS_GROUP_MONITORING);

	/* other numbers from rm-abi.md 5 */
	ci = rm_ctrl_lookup(RM_ABI, NV2080_CTRL_CMD_GPU_GET_PID_INFO);
	CHECK(ci && ci->params_size == 14408 && ci->n_embedded == 0);
	ci = rm_ctrl_lookup(RM_ABI, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE);
	CHECK(ci && ci->params_size == 3);
	ci = rm_ctrl_lookup(RM_ABI, 0x2080110b);
	CHECK(ci && ci->params_size == 536);

	/* GET_BUILD_VERSION: three string buffers sharing sizeOfStrings@0,
	 * relocatable since RM_EMBEDDED_MAX_PTRS is 3 (CUDA sends it). */
	ci = rm_ctrl_lookup(RM_ABI, 0x00000101);
	CHECK(ci && ci->n_embedded == 3 && !rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0x00000101));
	CHECK(ci && ci->embedded[0].ptr_offset == 8 && ci->embedded[1].ptr_offset == 16 &&
	      ci->embedded[2].ptr_offset == 24 && ci->embedded[2].count_offset == 0);

	/* unrelocatable: more pointers than we describe, odd counts, fds */
	CHECK(rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0x00000127));
	CHECK(rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0x00000130));
	CHECK(rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0x00000283));
	CHECK(rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0x00730120));
	CHECK(rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0x402c0105));
	CHECK(rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0x83de031a));
	CHECK(rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0x83de031b));
	CHECK(rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0x20801349));
	CHECK(rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0x00fd0104));
	CHECK(rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0x00e00101));
	CHECK(rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0x00003d06));
	CHECK(!rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0x00000202));
	CHECK(!rm_ctrl_has_unrelocatable_pointers(RM_ABI, 0xdeadbeefu));

	/* every trace control is known with the size CUDA used (0 = the
	 * driver takes any size: opaque GSP/BinaryApi paths) */
	for (i = 0; i < LEN(trace_ctrls); i++) {
		ci = rm_ctrl_lookup(RM_ABI, trace_ctrls[i].cmd);
		check(ci != NULL, "trace control known", __LINE__);
		if (ci && ci->params_size != 0 &&
		    ci->params_size != trace_ctrls[i].psz) {
			printf("  cmd 0x%08x: table %u, trace %u\n",
			       (unsigned)ci->cmd, (unsigned)ci->params_size,
			       (unsigned)trace_ctrls[i].psz);
			check(0, "trace control size", __LINE__);
		}
	}

	CHECK(rm_ctrl_lookup(RM_ABI, 0xdeadbeefu) == NULL);
	CHECK(rm_ctrl_lookup(RM_ABI, 0) == NULL);
	CHECK(rm_ctrl_lookup(RM_ABI, 0x20801302) == NULL);
}

static void test_process_bound(void)
{
	/* Classes the driver resolves in the calling process must be marked,
	 * or the supervisor would perform them on itself. */
	static const uint32_t bound[] = { 0x000f, 0x0071, 0x0081, 0x0082, 0x0083, 0x00f1,
	                                  0x90cd, 0xc637, 0xc638 };
	for (size_t i = 0; i < sizeof(bound) / sizeof(bound[0]); i++) {
		const struct rm_class_info *ci = rm_class_lookup(RM_ABI, bound[i]);
		CHECK(ci && ci->kind == RM_CLASS_PROCESS_BOUND);
	}
	CHECK(rm_class_lookup(RM_ABI, 0x40)->kind == RM_CLASS_VIDMEM);
}

/* Counts of the rows as written, by expanding the .def files here: every
 * parameter row of a branch must join an identity row, or it would be
 * dropped without a word. */
#define RM_CLASS_PARAMS(...) +1
#define RM_CTRL_PARAMS(...) +1
static const size_t v580_class_rows = 0
#include "nvrm/v580/classes.def"
	;
static const size_t v580_ctrl_rows = 0
#include "nvrm/v580/controls.def"
	;
#undef RM_CLASS_PARAMS
#undef RM_CTRL_PARAMS
#define RM_ESCAPE(...) +1
static const size_t escape_rows = 0
#include "nvrm/escapes.def"
	;
#undef RM_ESCAPE

static void test_abi_join(void)
{
	size_t known = 0;

	for (size_t i = 0; i < rm_class_table_size(RM_ABI); i++)
		known += rm_class_table_at(RM_ABI, i)->known;
	CHECK(v580_class_rows == 209);
	CHECK(known == v580_class_rows);
	known = 0;
	for (size_t i = 0; i < rm_ctrl_table_size(RM_ABI); i++)
		known += rm_ctrl_table_at(RM_ABI, i)->known;
	CHECK(v580_ctrl_rows == 214);
	CHECK(known == v580_ctrl_rows);
	known = 0;
	for (uint32_t nr = 0; nr < 256; nr++)
		known += rm_escape_find(RM_ABI, nr) != NULL;
	CHECK(escape_rows == 41);
	CHECK(known == escape_rows);
	/* The constants nvrm_abi.h makes from the rows are the rows' numbers. */
	CHECK(rm_class_lookup(RM_ABI, NV01_MEMORY_LOCAL_USER)->kind == RM_CLASS_VIDMEM);
	CHECK(strcmp(rm_ctrl_lookup(RM_ABI, NV2080_CTRL_CMD_FB_GET_INFO_V2)->name,
	             "NV2080_CTRL_CMD_FB_GET_INFO_V2") == 0);
	CHECK(NV2080_CTRL_GSS_LEGACY_0x20808159 == 0x20808159u);
	CHECK(NV_ESC_RM_VID_HEAP_CONTROL == 0x4a);
	/* The _row forms find identity rows; a number without one is NULL. */
	CHECK(rm_class_row(RM_ABI, 0x0003) == NULL);
	CHECK(rm_ctrl_row(RM_ABI, 0x20800100) == NULL);
}

/* Choosing the tables for a driver version: a branch-level match, strict. */
static void test_abi_select(void)
{
	static const char *const branches[] = { "535", "550", "570", "580", "590", "595" };
	const struct gs_rm_abi *v580 = gs_rm_abi_by_branch("580");

	CHECK(v580 != NULL && v580 == gs_rm_abi_default());
	CHECK(gs_rm_abi_count() == sizeof(branches) / sizeof(branches[0]));
	for (size_t i = 0; i < gs_rm_abi_count(); i++)
		CHECK(strcmp(gs_rm_abi_branch(gs_rm_abi_at(i)), branches[i]) == 0);
	CHECK(gs_rm_abi_at(gs_rm_abi_count()) == NULL);
	CHECK(strcmp(gs_rm_abi_branch(v580), "580") == 0);
	CHECK(strstr(gs_rm_abi_source(v580), "580.142") != NULL);
	CHECK(gs_rm_abi_for_version("580.95.05") == v580);
	CHECK(gs_rm_abi_for_version("580.159.04") == v580);
	CHECK(gs_rm_abi_for_version("580") == v580);
	CHECK(gs_rm_abi_for_version("535.274.02") == gs_rm_abi_by_branch("535"));
	CHECK(strstr(gs_rm_abi_source(gs_rm_abi_by_branch("535")), "535.288.01") != NULL);
	CHECK(gs_rm_abi_for_version("595.45.04") == gs_rm_abi_by_branch("595"));
	CHECK(gs_rm_abi_for_version("575.64.05") == NULL);
	CHECK(gs_rm_abi_for_version("610.43.02") == NULL);
	CHECK(gs_rm_abi_for_version("999.1") == NULL);
	CHECK(gs_rm_abi_for_version("5800.1") == NULL);
	CHECK(gs_rm_abi_for_version("58.0") == NULL);
	CHECK(gs_rm_abi_for_version("") == NULL);
	CHECK(gs_rm_abi_for_version("x580.1") == NULL);
	CHECK(gs_rm_abi_for_version("580x") == NULL);
	CHECK(gs_rm_abi_for_version(NULL) == NULL);
	CHECK(gs_rm_abi_for_version("99999999999999999999.1") == NULL);
	/* Nearest: the newest branch at or below, else the oldest. */
	CHECK(gs_rm_abi_nearest("999.1") == gs_rm_abi_by_branch("595"));
	CHECK(gs_rm_abi_nearest("575.64.05") == gs_rm_abi_by_branch("570"));
	CHECK(gs_rm_abi_nearest("525.1") == gs_rm_abi_at(0));
	CHECK(gs_rm_abi_nearest("not a version") == NULL);
	CHECK(gs_rm_abi_by_branch("58") == NULL);
}

static uint32_t class_size(const char *branch, uint32_t cls)
{
	const struct rm_class_info *ci = rm_class_lookup(gs_rm_abi_by_branch(branch), cls);
	return ci ? ci->params_size : UINT32_MAX;
}

static uint32_t ctrl_size(const char *branch, uint32_t cmd)
{
	const struct rm_ctrl_info *ci = rm_ctrl_lookup(gs_rm_abi_by_branch(branch), cmd);
	return ci ? ci->params_size : UINT32_MAX;
}

/*
 * The generated per-branch rows against the numbers of an independent
 * measurement (../shared/reference/abi-drift.md 2.2-2.4 and 3, its own
 * scripts at the same tags): the sizes gpusandbox acts on, classes a branch
 * lacks, and control numbers another handler owns there.
 */
static void test_branch_rows(void)
{
	static const struct { const char *b; uint32_t fb_v2, probed, sched, chan, mem, va; } s[] = {
		{ "535", 436, 256, 2, 360, 120, 48 },   { "550", 444, 256, 2, 360, 128, 48 },
		{ "570", 460, 256, 2, 368, 128, 48 },   { "580", 1028, 384, 3, 368, 128, 56 },
		{ "590", 1028, 384, 3, 368, 128, 56 },  { "595", 1028, 384, 3, 368, 128, 56 },
	};
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		CHECK(ctrl_size(s[i].b, NV2080_CTRL_CMD_FB_GET_INFO_V2) == s[i].fb_v2);
		CHECK(ctrl_size(s[i].b, NV0000_CTRL_CMD_GPU_GET_PROBED_IDS) == s[i].probed);
		CHECK(ctrl_size(s[i].b, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE) == s[i].sched);
		CHECK(ctrl_size(s[i].b, NVA06F_CTRL_CMD_GPFIFO_SCHEDULE) == s[i].sched);
		CHECK(class_size(s[i].b, HOPPER_CHANNEL_GPFIFO_A) == s[i].chan);
		CHECK(class_size(s[i].b, VOLTA_CHANNEL_GPFIFO_A) == s[i].chan);
		CHECK(class_size(s[i].b, NV01_MEMORY_LOCAL_USER) == s[i].mem);
		CHECK(class_size(s[i].b, NV01_MEMORY_SYSTEM) == s[i].mem);
		CHECK(class_size(s[i].b, FERMI_VASPACE_A) == s[i].va);
		/* Unchanged everywhere (abi-drift.md 2.2, 2.4). */
		CHECK(class_size(s[i].b, NV01_DEVICE_0) == 56);
		CHECK(class_size(s[i].b, KEPLER_CHANNEL_GROUP_A) == 20);
		CHECK(ctrl_size(s[i].b, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2) == 32);
		CHECK(ctrl_size(s[i].b, NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS) == 536);
	}
	/* Blackwell channels exist from 570 on. */
	CHECK(class_size("535", BLACKWELL_CHANNEL_GPFIFO_A) == UINT32_MAX);
	CHECK(class_size("550", BLACKWELL_CHANNEL_GPFIFO_B) == UINT32_MAX);
	CHECK(class_size("570", BLACKWELL_CHANNEL_GPFIFO_A) == 368);
	/* NV50_P2P grew on 590; EGM and FLA are gone on 595 / 590. */
	CHECK(class_size("580", NV50_P2P) == 72 && class_size("590", NV50_P2P) == 88);
	CHECK(class_size("595", NV50_P2P) == 88);
	CHECK(class_size("590", NV_MEMORY_EXTENDED_USER) == 128);
	CHECK(class_size("595", NV_MEMORY_EXTENDED_USER) == UINT32_MAX);
	CHECK(class_size("590", NV01_MEMORY_FLA) == UINT32_MAX);
	CHECK(class_size("535", NV_CE_UTILS) == 16 && class_size("580", NV_CE_UTILS) == 24);
	/* Reused numbers: refused on the branch where another control owns
	 * them, even though the identity row (and its policy group) is shared. */
	CHECK(ctrl_size("570", NV2080_CTRL_CMD_FB_QUERY_DRAM_ENCRYPTION_INFOROM_SUPPORT) == UINT32_MAX);
	CHECK(rm_ctrl_row(gs_rm_abi_by_branch("570"),
	                  NV2080_CTRL_CMD_FB_QUERY_DRAM_ENCRYPTION_INFOROM_SUPPORT) != NULL);
	CHECK(ctrl_size("580", NV2080_CTRL_CMD_FB_QUERY_DRAM_ENCRYPTION_INFOROM_SUPPORT) == 4);
	CHECK(ctrl_size("535", NV0073_CTRL_CMD_SYSTEM_EXECUTE_ACPI_METHOD) == UINT32_MAX);
	CHECK(ctrl_size("550", NV0073_CTRL_CMD_SYSTEM_EXECUTE_ACPI_METHOD) == UINT32_MAX);
	/* The bit-15 and BinaryApi allowlist was seen in 580 traces only: on
	 * another branch its numbers are unknown (refused). */
	CHECK(rm_ctrl_lookup(gs_rm_abi_by_branch("580"), NV2080_CTRL_GSS_LEGACY_0x20808159) != NULL);
	CHECK(rm_ctrl_lookup(gs_rm_abi_by_branch("580"), NV2081_BINAPI_CTRL) != NULL);
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		if (strcmp(s[i].b, "580") == 0)
			continue;
		CHECK(ctrl_size(s[i].b, NV2080_CTRL_GSS_LEGACY_0x20808159) == UINT32_MAX);
		CHECK(ctrl_size(s[i].b, NV2080_CTRL_GSS_LEGACY_0x2080a084) == UINT32_MAX);
		CHECK(ctrl_size(s[i].b, NV2081_BINAPI_CTRL) == UINT32_MAX);
	}
	/* Embedded-pointer descriptions come from 580 where the size did not
	 * change. */
	CHECK(rm_ctrl_lookup(gs_rm_abi_by_branch("535"), NV2080_CTRL_CMD_FB_GET_INFO)->n_embedded == 1);
	/* The utilization samples --sm reads (abi-drift.md 2.4: 8 + 4 x 116
	 * bytes per sample on 535, 8 + 6 x 116 on 550, 776 from 570). */
	static const struct { const char *b; uint32_t size, sample, gr; } u[] = {
		{ "535", 34000, 472, 124 }, { "550", 50704, 704, 124 }, { "570", 55888, 776, 136 },
		{ "580", 55888, 776, 136 }, { "590", 55888, 776, 136 }, { "595", 55888, 776, 136 },
	};
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		const struct gs_rm_abi *abi = gs_rm_abi_by_branch(u[i].b);
		CHECK(gs_rm_abi_fact(abi, GS_FACT_UTIL_SAMPLES_SIZE) == u[i].size);
		CHECK(gs_rm_abi_fact(abi, GS_FACT_UTIL_SAMPLE_SIZE) == u[i].sample);
		CHECK(gs_rm_abi_fact(abi, GS_FACT_UTIL_SAMPLE_GR_OFF) == u[i].gr);
		CHECK(gs_rm_abi_fact(abi, GS_FACT_UTIL_SAMPLES_OFF) == 16);
		CHECK(gs_rm_abi_fact(abi, GS_FACT_UTIL_SAMPLE_COUNT) == 72);
		CHECK(gs_rm_abi_fact(abi, GS_FACT_UTIL_BUFFER_SIZE) == 72 * u[i].sample);
		CHECK(gs_rm_abi_fact(abi, GS_FACT_UTIL_ENGINE_PROC_ID_OFF) == 8);
	}
	/* 580's facts are our struct's. */
	CHECK(gs_rm_abi_fact(gs_rm_abi_default(), GS_FACT_UTIL_SAMPLES_SIZE) ==
	      sizeof(struct nv2080_perfmon_util_samples_v2));
	CHECK(gs_rm_abi_fact(gs_rm_abi_default(), GS_FACT_COUNT) == 0);
	/* Counts: 64 of our classes are not on 535, 57 on 550, 23 on 570,
	 * 1 on 590, 2 on 595 (abi-drift.md 2.3). */
	static const struct { const char *b; size_t absent; } a[] = {
		{ "535", 64 }, { "550", 57 }, { "570", 23 }, { "580", 0 }, { "590", 1 }, { "595", 2 },
	};
	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++) {
		const struct gs_rm_abi *abi = gs_rm_abi_by_branch(a[i].b);
		size_t absent = 0;
		for (size_t k = 0; k < rm_class_table_size(abi); k++)
			absent += !rm_class_table_at(abi, k)->known;
		CHECK(absent == a[i].absent);
	}
}

static void test_escapes(void)
{
	const char *s;

	s = rm_escape_name(RM_ABI, NV_ESC_RM_CONTROL);
	CHECK(s && strcmp(s, "RM_CONTROL") == 0);
	s = rm_escape_name(RM_ABI, NV_ESC_RM_ALLOC);
	CHECK(s && strcmp(s, "RM_ALLOC") == 0);
	s = rm_escape_name(RM_ABI, NV_ESC_IOCTL_XFER_CMD);
	CHECK(s && strcmp(s, "IOCTL_XFER_CMD") == 0);
	s = rm_escape_name(RM_ABI, NV_ESC_WAIT_OPEN_COMPLETE);
	CHECK(s && strcmp(s, "WAIT_OPEN_COMPLETE") == 0);
	CHECK(rm_escape_name(RM_ABI, NV_ESC_RM_ALLOC_MEMORY) != NULL);
	CHECK(rm_escape_name(RM_ABI, 0) == NULL);
	CHECK(rm_escape_name(RM_ABI, 0x2c) == NULL);
	CHECK(rm_escape_name(RM_ABI, 0xff) == NULL);
}

int main(void)
{
	test_sorted_unique();
	test_rows_consistent();
	test_classes();
	test_controls();
	test_escapes();
	test_process_bound();
	test_abi_join();
	test_abi_select();
	test_branch_rows();
	printf("%u passed, %u failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
