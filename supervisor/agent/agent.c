/* SPDX-License-Identifier: MIT */
/*
 * agent.c - `gpusandbox agent`: one long-running process per node serving
 * the OCI seccomp listener (linux.seccomp.listenerPath) of any number of
 * containers. The runtime connects once per new process (the container's
 * init, each exec) and sends its state and the process's listener fd.
 *
 * Trust: the socket is made 0600 by the agent (only root, the runtime, may
 * connect); the state is the runtime's word. The container's limits come
 * from policy files on the node: the agent's --policy, or NAME.policy in
 * --policy-dir when the profile's listenerMetadata names NAME. Within them,
 * the container's annotations gpusandbox.io/mem and gpusandbox.io/sm (the
 * pod's request) choose its quota; they can only lower the node's limits
 * (agent_request.h). Its Kubernetes names are read for the audit only.
 *
 * A connection is refused (its listener closed, so every trapped call of
 * that process fails with ENOSYS, and the process and its container's init
 * killed) when its profile's trap set is not the one this agent would write,
 * when its policy cannot be had, or when its state is malformed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "host_pids.h"
#include "agent.h"
#include "agent_limits.h"
#include "detached.h"
#include "agent_resume.h"
#include "agent_sandbox.h"
#include "agent_status.h"
#include "audit_rotate.h"
#include "quota.h"
#include "arch.h"
#include "cmd_usage.h"
#include "gpusandbox.h"
#include "keeper_link.h"
#include "launch.h"
#include "metrics.h"
#include "private_table.h"
#include "profile.h"
#include "recv_probe.h"
#include "rm_own.h"
#include "startup_checks.h"

#define ERR_BUF (GS_ERROR_MSG_MAX + 128)

static const char agent_usage[] =
	"Usage: gpusandbox agent --socket PATH [--policy FILE] [--policy-dir DIR]\n"
	"                        [--audit-dir DIR] [--metrics-file FILE] [--keeper PATH]\n"
	"                        [--driver-abi ABI] [--status-socket PATH]\n"
	"                        [--audit-max-size SIZE [--audit-max-files N]]\n"
	"                        [--uvm-map MODE]\n"
	"Serve the OCI seccomp listener of containers whose profile\n"
	"(gpusandbox profile) names PATH: one sandbox per container.\n"
	"\n"
	"  --socket PATH      the unix socket to listen on (made 0600)\n"
	"  --policy FILE      the policy of containers whose profile names none\n"
	"  --policy-dir DIR   NAME.policy for profiles made with --policy-name NAME\n"
	"  --audit-dir DIR    one audit log per container: DIR/ID.jsonl\n"
	"  --audit-max-size SIZE  rotate each container's log once it holds SIZE:\n"
	"                     ID.jsonl.1 .. ID.jsonl.(N-1) are the files before it\n"
	"  --audit-max-files N  files kept per container, the one written included\n"
	"                     (default 10; the oldest is deleted)\n"
	"  --metrics-file FILE  Prometheus text metrics of every container,\n"
	"                     replaced atomically every second\n"
	"  --keeper PATH      hand every container's listeners and state to the\n"
	"                     gpusandbox keeper on PATH, and resume the containers\n"
	"                     it holds at start: they survive an agent restart\n"
	"  --driver-abi ABI   as gpusandbox run's\n"
	"  --status-socket PATH  answer `gpusandbox status` (and probes) on PATH\n"
	"                     (made 0600; root only)\n"
	"  --uvm-map MODE     dup (the default), or as-user: a container in a user\n"
	"                     namespace of its own, not uid 0 as the host sees it,\n"
	"                     has its UVM maps and channel registrations made as\n"
	"                     its uid; any process of that uid may then dup its\n"
	"                     memory: only where each container's\n"
	"                     uids are its pod's alone (Kubernetes user namespaces)\n";

/* The uid --uvm-map as-user's check at start takes and gives back. */
#define AS_USER_PROBE_UID 65534u

struct agent_opts {
	const char *socket_path;
	const char *driver_abi;
	const char *metrics_path;  /* --metrics-file, or NULL */
	const char *keeper_path;   /* --keeper, or NULL */
	const char *status_path;   /* --status-socket, or NULL */
};

static _Noreturn void die(const struct gs_error *err)
{
	char buf[ERR_BUF];

	gs_error_text(err, buf, sizeof(buf));
	fprintf(stderr, "gpusandbox agent: %s\n", buf);
	exit(GS_EXIT_ERROR);
}

