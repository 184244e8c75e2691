/*
 * userfs.c - file systems served by a user's process: FUSE, unless root
 * mounted it.  The capture worker reads binaries with no deadline (a copy,
 * an early pin, a store): a user's FUSE server that stops answering would
 * hold it for good, and every capture, store and export behind it.  The
 * worker leaves such files alone, with the reason; the build-id reader,
 * whose reads have a deadline, reads them one thread per device and on
 * three devices at most (a thread in a read stays in the server's hands:
 * resolver.c).
 *
 * What a mount is comes from the daemon's mountinfo (its type, and a FUSE
 * mount's user_id=), kept in a table read again when the kernel says the
 * mount table changed (poll on the open file).  An open handle is judged
 * by its mount (statx STATX_MNT_ID): a walk in the daemon's own namespace
 * only meets mounts the table lists.  A handle whose mount the table does
 * not list (another namespace's, an overlay's private layer) is judged by
 * its device: a block device as below; a
 * FUSE connection is one /sys/fs/fuse/connections (fusectl, which lists
 * every connection, whatever the namespace) has, and a user's unless the
 * table has it mounted by root; without fusectl, a device of no block
 * device the table does not list is not trusted.  Without /sys/fs/fuse the
 * kernel has no FUSE.  Nothing here asks the file system in question
 * anything: procfs, sysfs, and statx with AT_STATX_DONT_SYNC.
 *
 * Only root mounts a block device, but what is beneath one may be a
 * user's: udisks binds a loop device, for a user of an active session,
 * to a file the user passes as a descriptor (LoopSetup), which may be on
 * the user's FUSE mount, and mounts what is in it (/media/USER/X); every
 * read the page cache misses is then a read of the user's server.  So a
 * handle on a block device, of a mount the table lists or not (or on a
 * file system of no major whose source names one: btrfs), is not read
 * while a FUSE connection exists that a user may serve (as for the
 * overlays below) and a loop device is beneath it - through a
 * partition's disk and a stacked device's slaves/ (dm-crypt, LVM, md),
 * at most BLK_DEPTH_MAX steps and BLK_VISIT_MAX devices, past which, as
 * for a source sysfs does not know, it cannot be told.  Where
 * the loop device's file is cannot be told without asking its file
 * system (LOOP_GET_STATUS64 asks it for the file's attributes), and its
 * path (sysfs: loop/backing_file) is the file's in the namespace it was
 * opened in: a user who can make one (unshare -Urm, bwrap) can bind a
 * FUSE mount of theirs over a path of root's there, and hand udisks a
 * file through it.  Where no such connection exists, no loop device's
 * file is a user's FUSE file (a loop device holds its file, and so its
 * file system, as long as it is bound): snaps, on a server, are read;
 * on a desktop (gvfsd-fuse, the document portal) they are not copied
 * (their build-ids are still read, one thread per loop device), nor the
 * JIT maps of processes whose
 * root is a snap's.  Nothing is walked where no such connection exists.
 *
 * A device does not show everything: an overlay has a device of its own
 * and passes reads on to its layers, and a user may make one (in a user
 * namespace of their own, or as the root of a container with one) over a
 * FUSE mount of theirs.  So while a FUSE connection exists that a user
 * may serve (mounted by a user, or in no mount of the daemon's table: on
 * most hosts there is none, and nothing changes), a handle on a
 * superblock of no device that no mount of the daemon's table has (a
 * root container's overlay is mounted on the host too; so are tmpfs, NFS
 * and ZFS) is read only if it was reached through a process (its
 * map_files, its root) whose own mountinfo lists the mount - not through
 * another's /proc/PID/root - and either the process's mount namespace is
 * owned by the initial user namespace (only root mounts there) or the
 * mount's type passes no read on (not overlay, shiftfs or FUSE).  Anything
 * else, or what cannot be told (the process gone), is not read.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/nsfs.h>

#include "procfs.h"
#include "userfs.h"

#define FUSECTL_DIR		"/sys/fs/fuse/connections"
#define FUSECTL_SUPER_MAGIC	0x65735543
#define MOUNTINFO_MAX		(64U << 20)	/* bytes of mountinfo read, at most */
#define FOREIGN_MOUNTINFO_MAX	(4U << 20)	/* ... of a user's namespace's */
#define BLK_DEPTH_MAX		6	/* steps down from a block device: a partition's */
					/* disk, a stacked device's slave */
