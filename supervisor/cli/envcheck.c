/* SPDX-License-Identifier: MIT */
/*
 * envcheck.c - probing the kernel and the driver (envcheck.h).
 *
 * Every probe asks the kernel itself rather than reading its version
 * number, where a safe question exists: distribution kernels backport.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "driver.h"
#include "envcheck.h"
#include "filter.h"
#include "stack.h"
#include "taskset.h"
#include "gpusandbox.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#define LINE_MAX_LEN 512

/* SECCOMP_RET_USER_NOTIF is an action this kernel has (Linux 5.0). */
static bool have_user_notif(void)
{
	uint32_t action = SECCOMP_RET_USER_NOTIF;

	return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

static bool have_pidfd_open(unsigned flags, pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, flags);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* pidfd_getfd on a bad descriptor: EBADF where the call exists. */
static bool have_pidfd_getfd(void)
{
	return syscall(SYS_pidfd_getfd, -1, 0, 0) < 0 && errno == EBADF;
}

bool gs_have_nvidia_device(void)
{
	return access(GS_NVIDIACTL_PATH, F_OK) == 0;
}

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

static void print_kernel(FILE *f)
{
	struct utsname u;
	int wkr;

	if (uname(&u) == 0)
		fprintf(f, "kernel: %s %s (%s)\n", u.sysname, u.release, u.machine);
	fprintf(f, "  seccomp user notification (Linux 5.0, required): %s\n", yes_no(have_user_notif()));
	wkr = gs_probe_wait_killable_recv();
	fprintf(f, "  SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (5.19): %s\n",
	        wkr < 0 ? "unknown (seccomp refused the probe)" : yes_no(wkr));
	fprintf(f, "  pidfd_open (5.3, required): %s\n", yes_no(have_pidfd_open(0, getpid())));
	fprintf(f, "  pidfd_getfd (5.6, required): %s\n", yes_no(have_pidfd_getfd()));
	fprintf(f, "  PIDFD_THREAD (6.9, else a process pidfd): %s\n",
	        yes_no(have_pidfd_open(PIDFD_THREAD, (pid_t)syscall(SYS_gettid))));
}

static void print_driver(FILE *f)
{
	char line[LINE_MAX_LEN];
	FILE *v = fopen(GS_DRIVER_VERSION_PATH, "re");

	fprintf(f, "NVIDIA device %s: %s\n", GS_NVIDIACTL_PATH,
	        gs_have_nvidia_device() ? "present" : "missing");
	/* The module's own line, beside the driver's answer that
	 * gs_driver_print_version gives. */
	if (v && fgets(line, sizeof(line), v)) {
		line[strcspn(line, "\n")] = '\0';
		fprintf(f, "%s: %s\n", GS_DRIVER_VERSION_PATH, line);
	} else {
		fprintf(f, "%s: missing (the driver is not loaded)\n", GS_DRIVER_VERSION_PATH);
	}
	if (v)
		fclose(v);
}

/* What this build can do that depends on an optional library. */
static void print_features(FILE *f)
{
	fprintf(f, "call stacks of refusals (--audit-stacks, libdw): %s\n",
	        gs_stack_available() ? "yes" : "no (built without libdw)");
}

/* --version's sections, in order: add a row to say more. */
static void (*const version_sections[])(FILE *f) = {
	print_kernel,
	gs_driver_print_version,
	print_driver,
	print_features,
};

void gs_print_version(FILE *f)
{
	fprintf(f, "gpusandbox %s\n", GPUSANDBOX_VERSION);
	for (size_t i = 0; i < sizeof(version_sections) / sizeof(version_sections[0]); i++)
		version_sections[i](f);
}

static void add_name(char *buf, size_t len, unsigned *n, const char *name)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, "%s%s", *n ? ", " : "", name);
	(*n)++;
}

unsigned gs_quota_limit_names(const struct gs_quota *q, char *buf, size_t len)
{
	unsigned n = 0;
	bool engines = false;

	buf[0] = '\0';
	if (gs_quota_has_mem(q))
		add_name(buf, len, &n, "--mem");
	if (q->sm_percent < GS_SM_UNLIMITED)
		add_name(buf, len, &n, "--sm");
	for (unsigned k = 0; k < GS_QK_N; k++) {
		const struct gs_quota_kind_row *row = gs_quota_kind_row((enum gs_quota_kind)k);
		char option[LINE_MAX_LEN];
		/* The default caps are nobody's choice: not named. */
		if (q->count[k] == GS_COUNT_UNLIMITED || q->count[k] == row->dflt)
			continue;
		if (row->flags & GS_QK_VIDEO_CAP || !row->option) {
			engines = true;
			continue;
		}
		snprintf(option, sizeof(option), "--%s", row->option);
		add_name(buf, len, &n, option);
	}
	if (q->visible_set || q->n_uuids)
		add_name(buf, len, &n, "--gpus");
	if (q->managed == GS_MANAGED_DENY)
		add_name(buf, len, &n, "--managed deny");
	if (engines)
		add_name(buf, len, &n, "video caps");
	return n;
}

bool gs_env_warn(FILE *f, const struct gs_quota *q)
{
	return gs_env_warnings(f, q, NULL);
}

bool gs_env_warnings(FILE *f, const struct gs_quota *q, unsigned *printed)
{
	char names[LINE_MAX_LEN];
	bool no_device = !gs_have_nvidia_device();
	unsigned n = 0;

	if (no_device && gs_quota_limit_names(q, names, sizeof(names)) > 0) {
		fprintf(f, "gpusandbox: warning: no NVIDIA device (%s is missing): %s %s nothing to "
		           "enforce; the command runs without a GPU\n",
		        GS_NVIDIACTL_PATH, names, strchr(names, ',') ? "have" : "has");
		n++;
	}
	if (gs_probe_wait_killable_recv() == 0) {
		fprintf(f, "gpusandbox: warning: this kernel lacks SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV "
		           "(Linux 5.19): a signal that reaches the workload while the supervisor "
		           "performs a trapped call restarts the call, which the supervisor may then "
		           "perform twice (an allocation counted and made twice)\n");
		n++;
	}
	if (printed)
		*printed = n;
	return no_device;
}

unsigned gs_processes_of_uid(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		uid_t real, effective;
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (gs_proc_uids((pid_t)pid, &real, &effective) && (real == uid || effective == uid))
			n++;
	}
	closedir(d);
	return n;
}
