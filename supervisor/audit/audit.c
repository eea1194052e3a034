/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "gpusandbox.h"
#include "rm_decode.h"
#include "utf8.h"

#define TIME_BUF 40
#define HEX_BUF 16
#define COMM_BUF 32
#define PATH_BUF 64
#define STATUS_BUF 1024
/* Only the supervisor's user reads the log: it holds the workload's
 * command line and what it was refused. */
#define AUDIT_FILE_MODE 0600
/* The suffix each record ends with: ,"hash":"<64 hex>"} */
#define HASH_SUFFIX_FMT ",\"hash\":\"%s\"}\n"
#define HASH_SUFFIX_LEN (sizeof(",\"hash\":\"\"}\n") - 1 + GS_SHA256_HEX - 1)

void gs_format_time(char *buf, unsigned len)
{
	struct timespec ts;
	struct tm tm;
	char base[TIME_BUF];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06ldZ", base, ts.tv_nsec / 1000);
}

/* One read of /proc/TID/status gives both the command name and the thread
 * group (the pid people know), so an audited decision costs one open. */
void gs_read_task(pid_t tid, pid_t *tgid, char *comm, unsigned len)
{
	char path[PATH_BUF], buf[STATUS_BUF];
	const char *p;

	snprintf(comm, len, "?");
	*tgid = tid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (gs_read_text(path, buf, sizeof(buf)) < 0)
		return;
	if (strncmp(buf, "Name:\t", 6) == 0) {
		size_t l = strcspn(buf + 6, "\n");
		if (l >= len)
			l = len - 1;
		memcpy(comm, buf + 6, l);
		comm[l] = '\0';
	}
	p = strstr(buf, "\nTgid:\t");
	if (p)
		*tgid = (pid_t)atoi(p + 7);
}

/* The log main() opened: sealed at exit if main returns early. Atomic:
 * the agent opens and closes its containers' logs from several threads
 * at once (ThreadSanitizer saw two teardowns race on it). */
static _Atomic(struct gs_audit *) open_log;
static pthread_once_t seal_registered = PTHREAD_ONCE_INIT;

static void seal_at_exit(void)
{
	struct gs_audit *a = atomic_load(&open_log);

	if (a)
		(void)gs_audit_close(a);
}

static void register_seal(void)
{
	(void)atexit(seal_at_exit);
}

static void audit_init(struct gs_audit *a, int fd, const char *sandbox_id)
{
	memset(a, 0, sizeof(*a));
	a->fd = fd;
	a->level = GS_AUDIT_LEVEL_STANDARD;
	pthread_mutex_init(&a->lock, NULL);
	/* The first record's "prev": no record before it. */
	memset(a->prev, '0', GS_SHA256_HEX - 1);
	a->prev[GS_SHA256_HEX - 1] = '\0';
	a->owner = getpid();
	snprintf(a->sandbox_id, sizeof(a->sandbox_id), "%s", sandbox_id);
	atomic_store(&open_log, a);
	pthread_once(&seal_registered, register_seal);
}

int gs_audit_open(struct gs_audit *a, const char *path, const char *sandbox_id, struct gs_error *err)
{
	/* O_CLOEXEC: the workload is exec'd by a fork of the supervisor and
	 * must not inherit the log. */
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, AUDIT_FILE_MODE);

	if (fd < 0) {
		a->fd = -1;
		return gs_fail(err, errno, "cannot open audit log '%s'", path);
	}
	audit_init(a, fd, sandbox_id);
	return 0;
}

int gs_parse_audit_fd(const char *s, int *fd)
{
	char *end;
	long v;

	if (!s[0] || s[strspn(s, "0123456789")])
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || v <= STDERR_FILENO || v > INT_MAX)
		return -1;
	*fd = (int)v;
	return 0;
}

int gs_audit_open_fd(struct gs_audit *a, int fd, const char *sandbox_id, struct gs_error *err)
{
	int flags, moved;

	a->fd = -1;
	if (fd <= STDERR_FILENO)
		return gs_fail(err, 0, "--audit-fd %d: not one of the standard streams 0, 1, 2, which "
		                       "the workload shares", fd);
	flags = fcntl(fd, F_GETFL);
	if (flags < 0)
		return gs_fail(err, errno, "--audit-fd %d", fd);
	if ((flags & O_ACCMODE) == O_RDONLY)
		return gs_fail(err, 0, "--audit-fd %d: not open for writing", fd);
	/* A close-on-exec copy, and the number we were given closed: the
	 * workload, exec'd by a fork of ours, never holds it. */
	moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	if (moved < 0)
		return gs_fail(err, errno, "--audit-fd %d", fd);
	close(fd);
	audit_init(a, moved, sandbox_id);
	return 0;
}

