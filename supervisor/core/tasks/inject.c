/* SPDX-License-Identifier: MIT */
/*
 * inject.c - one ioctl performed by a stopped task from a private page of
 * its own (inject.h says why; docs/security/client-allocation.md says why
 * each step is sound).
 *
 * x86-64, measured on Linux 6.18 (the kernel the tests run on): with the
 * filter made with SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, an interrupt
 * sent while the task waits for its answer stays pending; the answer
 * -ERESTARTNOINTR then brings the task to a PTRACE_EVENT_STOP before the
 * kernel restarts the call, with rax -ERESTARTNOINTR, orig_rax the ioctl's
 * number and rip after the syscall instruction. From there, rip - 2 (the
 * syscall instruction), rax a system call's number and orig_rax -1 (no
 * restart of the old call), PTRACE_SYSCALL gives the entry stop and again
 * the exit stop with the result in rax. Letting the stop go with the
 * registers untouched restarts the ioctl instead: trapped again, and judged
 * afresh (the fail-safe of every early way out before the first change).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inject.h"
#include "test_switch.h"

/* A stop's status in waitid's si_status: (event << 8) | signal. */
#define STOP_EVENT_SHIFT 8
#define STOP_SIGNAL_MASK 0xff
/* The system-call stops' signal with PTRACE_O_TRACESYSGOOD unset. */
#define SYSCALL_STOP_SIG SIGTRAP

/* Each injected call's bound, and its polling (from 5 us, doubling to
 * 1 ms: a client allocation takes about 35 us in the driver). */
#define GS_INJECT_STEP_MS 5000
#define POLL_MIN_US 5
#define POLL_MAX_US 1000
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

#ifndef ERESTARTNOINTR
#define ERESTARTNOINTR 513 /* kernel-internal: the call is restarted, never -EINTR */
#endif
#ifndef ERESTARTSYS
#define ERESTARTSYS 512 /* kernel-internal: an interrupted wait's return */
#endif

void gs_inject_marks_init(struct gs_inject_marks *k)
{
	memset(k, 0, sizeof(*k));
	atomic_init(&k->live, 0);
	pthread_mutex_init(&k->m, NULL);
}

void gs_inject_marks_fini(struct gs_inject_marks *k)
{
	pthread_mutex_destroy(&k->m);
}

/* Marks (page != 0) or clears one injection; false when the table is full. */
static bool mark(struct gs_inject_marks *k, pid_t tid, int fd, unsigned long cmd, uint64_t page,
                 bool on)
{
	bool done = false;

	pthread_mutex_lock(&k->m);
	for (unsigned i = 0; i < GS_INJECT_MARKS && !done; i++) {
		if (on && k->e[i].tid == 0) {
			k->e[i].tid = tid;
			k->e[i].fd = fd;
			k->e[i].cmd = cmd;
			k->e[i].page = page;
			atomic_fetch_add(&k->live, 1);
			done = true;
		} else if (!on && k->e[i].tid == tid) {
			k->e[i].tid = 0;
			atomic_fetch_sub(&k->live, 1);
			done = true;
		}
	}
	pthread_mutex_unlock(&k->m);
	return done;
}

#if defined(__x86_64__)
#include <linux/audit.h>
#include <sys/user.h>

_Static_assert(sizeof(struct user_regs_struct) <= sizeof(struct gs_inject_regs), "regs fit");

/* The syscall instruction's length (0f 05): rip at the stop is after it. */
#define SYSCALL_INSN_LEN 2
#define SYSCALL_INSN 0x050f
#define INSN_MASK 0xffff
/* The 64-bit user code segment: a call made in compatibility mode, or
 * through int 0x80, is not one this code injects into. */
#define USER_CS_64 0x33

bool gs_inject_supported(void)
{
	return true;
}

bool gs_inject_marks_match(struct gs_inject_marks *k, pid_t tid, int nr, uint32_t arch,
                           const uint64_t args[6])
{
	bool hit = false;

	if (arch != AUDIT_ARCH_X86_64 || nr != __NR_ioctl || atomic_load(&k->live) == 0)
		return false;
	pthread_mutex_lock(&k->m);
	for (unsigned i = 0; i < GS_INJECT_MARKS && !hit; i++)
		hit = k->e[i].tid == tid && (uint64_t)(int64_t)k->e[i].fd == (uint64_t)(int64_t)(int)args[0] &&
		      (unsigned int)k->e[i].cmd == (unsigned int)args[1] && k->e[i].page == args[2];
	pthread_mutex_unlock(&k->m);
	return hit;
}

static int get_regs(pid_t tid, struct user_regs_struct *r)
{
	return (int)ptrace(PTRACE_GETREGS, tid, 0, r);
}

