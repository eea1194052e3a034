/* SPDX-License-Identifier: MIT */
/*
 * quiesce.c - stops the tasks that share a trapped task's fd table for
 * the time a continued call needs (quiesce.h says why).
 *
 * The order, and why each step is there:
 *  1. every task sharing the caller's fd table is found (kcmp KCMP_FILES
 *     over /proc) and seized and interrupted (PTRACE_SEIZE, then
 *     PTRACE_INTERRUPT: no signal is sent, nothing the workload sees
 *     changes but the time), until each is stopped (waitid) or held in a
 *     trapped call another worker has received; the search is repeated
 *     until it finds no new task, since one not yet stopped could clone
 *     another that shares the table;
 *  2. the caller is seized too (it is trapped: nothing happens to it);
 *  3. the executor checks the file behind the number and answers;
 *  4. after a CONTINUE the kernel took, the caller is interrupted and its
 *     stop awaited: it stops only on its way back to user space, after
 *     the ioctl, so after the kernel's fdget. The interrupt is sent after
 *     the answer: a pending interrupt would otherwise end an interruptible
 *     seccomp wait (a kernel without WAIT_KILLABLE_RECV) and the kernel
 *     would drop the notification. Once the answer is in, the wait sees
 *     it first (do_wait_for_common checks the completion before signals);
 *  5. each stopped task is detached (a signal it stopped for is given
 *     back: PTRACE_DETACH's data), then the thread that traced them exits,
 *     and the kernel detaches whatever did not stop (exit_ptrace), its
 *     pending signals kept.
 * The sandbox's other waits must not take these stops: the command line's
 * main thread reaps with __WNOTHREAD (main.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpusandbox.h"
#include "quiesce.h"
#include "test_switch.h"
#include "sharers.h"

#define PROC_PATH_MAX 64
#define NS_PER_MS 1000000ull
#define NS_PER_US 1000ull
#define NS_PER_S 1000000000ull
/* Polling: from POLL_MIN_US, doubling up to POLL_MAX_US. A stop is
 * awaited from STOP_POLL_MIN_US: an interrupted task stops within tens of
 * microseconds, and a client allocation waits for it (issue #16). */
#define POLL_MIN_US 50
#define STOP_POLL_MIN_US 5
#define POLL_MAX_US 2000
/* A stop, or a continued caller's return (a UVM channel registration
 * takes about 1 ms, a client allocation 35 us), is looked for every
 * FAST_POLL_US for its first FAST_POLL_MS, then less and less often: with
 * doubling alone a caller back after 1.1 ms waited, stopped, until the
 * look at 1.3 ms (on the H200, each of PyTorch's 20 registrations took
 * 2.2 ms under the sandbox against 1.1 natively, tests/gpu/ioctl_time.c). */
#define FAST_POLL_US 20
#define FAST_POLL_MS 20
/* A task still traced (EPERM) may be one the previous quiesce's thread is
 * still letting go as it exits: asked again for this long. */
#define SEIZE_RETRY_MS 100
/* The tracing thread's timer slack (PR_SET_TIMERSLACK; 0 would mean the
 * default). */
#define TRACER_TIMER_SLACK_NS 1000
/* A stop's status in waitid's si_status: (event << 8) | signal. */
#define STOP_EVENT_SHIFT 8
#define STOP_SIGNAL_MASK 0xff

/* Where a quiesce's time goes, for GPUSANDBOX_PROFILE (process-wide,
 * all sandboxes; gs_quiesce_print_profile). Relaxed counters: figures,
 * never decisions. */
static struct {
	_Atomic uint64_t begins, held, walks, walk_ns, seized, stop_ns, begin_ns, end_ns;
} prof;

static void prof_add(_Atomic uint64_t *v, uint64_t d)
{
	atomic_fetch_add_explicit(v, d, memory_order_relaxed);
}

/* One seized task, as its reports said. */
enum tracee_state { TRACEE_RUNNING, TRACEE_STOPPED, TRACEE_GONE };
struct tracee {
	pid_t             tid;
	enum tracee_state state;
	int               stop_status; /* si_status of its stop */
};

