/* LD_PRELOAD shim for the GPU tier (research): fails libcuda's mmap of
 * /dev/nvidia-uvm for managed ranges (longer than CUDA's 2 MiB semaphore
 * pool) with the errno named by UVM_FAIL_ERRNO, to learn which error CUDA
 * reports for each, and whether the context stays usable. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <stdio.h>
#include <unistd.h>

#define POOL_BYTES (2u << 20)

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	char link[64], path[256];
	ssize_t n;

	if (!real)
		real = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	if (fd >= 0 && len > POOL_BYTES && getenv("UVM_FAIL_ERRNO")) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof(path) - 1);
		if (n > 0) {
			path[n] = '\0';
			if (strcmp(path, "/dev/nvidia-uvm") == 0) {
				errno = atoi(getenv("UVM_FAIL_ERRNO"));
				return MAP_FAILED;
			}
		}
	}
	return real(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}
