/*
 * spin.c - guest side of "make -C kernel-patch qemu-test": a busy program
 * with known function names, run while perfmapd records; the host finds
 * mmap3_spin_inner in the segment with its own perf.  Usage: spin SECONDS
 */
#include <stdlib.h>
#include <time.h>

volatile unsigned long mmap3_spin_sink;

__attribute__((noinline)) void
mmap3_spin_inner(void)
{
	unsigned long i;

	for (i = 0; i < 200000; i++)
		mmap3_spin_sink += i;
}

__attribute__((noinline)) void
mmap3_spin_outer(void)
{
	mmap3_spin_inner();
}

int
main(int argc, char **argv)
{
	struct timespec t0, t;
	double secs = argc > 1 ? atof(argv[1]) : 3;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		mmap3_spin_outer();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
