/* SPDX-License-Identifier: MIT */
/*
 * uvm_ctlfd - a UVM map that names the sandbox's own client and memory,
 * with an rmCtrlFd that is not that client's control file (issue #17
 * item 9).
 *
 * The supervisor performs UVM_MAP_EXTERNAL_ALLOCATION itself: it shares
 * the memory with its own RM client through its dup of the file at
 * rmCtrlFd (exec_uvm.c). That file is the workload's to choose, so it
 * must be checked to be the client's control file before anything is
 * done with it: issued on another file, the share would be an ioctl of
 * the supervisor's on a file the workload may serve itself, which can
 * answer anything, or never.
 *
 *   uvm_ctlfd other  rmCtrlFd is a second /dev/nvidiactl of this process,
 *                    which holds another client
 *   uvm_ctlfd pipe   a pipe, then a regular file (a memfd)
 *   uvm_ctlfd fuse PATH
 *                    a file the workload serves itself: PATH, the file of
 *                    `uvm_ctlfd serve` (below). A second thread makes an
 *                    RM allocation, once the map was issued and
 *                    once the server holds a request of the supervisor's
 *                    or the map has returned (probe_held): a supervisor
 *                    held up by the server would hold it up too; then an
 *                    RM_ALLOC word on PATH itself (rmword_held), continued
 *                    as another file's ioctl, which the supervisor must
 *                    learn without a dup of PATH
 *   uvm_ctlfd race PATH [ROUNDS [until-outside]]
 *                    rmCtrlFd's number names the client's file while a
 *                    second thread dup2()s PATH, the other control file
 *                    and the client's file onto it in turn; the map is
 *                    made ROUNDS times (FLIP_ROUNDS), and on, up to
 *                    FLIP_MORE times as many, until the race has gone both
 *                    ways (a map made, one refused: on a loaded machine
 *                    the flipper may not run for a long while; run.sh
 *                    judges both ways). The supervisor must make no
 *                    ioctl on PATH. When a flip lands between its look at
 *                    the caller's fd table and its dup, it has a dup of
 *                    PATH, which it parks: closed only at the sandbox's
 *                    end, so no map waits for the server's answer to a
 *                    FLUSH (held, judged; the baseline that closes it at
 *                    once, GPUSANDBOX_TEST_NO_PARK, waits for the answer).
 *                    With until-outside the race also goes on (within the
 *                    same bound) until the server has seen a request of
 *                    the supervisor's: the park baseline's attack lands
 *                    only when a flip falls between the look and the
 *                    dup, which a loaded machine may not give in the
 *                    first rounds
 *   uvm_ctlfd serve DIR STATS
 *                    the FUSE server: mounts a one-file file system on DIR
 *                    (its file: ctl) and answers the sandbox's requests at
 *                    once; a request from a task of its own PID namespace,
 *                    outside the sandbox (the supervisor), is counted in
 *                    STATS and, the first one, answered only after
 *                    OWNFS_STALL_MS, as a server that never answers would
 *                    hold the supervisor for ever; STATS says whether
 *                    that answer is still to come (stall_pending) or was
 *                    given (stall_answered). STATS is DIR.stats, beside
 *                    the mount point (the modes find it from PATH)
 *
 * The server is mounted by the harness, outside the sandbox, as
 * tests/sm/stallfs is: a workload can serve such a file from a user
 * namespace of its own where it may open /dev/fuse and map its uid (a
 * non-root workload on a host whose /dev/fuse is 0666, the usual mode),
 * but not here: the tests run the workload as root without capabilities,
 * and a user namespace mapping uid 0 wants CAP_SETFCAP (Linux 5.12 on),
 * and the CI host's /dev/fuse is 0600. The supervisor's ioctls would
 * reach a file served that way when its uid is the server's, as with an
 * unprivileged gpusandbox (FUSE refuses an ioctl from a caller it does
 * not serve: its mounter's uid, or with allow_other its user namespace;
 * fuse_allow_current_process).
 *
 * Each mode but serve then maps with the client's own file (map_ok),
 * frees the memory's handle, and reads the fake's uvm_mappings and
 * gpu0.vidmem_used while it still holds the UVM file (left_mappings,
 * left_used): nothing may stay mapped, nothing held.
 *
 * The driver itself ignores rmCtrlFd here: UVM keeps it with the handles
 * it passes down but dups the memory by client and handle alone
 * (uvm_map_external.c and uvm_common.h, 580.95.05), and the fake does the
 * same. So without gpusandbox every bad map maps (the baseline shows it):
 * the attack has nothing to win from the driver; what it aims at is the
 * supervisor, which must refuse the map without touching the file.
 *
 * Whether a call was held up by the server is told by the server's own
 * account, not by a clock: a call is "held" when the server's late
 * answer was given while it was in flight (stall_answered was 0 when it
 * was issued and 1 when it returned). The late answer is the only one the
 * server holds back, and it is given only to a request from outside the
 * sandbox, so a call held so waited for the supervisor's request to be
 * answered. The durations printed (bad_ms, probe_ms, rmword_ms) are for
 * the reader; nothing is judged on them (a loaded machine stretches them).
 *
 * Prints mode= first= bad= (the bad maps' statuses) map_ok= free=
 * left_mappings= left_used= bad_ms= (the longest bad map) held= (bad maps
 * held) and, for fuse, probe= probe_ms= probe_held= rmword_held=, for
 * race, ok= refused= other= flips=; then SUMMARY. The server's STATS:
 * outside_ioctls, outside_other, stall_pending, stall_answered (key value
 * lines).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "adv.h"

#define HOLD_SIZE (768ull * RMC_MIB)
#define PROBE_SIZE (2ull * RMC_MIB)
#define FLIP_ROUNDS 2000
#define FLIP_MORE 10
#define MS_PER_S 1000
#define NS_PER_MS 1000000L
#define NO_STAT UINT64_MAX

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * MS_PER_S + ts.tv_nsec / NS_PER_MS;
}

/* ---- serve: a one-file FUSE file system --------------------------------- */

