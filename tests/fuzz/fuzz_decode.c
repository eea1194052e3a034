/* SPDX-License-Identifier: MIT */
/*
 * fuzz_decode.c - fuzz target for the decode stage (supervisor/rm/decode.c).
 *
 * Input: one byte of shape (bit 0: NVOS64 or NVOS21; bit 1: via XFER;
 * bits 2-7: a size adjustment, so sizes the escape table rejects are
 * tried too), then the top-level struct, then whatever is left as the
 * params copy. A shape of 0xff, 0xfe or 0xfd decodes the rest as a
 * VID_HEAP_CONTROL, an RM_CONTROL or an RM_ALLOC_OBJECT instead; 0xfc,
 * 0xfb, 0xfa and 0xf9 as an RM_FREE, an RM_DUP_OBJECT, an RM_SHARE or a
 * REGISTER_FD; 0xf8 as an escape number and size, direct or in XFER;
 * 0xf7 as a UVM_MAP_EXTERNAL_ALLOCATION (uvm_decode.c) on a branch's
 * layout, with its verdict on facts from the input.
 * Besides not crashing (ASan/UBSan in CI), the decoder must
 * keep its contract on any bytes: only the two RM_ALLOC sizes decode; the
 * record asks to copy no more than the class's size in the ABI table, and
 * nothing for a client, a process-bound or an unknown class; what was not
 * copied is marked so; and decoding is a function of its input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "nvuvm_abi.h"
#include "rm_decode.h"
#include "uvm_call.h"
#include "verdict.h"
#include "nvrm/rm_abi.h"

/* The tests decode with the newest tables, as a run without a driver does. */
#define ABI gs_rm_abi_default()

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SHAPE_NVOS64 0x1u
#define SHAPE_XFER   0x2u
#define SHAPE_SKEW_SHIFT 2

static void check_record(const struct gs_rm_call *c, uint32_t top_size)
{
	const struct rm_class_info *ci = rm_class_lookup(ABI, c->h_class);

	if (c->nvos64 != (top_size == sizeof(struct nvos64)) || c->escape != NV_ESC_RM_ALLOC)
		abort();
	if (c->class_known != (ci != NULL) || (ci && c->kind != ci->kind) ||
	    (!ci && c->kind != RM_CLASS_OTHER))
		abort();
	if (c->params_size && (!ci || c->creates_client || c->kind == RM_CLASS_PROCESS_BOUND ||
	                       !c->has_params || c->params_size != ci->params_size))
		abort();
	if (c->has_rights && !c->nvos64)
		abort();
	if (c->finn_serialized && !c->nvos64)
		abort();
}

#define SHAPE_VID_HEAP     0xffu
#define SHAPE_CONTROL      0xfeu
#define SHAPE_ALLOC_OBJECT 0xfdu
#define SHAPE_FREE         0xfcu
#define SHAPE_DUP          0xfbu
#define SHAPE_SHARE        0xfau
#define SHAPE_REGISTER_FD  0xf9u
#define SHAPE_ESCAPE       0xf8u
#define SHAPE_UVM          0xf7u
#define SHAPE_UVM_CHANNEL  0xf6u

/* Copies at most n bytes of the input into a zeroed struct. */
static void fill(void *out, size_t n, const uint8_t *data, size_t size)
{
	memset(out, 0, n);
	memcpy(out, data, size < n ? size : n);
}

