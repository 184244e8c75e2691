/*
 * procfs.c - what the kernel's /proc files say of a process (procfs.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "procfs.h"
#include "walltime.h"

uint64_t
procfs_stat_start(const char *stat)
{
	const char *p;
	int	 field;

	if ((p = strrchr(stat, ')')) == NULL)
		return 0;
	for (field = 2; field < 22 && p != NULL; field++)
		p = strchr(p + 1, ' ');
	return p != NULL ? strtoull(p + 1, NULL, 10) : 0;
}

int
procfs_read(int dirfd, const char *path, char *buf, size_t len)
{
	ssize_t	 n;
	int	 fd;

	if (len == 0 || (fd = openat(dirfd >= 0 ? dirfd : AT_FDCWD, path,
	    O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

uint64_t
procfs_start(int dirfd, uint32_t pid)
{
	char	 buf[1024], path[32];

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (procfs_read(dirfd, dirfd >= 0 ? "stat" : path, buf, sizeof(buf)) < 0)
		return 0;
	return procfs_stat_start(buf);
}

uint64_t
procfs_start_mono(uint64_t ticks)
{
	struct timespec b, m;
	long	 hz = sysconf(_SC_CLK_TCK);
	uint64_t boot, asleep;

	if (hz <= 0)
		hz = 100;
	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_BOOTTIME, &b);
	/* CLOCK_BOOTTIME runs on while suspended, CLOCK_MONOTONIC does not */
	asleep = ts_ns(&b) > ts_ns(&m) ? (uint64_t)(ts_ns(&b) - ts_ns(&m)) : 0;
	boot = ticks / (uint64_t)hz * 1000000000ULL + ticks % (uint64_t)hz * (1000000000ULL / (uint64_t)hz);
	return boot > asleep ? boot - asleep : 0;
}

void
procfs_host_ns(uint64_t *mnt_ns, uint64_t *user_ns)
{
	struct stat mnt, user;

	*mnt_ns = *user_ns = 0;
	if (stat("/proc/self/ns/user", &user) == -1 ||
	    (stat("/proc/1/ns/mnt", &mnt) == -1 && stat("/proc/self/ns/mnt", &mnt) == -1))
		return;
	*mnt_ns = (uint64_t)mnt.st_ino;
	*user_ns = (uint64_t)user.st_ino;
}

int
procfs_line(FILE *f, char *buf, size_t len)
{
	size_t	 n;
	int	 skipping = 0;

	while (fgets(buf, (int)len, f) != NULL) {
		n = strlen(buf);
		if (n > 0 && buf[n - 1] == '\n') {
			if (skipping) {		/* the end of a long one */
				skipping = 0;
				continue;
			}
			buf[n - 1] = '\0';
			return 1;
		}
		if (feof(f) && !skipping)	/* the last, without a newline */
			return 1;
		skipping = 1;
	}
	return 0;
}
