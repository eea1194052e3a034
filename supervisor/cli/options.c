/* SPDX-License-Identifier: MIT */
/*
 * options.c - command-line diagnostics, subcommand words and output-file
 * checks (options.h). cmdline.c keeps the option table and its cases; what
 * needs more than a line of judgement lives here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpusandbox.h"
#include "review.h"
#include "groups.h"
#include "options.h"
#include "agent/agent.h"
#include "agent/keeper.h"
#include "agent/profile.h"
#include "agent/status_cmd.h"
#include "suggest.h"

#define NAME_MAX_LEN 64
#define LONG_PREFIX "--"

_Noreturn void gs_die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "gpusandbox: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'gpusandbox --help' for more information.\n");
	exit(GS_EXIT_ERROR);
}

/* The option's name as written, without "--" and "=VALUE". */
static void written_name(const char *arg, char *name, size_t len)
{
	const char *p = strncmp(arg, LONG_PREFIX, strlen(LONG_PREFIX)) == 0 ? arg + 2 : arg;
	size_t n = strcspn(p, "=");

	snprintf(name, len, "%.*s", (int)(n < len ? n : len - 1), p);
}

static const char *long_name(size_t i, const void *ctx)
{
	return ((const struct option *)ctx)[i].name;
}

static size_t n_longopts(const struct option *lo)
{
	size_t n = 0;

	while (lo[n].name)
		n++;
	return n;
}

/* An abbreviation that fits several options: name them all. */
static _Noreturn void die_ambiguous(const char *arg, const char *name, const struct option *lo)
{
	size_t n = n_longopts(lo), len = strlen(name);

	fprintf(stderr, "gpusandbox: option '%s' is ambiguous; possibilities:", arg);
	for (size_t i = 0; i < n; i++)
		if (strncmp(lo[i].name, name, len) == 0)
			fprintf(stderr, " '--%s'", lo[i].name);
	fprintf(stderr, "\nTry 'gpusandbox --help' for more information.\n");
	exit(GS_EXIT_ERROR);
}

static unsigned prefix_matches(const char *name, const struct option *lo)
{
	size_t n = n_longopts(lo), len = strlen(name);
	unsigned matches = 0;

	for (size_t i = 0; i < n; i++)
		if (strncmp(lo[i].name, name, len) == 0)
			matches++;
	return matches;
}

_Noreturn void gs_option_error(int c, char **argv, const struct option *longopts)
{
	const char *arg = argv[optind - 1];
	char name[NAME_MAX_LEN], msg[NAME_MAX_LEN * 3];
	const char *near;

	if (c == ':')
		gs_die_usage("option '%s' needs a value", arg);
	if (strncmp(arg, LONG_PREFIX, strlen(LONG_PREFIX)) != 0) {
		/* A short option: only -h exists. */
		snprintf(msg, sizeof(msg), "-%c", optopt ? optopt : '?');
		gs_die_usage("unknown option '%s'", msg);
	}
	if (optopt)
		gs_die_usage("option '%s' takes no value", arg);
	written_name(arg, name, sizeof(name));
	if (!name[0])
		gs_die_usage("unknown option '%s'", arg);
	if (prefix_matches(name, longopts) > 1)
		die_ambiguous(arg, name, longopts);
	near = gs_suggest(name, n_longopts(longopts), long_name, longopts);
	if (!near)
		gs_die_usage("unknown option '%s'", arg);
	snprintf(msg, sizeof(msg), "unknown option '%s' (did you mean '--%s'?)", arg, near);
	gs_die_usage("%s", msg);
}

/* ---- subcommands -------------------------------------------------------------- */

static _Noreturn void run_list_groups(int argc, char **argv)
{
	if (argc > 2)
		gs_die_usage("list-groups takes no arguments (got '%s')", argv[2]);
	gs_groups_print(stdout, gs_rm_abi_default(), GS_GROUPS_DEFAULT);
	exit(0);
}

static _Noreturn void run_audit(int argc, char **argv)
{
	exit(gs_audit_command(argc - 1, argv + 1));
}

/* One row per word. run == NULL and !reserved: the default pipeline (the
 * word is dropped); reserved: a later subcommand, refused until it exists. */
struct subcommand {
	const char *word;
	void (*run)(int argc, char **argv); /* does not return */
	bool reserved;
};

static const struct subcommand subcommands[] = {
	{ "run", NULL, false },
	{ "list-groups", run_list_groups, false },
	{ "audit", run_audit, false },
	{ "agent", gs_agent_main, false },
	{ "keeper", gs_keeper_main, false },
	{ "profile", gs_profile_main, false },
	{ "status", gs_status_main, false },
};
#define N_SUBCOMMANDS (sizeof(subcommands) / sizeof(subcommands[0]))

static const struct subcommand *find_subcommand(const char *word)
{
	for (size_t i = 0; word && i < N_SUBCOMMANDS; i++)
		if (strcmp(subcommands[i].word, word) == 0)
			return &subcommands[i];
	return NULL;
}

