/* SPDX-License-Identifier: MIT */
/*
 * workload.c - the workload's memory and fds, as seen from the supervisor.
 * See workload.h for what belongs here, and executor.c for the rule these
 * helpers serve (copy, decide on the copy, perform through a dup).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "detached.h"
#include "driver.h"
#include "nvuvm_abi.h"
#include "proc_dir.h"
#include "workload.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

#define NVIDIA_PATH_PREFIX "/dev/nvidia"
#define UVM_DEVICE_PATH "/dev/nvidia-uvm"
#define PATH_BUF 256

void gs_pidfd_cache_init(struct gs_pidfd_cache *pc)
{
	for (unsigned i = 0; i < GS_PIDFD_CACHE; i++)
		pc->slot[i] = (struct gs_pidfd_slot){ .tid = 0, .pidfd = -1 };
	pthread_mutex_init(&pc->parked_lock, NULL);
	pc->n_parked = 0;
}

/* ---- parked dups (workload.h, struct gs_pidfd_cache) ----------------------- */

struct closing {
	unsigned n;
	int      fd[];
};

static void *close_them(void *arg)
{
	struct closing *c = arg;

	for (unsigned i = 0; i < c->n; i++)
		close(c->fd[i]);
	free(c);
	return NULL;
}

/* Closes n fds from a detached thread: whoever serves them may keep that
 * thread, never the caller. Closed here when no thread can be made (the
 * rare case keeps the old wait rather than a leak). */
static void close_detached(const int *fds, unsigned n)
{
	struct closing *c = n ? malloc(sizeof(*c) + n * sizeof(int)) : NULL;

	if (!c) {
		for (unsigned i = 0; i < n; i++)
			close(fds[i]);
		return;
	}
	c->n = n;
	memcpy(c->fd, fds, n * sizeof(int));
	if (gs_spawn_detached(close_them, c) != 0)
		(void)close_them(c);
}

static void park_fd(struct gs_pidfd_cache *pc, int fd)
{
	if (pc->test_no_park) {
		close(fd);
		return;
	}
	pthread_mutex_lock(&pc->parked_lock);
	bool kept = pc->n_parked < GS_PARKED_MAX;
	if (kept)
		pc->parked[pc->n_parked++] = fd;
	pthread_mutex_unlock(&pc->parked_lock);
	if (!kept)
		close_detached(&fd, 1);
}

void gs_pidfd_cache_fini(struct gs_pidfd_cache *pc)
{
	for (unsigned i = 0; i < GS_PIDFD_CACHE; i++)
		if (pc->slot[i].pidfd >= 0)
			close(pc->slot[i].pidfd);
	close_detached(pc->parked, pc->n_parked);
	pthread_mutex_destroy(&pc->parked_lock);
	const bool test = pc->test_no_park;
	gs_pidfd_cache_init(pc);
	pc->test_no_park = test;
}

/* ---- memory of the workload ---------------------------------------------- */

/* Accesses of workload memory in flight in this process: the workload can
 * make one wait as long as it likes (a page of a FUSE file it serves),
 * the sandbox lock held meanwhile (off_cache.h). */
static atomic_uint mem_accesses;
/* Counted only on the test clock (gs_workload_count_mem_accesses): two
 * atomic updates of a line every worker shares, per access, are a cost
 * nothing else pays for. */
static atomic_bool count_accesses;

void gs_workload_count_mem_accesses(void)
{
	atomic_store(&count_accesses, true);
}

/* An access begins: counted when the count is on (read once, so that
 * its end takes back exactly what it added). */
static bool access_begin(void)
{
	bool counted = atomic_load_explicit(&count_accesses, memory_order_relaxed);

	if (counted)
		atomic_fetch_add(&mem_accesses, 1);
	return counted;
}

static void access_end(bool counted)
{
	if (counted)
		atomic_fetch_sub(&mem_accesses, 1);
}

unsigned gs_workload_mem_in_flight(void)
{
	return atomic_load(&mem_accesses);
}

static ssize_t counted_readv(pid_t tid, const struct iovec *local, const struct iovec *remote,
                             unsigned long n)
{
	bool counted = access_begin();
	ssize_t got = process_vm_readv(tid, local, n, remote, n, 0);

	access_end(counted);
	return got;
}

int mem_read(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };

	if (len == 0)
		return 0;
	return counted_readv(tid, &local, &remote, 1) == (ssize_t)len ? 0 : -1;
}

int mem_read_parts(pid_t tid, uint64_t addr, void *buf, const struct gs_mem_part *parts,
                   unsigned n)
{
	struct iovec local[GS_MEM_PARTS_MAX], remote[GS_MEM_PARTS_MAX];
	size_t total = 0;

	if (n == 0 || n > GS_MEM_PARTS_MAX)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		local[i] = (struct iovec){ (uint8_t *)buf + parts[i].off, parts[i].len };
		remote[i] = (struct iovec){ (void *)(uintptr_t)(addr + parts[i].off), parts[i].len };
		total += parts[i].len;
	}
	return counted_readv(tid, local, remote, n) == (ssize_t)total ? 0 : -1;
}

