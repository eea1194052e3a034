/* SPDX-License-Identifier: MIT */
/*
 * fake_fuse.c - gs-fakedrv: the fake NVIDIA driver as a FUSE filesystem.
 *
 *   gs-fakedrv [--vidmem BYTES[k|m|g]] [--gpus N] [--channels N]
 *              [--die-with-parent] [-d] MOUNTPOINT
 *
 * The mount holds regular files nvidiactl, nvidia0 (nvidia1 with --gpus 2),
 * nvidia-uvm and a read-only stats file. with-fake-nvidia bind-mounts them
 * over /dev/nvidia* in a private mount namespace. The kernel hands FUSE
 * "restricted" ioctls on regular files: it copies _IOC_SIZE(cmd) bytes in
 * when the word says _IOC_WRITE and out when it says _IOC_READ. The real
 * driver ignores the direction bits (rm-abi.md 1.1), so for words that lack
 * them we move the argument ourselves through the caller's memory.
 *
 * The loop is single-threaded on purpose: requests are served in the order
 * the kernel queued them, so a stats read that follows a close() sees the
 * release of that file (FUSE sends releases asynchronously but queues them
 * before close() returns).
 */
#define FUSE_USE_VERSION 35
#define _GNU_SOURCE
#include <errno.h>
#include <fuse_lowlevel.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fake_rm.h"
#include "nvuvm_abi.h"

enum fake_ino {
	INO_ROOT = FUSE_ROOT_ID,
	INO_CTL,
	INO_GPU0,
	INO_GPU1,
	INO_UVM,
	INO_STATS,
	INO_END,
};

enum node_kind { N_DIR, N_CTL, N_GPU, N_UVM, N_STATS };

struct node {
	fuse_ino_t     ino;
	const char    *name;
	enum node_kind kind;
	mode_t         mode;
};

static const struct node nodes[] = {
	{ INO_ROOT,  ".",          N_DIR,   S_IFDIR | 0755 },
	{ INO_CTL,   "nvidiactl",  N_CTL,   S_IFREG | 0666 },
	{ INO_GPU0,  "nvidia0",    N_GPU,   S_IFREG | 0666 },
	{ INO_GPU1,  "nvidia1",    N_GPU,   S_IFREG | 0666 },
	{ INO_UVM,   "nvidia-uvm", N_UVM,   S_IFREG | 0666 },
	{ INO_STATS, "stats",      N_STATS, S_IFREG | 0444 },
};
#define N_NODES (sizeof(nodes) / sizeof(nodes[0]))

/* Cache lifetime for entries and attributes: the tree never changes. */
#define FAKE_ATTR_TIMEOUT 3600.0
#define FAKE_STATS_CAP    8192u
#define FAKE_DIRBUF_CAP   1024u

static time_t start_time;

static struct fake_config cfg = {
	.vidmem = FAKE_DEFAULT_VIDMEM,
	.gpus = 1,
	.channels = FAKE_DEFAULT_CHANNELS,
	.driver_version = FAKE_DEFAULT_DRIVER_VERSION,
	.engines = FAKE_DEFAULT_ENGINES,
};

/* One per open(): the identity RM binds clients to. */
struct open_file {
	uint64_t       id;
	enum node_kind kind;
	char          *snap;   /* stats: the snapshot taken at open */
	size_t         snap_len;
};
static uint64_t next_file_id = 1;

unsigned long fake_ctl_node_ino(void)
{
	return (unsigned long)INO_CTL;
}

unsigned long fake_gpu_node_ino(int gpu)
{
	return (unsigned long)INO_GPU0 + (unsigned long)gpu;
}

static const struct node *node_of(fuse_ino_t ino)
{
	if (ino == INO_GPU1 && cfg.gpus < 2)
		return NULL;
	for (size_t i = 0; i < N_NODES; i++)
		if (nodes[i].ino == ino)
			return &nodes[i];
	return NULL;
}

