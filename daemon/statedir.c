/*
 * statedir.c - the state directory checked, created, taken over and
 * locked before anything is written in it; see statedir.h for the rules.
 *
 * The configured path is resolved here, one component at a time from /,
 * so that each directory is checked before anything under it is trusted:
 *
 *	"/" ─► lstat each component ─┬─ directory: owner root, no write for
 *	                             │  group or others (sticky excepted)
 *	                             ├─ symlink: root's, in a checked
 *	                             │  directory: its target is walked the
 *	                             │  same way (at most 40 links)
 *	                             └─ missing: created 0750, then checked
 *
 * The canonical path that results names no symlink, so SQLite's
 * SQLITE_OPEN_NOFOLLOW accepts it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "log.h"
#include "statedir.h"

#define STATEDIR_MAX_LINKS	40

/* Root, or the daemon's own user (a perfmapd run as one, with CAP_PERFMON). */
static int
trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* What is wrong with directory ST at PATH as a parent; NULL if nothing. */
static const char *
parent_problem(const struct stat *st)
{
	if (!S_ISDIR(st->st_mode))
		return "is not a directory";
	if (!trusted_owner(st->st_uid))
		return "is not owned by root";
	/* a root-owned sticky directory (/tmp): others cannot rename our entries */
	if ((st->st_mode & 022) != 0 && !(st->st_mode & S_ISVTX))
		return "is writable by its group or others";
	return NULL;
}

/* ... and as a directory the daemon writes in (no sticky exception). */
static const char *
own_problem(const struct stat *st)
{
	if (!S_ISDIR(st->st_mode))
		return "is not a directory (a symlink?)";
	if (!trusted_owner(st->st_uid))
		return "is not owned by root";
	if ((st->st_mode & 022) != 0)
		return "is writable by its group or others";
	return NULL;
}

static int
refuse(char *err, size_t errlen, const char *path, const struct stat *st, const char *why)
{
	if (st != NULL)
		snprintf(err, errlen, "%s %s (owner uid %u, group %u, mode %04o): refusing "
		    "to use it (see perfmapd(8), THE STATE DIRECTORY)", path, why,
		    (unsigned)st->st_uid, (unsigned)st->st_gid, (unsigned)(st->st_mode & 07777));
	else
		snprintf(err, errlen, "%s %s: refusing to use it (see perfmapd(8), THE STATE "
		    "DIRECTORY)", path, why);
	return -1;
}

/*
 * Resolve absolute PATH into CANON (PATH_MAX), checking each directory on
 * the way as a parent and creating missing ones (0750).  The last
 * directory is checked as a parent too: callers hold it to own_problem().
 */
static int
resolve(const char *path, char *canon, char *err, size_t errlen)
{
	char	 rest[PATH_MAX], next[PATH_MAX], target[PATH_MAX], tmp[PATH_MAX];
	char	*c, *slash;
	const char *why;
	struct stat st;
	size_t	 n;
	ssize_t	 len;
	int	 links = 0;

	if (path[0] != '/' || strlen(path) >= sizeof(rest)) {
		snprintf(err, errlen, "%s: not an absolute path of at most %d bytes", path,
		    PATH_MAX - 1);
		return -1;
	}
	snprintf(rest, sizeof(rest), "%s", path);
	strcpy(canon, "/");
	if (lstat("/", &st) == -1) {
		snprintf(err, errlen, "/: %s", strerror(errno));
		return -1;
	}
	if ((why = parent_problem(&st)) != NULL)
		return refuse(err, errlen, "/", &st, why);
	while (rest[0] != '\0') {
		c = rest;
		while (*c == '/')
			c++;
		if (*c == '\0')
			break;
		if ((slash = strchr(c, '/')) != NULL)
			*slash = '\0';
		n = strlen(canon);
		if (strcmp(c, ".") == 0)
			goto next;
		if (strcmp(c, "..") == 0) {
			/* canon names directories only: its parent is checked already */
			while (n > 1 && canon[n - 1] != '/')
				canon[--n] = '\0';
			if (n > 1)
				canon[--n] = '\0';
			goto next;
		}
		if ((size_t)snprintf(next, sizeof(next), "%s%s%s", canon, n > 1 ? "/" : "", c) >=
		    sizeof(next)) {
			snprintf(err, errlen, "%s: path too long", path);
			return -1;
		}
		if (lstat(next, &st) == -1) {
			if (errno != ENOENT || (mkdir(next, 0750) == -1 && errno != EEXIST) ||
			    lstat(next, &st) == -1) {
				snprintf(err, errlen, "%s: %s", next, strerror(errno));
				return -1;
			}
		}
		if (S_ISLNK(st.st_mode)) {
			if (!trusted_owner(st.st_uid))
				return refuse(err, errlen, next, &st, "is a symlink not owned by root");
			if (++links > STATEDIR_MAX_LINKS ||
			    (len = readlink(next, target, sizeof(target) - 1)) <= 0) {
				snprintf(err, errlen, "%s: %s", next, links > STATEDIR_MAX_LINKS ?
				    "too many levels of symbolic links" : strerror(errno));
				return -1;
			}
			target[len] = '\0';
			if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", target,
			    slash != NULL ? slash + 1 : "") >= sizeof(tmp)) {
				snprintf(err, errlen, "%s: path too long", path);
				return -1;
			}
			memcpy(rest, tmp, sizeof(rest));
			if (target[0] == '/')
				strcpy(canon, "/");
			continue;
		}
		if ((why = parent_problem(&st)) != NULL)
			return refuse(err, errlen, next, &st, why);
		memcpy(canon, next, strlen(next) + 1);
