/* nvdec_sessions.c - NVDEC sessions through the real NVDECODE API (libnvcuvid),
 * for the video engine quota (issue #29, item 2).
 *
 *   nvdec_sessions N [HOLD_S]
 *
 * 1. caps: cuvidGetDecoderCaps for H.264 4:2:0 8-bit (a query, not a session);
 * 2. open: cuvidCreateDecoder N times, 1920x1080 H.264, all held at once;
 *    prints each status and created=K, and holds them HOLD_S seconds
 *    (default 0: several processes started together then overlap);
 * 3. close: cuvidDestroyDecoder on each; then opens N again (recreated=K):
 *    what the first round held must have been given back;
 * 4. decode: a 64x64 H.264 IDR picture whose macroblocks are all I_PCM (the
 *    samples are carried raw, so decoding is lossless, deblocking off) goes
 *    through the NVDECODE parser, one decoder and cuvidMapVideoFrame64; the
 *    luma read back must equal the samples written: decode=exact.
 *
 * The NVDECODE declarations below are our own, from the public API's
 * documented names, values and layouts (nvcuvid.h, cuviddec.h of the Video
 * Codec SDK); only the fields this program uses are named, the rest of each
 * struct is zero padding at least as large as the real one.
 *
 * Build: gcc -O2 -o nvdec_sessions nvdec_sessions.c -I$CUDA/include -lcuda -ldl
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CODEC_H264 = 4, CHROMA_420 = 1, SURFACE_NV12 = 0, DEINTERLACE_WEAVE = 0,
       CREATE_PREFER_CUVID = 4, PKT_ENDOFSTREAM = 0x01 };

typedef void *cuvid_decoder;
typedef void *cuvid_parser;

struct decode_caps {
	uint32_t codec, chroma, bit_depth_minus8, reserved1[3];
	uint8_t is_supported, num_nvdecs;
	uint16_t output_format_mask;
	uint32_t max_width, max_height, max_mb_count;
	uint16_t min_width, min_height;
	uint8_t pad[64];
};

struct rect16 { int16_t left, top, right, bottom; };

struct decode_create_info { /* CUVIDDECODECREATEINFO, LP64 */
	unsigned long width, height, num_decode_surfaces;
	uint32_t codec, chroma;
	unsigned long creation_flags, bit_depth_minus8, intra_decode_only, max_width, max_height, reserved1;
	struct rect16 display_area;
	uint32_t output_format, deinterlace_mode;
	unsigned long target_width, target_height, num_output_surfaces;
	void *vid_lock;
	struct rect16 target_rect;
	unsigned long enable_histogram;
	unsigned long reserved2[16];
};
_Static_assert(__builtin_offsetof(struct decode_create_info, display_area) == 80, "CUVIDDECODECREATEINFO");
_Static_assert(__builtin_offsetof(struct decode_create_info, vid_lock) == 120, "CUVIDDECODECREATEINFO");

struct video_format { /* CUVIDEOFORMAT, the leading fields */
	uint32_t codec, rate_num, rate_den;
	uint8_t progressive, bit_depth_luma_minus8, bit_depth_chroma_minus8, min_num_decode_surfaces;
	uint32_t coded_width, coded_height;
	int32_t disp_left, disp_top, disp_right, disp_bottom;
	uint32_t chroma;
};

struct disp_info { int picture_index, progressive_frame, top_field_first, repeat_first_field; long long ts; };

struct proc_params { int progressive_frame, second_field, top_field_first, unpaired_field; uint8_t pad[512]; };

struct source_packet { unsigned long flags, payload_size; const unsigned char *payload; long long timestamp; };

struct parser_params { /* CUVIDPARSERPARAMS */
	uint32_t codec, max_num_decode_surfaces, clock_rate, error_threshold, max_display_delay, flags;
	uint32_t reserved1[4];
	void *user;
	int (*on_sequence)(void *, struct video_format *);
	int (*on_decode)(void *, void *);
	int (*on_display)(void *, struct disp_info *);
	void *more_callbacks[2];
	void *reserved2[5];
	void *ext_video_info;
};
_Static_assert(__builtin_offsetof(struct parser_params, user) == 40, "CUVIDPARSERPARAMS");