#define OWNFS_NAME "ctl"
#define OWNFS_FILE_ID 2
/* The kernel wants a read buffer of at least FUSE_MIN_READ_BUFFER. */
#define OWNFS_BUF (FUSE_MIN_READ_BUFFER + 4096)
#define OWNFS_MAX_WRITE 4096
/* How long the supervisor's first request waits: far above what any
 * call of the test costs, even on a loaded 2-core machine. Later ones
 * are answered at once (only counted), so that a race that wins often
 * still ends. */
#define OWNFS_STALL_MS 5000
#define PATH_BUF 64

static int ownfs_dev;
static const char *ownfs_stats;
static char ownfs_pidns[PATH_BUF];
static unsigned long outside_ioctls, outside_other;
static bool stalled_once;
/* The late answer: pending from its request until given, then answered.
 * Written by the serving thread and the late answer's, under stats_lock. */
static bool stall_pending, stall_answered;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;

static int reply(uint64_t unique, int error, const void *out, size_t len)
{
	struct fuse_out_header h = { .len = (uint32_t)(sizeof(h) + len), .error = error,
	                             .unique = unique };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)out, len } };

	return writev(ownfs_dev, iov, out ? 2 : 1) < 0 ? -1 : 0;
}

static void attr_of(uint64_t id, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = id;
	a->nlink = 1;
	a->mode = id == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0666;
}

static void answer_init(const struct fuse_in_header *in, const void *arg)
{
	const struct fuse_init_in *i = arg;
	struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION, .minor = FUSE_KERNEL_MINOR_VERSION,
	                           .max_readahead = i->max_readahead, .max_write = OWNFS_MAX_WRITE };

	(void)reply(in->unique, 0, &o, sizeof(o));
}

static void answer_lookup(const struct fuse_in_header *in, const char *name)
{
	struct fuse_entry_out e = { .nodeid = OWNFS_FILE_ID, .generation = 1 };

	if (in->nodeid != FUSE_ROOT_ID || strcmp(name, OWNFS_NAME) != 0) {
		(void)reply(in->unique, -ENOENT, NULL, 0);
		return;
	}
	attr_of(OWNFS_FILE_ID, &e.attr);
	(void)reply(in->unique, 0, &e, sizeof(e));
}

