/* SPDX-License-Identifier: MIT */
/*
 * executor.c - decides and answers one trapped ioctl.
 *
 * The rule that shapes this file (design.md 2): no decision rests on bytes
 * the workload can still change. The workload's thread is blocked in the
 * trap, but its other threads (and other processes sharing the memory) are
 * not. So for every call that matters the supervisor:
 *   1. copies every parameter level into its own memory;
 *   2. decides on those copies;
 *   3. performs the ioctl itself, on its own copies, through a pidfd_getfd
 *      dup of the workload's fd (RM binds a client to the open file, not to
 *      a pid: rm-abi.md 6.2), so the driver reads only our bytes;
 *   4. copies the results back and answers with the ioctl's return value.
 * The dup is closed before the answer: a held dup would keep the workload's
 * clients, and their memory, alive.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "arch.h"
#include "builtin.h"
#include "quota.h"
#include "rm_decode.h"
#include "rm_tables.h"
#include "sandbox.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

#define NVIDIA_MAJOR 195u               /* fixed char major of /dev/nvidia* */
#define NVIDIA_PATH_PREFIX "/dev/nvidia"
#define PATH_BUF 256
#define PTR32_MASK 0xffffffffull
/* The driver hands out video memory in 2 MiB granules for the allocations
 * CUDA makes (design.md 1.2). The quota pre-check rounds the request up to
 * that, so a call that passes cannot push the driver's usage past the quota
 * even for an instant; the post-check covers larger rounding. */
#define VIDMEM_GRANULE (2ull << 20)

enum answer_kind { ANSWER_VALUE, ANSWER_CONTINUE, ANSWER_NONE };

struct answer {
	enum answer_kind kind;
	int64_t          val;
	int              error;  /* positive errno, answered as -error */
};

/* Everything about the call in flight. */
struct call {
	struct gs_sandbox   *sb;
	pid_t                tid;
	const struct gs_abi *abi;
	int                  wfd;     /* the workload's fd number */
	int                  dup;     /* our dup of it, or -1 */
	uint32_t             nr, size;
	uint64_t             argp;
	bool                 via_xfer;
	struct gs_decision   d;
	bool                 audit;   /* write d to the audit log */
};

/* ---- memory of the workload ---------------------------------------------- */

static int mem_read(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };

	if (len == 0)
		return 0;
	return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* Two regions in one call: the nested params and the top-level struct go
 * back together, saving a syscall on the hot path. */
static int mem_write2(pid_t tid, uint64_t a1, const void *b1, size_t l1, uint64_t a2,
                      const void *b2, size_t l2)
{
	struct iovec local[2] = { { (void *)b1, l1 }, { (void *)b2, l2 } };
	struct iovec remote[2] = { { (void *)(uintptr_t)a1, l1 }, { (void *)(uintptr_t)a2, l2 } };

	if (l1 == 0)
		return process_vm_writev(tid, &local[1], 1, &remote[1], 1, 0) == (ssize_t)l2 ? 0 : -1;
	return process_vm_writev(tid, local, 2, remote, 2, 0) == (ssize_t)(l1 + l2) ? 0 : -1;
}

static int mem_write(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };

	if (len == 0)
		return 0;
	return process_vm_writev(tid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* The trapped task might have died and its tid been reused between the
 * receive and our reads; the kernel's ID_VALID check proves the memory we
 * read belonged to the task that is still waiting for our answer. */
static bool notif_still_valid(struct gs_sandbox *sb)
{
	return ioctl(sb->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &sb->req->id) == 0;
}

/* ---- the workload's fd --------------------------------------------------- */

static int pidfd_for(struct gs_sandbox *sb, pid_t tid, bool fresh)
{
	struct gs_pidfd_slot *s = &sb->pidfds[(unsigned)tid % GS_PIDFD_CACHE];

	if (!fresh && s->tid == tid && s->pidfd >= 0)
		return s->pidfd;
	if (s->pidfd >= 0)
		close(s->pidfd);
	s->tid = tid;
	/* A thread pidfd (Linux 6.9+) works for any thread; older kernels
	 * accept only a thread-group leader. */
	s->pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (s->pidfd < 0 && errno == EINVAL)
		s->pidfd = (int)syscall(SYS_pidfd_open, tid, 0);
	return s->pidfd;
}

/* A cached pidfd is safe: it names one task. If that task died and the tid
 * went to a new one, pidfd_getfd fails and we open a fresh pidfd; if it
 * succeeds, the old task is alive, so it is the trapped one (live tids are
 * unique). */
static int dup_workload_fd(struct gs_sandbox *sb, pid_t tid, int wfd)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		int pidfd = pidfd_for(sb, tid, attempt > 0);
		if (pidfd < 0)
			return -1;
		int fd = (int)syscall(SYS_pidfd_getfd, pidfd, wfd, 0);
		if (fd >= 0)
			return fd;
		if (errno != ESRCH && errno != EBADF)
			return -1;
	}
	return -1;
}

/* Does the fd lead to the NVIDIA driver (or a stand-in for it)? The answer
 * comes from what the file is, not from its path, except to recognise a
 * driver served under /dev/nvidia* with another major (a CUSE stand-in).
 * Regular files count as candidates: a FUSE stand-in at /dev/nvidiactl is a
 * regular file, and decoding a look-alike ioctl there costs nothing unsafe.
 * The real driver lives only on major 195 and the uvm major, so no other
 * character device can reach it. The uvm device is not an RM file. */
static bool fd_is_nvidia_like(const struct gs_sandbox *sb, int fd)
{
	struct stat st;
	char link[PATH_BUF], path[PATH_BUF];
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return true; /* fail closed: decode it */
	if (S_ISREG(st.st_mode))
		return true;
	if (!S_ISCHR(st.st_mode))
		return false;
	/* nvidia-uvm never handles RM escapes: its ioctls are its own. */
	if (sb->uvm_major && major(st.st_rdev) == sb->uvm_major)
		return false;
	if (major(st.st_rdev) == NVIDIA_MAJOR)
		return true;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return false;
	path[n] = '\0';
	return strncmp(path, NVIDIA_PATH_PREFIX, strlen(NVIDIA_PATH_PREFIX)) == 0;
}

#define NVIDIA_CTL_MINOR 255u
#define NVIDIA_CTL_NAME "nvidiactl"

/* The control node (/dev/nvidiactl): RM clients live on its open files. */
static bool fd_is_control_file(int fd)
{
	struct stat st;
	char link[PATH_BUF], path[PATH_BUF];
	const char *base;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return false;
	if (S_ISCHR(st.st_mode) && major(st.st_rdev) == NVIDIA_MAJOR)
		return minor(st.st_rdev) == NVIDIA_CTL_MINOR;
	/* A stand-in (FUSE, CUSE) is known by its name. */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return false;
	path[n] = '\0';
	base = strrchr(path, '/');
	return strcmp(base ? base + 1 : path, NVIDIA_CTL_NAME) == 0;
}

/* ---- GPU nodes for device allocations ----------------------------------- */

#define MAX_BORROWED_GPU_FDS 64

struct borrowed_fds {
	int      fd[MAX_BORROWED_GPU_FDS];
	unsigned n;
};

