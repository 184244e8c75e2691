/*
 * jitidle.c - many idle processes with JIT code: N children, each with a
 * page of anonymous executable memory of its own, asleep until killed.
 * What a user can run to take every watch the daemon has for JIT
 * processes (t_hostile_jit).  Writes "ready" to READY once every child has
 * mapped its page.
 * Usage: jitidle N READY
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	int	 fds[2], i, n = argc > 1 ? atoi(argv[1]) : 1;
	char	 c;
	FILE	*f;

	if (argc < 3 || pipe(fds) == -1)
		return 2;
	for (i = 0; i < n; i++) {
		switch (fork()) {
		case -1:
			perror("fork");
			return 1;
		case 0:
			close(fds[0]);
			if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0) == MAP_FAILED)
				_exit(1);
			if (write(fds[1], "x", 1) != 1)
				_exit(1);
			close(fds[1]);
			for (;;)
				pause();
		}
	}
	close(fds[1]);
	for (i = 0; i < n; i++)
		if (read(fds[0], &c, 1) != 1)
			return 1;
	if ((f = fopen(argv[2], "w")) == NULL)
		return 1;
	fputs("ready\n", f);
	fclose(f);
	for (;;)
		pause();
}
