/* SPDX-License-Identifier: MIT */
/*
 * exec_fdexport.c - the OS_UNIX export and import controls: memory shared
 * between processes through a control file's fd (CUDA's POSIX-fd handles:
 * NCCL's cuMem path, PyTorch's expandable segments, vLLM). Reasoning:
 * docs/security/fd-export.md.
 *
 * The driver resolves params.fd in the CALLING thread's fd table
 * (nv_get_file_private, os.c, 580.95.05), so the generic path, which
 * performs controls from the supervisor, would make it name one of OUR
 * files. Here the fd is resolved once, into our own table (a dup taken
 * from the trapped task and checked after: dup_trapped_fd), the params'
 * fd rewritten to our dup's number in our copy, and the call performed
 * from that copy; the workload's number is put back before the answer.
 * Another thread's dup2() after our look changes nothing we act on.
 *
 * The export file keeps the driver's dups of the exported memory until
 * the file is released, in whatever process holds it: each filled slot
 * pins its allocation (fd_exports.h), so the memory stays charged once to
 * the sandbox after the exporter frees it and exits, and an import is one
 * more handle on that same allocation (ledger_dup_pinned). An export file
 * the sandbox did not make (another sandbox's, the host's) holds memory
 * the ledger has no account of: an import from it is refused (unless the
 * policy says fd-import = foreign: then what was imported is charged to
 * the importer by the size the driver gives it, charge_foreign), and an
 * export into it always.
 *
 * Every step runs under the session lock (no off_lock_key): the look at
 * the sandbox's files, the verdict, the driver call and the pins are one
 * step for every other call of the sandbox.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "exec_int.h"
#include "fd_exports.h"

#define CTRL_STATUS_OFF offsetof(struct nvos54, status)

/* The control in flight: our copies and what it meets. */
struct fd_flight {
	struct nvos54            *top;
	uint64_t                  user_params;
	uint8_t                  *params;
	uint32_t                  psize;
	int32_t                  *fd_field;  /* params.fd in our copy */
	int32_t                   wfd;       /* the workload's number */
	int                       dup;       /* ours, or -1 */
	int                       file;      /* index in sb->exports, or -1 */
	struct gs_fd_export_facts facts;
};

static size_t params_size_of(uint32_t cmd)
{
	switch (cmd) {
	case NV0000_CTRL_CMD_OS_UNIX_CREATE_EXPORT_OBJECT_FD:
		return sizeof(struct nv0000_os_unix_create_export_fd_params);
	case NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD:
		return sizeof(struct nv0000_os_unix_export_objects_params);
	case NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD:
		return sizeof(struct nv0000_os_unix_import_objects_params);
	default:
		return sizeof(struct nv0000_os_unix_export_info_params);
	}
}

static int32_t *fd_field_of(uint32_t cmd, uint8_t *params)
{
	if (cmd == NV0000_CTRL_CMD_OS_UNIX_CREATE_EXPORT_OBJECT_FD)
		return &((struct nv0000_os_unix_create_export_fd_params *)(void *)params)->fd;
	/* fd is the first field of the three others (nvrm_abi.h). */
	return (int32_t *)(void *)params;
}

/* Does the driver hold export state on our dup's file? Asked with
 * GET_EXPORT_OBJECT_INFO on the caller's client, which reads only. */
static bool file_set_up(struct call *c, const struct fd_flight *f)
{
	struct nv0000_os_unix_export_info_params info = { .fd = f->dup };
	struct nvos54 q = { .h_client = f->top->h_client, .h_object = f->top->h_client,
	                    .cmd = NV0000_CTRL_CMD_OS_UNIX_GET_EXPORT_OBJECT_INFO,
	                    .params = (uintptr_t)&info, .params_size = sizeof(info) };

	/* Cannot tell (the call failed): say set up, so that only a file
	 * this sandbox made takes exports (fail closed). */
	return exec_escape(c, NV_ESC_RM_CONTROL, sizeof(q), &q) != 0 || q.status == NV_OK;
}

/* Every handle an export names is video memory the ledger charges to this
 * sandbox under the calling client: what a pin can hold. */
static bool objects_charged(const struct call *c, const struct fd_flight *f)
{
	const struct nv0000_os_unix_export_objects_params *p = (const void *)f->params;
	uint32_t n = p->num_objects < NV0000_OS_UNIX_EXPORT_MAX_OBJECTS ? p->num_objects
	                                                                : NV0000_OS_UNIX_EXPORT_MAX_OBJECTS;
	struct ledger_facts lf;

	for (uint32_t i = 0; i < n; i++) {
		if (!p->objects[i])
			continue;
		if (!ledger_object_facts(&c->sb->ledger, f->top->h_client, p->objects[i], &lf) ||
		    lf.kind != RM_CLASS_VIDMEM || !lf.bytes)
			return false;
	}
	return true;
}

