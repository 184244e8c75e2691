/*
 * flood.c - control clients that misbehave, for t_hostile_control.sh.
 *
 *	flood SOCK pipeline SECONDS PATH   one connection: calls History(PATH)
 *	                                   and Segments in batches of 32
 *	                                   without waiting, reading as they come
 *	flood SOCK noread SECONDS N        N connections that send Status calls
 *	                                   and never read a reply (reconnecting
 *	                                   when dropped)
 *	flood SOCK idle SECONDS N          N connections held open, silent
 *	flood SOCK leave SECONDS PATH      connects, calls History(PATH) and
 *	                                   leaves 2 ms later without the reply,
 *	                                   in a loop
 *	flood SOCK trickle SECONDS N       N connections that each send one long
 *	                                   message a byte per write, never ending
 *	                                   it (a new connection when one is
 *	                                   closed)
 *	flood SOCK halves SECONDS N        N Status calls, each sent in two
 *	                                   halves 50 ms apart, each reply awaited
 *	                                   (SECONDS at most): an honest slow
 *	                                   client
 *	flood SOCK burst SECONDS N         N connections that send Status calls
 *	                                   as fast as the socket takes them (a
 *	                                   few thousand per write) and read the
 *	                                   replies
 *
 * Prints what happened: calls sent, replies read, connections refused or
 * dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#define FLOOD_MAX	64

static const char *sockpath;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
dial(int nonblock)
{
	struct sockaddr_un sun;
	int	 fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sockpath);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (nonblock)
		fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

static void
pipeline(double end, const char *path)
{
	char	 call[2][512], buf[65536];
	size_t	 len[2];
	long	 sent = 0, nuls = 0, i;
	ssize_t	 n;
	int	 fd;

	len[0] = (size_t)snprintf(call[0], sizeof(call[0]),
	    "{\"method\":\"io.perfmap.History\",\"parameters\":{\"path\":\"%s\"}}", path) + 1;
	len[1] = (size_t)snprintf(call[1], sizeof(call[1]),
	    "{\"method\":\"io.perfmap.Segments\",\"parameters\":{\"all\":true}}") + 1;
	if ((fd = dial(0)) < 0) {
		printf("pipeline: refused\n");
		return;
	}
	while (now() < end) {
		for (i = 0; i < 32; i++, sent++)
			if (write(fd, call[i % 2], len[i % 2]) != (ssize_t)len[i % 2])
				goto out;
		/* read what has come, without waiting for all of it */
		while (nuls < sent - 64 || (nuls < sent && now() < end)) {
			struct pollfd p = { fd, POLLIN, 0 };

			if (poll(&p, 1, 100) <= 0)
				break;
			if ((n = read(fd, buf, sizeof(buf))) <= 0)
				goto out;
			for (i = 0; i < n; i++)
				nuls += buf[i] == '\0';
		}
	}
out:
	printf("pipeline: %ld calls sent, %ld replies read\n", sent, nuls);
	close(fd);
}

static void
noread(double end, int n)
{
	static const char call[] = "{\"method\":\"io.perfmap.Status\"}";
	int	 fds[FLOOD_MAX], i;
	long	 sent = 0, dropped = 0, refused = 0;

	for (i = 0; i < n; i++)
		fds[i] = -1;
	while (now() < end) {
		for (i = 0; i < n; i++) {
			if (fds[i] < 0 && (fds[i] = dial(1)) < 0) {
				refused++;
				continue;
			}
			if (write(fds[i], call, sizeof(call)) == (ssize_t)sizeof(call))
				sent++;
			else if (errno != EAGAIN) {
				close(fds[i]);
				fds[i] = -1;
				dropped++;
			}
		}
		usleep(2000);
	}
	printf("noread: %ld calls sent, %ld connections dropped, %ld refused\n", sent,
	    dropped, refused);
}

/*
 * One History of PATH on each of 16 connections, never read: each reply
 * is as large as a query's may be (4 MiB).  How many the daemon dropped.
 */
static void
bigread(double end, const char *path)
{
	char	 call[PATH_MAX + 128];
	int	 fds[16], i, len, open = 0, gone = 0;

	len = snprintf(call, sizeof(call), "{\"method\":\"io.perfmap.History\","
	    "\"parameters\":{\"path\":\"%s\"}}", path) + 1;
	for (i = 0; i < 16; i++) {
		if ((fds[i] = dial(0)) < 0 || write(fds[i], call, (size_t)len) != len) {
			printf("bigread: connection %d failed\n", i);
			return;
		}
		open++;
		usleep(150000);		/* the user's queue: one query at a time */
	}
	while (now() < end)
		usleep(100000);
	/* a connection the daemon dropped reads to its end, then EOF */
	for (i = 0; i < 16; i++) {
		char	 buf[65536];
		ssize_t	 r;

		fcntl(fds[i], F_SETFL, O_NONBLOCK);
		while ((r = read(fds[i], buf, sizeof(buf))) > 0)
			;
		gone += r == 0;
	}
	printf("bigread: %d connections, %d dropped by the daemon\n", open, gone);
}

static void
idle(double end, int n)
{
	int	 fds[FLOOD_MAX], i, held = 0;

	for (i = 0; i < n; i++)
		if ((fds[i] = dial(0)) >= 0)
			held++;
	printf("idle: %d connections held\n", held);
	fflush(stdout);
	while (now() < end)
		usleep(100000);
}

