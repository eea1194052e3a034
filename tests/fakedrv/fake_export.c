/* SPDX-License-Identifier: MIT */
/*
 * fake_export.c - export and import of RM objects through a control
 * file's fd, as the driver does it (NV0000_CTRL_CMD_OS_UNIX_*: CUDA's
 * cuMemExportToShareableHandle / cuMemImportFromShareableHandle with
 * POSIX fds, used by NCCL, PyTorch's expandable segments and vLLM).
 *
 * Facts from NVIDIA/open-gpu-kernel-modules at 580.95.05:
 * - the handlers are in src/nvidia/arch/nvalloc/unix/src/os.c
 *   (cliresCtrlCmdOsUnixCreateExportObjectFd_IMPL, ...ExportObjectsToFd_IMPL,
 *   ...ImportObjectsFromFd_IMPL, ...GetExportObjectInfo_IMPL). Each resolves
 *   params.fd with nv_get_file_private(fd, NV_TRUE, ...): an fd of the
 *   CALLING thread's table that must be a control file (nvidiactl), else
 *   NV_ERR_INVALID_PARAMETER.
 * - the export state lives in that file's private (nvfp->handles,
 *   maxHandles, deviceInstance, metadata). _initializeExportObjectFd
 *   answers NV_ERR_STATE_IN_USE when the file has it already; CREATE
 *   needs maxObjects > 0; EXPORT_OBJECTS sets the file up when it is not,
 *   with its own maxObjects (0: NV_ERR_INVALID_PARAMETER).
 * - EXPORT_OBJECTS: numObjects above 512 is NV_ERR_INVALID_PARAMETER,
 *   index + numObjects above maxHandles NV_ERR_OUT_OF_RANGE; each non-zero
 *   handle is dup'ed into the driver's own client hObjExportRmClient
 *   (RmExportObject, rmobjexportimport.c: pRmApi->DupObject), and must be
 *   on the file's device instance (NV_ERR_INVALID_PARAMETER); the slots
 *   are then filled, a slot's old export freed.
 * - the exports are freed when the file is released (rm_cleanup_file_private,
 *   osapi.c: RmFreeObjExportHandle for each of nvfp->handles): the memory
 *   lives while any process holds the fd, after every client handle on it
 *   is freed.
 * - IMPORT_OBJECTS: numObjects above 128 NV_ERR_INVALID_PARAMETER, range as
 *   above; each non-empty slot is dup'ed into the caller's client under
 *   hParent with the handle in objects[i] (RmImportObject), its type in
 *   objectTypes[i] (NONE for an empty slot); on a failure the handles made
 *   are freed again.
 *
 * The fake tells one open file from another as the driver does, by its
 * identity, not its fd number: the caller's fd is looked at through
 * /proc/<tid>/fd (the node, fake_nodes.c) and compared with kcmp, first
 * with a dup of ours (pidfd_getfd), then with an epoll set that holds the
 * file without a reference (so that the file can still be released, as
 * the supervisor's ledger watches files). The epoll registration polls
 * the file, which asks this FUSE server: it is made by a thread of its
 * own after the reply, and until then the dup holds the file.
 *
 * Everything here runs with fake_st.lock held, but the watch thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <linux/kcmp.h>
#include <unistd.h>

#include "fake_rm_int.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* One control file that holds exports (the driver's nvfp->handles). */
struct export_file {
	int          held;      /* our dup of the file, until the watch holds it; else -1 */
	int          epfd;      /* epoll set watching it (no reference); -1 until made */
	int          tfd;       /* the number it was added with */
	uint16_t     max;
	uint32_t     device_instance;
	uint8_t      metadata[NV0000_OS_UNIX_EXPORT_METADATA_BYTES];
	struct res **slots;     /* max entries: the driver client's dups */
	uint32_t    *cls;       /* their classes */
};

static struct export_file *files[FAKE_EXPORT_FILES_MAX];

/* Is the file at (tid, fd) the one e holds or watches? */
static bool same_file(pid_t tid, int fd, const struct export_file *e)
{
	pid_t self = getpid();

	if (e->held >= 0)
		return syscall(SYS_kcmp, tid, self, KCMP_FILE, fd, e->held) == 0;
	if (e->epfd < 0)
		return false;
	struct kcmp_epoll_slot slot = { .efd = (uint32_t)e->epfd, .tfd = (uint32_t)e->tfd, .toff = 0 };
	return syscall(SYS_kcmp, tid, self, KCMP_EPOLL_TFD, fd, (unsigned long)&slot) == 0;
}

/* Is e's file still open somewhere? The kernel drops the epoll item when
 * the file is released: a kcmp naming it then fails with ENOENT. */
static bool export_alive(const struct export_file *e)
{
	if (e->held >= 0 || e->epfd < 0)
		return true;
	struct kcmp_epoll_slot slot = { .efd = (uint32_t)e->epfd, .tfd = (uint32_t)e->tfd, .toff = 0 };
	pid_t self = getpid();
	return syscall(SYS_kcmp, self, self, KCMP_EPOLL_TFD, e->epfd, (unsigned long)&slot) >= 0 || errno != ENOENT;
}

