/* SPDX-License-Identifier: MIT */
/*
 * replay - replay a recorded RM call sequence (tests/replay/traces format) against
 * /dev/nvidiactl, normally the fake driver, optionally under gpusandbox.
 *
 * Usage: replay [--sizes FILE] [--default-vidmem SIZE] [--verbose] TRACE
 *
 * What is replayed: RM_ALLOC, RM_FREE and RM_CONTROL lines. ESC lines (other
 * escapes) and UVM lines are counted and skipped: they carry no parameters
 * in the trace, and none of them allocates RM memory.
 *
 * Handles: RM picks client handles, so the trace's clients are remapped to
 * the ones the replay gets back. A client allocation (hRoot 0, class
 * 0/1/0x41) does not show the handle RM returned, so the first unknown
 * client handle that a later line uses is bound to the oldest client the
 * replay created and has not bound yet. Every other handle was chosen by
 * the traced program and is reused as is.
 *
 * Params: class 0x40/0x3e/0xa06c/0xc86f lines carry a dump of the first 160
 * bytes of the nested params (`D: off:u64 ...`), which is copied into a
 * zeroed buffer (owner fields naming a traced client are remapped). Lines
 * without a dump get zeroed params, except memory classes, which need a
 * size: 0x40 takes it from --sizes (lines `HANDLE SIZE`, keyed by the
 * trace's hNew) or --default-vidmem (2 MiB), 0x3e gets a 2 MiB sysmem
 * request. Controls get zeroed buffers of paramsSize bytes.
 *
 * Driver branches: under GS_FAKE_DRIVER_VERSION (the fake playing another
 * branch), a non-zero paramsSize is replaced by that branch's size from
 * gpusandbox's generated tables (rmc_class_size, rmc_ctrl_size): what that
 * branch's CUDA would send for the same call. The dumped bytes are copied
 * as they are; the fields the fake and gpusandbox read (memory size, owner,
 * attributes) sit at the same offsets on every branch: 535's memory
 * params lack only the trailing numaNode (abi-drift.md). A branch where
 * that stopped being true would show as failed allocations here.
 *
 * Classes or controls the driver (or the sandbox) refuses are skipped
 * gracefully: the object is remembered as missing and later lines that use
 * it are skipped too.
 *
 * Quota traces: a `DENY` line marks the RM_ALLOC just before it as refused
 * by the tracer's quota. Those allocations are replayed too; they are
 * expected to come back as NV_ERR_NO_MEMORY. If one succeeds anyway (no
 * quota in force) it is freed at once so that the rest of the trace, which
 * reuses its handle, stays consistent.
 *
 * Output, one `key=value` per token, parsed by tests/replay/run.sh:
 *   ops, allocs_ok, allocs_failed, allocs_skipped, frees_ok, frees_failed,
 *   frees_skipped, frees_unknown (handles no replayed RM_ALLOC made), controls_ok, controls_failed, controls_skipped,
 *   other_lines, vidmem_allocs, vidmem_ok, denied_expected, denied_nomem,
 *   denied_ok, unexpected_nomem, expected_peak, replay_peak
 * expected_peak is the class-0x40 high-water mark the trace implies
 * (DENY'd allocations excluded, sizes rounded to 2 MiB as RM does);
 * replay_peak is the same computed from the statuses this replay got.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmclient.h"

#define RP_MAX_LINE        4096
#define RP_DUMP_BYTES      160u                 /* what the tracer dumped */
#define RP_PARAMS_BUF      4096u                /* >= any class's params */
#define RP_DEFAULT_VIDMEM  (2ull * RMC_MIB)
#define RP_SYSMEM_SIZE     (2ull * RMC_MIB)
#define RP_PAGE            (2ull * RMC_MIB)     /* RM's vidmem granularity */
#define RP_ATTR_SYSMEM     (1u << NVOS32_ATTR_LOCATION_SHIFT)
#define RP_DEV_CTL         "/dev/nvidiactl"
#define RP_DEV_GPU0        "/dev/nvidia0"
#define RP_MAX_CLIENTS     64
#define RP_MAX_SIZES       256