static json_object *record_new(struct gs_audit *a, const char *event)
{
	json_object *o = json_object_new_object();

	/* The time and the number are set under the lock when the record is
	 * written, so that times follow seq (a suppressed count is written
	 * just before the record that ends its run); the keys are here so
	 * that they stand at the front. */
	json_object_object_add(o, "time", NULL);
	json_object_object_add(o, "sandbox", json_object_new_string(a->sandbox_id));
	json_object_object_add(o, "seq", NULL);
	json_object_object_add(o, "event", json_object_new_string(event));
	return o;
}

/* Text that came from outside (a thread name, an argument, a message):
 * valid UTF-8 whatever its bytes, so every record is valid JSON. */
static void add_text(json_object *o, const char *key, const char *text)
{
	char *clean = text ? gs_utf8_clean(text) : NULL;

	json_object_object_add(o, key, clean ? json_object_new_string(clean) : NULL);
	free(clean);
}

/* The errno's name, or its number where the C library has no name for it
 * (strerrorname_np returns NULL: issue #17 item 12, a SIGSEGV). */
static void add_errno(json_object *o, int errnum)
{
	const char *name = strerrorname_np(errnum);
	char num[HEX_BUF];

	if (!name) {
		snprintf(num, sizeof(num), "%d", errnum);
		name = num;
	}
	add_text(o, "errno", name);
}

static void add_hex(json_object *o, const char *key, uint32_t v)
{
	char buf[HEX_BUF];
	snprintf(buf, sizeof(buf), "0x%x", v);
	json_object_object_add(o, key, json_object_new_string(buf));
}

static void add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

/* Numbers the record, chains it to the one before and writes it with one
 * write(2): a partial record can only come from a full disk, and then the
 * caller fails closed. The hash covers the record's text up to the "hash"
 * key, "prev" included, so editing, removing or reordering any record
 * breaks the chain. Called with the lock held. */
static int rotate_locked(struct gs_audit *a);

static int rotate_if_due_locked(struct gs_audit *a)
{
	if (!a->rot.on || a->rot.rotating || a->rot.size < a->rot.max_size)
		return 0;
	return rotate_locked(a);
}

static int chain_and_write(struct gs_audit *a, json_object *o)
{
	char hash[GS_SHA256_HEX];
	size_t len;
	const char *s;
	char *line;
	ssize_t w = -1;
	char now[TIME_BUF];

	/* A full file is ended first: this record begins the next one. */
	if (rotate_if_due_locked(a) < 0)
		return -1;
	gs_format_time(now, sizeof(now));
	json_object_object_add(o, "time", json_object_new_string(now));
	json_object_object_add(o, "seq", json_object_new_uint64(a->seq));
	json_object_object_add(o, "prev", json_object_new_string(a->prev));
	s = json_object_to_json_string_length(o, GS_AUDIT_JSON_FLAGS, &len);
	if (!s || len < 2 || s[len - 1] != '}' || !(line = malloc(len + HASH_SUFFIX_LEN)))
		return -1;
	gs_sha256_hex(s, len, hash);
	memcpy(line, s, len - 1);
	snprintf(line + len - 1, HASH_SUFFIX_LEN + 1, HASH_SUFFIX_FMT, hash);
	do
		w = write(a->fd, line, len - 1 + HASH_SUFFIX_LEN);
	while (w < 0 && errno == EINTR);
	free(line);
	if (w != (ssize_t)(len - 1 + HASH_SUFFIX_LEN))
		return -1;
	memcpy(a->prev, hash, sizeof(a->prev));
	a->rot.size += (uint64_t)w;
	a->seq++;
	a->n_written++;
	return 0;
}

int gs_audit_set_rotation(struct gs_audit *a, const char *path, uint64_t max_size, unsigned max_files,
                          struct gs_error *err)
{
	return gs_audit_rotation_start(&a->rot, a->fd, path, max_size, max_files, err);
}

/* The file is full: a "rotate" record ends it, the files move up one
 * number, and a "continued" record begins the new one; both are links of
 * the one chain (audit_rotate.h). Any failure fails the log (closed). */
static int rotate_locked(struct gs_audit *a)
{
	json_object *end = record_new(a, "rotate"), *begin = record_new(a, "continued");
	struct gs_error err = { 0 };
	int rc, fd = -1;

	a->rot.rotating = true;
	rc = chain_and_write(a, end);
	/* An append-only file cannot be renamed: the flag we set goes with
	 * the full file's last record, and comes on the new one at once. */
	if (rc == 0)
		gs_audit_guard_release(&a->guard, a->fd);
	if (rc == 0 && (fd = gs_audit_rotate_files(&a->rot, &err)) < 0) {
		fprintf(stderr, "gpusandbox: audit log: %s\n", err.msg);
		rc = -1;
	}
	if (rc == 0) {
		close(a->fd);
		a->fd = fd;
		gs_audit_guard_file(&a->guard, fd);
		a->rot.size = 0;
		rc = chain_and_write(a, begin);
	}
	a->rot.rotating = false;
	json_object_put(end);
	json_object_put(begin);
	return rc;
}

