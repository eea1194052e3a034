/* SPDX-License-Identifier: MIT */
/*
 * test_verdict_sharing.c - the verdict stage's checks of memory handed
 * beyond the client that holds it, moved from test_verdict.c, whose main
 * runs them: a UVM map (UVM dups the memory into a client of its own), a
 * --p2p-register registration for a peer device, and the export and import
 * of objects through an fd.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "decode.h"
#include "ledger.h"
#include "test_verdict.h"

/* ---- --p2p-register answer (gs_verdict_of_p2p_answer) ------------------------------- */

#define P2P_BYTES (2 * MIB)
#define P2P_64K (64 * 1024)
/* What the ledger proves for a registration CUDA makes. */
#define P2P_PROVEN { .gpu = LEDGER_NO_GPU, .p2p_object = true, .p2p_client_on_file = true, \
	.p2p_memory_vidmem = true, .p2p_memory_bytes = P2P_BYTES }
#define REGISTER(addr, size_, off) { CONTROL(NV503C_CTRL_CMD_REGISTER_VIDMEM), .params_size = 32, \
	.p2p_params = true, .p2p_memory = 0xe0, .p2p_address = (addr), .p2p_size = (size_), \
	.p2p_offset = (off) }
#define UNREGISTER { CONTROL(NV503C_CTRL_CMD_UNREGISTER_VIDMEM), .params_size = 4, \
	.p2p_params = true, .p2p_memory = 0xe0 }

struct p2p_row {
	const char       *name;
	struct gs_usage   usage;
	struct gs_rm_call call;
	bool              answered;
};

static const struct p2p_row p2p_rows[] = {
	{ "CUDA's registration", P2P_PROVEN, REGISTER(0x7f0000200000ull, P2P_BYTES, 0), true },
	{ "CUDA's unregistration", P2P_PROVEN, UNREGISTER, true },
	{ "a part of the allocation", P2P_PROVEN, REGISTER(0, P2P_64K, P2P_BYTES - P2P_64K), true },
	{ "object not an NV50_THIRD_PARTY_P2P of the ledger's",
	  { .gpu = LEDGER_NO_GPU, .p2p_client_on_file = true, .p2p_memory_vidmem = true,
	    .p2p_memory_bytes = P2P_BYTES }, REGISTER(0, P2P_BYTES, 0), false },
	{ "client not on the caller's file",
	  { .gpu = LEDGER_NO_GPU, .p2p_object = true, .p2p_memory_vidmem = true,
	    .p2p_memory_bytes = P2P_BYTES }, REGISTER(0, P2P_BYTES, 0), false },
	{ "memory not the client's video memory",
	  { .gpu = LEDGER_NO_GPU, .p2p_object = true, .p2p_client_on_file = true },
	  REGISTER(0, P2P_BYTES, 0), false },
	{ "unregistering memory not the client's",
	  { .gpu = LEDGER_NO_GPU, .p2p_object = true, .p2p_client_on_file = true }, UNREGISTER, false },
	{ "params not decoded (another size)", P2P_PROVEN,
	  { CONTROL(NV503C_CTRL_CMD_REGISTER_VIDMEM), .params_size = 32 }, false },
	{ "empty range", P2P_PROVEN, REGISTER(0, 0, 0), false },
	{ "size not 64 KiB aligned", P2P_PROVEN, REGISTER(0, P2P_BYTES - 4096, 0), false },
	{ "address not 64 KiB aligned", P2P_PROVEN, REGISTER(4096, P2P_BYTES, 0), false },
	{ "offset not 64 KiB aligned", P2P_PROVEN, REGISTER(0, P2P_64K, 4096), false },
	{ "address + size wraps", P2P_PROVEN, REGISTER(UINT64_MAX - P2P_64K + 1, P2P_64K, 0), false },
	{ "offset + size wraps", P2P_PROVEN, REGISTER(0, P2P_64K, UINT64_MAX - P2P_64K + 1), false },
	{ "beyond the allocation", P2P_PROVEN, REGISTER(0, P2P_BYTES, P2P_64K), false },
	{ "another control of the object", P2P_PROVEN,
	  { CONTROL(NV503C_CTRL_CMD_REGISTER_VA_SPACE), .params_size = 16 }, false },
};

