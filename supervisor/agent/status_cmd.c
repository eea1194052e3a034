/* SPDX-License-Identifier: MIT */
/*
 * status_cmd.c - `gpusandbox status`: connects to the agent's status socket
 * (agent_status.c), reads its one document and prints it as a table, or as
 * it came (--format json), or nothing (--quiet, for probes). Exit 0 when
 * the agent answered, 1 when it did not (no socket, refused, timed out,
 * not a document): that is what a liveness or readiness probe tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cmd_usage.h"
#include "quota.h"
#include "status_cmd.h"

#define STATUS_MAX_BYTES (16u << 20)
#define STATUS_TIMEOUT_MS 5000
#define CHUNK 65536
#define SIZE_TEXT 32
#define NAME_TEXT 512
#define EXIT_NO_ANSWER 1

static const char status_usage[] =
	"Usage: gpusandbox status [--socket PATH] [--format text|json] [--quiet]\n"
	"List the sandboxes the node's agent serves: container, pod, GPU, memory\n"
	"held and its peak against the quota, compute share, refusals.\n"
	"\n"
	"  --socket PATH      the agent's --status-socket (default " GS_STATUS_SOCKET_DEFAULT ")\n"
	"  --format FORMAT    text (a table, the default) or json (the agent's document)\n"
	"  --quiet            print nothing: exit 0 when the agent answered (probes)\n"
	"\n"
	"Exit status: 0 the agent answered, 1 it did not, 125 a usage error.\n";

struct status_opts {
	const char *socket_path;
	bool json, quiet;
};

static void parse_status_options(int argc, char **argv, struct status_opts *o)
{
	enum { OPT_SOCKET = 256, OPT_FORMAT, OPT_QUIET };
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	cmd_usage_set("status");
	opterr = 0;
	optind = 2; /* after "status" */
	o->socket_path = GS_STATUS_SOCKET_DEFAULT;
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET: o->socket_path = optarg; break;
		case OPT_FORMAT:
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0)
				cmd_usage_error("invalid --format '%s' (text or json)", optarg);
			o->json = strcmp(optarg, "json") == 0;
			break;
		case OPT_QUIET: o->quiet = true; break;
		case 'h': fputs(status_usage, stdout); exit(0);
		default: cmd_option_error(c, argv);
		}
	}
	if (optind < argc)
		cmd_usage_error("status takes no arguments (got '%s')", argv[optind]);
}

static _Noreturn void no_answer(const char *path, const char *why)
{
	fprintf(stderr, "gpusandbox status: no answer from the agent on %s: %s\n", path, why);
	exit(EXIT_NO_ANSWER);
}

/* The whole document: the agent closes the connection after it. */
static char *read_document(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = 0, cap = CHUNK;
	char *buf = malloc(cap + 1);
	int fd;

	if (!buf)
		no_answer(path, strerror(ENOMEM));
	if (strlen(path) >= sizeof(sa.sun_path))
		no_answer(path, "the path is too long for a unix socket");
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		no_answer(path, strerror(errno));
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, STATUS_TIMEOUT_MS) <= 0)
			no_answer(path, "timed out");
		if (len == cap) {
			if (cap >= STATUS_MAX_BYTES || !(buf = realloc(buf, (cap *= 2) + 1)))
				no_answer(path, "the answer is too long");
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			no_answer(path, strerror(errno));
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

static const char *get_str(json_object *o, const char *key, const char *none)
{
	json_object *v = NULL;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
	       ? json_object_get_string(v) : none;
}

static uint64_t get_u64(json_object *o, const char *key, bool *present)
{
	json_object *v = NULL;

	*present = json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int);
	return *present ? json_object_get_uint64(v) : 0;
}

static const char *size_text(json_object *o, const char *key, char *buf)
{
	bool present;
	uint64_t v = get_u64(o, key, &present);

	return present ? gs_format_size(v, buf, SIZE_TEXT) : "-";
}

/* One line per GPU of each sandbox. */
static void print_row(json_object *s)
{
	json_object *gpus = NULL, *sm = NULL, *ref = NULL;
	char pod[NAME_TEXT], used[SIZE_TEXT], peak[SIZE_TEXT], quota[SIZE_TEXT], share[SIZE_TEXT] = "-";
	bool present;
	uint64_t refused = 0;

	snprintf(pod, sizeof(pod), "%s/%s", get_str(s, "namespace", "-"), get_str(s, "pod", "-"));
	if (json_object_object_get_ex(s, "sm", &sm) && sm) {
		uint64_t target = get_u64(sm, "target", &present);
		snprintf(share, sizeof(share), "%llu%%", (unsigned long long)target);
	}
	if (json_object_object_get_ex(s, "refusals", &ref))
		refused = get_u64(ref, "total", &present);
	json_object_object_get_ex(s, "gpus", &gpus);
	for (size_t i = 0; gpus && i < json_object_array_length(gpus); i++) {
		json_object *g = json_object_array_get_idx(gpus, i);
		printf("%-24.64s %-32.128s %3llu %12s %12s %12s %5s %8llu\n", get_str(s, "container", "?"), pod,
		       (unsigned long long)get_u64(g, "gpu", &present), size_text(g, "used", used),
		       size_text(g, "peak", peak), size_text(g, "quota", quota), share,
		       (unsigned long long)refused);
	}
}

static void print_table(json_object *doc)
{
	json_object *arr = NULL;

	printf("%-24s %-32s %3s %12s %12s %12s %5s %8s\n", "CONTAINER", "POD", "GPU", "HELD", "PEAK", "QUOTA",
	       "SM", "REFUSALS");
	if (json_object_object_get_ex(doc, "sandboxes", &arr) && json_object_is_type(arr, json_type_array))
		for (size_t i = 0; i < json_object_array_length(arr); i++)
			print_row(json_object_array_get_idx(arr, i));
}

_Noreturn void gs_status_main(int argc, char **argv)
{
	struct status_opts o = { 0 };
	char *text;
	json_object *doc, *ok = NULL;

	parse_status_options(argc, argv, &o);
	text = read_document(o.socket_path);
	doc = json_tokener_parse(text);
	if (!doc || !json_object_object_get_ex(doc, "ok", &ok) || !json_object_get_boolean(ok))
		no_answer(o.socket_path, "the answer is not the agent's status");
	if (o.json)
		fputs(text, stdout);
	else if (!o.quiet)
		print_table(doc);
	json_object_put(doc);
	free(text);
	exit(0);
}