/* A file that takes no ioctl. Attributes are never cached (valid 0), so
 * a stat of the supervisor's would come here too. */
static void answer(const struct fuse_in_header *in, const void *arg)
{
	struct fuse_attr_out a = { 0 };
	struct fuse_open_out o = { .fh = 1 };

	switch (in->opcode) {
	case FUSE_INIT:
		answer_init(in, arg);
		return;
	case FUSE_LOOKUP:
		answer_lookup(in, arg);
		return;
	case FUSE_GETATTR:
		attr_of(in->nodeid, &a.attr);
		(void)reply(in->unique, 0, &a, sizeof(a));
		return;
	case FUSE_OPEN:
		(void)reply(in->unique, 0, &o, sizeof(o));
		return;
	case FUSE_FLUSH:
	case FUSE_RELEASE:
		(void)reply(in->unique, 0, NULL, 0);
		return;
	case FUSE_IOCTL:
		(void)reply(in->unique, -ENOTTY, NULL, 0);
		return;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
	case FUSE_DESTROY:
		return; /* no answer is expected (or needed) */
	default:
		(void)reply(in->unique, -ENOSYS, NULL, 0);
	}
}

/* Requests the kernel makes on its own, with no caller's pid in them
 * (INIT at mount time, a release when the last reference goes, whoever
 * dropped it; no caller waits for them): answered like the sandbox's. */
static bool kernel_own(uint32_t opcode)
{
	return opcode == FUSE_INIT || opcode == FUSE_RELEASE || opcode == FUSE_FORGET ||
	       opcode == FUSE_BATCH_FORGET || opcode == FUSE_INTERRUPT || opcode == FUSE_DESTROY;
}

static bool pidns_of(pid_t pid, char *ns, size_t len)
{
	char link[PATH_BUF];
	ssize_t n;

	if (pid)
		snprintf(link, sizeof(link), "/proc/%d/ns/pid", (int)pid);
	else
		snprintf(link, sizeof(link), "/proc/self/ns/pid");
	n = readlink(link, ns, len - 1);
	if (n <= 0)
		return false;
	ns[n] = '\0';
	return true;
}

/* Outside the sandbox: a task of our own PID namespace (FUSE names the
 * caller by its pid there), or one that cannot be told (gone by now). */
static bool from_outside(const struct fuse_in_header *in)
{
	char ns[PATH_BUF];

	if (kernel_own(in->opcode))
		return false;
	return !pidns_of((pid_t)in->pid, ns, sizeof(ns)) || strcmp(ns, ownfs_pidns) == 0;
}

/* Called with stats_lock held (or before the second thread exists). */
static void write_stats(void)
{
	char tmp[PATH_MAX];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", ownfs_stats);
	f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "outside_ioctls %lu\noutside_other %lu\nstall_pending %d\nstall_answered %d\n",
	        outside_ioctls, outside_other, stall_pending, stall_answered);
	if (fclose(f) == 0)
		(void)rename(tmp, ownfs_stats);
}

/* The first outsider's answer, late, from a thread of its own, so that
 * the sandbox is served meanwhile. */
static void *answer_late(void *arg)
{
	struct fuse_in_header *in = arg;
	struct timespec stall = { OWNFS_STALL_MS / MS_PER_S, (OWNFS_STALL_MS % MS_PER_S) * NS_PER_MS };

	nanosleep(&stall, NULL);
	/* Marked answered before the answer goes: a caller that the answer
	 * lets go then reads 1 (the order the judgement needs). */
	pthread_mutex_lock(&stats_lock);
	stall_pending = false;
	stall_answered = true;
	write_stats();
	pthread_mutex_unlock(&stats_lock);
	answer(in, in + 1);
	free(in);
	return NULL;
}

