/* SPDX-License-Identifier: MIT */
/*
 * options.h - what the command line says beyond getopt: a precise message
 * for each kind of option error, the subcommand words, and the checks on
 * the output files that keep the workload from writing into the audit.
 */
#ifndef GPUSANDBOX_OPTIONS_H
#define GPUSANDBOX_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>

#include "gs_error.h"

/* Exit status of a subcommand this build does not have (as git's usage
 * errors and many tools' "not available" answers). */
#define GS_EXIT_NO_SUBCOMMAND 2

/* Prints "gpusandbox: MESSAGE" and the --help hint, and exits 125. */
_Noreturn void gs_die_usage(const char *fmt, const char *arg);

/* getopt_long (optstring "+:...", opterr = 0) returned c, '?' or ':', for
 * argv[optind - 1]: says which of a missing value, an option that takes
 * none, an ambiguous abbreviation (with its candidates) or an unknown
 * option (with the closest one) it was, and exits 125. */
_Noreturn void gs_option_error(int c, char **argv, const struct option *longopts);

/* Subcommands: `gpusandbox [run] [OPTIONS] [--] COMMAND` is the default.
 * A first argument that names a subcommand is that subcommand: "run" is
 * removed from argv and running goes on; another one runs here and exits.
 * A word reserved for a later subcommand exits GS_EXIT_NO_SUBCOMMAND with
 * "not available in this build", never running a program of that name. */
void gs_subcommand_dispatch(int *argc, char ***argv);

/* After the options: COMMAND (argv[optind]) names a subcommand and no
 * "--" came before it. It would otherwise run a program that the user
 * probably meant as a subcommand: refuse, saying how to get either. */
void gs_refuse_subcommand_word(char **argv, int optind);

/* The files gpusandbox writes (the audit log, --learn's policy,
 * --trace-output, and --metrics-file, which is renamed over) are distinct
 * from each other, and the audit log is not "-" nor the file on our
 * standard output or error, which the workload shares and could write
 * forged records into. Returns 0 or -1 with err. */
int gs_check_output_paths(const char *audit, const char *learn, const char *trace_out,
                          const char *metrics, struct gs_error *err);

/* For --check: the audit log, --trace-output and --metrics-file can be
 * opened as the run opens them (an existing file writable, else a folder
 * that exists and lets us create files), without creating anything.
 * Returns 0 or -1 with err. */
int gs_check_output_places(const char *audit, const char *trace_out, const char *metrics,
                           struct gs_error *err);

#endif