/* The top-level struct at addr and the rest of the page its last byte is
 * on, in one process_vm_readv (issue #16: a second level is often on that
 * page, just above the struct on the caller's stack). The window touches
 * no page the struct does not: a fault stops the read early, and only
 * the struct itself must be read whole. Returns the bytes read (at least
 * need) or -1. */
ssize_t mem_read_window(pid_t tid, uint64_t addr, size_t need, void *buf, size_t cap,
                        size_t page)
{
	uint64_t page_end = ((addr + need + page - 1) / page) * page;
	size_t len = page_end - addr < cap ? (size_t)(page_end - addr) : cap;
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t got;

	if (need == 0 || need > cap || addr + need < addr)
		return -1;
	got = counted_readv(tid, &local, &remote, 1);
	return got >= (ssize_t)need ? got : -1;
}

/* The span [*off, *off + *len) of now that differs from before; false when
 * nothing does. */
static bool changed_span(const uint8_t *now, const uint8_t *before, size_t len, size_t *off,
                         size_t *span)
{
	size_t first = 0, last = len;

	while (first < len && now[first] == before[first])
		first++;
	if (first == len)
		return false;
	while (last > first && now[last - 1] == before[last - 1])
		last--;
	*off = first;
	*span = last - first;
	return true;
}

int task_mem_open(pid_t tid, struct gs_task_mem *m)
{
	char path[sizeof("/proc//mem") + 3 * sizeof(pid_t)];

	*m = GS_TASK_MEM_CLOSED;
	m->pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)tid);
	m->fd = open(path, O_RDWR | O_CLOEXEC);
	if (m->fd >= 0)
		return 0;
	int saved = errno;
	task_mem_close(m);
	errno = saved;
	return -1;
}

void task_mem_close(struct gs_task_mem *m)
{
	if (!m->kept) {
		if (m->fd >= 0)
			close(m->fd);
		if (m->pidfd >= 0)
			close(m->pidfd);
	}
	*m = GS_TASK_MEM_CLOSED;
}

/* An address is a file offset of /proc/TID/mem; one the offset type cannot
 * hold is no user address. */
int mem_write(const struct gs_task_mem *m, uint64_t addr, const void *buf, size_t len)
{
	if (len == 0)
		return 0;
	if (m->fd < 0 || addr > (uint64_t)INT64_MAX - len) {
		errno = EFAULT;
		return -1;
	}
	bool counted = access_begin();
	ssize_t put = pwrite(m->fd, buf, len, (off_t)addr);

	access_end(counted);
	return put == (ssize_t)len ? 0 : -1;
}

int mem_write_changed2(const struct gs_task_mem *m, const struct gs_mem_out *a,
                       const struct gs_mem_out *b)
{
	size_t off, span;

	for (const struct gs_mem_out *o = a; o; o = o == a ? b : NULL) {
		if (!o->len)
			continue;
		if (!o->before) {
			off = 0;
			span = o->len;
		} else if (!changed_span(o->now, o->before, o->len, &off, &span)) {
			continue;
		}
		if (mem_write(m, o->addr + off, (const uint8_t *)o->now + off, span) < 0)
			return -1;
	}
	return 0;
}

bool mem_out_changed(const struct gs_mem_out *a, const struct gs_mem_out *b)
{
	size_t off, span;

	for (const struct gs_mem_out *o = a; o; o = o == a ? b : NULL)
		if (o->len && (!o->before || changed_span(o->now, o->before, o->len, &off, &span)))
			return true;
	return false;
}

/* ---- the workload's fd --------------------------------------------------- */

/* A thread pidfd (Linux 6.9+) works for any thread; older kernels accept
 * only a thread-group leader. */
int pidfd_of_task(pid_t tid)
{
	int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);

	if (fd < 0 && errno == EINVAL)
		fd = (int)syscall(SYS_pidfd_open, tid, 0);
	return fd;
}

static int pidfd_for(struct gs_pidfd_cache *pc, pid_t tid, bool fresh)
{
	struct gs_pidfd_slot *s = &pc->slot[(unsigned)tid % GS_PIDFD_CACHE];

	if (!fresh && s->tid == tid && s->pidfd >= 0)
		return s->pidfd;
	if (s->pidfd >= 0)
		close(s->pidfd);
	s->tid = tid;
	s->pidfd = pidfd_of_task(tid);
	return s->pidfd;
}

/* A cached pidfd is safe: it names one task. If that task died and the tid
 * went to a new one, pidfd_getfd fails and we open a fresh pidfd; if it
 * succeeds, the old task is alive, so it is the trapped one (live tids are
 * unique). */
static int getfd_of_task(struct gs_pidfd_cache *pc, pid_t tid, int wfd)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		int pidfd = pidfd_for(pc, tid, attempt > 0);
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

/* The dup, and what it is to the driver; a dup of anything else is
 * parked, never closed here (-1, errno ENODEV). */
