/*
 * capver.c - one test program in several versions.  Built with
 * -DVERSION=1 its hot function is pm_capv1_hot, with -DVERSION=2 it is
 * pm_capv2_hot (and the code differs), so a report shows which version a
 * sample came from - if it finds the right binary.  -DKONST=N only changes
 * a constant: a distinct build-id for the same code.
 * Usage: capver SECONDS (CPU-bound) | capver -s MILLISECONDS (sleeps)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef VERSION
#define VERSION 1
#endif
#ifndef KONST
#define KONST 0
#endif
#define CAT2(a, b)	a##b
#define CAT(a, b)	CAT2(a, b)
#define HOT		CAT(CAT(pm_capv, VERSION), _hot)

volatile long pm_capver_konst = KONST;

__attribute__((noinline)) double
HOT(double x)
{
	for (int i = 0; i < 1000 * VERSION; i++)
		x = x * (1.0 + 1e-7 * VERSION) + 0.5;
	return x;
}

int
main(int argc, char **argv)
{
	struct timespec a, b, ts;
	double secs, x = pm_capver_konst;

	if (argc > 2 && strcmp(argv[1], "-s") == 0) {
		long ms = atol(argv[2]);

		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (ms % 1000) * 1000000L;
		nanosleep(&ts, NULL);
		return 0;
	}
	secs = argc > 1 ? atof(argv[1]) : 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		x = HOT(x);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return x > 0 ? 0 : 1;
}
