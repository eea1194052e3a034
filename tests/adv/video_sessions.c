/* SPDX-License-Identifier: MIT */
/*
 * video_sessions - the video quotas count sessions as their users open
 * them (issue #29 item 2), not engine objects.
 *
 * One session, the way libnvcuvid's cuvidCreateDecoder makes one (the RM
 * log of tests/gpu/nvdec_check.sh on an H200, 580.159.04): a control file
 * of its own, a client, a device and a subdevice, then, for each engine
 * instance of the kind the GPU has, a channel and one engine object under
 * it (7 NVB8B0_VIDEO_DECODER objects on the H200, one per NVDEC). The
 * program asks GET_ENGINES_V2 for the instances, as the library asks the
 * driver for its caps.
 *
 * Run under policy/video-transcode.policy (video.decoders = 2,
 * video.jpeg = 1). Phases, each printed as key=value:
 *  1. NVDEC sessions until one is refused: sessions 1 and 2 open whole,
 *     the third's first object is refused (dec_full=, dec_stop=);
 *  2. session 1 destroyed by freeing its client: another opens whole
 *     (dec_after_free=); then session 2 by closing its file alone, as a
 *     process that exits: another opens whole (dec_after_close=);
 *  3. every decoder closed, NVJPG the same under video.jpeg = 1
 *     (jpg_full=, jpg_stop=), each session as nvJPEG's hardware backend
 *     holds one (tests/gpu/nvjpg_quota.sh's trace, CUDA 13): two clients,
 *     each with a channel and an NVJPG object per NVJPG engine, here on
 *     one control file (the second client made by the supervisor's
 *     injection, exec_inject.c), one of the shapes the trace shows;
 *  4. where the GPU has NVENC engines (none on an H200; the fake's
 *     --engines nvenc=N), NVENC the same under video.encoders = 1
 *     (enc_full=, enc_stop=); where it has OFA, none under video.ofa = 0
 *     (ofa_full=0, ofa_stop=).
 * nvdec_engines=, nvjpg_engines= and nvenc_engines= are the driver's
 * answer. run.sh judges by the fake driver's own peaks: nvdec_peak = 2 x
 * NVDEC engines, nvjpg_peak = 2 x NVJPG engines (one session of two
 * clients), nvenc_peak = NVENC engines.
 * Its baseline (GPUSANDBOX_TEST_ENGINE_OBJECTS: every object a session, as
 * before issue #29) opens no whole session.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adv.h"

#define NVB8B0_VIDEO_DECODER 0xb8b0u
#define NVB8D1_VIDEO_NVJPG 0xb8d1u
#define NVC9B7_VIDEO_ENCODER 0xc9b7u
#define NVB8FA_VIDEO_OFA 0xb8fau
#define HOPPER_CHANNEL_GPFIFO_A 0xc86fu
#define CHANNEL_PARAMS 368
#define TSG_PARAMS 20
#define MAX_SESSIONS 4
#define MAX_ENGINES 8
#define H_GROUP 0x5e550000u
#define H_CHAN0 0x5e550100u
#define H_ENG0 0x5e550200u

struct session {
	struct rmc_session rm;
	struct rmc_session second;    /* nvJPEG's second client on rm.fd */
	bool               open, has_second;
	int                objects;   /* engine objects it holds */
};

/* The instances GET_ENGINES_V2 lists on s's GPU. */
struct engines {
	unsigned nvdec, nvjpg, nvenc, ofa;
};

static void engines_of(struct rmc_session *s, struct engines *n)
{
	struct nv2080_gpu_get_engines_v2_params p;
	uint32_t size = rmc_ctrl_size(NV2080_CTRL_CMD_GPU_GET_ENGINES_V2, sizeof(p));
	rmc_status_t st;

	memset(&p, 0, sizeof(p));
	memset(n, 0, sizeof(*n));
	st = rmc_control(s->fd, NULL, s->client, s->subdevice, NV2080_CTRL_CMD_GPU_GET_ENGINES_V2, &p, size);
	printf("get_engines=%s\n", rmc_status_str(st));
	for (uint32_t i = 0; st == NV_OK && i < p.engine_count && i < NV2080_GPU_MAX_ENGINES_LIST_SIZE; i++) {
		uint32_t t = p.engine_list[i];
		n->nvdec += t >= NV2080_ENGINE_TYPE_NVDEC0 && t <= NV2080_ENGINE_TYPE_NVDEC7;
		n->nvjpg += t >= NV2080_ENGINE_TYPE_NVJPEG0 && t <= NV2080_ENGINE_TYPE_NVJPEG7;
		n->nvenc += (t >= NV2080_ENGINE_TYPE_NVENC0 && t <= NV2080_ENGINE_TYPE_NVENC2) ||
		            t == NV2080_ENGINE_TYPE_NVENC3;
		n->ofa += t == NV2080_ENGINE_TYPE_OFA0 || t == NV2080_ENGINE_TYPE_OFA1;
	}
}

/* Under client rm: a channel group, then n channels each with one object
 * of cls, as libnvcuvid makes a decoder's; stops at the first refusal and
 * adds the objects made to *objects. */
