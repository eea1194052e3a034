/* SPDX-License-Identifier: MIT */
/*
 * fd_export - memory shared between processes through a control file's fd
 * (NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD / IMPORT_OBJECTS_FROM_FD:
 * CUDA's POSIX-fd handles, as NCCL, PyTorch's expandable segments and vLLM
 * use them). The driver keeps exported memory while the export file lives
 * (docs/security/fd-export.md); the fake models that (fake_export.c).
 *
 *   fd_export one
 *       One sandbox (--mem 1g). A child exports 768 MiB into a fresh
 *       control file, sends the fd to its parent, frees its handle and
 *       exits. The parent, holding only the fd, asks for 768 MiB (held=,
 *       want NO_MEMORY: the export keeps the charge), reads the file's
 *       info (info=), imports (import=), closes the fd, asks again
 *       (second=, want NO_MEMORY: the import keeps it, charged once; it is
 *       mapped through UVM meanwhile, map=, as cuMemMap does), asks for
 *       192 MiB (fits=, want NV_OK: charged once, not twice), frees
 *       its import and asks a last time (third=, want NV_OK).
 *       fake_used_mib= is the fake's own account while the import holds.
 *   fd_export hostile
 *       One sandbox: an export whose fd is a pipe (pipe=) or a GPU node
 *       (node=), both NV_ERR_INVALID_PARAMETER as the driver answers; an
 *       export of the device (device=, NOT_SUPPORTED: not memory charged
 *       to the sandbox, which the driver would keep past its handle); an
 *       import from a control file never exported into (fresh=,
 *       NV_ERR_INVALID_PARAMETER from the driver, refused before it).
 *   fd_export cross_export SOCK / cross_import SOCK
 *       Two sandboxes. The exporter exports 768 MiB, sends the fd over
 *       SOCK, frees its handle and exits. The importer imports (import=,
 *       want NV_ERR_INSUFFICIENT_PERMISSIONS: the file is another
 *       sandbox's), holds the fd until the exporter's sandbox has ended
 *       (the file GONE appears; that sandbox says the file outlives it),
 *       closes it, allocates 768 MiB (own=) and 192 MiB (fits=), and reads
 *       the fake's account (fake_used_mib=). Under the policy fd-import =
 *       foreign the import is allowed and charged to the importer: own= is
 *       then NO_MEMORY (768 + 768 over 1 GiB) and fits= NV_OK. With
 *       prefill the importer holds 768 MiB of its own first (prefill=):
 *       the charged import is then over its quota, undone and refused
 *       (import=NO_MEMORY).
 *       Without the defence the import keeps the exporter's 768 MiB beside
 *       the importer's own, above its quota.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adv.h"

#define SHARED_BYTES (768ull * RMC_MIB)
/* What is left of --mem 1g beside SHARED_BYTES charged once, with room
 * for the rounding: refused if the import were charged again. */
#define FITS_BYTES (192ull * RMC_MIB)
#define FAKE_USED_KEY "gpu0.vidmem_used"
#define CONNECT_TRIES 200
#define CONNECT_WAIT_US 50000

static rmc_status_t import_from_fd(struct rmc_session *s, int efd, nv_handle_t h)
{
	struct nv0000_os_unix_import_objects_params p;

	memset(&p, 0, sizeof(p));
	p.fd = efd;
	p.h_parent = s->device;
	p.objects[0] = h;
	p.num_objects = 1;
	return rmc_control(s->fd, NULL, s->client, s->client, NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD, &p,
	                   sizeof(p));
}

static rmc_status_t export_info(struct rmc_session *s, int efd)
{
	struct nv0000_os_unix_export_info_params p = { .fd = efd };

	return rmc_control(s->fd, NULL, s->client, s->client, NV0000_CTRL_CMD_OS_UNIX_GET_EXPORT_OBJECT_INFO, &p,
	                   sizeof(p));
}

/* key=status and a space: one status a printf, as rmc_status_str's
 * buffer for numeric forms is shared. */
static void put(const char *key, rmc_status_t st)
{
	printf("%s=%s ", key, rmc_status_str(st));
}