static struct {
	CUresult (*get_caps)(struct decode_caps *);
	CUresult (*create)(cuvid_decoder *, struct decode_create_info *);
	CUresult (*destroy)(cuvid_decoder);
	CUresult (*decode_picture)(cuvid_decoder, void *);
	CUresult (*map)(cuvid_decoder, int, unsigned long long *, unsigned int *, struct proc_params *);
	CUresult (*unmap)(cuvid_decoder, unsigned long long);
	CUresult (*create_parser)(cuvid_parser *, struct parser_params *);
	CUresult (*parse)(cuvid_parser, struct source_packet *);
	CUresult (*destroy_parser)(cuvid_parser);
} nv;

static int load_nvcuvid(void)
{
	void *so = dlopen("libnvcuvid.so.1", RTLD_NOW);
	if (!so) {
		printf("nvcuvid=missing (%s)\n", dlerror());
		return -1;
	}
#define SYM(field, name) if (!(*(void **)&nv.field = dlsym(so, name))) { printf("nvcuvid=no %s\n", name); return -1; }
	SYM(get_caps, "cuvidGetDecoderCaps");
	SYM(create, "cuvidCreateDecoder");
	SYM(destroy, "cuvidDestroyDecoder");
	SYM(decode_picture, "cuvidDecodePicture");
	SYM(map, "cuvidMapVideoFrame64");
	SYM(unmap, "cuvidUnmapVideoFrame64");
	SYM(create_parser, "cuvidCreateVideoParser");
	SYM(parse, "cuvidParseVideoData");
	SYM(destroy_parser, "cuvidDestroyVideoParser");
#undef SYM
	return 0;
}

static CUresult open_decoder(cuvid_decoder *dec, unsigned w, unsigned h, unsigned surfaces)
{
	struct decode_create_info ci;

	memset(&ci, 0, sizeof(ci));
	ci.width = ci.max_width = ci.target_width = w;
	ci.height = ci.max_height = ci.target_height = h;
	ci.num_decode_surfaces = surfaces;
	ci.codec = CODEC_H264;
	ci.chroma = CHROMA_420;
	ci.creation_flags = CREATE_PREFER_CUVID;
	ci.display_area.right = (int16_t)w;
	ci.display_area.bottom = (int16_t)h;
	ci.output_format = SURFACE_NV12;
	ci.deinterlace_mode = DEINTERLACE_WEAVE;
	ci.num_output_surfaces = 1;
	return nv.create(dec, &ci);
}

/* Opens n decoders and holds them; returns how many opened. */
static int open_round(const char *label, cuvid_decoder *decs, int n)
{
	int made = 0;
	printf("%s:", label);
	for (int i = 0; i < n; i++) {
		decs[i] = NULL;
		CUresult r = open_decoder(&decs[i], 1920, 1080, 8);
		printf(" %d", (int)r);
		made += r == CUDA_SUCCESS;
	}
	printf("\n");
	return made;
}

static void close_round(cuvid_decoder *decs, int n)
{
	for (int i = 0; i < n; i++)
		if (decs[i])
			nv.destroy(decs[i]);
}

/* ---- a lossless H.264 test picture: SPS, PPS, one IDR slice of I_PCM macroblocks ---- */

enum { PIC_W = 64, PIC_H = 64, MB = 16, STREAM_MAX = 16384 };

struct bits { uint8_t buf[STREAM_MAX]; size_t bit; };

static void put(struct bits *b, unsigned n, uint32_t v)
{
	while (n--) {
		if ((v >> n) & 1)
			b->buf[b->bit / 8] |= (uint8_t)(0x80 >> (b->bit % 8));
		b->bit++;
	}
}

static void put_ue(struct bits *b, uint32_t v)
{
	unsigned len = 0;
	while ((v + 1) >> (len + 1))
		len++;
	put(b, len, 0);
	put(b, len + 1, v + 1);
}