/* {"version": the module's or null, "abi": the tables' branch, "override":
 * the --driver-abi that chose them, or null when they are the driver's own}. */
static json_object *driver_object(const struct gs_driver *d)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "version", d->present ? json_object_new_string(d->version) : NULL);
	json_object_object_add(o, "abi", json_object_new_string(gs_rm_abi_branch(d->rm_abi)));
	json_object_object_add(o, "override", d->override ? json_object_new_string(d->override) : NULL);
	return o;
}

/* The count of a run of identical refusals, written when the run ends,
 * before the record that follows: a refusal is never lost, only folded
 * into a count. Called with the lock held. */
static int end_run_locked(struct gs_audit *a, struct gs_audit_repeat *r)
{
	json_object *o;
	int rc;

	r->active = false;
	if (!r->count)
		return 0;
	o = record_new(a, "suppressed");
	json_object_object_add(o, "pid", json_object_new_int(r->pid));
	add_text(o, "call", r->call);
	if (r->has_class)
		add_hex(o, "class", r->cls);
	if (r->has_control)
		add_hex(o, "control", r->control);
	json_object_object_add(o, "verdict", json_object_new_string(gs_verdict_name(r->verdict)));
	json_object_object_add(o, "outcome", json_object_new_string(gs_outcome_name(r->outcome)));
	if (r->status)
		add_hex(o, "nv_status", r->status);
	add_text(o, "reason", r->reason[0] ? r->reason : NULL);
	add_u64(o, "count", r->count);
	add_u64(o, "first_seq", r->first_seq);
	json_object_object_add(o, "last_time", json_object_new_string(r->last_time));
	r->count = 0;
	rc = chain_and_write(a, o);
	json_object_put(o);
	return rc;
}

/* Ends the runs whose window has passed (all of them when closing). */
static int flush_repeats_locked(struct gs_audit *a, bool all)
{
	const uint64_t now = gs_monotonic_ns();
	int rc = 0;

	for (unsigned i = 0; i < GS_AUDIT_REPEAT_RUNS; i++) {
		struct gs_audit_repeat *r = &a->repeat[i];
		if (r->active && (all || now - r->start_ns >= GS_AUDIT_REPEAT_WINDOW_NS) &&
		    end_run_locked(a, r) < 0)
			rc = -1;
	}
	return rc;
}

/* ---- usage over time (levels below all) ----------------------------------- */

static int write_usage_locked(struct gs_audit *a, unsigned gpu, uint64_t now)
{
	struct gs_audit_usage *u = &a->usage[gpu];
	json_object *o = record_new(a, "usage");
	int rc;

	json_object_object_add(o, "device", json_object_new_int((int)gpu));
	json_object_object_add(o, "resource", json_object_new_string("vidmem"));
	add_u64(o, "used", u->used);
	/* What was in use at the most between two records, so that a spike
	 * shorter than the interval still shows. */
	add_u64(o, "peak", u->peak_since);
	if (u->unlimited)
		json_object_object_add(o, "quota", NULL);
	else
		add_u64(o, "quota", u->quota);
	/* The interval is stamped from the very reading that decided to write
	 * the record (flush_usage_locked), so the rate limit can be checked
	 * exactly from the log; the wall-clock "time" is read apart and two
	 * of them may be closer than the interval on a loaded machine. */
	if (u->written)
		add_u64(o, "interval_us", (now - u->written_ns) / GS_NS_PER_US);
	rc = chain_and_write(a, o);
	json_object_put(o);
	if (rc == 0) {
		u->pending = false;
		u->written = true;
		u->written_ns = now;
		u->peak_since = u->used;
	}
	return rc;
}

/* Writes the GPUs' pending usage whose interval has passed (all pending
 * ones when the run ends). */
static int flush_usage_locked(struct gs_audit *a, bool all)
{
	const uint64_t now = gs_monotonic_ns();
	int rc = 0;

	if (a->level != GS_AUDIT_LEVEL_STANDARD)
		return 0;
	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		struct gs_audit_usage *u = &a->usage[g];
		if (u->pending && (all || now - u->written_ns >= GS_AUDIT_USAGE_INTERVAL_NS) &&
		    write_usage_locked(a, g, now) < 0)
			rc = -1;
	}
	return rc;
}

