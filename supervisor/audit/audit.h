/* SPDX-License-Identifier: MIT */
/*
 * audit.h - the JSON Lines audit log.
 *
 * Each record is written with a single write(2) as soon as the decision is
 * made, never buffered in the process, so a record that was made survives
 * the workload being killed or the supervisor exiting on an error.
 *
 * The log is tamper-evident (issue #17 item 6): every record carries its
 * sandbox's sequence number, the hash of the record before it ("prev") and
 * its own SHA-256 ("hash", over the record's text up to that field), and
 * the last record, "seal", closes the chain. `gpusandbox audit verify`
 * (audit_verify.c) checks it; man/gpusandbox.1, AUDIT LOG, says what the
 * chain detects and what it cannot.
 */
#ifndef GPUSANDBOX_AUDIT_H
#define GPUSANDBOX_AUDIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit_guard.h"
#include "audit_policy.h"
#include "audit_rotate.h"
#include "policy.h"
#include "gs_error.h"
#include "quota.h"
#include "driver.h"
#include "rm_tables.h"
#include "sha256.h"

/* The record format's version, in the start record ("schema"). A reader
 * refuses a newer one rather than misread it. */
/* 2: the start record's policy, host and labels; outcome; suppressed
 * records; FILE_CLOSE credited to the client's creator, tid null.
 * 3: the record level (start's "level"): below "all", allowed calls are
 * not written and "usage" records give the memory in use over time; the
 * seal counts the decisions left out ("below_level"); a refusal may carry
 * its thread's call stack ("stack"). */
#define GS_AUDIT_SCHEMA 3
/* The serializer's options: one line, "/" not escaped as "\/". */
#define GS_AUDIT_JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

enum gs_verdict { GS_VERDICT_ALLOW, GS_VERDICT_DENY, GS_VERDICT_CONTINUE, GS_VERDICT_REFUSE,
                  GS_VERDICT_RELEASE };

/* Identical refusals repeated within GS_AUDIT_REPEAT_WINDOW_NS of a run's
 * first record are counted, not written (issue #15: a retry loop wrote 1301
 * identical records). A refusal is a deny or refuse verdict, or a call the
 * driver failed (outcome driver or device_full). Up to GS_AUDIT_REPEAT_RUNS
 * runs are open at once, so processes retrying side by side, or a loop that
 * frees between tries, are folded too. A run ends when its window has
 * passed (at the next record written), when its slot is needed for a new
 * run, or when the log closes; then one "suppressed" record gives its
 * count, before any later record. */
#define GS_AUDIT_REPEAT_WINDOW_NS 1000000000ull
#define GS_AUDIT_REPEAT_RUNS 8u
#define GS_AUDIT_KEY_TEXT 160
struct gs_audit_repeat {
	bool     active;            /* a run is open in this slot */
	pid_t    pid;
	char     call[GS_AUDIT_KEY_TEXT], reason[GS_AUDIT_KEY_TEXT];
	bool     has_class, has_control;
	uint32_t cls, control;
	enum gs_verdict verdict;
	uint32_t status;            /* the RM status answered (0 if none) */
	int      outcome;           /* enum gs_outcome */
	uint64_t first_seq;         /* the record the repeats repeat */
	uint64_t start_ns;          /* CLOCK_MONOTONIC of that record */
	uint64_t count;             /* repeats not written */
	char     last_time[40];
};

/* What is written (--audit-level, the policy's audit-level):
 * - REFUSALS: the start, every refusal (never dropped, only folded into a
 *   suppressed count), errors, the summary and the seal;
 * - STANDARD (the default): that, the calls passed on unexamined, releases
 *   that matter (memory freed when its file closed, frees of at least
 *   GS_AUDIT_RELEASE_BYTES) and "usage" records: one per GPU whose memory
 *   in use changed, at most one per GS_AUDIT_USAGE_INTERVAL_NS;
 * - ALL: every decision, as before schema 3.
 * The chain covers what is written, whatever the level. */
/* (enum gs_audit_level and its names are in policy.h, with its key.) */
#define GS_AUDIT_RELEASE_BYTES (256ull << 20)
#define GS_AUDIT_USAGE_INTERVAL_NS 250000000ull /* 4 per second per GPU */