static void fill_attr(const struct node *n, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_mode = n->mode;
	st->st_nlink = n->kind == N_DIR ? 2 : 1;
	/* Size 0 like /proc files; reads are direct and go to EOF. */
	st->st_size = 0;
	st->st_atime = st->st_mtime = st->st_ctime = start_time;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (parent != INO_ROOT) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	for (fuse_ino_t ino = INO_CTL; ino < INO_END; ino++) {
		const struct node *n = node_of(ino);
		if (n && strcmp(n->name, name) == 0) {
			struct fuse_entry_param e;
			memset(&e, 0, sizeof(e));
			e.ino = ino;
			e.attr_timeout = FAKE_ATTR_TIMEOUT;
			e.entry_timeout = FAKE_ATTR_TIMEOUT;
			fill_attr(n, &e.attr);
			fuse_reply_entry(req, &e);
			return;
		}
	}
	fuse_reply_err(req, ENOENT);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	const struct node *n = node_of(ino);
	if (!n) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	struct stat st;
	fill_attr(n, &st);
	fuse_reply_attr(req, &st, FAKE_ATTR_TIMEOUT);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)fi;
	if (ino != INO_ROOT) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	/* The listing: ".", "..", then the files. off is the index of the
	 * next entry to return. */
	const char *names[N_NODES + 1];
	fuse_ino_t inos[N_NODES + 1];
	size_t count = 0;
	names[count] = ".";
	inos[count++] = INO_ROOT;
	names[count] = "..";
	inos[count++] = INO_ROOT;
	for (fuse_ino_t i = INO_CTL; i < INO_END; i++) {
		const struct node *n = node_of(i);
		if (n) {
			names[count] = n->name;
			inos[count++] = i;
		}
	}
	char buf[FAKE_DIRBUF_CAP];
	size_t cap = size < sizeof(buf) ? size : sizeof(buf), len = 0;
	for (size_t i = off > 0 ? (size_t)off : 0; i < count; i++) {
		struct stat st;
		fill_attr(node_of(inos[i]), &st);
		size_t need = fuse_add_direntry(req, NULL, 0, names[i], NULL, 0);
		if (len + need > cap)
			break;
		fuse_add_direntry(req, buf + len, cap - len, names[i], &st, (off_t)(i + 1));
		len += need;
	}
	fuse_reply_buf(req, buf, len);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	const struct node *n = node_of(ino);
	if (!n || n->kind == N_DIR) {
		fuse_reply_err(req, n ? EISDIR : ENOENT);
		return;
	}
	if (n->kind == N_STATS && (fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EACCES);
		return;
	}
	struct open_file *of = calloc(1, sizeof(*of));
	if (!of) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	of->id = next_file_id++;
	of->kind = n->kind;
	if (n->kind == N_STATS) {
		of->snap = malloc(FAKE_STATS_CAP);
		if (!of->snap) {
			free(of);
			fuse_reply_err(req, ENOMEM);
			return;
		}
		of->snap_len = fake_rm_format_stats(of->snap, FAKE_STATS_CAP);
	} else {
		fake_rm_file_opened();
	}
	fi->fh = (uint64_t)(uintptr_t)of;
	fi->direct_io = 1;
	fi->nonseekable = n->kind != N_STATS;
	if (fuse_reply_open(req, fi) == -ENOENT) {
		/* The opener was interrupted: no release will follow. */
		if (n->kind != N_STATS)
			fake_rm_file_closed();
		free(of->snap);
		free(of);
	}
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)ino;
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	if (of->kind != N_STATS) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	size_t start = off > 0 ? (size_t)off : 0;
	if (start >= of->snap_len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	size_t n = of->snap_len - start;
	fuse_reply_buf(req, of->snap + start, n < size ? n : size);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
		     off_t off, struct fuse_file_info *fi)
{
	(void)ino, (void)buf, (void)size, (void)off, (void)fi;
	fuse_reply_err(req, EINVAL);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	if (of->kind != N_STATS) {
		/* A UVM file's VA space goes with its last reference too
		 * (its ranges' mappings drop their memory references). */
		if (of->kind == N_UVM)
			fake_uvm_release_file(of->id);
		fake_rm_release_file(of->id);
		fake_rm_file_closed();
	}
	free(of->snap);
	free(of);
	fuse_reply_err(req, 0);
}

/* FUSE sends FLUSH at every close(2) of a descriptor of the file (not
 * only the last): with --count-closes the fake counts those of its device
 * files (fd_closes), which is how a test sees how many dups of a
 * workload's file the supervisor took and dropped. Otherwise refused: the
 * kernel then sends no FLUSH again (no round trip per close). */
static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;

	if (!cfg.count_closes) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	if (of->kind != N_STATS)
		fake_rm_fd_closed();
	fuse_reply_err(req, 0);
}

/* The real driver reports no events on an idle file. Answering poll keeps
 * epoll registrations (the supervisor uses one per open file) quiet instead
 * of the "always ready" default FUSE gives without a poll op. */
static void op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	(void)ino, (void)fi;
	if (ph)
		fuse_pollhandle_destroy(ph);
	fuse_reply_poll(req, 0);
}