/* A decision's video memory figures, for the next usage record. */
static void note_usage_locked(struct gs_audit *a, const struct gs_decision *d)
{
	struct gs_audit_usage *u;

	if (a->level != GS_AUDIT_LEVEL_STANDARD || !d->has_usage || d->gpu < 0 ||
	    d->gpu >= (int)GS_MAX_GPUS || (d->resource && strcmp(d->resource, "vidmem") != 0))
		return;
	u = &a->usage[d->gpu];
	if (u->seen && u->used == d->usage_after && d->usage_before <= u->peak_since)
		return;
	if (!u->seen)
		u->peak_since = 0;
	u->seen = true;
	u->pending = true;
	u->used = d->usage_after;
	u->quota = d->quota;
	u->unlimited = gs_decision_unlimited(d);
	if (d->usage_before > u->peak_since)
		u->peak_since = d->usage_before;
	if (d->usage_after > u->peak_since)
		u->peak_since = d->usage_after;
}

static int tick_locked(struct gs_audit *a)
{
	int rc = 0;

	if (!a->sealed && a->fd >= 0)
		rc = flush_usage_locked(a, false);
	if (rc < 0)
		a->failed = true;
	pthread_mutex_unlock(&a->lock);
	return rc;
}

int gs_audit_tick(struct gs_audit *a)
{
	pthread_mutex_lock(&a->lock);
	return tick_locked(a);
}

int gs_audit_tick_within(struct gs_audit *a, unsigned wait_ms)
{
	if (!gs_mutex_lock_within(&a->lock, wait_ms))
		return 1;
	return tick_locked(a);
}

static void counters_locked(struct gs_audit *a, uint64_t *written, uint64_t *suppressed,
                            uint64_t *below_level)
{
	*written = a->n_written;
	*suppressed = a->n_suppressed;
	*below_level = a->n_below_level;
	pthread_mutex_unlock(&a->lock);
}

void gs_audit_counters(struct gs_audit *a, uint64_t *written, uint64_t *suppressed,
                       uint64_t *below_level)
{
	pthread_mutex_lock(&a->lock);
	counters_locked(a, written, suppressed, below_level);
}

bool gs_audit_counters_within(struct gs_audit *a, uint64_t *written, uint64_t *suppressed,
                              uint64_t *below_level, unsigned wait_ms)
{
	if (!gs_mutex_lock_within(&a->lock, wait_ms))
		return false;
	counters_locked(a, written, suppressed, below_level);
	return true;
}

/* A record of the run as a whole (start, summary, error, sm_adjust). The
 * summary and the seal follow every usage change. */
static int emit(struct gs_audit *a, json_object *o, bool usage_first)
{
	int rc = -1;

	pthread_mutex_lock(&a->lock);
	if (!a->sealed && a->fd >= 0 && flush_repeats_locked(a, false) == 0 &&
	    flush_usage_locked(a, usage_first) == 0)
		rc = chain_and_write(a, o);
	if (rc < 0)
		a->failed = true;
	pthread_mutex_unlock(&a->lock);
	json_object_put(o);
	return rc;
}

/* Which refusals are the same: (pid, call, class or control, reason). */
static void repeat_key(struct gs_audit_repeat *k, const struct gs_decision *d, pid_t pid)
{
	memset(k, 0, sizeof(*k));
	k->pid = pid;
	snprintf(k->call, sizeof(k->call), "%s", d->call ? d->call : "");
	snprintf(k->reason, sizeof(k->reason), "%s", d->reason ? d->reason : "");
	k->has_class = d->has_class;
	k->cls = d->has_class ? d->cls : 0;
	k->has_control = d->has_control;
	k->control = d->has_control ? d->control : 0;
	k->verdict = d->verdict;
	k->outcome = gs_decision_outcome(d);
	k->status = d->has_status ? d->status : 0;
}

static bool same_refusal(const struct gs_audit_repeat *r, const struct gs_audit_repeat *k)
{
	return r->pid == k->pid && r->has_class == k->has_class && r->cls == k->cls &&
	       r->has_control == k->has_control && r->control == k->control &&
	       r->verdict == k->verdict && r->status == k->status && strcmp(r->call, k->call) == 0 &&
	       strcmp(r->reason, k->reason) == 0;
}

/* The open run k repeats, if any, within its window. */
static struct gs_audit_repeat *find_run(struct gs_audit *a, const struct gs_audit_repeat *k,
                                        uint64_t now)
{
	for (unsigned i = 0; i < GS_AUDIT_REPEAT_RUNS; i++) {
		struct gs_audit_repeat *r = &a->repeat[i];
		if (r->active && now - r->start_ns < GS_AUDIT_REPEAT_WINDOW_NS && same_refusal(r, k))
			return r;
	}
	return NULL;
}

/* A slot for a new run: a free one, else the oldest run, ended first (its
 * count is written before the refusal that takes its place). NULL if that
 * count could not be written. */
