/*
 * ctlclient.c - a raw client for testing the control socket with input
 * perfmapctl would never send.
 *
 *   ctlclient SOCK raw          send stdin as is; print replies (NUL -> newline)
 *                               until the daemon closes or 1 s of silence
 *   ctlclient SOCK many N       hold N connections at once, then ping on each;
 *                               prints "pong P busy B failed F"
 *   ctlclient SOCK drip SECS    send a call one byte a second, never finishing;
 *                               prints "closed after S s" when the daemon hangs up
 *   ctlclient SOCK abandon N    N times: ask for status and close without reading
 *   ctlclient SOCK hangup       send stdin as is and close at once, reading nothing
 */
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

static const char *sockpath;

static int
dial(void)
{
	struct sockaddr_un sun;
	int	 fd = socket(AF_UNIX, SOCK_STREAM, 0);

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sockpath);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* The messages in BUF[0..LEN) without the text SKIP. */
static size_t
messages(const char *buf, size_t len, const char *skip)
{
	const char *p = buf, *end = buf + len, *z;
	size_t	 n = 0;

	while (p < end && (z = memchr(p, '\0', (size_t)(end - p))) != NULL) {
		if (strstr(p, skip) == NULL)
			n++;
		p = z + 1;
	}
	return n;
}

/*
 * Read until EOF, TIMEOUT ms of silence, or the replies to CALLS calls
 * (0: no such end); returns bytes read into BUF.
 */
static ssize_t
slurp_until(int fd, char *buf, size_t cap, int timeout, size_t calls)
{
	size_t	 len = 0;

	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t	 n;

		if (poll(&p, 1, timeout) <= 0)
			break;
		if ((n = read(fd, buf + len, cap - len - 1)) <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		if (len + 1 >= cap ||
		    (calls != 0 && messages(buf, len, "\"continues\":true") >= calls))
			break;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

static int
do_raw(void)
{
	static char in[1 << 22], out[1 << 20];
	size_t	 len = 0;
	ssize_t	 n;
	int	 fd = dial();

	if (fd < 0) {
		perror("connect");
		return 1;
	}
	while ((n = read(0, in + len, sizeof(in) - len)) > 0)
		len += (size_t)n;
	if (write(fd, in, len) != (ssize_t)len)
		perror("write");
	/*
	 * A final reply to each call (a oneway call has none), or EOF, or a
	 * second of silence (a call never ended).
	 */
	n = slurp_until(fd, out, sizeof(out), 1000, messages(in, len, "\"oneway\":true"));
	for (ssize_t i = 0; i < n; i++)
		putchar(out[i] == '\0' ? '\n' : out[i]);
	/* did the daemon close?  (then the socket reads EOF at once) */
	{
		struct pollfd p = { fd, POLLIN, 0 };

		printf("%s\n", poll(&p, 1, 200) > 0 && read(fd, out, 1) == 0 ?
		    "[closed]" : "[open]");
	}
	close(fd);
	return 0;
}

static int
do_many(int n)
{
	static const char ping[] = "{\"method\":\"io.perfmap.Ping\"}";
	int	*fds = calloc((size_t)n, sizeof(int)), pong = 0, busy = 0, failed = 0;
	char	 buf[4096];

	for (int i = 0; i < n; i++)
		fds[i] = dial();
	for (int i = 0; i < n; i++) {
		if (fds[i] < 0) {
			failed++;
			continue;
		}
		/* A refused connection has its Busy error waiting: read it anyway. */
		(void)!write(fds[i], ping, sizeof(ping));
		slurp_until(fds[i], buf, sizeof(buf), 2000, 1);
		if (strstr(buf, "pong"))
			pong++;
		else if (strstr(buf, "Busy"))
			busy++;
		else
			failed++;
	}
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	printf("pong %d busy %d failed %d\n", pong, busy, failed);
	free(fds);
	return 0;
}

static int
do_drip(int secs)
{
	static const char msg[] = "{\"method\":\"io.perfmap.Ping\",\"parameters\":{}}";
	time_t	 start = time(NULL);
	int	 fd = dial();

	if (fd < 0)
		return 1;
	for (size_t i = 0; i < sizeof(msg) - 1 && time(NULL) - start < secs; i++) {
		char	 c;
		struct pollfd p = { fd, POLLIN, 0 };

		if (write(fd, &msg[i], 1) != 1 || (poll(&p, 1, 1000) > 0 && read(fd, &c, 1) <= 0)) {
			printf("closed after %ld s\n", (long)(time(NULL) - start));
			close(fd);
			return 0;
		}
	}
	printf("still open after %ld s\n", (long)(time(NULL) - start));
	close(fd);
	return 0;
}

static int
do_abandon(int n)
{
	static const char st[] = "{\"method\":\"io.perfmap.Status\",\"more\":true}";

	for (int i = 0; i < n; i++) {
		int	 fd = dial();

		if (fd >= 0) {
			(void)!write(fd, st, sizeof(st));
			close(fd);
		}
	}
	printf("abandoned %d\n", n);
	return 0;
}

static int
do_hangup(void)
{
	char	 buf[4096];
	ssize_t	 n;
	int	 fd = dial();

	if (fd < 0) {
		perror("connect");
		return 1;
	}
	while ((n = read(0, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n) {
			perror("write");
			break;
		}
	close(fd);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: ctlclient SOCK raw|many N|drip SECS|abandon N|hangup\n");
		return 2;
	}
	sockpath = argv[1];
	signal(SIGPIPE, SIG_IGN);	/* a refused connection is a result, not a crash */
	if (strcmp(argv[2], "raw") == 0)
		return do_raw();
	if (strcmp(argv[2], "many") == 0 && argc > 3)
		return do_many(atoi(argv[3]));
	if (strcmp(argv[2], "drip") == 0 && argc > 3)
		return do_drip(atoi(argv[3]));
	if (strcmp(argv[2], "abandon") == 0 && argc > 3)
		return do_abandon(atoi(argv[3]));
	if (strcmp(argv[2], "hangup") == 0)
		return do_hangup();
	return 2;
}
