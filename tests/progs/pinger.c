/*
 * pinger.c - root's ping under attack: a new connection to the control
 * socket every INTERVAL ms, one io.perfmap.Ping on it, the time from
 * connect() to the reply measured, until SIGTERM or SECONDS have passed.
 * Then one line:
 *
 *	pings N p50_ms X p99_ms Y max_ms Z over_100ms K failed F
 *
 * A ping that gets no reply within 2 s, or an error, counts as failed.
 *
 *	pinger SOCK INTERVAL_MS SECONDS
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
	static double	 lat[PINGER_MAX];
	size_t		 n = 0, failed = 0, over = 0;
	double		 end, t, interval;

	if (argc != 4) {
		fprintf(stderr, "usage: pinger SOCK INTERVAL_MS SECONDS\n");
		return 2;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	signal(SIGPIPE, SIG_IGN);
	interval = atof(argv[2]);
	end = now_ms() + atof(argv[3]) * 1e3;
	while (!stop && now_ms() < end && n < PINGER_MAX) {
		t = now_ms();
		if ((lat[n] = ping(argv[1])) < 0) {
			if (stop)
				break;	/* interrupted by the stop, not a failed ping */
			failed++;
		}
		else {
			if (lat[n] > 100)
				over++;
			n++;
		}
		t = interval - (now_ms() - t);
		if (t > 0 && !stop)
			usleep((useconds_t)(t * 1e3));
	}
	qsort(lat, n, sizeof(lat[0]), cmp);
	printf("pings %zu p50_ms %.2f p99_ms %.2f max_ms %.2f over_100ms %zu failed %zu\n",
	    n + failed, n ? lat[n / 2] : -1.0, n ? lat[n - 1 - n / 100] : -1.0,
	    n ? lat[n - 1] : -1.0, over, failed);
	return 0;
}