enum op_kind { OP_ALLOC, OP_FREE, OP_CONTROL };

struct op {
	enum op_kind kind;
	int on_gpu_fd;          /* issued on /dev/nvidia0 in the trace */
	nv_handle_t a, b, c;    /* ALLOC: root, parent, new; FREE: root, parent, old;
				 * CONTROL: client, object, - */
	uint32_t cls_or_cmd;
	uint32_t psz;
	int has_dump;
	int denied;             /* a DENY line followed it */
	uint8_t dump[RP_DUMP_BYTES];
};

/* An object the replay knows about, keyed by (trace client, handle). */
struct obj {
	nv_handle_t tclient, h, parent;
	uint32_t cls;
	uint64_t bytes;         /* rounded vidmem bytes, 0 for other classes */
	int live_trace;         /* alive according to the trace */
	int live_replay;        /* alive in the driver, per our statuses */
	int missing;            /* creation failed or skipped in the replay */
};

static struct op *ops;
static size_t n_ops, cap_ops;
static struct obj *objs;
static size_t n_objs, cap_objs;

static struct { nv_handle_t trace, real; } cmap[RP_MAX_CLIENTS];
static size_t n_cmap;
static nv_handle_t pending[RP_MAX_CLIENTS];
static size_t n_pending;

static struct { nv_handle_t h; uint64_t size; } size_map[RP_MAX_SIZES];
static size_t n_sizes;
static uint64_t default_vidmem = RP_DEFAULT_VIDMEM;
/* --verbose: after every op compare our running total with the fake
 * driver's gpu0.vidmem_used and report the first lines that disagree. */
static int verbose;

static struct {
	unsigned ops, allocs_ok, allocs_failed, allocs_skipped, p2p_object_absent;
	unsigned frees_ok, frees_failed, frees_skipped, frees_unknown;
	unsigned controls_ok, controls_failed, controls_skipped, other_lines;
	unsigned vidmem_allocs, vidmem_ok, denied_expected, denied_nomem, denied_ok;
	unsigned unexpected_nomem;
	uint64_t trace_used, trace_peak, replay_used, replay_peak;
} st;

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	*cap = *cap ? *cap * 2 : 256;
	p = realloc(p, *cap * elem);
	if (!p) {
		perror("realloc");
		exit(1);
	}
	return p;
}

static int is_client_class(uint32_t cls)
{
	return cls == NV01_ROOT || cls == NV01_ROOT_NON_PRIV || cls == NV01_ROOT_CLIENT;
}

/* ---- parsing ------------------------------------------------------------ */

/* Value of `key=` in the line, as a number; -1 if absent. */
static int field(const char *line, const char *key, uint64_t *out)
{
	char pat[32];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	if (!p)
		return -1;
	*out = strtoull(p + strlen(pat), NULL, 0);
	return 0;
}