enum quiesce_state { Q_WORKING, Q_READY, Q_FAILED };
enum quiesce_go { GO_WAIT, GO_CONTINUED, GO_RELEASE, GO_INJECT_ARM, GO_INJECT, GO_INJECT_FINISH };
/* An injection's steps, as the tracing thread publishes them. */
enum inject_phase { INJ_NONE, INJ_ARMED, INJ_RAN };

struct gs_quiesce {
	pthread_t                    thread;
	pid_t                        caller;
	const struct gs_quiesce_who *who;   /* valid until gs_quiesce_begin returns */
	pthread_mutex_t              m;
	pthread_cond_t               cv;
	enum quiesce_state           state; /* under m */
	enum quiesce_go              go;    /* under m */
	bool                         done;  /* under m: the tracing thread is finishing */
	bool                         orphaned; /* under m: it frees q itself */
	bool                         caller_back; /* under m: the caller trapped again */
	const char                  *why;
	int                          n;     /* tasks seized, not counting the caller */
	struct gs_inflight          *track; /* a reference, or NULL */
	struct gs_inflight          *live;  /* a reference, or NULL */
	struct tracee                t[GS_QUIESCE_MAX_SHARERS];
	struct tracee                caller_t;
	bool                         lone;  /* no sharer was found: only the caller is seized */
	/* Injection (gs_quiesce_inject_*); the phase under m. */
	bool                         inject;
	struct gs_inject_marks      *marks;
	enum inject_phase            phase;
	struct gs_inject_plan       *plan;
	struct gs_inject_out        *inj_out;
	enum gs_inject_outcome       outcome;
	struct gs_inject_regs        saved;
	long                         inj_ret;
};

static uint64_t now_ns(void);

/* Polling intervals double up to POLL_MAX_US. */
static unsigned doubled_poll_us(unsigned us)
{
	return us * 2 > POLL_MAX_US ? POLL_MAX_US : us * 2;
}

struct gs_inflight {
	atomic_uint n;
	atomic_uint refs;
};

struct gs_inflight *gs_inflight_new(void)
{
	struct gs_inflight *f = calloc(1, sizeof(*f));

	if (f)
		atomic_init(&f->refs, 1);
	return f;
}

void gs_inflight_put(struct gs_inflight *f)
{
	if (f && atomic_fetch_sub(&f->refs, 1) == 1)
		free(f);
}

unsigned gs_inflight_count(const struct gs_inflight *f)
{
	return f ? atomic_load(&f->n) : 0;
}

bool gs_inflight_wait_none(const struct gs_inflight *f, unsigned ms)
{
	uint64_t until = now_ns() + ms * NS_PER_MS;
	unsigned poll_us = STOP_POLL_MIN_US;

	while (gs_inflight_count(f)) {
		if (now_ns() > until)
			return false;
		usleep(poll_us);
		poll_us = doubled_poll_us(poll_us);
	}
	return true;
}

/* One call counted in flight, with a reference of its own (the tracing
 * thread's, taken before it starts, or a performed registration's). */
void gs_inflight_begin(struct gs_inflight *f)
{
	if (!f)
		return;
	atomic_fetch_add(&f->refs, 1);
	atomic_fetch_add(&f->n, 1);
}

void gs_inflight_end(struct gs_inflight *f)
{
	if (!f)
		return;
	atomic_fetch_sub(&f->n, 1);
	gs_inflight_put(f);
}

static uint64_t now_ns(void)
{
	return gs_clock_ns(CLOCK_MONOTONIC);
}

int gs_fd_sharers_counted(pid_t tid, const struct gs_taskset *tasks, pid_t *out, int max,
                          struct gs_walk_stats *stats)
{
	uint64_t t0 = now_ns();
	int n = gs_sharers_search(tid, tasks, out, max, stats);
	int err = errno;

	prof_add(&prof.walks, 1);
	prof_add(&prof.walk_ns, now_ns() - t0);
	errno = err;
	return n;
}

int gs_fd_sharers(pid_t tid, const struct gs_taskset *tasks, pid_t *out, int max)
{
	return gs_fd_sharers_counted(tid, tasks, out, max, NULL);
}

static bool seized_already(const struct gs_quiesce *q, pid_t t)
{
	for (int i = 0; i < q->n; i++)
		if (q->t[i].tid == t)
			return true;
	return false;
}