static struct gs_audit_repeat *free_slot_locked(struct gs_audit *a)
{
	struct gs_audit_repeat *slot = &a->repeat[0];

	for (unsigned i = 0; i < GS_AUDIT_REPEAT_RUNS; i++) {
		struct gs_audit_repeat *r = &a->repeat[i];
		if (!r->active)
			return r;
		if (r->start_ns < slot->start_ns)
			slot = r;
	}
	return end_run_locked(a, slot) == 0 ? slot : NULL;
}

/* The refused thread's stack, asked for only now that the refusal is
 * written: a folded repeat costs no unwinding. Frames are workload text. */
static void add_stack(json_object *o, const struct gs_decision *d)
{
	struct gs_stack st;
	json_object *frames;

	if (!d->stack_fill)
		return;
	memset(&st, 0, sizeof(st));
	d->stack_fill(d->stack_ctx, &st);
	if (st.error) {
		json_object_object_add(o, "stack_error", json_object_new_string(st.error));
		return;
	}
	frames = json_object_new_array();
	for (unsigned i = 0; i < st.n && i < GS_STACK_MAX_FRAMES; i++) {
		char *clean = gs_utf8_clean(st.frame[i]);
		json_object_array_add(frames, clean ? json_object_new_string(clean) : NULL);
		free(clean);
	}
	json_object_object_add(o, "stack", frames);
	if (st.truncated)
		json_object_object_add(o, "stack_truncated", json_object_new_boolean(true));
}

/* A decision record, or a repeat of an open run's refusal counted
 * instead. A refusal written opens a run. */
static int emit_decision(struct gs_audit *a, json_object *o, const struct gs_decision *d, pid_t pid)
{
	const bool refusal = gs_outcome_is_refusal(gs_decision_outcome(d));
	const uint64_t now = gs_monotonic_ns();
	struct gs_audit_repeat k, *run;
	int rc = -1;

	repeat_key(&k, d, pid);
	pthread_mutex_lock(&a->lock);
	note_usage_locked(a, d);
	if (refusal && !a->sealed && (run = find_run(a, &k, now))) {
		run->count++;
		a->n_suppressed++;
		gs_format_time(run->last_time, sizeof(run->last_time));
		pthread_mutex_unlock(&a->lock);
		json_object_put(o);
		return 0;
	}
	if (!a->sealed && a->fd >= 0 && flush_repeats_locked(a, false) == 0 &&
	    (!refusal || (run = free_slot_locked(a)))) {
		k.active = true;
		k.first_seq = a->seq;
		k.start_ns = now;
		if (refusal)
			add_stack(o, d);
		rc = chain_and_write(a, o);
		if (rc == 0 && refusal)
			*run = k;
		if (rc == 0)
			rc = flush_usage_locked(a, false);
	}
	if (rc < 0)
		a->failed = true;
	pthread_mutex_unlock(&a->lock);
	json_object_put(o);
	return rc;
}

/* A decision below the log's level: not written, but its usage counts
 * toward the next usage record. */
static int note_unwritten(struct gs_audit *a, const struct gs_decision *d)
{
	int rc = 0;

	pthread_mutex_lock(&a->lock);
	if (!a->sealed && a->fd >= 0) {
		a->n_below_level++;
		note_usage_locked(a, d);
		rc = flush_repeats_locked(a, false);
		if (rc == 0)
			rc = flush_usage_locked(a, false);
	}
	if (rc < 0)
		a->failed = true;
	pthread_mutex_unlock(&a->lock);
	return rc;
}

/* The last record: nothing of this sandbox may follow it, so a log that
 * ends without one was truncated (or its supervisor killed). Its hash,
 * printed on stderr, pins the whole chain for someone who keeps it. */
static void seal(struct gs_audit *a)
{
	json_object *o = record_new(a, "seal");
	char head[GS_SHA256_HEX];
	uint64_t records;
	int rc;

	pthread_mutex_lock(&a->lock);
	if (a->sealed) {
		pthread_mutex_unlock(&a->lock);
		json_object_put(o);
		return;
	}
	rc = flush_repeats_locked(a, true);
	if (rc == 0)
		rc = flush_usage_locked(a, true);
	/* Before the count: a rotation adds its two records. */
	if (rc == 0)
		rc = rotate_if_due_locked(a);
	records = a->seq;
	add_u64(o, "records", records);
	/* Decisions the level left out: they were made, not lost. */
	add_u64(o, "below_level", a->n_below_level);
	if (rc == 0)
		rc = chain_and_write(a, o);
	a->sealed = true;
	if (rc < 0)
		a->failed = true;
	memcpy(head, a->prev, sizeof(head));
	pthread_mutex_unlock(&a->lock);
	json_object_put(o);
	if (rc == 0)
		fprintf(stderr, "gpusandbox: audit log sealed: sandbox %s, %llu records, last hash %s\n",
		        a->sandbox_id, (unsigned long long)records + 1, head);
}

