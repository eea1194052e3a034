// GPU tier probes: CUDA's UVM_MAP_EXTERNAL_ALLOCATION as the probe's own
// ioctl() sees it. A probe linked with --export-dynamic stands in front of
// libc's ioctl for libcuda, and this keeps the last successful map's
// parameters (last_map) and the UVM fd it went to (last_map_fd).
#ifndef GPUSANDBOX_GPU_MAP_SPY_H
#define GPUSANDBOX_GPU_MAP_SPY_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UVM_MAP_EXTERNAL_ALLOCATION 33u
#define MAX_GPUS_580 (32 * 8) /* NV_MAX_DEVICES x UVM_PARENT_ID_MAX_SUB_PROCESSORS */

struct gpu_attrs { uint8_t uuid[16]; uint32_t mapping, caching, format, element_bits, compression; };
struct map_params {
	uint64_t base, length, offset;
	struct gpu_attrs gpu[MAX_GPUS_580];
	uint64_t gpu_count;
	int32_t ctl_fd;
	uint32_t h_client, h_memory, status;
};
_Static_assert(sizeof(struct gpu_attrs) == 36, "UvmGpuMappingAttributes");
_Static_assert(offsetof(struct map_params, gpu_count) == 24 + 36 * MAX_GPUS_580, "gpuAttributesCount");

static struct map_params last_map;
static int last_map_fd = -1;

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	long rc = syscall(SYS_ioctl, fd, req, arg);
	if (req == UVM_MAP_EXTERNAL_ALLOCATION && rc == 0) {
		memcpy(&last_map, arg, sizeof(last_map));
		last_map_fd = fd;
	}
	return (int)rc;
}

#endif