/* A problem worth a line on stderr, not the agent's end. */
static void warn_error(const struct gs_error *err)
{
	char buf[ERR_BUF];

	gs_error_text(err, buf, sizeof(buf));
	fprintf(stderr, "gpusandbox agent: warning: %s\n", buf);
}

#define AUDIT_MAX_FILES_DEFAULT 10u
static void check_rotation(struct gs_agent *a)
{
	struct gs_error err = { 0 };

	if (a->audit_max_files && !a->audit_max_size)
		cmd_usage_error("%s", "--audit-max-files needs --audit-max-size");
	if (!a->audit_max_size)
		return;
	if (!a->audit_dir)
		cmd_usage_error("%s", "--audit-max-size needs --audit-dir");
	if (!a->audit_max_files)
		a->audit_max_files = AUDIT_MAX_FILES_DEFAULT;
	if (gs_audit_rotation_check(a->audit_max_size, a->audit_max_files, &err) < 0)
		cmd_usage_error("%s", err.msg);
}

static void parse_agent_options(int argc, char **argv, struct gs_agent *a, struct agent_opts *o)
{
	enum { OPT_SOCKET = 256, OPT_POLICY, OPT_POLICY_DIR, OPT_AUDIT_DIR, OPT_DRIVER_ABI, OPT_METRICS,
	       OPT_KEEPER, OPT_STATUS, OPT_AUDIT_MAX_SIZE, OPT_AUDIT_MAX_FILES, OPT_UVM_MAP };
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "policy-dir", required_argument, NULL, OPT_POLICY_DIR },
		{ "audit-dir", required_argument, NULL, OPT_AUDIT_DIR },
		{ "driver-abi", required_argument, NULL, OPT_DRIVER_ABI },
		{ "metrics-file", required_argument, NULL, OPT_METRICS },
		{ "keeper", required_argument, NULL, OPT_KEEPER },
		{ "status-socket", required_argument, NULL, OPT_STATUS },
		{ "audit-max-size", required_argument, NULL, OPT_AUDIT_MAX_SIZE },
		{ "audit-max-files", required_argument, NULL, OPT_AUDIT_MAX_FILES },
		{ "uvm-map", required_argument, NULL, OPT_UVM_MAP },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum gs_uvm_map_mode uvm_map;
	uint32_t max_files;
	int c;

	cmd_usage_set("agent");
	opterr = 0;
	optind = 2; /* after "agent" */
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET: o->socket_path = optarg; break;
		case OPT_POLICY: a->policy_path = optarg; break;
		case OPT_POLICY_DIR: a->policy_dir = optarg; break;
		case OPT_AUDIT_DIR: a->audit_dir = optarg; break;
		case OPT_DRIVER_ABI: o->driver_abi = optarg; break;
		case OPT_METRICS: o->metrics_path = optarg; break;
		case OPT_KEEPER: o->keeper_path = optarg; break;
		case OPT_STATUS: o->status_path = optarg; break;
		case OPT_AUDIT_MAX_SIZE:
			if (gs_parse_size(optarg, &a->audit_max_size) < 0)
				cmd_usage_error("invalid --audit-max-size '%s' (a size, e.g. 64m)", optarg);
			break;
		case OPT_AUDIT_MAX_FILES:
			if (gs_parse_count(optarg, &max_files) < 0 || max_files == GS_COUNT_UNLIMITED)
				cmd_usage_error("invalid --audit-max-files '%s' (a count)", optarg);
			a->audit_max_files = max_files;
			break;
		case OPT_UVM_MAP:
			if (gs_parse_uvm_map_mode(optarg, &uvm_map) < 0)
				cmd_usage_error("invalid --uvm-map mode '%s' (dup or as-user)", optarg);
			a->uvm_map_as_user = uvm_map == GS_UVM_MAP_AS_USER;
			break;
		case 'h': fputs(agent_usage, stdout); exit(0);
		default: cmd_option_error(c, argv);
		}
	}
	if (optind < argc)
		cmd_usage_error("agent takes no arguments (got '%s')", argv[optind]);
	if (!o->socket_path)
		cmd_usage_error("%s", "agent needs --socket PATH");
	check_rotation(a);
	if (!a->policy_path && !a->policy_dir)
		cmd_usage_error("%s", "agent needs --policy FILE or --policy-dir DIR (no container runs "
		             "without a policy)");
}