/* True for /dev/nvidia<N>, the per-GPU nodes. */
static bool is_gpu_node_path(const char *p)
{
	size_t plen = strlen(NVIDIA_PATH_PREFIX);

	if (strncmp(p, NVIDIA_PATH_PREFIX, plen) != 0 || !p[plen])
		return false;
	for (p += plen; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* The driver allows an NV01_DEVICE_0 allocation only to a process that
 * holds an open node of that GPU (nv_is_gpu_accessible scans the caller's
 * fd table). When the supervisor performs the call, it borrows dups of the
 * workload's own GPU nodes for the duration of the call: the driver then
 * grants exactly what the workload itself is entitled to, no more, and
 * nothing is held after the call. */
static void borrow_gpu_nodes(struct call *c, struct borrowed_fds *b)
{
	char dir[PATH_BUF], link[PATH_BUF], path[PATH_BUF];
	struct dirent *de;
	DIR *d;

	b->n = 0;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)c->tid);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)) && b->n < MAX_BORROWED_GPU_FDS) {
		int wfd = atoi(de->d_name);
		ssize_t n;
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)c->tid, wfd);
		n = readlink(link, path, sizeof(path) - 1);
		if (n <= 0)
			continue;
		path[n] = '\0';
		if (!is_gpu_node_path(path))
			continue;
		int fd = dup_workload_fd(c->sb, c->tid, wfd);
		if (fd >= 0)
			b->fd[b->n++] = fd;
	}
	closedir(d);
}

static void return_gpu_nodes(struct borrowed_fds *b)
{
	for (unsigned i = 0; i < b->n; i++)
		close(b->fd[i]);
	b->n = 0;
}

/* ---- issuing calls ourselves --------------------------------------------- */

/* Performs an escape on our dup with a canonical request word (the driver
 * ignores direction and type bits, and FUSE stand-ins need them right).
 * Parameter blocks too big for the 14-bit size field go through XFER. */
static int exec_escape(const struct call *c, uint32_t nr, uint32_t size, void *buf)
{
	int rc;

	if (size <= NV_IOC_MAX_DIRECT_SIZE) {
		rc = ioctl(c->dup, NV_IOC_WORD(nr, size), buf);
	} else {
		struct nv_ioctl_xfer x = { .cmd = nr, .size = size, .ptr = (uintptr_t)buf };
		rc = ioctl(c->dup, NV_IOC_WORD(NV_ESC_IOCTL_XFER_CMD, sizeof(x)), &x);
	}
	return rc < 0 ? -errno : 0;
}

/* Frees an object we just created when the driver granted more than the
 * quota allows (rounding beyond our pre-check). */
static void undo_alloc(const struct call *c, nv_handle_t client, nv_handle_t parent, nv_handle_t obj)
{
	struct nvos00 f = { .h_root = client, .h_object_parent = parent, .h_object_old = obj };
	(void)exec_escape(c, NV_ESC_RM_FREE, sizeof(f), &f);
}

/* Records the client after the driver accepted a call on it through this
 * file: with RM's default strict validation that proves the client lives
 * on this open file, which the ledger then watches for release. */
static int note_client(const struct call *c, nv_handle_t h_client)
{
	return ledger_note_client(&c->sb->ledger, h_client, c->dup) < 0 ? -1 : 0;
}

/* Before charging video memory under a client: bind the ledger's entry to
 * this open file, reaping a stale entry left by a dead file whose handle
 * the driver has since given to a new client (ledger_bind_client). */
static int bind_client_for_charge(struct call *c, nv_handle_t h_client)
{
	uint64_t released[GS_MAX_GPUS] = { 0 };
	uint64_t before[GS_MAX_GPUS];
	int rc;

	memcpy(before, c->sb->ledger.used, sizeof(before));
	rc = ledger_bind_client(&c->sb->ledger, h_client, c->dup, released);
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		if (released[g] && c->sb->trace)
			fprintf(c->sb->trace, "[gpusandbox] released %llu bytes on gpu%u: stale client 0x%x\n",
			        (unsigned long long)released[g], g, h_client);
	return rc;
}

/* ---- answering ----------------------------------------------------------- */

static struct answer answer_value(int rc)
{
	struct answer a = { ANSWER_VALUE, 0, 0 };
	if (rc < 0)
		a.error = -rc;
	return a;
}

static struct answer answer_errno(int e)
{
	struct answer a = { ANSWER_VALUE, 0, e };
	return a;
}

static struct answer answer_continue(void)
{
	struct answer a = { ANSWER_CONTINUE, 0, 0 };
	return a;
}

static struct answer answer_none(void)
{
	struct answer a = { ANSWER_NONE, 0, 0 };
	return a;
}

/* Refuses the call the way the driver fails: the RM status in the struct
 * and a return value of 0, so CUDA sees an ordinary RM error. The top-level
 * struct is written back whole (the driver copies it out even on error). */
static struct answer refuse_with_status(struct call *c, void *top, size_t status_off,
                                        nv_status_t st, enum gs_verdict v, const char *why)
{
	memcpy((uint8_t *)top + status_off, &st, sizeof(st));
	if (mem_write(c->tid, c->argp, top, c->size) < 0)
		return answer_errno(EFAULT);
	c->d.verdict = v;
	c->d.has_status = true;
	c->d.status = st;
	c->d.reason = why;
	c->audit = true;
	return answer_value(0);
}

/* The driver copies the top-level struct (and, on success, the nested
 * params) back whatever happened; the answer mirrors that. */
static struct answer answer_executed(struct call *c, uint64_t nested_addr, const void *nested,
                                     size_t nested_len, const void *top, size_t top_len, int rc,
                                     nv_status_t st)
{
	if (mem_write2(c->tid, nested_addr, nested, nested_len, c->argp, top, top_len) < 0 && rc == 0)
		rc = -EFAULT;
	c->d.verdict = GS_VERDICT_ALLOW;
	c->d.has_status = true;
	c->d.status = st;
	if (rc < 0)
		c->d.errnum = -rc;
	return answer_value(rc);
}

/* ---- quota --------------------------------------------------------------- */

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return v > UINT64_MAX - (to - 1) ? UINT64_MAX : (v + to - 1) / to * to;
}

/* Would charging bytes on gpu exceed the quota? Before saying yes, release
 * clients whose file was closed: a workload that closed its fd really got
 * its memory back from the driver. */
static bool over_quota(struct gs_sandbox *sb, int gpu, uint64_t bytes)
{
	uint64_t q = sb->quota.mem_per_gpu;

	if (q == GS_QUOTA_UNLIMITED)
		return false;
	if (bytes <= q && ledger_used(&sb->ledger, gpu) <= q - bytes)
		return false;
	gs_sandbox_reconcile(sb);
	return !(bytes <= q && ledger_used(&sb->ledger, gpu) <= q - bytes);
}

static void note_usage(struct call *c, int gpu, uint64_t before)
{
	c->d.gpu = gpu;
	c->d.has_usage = true;
	c->d.usage_before = before;
	c->d.usage_after = ledger_used(&c->sb->ledger, gpu);
	c->d.quota = c->sb->quota.mem_per_gpu;
}

/* Counted resources (channels, channel groups) in the decision record. */
static void note_count(struct call *c, const char *resource, uint32_t before, uint32_t after,
                       uint32_t limit)
{
	c->d.resource = resource;
	c->d.has_usage = true;
	c->d.usage_before = before;
	c->d.usage_after = after;
	c->d.quota = limit;
	c->audit = true;
}