/* Video memory in use on one GPU, as the decisions report it, for the
 * usage records: the value last written and the one not yet written. */
struct gs_audit_usage {
	bool     seen, pending, unlimited, written;
	uint64_t used, quota;
	uint64_t peak_since;        /* the most in use since the last record */
	uint64_t written_ns;        /* CLOCK_MONOTONIC of the last record */
};

/* The command name and thread group of a task, read from /proc once and
 * kept GS_AUDIT_TASK_TTL_NS: a record only names them, nothing is decided
 * on them, so a name up to that old is good enough and saves the read
 * that was most of an audited call's cost (perf.md: about 16 us). */
#define GS_AUDIT_TASK_SLOTS 64u
#define GS_AUDIT_TASK_TTL_NS 1000000000ull
#define GS_AUDIT_COMM_LEN 32u
struct gs_audit_task {
	pid_t    tid, tgid;
	char     comm[GS_AUDIT_COMM_LEN];
	uint64_t read_ns;
};

/* A refused thread's user-space stack, filled by the executor when
 * stacks are on (stack.h); frames are symbolized text, workload data. */
#define GS_STACK_MAX_FRAMES 24u  /* a PyTorch refusal: 16 frames reach cudaMalloc */
#define GS_STACK_FRAME_TEXT 160u
struct gs_stack {
	unsigned n;
	const char *error;          /* why no stack (static text), or NULL */
	bool     truncated;         /* more frames than GS_STACK_MAX_FRAMES */
	char     frame[GS_STACK_MAX_FRAMES][GS_STACK_FRAME_TEXT];
};

struct gs_audit {
	int      fd;
	enum gs_audit_level level;
	char     sandbox_id[33];
	/* The notify thread and the compute-share thread both write: the
	 * lock orders seq, the chain and the writes (a race TSan saw on seq,
	 * issue #17 item 13). Everything below is under it. */
	pthread_mutex_t lock;
	uint64_t seq;
	char     prev[GS_SHA256_HEX];   /* hash of the last record written */
	bool     sealed;
	bool     failed;        /* a write failed: the caller must fail closed */
	bool     no_nvidia_device; /* start record: no /dev/nvidiactl to enforce on */
	const struct gs_rm_abi *rm_abi; /* names of classes and controls */
	struct gs_audit_repeat repeat[GS_AUDIT_REPEAT_RUNS];
	pid_t    owner;         /* the supervisor: only it seals, also at exit */
	struct gs_audit_usage usage[GS_MAX_GPUS];
	struct gs_audit_task tasks[GS_AUDIT_TASK_SLOTS];
	/* For the metrics (read under the lock): records written, repeats
	 * folded into suppressed counts, decisions below the level. */
	uint64_t n_written, n_suppressed, n_below_level;
	/* What keeps the workload away from the file (audit_guard.h): set
	 * by the runner after the open, said in the start record. */
	struct gs_audit_guard guard;
	/* --audit-max-size / --audit-max-files (audit_rotate.h); off: one file. */
	struct gs_audit_rotation rot;
};

/* One decision, filled by the executor. Fields left at their zero/unset
 * value are omitted. */

struct gs_decision {
	pid_t        pid, tid;
	/* With tid 0 (no thread made the call): the process's name as known
	 * earlier; NULL to read it from /proc. */
	const char  *comm;
	const char  *call;          /* "RM_ALLOC", ... */
	bool         has_class;
	uint32_t     cls;
	bool         has_control;
	uint32_t     control;
	int          gpu;           /* -1: none */
	bool         has_size;
	uint64_t     size;
	enum gs_verdict verdict;
	bool         has_status;
	uint32_t     status;
	int          errnum;        /* errno answered, if any */
	uint64_t     usage_before, usage_after, quota;
	bool         has_usage;
	uint32_t     h_client, h_object;
	const char  *resource;      /* what usage/quota count: "vidmem", "channels", ... */
	const char  *reason;
	/* Answered without the driver by a configured mode, with the
	 * driver's status for it (outcome "answered", not a refusal). */
	bool         answered;
	const char  *group;         /* policy group of the class or control */
	bool         has_escape;
	uint8_t      escape;        /* the escape number (_IOC_NR) refused */
	/* A refusal's call stack: called, with the audit lock held, only
	 * when the refusal is written (not when it is folded into a count);
	 * NULL for none. */
	void       (*stack_fill)(void *ctx, struct gs_stack *out);
	void        *stack_ctx;
};

