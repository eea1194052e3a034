/* mmap_bench - what managed = deny's extra trap costs ordinary mappings.
 * Times N mmap+munmap pairs of three shapes and prints ns per pair:
 *   anon      private anonymous (malloc's kind): never trapped
 *   private   a file, MAP_PRIVATE (how shared libraries load): never trapped
 *   shared    a file, MAP_SHARED, writable, offset 4096: trapped under deny
 *             and continued by the supervisor (the worst case)
 * Run natively and under gpusandbox in the same session; the ratios are
 * what counts. Usage: mmap_bench [N] */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define DEFAULT_N 100000

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double run(int n, int prot, int flags, int fd, off_t off)
{
	double t0 = now_ns();
	for (int i = 0; i < n; i++) {
		void *p = mmap(NULL, PAGE, prot, flags, fd, off);
		if (p == MAP_FAILED) {
			perror("mmap");
			exit(1);
		}
		munmap(p, PAGE);
	}
	return (now_ns() - t0) / n;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : DEFAULT_N;
	char path[] = "/tmp/mmap-bench-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || ftruncate(fd, 2 * PAGE) < 0)
		return perror("tmpfile"), 1;
	unlink(path);
	printf("anon_ns %.0f\n", run(n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	printf("private_ns %.0f\n", run(n, PROT_READ, MAP_PRIVATE, fd, PAGE));
	printf("shared_ns %.0f\n", run(n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, PAGE));
	return 0;
}
