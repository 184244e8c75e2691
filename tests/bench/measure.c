/*
 * measure.c - run a collector and report what it cost: user and system
 * CPU seconds and peak RSS (wait4 rusage, so the exit path is counted),
 * and its RSS and CPU so far every second (for the slope, and to see
 * when the CPU was spent).  SIGINT/SIGTERM received are
 * forwarded to the child, so `kill -INT` stops the collector cleanly.
 * Usage: measure OUTFILE COMMAND [ARGS...]
 * OUTFILE gets: "cpu_user S", "cpu_sys S", "maxrss_kb N", "rss T KB" and
 * "cpu T S" lines (S: CPU seconds of the live threads until T).
 */
#include <dirent.h>
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

/*
 * CPU seconds so far: the threads' run time from
 * /proc/PID/task/TID/schedstat (nanoseconds; /proc/PID/stat counts in
 * clock ticks, too coarse for a collector that runs a few ms a second).
 * A thread that ended keeps its last reading in the sum (what it ran after
 * that, within a second, is missed; the final figure comes from wait4).
 * -1 if the process is gone.
 */
#define MAXTHREADS	256
static struct {
	long			 tid;
	unsigned long long	 ns;
} seen[MAXTHREADS];
static int nseen;

static double
cpu_s(pid_t pid)
{
	char	 path[300];
	unsigned long long ns, sum = 0;
	struct dirent *de;
	DIR	*d;
	FILE	*f;
	int	 i;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		long	 tid = strtol(de->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid, de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fscanf(f, "%llu", &ns) == 1) {
			for (i = 0; i < nseen && seen[i].tid != tid; i++)
				;
			if (i == nseen && nseen < MAXTHREADS)
				seen[nseen++].tid = tid;
			if (i < MAXTHREADS)
				seen[i].ns = ns;
		}
		fclose(f);
	}
	closedir(d);
	for (i = 0; i < nseen; i++)
		sum += seen[i].ns;
	return (double)sum / 1e9;
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
			fprintf(out, "cpu %d %.6f\n", t, cpu);
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