/* ---- RM_ALLOC ------------------------------------------------------------ */

/* Writes the pointer fields of an RM_ALLOC top-level buffer. */
static void alloc_set_ptrs(void *top, uint32_t size, uint64_t params, uint64_t rights)
{
	if (size == sizeof(struct nvos64)) {
		struct nvos64 *p = top;
		p->p_alloc_parms = params;
		p->p_rights_requested = rights;
	} else {
		((struct nvos21 *)top)->p_alloc_parms = params;
	}
}

static nv_handle_t alloc_new_handle(const void *top, uint32_t size)
{
	return size == sizeof(struct nvos64) ? ((const struct nvos64 *)top)->h_object_new
	                                     : ((const struct nvos21 *)top)->h_object_new;
}

static struct answer handle_alloc(struct call *c)
{
	struct gs_sandbox *sb = c->sb;
	uint8_t top[sizeof(struct nvos64)];
	uint32_t rights = 0;
	struct rm_alloc_view v;
	const struct rm_class_info *ci;
	size_t st_off = rm_alloc_status_offset(c->size);
	uint32_t psize;
	int gpu = LEDGER_NO_GPU;
	uint64_t before = 0, want = 0;
	uint32_t out_psize = 0;

	if (mem_read(c->tid, c->argp, top, c->size) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(sb))
		return answer_none();
	rm_alloc_view_from(top, c->size, &v);
	c->d.has_class = true;
	c->d.cls = v.h_class;
	c->d.h_client = v.h_root;
	c->d.h_object = v.h_new;

	/* Serialized params are an opaque second format the decoder cannot
	 * check; refuse rather than let the driver read what we did not. */
	if (v.is_nvos64 && (v.flags & NVOS64_FLAGS_FINN_SERIALIZED))
		return refuse_with_status(c, top, st_off, NV_ERR_NOT_SUPPORTED, GS_VERDICT_REFUSE,
		                          "FINN-serialized alloc params are not allowed");

	/* A client made by the supervisor would carry the supervisor's pid, and
	 * UVM would then refuse the workload's use of it (rm-abi.md 6.2). It
	 * must run in the workload. This is the one RM_ALLOC we continue;
	 * SECURITY.md explains what that leaves open. Through XFER the inner
	 * escape number sits in memory, so it cannot be continued at all. */
	if (rm_class_is_client(v.h_class)) {
		c->d.verdict = GS_VERDICT_CONTINUE;
		c->d.reason = "client allocation runs in the workload's context";
		c->audit = true;
		if (c->via_xfer)
			return refuse_with_status(c, top, st_off, NV_ERR_NOT_SUPPORTED,
			                          GS_VERDICT_REFUSE,
			                          "client allocation through XFER cannot be continued safely");
		/* What the kernel copies after our answer may be rewritten into
		 * another RM_ALLOC. It can only succeed under a client that
		 * lives on this same control file (RM's strict client
		 * validation). So a client is continued only on a control file
		 * that has none, live or being created: then a rewritten call
		 * has no client to allocate under. CUDA opens a control file
		 * per client, so it never meets this rule. */
		if (!fd_is_control_file(c->dup))
			return refuse_with_status(c, top, st_off, NV_ERR_NOT_SUPPORTED,
			                          GS_VERDICT_REFUSE,
			                          "client allocation outside the control file");
		gs_sandbox_reconcile(sb);
		int f = ledger_file_of(&sb->ledger, c->dup);
		if (f < 0)
			return refuse_with_status(c, top, st_off, NV_ERR_NOT_SUPPORTED,
			                          GS_VERDICT_REFUSE,
			                          "cannot identify the open file (kcmp, epoll)");
		if (sb->ledger.files[f].has_client)
			return refuse_with_status(c, top, st_off, NV_ERR_NOT_SUPPORTED,
			                          GS_VERDICT_REFUSE,
			                          "one client per open control file: open /dev/nvidiactl again");
		sb->ledger.files[f].has_client = true;
		return answer_continue();
	}

	ci = rm_class_lookup(v.h_class);
	/* Performed here, these would act on the supervisor: pin its pages,
	 * follow pointers into its memory, read fds from its table. */
	if (ci && ci->kind == RM_CLASS_PROCESS_BOUND)
		return refuse_with_status(c, top, st_off, NV_ERR_NOT_SUPPORTED, GS_VERDICT_REFUSE,
		                          "class bound to the calling process");
	if (!ci && v.p_params)
		return refuse_with_status(c, top, st_off, NV_ERR_INVALID_CLASS, GS_VERDICT_REFUSE,
		                          "class unknown to gpusandbox: its params cannot be copied");
	psize = (ci && v.p_params) ? ci->params_size : 0;
	if (psize > NV_RMAPI_MAX_PARAMS_SIZE)
		return refuse_with_status(c, top, st_off, NV_ERR_INVALID_ARGUMENT, GS_VERDICT_REFUSE,
		                          "class params larger than the driver allows");
	if (psize && mem_read(c->tid, v.p_params, sb->params, psize) < 0)
		return refuse_with_status(c, top, st_off, NV_ERR_INVALID_ARGUMENT, GS_VERDICT_REFUSE,
		                          "alloc params are not readable");
	if (v.is_nvos64 && v.p_rights &&
	    mem_read(c->tid, v.p_rights, &rights, NV_RS_ACCESS_MASK_SIZE) < 0)
		return refuse_with_status(c, top, st_off, NV_ERR_INVALID_ARGUMENT, GS_VERDICT_REFUSE,
		                          "access rights are not readable");

	if (ci && ci->kind == RM_CLASS_VIDMEM) {
		const struct nv_memory_allocation_params *mp = (const void *)sb->params;
		/* The driver requires these params; without them there is no
		 * size to charge, so refuse rather than guess. */
		if (!psize)
			return refuse_with_status(c, top, st_off, NV_ERR_INVALID_ARGUMENT, GS_VERDICT_REFUSE,
			                          "video memory allocation without params");
		if (bind_client_for_charge(c, v.h_root) < 0)
			return refuse_with_status(c, top, st_off, NV_ERR_NO_MEMORY, GS_VERDICT_REFUSE,
			                          "supervisor out of memory");
		c->d.has_size = true;
		c->d.size = mp->size;
		gpu = ledger_gpu_of(&sb->ledger, v.h_root, v.h_parent);
		c->d.gpu = gpu;
		c->audit = true;
		/* Video memory must be attributable to a GPU to be charged;
		 * a parent the sandbox never saw created is refused. */
		if (gpu < 0 || (unsigned)gpu >= GS_MAX_GPUS)
			return refuse_with_status(c, top, st_off, NV_ERR_INVALID_OBJECT_PARENT,
			                          GS_VERDICT_REFUSE,
			                          "video memory under a parent that is not a known device");
		before = ledger_used(&sb->ledger, gpu);
		want = round_up(c->d.size, VIDMEM_GRANULE);
		if (over_quota(sb, gpu, want)) {
			note_usage(c, gpu, ledger_used(&sb->ledger, gpu));
			return refuse_with_status(c, top, st_off, NV_ERR_NO_MEMORY, GS_VERDICT_DENY,
			                          "video memory quota exceeded");
		}
		before = ledger_used(&sb->ledger, gpu);
	}

