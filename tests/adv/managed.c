/* SPDX-License-Identifier: MIT */
/*
 * managed - "managed = deny" refuses every mmap that would create a managed
 * (UVM) range, in every form the kernel takes, and leaves other mappings
 * alone.
 *
 * A managed range is made by mmap() of /dev/nvidia-uvm, shared, readable
 * and writable, at an offset equal to its address (uvm_mmap). The fake
 * driver's nvidia-uvm answers no UVM ioctl, so it holds no range and every
 * such mapping is one that would create a range. Each attempt prints
 * NAME=OK or NAME=<errno name>:
 *   uvm_fixed     MAP_SHARED|MAP_FIXED_NOREPLACE at X, offset X
 *   uvm_hint      no address, offset = where the kernel will place it (the
 *                 workload can predict that; the filter must not compare
 *                 the address with the offset)
 *   uvm_validate  MAP_SHARED_VALIDATE
 *   uvm_offset0   offset 0 (UVM refuses it itself): not trapped
 *   uvm_readonly  PROT_READ only (UVM refuses it itself): not trapped
 *   file_shared   a shared writable mapping of a plain file at offset 4096
 *   anon_shared   MAP_SHARED|MAP_ANONYMOUS
 *   remap         remap_file_pages on a shared file mapping: refused whole
 *                 under deny (over a UVM mapping whose range was freed it
 *                 would create a managed range; see exec_managed.c)
 *   i386_mmap2    the i386 ABI's mmap2 of nvidia-uvm (int $0x80)
 *   i386_old_mmap i386's old mmap, whose arguments are in memory
 * run.sh checks the expected answers under --managed deny (EPERM for the
 * uvm_* that are trapped, remap and both i386 calls, OK for the plain file and
 * shared anonymous memory) and under the default, where no call is
 * refused with EPERM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAP_BYTES (2u << 20)
#define FILE_OFF 4096
#define I386_NR_GETPID 20
#define I386_NR_OLD_MMAP 90
#define I386_NR_MMAP2 192
#define I386_PAGE 4096u

static void report(const char *name, void *p)
{
	if (p == MAP_FAILED) {
		printf("%s=%s\n", name, strerrorname_np(errno));
		return;
	}
	printf("%s=OK\n", name);
}

/* An address range the kernel considers free right now. */
static uintptr_t free_range(size_t len, int extra)
{
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | extra, -1, 0);

	if (p == MAP_FAILED)
		return 0;
	munmap(p, len);
	return (uintptr_t)p;
}

static void uvm_attempts(int ufd)
{
	uintptr_t x;
	void *p;

	x = free_range(MAP_BYTES, 0);
	p = mmap((void *)x, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, ufd,
	         (off_t)x);
	report("uvm_fixed", p);
	if (p != MAP_FAILED)
		munmap(p, MAP_BYTES);

	/* The kernel hands out the gap it just gave back. */
	x = free_range(MAP_BYTES, 0);
	p = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, ufd, (off_t)x);
	report("uvm_hint", p);
	if (p != MAP_FAILED)
		munmap(p, MAP_BYTES);

	x = free_range(MAP_BYTES, 0);
	p = mmap((void *)x, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_FIXED_NOREPLACE,
	         ufd, (off_t)x);
	report("uvm_validate", p);
	if (p != MAP_FAILED)
		munmap(p, MAP_BYTES);

	p = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, ufd, 0);
	report("uvm_offset0", p);
	if (p != MAP_FAILED)
		munmap(p, MAP_BYTES);

	x = free_range(MAP_BYTES, 0);
	p = mmap((void *)x, MAP_BYTES, PROT_READ, MAP_SHARED | MAP_FIXED_NOREPLACE, ufd, (off_t)x);
	report("uvm_readonly", p);
	if (p != MAP_FAILED)
		munmap(p, MAP_BYTES);
}

