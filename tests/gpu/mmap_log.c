/* LD_PRELOAD shim for the GPU tier: logs every mmap a program makes through
 * libc, with the file behind the fd, to the file named by MMAP_LOG. The
 * device has no strace; this answers which mappings libcuda makes of
 * /dev/nvidia-uvm and with what arguments. Research only. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static void log_map(void *addr, size_t len, int prot, int flags, int fd, off_t off, void *ret)
{
	static FILE *f;
	char link[64], path[256] = "-";
	ssize_t n;

	if (!f) {
		const char *name = getenv("MMAP_LOG");
		f = name ? fopen(name, "a") : NULL;
		if (!f)
			return;
		setvbuf(f, NULL, _IOLBF, 0);
	}
	if (fd >= 0 && !(flags & MAP_ANONYMOUS)) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof(path) - 1);
		path[n > 0 ? n : 0] = '\0';
	}
	fprintf(f, "mmap addr=%p len=0x%zx prot=0x%x flags=0x%x fd=%d off=0x%llx ret=%p file=%s\n", addr, len,
	        prot, flags, fd, (unsigned long long)off, ret, path);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	void *ret;

	if (!real)
		real = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	ret = real(addr, len, prot, flags, fd, off);
	log_map(addr, len, prot, flags, fd, off, ret);
	return ret;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}