/* Exports objects[0] = h into fd, as is. */
static rmc_status_t export_into(struct rmc_session *s, int fd, nv_handle_t h)
{
	struct nv0000_os_unix_export_objects_params p;

	memset(&p, 0, sizeof(p));
	p.fd = fd;
	p.h_device = s->device;
	p.max_objects = 1;
	p.objects[0] = h;
	p.num_objects = 1;
	return rmc_control(s->fd, NULL, s->client, s->client, NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD, &p,
	                   sizeof(p));
}

/* What the supervisor must not let through: an fd that is not a control
 * file (a pipe, a GPU node), an export of what is not memory charged to
 * the sandbox (the device: the driver would keep it past its handle), an
 * import from a control file the sandbox never exported into. */
static int hostile(void)
{
	struct rmc_session s;
	int p[2], node, efd, fresh;

	adv_session_or_die(&s, -1, "fd_export hostile");
	if (pipe(p) < 0 || (node = open("/dev/nvidia0", O_RDWR | O_CLOEXEC)) < 0 ||
	    (efd = rmc_open_ctl()) < 0 || (fresh = rmc_open_ctl()) < 0)
		return ADV_EXIT_SETUP;
	rmc_status_t pipe_st = export_into(&s, p[0], 0);
	rmc_status_t node_st = export_into(&s, node, 0);
	rmc_status_t dev_st = export_into(&s, efd, s.device);
	rmc_status_t fresh_st = import_from_fd(&s, fresh, rmc_next_handle(&s));
	put("pipe", pipe_st);
	put("node", node_st);
	put("device", dev_st);
	put("fresh", fresh_st);
	printf("\n");
	return 0;
}

/* Exports h of s into a fresh control file: its fd, or -1 (*st says). */
static int export_to_fd(struct rmc_session *s, nv_handle_t h, rmc_status_t *st)
{
	int efd = rmc_open_ctl();

	if (efd < 0) {
		*st = (rmc_status_t)efd;
		return -1;
	}
	*st = export_into(s, efd, h);
	return efd;
}

static uint64_t fake_used_mib(void)
{
	uint64_t v = 0;

	return rmc_fake_stat(FAKE_USED_KEY, &v) == 0 ? v / RMC_MIB : UINT64_MAX;
}

/* The exporter's part: allocate, export, send, free, go. */
static int exporter(int sock)
{
	struct rmc_session s;
	rmc_status_t st = NV_OK, first;
	nv_handle_t h;
	int efd;

	adv_session_or_die(&s, -1, "fd_export exporter");
	h = rmc_next_handle(&s);
	first = adv_alloc_rm(&s, NULL, h, SHARED_BYTES);
	efd = first == NV_OK ? export_to_fd(&s, h, &st) : -1;
	put("alloc", first);
	put("export", st);
	printf("\n");
	fflush(stdout);
	if (adv_send_fd(sock, efd >= 0 ? efd : 0, &st, sizeof(st)) < 0)
		return 1;
	if (efd >= 0)
		close(efd);
	(void)adv_free_rm(&s, NULL, h);
	rmc_session_close(&s);
	return 0;
}

