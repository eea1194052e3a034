/* SPDX-License-Identifier: MIT */
/*
 * learn.c - learning mode: what a run needed beyond its policy, and the
 * policy file that says so.
 *
 * What is learned is always an explicit allow.class / allow.control entry,
 * never a whole group: a group grants every member, and the run showed a
 * need for one. The starting groups are written out by name even when they
 * are the defaults, so the file means the same if the defaults change.
 *
 * The written text only ever holds numbers we format, names from our own
 * tables, and command names (which the workload chooses: prctl(PR_SET_NAME)
 * takes any bytes) after gs_learn_clean_comm(). A command name sits in a
 * comment, so even a '#' or '=' in it is inert; a newline would end the
 * comment and start a statement, which is why control bytes never get
 * through.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "learn.h"
#include "rm_tables.h"

#define TMP_SUFFIX ".tmp"
#define PRINTABLE_FIRST 0x20
#define PRINTABLE_LAST 0x7e
#define FILE_MODE 0644
#define UNNAMED "unnamed"

void gs_learn_init(struct gs_learn *l, const struct gs_rm_abi *abi, const struct gs_quota *q,
                   const struct gs_rules *base)
{
	memset(l, 0, sizeof(*l));
	l->abi = abi;
	l->rules = *base;
	l->quota = *q;
}

void gs_learn_clean_comm(const char *comm, char out[GS_LEARN_COMM_MAX])
{
	size_t i = 0;

	for (; comm && comm[i] && i + 1 < GS_LEARN_COMM_MAX; i++) {
		unsigned char ch = (unsigned char)comm[i];
		out[i] = ch >= PRINTABLE_FIRST && ch <= PRINTABLE_LAST ? (char)ch : '?';
	}
	out[i] = '\0';
}

bool gs_learn_add(struct gs_learn *l, bool is_control, uint32_t key,
                  const struct gs_learn_origin *from)
{
	uint32_t *n = is_control ? &l->rules.n_controls : &l->rules.n_classes;
	uint32_t *list = is_control ? l->rules.controls : l->rules.classes;
	struct gs_learn_origin *origin = is_control ? l->control_from : l->class_from;
	bool known = is_control ? rm_ctrl_lookup(l->abi, key) != NULL || nv_ctrl_is_gsp_opaque(key)
	                        : rm_class_lookup(l->abi, key) != NULL;

	/* What gpusandbox does not know it cannot perform from its own copy
	 * (it does not know the params' size or pointers), and the parser
	 * would refuse the entry: it stays refused, learning or not. */
	if (!known)
		return false;
	for (uint32_t i = 0; i < *n; i++)
		if (list[i] == key)
			return true;
	if (*n >= GS_RULES_MAX_EXTRA) {
		l->dropped++;
		return false;
	}
	origin[*n] = *from;
	origin[*n].comm[GS_LEARN_COMM_MAX - 1] = '\0';
	gs_learn_clean_comm(origin[*n].comm, origin[*n].comm);
	list[(*n)++] = key;
	return true;
}

unsigned gs_learn_count(const struct gs_learn *l)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < l->rules.n_classes; i++)
		n += l->class_from[i].call != NULL;
	for (uint32_t i = 0; i < l->rules.n_controls; i++)
		n += l->control_from[i].call != NULL;
	return n;
}

/* ---- the policy text ------------------------------------------------------- */

/* A count limit with a default: written only when it differs from it. */
static void print_count(FILE *f, const char *key, uint32_t v, uint32_t dflt)
{
	if (v == dflt)
		return;
	if (v == GS_COUNT_UNLIMITED)
		fprintf(f, "%s = %s\n", key, GS_COUNT_UNLIMITED_WORD);
	else
		fprintf(f, "%s = %u\n", key, v);
}

/* The quota kinds' limits (the video caps, or the others: the caps are
 * written after gpus, where they always were). */
