/*
 * userfs.c - file systems served by a user's process: FUSE, unless root
 * mounted it.  The capture worker reads binaries with no deadline (a copy,
 * an early pin, a store): a user's FUSE server that stops answering would
 * hold it for good, and every capture, store and export behind it.  The
 * worker leaves such files alone, with the reason; the build-id reader,
 * whose reads have a deadline and spare threads, still reads them.
 *
 * A device is a FUSE connection when /sys/fs/fuse/connections (fusectl,
 * which lists every connection, whatever the mount namespace) has its
 * number; the owner is the user_id= of its entry in the daemon's
 * mountinfo.  A FUSE mount the daemon's mount table does not list is
 * another namespace's, a user's.  Without /sys/fs/fuse the kernel has no
 * FUSE; with it but without fusectl mounted, mountinfo alone says what a
 * device is, and one it does not list is not trusted either.
 * Nothing here touches the file system in question: these are procfs and
 * sysfs reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "capture_int.h"

#define FUSECTL_DIR		"/sys/fs/fuse/connections"
#define FUSECTL_SUPER_MAGIC	0x65735543

struct mnt {
	unsigned int maj, min;
	char	 point[PATH_MAX];
	int	 fuse;			/* fuse, fuse.NAME or fuseblk */
	long	 user;			/* its user_id=, -1 if none */
};

/* "\040" and the like, as mountinfo escapes a mount point, in place. */
static void
unescape(char *s)
{
	char	*w = s;

	for (; *s != '\0'; s++, w++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 3;
		} else
			*w = *s;
	}
	*w = '\0';
}

/*
 * One line of mountinfo into M; -1 if it is not one:
 * "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPEROPTIONS"
 */
static int
parse_line(char *line, struct mnt *m)
{
	char	*f[5], *sep, *fstype, *opts, *u, *save = NULL;
	int	 i;

	if ((sep = strstr(line, " - ")) == NULL)
		return -1;
	*sep = '\0';
	for (i = 0; i < 5; i++)
		if ((f[i] = strtok_r(i == 0 ? line : NULL, " ", &save)) == NULL)
			return -1;
	unescape(f[4]);
	/* A point of PATH_MAX or more is above no path the daemon looks at. */
	if (sscanf(f[2], "%u:%u", &m->maj, &m->min) != 2 || strlen(f[4]) >= sizeof(m->point))
		return -1;
	memcpy(m->point, f[4], strlen(f[4]) + 1);
	fstype = sep + 3;
	m->fuse = strncmp(fstype, "fuse ", 5) == 0 || strncmp(fstype, "fuse.", 5) == 0 ||
	    strncmp(fstype, "fuseblk ", 8) == 0;
	m->user = -1;
	/* the super block's options: the last field */
	if ((opts = strrchr(fstype, ' ')) != NULL && (u = strstr(opts, "user_id=")) != NULL &&
	    (u == opts + 1 || u[-1] == ','))
		m->user = strtol(u + 8, NULL, 10);
	return 0;
}

/*
 * Calls FN for each mount of the daemon's table until it returns
 * nonzero; that value, 0 if none did, -1 if the table cannot be read.
 */
static int
each_mount(int (*fn)(const struct mnt *, void *), void *arg)
{
	char	*line = NULL;
	size_t	 cap = 0;
	struct mnt m;
	FILE	*f;
	int	 rc = 0;

	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	/* Lines of any length (escaped mount points, long options): getline's. */
	while (rc == 0 && getline(&line, &cap, f) != -1)
		if (parse_line(line, &m) == 0)
			rc = fn(&m, arg);
	free(line);
	fclose(f);
	return rc;
}

struct devq {
	unsigned int maj, min;
	struct mnt found;
};

static int
dev_cb(const struct mnt *m, void *arg)
{
	struct devq *q = arg;

	if (m->maj != q->maj || m->min != q->min)
		return 0;
	q->found = *m;
	return 1;
}

/* 1 when fusectl is mounted: it then knows every FUSE connection. */
static int
fusectl(void)
{
	struct statfs sf;

	return statfs(FUSECTL_DIR, &sf) == 0 && (unsigned long)sf.f_type == FUSECTL_SUPER_MAGIC;
}

static int
why_user(const struct mnt *m, char *why, size_t whylen)
{
	if (m->user >= 0)
		snprintf(why, whylen, "on %s, a FUSE file system of uid %ld (its server could "
		    "stall the capture): not read", m->point, m->user);
	else
		snprintf(why, whylen, "on %s, a FUSE file system of no known owner: not read",
		    m->point);
	return 1;
}

int
userfs_dev(uint32_t maj, uint32_t min, char *why, size_t whylen)
{
	struct devq q = { .maj = maj, .min = min };
	char	 conn[64];
	int	 ctl, rc;

	/* Block devices: only root mounts those, FUSE (fuseblk) or not. */
	if (maj != 0 || access("/sys/fs/fuse", F_OK) == -1)
		return 0;
	if ((ctl = fusectl())) {
		snprintf(conn, sizeof(conn), FUSECTL_DIR "/%u", min);
		if (access(conn, F_OK) == -1 && errno == ENOENT)
			return 0;
	}
	if ((rc = each_mount(dev_cb, &q)) < 0) {
		snprintf(why, whylen, "device %u:%u: the mount table cannot be read: not read", maj,
		    min);
		return 1;
	}
	if (rc == 0) {
		snprintf(why, whylen, "device %u:%u%s is not in the daemon's mount table: not read",
		    maj, min, ctl ? ", a FUSE connection," : "");
		return 1;
	}
	if (!q.found.fuse || q.found.user == 0)
		return 0;
	return why_user(&q.found, why, whylen);
}

struct pathq {
	const char *path;
	struct mnt found;
};

/* A user's FUSE mount at PATH or above it: a walk of PATH would ask its server. */
static int
path_cb(const struct mnt *m, void *arg)
{
	struct pathq *q = arg;
	size_t	 n = strlen(m->point);

	if (!m->fuse || m->user == 0 || strncmp(q->path, m->point, n) != 0 ||
	    (q->path[n] != '/' && q->path[n] != '\0' && strcmp(m->point, "/") != 0))
		return 0;
	q->found = *m;
	return 1;
}

int
userfs_path(const char *path, char *why, size_t whylen)
{
	struct pathq q = { .path = path };
	int	 rc;

	if ((rc = each_mount(path_cb, &q)) < 0) {
		snprintf(why, whylen, "the mount table cannot be read: not read");
		return 1;
	}
	return rc == 0 ? 0 : why_user(&q.found, why, whylen);
}

int
userfs_fd(int fd, char *why, size_t whylen)
{
	struct statx stx;

	/* The attributes the kernel holds: no request to a FUSE server. */
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, 0, &stx) == -1)
		return 0;	/* not a file, and nothing read from it */
	return userfs_dev(stx.stx_dev_major, stx.stx_dev_minor, why, whylen);
}

int
userfs_magic(const char *path, char *why, size_t whylen)
{
	int	 fd, rc;

	/* O_PATH follows the link and opens nothing: no FUSE open either. */
	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1)
		return 0;	/* gone: whatever opens it next fails too */
	rc = userfs_fd(fd, why, whylen);
	close(fd);
	return rc;
}
