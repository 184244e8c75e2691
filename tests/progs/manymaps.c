/*
 * manymaps.c - a big host in miniature: NPROCS sleeping processes, each
 * mapping NFILES files executable (one map per file), so that the model
 * and every segment's start state hold NPROCS x NFILES maps.
 *
 *	manymaps DIR NPROCS NFILES [ELF]
 *
 * The files are made in DIR (copies of ELF if given, so that they have a
 * build-id; else one page of zeros each), with long names so that the
 * start state is big.  Prints "ready N" once every child has mapped its
 * files, then waits: SIGTERM or SIGINT kills every child (they also die with it: PR_SET_PDEATHSIG) and removes the files.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define NAME_FMT	"%s/manymaps-a-rather-long-file-name-to-make-the-start-state-big-%05d.so"

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int
make_file(const char *path, const char *elf)
{
	char	 buf[65536];
	ssize_t	 n;
	int	 in = -1, out, rc = 0;

	if ((out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755)) == -1)
		return -1;
	if (elf == NULL) {
		memset(buf, 0, 4096);
		rc = write(out, buf, 4096) == 4096 ? 0 : -1;
	} else if ((in = open(elf, O_RDONLY | O_CLOEXEC)) == -1)
		rc = -1;
	else {
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n) {
				rc = -1;
				break;
			}
		if (n < 0)
			rc = -1;
		close(in);
	}
	close(out);
	return rc;
}

static void
child(const char *dir, int nfiles, int ready)
{
	char	 path[4096];
	int	 i, fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
	for (i = 0; i < nfiles; i++) {
		snprintf(path, sizeof(path), NAME_FMT, dir, i);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
		    mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED)
			_exit(1);
		close(fd);
	}
	if (write(ready, "x", 1) != 1)
		_exit(1);
	close(ready);
	for (;;)
		pause();
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t block, old;
	char	 path[4096], c;
	pid_t	*pids;
	int	 nprocs, nfiles, i, n = 0, p[2], rc = 0;

	if (argc < 4 || (nprocs = atoi(argv[2])) <= 0 || (nfiles = atoi(argv[3])) <= 0) {
		fprintf(stderr, "usage: manymaps DIR NPROCS NFILES [ELF]\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);
	for (i = 0; i < nfiles; i++) {
		snprintf(path, sizeof(path), NAME_FMT, argv[1], i);
		if (make_file(path, argc > 4 ? argv[4] : NULL) == -1) {
			perror(path);
			rc = 1;
			goto out;
		}
	}
	if ((pids = calloc((size_t)nprocs, sizeof(*pids))) == NULL || pipe(p) == -1) {
		perror("manymaps");
		rc = 1;
		goto out;
	}
	for (n = 0; n < nprocs && !stop; n++) {
		if ((pids[n] = fork()) == -1) {
			perror("fork");
			rc = 1;
			break;
		}
		if (pids[n] == 0) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			close(p[0]);
			child(argv[1], nfiles, p[1]);
		}
	}
	close(p[1]);
	for (i = 0; i < n && rc == 0; i++)
		if (read(p[0], &c, 1) != 1) {
			fprintf(stderr, "manymaps: a child could not map its files\n");
			rc = 1;
		}
	if (rc == 0) {
		printf("ready %d\n", n);
		fflush(stdout);
		while (!stop)
			sigsuspend(&old);
	}
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	while (wait(NULL) > 0 || errno == EINTR)
		;
out:
	for (i = 0; i < nfiles; i++) {
		snprintf(path, sizeof(path), NAME_FMT, argv[1], i);
		unlink(path);
	}
	return rc;
}