static void other_attempts(void)
{
	char path[] = "/tmp/gs-managed-XXXXXX";
	int fd = mkstemp(path);
	void *p;

	if (fd >= 0) {
		unlink(path);
		if (ftruncate(fd, 2 * FILE_OFF) == 0) {
			p = mmap(NULL, FILE_OFF, PROT_READ | PROT_WRITE, MAP_SHARED, fd, FILE_OFF);
			report("file_shared", p);
			if (p != MAP_FAILED)
				munmap(p, FILE_OFF);
			/* Offset 0: not trapped; then its second page re-mapped. */
			p = mmap(NULL, 2 * FILE_OFF, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (p != MAP_FAILED) {
				int rc = remap_file_pages(p, FILE_OFF, 0, 1, 0);
				printf("remap=%s\n", rc == 0 ? "OK" : strerrorname_np(errno));
				munmap(p, 2 * FILE_OFF);
			}
		}
		close(fd);
	}
	p = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	report("anon_shared", p);
	if (p != MAP_FAILED)
		munmap(p, MAP_BYTES);
}

#if defined(__x86_64__)
static long i386_call6(long nr, long a, long b, long c, long d, long e, long f)
{
	long r;

	/* int $0x80 takes ebx, ecx, edx, esi, edi, ebp; ebp is saved by hand
	 * because the compiler may use it as the frame pointer, below the red
	 * zone, which the compiler may be using. */
	__asm__ volatile("sub $128, %%rsp\n\tpush %%rbp\n\tmov %7, %%rbp\n\tint $0x80\n\t"
	                 "pop %%rbp\n\tadd $128, %%rsp"
	                 : "=a"(r)
	                 : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e), "r"(f)
	                 : "memory", "r8", "r9", "r10", "r11");
	return r;
}

/* Is int $0x80 usable (CONFIG_IA32_EMULATION, ia32_emulation=)? Without it
 * a child dies of SIGSEGV. */
static bool i386_usable(void)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(i386_call6(I386_NR_GETPID, 0, 0, 0, 0, 0, 0) > 0 ? 0 : 1);
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void i386_report(const char *name, long r)
{
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		printf("%s=%s\n", name, strerrorname_np(errno));
	} else {
		printf("%s=OK\n", name);
	}
}

static void i386_attempts(int ufd)
{
	/* Everything below 4 GiB, where a 32-bit call can name it. */
	uintptr_t x = free_range(MAP_BYTES, MAP_32BIT);
	static uint32_t old_args[6];
	uint32_t *args;
	long r;

	if (!i386_usable()) {
		printf("i386=unavailable\n");
		return;
	}
	r = i386_call6(I386_NR_MMAP2, (long)x, MAP_BYTES, PROT_READ | PROT_WRITE,
	               MAP_SHARED | MAP_FIXED_NOREPLACE, ufd, (long)(x / I386_PAGE));
	i386_report("i386_mmap2", r);
	if (r > 0)
		munmap((void *)r, MAP_BYTES);
	/* old mmap: a pointer to {addr, len, prot, flags, fd, offset}, here a
	 * harmless private anonymous mapping. */
	args = mmap(NULL, sizeof(old_args), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
	            -1, 0);
	if (args == MAP_FAILED)
		return;
	args[0] = 0;
	args[1] = MAP_BYTES;
	args[2] = PROT_READ | PROT_WRITE;
	args[3] = MAP_PRIVATE | MAP_ANONYMOUS;
	args[4] = (uint32_t)-1;
	args[5] = 0;
	r = i386_call6(I386_NR_OLD_MMAP, (long)(uintptr_t)args, 0, 0, 0, 0, 0);
	i386_report("i386_old_mmap", r);
	if (r > 0)
		munmap((void *)r, MAP_BYTES);
}
#endif

int main(void)
{
	int ufd = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);

	if (ufd < 0) {
		perror("managed: /dev/nvidia-uvm");
		return 2;
	}
	uvm_attempts(ufd);
	other_attempts();
#if defined(__x86_64__)
	i386_attempts(ufd);
#endif
	close(ufd);
	/* run.sh's contract: no vidmem was asked for. */
	printf("SUMMARY ok=0 nomem=0 other=0\n");
	return 0;
}
