/*
 * swapexec.c - one program built twice (-DIMAGE=1 and -DIMAGE=2, non-PIE):
 * the two images have their code at the same addresses, image 1's spinning
 * function pm_swap_one where image 2 has pm_swap_two, so a sample read
 * against the wrong image names the other's function.
 *
 *	swapexec-1 IMAGE2 [fork]  print "ready PID", spin in pm_swap_one until
 *				SIGUSR1, print "exec NS" (CLOCK_MONOTONIC),
 *				exec IMAGE2 -; with "fork", first fork a
 *				child (printed "child PID") that spins on in
 *				pm_swap_one until killed (60 s at most)
 *	swapexec-2 -		spin in pm_swap_two until SIGUSR1
 * Each image gives up after 60 s.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t go;

static void
on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The same code in both images, at the same address: only its name differs. */
#if IMAGE == 1
#define SPIN	pm_swap_one
#else
#define SPIN	pm_swap_two
#endif
__attribute__((noinline)) double
SPIN(double secs)
{
	double end = now() + secs, x = 0;

	while (!go && now() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 1.0000001 + 0.5;
	return x;
}

int
main(int argc, char **argv)
{
	struct timespec t;
	char	*args[3];
	pid_t	 child;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: swapexec IMAGE2 [fork]\n");
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	if (strcmp(argv[1], "-") == 0)
		return SPIN(60) > 0 ? 0 : 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (SPIN(60) < 0)
		return 1;
	if (argc == 3 && (child = fork()) == 0) {
		go = 0;
		return SPIN(60) > 0 ? 0 : 1;
	} else if (argc == 3)
		printf("child %d\n", (int)child);
	clock_gettime(CLOCK_MONOTONIC, &t);
	printf("exec %lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
	fflush(stdout);
	args[0] = argv[1];
	args[1] = "-";
	args[2] = NULL;
	execv(argv[1], args);
	perror("execv");
	return 1;
}