/* fetch (the second file) and the facts the verdict reads. false with *a
 * when the call ends here (the task is gone). */
static bool take_facts(struct call *c, struct fd_flight *f, struct answer *a)
{
	struct gs_session *sb = c->sb;

	f->dup = -1;
	f->file = -1;
	f->facts.foreign_test = sb->test_foreign_import;
	f->facts.foreign_charged = sb->quota.fd_import == GS_FD_IMPORT_FOREIGN;
	/* A look first: a dup of a file that is not the driver's could be
	 * a FUSE file the workload serves, whose close waits for it. */
	if (f->wfd < 0 || task_fd_node_kind_cached(c->tid, f->wfd) != GS_NODE_CTL)
		return true;
	f->dup = dup_trapped_fd(c, f->wfd);
	if (f->dup < 0) {
		if (errno == ESRCH) {
			*a = answer_none();
			return false;
		}
		return true;
	}
	/* The dup, not the look, decides: a swap in between shows here. */
	f->facts.fd_is_control = fd_is_control_file(f->dup);
	if (!f->facts.fd_is_control)
		return true;
	f->file = gs_fd_exports_find(&sb->exports, sb->ledger.self, f->dup);
	f->facts.file_ours = f->file >= 0;
	f->facts.slots_ours = f->facts.file_ours;
	if (f->top->cmd == NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD) {
		f->facts.file_set_up = f->facts.file_ours || file_set_up(c, f);
		f->facts.objects_charged = objects_charged(c, f);
	}
	return true;
}

/* act: performed from our copy with our dup's number in it. */
static int perform(struct call *c, struct fd_flight *f)
{
	int rc;

	*f->fd_field = f->dup;
	f->top->params = (uintptr_t)f->params;
	rc = exec_escape(c, NV_ESC_RM_CONTROL, sizeof(*f->top), f->top);
	f->top->params = f->user_params;
	*f->fd_field = f->wfd;
	return rc;
}

/* EXPORT_OBJECTS_TO_FD: a file the sandbox had no record of yet is
 * recorded before the call (a watch that cannot be made refuses it: no
 * memory may be exported without its pin). */
static bool export_record(struct call *c, struct fd_flight *f, bool *made)
{
	const struct nv0000_os_unix_export_objects_params *p = (const void *)f->params;

	*made = false;
	if (f->file >= 0)
		return true;
	f->file = gs_fd_exports_add(&c->sb->exports, &c->sb->ledger, f->dup, p->max_objects);
	*made = f->file >= 0;
	return *made;
}

/* commit of an export the driver accepted: the driver filled every slot
 * in range (an empty one for a 0 handle, its old export freed), and so do
 * the pins. */
static void commit_export(struct call *c, struct fd_flight *f)
{
	const struct nv0000_os_unix_export_objects_params *p = (const void *)f->params;
	struct gs_session *sb = c->sb;
	const struct gs_export_file *x = &sb->exports.files[f->file];
	uint64_t released[GS_MAX_GPUS] = { 0 }, before[GS_MAX_GPUS];
	struct ledger_facts lf;

	uint32_t n = p->num_objects < NV0000_OS_UNIX_EXPORT_MAX_OBJECTS ? p->num_objects
	                                                                : NV0000_OS_UNIX_EXPORT_MAX_OBJECTS;

	memcpy(before, sb->ledger.used, sizeof(before));
	for (uint32_t i = 0; i < n && (uint32_t)p->index + i < x->max; i++) {
		struct gs_export_slot s = { .pin = LEDGER_NO_PIN, .cls = 0 };
		if (p->objects[i] && !sb->test_no_export_pin &&
		    ledger_object_facts(&sb->ledger, f->top->h_client, p->objects[i], &lf)) {
			s.pin = ledger_pin(&sb->ledger, f->top->h_client, p->objects[i]);
			s.cls = lf.cls;
		}
		gs_fd_exports_set(&sb->exports, &sb->ledger, (uint32_t)f->file, p->index + i, s, released);
	}
	note_release(c, released, before);
}

/* The size the driver gives memory (h_client, h): GET_SURFACE_INFO's
 * PHYS_SIZE_LO/HI (mem_ctrl.c, 580.95.05), asked from our own memory; 0
 * when it cannot tell. */