static _Noreturn void die_reserved(const char *word)
{
	fprintf(stderr,
	        "gpusandbox: '%s' is a gpusandbox subcommand that is not available in this build\n"
	        "gpusandbox: to run a program named %s, put -- before it: gpusandbox -- %s\n",
	        word, word, word);
	exit(GS_EXIT_NO_SUBCOMMAND);
}

void gs_subcommand_dispatch(int *argc, char ***argv)
{
	const struct subcommand *s = *argc > 1 ? find_subcommand((*argv)[1]) : NULL;

	if (!s)
		return;
	if (s->reserved)
		die_reserved(s->word);
	if (s->run)
		s->run(*argc, *argv);
	/* "run": the rest is today's command line, argv[0] kept. */
	(*argv)[1] = (*argv)[0];
	(*argv)++;
	(*argc)--;
}

void gs_refuse_subcommand_word(char **argv, int ind)
{
	const struct subcommand *s = find_subcommand(argv[ind]);

	if (!s || (ind > 0 && strcmp(argv[ind - 1], "--") == 0))
		return;
	fprintf(stderr,
	        "gpusandbox: '%s' is a gpusandbox subcommand; it goes first (gpusandbox %s ...)\n"
	        "gpusandbox: to run a program named %s, put -- before it: gpusandbox [OPTIONS] -- %s\n",
	        s->word, s->word, s->word, s->word);
	exit(s->reserved ? GS_EXIT_NO_SUBCOMMAND : GS_EXIT_ERROR);
}

/* ---- output files ------------------------------------------------------------- */

/* The name a path will have: realpath of the file, or of its folder plus
 * its name when it does not exist yet. Returns false if neither resolves. */
static bool canonical_name(const char *path, char out[PATH_MAX])
{
	char dir[PATH_MAX], base[PATH_MAX], real_dir[PATH_MAX];

	if (realpath(path, out))
		return true;
	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(base, sizeof(base), "%s", path);
	if (!realpath(dirname(dir), real_dir))
		return false;
	return snprintf(out, PATH_MAX, "%s/%s", real_dir, basename(base)) < PATH_MAX;
}

/* Same file: the same inode (hard links too) or, for files that do not
 * exist yet, the same resolved name. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	char ca[PATH_MAX], cb[PATH_MAX];

	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	return canonical_name(a, ca) && canonical_name(b, cb) && strcmp(ca, cb) == 0;
}

static bool is_our_stdio(const char *path)
{
	struct stat sp, so;

	if (stat(path, &sp) < 0)
		return false;
	for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++)
		if (fstat(fd, &so) == 0 && so.st_dev == sp.st_dev && so.st_ino == sp.st_ino)
			return true;
	return false;
}

int gs_check_output_paths(const char *audit, const char *learn, const char *trace_out,
                          const char *metrics, struct gs_error *err)
{
	const struct {
		const char *opt, *path;
	} out[] = { { "--audit-log", audit }, { "--learn", learn }, { "--trace-output", trace_out },
	            { "--metrics-file", metrics } };
	const size_t n = sizeof(out) / sizeof(out[0]);

	if (audit && (strcmp(audit, "-") == 0 || is_our_stdio(audit)))
		return gs_fail(err, 0,
		               "--audit-log %s: the audit log cannot be standard output or error: the "
		               "workload shares them and could write forged records there; give a "
		               "file, or a descriptor the workload does not hold with --audit-fd N",
		               audit);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (out[i].path && out[j].path && same_file(out[i].path, out[j].path))
				return gs_fail(err, 0, "%s and %s name the same file (%s): one would "
				                       "overwrite the other",
				               out[i].opt, out[j].opt, out[j].path);
	return 0;
}

/* PATH as the run will open it (--check): an existing file must be
 * writable, else its folder must exist and let us create files in it. A
 * file made in its folder and renamed over PATH (the metrics file) always
 * needs the folder. */
static int check_place(const char *opt, const char *path, bool made_in_folder, struct gs_error *err)
{
	char dir[PATH_MAX];
	struct stat st;

	if (!made_in_folder && stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return gs_fail(err, EISDIR, "%s %s", opt, path);
		return access(path, W_OK) == 0 ? 0 : gs_fail(err, errno, "%s %s", opt, path);
	}
	if (!gs_parent_folder(path, dir, sizeof(dir)))
		return gs_fail(err, ENAMETOOLONG, "%s %s", opt, path);
	if (stat(dir, &st) < 0)
		return gs_fail(err, errno, "%s %s: its folder %s", opt, path, dir);
	if (!S_ISDIR(st.st_mode))
		return gs_fail(err, ENOTDIR, "%s %s: %s", opt, path, dir);
	if (access(dir, W_OK | X_OK) < 0)
		return gs_fail(err, errno, "%s %s: cannot create files in %s", opt, path, dir);
	return 0;
}

int gs_check_output_places(const char *audit, const char *trace_out, const char *metrics,
                           struct gs_error *err)
{
	if (audit && check_place("--audit-log", audit, false, err) < 0)
		return -1;
	if (trace_out && check_place("--trace-output", trace_out, false, err) < 0)
		return -1;
	return metrics ? check_place("--metrics-file", metrics, true, err) : 0;
}