/* Does the decision's quota mean "no limit"? Bytes use GS_QUOTA_UNLIMITED,
 * counts (a resource other than vidmem) GS_COUNT_UNLIMITED. */
static inline bool gs_decision_unlimited(const struct gs_decision *d)
{
	return d->quota == GS_QUOTA_UNLIMITED || (d->resource && d->quota == GS_COUNT_UNLIMITED);
}

/* --sm figures for the summary record. */
struct gs_sm_gpu_summary {
	unsigned gpu;
	double   achieved_share;  /* mean measured share over busy windows */
	unsigned busy_windows, windows;
	double   duty;            /* the last duty cycle */
	uint64_t toggles;         /* FIFO_DISABLE_CHANNELS calls issued */
	bool     open_loop;       /* no utilization samples: duty = target */
};
struct gs_sm_summary {
	uint32_t target_percent, period_ms;
	unsigned n;
	struct gs_sm_gpu_summary gpu[GS_MAX_GPUS];
};

/* One compute-share controller adjustment. */
struct gs_sm_adjust {
	unsigned gpu;
	uint32_t target_percent;
	double   measured_share, duty_before, duty_after;
	unsigned samples;
};

/* Opens path for appending (created with mode 0600, close-on-exec: the
 * workload never inherits it). */
int  gs_audit_open(struct gs_audit *a, const char *path, const char *sandbox_id, struct gs_error *err);
/* After gs_audit_open(path): rotate the log by size and count from now on
 * (audit_rotate.h). Returns 0, or -1 with err set (the options checked). */
int  gs_audit_set_rotation(struct gs_audit *a, const char *path, uint64_t max_size, unsigned max_files,
                           struct gs_error *err);
/* --audit-fd: writes to fd, which must be open for writing and not 0-2. It
 * is moved to a close-on-exec descriptor and the number given is closed,
 * so the workload never sees it. */
int  gs_audit_open_fd(struct gs_audit *a, int fd, const char *sandbox_id, struct gs_error *err);
/* --audit-fd's argument: a decimal descriptor number, 3 or above (0-2
 * are the streams the workload shares). Returns 0 or -1. */
int  gs_parse_audit_fd(const char *s, int *fd);
/* Writes the seal (if not yet written) and closes the log. The seal is
 * also written at exit() by the supervisor if it returns without this.
 * Returns -1 if any record, the seal included, could not be written. */
int  gs_audit_close(struct gs_audit *a);

/* What the start record says. */
struct gs_audit_start {
	pid_t                  child;     /* COMMAND's process, or the container's init */
	char *const           *argv;      /* the command (or "container", ID) */
	const struct gs_quota *quota;     /* the effective limits */
	const struct gs_rules *rules;     /* the effective allowlist */
	const struct gs_driver *driver;
	const struct gs_audit_labels *labels; /* --label; NULL for none */
	bool                   stacks;    /* refusals carry call stacks */
	/* Who and where (issue #28): the workload's uid as the host sees it
	 * (-1: unknown), its user name (NULL: none known), its working
	 * directory (NULL: unknown), and the policy file whose SHA-256 the
	 * record carries (NULL: no file). */
	long                   uid;
	const char            *user;
	const char            *cwd;
	const char            *policy_file;
	/* --uvm-map as-user: the workload's memory is dup'able by every
	 * process of its uid (own_rm.h); "uvm_map" says which mode. */
	bool                   uvm_map_as_user;
};
int gs_audit_start(struct gs_audit *a, const struct gs_audit_start *s);

/* After gs_audit_open of a log a dead supervisor of the same sandbox was
 * writing (an agent resuming a container): GOES_ON when the chain is taken
 * up after that sandbox's last whole record (no start record is written
 * then), SEALED when that record is its seal (a new chain needs a new
 * sandbox id), NONE when the log holds no record of it (audit_resume.c). */
