/* SPDX-License-Identifier: MIT */
/*
 * GPU tier (tests/gpu/p2p_answer.sh): what a program sees of a cuMemAlloc'd
 * buffer's P2P registration. It allocates 2 MiB, fills and reads it back
 * (the memory works), then asks cuPointerGetAttribute for
 * CU_POINTER_ATTRIBUTE_P2P_TOKENS (the tokens a third party hands to
 * nvidia_p2p_get_pages) and prints the result code and the tokens. Under
 * --p2p-register answer the allocation was never registered with the P2P
 * object, so a third party given these tokens is refused by the driver;
 * whether the query itself already fails is what this prints.
 * Build on the GPU machine: nvcc -O2 -o p2p_tokens p2p_tokens.c -lcuda
 */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#define BYTES (2u << 20)
#define FILL  0x5a

int main(void)
{
	static unsigned char host[BYTES];
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr p;
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tok;
	const char *name = NULL;

	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuMemAlloc(&p, BYTES)) {
		fprintf(stderr, "p2p_tokens: CUDA set-up failed\n");
		return 2;
	}
	int works = cuMemsetD8(p, FILL, BYTES) == CUDA_SUCCESS && cuMemcpyDtoH(host, p, BYTES) == CUDA_SUCCESS &&
	            host[0] == FILL && host[BYTES - 1] == FILL;
	memset(&tok, 0, sizeof(tok));
	CUresult rc = cuPointerGetAttribute(&tok, CU_POINTER_ATTRIBUTE_P2P_TOKENS, p);
	cuGetErrorName(rc, &name);
	printf("memory_works=%d p2p_tokens_rc=%d (%s) p2p_token=0x%llx va_space_token=0x%x\n", works, (int)rc,
	       name ? name : "?", (unsigned long long)tok.p2pToken, tok.vaSpaceToken);
	cuMemFree(p);
	return works ? 0 : 1;
}