	/* Channels and channel groups come from a finite hardware pool; the
	 * class and the parent were read once, from our copy. */
	if (ci && (ci->kind == RM_CLASS_CHANNEL || ci->kind == RM_CLASS_CHANNEL_GROUP)) {
		bool group = ci->kind == RM_CLASS_CHANNEL_GROUP;
		uint32_t live = group ? sb->ledger.channel_groups : sb->ledger.channels;
		uint32_t limit = group ? sb->quota.channel_groups : sb->quota.channels;
		note_count(c, group ? "channel_groups" : "channels", live, live, limit);
		if (live >= limit) {
			gs_sandbox_reconcile(sb);
			live = group ? sb->ledger.channel_groups : sb->ledger.channels;
		}
		if (live >= limit)
			return refuse_with_status(c, top, st_off, NV_ERR_INSUFFICIENT_RESOURCES,
			                          GS_VERDICT_DENY,
			                          group ? "channel group quota exceeded"
			                                : "channel quota exceeded");
	}

	/* Our copy now points at our buffers; the driver never sees the
	 * workload's pointers. */
	alloc_set_ptrs(top, c->size, psize ? (uintptr_t)sb->params : 0,
	               v.p_rights ? (uintptr_t)&rights : 0);
	struct borrowed_fds gpu_nodes = { .n = 0 };
	if (ci && ci->kind == RM_CLASS_DEVICE)
		borrow_gpu_nodes(c, &gpu_nodes);
	int rc = exec_escape(c, NV_ESC_RM_ALLOC, c->size, top);
	nv_status_t st;
	memcpy(&st, top + st_off, sizeof(st));
	/* Other per-GPU objects may want the same proof of access; borrow only
	 * when the driver asks for it, to keep the common path cheap. */
	if (rc == 0 && st == NV_ERR_INSUFFICIENT_PERMISSIONS && !gpu_nodes.n && ci &&
	    ci->kind == RM_CLASS_SUBDEVICE) {
		borrow_gpu_nodes(c, &gpu_nodes);
		if (gpu_nodes.n) {
			memcpy(top + st_off, &(nv_status_t){ NV_OK }, sizeof(st));
			rc = exec_escape(c, NV_ESC_RM_ALLOC, c->size, top);
			memcpy(&st, top + st_off, sizeof(st));
		}
	}
	return_gpu_nodes(&gpu_nodes);

	if (rc == 0 && st == NV_OK) {
		nv_handle_t h_new = alloc_new_handle(top, c->size);
		enum rm_class_kind kind = ci ? ci->kind : RM_CLASS_OTHER;
		uint64_t bytes = 0;
		int obj_gpu = gpu;

		c->d.h_object = h_new;
		note_client(c, v.h_root);
		if (kind == RM_CLASS_VIDMEM) {
			/* Charge what the driver granted, not what was asked. */
			bytes = ((const struct nv_memory_allocation_params *)(const void *)sb->params)->size;
			if (bytes < c->d.size)
				bytes = want;
			if (over_quota(sb, gpu, bytes)) {
				undo_alloc(c, v.h_root, v.h_parent, h_new);
				alloc_set_ptrs(top, c->size, v.p_params, v.p_rights);
				note_usage(c, gpu, before);
				return refuse_with_status(c, top, st_off, NV_ERR_NO_MEMORY, GS_VERDICT_DENY,
				                          "video memory quota exceeded (driver rounding)");
			}
		} else if (kind == RM_CLASS_DEVICE) {
			obj_gpu = psize ? (int)((const struct nv0080_alloc_params *)(const void *)sb->params)->device_id : 0;
		}
		if (ledger_add(&sb->ledger, v.h_root, v.h_parent, h_new, kind, v.h_class, obj_gpu, bytes) < 0) {
			/* Without a ledger entry the charge would be lost: undo. */
			undo_alloc(c, v.h_root, v.h_parent, h_new);
			alloc_set_ptrs(top, c->size, v.p_params, v.p_rights);
			return refuse_with_status(c, top, st_off, NV_ERR_NO_MEMORY, GS_VERDICT_REFUSE,
			                          "supervisor out of memory");
		}
		if (kind == RM_CLASS_VIDMEM) {
			c->d.size = bytes;
			note_usage(c, gpu, before);
		} else if (kind == RM_CLASS_CHANNEL || kind == RM_CLASS_CHANNEL_GROUP) {
			c->d.usage_after = kind == RM_CLASS_CHANNEL ? sb->ledger.channels
			                                            : sb->ledger.channel_groups;
		}
		/* The driver copies nested params out only on success. */
		out_psize = psize;
	} else if (ci && ci->kind == RM_CLASS_VIDMEM) {
		note_usage(c, gpu, before);
	}
	alloc_set_ptrs(top, c->size, v.p_params, v.p_rights);
	return answer_executed(c, v.p_params, sb->params, out_psize, top, c->size, rc, st);
}

/* ---- RM_ALLOC_OBJECT (legacy, no params) -------------------------------- */

static struct answer handle_alloc_object(struct call *c)
{
	struct nvos05 top;
	const struct rm_class_info *ci;
	const size_t st_off = offsetof(struct nvos05, status);

	if (mem_read(c->tid, c->argp, &top, sizeof(top)) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(c->sb))
		return answer_none();
	c->d.has_class = true;
	c->d.cls = top.h_class;
	c->d.h_client = top.h_root;
	ci = rm_class_lookup(top.h_class);
	/* Neither a client (it would be the supervisor's) nor video memory
	 * (no size to charge) may be made through this path. */
	if (rm_class_is_client(top.h_class) ||
	    (ci && (ci->kind == RM_CLASS_VIDMEM || ci->kind == RM_CLASS_PROCESS_BOUND)))
		return refuse_with_status(c, &top, st_off, NV_ERR_INVALID_CLASS, GS_VERDICT_REFUSE,
		                          "class not allowed through RM_ALLOC_OBJECT");
	int rc = exec_escape(c, NV_ESC_RM_ALLOC_OBJECT, sizeof(top), &top);
	if (rc == 0 && top.status == NV_OK && note_client(c, top.h_root) == 0)
		(void)ledger_add(&c->sb->ledger, top.h_root, top.h_object_parent, top.h_object_new,
		                 ci ? ci->kind : RM_CLASS_OTHER, top.h_class, LEDGER_NO_GPU, 0);
	return answer_executed(c, 0, NULL, 0, &top, sizeof(top), rc, top.status);
}

/* ---- RM_FREE ------------------------------------------------------------- */

static void note_release(struct call *c, const uint64_t released[GS_MAX_GPUS],
                         const uint64_t before[GS_MAX_GPUS])
{
	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		if (!released[g])
			continue;
		c->d.has_size = true;
		c->d.size = released[g];
		note_usage(c, (int)g, before[g]);
		c->audit = true;
		return; /* one record per call; objects sit under one GPU */
	}
}

static struct answer handle_free(struct call *c)
{
	struct nvos00 top;
	uint64_t released[GS_MAX_GPUS] = { 0 };
	uint64_t before[GS_MAX_GPUS];