enum { GS_AUDIT_CHAIN_NONE, GS_AUDIT_CHAIN_GOES_ON, GS_AUDIT_CHAIN_SEALED };
int gs_audit_resume_chain(struct gs_audit *a, const char *path);
int gs_audit_decision(struct gs_audit *a, const struct gs_decision *d);
/* peak/usage arrays are indexed by GPU, n_gpus entries. */
int gs_audit_summary(struct gs_audit *a, int exit_status, int term_signal, unsigned n_gpus,
                     const uint64_t *peak, const uint64_t *usage, uint64_t mem_quota,
                     const uint64_t counts[4], const struct gs_sm_summary *sm);
int gs_audit_sm_adjust(struct gs_audit *a, const struct gs_sm_adjust *adj);

/* A compute-share plan from the GPU's coordinator, when the tenants or
 * their asks change (supervisor/compute/coord.h). */
struct gs_sm_plan_info {
	unsigned gpu;
	uint32_t tenants, asked_percent;
	bool     oversubscribed;   /* asks over 100 %: every share scaled */
	double   own_share;        /* our window alone, of the period */
	double   on_share;         /* all we may run in (lent time included) */
};
int gs_audit_sm_plan(struct gs_audit *a, const struct gs_sm_plan_info *p);
int gs_audit_error(struct gs_audit *a, const char *message);
/* Writes the usage records that are due (a runner calls it now and then,
 * so that the last change before a quiet spell is not left unwritten). */
int gs_audit_tick(struct gs_audit *a);
/* The same, waiting at most wait_ms for the log's lock: a worker holds it
 * while it reads a refused task's call stack (stack.c), which the workload
 * can stall (its stack pointer in a page of a FUSE file of its own).
 * 1 when the lock did not come (nothing done). */
int gs_audit_tick_within(struct gs_audit *a, unsigned wait_ms);
/* Would this decision be written at the log's level? (A refusal always.) */
bool gs_audit_wants(const struct gs_audit *a, const struct gs_decision *d);
/* The counters the metrics show, read under the lock. */
void gs_audit_counters(struct gs_audit *a, uint64_t *written, uint64_t *suppressed,
                       uint64_t *below_level);
/* The same within wait_ms (see gs_audit_tick_within); false, nothing
 * read, when the lock did not come. */
bool gs_audit_counters_within(struct gs_audit *a, uint64_t *written, uint64_t *suppressed,
                              uint64_t *below_level, unsigned wait_ms);

const char *gs_verdict_name(enum gs_verdict v);

/* What became of a decision, beside its verdict, so that a refusal by a
 * quota and a GPU that is really full no longer look alike. */
enum gs_outcome {
	GS_OUTCOME_OK,          /* performed, and the driver said NV_OK */
	GS_OUTCOME_CONTINUED,   /* passed on to the driver unexamined */
	GS_OUTCOME_RELEASED,    /* memory given back */
	GS_OUTCOME_QUOTA,       /* refused by a limit (--mem, --channels, ...) */
	GS_OUTCOME_POLICY,      /* refused by the policy or the sandbox's rules */
	GS_OUTCOME_DRIVER,      /* performed, and the driver failed it */
	GS_OUTCOME_DEVICE_FULL, /* within quota, the driver had no memory left */
	GS_OUTCOME_ANSWERED,    /* answered by gpusandbox as configured, the driver not asked
	                         * (p2p-register none: no third-party P2P object) */
};
enum gs_outcome gs_decision_outcome(const struct gs_decision *d);
/* quota, policy, driver or device_full: never dropped from the log. */
bool gs_outcome_is_refusal(enum gs_outcome o);
const char *gs_outcome_name(enum gs_outcome o);

/* Formats now as RFC 3339 UTC with microseconds. */
void gs_format_time(char *buf, unsigned len);

/* Reads the command name and thread-group id of a task ("?" if gone). */
void gs_read_task(pid_t tid, pid_t *tgid, char *comm, unsigned len);

#endif