/* --slow-control CMD:MS, a test knob (no driver behaviour): the answer to
 * RM_CONTROL CMD goes back MS ms late, from a thread of its own, while the
 * loop serves every other request, as calls of two processes overlap in
 * the real driver. The call itself is done at once; only the reply waits. */
static uint32_t slow_cmd;
static unsigned slow_ms;

struct late_reply {
	fuse_req_t req;
	int        rc;
	uint8_t   *buf;
	size_t     size;
};

static void *reply_late(void *arg)
{
	struct late_reply *l = arg;

	usleep(slow_ms * 1000u);
	fake_rm_late_reply(-1);
	fuse_reply_ioctl(l->req, l->rc, l->buf, l->size);
	free(l->buf);
	free(l);
	return NULL;
}

/* True when the reply was handed to a late thread (which owns buf then). */
static bool replied_late(fuse_req_t req, unsigned nr, int rc, uint8_t *buf, size_t size)
{
	struct late_reply *l;
	pthread_t t;

	if (!slow_ms || nr != NV_ESC_RM_CONTROL || size != sizeof(struct nvos54) ||
	    ((const struct nvos54 *)(const void *)buf)->cmd != slow_cmd)
		return false;
	l = malloc(sizeof(*l));
	if (!l)
		return false;
	*l = (struct late_reply){ req, rc, buf, size };
	fake_rm_late_reply(+1);
	if (pthread_create(&t, NULL, reply_late, l) != 0) {
		fake_rm_late_reply(-1);
		free(l);
		return false;
	}
	pthread_detach(t);
	return true;
}

/* --register-late-ms: the reply to a UVM_REGISTER_CHANNEL answered late
 * (fake_uvm_register_late). */
static void reply_uvm_late(void *ctx, int err)
{
	fuse_req_t req = ctx;

	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_ioctl(req, 0, NULL, 0);
}

static void op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		     struct fuse_file_info *fi, unsigned flags, const void *in_buf,
		     size_t in_bufsz, size_t out_bufsz)
{
	(void)ino;
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	if ((flags & FUSE_IOCTL_DIR) || of->kind == N_STATS) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	pid_t pid = fuse_req_ctx(req)->pid;
	uint64_t addr = (uint64_t)(uintptr_t)arg;
	fake_rm_note_ioctl_overlap();
	/* The caller's security token is its euid and pid (fake_share.c):
	 * FUSE's uid is the thread's fsuid, which follows its euid. */
	fake_set_req_euid(fuse_req_ctx(req)->uid);

	if (of->kind == N_UVM) {
		/* UVM commands are plain integers: no size bits, no data.
		 * The modelled ones (fake_uvm.c) move their params through
		 * the caller's memory, as the module's copy_from_user and
		 * copy_to_user do. For the rest, anything a forged word made
		 * the kernel copy goes back as it came, and rmStatus stays
		 * whatever the caller left. */
		fake_rm_uvm_ioctl();
		if (cmd == UVM_REGISTER_CHANNEL && fake_uvm_register_late(pid, of->id, addr, reply_uvm_late, req))
			return;
		if (fake_uvm_models(cmd)) {
			int rc = fake_uvm_ioctl(pid, of->id, cmd, addr);
			if (rc < 0)
				fuse_reply_err(req, -rc);
			else
				fuse_reply_ioctl(req, 0, NULL, 0);
			return;
		}
		fuse_reply_ioctl(req, 0, in_buf, in_bufsz < out_bufsz ? in_bufsz : out_bufsz);
		return;
	}

	size_t size = NV_IOC_SIZE(cmd);
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (in_bufsz >= size)
		memcpy(buf, in_buf, size);
	else if (fake_mem_read(pid, addr, buf, size)) {
		free(buf);
		fuse_reply_err(req, EFAULT);
		return;
	}
	struct fake_caller who = { .pid = pid, .file = of->id, .ctl = of->kind == N_CTL };
	int rc = fake_rm_ioctl(&who, NV_IOC_NR(cmd), buf, size);
	if (rc < 0) {
		fuse_reply_err(req, -rc);
	} else if (out_bufsz >= size) {
		if (replied_late(req, NV_IOC_NR(cmd), rc, buf, size))
			return;
		fuse_reply_ioctl(req, rc, buf, size);
	} else if (fake_mem_write(pid, addr, buf, size)) {
		/* The driver copies the argument out whatever the word's
		 * direction bits say. */
		fuse_reply_err(req, EFAULT);
	} else {
		fuse_reply_ioctl(req, rc, NULL, 0);
	}
	free(buf);
}

