/*
 * reexec.c - a process that runs one image, then execs itself: the new
 * image maps the same files, and without address randomization (setarch
 * -R) at the same addresses, as the old one did.  The old image spins in
 * pm_reexec_before, the new one in pm_reexec_after, so a report tells
 * which image a sample was taken in.
 * Usage: /path/to/reexec BEFORE_SECONDS AFTER_SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) static double
pm_reexec_before(double secs)
{
	double end = now() + secs, x = 0;

	while (now() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 1.0000001 + 0.5;
	return x;
}

__attribute__((noinline)) static double
pm_reexec_after(double secs)
{
	double end = now() + secs, x = 0;

	while (now() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 1.0000001 + 0.5;
	return x;
}

int
main(int argc, char **argv)
{
	char	*args[4];

	if (argc != 3) {
		fprintf(stderr, "usage: reexec BEFORE_SECONDS AFTER_SECONDS\n");
		return 2;
	}
	if (strcmp(argv[1], "-") == 0)
		return pm_reexec_after(atof(argv[2])) > 0 ? 0 : 1;
	if (pm_reexec_before(atof(argv[1])) < 0)
		return 1;
	args[0] = argv[0];
	args[1] = "-";
	args[2] = argv[2];
	args[3] = NULL;
	execv(argv[0], args);	/* a path: the test gives one */
	perror("execv");
	return 1;
}