int gs_audit_close(struct gs_audit *a)
{
	bool failed;

	if (a->fd < 0)
		return 0;
	/* A fork of the supervisor (the workload before exec) never seals. */
	if (a->owner == getpid()) {
		seal(a);
		gs_audit_guard_release(&a->guard, a->fd);
		struct gs_audit *mine = a;
		(void)atomic_compare_exchange_strong(&open_log, &mine, NULL);
	}
	close(a->fd);
	a->fd = -1;
	pthread_mutex_lock(&a->lock);
	failed = a->failed;
	pthread_mutex_unlock(&a->lock);
	return failed ? -1 : 0;
}

/* The host the supervisor runs on (its own UTS namespace: the workload's
 * is its own). */
static json_object *host_json(void)
{
	char host[HOST_NAME_MAX + 1];

	if (gethostname(host, sizeof(host)) < 0)
		return NULL;
	host[HOST_NAME_MAX] = '\0';
	char *clean = gs_utf8_clean(host);
	json_object *o = clean ? json_object_new_string(clean) : NULL;
	free(clean);
	return o;
}

int gs_audit_start(struct gs_audit *a, const struct gs_audit_start *s)
{
	json_object *o = record_new(a, "start");
	json_object *cmd = json_object_new_array();

	a->rm_abi = s->driver->rm_abi;
	json_object_object_add(o, "schema", json_object_new_int(GS_AUDIT_SCHEMA));
	for (int i = 0; s->argv[i]; i++) {
		char *arg = gs_utf8_clean(s->argv[i]);
		json_object_array_add(cmd, arg ? json_object_new_string(arg) : NULL);
		free(arg);
	}
	json_object_object_add(o, "version", json_object_new_string(GPUSANDBOX_VERSION));
	json_object_object_add(o, "host", host_json());
	json_object_object_add(o, "pid", json_object_new_int(s->child));
	json_object_object_add(o, "driver", driver_object(s->driver));
	json_object_object_add(o, "command", cmd);
	/* The memory quota every GPU without its own has (schema 1's field). */
	if (s->quota->mem_per_gpu == GS_QUOTA_UNLIMITED)
		json_object_object_add(o, "quota", NULL);
	else
		add_u64(o, "quota", s->quota->mem_per_gpu);
	/* What the quota does not see, said where a reviewer starts reading. */
	json_object_object_add(o, "managed", json_object_new_string(gs_managed_name(s->quota->managed)));
	/* answer or none: the sandbox's memory is never registered for
	 * third-party P2P (GPUDirect RDMA does not reach it): said beside
	 * managed, as it takes effect (auto resolved against the rules; the
	 * policy object below keeps the setting). */
	json_object_object_add(o, "p2p_register",
	                       json_object_new_string(gs_p2p_register_name(
	                               gs_p2p_register_effective(s->quota->p2p_register, s->rules))));
	/* as-user: every process of the workload's uid may dup its memory
	 * (own_rm.h), which the operator said is the sandbox's alone. */
	json_object_object_add(o, "uvm_map", json_object_new_string(gs_uvm_map_mode_name(
	                                             s->uvm_map_as_user ? GS_UVM_MAP_AS_USER : GS_UVM_MAP_DUP)));
	json_object_object_add(o, "policy", gs_audit_policy_json(s->quota, s->rules));
	json_object_object_add(o, "labels", gs_audit_labels_json(s->labels));
	/* Limits with no device to act on: a clean summary means nothing. */
	json_object_object_add(o, "nvidia_device", json_object_new_boolean(!a->no_nvidia_device));
	json_object_object_add(o, "level", json_object_new_string(gs_audit_level_name(a->level)));
	json_object_object_add(o, "stacks", json_object_new_boolean(s->stacks));
	/* What keeps the workload away from this file (audit_guard.h). */
	json_object_object_add(o, "protections", gs_audit_guard_json(&a->guard));
	gs_audit_identity_add(o, s->uid, s->user, s->cwd, s->policy_file);
	return emit(a, o, false);
}

/* A call that gave back at least GS_AUDIT_RELEASE_BYTES of video memory. */
static bool large_release(const struct gs_decision *d)
{
	return d->has_size && d->size >= GS_AUDIT_RELEASE_BYTES && d->has_usage &&
	       (!d->resource || strcmp(d->resource, "vidmem") == 0) && d->usage_after < d->usage_before;
}

