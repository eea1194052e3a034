/* SPDX-License-Identifier: MIT */
/*
 * cmd_usage.h - usage errors of the agent's subcommands (agent, profile).
 * Their own, not options.c's: the subcommand table there names them, so
 * using its helpers would make the two modules a circle.
 */
#ifndef GPUSANDBOX_CMD_USAGE_H
#define GPUSANDBOX_CMD_USAGE_H

/* The subcommand the hints name ("agent", "profile"). */
void cmd_usage_set(const char *word);
/* Prints "gpusandbox: " fmt (with arg), the --help hint, and exits 125. */
_Noreturn void cmd_usage_error(const char *fmt, const char *arg);
/* getopt_long ("+:h", opterr = 0) returned c ('?' or ':'): names the
 * option and exits 125. */
_Noreturn void cmd_option_error(int c, char **argv);

#endif
