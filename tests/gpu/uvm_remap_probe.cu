// GPU tier (research for managed = deny): can remap_file_pages turn CUDA's
// semaphore-pool mapping of /dev/nvidia-uvm into a managed range once the
// pool's range is freed? Steps, each printed:
//   1. find the 2 MiB nvidia-uvm mapping in /proc/self/maps and the uvm fd;
//   2. UVM_FREE (34) of that range;          uvm_free=<NV status>
//      (UVM refuses to free a pool still mapped on the CPU: 0x1f)
//   3. remap_file_pages over the same VMA;   remap=OK|<errno>
//   4. UVM_VALIDATE_VA_RANGE (72) there:     range_after=<NV status>
//      (NV_OK: a range exists again, i.e. a managed range was created);
//   5. the CPU writes and reads it:          cpu=ok (only if 4 said NV_OK)
// Research only: it frees the pool CUDA uses, so the context is not used
// afterwards.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <cerrno>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cuda_runtime.h>

struct range_params { uint64_t base, length; uint32_t status, pad; };

int main()
{
	cudaFree(0);
	FILE *m = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo = 0, hi = 0;
	while (m && fgets(line, sizeof(line), m))
		if (strstr(line, "/dev/nvidia-uvm") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 && hi - lo == (2ul << 20))
			break;
		else
			lo = hi = 0;
	/* CUDA opens nvidia-uvm twice (a VA space and an mm file): the VA
	 * space's is the one that knows the pool's range. */
	int ufd = -1;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char p[64], t[256];
		snprintf(p, sizeof(p), "/proc/self/fd/%s", de->d_name);
		ssize_t n = readlink(p, t, sizeof(t) - 1);
		if (n > 0) {
			t[n] = 0;
			struct range_params q = { lo, hi - lo, 0xffff, 0 };
			if (!strcmp(t, "/dev/nvidia-uvm") && ioctl(atoi(de->d_name), 72, &q) == 0 && q.status == 0)
				ufd = atoi(de->d_name);
		}
	}
	printf("pool=0x%lx-0x%lx uvm_fd=%d\n", lo, hi, ufd);
	if (!lo || ufd < 0)
		return 2;
	struct range_params f = { lo, hi - lo, 0xffff, 0 };
	ioctl(ufd, 34, &f);
	printf("uvm_free=0x%x\n", f.status);
	int rc = remap_file_pages((void *)lo, hi - lo, 0, lo >> 12, 0);
	printf("remap=%s\n", rc == 0 ? "OK" : strerrorname_np(errno));
	struct range_params v = { lo, hi - lo, 0xffff, 0 };
	ioctl(ufd, 72, &v);
	printf("range_after=0x%x\n", v.status);
	if (v.status == 0) {
		volatile unsigned char *p = (unsigned char *)lo;
		for (unsigned long i = 0; i < hi - lo; i += 4096)
			p[i] = 0x5a;
		unsigned long bad = 0;
		for (unsigned long i = 0; i < hi - lo; i += 4096)
			bad += p[i] != 0x5a;
		printf("cpu=%s\n", bad ? "bad" : "ok");
	}
	fflush(stdout);
	_exit(0);
}