static int one(void)
{
	int sv[2];
	pid_t pid;
	struct rmc_session t;
	rmc_status_t sent, held, info, import, second, third;
	nv_handle_t hi, h2, h3;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return ADV_EXIT_SETUP;
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(exporter(sv[1]));
	}
	close(sv[1]);
	adv_session_or_die(&t, -1, "fd_export importer");
	int efd = adv_recv_fd(sv[0], &sent, sizeof(sent));
	waitpid(pid, NULL, 0);  /* the exporter freed its handle and is gone */
	if (efd < 0 || sent != NV_OK) {
		printf("received=no\n");
		return 1;
	}
	h2 = rmc_next_handle(&t);
	held = adv_alloc_rm(&t, NULL, h2, SHARED_BYTES);
	if (held == NV_OK)
		(void)adv_free_rm(&t, NULL, h2);
	info = export_info(&t, efd);
	hi = rmc_next_handle(&t);
	import = import_from_fd(&t, efd, hi);
	/* Mapped as cuMemMap maps it: UVM's external map of the import. */
	static struct adv_uvm_map m;
	int uvm = adv_uvm_with_range(SHARED_BYTES, "fd_export importer");
	adv_uvm_fill_map(&m, t.fd, t.client, hi, SHARED_BYTES);
	rmc_status_t map = adv_uvm_map(uvm, &m);
	close(efd);  /* only the import holds the memory now */
	h2 = rmc_next_handle(&t);
	second = adv_alloc_rm(&t, NULL, h2, SHARED_BYTES);
	uint64_t used = fake_used_mib();
	if (second == NV_OK)
		(void)adv_free_rm(&t, NULL, h2);
	/* Charged once, not twice: what is left of the quota still fits. */
	nv_handle_t hs = rmc_next_handle(&t);
	rmc_status_t fits = adv_alloc_rm(&t, NULL, hs, FITS_BYTES);
	if (fits == NV_OK)
		(void)adv_free_rm(&t, NULL, hs);
	if (import == NV_OK)
		(void)adv_free_rm(&t, NULL, hi);
	h3 = rmc_next_handle(&t);
	third = adv_alloc_rm(&t, NULL, h3, SHARED_BYTES);
	put("held", held);
	put("info", info);
	put("import", import);
	put("map", map);
	put("second", second);
	put("fits", fits);
	put("third", third);
	printf("fake_used_mib=%llu\n", (unsigned long long)used);
	return 0;
}

static int unix_socket(const char *path, bool listening)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (s < 0)
		return -1;
	if (listening) {
		unlink(path);
		if (bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(s, 1) == 0) {
			int c = accept(s, NULL, NULL);
			close(s);
			return c;
		}
		return -1;
	}
	for (int i = 0; i < CONNECT_TRIES; i++) {
		if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0)
			return s;
		usleep(CONNECT_WAIT_US);
	}
	return -1;
}

/* Waits (bounded) until file exists. */
static void wait_for_file(const char *file)
{
	for (int i = 0; file && i < CONNECT_TRIES && access(file, F_OK) != 0; i++)
		usleep(CONNECT_WAIT_US);
}

/* gone: a file that exists once the exporter's sandbox has ended (NULL:
 * do not wait); the fd is held until then, so that the sandbox ends with
 * its export file open elsewhere. */
static int cross_import(const char *path, const char *gone, bool prefill)
{
	struct rmc_session t;
	rmc_status_t sent, import, own, fits, pre = NV_OK;
	char eof;
	int s, efd;

	adv_session_or_die(&t, -1, "fd_export cross importer");
	/* prefill: the importer's own 768 MiB first, so that a charged
	 * import of 768 more is over its quota. */
	if (prefill)
		pre = adv_alloc_rm(&t, NULL, rmc_next_handle(&t), SHARED_BYTES);
	s = unix_socket(path, false);
	efd = s < 0 ? -1 : adv_recv_fd(s, &sent, sizeof(sent));
	if (efd < 0 || sent != NV_OK) {
		printf("received=no\n");
		return 1;
	}
	import = import_from_fd(&t, efd, rmc_next_handle(&t));
	/* The exporter closes its end when it is gone. */
	while (read(s, &eof, 1) > 0)
		;
	wait_for_file(gone);
	close(efd);
	own = adv_alloc_rm(&t, NULL, rmc_next_handle(&t), SHARED_BYTES);
	fits = adv_alloc_rm(&t, NULL, rmc_next_handle(&t), FITS_BYTES);
	if (prefill)
		put("prefill", pre);
	put("import", import);
	put("own", own);
	put("fits", fits);
	printf("fake_used_mib=%llu\n", (unsigned long long)fake_used_mib());
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "one"))
		return one();
	if (argc == 2 && !strcmp(argv[1], "hostile"))
		return hostile();
	if (argc == 3 && !strcmp(argv[1], "cross_export")) {
		int s = unix_socket(argv[2], true);
		return s < 0 ? ADV_EXIT_SETUP : exporter(s);
	}
	if ((argc >= 3 && argc <= 5) && !strcmp(argv[1], "cross_import"))
		return cross_import(argv[2], argc >= 4 ? argv[3] : NULL, argc == 5 && !strcmp(argv[4], "prefill"));
	fprintf(stderr, "usage: fd_export one | hostile | cross_export SOCK | cross_import SOCK [GONE [prefill]]\n");
	return 2;
}