bool gs_audit_wants(const struct gs_audit *a, const struct gs_decision *d)
{
	const enum gs_outcome out = gs_decision_outcome(d);

	if (a->level == GS_AUDIT_LEVEL_ALL || gs_outcome_is_refusal(out))
		return true;
	if (a->level == GS_AUDIT_LEVEL_REFUSALS)
		return false;
	switch (out) {
	case GS_OUTCOME_CONTINUED:
		return true; /* passed on unexamined: a reviewer wants to see it */
	case GS_OUTCOME_RELEASED:
		/* Memory the driver freed when its file closed (tid 0: at exit
		 * or close), or a large free; the rest shows in usage. */
		return d->tid == 0 || large_release(d);
	case GS_OUTCOME_OK:
		/* A large RM_FREE, or a call allowed with a word to say (--learn). */
		return large_release(d) || d->reason != NULL;
	default:
		return true;
	}
}

/* The name and thread group of tid: from the cache while fresh, else one
 * read of /proc/TID/status. Called with the lock held. */
static void task_of_locked(struct gs_audit *a, pid_t tid, pid_t *tgid, char *comm, unsigned len)
{
	struct gs_audit_task *t = &a->tasks[(unsigned)tid % GS_AUDIT_TASK_SLOTS];
	const uint64_t now = gs_monotonic_ns();

	if (t->tid != tid || t->read_ns == 0 || now - t->read_ns >= GS_AUDIT_TASK_TTL_NS) {
		gs_read_task(tid, &t->tgid, t->comm, sizeof(t->comm));
		t->tid = tid;
		t->read_ns = now;
	}
	*tgid = t->tgid;
	snprintf(comm, len, "%s", t->comm);
}

int gs_audit_decision(struct gs_audit *a, const struct gs_decision *d)
{
	json_object *o;
	char comm[COMM_BUF];
	const char *sname;
	pid_t tgid, pid;

	if (!gs_audit_wants(a, d))
		return note_unwritten(a, d);
	o = record_new(a, "decision");
	/* tid 0: no thread made the call (memory freed when a file closed);
	 * the record names the process that held it. */
	pthread_mutex_lock(&a->lock);
	task_of_locked(a, d->tid ? d->tid : d->pid, &tgid, comm, sizeof(comm));
	pthread_mutex_unlock(&a->lock);
	pid = d->pid ? d->pid : tgid;
	json_object_object_add(o, "pid", json_object_new_int(pid));
	json_object_object_add(o, "tid", d->tid ? json_object_new_int(d->tid) : NULL);
	add_text(o, "comm", !d->tid && d->comm ? d->comm : comm);
	json_object_object_add(o, "device", d->gpu >= 0 ? json_object_new_int(d->gpu) : NULL);
	add_text(o, "call", d->call);
	if (d->has_class) {
		const struct rm_class_info *ci = a->rm_abi ? rm_class_lookup(a->rm_abi, d->cls) : NULL;
		add_hex(o, "class", d->cls);
		if (ci && ci->name)
			json_object_object_add(o, "class_name", json_object_new_string(ci->name));
	}
	if (d->has_control) {
		const struct rm_ctrl_info *ci = a->rm_abi ? rm_ctrl_lookup(a->rm_abi, d->control) : NULL;
		add_hex(o, "control", d->control);
		if (ci && ci->name)
			json_object_object_add(o, "control_name", json_object_new_string(ci->name));
	}
	if (d->h_client)
		add_hex(o, "client", d->h_client);
	if (d->h_object)
		add_hex(o, "object", d->h_object);
	if (d->has_size)
		add_u64(o, "size", d->size);
	json_object_object_add(o, "verdict", json_object_new_string(gs_verdict_name(d->verdict)));
	json_object_object_add(o, "outcome",
	                       json_object_new_string(gs_outcome_name(gs_decision_outcome(d))));
	if (d->has_status) {
		add_hex(o, "nv_status", d->status);
		sname = rm_status_name(d->status);
		if (sname)
			json_object_object_add(o, "nv_status_name", json_object_new_string(sname));
	}
	if (d->errnum)
		add_errno(o, d->errnum);
	if (d->has_usage) {
		json_object_object_add(o, "resource", json_object_new_string(d->resource ? d->resource : "vidmem"));
		add_u64(o, "usage_before", d->usage_before);
		add_u64(o, "usage_after", d->usage_after);
		if (gs_decision_unlimited(d))
			json_object_object_add(o, "quota", NULL);
		else
			add_u64(o, "quota", d->quota);
	} else if (d->resource) {
		/* A refusal about a resource with no count (managed memory). */
		json_object_object_add(o, "resource", json_object_new_string(d->resource));
	}
	if (d->reason)
		json_object_object_add(o, "reason", json_object_new_string(d->reason));
	if (d->has_escape) {
		char nr[HEX_BUF];
		snprintf(nr, sizeof(nr), "0x%02x", d->escape);
		json_object_object_add(o, "escape", json_object_new_string(nr));
	}
	if (d->group)
		json_object_object_add(o, "group", json_object_new_string(d->group));
	return emit_decision(a, o, d, pid);
}

