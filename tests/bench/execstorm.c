/*
 * execstorm.c - thousands of short processes per second: each of NPAR
 * workers fork+execs PROGRAM in a loop for SECS seconds.  Prints the
 * number of processes run and the rate.  The workers go with it: killed
 * (a test's end), it leaves none of them storming on.
 * Usage: execstorm SECS NPAR PROGRAM
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

int
main(int argc, char **argv)
{
	double	 secs;
	int	 npar, i;
	long	 total = 0;
	int	 pfd[2];

	if (argc != 4) {
		fprintf(stderr, "usage: execstorm SECS NPAR PROGRAM\n");
		return 2;
	}
	secs = atof(argv[1]);
	npar = atoi(argv[2]);
	if (pipe(pfd) < 0)
		return 1;
	for (i = 0; i < npar; i++) {
		pid_t	 parent = getpid();

		if (fork() == 0) {
			struct timespec a, b;
			long	 n = 0;

			if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent)
				_exit(1);
			close(pfd[0]);
			clock_gettime(CLOCK_MONOTONIC, &a);
			do {
				pid_t	 p = fork();

				if (p == 0) {
					execl(argv[3], argv[3], (char *)NULL);
					_exit(127);
				}
				if (p > 0)
					waitpid(p, NULL, 0);
				n++;
				clock_gettime(CLOCK_MONOTONIC, &b);
			} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
			(void)!write(pfd[1], &n, sizeof(n));
			_exit(0);
		}
	}
	close(pfd[1]);
	for (i = 0; i < npar; i++) {
		long	 n;

		if (read(pfd[0], &n, sizeof(n)) == sizeof(n))
			total += n;
		wait(NULL);
	}
	printf("%ld processes, %.0f/s\n", total, total / secs);
	return 0;
}