/* Is t traced by a thread of this process: the tracing thread of a quiesce
 * handed off (gs_quiesce_hand_off), which holds t until its continued
 * caller has left the ioctl? Read from /proc/TID/status's TracerPid. */
static bool traced_by_us(pid_t t)
{
	char path[PROC_PATH_MAX], value[PROC_PATH_MAX];
	int tracer = 0;

	if (!gs_proc_status_field(t, "TracerPid:", value, sizeof(value)) || (tracer = atoi(value)) <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/self/task/%d", tracer);
	return access(path, F_OK) == 0;
}

/* PTRACE_SEIZE, asked again for a while when t is traced already: for
 * SEIZE_RETRY_MS, or, while the tracer is one of ours, as long as a
 * continued caller may stay in its ioctl (the worker that handed that
 * quiesce off no longer waits for it, so the next call of the same
 * threads may come first: issue #16). */
static int seize(pid_t t)
{
	uint64_t start = now_ns(), until = start + SEIZE_RETRY_MS * NS_PER_MS;
	unsigned poll_us = POLL_MIN_US;
	bool ours_looked = false;

	while (ptrace(PTRACE_SEIZE, t, 0, 0) < 0) {
		if (errno != EPERM)
			return -1;
		if (!ours_looked) {
			ours_looked = true;
			if (traced_by_us(t))
				until = start + (GS_QUIESCE_CALLER_MS + GS_QUIESCE_STOP_MS) * NS_PER_MS;
		}
		if (now_ns() > until) {
			errno = EPERM;
			return -1;
		}
		usleep(poll_us);
		poll_us = doubled_poll_us(poll_us);
	}
	return 0;
}

/* Seizes and interrupts t. 0, 1 when t is gone, -1 with q->why. */
static int seize_and_interrupt(struct gs_quiesce *q, pid_t t)
{
	if (q->n >= GS_QUIESCE_MAX_SHARERS) {
		q->why = "too many tasks share the caller's fd table";
		return -1;
	}
	if (seize(t) < 0) {
		if (errno == ESRCH)
			return 1;
		q->why = "cannot stop a task that shares the caller's fd table "
		         "(ptrace not permitted, or it is traced already)";
		return -1;
	}
	q->t[q->n++] = (struct tracee){ .tid = t, .state = TRACEE_RUNNING };
	prof_add(&prof.seized, 1);
	/* Only fails when t is dying: then it is no danger either. */
	(void)ptrace(PTRACE_INTERRUPT, t, 0, 0);
	return 0;
}

/* Has the tracee stopped (or ended) since it was seized? Takes the
 * report; true once it has. */
static bool reported_stop(struct tracee *t)
{
	siginfo_t si = { 0 };

	if (t->state != TRACEE_RUNNING)
		return true;
	/* A stop's report is taken; an end's is only looked at (WNOWAIT): the
	 * command line's workload is its supervisor's child, and its exit
	 * status belongs to the main thread's wait (main.c). The kernel hands
	 * an ended tracee on when this thread exits. */
	if (waitid(P_PID, (id_t)t->tid, &si, WSTOPPED | WNOHANG | __WALL) == 0 && si.si_pid == t->tid) {
		t->state = TRACEE_STOPPED;
		t->stop_status = si.si_status;
	} else if (waitid(P_PID, (id_t)t->tid, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0) {
		if (errno == ECHILD) /* not ours any more: gone */
			t->state = TRACEE_GONE;
	} else if (si.si_pid == t->tid && si.si_code != CLD_TRAPPED && si.si_code != CLD_STOPPED) {
		t->state = TRACEE_GONE;
	}
	/* A tracee's stop is reported to a WEXITED wait too (wait_task_stopped
	 * looks at every ptrace stop): one that came between the two looks is
	 * not an end, and is taken at the next look. Read as an end, it made
	 * an injection kill its caller (tests/adv second_client:flip_proc,
	 * 3 runs in 9). */
	return t->state != TRACEE_RUNNING;
}

/* Has tid ended (a zombie, or reaped)? A thread-group leader whose other
 * threads we trace is a zombie before its end can be reported to us: the
 * kernel reports it only once those threads are released. */
static bool has_ended(pid_t tid)
{
	char st = 'X';
	pid_t ppid;

	if (!gs_proc_state(tid, &st, &ppid))
		return true;
	return st == 'Z' || st == 'X';
}

/* Step 5 for one tracee: a stopped one is let go now, with the signal it
 * stopped for (a signal-delivery stop) handed back; an event stop (our
 * interrupt, a group stop) has none to give. */
static void let_go(const struct tracee *t)
{
	int sig = t->stop_status >> STOP_EVENT_SHIFT ? 0 : t->stop_status & STOP_SIGNAL_MASK;

	if (t->state == TRACEE_STOPPED)
		(void)ptrace(PTRACE_DETACH, t->tid, 0, (void *)(intptr_t)sig);
}

/* The next poll interval after us, started at t0 (now_ns). */
static unsigned next_poll_us(unsigned us, uint64_t t0)
{
	if (now_ns() - t0 < FAST_POLL_MS * NS_PER_MS)
		return us * 2 > FAST_POLL_US ? FAST_POLL_US : us * 2;
	return doubled_poll_us(us);
}

/* Until every seized task is stopped or held; false past the deadline. */
static bool all_quiet(struct gs_quiesce *q, uint64_t deadline)
{
	unsigned poll_us = STOP_POLL_MIN_US;
	const uint64_t t0 = now_ns();

	for (;;) {
		bool all = true;
		for (int i = 0; i < q->n; i++)
			if (!reported_stop(&q->t[i]) &&
			    !(q->who->held && q->who->held(q->who->held_ctx, q->t[i].tid)))
				all = false;
		if (all)
			return true;
		if (now_ns() > deadline)
			return false;
		usleep(poll_us);
		poll_us = next_poll_us(poll_us, t0);
	}
}

/* Step 1 (see the top of the file); NULL or why not. The first round
 * looks only at the caller's own thread group (/proc/TID/task: no walk of
 * every process), where a threaded caller's sharers are; every later round
 * walks /proc. The search ends only with a full walk that begins after
 * every sharer known so far has stopped and finds no new one: what it
 * relies on is what it relied on when every round was a walk (a stopped
 * task clones nothing; a task that exists throughout a walk is found by
 * it). So a threaded caller with no sharer outside its process costs one
 * walk, not two (issue #16). */
static const char *stop_sharers(struct gs_quiesce *q)
{
	uint64_t deadline = now_ns() + GS_QUIESCE_STOP_MS * NS_PER_MS;
	pid_t found[GS_QUIESCE_MAX_SHARERS];

	for (bool walk = false;; walk = true) {
		int fresh = 0, n;

		/* Without others_may_share the second look is the thread
		 * group's again: a thread not yet stopped may have made
		 * another. */
		n = walk && q->who->others_may_share
		            ? gs_fd_sharers_counted(q->caller, q->who->tasks, found, GS_QUIESCE_MAX_SHARERS,
		                                    q->who->stats)
		            : gs_sharers_in_process(q->caller, q->caller, q->who->tasks, found,
		                                    GS_QUIESCE_MAX_SHARERS, 0);
		for (int i = 0; i < n && !q->why; i++)
			if (!seized_already(q, found[i]) && seize_and_interrupt(q, found[i]) == 0)
				fresh++;
		if (n < 0)
			return "cannot tell which tasks share the caller's fd table (kcmp)";
		if (q->why)
			return q->why;
		uint64_t t0 = now_ns();
		bool quiet = all_quiet(q, deadline);
		prof_add(&prof.stop_ns, now_ns() - t0);
		if (!quiet)
			return "a task that shares the caller's fd table did not stop in time";
		if (walk && fresh == 0)
			return NULL;
	}
}

static void publish(struct gs_quiesce *q, enum quiesce_state s, const char *why)
{
	pthread_mutex_lock(&q->m);
	q->state = s;
	q->why = why;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->m);
}

/* The worker's next word after prev. */
static enum quiesce_go wait_go_past(struct gs_quiesce *q, enum quiesce_go prev)
{
	pthread_mutex_lock(&q->m);
	while (q->go == prev)
		pthread_cond_wait(&q->cv, &q->m);
	enum quiesce_go go = q->go;
	pthread_mutex_unlock(&q->m);
	return go;
}

static enum quiesce_go wait_go(struct gs_quiesce *q)
{
	return wait_go_past(q, GO_WAIT);
}

/* The condition variables' clock (CLOCK_REALTIME, their default), in ns,
 * and a time of it as pthread_cond_timedwait takes it. */
static uint64_t realtime_ns(void)
{
	return gs_clock_ns(CLOCK_REALTIME);
}

static struct timespec timespec_of(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / NS_PER_S), .tv_nsec = (long)(ns % NS_PER_S) };
}