static int set_regs(pid_t tid, const struct user_regs_struct *r)
{
	return (int)ptrace(PTRACE_SETREGS, tid, 0, r);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* The task's next stop or end, polled up to GS_INJECT_STEP_MS: the
 * injected ioctl is trapped by the sandbox's filter, and a worker must
 * receive it; one that never does (every worker waits for the session
 * lock the injecting worker holds) must not hang the sandbox. Past the
 * bound the task is killed (GS_INJECT_LOST), which ends its wait. */
static int wait_stop(pid_t tid, siginfo_t *si, struct gs_inject_out *out)
{
	const uint64_t deadline = mono_ns() + GS_INJECT_STEP_MS * NS_PER_MS;
	unsigned poll_us = POLL_MIN_US;

	for (;;) {
		/* A stop's report is taken; an end's only looked at (WNOWAIT):
		 * the command line's workload is its supervisor's child, whose
		 * exit status is the main thread's (quiesce.c, reported_stop).
		 * A WEXITED wait reports a ptrace stop too: not an end. */
		memset(si, 0, sizeof(*si));
		if (waitid(P_PID, (id_t)tid, si, WSTOPPED | WNOHANG | __WALL) == 0 && si->si_pid == tid)
			return 0;
		memset(si, 0, sizeof(*si));
		if (waitid(P_PID, (id_t)tid, si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0)
			return -1;
		if (si->si_pid == tid && si->si_code != CLD_TRAPPED && si->si_code != CLD_STOPPED)
			return 0;
		if (mono_ns() > deadline) {
			out->why = "the injected call did not come back in time";
			return -1;
		}
		usleep(poll_us);
		poll_us = poll_us * 2 > POLL_MAX_US ? POLL_MAX_US : poll_us * 2;
	}
}

/* Resumes to the next system-call stop, noting every signal-delivery stop
 * on the way (suppressed now, given back at the end). 0 at a system-call
 * stop; -1 when the task is gone or stopped otherwise (out->why). */
static int next_syscall_stop(pid_t tid, struct gs_inject_out *out)
{
	int sig = 0;

	for (;;) {
		siginfo_t si = { 0 };
		if (ptrace(PTRACE_SYSCALL, tid, 0, (void *)(intptr_t)sig) < 0 || wait_stop(tid, &si, out) < 0) {
			out->why = out->why ? out->why : "the task is gone";
			return -1;
		}
		sig = 0;
		if (si.si_code != CLD_TRAPPED) {
			out->why = "the task ended during the injection";
			return -1;
		}
		int st = si.si_status;
		if (st == SYSCALL_STOP_SIG)
			return 0;
		if (st >> STOP_EVENT_SHIFT) {
			/* A group stop (PTRACE_EVENT_STOP): resumed, not kept. */
			continue;
		}
		/* A signal-delivery stop: suppressed now, sent again at the end. */
		if (out->nsig >= GS_INJECT_MAX_SIGNALS) {
			out->why = "too many signals during the injection";
			return -1;
		}
		out->sigs[out->nsig++] = st & STOP_SIGNAL_MASK;
	}
}

/* Runs one system call at the task's syscall instruction: regs is the
 * state to start from (rip after the instruction); the result in *ret.
 * 0, or -1 (out->why) when the task did not make exactly this call. */
static int run_syscall(pid_t tid, const struct user_regs_struct *base, long nr, const uint64_t a[6],
                       long *ret, struct gs_inject_out *out)
{
	struct user_regs_struct r = *base, seen;

	r.rip = base->rip - SYSCALL_INSN_LEN;
	r.rax = (uint64_t)nr;
	r.orig_rax = (uint64_t)-1;
	r.rdi = a[0];
	r.rsi = a[1];
	r.rdx = a[2];
	r.r10 = a[3];
	r.r8 = a[4];
	r.r9 = a[5];
	if (set_regs(tid, &r) < 0 || next_syscall_stop(tid, out) < 0)
		return out->why = out->why ? out->why : "cannot set the task's registers", -1;
	/* The entry stop: the call must be ours, made where we put it. */
	if (get_regs(tid, &seen) < 0 || seen.orig_rax != (uint64_t)nr || seen.rip != base->rip) {
		out->why = "the task did not enter the injected call";
		return -1;
	}
	if (next_syscall_stop(tid, out) < 0 || get_regs(tid, &seen) < 0)
		return -1;
	*ret = (long)seen.rax;
	return 0;
}

/* Is this the stop the answer -ERESTARTNOINTR brings, of this very ioctl? */
static bool restart_stop(pid_t tid, int stop_status, const struct gs_inject_plan *p,
                         struct user_regs_struct *r)
{
	long insn;

	if (!(stop_status >> STOP_EVENT_SHIFT) || get_regs(tid, r) < 0)
		return false;
	if (r->rax != (uint64_t)-ERESTARTNOINTR || r->orig_rax != __NR_ioctl || r->cs != USER_CS_64 ||
	    (int)r->rdi != p->fd || (unsigned int)r->rsi != (unsigned int)p->cmd || r->rdx != p->argp)
		return false;
	errno = 0;
	insn = ptrace(PTRACE_PEEKTEXT, tid, (void *)(uintptr_t)(r->rip - SYSCALL_INSN_LEN), 0);
	return errno == 0 && (insn & INSN_MASK) == SYSCALL_INSN;
}

static int page_io(pid_t tid, uint64_t page, void *buf, size_t len, bool write)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)page, len };
	ssize_t n = write ? process_vm_writev(tid, &local, 1, &remote, 1, 0)
	                  : process_vm_readv(tid, &local, 1, &remote, 1, 0);
	return n == (ssize_t)len ? 0 : -1;
}

