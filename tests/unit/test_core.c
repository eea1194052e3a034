/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for size parsing, the escape decoders and the ledger. They need
 * neither root nor FUSE.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gpusandbox.h"
#include "ledger.h"
#include "nvuvm_abi.h"
#include "quota.h"
#include "rm_decode.h"
#include "scratch.h"
#include "sm_controller.h"
#include "workload.h"

#include <sys/mman.h>

/* The tables under test: the newest driver branch gpusandbox knows. */
#define RM_ABI gs_rm_abi_default()

#define GiB (1ull << 30)
#define MiB (1ull << 20)

static void test_parse_size(void)
{
	static const struct {
		const char *in;
		int rc;
		uint64_t out;
	} cases[] = {
		{ "4g", 0, 4 * GiB }, { "4G", 0, 4 * GiB }, { "4GiB", 0, 4 * GiB },
		{ "512m", 0, 512 * MiB }, { "1k", 0, 1024 }, { "1t", 0, 1ull << 40 },
		{ "4096", 0, 4096 }, { "7b", 0, 7 }, { "0", -1, 0 }, { "", -1, 0 },
		{ "-1g", -1, 0 }, { "4x", -1, 0 }, { "g", -1, 0 }, { " 4g", -1, 0 },
		{ "4gb ", -1, 0 }, { "99999999999999999999", -1, 0 }, { "20000000t", -1, 0 },
		{ "16777215t", 0, 16777215ull << 40 }, { "16777216t", -1, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 0;
		int rc = gs_parse_size(cases[i].in, &v);
		CHECK(rc == cases[i].rc);
		if (rc == 0 && cases[i].rc == 0)
			CHECK(v == cases[i].out);
	}
	char buf[32];
	CHECK(strcmp(gs_format_size(4 * GiB, buf, sizeof(buf)), "4.00 GiB") == 0);
	CHECK(strcmp(gs_format_size(GS_QUOTA_UNLIMITED, buf, sizeof(buf)), "unlimited") == 0);
}

static void test_parse_gpus(void)
{
	struct gs_quota q;
	const char *why;

	gs_quota_init(&q);
	CHECK(gs_gpu_visible(&q, 0) && gs_gpu_visible(&q, 7));
	CHECK(gs_parse_gpus("1,3", &q, &why) == 0);
	CHECK(!gs_gpu_visible(&q, 0) && gs_gpu_visible(&q, 1) && !gs_gpu_visible(&q, 2) &&
	      gs_gpu_visible(&q, 3) && !gs_gpu_visible(&q, 63) && !gs_gpu_visible(&q, 64));
	static const char *const bad[] = { "", "1,", ",1", "1,,2", "a", "1,1", "64", "-1",
	                                   "GPU-zz12", "GPU-", "MIG-1", "GPU-1,", "1 2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gs_quota b;
		gs_quota_init(&b);
		why = NULL;
		CHECK(gs_parse_gpus(bad[i], &b, &why) < 0 && why && !b.visible_set);
	}
	struct gs_quota u;
	gs_quota_init(&u);
	CHECK(gs_parse_gpus("2,GPU-5d1e3f2a-0000-1111-2222-333344445555", &u, &why) == 0);
	CHECK(u.visible_set && u.n_uuids == 1 && gs_gpu_visible(&u, 2) && !gs_gpu_visible(&u, 0) &&
	      strcmp(u.uuids[0], "GPU-5d1e3f2a-0000-1111-2222-333344445555") == 0);
	uint32_t n;
	CHECK(gs_parse_count("8", &n) == 0 && n == 8);
	CHECK(gs_parse_count("0", &n) < 0 && gs_parse_count("8x", &n) < 0 && gs_parse_count("-1", &n) < 0);
	CHECK(gs_parse_count("unlimited", &n) == 0 && n == GS_COUNT_UNLIMITED && gs_parse_count("unlimitedx", &n) < 0);
	CHECK(gs_parse_percent("50", &n) == 0 && n == 50);
	CHECK(gs_parse_percent("25%", &n) == 0 && n == 25);
	CHECK(gs_parse_percent("100", &n) == 0 && n == 100);
	CHECK(gs_parse_percent("0", &n) < 0 && gs_parse_percent("101", &n) < 0 &&
	      gs_parse_percent("50%%", &n) < 0 && gs_parse_percent("", &n) < 0 &&
	      gs_parse_percent("-5", &n) < 0 && gs_parse_percent("5x", &n) < 0);
	CHECK(gs_parse_period_ms("50", &n) == 0 && n == 50);
	CHECK(gs_parse_period_ms("20ms", &n) == 0 && n == 20);
	CHECK(gs_parse_period_ms("4", &n) < 0 && gs_parse_period_ms("1001", &n) < 0 &&
	      gs_parse_period_ms("20s", &n) < 0);
}

static void test_escapes(void)
{
	size_t n;
	const uint8_t *t = rm_trapped_escapes(RM_ABI, &n);
	bool has_alloc = false, has_xfer = false, has_map = false, has_unknown = false;
	bool has_uvm_range = false;

	for (size_t i = 0; i < n; i++) {
		has_alloc |= t[i] == NV_ESC_RM_ALLOC;
		has_xfer |= t[i] == NV_ESC_IOCTL_XFER_CMD;
		has_map |= t[i] == NV_ESC_RM_MAP_MEMORY;
		has_unknown |= t[i] == 0x50;   /* no 580 escape: trapped and refused */
		has_uvm_range |= t[i] == UVM_CREATE_EXTERNAL_RANGE;
	}
	/* An unknown number in NVIDIA's range is trapped, except the one UVM
	 * sends with every cudaMalloc (rm_decode.c says why). */
	CHECK(has_unknown && !has_uvm_range);
	/* Every escape that can create or free RM objects is trapped; the
	 * process-bound ones need no trap. */
	CHECK(has_alloc && has_xfer && !has_map);
	const uint8_t must[] = { NV_ESC_RM_ALLOC, NV_ESC_RM_ALLOC_OBJECT, NV_ESC_RM_FREE,
	                         NV_ESC_RM_CONTROL, NV_ESC_RM_DUP_OBJECT, NV_ESC_RM_VID_HEAP_CONTROL,
	                         NV_ESC_IOCTL_XFER_CMD };
	for (size_t i = 0; i < sizeof(must); i++) {
		bool found = false;
		for (size_t j = 0; j < n; j++)
			found |= t[j] == must[i];
		CHECK(found);
	}

	const struct rm_escape *e = rm_escape_find(RM_ABI, NV_ESC_RM_ALLOC);
	CHECK(e && rm_escape_size_ok(e, 32) && rm_escape_size_ok(e, 48) && !rm_escape_size_ok(e, 40));
	e = rm_escape_find(RM_ABI, NV_ESC_RM_CONTROL);
	CHECK(e && rm_escape_size_ok(e, 32) && !rm_escape_size_ok(e, 0));
	CHECK(rm_escape_find(RM_ABI, 0x01) == NULL);
	/* Forged words decode to the same escape: only nr and size count. */
	CHECK(NV_IOC_NR(0x0030002Bu) == NV_ESC_RM_ALLOC && NV_IOC_SIZE(0x0030002Bu) == 48);
	CHECK(NV_IOC_NR(0x80307A2Bu) == NV_ESC_RM_ALLOC && NV_IOC_SIZE(0x80307A2Bu) == 48);
	CHECK(NV_IOC_WORD(NV_ESC_RM_ALLOC, 48) == 0xC030462Bu);
}

static void test_alloc_view(void)
{
	struct nvos64 p64 = { .h_root = 1, .h_object_parent = 2, .h_object_new = 3, .h_class = 0x40,
	                      .p_alloc_parms = 0x1000, .p_rights_requested = 0x2000, .flags = 1 };
	struct nvos21 p21 = { .h_root = 4, .h_object_parent = 5, .h_object_new = 6, .h_class = 0x3e,
	                      .p_alloc_parms = 0x3000 };
	struct rm_alloc_view v;

	CHECK(rm_alloc_view_from(&p64, sizeof(p64), &v) == 0 && v.is_nvos64 && v.h_class == 0x40 &&
	      v.p_params == 0x1000 && v.p_rights == 0x2000 && v.flags == 1);
	CHECK(rm_alloc_view_from(&p21, sizeof(p21), &v) == 0 && !v.is_nvos64 && v.h_root == 4 &&
	      v.p_params == 0x3000);
	CHECK(rm_alloc_view_from(&p21, 40, &v) < 0);
	CHECK(rm_alloc_status_offset(48) == 40 && rm_alloc_status_offset(32) == 28);
	CHECK(rm_class_is_client(0) && rm_class_is_client(1) && rm_class_is_client(0x41) &&
	      !rm_class_is_client(0x40));
	CHECK(rm_mem_place_of(0, 0, 0) == RM_MEM_VIDMEM);
	CHECK(rm_mem_place_of(NVOS32_ALLOC_FLAGS_VIRTUAL, 0, 0) == RM_MEM_VIRTUAL);
	CHECK(rm_mem_place_of(0, 1u << NVOS32_ATTR_LOCATION_SHIFT, 0) == RM_MEM_SYSMEM);
	CHECK(rm_mem_place_of(0, 0, NVOS32_ATTR2_USE_EGM) == RM_MEM_EGM);
	CHECK(strcmp(rm_status_name(NV_ERR_NO_MEMORY), "NV_ERR_NO_MEMORY") == 0);
}

enum { CLIENT = 0xc1d00001, DEVICE = 0x5c000001, SUBDEV = 0x5c000002, MEM1 = 0x5c000010,
       MEM2 = 0x5c000011, DUPH = 0x5c000020, CLIENT2 = 0xc1d00002 };

static void test_ledger_tree(void)
{
	struct ledger l;
	uint64_t rel[GS_MAX_GPUS] = { 0 };

	CHECK(ledger_init(&l) == 0);
	CHECK(ledger_note_client(&l, CLIENT, -1) == 1);
	CHECK(ledger_note_client(&l, CLIENT, -1) == 0);
	CHECK(ledger_add(&l, CLIENT, CLIENT, DEVICE, RM_CLASS_DEVICE, 0x80, 1, 0) == 0);
	CHECK(ledger_add(&l, CLIENT, DEVICE, SUBDEV, RM_CLASS_SUBDEVICE, 0x2080, LEDGER_NO_GPU, 0) == 0);
	CHECK(ledger_gpu_of(&l, CLIENT, SUBDEV) == 1);
	CHECK(ledger_add(&l, CLIENT, SUBDEV, MEM1, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, 256 * MiB) == 0);
	CHECK(ledger_add(&l, CLIENT, DEVICE, MEM2, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, 512 * MiB) == 0);
	CHECK(ledger_used(&l, 1) == 768 * MiB && ledger_used(&l, 0) == 0);
	CHECK(ledger_peak(&l, 1) == 768 * MiB);
	/* Freeing a leaf releases just it. */
	ledger_free(&l, CLIENT, MEM2, rel);
	CHECK(rel[1] == 512 * MiB && ledger_used(&l, 1) == 256 * MiB);
	/* Freeing an ancestor releases the whole subtree. */
	memset(rel, 0, sizeof(rel));
	ledger_free(&l, CLIENT, DEVICE, rel);
	CHECK(rel[1] == 256 * MiB && ledger_used(&l, 1) == 0);
	CHECK(!ledger_has(&l, CLIENT, SUBDEV) && !ledger_has(&l, CLIENT, MEM1));
	CHECK(ledger_has(&l, CLIENT, CLIENT));
	CHECK(ledger_peak(&l, 1) == 768 * MiB);
	/* Unknown handles are ignored. */
	ledger_free(&l, CLIENT, 0x1234, NULL);
	/* Freeing the client frees everything under it. */
	CHECK(ledger_add(&l, CLIENT, CLIENT, DEVICE, RM_CLASS_DEVICE, 0x80, 0, 0) == 0);
	CHECK(ledger_add(&l, CLIENT, DEVICE, MEM1, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, GiB) == 0);
	ledger_free(&l, CLIENT, CLIENT, NULL);
	CHECK(ledger_used(&l, 0) == 0 && ledger_live_objects(&l) == 0);
	ledger_fini(&l);
}

static void test_ledger_dup(void)
{
	struct ledger l;

	CHECK(ledger_init(&l) == 0);
	ledger_note_client(&l, CLIENT, -1);
	ledger_note_client(&l, CLIENT2, -1);
	ledger_add(&l, CLIENT, CLIENT, DEVICE, RM_CLASS_DEVICE, 0x80, 0, 0);
	ledger_add(&l, CLIENT2, CLIENT2, DEVICE, RM_CLASS_DEVICE, 0x80, 0, 0);
	ledger_add(&l, CLIENT, DEVICE, MEM1, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, GiB);
	/* A dup in another client keeps the memory after the original goes. */
	CHECK(ledger_dup(&l, CLIENT2, DEVICE, DUPH, CLIENT, MEM1) == 0);
	CHECK(ledger_used(&l, 0) == GiB);
	ledger_free(&l, CLIENT, MEM1, NULL);
	CHECK(ledger_used(&l, 0) == GiB);
	ledger_free(&l, CLIENT2, CLIENT2, NULL);
	CHECK(ledger_used(&l, 0) == 0);
	/* A dup of something the ledger never saw charges nothing. */
	CHECK(ledger_dup(&l, CLIENT, DEVICE, DUPH, 0xdead, 0xbeef) == 0);
	CHECK(ledger_used(&l, 0) == 0);
	/* A handle re-created by the driver replaces the stale entry. */
	ledger_add(&l, CLIENT, DEVICE, MEM2, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, GiB);
	ledger_add(&l, CLIENT, DEVICE, MEM2, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, 2 * GiB);
	CHECK(ledger_used(&l, 0) == 2 * GiB);
	ledger_fini(&l);
}

/* References the driver keeps (ledger_keep): a semaphore surface keeps
 * its memory past the memory's handles, a dup of the surface and a memory
 * mapper over it keep it too, and the last of them releases it, by its
 * own free or its client's. A journal replays what was kept at its end. */
enum { SURF = 0x5c000030, SURF2 = 0x5c000031, MAPPER = 0x5c000032 };
#define JOURNAL_MAX 64u
struct journal_rec {
	struct ledger_change ch[JOURNAL_MAX];
	unsigned n;
};
static void record_change(void *ctx, const struct ledger_change *ch)
{
	struct journal_rec *j = ctx;
	if (j->n < JOURNAL_MAX)
		j->ch[j->n++] = *ch;
}

static uint64_t replayed_used(const struct journal_rec *j)
{
	struct ledger l2;
	uint64_t used;

	CHECK(ledger_init(&l2) == 0);
	for (unsigned i = 0; i < j->n; i++)
		CHECK(ledger_replay(&l2, &j->ch[i]) == 0);
	used = ledger_used(&l2, 0);
	ledger_fini(&l2);
	return used;
}

static void test_ledger_keep(void)
{
	struct ledger l;
	struct journal_rec j = { .n = 0 };
	uint64_t rel[GS_MAX_GPUS] = { 0 };
	const uint32_t both[2] = { MEM1, MEM2 }, surf2[1] = { SURF2 };

	CHECK(ledger_init(&l) == 0);
	l.journal = record_change;
	l.journal_ctx = &j;
	ledger_note_client(&l, CLIENT, -1);
	ledger_note_client(&l, CLIENT2, -1);
	ledger_add(&l, CLIENT, CLIENT, DEVICE, RM_CLASS_DEVICE, 0x80, 0, 0);
	ledger_add(&l, CLIENT2, CLIENT2, DEVICE, RM_CLASS_DEVICE, 0x80, 0, 0);
	ledger_add(&l, CLIENT, DEVICE, SUBDEV, RM_CLASS_SUBDEVICE, 0x2080, LEDGER_NO_GPU, 0);
	ledger_add(&l, CLIENT, DEVICE, MEM1, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, 512 * MiB);
	ledger_add(&l, CLIENT, DEVICE, MEM2, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, 512 * MiB);
	ledger_add(&l, CLIENT, SUBDEV, SURF, RM_CLASS_OTHER, 0xda, LEDGER_NO_GPU, 0);
	CHECK(ledger_keep(&l, CLIENT, SURF, both, 2) == 0 && ledger_kept_pins(&l) == 2);
	/* A keeper is a plain object; memory cannot be one. */
	CHECK(ledger_keep(&l, CLIENT, MEM1, both, 1) == -1 && ledger_keep(&l, CLIENT, 0x777, both, 1) == -1);
	ledger_free(&l, CLIENT, MEM1, rel);
	ledger_free(&l, CLIENT, MEM2, rel);
	CHECK(rel[0] == 0 && ledger_used(&l, 0) == GiB);
	CHECK(replayed_used(&j) == GiB);
	/* A snapshot of it too (the memory held by the surface alone). */
	struct journal_rec snap = { .n = 0 };
	CHECK(ledger_snapshot(&l, record_change, &snap) == 0 && replayed_used(&snap) == GiB);
	/* A dup of the surface (another client) keeps it after the surface. */
	CHECK(ledger_dup(&l, CLIENT2, DEVICE, DUPH, CLIENT, SURF) == 0);
	ledger_free(&l, CLIENT, SURF, rel);
	CHECK(rel[0] == 0 && ledger_used(&l, 0) == GiB);
	ledger_free(&l, CLIENT2, DUPH, rel);
	CHECK(rel[0] == GiB && ledger_used(&l, 0) == 0 && ledger_kept_pins(&l) == 0);
	CHECK(replayed_used(&j) == 0);
	/* A mapper keeps its surface's memory; the last of the two releases. */
	ledger_add(&l, CLIENT, DEVICE, MEM1, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, 256 * MiB);
	ledger_add(&l, CLIENT, SUBDEV, SURF2, RM_CLASS_OTHER, 0xda, LEDGER_NO_GPU, 0);
	CHECK(ledger_keep(&l, CLIENT, SURF2, both, 1) == 0);
	ledger_add(&l, CLIENT, SUBDEV, MAPPER, RM_CLASS_OTHER, 0xfe, LEDGER_NO_GPU, 0);
	CHECK(ledger_keep(&l, CLIENT, MAPPER, surf2, 1) == 0 && ledger_kept_pins(&l) == 2);
	ledger_free(&l, CLIENT, MEM1, NULL);
	ledger_free(&l, CLIENT, SURF2, NULL);
	CHECK(ledger_used(&l, 0) == 256 * MiB);
	/* ...freed with its client. */
	ledger_free(&l, CLIENT, CLIENT, NULL);
	CHECK(ledger_used(&l, 0) == 0 && ledger_kept_pins(&l) == 0);
	ledger_fini(&l);
}

static void test_ledger_many(void)
{
	struct ledger l;
	const unsigned n = 5000;

	/* Enough objects to grow the table several times, and a deep chain
	 * (the workload controls the depth; freeing must not recurse). */
	CHECK(ledger_init(&l) == 0);
	ledger_note_client(&l, CLIENT, -1);
	ledger_add(&l, CLIENT, CLIENT, DEVICE, RM_CLASS_DEVICE, 0x80, 0, 0);
	for (unsigned i = 0; i < n; i++)
		ledger_add(&l, CLIENT, DEVICE, 0x10000 + i, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, 2 * MiB);
	CHECK(ledger_used(&l, 0) == n * 2 * MiB);
	for (unsigned i = 0; i < n; i += 2)
		ledger_free(&l, CLIENT, 0x10000 + i, NULL);
	CHECK(ledger_used(&l, 0) == n / 2 * 2 * MiB);
	uint32_t parent = DEVICE;
	for (unsigned i = 0; i < n; i++) {
		ledger_add(&l, CLIENT, parent, 0x90000 + i, RM_CLASS_OTHER, 0x1, LEDGER_NO_GPU, 0);
		parent = 0x90000 + i;
	}
	ledger_add(&l, CLIENT, parent, 0xa0000, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, GiB);
	CHECK(ledger_used(&l, 0) == n / 2 * 2 * MiB + GiB);
	ledger_free(&l, CLIENT, DEVICE, NULL);
	CHECK(ledger_used(&l, 0) == 0 && ledger_live_objects(&l) == 1);
	ledger_fini(&l);
}

static void test_ledger_release_watch(void)
{
	struct ledger l;
	uint64_t rel[GS_MAX_GPUS] = { 0 };
	int p[2], keep;

	/* A pipe stands in for the driver's file: the watch must follow the
	 * open file, not our fd. */
	CHECK(pipe(p) == 0);
	CHECK(ledger_init(&l) == 0);
	CHECK(ledger_note_client(&l, CLIENT, p[0]) == 1);
	/* The creator is credited with what the closed file released. */
	CHECK(ledger_client_owner(&l, CLIENT) == 0);
	ledger_set_client_owner(&l, CLIENT, &(struct ledger_owner){ .pid = 4242, .comm = "trainer" });
	CHECK(ledger_client_owner(&l, CLIENT) == 4242);
	ledger_add(&l, CLIENT, CLIENT, DEVICE, RM_CLASS_DEVICE, 0x80, 0, 0);
	ledger_add(&l, CLIENT, DEVICE, MEM1, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, GiB);
	keep = dup(p[0]);
	close(p[0]);
	/* Another reference (a forked child, an fd passed over a socket) keeps
	 * the file, and so the client and its memory, alive. */
	CHECK(ledger_reap_dead_clients(&l, rel) == 0 && ledger_used(&l, 0) == GiB);
	close(keep);
	{
		struct ledger_owner owner = { 0 };
		CHECK(ledger_reap_dead_client(&l, rel, &owner) && owner.pid == 4242 &&
		      strcmp(owner.comm, "trainer") == 0 && rel[0] == GiB &&
		      ledger_used(&l, 0) == 0);
		CHECK(!ledger_reap_dead_client(&l, rel, &owner));
	}
	CHECK(!ledger_has(&l, CLIENT, CLIENT));
	close(p[1]);
	ledger_fini(&l);
}

static void test_ledger_bind_client(void)
{
	struct ledger l;
	uint64_t rel[GS_MAX_GPUS] = { 0 };
	int a[2], b[2];

	CHECK(pipe(a) == 0 && pipe(b) == 0);
	CHECK(ledger_init(&l) == 0);
	uint64_t epoch = ledger_client_epoch(&l);
	ledger_note_client(&l, CLIENT, a[0]);
	/* The client epoch (a 1 from bind_client is kept while it stays)
	 * moves with a client's entry, not with other objects. */
	CHECK(epoch != 0 && ledger_client_epoch(&l) != epoch);
	epoch = ledger_client_epoch(&l);
	ledger_add(&l, CLIENT, CLIENT, DEVICE, RM_CLASS_DEVICE, 0x80, 0, 0);
	ledger_add(&l, CLIENT, DEVICE, MEM1, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, GiB);
	/* Same file: nothing changes. */
	CHECK(ledger_bind_client(&l, CLIENT, a[0], rel) == 1 && ledger_used(&l, 0) == GiB && rel[0] == 0);
	CHECK(ledger_client_epoch(&l) == epoch);
	/* Another file while the first lives (relaxed client validation):
	 * the charge stays. */
	CHECK(ledger_bind_client(&l, CLIENT, b[0], rel) == 0 && ledger_used(&l, 0) == GiB && rel[0] == 0);
	/* The first file dies and the handle turns up on another file: the
	 * stale entry's charges go, and the client now watches the new file. */
	close(a[0]);
	CHECK(ledger_bind_client(&l, CLIENT, b[0], rel) == 1);
	CHECK(rel[0] == GiB && ledger_used(&l, 0) == 0 && !ledger_has(&l, CLIENT, MEM1));
	CHECK(ledger_has(&l, CLIENT, CLIENT) && ledger_client_epoch(&l) != epoch);
	epoch = ledger_client_epoch(&l);
	ledger_add(&l, CLIENT, CLIENT, DEVICE, RM_CLASS_DEVICE, 0x80, 0, 0);
	ledger_add(&l, CLIENT, DEVICE, MEM2, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, GiB);
	memset(rel, 0, sizeof(rel));
	CHECK(ledger_reap_dead_clients(&l, rel) == 0 && ledger_used(&l, 0) == GiB);
	CHECK(ledger_client_epoch(&l) == epoch);
	close(b[0]);
	CHECK(ledger_reap_dead_clients(&l, rel) == 1 && rel[0] == GiB && ledger_used(&l, 0) == 0);
	CHECK(ledger_client_epoch(&l) != epoch);
	close(a[1]);
	close(b[1]);
	ledger_fini(&l);
}

static void test_ledger_files(void)
{
	struct ledger l;
	int a[2], b[2], c[2], a2;

	/* Files are told apart by the open file, not by the fd number. */
	CHECK(pipe(a) == 0 && pipe(b) == 0);
	a2 = dup(a[0]);
	CHECK(ledger_init(&l) == 0);
	int fa = ledger_file_of(&l, a[0]);
	CHECK(fa == 0);
	CHECK(ledger_file_of(&l, a2) == fa);
	int fb = ledger_file_of(&l, b[0]);
	CHECK(fb >= 0 && l.n_files == 2);
	/* Indices hold until the next call; look a up again after b. */
	fa = ledger_file_of(&l, a2);
	CHECK(fa >= 0 && fa != ledger_file_of(&l, b[0]));
	fa = ledger_file_of(&l, a2);
	CHECK(ledger_client_files(&l) == 0);
	l.files[fa].has_client = true;
	CHECK(ledger_file_of(&l, a[0]) == fa && l.files[fa].has_client);
	/* --clients counts the open files holding a client: a, not b; a
	 * while either of its fds is open, and not once both are closed
	 * (before any sweep drops its record). */
	CHECK(ledger_client_files(&l) == 1);
	close(a[0]);
	CHECK(ledger_client_files(&l) == 1);
	close(a2);
	CHECK(ledger_client_files(&l) == 0 && l.n_files == 2);
	/* A released file's record goes; a new file does not inherit it. */
	CHECK(pipe(c) == 0);
	int fc = ledger_file_of(&l, c[0]);
	CHECK(fc >= 0 && !l.files[fc].has_client);
	fb = ledger_file_of(&l, b[0]);
	CHECK(fb >= 0 && !l.files[fb].has_client);
	close(a[1]);
	close(b[0]);
	close(b[1]);
	close(c[0]);
	close(c[1]);
	ledger_fini(&l);
}

/* Many files: each is found again by binary search, whatever the order
 * the kernel puts them in, and released ones do not pile up. */
#define MANY_FILES 300
static void test_ledger_many_files(void)
{
	struct ledger l;
	int p[MANY_FILES][2];
	bool ok = true;

	CHECK(ledger_init(&l) == 0);
	for (int i = 0; i < MANY_FILES; i++) {
		if (pipe(p[i]) < 0) {
			CHECK(!"pipe");
			return;
		}
		ok = ok && ledger_file_of(&l, p[i][0]) >= 0;
	}
	CHECK(ok && l.n_files == MANY_FILES);
	/* Mark the odd ones as hosting a client, then find each again. */
	for (int i = 1; i < MANY_FILES; i += 2) {
		int f = ledger_file_of(&l, p[i][0]);
		if (f >= 0)
			l.files[f].has_client = true;
	}
	ok = true;
	for (int i = 0; i < MANY_FILES; i++) {
		int f = ledger_file_of(&l, p[i][0]);
		ok = ok && f >= 0 && l.files[f].has_client == (i % 2 == 1);
	}
	CHECK(ok && l.n_files == MANY_FILES);
	/* Release all but the last; new files come and go: the array is
	 * swept when it doubles, so it stays bounded. */
	for (int i = 0; i < MANY_FILES - 1; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	for (int i = 0; i < 4 * MANY_FILES; i++) {
		int q[2];
		if (pipe(q) < 0)
			break;
		(void)ledger_file_of(&l, q[0]);
		close(q[0]);
		close(q[1]);
	}
	int last = ledger_file_of(&l, p[MANY_FILES - 1][0]);
	CHECK(last >= 0 && l.files[last].has_client);
	CHECK(l.n_files <= 2 * l.files_swept + 64 + 1);
	close(p[MANY_FILES - 1][0]);
	close(p[MANY_FILES - 1][1]);
	ledger_fini(&l);
}

/* ---- --sm: the feedback law, fed synthetic busy signals ---------------- */

/* A plant: the share a workload achieves at a duty cycle. a is the gain
 * (below 1: idle gaps; above 1: none), b the work that runs on after each
 * disable (0.1 at 50 % on the H200, design.md 1.6). */
static double plant(double a, double b, double duty)
{
	double s = a * duty + b;
	return s < 0 ? 0 : s > 1 ? 1 : s;
}

#define SM_BOUND_WINDOWS 10   /* the convergence bound sm_controller.h promises */
#define SM_TOLERANCE 0.01

static void test_sm_convergence(void)
{
	static const double gains[] = { 0.5, 0.75, 1.0, 1.25, 1.5 };
	static const double offsets[] = { 0.0, 0.05, 0.1, 0.2 };
	static const double targets[] = { 0.1, 0.25, 0.5, 0.75, 0.9 };
	unsigned cases = 0, converged = 0, worst = 0;

	for (size_t i = 0; i < sizeof(gains) / sizeof(gains[0]); i++)
		for (size_t j = 0; j < sizeof(offsets) / sizeof(offsets[0]); j++)
			for (size_t k = 0; k < sizeof(targets) / sizeof(targets[0]); k++) {
				double a = gains[i], b = offsets[j], t = targets[k];
				/* Only targets the plant can reach within the duty's range. */
				if (plant(a, b, SM_DUTY_MIN) > t || plant(a, b, 1.0) < t)
					continue;
				struct sm_controller c;
				unsigned n = 0;
				sm_ctl_init(&c, t);
				cases++;
				while (n < 100 && fabs(plant(a, b, c.duty) - t) > SM_TOLERANCE) {
					sm_ctl_update(&c, plant(a, b, c.duty));
					n++;
				}
				if (n <= SM_BOUND_WINDOWS)
					converged++;
				if (n > worst)
					worst = n;
				/* Once there, it stays there. */
				for (int m = 0; m < 20; m++)
					sm_ctl_update(&c, plant(a, b, c.duty));
				CHECK(fabs(plant(a, b, c.duty) - t) <= SM_TOLERANCE);
			}
	CHECK(cases > 50);
	CHECK(converged == cases);
	printf("sm controller: %u plants, all within %.2f of the target in <= %u windows (bound %d)\n",
	       cases, SM_TOLERANCE, worst, SM_BOUND_WINDOWS);
}

/* The settling grace (sm_controller.h): a budget of off-phase time, spent
 * by the off phases that leave unsettled channels running. A simulated
 * clock: a 20 ms period, 5 ms on and 15 ms off (--sm 25). */
#define GRACE_MS 1000000ull
#define GRACE_PERIOD (20 * GRACE_MS)
#define GRACE_ON (5 * GRACE_MS)

/* Runs periods from *t while unsettled channels always exist (a group made
 * faster than it settles); returns the off time they were left running. */
static uint64_t grace_churn(struct sm_grace *g, uint64_t *t, unsigned periods)
{
	uint64_t spared = 0;

	for (unsigned p = 0; p < periods; p++) {
		uint64_t off_at = *t + GRACE_ON, end = *t + GRACE_PERIOD;
		sm_grace_note(g, false, *t);               /* on pass */
		bool spare = sm_grace_may_spare(g, off_at); /* off pass */
		sm_grace_note(g, spare, off_at);
		if (spare)
			spared += end - off_at;
		*t = end;
	}
	sm_grace_note(g, false, *t);
	return spared;
}

static void test_sm_grace(void)
{
	struct sm_grace g;
	uint64_t t = 1000 * GRACE_MS;

	/* A context set-up (one settling time of unsettled channels) is
	 * spared in full, and spends only the off time it was left. */
	sm_grace_init(&g, t);
	uint64_t spared = grace_churn(&g, &t, 25);  /* 0.5 s */
	CHECK(spared == 25 * (GRACE_PERIOD - GRACE_ON));
	CHECK(g.spent_ns == spared && g.left_ns > 0);
	/* Left alone (nothing unsettled), the budget refills to its cap. */
	t += GRACE_PERIOD * 50 * SM_GRACE_REFILL_DIV;
	CHECK(sm_grace_may_spare(&g, t));
	CHECK(g.left_ns == SM_GRACE_BUDGET_NS);
	/* A churning workload: over 60 s it is spared the budget once plus
	 * the refill (2 %), and one off phase of debt at most, never more. */
	sm_grace_init(&g, t);
	uint64_t churn_ns = 3000 * GRACE_PERIOD;
	spared = grace_churn(&g, &t, 3000);
	CHECK(spared <= (uint64_t)SM_GRACE_BUDGET_NS + churn_ns / SM_GRACE_REFILL_DIV +
	                   (GRACE_PERIOD - GRACE_ON));
	CHECK(spared >= (uint64_t)SM_GRACE_BUDGET_NS);
	/* Spent, then debt: no sliver of refill buys a whole off phase. */
	CHECK(g.left_ns <= 0 || g.left_ns < (int64_t)(GRACE_PERIOD - GRACE_ON));
	printf("sm grace: %.3f s spared of %.0f s of churn (budget %.1f s, refill 1/%u)\n",
	       (double)spared / 1e9, (double)churn_ns / 1e9, (double)SM_GRACE_BUDGET_NS / 1e9,
	       SM_GRACE_REFILL_DIV);
}

static void test_sm_decisions(void)
{
	struct sm_controller c;

	/* Over the target: the duty goes down; under: up. */
	sm_ctl_init(&c, 0.5);
	CHECK(c.duty == 0.5 && sm_ctl_throttling(&c));
	CHECK(sm_ctl_update(&c, 0.6) < 0.5);
	sm_ctl_init(&c, 0.5);
	CHECK(sm_ctl_update(&c, 0.4) > 0.5);
	/* An idle window never lowers the duty. */
	sm_ctl_init(&c, 0.5);
	CHECK(sm_ctl_update(&c, 0.0) > 0.5);
	/* A workload that cannot use its share: the duty rises to 1, no cap. */
	sm_ctl_init(&c, 0.5);
	for (int i = 0; i < 20; i++)
		sm_ctl_update(&c, 0.2);
	CHECK(c.duty == 1.0 && !sm_ctl_throttling(&c));
	/* A workload running far past its share is never shut off entirely. */
	sm_ctl_init(&c, 0.1);
	for (int i = 0; i < 20; i++)
		sm_ctl_update(&c, 1.0);
	CHECK(c.duty == SM_DUTY_MIN);
	/* Out-of-range measurements are clamped, not trusted. */
	sm_ctl_init(&c, 0.5);
	sm_ctl_update(&c, 7.0);
	CHECK(c.duty >= SM_DUTY_MIN && c.duty < 0.5);
	/* Noise: +-0.05 around a unit plant; the mean share stays on target. */
	sm_ctl_init(&c, 0.3);
	uint32_t x = 12345;
	double sum = 0;
	for (int i = 0; i < 200; i++) {
		x = x * 1103515245u + 12345u;
		double noise = ((double)(x >> 8) / (double)(1u << 24) - 0.5) * 0.1;
		double s = plant(1.0, 0.05, c.duty);
		if (i >= 20)
			sum += s;
		sm_ctl_update(&c, s + noise);
	}
	CHECK(fabs(sum / 180 - 0.3) < SM_TOLERANCE);
}

static void test_ledger_channels(void)
{
	struct ledger l;
	struct ledger_channel ch[8];
	uint32_t counts[GS_MAX_GPUS];
	const uint64_t settle = 500ull * 1000 * 1000, later = 1ull << 62;
	/* The ledger dates objects on CLOCK_MONOTONIC: "now" is a second on. */
	const uint64_t now = gs_monotonic_ns() + GS_NS_PER_S;

	CHECK(ledger_init(&l) == 0);
	CHECK(ledger_note_client(&l, CLIENT, -1) == 1);
	CHECK(ledger_add(&l, CLIENT, CLIENT, DEVICE, RM_CLASS_DEVICE, 0x80, 0, 0) == 0);
	CHECK(ledger_add(&l, CLIENT, DEVICE, SUBDEV, RM_CLASS_SUBDEVICE, 0x2080, LEDGER_NO_GPU, 0) == 0);
	CHECK(ledger_add(&l, CLIENT, DEVICE, 0x300, RM_CLASS_CHANNEL_GROUP, 0xa06c, LEDGER_NO_GPU, 0) == 0);
	CHECK(ledger_add(&l, CLIENT, 0x300, 0x301, RM_CLASS_CHANNEL, 0xc86f, LEDGER_NO_GPU, 0) == 0);
	CHECK(ledger_add(&l, CLIENT, 0x300, 0x302, RM_CLASS_CHANNEL, 0xc86f, LEDGER_NO_GPU, 0) == 0);
	ledger_count_channels(&l, counts);
	CHECK(counts[0] == 2 && counts[1] == 0);
	CHECK(ledger_subdevice_of(&l, CLIENT, 0) == SUBDEV && ledger_subdevice_of(&l, CLIENT, 1) == 0);
	/* Not settled before its group is scheduled... */
	CHECK(ledger_list_channels(&l, 0, now, settle, ch, 8) == 2 && !ch[0].settled && !ch[1].settled);
	CHECK(ch[0].parent == 0x300);
	ledger_set_scheduled(&l, CLIENT, 0x300, true);
	/* ...and then only once settle time has passed. */
	CHECK(ledger_list_channels(&l, 0, now - settle, settle, ch, 8) == 2 && !ch[0].settled);
	CHECK(ledger_list_channels(&l, 0, later, settle, ch, 8) == 2 && ch[0].settled && ch[1].settled);
	/* Re-scheduling does not restart the settling time. */
	ledger_set_scheduled(&l, CLIENT, 0x300, false);
	ledger_set_scheduled(&l, CLIENT, 0x300, true);
	CHECK(ledger_list_channels(&l, 0, later, settle, ch, 8) == 2 && ch[0].settled);
	ledger_set_sm_disabled(&l, CLIENT, 0x301, true);
	ledger_list_channels(&l, 0, later, settle, ch, 8);
	CHECK((ch[0].handle == 0x301) == ch[0].sm_disabled && (ch[1].handle == 0x301) == ch[1].sm_disabled);
	CHECK(l.scheduled_groups == 1);
	/* A channel in a group is scheduled with its group, never alone. */
	CHECK(!ledger_is_lone_channel(&l, CLIENT, 0x301));
	ledger_set_scheduled(&l, CLIENT, 0x301, true);
	CHECK(l.scheduled_groups == 1);
	/* Freeing the group takes its channels out of the list. */
	ledger_free(&l, CLIENT, 0x300, NULL);
	CHECK(ledger_list_channels(&l, 0, later, settle, ch, 8) == 0);
	CHECK(l.scheduled_groups == 0);
	/* A channel with no group (an engine's, as nvJPEG makes) counts like a
	 * group while scheduled, and stops counting when freed. */
	CHECK(ledger_add(&l, CLIENT, DEVICE, 0x400, RM_CLASS_CHANNEL, 0xc86f, LEDGER_NO_GPU, 0) == 0);
	CHECK(ledger_is_lone_channel(&l, CLIENT, 0x400) && !ledger_is_lone_channel(&l, CLIENT, DEVICE));
	ledger_set_scheduled(&l, CLIENT, 0x400, true);
	CHECK(l.scheduled_groups == 1 && ledger_is_scheduled(&l, CLIENT, 0x400));
	ledger_free(&l, CLIENT, 0x400, NULL);
	CHECK(l.scheduled_groups == 0);
	ledger_fini(&l);
}

/* Handle 0 is a handle like any other (issue #17 item 12): it was the
 * ledger's "no parent", so freeing an object 0 left it and a dangling child
 * behind, the free list cycled, and the next free of the client looped for
 * ever. The alarm turns such a loop into a failure instead of a hung run. */
#define HANG_ALARM_S 5
static void test_ledger_handle_zero(void)
{
	struct ledger l;
	const uint32_t C = 0xc1d00001u;

	alarm(HANG_ALARM_S);
	CHECK(ledger_init(&l) == 0);
	CHECK(ledger_note_client(&l, C, -1) == 1);
	CHECK(ledger_add(&l, C, C, 0, RM_CLASS_DEVICE, 0x80, 0, 0) == 0);
	CHECK(ledger_add(&l, C, 0, 1, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, 64 * MiB) == 0);
	CHECK(ledger_used(&l, 0) == 64 * MiB && ledger_gpu_of(&l, C, 1) == 0);
	ledger_free(&l, C, 0, NULL);
	CHECK(!ledger_has(&l, C, 0) && !ledger_has(&l, C, 1));
	CHECK(ledger_used(&l, 0) == 0 && ledger_live_objects(&l) == 1);
	/* Parent 0 no longer exists: a parentless object. */
	CHECK(ledger_add(&l, C, 0, 2, RM_CLASS_OTHER, 0, LEDGER_NO_GPU, 0) == 0);
	ledger_free(&l, C, 0, NULL);
	CHECK(ledger_add(&l, C, C, 3, RM_CLASS_OTHER, 0, LEDGER_NO_GPU, 0) == 0);
	CHECK(ledger_add(&l, C, 3, 4, RM_CLASS_OTHER, 0, LEDGER_NO_GPU, 0) == 0);
	ledger_free(&l, C, C, NULL);
	CHECK(ledger_live_objects(&l) == 1 && ledger_has(&l, C, 2));
	ledger_fini(&l);
	alarm(0);
}

/* Hardware kept by a dup: the count follows the driver's object, not
 * the handle (issue #17, item 4). */
static void test_ledger_channel_dups(void)
{
	struct ledger l;
	struct ledger_channel ch[8];
	const uint64_t later = 1ull << 62;

	CHECK(ledger_init(&l) == 0);
	CHECK(ledger_note_client(&l, CLIENT, -1) == 1);
	CHECK(ledger_add(&l, CLIENT, CLIENT, DEVICE, RM_CLASS_DEVICE, 0x80, 0, 0) == 0);
	/* A group, a dup of it, the group's handle freed: still one group. */
	CHECK(ledger_add(&l, CLIENT, DEVICE, 0x300, RM_CLASS_CHANNEL_GROUP, 0xa06c, LEDGER_NO_GPU, 0) == 0);
	CHECK(ledger_add(&l, CLIENT, 0x300, 0x301, RM_CLASS_CHANNEL, 0xc86f, LEDGER_NO_GPU, 0) == 0);
	CHECK(l.channel_groups == 1 && l.channels == 1);
	CHECK(ledger_dup(&l, CLIENT, DEVICE, 0x310, CLIENT, 0x300) == 0);
	CHECK(l.channel_groups == 1 && ledger_is_channel_group(&l, CLIENT, 0x310));
	/* Scheduling through the dup is scheduling the group. */
	ledger_set_scheduled(&l, CLIENT, 0x310, true);
	CHECK(l.scheduled_groups == 1 && ledger_is_scheduled(&l, CLIENT, 0x300));
	/* Freeing the original handle frees its channel (a child), not the
	 * group the dup keeps, nor its scheduling. */
	ledger_free(&l, CLIENT, 0x300, NULL);
	CHECK(l.channel_groups == 1 && l.channels == 0 && l.scheduled_groups == 1);
	CHECK(ledger_is_scheduled(&l, CLIENT, 0x310));
	/* A channel under the dup is in that group: no group of its own. */
	CHECK(ledger_add(&l, CLIENT, 0x310, 0x311, RM_CLASS_CHANNEL, 0xc86f, LEDGER_NO_GPU, 0) == 0);
	CHECK(l.channel_groups == 1 && !ledger_is_lone_channel(&l, CLIENT, 0x311));
	ledger_free(&l, CLIENT, 0x310, NULL);
	CHECK(l.channel_groups == 0 && l.channels == 0 && l.scheduled_groups == 0);
	/* A channel outside any group counts the group RM makes for it; a
	 * dup keeps both after the channel's handle is freed. */
	CHECK(ledger_add(&l, CLIENT, DEVICE, 0x400, RM_CLASS_CHANNEL, 0xc86f, LEDGER_NO_GPU, 0) == 0);
	CHECK(l.channel_groups == 1 && l.channels == 1);
	CHECK(ledger_dup(&l, CLIENT, DEVICE, 0x410, CLIENT, 0x400) == 0);
	ledger_set_scheduled(&l, CLIENT, 0x410, true);
	CHECK(l.scheduled_groups == 1 && ledger_is_lone_channel(&l, CLIENT, 0x410));
	ledger_free(&l, CLIENT, 0x400, NULL);
	CHECK(l.channel_groups == 1 && l.channels == 1 && l.scheduled_groups == 1);
	/* The dup is listed for the compute share in the channel's place. */
	CHECK(ledger_list_channels(&l, 0, later, 1, ch, 8) == 1 && ch[0].handle == 0x410);
	ledger_free(&l, CLIENT, 0x410, NULL);
	CHECK(l.channel_groups == 0 && l.channels == 0 && l.scheduled_groups == 0);
	CHECK(ledger_live_objects(&l) == 2);
	ledger_fini(&l);
}

/* The params buffer holds nothing from an earlier call where the driver may
 * read past what we copied (a driver struct larger than our row). */
static bool all_zero(const uint8_t *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (p[i])
			return false;
	return true;
}

static void test_scratch_params_cleared(void)
{
	struct gs_scratch s;
	struct gs_error err = { 0 };
	enum { OUR_ROW = 72, DRIVER_STRUCT = 88, EARLIER_CONTROL = 1028 };

	CHECK(gs_scratch_init(&s, &err) == 0);
	/* An alloc: we copy our row; the driver copies its own size out. */
	uint8_t *p = gs_scratch_params(&s, GS_ALLOC_PARAMS_DRIVER_BOUND);
	CHECK(all_zero(p, 0, GS_ALLOC_PARAMS_DRIVER_BOUND));
	memset(p, 0xaa, GS_ALLOC_PARAMS_DRIVER_BOUND);
	/* A control the workload filled with its own bytes. */
	p = gs_scratch_params(&s, EARLIER_CONTROL);
	CHECK(all_zero(p, 0, GS_ALLOC_PARAMS_DRIVER_BOUND));
	memset(p, 0xbb, EARLIER_CONTROL);
	/* The next alloc copies 72 bytes; a driver reading 88 sees zeros. */
	p = gs_scratch_params(&s, GS_ALLOC_PARAMS_DRIVER_BOUND);
	memset(p, 0xcc, OUR_ROW);
	CHECK(all_zero(p, OUR_ROW, DRIVER_STRUCT));
	CHECK(all_zero(p, OUR_ROW, NV_RMAPI_MAX_PARAMS_SIZE));
	/* A size past the buffer is bounded, not trusted. */
	p = gs_scratch_params(&s, (size_t)NV_RMAPI_MAX_PARAMS_SIZE * 2);
	CHECK(s.params_dirty == NV_RMAPI_MAX_PARAMS_SIZE && all_zero(p, 0, OUR_ROW));
	gs_scratch_fini(&s);
}

/* The window read stops at the end of the page the struct ends on: it
 * touches no page the struct does not (issue #16). Read from ourselves. */
static void test_read_window(void)
{
	const size_t page = GS_SCRATCH_PAGE;
	uint8_t *m = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t buf[GS_SCRATCH_WINDOW_MAX];

	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return;
	for (size_t i = 0; i < 3 * page; i++)
		m[i] = (uint8_t)i;
	/* 32 bytes at 4000: the window is the 96 bytes to the page's end. */
	CHECK(mem_read_window(getpid(), (uintptr_t)m + 4000, 32, buf, sizeof(buf), page) == 96);
	CHECK(memcmp(buf, m + 4000, 96) == 0);
	/* A struct across the page boundary: up to the end of the next page. */
	CHECK(mem_read_window(getpid(), (uintptr_t)m + 4080, 32, buf, sizeof(buf), page) ==
	      (ssize_t)(2 * page - 4080));
	/* The third page unreadable: a struct ending before it still reads. */
	CHECK(mprotect(m + 2 * page, page, PROT_NONE) == 0);
	CHECK(mem_read_window(getpid(), (uintptr_t)m + 2 * page - 64, 32, buf, sizeof(buf), page) == 64);
	/* One that reaches into it does not. */
	CHECK(mem_read_window(getpid(), (uintptr_t)m + 2 * page - 16, 32, buf, sizeof(buf), page) == -1);
	munmap(m, 3 * page);
}

/* Only changed bytes are written back: a byte another thread wrote meanwhile
 * keeps its value, and nothing changed means no write at all (a shared
 * read-only page makes any write through /proc/PID/mem fail, FOLL_FORCE
 * or not). Written to ourselves. */
static void test_write_changed(void)
{
	const size_t page = GS_SCRATCH_PAGE;
	uint8_t *m = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t before[16], now[16];
	struct gs_task_mem self = GS_TASK_MEM_CLOSED;

	CHECK(m != MAP_FAILED && task_mem_open(getpid(), &self) == 0);
	if (m == MAP_FAILED || self.fd < 0)
		return;
	memset(m, 7, 16);
	memset(before, 7, 16);
	memcpy(now, before, 16);
	now[3] = now[5] = 9;
	m[10] = 42; /* the workload's own write during the call */
	struct gs_mem_out out = { (uintptr_t)m, now, before, 16 };
	CHECK(mem_write_changed2(&self, &out, NULL) == 0);
	CHECK(m[3] == 9 && m[4] == 7 && m[5] == 9 && m[10] == 42);
	/* Unknown before: written whole. */
	out.before = NULL;
	CHECK(mem_write_changed2(&self, &out, NULL) == 0 && m[10] == 7);
	munmap(m, page);

	/* Nothing changed: no write, so a shared read-only page is no error;
	 * a change there is one. */
	int mfd = memfd_create("write-changed", MFD_CLOEXEC);
	CHECK(mfd >= 0 && ftruncate(mfd, (off_t)page) == 0);
	m = mfd < 0 ? MAP_FAILED : mmap(NULL, page, PROT_READ, MAP_SHARED, mfd, 0);
	CHECK(m != MAP_FAILED);
	if (m != MAP_FAILED) {
		memset(before, 0, sizeof(before));
		memset(now, 0, sizeof(now));
		out = (struct gs_mem_out){ (uintptr_t)m, now, before, 16 };
		CHECK(mem_write_changed2(&self, &out, NULL) == 0);
		now[0] = 1;
		CHECK(mem_write_changed2(&self, &out, NULL) == -1 && m[0] == 0);
		munmap(m, page);
	}
	if (mfd >= 0)
		close(mfd);
	/* A closed handle writes nothing. */
	task_mem_close(&self);
	CHECK(self.fd == -1 && mem_write(&self, (uintptr_t)now, before, 1) == -1);
}

/* What --p2p-register answer asks of the ledger: an object's recorded
 * facts (a dup has its source's), and whether a task's fd number is a
 * client's own file, by kcmp, without a dup. */
static void test_ledger_p2p_facts(void)
{
	const uint32_t p2p = 0x5c0000f0u, p2p_dup = 0x5c0000f1u;
	struct ledger l;
	struct ledger_facts f;
	int a[2], b[2], again;

	CHECK(pipe(a) == 0 && pipe(b) == 0);
	CHECK(ledger_init(&l) == 0);
	ledger_note_client(&l, CLIENT, a[0]);
	ledger_add(&l, CLIENT, CLIENT, DEVICE, RM_CLASS_DEVICE, 0x80, 0, 0);
	ledger_add(&l, CLIENT, DEVICE, p2p, RM_CLASS_OTHER, NV50_THIRD_PARTY_P2P, LEDGER_NO_GPU, 0);
	ledger_add(&l, CLIENT, DEVICE, MEM1, RM_CLASS_VIDMEM, 0x40, LEDGER_NO_GPU, GiB);
	ledger_dup(&l, CLIENT, DEVICE, MEM2, CLIENT, MEM1);
	ledger_dup(&l, CLIENT, DEVICE, p2p_dup, CLIENT, p2p);
	CHECK(ledger_object_facts(&l, CLIENT, p2p, &f) && f.cls == NV50_THIRD_PARTY_P2P && f.gpu == 0 &&
	      f.kind == RM_CLASS_OTHER && f.bytes == 0);
	CHECK(ledger_object_facts(&l, CLIENT, p2p_dup, &f) && f.cls == NV50_THIRD_PARTY_P2P && f.gpu == 0);
	CHECK(ledger_object_facts(&l, CLIENT, MEM1, &f) && f.kind == RM_CLASS_VIDMEM && f.bytes == GiB &&
	      f.gpu == 0);
	CHECK(ledger_object_facts(&l, CLIENT, MEM2, &f) && f.kind == RM_CLASS_VIDMEM && f.bytes == GiB);
	CHECK(!ledger_object_facts(&l, CLIENT, 0x5c0000ffu, &f) && !ledger_object_facts(&l, CLIENT2, MEM1, &f));
	/* The client's file under another number is the client's file; another
	 * file, or a client unknown here, is not. */
	again = dup(a[0]);
	CHECK(ledger_task_fd_is_client_file(&l, CLIENT, getpid(), a[0]) == 1);
	CHECK(ledger_task_fd_is_client_file(&l, CLIENT, getpid(), again) == 1);
	CHECK(ledger_task_fd_is_client_file(&l, CLIENT, getpid(), b[0]) == 0);
	CHECK(ledger_task_fd_is_client_file(&l, CLIENT, getpid(), a[1]) == 0);
	CHECK(ledger_task_fd_is_client_file(&l, CLIENT2, getpid(), a[0]) == 0);
	close(again);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
	ledger_fini(&l);
}

int main(void)
{
	test_parse_size();
	test_parse_gpus();
	test_escapes();
	test_alloc_view();
	test_ledger_tree();
	test_ledger_dup();
	test_ledger_keep();
	test_ledger_many();
	test_ledger_release_watch();
	test_ledger_bind_client();
	test_ledger_files();
	test_ledger_many_files();
	test_ledger_channels();
	test_ledger_handle_zero();
	test_ledger_channel_dups();
	test_ledger_p2p_facts();
	test_sm_decisions();
	test_sm_grace();
	test_sm_convergence();
	test_scratch_params_cleared();
	test_read_window();
	test_write_changed();
	return check_summary();
}
