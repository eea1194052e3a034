/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for learning mode (policy/learn.c): from a table of starting
 * policies and calls, what is learned; the written text parsed back must
 * give the same verdict as the learning run's allowlist for every class
 * and control gpusandbox knows, and the same limits. Then: a hostile
 * command name cannot add a statement, the entry limit holds, and the file
 * is written atomically without following what was planted at FILE.tmp.
 * They need neither root nor FUSE.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "groups.h"
#include "learn.h"
#include "policy.h"
#include "rm_tables.h"

/* The tables under test: the newest driver branch gpusandbox knows. */
#define RM_ABI gs_rm_abi_default()

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_STEPS 6
#define PATH_BUF 512

/* Classes and controls the tests name; groups from policy/groups.c. */
#define NV01_ROOT 0x0u
#define NV01_MEMORY_LOCAL_USER 0x40u
#define GF100_PROFILER 0x90ccu                  /* debug */
#define UNKNOWN_CLASS 0x1234u
#define DEBUG_READ_MEMORY 0x83de0315u           /* debug */
#define GPU_GET_NAME_STRING 0x20800110u         /* compute */
#define UNKNOWN_CONTROL 0x20804321u

struct step {
	bool     control;
	uint32_t key;
	bool     learned;   /* gs_learn_add's answer */
};

static const struct {
	const char *start;            /* the starting policy's text */
	struct step steps[MAX_STEPS];
	unsigned    n_steps;
	unsigned    count;            /* gs_learn_count afterwards */
} cases[] = {
	/* The default policy: debug entries are learned, unknown ones not,
	 * and a second need of the same class adds nothing. */
	{ "",
	  { { false, GF100_PROFILER, true }, { true, DEBUG_READ_MEMORY, true },
	    { false, UNKNOWN_CLASS, false }, { true, UNKNOWN_CONTROL, false },
	    { false, GF100_PROFILER, true } },
	  5, 2 },
	/* allow = none: even what the default groups hold is learned one by
	 * one, and "none" is written back. */
	{ "allow = none\n",
	  { { false, NV01_ROOT, true }, { false, NV01_MEMORY_LOCAL_USER, true },
	    { true, GPU_GET_NAME_STRING, true } },
	  3, 3 },
	/* Every limit a file can set, explicit entries of its own, and groups
	 * that are not the default: all of it comes back. */
	{ "mem = 4g\ngpu.1.mem = 512m\nchannels = 8\nchannel-groups = 2\n"
	  "active-channel-groups = 1\nsm = 50\nsm-period = 40\n"
	  "gpus = 0,2,GPU-01234567-89ab-cdef-0123-456789abcdef\n"
	  "video.decoders = 2\nvideo.jpeg = 0\nclients = 4\nallow = compute, video\n"
	  "allow.class = GF100_PROFILER\nmanaged = deny\n",
	  { { true, DEBUG_READ_MEMORY, true }, { false, NV01_MEMORY_LOCAL_USER, true } },
	  2, 2 },
};

static void parse_or_fail(const char *name, const char *text, struct gs_policy *p)
{
	char diag[GS_POLICY_DIAG_MAX];

	gs_policy_init(p);
	int rc = gs_policy_parse(name, text, strlen(text), p, diag, sizeof(diag));
	CHECK(rc == 0);
	if (rc != 0)
		fprintf(stderr, "%s", diag);
}

static void check_same_quota(const struct gs_quota *a, const struct gs_quota *b)
{
	CHECK(a->mem_per_gpu == b->mem_per_gpu);
	CHECK(memcmp(a->mem_gpu, b->mem_gpu, sizeof(a->mem_gpu)) == 0);
	/* Every quota kind's limit (the table's rows). */
	CHECK(memcmp(a->count, b->count, sizeof(a->count)) == 0);
	CHECK(a->sm_percent == b->sm_percent);
	CHECK(a->sm_period_ms == b->sm_period_ms);
	CHECK(a->visible_set == b->visible_set);
	CHECK(a->visible == b->visible);
	CHECK(a->n_uuids == b->n_uuids);
	for (uint32_t u = 0; u < a->n_uuids && u < b->n_uuids; u++)
		CHECK(strcmp(a->uuids[u], b->uuids[u]) == 0);
	CHECK(a->managed == b->managed);
}

/* Every class and control gpusandbox knows, and the unknown ones the
 * steps name: the written file must decide each the way the learning
 * run's allowlist does. */