/* The image with its pointers set to the page. */
static void point_image(struct gs_inject_plan *p, uint64_t page)
{
	for (unsigned i = 0; i < p->nptr; i++) {
		uint64_t v = page + p->ptr_to[i];
		memcpy(p->image + p->ptr_at[i], &v, sizeof(v));
	}
}

/* GPUSANDBOX_TEST_INJECT_DELAY_US (read once): the injected ioctl comes
 * this long after the page is written, so that a signal sent to the
 * caller lands during the injection (tests/adv second_client signal).
 * Never for use. */
static void test_inject_delay(void)
{
	static atomic_int us = -1;

	if (atomic_load(&us) < 0) {
		const char *v = gs_test_switch("GPUSANDBOX_TEST_INJECT_DELAY_US");
		atomic_store(&us, v ? atoi(v) : 0);
	}
	if (atomic_load(&us) > 0)
		usleep((useconds_t)atomic_load(&us));
}

/* GPUSANDBOX_TEST_INJECT_DROP_SIGNALS: the signals met during an
 * injection are not sent again (the baseline of tests/adv
 * second_client:signal). Never for use. */
static bool test_drop_signals(void)
{
	static atomic_int on = -1;

	if (atomic_load(&on) < 0)
		atomic_store(&on, gs_test_switch("GPUSANDBOX_TEST_INJECT_DROP_SIGNALS") != NULL);
	return atomic_load(&on) == 1;
}

/* GPUSANDBOX_TEST_INJECT_NO_EXITKILL: the caller is not made to die with
 * its tracer (the baseline of tests/agent injectkill-runc: an agent killed
 * mid-injection lets the caller run on from the registers it was left
 * with). Never for use. */
static bool test_no_exitkill(void)
{
	static atomic_int on = -1;

	if (atomic_load(&on) < 0)
		atomic_store(&on, gs_test_switch("GPUSANDBOX_TEST_INJECT_NO_EXITKILL") != NULL);
	return atomic_load(&on) == 1;
}

/* The kernel's internal restart codes (ERESTARTSYS to
 * ERESTART_RESTARTBLOCK), which a syscall we run ourselves returns to us
 * where the kernel would otherwise have restarted it. */
#define RESTART_CODE_FIRST 512
#define RESTART_CODE_LAST 516
static bool is_restart_return(long v)
{
	return v <= -RESTART_CODE_FIRST && v >= -RESTART_CODE_LAST;
}

/* The ioctl from the page, marked for the worker that will receive it. */
static int run_ioctl(pid_t tid, const struct user_regs_struct *base, struct gs_inject_plan *p,
                     uint64_t page, struct gs_inject_marks *k, struct gs_inject_out *out)
{
	const uint64_t a[6] = { (uint64_t)(int64_t)p->fd, p->cmd, page, 0, 0, 0 };
	int rc;

	point_image(p, page);
	if (page_io(tid, page, p->image, p->len, true) < 0) {
		out->why = "cannot write the injected page";
		return -1;
	}
	if (!mark(k, tid, p->fd, p->cmd, page, true)) {
		out->why = "too many injections in flight";
		return -1;
	}
	test_inject_delay();
	out->ioctl_ran = true;
	rc = run_syscall(tid, base, __NR_ioctl, a, &out->ioctl_ret, out);
	(void)mark(k, tid, 0, 0, 0, false);
	/* A kernel restart code (a signal ended the ioctl's seccomp wait
	 * before a worker received it, or an interruptible wait in the
	 * driver): the ioctl did not run. It must not reach the caller as
	 * its errno nor be audited as a client made: the call is refused
	 * (a second client is not made by a call that restarts itself). */
	if (rc == 0 && is_restart_return(out->ioctl_ret)) {
		out->why = "the injected ioctl was interrupted before it reached the driver";
		rc = -1;
	}
	if (rc == 0 && page_io(tid, page, p->image, p->len, false) < 0) {
		out->why = "cannot read the injected page back";
		return -1;
	}
	return rc;
}