static int getfd_of_driver(struct gs_pidfd_cache *pc, pid_t tid, int wfd, enum gs_node_kind *kind)
{
	int fd = getfd_of_task(pc, tid, wfd);

	*kind = fd >= 0 ? fd_node_kind_cached(fd) : GS_NODE_NONE;
	if (fd >= 0 && *kind == GS_NODE_NONE) {
		park_fd(pc, fd);
		errno = ENODEV;
		return -1;
	}
	return fd;
}

/* No lock: a GPU node in our shared table vouches for nothing we perform,
 * every device allocation being made in a private table of its own
 * (private_table.h). The look through /proc comes first, so that a file
 * of another kind (a FUSE file the workload serves) is never dup'ed. */
int dup_workload_fd_kind(struct gs_pidfd_cache *pc, pid_t tid, int wfd, unsigned kinds,
                         enum gs_node_kind *kind)
{
	*kind = task_fd_node_kind_cached(tid, wfd);
	if (!(kinds & GS_NODE_BIT(*kind))) {
		errno = ENODEV;
		return -1;
	}
	return getfd_of_driver(pc, tid, wfd, kind);
}

int dup_workload_fd(struct gs_pidfd_cache *pc, pid_t tid, int wfd)
{
	enum gs_node_kind kind;

	return getfd_of_driver(pc, tid, wfd, &kind);
}

int dup_workload_fd_any(struct gs_pidfd_cache *pc, pid_t tid, int wfd)
{
	return getfd_of_task(pc, tid, wfd);
}

/* The path an fd of process pid (0: ours) is open on, as /proc shows it.
 * Returns false if it cannot be read. */
static bool fd_path(pid_t pid, int fd, char *path, size_t len)
{
	char link[PATH_BUF];
	ssize_t n;

	if (pid)
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, fd);
	else
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, len - 1);
	if (n <= 0)
		return false;
	path[n] = '\0';
	return true;
}

/* fd_node_kind from the attributes the kernel has, without asking the file
 * system (AT_STATX_DONT_SYNC): the workload picks the fd, and a FUSE file
 * whose server stalls getattr would stall the worker (and its sandbox's
 * session lock) before we even know the file is not the driver's. What it
 * reads (type, device, inode, rdev) never changes for an inode. */
static enum gs_node_kind kind_of(const struct statx *sx)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_mode = sx->stx_mode;
	st.st_ino = sx->stx_ino;
	st.st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
	st.st_rdev = makedev(sx->stx_rdev_major, sx->stx_rdev_minor);
	return gs_driver_node_kind(&st, NULL);
}

enum gs_node_kind fd_node_kind_cached(int fd)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &sx) < 0)
		return GS_NODE_NONE;
	return kind_of(&sx);
}

enum gs_node_kind task_fd_node_kind_cached(pid_t tid, int wfd)
{
	char rel[PATH_BUF];
	struct statx sx;

	snprintf(rel, sizeof(rel), "fd/%d", wfd);
	if (gs_task_statx(tid, rel, STATX_TYPE | STATX_INO, &sx) < 0)
		return GS_NODE_NONE;
	return kind_of(&sx);
}

/* What fd is to the driver: the control node, a GPU node, or nothing. Only
 * the driver's own character devices are, or the stand-ins recorded at
 * start for the fake driver (driver_nodes.c): never a file that merely
 * looks like one. What is not the driver is continued, so its answers
 * reach only the workload, never the ledger. A file whose fstat fails (a
 * FUSE server can make it fail) is not the driver either: the driver's
 * own nodes always answer fstat. */
enum gs_node_kind fd_node_kind(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return GS_NODE_NONE;
	return gs_driver_node_kind(&st, NULL);
}

/* Is fd (ours) the UVM device, or a stand-in for it? The real one is the
 * uvm major's minor 0; a stand-in (the FUSE fake) is a regular file or
 * character device at /dev/nvidia-uvm. Fails closed (true): UVM is what
 * managed = deny refuses. */
bool fd_is_uvm(unsigned uvm_major, int fd)
{
	struct stat st;
	char path[PATH_BUF];

	if (fstat(fd, &st) < 0)
		return true;
	if (S_ISCHR(st.st_mode) && uvm_major && major(st.st_rdev) == uvm_major)
		return minor(st.st_rdev) == NV_UVM_DEVICE_MINOR;
	if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
		return false;
	if (!fd_path(0, fd, path, sizeof(path)))
		return true;
	return strcmp(path, UVM_DEVICE_PATH) == 0;
}

/* The control node (/dev/nvidiactl): RM clients live on its open files. */
bool fd_is_control_file(int fd)
{
	return fd_node_kind(fd) == GS_NODE_CTL;
}

/* ---- GPU nodes for device allocations ----------------------------------- */

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

/* Where the driver's device check looks (private_table.c borrows them). */
bool task_fd_is_gpu_node(pid_t tid, int wfd)
{
	char path[PATH_BUF];

	return fd_path(tid, wfd, path, sizeof(path)) && is_gpu_node_path(path);
}
