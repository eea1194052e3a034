/* SPDX-License-Identifier: MIT */
/*
 * Containment beyond the filter, with the reason for each step:
 *  - a PID namespace whose init is the supervisor's child: when the init
 *    dies (with the supervisor, by PR_SET_PDEATHSIG, or when the command
 *    exits) the kernel kills every task in it, however deep, so no task of
 *    the sandbox outlives its supervisor; and the supervisor has no pid
 *    there, so kill, ptrace, pidfd_open and /proc/<pid> cannot name it;
 *  - a mount namespace with that PID namespace's own /proc over /proc (the
 *    host's /proc would still name the supervisor: a /proc/<pid> directory
 *    fd is a pidfd), and brokers' sockets masked (SECURITY.md, "Brokers");
 *  - the identity the workload runs as (--user, --group, --groups).
 * Without CAP_SYS_ADMIN, a user namespace that maps only the caller's own
 * ids makes the first two possible; where the kernel or a container
 * forbids that, nothing starts (fail closed; the launcher says why).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "contain.h"
#include "coord.h"

#define ID_MAP_LINE 64
/* A masked directory is an empty read-only tmpfs nobody may enter. */
#define MASK_TMPFS_OPTS "mode=000,size=4k,nr_inodes=1"

int gs_contain_add_hide(struct gs_contain *c, const char *path, const char **why)
{
	if (path[0] != '/') {
		*why = "not an absolute path";
		return -1;
	}
	if (c->n_hide_arg >= GS_MAX_HIDE) {
		*why = "too many --hide paths";
		return -1;
	}
	c->hide_arg[c->n_hide_arg++] = path;
	return 0;
}

/* A decimal id, or -1 when s is not one (then it is a name). */
static long parse_id(const char *s)
{
	char *end;
	long v;

	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || (unsigned long)v >= (unsigned long)(uid_t)-1)
		return -1;
	return v;
}

static int resolve_user(struct gs_contain *c, bool *have_primary, gid_t *primary,
                        struct gs_error *err)
{
	long id = parse_id(c->user_arg);
	struct passwd *pw = id >= 0 ? getpwuid((uid_t)id) : getpwnam(c->user_arg);

	if (!pw && id < 0)
		return gs_fail(err, 0, "--user: no user named '%s'", c->user_arg);
	c->uid = pw ? pw->pw_uid : (uid_t)id;
	*have_primary = pw != NULL;
	if (pw)
		*primary = pw->pw_gid;
	return 0;
}

static int resolve_group(const char *name, gid_t *out, struct gs_error *err)
{
	long id = parse_id(name);
	struct group *gr;

	if (id >= 0) {
		*out = (gid_t)id;
		return 0;
	}
	gr = getgrnam(name);
	if (!gr)
		return gs_fail(err, 0, "no group named '%s'", name);
	*out = gr->gr_gid;
	return 0;
}

/* --groups G1,G2: names or numbers, separated by commas and/or blanks (as
 * every list of the policy file); "" gives none. */
#define GROUP_SEPARATORS ", \t"
static int resolve_groups(struct gs_contain *c, struct gs_error *err)
{
	char *list = strdup(c->groups_arg), *save = NULL;

	if (!list)
		return gs_fail(err, ENOMEM, "--groups");
	c->n_groups = 0;
	for (char *g = strtok_r(list, GROUP_SEPARATORS, &save); g;
	     g = strtok_r(NULL, GROUP_SEPARATORS, &save)) {
		if (c->n_groups >= GS_MAX_SUPP_GROUPS) {
			free(list);
			return gs_fail(err, 0, "--groups: more than %d groups", GS_MAX_SUPP_GROUPS);
		}
		if (resolve_group(g, &c->groups[c->n_groups++], err) < 0) {
			free(list);
			return gs_error_wrap(err, "--groups");
		}
	}
	free(list);
	return 0;
}

/* --user, --group, --groups: any of them sets the whole identity. The gid
 * defaults to the user's primary group; supplementary groups default to
 * none, so nothing is granted that was not asked for. */
static int resolve_identity(struct gs_contain *c, struct gs_error *err)
{
	bool have_primary = false;
	gid_t primary = getgid();

	c->change_identity = c->user_arg || c->group_arg || c->groups_arg;
	if (!c->change_identity)
		return 0;
	c->uid = getuid();
	if (c->user_arg && resolve_user(c, &have_primary, &primary, err) < 0)
		return -1;
	if (c->group_arg) {
		if (resolve_group(c->group_arg, &c->gid, err) < 0)
			return gs_error_wrap(err, "--group");
	} else if (c->user_arg && !have_primary) {
		return gs_fail(err, 0, "--user %s has no entry in the user database: "
		               "give --group too", c->user_arg);
	} else {
		c->gid = primary;
	}
	return c->groups_arg ? resolve_groups(c, err) : 0;
}