static int need(const char *line, const char *key, uint32_t *out)
{
	uint64_t v;

	if (field(line, key, &v) < 0) {
		fprintf(stderr, "replay: no %s= in: %s", key, line);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static void parse_dump(const char *d, struct op *o)
{
	unsigned long off;
	unsigned long long val;
	int n;

	/* Pairs "off:val", both hex without 0x. */
	while (sscanf(d, " %lx:%llx%n", &off, &val, &n) == 2) {
		if (off + sizeof(uint64_t) <= RP_DUMP_BYTES)
			memcpy(o->dump + off, &val, sizeof(uint64_t));
		d += n;
	}
	o->has_dump = 1;
}

static int parse_line(const char *line)
{
	struct op o;
	int ok = 0;

	memset(&o, 0, sizeof(o));
	if (strncmp(line, "DENY", 4) == 0) {
		/* Marks the RM_ALLOC just before it. */
		for (size_t i = n_ops; i-- > 0;) {
			if (ops[i].kind == OP_ALLOC) {
				ops[i].denied = 1;
				break;
			}
		}
		return 0;
	}
	o.on_gpu_fd = strstr(line, " " RP_DEV_GPU0 " ") != NULL;
	if (strstr(line, " RM_ALLOC ")) {
		o.kind = OP_ALLOC;
		ok = need(line, "hRoot", &o.a) | need(line, "hParent", &o.b) |
		     need(line, "hNew", &o.c) | need(line, "class", &o.cls_or_cmd) |
		     need(line, "psz", &o.psz);
		const char *d = strstr(line, " D: ");
		if (d)
			parse_dump(d + 4, &o);
	} else if (strstr(line, " RM_FREE ")) {
		o.kind = OP_FREE;
		ok = need(line, "hRoot", &o.a) | need(line, "hParent", &o.b) |
		     need(line, "hOld", &o.c);
	} else if (strstr(line, " RM_CONTROL ")) {
		o.kind = OP_CONTROL;
		ok = need(line, "hClient", &o.a) | need(line, "hObject", &o.b) |
		     need(line, "cmd", &o.cls_or_cmd) | need(line, "psz", &o.psz);
	} else {
		if (*line && *line != '\n')
			st.other_lines++;
		return 0;
	}
	if (ok != 0)
		return -1;
	ops = grow(ops, &cap_ops, n_ops + 1, sizeof(*ops));
	ops[n_ops++] = o;
	return 0;
}

static int load_sizes(const char *path)
{
	char line[256];
	FILE *f = fopen(path, "re");

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char hs[64], ss[64];

		if (line[0] == '#' || sscanf(line, "%63s %63s", hs, ss) != 2)
			continue;
		if (n_sizes == RP_MAX_SIZES || rmc_parse_size(ss, &size_map[n_sizes].size)) {
			fprintf(stderr, "replay: bad size line: %s", line);
			fclose(f);
			return -1;
		}
		size_map[n_sizes++].h = (nv_handle_t)strtoul(hs, NULL, 0);
	}
	fclose(f);
	return 0;
}

/* ---- handle and object bookkeeping --------------------------------------- */

static int map_client(nv_handle_t trace, nv_handle_t *real)
{
	for (size_t i = 0; i < n_cmap; i++) {
		if (cmap[i].trace == trace) {
			*real = cmap[i].real;
			return 0;
		}
	}
	/* First use of this trace client: bind the oldest unbound one. */
	if (n_pending == 0 || n_cmap == RP_MAX_CLIENTS)
		return -1;
	cmap[n_cmap].trace = trace;
	cmap[n_cmap].real = pending[0];
	memmove(pending, pending + 1, --n_pending * sizeof(pending[0]));
	*real = cmap[n_cmap++].real;
	return 0;
}

static void unmap_client(nv_handle_t trace)
{
	for (size_t i = 0; i < n_cmap; i++) {
		if (cmap[i].trace == trace) {
			cmap[i] = cmap[--n_cmap];
			return;
		}
	}
}

/* Translate a handle that may be the client itself. */
static nv_handle_t xlate(nv_handle_t h, nv_handle_t tclient, nv_handle_t rclient)
{
	return h == tclient ? rclient : h;
}

static struct obj *find_obj(nv_handle_t tclient, nv_handle_t h)
{
	for (size_t i = n_objs; i-- > 0;)
		if (objs[i].tclient == tclient && objs[i].h == h &&
		    (objs[i].live_trace || objs[i].live_replay || objs[i].missing))
			return &objs[i];
	return NULL;
}

static void account(uint64_t *used, uint64_t *peak, int64_t delta)
{
	*used += (uint64_t)delta;
	if (*used > *peak)
		*peak = *used;
}

/* RM_FREE semantics: the object and every descendant. */
static void drop_subtree(nv_handle_t tclient, nv_handle_t h)
{
	for (size_t i = 0; i < n_objs; i++) {
		struct obj *o = &objs[i];

		if (o->tclient != tclient || o->h != h)
			continue;
		if (!(o->live_trace || o->live_replay || o->missing))
			continue;
		if (o->live_trace)
			account(&st.trace_used, &st.trace_peak, -(int64_t)o->bytes);
		if (o->live_replay)
			account(&st.replay_used, &st.replay_peak, -(int64_t)o->bytes);
		o->live_trace = o->live_replay = o->missing = 0;
		for (size_t j = 0; j < n_objs; j++)
			if (objs[j].tclient == tclient && objs[j].parent == h && objs[j].h != h)
				drop_subtree(tclient, objs[j].h);
	}
}

static void drop_client(nv_handle_t tclient)
{
	for (size_t i = 0; i < n_objs; i++) {
		struct obj *o = &objs[i];

		if (o->tclient != tclient)
			continue;
		if (o->live_trace)
			account(&st.trace_used, &st.trace_peak, -(int64_t)o->bytes);
		if (o->live_replay)
			account(&st.replay_used, &st.replay_peak, -(int64_t)o->bytes);
		o->live_trace = o->live_replay = o->missing = 0;
	}
}

static uint64_t lookup_size(nv_handle_t h)
{
	for (size_t i = 0; i < n_sizes; i++)
		if (size_map[i].h == h)
			return size_map[i].size;
	return default_vidmem;
}

/* ---- replay ------------------------------------------------------------- */

/* CUDA opens a control file per client (the traces show CHECK_VERSION_STR,
 * SYS_PARAMS and CARD_INFO before each client allocation), and gpusandbox
 * allows one client per control file. The replay does the same: each
 * client gets its own fd, and its calls go there. */
static struct {
	nv_handle_t client;
	int         fd;
} client_fds[RP_MAX_CLIENTS];
static unsigned n_client_fds;

static int fd_for(nv_handle_t rclient, int fallback)
{
	for (unsigned i = 0; i < n_client_fds; i++)
		if (client_fds[i].client == rclient)
			return client_fds[i].fd;
	return fallback;
}

static void do_alloc(int ctl, int gpu_fd, const struct op *o)
{
	static uint8_t params[RP_PARAMS_BUF];
	nv_handle_t rclient = 0, h_new = o->c;
	struct nv_memory_allocation_params *mp = (void *)params;
	struct obj *parent = NULL, rec;
	rmc_status_t s;
	int fd;

	if (is_client_class(o->cls_or_cmd) && o->a == 0) {
		int cfd = rmc_open_ctl();
		s = cfd < 0 ? RMC_SYSERR(-cfd) : rmc_alloc_client(cfd, NULL, &rclient);
		if (s == NV_OK && n_pending < RP_MAX_CLIENTS && n_client_fds < RP_MAX_CLIENTS) {
			pending[n_pending++] = rclient;
			client_fds[n_client_fds].client = rclient;
			client_fds[n_client_fds++].fd = cfd;
			st.allocs_ok++;
		} else {
			st.allocs_failed++;
			if (cfd >= 0)
				close(cfd);
		}
		return;
	}
	if (map_client(o->a, &rclient) < 0) {
		st.allocs_skipped++;
		return;
	}
	fd = o->on_gpu_fd && gpu_fd >= 0 ? gpu_fd : fd_for(rclient, ctl);
	if (o->b != o->a) {
		parent = find_obj(o->a, o->b);
		if (parent && parent->missing) {
			st.allocs_skipped++;
			rec = (struct obj){ .tclient = o->a, .h = o->c, .parent = o->b,
					    .cls = o->cls_or_cmd, .missing = 1 };
			objs = grow(objs, &cap_objs, n_objs + 1, sizeof(*objs));
			objs[n_objs++] = rec;
			return;
		}
	}

	memset(params, 0, sizeof(params));
	if (o->has_dump)
		memcpy(params, o->dump, RP_DUMP_BYTES);
	memset(&rec, 0, sizeof(rec));
	rec.tclient = o->a;
	rec.h = o->c;
	rec.parent = o->b;
	rec.cls = o->cls_or_cmd;

	if (o->cls_or_cmd == NV01_MEMORY_LOCAL_USER) {
		if (!o->has_dump)
			rmc_fill_vidmem_params(mp, rclient, lookup_size(o->c));
		mp->owner = xlate(mp->owner, o->a, rclient);
		rec.bytes = (mp->size + RP_PAGE - 1) / RP_PAGE * RP_PAGE;
		st.vidmem_allocs++;
	} else if (o->cls_or_cmd == NV01_MEMORY_SYSTEM) {
		if (!o->has_dump) {
			rmc_fill_vidmem_params(mp, rclient, RP_SYSMEM_SIZE);
			mp->attr = RP_ATTR_SYSMEM;
		}
		mp->owner = xlate(mp->owner, o->a, rclient);
	}

	/* The trace's view, independent of what the driver says. */
	if (!o->denied) {
		rec.live_trace = 1;
		account(&st.trace_used, &st.trace_peak, (int64_t)rec.bytes);
	}

	s = rmc_alloc(fd, NULL, rclient, xlate(o->b, o->a, rclient), &h_new, o->cls_or_cmd,
		      params, o->psz ? rmc_class_size(o->cls_or_cmd, o->psz) : 0);
	if (o->denied) {
		st.denied_expected++;
		if (s == NV_ERR_NO_MEMORY)
			st.denied_nomem++;
		if (s == NV_OK) {
			/* No quota here: undo, the trace reuses the handle. */
			st.denied_ok++;
			(void)rmc_free(fd, NULL, rclient, xlate(o->b, o->a, rclient), h_new);
		}
		return; /* nothing to record: the trace never had it */
	}
	if (s == NV_OK) {
		st.allocs_ok++;
		rec.live_replay = 1;
		account(&st.replay_used, &st.replay_peak, (int64_t)rec.bytes);
		if (rec.cls == NV01_MEMORY_LOCAL_USER)
			st.vidmem_ok++;
	} else if (rec.cls == NV50_THIRD_PARTY_P2P && s == NV_ERR_NOT_SUPPORTED) {
		/* What a driver without the class answers, and gpusandbox's
		 * p2p-register none (the default without the p2p group): CUDA
		 * goes on without the object, and so does the replay, skipping
		 * the registration controls on it. */
		st.p2p_object_absent++;
		rec.missing = 1;
	} else {
		st.allocs_failed++;
		rec.missing = 1;
		if (s == NV_ERR_NO_MEMORY && rec.cls == NV01_MEMORY_LOCAL_USER)
			st.unexpected_nomem++;
		fprintf(stderr, "replay: alloc class 0x%x h 0x%x: %s\n", o->cls_or_cmd, o->c,
			rmc_status_str(s));
	}
	objs = grow(objs, &cap_objs, n_objs + 1, sizeof(*objs));
	objs[n_objs++] = rec;
}

static void do_free(int ctl, const struct op *o)
{
	nv_handle_t rclient;
	struct obj *ob;
	rmc_status_t s;

	if (map_client(o->a, &rclient) < 0) {
		st.frees_skipped++;
		return;
	}
	if (o->c == o->a) {
		/* Freeing the client frees everything it owns. */
		s = rmc_free(fd_for(rclient, ctl), NULL, rclient, rclient, rclient);
		if (s == NV_OK)
			st.frees_ok++;
		else
			st.frees_failed++;
		drop_client(o->a);
		unmap_client(o->a);
		return;
	}
	ob = find_obj(o->a, o->c);
	/* Handles the trace never allocated through RM_ALLOC (e.g. made by an
	 * escape the trace does not decode): still issued, failure expected. */
	if (!ob)
		st.frees_unknown++;
	if (ob && ob->missing && !ob->live_replay) {
		st.frees_skipped++;
		drop_subtree(o->a, o->c);
		return;
	}
	s = rmc_free(fd_for(rclient, ctl), NULL, rclient, xlate(o->b, o->a, rclient), o->c);
	if (s == NV_OK)
		st.frees_ok++;
	else
		st.frees_failed++;
	if (s != NV_OK)
		fprintf(stderr, "replay: free 0x%x: %s\n", o->c, rmc_status_str(s));
	drop_subtree(o->a, o->c);
}

static void do_control(int ctl, const struct op *o)
{
	static uint8_t params[NV_ABSOLUTE_MAX_IOCTL_SIZE];
	nv_handle_t rclient;
	struct obj *ob;
	rmc_status_t s;
	uint32_t psz;

	if (map_client(o->a, &rclient) < 0) {
		st.controls_skipped++;
		return;
	}
	ob = o->b == o->a ? NULL : find_obj(o->a, o->b);
	psz = o->psz ? rmc_ctrl_size(o->cls_or_cmd, o->psz) : 0;
	if ((ob && ob->missing) || psz > sizeof(params)) {
		st.controls_skipped++;
		return;
	}
	memset(params, 0, psz);
	s = rmc_control(fd_for(rclient, ctl), NULL, rclient, xlate(o->b, o->a, rclient), o->cls_or_cmd,
			psz ? params : NULL, psz);
	if (s == NV_OK)
		st.controls_ok++;
	else
		st.controls_failed++;
}

static void usage(void)
{
	fprintf(stderr, "usage: replay [--sizes FILE] [--default-vidmem SIZE] [--verbose] TRACE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	char line[RP_MAX_LINE];
	const char *trace = NULL;
	FILE *f;
	int ctl, gpu_fd;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
			if (load_sizes(argv[++i]) < 0)
				return 2;
		} else if (strcmp(argv[i], "--verbose") == 0) {
			verbose = 1;
		} else if (strcmp(argv[i], "--default-vidmem") == 0 && i + 1 < argc) {
			if (rmc_parse_size(argv[++i], &default_vidmem) < 0)
				usage();
		} else if (argv[i][0] == '-' || trace) {
			usage();
		} else {
			trace = argv[i];
		}
	}
	if (!trace)
		usage();
	f = fopen(trace, "re");
	if (!f) {
		perror(trace);
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		if (parse_line(line) < 0) {
			fclose(f);
			return 2;
		}
	}
	fclose(f);

	ctl = rmc_open_ctl();
	if (ctl < 0) {
		fprintf(stderr, "replay: open %s: %s\n", RP_DEV_CTL, strerror(-ctl));
		return 1;
	}
	/* Event objects were allocated on the GPU fd in the trace. */
	gpu_fd = open(RP_DEV_GPU0, O_RDWR | O_CLOEXEC);

	for (size_t i = 0; i < n_ops; i++) {
		st.ops++;
		switch (ops[i].kind) {
		case OP_ALLOC:
			do_alloc(ctl, gpu_fd, &ops[i]);
			break;
		case OP_FREE:
			do_free(ctl, &ops[i]);
			break;
		case OP_CONTROL:
			do_control(ctl, &ops[i]);
			break;
		}
		if (verbose) {
			uint64_t used;

			if (rmc_fake_stat("gpu0.vidmem_used", &used) == 0 && used != st.replay_used)
				fprintf(stderr, "replay: op %zu (kind %d h 0x%x): driver used %llu, "
					"replay used %llu\n", i, (int)ops[i].kind, ops[i].c,
					(unsigned long long)used,
					(unsigned long long)st.replay_used);
		}
	}

	printf("ops=%u allocs_ok=%u allocs_failed=%u allocs_skipped=%u p2p_object_absent=%u\n", st.ops,
	       st.allocs_ok, st.allocs_failed, st.allocs_skipped, st.p2p_object_absent);
	printf("frees_ok=%u frees_failed=%u frees_skipped=%u frees_unknown=%u\n", st.frees_ok,
	       st.frees_failed, st.frees_skipped, st.frees_unknown);
	printf("controls_ok=%u controls_failed=%u controls_skipped=%u other_lines=%u\n",
	       st.controls_ok, st.controls_failed, st.controls_skipped, st.other_lines);
	printf("vidmem_allocs=%u vidmem_ok=%u denied_expected=%u denied_nomem=%u denied_ok=%u "
	       "unexpected_nomem=%u\n",
	       st.vidmem_allocs, st.vidmem_ok, st.denied_expected, st.denied_nomem, st.denied_ok,
	       st.unexpected_nomem);
	printf("expected_peak=%llu replay_peak=%llu\n", (unsigned long long)st.trace_peak,
	       (unsigned long long)st.replay_peak);
	if (gpu_fd >= 0)
		close(gpu_fd);
	close(ctl);
	return 0;
}
