// GPU tier: hardware JPEG decode (NVJPG engines) under an engine quota.
// Encodes a 256x256 test image with nvJPEG's CUDA encoder, then opens
// HANDLES nvJPEG handles with the hardware backend and decodes a batch of
// 8 on each. Prints per handle: create=STATUS decode=STATUS, and ok=N, the
// number of handles that decoded. Without a cap every handle decodes; under
// video.jpeg = 1 the handles that need an engine past the cap fail, and the
// supervisor's trace shows which NVJPG allocations it allowed. The encoder's
// handle is destroyed before the first hardware handle opens, so that what
// the default backend holds is not counted against the decoders. Then every
// handle is destroyed and one more opened and used: after_destroy=STATUS
// (0 when the sessions were given back). Each step prints
// step=NAME t=SECONDS (CLOCK_REALTIME) to line it up with an audit log.
// Usage: nvjpg_engines [HANDLES]
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>
#include <cuda_runtime.h>
#include <nvjpeg.h>

static const int W = 256, H = 256, BATCH = 8;

static void step(const char *name, int i)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	printf("step=%s%d t=%ld.%09ld\n", name, i, (long)t.tv_sec, t.tv_nsec);
	fflush(stdout);
}

static std::vector<unsigned char> encode_test_image(cudaStream_t s)
{
	nvjpegHandle_t h;
	nvjpegEncoderState_t st;
	nvjpegEncoderParams_t par;
	nvjpegImage_t img = {};
	std::vector<unsigned char> out;
	size_t len = 0;
	unsigned char *d;

	cudaMalloc(&d, 3 * W * H);
	cudaMemset(d, 0x80, 3 * W * H);
	for (int c = 0; c < 3; c++) {
		img.channel[c] = d + c * W * H;
		img.pitch[c] = W;
	}
	if (nvjpegCreateSimple(&h) || nvjpegEncoderStateCreate(h, &st, s) ||
	    nvjpegEncoderParamsCreate(h, &par, s) ||
	    nvjpegEncoderParamsSetSamplingFactors(par, NVJPEG_CSS_420, s) ||
	    nvjpegEncodeImage(h, st, par, &img, NVJPEG_INPUT_RGB, W, H, s) ||
	    nvjpegEncodeRetrieveBitstream(h, st, nullptr, &len, s))
		return out;
	out.resize(len);
	nvjpegEncodeRetrieveBitstream(h, st, out.data(), &len, s);
	cudaStreamSynchronize(s);
	nvjpegEncoderParamsDestroy(par);
	nvjpegEncoderStateDestroy(st);
	nvjpegDestroy(h);
	cudaFree(d);
	return out;
}

/* Opens a hardware-backend handle and decodes a batch of the image on it.
 * *h and *st are set when made (NULL otherwise); returns the first failure. */
static nvjpegStatus_t open_and_decode(const std::vector<unsigned char> &jpg, cudaStream_t s,
                                      nvjpegHandle_t *h, nvjpegJpegState_t *st,
                                      nvjpegStatus_t *created)
{
	const unsigned char *data[BATCH];
	size_t lens[BATCH];
	nvjpegImage_t outs[BATCH] = {};
	unsigned char *buf = nullptr;
	nvjpegStatus_t d;

	*h = nullptr;
	*st = nullptr;
	*created = nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, 0, h);
	if (*created != NVJPEG_STATUS_SUCCESS) {
		*h = nullptr;
		return *created;
	}
	if (cudaMalloc(&buf, (size_t)BATCH * 3 * W * H) != cudaSuccess)
		return NVJPEG_STATUS_ALLOCATOR_FAILURE;
	for (int b = 0; b < BATCH; b++) {
		data[b] = jpg.data();
		lens[b] = jpg.size();
		for (int ch = 0; ch < 3; ch++) {
			outs[b].channel[ch] = buf + ((size_t)b * 3 + ch) * W * H;
			outs[b].pitch[ch] = W;
		}
	}
	d = nvjpegJpegStateCreate(*h, st);
	if (d != NVJPEG_STATUS_SUCCESS)
		*st = nullptr;
	if (d == NVJPEG_STATUS_SUCCESS)
		d = nvjpegDecodeBatchedInitialize(*h, *st, BATCH, 1, NVJPEG_OUTPUT_RGB);
	if (d == NVJPEG_STATUS_SUCCESS)
		d = nvjpegDecodeBatched(*h, *st, data, lens, outs, s);
	if (d == NVJPEG_STATUS_SUCCESS && cudaStreamSynchronize(s) != cudaSuccess)
		d = NVJPEG_STATUS_EXECUTION_FAILED;
	return d;
}

int main(int argc, char **argv)
{
	int handles = argc > 1 ? atoi(argv[1]) : 3, ok = 0;
	cudaStream_t s;
	cudaStreamCreate(&s);
	step("encode", 0);
	std::vector<unsigned char> jpg = encode_test_image(s);
	printf("jpeg_bytes=%zu\n", jpg.size());
	if (jpg.empty())
		return 2;
	std::vector<nvjpegHandle_t> hs(handles);
	std::vector<nvjpegJpegState_t> sts(handles);
	for (int i = 0; i < handles; i++) {
		nvjpegStatus_t c, d;
		step("handle", i);
		d = open_and_decode(jpg, s, &hs[i], &sts[i], &c);
		printf("handle=%d create=%d decode=%d\n", i, (int)c, (int)d);
		ok += d == NVJPEG_STATUS_SUCCESS;
	}
	printf("ok=%d\n", ok);
	step("destroy", 0);
	for (int i = 0; i < handles; i++) {
		if (sts[i])
			nvjpegJpegStateDestroy(sts[i]);
		if (hs[i])
			nvjpegDestroy(hs[i]);
	}
	step("reopen", 0);
	nvjpegHandle_t h;
	nvjpegJpegState_t st;
	nvjpegStatus_t c, d = open_and_decode(jpg, s, &h, &st, &c);
	printf("after_destroy=%d\n", (int)d);
	step("end", 0);
	return 0;
}
