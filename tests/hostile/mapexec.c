/*
 * mapexec.c - map files the way a loader would (PROT_READ|PROT_EXEC of
 * their first page, so the kernel sends an MMAP2 record naming them) and
 * hold them for SECONDS: a user's way to make the daemon look at a file.
 *
 *	mapexec SECONDS FILE...
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

int
main(int argc, char *argv[])
{
	int	 i, fd;

	if (argc < 3) {
		fprintf(stderr, "usage: mapexec SECONDS FILE...\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		if ((fd = open(argv[i], O_RDONLY)) == -1) {
			perror(argv[i]);
			continue;
		}
		if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED)
			perror(argv[i]);
		close(fd);
	}
	usleep((useconds_t)(atof(argv[1]) * 1e6));
	return 0;
}