/* Releases travel through FUSE's background queue, which holds only
 * max_background requests in flight; the rest wait behind it while a later
 * synchronous request (the stats open) overtakes them. A large limit keeps
 * "close, then read stats" ordered even when a process dies with many files
 * open. */
#define FAKE_MAX_BACKGROUND 4096u
/* The largest errno the kernel takes from a FUSE reply (fuse_dev_do_write
 * refuses -512 and below). */
#define FAKE_MAX_ERRNO 511u

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	conn->max_background = FAKE_MAX_BACKGROUND;
	conn->congestion_threshold = FAKE_MAX_BACKGROUND;
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.readdir = op_readdir,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.release = op_release,
	.flush = op_flush,
	.poll = op_poll,
	.ioctl = op_ioctl,
};

/* ---- command line ------------------------------------------------------- */

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || s[0] == '-')
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'b' || *end == 'B')  /* "GiB", "GB" */
		end += (*end == 'i' && (end[1] == 'B' || end[1] == 'b')) ? 2 : 1;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_uint(const char *s, unsigned max, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [--vidmem BYTES[k|m|g]] [--gpus 1|2] [--channels N] [--busy-lag-ms N]\n"
		"          [--fail-disable-after N] [--driver-version V] [--alloc-errno N] [--handle-zero]\n"
		"          [--slow-control CMD:MS] [--alloc-sleep-ms N] [--map-sleep-ms N]\n"
		"          [--register-late-ms N]\n"
		"          [--count-closes] [--gpu-node-check] [--semaphores-32bit] [--semsurf-any-memory]\n"
		"          [--clock FILE] [--die-with-parent] [-d] MOUNTPOINT\n"
		"  --vidmem    video memory per GPU (default 16g)\n"
		"  --gpus      number of GPUs, nvidia0..nvidiaN-1 (default 1, max %u)\n"
		"  --channels  channel pool and channel-group pool per GPU (default %u)\n"
		"  --busy-lag-ms  modelled work drains this long after a channel is disabled\n"
		"  --fail-disable-after N  FIFO_DISABLE_CHANNELS(off) fails after N calls\n"
		"  --driver-version V  the version CHECK_VERSION_STR answers (default %s); the\n"
		"              fake plays V's branch with gpusandbox's tables (include/nvrm/v*/)\n"
		"  --reverse-instances  GPU g is device instance gpus-1-g (attached last first)\n"
		"  --alloc-errno N  every video memory RM_ALLOC fails with errno N (1-511)\n"
		"  --handle-zero  a handle the fake picks is 0 while 0 is free\n"
		"  --slow-control CMD:MS  RM_CONTROL CMD (hex) is answered MS ms late while\n"
		"              other requests are served (a test knob)\n"
		"  --alloc-sleep-ms N  the first video memory RM_ALLOC takes N ms\n"
		"  --map-sleep-ms N  the first UVM_MAP_EXTERNAL_ALLOCATION takes N ms\n"
		"  --register-late-ms N  the first UVM_REGISTER_CHANNEL retains the channel at\n"
		"              once and records the registration N ms later, while other\n"
		"              requests are served (a test knob)\n"
		"  --count-closes  count every close(2) of a device file's descriptor\n"
		"              (stats: fd_closes; a test knob)\n"
		"  --gpu-node-check  a device allocation needs the caller to hold the\n"
		"              GPU's node, as nv_is_gpu_accessible (stats:\n"
		"              device_node_grants, device_node_refusals,\n"
		"              device_unentitled_grants)\n"
		"  --semaphores-32bit  GPUs with 32-bit semaphores (TU10x, TU11x, GA100): a\n"
		"              semaphore surface takes a hMaxSubmittedMem\n"
		"  --semsurf-any-memory  a semaphore surface takes memory of any location,\n"
		"              not only sysmem (no released driver does; a test knob)\n"
		"  --die-with-parent  exit when the parent process dies\n"
		"  --no-egm    no EGM: VID_HEAP_CONTROL's EGM bit is ignored (535 and 595\n"
		"              ignore it anyway)\n"
		"  --engines LIST  the video engines each GPU lists in GET_ENGINES_V2:\n"
		"              nvdec=N,nvenc=N,nvjpg=N,ofa=N (default an H200's: 7, 0, 7, 1),\n"
		"              or none (the control fails NOT_SUPPORTED)\n"
		"  --untimed-samples  utilization samples are stamped on a clock\n"
		"              TIMER_GET_TIME does not read (CLOCK_MONOTONIC, not PTIMER)\n"
		"  --clock FILE  time is the test's clock kept in FILE (include/test_clock.h),\n"
		"              not CLOCK_MONOTONIC: the busy model, its samples, now_ms\n"
		"  -d          FUSE debug output\n"
		"Runs in the foreground until unmounted or signalled.\n",
		prog, FAKE_MAX_GPUS, FAKE_DEFAULT_CHANNELS, FAKE_DEFAULT_DRIVER_VERSION);
}

