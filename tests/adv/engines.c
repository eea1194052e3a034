/* SPDX-License-Identifier: MIT */
/*
 * engines - the video engine caps of the policy, against a stacker.
 *
 * The caps count sessions: per client and GPU, its engine objects over the
 * GPU's engine instances of the kind, rounded up (exec_engines.c; a
 * library's session holds one object per instance: video_sessions.c). A
 * workload that stacks objects in one client, all under one channel, gets
 * one session per I objects, so never more than cap x I objects. Run
 * under policy/video-transcode.policy (video.decoders = 2, video.jpeg =
 * 1). Phases:
 *  1. NVDEC (0xc9b0) objects under one channel until refused: 2 x I, then
 *     INSUFFICIENT_RESOURCES (dec_ok=, dec_stop=);
 *  2. free one, and one more fits: it joins the session the freed one
 *     left short (dec_after_free=); then none (dec_after_full=);
 *  3. NVJPG (0xc9d1): 1 x I, then refused (jpg_ok=, jpg_stop=); a dup of
 *     a decoder is refused (dup_engine=INVALID_ARGUMENT: the driver's
 *     answer, and the supervisor's, which audits it);
 *  4. race: at the cap, a second thread flips the top-level hClass between
 *     a compute class (allowed, uncapped) and NVDEC while this thread
 *     allocates. The fake driver's own NVDEC peak must stay at 2 x I
 *     (run.sh checks gpu0.nvdec_peak against the fake's gpu0.nvdec_engines);
 *     race_refused= counts the refusals.
 * Without gpusandbox the fake accepts every one (baseline-engines).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "adv.h"

#define NVC9B0_VIDEO_DECODER 0xc9b0u
#define NVC9D1_VIDEO_NVJPG 0xc9d1u
#define HOPPER_COMPUTE_A 0xcbc0u
#define HOPPER_CHANNEL_GPFIFO_A 0xc86fu
#define CHANNEL_PARAMS 368
#define TSG_PARAMS 20
#define MAX_TRIES 64
#define RACE_TRIES 3000
#define H_GROUP 0x5c00e000u
#define H_CHAN 0x5c00e001u
#define H_DEC0 0x5c00e100u
#define H_JPG0 0x5c00e200u
#define H_DUP 0x5c00e300u
#define H_RACE0 0x5c010000u

static volatile struct nvos64 race_call;
static atomic_bool race_stop;

static void *flipper(void *arg)
{
	(void)arg;
	while (!atomic_load(&race_stop)) {
		race_call.h_class = NVC9B0_VIDEO_DECODER;
		race_call.h_class = HOPPER_COMPUTE_A;
	}
	return NULL;
}

static int fill(struct rmc_session *s, nv_handle_t base, uint32_t cls, rmc_status_t *last)
{
	int ok = 0;

	for (int i = 0; i < MAX_TRIES; i++) {
		nv_handle_t h = base + (nv_handle_t)i;
		*last = rmc_alloc(s->fd, NULL, s->client, H_CHAN, &h, cls, NULL, 0);
		if (*last != NV_OK)
			break;
		ok++;
	}
	return ok;
}

int main(void)
{
	struct rmc_session s;
	static uint8_t chan[CHANNEL_PARAMS], tsg[TSG_PARAMS];
	nv_handle_t group = H_GROUP, channel = H_CHAN, h;
	rmc_status_t last;
	int dec_ok, dec_after, jpg_ok, race_ok, race_refused;
	pthread_t th;

	adv_session_or_die(&s, -1, "engines");
	rmc_alloc(s.fd, NULL, s.client, s.device, &group, KEPLER_CHANNEL_GROUP_A, tsg, 0);
	last = rmc_alloc(s.fd, NULL, s.client, group, &channel, HOPPER_CHANNEL_GPFIFO_A, chan, 0);
	printf("channel=%s\n", rmc_status_str(last));
	dec_ok = fill(&s, H_DEC0, NVC9B0_VIDEO_DECODER, &last);
	printf("dec_stop=%s\n", rmc_status_str(last));
	rmc_free(s.fd, NULL, s.client, H_CHAN, H_DEC0);
	h = H_DEC0 + MAX_TRIES;
	last = rmc_alloc(s.fd, NULL, s.client, H_CHAN, &h, NVC9B0_VIDEO_DECODER, NULL, 0);
	dec_after = last == NV_OK;
	/* Whole sessions again: the next would open a third. */
	h = H_DEC0 + MAX_TRIES + 1;
	last = rmc_alloc(s.fd, NULL, s.client, H_CHAN, &h, NVC9B0_VIDEO_DECODER, NULL, 0);
	printf("dec_after_full=%s\n", rmc_status_str(last));
	jpg_ok = fill(&s, H_JPG0, NVC9D1_VIDEO_NVJPG, &last);
	printf("jpg_stop=%s\n", rmc_status_str(last));
	/* A dup would move an engine object to another client (sessions are
	 * per client): refused, as the driver refuses it. */
	h = H_DUP;
	last = rmc_dup(s.fd, NULL, s.client, H_CHAN, &h, s.client, H_DEC0 + 1);
	printf("dup_engine=%s\n", rmc_status_str(last));

	race_call.h_class = HOPPER_COMPUTE_A;
	race_call.h_object_parent = H_CHAN;
	pthread_create(&th, NULL, flipper, NULL);
	adv_race_allocs(s.fd, &race_call, s.client, H_RACE0, 0, RACE_TRIES, &race_ok, &race_refused);
	atomic_store(&race_stop, true);
	pthread_join(th, NULL);
	printf("dec_ok=%d dec_after_free=%d jpg_ok=%d race_ok=%d race_refused=%d\n", dec_ok,
	       dec_after, jpg_ok, race_ok, race_refused);
	printf("SUMMARY ok=0 nomem=0 other=0\n");
	return 0;
}