static bool has_effective_cap(cap_value_t cap)
{
	cap_t caps = cap_get_proc();
	cap_flag_value_t v = CAP_CLEAR;

	if (caps) {
		if (cap_get_flag(caps, cap, CAP_EFFECTIVE, &v) < 0)
			v = CAP_CLEAR;
		cap_free(caps);
	}
	return v == CAP_SET;
}

static int add_masked(struct gs_contain *c, const char *path, struct gs_error *err)
{
	struct stat st;

	/* What does not exist at start cannot be masked (a mount needs a
	 * target); SECURITY.md says what that leaves open. */
	if (stat(path, &st) < 0)
		return 0;
	for (unsigned i = 0; i < c->n_masked; i++)
		if (strcmp(c->masked[i], path) == 0)
			return 0;
	if (c->n_masked >= GS_MAX_MASKED)
		return gs_fail(err, 0, "too many paths to mask");
	c->masked[c->n_masked] = strdup(path);
	if (!c->masked[c->n_masked])
		return gs_fail(err, ENOMEM, "masking %s", path);
	c->n_masked++;
	return 0;
}

int gs_contain_mask(struct gs_contain *c, const char *path, struct gs_error *err)
{
	return add_masked(c, path, err);
}

/* The compute-share coordinators' directory (coord.h): a workload that
 * reached it could unlink another tenant's socket or pose as a host. The
 * one this run uses is made now so that it can be masked; the default one
 * is masked too when it exists, whatever this run uses. */
static int mask_coordinator(struct gs_contain *c, struct gs_error *err)
{
	const char *dir = gs_coord_dir();

	if (dir && gs_coord_dir_ready(dir) == 0 && add_masked(c, dir, err) < 0)
		return -1;
	return add_masked(c, GS_COORD_DIR_DEFAULT, err);
}

/* The node of a GPU --gpus hides. The supervisor refuses every device on
 * it already; without its node the workload cannot reach it in the few
 * calls the driver admits by the caller's nodes alone: UVM registers a GPU
 * by its UUID for managed memory once the caller holds the GPU's node
 * (nvGpuOpsGetGpuInfo -> osIsGpuAccessible, nv_gpu_ops.c, 580.95.05), with
 * no RM device of the caller's on it. /dev/null in its place: an open
 * works, and names no GPU. */
#define GPU_MINOR_DIGITS_MAX 10
static int mask_hidden_gpus(struct gs_contain *c, struct gs_error *err)
{
	/* The format, with its %u replaced by a minor of at most 10 digits. */
	char path[sizeof(GS_GPU_NODE_FMT) + GPU_MINOR_DIGITS_MAX];

	for (unsigned g = 0; g < 8 * sizeof(c->hidden_gpu_nodes); g++) {
		if (!((c->hidden_gpu_nodes >> g) & 1u))
			continue;
		snprintf(path, sizeof(path), GS_GPU_NODE_FMT, g);
		if (add_masked(c, path, err) < 0)
			return -1;
	}
	return 0;
}

/* Brokers allocate GPU memory on a client's behalf outside the sandbox:
 * the MPS pipe directory (the default one and the one gpusandbox's own
 * environment names; the workload's later environment changes nothing)
 * and every --hide path. Then the hidden GPUs' nodes. */
static int list_masked(struct gs_contain *c, struct gs_error *err)
{
	const char *env = getenv(GS_MPS_PIPE_DIR_ENV);

	if (!c->allow_mps) {
		if (add_masked(c, GS_MPS_DEFAULT_PIPE_DIR, err) < 0)
			return -1;
		if (env && env[0] == '/' && add_masked(c, env, err) < 0)
			return -1;
	}
	for (unsigned i = 0; i < c->n_hide_arg; i++)
		if (add_masked(c, c->hide_arg[i], err) < 0)
			return -1;
	if (mask_hidden_gpus(c, err) < 0)
		return -1;
	return mask_coordinator(c, err);
}

int gs_contain_check_identity(struct gs_contain *c, struct gs_error *err)
{
	if (resolve_identity(c, err) < 0)
		return -1;
	/* Without CAP_SYS_ADMIN the namespaces need a user namespace of their
	 * own, and in it only the caller's ids exist: no identity change. */
	c->user_ns = !has_effective_cap(CAP_SYS_ADMIN);
	if (c->user_ns && c->change_identity)
		return gs_fail(err, EPERM,
		               "--user, --group and --groups need gpusandbox to run as root");
	return 0;
}

int gs_contain_prepare(struct gs_contain *c, struct gs_error *err)
{
	if (gs_contain_check_identity(c, err) < 0)
		return -1;
	c->outer_uid = getuid();
	c->outer_gid = getgid();
	if (list_masked(c, err) < 0)
		return -1;
	if (!c->change_identity && geteuid() == 0)
		fprintf(stderr, "gpusandbox: warning: the workload runs as root (uid 0); without "
		                "capabilities it still owns every root-owned file. Use --user USER "
		                "to run it as someone else (--user root says this is meant).\n");
	return 0;
}