int main(int argc, char **argv)
{
	enum { OPT_VIDMEM = 1, OPT_GPUS, OPT_CHANNELS, OPT_DIE_WITH_PARENT, OPT_LAG, OPT_FAIL_DISABLE,
	       OPT_DRIVER_VERSION, OPT_REVERSE_INSTANCES, OPT_NO_EGM, OPT_ALLOC_ERRNO, OPT_HANDLE_ZERO,
	       OPT_SLOW_CONTROL, OPT_ALLOC_SLEEP, OPT_UNTIMED_SAMPLES, OPT_COUNT_CLOSES,
	       OPT_GPU_NODE_CHECK, OPT_MAP_SLEEP, OPT_REGISTER_LATE, OPT_SEMAPHORES_32BIT,
	       OPT_SEMSURF_ANY_MEMORY, OPT_ENGINES, OPT_CLOCK };
	static const struct option longopts[] = {
		{ "vidmem", required_argument, NULL, OPT_VIDMEM },
		{ "gpus", required_argument, NULL, OPT_GPUS },
		{ "channels", required_argument, NULL, OPT_CHANNELS },
		{ "die-with-parent", no_argument, NULL, OPT_DIE_WITH_PARENT },
		{ "no-egm", no_argument, NULL, OPT_NO_EGM },
		{ "untimed-samples", no_argument, NULL, OPT_UNTIMED_SAMPLES },
		{ "busy-lag-ms", required_argument, NULL, OPT_LAG },
		{ "fail-disable-after", required_argument, NULL, OPT_FAIL_DISABLE },
		{ "driver-version", required_argument, NULL, OPT_DRIVER_VERSION },
		{ "reverse-instances", no_argument, NULL, OPT_REVERSE_INSTANCES },
		{ "alloc-errno", required_argument, NULL, OPT_ALLOC_ERRNO },
		{ "handle-zero", no_argument, NULL, OPT_HANDLE_ZERO },
		{ "count-closes", no_argument, NULL, OPT_COUNT_CLOSES },
		{ "gpu-node-check", no_argument, NULL, OPT_GPU_NODE_CHECK },
		{ "semaphores-32bit", no_argument, NULL, OPT_SEMAPHORES_32BIT },
		{ "semsurf-any-memory", no_argument, NULL, OPT_SEMSURF_ANY_MEMORY },
		{ "slow-control", required_argument, NULL, OPT_SLOW_CONTROL },
		{ "alloc-sleep-ms", required_argument, NULL, OPT_ALLOC_SLEEP },
		{ "map-sleep-ms", required_argument, NULL, OPT_MAP_SLEEP },
		{ "register-late-ms", required_argument, NULL, OPT_REGISTER_LATE },
		{ "engines", required_argument, NULL, OPT_ENGINES },
		{ "clock", required_argument, NULL, OPT_CLOCK },
		{ "foreground", no_argument, NULL, 'f' },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool debug = false, die_with_parent = false;
	int opt;
	while ((opt = getopt_long(argc, argv, "fdh", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_VIDMEM:
			if (parse_size(optarg, &cfg.vidmem)) {
				fprintf(stderr, "gs-fakedrv: bad --vidmem '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_GPUS:
			if (parse_uint(optarg, FAKE_MAX_GPUS, &cfg.gpus) || cfg.gpus == 0) {
				fprintf(stderr, "gs-fakedrv: --gpus must be 1..%u\n", FAKE_MAX_GPUS);
				return 2;
			}
			break;
		case OPT_CHANNELS:
			if (parse_uint(optarg, UINT_MAX, &cfg.channels)) {
				fprintf(stderr, "gs-fakedrv: bad --channels '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_DIE_WITH_PARENT:
			die_with_parent = true;
			break;
		case OPT_UNTIMED_SAMPLES:
			cfg.untimed_samples = true;
			break;
		case OPT_CLOCK:
			cfg.clock = gs_test_clock_map(optarg);
			if (!cfg.clock) {
				fprintf(stderr, "gs-fakedrv: --clock %s: %s\n", optarg, strerror(errno));
				return 2;
			}
			break;
		case OPT_NO_EGM:
			cfg.no_egm = true;
			break;
		case OPT_LAG:
		case OPT_FAIL_DISABLE:
			if (parse_uint(optarg, UINT_MAX, opt == OPT_LAG ? &cfg.busy_lag_ms
			                                                 : &cfg.fail_disable_after)) {
				fprintf(stderr, "gs-fakedrv: bad count '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_DRIVER_VERSION:
			if (strlen(optarg) >= sizeof(cfg.driver_version)) {
				fprintf(stderr, "gs-fakedrv: --driver-version too long\n");
				return 2;
			}
			strcpy(cfg.driver_version, optarg);
			break;
		case OPT_REVERSE_INSTANCES:
			cfg.reverse_instances = true;
			break;
		case OPT_ALLOC_ERRNO:
			/* FUSE passes errors below 512 to the caller. */
			if (parse_uint(optarg, FAKE_MAX_ERRNO, &cfg.alloc_errno) || !cfg.alloc_errno) {
				fprintf(stderr, "gs-fakedrv: bad --alloc-errno '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_HANDLE_ZERO:
			cfg.handle_zero = true;
			break;
		case OPT_COUNT_CLOSES:
			cfg.count_closes = true;
			break;
		case OPT_GPU_NODE_CHECK:
			cfg.gpu_node_check = true;
			break;
		case OPT_SEMAPHORES_32BIT:
			cfg.semaphores_32bit = true;
			break;
		case OPT_SEMSURF_ANY_MEMORY:
			cfg.semsurf_any_memory = true;
			break;
		case OPT_ENGINES:
			if (fake_parse_engines(optarg, &cfg)) {
				fprintf(stderr, "gs-fakedrv: bad --engines '%s' (nvdec=N,nvenc=N,nvjpg=N,ofa=N or none)\n",
				        optarg);
				return 2;
			}
			break;
		case OPT_SLOW_CONTROL:
			if (sscanf(optarg, "%x:%u", &slow_cmd, &slow_ms) != 2 || !slow_ms) {
				fprintf(stderr, "gs-fakedrv: bad --slow-control '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_ALLOC_SLEEP:
			if (parse_uint(optarg, UINT_MAX, &cfg.alloc_sleep_ms)) {
				fprintf(stderr, "gs-fakedrv: bad --alloc-sleep-ms '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_MAP_SLEEP:
			if (parse_uint(optarg, UINT_MAX, &cfg.map_sleep_ms)) {
				fprintf(stderr, "gs-fakedrv: bad --map-sleep-ms '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_REGISTER_LATE:
			if (parse_uint(optarg, UINT_MAX, &cfg.register_late_ms)) {
				fprintf(stderr, "gs-fakedrv: bad --register-late-ms '%s'\n", optarg);
				return 2;
			}
			break;
		case 'f':
			break;  /* always in the foreground */
		case 'd':
			debug = true;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr, argv[0]);
		return 2;
	}
	const char *mnt = argv[optind];
	/* A runner killed with SIGKILL cannot clean up; without this the fake
	 * would live on in its orphaned mount namespace. */
	if (die_with_parent) {
		pid_t parent = getppid();
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
			return 1;
	}
	fake_rm_init(&cfg);
	start_time = time(NULL);

	/* allow_other: the workload may run as another user (e.g. nobody),
	 * and FUSE refuses every other uid's calls without it. */
	char *fargv[] = { argv[0], "-o", "allow_other,default_permissions,fsname=gs-fakedrv,subtype=gs-fakedrv",
			  debug ? "-d" : NULL, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(debug ? 4 : 3, fargv);
	struct fuse_session *se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se) {
		fprintf(stderr, "gs-fakedrv: cannot create FUSE session\n");
		return 1;
	}
	int rc = 1;
	if (fuse_set_signal_handlers(se) != 0)
		goto out_destroy;
	char real[PATH_MAX];
	bool have_real = realpath(mnt, real) != NULL;
	if (fuse_session_mount(se, mnt) != 0) {
		fprintf(stderr, "gs-fakedrv: cannot mount on %s\n", mnt);
		goto out_signals;
	}
	if (have_real)
		fake_nodes_learn_mount(real);
	rc = fuse_session_loop(se) < 0 ? 1 : 0;
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_destroy:
	fuse_session_destroy(se);
	fuse_opt_free_args(&args);
	return rc;
}