/* Every path and limit the agent needs, before it listens
 * (startup_checks.h says why): the socket's folder, the audit folder
 * (each container's log is created there), the policy folder, the
 * descriptor limit, and the metrics file (written now, with no container:
 * it then says the agent is up). The default policy and the keeper are
 * checked where they are taken, also before listening. */
static void check_before_serving(const struct gs_agent *a, const struct agent_opts *o)
{
	struct gs_error err = { 0 };

	if (gs_check_parent_folder("--socket", o->socket_path, &err) < 0 ||
	    (a->audit_dir && gs_check_folder("--audit-dir", a->audit_dir, W_OK | X_OK, &err) < 0) ||
	    (a->policy_dir && gs_check_folder("--policy-dir", a->policy_dir, R_OK | X_OK, &err) < 0) ||
	    gs_check_nofile(&err) < 0 ||
	    (o->metrics_path && gs_metrics_write(o->metrics_path, NULL, 0, &err) < 0))
		die(&err);
}

/* "gpusandbox;traps=HEX[;policy=NAME]": HEX must be one of this agent's
 * trap sets, with or without the mmap traps of managed = deny (which of the
 * two in *uvm_mmap_traps; the container's policy must agree, see
 * agent_sandbox.c). Fills policy_name ("" when none). Returns 0 or -1. */
static int check_metadata(const struct gs_agent *a, const char *meta, char *policy_name,
                          size_t len, bool *uvm_mmap_traps, struct gs_error *err)
{
	size_t plen = strlen(GS_PROFILE_META_PREFIX);
	char want[GS_PROFILE_VERSION_HEX + 1], want_mmap[GS_PROFILE_VERSION_HEX + 1];
	const char *rest;

	policy_name[0] = '\0';
	snprintf(want, sizeof(want), "%016" PRIx64, a->trap_version);
	snprintf(want_mmap, sizeof(want_mmap), "%016" PRIx64, a->trap_version_uvm_mmap);
	*uvm_mmap_traps = strncmp(meta, GS_PROFILE_META_PREFIX, plen) == 0 &&
	                  strncmp(meta + plen, want_mmap, GS_PROFILE_VERSION_HEX) == 0;
	if (strncmp(meta, GS_PROFILE_META_PREFIX, plen) != 0 ||
	    (!*uvm_mmap_traps && strncmp(meta + plen, want, GS_PROFILE_VERSION_HEX) != 0))
		return gs_fail(err, EPROTO, "the profile's listenerMetadata \"%s\" is not this agent's "
		               "trap set (traps=%s, or %s with managed = deny): regenerate it with "
		               "gpusandbox profile", meta, want, want_mmap);
	rest = meta + plen + GS_PROFILE_VERSION_HEX;
	if (!rest[0])
		return 0;
	if (strncmp(rest, GS_PROFILE_META_POLICY, strlen(GS_PROFILE_META_POLICY)) != 0)
		return gs_fail(err, EPROTO, "the profile's listenerMetadata \"%s\" has unknown fields", meta);
	rest += strlen(GS_PROFILE_META_POLICY);
	if (!gs_profile_policy_name_ok(rest) || strlen(rest) >= len)
		return gs_fail(err, EPROTO, "the profile names an invalid policy \"%s\"", rest);
	memcpy(policy_name, rest, strlen(rest) + 1);
	return 0;
}

static void kill_pid(pid_t pid)
{
	int fd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;

	if (fd >= 0) {
		(void)syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
		close(fd);
	}
}

/* One runtime connection: the state, then the listener served or refused. */
static void handle_connection(struct gs_agent *a, int conn)
{
	struct gs_agent_hello h;
	struct gs_error err = { 0 };
	char policy_name[GS_PROFILE_POLICY_NAME_MAX], buf[ERR_BUF];
	bool uvm_mmap_traps;

	if (gs_agent_receive_hello(conn, &h, &err) < 0) {
		gs_error_text(&err, buf, sizeof(buf));
		fprintf(stderr, "gpusandbox agent: refused a connection: %s\n", buf);
		return;
	}
	if (check_metadata(a, h.metadata, policy_name, sizeof(policy_name), &uvm_mmap_traps, &err) < 0) {
		close(h.listener);
	} else if (gs_agent_serve(a, &h, policy_name, uvm_mmap_traps, &err) == 0) {
		return;
	}
	/* Refused: the listener is closed (its trapped calls fail with
	 * ENOSYS), and the container must not run on without its GPU
	 * supervision, so it is killed. */
	gs_error_text(&err, buf, sizeof(buf));
	fprintf(stderr, "gpusandbox agent: container %s: refused (%s process, pid %d): %s; killing it\n",
	        h.id, h.status, (int)h.pid, buf);
	kill_pid(h.pid);
	kill_pid(h.init_pid);
}