unsigned long gs_contain_clone_flags(const struct gs_contain *c)
{
	return CLONE_NEWPID | CLONE_NEWNS | (c->user_ns ? CLONE_NEWUSER : 0);
}

static int write_file(const char *path, const char *text, struct gs_error *err)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t len = (ssize_t)strlen(text);

	if (fd < 0)
		return gs_fail(err, errno, "opening %s", path);
	if (write(fd, text, (size_t)len) != len) {
		int e = errno;
		close(fd);
		return gs_fail(err, e, "writing %s", path);
	}
	close(fd);
	return 0;
}

/* In a new user namespace: the caller's own uid and gid, mapped to
 * themselves, and nothing else, so the workload keeps its identity and no
 * other. setgroups is denied first, as the kernel requires of an
 * unprivileged gid_map (and so no group can be dropped to escape a
 * group-denied file). /proc/self of a non-dumpable process belongs to
 * root, hence dumpable for these writes only. */
int gs_contain_map_ids(const struct gs_contain *c, struct gs_error *err)
{
	char line[ID_MAP_LINE];
	int rc;

	if (!c->user_ns)
		return 0;
	(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	snprintf(line, sizeof(line), "%u %u 1\n", (unsigned)c->outer_uid, (unsigned)c->outer_uid);
	rc = write_file("/proc/self/uid_map", line, err);
	if (rc == 0)
		rc = write_file("/proc/self/setgroups", "deny\n", err);
	snprintf(line, sizeof(line), "%u %u 1\n", (unsigned)c->outer_gid, (unsigned)c->outer_gid);
	if (rc == 0)
		rc = write_file("/proc/self/gid_map", line, err);
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return rc;
}

static int mask_one(const char *path, struct gs_error *err)
{
	struct stat st;
	int rc;

	if (stat(path, &st) < 0)
		return gs_fail(err, errno, "masking %s", path);
	if (S_ISDIR(st.st_mode))
		rc = mount("gs-masked", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		           MASK_TMPFS_OPTS);
	else /* a socket or a FIFO: connecting to /dev/null is refused; a
	      * hidden GPU's node: /dev/null is no GPU */
		rc = mount("/dev/null", path, NULL, MS_BIND, NULL);
	if (rc < 0)
		return gs_fail(err, errno, "masking %s", path);
	return 0;
}

/* In the new mount namespace: nothing we mount reaches the host (slave:
 * the host's later mounts still reach us, so hot-plugged devices and
 * automounts keep working); /proc shows only the sandbox's tasks; brokers
 * are masked. A workload cannot undo these: it has no capability, and in a
 * user namespace of its own the kernel locks mounts it inherited. */
int gs_contain_mounts(const struct gs_contain *c, struct gs_error *err)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return gs_fail(err, errno, "making the workload's mounts private");
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return gs_fail(err, errno, "mounting /proc for the workload's PID namespace");
	for (unsigned i = 0; i < c->n_masked; i++)
		if (mask_one(c->masked[i], err) < 0)
			return -1;
	return 0;
}

static int check_ids(const struct gs_contain *c, struct gs_error *err)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;

	if (getresuid(&r, &e, &s) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return gs_fail(err, errno, "reading the workload's ids");
	if (r != c->uid || e != c->uid || s != c->uid ||
	    rg != c->gid || eg != c->gid || sg != c->gid)
		return gs_fail(err, EPERM, "the workload's ids did not change as asked");
	return 0;
}

/* The order matters, each step needing what the next one takes away:
 * 1. the bounding set, while CAP_SETPCAP is held: nothing exec'd later can
 *    regain a capability (a root workload's exec would otherwise get its
 *    full set back); ambient too;
 * 2. supplementary groups, then the gid, then the uid: setgroups and
 *    setresgid need CAP_SETGID, which setresuid to a non-root uid drops;
 *    all three of each id, so no saved id lets the workload switch back;
 * 3. every remaining capability (root keeps its sets across setresuid(0)).
 * NO_NEW_PRIVS comes after (in the launcher), before the filter. */
int gs_contain_drop_identity(const struct gs_contain *c, struct gs_error *err)
{
	cap_t none;

	for (cap_value_t cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return gs_fail(err, errno, "dropping capability %d from the bounding set",
			               cap);
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (c->change_identity) {
		if (setgroups(c->n_groups, c->groups) < 0)
			return gs_fail(err, errno, "setgroups");
		if (setresgid(c->gid, c->gid, c->gid) < 0)
			return gs_fail(err, errno, "setresgid(%u)", (unsigned)c->gid);
		if (setresuid(c->uid, c->uid, c->uid) < 0)
			return gs_fail(err, errno, "setresuid(%u)", (unsigned)c->uid);
		if (check_ids(c, err) < 0)
			return -1;
	}
	none = cap_init();
	if (!none)
		return gs_fail(err, errno, "cap_init");
	if (cap_set_proc(none) < 0) {
		cap_free(none);
		return gs_fail(err, errno, "clearing capabilities");
	}
	cap_free(none);
	return 0;
}