static rmc_status_t engines_under(struct rmc_session *rm, uint32_t cls, unsigned n, int *objects)
{
	static uint8_t chan[CHANNEL_PARAMS], tsg[TSG_PARAMS];
	nv_handle_t group = H_GROUP;
	rmc_status_t st;

	st = rmc_alloc(rm->fd, NULL, rm->client, rm->device, &group, KEPLER_CHANNEL_GROUP_A, tsg, 0);
	for (unsigned i = 0; st == NV_OK && i < n; i++) {
		nv_handle_t ch = H_CHAN0 + i, eng = H_ENG0 + i;
		st = rmc_alloc(rm->fd, NULL, rm->client, group, &ch, HOPPER_CHANNEL_GPFIFO_A, chan, 0);
		if (st == NV_OK)
			st = rmc_alloc(rm->fd, NULL, rm->client, ch, &eng, cls, NULL, 0);
		if (st == NV_OK)
			(*objects)++;
	}
	return st;
}

/* One session of cls with n engine objects, as libnvcuvid opens one;
 * stops at the first refusal. Returns the status that ended it. */
static rmc_status_t open_session(struct session *ses, uint32_t cls, unsigned n)
{
	rmc_status_t st;

	memset(ses, 0, sizeof(*ses));
	st = rmc_session_open(&ses->rm, -1);
	if (st != NV_OK)
		return st;
	ses->open = true;
	return engines_under(&ses->rm, cls, n, &ses->objects);
}

/* One session as nvJPEG's hardware backend opens one: the above, then a
 * second client on the same control file with as many again. */
static rmc_status_t open_jpeg_session(struct session *ses, uint32_t cls, unsigned n)
{
	rmc_status_t st = open_session(ses, cls, n);

	if (st != NV_OK)
		return st;
	st = rmc_session_open(&ses->second, ses->rm.fd);
	if (st != NV_OK)
		return st;
	ses->has_second = true;
	return engines_under(&ses->second, cls, n, &ses->objects);
}

static void close_session(struct session *ses)
{
	if (ses->has_second)
		rmc_free(ses->second.fd, NULL, ses->second.client, ses->second.client, ses->second.client);
	ses->has_second = false;
	if (ses->open)
		rmc_session_close(&ses->rm);
	ses->open = false;
}

/* Sessions until one is refused: how many opened whole, and the status
 * that stopped the first that did not. */
typedef rmc_status_t (*open_fn)(struct session *ses, uint32_t cls, unsigned n);

static int fill(struct session *ses, open_fn open, uint32_t cls, unsigned n, rmc_status_t *stop)
{
	int full = 0;

	*stop = NV_OK;
	for (int i = 0; i < MAX_SESSIONS; i++) {
		*stop = open(&ses[i], cls, n);
		if (*stop != NV_OK)
			break;
		full++;
	}
	return full;
}

static void close_all(struct session *ses)
{
	for (int i = 0; i < MAX_SESSIONS; i++)
		close_session(&ses[i]);
}

/* Sessions of cls until one is refused, then all closed: prints
 * <key>_full= and <key>_stop=. */
static void fill_and_close(const char *key, open_fn open, uint32_t cls, unsigned n)
{
	struct session ses[MAX_SESSIONS];
	rmc_status_t stop;
	int full;

	memset(ses, 0, sizeof(ses));
	full = fill(ses, open, cls, n, &stop);
	printf("%s_full=%d %s_stop=%s\n", key, full, key, rmc_status_str(stop));
	close_all(ses);
}

int main(void)
{
	struct session dec[MAX_SESSIONS], more;
	struct rmc_session probe;
	struct engines n;
	unsigned nvdec;
	rmc_status_t stop, st;
	int full;

	memset(dec, 0, sizeof(dec));
	adv_session_or_die(&probe, -1, "video_sessions");
	engines_of(&probe, &n);
	rmc_session_close(&probe);
	nvdec = n.nvdec;
	printf("nvdec_engines=%u nvjpg_engines=%u nvenc_engines=%u\n", n.nvdec, n.nvjpg, n.nvenc);
	if (n.nvdec == 0 || n.nvdec > MAX_ENGINES || n.nvjpg == 0 || n.nvjpg > MAX_ENGINES ||
	    n.nvenc > MAX_ENGINES) {
		printf("SUMMARY ok=0 nomem=0 other=1\n");
		return 0;
	}

	full = fill(dec, open_session, NVB8B0_VIDEO_DECODER, nvdec, &stop);
	printf("dec_full=%d dec_stop=%s dec_first_objects=%d\n", full, rmc_status_str(stop), dec[0].objects);
	/* The refused session is let go, as the library does. */
	if (full < MAX_SESSIONS)
		close_session(&dec[full]);

	/* Destroyed by RM_FREE of its client, the file left open. */
	rmc_free(dec[0].rm.fd, NULL, dec[0].rm.client, dec[0].rm.client, dec[0].rm.client);
	st = open_session(&more, NVB8B0_VIDEO_DECODER, nvdec);
	printf("dec_after_free=%s dec_after_free_objects=%d\n", rmc_status_str(st), more.objects);
	close(dec[0].rm.fd);
	dec[0].open = false;
	/* Destroyed by closing its file alone: the driver frees the client. */
	close(dec[1].rm.fd);
	dec[1].open = false;
	dec[0] = more;
	st = open_session(&dec[1], NVB8B0_VIDEO_DECODER, nvdec);
	printf("dec_after_close=%s dec_after_close_objects=%d\n", rmc_status_str(st), dec[1].objects);
	close_all(dec);

	fill_and_close("jpg", open_jpeg_session, NVB8D1_VIDEO_NVJPG, n.nvjpg);
	if (n.nvenc)
		fill_and_close("enc", open_session, NVC9B7_VIDEO_ENCODER, n.nvenc);
	if (n.ofa)
		fill_and_close("ofa", open_session, NVB8FA_VIDEO_OFA, n.ofa);
	printf("SUMMARY ok=0 nomem=0 other=0\n");
	return 0;
}