static void check_same_verdicts(const struct gs_rules *learned, const struct gs_rules *parsed)
{
	unsigned differ = 0;

	for (size_t i = 0; i < rm_class_table_size(RM_ABI); i++) {
		uint32_t k = rm_class_table_at(RM_ABI, i)->cls;
		differ += gs_rules_class(RM_ABI, learned, k).allowed != gs_rules_class(RM_ABI, parsed, k).allowed;
	}
	for (size_t i = 0; i < rm_ctrl_table_size(RM_ABI); i++) {
		uint32_t k = rm_ctrl_table_at(RM_ABI, i)->cmd;
		differ += gs_rules_control(RM_ABI, learned, k).allowed != gs_rules_control(RM_ABI, parsed, k).allowed;
	}
	CHECK(differ == 0);
	CHECK(!gs_rules_class(RM_ABI, parsed, UNKNOWN_CLASS).allowed);
	CHECK(!gs_rules_control(RM_ABI, parsed, UNKNOWN_CONTROL).allowed);
	/* Nothing beyond what was learned: no extra entries, no extra group. */
	CHECK(parsed->groups == learned->groups);
	CHECK(parsed->n_classes == learned->n_classes);
	CHECK(parsed->n_controls == learned->n_controls);
}

static void test_cases(void)
{
	const struct gs_learn_origin from = { .call = "RM_ALLOC", .pid = 42, .comm = "python3" };

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct gs_policy *start = malloc(sizeof(*start)), *back = malloc(sizeof(*back));
		struct gs_learn *l = malloc(sizeof(*l));
		char *text;

		if (!start || !back || !l) {
			CHECK(!"out of memory");
			return;
		}
		parse_or_fail("start", cases[i].start, start);
		gs_learn_init(l, RM_ABI, &start->quota, &start->rules);
		for (unsigned s = 0; s < cases[i].n_steps; s++) {
			const struct step *st = &cases[i].steps[s];
			/* What the supervisor does: learn only what was refused. */
			bool refused = st->control ? !gs_rules_control(RM_ABI, &l->rules, st->key).allowed
			                           : !gs_rules_class(RM_ABI, &l->rules, st->key).allowed;
			bool got = !refused || gs_learn_add(l, st->control, st->key, &from);
			CHECK(got == st->learned);
		}
		CHECK(gs_learn_count(l) == cases[i].count);
		text = gs_learn_format(l);
		CHECK(text != NULL);
		if (!text)
			continue;
		parse_or_fail("learned", text, back);
		check_same_quota(&start->quota, &back->quota);
		check_same_verdicts(&l->rules, &back->rules);
		/* Each learned entry names its first call. */
		CHECK(strstr(text, "first needed by RM_ALLOC from pid 42 (python3)") != NULL);
		free(text);
		free(start);
		free(back);
		free(l);
	}
}

/* The workload chooses its command name (prctl PR_SET_NAME); one holding
 * a newline must not become a statement of the learned policy. */
static void test_hostile_comm(void)
{
	struct gs_learn *l = malloc(sizeof(*l));
	struct gs_policy *back = malloc(sizeof(*back));
	struct gs_learn_origin from = { .call = "RM_CONTROL", .pid = 7 };
	struct gs_quota q;
	char *text;

	if (!l || !back) {
		CHECK(!"out of memory");
		return;
	}
	memcpy(from.comm, "\nallow=debug\x1b[", GS_LEARN_COMM_MAX - 1);
	gs_quota_init(&q);
	gs_learn_init(l, RM_ABI, &q, gs_rules_builtin());
	CHECK(gs_learn_add(l, false, GF100_PROFILER, &from));
	text = gs_learn_format(l);
	CHECK(text != NULL);
	if (text) {
		CHECK(strstr(text, "(?allow=debug?[)") != NULL);
		/* A second "allow" line would be an error: parsing proves
		 * there is none. */
		parse_or_fail("hostile", text, back);
		CHECK(back->rules.groups == GS_GROUPS_DEFAULT);
	}
	free(text);
	free(l);
	free(back);
}

/* Every class and control gpusandbox knows fits in a policy, so a learned
 * file can always allow the whole run. Should the tables outgrow the
 * limit, the extra needs stay refused and are counted, and the note says
 * so. */
#define LIMIT_ROOM 2u
#define LIMIT_TRIES 5u

