// GPU tier (issue #17, --gpus): may a process register a GPU with UVM by
// its UUID? UVM asks only that the caller hold the GPU's node
// (nvGpuOpsGetGpuInfo -> osIsGpuAccessible, nv_gpu_ops.c, 580.95.05), so
// under --gpus a hidden GPU's node is masked with /dev/null
// (supervisor/run/contain.c). A static C program, no CUDA.
//
//   uvm_register_probe UUID     (as nvidia-smi -L prints it: GPU-...)
//
// Opens /dev/nvidiaN for every N that opens (what a workload could
// reach), then /dev/nvidia-uvm, UVM_INITIALIZE, UVM_REGISTER_GPU.
// Prints "nodes=K register=0x.." (the NV status; 0x1b: refused for want
// of the GPU's node). Natively with the GPU's node: expect 0x0; under
// gpusandbox --gpus naming another GPU: 0x1b.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nvrm_abi.h"
#include "nvuvm_abi.h"
#include "../lib/uuid_text.h"

#define MAX_NODES 64

int main(int argc, char **argv)
{
	struct uvm_register_gpu_params p = { .rm_ctrl_fd = -1, .rm_status = 0xffffffffu };
	struct uvm_initialize_params init = { 0 };
	char path[32];
	int nodes = 0;

	if (argc != 2 || uuid_from_text(argv[1], p.gpu_uuid) < 0) {
		fprintf(stderr, "usage: uvm_register_probe GPU-UUID\n");
		return 2;
	}
	for (int n = 0; n < MAX_NODES; n++) {
		snprintf(path, sizeof(path), "/dev/nvidia%d", n);
		nodes += open(path, O_RDWR | O_CLOEXEC) >= 0;
	}
	int ufd = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
	if (ufd < 0 || syscall(SYS_ioctl, ufd, UVM_INITIALIZE, &init) < 0 || init.rm_status) {
		printf("nodes=%d uvm=fail errno=%d\n", nodes, errno);
		return 1;
	}
	if (syscall(SYS_ioctl, ufd, UVM_REGISTER_GPU, &p) < 0) {
		printf("nodes=%d register=errno:%d\n", nodes, errno);
		return 1;
	}
	printf("nodes=%d register=0x%x\n", nodes, p.rm_status);
	return 0;
}