/* Sleeps up to us, woken early when the worker says the caller is back
 * (gs_quiesce_caller_back); true once it is. */
static bool nap_unless_back(struct gs_quiesce *q, unsigned us)
{
	const struct timespec ts = timespec_of(realtime_ns() + us * NS_PER_US);
	bool back;

	pthread_mutex_lock(&q->m);
	if (!q->caller_back)
		(void)pthread_cond_timedwait(&q->cv, &q->m, &ts);
	back = q->caller_back;
	pthread_mutex_unlock(&q->m);
	return back;
}

/* GPUSANDBOX_TEST_QUIESCE_INTERRUPT_DELAY_US (read once): the interrupt
 * of a continued caller comes this late, so that a caller whose call
 * returns at once traps again before it (the order the H200 showed for a
 * 35 us client allocation; tests/adv quick_return). Never for use. */
static unsigned test_interrupt_delay_us(void)
{
	static atomic_int us = -1;

	if (atomic_load(&us) < 0) {
		const char *v = gs_test_switch("GPUSANDBOX_TEST_QUIESCE_INTERRUPT_DELAY_US");
		atomic_store(&us, v ? atoi(v) : 0);
	}
	return (unsigned)atomic_load(&us);
}

/* Step 4: the caller stops on its way back to user space, or ends. No
 * bound here: until then the sharers stay stopped (fail closed); a
 * worker that waits for this thread (gs_quiesce_end) stops waiting after
 * GS_QUIESCE_CALLER_MS, one that handed it off waits not at all. The
 * caller's next trap ends the wait too (gs_quiesce_caller_back).
 * A caller that left its ioctl before our interrupt came may go on to end
 * its whole thread group; as a group leader it is then a zombie whose end
 * is not reported while we trace its other threads, so its state is read
 * as well (a zombie made no call after its end). Without that, the
 * supervisor waited for it forever (tests/unit/test_quiesce, the
 * group-ending caller). */
