/* SPDX-License-Identifier: MIT */
/*
 * odd_size - an escape the supervisor cannot decode is refused, not
 * continued; another device's ioctl that shares the low byte is untouched.
 *
 * Issues RM_ALLOC's escape number with a 40-byte size (the driver takes only
 * 32 or 48) on /dev/nvidiactl, and the same word on /dev/null.
 * Also a UVM command that shares RM_CONTROL's low byte on /dev/nvidia-uvm.
 * And an OS-descriptor allocation, which must be refused (NOT_SUPPORTED).
 * And REGISTER_FD of a control file (refused) and of a GPU node (allowed).
 * Prints nv_errno= null_errno= uvm_rc= os_desc_status= register_ctl=
 * register_gpu= and an empty SUMMARY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "adv.h"

#define ODD_SIZE 40
#define UVM_SET_PREFERRED_LOCATION 42
#define OS_DESC_PARAMS 40
#define OS_DESC_HANDLE 0x5c00d000u

int main(void)
{
	unsigned char buf[ODD_SIZE] = { 0 };
	unsigned long word = NV_IOC_WORD(NV_ESC_RM_ALLOC, ODD_SIZE);
	int ctl = rmc_open_ctl();
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	long rc;

	if (ctl < 0 || null < 0)
		return ADV_EXIT_SETUP;
	rc = syscall(SYS_ioctl, ctl, word, buf);
	printf("nv_errno=%s\n", rc < 0 ? strerrorname_np(errno) : "none");
	rc = syscall(SYS_ioctl, null, word, buf);
	printf("null_errno=%s\n", rc < 0 ? strerrorname_np(errno) : "none");
	/* UVM_SET_PREFERRED_LOCATION is the plain integer 42, RM_CONTROL's low
	 * byte: it must reach the uvm driver untouched. */
	int uvm = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
	rc = uvm < 0 ? -1 : syscall(SYS_ioctl, uvm, UVM_SET_PREFERRED_LOCATION, buf);
	printf("uvm_rc=%s\n", rc < 0 ? strerrorname_np(errno) : "0");
	/* OS-descriptor memory pins the CALLING process's pages: performed by
	 * the supervisor it would pin the supervisor's. It must be refused. */
	struct rmc_session sess;
	uint8_t desc[OS_DESC_PARAMS] = { 0 };
	nv_handle_t h = OS_DESC_HANDLE;
	adv_session_or_die(&sess, -1, "odd_size");
	rmc_status_t st = rmc_alloc(sess.fd, NULL, sess.client, sess.device, &h,
	                            NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, desc, 0);
	printf("os_desc_status=0x%x\n", (unsigned)st);
	/* Linking a second control file to the first would let it reach the
	 * first file's clients: refused. Linking a GPU node is fine. */
	int ctl2 = rmc_open_ctl(), gpu = open("/dev/nvidia0", O_RDWR | O_CLOEXEC);
	int32_t target = ctl;
	rc = syscall(SYS_ioctl, ctl2, NV_IOC_WORD(NV_ESC_REGISTER_FD, sizeof(target)), &target);
	printf("register_ctl=%s\n", rc < 0 ? strerrorname_np(errno) : "0");
	rc = syscall(SYS_ioctl, gpu, NV_IOC_WORD(NV_ESC_REGISTER_FD, sizeof(target)), &target);
	printf("register_gpu=%s\n", rc < 0 ? strerrorname_np(errno) : "0");
	adv_print_summary(&(struct adv_tally){ 0 });
	return 0;
}