static void serve_outsider(const struct fuse_in_header *in)
{
	pthread_t t;
	struct fuse_in_header *copy;

	fprintf(stderr, "uvm_ctlfd serve: from outside: opcode %u, pid %u\n", in->opcode, in->pid);
	pthread_mutex_lock(&stats_lock);
	if (in->opcode == FUSE_IOCTL)
		outside_ioctls++;
	else
		outside_other++;
	bool stall = !stalled_once && (copy = malloc(in->len)) != NULL;
	if (stall) {
		stalled_once = true;
		stall_pending = true;
	}
	write_stats();
	pthread_mutex_unlock(&stats_lock);
	if (!stall) {
		answer(in, in + 1);
		return;
	}
	memcpy(copy, in, in->len);
	if (pthread_create(&t, NULL, answer_late, copy) != 0) {
		/* Answered now: marked so first, as answer_late does. */
		pthread_mutex_lock(&stats_lock);
		stall_pending = false;
		stall_answered = true;
		write_stats();
		pthread_mutex_unlock(&stats_lock);
		answer(in, in + 1);
		free(copy);
		return;
	}
	pthread_detach(t);
}

static int ownfs_mount(const char *dir)
{
	char opts[PATH_BUF * 2];

	ownfs_dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (ownfs_dev < 0)
		return -1;
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", ownfs_dev);
	return mount("uvm_ctlfd", dir, "fuse", MS_NOSUID | MS_NODEV, opts);
}

/* Serves until unmounted or killed; STATS says when it is ready. */
static int serve(const char *dir, const char *stats)
{
	static uint8_t buf[OWNFS_BUF];

	ownfs_stats = stats;
	if (!pidns_of(0, ownfs_pidns, sizeof(ownfs_pidns)) || ownfs_mount(dir) < 0) {
		fprintf(stderr, "uvm_ctlfd serve: mounting on %s: %s\n", dir, strerror(errno));
		return ADV_EXIT_SETUP;
	}
	write_stats();
	for (;;) {
		ssize_t n = read(ownfs_dev, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == ENOENT || errno == EAGAIN))
			continue;
		if (n < (ssize_t)sizeof(struct fuse_in_header))
			return 0; /* unmounted */
		const struct fuse_in_header *in = (const void *)buf;
		if (from_outside(in))
			serve_outsider(in);
		else
			answer(in, in + 1);
	}
}

/* ---- the modes ---------------------------------------------------------- */

struct run {
	const char *mode;
	char server_stats[PATH_MAX]; /* the server's STATS, "" without one */
	struct rmc_session s;     /* the client A and its memory */
	nv_handle_t a;
	int uvm;
	struct adv_uvm_map m;
	char bad[64];             /* the bad maps' statuses */
	long bad_ms, probe_ms;
	int held;                 /* bad maps held by the server's late answer */
	atomic_bool issued;       /* the fuse mode's bad map was made */
	atomic_bool returned;     /* and has returned */
	rmc_status_t probe;
	int probe_held;
	long rmword_ms;           /* fuse: an RM escape on the served file */
	int rmword_held;
	int rmword_errno;
	int ok, refused, other;   /* race */
	unsigned long flips;
};

/* The server's STATS value of key (-1 when there is no server or it
 * cannot be read). */
static long server_stat(const struct run *r, const char *key)
{
	char k[PATH_BUF];
	long v, found = -1;
	FILE *f = r->server_stats[0] ? fopen(r->server_stats, "re") : NULL;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", k, &v) == 2)
		if (strcmp(k, key) == 0)
			found = v;
	fclose(f);
	return found;
}

/* Did the server give its late answer between before (server_stat's
 * stall_answered when the call was issued) and now? */
static int held_since(const struct run *r, long before)
{
	return before == 0 && server_stat(r, "stall_answered") == 1;
}

/* A map of A through ctl; the longest bad one's time goes to bad_ms (for
 * the reader), a bad one held by the server's late answer to held. */
static rmc_status_t map_with(struct run *r, int ctl, bool bad)
{
	long t0 = now_ms();
	long answered = bad ? server_stat(r, "stall_answered") : -1;

	adv_uvm_fill_map(&r->m, ctl, r->s.client, r->a, HOLD_SIZE);
	rmc_status_t st = adv_uvm_map(r->uvm, &r->m);
	if (bad && now_ms() - t0 > r->bad_ms)
		r->bad_ms = now_ms() - t0;
	if (bad)
		r->held += held_since(r, answered);
	return st;
}