static void wait_caller_out(struct gs_quiesce *q)
{
	struct tracee *caller = &q->caller_t;
	unsigned poll_us = STOP_POLL_MIN_US;
	const uint64_t t0 = now_ns();

	if (test_interrupt_delay_us() && nap_unless_back(q, test_interrupt_delay_us()))
		return;
	(void)ptrace(PTRACE_INTERRUPT, caller->tid, 0, 0);
	while (!reported_stop(caller)) {
		if (poll_us >= POLL_MAX_US / 2 && has_ended(caller->tid))
			return;
		/* The caller trapped again: its continued ioctl is over (a
		 * task makes one system call at a time), and it waits in the
		 * seccomp trap, where our interrupt may not stop it. */
		if (nap_unless_back(q, poll_us))
			return;
		poll_us = next_poll_us(poll_us, t0);
	}
}

static void publish_phase(struct gs_quiesce *q, enum inject_phase p)
{
	pthread_mutex_lock(&q->m);
	q->phase = p;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->m);
}

/* The injection's stop: the caller's first after the answer
 * -ERESTARTNOINTR, which the pending interrupt makes (inject.c). Bounded:
 * a caller that neither stops nor ends is killed (fail closed). */
static enum gs_inject_outcome inject_at_stop(struct gs_quiesce *q)
{
	struct tracee *caller = &q->caller_t;
	const uint64_t deadline = now_ns() + GS_QUIESCE_STOP_MS * NS_PER_MS;
	unsigned poll_us = STOP_POLL_MIN_US;
	const uint64_t t0 = now_ns();