static void export_free(struct export_file *e)
{
	for (unsigned i = 0; i < e->max; i++)
		if (e->slots[i])
			fake_res_put(e->slots[i]);
	if (e->epfd >= 0)
		close(e->epfd);
	free(e->slots);
	free(e->cls);
	free(e);
}

void fake_export_sweep(void)
{
	for (unsigned i = 0; i < FAKE_EXPORT_FILES_MAX; i++)
		if (files[i] && !export_alive(files[i])) {
			export_free(files[i]);
			files[i] = NULL;
			fake_st.export_files_released++;
		}
}

unsigned fake_export_live(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < FAKE_EXPORT_FILES_MAX; i++)
		n += files[i] != NULL;
	return n;
}

/* The watch thread: epoll_ctl polls the file, a FUSE request this server
 * answers once the handler that started us has returned. */
static void *make_watch(void *arg)
{
	struct export_file *e = arg;
	int epfd = epoll_create1(EPOLL_CLOEXEC), held;
	struct epoll_event ev = { .events = 0 };

	pthread_mutex_lock(&fake_st.lock);
	held = e->held;
	pthread_mutex_unlock(&fake_st.lock);
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, held, &ev) < 0) {
		/* Keep the dup: the exports then live until the fake stops
		 * (too long, never too short). */
		if (epfd >= 0)
			close(epfd);
		return NULL;
	}
	pthread_mutex_lock(&fake_st.lock);
	e->epfd = epfd;
	e->tfd = held;
	e->held = -1;
	pthread_mutex_unlock(&fake_st.lock);
	close(held);  /* a FLUSH the loop answers */
	return NULL;
}

/* The export state of the control file at (tid, fd): NULL when it has
 * none. *is_ctl tells whether the fd is one of the fake's control files. */
static struct export_file *export_of(pid_t tid, int fd, bool *is_ctl)
{
	*is_ctl = fd >= 0 && fake_fd_is_ctl(tid, fd);
	if (!*is_ctl)
		return NULL;
	for (unsigned i = 0; i < FAKE_EXPORT_FILES_MAX; i++)
		if (files[i] && same_file(tid, fd, files[i]))
			return files[i];
	return NULL;
}

/* Our own reference on the caller's file (the thread's table first). */
static int dup_caller_fd(pid_t tid, int fd)
{
	int pfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD), got;

	if (pfd < 0)
		pfd = (int)syscall(SYS_pidfd_open, fake_tgid_of(tid), 0);
	if (pfd < 0)
		return -1;
	got = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
	close(pfd);
	return got;
}

/* _initializeExportObjectFd: the file's export state, on hDevice's
 * instance (0: none). */
static nv_status_t export_setup(const struct fake_caller *who, struct client *c, int fd,
                                nv_handle_t h_device, uint16_t max, const uint8_t *metadata)
{
	struct export_file *e;
	unsigned slot = 0;
	uint32_t inst = 0;

	if (h_device) {
		struct obj *d = fake_find_obj(c, h_device);
		if (!d)
			return NV_ERR_OBJECT_NOT_FOUND;
		if (d->res->kind != K_DEVICE)
			return NV_ERR_INVALID_PARAMETER;
		inst = fake_instance_of_gpu((unsigned)d->res->gpu);
	}
	while (slot < FAKE_EXPORT_FILES_MAX && files[slot])
		slot++;
	if (slot == FAKE_EXPORT_FILES_MAX || !(e = calloc(1, sizeof(*e))))
		return NV_ERR_NO_MEMORY;
	e->slots = calloc(max, sizeof(*e->slots));
	e->cls = calloc(max, sizeof(*e->cls));
	e->held = dup_caller_fd(who->pid, fd);
	e->epfd = -1;
	if (!e->slots || !e->cls || e->held < 0) {
		if (e->held >= 0)
			close(e->held);
		e->max = 0;
		export_free(e);
		return NV_ERR_NO_MEMORY;
	}
	e->max = max;
	e->device_instance = inst;
	if (metadata)
		memcpy(e->metadata, metadata, sizeof(e->metadata));
	pthread_t t;
	if (pthread_create(&t, NULL, make_watch, e) == 0)
		pthread_detach(t);
	files[slot] = e;
	return NV_OK;
}

static nv_status_t create_export_fd(const struct fake_caller *who, struct client *c,
                                    struct nv0000_os_unix_create_export_fd_params *p)
{
	bool ctl;

	if (p->max_objects == 0)
		return NV_ERR_INVALID_PARAMETER;
	if (export_of(who->pid, p->fd, &ctl))
		return NV_ERR_STATE_IN_USE;
	if (!ctl)
		return NV_ERR_INVALID_PARAMETER;
	return export_setup(who, c, p->fd, p->h_device, p->max_objects, p->metadata);
}

