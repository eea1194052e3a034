// Managed memory probe: cudaMallocManaged(SIZE), a kernel writes all of it,
// the host reads it back. With "plain" it uses cudaMalloc instead, as a
// control. Prints what it did and a checksum.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

static const size_t SIZE = 512ull << 20;

__global__ void fill(unsigned char *p, size_t n)
{
	for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = (unsigned char)(i * 7);
}

int main(int argc, char **argv)
{
	bool plain = argc > 1 && strcmp(argv[1], "plain") == 0;
	unsigned char *p = nullptr;
	cudaError_t e = plain ? cudaMalloc(&p, SIZE) : cudaMallocManaged(&p, SIZE);
	printf("%s alloc: %s\n", plain ? "cudaMalloc" : "cudaMallocManaged", cudaGetErrorString(e));
	if (e != cudaSuccess)
		return 1;
	fill<<<1024, 256>>>(p, SIZE);
	e = cudaDeviceSynchronize();
	printf("kernel: %s\n", cudaGetErrorString(e));
	unsigned long long sum = 0;
	if (!plain && e == cudaSuccess)
		for (size_t i = 0; i < SIZE; i += 4096)
			sum += p[i];
	printf("sum %llu\n", sum);
	cudaFree(p);
	return e == cudaSuccess ? 0 : 2;
}
