/*
 * spin.c - a CPU-bound test program with two distinctive functions, so a
 * report can tell its samples apart: pm_spin_outer calls pm_spin_inner.
 * Usage: spin SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) double
pm_spin_inner(double x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 1.0000001 + 0.5;
	return x;
}

__attribute__((noinline)) double
pm_spin_outer(double x)
{
	for (int i = 0; i < 100; i++)
		x = pm_spin_inner(x);
	return x;
}

int
main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, x = 0;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		x = pm_spin_outer(x);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return x > 0 ? 0 : 1;
}