#define BLK_VISIT_MAX		32	/* devices looked at for one verdict */

struct mnt {
	uint64_t id;
	unsigned int maj, min;
	char	*point;
	int	 fuse;			/* fuse, fuse.NAME or fuseblk */
	long	 user;			/* its user_id=, -1 if none */
	char	*source;		/* a device of no major's source "/dev/...", or NULL */
};

static struct {
	pthread_mutex_t	 mu;
	int		 fd;		/* /proc/self/mountinfo, polled for changes */
	int		 loaded;
	struct mnt	*m;
	size_t		 n;
} tab = { .mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

/*
 * The mount ids of the host's mount namespace (PID 1's: the daemon's own
 * may be a private one, as its unit makes it), sorted; for
 * userfs_host_mount.
 */
static struct {
	pthread_mutex_t	 mu;
	int		 fd;		/* /proc/1/mountinfo, polled for changes */
	int		 loaded;
	uint64_t	*id;
	size_t		 n;
} host = { .mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

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
 * One line of mountinfo into M (its point and source not yet copied:
 * *POINT, and *SOURCE where M keeps one, else NULL; *TYPE its type); -1
 * if it is not one:
 * "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPEROPTIONS"
 */
static int
parse_line(char *line, struct mnt *m, char **point, char **source, char **type)
{
	char	*f[5], *sep, *fstype, *opts, *u, *save = NULL;
	unsigned long long id;
	int	 i;

	if ((sep = strstr(line, " - ")) == NULL)
		return -1;
	*sep = '\0';
	for (i = 0; i < 5; i++)
		if ((f[i] = strtok_r(i == 0 ? line : NULL, " ", &save)) == NULL)
			return -1;
	unescape(f[4]);
	if (sscanf(f[0], "%llu", &id) != 1 || sscanf(f[2], "%u:%u", &m->maj, &m->min) != 2)
		return -1;
	m->id = id;
	*point = f[4];
	fstype = sep + 3;
	fstype[strcspn(fstype, "\n")] = '\0';
	m->fuse = strncmp(fstype, "fuse ", 5) == 0 || strncmp(fstype, "fuse.", 5) == 0 ||
	    strncmp(fstype, "fuseblk ", 8) == 0;
	m->user = -1;
	/* the super block's options: the last field */
	if ((opts = strrchr(fstype, ' ')) != NULL && (u = strstr(opts, "user_id=")) != NULL &&
	    (u == opts + 1 || u[-1] == ','))
		m->user = strtol(u + 8, NULL, 10);
	/*
	 * A file system of no major that names a device (btrfs, bcachefs):
	 * what is beneath it is judged as a block device's (judge_beneath).
	 */
	*source = NULL;
	if ((u = strchr(fstype, ' ')) == NULL)
		return -1;
	*u = '\0';
	*type = fstype;
	if (m->maj == 0 && !m->fuse && strncmp(u + 1, "/dev/", 5) == 0 && opts != NULL &&
	    opts > u) {
		*opts = '\0';
		*source = u + 1;
		unescape(*source);
	}
	return 0;
}

static void
table_clear(void)
{
	size_t	 i;

	for (i = 0; i < tab.n; i++) {
		free(tab.m[i].point);
		free(tab.m[i].source);
	}
	free(tab.m);
	tab.m = NULL;
	tab.n = 0;
	tab.loaded = 0;
}

/*
 * The whole of mountinfo FD, read again from its start (from the polled
 * fd: that is what resets its event), NUL-terminated, its length in
 * *LEN; NULL past MOUNTINFO_MAX or on an error.
 */
static char *
mountinfo_read(int fd, size_t *lenp)
{
	char	*buf = NULL, *nb;
	size_t	 len = 0, cap = 0;
	ssize_t	 r;

	if (lseek(fd, 0, SEEK_SET) == -1)
		return NULL;
	for (;;) {
		if (len + 65536 > cap) {
			if (cap >= MOUNTINFO_MAX || (nb = realloc(buf, cap + 262144)) == NULL) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap += 262144;
		}
		if ((r = read(fd, buf + len, cap - len - 1)) < 0) {
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	*lenp = len;
	return buf;
}

/* Read the whole table again. */
static int
table_load(void)
{
	char	*buf, *line, *nl;
	size_t	 len, nm = 0;
	struct mnt m, *nv;
	char	*point, *source, *type;

	table_clear();
	if ((buf = mountinfo_read(tab.fd, &len)) == NULL)
		return -1;
	for (line = buf; line < buf + len; line = nl + 1) {
		if ((nl = strchr(line, '\n')) == NULL)
			nl = buf + len;
		*nl = '\0';
		if (parse_line(line, &m, &point, &source, &type) < 0)
			continue;
		if (tab.n == nm) {
			nm = nm ? nm * 2 : 256;
			if ((nv = reallocarray(tab.m, nm, sizeof(*nv))) == NULL)
				break;
			tab.m = nv;
		}
		if ((m.point = strdup(point)) == NULL)
			break;
		m.source = NULL;
		if (source != NULL && (m.source = strdup(source)) == NULL) {
			free(m.point);
			break;
		}
		tab.m[tab.n++] = m;
	}
	free(buf);
	tab.loaded = 1;
	return 0;
}

/* The table, current: read again if the mount table changed.  Under tab.mu. */
static int
table_fresh(void)
{
	struct pollfd p;

	if (tab.fd < 0 &&
	    (tab.fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	p.fd = tab.fd;
	p.events = POLLPRI;
	p.revents = 0;
	if (tab.loaded && poll(&p, 1, 0) == 0)
		return 0;
	return table_load();
}

static const struct mnt *
by_id(uint64_t id)
{
	size_t	 i;

	for (i = 0; i < tab.n; i++)
		if (tab.m[i].id == id)
			return &tab.m[i];
	return NULL;
}

static const struct mnt *
by_dev(unsigned int maj, unsigned int min)
{
	size_t	 i;

	for (i = 0; i < tab.n; i++)
		if (tab.m[i].maj == maj && tab.m[i].min == min)
			return &tab.m[i];
	return NULL;
}

/* 1 when fusectl is mounted: it then knows every FUSE connection. */
static int
fusectl(void)
{
	struct statfs sf;

	return statfs(FUSECTL_DIR, &sf) == 0 && (unsigned long)sf.f_type == FUSECTL_SUPER_MAGIC;
}

/* 1 with the reason if M is a user's FUSE mount. */
static int
judge(const struct mnt *m, char *why, size_t whylen)
{
	if (!m->fuse || m->user == 0)
		return 0;
	if (m->user > 0)
		snprintf(why, whylen, "on %s, a FUSE file system of uid %ld (its server could "
		    "stall the capture): not read", m->point, m->user);
	else
		snprintf(why, whylen, "on %s, a FUSE file system of no known owner: not read",
		    m->point);
	return 1;
}

/*
 * Is there a FUSE connection (fusectl) whose server a user may run: one
 * the daemon's table has mounted by a user (user_id= not 0), or does not
 * have at all (another namespace's, or one unmounted lazily)?  Only then
 * can a mount the table does not have, or a loop device's file, pass
 * reads on to such a server.  Without fusectl: yes; without FUSE in the
 * kernel (no /sys/fs/fuse): no.  Under tab.mu, the
 * table fresh.
 */
static int
foreign_fuse(void)
{
	const struct mnt *m;
	struct dirent *de;
	unsigned long dev;
	char	*end;
	DIR	*d;
	int	 found = 0;

	if (access("/sys/fs/fuse", F_OK) == -1)
		return 0;	/* no FUSE in the kernel */
	if (!fusectl() || (d = opendir(FUSECTL_DIR)) == NULL)
		return 1;	/* cannot tell */
	while (!found && (de = readdir(d)) != NULL) {
		/* named by the kernel's dev_t: major << 20 | minor (a fuseblk's major is a block's) */
		dev = strtoul(de->d_name, &end, 10);
		if (end == de->d_name || *end != '\0')
			continue;
		found = (m = by_dev((unsigned int)(dev >> 20), (unsigned int)(dev & 0xfffff))) ==
		    NULL || !m->fuse || m->user != 0;
	}
	closedir(d);
	return found;
}

struct blkwalk {
	int	 visits;
	char	*why;
	size_t	 whylen;
};

static int	blk_judge_dir(struct blkwalk *, const char *dir, int depth);
static int	blk_judge_each(struct blkwalk *, const char *dir, const char *sub, int depth,
		    int none_ok, const char *what);

/* The kernel's name of the block device whose sysfs directory is DIR, into NAME. */
static void
blk_name(const char *dir, char *name, size_t namelen)
{
	char	*rp, *b;

	if ((rp = realpath(dir, NULL)) == NULL) {
		snprintf(name, namelen, "%s", dir);
		return;
	}
	b = strrchr(rp, '/');
	snprintf(name, namelen, "%s", b != NULL ? b + 1 : rp);
	free(rp);
}

static int
blk_untold(struct blkwalk *w, const char *dir, const char *what)
{
	char	 name[64];

	blk_name(dir, name, sizeof(name));
	snprintf(w->why, w->whylen, "on block device %s, %s: whether a user's FUSE server "
	    "serves its reads cannot be told: not read", name, what);
	return 1;
}

/* A sysfs file of at most LEN - 1 bytes into BUF, its last newline cut: its length, or -1. */
static ssize_t
read_small(const char *path, char *buf, size_t len)
{
	ssize_t	 n;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	if ((size_t)n == len - 1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return n;
}

/*
 * The loop device whose sysfs directory is DIR reads FILE (its
 * loop/backing_file), while a FUSE server a user may run exists: not
 * read (see the top: its path does not tell where the file is).
 */
static int
blk_judge_loop(struct blkwalk *w, const char *dir, const char *file)
{
	char	 name[64];

	blk_name(dir, name, sizeof(name));
	snprintf(w->why, w->whylen, "through loop device %s on %s, while a FUSE file system "
	    "a user may serve exists (the file may be on it: its path, perhaps of a namespace "
	    "of the user's, does not tell): not read", name, file);
	return 1;
}

/*
 * The block device whose sysfs directory is DIR, and what is beneath it:
 * a partition's disk, a stacked device's slaves (dm-crypt, LVM, md), a
 * loop device's backing file.  DEPTH counts the steps down.
 */
static int
blk_judge_dir(struct blkwalk *w, const char *dir, int depth)
{
	char	 path[PATH_MAX], file[PATH_MAX];

	if (depth > BLK_DEPTH_MAX || ++w->visits > BLK_VISIT_MAX)
		return blk_untold(w, dir, "over devices stacked too deep or too many");
	if (access(dir, F_OK) == -1)
		return blk_untold(w, dir, "of no sysfs directory");
	/* a partition: the directory above is its disk's */
	snprintf(path, sizeof(path), "%s/partition", dir);
	if (access(path, F_OK) == 0) {
		snprintf(path, sizeof(path), "%s/..", dir);
		return blk_judge_dir(w, path, depth + 1);
	}
	snprintf(path, sizeof(path), "%s/loop/backing_file", dir);
	if (read_small(path, file, sizeof(file)) >= 0)
		return blk_judge_loop(w, dir, file);
	if (errno != ENOENT)
		return blk_untold(w, dir, "a loop device whose backing file was not read");
	return blk_judge_each(w, dir, "slaves", depth + 1, 1, "whose slaves were not read");
}

/*
 * Every device directory DIR/SUB links to, judged at DEPTH until one
 * must not be read.  DIR/SUB missing: nothing beneath if NONE_OK, else
 * not read; not read either (WHAT says why) when it cannot be listed.
 */
static int
blk_judge_each(struct blkwalk *w, const char *dir, const char *sub, int depth, int none_ok,
    const char *what)
{
	char	 path[PATH_MAX];
	struct dirent *de;
	DIR	*d;
	int	 rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	if ((d = opendir(path)) == NULL)
		return none_ok && errno == ENOENT ? 0 : blk_untold(w, dir, what);
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, de->d_name);
		rc = blk_judge_dir(w, path, depth);
	}
	closedir(d);
	return rc;
}

/*
 * A block device: 1 with the reason if a loop device is beneath it while
 * a FUSE server a user may run exists (see the top).  Where none exists,
 * nothing is walked: a loop device's file is on no such server, and what
 * cannot be told (devices stacked past the walk's bounds) is no matter.
 * Under tab.mu, the table fresh.
 */
static int
judge_block(unsigned int maj, unsigned int min, char *why, size_t whylen)
{
	struct blkwalk w = { .why = why, .whylen = whylen };
	char	 dir[64];

	if (!foreign_fuse())
		return 0;
	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u", maj, min);
	return blk_judge_dir(&w, dir, 0);
}

/* The first entry of directory DIR (not a dot's) MATCH takes, into FOUND; 0, or -1. */
static int
dir_find(const char *dir, int (*match)(const char *, const void *), const void *arg,
    char *found, size_t foundlen)
{
	struct dirent *de;
	DIR	*d;
	int	 rc = -1;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while (rc < 0 && (de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' && match(de->d_name, arg)) {
			snprintf(found, foundlen, "%s", de->d_name);
			rc = 0;
		}
	closedir(d);
	return rc;
}

/* Is block device ENT the device-mapper device named ARG? */
static int
dm_named(const char *ent, const void *arg)
{
	char	 path[PATH_MAX], buf[256];

	if (strncmp(ent, "dm-", 3) != 0)
		return 0;
	snprintf(path, sizeof(path), "/sys/class/block/%s/dm/name", ent);
	return read_small(path, buf, sizeof(buf)) >= 0 && strcmp(buf, arg) == 0;
}

/* Has the btrfs of fsid ENT device ARG? */
static int
btrfs_has(const char *ent, const void *arg)
{
	char	 path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/fs/btrfs/%s/devices/%s", ent, (const char *)arg);
	return access(path, F_OK) == 0;
}

/*
 * The kernel's name of the block device a source "/dev/NAME" or
 * "/dev/mapper/NAME" names, into NAME, from sysfs (the daemon's /dev may
 * hold no device: PrivateDevices=); 0, or -1.
 */
static int
source_blk(const char *source, char *name, size_t namelen)
{
	const char *s = source + 5;
	char	 path[PATH_MAX];

	if (strncmp(s, "mapper/", 7) != 0) {
		if (s[0] == '\0' || s[0] == '.' || strchr(s, '/') != NULL ||
		    (size_t)snprintf(path, sizeof(path), "/sys/class/block/%s", s) >= sizeof(path) ||
		    access(path, F_OK) == -1)
			return -1;
		snprintf(name, namelen, "%s", s);
		return 0;
	}
	return dir_find("/sys/class/block", dm_named, s + 7, name, namelen);
}

/*
 * The btrfs one of whose devices is NAME (or, NAME NULL, whose fsid is
 * UUID): its sysfs directory into DIR; 0, or -1.
 */
static int
btrfs_dir(const char *name, const char *uuid, char *dir, size_t dirlen)
{
	char	 path[PATH_MAX], fsid[256];

	if (uuid != NULL) {
		if (uuid[0] == '\0' || uuid[0] == '.' || strchr(uuid, '/') != NULL ||
		    (size_t)snprintf(dir, dirlen, "/sys/fs/btrfs/%s", uuid) >= dirlen ||
		    (size_t)snprintf(path, sizeof(path), "%s/devices", dir) >= sizeof(path))
			return -1;
		return access(path, F_OK);
	}
	if (dir_find("/sys/fs/btrfs", btrfs_has, name, fsid, sizeof(fsid)) < 0)
		return -1;
	snprintf(dir, dirlen, "/sys/fs/btrfs/%s", fsid);
	return 0;
}

/*
 * What is beneath a file system of no major on mount point POINT whose
 * source SOURCE names a device: for a btrfs, every device of it (sysfs
 * lists them: mountinfo shows one), else the device the source names.
 * 1 with the reason when it must not be read (judge_block).
 */
static int
judge_source(const char *point, const char *source, char *why, size_t whylen)
{
	struct blkwalk w = { .why = why, .whylen = whylen };
	char	 name[256], dir[PATH_MAX], path[PATH_MAX + 300];
	int	 found;

	if (!foreign_fuse())
		return 0;	/* no FUSE server a user may run: nothing beneath is one */
	found = source_blk(source, name, sizeof(name)) == 0;
	if ((found && btrfs_dir(name, NULL, dir, sizeof(dir)) == 0) ||
	    (strncmp(source, "/dev/disk/by-uuid/", 18) == 0 &&
	    btrfs_dir(NULL, source + 18, dir, sizeof(dir)) == 0)) {
		return blk_judge_each(&w, dir, "devices", 0, 0, "a btrfs whose devices were not read");
	}
	if (found) {
		snprintf(path, sizeof(path), "/sys/class/block/%s", name);
		return blk_judge_dir(&w, path, 0);
	}
	snprintf(why, whylen, "on %s, of %s, a device sysfs does not know (whether a user's "
	    "FUSE server serves its reads cannot be told): not read", point, source);
	return 1;
}

/*
 * What is beneath mount M, a block device: its own, or the ones a file
 * system of no major names by its source (btrfs on a loop device).  1
 * with the reason when it must not be read (judge_block).
 */
static int
judge_beneath(const struct mnt *m, char *why, size_t whylen)
{
	if (m->maj != 0)
		return judge_block(m->maj, m->min, why, whylen);
	return m->source != NULL ? judge_source(m->point, m->source, why, whylen) : 0;
}

/* A device, under tab.mu with the table fresh (or not loaded: NULL lookups). */
static int
judge_dev(uint32_t maj, uint32_t min, char *why, size_t whylen)
{
	const struct mnt *m;
	char	 conn[64];
	int	 ctl;

	/* Block devices: only root mounts those, FUSE (fuseblk) or not; a loop device's file aside. */
	if (maj != 0)
		return judge_block(maj, min, why, whylen);
	if (access("/sys/fs/fuse", F_OK) == -1)
		return 0;
	if ((ctl = fusectl())) {
		snprintf(conn, sizeof(conn), FUSECTL_DIR "/%u", min);
		if (access(conn, F_OK) == -1 && errno == ENOENT)
			return 0;
	}
	if (tab.loaded && (m = by_dev(maj, min)) != NULL)
		return judge(m, why, whylen);
	snprintf(why, whylen, "device %u:%u%s is not in the daemon's mount table: not read", maj,
	    min, ctl ? ", a FUSE connection," : "");
	return 1;
}

/*
 * Is the mount namespace of the process whose /proc directory is DFD
 * owned by a user namespace other than the initial one?  Then whoever is
 * root in it (a user's unshare -Urm, or the tenant of a container root
 * made with a user namespace: LXD, Kubernetes) can mount an overlay or a
 * FUSE file system there.  What cannot be told: yes.
 */
static int
ns_user_made(int dfd)
{
	static atomic_uint_least64_t init_user;	/* the worker's and the profile thread's */
	struct stat st;
	uint64_t mnt_ns, user_ns;
	int	 nsfd, ufd, made = 1;

	if (atomic_load(&init_user) == 0) {
		procfs_host_ns(&mnt_ns, &user_ns);	/* the daemon's: the initial one */
		if (user_ns == 0)
			return 1;
		atomic_store(&init_user, user_ns);
	}
	if ((nsfd = openat(dfd, "ns/mnt", O_RDONLY | O_CLOEXEC)) == -1)
		return 1;
	if ((ufd = ioctl(nsfd, NS_GET_USERNS)) >= 0) {
		if (fstat(ufd, &st) == 0 && (uint64_t)st.st_ino == atomic_load(&init_user))
			made = 0;
		close(ufd);
	}
	close(nsfd);
	return made;
}

/*
 * Mount ID as the mountinfo of the process whose /proc directory is DFD
 * lists it, into M (no point kept), its type into TYPE and its source
 * (for a file system of no major that names a device) into SOURCE, else
 * ""; 0, or -1 when it is not there (or past FOREIGN_MOUNTINFO_MAX bytes:
 * a user can make mounts without end).
 */
static int
foreign_mount(int dfd, uint64_t id, struct mnt *m, char *type, size_t typelen, char *source,
    size_t sourcelen)
{
	char	*line = NULL, *end, *point, *src, *t;
	size_t	 cap = 0, total = 0;
	ssize_t	 n;
	FILE	*f;
	int	 fd, rc = -1;

	if ((fd = openat(dfd, "mountinfo", O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if ((f = fdopen(fd, "r")) == NULL) {
		close(fd);
		return -1;
	}
	while (rc < 0 && (n = getline(&line, &cap, f)) > 0 &&
	    (total += (size_t)n) <= FOREIGN_MOUNTINFO_MAX) {
		if (strtoull(line, &end, 10) != id || *end != ' ' ||
		    parse_line(line, m, &point, &src, &t) < 0)
			continue;
		snprintf(type, typelen, "%s", t);
		snprintf(source, sourcelen, "%s", src != NULL ? src : "");
		m->point = m->source = NULL;
		rc = 0;
	}
	free(line);
	fclose(f);
	return rc;
}

/* Types a user namespace can mount that pass reads on to what is beneath. */
static int
passes_reads(const char *type)
{
	return strcmp(type, "overlay") == 0 || strcmp(type, "shiftfs") == 0 ||
	    strncmp(type, "fuse", 4) == 0;
}

/*
 * What is beneath mount FM of another namespace (TYPE, SOURCE: see
 * foreign_mount): the daemon's own mount of the same superblock, if it
 * has one (udisks' btrfs, seen through a user's namespace: its files'
 * devices are their subvolumes', not the mount's), else FM's device, or
 * the device SOURCE names for a btrfs or bcachefs (which no user
 * namespace can mount: their source is the kernel's).  1 with the reason
 * when it must not be read.
 */
static int
judge_foreign_dev(const struct mnt *fm, const char *type, const char *source, char *why,
    size_t whylen)
{
	const struct mnt *m;
	struct mnt t = *fm;
	int	 rc;

	pthread_mutex_lock(&tab.mu);
	table_fresh();
	if (tab.loaded && (m = by_dev(fm->maj, fm->min)) != NULL)
		rc = judge(m, why, whylen) || judge_beneath(m, why, whylen);
	else {
		t.point = "a mount of another namespace";
		t.source = source[0] != '\0' && (strcmp(type, "btrfs") == 0 ||
		    strcmp(type, "bcachefs") == 0) ? (char *)source : NULL;
		rc = judge_beneath(&t, why, whylen);
	}
	pthread_mutex_unlock(&tab.mu);
	return rc;
}

/*
 * A handle on mount MNT_ID (0: not known) of a superblock of no device
 * that no mount of the daemon's namespace has, reached through process
 * PID (0: none), while a FUSE connection the daemon's table does not
 * list exists: 1 with the reason, unless the mount is PID's own (its
 * mountinfo lists it) and either the namespace is root's or the mount is
 * of a type that passes no read on (see the top).
 */
static int
judge_foreign(uint32_t pid, uint64_t mnt_id, char *why, size_t whylen)
{
	char	 path[32], type[64], source[PATH_MAX];
	struct mnt fm;
	int	 dfd, rc = 1;

	if (pid == 0 || mnt_id == 0) {
		snprintf(why, whylen, "on a mount the daemon's namespace does not have, of no "
		    "process known, beside a FUSE mount of another namespace: not read");
		return 1;
	}
	/* the directory holds on to the process: another under its pid is not looked at */
	snprintf(path, sizeof(path), "/proc/%u", pid);
	if ((dfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(why, whylen, "on a mount the daemon's namespace does not have, of "
		    "process %u, gone, beside a FUSE mount of another namespace: not read", pid);
		return 1;
	}
	if (foreign_mount(dfd, mnt_id, &fm, type, sizeof(type), source, sizeof(source)) < 0)
		snprintf(why, whylen, "on a mount that neither the daemon's namespace nor that "
		    "of process %u has (another's, reached through a /proc/PID/root?): not read",
		    pid);
	else if (judge_foreign_dev(&fm, type, source, why, whylen))
		;	/* a loop device beneath it */
	else if (!passes_reads(type) || !ns_user_made(dfd))
		rc = 0;
	else
		snprintf(why, whylen, "on a mount of type %s of a namespace a user or a "
		    "container's root made (pid %u; what it passes reads on to may be a FUSE "
		    "server of theirs): not read", type, pid);
	close(dfd);
	return rc;
}

static int
id_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The host's mount ids, current: read again if its table changed.  Under host.mu. */
static void
host_fresh(void)
{
	struct pollfd p;
	char	*buf, *line, *nl, *end;
	size_t	 len, cap = 0;
	uint64_t *nv, id;

	if (host.fd < 0 &&
	    (host.fd = open("/proc/1/mountinfo", O_RDONLY | O_CLOEXEC)) == -1)
		return;
	p.fd = host.fd;
	p.events = POLLPRI;
	p.revents = 0;
	if (host.loaded && poll(&p, 1, 0) == 0)
		return;
	free(host.id);
	host.id = NULL;
	host.n = 0;
	host.loaded = 0;
	if ((buf = mountinfo_read(host.fd, &len)) == NULL)
		return;
	for (line = buf; line < buf + len; line = nl + 1) {
		if ((nl = strchr(line, '\n')) == NULL)
			nl = buf + len;
		id = strtoull(line, &end, 10);
		if (end == line || *end != ' ')
			continue;
		if (host.n == cap) {
			cap = cap ? cap * 2 : 256;
			if ((nv = reallocarray(host.id, cap, sizeof(*nv))) == NULL) {
				free(buf);
				return;		/* not loaded: "not known" */
			}
			host.id = nv;
		}
		host.id[host.n++] = id;
	}
	free(buf);
	qsort(host.id, host.n, sizeof(*host.id), id_cmp);
	host.loaded = 1;
}

uint64_t
userfs_fdinfo_mount_id(int fd)
{
	char	 path[64], buf[512], *p, *end;
	uint64_t id;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (procfs_read(-1, path, buf, sizeof(buf)) < 0 ||
	    (p = strstr(buf, "\nmnt_id:")) == NULL)
		return 0;
	p += strlen("\nmnt_id:");
	p += strspn(p, " \t");
	id = strtoull(p, &end, 10);
	return end != p && (*end == '\n' || *end == '\0') ? id : 0;
}

/*
 * FD's mount id: statx's (Linux 5.8), else the "mnt_id:" of its fdinfo
 * (3.15), which names the same mount.  0 if neither tells.
 */
static uint64_t
mount_id(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID))
		return stx.stx_mnt_id;
	return userfs_fdinfo_mount_id(fd);
}

int
userfs_host_mount(int fd)
{
	uint64_t id;
	int	 rc;

	if ((id = mount_id(fd)) == 0)
		return -1;
	pthread_mutex_lock(&host.mu);
	host_fresh();
	rc = !host.loaded ? -1 :
	    bsearch(&id, host.id, host.n, sizeof(id), id_cmp) != NULL;
	pthread_mutex_unlock(&host.mu);
	return rc;
}

int
userfs_fd(int fd, uint32_t pid, char *why, size_t whylen)
{
	const struct mnt *m;
	struct statx stx;
	int	 rc, foreign = 0;

	/* The attributes the kernel holds: no request to a FUSE server. */
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == -1)
		return 0;	/* not a file, and nothing read from it */
	pthread_mutex_lock(&tab.mu);
	table_fresh();
	if ((stx.stx_mask & STATX_MNT_ID) && tab.loaded && (m = by_id(stx.stx_mnt_id)) != NULL) {
		/* a mount of the daemon's namespace, and what is beneath it */
		rc = judge(m, why, whylen) || judge_beneath(m, why, whylen);
	} else {
		rc = judge_dev(stx.stx_dev_major, stx.stx_dev_minor, why, whylen);
		m = stx.stx_dev_major == 0 && tab.loaded ? by_dev(0, stx.stx_dev_minor) : NULL;
		if (rc == 0 && m != NULL)
			rc = judge_beneath(m, why, whylen);	/* btrfs on a loop device */
		/*
		 * A superblock of no device that no mount of the daemon's has
		 * (a Docker overlay is mounted on the host too: by_dev finds
		 * it), where the kernel has FUSE to hide behind it.
		 */
		foreign = rc == 0 && stx.stx_dev_major == 0 && tab.loaded && m == NULL &&
		    foreign_fuse();
	}
	pthread_mutex_unlock(&tab.mu);
	if (foreign)
		rc = judge_foreign(pid, (stx.stx_mask & STATX_MNT_ID) ? stx.stx_mnt_id : 0, why,
		    whylen);
	return rc;
}