static void check_vid_heap(const uint8_t *data, size_t size)
{
	struct nvos32 top;
	struct gs_rm_call c;

	fill(&top, sizeof(top), data, size);
	gs_decode_vid_heap(ABI, &top, false, &c);
	if (c.escape != NV_ESC_RM_VID_HEAP_CONTROL || c.function != top.function ||
	    !c.params_copied || !c.rights_copied || c.params_size)
		abort();
	if (top.function != NVOS32_FUNCTION_ALLOC_SIZE) {
		if (c.has_size || c.kind != RM_CLASS_OTHER)
			abort();
		return;
	}
	enum rm_mem_place place = rm_mem_place_of(top.data.alloc_size.flags,
	                                          top.data.alloc_size.attr,
	                                          top.data.alloc_size.attr2);
	/* Video memory and EGM are charged, whatever the driver does with
	 * the EGM bit; nothing else is. */
	bool charged = place == RM_MEM_VIDMEM || place == RM_MEM_EGM;
	if ((c.kind == RM_CLASS_VIDMEM) != charged || !c.has_size ||
	    c.size != top.data.alloc_size.size ||
	    c.h_class != (charged ? NV01_MEMORY_LOCAL_USER : NV01_MEMORY_SYSTEM))
		abort();
}

static void check_control(const uint8_t *data, size_t size)
{
	struct nvos54 top;
	struct gs_rm_call c;

	fill(&top, sizeof(top), data, size);
	if (gs_decode_control(ABI, &top, true, &c) != rm_ctrl_lookup(ABI, top.cmd))
		abort();
	if (c.escape != NV_ESC_RM_CONTROL || c.cmd != top.cmd || !c.via_xfer ||
	    c.gss_legacy != ((top.cmd & NV_CTRL_GSS_LEGACY_MASK) != 0) ||
	    c.finn_serialized != ((top.flags & NVOS54_FLAGS_FINN_SERIALIZED) != 0) ||
	    c.unrelocatable != rm_ctrl_has_unrelocatable_pointers(ABI, top.cmd) ||
	    c.has_params != (top.params != 0) || c.params_size != top.params_size)
		abort();
	/* The params' decoder: only an enabling GPFIFO_SCHEDULE schedules. */
	const uint8_t *params = size > sizeof(top) ? data + sizeof(top) : NULL;
	uint32_t plen = size > sizeof(top) ? (uint32_t)(size - sizeof(top)) : 0;
	gs_decode_control_params(&c, params, plen);
	bool schedule = top.cmd == NVA06C_CTRL_CMD_GPFIFO_SCHEDULE ||
	                top.cmd == NVA06F_CTRL_CMD_GPFIFO_SCHEDULE;
	if (c.schedules != (schedule && plen > 0 && params[0] != 0))
		abort();
}

static void check_alloc_object(const uint8_t *data, size_t size)
{
	struct nvos05 top;
	struct gs_rm_call c;
	const struct rm_class_info *ci;

	fill(&top, sizeof(top), data, size);
	gs_decode_alloc_object(ABI, &top, false, &c);
	ci = rm_class_lookup(ABI, top.h_class);
	if (c.escape != NV_ESC_RM_ALLOC_OBJECT || c.h_class != top.h_class ||
	    c.class_known != (ci != NULL) || c.kind != (ci ? ci->kind : RM_CLASS_OTHER) ||
	    c.params_size || c.has_params)
		abort();
}

/* The one-level escapes: every field comes from its struct, nothing is
 * asked to be copied, and the record is a function of the bytes. */