static void note_bad(struct run *r, rmc_status_t st)
{
	size_t n = strlen(r->bad);

	snprintf(r->bad + n, sizeof(r->bad) - n, "%s0x%x", n ? "," : "", st);
}

static int open_or_die(const char *path)
{
	int fd = path ? open(path, O_RDWR | O_CLOEXEC) : -1;

	if (fd < 0) {
		printf("uvm_ctlfd: cannot open the served file %s\n", path ? path : "(none given)");
		fflush(stdout);
		exit(ADV_EXIT_SETUP);
	}
	return fd;
}

static void mode_other(struct run *r)
{
	struct rmc_session o;

	adv_session_or_die(&o, -1, "uvm_ctlfd other");
	note_bad(r, map_with(r, o.fd, true));
	close(o.fd);
}

static void mode_pipe(struct run *r)
{
	int p[2], file = memfd_create("uvm_ctlfd", MFD_CLOEXEC);

	if (pipe2(p, O_CLOEXEC) < 0 || file < 0) {
		perror("uvm_ctlfd: pipe or memfd");
		exit(ADV_EXIT_SETUP);
	}
	note_bad(r, map_with(r, p[0], true));
	note_bad(r, map_with(r, file, true));
	close(p[0]);
	close(p[1]);
	close(file);
}

/* The probe: an RM allocation made once the server holds the
 * supervisor's request (it is the supervisor's while the bad map is in
 * flight) or the bad map has returned, and freed. No clock: a probe sent
 * before the supervisor reached the server would prove nothing. */
struct probe {
	struct run *r;
	nv_handle_t h;
};

static void *probe(void *arg)
{
	struct probe *p = arg;
	struct run *r = p->r;
	struct timespec tick = { 0, NS_PER_MS };

	while (!atomic_load(&r->issued))
		nanosleep(&tick, NULL);
	while (!atomic_load(&r->returned) && server_stat(r, "stall_pending") != 1)
		nanosleep(&tick, NULL);
	long t0 = now_ms();
	long answered = server_stat(r, "stall_answered");
	r->probe = adv_alloc_rm(&r->s, NULL, p->h, PROBE_SIZE);
	r->probe_ms = now_ms() - t0;
	r->probe_held = held_since(r, answered);
	if (r->probe == NV_OK)
		(void)adv_free_rm(&r->s, NULL, p->h);
	return NULL;
}

static void mode_fuse(struct run *r, const char *path)
{
	struct probe p = { .r = r, .h = rmc_next_handle(&r->s) };
	int fd = open_or_die(path);
	pthread_t t;

	if (pthread_create(&t, NULL, probe, &p) != 0)
		exit(ADV_EXIT_SETUP);
	atomic_store(&r->issued, true);
	note_bad(r, map_with(r, fd, true));
	atomic_store(&r->returned, true);
	pthread_join(t, NULL);
	/* And an RM escape on the served file itself: not the driver's, so
	 * continued; the supervisor must not dup it to find that out (our
	 * close of the dup would be a FLUSH the server answers late). */
	struct nvos64 top = { 0 };
	long t0 = now_ms();
	long answered = server_stat(r, "stall_answered");
	long rc = syscall(SYS_ioctl, fd, NV_IOC_WORD(NV_ESC_RM_ALLOC, sizeof(top)), &top);
	r->rmword_errno = rc < 0 ? errno : 0;
	r->rmword_ms = now_ms() - t0;
	r->rmword_held = held_since(r, answered);
	close(fd);
}

/* The race's flipper: the served file, the client's own, the other
 * control file, the client's own again onto one number, in turn, until
 * told to stop: the client's file half the time, so that a map's first
 * look finds it as often as not. */
#define FLIP_FILES 4
struct flip {
	int at, files[FLIP_FILES];
	atomic_bool stop;
	unsigned long flips;
};

static void *flipper(void *arg)
{
	struct flip *f = arg;

	while (!atomic_load(&f->stop)) {
		for (int i = 0; i < FLIP_FILES; i++)
			(void)dup2(f->files[i], f->at);
		f->flips++;
	}
	return NULL;
}

static bool race_done(const struct run *r, bool until_outside)
{
	return r->ok && r->refused && (!until_outside || server_stat(r, "outside_other") >= 1);
}