static void print_counts(FILE *f, const struct gs_quota *q, bool video)
{
	for (unsigned k = 0; k < GS_QK_N; k++) {
		const struct gs_quota_kind_row *row = gs_quota_kind_row((enum gs_quota_kind)k);
		if (!(row->flags & GS_QK_VIDEO_CAP) == !video)
			print_count(f, row->key, q->count[k], row->dflt);
	}
}

static void write_quota(FILE *f, const struct gs_quota *q)
{
	/* Sizes in bytes: exact, and the parser takes a plain number. */
	if (q->mem_per_gpu != GS_QUOTA_UNLIMITED)
		fprintf(f, "mem = %llu\n", (unsigned long long)q->mem_per_gpu);
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		if (q->mem_gpu[g] != GS_MEM_GPU_UNSET)
			fprintf(f, "gpu.%u.mem = %llu\n", g, (unsigned long long)q->mem_gpu[g]);
	/* The defaults are left out; what differs is written, "unlimited"
	 * included, so the file gives the run's limits back. */
	print_counts(f, q, false);
	if (q->sm_percent < GS_SM_UNLIMITED)
		fprintf(f, "sm = %u\n", q->sm_percent);
	if (q->sm_period_ms != GS_SM_PERIOD_DEFAULT_MS)
		fprintf(f, "sm-period = %u\n", q->sm_period_ms);
	if (q->sm_mode != GS_SM_MODE_CAP)
		fprintf(f, "sm-mode = %s\n", gs_sm_mode_name(q->sm_mode));
	if (q->visible_set && (q->visible || q->n_uuids)) {
		fputs("gpus = ", f);
		gs_print_gpus(f, q);
		fputc('\n', f);
	}
	print_counts(f, q, true);
	if (q->managed != GS_MANAGED_ALLOW_UNACCOUNTED)
		fprintf(f, "managed = %s\n", gs_managed_name(q->managed));
	if (q->p2p_register != GS_P2P_REGISTER_AUTO)
		fprintf(f, "p2p-register = %s\n", gs_p2p_register_name(q->p2p_register));
	if (q->fd_import != GS_FD_IMPORT_OWN)
		fprintf(f, "fd-import = %s\n", gs_fd_import_name(q->fd_import));
}

static void write_groups(FILE *f, uint32_t groups)
{
	const char *sep = "";

	fputs("allow = ", f);
	if (!groups)
		fputs("none", f);
	for (unsigned g = 0; g < GS_GROUP_N; g++)
		if (groups & GS_GROUP_BIT(g)) {
			fprintf(f, "%s%s", sep, gs_group_name((enum gs_group)g));
			sep = ", ";
		}
	fputc('\n', f);
}

static void write_entry(FILE *f, const struct gs_rm_abi *abi, bool is_control, uint32_t key,
                        const struct gs_learn_origin *o)
{
	const char *name = NULL;
	enum gs_group g;

	if (is_control) {
		const struct rm_ctrl_info *ci = rm_ctrl_lookup(abi, key);
		name = ci ? ci->name : NULL;
		g = gs_control_group(abi, key);
	} else {
		const struct rm_class_info *ci = rm_class_lookup(abi, key);
		name = ci ? ci->name : NULL;
		g = gs_class_group(abi, key);
	}
	fprintf(f, "allow.%s = 0x%x  # %s", is_control ? "control" : "class", key,
	        name ? name : UNNAMED);
	if (g != GS_GROUP_NONE)
		fprintf(f, " (group %s)", gs_group_name(g));
	else
		fputs(" (no group)", f);
	if (!o->call)
		fputs(": in the starting policy", f);
	else
		fprintf(f, ": first needed by %s%s from pid %d (%s)", o->via_xfer ? "XFER:" : "",
		        o->call, (int)o->pid, o->comm);
	/* Allowing it is still not enough for the call to run: say so, so
	 * that nobody reads the entry as what made the call work. */
	if (is_control && rm_ctrl_has_unrelocatable_pointers(abi, key))
		fputs("; still refused: pointers gpusandbox cannot relocate", f);
	/* The reviewer should know this one is a leap of faith. */
	if (is_control && !name && nv_ctrl_is_gsp_opaque(key))
		fputs("; bit-15 control: opaque bytes for the GSP, what it does is not in the open source", f);
	fputc('\n', f);
}