	if (mem_read(c->tid, c->argp, &top, sizeof(top)) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(c->sb))
		return answer_none();
	c->d.h_client = top.h_root;
	c->d.h_object = top.h_object_old;
	memcpy(before, c->sb->ledger.used, sizeof(before));
	/* We free exactly the handle in our copy, so the ledger releases what
	 * the driver released even if the workload rewrites the struct. */
	int rc = exec_escape(c, NV_ESC_RM_FREE, sizeof(top), &top);
	if (rc == 0 && top.status == NV_OK) {
		ledger_free(&c->sb->ledger, top.h_root, top.h_object_old, released);
		/* The file's client is gone: it may host a new one. */
		if (top.h_object_old == top.h_root) {
			int f = ledger_file_of(&c->sb->ledger, c->dup);
			if (f >= 0)
				c->sb->ledger.files[f].has_client = false;
		}
	}
	if (mem_write(c->tid, c->argp, &top, sizeof(top)) < 0 && rc == 0)
		rc = -EFAULT;
	c->d.verdict = GS_VERDICT_ALLOW;
	c->d.has_status = true;
	c->d.status = top.status;
	note_release(c, released, before);
	return answer_value(rc);
}

/* ---- RM_CONTROL ---------------------------------------------------------- */

struct relocation {
	uint64_t orig;   /* the workload's pointer */
	size_t   bytes;  /* how much we copied */
};

static int read_u32_at(const uint8_t *buf, size_t len, size_t off, uint32_t *v)
{
	if (off + sizeof(*v) > len)
		return -1;
	memcpy(v, buf + off, sizeof(*v));
	return 0;
}

/* Copies the lists a control's params point to into our buffers and points
 * our copy of the params at them. Returns an RM status. */
static nv_status_t relocate_embedded(struct call *c, const struct rm_ctrl_info *ci,
                                     uint32_t psize, struct relocation rel[RM_EMBEDDED_MAX_PTRS])
{
	uint8_t *p = c->sb->params;

	for (unsigned i = 0; ci && i < ci->n_embedded && i < RM_EMBEDDED_MAX_PTRS; i++) {
		const struct rm_embedded_ptr *e = &ci->embedded[i];
		uint64_t ptr;
		uint32_t count;

		rel[i].orig = 0;
		rel[i].bytes = 0;
		if ((size_t)e->ptr_offset + sizeof(ptr) > psize)
			return NV_ERR_INVALID_ARGUMENT;
		memcpy(&ptr, p + e->ptr_offset, sizeof(ptr));
		if (e->count_offset == RM_EMBEDDED_FIXED_COUNT)
			count = e->fixed_count;
		else if (read_u32_at(p, psize, e->count_offset, &count) < 0)
			return NV_ERR_INVALID_ARGUMENT;
		if (!ptr || !count)
			continue;
		/* Bound by the driver's own limit and our buffer. */
		if ((e->max_count && count > e->max_count) ||
		    (uint64_t)count * e->elem_size > NV_RMAPI_MAX_PARAMS_SIZE)
			return NV_ERR_INVALID_ARGUMENT;
		rel[i].orig = ptr;
		rel[i].bytes = (size_t)count * e->elem_size;
		if (mem_read(c->tid, ptr, c->sb->embedded[i], rel[i].bytes) < 0)
			return NV_ERR_INVALID_ARGUMENT;
		uint64_t ours = (uintptr_t)c->sb->embedded[i];
		memcpy(p + e->ptr_offset, &ours, sizeof(ours));
	}
	return NV_OK;
}

static void restore_embedded(struct call *c, const struct rm_ctrl_info *ci,
                             const struct relocation rel[RM_EMBEDDED_MAX_PTRS], bool copy_out)
{
	for (unsigned i = 0; ci && i < ci->n_embedded && i < RM_EMBEDDED_MAX_PTRS; i++) {
		if (!rel[i].orig)
			continue;
		memcpy(c->sb->params + ci->embedded[i].ptr_offset, &rel[i].orig, sizeof(rel[i].orig));
		if (copy_out)
			(void)mem_write(c->tid, rel[i].orig, c->sb->embedded[i], rel[i].bytes);
	}
}

/* ---- what the workload is told about memory ------------------------------ */

#define KIB 1024u

/* Rewrites the FB report so the workload sees a card the size of its
 * quota: sizes become min(real, quota), free becomes min(real free,
 * quota - used). CUDA reads TOTAL_RAM_SIZE at init and HEAP_FREE,
 * HEAP_SIZE for cudaMemGetInfo; nvidia-smi reads the same (design.md 1.7). */
static void virtualize_fb_list(const struct call *c, struct nv2080_fb_info_entry *list, uint32_t n,
                               int gpu)
{
	uint64_t quota = c->sb->quota.mem_per_gpu;
	uint64_t used = gpu >= 0 ? ledger_used(&c->sb->ledger, gpu) : 0;
	uint32_t quota_kib, free_kib;

	if (quota == GS_QUOTA_UNLIMITED)
		return;
	quota_kib = quota / KIB > UINT32_MAX ? UINT32_MAX : (uint32_t)(quota / KIB);
	free_kib = used >= quota ? 0 : (uint32_t)((quota - used) / KIB > UINT32_MAX ? UINT32_MAX
	                                                                             : (quota - used) / KIB);
	for (uint32_t i = 0; i < n && i < NV2080_CTRL_FB_INFO_MAX_LIST_SIZE; i++) {
		switch (list[i].index) {
		case NV2080_CTRL_FB_INFO_INDEX_RAM_SIZE:
		case NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE:
		case NV2080_CTRL_FB_INFO_INDEX_HEAP_SIZE:
		case NV2080_CTRL_FB_INFO_INDEX_MAPPABLE_HEAP_SIZE:
		case NV2080_CTRL_FB_INFO_INDEX_USABLE_RAM_SIZE:
			if (list[i].data > quota_kib)
				list[i].data = quota_kib;
			break;
		case NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE:
			if (list[i].data > free_kib)
				list[i].data = free_kib;
			break;
		default:
			break;
		}
	}
}

/* After the driver answered a control, and before anything goes back to
 * the workload: adjust the memory report, and record channel-group
 * scheduling. Works on our copies only. */
static void after_control(struct call *c, const struct nvos54 *top, uint32_t psize)
{
	struct gs_sandbox *sb = c->sb;

	switch (top->cmd) {
	case NV2080_CTRL_CMD_FB_GET_INFO_V2:
		if (psize >= sizeof(struct nv2080_fb_get_info_v2_params)) {
			struct nv2080_fb_get_info_v2_params *p = (void *)sb->params;
			virtualize_fb_list(c, p->list, p->list_size,
			                   ledger_gpu_of(&sb->ledger, top->h_client, top->h_object));
		}
		break;
	case NV2080_CTRL_CMD_FB_GET_INFO:
		/* The list was relocated into embedded[0] (rm_tables.c). */
		if (psize >= sizeof(struct nv2080_fb_get_info_v1_params)) {
			const struct nv2080_fb_get_info_v1_params *p = (const void *)sb->params;
			virtualize_fb_list(c, (struct nv2080_fb_info_entry *)(void *)sb->embedded[0],
			                   p->list_size,
			                   ledger_gpu_of(&sb->ledger, top->h_client, top->h_object));
		}
		break;
	case NVA06C_CTRL_CMD_GPFIFO_SCHEDULE:
		if (psize >= sizeof(struct nva06c_gpfifo_schedule_params)) {
			const struct nva06c_gpfifo_schedule_params *p = (const void *)sb->params;
			uint32_t before = sb->ledger.scheduled_groups;
			ledger_set_scheduled(&sb->ledger, top->h_client, top->h_object, p->enable != 0);
			note_count(c, "scheduled_channel_groups", before, sb->ledger.scheduled_groups,
			           GS_COUNT_UNLIMITED);
		}
		break;
	default:
		break;
	}
}