static void start_driver(struct gs_agent *a, const char *driver_abi)
{
	struct gs_error err = { 0 };

	if (gs_driver_detect(&a->driver, &err) < 0 || gs_driver_choose_abi(&a->driver, driver_abi, &err) < 0)
		die(&err);
	if (gs_abi_resolve() < 0) {
		gs_fail(&err, ENOTSUP, "libseccomp does not know ioctl on this machine");
		die(&err);
	}
	a->trap_version = gs_profile_trap_version(a->driver.rm_abi, false);
	a->trap_version_uvm_mmap = gs_profile_trap_version(a->driver.rm_abi, true);
}

/* Connections being read at once. Each is bounded in time
 * (GS_AGENT_HELLO_TIMEOUT_MS, a deadline for the whole state, so a peer
 * trickling one byte at a time gains nothing) and in size (agent_conn.c),
 * and has a thread of its own, so a peer that sends nothing, garbage or too
 * much delays no other container's start. Past this many, accepting waits
 * for one to end (at most the timeout): only root may connect (the socket
 * is 0600), and the bound keeps a flood from exhausting threads. */
#define MAX_HANDSHAKES 64
#define HANDSHAKES_FULL_POLL_MS 20

struct handshake {
	struct gs_agent *a;
	int conn;
};

static void *handshake_main(void *arg)
{
	struct handshake *hs = arg;
	struct gs_agent *a = hs->a;

	handle_connection(a, hs->conn);
	close(hs->conn);
	free(hs);
	atomic_fetch_sub(&a->handshakes, 1);
	return NULL;
}

/* Reads and serves conn on a thread of its own (takes conn). */
static void start_handshake(struct gs_agent *a, int conn)
{
	struct handshake *hs = malloc(sizeof(*hs));
	int rc = ENOMEM;

	if (hs) {
		hs->a = a;
		hs->conn = conn;
		atomic_fetch_add(&a->handshakes, 1);
		rc = gs_spawn_detached(handshake_main, hs);
	}
	if (rc == 0)
		return;
	/* The runtime sees the connection closed: its container does not
	 * start (fail closed), and the agent goes on. */
	fprintf(stderr, "gpusandbox agent: refused a connection: starting its thread: %s\n", strerror(rc));
	if (hs) {
		atomic_fetch_sub(&a->handshakes, 1);
		free(hs);
	}
	close(conn);
}

/* Serves until SIGTERM or SIGINT. Containers still running then lose their
 * listener (their trapped calls fail with ENOSYS) unless a keeper holds it:
 * the next agent resumes them. */