	while (!reported_stop(caller)) {
		if (now_ns() > deadline) {
			q->inj_out->why = "the caller did not stop for the injection";
			return GS_INJECT_LOST;
		}
		usleep(poll_us);
		poll_us = next_poll_us(poll_us, t0);
	}
	if (caller->state == TRACEE_GONE) {
		q->inj_out->why = "the caller is gone";
		return GS_INJECT_LOST;
	}
	return gs_inject_ioctl(caller->tid, caller->stop_status, q->plan, q->marks, &q->saved,
	                       q->inj_out);
}

/* The tracing thread's part of an injection (quiesce.h), every ptrace
 * request from this thread, the tracer. The caller is let go after it
 * with no signal given back at detach: the signals it met are sent again
 * by gs_inject_finish, while it is still stopped. */
static void inject_steps(struct gs_quiesce *q)
{
	struct tracee *caller = &q->caller_t;

	(void)ptrace(PTRACE_INTERRUPT, caller->tid, 0, 0);
	publish_phase(q, INJ_ARMED);
	if (wait_go_past(q, GO_INJECT_ARM) != GO_INJECT)
		return; /* not answered -ERESTARTNOINTR: let go as it is */
	q->outcome = inject_at_stop(q);
	publish_phase(q, INJ_RAN);
	(void)wait_go_past(q, GO_INJECT);
	switch (q->outcome) {
	case GS_INJECT_DONE:
	case GS_INJECT_FAILED:
		if (gs_inject_finish(caller->tid, &q->saved, q->inj_ret, q->inj_out))
			caller->stop_status = PTRACE_EVENT_STOP << STOP_EVENT_SHIFT;
		break;
	case GS_INJECT_LOST:
		(void)syscall(SYS_tkill, caller->tid, SIGKILL);
		break;
	case GS_INJECT_UNTOUCHED:
		break; /* detached as it is: the kernel restarts the ioctl */
	}
}

static void set_go(struct gs_quiesce *q, enum quiesce_go go)
{
	pthread_mutex_lock(&q->m);
	q->go = go;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->m);
}

static void wait_phase(struct gs_quiesce *q, enum inject_phase p)
{
	pthread_mutex_lock(&q->m);
	while (q->phase != p)
		pthread_cond_wait(&q->cv, &q->m);
	pthread_mutex_unlock(&q->m);
}

void gs_quiesce_inject_arm(struct gs_quiesce *q)
{
	set_go(q, GO_INJECT_ARM);
	wait_phase(q, INJ_ARMED);
}

enum gs_inject_outcome gs_quiesce_inject_run(struct gs_quiesce *q, struct gs_inject_plan *plan,
                                             struct gs_inject_out *out)
{
	q->plan = plan;
	q->inj_out = out;
	set_go(q, GO_INJECT);
	wait_phase(q, INJ_RAN);
	return q->outcome;
}

static void quiesce_free(struct gs_quiesce *q);

void gs_quiesce_inject_finish(struct gs_quiesce *q, long ret)
{
	q->inj_ret = ret;
	set_go(q, GO_INJECT_FINISH);
	pthread_join(q->thread, NULL);
	quiesce_free(q);
}

static void quiesce_free(struct gs_quiesce *q)
{
	gs_inflight_end(q->track);
	gs_inflight_end(q->live);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->m);
	free(q);
}

static void *tracing_thread(void *arg)
{
	struct gs_quiesce *q = arg;
	/* Its waits poll from 5 us; the default slack (50 us) would make
	 * each at least 55 (issue #16). This thread's alone. */
	(void)prctl(PR_SET_TIMERSLACK, TRACER_TIMER_SLACK_NS, 0, 0, 0);
	/* An injection stops the address space's sharers too. */
	gs_sharers_vm(q->inject);
	/* A lone caller (seize_lone): its table was walked already. */
	const char *why = q->lone ? NULL : stop_sharers(q);
	bool orphaned;

	if (!why && seize(q->caller) < 0)
		why = errno == ESRCH ? "the caller is gone"
		                     : "cannot seize the caller (ptrace not permitted, or traced already)";
	q->caller_t = (struct tracee){ .tid = why ? 0 : q->caller, .state = TRACEE_RUNNING };
	publish(q, why ? Q_FAILED : Q_READY, why);
	enum quiesce_go go = why ? GO_RELEASE : wait_go(q);
	if (go == GO_CONTINUED)
		wait_caller_out(q);
	else if (go == GO_INJECT_ARM)
		inject_steps(q);
	for (int i = 0; i < q->n; i++)
		let_go(&q->t[i]);
	let_go(&q->caller_t);
	/* Counted out as soon as every task is let go, not when q is freed
	 * (a handed-off q is freed at the worker's next look). */
	gs_inflight_end(q->track);
	gs_inflight_end(q->live);
	q->track = q->live = NULL;
	pthread_mutex_lock(&q->m);
	q->done = true;
	orphaned = q->orphaned;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->m);
	if (orphaned)
		quiesce_free(q);
	/* Step 5: returning ends the thread, which detaches every tracee. */
	return NULL;
}