static void check_p2p_row(const struct p2p_row *r)
{
	struct gs_rm_call call;

	decoded(&call, &r->call);
	struct gs_call_verdict v = gs_verdict_of_p2p_answer(&r->usage, &call);
	/* Never a refusal: what is not answered is performed. */
	bool ok = v.verdict == GS_VERDICT_ALLOW && v.status == NV_OK && v.answered == r->answered;
	if (!ok)
		fprintf(stderr, "p2p row \"%s\": got %s answered=%d\n", r->name, gs_verdict_name(v.verdict),
		        v.answered);
	CHECK(ok);
}

void check_p2p_rows(void)
{
	for (size_t i = 0; i < sizeof(p2p_rows) / sizeof(p2p_rows[0]); i++)
		check_p2p_row(&p2p_rows[i]);
}

/* The params as the decoder reads them, and the driver's size check. */
void check_decode_p2p(void)
{
	struct nv503c_register_vidmem_params reg = { .h_memory = 0xe0, .address = 0x10000,
	                                             .size = 2 * MIB, .offset = 0x20000 };
	struct nv503c_unregister_vidmem_params unreg = { .h_memory = 0xe1 };
	struct nvos54 top = { .h_client = 0xc1, .h_object = 0xd0, .cmd = NV503C_CTRL_CMD_REGISTER_VIDMEM,
	                      .params = 0x1000, .params_size = sizeof(reg) };
	struct gs_rm_call c;

	CHECK(gs_decode_control(ABI, &top, false, &c) != NULL && !c.params_size_wrong);
	gs_decode_control_params(&c, &reg, sizeof(reg));
	CHECK(c.p2p_params && c.p2p_memory == 0xe0 && c.p2p_address == 0x10000 &&
	      c.p2p_size == 2 * MIB && c.p2p_offset == 0x20000);
	top.params_size = sizeof(reg) - 8;
	CHECK(gs_decode_control(ABI, &top, false, &c) != NULL && c.params_size_wrong);
	gs_decode_control_params(&c, &reg, sizeof(reg) - 8);
	CHECK(!c.p2p_params);
	top.cmd = NV503C_CTRL_CMD_UNREGISTER_VIDMEM;
	top.params_size = sizeof(unreg);
	CHECK(gs_decode_control(ABI, &top, false, &c) != NULL && !c.params_size_wrong);
	gs_decode_control_params(&c, &unreg, sizeof(unreg));
	CHECK(c.p2p_params && c.p2p_memory == 0xe1);
	top.params_size = sizeof(reg);
	CHECK(gs_decode_control(ABI, &top, false, &c) != NULL && c.params_size_wrong);
}

/* UVM_MAP_EXTERNAL_ALLOCATION (exec_uvm.c): UVM's own checks first, in its
 * order, then the client and the memory must be the caller's. */
struct uvm_row {
	bool range_ok, count_ok;
	struct gs_uvm_facts f;
	enum gs_verdict want;
	nv_status_t status;
};
static const struct uvm_row uvm_rows[] = {
	{ true, true, { true, true, true, true }, GS_VERDICT_ALLOW, NV_OK },
	{ false, false, { false, false, false, false }, GS_VERDICT_REFUSE, NV_ERR_INVALID_ADDRESS },
	{ true, false, { true, true, true, true }, GS_VERDICT_REFUSE, NV_ERR_INVALID_ARGUMENT },
	{ true, true, { false, true, true, true }, GS_VERDICT_REFUSE, NV_ERR_INSUFFICIENT_PERMISSIONS },
	{ true, true, { true, false, true, true }, GS_VERDICT_REFUSE, NV_ERR_INSUFFICIENT_PERMISSIONS },
	/* Unknown to the ledger: charges nothing, the driver judges it. */
	{ true, true, { true, true, false, false }, GS_VERDICT_ALLOW, NV_OK },
	{ true, true, { true, true, true, false }, GS_VERDICT_REFUSE, NV_ERR_INVALID_OBJECT_HANDLE },
};

void check_uvm_rows(void)
{
	for (size_t i = 0; i < sizeof(uvm_rows) / sizeof(uvm_rows[0]); i++) {
		const struct uvm_row *r = &uvm_rows[i];
		struct gs_uvm_call u = { .range_ok = r->range_ok, .gpu_count_ok = r->count_ok,
		                         .n_gpus = r->count_ok };
		struct gs_call_verdict v = gs_verdict_of_uvm(&u, &r->f);
		CHECK(v.verdict == r->want && v.status == r->status);
	}
}

/* The export and import controls (docs/security/fd-export.md): each
 * clause refuses alone, with the driver's status where the driver would
 * refuse, and the defaults let the sandbox's own exchange through. */
