/* SPDX-License-Identifier: MIT */
/*
 * cmd_usage.c - usage errors of `gpusandbox agent` and `gpusandbox profile`.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd_usage.h"
#include "gpusandbox.h"

static const char *usage_word = "agent";

void cmd_usage_set(const char *word)
{
	usage_word = word;
}

_Noreturn void cmd_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "gpusandbox: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'gpusandbox %s --help' for more information.\n", usage_word);
	exit(GS_EXIT_ERROR);
}

_Noreturn void cmd_option_error(int c, char **argv)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		cmd_usage_error("option '%s' needs a value", arg);
	cmd_usage_error("unknown option '%s'", arg);
}