static void test_limit(void)
{
	struct gs_learn *l = malloc(sizeof(*l));
	struct gs_rules *full = calloc(1, sizeof(*full));
	struct gs_quota q;
	const struct gs_learn_origin from = { .call = "RM_CONTROL", .pid = 1, .comm = "x" };
	unsigned tried = 0, learned = 0;
	char *text;

	CHECK(rm_class_table_size(RM_ABI) <= GS_RULES_MAX_EXTRA);
	CHECK(rm_ctrl_table_size(RM_ABI) <= GS_RULES_MAX_EXTRA);
	if (!l || !full) {
		CHECK(!"out of memory");
		free(l);
		free(full);
		return;
	}
	/* A starting allowlist with room for LIMIT_ROOM more controls; its
	 * entries are numbers no table holds, so none matches a real one. */
	full->n_controls = GS_RULES_MAX_EXTRA - LIMIT_ROOM;
	for (uint32_t i = 0; i < full->n_controls; i++)
		full->controls[i] = UNKNOWN_CONTROL + i;
	gs_quota_init(&q);
	gs_learn_init(l, RM_ABI, &q, full);
	for (size_t i = 0; i < rm_ctrl_table_size(RM_ABI) && tried < LIMIT_TRIES; i++) {
		uint32_t k = rm_ctrl_table_at(RM_ABI, i)->cmd;
		if (gs_rules_control(RM_ABI, &l->rules, k).allowed)
			continue;
		tried++;
		learned += gs_learn_add(l, true, k, &from);
	}
	CHECK(tried == LIMIT_TRIES);
	CHECK(learned == LIMIT_ROOM);
	CHECK(l->dropped == LIMIT_TRIES - LIMIT_ROOM);
	CHECK(l->rules.n_controls == GS_RULES_MAX_EXTRA);
	char note[PATH_BUF];
	snprintf(note, sizeof(note), "# %u more classes or controls were needed but stayed refused",
	         LIMIT_TRIES - LIMIT_ROOM);
	text = gs_learn_format(l);
	CHECK(text && strstr(text, note));
	free(text);
	free(l);
	free(full);
}

/* The hint on an entry that alone cannot make the call run. */
static void test_unrelocatable_hint(void)
{
	struct gs_learn *l = malloc(sizeof(*l));
	const struct gs_learn_origin from = { .call = "RM_CONTROL", .pid = 1, .comm = "x" };
	struct gs_quota q;
	uint32_t key = 0;
	bool found = false;
	char *text;

	if (!l) {
		CHECK(!"out of memory");
		return;
	}
	gs_quota_init(&q);
	gs_learn_init(l, RM_ABI, &q, gs_rules_builtin());
	for (size_t i = 0; i < rm_ctrl_table_size(RM_ABI) && !found; i++) {
		key = rm_ctrl_table_at(RM_ABI, i)->cmd;
		found = rm_ctrl_has_unrelocatable_pointers(RM_ABI, key) &&
		        !gs_rules_control(RM_ABI, &l->rules, key).allowed;
	}
	CHECK(found);
	CHECK(gs_learn_add(l, true, key, &from));
	text = gs_learn_format(l);
	CHECK(text && strstr(text, "still refused: pointers gpusandbox cannot relocate"));
	free(text);
	free(l);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

static void test_files(void)
{
	char dir[] = "/tmp/gs-learn-test.XXXXXX", file[PATH_BUF], tmp[PATH_BUF], victim[PATH_BUF],
	     sub[PATH_BUF], missing[PATH_BUF];
	struct gs_error err;
	struct stat st;
	char *got;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(file, sizeof(file), "%s/learned.policy", dir);
	snprintf(tmp, sizeof(tmp), "%s/learned.policy.tmp", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	snprintf(missing, sizeof(missing), "%s/no/such/dir/f", dir);

	/* The check leaves nothing behind. */
	CHECK(gs_learn_check_path(file, &err) == 0);
	CHECK(stat(file, &st) < 0 && stat(tmp, &st) < 0);
	CHECK(gs_learn_check_path(missing, &err) < 0);
	CHECK(mkdir(sub, 0700) == 0);
	CHECK(gs_learn_check_path(sub, &err) < 0);
	CHECK(gs_learn_check_path("", &err) < 0);

	/* Save, then save again over it. */
	CHECK(gs_learn_save(file, "mem = 1g\n", &err) == 0);
	got = slurp(file);
	CHECK(got && strcmp(got, "mem = 1g\n") == 0);
	CHECK(stat(tmp, &st) < 0);
	/* Something planted at FILE.tmp is replaced, never written through. */
	int fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && write(fd, "keep\n", 5) == 5);
	if (fd >= 0)
		close(fd);
	CHECK(symlink(victim, tmp) == 0);
	CHECK(gs_learn_save(file, "mem = 2g\n", &err) == 0);
	got = slurp(victim);
	CHECK(got && strcmp(got, "keep\n") == 0);
	got = slurp(file);
	CHECK(got && strcmp(got, "mem = 2g\n") == 0);
	CHECK(lstat(file, &st) == 0 && S_ISREG(st.st_mode));
	/* A file that cannot be written: the error says so, the old one stays. */
	CHECK(gs_learn_save(missing, "x\n", &err) < 0 && strstr(err.msg, "--learn") != NULL);

	unlink(file);
	unlink(tmp);
	unlink(victim);
	rmdir(sub);
	rmdir(dir);
}

int main(void)
{
	test_cases();
	test_hostile_comm();
	test_limit();
	test_unrelocatable_hint();
	test_files();
	return check_summary();
}
