// UVM probe: how much GPU memory managed and pageable (HMM) memory take,
// outside RM's per-process accounting. Modes:
//   managed MIB   cudaMallocManaged(MIB), a kernel writes all of it
//   hmm MIB       malloc(MIB), a kernel writes all of it (needs pageable access)
//   plain MIB     cudaMalloc(MIB), the control
// An optional third argument holds the memory that many seconds after the
// kernel (for the eviction check in managed.sh), then checks the data.
// Prints the device's pageable-access attribute, cudaMemGetInfo's free memory
// before and after (GPU-wide, so UVM pages show there), and a checksum.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <unistd.h>

__global__ void fill(unsigned char *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = (unsigned char)((i >> 12) * 7 + 1);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: uvm_probe managed|hmm|plain MIB [HOLD_SECONDS]\n");
		return 2;
	}
	const char *mode = argv[1];
	size_t size = strtoull(argv[2], nullptr, 0) << 20;
	int pageable = -1, managed_attr = -1;
	size_t free0, free1, total;
	unsigned char *p = nullptr;
	cudaError_t e;

	cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, 0);
	cudaDeviceGetAttribute(&managed_attr, cudaDevAttrManagedMemory, 0);
	cudaFree(0);
	cudaMemGetInfo(&free0, &total);
	if (!strcmp(mode, "managed"))
		e = cudaMallocManaged(&p, size);
	else if (!strcmp(mode, "plain"))
		e = cudaMalloc(&p, size);
	else {
		p = (unsigned char *)malloc(size);
		e = p ? cudaSuccess : cudaErrorMemoryAllocation;
		if (p)
			memset(p, 1, size);
	}
	printf("mode %s size_mib %zu pageable_attr %d managed_attr %d alloc %s (%s)\n", mode, size >> 20,
	       pageable, managed_attr, cudaGetErrorString(e), cudaGetErrorName(e));
	if (e != cudaSuccess) {
		/* Does the program go on? A device allocation and a kernel in
		 * the same context after the refusal. */
		unsigned char *q = nullptr;
		cudaGetLastError();
		cudaError_t e2 = cudaMalloc(&q, 64u << 20);
		if (e2 == cudaSuccess) {
			fill<<<64, 256>>>(q, 64u << 20);
			e2 = cudaDeviceSynchronize();
			cudaFree(q);
		}
		printf("after_refusal cudaMalloc+kernel %s\n", cudaGetErrorName(e2));
		return 1;
	}
	fill<<<1024, 256>>>(p, size);
	e = cudaDeviceSynchronize();
	cudaMemGetInfo(&free1, &total);
	printf("kernel %s gpu_free_drop_mib %lld\n", cudaGetErrorString(e),
	       ((long long)free0 - (long long)free1) >> 20);
	fflush(stdout);
	if (argc > 3 && e == cudaSuccess) {
		sleep(atoi(argv[3]));
		cudaMemGetInfo(&free1, &total);
		printf("after hold gpu_free_drop_mib %lld\n", ((long long)free0 - (long long)free1) >> 20);
	}
	unsigned long long sum = 0, bad = 0;
	if (e == cudaSuccess && strcmp(mode, "plain"))
		for (size_t i = 0; i < size; i += 4096) {
			sum += p[i];
			bad += p[i] != (unsigned char)((i >> 12) * 7 + 1);
		}
	printf("sum %llu bad_pages %llu\n", sum, bad);
	return e == cudaSuccess ? 0 : 3;
}
