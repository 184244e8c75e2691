/*
 * check_tmpfs.h - a full disk on demand: a 2 MiB tmpfs mounted on DIR (a
 * directory mkdtemp made) in a private mount namespace of the (forked)
 * test process, so that the mount vanishes with it even when an assertion
 * ends the test early, and FILL_KIB of it taken by DIR/filler (its path in
 * FILLER, FILLERLEN bytes).  Needs root (the callers are root's tests).
 */
#ifndef PERFMAPD_CHECK_TMPFS_H
#define PERFMAPD_CHECK_TMPFS_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>

#include <check.h>

static void
check_full_tmpfs(const char *dir, size_t fill_kib, char *filler, size_t fillerlen)
{
	char	 buf[4096];
	size_t	 i;
	int	 fd;

	ck_assert_msg(unshare(CLONE_NEWNS) == 0 &&
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0 &&
	    mount("tmpfs", dir, "tmpfs", 0, "size=2m") == 0,
	    "cannot mount a 2 MiB tmpfs: %s", strerror(errno));
	snprintf(filler, fillerlen, "%s/filler", dir);
	ck_assert_int_ge(fd = open(filler, O_WRONLY | O_CREAT, 0600), 0);
	memset(buf, 'x', sizeof(buf));
	for (i = 0; i < fill_kib / 4; i++)
		ck_assert_int_eq(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	close(fd);
}

#endif