#define PERCENT 100.0
#define RATIO_BUF 32

/* A ratio with four decimals ("0.4994"), not json-c's 17 digits. */
static json_object *ratio(double v)
{
	char buf[RATIO_BUF];
	snprintf(buf, sizeof(buf), "%.4f", v);
	return json_object_new_double_s(v, buf);
}

static json_object *sm_summary_json(const struct gs_sm_summary *sm)
{
	json_object *o = json_object_new_object();
	json_object *g = json_object_new_object();
	char key[HEX_BUF];

	json_object_object_add(o, "target", ratio(sm->target_percent / PERCENT));
	json_object_object_add(o, "period_ms", json_object_new_int((int)sm->period_ms));
	for (unsigned i = 0; i < sm->n; i++) {
		const struct gs_sm_gpu_summary *s = &sm->gpu[i];
		json_object *e = json_object_new_object();
		json_object_object_add(e, "achieved_share",
		                       s->busy_windows ? ratio(s->achieved_share) : NULL);
		json_object_object_add(e, "busy_windows", json_object_new_int((int)s->busy_windows));
		json_object_object_add(e, "windows", json_object_new_int((int)s->windows));
		json_object_object_add(e, "duty", ratio(s->duty));
		add_u64(e, "toggles", s->toggles);
		json_object_object_add(e, "open_loop", json_object_new_boolean(s->open_loop));
		snprintf(key, sizeof(key), "%u", s->gpu);
		json_object_object_add(g, key, e);
	}
	json_object_object_add(o, "gpus", g);
	return o;
}

int gs_audit_summary(struct gs_audit *a, int exit_status, int term_signal, unsigned n_gpus,
                     const uint64_t *peak, const uint64_t *usage, uint64_t mem_quota,
                     const uint64_t counts[4], const struct gs_sm_summary *sm)
{
	static const char *const count_names[4] = { "allowed", "denied", "continued", "refused" };
	json_object *o = record_new(a, "summary");
	json_object *p = json_object_new_object();
	json_object *u = json_object_new_object();
	json_object *c = json_object_new_object();
	char key[HEX_BUF];

	for (unsigned g = 0; g < n_gpus; g++) {
		snprintf(key, sizeof(key), "%u", g);
		add_u64(p, key, peak[g]);
		add_u64(u, key, usage[g]);
	}
	for (unsigned i = 0; i < 4; i++)
		add_u64(c, count_names[i], counts[i]);
	json_object_object_add(o, "exit_status", exit_status >= 0 ? json_object_new_int(exit_status) : NULL);
	json_object_object_add(o, "signal", term_signal ? json_object_new_int(term_signal) : NULL);
	json_object_object_add(o, "peak", p);
	json_object_object_add(o, "usage_at_exit", u);
	if (mem_quota == UINT64_MAX)
		json_object_object_add(o, "quota", NULL);
	else
		add_u64(o, "quota", mem_quota);
	json_object_object_add(o, "decisions", c);
	if (sm)
		json_object_object_add(o, "sm", sm_summary_json(sm));
	return emit(a, o, true);
}

int gs_audit_sm_adjust(struct gs_audit *a, const struct gs_sm_adjust *adj)
{
	json_object *o = record_new(a, "sm_adjust");

	json_object_object_add(o, "gpu", json_object_new_int((int)adj->gpu));
	json_object_object_add(o, "target", ratio(adj->target_percent / PERCENT));
	json_object_object_add(o, "measured_share", ratio(adj->measured_share));
	json_object_object_add(o, "duty_before", ratio(adj->duty_before));
	json_object_object_add(o, "duty_after", ratio(adj->duty_after));
	json_object_object_add(o, "samples", json_object_new_int((int)adj->samples));
	return emit(a, o, false);
}

int gs_audit_sm_plan(struct gs_audit *a, const struct gs_sm_plan_info *p)
{
	json_object *o = record_new(a, "sm_plan");

	json_object_object_add(o, "gpu", json_object_new_int((int)p->gpu));
	json_object_object_add(o, "tenants", json_object_new_int((int)p->tenants));
	json_object_object_add(o, "asked_percent", json_object_new_int((int)p->asked_percent));
	json_object_object_add(o, "oversubscribed", json_object_new_boolean(p->oversubscribed));
	json_object_object_add(o, "own_share", ratio(p->own_share));
	json_object_object_add(o, "on_share", ratio(p->on_share));
	return emit(a, o, false);
}

int gs_audit_error(struct gs_audit *a, const char *message)
{
	json_object *o = record_new(a, "error");
	add_text(o, "message", message);
	return emit(a, o, false);
}
