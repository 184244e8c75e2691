/*
 * pinger.c - root's ping under attack: a new connection to the control
 * socket every INTERVAL ms, one io.perfmap.Ping on it, the time from
 * connect() to the reply measured, until SIGTERM or SECONDS have passed.
 * Then one line:
 *
 *	pings N p50_ms X p99_ms Y max_ms Z own_wait_max_ms W1
 *	    loop_wait_max_ms W2 served_p99_ms S over_100ms K failed F
 *
 * A ping that gets no reply within 2 s, or an error, counts as failed.
 *
 *	pinger SOCK INTERVAL_MS SECONDS [DAEMON_PID]
 *
 * The pinger is one process among the attackers on few CPUs: the time it
 * waits for a CPU itself (its runqueue wait, /proc/thread-self/schedstat)
 * is the scheduler's, not the daemon's, and is taken out of a ping's
 * latency before it is judged against 100 ms (over_100ms); own_wait_max_ms
 * is the most it waited in one ping.  With DAEMON_PID, the daemon's loop
 * thread's runqueue wait during each ping is measured too
 * (loop_wait_max_ms), and each ping over 50 ms is described on stderr:
 * its latency, the pinger's wait and the loop's.  served_p99_ms is the p99
 * of each ping's latency less both waits in it: the time the daemon took
 * to serve it while it had a CPU (without DAEMON_PID, less the pinger's
 * wait alone).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#define PINGER_MAX	100000

static volatile sig_atomic_t	 stop;

static void
on_term(int sig)
{
	stop = 1;
}

/* Time the thread at PATH has waited on a runqueue, in ms (0 if unknown). */
static double
runq_wait_ms(const char *path)
{
	unsigned long long run, wait;
	FILE	*f = fopen(path, "re");
	int	 n;

	if (f == NULL)
		return 0;
	n = fscanf(f, "%llu %llu", &run, &wait);
	fclose(f);
	return n == 2 ? wait / 1e6 : 0;
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One ping; its latency in ms, or -1. */
static double
ping(const char *path)
{
	static const char msg[] = "{\"method\":\"io.perfmap.Ping\"}";
	struct sockaddr_un sun;
	char	 buf[4096];
	size_t	 len = 0;
	double	 t0 = now_ms(), r = -1;
	int	 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    write(fd, msg, sizeof(msg)) != (ssize_t)sizeof(msg))
		goto out;
	while (len < sizeof(buf)) {
		struct pollfd p = { fd, POLLIN, 0 };
		int	 left = 2000 - (int)(now_ms() - t0);
		ssize_t	 n;

		if (left <= 0 || poll(&p, 1, left) <= 0)
			goto out;
		if ((n = read(fd, buf + len, sizeof(buf) - len)) <= 0)
			goto out;
		len += (size_t)n;
		if (memchr(buf, '\0', len) != NULL)
			break;
	}
	if (memmem(buf, len, "\"pong\"", 6) != NULL)
		r = now_ms() - t0;
out:
	close(fd);
	return r;
}

static int
cmp(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char *argv[])
{
	static double	 lat[PINGER_MAX], served[PINGER_MAX];
	size_t		 n = 0, failed = 0, over = 0;
	double		 end, t, interval, own, loop, own_max = 0, loop_max = 0;
	char		 loopstat[64] = "";

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: pinger SOCK INTERVAL_MS SECONDS [DAEMON_PID]\n");
		return 2;
	}
	if (argc == 5)
		snprintf(loopstat, sizeof(loopstat), "/proc/%s/task/%s/schedstat", argv[4], argv[4]);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	signal(SIGPIPE, SIG_IGN);
	interval = atof(argv[2]);
	end = now_ms() + atof(argv[3]) * 1e3;
	while (!stop && now_ms() < end && n < PINGER_MAX) {
		t = now_ms();
		own = runq_wait_ms("/proc/thread-self/schedstat");
		loop = loopstat[0] != '\0' ? runq_wait_ms(loopstat) : 0;
		if ((lat[n] = ping(argv[1])) < 0) {
			if (stop)
				break;	/* interrupted by the stop, not a failed ping */
			failed++;
		} else {
			own = runq_wait_ms("/proc/thread-self/schedstat") - own;
			loop = loopstat[0] != '\0' ? runq_wait_ms(loopstat) - loop : 0;
			if (own > own_max)
				own_max = own;
			if (loop > loop_max)
				loop_max = loop;
			served[n] = lat[n] - own - loop;
			if (lat[n] - own > 100)
				over++;
			if (lat[n] > 50)
				fprintf(stderr, "ping %.2f ms at %.0f ms: the pinger waited %.2f ms "
				    "for a CPU, the daemon's loop %.2f ms\n", lat[n], t, own, loop);
			n++;
		}
		t = interval - (now_ms() - t);
		if (t > 0 && !stop)
			usleep((useconds_t)(t * 1e3));
	}
	qsort(lat, n, sizeof(lat[0]), cmp);
	qsort(served, n, sizeof(served[0]), cmp);
	printf("pings %zu p50_ms %.2f p99_ms %.2f max_ms %.2f own_wait_max_ms %.2f "
	    "loop_wait_max_ms %.2f served_p99_ms %.2f over_100ms %zu failed %zu\n",
	    n + failed, n ? lat[n / 2] : -1.0, n ? lat[n - 1 - n / 100] : -1.0,
	    n ? lat[n - 1] : -1.0, own_max, loop_max, n ? served[n - 1 - n / 100] : -1.0,
	    over, failed);
	return 0;
}