static void mode_race(struct run *r, const char *path, int rounds, bool until_outside)
{
	struct rmc_session o;
	struct flip f;
	pthread_t t;
	int served = open_or_die(path);

	adv_session_or_die(&o, -1, "uvm_ctlfd race");
	f = (struct flip){ .at = dup(r->s.fd), .files = { served, r->s.fd, o.fd, r->s.fd } };
	if (f.at < 0 || pthread_create(&t, NULL, flipper, &f) != 0)
		exit(ADV_EXIT_SETUP);
	for (int i = 0; i < rounds || (i < rounds * FLIP_MORE && !race_done(r, until_outside)); i++) {
		rmc_status_t st = map_with(r, f.at, true);
		if (st == NV_OK)
			r->ok++;
		else if (st == NV_ERR_INSUFFICIENT_PERMISSIONS)
			r->refused++;
		else
			r->other++;
	}
	atomic_store(&f.stop, true);
	pthread_join(t, NULL);
	r->flips = f.flips;
	snprintf(r->bad, sizeof(r->bad), "race");
	close(f.at);
	close(o.fd);
	close(served);
}

/* ---- main ----------------------------------------------------------------- */

/* PATH is MOUNTPOINT/ctl; the server's STATS, MOUNTPOINT.stats. */
static void server_stats_of(struct run *r, const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	if (slash && slash > path)
		snprintf(r->server_stats, sizeof(r->server_stats), "%.*s.stats", (int)(slash - path), path);
}

static long long fake_stat(const char *key)
{
	uint64_t v;

	return rmc_fake_stat(key, &v) == 0 ? (long long)v : -1ll;
}

static void print_run(const struct run *r, rmc_status_t first, rmc_status_t map_ok, rmc_status_t freed)
{
	printf("mode=%s first=0x%x bad=%s map_ok=0x%x free=0x%x left_mappings=%lld left_used=%lld "
	       "bad_ms=%ld held=%d\n",
	       r->mode, first, r->bad, map_ok, freed, fake_stat("uvm_mappings"),
	       fake_stat("gpu0.vidmem_used"), r->bad_ms, r->held);
	if (strcmp(r->mode, "fuse") == 0)
		printf("probe=0x%x probe_ms=%ld probe_held=%d rmword_errno=%d rmword_ms=%ld rmword_held=%d\n",
		       r->probe, r->probe_ms, r->probe_held, r->rmword_errno, r->rmword_ms, r->rmword_held);
	if (strcmp(r->mode, "race") == 0)
		printf("ok=%d refused=%d other=%d flips=%lu\n", r->ok, r->refused, r->other, r->flips);
}

int main(int argc, char **argv)
{
	static struct run r;
	struct adv_tally t = { 0 };
	const char *path = argc > 2 ? argv[2] : NULL;

	r.mode = argc > 1 ? argv[1] : "other";
	if (strcmp(r.mode, "serve") == 0)
		return argc == 4 ? serve(argv[2], argv[3]) : ADV_EXIT_SETUP;
	server_stats_of(&r, path);
	adv_session_or_die(&r.s, -1, "uvm_ctlfd");
	r.a = rmc_next_handle(&r.s);
	rmc_status_t first = adv_alloc_rm(&r.s, NULL, r.a, HOLD_SIZE);
	adv_count(&t, first);
	r.uvm = adv_uvm_with_range(HOLD_SIZE, "uvm_ctlfd");
	if (strcmp(r.mode, "pipe") == 0)
		mode_pipe(&r);
	else if (strcmp(r.mode, "fuse") == 0)
		mode_fuse(&r, path);
	else if (strcmp(r.mode, "race") == 0)
		mode_race(&r, path, argc > 3 ? atoi(argv[3]) : FLIP_ROUNDS,
		          argc > 4 && strcmp(argv[4], "until-outside") == 0);
	else
		mode_other(&r);
	rmc_status_t map_ok = map_with(&r, r.s.fd, false);
	rmc_status_t freed = adv_free_rm(&r.s, NULL, r.a);
	print_run(&r, first, map_ok, freed);
	adv_print_summary(&t);
	close(r.uvm);
	return 0;
}