static struct answer handle_control(struct call *c)
{
	struct nvos54 top;
	struct relocation rel[RM_EMBEDDED_MAX_PTRS] = { { 0, 0 } };
	const size_t st_off = offsetof(struct nvos54, status);
	const struct rm_ctrl_info *ci;
	uint64_t user_params;
	uint32_t psize;

	if (mem_read(c->tid, c->argp, &top, sizeof(top)) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(c->sb))
		return answer_none();
	c->d.has_control = true;
	c->d.control = top.cmd;
	c->d.h_client = top.h_client;
	c->d.h_object = top.h_object;

	if (top.flags & NVOS54_FLAGS_FINN_SERIALIZED)
		return refuse_with_status(c, &top, st_off, NV_ERR_NOT_SUPPORTED, GS_VERDICT_REFUSE,
		                          "FINN-serialized control params are not allowed");
	/* Bit 15 selects the legacy GSS path: opaque bytes forwarded without
	 * the CPU-side client check (rm-abi.md 2.1). Only the commands CUDA
	 * needs are allowed, and only on a client the driver has already
	 * accepted from this sandbox's own file, so the missing check cannot
	 * be used to reach another process's client. */
	if (top.cmd & NV_CTRL_GSS_LEGACY_MASK) {
		if (!gs_legacy_control_allowed(top.cmd))
			return refuse_with_status(c, &top, st_off, NV_ERR_NOT_SUPPORTED,
			                          GS_VERDICT_REFUSE,
			                          "legacy (bit 15) control command not allowed");
		if (!ledger_has(&c->sb->ledger, top.h_client, top.h_client))
			return refuse_with_status(c, &top, st_off, NV_ERR_INVALID_CLIENT,
			                          GS_VERDICT_REFUSE,
			                          "legacy control on a client not seen in this sandbox");
	}
	/* A control whose pointers we cannot relocate would make the driver
	 * read or write the supervisor's memory at a workload-chosen address. */
	if (rm_ctrl_has_unrelocatable_pointers(top.cmd))
		return refuse_with_status(c, &top, st_off, NV_ERR_NOT_SUPPORTED, GS_VERDICT_REFUSE,
		                          "control with pointers gpusandbox cannot relocate");
	if (top.params_size > NV_RMAPI_MAX_PARAMS_SIZE)
		return refuse_with_status(c, &top, st_off, NV_ERR_INVALID_ARGUMENT, GS_VERDICT_REFUSE,
		                          "control params larger than the driver allows");
	user_params = top.params;
	psize = user_params ? top.params_size : 0;
	if (psize && mem_read(c->tid, user_params, c->sb->params, psize) < 0)
		return refuse_with_status(c, &top, st_off, NV_ERR_INVALID_ARGUMENT, GS_VERDICT_REFUSE,
		                          "control params are not readable");
	ci = rm_ctrl_lookup(top.cmd);
	nv_status_t rst = relocate_embedded(c, ci, psize, rel);
	if (rst != NV_OK) {
		restore_embedded(c, ci, rel, false);
		return refuse_with_status(c, &top, st_off, rst, GS_VERDICT_REFUSE,
		                          "embedded control list is not readable or too large");
	}
	top.params = psize ? (uintptr_t)c->sb->params : 0;
	int rc = exec_escape(c, NV_ESC_RM_CONTROL, sizeof(top), &top);
	if (rc == 0 && top.status == NV_OK) {
		note_client(c, top.h_client);
		after_control(c, &top, psize);
	}
	top.params = user_params;
	restore_embedded(c, ci, rel, true);
	/* Our buffer holds whatever the driver copied out (or the inputs it
	 * left alone), so writing it back mirrors the driver either way. */
	return answer_executed(c, user_params, c->sb->params, psize, &top, sizeof(top), rc, top.status);
}

/* ---- RM_DUP_OBJECT ------------------------------------------------------- */

static struct answer handle_dup(struct call *c)
{
	struct nvos55 top;

	if (mem_read(c->tid, c->argp, &top, sizeof(top)) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(c->sb))
		return answer_none();
	c->d.h_client = top.h_client;
	c->d.h_object = top.h_object_src;
	int rc = exec_escape(c, NV_ESC_RM_DUP_OBJECT, sizeof(top), &top);
	/* The dup keeps the source's memory alive: the ledger counts handles
	 * per allocation and releases the bytes with the last one. */
	if (rc == 0 && top.status == NV_OK &&
	    (note_client(c, top.h_client) < 0 || ledger_dup(&c->sb->ledger, top.h_client, top.h_parent, top.h_object, top.h_client_src,
	               top.h_object_src) < 0)) {
		undo_alloc(c, top.h_client, top.h_parent, top.h_object);
		return refuse_with_status(c, &top, offsetof(struct nvos55, status), NV_ERR_NO_MEMORY,
		                          GS_VERDICT_REFUSE, "supervisor out of memory");
	}
	return answer_executed(c, 0, NULL, 0, &top, sizeof(top), rc, top.status);
}

/* ---- RM_VID_HEAP_CONTROL --------------------------------------------------- */

static struct answer handle_vid_heap(struct call *c)
{
	struct gs_sandbox *sb = c->sb;
	struct nvos32 top;
	const size_t st_off = offsetof(struct nvos32, status);
	uint64_t released[GS_MAX_GPUS] = { 0 }, before_all[GS_MAX_GPUS];
	uint64_t before = 0, want = 0;
	bool vidmem = false;
	int gpu = LEDGER_NO_GPU;

	if (mem_read(c->tid, c->argp, &top, sizeof(top)) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(sb))
		return answer_none();
	c->d.h_client = top.h_root;