static void
leave(double end, const char *path)
{
	char	 call[512];
	size_t	 len;
	long	 sent = 0, refused = 0;
	int	 fd;

	len = (size_t)snprintf(call, sizeof(call),
	    "{\"method\":\"io.perfmap.History\",\"parameters\":{\"path\":\"%s\"}}", path) + 1;
	while (now() < end) {
		if ((fd = dial(0)) < 0) {
			refused++;
			continue;
		}
		if (write(fd, call, len) == (ssize_t)len)
			sent++;
		usleep(2000);	/* long enough for the daemon to take the call */
		close(fd);
	}
	printf("leave: %ld calls sent, %ld connections refused\n", sent, refused);
}

static void
burst(double end, int n)
{
	static const char call[] = "{\"method\":\"io.perfmap.Status\"}";
	static char calls[65536 / sizeof(call) * sizeof(call)], buf[65536];
	struct pollfd p[FLOOD_MAX];
	size_t	 off[FLOOD_MAX];
	long	 sent = 0, nuls = 0, dropped = 0;
	ssize_t	 k;
	int	 i, j, live = 0;

	for (i = 0; i < (int)(sizeof(calls) / sizeof(call)); i++)
		memcpy(calls + i * sizeof(call), call, sizeof(call));
	for (i = 0; i < n; i++) {
		p[i] = (struct pollfd){ dial(1), POLLIN | POLLOUT, 0 };
		off[i] = 0;
		live += p[i].fd >= 0;
	}
	while (now() < end && live > 0) {
		if (poll(p, (nfds_t)n, 100) < 0)
			break;
		for (i = 0; i < n; i++) {
			if (p[i].fd < 0)
				continue;
			/* a stream of whole calls: a short write goes on where it stopped */
			if ((k = write(p[i].fd, calls + off[i], sizeof(calls) - off[i])) > 0) {
				sent += (long)((off[i] + (size_t)k) / sizeof(call) - off[i] / sizeof(call));
				off[i] = (off[i] + (size_t)k) % sizeof(calls);
			}
			while ((k = read(p[i].fd, buf, sizeof(buf))) > 0)
				for (j = 0; j < k; j++)
					nuls += buf[j] == '\0';
			if (k == 0 || (k < 0 && errno != EAGAIN)) {
				close(p[i].fd);
				p[i].fd = -1;
				live--;
				dropped++;
			}
		}
	}
	printf("burst: %ld calls sent, %ld replies read, %ld connections dropped\n", sent, nuls,
	    dropped);
}

static void
trickle(double end, int n)
{
	static const char head[] = "{\"method\":\"io.perfmap.Status\",\"x\":\"";
	int	 fds[FLOOD_MAX], i;
	long	 bytes = 0, closed = 0;

	for (i = 0; i < n; i++)
		fds[i] = -1;
	while (now() < end) {
		for (i = 0; i < n; i++) {
			if (fds[i] < 0) {
				if ((fds[i] = dial(1)) < 0)
					continue;
				if (write(fds[i], head, sizeof(head) - 1) < 0) {
					close(fds[i]);
					fds[i] = -1;
					continue;
				}
			}
			if (write(fds[i], "a", 1) == 1)
				bytes++;
			else if (errno != EAGAIN) {
				close(fds[i]);
				fds[i] = -1;
				closed++;
			}
		}
	}
	printf("trickle: %ld bytes sent a byte at a time, %ld connections closed\n", bytes,
	    closed);
}

static void
halves(double end, int n)
{
	static const char call[] = "{\"method\":\"io.perfmap.Status\"}";
	char	 buf[65536];
	double	 worst = 0, t;
	int	 i, answered = 0, fd;
	ssize_t	 k;

	for (i = 0; i < n && now() < end; i++) {
		if ((fd = dial(0)) < 0)
			break;
		t = now();
		if (write(fd, call, 10) != 10)
			goto next;
		usleep(50000);
		if (write(fd, call + 10, sizeof(call) - 10) != (ssize_t)(sizeof(call) - 10))
			goto next;
		while ((k = read(fd, buf, sizeof(buf))) > 0)
			if (memchr(buf, '\0', (size_t)k) != NULL) {
				answered++;
				if (now() - t > worst)
					worst = now() - t;
				break;
			}
next:
		close(fd);
	}
	printf("halves: %d of %d answered, the slowest in %.0f ms\n", answered, n, worst * 1000);
}

int
main(int argc, char *argv[])
{
	double	 end;
	int	 n;

	if (argc != 5) {
		fprintf(stderr, "usage: flood SOCK pipeline|noread|idle|leave|burst|trickle|halves|"
		    "bigread SECONDS PATH|N\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	sockpath = argv[1];
	end = now() + atof(argv[3]);
	n = atoi(argv[4]);
	if (n > FLOOD_MAX)
		n = FLOOD_MAX;
	if (strcmp(argv[2], "pipeline") == 0)
		pipeline(end, argv[4]);
	else if (strcmp(argv[2], "noread") == 0)
		noread(end, n);
	else if (strcmp(argv[2], "idle") == 0)
		idle(end, n);
	else if (strcmp(argv[2], "bigread") == 0)
		bigread(end, argv[4]);
	else if (strcmp(argv[2], "leave") == 0)
		leave(end, argv[4]);
	else if (strcmp(argv[2], "burst") == 0)
		burst(end, n);
	else if (strcmp(argv[2], "trickle") == 0)
		trickle(end, n);
	else if (strcmp(argv[2], "halves") == 0)
		halves(end, n);
	else
		return 2;
	return 0;
}