char *gs_learn_format(const struct gs_learn *l)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fputs("# Written by gpusandbox --learn (see gpusandbox.policy(5)).\n"
	      "# The limits and groups the run started from, and one entry for each\n"
	      "# class or control it needed beyond them, with the first call that\n"
	      "# needed it. Review it before you use it as --policy.\n", f);
	write_quota(f, &l->quota);
	write_groups(f, l->rules.groups);
	for (uint32_t i = 0; i < l->rules.n_classes; i++)
		write_entry(f, l->abi, false, l->rules.classes[i], &l->class_from[i]);
	for (uint32_t i = 0; i < l->rules.n_controls; i++)
		write_entry(f, l->abi, true, l->rules.controls[i], &l->control_from[i]);
	if (l->dropped)
		fprintf(f, "# %u more classes or controls were needed but stayed refused: "
		        "at most %u entries of each kind fit in a policy.\n",
		        l->dropped, GS_RULES_MAX_EXTRA);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* ---- the file ------------------------------------------------------------- */

static int tmp_path(const char *path, char *out, size_t len, struct gs_error *err)
{
	if ((size_t)snprintf(out, len, "%s" TMP_SUFFIX, path) >= len)
		return gs_fail(err, ENAMETOOLONG, "--learn %s: name too long", path);
	return 0;
}

/* Opens path.tmp fresh. A leftover of an earlier run, or anything planted
 * there (a symlink to a file of the user's), is removed first, and O_EXCL
 * with O_NOFOLLOW makes sure we write only into a file we just made. */
static int open_tmp(const char *tmp, struct gs_error *err)
{
	int fd;

	if (unlink(tmp) < 0 && errno != ENOENT)
		return gs_fail(err, errno, "--learn: cannot remove the old %s", tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, FILE_MODE);
	if (fd < 0)
		return gs_fail(err, errno, "--learn: cannot create %s", tmp);
	return fd;
}

int gs_learn_check_path(const char *path, struct gs_error *err)
{
	char tmp[PATH_MAX];
	struct stat st;
	int fd;

	if (!*path)
		return gs_fail(err, 0, "--learn: empty file name");
	/* rename() would fail on a directory at the very end, after the run. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return gs_fail(err, 0, "--learn %s: exists and is not a regular file", path);
	if (tmp_path(path, tmp, sizeof(tmp), err) < 0 || (fd = open_tmp(tmp, err)) < 0)
		return -1;
	close(fd);
	unlink(tmp);
	return 0;
}

static int write_all(int fd, const char *text, size_t len)
{
	while (len) {
		ssize_t n = write(fd, text, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		text += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The rename is durable only once the directory is on disk too. */
static int sync_dir_of(const char *path)
{
	char copy[PATH_MAX];
	int fd, rc;

	snprintf(copy, sizeof(copy), "%s", path);
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int gs_learn_save(const char *path, const char *text, struct gs_error *err)
{
	char tmp[PATH_MAX];
	int fd;

	if (tmp_path(path, tmp, sizeof(tmp), err) < 0 || (fd = open_tmp(tmp, err)) < 0)
		return -1;
	if (write_all(fd, text, strlen(text)) < 0 || fsync(fd) < 0) {
		gs_fail(err, errno, "--learn: cannot write %s", tmp);
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (close(fd) < 0) {
		gs_fail(err, errno, "--learn: cannot write %s", tmp);
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) < 0) {
		gs_fail(err, errno, "--learn: cannot rename %s to %s", tmp, path);
		unlink(tmp);
		return -1;
	}
	if (sync_dir_of(path) < 0)
		return gs_fail(err, errno, "--learn: cannot sync the directory of %s", path);
	return 0;
}
