/*
 * notify-listen.c - stand in for systemd's notification socket: bind a
 * datagram unix socket at PATH and print every message received, one per
 * line (newlines inside a message become " | "), until SECS pass.
 * Usage: notify-listen PATH SECS
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

int
main(int argc, char **argv)
{
	struct sockaddr_un sun;
	time_t	 end;
	int	 fd;

	if (argc != 3) {
		fprintf(stderr, "usage: notify-listen PATH SECS\n");
		return 2;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", argv[1]);
	unlink(argv[1]);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		perror(argv[1]);
		return 1;
	}
	end = time(NULL) + atoi(argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (time(NULL) < end) {
		struct pollfd p = { fd, POLLIN, 0 };
		char	 buf[4096];
		ssize_t	 n;

		if (poll(&p, 1, 200) <= 0)
			continue;
		if ((n = recv(fd, buf, sizeof(buf) - 1, 0)) <= 0)
			continue;
		buf[n] = '\0';
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\n')
				buf[i] = '|';
		printf("%s\n", buf);
	}
	return 0;
}