void check_fd_export(void)
{
	const uint32_t exp = NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD;
	const uint32_t imp = NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD;
	const struct gs_fd_export_facts ours = { .fd_is_control = true, .file_ours = true, .file_set_up = true,
	                                         .objects_charged = true, .slots_ours = true };
	struct gs_rm_call c = { .cmd = exp };
	struct gs_fd_export_facts f = ours;
	struct gs_call_verdict v;

	CHECK(gs_verdict_of_fd_export(&f, &c).verdict == GS_VERDICT_ALLOW);
	c.cmd = imp;
	CHECK(gs_verdict_of_fd_export(&f, &c).verdict == GS_VERDICT_ALLOW);
	/* Not a control file: the driver's own answer, for every one. */
	f.fd_is_control = false;
	v = gs_verdict_of_fd_export(&f, &c);
	CHECK(v.verdict == GS_VERDICT_REFUSE && v.status == NV_ERR_INVALID_PARAMETER);
	c.cmd = NV0000_CTRL_CMD_OS_UNIX_GET_EXPORT_OBJECT_INFO;
	CHECK(gs_verdict_of_fd_export(&f, &c).status == NV_ERR_INVALID_PARAMETER);
	/* An import from a file made elsewhere, or of a slot not ours. */
	f = ours;
	f.file_ours = false;
	c.cmd = imp;
	v = gs_verdict_of_fd_export(&f, &c);
	CHECK(v.verdict == GS_VERDICT_REFUSE && v.status == NV_ERR_INSUFFICIENT_PERMISSIONS &&
	      same_text(v.reason, "import from an export file made outside this sandbox"));
	f = ours;
	f.slots_ours = false;
	CHECK(gs_verdict_of_fd_export(&f, &c).status == NV_ERR_INSUFFICIENT_PERMISSIONS);
	f.foreign_test = true;
	CHECK(gs_verdict_of_fd_export(&f, &c).verdict == GS_VERDICT_ALLOW);
	/* fd-import = foreign: allowed here, charged after the driver. */
	f.foreign_test = false;
	f.foreign_charged = true;
	f.file_ours = false;
	CHECK(gs_verdict_of_fd_export(&f, &c).verdict == GS_VERDICT_ALLOW);
	/* It never opens an export into another's file. */
	c.cmd = exp;
	CHECK(gs_verdict_of_fd_export(&f, &c).status == NV_ERR_INSUFFICIENT_PERMISSIONS);
	c.cmd = imp;
	/* An export into a file set up elsewhere; of what is not charged. */
	c.cmd = exp;
	f = ours;
	f.file_ours = false;
	CHECK(gs_verdict_of_fd_export(&f, &c).status == NV_ERR_INSUFFICIENT_PERMISSIONS);
	f.file_set_up = false;  /* a fresh file becomes ours */
	CHECK(gs_verdict_of_fd_export(&f, &c).verdict == GS_VERDICT_ALLOW);
	f.objects_charged = false;
	v = gs_verdict_of_fd_export(&f, &c);
	CHECK(v.verdict == GS_VERDICT_REFUSE && v.status == NV_ERR_NOT_SUPPORTED);
	/* CREATE and INFO read or set up only. */
	c.cmd = NV0000_CTRL_CMD_OS_UNIX_CREATE_EXPORT_OBJECT_FD;
	CHECK(gs_verdict_of_fd_export(&f, &c).verdict == GS_VERDICT_ALLOW);
	/* The four are relocated, never run by the generic path; their
	 * params are read, so only the driver's size passes. */
	CHECK(gs_is_fd_export_control(exp) && gs_is_fd_export_control(imp) &&
	      !gs_is_fd_export_control(NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECT_TO_FD));
	struct nvos54 top = { .cmd = exp, .params = 1, .params_size = 2128 };
	struct gs_rm_call rc;
	gs_decode_control(ABI, &top, false, &rc);
	CHECK(rc.fd_export && !rc.unrelocatable && rc.ctrl_known && !rc.params_size_wrong);
	top.params_size = 2124;
	gs_decode_control(ABI, &top, false, &rc);
	CHECK(rc.params_size_wrong);
	/* The single-object forms stay unrelocatable (refused). */
	top.cmd = NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECT_TO_FD;
	top.params_size = 24;
	gs_decode_control(ABI, &top, false, &rc);
	CHECK(!rc.fd_export && rc.unrelocatable);
}

void sharing_add_counts(unsigned *passed, unsigned *failed)
{
	*passed += check_passed;
	*failed += check_failed;
}