static bool is_error_return(long v)
{
	return v < 0 && v >= -4095;
}

enum gs_inject_outcome gs_inject_ioctl(pid_t tid, int stop_status, struct gs_inject_plan *p,
                                       struct gs_inject_marks *k, struct gs_inject_regs *saved,
                                       struct gs_inject_out *out)
{
	struct user_regs_struct r;
	const uint64_t map[6] = { 0, GS_INJECT_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		                  (uint64_t)-1, 0 };
	long page = 0, unmapped = -1;

	memset(out, 0, sizeof(*out));
	if (p->len > GS_INJECT_PAGE || !restart_stop(tid, stop_status, p, &r)) {
		out->why = "the task is not stopped at its trapped ioctl's restart";
		out->wait_interrupted = get_regs(tid, &r) == 0 && r.orig_rax == __NR_ioctl &&
		                        r.rax == (uint64_t)-ERESTARTSYS;
		return GS_INJECT_UNTOUCHED;
	}
	/* From the first change of its registers until they are given back
	 * and it is let go (the detach clears the option), the task dies with
	 * its tracer: a supervisor or agent killed meanwhile must not let it
	 * run on from our registers, into our page's ioctl with no one to
	 * hold its writers still. The kernel sends the SIGKILL before it
	 * detaches, so the task never runs user code again. */
	if (!test_no_exitkill() && ptrace(PTRACE_SETOPTIONS, tid, 0, PTRACE_O_EXITKILL) < 0) {
		out->why = "cannot make the task die with its tracer";
		return GS_INJECT_UNTOUCHED;
	}
	memcpy(saved, &r, sizeof(r));
	if (run_syscall(tid, &r, __NR_mmap, map, &page, out) < 0)
		return GS_INJECT_LOST;
	if (is_error_return(page)) {
		out->why = "the injected mmap failed";
		return GS_INJECT_FAILED;
	}
	int rc = run_ioctl(tid, &r, p, (uint64_t)page, k, out);
	const uint64_t unmap[6] = { (uint64_t)page, GS_INJECT_PAGE, 0, 0, 0, 0 };
	if (run_syscall(tid, &r, __NR_munmap, unmap, &unmapped, out) < 0 || unmapped != 0) {
		out->why = "the injected page could not be unmapped";
		return GS_INJECT_LOST;
	}
	return rc < 0 ? GS_INJECT_FAILED : GS_INJECT_DONE;
}

bool gs_inject_finish(pid_t tid, const struct gs_inject_regs *saved, long ret,
                      const struct gs_inject_out *out)
{
	struct user_regs_struct r;

	memcpy(&r, saved, sizeof(r));
	r.rax = (uint64_t)ret;
	r.orig_rax = (uint64_t)-1; /* the ioctl is over: no restart */
	if (set_regs(tid, &r) < 0) {
		(void)syscall(SYS_tkill, tid, SIGKILL);
		return false;
	}
	/* Pending again, delivered once the task runs: it is still stopped. */
	for (unsigned i = 0; i < out->nsig && !test_drop_signals(); i++)
		(void)syscall(SYS_tkill, tid, out->sigs[i]);
	return true;
}

#else /* not x86-64: no injection; a second client stays refused */

bool gs_inject_supported(void)
{
	return false;
}

bool gs_inject_marks_match(struct gs_inject_marks *k, pid_t tid, int nr, uint32_t arch,
                           const uint64_t args[6])
{
	(void)k, (void)tid, (void)nr, (void)arch, (void)args, (void)mark;
	return false;
}

enum gs_inject_outcome gs_inject_ioctl(pid_t tid, int stop_status, struct gs_inject_plan *p,
                                       struct gs_inject_marks *k, struct gs_inject_regs *saved,
                                       struct gs_inject_out *out)
{
	(void)tid, (void)stop_status, (void)p, (void)k, (void)saved;
	memset(out, 0, sizeof(*out));
	out->why = "no injection on this architecture";
	return GS_INJECT_UNTOUCHED;
}

bool gs_inject_finish(pid_t tid, const struct gs_inject_regs *saved, long ret,
                      const struct gs_inject_out *out)
{
	(void)tid, (void)saved, (void)ret, (void)out;
	return false;
}
#endif
