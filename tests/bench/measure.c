/*
 * measure.c - run a collector and report what it cost: user and system
 * CPU seconds and peak RSS (wait4 rusage, so the exit path is counted),
 * and its RSS and CPU so far every second (for the slope, and to see
 * when the CPU was spent).  SIGINT/SIGTERM received are
 * forwarded to the child, so `kill -INT` stops the collector cleanly.
 * Usage: measure OUTFILE COMMAND [ARGS...]
 * OUTFILE gets: "cpu_user S", "cpu_sys S", "maxrss_kb N", "rss T KB" and
 * "cpu T S" lines (S: user+sys seconds of the whole process until T).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

static pid_t child;

static void
forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static long
rss_kb(pid_t pid)
{
	char	 path[64], line[256];
	long	 kb = -1;
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* user+sys seconds so far, from /proc/PID/stat (clock ticks); -1 if gone */
static double
cpu_s(pid_t pid)
{
	char	 path[64], buf[1024], *p;
	unsigned long ut, st;
	ssize_t	 n;
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = (ssize_t)fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* after "(comm)": state, then fields 4..13, then utime stime (14, 15) */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

int
main(int argc, char **argv)
{
	struct rusage ru;
	struct sigaction sa;
	FILE	*out;
	int	 status, t = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: measure OUTFILE COMMAND [ARGS...]\n");
		return 2;
	}
	if ((out = fopen(argv[1], "w")) == NULL)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if ((child = fork()) == 0) {
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	for (;;) {
		pid_t	 r = wait4(child, &status, WNOHANG, &ru);
		long	 kb;
		double	 cpu;

		if (r == child)
			break;
		if ((kb = rss_kb(child)) > 0)
			fprintf(out, "rss %d %ld\n", t, kb);
		if ((cpu = cpu_s(child)) >= 0)
			fprintf(out, "cpu %d %.2f\n", t, cpu);
		sleep(1);
		t++;
	}
	fprintf(out, "cpu_user %.3f\ncpu_sys %.3f\nmaxrss_kb %ld\nexit %d\n",
	    ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	    ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss,
	    WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	fclose(out);
	return 0;
}
