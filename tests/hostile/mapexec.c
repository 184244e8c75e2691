/*
 * mapexec.c - map files the way a loader would (PROT_READ|PROT_EXEC of
 * their first page, so the kernel sends an MMAP2 record naming them) and
 * hold them for SECONDS: a user's way to make the daemon look at a file.
 *
 *	mapexec SECONDS FILE...
 *	mapexec -d DELAY SECONDS FILE...   the files opened first, mapped
 *	                                   DELAY seconds later (what is at
 *	                                   their paths by then is another
 *	                                   matter: a mount over them)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

int
main(int argc, char *argv[])
{
	double	 delay = -1;
	int	 i, fd, fds[64], n = 0;

	if (argc > 3 && strcmp(argv[1], "-d") == 0) {
		delay = atof(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc < 3 || argc - 2 > 64) {
		fprintf(stderr, "usage: mapexec [-d DELAY] SECONDS FILE...\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		if ((fd = open(argv[i], O_RDONLY)) == -1)
			perror(argv[i]);
		else
			fds[n++] = fd;
	}
	if (delay > 0)
		usleep((useconds_t)(delay * 1e6));
	for (i = 0; i < n; i++) {
		if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fds[i], 0) == MAP_FAILED)
			perror("mmap");
		close(fds[i]);
	}
	usleep((useconds_t)(atof(argv[1]) * 1e6));
	return 0;
}