static uint64_t surface_bytes(struct call *c, nv_handle_t h_client, nv_handle_t h)
{
	struct nv0041_surface_info list[] = { { NV0041_CTRL_SURFACE_INFO_INDEX_PHYS_SIZE_LO, 0 },
	                                      { NV0041_CTRL_SURFACE_INFO_INDEX_PHYS_SIZE_HI, 0 } };
	struct nv0041_get_surface_info_params p = { .count = 2, .list = (uintptr_t)list };
	struct nvos54 q = { .h_client = h_client, .h_object = h, .cmd = NV0041_CTRL_CMD_GET_SURFACE_INFO,
	                    .params = (uintptr_t)&p, .params_size = sizeof(p) };

	if (exec_escape(c, NV_ESC_RM_CONTROL, sizeof(q), &q) != 0 || q.status != NV_OK)
		return 0;
	return (uint64_t)list[1].data << 32 | list[0].data;
}

/* fd-import = foreign: memory imported from another sandbox's file is
 * charged to the importer as its own allocation, by the size the driver
 * gives it, within the quota. Only video memory; anything else, or a size
 * the driver will not tell, is refused (fail closed). */
static nv_status_t charge_foreign(struct call *c, nv_handle_t h_client, nv_handle_t h_parent, nv_handle_t h,
                                  uint8_t type)
{
	struct gs_session *sb = c->sb;
	int gpu = ledger_gpu_of(&sb->ledger, h_client, h_parent);
	uint64_t bytes;

	if (type != NV0000_OS_UNIX_IMPORT_TYPE_VIDMEM || gpu == LEDGER_NO_GPU ||
	    !(bytes = surface_bytes(c, h_client, h)))
		return NV_ERR_NOT_SUPPORTED;
	if (over_quota_reconciled(sb, gpu, bytes))
		return NV_ERR_NO_MEMORY;
	uint64_t before = ledger_used(&sb->ledger, gpu);
	if (ledger_add(&sb->ledger, h_client, h_parent, h, RM_CLASS_VIDMEM, NV01_MEMORY_LOCAL_USER, gpu, bytes) < 0)
		return NV_ERR_NO_MEMORY;
	note_usage(c, gpu, before);
	return NV_OK;
}

/* What slot s of the call's export file holds; empty when the file is
 * not the sandbox's or s is past its end. */
static struct gs_export_slot slot_of(const struct call *c, const struct fd_flight *f, uint32_t s)
{
	const struct gs_export_file *x = f->file >= 0 ? &c->sb->exports.files[f->file] : NULL;

	return x && s < x->max ? x->slots[s] : (struct gs_export_slot){ LEDGER_NO_PIN, 0 };
}

/* One handle the import made, whose slot held slot. */
static nv_status_t commit_one_import(struct call *c, const struct fd_flight *f, nv_handle_t h_parent,
                                     nv_handle_t h, uint8_t type, struct gs_export_slot slot)
{
	nv_handle_t client = f->top->h_client;

	if (slot.pin != LEDGER_NO_PIN)
		return ledger_dup_pinned(&c->sb->ledger, client, h_parent, h, slot.pin, slot.cls) < 0 ? NV_ERR_NO_MEMORY
		                                                                                      : NV_OK;
	if (f->facts.foreign_charged)
		return charge_foreign(c, client, h_parent, h, type);
	return f->facts.foreign_test ? NV_OK : NV_ERR_INSUFFICIENT_PERMISSIONS;
}

/* commit of an import: each handle made is one more reference on what
 * its slot pins. One the sandbox cannot account for (a slot it did not
 * fill: another sandbox's file, or someone outside exported into its
 * file) is charged as the importer's own under fd-import = foreign, else
 * freed again and the import refused. The slots are read first: a
 * charge's reconcile may sweep other export files (and move ours). */