static void check_handle_call(uint8_t shape, const uint8_t *data, size_t size)
{
	union {
		struct nvos00 fr;
		struct nvos55 dp;
		struct nvos57 sh;
		struct nv_ioctl_register_fd rf;
	} top;
	struct gs_rm_call c, again;

	fill(&top, sizeof(top), data, size);
	for (int pass = 0; pass < 2; pass++) {
		struct gs_rm_call *out = pass ? &again : &c;
		if (shape == SHAPE_FREE)
			gs_decode_free(ABI, &top.fr, pass, out);
		else if (shape == SHAPE_DUP)
			gs_decode_dup(ABI, &top.dp, pass, out);
		else if (shape == SHAPE_SHARE)
			gs_decode_share(ABI, &top.sh, pass, out);
		else
			gs_decode_register_fd(ABI, &top.rf, pass, out);
	}
	if (c.via_xfer || !again.via_xfer)
		abort();
	again.via_xfer = false;
	if (memcmp(&c, &again, sizeof(c)) != 0 || c.params_size || c.has_params || c.kind != RM_CLASS_OTHER)
		abort();
	if (shape == SHAPE_FREE && (c.escape != NV_ESC_RM_FREE || c.h_object != top.fr.h_object_old ||
	                            c.frees_client != (top.fr.h_object_old == top.fr.h_root)))
		abort();
	if (shape == SHAPE_DUP && (c.escape != NV_ESC_RM_DUP_OBJECT ||
	                           c.h_client_src != top.dp.h_client_src ||
	                           c.h_object_src != top.dp.h_object_src || c.h_object != top.dp.h_object))
		abort();
	if (shape == SHAPE_SHARE && (c.escape != NV_ESC_RM_SHARE || c.share_type != top.sh.policy.type))
		abort();
	if (shape == SHAPE_REGISTER_FD && (c.escape != NV_ESC_REGISTER_FD || c.ctl_fd != top.rf.ctl_fd))
		abort();
}

/* An escape number and size: the table's facts, and a size is right only
 * where the table says so. */
static void check_escape(const uint8_t *data, size_t size)
{
	struct { uint32_t nr, size, in_xfer; } in;
	struct gs_rm_call c;

	fill(&in, sizeof(in), data, size);
	gs_decode_escape(ABI, in.nr, in.size, in.in_xfer & 1u, &c);
	const struct rm_escape *e = rm_escape_find(ABI, in.nr);
	if (c.inner_known != (e != NULL) || c.inner_escape != in.nr || c.inner_size != in.size ||
	    c.via_xfer != (in.in_xfer & 1u) ||
	    c.escape != ((in.in_xfer & 1u) ? NV_ESC_IOCTL_XFER_CMD : in.nr))
		abort();
	if (c.inner_size_ok && (!e || in.size > NV_ABSOLUTE_MAX_IOCTL_SIZE || !rm_escape_size_ok(e, in.size)))
		abort();
}

/* UVM_MAP_EXTERNAL_ALLOCATION: a byte picks the layout, one the verdict's
 * facts, the rest is our copy of the params. The record keeps UVM's own
 * range rule and the branch's GPU bound, points only inside the copy, and
 * the map is allowed only when every check holds. */
static void check_uvm(const uint8_t *data, size_t size)
{
	static const struct gs_uvm_layout lays[] = { { UVM_MAX_GPUS_535, false }, { UVM_MAX_GPUS_570, false } };
	struct gs_uvm_call u, again;

	if (size < 2)
		return;
	const struct gs_uvm_layout *lay = &lays[data[0] % 2];
	struct gs_uvm_facts f = { data[1] & 1u, (data[1] >> 1) & 1u, (data[1] >> 2) & 1u, (data[1] >> 3) & 1u };
	data += 2, size -= 2;
	uint32_t len = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	int rc = gs_decode_uvm_map(lay, data, len, &u);
	if ((rc == 0) != (len >= gs_uvm_map_size(lay)))
		abort();
	if (rc != 0)
		return;
	if (u.range_ok && ((u.base | u.length) % 4096 || !u.length || u.last != u.base + u.length - 1 ||
	                   u.last < u.base))
		abort();
	if (u.n_gpus > lay->max_gpus || u.gpu_count_ok != (u.n_gpus > 0) ||
	    (u.n_gpus && ((const uint8_t *)u.gpus < data ||
	                  (const uint8_t *)(u.gpus + u.n_gpus) > data + len)))
		abort();
	struct gs_call_verdict v = gs_verdict_of_uvm(&u, &f);
	bool all = u.range_ok && u.gpu_count_ok && f.client_ours && f.client_on_fd &&
	           (!f.memory_known || f.memory_mappable);
	if ((v.verdict == GS_VERDICT_ALLOW) != all || (v.verdict == GS_VERDICT_ALLOW) != (v.status == NV_OK))
		abort();
	if (gs_decode_uvm_map(lay, data, len, &again) != 0 || memcmp(&u, &again, sizeof(u)) != 0)
		abort();
}