static void align_zero(struct bits *b) { while (b->bit % 8) put(b, 1, 0); }
static void trailing(struct bits *b) { put(b, 1, 1); align_zero(b); }

static uint8_t luma_sample(unsigned x, unsigned y) { return (uint8_t)(16 + (x * 7 + y * 13) % 200); }

/* Appends a NAL unit (start code, header, the RBSP with emulation prevention). */
static size_t emit_nal(uint8_t *out, size_t at, uint8_t header, const struct bits *rbsp)
{
	size_t len = rbsp->bit / 8;
	int zeros = 0;
	out[at++] = 0; out[at++] = 0; out[at++] = 0; out[at++] = 1;
	out[at++] = header;
	for (size_t i = 0; i < len; i++) {
		if (zeros >= 2 && rbsp->buf[i] <= 3) {
			out[at++] = 3;
			zeros = 0;
		}
		out[at++] = rbsp->buf[i];
		zeros = rbsp->buf[i] == 0 ? zeros + 1 : 0;
	}
	return at;
}

static size_t make_stream(uint8_t *out)
{
	static struct bits sps, pps, slice;
	size_t at = 0;

	put(&sps, 8, 66); put(&sps, 8, 0); put(&sps, 8, 30);     /* baseline, level 3.0 */
	put_ue(&sps, 0);                                        /* seq_parameter_set_id */
	put_ue(&sps, 0);                                        /* log2_max_frame_num - 4 */
	put_ue(&sps, 2);                                        /* pic_order_cnt_type */
	put_ue(&sps, 1);                                        /* max_num_ref_frames */
	put(&sps, 1, 0);                                        /* gaps_in_frame_num */
	put_ue(&sps, PIC_W / MB - 1);
	put_ue(&sps, PIC_H / MB - 1);
	put(&sps, 1, 1); put(&sps, 1, 1); put(&sps, 1, 0); put(&sps, 1, 0); /* frame_mbs_only, direct_8x8, crop, vui */
	trailing(&sps);
	at = emit_nal(out, at, 0x67, &sps);

	put_ue(&pps, 0); put_ue(&pps, 0);                       /* pps id, sps id */
	put(&pps, 1, 0); put(&pps, 1, 0);                       /* CAVLC, no field order */
	put_ue(&pps, 0); put_ue(&pps, 0); put_ue(&pps, 0);       /* slice groups, ref idx l0, l1 */
	put(&pps, 1, 0); put(&pps, 2, 0);                       /* weighted pred, bipred */
	put_ue(&pps, 0); put_ue(&pps, 0); put_ue(&pps, 0);       /* qp, qs, chroma offset: se(0) */
	put(&pps, 1, 1); put(&pps, 1, 0); put(&pps, 1, 0);       /* deblocking control, constrained intra, redundant */
	trailing(&pps);
	at = emit_nal(out, at, 0x68, &pps);

	put_ue(&slice, 0); put_ue(&slice, 7); put_ue(&slice, 0); /* first mb, I (all), pps */
	put(&slice, 4, 0); put_ue(&slice, 0);                   /* frame_num, idr_pic_id */
	put(&slice, 1, 0); put(&slice, 1, 0);                   /* no_output_of_prior_pics, long_term */
	put_ue(&slice, 0); put_ue(&slice, 1);                    /* slice_qp_delta se(0), deblocking off */
	for (unsigned my = 0; my < PIC_H / MB; my++)
		for (unsigned mx = 0; mx < PIC_W / MB; mx++) {
			put_ue(&slice, 25);                             /* I_PCM */
			align_zero(&slice);
			for (unsigned y = 0; y < MB; y++)
				for (unsigned x = 0; x < MB; x++)
					put(&slice, 8, luma_sample(mx * MB + x, my * MB + y));
			for (unsigned i = 0; i < 2 * (MB / 2) * (MB / 2); i++)
				put(&slice, 8, 128);
		}
	trailing(&slice);
	return emit_nal(out, at, 0x65, &slice);
}

struct decode_run { cuvid_decoder dec; CUresult create, decode, map; int frames, mismatches; };

