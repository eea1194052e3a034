/* SPDX-License-Identifier: MIT */
/*
 * The video quotas' count (ledger_count_engine_sessions, exec_engines.c):
 * per group (one client on a GPU, or a GPU's every client), its engine
 * objects over a session's objects on that GPU, rounded up. Needs neither
 * root nor FUSE.
 */
#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "ledger.h"

#define NVDEC_CLS 0xb8b0u
#define NVJPG_CLS 0xb8d1u
#define CLIENT_A 0xc1d00001u
#define CLIENT_B 0xc1d00002u
#define DEVICE 0xde000001u
#define DEVICE1 0xde000002u
#define CHANNEL 0xc0000001u
#define CHANNEL1 0xc0000002u
#define ENG_BASE 0xe0000000u
/* GPU 0 has 7 engines of the kind (an H200's NVDECs), GPU 1 has 2. */
#define GPU0_INSTANCES 7u
#define GPU1_INSTANCES 2u

static bool is_nvdec(uint32_t cls, const void *arg)
{
	(void)arg;
	return cls == NVDEC_CLS;
}

static uint32_t instances(void *ctx, int gpu)
{
	(void)ctx;
	return gpu == 0 ? GPU0_INSTANCES : gpu == 1 ? GPU1_INSTANCES : 0;
}

/* The count with .held for (client, gpu); by_gpu groups every client's
 * objects on a GPU together, as nvJPEG's decoders are counted (two
 * clients a decoder). */
static struct ledger_engine_count count_grouped(const struct ledger *l, uint32_t client, int gpu,
                                                bool by_gpu)
{
	const struct ledger_engine_query q = { .match = is_nvdec, .per_session = instances,
	                                       .by_gpu = by_gpu, .client = client, .gpu = gpu };
	return ledger_count_engine_sessions(l, &q);
}

static struct ledger_engine_count count(const struct ledger *l, uint32_t client, int gpu)
{
	return count_grouped(l, client, gpu, false);
}

static struct ledger_engine_count count_by_gpu(const struct ledger *l, uint32_t client, int gpu)
{
	return count_grouped(l, client, gpu, true);
}

/* A client with a device on GPU 0 and on GPU 1, a channel under each. */
static void client_on_two_gpus(struct ledger *l, uint32_t client)
{
	CHECK(ledger_note_client(l, client, -1) >= 0);
	CHECK(ledger_add(l, client, client, DEVICE, RM_CLASS_DEVICE, 0x80, 0, 0) == 0);
	CHECK(ledger_add(l, client, client, DEVICE1, RM_CLASS_DEVICE, 0x80, 1, 0) == 0);
	CHECK(ledger_add(l, client, DEVICE, CHANNEL, RM_CLASS_CHANNEL, 0xc86f, LEDGER_NO_GPU, 0) == 0);
	CHECK(ledger_add(l, client, DEVICE1, CHANNEL1, RM_CLASS_CHANNEL, 0xc86f, LEDGER_NO_GPU, 0) == 0);
}

static void add_engines(struct ledger *l, uint32_t client, uint32_t parent, uint32_t cls, unsigned from,
                        unsigned n)
{
	for (unsigned i = from; i < from + n; i++)
		CHECK(ledger_add(l, client, parent, ENG_BASE + i, RM_CLASS_ENGINE, cls, LEDGER_NO_GPU, 0) == 0);
}

/* The boundary: I objects are one session; the I+1-th opens the second. */
static void test_boundary(void)
{
	struct ledger l;
	struct ledger_engine_count c;

	CHECK(ledger_init(&l) == 0);
	client_on_two_gpus(&l, CLIENT_A);
	c = count(&l, CLIENT_A, 0);
	CHECK(c.sessions == 0 && c.held == 0 && c.objects == 0);
	add_engines(&l, CLIENT_A, CHANNEL, NVDEC_CLS, 0, 1);
	c = count(&l, CLIENT_A, 0);
	CHECK(c.sessions == 1 && c.held == 1);
	add_engines(&l, CLIENT_A, CHANNEL, NVDEC_CLS, 1, GPU0_INSTANCES - 1);
	c = count(&l, CLIENT_A, 0);
	CHECK(c.sessions == 1 && c.held == GPU0_INSTANCES);
	add_engines(&l, CLIENT_A, CHANNEL, NVDEC_CLS, GPU0_INSTANCES, 1);
	c = count(&l, CLIENT_A, 0);
	CHECK(c.sessions == 2 && c.held == GPU0_INSTANCES + 1);
	/* Another kind is not counted. */
	add_engines(&l, CLIENT_A, CHANNEL, NVJPG_CLS, 100, 3);
	CHECK(count(&l, CLIENT_A, 0).sessions == 2);
	/* Freed, the objects leave their sessions. */
	ledger_free(&l, CLIENT_A, ENG_BASE + GPU0_INSTANCES, NULL);
	c = count(&l, CLIENT_A, 0);
	CHECK(c.sessions == 1 && c.held == GPU0_INSTANCES);
	ledger_fini(&l);
}