/* UVM_REGISTER_CHANNEL: the record is decoded from our copy alone (the
 * call is continued and nothing is decided on it): a short copy is
 * refused, any other gives the struct's fields, the same each time. */
static void check_uvm_channel(const uint8_t *data, size_t size)
{
	struct gs_uvm_channel_call u, again;
	struct uvm_register_channel_params p;
	uint32_t len = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	int rc = gs_decode_uvm_register_channel(data, len, &u);

	if ((rc == 0) != (len >= sizeof(p)))
		abort();
	if (rc != 0)
		return;
	memcpy(&p, data, sizeof(p));
	if (u.h_client != p.h_client || u.h_channel != p.h_channel || u.rm_ctrl_fd != p.rm_ctrl_fd ||
	    u.base != p.base || u.length != p.length || memcmp(u.gpu_uuid, p.gpu_uuid, UVM_UUID_BYTES))
		abort();
	if (gs_decode_uvm_register_channel(data, len, &again) != 0 || memcmp(&u, &again, sizeof(u)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gs_rm_call a, b;
	uint8_t top[sizeof(struct nvos64)] = { 0 };

	if (size < 1)
		return 0;
	uint8_t shape = data[0];
	switch (shape) {
	case SHAPE_VID_HEAP:
		check_vid_heap(data + 1, size - 1);
		return 0;
	case SHAPE_CONTROL:
		check_control(data + 1, size - 1);
		return 0;
	case SHAPE_ALLOC_OBJECT:
		check_alloc_object(data + 1, size - 1);
		return 0;
	case SHAPE_FREE:
	case SHAPE_DUP:
	case SHAPE_SHARE:
	case SHAPE_REGISTER_FD:
		check_handle_call(shape, data + 1, size - 1);
		return 0;
	case SHAPE_ESCAPE:
		check_escape(data + 1, size - 1);
		return 0;
	case SHAPE_UVM:
		check_uvm(data + 1, size - 1);
		return 0;
	case SHAPE_UVM_CHANNEL:
		check_uvm_channel(data + 1, size - 1);
		return 0;
	default:
		break;
	}
	uint32_t top_size = (shape & SHAPE_NVOS64) ? sizeof(struct nvos64) : sizeof(struct nvos21);
	uint32_t skew = shape >> SHAPE_SKEW_SHIFT;
	data++, size--;
	if (skew)
		top_size = skew; /* any other size must be refused */
	size_t have = size < top_size ? size : top_size;
	memcpy(top, data, have < sizeof(top) ? have : sizeof(top));
	int rc = gs_decode_alloc_top(ABI, top, top_size, shape & SHAPE_XFER, &a);
	if (top_size != sizeof(struct nvos64) && top_size != sizeof(struct nvos21)) {
		if (rc != -1)
			abort();
		return 0;
	}
	if (rc != 0)
		abort();
	check_record(&a, top_size);
	const uint8_t *params = size > top_size ? data + top_size : NULL;
	uint32_t plen = size > top_size ? (uint32_t)(size - top_size) : 0;
	gs_decode_alloc_params(&a, params, plen, plen & 1u);
	if (a.params_copied != (a.params_size == 0 || (params && plen >= a.params_size)))
		abort();
	if (a.has_size && a.kind != RM_CLASS_VIDMEM)
		abort();
	/* A function of its input: the same bytes, the same record. */
	if (gs_decode_alloc_top(ABI, top, top_size, shape & SHAPE_XFER, &b) != 0)
		abort();
	gs_decode_alloc_params(&b, params, plen, plen & 1u);
	if (memcmp(&a, &b, sizeof(a)) != 0)
		abort();
	return 0;
}
