/*
 * mapmany.c - a user's burst of new files for the daemon to read: N small
 * files made in DIR, then, once the file GO exists, each opened and mapped
 * as a loader would (PROT_READ|PROT_EXEC of its first page: an MMAP2
 * record naming a file new to the daemon) as fast as the process can, DONE
 * made three quarters through, and the mappings held for SECONDS.  With
 * -w: wait for DONE, then map FILE the same way and hold it for SECONDS (a
 * mapping made late in the burst: no exec, whose loader would map it a
 * few milliseconds later, after the burst).
 *
 *	mapmany DIR N GO DONE SECONDS
 *	mapmany -w DONE FILE SECONDS
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

static void
wait_for(const char *path)
{
	while (access(path, F_OK) != 0)
		usleep(200);
}

static void
map_one(const char *path)
{
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
	    mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
		perror(path);
		exit(1);
	}
	close(fd);
}

static void
make(const char *path)
{
	int	 fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) == -1) {
		perror(path);
		exit(1);
	}
	close(fd);
}

int
main(int argc, char *argv[])
{
	char	 path[4096], page[4096];
	int	 fd, i, n;

	if (argc == 5 && strcmp(argv[1], "-w") == 0) {
		wait_for(argv[2]);
		map_one(argv[3]);
		usleep((useconds_t)(atof(argv[4]) * 1e6));
		return 0;
	}
	if (argc != 6 || (n = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: mapmany DIR N GO DONE SECONDS | mapmany -w DONE FILE SECONDS\n");
		return 2;
	}
	memset(page, 0x5a, sizeof(page));
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%d", argv[1], i);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) == -1 ||
		    write(fd, page, sizeof(page)) != (ssize_t)sizeof(page)) {
			perror(path);
			return 1;
		}
		close(fd);
	}
	wait_for(argv[3]);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%d", argv[1], i);
		map_one(path);
		if (i == n / 4 * 3)
			make(argv[4]);
	}
	usleep((useconds_t)(atof(argv[5]) * 1e6));
	return 0;
}