/* RmExportObject for every non-zero handle, then the slots filled. */
static nv_status_t export_objects(const struct fake_caller *who, struct client *c,
                                  struct nv0000_os_unix_export_objects_params *p)
{
	bool ctl;
	struct export_file *e = export_of(who->pid, p->fd, &ctl);
	nv_status_t st;

	if (!ctl)
		return NV_ERR_INVALID_PARAMETER;
	if (!e) {
		if (p->max_objects == 0)
			return NV_ERR_INVALID_PARAMETER;
		st = export_setup(who, c, p->fd, p->h_device, p->max_objects, p->metadata);
		if (st != NV_OK)
			return st;
		e = export_of(who->pid, p->fd, &ctl);
		if (!e)
			return NV_ERR_INVALID_STATE;
	}
	if (p->num_objects > NV0000_OS_UNIX_EXPORT_MAX_OBJECTS)
		return NV_ERR_INVALID_PARAMETER;
	if ((uint32_t)p->num_objects + p->index > e->max)
		return NV_ERR_OUT_OF_RANGE;
	for (unsigned i = 0; i < p->num_objects; i++) {
		if (!p->objects[i])
			continue;
		struct obj *o = fake_find_obj(c, p->objects[i]);
		if (!o)
			return NV_ERR_OBJECT_NOT_FOUND;
		if (o->res->gpu < 0 || fake_instance_of_gpu((unsigned)o->res->gpu) != e->device_instance)
			return NV_ERR_INVALID_PARAMETER;
	}
	for (unsigned i = 0; i < p->num_objects; i++) {
		unsigned s = p->index + i;
		struct obj *o = p->objects[i] ? fake_find_obj(c, p->objects[i]) : NULL;
		if (e->slots[s])
			fake_res_put(e->slots[s]);
		e->slots[s] = o ? o->res : NULL;
		e->cls[s] = o ? o->cls : 0;
		if (o) {
			o->res->refs++;
			fake_st.exports_made++;
		}
	}
	return NV_OK;
}

static uint8_t import_type(const struct res *r)
{
	return r->kind == K_VIDMEM ? NV0000_OS_UNIX_IMPORT_TYPE_VIDMEM : NV0000_OS_UNIX_IMPORT_TYPE_SYSMEM;
}

static nv_status_t import_objects(const struct fake_caller *who, struct client *c,
                                  struct nv0000_os_unix_import_objects_params *p)
{
	bool ctl;
	struct export_file *e = export_of(who->pid, p->fd, &ctl);
	nv_status_t st = NV_OK;
	unsigned i;

	if (!e || p->num_objects > NV0000_OS_UNIX_IMPORT_MAX_OBJECTS)
		return NV_ERR_INVALID_PARAMETER;
	if ((uint32_t)p->num_objects + p->index > e->max)
		return NV_ERR_OUT_OF_RANGE;
	for (i = 0; i < p->num_objects && st == NV_OK; i++) {
		struct res *r = e->slots[p->index + i];
		p->object_types[i] = NV0000_OS_UNIX_IMPORT_TYPE_NONE;
		if (!r)
			continue;
		st = fake_dup_res(c, p->h_parent, &p->objects[i], r, e->cls[p->index + i]);
		if (st == NV_OK) {
			p->object_types[i] = import_type(r);
			fake_st.imports_made++;
		}
	}
	if (st != NV_OK)
		for (unsigned j = 0; j + 1 < i; j++)
			if (p->object_types[j] != NV0000_OS_UNIX_IMPORT_TYPE_NONE)
				fake_free_handle(c, p->objects[j]);
	return st;
}

static nv_status_t export_info(const struct fake_caller *who, struct nv0000_os_unix_export_info_params *p)
{
	bool ctl;
	struct export_file *e = p->fd < 0 ? NULL : export_of(who->pid, p->fd, &ctl);

	if (!e)
		return NV_ERR_INVALID_PARAMETER;
	p->max_objects = e->max;
	p->device_instance = e->device_instance;
	p->gpu_instance_id = UINT32_MAX;  /* not MIG */
	memcpy(p->metadata, e->metadata, sizeof(p->metadata));
	return NV_OK;
}

bool fake_export_models(uint32_t cmd)
{
	return cmd == NV0000_CTRL_CMD_OS_UNIX_CREATE_EXPORT_OBJECT_FD ||
	       cmd == NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD ||
	       cmd == NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD ||
	       cmd == NV0000_CTRL_CMD_OS_UNIX_GET_EXPORT_OBJECT_INFO;
}

nv_status_t fake_export_control(const struct fake_caller *who, struct client *c, uint32_t cmd, void *params,
                                uint32_t size, bool *dirty)
{
	fake_export_sweep();
	if (!params || size != fake_ctrl_size(cmd))
		return NV_ERR_INVALID_PARAM_STRUCT;
	*dirty = true;
	switch (cmd) {
	case NV0000_CTRL_CMD_OS_UNIX_CREATE_EXPORT_OBJECT_FD:
		return create_export_fd(who, c, params);
	case NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD:
		return export_objects(who, c, params);
	case NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD:
		return import_objects(who, c, params);
	default:
		return export_info(who, params);
	}
}