/* Pairs are counted apart: per client, per GPU, each with its GPU's I. */
static void test_pairs(void)
{
	struct ledger l;
	struct ledger_engine_count c;

	CHECK(ledger_init(&l) == 0);
	client_on_two_gpus(&l, CLIENT_A);
	client_on_two_gpus(&l, CLIENT_B);
	add_engines(&l, CLIENT_A, CHANNEL, NVDEC_CLS, 0, 3);       /* 1 session on GPU 0 */
	add_engines(&l, CLIENT_B, CHANNEL, NVDEC_CLS, 0, 3);       /* 1 more */
	add_engines(&l, CLIENT_A, CHANNEL1, NVDEC_CLS, 10, 3);     /* ceil(3 / 2) = 2 on GPU 1 */
	c = count(&l, CLIENT_B, 0);
	CHECK(c.sessions == 4 && c.objects == 9 && c.held == 3);
	c = count(&l, CLIENT_A, 1);
	CHECK(c.held == 3);
	/* A client's whole tree goes with it. */
	ledger_free(&l, CLIENT_A, CLIENT_A, NULL);
	c = count(&l, CLIENT_A, 1);
	CHECK(c.sessions == 1 && c.held == 0 && c.objects == 3);
	ledger_fini(&l);
}

/* Grouped by GPU: two clients' objects fill one session together, per
 * client they would be two; .held is the GPU's; the GPUs stay apart. */
static void test_by_gpu(void)
{
	struct ledger l;
	struct ledger_engine_count c;

	CHECK(ledger_init(&l) == 0);
	client_on_two_gpus(&l, CLIENT_A);
	client_on_two_gpus(&l, CLIENT_B);
	add_engines(&l, CLIENT_A, CHANNEL, NVDEC_CLS, 0, 4);
	add_engines(&l, CLIENT_B, CHANNEL, NVDEC_CLS, 0, GPU0_INSTANCES - 4);
	c = count_by_gpu(&l, CLIENT_B, 0);
	CHECK(c.sessions == 1 && c.held == GPU0_INSTANCES && c.objects == GPU0_INSTANCES);
	CHECK(count(&l, CLIENT_B, 0).sessions == 2);
	/* The next object on the GPU, whichever client, opens the second. */
	add_engines(&l, CLIENT_B, CHANNEL, NVDEC_CLS, 20, 1);
	CHECK(count_by_gpu(&l, CLIENT_A, 0).sessions == 2);
	/* GPU 1's objects are a group of their own: ceil(3 / 2) more. */
	add_engines(&l, CLIENT_A, CHANNEL1, NVDEC_CLS, 30, 3);
	c = count_by_gpu(&l, CLIENT_B, 1);
	CHECK(c.sessions == 4 && c.held == 3);
	ledger_fini(&l);
}

/* An object the ledger places on no GPU (its parent unknown) and a GPU
 * whose instances are unknown (0) are sessions of their own. */
static void test_unknown_gpu(void)
{
	struct ledger l;
	struct ledger_engine_count c;

	CHECK(ledger_init(&l) == 0);
	add_engines(&l, CLIENT_A, CHANNEL, NVDEC_CLS, 0, 3);
	c = count(&l, CLIENT_A, LEDGER_NO_GPU);
	CHECK(c.sessions == 3 && c.held == 3);
	ledger_fini(&l);
}

int main(void)
{
	test_boundary();
	test_pairs();
	test_by_gpu();
	test_unknown_gpu();
	return check_summary();
}
