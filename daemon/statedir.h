/*
 * statedir.h - the state directory, checked before anything is written in
 * it.  perfmapd is root and writes where the configuration says; whoever
 * can write a directory on that path can redirect those writes (a planted
 * `lock` or `segments` symlink, an `index.db` link that SQLite follows).
 * So, as OpenSSH's StrictModes does for a user's files:
 *
 *	- every directory from / down to the state directory is owned by
 *	  root (or the daemon's own user, if it is not root) and writable
 *	  by nobody else, except a root-owned sticky
 *	  directory such as /tmp, where others cannot rename or remove what
 *	  root put there;
 *	- a symlink on the configured path is followed only if root owns it
 *	  and it lies in such a directory;
 *	- the state directory itself is root's, writable by nobody else; it
 *	  is created, or taken over, as mode 2750 with the group
 *	  control_group (0750 and root's group when there is no such group),
 *	  so that what the daemon creates in it is readable by that group and
 *	  nobody else (the daemon's umask is 027);
 *	- segments/, exports/, profiles/ and debug/ are the same (a control
 *	  group given later takes them over too); lock and index.db are
 *	  regular files of root's with one link, or absent.
 *
 * Anything else refuses the start with a message that says what to fix.
 * Once checked, no one but root can create, rename or remove a name in
 * these directories, so the paths the rooms build under them stay what
 * was checked; files are still created with O_NOFOLLOW or O_EXCL.
 */
#ifndef PERFMAPD_STATEDIR_H
#define PERFMAPD_STATEDIR_H

/* [daemon] control_group's default, which need not exist */
#define STATEDIR_DEFAULT_GROUP	"perfmapd"

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#define STATEDIR_MODE		02750	/* with a control group */
#define STATEDIR_MODE_NOGROUP	0750

struct statedir {
	int		 fd;		/* the state directory, O_DIRECTORY */
	int		 lockfd;	/* STATE/lock, flock()ed */
	gid_t		 gid;		/* its group */
	char		 path[PATH_MAX];	/* canonical */
};

/*
 * Check the path of DIR (absolute), create it if missing, take it over
 * (owner root, group GROUP's gid if it exists, mode STATEDIR_MODE), open
 * it, take its lock (pid written in), and check or create the
 * subdirectories segments/, exports/ and profiles/ (and debug/ with WITH_DEBUG).
 * 0, or -1 with ERR set; everything is released on failure.
 */
int	statedir_open(struct statedir *, const char *dir, const char *group,
	    int with_debug, char *err, size_t errlen);
void	statedir_close(struct statedir *);

/*
 * NAME in the state directory is absent, or a regular file of root's with
 * one link (not a symlink, not a hard link to something else).
 */
int	statedir_check_file(const struct statedir *, const char *name, char *err,
	    size_t errlen);

/*
 * A directory outside the state directory that the daemon writes ([cache]
 * dir): created (with its parents, 0750) if missing, then held to the
 * same rules, without a change of its mode or group.
 */
int	statedir_check_dir(const char *dir, char *err, size_t errlen);

#endif