static int on_sequence(void *user, struct video_format *f)
{
	struct decode_run *run = user;
	unsigned surfaces = f->min_num_decode_surfaces > 1 ? f->min_num_decode_surfaces : 2;
	if (!run->dec)
		run->create = open_decoder(&run->dec, f->coded_width, f->coded_height, surfaces);
	return run->create == CUDA_SUCCESS ? (int)surfaces : 0;
}

static int on_decode(void *user, void *pic)
{
	struct decode_run *run = user;
	run->decode = nv.decode_picture(run->dec, pic);
	return run->decode == CUDA_SUCCESS;
}

static int on_display(void *user, struct disp_info *d)
{
	struct decode_run *run = user;
	struct proc_params pp;
	unsigned long long dptr = 0;
	unsigned pitch = 0;
	static uint8_t row[PIC_W];

	memset(&pp, 0, sizeof(pp));
	pp.progressive_frame = 1;
	run->map = nv.map(run->dec, d->picture_index, &dptr, &pitch, &pp);
	if (run->map != CUDA_SUCCESS)
		return 0;
	run->frames++;
	for (unsigned y = 0; y < PIC_H; y++) {
		if (cuMemcpyDtoH(row, dptr + (unsigned long long)y * pitch, PIC_W) != CUDA_SUCCESS) {
			run->mismatches = -1;
			break;
		}
		for (unsigned x = 0; x < PIC_W; x++)
			run->mismatches += row[x] != luma_sample(x, y);
	}
	nv.unmap(run->dec, dptr);
	return 1;
}

static void decode_check(void)
{
	static uint8_t stream[STREAM_MAX * 2];
	struct decode_run run = { 0 };
	struct parser_params pp;
	struct source_packet pkt = { 0 };
	cuvid_parser parser = NULL;

	memset(&pp, 0, sizeof(pp));
	pp.codec = CODEC_H264;
	pp.max_num_decode_surfaces = 2;
	pp.user = &run;
	pp.on_sequence = on_sequence;
	pp.on_decode = on_decode;
	pp.on_display = on_display;
	CUresult r = nv.create_parser(&parser, &pp);
	if (r != CUDA_SUCCESS) {
		printf("decode=fail parser=%d\n", (int)r);
		return;
	}
	pkt.payload = stream;
	pkt.payload_size = make_stream(stream);
	nv.parse(parser, &pkt);
	struct source_packet eos = { PKT_ENDOFSTREAM, 0, NULL, 0 };
	nv.parse(parser, &eos);
	nv.destroy_parser(parser);
	if (run.dec)
		nv.destroy(run.dec);
	printf("decode=%s stream_bytes=%lu create=%d decode_status=%d map=%d frames=%d mismatches=%d\n",
	       run.frames == 1 && run.mismatches == 0 ? "exact" : "fail", pkt.payload_size, (int)run.create,
	       (int)run.decode, (int)run.map, run.frames, run.mismatches);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	unsigned hold_s = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
	CUdevice dev;
	CUcontext ctx;
	cuvid_decoder decs[64];

	if (n < 1 || n > 64)
		return 2;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx)) {
		printf("cuda=fail\n");
		return 2;
	}
	if (load_nvcuvid())
		return 2;
	struct decode_caps caps;
	memset(&caps, 0, sizeof(caps));
	caps.codec = CODEC_H264;
	caps.chroma = CHROMA_420;
	CUresult c = nv.get_caps(&caps);
	printf("caps=%d supported=%u nvdecs=%u max=%ux%u\n", (int)c, caps.is_supported, caps.num_nvdecs,
	       caps.max_width, caps.max_height);
	fflush(stdout);
	int made = open_round("open", decs, n);
	printf("created=%d of %d\n", made, n);
	fflush(stdout);
	sleep(hold_s);
	close_round(decs, n);
	made = open_round("reopen", decs, n);
	printf("recreated=%d of %d\n", made, n);
	close_round(decs, n);
	decode_check();
	cuDevicePrimaryCtxRelease(dev);
	return 0;
}