static int quiesce_begin(pid_t caller, const struct gs_quiesce_who *who, struct gs_quiesce **qp,
                         const char **why)
{
	pid_t probe[1];
	/* The caller's own threads first (/proc/TID/task lists its whole
	 * thread group): CUDA's processes are threaded, so this usually
	 * answers without a walk of every process. Only a "yes" is taken
	 * from it; "none" is asked of the full walk, as before. */
	gs_sharers_vm(who->inject);
	int n = gs_sharers_in_process(caller, caller, who->tasks, probe, 1, 0);
	if (n == 0 && who->others_may_share)
		n = gs_fd_sharers_counted(caller, who->tasks, probe, 1, who->stats);
	gs_sharers_vm(false);

	*qp = NULL;
	/* The common case: a table nobody else holds. The caller is trapped,
	 * so no task can come to share it (only a sharer can clone one). */
	if (n == 0 && !who->seize_lone)
		return 0;
	if (n < 0 && errno != E2BIG) {
		*why = "cannot tell which tasks share the caller's fd table (kcmp)";
		return -1;
	}
	struct gs_quiesce *q = calloc(1, sizeof(*q));
	if (!q) {
		*why = "out of memory";
		return -1;
	}
	q->caller = caller;
	q->who = who;
	q->lone = n == 0;
	q->inject = who->inject;
	q->marks = who->marks;
	q->track = who->track;
	q->live = who->live;
	gs_inflight_begin(q->track);
	gs_inflight_begin(q->live);
	pthread_mutex_init(&q->m, NULL);
	pthread_cond_init(&q->cv, NULL);
	if (pthread_create(&q->thread, NULL, tracing_thread, q) != 0) {
		quiesce_free(q);
		*why = "cannot start the thread that stops the fd table's sharers";
		return -1;
	}
	pthread_mutex_lock(&q->m);
	while (q->state == Q_WORKING)
		pthread_cond_wait(&q->cv, &q->m);
	pthread_mutex_unlock(&q->m);
	q->who = NULL;
	if (q->state == Q_FAILED) {
		*why = q->why;
		gs_quiesce_end(q, false);
		return -1;
	}
	*qp = q;
	return 0;
}

int gs_quiesce_begin(pid_t caller, const struct gs_quiesce_who *who, struct gs_quiesce **qp,
                     const char **why)
{
	uint64_t t0 = now_ns();
	int rc = quiesce_begin(caller, who, qp, why);

	prof_add(&prof.begins, 1);
	prof_add(&prof.held, *qp != NULL);
	prof_add(&prof.begin_ns, now_ns() - t0);
	return rc;
}

/* Waits for the tracing thread until deadline; true when it is done. */
static bool wait_done(struct gs_quiesce *q, uint64_t deadline)
{
	const struct timespec ts = timespec_of(deadline);
	bool done;

	pthread_mutex_lock(&q->m);
	while (!q->done && pthread_cond_timedwait(&q->cv, &q->m, &ts) != ETIMEDOUT)
		;
	done = q->done;
	if (!done)
		q->orphaned = true;
	pthread_mutex_unlock(&q->m);
	return done;
}

/* Frees q once its thread is done, waiting until deadline (realtime ns;
 * a past one does not wait). Past it, the caller is still in its ioctl:
 * the thread keeps the sharers stopped until it leaves, and frees q then. */