next:
		if (slash == NULL)
			break;
		memmove(rest, slash + 1, strlen(slash + 1) + 1);
	}
	return 0;
}

/*
 * Open directory NAME under DIRFD (or the absolute NAME for AT_FDCWD)
 * without following a symlink, and check it as a directory we write in.
 */
static int
open_own_dir(int dirfd, const char *name, const char *shown, struct stat *st, char *err,
    size_t errlen)
{
	const char *why = NULL;
	int	 fd;

	if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		if (errno == ELOOP || errno == ENOTDIR)
			return refuse(err, errlen, shown, NULL, "is a symlink or not a directory");
		snprintf(err, errlen, "%s: %s", shown, strerror(errno));
		return -1;
	}
	if (fstat(fd, st) == -1 || (why = own_problem(st)) != NULL) {
		refuse(err, errlen, shown, st, why != NULL ? why : strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Is the directory open at FD one a perfmapd used, or empty?  Any other
 * directory is someone else's: taken over, it would lose its mode and
 * group (a typo of /var/lib, or /, shut every service and user out of
 * it).  A perfmapd's has its lock, its index or its segments; a planted
 * name of its (a symlink a user left while the directory was open to
 * them) counts too, to be refused by name before anything is changed
 * (statedir_open).  Other programs' directories of those names are not
 * perfmapd's: /usr/lib/debug, /run/lock and /var/lock are refused
 * (the last two by lock's check: not a regular file).
 */
static int
ours_or_empty(int fd)
{
	static const char *const names[] = { "lock", "index.db", "index.db-wal",
	    "index.db-shm", "segments" };
	static const char *const subdirs[] = { "exports", "profiles", "debug" };
	struct dirent *de;
	struct stat st;
	DIR	*d;
	size_t	 i;
	int	 dfd, empty = 1;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
			return 1;
	for (i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++)
		if (fstatat(fd, subdirs[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
			return 1;	/* planted */
	if ((dfd = dup(fd)) == -1 || (d = fdopendir(dfd)) == NULL) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	rewinddir(d);
	/* (a file system of its own mounted there has its lost+found) */
	while (empty && (de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
		    strcmp(de->d_name, "lost+found") != 0)
			empty = 0;
	closedir(d);
	return empty;
}

/* Group GID and MODE on the directory open at FD, if it has others. */
static int
take_over(int fd, const struct stat *st, gid_t gid, const char *shown, char *err,
    size_t errlen)
{
	mode_t	 mode = gid != 0 && gid != getegid() ? STATEDIR_MODE : STATEDIR_MODE_NOGROUP;
	struct stat now;

	if (st->st_gid != gid && fchown(fd, -1, gid) == -1) {
		snprintf(err, errlen, "%s: chown to group %u: %s", shown, (unsigned)gid,
		    strerror(errno));
		return -1;
	}
	if ((st->st_mode & 07777) != mode && fchmod(fd, mode) == -1) {
		snprintf(err, errlen, "%s: chmod %04o: %s", shown, (unsigned)mode, strerror(errno));
		return -1;
	}
	/* Without CAP_FSETID the kernel drops the setgid bit silently. */
	if (fstat(fd, &now) == 0 && (now.st_mode & 07777) != mode)
		log_warnx("%s: mode %04o, not %04o (without CAP_FSETID the setgid bit does not "
		    "stay, and new files get root's group)", shown,
		    (unsigned)(now.st_mode & 07777), (unsigned)mode);
	if (st->st_gid != gid || (st->st_mode & 07777) != mode)
		log_info("%s: mode %04o, group %u (was %04o, group %u)", shown, (unsigned)mode,
		    (unsigned)gid, (unsigned)(st->st_mode & 07777), (unsigned)st->st_gid);
	return 0;
}

static int
subdir(struct statedir *sd, const char *name, char *err, size_t errlen)
{
	char	 shown[PATH_MAX + 32];
	struct stat st;
	int	 fd, rc;

	snprintf(shown, sizeof(shown), "%s/%s", sd->path, name);
	if (mkdirat(sd->fd, name, 0750) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", shown, strerror(errno));
		return -1;
	}
	if ((fd = open_own_dir(sd->fd, name, shown, &st, err, errlen)) < 0)
		return -1;
	rc = take_over(fd, &st, sd->gid, shown, err, errlen);
	close(fd);
	return rc;
}

int
statedir_check_file(const struct statedir *sd, const char *name, char *err, size_t errlen)
{
	char	 shown[PATH_MAX + 32];
	struct stat st;

	snprintf(shown, sizeof(shown), "%s/%s", sd->path, name);
	if (fstatat(sd->fd, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", shown, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode))
		return refuse(err, errlen, shown, &st, "is not a regular file (a symlink?)");
	if (!trusted_owner(st.st_uid))
		return refuse(err, errlen, shown, &st, "is not owned by root");
	if (st.st_nlink != 1)
		return refuse(err, errlen, shown, &st, "has other hard links");
	return 0;
}

static int
lock(struct statedir *sd, char *err, size_t errlen)
{
	struct stat st;

	if (statedir_check_file(sd, "lock", err, errlen) < 0)
		return -1;
	sd->lockfd = openat(sd->fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC, 0640);
	if (sd->lockfd == -1 || fstat(sd->lockfd, &st) == -1) {
		snprintf(err, errlen, "%s/lock: %s", sd->path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || !trusted_owner(st.st_uid) || st.st_nlink != 1) {
		snprintf(err, errlen, "%s/lock changed while it was checked", sd->path);
		return -1;
	}
	if (flock(sd->lockfd, LOCK_EX | LOCK_NB) == -1) {
		snprintf(err, errlen, "state directory %s is in use by another perfmapd",
		    sd->path);
		return -1;
	}
	if (ftruncate(sd->lockfd, 0) == 0)
		dprintf(sd->lockfd, "%ld\n", (long)getpid());
	return 0;
}

int
statedir_open(struct statedir *sd, const char *dir, const char *group, int with_debug,
    char *err, size_t errlen)
{
	struct group *gr;
	struct stat st, lst;

	memset(sd, 0, sizeof(*sd));
	sd->fd = sd->lockfd = -1;
	if (resolve(dir, sd->path, err, errlen) < 0)
		goto fail;
	if (lstat(sd->path, &lst) == -1) {
		snprintf(err, errlen, "%s: %s", sd->path, strerror(errno));
		goto fail;
	}
	if ((sd->fd = open_own_dir(AT_FDCWD, sd->path, sd->path, &st, err, errlen)) < 0)
		goto fail;
	if (st.st_dev != lst.st_dev || st.st_ino != lst.st_ino) {
		refuse(err, errlen, sd->path, NULL, "changed while it was checked");
		goto fail;
	}
	if (group != NULL && (gr = getgrnam(group)) != NULL)
		sd->gid = gr->gr_gid;
	else {
		sd->gid = geteuid() == 0 ? 0 : getegid();
		/* the default's absence is documented; a name given that is no group, a typo */
		if (group != NULL && strcmp(group, STATEDIR_DEFAULT_GROUP) != 0)
			log_warnx("control_group %s: no such group: only root may send privileged "
			    "commands, and the state directory is root's group's", group);
	}
	if (strcmp(sd->path, "/") == 0 || !ours_or_empty(sd->fd)) {
		refuse(err, errlen, sd->path, &st, "holds files and none of perfmapd's: it is not a "
		    "state directory, and taking it over would change its mode and group (give a "
		    "new or empty directory)");
		goto fail;
	}
	/* its files checked before anything changes: a refused directory keeps its mode */
	if (statedir_check_file(sd, "lock", err, errlen) < 0 ||
	    statedir_check_file(sd, "index.db", err, errlen) < 0 ||
	    statedir_check_file(sd, "index.db-wal", err, errlen) < 0 ||
	    statedir_check_file(sd, "index.db-shm", err, errlen) < 0 ||
	    take_over(sd->fd, &st, sd->gid, sd->path, err, errlen) < 0 ||
	    lock(sd, err, errlen) < 0 ||
	    subdir(sd, "segments", err, errlen) < 0 ||
	    subdir(sd, "exports", err, errlen) < 0 ||
	    subdir(sd, "profiles", err, errlen) < 0 ||
	    (with_debug && subdir(sd, "debug", err, errlen) < 0))
		goto fail;
	return 0;
fail:
	if (strncmp(err, "state directory ", 16) != 0) {
		char	 why[1024];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "state directory %s: %s", dir, why);
	}
	statedir_close(sd);
	return -1;
}

void
statedir_close(struct statedir *sd)
{
	if (sd->lockfd >= 0)
		close(sd->lockfd);
	if (sd->fd >= 0)
		close(sd->fd);
	sd->fd = sd->lockfd = -1;
}

int
statedir_check_dir(const char *dir, char *err, size_t errlen)
{
	char	 canon[PATH_MAX];
	struct stat st;
	int	 fd;

	if (resolve(dir, canon, err, errlen) < 0 ||
	    (fd = open_own_dir(AT_FDCWD, canon, canon, &st, err, errlen)) < 0)
		return -1;
	close(fd);
	return 0;
}