static nv_status_t commit_import(struct call *c, struct fd_flight *f)
{
	struct nv0000_os_unix_import_objects_params *p = (void *)f->params;
	struct gs_export_slot slots[NV0000_OS_UNIX_IMPORT_MAX_OBJECTS];
	nv_status_t st = NV_OK;
	uint32_t n = p->num_objects < NV0000_OS_UNIX_IMPORT_MAX_OBJECTS ? p->num_objects
	                                                                : NV0000_OS_UNIX_IMPORT_MAX_OBJECTS;

	for (uint32_t i = 0; i < n; i++)
		slots[i] = slot_of(c, f, (uint32_t)p->index + i);
	if (note_client(c, f->top->h_client) < 0)
		st = NV_ERR_NO_MEMORY;
	for (uint32_t i = 0; i < n && st == NV_OK; i++)
		if (p->object_types[i] != NV0000_OS_UNIX_IMPORT_TYPE_NONE)
			st = commit_one_import(c, f, p->h_parent, p->objects[i], p->object_types[i], slots[i]);
	if (st == NV_OK)
		return NV_OK;
	/* Undo every handle the import made, the ones recorded included
	 * (their charges with them). */
	for (uint32_t i = 0; i < n; i++)
		if (p->object_types[i] != NV0000_OS_UNIX_IMPORT_TYPE_NONE) {
			undo_alloc(c, f->top->h_client, p->h_parent, p->objects[i]);
			ledger_free(&c->sb->ledger, f->top->h_client, p->objects[i], NULL);
		}
	return st;
}

/* An import undone after the driver made it, answered with its reason. */
static struct answer refuse_import(struct call *c, struct fd_flight *f, nv_status_t st)
{
	if (st == NV_ERR_NO_MEMORY && f->facts.foreign_charged)
		return refuse_with_status(c, f->top, CTRL_STATUS_OFF, st, GS_VERDICT_DENY,
		                          "video memory quota exceeded by an import from another sandbox's export file");
	if (st == NV_ERR_NOT_SUPPORTED)
		return refuse_with_status(c, f->top, CTRL_STATUS_OFF, st, GS_VERDICT_REFUSE,
		                          "import of memory whose size the driver does not give");
	return refuse_with_status(c, f->top, CTRL_STATUS_OFF, st, GS_VERDICT_REFUSE,
	                          "import of memory this sandbox has no account of");
}

static struct answer act_and_commit(struct call *c, struct fd_flight *f)
{
	bool made = false;
	nv_status_t st;

	if (f->top->cmd == NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD && !export_record(c, f, &made))
		return refuse_with_status(c, f->top, CTRL_STATUS_OFF, NV_ERR_NO_MEMORY, GS_VERDICT_REFUSE,
		                          "cannot record the export file (its watch, memory, or the sandbox's bound on export slots)");
	int rc = perform(c, f);
	bool ok = rc == 0 && f->top->status == NV_OK;

	c->audit = true;  /* every export and import is on the record */
	switch (f->top->cmd) {
	case NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD:
		if (ok)
			commit_export(c, f);
		else if (made)
			gs_fd_exports_drop(&c->sb->exports, &c->sb->ledger, (uint32_t)f->file);
		break;
	case NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD:
		if (ok && (st = commit_import(c, f)) != NV_OK)
			return refuse_import(c, f, st);
		break;
	case NV0000_CTRL_CMD_OS_UNIX_CREATE_EXPORT_OBJECT_FD: {
		const struct nv0000_os_unix_create_export_fd_params *p = (const void *)f->params;
		/* Without a record the file takes no export later (refused as
		 * another's): nothing is lost but the use. */
		if (ok && f->file < 0)
			(void)gs_fd_exports_add(&c->sb->exports, &c->sb->ledger, f->dup, p->max_objects);
		break;
	}
	default:
		break;
	}
	if (ok)
		note_client(c, f->top->h_client);
	return answer_executed(c, f->user_params, f->params, f->psize, f->top, sizeof(*f->top), rc,
	                       f->top->status);
}

struct answer handle_fd_export(struct call *c, struct nvos54 *top, uint64_t user_params, uint8_t *params,
                               uint32_t psize)
{
	struct fd_flight f = { .top = top, .user_params = user_params, .params = params, .psize = psize };
	struct answer a;

	/* The verdict refused any other size (supervisor_reads_params). */
	if (!params || psize != params_size_of(top->cmd))
		return refuse_with_status(c, top, CTRL_STATUS_OFF, NV_ERR_INVALID_PARAM_STRUCT, GS_VERDICT_REFUSE,
		                          "export control params of another size than the driver's");
	f.fd_field = fd_field_of(top->cmd, params);
	f.wfd = *f.fd_field;
	if (!take_facts(c, &f, &a))
		return a;
	struct gs_rm_call rc = { .cmd = top->cmd };
	struct gs_call_verdict v = gs_verdict_of_fd_export(&f.facts, &rc);
	if (v.verdict == GS_VERDICT_REFUSE || v.verdict == GS_VERDICT_DENY)
		a = refuse_with_status(c, top, CTRL_STATUS_OFF, v.status, v.verdict, v.reason);
	else
		a = act_and_commit(c, &f);
	if (f.dup >= 0)
		close(f.dup);
	return a;
}