static int serve(struct gs_agent *a, int lfd, int sfd, const char *metrics_path)
{
	uint64_t next_tick = 0;

	for (;;) {
		/* The stop signal first, so that a full handshake table polls
		 * only it (and comes back to accept when a slot frees). */
		struct pollfd p[2] = { { sfd, POLLIN, 0 }, { lfd, POLLIN, 0 } };
		bool full = atomic_load(&a->handshakes) >= MAX_HANDSHAKES;
		struct gs_error err = { 0 };
		const uint64_t now = gs_monotonic_ns();
		if (now >= next_tick) {
			/* Metrics are not the audit log: a failed write is said. */
			if (gs_agent_tick(a, metrics_path, &err) < 0)
				warn_error(&err);
			next_tick = now + (uint64_t)GS_METRICS_INTERVAL_MS * 1000000ull;
		}
		int wait_ms = (int)((next_tick - now) / 1000000ull) + 1;
		if (full && wait_ms > HANDSHAKES_FULL_POLL_MS)
			wait_ms = HANDSHAKES_FULL_POLL_MS;
		if (poll(p, full ? 1 : 2, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[0].revents & POLLIN)
			return 0;
		if (!full && (p[1].revents & POLLIN)) {
			int conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (conn >= 0)
				start_handshake(a, conn);
		}
	}
}

/* --keeper: every container the keeper holds is resumed (or killed)
 * before the socket is served; no keeper there is the agent's error (the
 * containers would not survive the next restart, silently). */
static void resume_from_keeper(struct gs_agent *a, const char *path)
{
	static struct gs_keeper_link link;
	struct gs_kept_container *held;
	struct gs_error err = { 0 };
	int old_agent;

	if (gs_keeper_link_open(&link, path, &held, &old_agent, &err) < 0)
		die(&err);
	a->keeper = &link;
	gs_agent_resume(a, held, old_agent);
}

_Noreturn void gs_agent_main(int argc, char **argv)
{
	static struct gs_agent a;
	struct agent_opts o = { 0 };
	struct gs_error err = { 0 };
	sigset_t sigs;
	int lfd, sfd, rc;

	gs_driver_nodes_init();
	parse_agent_options(argc, argv, &a, &o);
	/* Every container's release watches are fds of this one process:
	 * the soft limit (1024 under systemd) would be filled by one. Before
	 * the fd table is grown below. */
	(void)gs_raise_nofile("agent", GS_AGENT_FDS_PER_CONTAINER);
	check_before_serving(&a, &o);
	/* The agent must be able to take a container's uid and come back
	 * (rm_own.h): checked with nobody's. */
	if (a.uvm_map_as_user && !gs_can_call_as(AS_USER_PROBE_UID)) {
		fprintf(stderr, "gpusandbox agent: --uvm-map as-user needs an agent running as root "
		        "(real, effective and saved uid 0)\n");
		exit(GS_EXIT_ERROR);
	}
	/* Still one thread: the fd table grows now, not under the walks, and
	 * the host's processes are remembered before the workload runs. */
	gs_host_pids_prepare();
	/* A fork, while there is one thread: whether a worker may wait in
	 * RECV itself (agent_sandbox.c, next_call). */
	a.recv_ends_at_hangup = gs_recv_ends_at_hangup();
	pthread_mutex_init(&a.lock, NULL);
	start_driver(&a, o.driver_abi);
	/* As the command line's supervisor: the driver judges privilege from
	 * the calling thread, and the agent performs calls for containers. It
	 * keeps root's other powers (CAP_SYS_PTRACE for pidfd_getfd and the
	 * workload's memory, CAP_KILL); nothing in a container may ptrace it. */
	if (gs_drop_supervisor_privileges(&err) < 0)
		die(&err);
	/* After the drop: the device allocations' helpers inherit the
	 * spawner's capabilities (private_table.h). */
	if (gs_private_table_start(&err) < 0)
		die(&err);
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (a.policy_path) {
		/* The default policy is checked now: a typo is the agent's
		 * error at start, not every container's. */
		struct gs_policy *p = malloc(sizeof(*p));
		if (!p || gs_agent_load_policy(&a, a.policy_path, p, &err) < 0)
			die(&err);
		free(p);
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	signal(SIGPIPE, SIG_IGN);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) < 0 || (sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0) {
		gs_fail(&err, errno, "setting up signal handling");
		die(&err);
	}
	if (o.keeper_path)
		resume_from_keeper(&a, o.keeper_path);
	lfd = gs_agent_listen(o.socket_path, &err);
	if (lfd < 0)
		die(&err);
	/* After the runtime's socket: a status answered means the agent
	 * serves (the DaemonSet's readiness). */
	if (o.status_path && gs_agent_status_start(&a, o.status_path, &err) < 0)
		die(&err);
	fprintf(stderr, "gpusandbox agent: listening on %s (traps=%016" PRIx64 ", with managed = deny "
	        "%016" PRIx64 ")\n", o.socket_path, a.trap_version, a.trap_version_uvm_mmap);
	rc = serve(&a, lfd, sfd, o.metrics_path);
	close(lfd);
	unlink(o.socket_path);
	/* Said at once rather than by the file's age: nobody serves now. */
	if (o.metrics_path && gs_metrics_write_stopped(o.metrics_path, &err) < 0)
		warn_error(&err);
	if (o.status_path)
		unlink(o.status_path);
	/* Under the list's lock, kept until exit with every sandbox's: a
	 * handshake thread may still be adding or tearing down a container
	 * (ThreadSanitizer, tests/agent two-runc). */
	unsigned late, served = gs_agent_drain_calls(&a, &late);
	if (late)
		fprintf(stderr, "gpusandbox agent: %u container(s) still in a call after %u ms: "
		        "left to the next agent\n", late, GS_AGENT_STOP_DRAIN_MS);
	fprintf(stderr, "gpusandbox agent: stopping with %u container(s) served\n", served);
	exit(rc < 0 ? GS_EXIT_ERROR : 0);
}
