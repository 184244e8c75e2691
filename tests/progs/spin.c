/*
 * spin.c - a CPU-bound test program with two distinctive functions, so a
 * report can tell its samples apart: pm_spin_outer calls pm_spin_inner.
 * Built with -DSPIN_NAME=v1 they are pm_v1_outer and pm_v1_inner: two
 * builds of one program whose functions perf tells apart by name.
 * Usage: spin SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef SPIN_NAME
#define SPIN_NAME	spin
#endif
#define PM_PASTE(a, b, c)	a##b##c
#define PM_FN(name, part)	PM_PASTE(pm_, name, part)
#define pm_inner		PM_FN(SPIN_NAME, _inner)
#define pm_outer		PM_FN(SPIN_NAME, _outer)

__attribute__((noinline)) double
pm_inner(double x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 1.0000001 + 0.5;
	return x;
}

__attribute__((noinline)) double
pm_outer(double x)
{
	for (int i = 0; i < 100; i++)
		x = pm_inner(x);
	return x;
}

int
main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, x = 0;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		x = pm_outer(x);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return x > 0 ? 0 : 1;
}