static void join_or_orphan(struct gs_quiesce *q, uint64_t deadline)
{
	/* Read while q is surely ours: once wait_done gives q up, the
	 * tracing thread may free it at any moment (found by make tsan on
	 * uvm_channel:stall, whose caller stays past the deadline). */
	const pthread_t thread = q->thread;

	if (!wait_done(q, deadline)) {
		pthread_detach(thread);
		return;
	}
	pthread_join(thread, NULL);
	quiesce_free(q);
}

static void quiesce_end(struct gs_quiesce *q, bool continued)
{
	pthread_mutex_lock(&q->m);
	if (q->go == GO_WAIT || q->go == GO_INJECT_ARM)
		q->go = continued && q->go == GO_WAIT ? GO_CONTINUED : GO_RELEASE;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->m);
	join_or_orphan(q, realtime_ns() + GS_QUIESCE_CALLER_MS * NS_PER_MS);
}

void gs_quiesce_end(struct gs_quiesce *q, bool continued)
{
	if (!q)
		return;
	uint64_t t0 = now_ns();
	quiesce_end(q, continued);
	prof_add(&prof.end_ns, now_ns() - t0);
}

/* Joins a handed-off quiesce whose thread is done, or will be at once. */
static void join_and_free(struct gs_quiesce *q)
{
	pthread_join(q->thread, NULL);
	quiesce_free(q);
}

static bool is_done(struct gs_quiesce *q)
{
	pthread_mutex_lock(&q->m);
	bool done = q->done;
	pthread_mutex_unlock(&q->m);
	return done;
}

/* Drops entry i (its order does not matter). */
static void handoffs_drop(struct gs_quiesce_handoffs *h, unsigned i)
{
	h->q[i] = h->q[--h->n];
}

static void handoffs_reap(struct gs_quiesce_handoffs *h)
{
	for (unsigned i = 0; i < h->n;)
		if (is_done(h->q[i])) {
			join_and_free(h->q[i]);
			handoffs_drop(h, i);
		} else {
			i++;
		}
}

bool gs_quiesce_hand_off(struct gs_quiesce_handoffs *h, struct gs_quiesce *q)
{
	if (!q)
		return true;
	handoffs_reap(h);
	if (h->n >= GS_QUIESCE_HANDOFF_MAX)
		return false;
	pthread_mutex_lock(&q->m);
	if (q->go == GO_WAIT)
		q->go = GO_CONTINUED;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->m);
	h->q[h->n++] = q;
	return true;
}

void gs_quiesce_caller_back(struct gs_quiesce_handoffs *h, pid_t tid)
{
	if (!h->n)
		return;
	uint64_t t0 = now_ns();
	for (unsigned i = 0; i < h->n;) {
		struct gs_quiesce *q = h->q[i];
		if (q->caller != tid) {
			i++;
			continue;
		}
		pthread_mutex_lock(&q->m);
		q->caller_back = true;
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->m);
		/* It lets every task go and ends: no wait of its own is left. */
		join_and_free(q);
		handoffs_drop(h, i);
	}
	handoffs_reap(h);
	prof_add(&prof.end_ns, now_ns() - t0);
}

void gs_quiesce_handoffs_fini(struct gs_quiesce_handoffs *h)
{
	for (unsigned i = 0; i < h->n; i++)
		join_or_orphan(h->q[i], 0);
	h->n = 0;
}

void gs_quiesce_print_profile(FILE *f)
{
	uint64_t begins = atomic_load(&prof.begins);

	if (!begins)
		return;
	fprintf(f, "  quiesce: %llu begun (%llu held sharers), %llu walks of /proc at %.1f us, %llu tasks "
	           "seized, waiting for stops %.1f us per begin; begin %.1f us, end %.1f us per call\n",
	        (unsigned long long)begins, (unsigned long long)atomic_load(&prof.held),
	        (unsigned long long)atomic_load(&prof.walks),
	        atomic_load(&prof.walk_ns) / 1e3 / (atomic_load(&prof.walks) ? atomic_load(&prof.walks) : 1),
	        (unsigned long long)atomic_load(&prof.seized), atomic_load(&prof.stop_ns) / 1e3 / begins,
	        atomic_load(&prof.begin_ns) / 1e3 / begins, atomic_load(&prof.end_ns) / 1e3 / begins);
}