	switch (top.function) {
	case NVOS32_FUNCTION_ALLOC_SIZE: {
		enum rm_mem_place place = rm_mem_place_of(top.data.alloc_size.flags,
		                                          top.data.alloc_size.attr,
		                                          top.data.alloc_size.attr2);
		vidmem = place == RM_MEM_VIDMEM;
		c->d.has_class = true;
		c->d.cls = vidmem ? NV01_MEMORY_LOCAL_USER : NV01_MEMORY_SYSTEM;
		c->d.has_size = true;
		c->d.size = top.data.alloc_size.size;
		if (!vidmem)
			break;
		c->audit = true;
		if (bind_client_for_charge(c, top.h_root) < 0)
			return refuse_with_status(c, &top, st_off, NV_ERR_NO_MEMORY, GS_VERDICT_REFUSE,
			                          "supervisor out of memory");
		gpu = ledger_gpu_of(&sb->ledger, top.h_root, top.h_object_parent);
		if (gpu < 0 || (unsigned)gpu >= GS_MAX_GPUS)
			return refuse_with_status(c, &top, st_off, NV_ERR_INVALID_OBJECT_PARENT,
			                          GS_VERDICT_REFUSE,
			                          "video memory under a parent that is not a known device");
		want = round_up(top.data.alloc_size.size, VIDMEM_GRANULE);
		if (over_quota(sb, gpu, want)) {
			note_usage(c, gpu, ledger_used(&sb->ledger, gpu));
			return refuse_with_status(c, &top, st_off, NV_ERR_NO_MEMORY, GS_VERDICT_DENY,
			                          "video memory quota exceeded");
		}
		before = ledger_used(&sb->ledger, gpu);
		break;
	}
	case NVOS32_FUNCTION_FREE:
	case NVOS32_FUNCTION_INFO:
	case NVOS32_FUNCTION_GET_MEM_ALIGNMENT:
		break;
	default:
		/* The other functions use union layouts we do not decode, or pin
		 * the caller's pages (ALLOC_OS_DESCRIPTOR), which cannot run
		 * from the supervisor nor be continued safely. */
		return refuse_with_status(c, &top, st_off, NV_ERR_NOT_SUPPORTED, GS_VERDICT_REFUSE,
		                          "VID_HEAP_CONTROL function not supported by gpusandbox");
	}
	memcpy(before_all, sb->ledger.used, sizeof(before_all));
	int rc = exec_escape(c, NV_ESC_RM_VID_HEAP_CONTROL, sizeof(top), &top);
	if (rc == 0 && top.status == NV_OK) {
		(void)note_client(c, top.h_root);
		if (top.function == NVOS32_FUNCTION_ALLOC_SIZE) {
			nv_handle_t h = top.data.alloc_size.h_memory;
			uint64_t bytes = vidmem ? top.data.alloc_size.size : 0;
			if (vidmem && bytes < c->d.size)
				bytes = want;
			if (vidmem && over_quota(sb, gpu, bytes)) {
				undo_alloc(c, top.h_root, top.h_object_parent, h);
				note_usage(c, gpu, before);
				return refuse_with_status(c, &top, st_off, NV_ERR_NO_MEMORY, GS_VERDICT_DENY,
				                          "video memory quota exceeded (driver rounding)");
			}
			if (ledger_add(&sb->ledger, top.h_root, top.h_object_parent, h,
			               vidmem ? RM_CLASS_VIDMEM : RM_CLASS_SYSMEM, c->d.cls,
			               gpu, bytes) < 0) {
				undo_alloc(c, top.h_root, top.h_object_parent, h);
				return refuse_with_status(c, &top, st_off, NV_ERR_NO_MEMORY,
				                          GS_VERDICT_REFUSE, "supervisor out of memory");
			}
			c->d.h_object = h;
			if (vidmem) {
				c->d.size = bytes;
				note_usage(c, gpu, before);
			}
		} else if (top.function == NVOS32_FUNCTION_FREE) {
			c->d.h_object = top.data.free.h_memory;
			ledger_free(&sb->ledger, top.h_root, top.data.free.h_memory, released);
			note_release(c, released, before_all);
		}
	}
	return answer_executed(c, 0, NULL, 0, &top, sizeof(top), rc, top.status);
}

/* ---- flat escapes (RM_SHARE) --------------------------------------------- */

static struct answer handle_flat(struct call *c)
{
	uint8_t top[NV_ABSOLUTE_MAX_IOCTL_SIZE];

	if (c->size > sizeof(top))
		return answer_errno(EINVAL);
	if (mem_read(c->tid, c->argp, top, c->size) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(c->sb))
		return answer_none();
	int rc = exec_escape(c, c->nr, c->size, top);
	if (mem_write(c->tid, c->argp, top, c->size) < 0 && rc == 0)
		rc = -EFAULT;
	c->d.verdict = GS_VERDICT_ALLOW;
	return answer_value(rc);
}

/* ---- REGISTER_FD ---------------------------------------------------------- */

struct nv_ioctl_register_fd {
	int32_t ctl_fd;
};
_Static_assert(sizeof(struct nv_ioctl_register_fd) == 4, "REGISTER_FD size");

/* Both fds are resolved once, into our own table: the call's file (our
 * dup) and the control file it names (another dup), so another thread's
 * dup2() cannot swap either after we looked. A control file may not be
 * linked to another: it would then reach that file's clients. */
static struct answer handle_register_fd(struct call *c)
{
	struct nv_ioctl_register_fd top;
	int ctl;

	if (mem_read(c->tid, c->argp, &top, sizeof(top)) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(c->sb))
		return answer_none();
	c->d.call = "REGISTER_FD";
	if (fd_is_control_file(c->dup)) {
		c->d.verdict = GS_VERDICT_REFUSE;
		c->d.reason = "a control file may not be linked to another";
		c->d.errnum = EINVAL;
		c->audit = true;
		return answer_errno(EINVAL);
	}
	ctl = dup_workload_fd(c->sb, c->tid, top.ctl_fd);
	if (ctl < 0)
		return answer_errno(EBADF);
	struct nv_ioctl_register_fd ours = { .ctl_fd = ctl };
	int rc = exec_escape(c, NV_ESC_REGISTER_FD, sizeof(ours), &ours);
	close(ctl);
	c->d.verdict = GS_VERDICT_ALLOW;
	return answer_value(rc);
}

/* ---- dispatch ------------------------------------------------------------ */

static struct answer dispatch(struct call *c, const struct rm_escape *e)
{
	c->d.call = e->name;
	switch (e->action) {
	case RM_ACT_EXEC_ALLOC:        return handle_alloc(c);
	case RM_ACT_EXEC_ALLOC_OBJECT: return handle_alloc_object(c);
	case RM_ACT_EXEC_FREE:         return handle_free(c);
	case RM_ACT_EXEC_CONTROL:      return handle_control(c);
	case RM_ACT_EXEC_DUP:          return handle_dup(c);
	case RM_ACT_EXEC_VID_HEAP:     return handle_vid_heap(c);
	case RM_ACT_EXEC_FLAT:         return handle_flat(c);
	case RM_ACT_EXEC_REGISTER_FD:  return handle_register_fd(c);
	case RM_ACT_CONTINUE:
	case RM_ACT_XFER:
	case RM_ACT_REFUSE:
		break;
	}
	return answer_errno(EINVAL);
}

/* XFER carries the real escape number in memory, where the workload can
 * change it after we looked. So the inner call is always performed by us
 * (never continued): the driver would otherwise read a different escape. */
static struct answer handle_xfer(struct call *c)
{
	struct nv_ioctl_xfer x;
	const struct rm_escape *inner;

	if (mem_read(c->tid, c->argp, &x, sizeof(x)) < 0)
		return answer_errno(EFAULT);
	if (!notif_still_valid(c->sb))
		return answer_none();
	inner = rm_escape_find(x.cmd);
	c->d.call = "IOCTL_XFER_CMD";
	/* The driver itself rejects these shapes with -EINVAL. */
	if (x.size > NV_ABSOLUTE_MAX_IOCTL_SIZE || !inner || !rm_escape_size_ok(inner, x.size) ||
	    inner->action == RM_ACT_XFER)
		return answer_errno(EINVAL);
	if (inner->action == RM_ACT_CONTINUE || inner->action == RM_ACT_REFUSE) {
		c->d.call = inner->name;
		c->d.verdict = GS_VERDICT_REFUSE;
		c->d.reason = "escape cannot be performed by the supervisor and XFER cannot be continued";
		c->d.errnum = EINVAL;
		c->audit = true;
		return answer_errno(EINVAL);
	}
	c->via_xfer = true;
	c->nr = x.cmd;
	c->size = x.size;
	c->argp = x.ptr;
	return dispatch(c, inner);
}

static void trace_call(const struct call *c, const struct answer *a)
{
	FILE *f = c->sb->trace;
	const char *sname = c->d.has_status ? rm_status_name(c->d.status) : NULL;

	fprintf(f, "[gpusandbox %d] %s%s(", (int)c->tid, c->via_xfer ? "XFER:" : "", c->d.call);
	if (c->d.h_client)
		fprintf(f, "hClient=0x%x", c->d.h_client);
	if (c->d.h_object)
		fprintf(f, ", hObject=0x%x", c->d.h_object);
	if (c->d.has_class) {
		const struct rm_class_info *ci = rm_class_lookup(c->d.cls);
		fprintf(f, ", class=0x%x%s%s", c->d.cls, ci && ci->name ? " " : "",
		        ci && ci->name ? ci->name : "");
	}
	if (c->d.has_control) {
		const struct rm_ctrl_info *ci = rm_ctrl_lookup(c->d.control);
		fprintf(f, ", cmd=0x%x%s%s", c->d.control, ci && ci->name ? " " : "",
		        ci && ci->name ? ci->name : "");
	}
	if (c->d.has_size)
		fprintf(f, ", size=%llu", (unsigned long long)c->d.size);
	fprintf(f, ")");
	if (a->kind == ANSWER_CONTINUE)
		fprintf(f, " = ? [continue]");
	else if (a->error)
		fprintf(f, " = -1 %s", strerrorname_np(a->error));
	else if (c->d.has_status)
		fprintf(f, " = 0 %s%s0x%x", sname ? sname : "", sname ? " " : "", c->d.status);
	else
		fprintf(f, " = 0");
	fprintf(f, " [%s", gs_verdict_name(c->d.verdict));
	if (c->d.has_usage) {
		char u[32], q[32];
		fprintf(f, ", gpu%d %s/%s", c->d.gpu, gs_format_size(c->d.usage_after, u, sizeof(u)),
		        gs_format_size(c->d.quota, q, sizeof(q)));
	}
	if (c->d.reason)
		fprintf(f, ": %s", c->d.reason);
	fprintf(f, "]\n");
}

static void count_verdict(struct gs_sandbox *sb, const struct call *c, const struct answer *a)
{
	switch (a->kind == ANSWER_CONTINUE ? GS_VERDICT_CONTINUE : c->d.verdict) {
	case GS_VERDICT_DENY: sb->counts[GS_COUNT_DENIED]++; break;
	case GS_VERDICT_REFUSE: sb->counts[GS_COUNT_REFUSED]++; break;
	case GS_VERDICT_CONTINUE: sb->counts[GS_COUNT_CONTINUED]++; break;
	default: sb->counts[GS_COUNT_ALLOWED]++; break;
	}
}

static const struct gs_abi *abi_of(const struct seccomp_data *data)
{
	const struct gs_abi *abi = gs_abi_find(data->arch);

#if defined(__x86_64__)
	/* x32 shares the x86_64 audit arch; its numbers carry the x32 bit. */
	if (abi && data->arch == gs_abi_at(0)->audit_arch && (data->nr & __X32_SYSCALL_BIT)) {
		for (unsigned i = 0; i < gs_abi_count(); i++)
			if (gs_abi_at(i)->ioctl_nr == data->nr)
				return gs_abi_at(i);
		return NULL;
	}
#endif
	return abi;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void gs_execute_ioctl(struct gs_sandbox *sb)
{
	uint64_t t0 = sb->profile ? mono_ns() : 0;
	const struct seccomp_data *data = &sb->req->data;
	struct call c = { .sb = sb, .tid = (pid_t)sb->req->pid, .dup = -1 };
	struct answer a;
	const struct rm_escape *e;
	uint32_t cmd;

	c.d.gpu = LEDGER_NO_GPU;
	c.abi = abi_of(data);
	/* The filter traps only ioctl; anything else here is a filter bug, and
	 * a bug must not let a call through. */
	if (!c.abi || data->nr != c.abi->ioctl_nr) {
		a = answer_errno(ENOSYS);
		goto send;
	}
	c.wfd = (int)data->args[0];
	cmd = (uint32_t)data->args[1]; /* the kernel's cmd is an unsigned int */
	c.argp = c.abi->ptr32 ? (data->args[2] & PTR32_MASK) : data->args[2];
	c.nr = NV_IOC_NR(cmd);
	c.size = NV_IOC_SIZE(cmd);
	e = rm_escape_find(c.nr);
	/* A word with no size bits is not an RM escape: UVM's commands are
	 * plain integers (33, 42, 74, ...) and some share a trapped low byte;
	 * the RM driver itself rejects a size-0 escape. */
	if (!e || e->action == RM_ACT_CONTINUE || c.size == 0) {
		a = answer_continue();
		goto send;
	}
	c.dup = dup_workload_fd(sb, c.tid, c.wfd);
	if (c.dup < 0) {
		/* EBADF: the fd is not open, as the kernel would have said.
		 * Anything else (no right to the task): fail closed. */
		a = answer_errno(errno == EBADF ? EBADF : EPERM);
		goto send;
	}
	/* Another device's ioctl that merely shares the low byte. */
	if (!fd_is_nvidia_like(sb, c.dup)) {
		a = answer_continue();
		goto send;
	}
	/* An escape we cannot decode (a size the driver does not take for it)
	 * is refused, as the driver would refuse it, never continued. */
	if (!rm_escape_size_ok(e, c.size)) {
		c.d.call = e->name;
		c.d.verdict = GS_VERDICT_REFUSE;
		c.d.reason = "escape with a size the driver does not accept";
		c.d.errnum = EINVAL;
		c.audit = true;
		a = answer_errno(EINVAL);
	} else {
		a = e->action == RM_ACT_XFER ? handle_xfer(&c) : dispatch(&c, e);
	}
	if (a.kind == ANSWER_NONE)
		goto done;
	count_verdict(sb, &c, &a);
	if (c.audit && sb->audit) {
		c.d.tid = c.tid;
		if (gs_audit_decision(sb->audit, &c.d) < 0)
			sb->audit_failed = true;
	}
	if (sb->trace)
		trace_call(&c, &a);
send:
	/* Drop our reference to the workload's file before it runs again. */
	if (c.dup >= 0)
		close(c.dup);
	sb->resp->id = sb->req->id;
	sb->resp->flags = a.kind == ANSWER_CONTINUE ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
	sb->resp->val = a.kind == ANSWER_CONTINUE ? 0 : a.val;
	sb->resp->error = a.kind == ANSWER_CONTINUE ? 0 : -a.error;
	/* Stop the clock before answering: with synchronous wake-up the
	 * answer runs the workload on this CPU before SEND returns. */
	if (sb->profile) {
		sb->prof_ns[c.nr & 0xff] += mono_ns() - t0;
		sb->prof_n[c.nr & 0xff]++;
	}
	/* ENOENT: the task died or was interrupted meanwhile; nothing to do. */
	(void)ioctl(sb->listener, SECCOMP_IOCTL_NOTIF_SEND, sb->resp);
	return;
done:
	if (c.dup >= 0)
		close(c.dup);
}
