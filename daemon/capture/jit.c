/*
 * jit.c - keeping JIT maps.  A JIT runtime (Node, a JVM agent, LuaJIT, ...)
 * names its generated code in /tmp/perf-PID.map, one "START SIZE NAME"
 * line per function; perf reads it while the process lives.  perfmapd
 * copies it next to the segments, so profiles name JIT frames after the
 * process and its file are gone:
 *
 *	loop: first anonymous executable mapping of PID: the uid of /proc/PID,
 *	        /proc/PID/root (O_PATH), its pid in its pid namespace
 *	        ─► JOB_JIT_WATCH worker: note that owner, the start time, and
 *	        the process's own /tmp (held open, shared: struct jittmp)
 *	loop: PID exits ─► JOB_JIT_KEEP (PID)
 *	      a segment closes ─► JOB_JIT_KEEP (pid 0: every process watched
 *	        that still lives; one job, however many there are)
 *	        worker: TMP/perf-NSPID.map ─► STATE/segments/SEG.jit/perf-PID.map
 *
 * The /tmp is the process's, not the daemon's: a container's, a unit's
 * PrivateTmp, and under the shipped unit (PrivateTmp=yes) the daemon's
 * own /tmp is not the host's either.  The map is named with the pid the
 * process sees (NSpid), as the runtime names it; it is kept under the
 * host's pid, which the segments use.  A process gone before its root
 * could be taken is looked for in the daemon's /tmp, as before.
 *
 * The map is written by the user: it is opened here, never on the loop,
 * in a /tmp reached from the process's root with RESOLVE_IN_ROOT and no
 * symlink, neither of which a user's FUSE server serves (userfs.c); the
 * map itself is looked at as O_PATH beneath that /tmp, through no symlink
 * and across no mount (a user can mount on the name in a namespace of
 * their own), and opened only if it is a regular file, kept only if owned
 * by the process's uid and at most SYMBOLIZE_JIT_MAX bytes, and read up
 * to that size.  A pid reused by another process (start time differs) is
 * not kept.  The /tmp directories held are shared by mount, at most
 * JIT_TMP_MAX, of which JIT_TMP_USERS_MAX users' and JIT_TMP_USER_MAX one
 * user's (root's containers always have the rest); when a new one does
 * not fit, processes that are gone are forgotten (jit_sweep), only
 * users' when the users' share is what is full, only that user's when
 * the user's own is.  The processes watched
 * are shared the same way: at most JIT_WATCH_MAX, of which
 * JIT_WATCH_USERS_MAX users' (not root's) and JIT_WATCH_USER_MAX one
 * user's, so that no user's idle processes with a page of executable
 * memory each keep root's JIT processes, or another user's, unwatched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <linux/openat2.h>

#include "capture_int.h"
#include "record/buildid_reader.h"
#include "log.h"
#include "procfs.h"
#include "profile.h"
#include "symbolize.h"
#include "walltime.h"

/* /proc/PID/WHAT into BUF (one read of at most LEN - 1 bytes, NUL ended); 0 if none. */
static int
proc_read(uint32_t pid, const char *what, char *buf, size_t len)
{
	char	 path[64];
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%u/%s", pid, what);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return 1;
}

/* A watch job's root fd, of a process of UID, counted (DELTA 1) or no more (-1). */
void
jit_roots_count(struct capture *c, uint32_t uid, int delta)
{
	atomic_fetch_add(&c->njitroots, (unsigned)delta);
	if (uid != 0)
		atomic_fetch_add(&c->njitroots_users, (unsigned)delta);
}

/*
 * PID as its own pid namespace numbers it (the last of NSpid), or 0 if
 * that cannot be read whole (a read cut short in a long Groups line would
 * give the first digits of another number: another process's map).
 */
uint32_t
jit_ns_pid(uint32_t pid)
{
	static char buf[16384];		/* the loop's: one thread */
	char	*p, *end;
	unsigned long v;

	if (!proc_read(pid, "status", buf, sizeof(buf)) || (p = strstr(buf, "\nNSpid:")) == NULL)
		return 0;
	p += 7;
	for (;;) {
		v = strtoul(p, &end, 10);
		if (end == p || v == 0 || v > UINT32_MAX)
			return 0;
		if (*end == '\n')
			return (uint32_t)v;
		if (*end != '\t' && *end != ' ')
			return 0;
		p = end;
	}
}

/* Whose gone processes a sweep forgets. */
#define SWEEP_ALL	UINT32_MAX		/* everyone's */
#define SWEEP_USERS	(UINT32_MAX - 1)	/* every user's but root's */

/*
 * A share of N slots taken of MAX, USERS of them users' (USERS_MAX at
 * most) and OWN of them UID's (USER_MAX at most): room for one of UID's?
 * Else *SWEEP: whose gone processes to forget for one (jit_sweep's WHO).
 */
static int
share_room(size_t n, size_t max, size_t users, size_t users_max, size_t own, size_t user_max,
    uint32_t uid, uint32_t *sweep)
{
	if (uid == 0)
		*sweep = SWEEP_ALL;
	else if (n >= max || users >= users_max)
		*sweep = SWEEP_USERS;
	else
		*sweep = uid;
	return n < max && (uid == 0 || (users < users_max && own < user_max));
}

/* Is there a /tmp slot for a process of UID?  Else *SWEEP (share_room). */
static int
tmp_room(const struct capture *c, uint32_t uid, uint32_t *sweep)
{
	size_t	 i, users = 0, own = 0;

	for (i = 0; i < c->njtmp; i++) {
		users += c->jtmp[i].uid != 0;
		own += c->jtmp[i].uid == uid;
	}
	return share_room(c->njtmp, JIT_TMP_MAX, users, JIT_TMP_USERS_MAX, own, JIT_TMP_USER_MAX,
	    uid, sweep);
}

static void
tmp_release(struct capture *c, int i)
{
	size_t	 k;

	if (i < 0 || --c->jtmp[i].refs > 0)
		return;
	close(c->jtmp[i].fd);
	c->jtmp[i] = c->jtmp[--c->njtmp];
	/* the entry moved into I: its processes follow it */
	for (k = 0; k < c->njit; k++)
		if (c->jit[k].tmp == (int)c->njtmp)
			c->jit[k].tmp = i;
}

void
jit_free(struct capture *c)
{
	while (c->njtmp > 0)
		close(c->jtmp[--c->njtmp].fd);
	c->njit = 0;
}

static struct jitproc *
jit_find(struct capture *c, uint32_t pid)
{
	size_t	 i;

	for (i = 0; i < c->njit; i++)
		if (c->jit[i].pid == pid)
			return &c->jit[i];
	return NULL;
}

static void
jit_forget(struct capture *c, struct jitproc *e)
{
	tmp_release(c, e->tmp);
	*e = c->jit[--c->njit];
}

/*
 * Forget the processes watched that are gone (an exit not seen, or its
 * keep job dropped), but SKIP's: WHO's (a uid, SWEEP_ALL, SWEEP_USERS);
 * BY_TMP: a uid's are those holding a /tmp of that user's.  Run only when
 * a slot is wanted and none is free: a process gone whose keep job is
 * still queued loses its map, so a user's shortage sweeps only users'
 * (its own when its own share is what is full), never root's.
 */
static int
sweep_of(const struct capture *c, const struct jitproc *e, uint32_t who, int by_tmp)
{
	if (who == SWEEP_ALL)
		return 1;
	if (who == SWEEP_USERS)
		return e->uid != 0;
	if (by_tmp)	/* that user's own, holding a /tmp that user found first */
		return e->uid == who && e->tmp >= 0 && c->jtmp[e->tmp].uid == who;
	return e->uid == who;
}

static void
jit_sweep(struct capture *c, uint32_t who, int by_tmp, uint32_t skip)
{
	struct jitproc *e;
	size_t	 i = 0;
	uint64_t *after = &c->jit_sweep_after[who != SWEEP_ALL];

	/*
	 * At most once a JIT_SWEEP_MS for root's shortages, and once for the
	 * users' (a sweep reads /proc for every process it may forget: a user
	 * past a share must not make the worker do it for each of its
	 * processes, nor take root's turn).
	 */
	if (mono_ns() < *after)
		return;
	*after = mono_ns() + JIT_SWEEP_MS * 1000000ULL;

	while (i < c->njit) {
		e = &c->jit[i];
		if (e->pid != skip && sweep_of(c, e, who, by_tmp) &&
		    (e->start == 0 || procfs_start(-1, e->pid) != e->start))
			jit_forget(c, e);	/* the last entry moves into I */
		else
			i++;
	}
}

/*
 * Is there a watch slot for a process of UID?  Else *SWEEP: whose gone
 * processes to forget for one (jit_sweep's WHO).
 */
static int
watch_room(const struct capture *c, uint32_t uid, uint32_t *sweep)
{
	size_t	 i, users = 0, own = 0;

	for (i = 0; uid != 0 && i < c->njit; i++) {
		users += c->jit[i].uid != 0;
		own += c->jit[i].uid == uid;
	}
	return share_room(c->njit, JIT_WATCH_MAX, users, JIT_WATCH_USERS_MAX, own,
	    JIT_WATCH_USER_MAX, uid, sweep);
}

/* STX is the daemon's own /tmp: the same directory through the same mount. */
static int
tmp_is_daemons(const struct statx *stx)
{
	struct statx own;

	if (statx(AT_FDCWD, "/tmp", AT_STATX_DONT_SYNC, STATX_INO | STATX_MNT_ID, &own) == -1)
		return 0;
	if (!(own.stx_mask & STATX_MNT_ID))
		own.stx_mnt_id = 0;
	return own.stx_ino == stx->stx_ino && own.stx_mnt_id == stx->stx_mnt_id &&
	    own.stx_dev_major == stx->stx_dev_major && own.stx_dev_minor == stx->stx_dev_minor;
}

/*
 * The /tmp under the root ROOTFD of a process of UID, held (shared by the
 * processes whose /tmp is the same directory through the same mount):
 * its index in jtmp[]; JIT_TMP_DAEMON: it is the daemon's own (nothing
 * held); JIT_TMP_NONE: refused or no room.  Not JIT_TMP_DAEMON for want of
 * room: the daemon's /tmp holds at most what a user put there under the
 * process's pid.  At most JIT_TMP_MAX held, of which JIT_TMP_USER_MAX a
 * user's; when a new one does not fit, processes gone are forgotten (not
 * PID's): the caller's pointers into jit[] are stale after this.
 */
static int
tmp_hold(struct capture *c, int rootfd, uint32_t uid, uint32_t pid)
{
	struct open_how how;
	struct statx stx;
	char	 why[PATH_MAX + 128];
	uint32_t sweep;
	size_t	 i;
	int	 fd;

	/* A user's FUSE root or /tmp: its server could hold the worker for ever. */
	if (userfs_fd(rootfd, pid, why, sizeof(why))) {
		log_debug("jit: a root %s", why);
		return JIT_TMP_NONE;
	}
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	if ((fd = (int)syscall(SYS_openat2, rootfd, "tmp", &how, sizeof(how))) == -1)
		return JIT_TMP_NONE;
	if (userfs_fd(fd, pid, why, sizeof(why))) {
		log_debug("jit: a /tmp %s", why);
		close(fd);
		return JIT_TMP_NONE;
	}
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO | STATX_MNT_ID,
	    &stx) == -1) {
		close(fd);
		return JIT_TMP_NONE;
	}
	if (!(stx.stx_mask & STATX_MNT_ID))
		stx.stx_mnt_id = 0;	/* before Linux 5.8: by device and inode alone */
	if (tmp_is_daemons(&stx)) {
		close(fd);
		return JIT_TMP_DAEMON;
	}
	for (i = 0; i < c->njtmp; i++)
		if (c->jtmp[i].mnt_id == stx.stx_mnt_id && c->jtmp[i].ino == stx.stx_ino &&
		    c->jtmp[i].dev == makedev(stx.stx_dev_major, stx.stx_dev_minor)) {
			c->jtmp[i].refs++;
			close(fd);
			return (int)i;
		}
	if (!tmp_room(c, uid, &sweep))	/* a user's shortage forgets no process of root's */
		jit_sweep(c, sweep, 1, pid);
	if (!tmp_room(c, uid, &sweep)) {
		log_debug("jit: %zu /tmp directories held, none more for uid %u", c->njtmp, uid);
		close(fd);
		return JIT_TMP_NONE;
	}
	c->jtmp[c->njtmp] = (struct jittmp){ .mnt_id = stx.stx_mnt_id, .ino = stx.stx_ino,
	    .dev = makedev(stx.stx_dev_major, stx.stx_dev_minor), .fd = fd, .uid = uid,
	    .refs = 1 };
	return (int)c->njtmp++;
}

void
run_jit_watch(struct capture *c, struct job *j)
{
	struct jitproc *e;
	uint32_t sweep;
	int	 tmp;

	if (j->fd >= 0)
		jit_roots_count(c, j->uid, -1);	/* its fd is closed with the job */
	if (jit_find(c, j->pid) == NULL && !watch_room(c, j->uid, &sweep))
		jit_sweep(c, sweep, 0, j->pid);	/* a slot wanted, none free */
	if ((e = jit_find(c, j->pid)) == NULL) {
		if (!watch_room(c, j->uid, &sweep)) {
			atomic_fetch_add(&c->n_jit_unwatched, 1);
			log_debug("jit: %zu processes watched, none more of uid %u: pid %u is not",
			    c->njit, j->uid, j->pid);
			return;
		}
		e = &c->jit[c->njit++];
	} else
		tmp_release(c, e->tmp);
	e->pid = j->pid;
	e->nspid = j->nspid;
	e->uid = j->uid;
	e->tmp = JIT_TMP_DAEMON;
	e->start = procfs_start(-1, j->pid);	/* 0 if it is gone already: pid reuse not told */
	e->kept_seg[0] = '\0';
	/*
	 * Its root not known (no fd to spare, or it exited: a zombie's
	 * namespaces are gone too): the daemon's /tmp, as before, unless its
	 * mount namespace is known to be another (where the map it writes is
	 * not the one under its pid in the daemon's /tmp).
	 */
	if (j->fd < 0 || j->nspid == 0) {
		struct stat own;

		if (j->mnt_ns != 0 && stat("/proc/self/ns/mnt", &own) == 0 &&
		    (uint64_t)own.st_ino != j->mnt_ns) {
			e->tmp = JIT_TMP_NONE;
			atomic_fetch_add(&c->n_jit_unwatched, 1);
		} else if (e->nspid == 0)
			e->nspid = e->pid;
		return;
	}
	tmp = tmp_hold(c, j->fd, j->uid, j->pid);
	if ((e = jit_find(c, j->pid)) == NULL) {	/* moved by a sweep, perhaps */
		tmp_release(c, tmp);
		return;
	}
	e->tmp = tmp;
	if (tmp == JIT_TMP_NONE)
		atomic_fetch_add(&c->n_jit_unwatched, 1);
}

/*
 * NAME in the held /tmp TMPFD (-1: the daemon's /tmp), opened for reading
 * if it is a regular file (else -1), *ST its state.  Looked at as O_PATH first,
 * beneath the directory, through no symlink and across no mount (a user
 * can mount a FUSE file system or bind a device on the name in a
 * namespace of their own): only a plain file of that /tmp is opened.
 */
static int
open_map(int tmpfd, const char *name, struct stat *st)
{
	struct open_how how;
	int	 dfd = tmpfd, pfd, fd;

	if (dfd < 0 && (dfd = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS |
	    RESOLVE_NO_MAGICLINKS;
	pfd = (int)syscall(SYS_openat2, dfd, name, &how, sizeof(how));
	if (dfd != tmpfd)
		close(dfd);
	if (pfd == -1)
		return -1;
	/* The state of the O_PATH handle: the caller judges it, a reopen reads it. */
	fd = buildid_reader_reopen_regular(pfd, st);
	close(pfd);
	return fd < 0 ? -1 : fd;
}

/*
 * Copy IN (SIZE bytes at most) to DIR/perf-PID.map through a temporary
 * name: 0640 (the control group's, as the segment is) when others could
 * read the original (MODE), else 0600, as private as it was.
 */
static int
copy_map(int in, uint64_t size, mode_t mode, const char *dir, uint32_t pid)
{
	char	 dst[PATH_MAX], tmp[PATH_MAX], buf[65536];
	uint64_t left = size;
	int	 out, rc = -1;

	if (mkdir(dir, 0750) == -1 && errno != EEXIST)
		return -1;
	snprintf(dst, sizeof(dst), "%s/perf-%u.map", dir, pid);
	snprintf(tmp, sizeof(tmp), "%s/.perf-%u.map.tmp", dir, pid);
	if ((out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) == -1)
		return -1;
	if ((mode & S_IROTH) && fchmod(out, 0640) == -1)
		goto out;
	while (left > 0) {
		ssize_t	 n = read(in, buf, left < sizeof(buf) ? (size_t)left : sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto out;
		if (n == 0)
			break;
		if (write(out, buf, (size_t)n) != n)
			goto out;
		left -= (uint64_t)n;
	}
	rc = 0;
out:
	if (close(out) == -1)
		rc = -1;
	if (rc == 0 && rename(tmp, dst) == -1)
		rc = -1;
	if (rc < 0)
		unlink(tmp);
	return rc;
}

/* Is the map in state ST the one E last kept, unchanged (any write moves the ctime)? */
static int
same_as_kept(const struct jitproc *e, const struct stat *st)
{
	return e->kept_seg[0] != '\0' && e->kept_dev == st->st_dev && e->kept_ino == st->st_ino &&
	    e->kept_size == (uint64_t)st->st_size && e->kept_ctime == ts_ns(&st->st_ctim);
}

/* E's last copy, linked into DIR as PID's: 0, or -1 (gone with its segment: copy). */
static int
link_kept(struct capture *c, const struct jitproc *e, const char *dir, uint32_t pid)
{
	char	 from[PATH_MAX], to[PATH_MAX];

	if ((size_t)snprintf(from, sizeof(from), "%s/%s" PROFILE_JIT_SUFFIX "/perf-%u.map",
	    c->segdir, e->kept_seg, pid) >= sizeof(from) ||
	    (size_t)snprintf(to, sizeof(to), "%s/perf-%u.map", dir, pid) >= sizeof(to) ||
	    (mkdir(dir, 0750) == -1 && errno != EEXIST))
		return -1;
	return link(from, to) == 0 ? 0 : -1;
}

/* The map in state ST is kept with segment SEGPATH now. */
static void
note_kept(struct jitproc *e, const struct stat *st, const char *segpath)
{
	const char *base = strrchr(segpath, '/') != NULL ? strrchr(segpath, '/') + 1 : segpath;

	e->kept_dev = st->st_dev;
	e->kept_ino = st->st_ino;
	e->kept_size = (uint64_t)st->st_size;
	e->kept_ctime = ts_ns(&st->st_ctim);
	if (strlen(base) < sizeof(e->kept_seg))
		memcpy(e->kept_seg, base, strlen(base) + 1);
	else
		e->kept_seg[0] = '\0';
}

/* E's map kept with segment J->name (J->exited: the process ended then; it is forgotten). */
static void
keep_one(struct capture *c, struct jitproc *e, const struct job *j)
{
	struct quota *q;
	struct stat st;
	char	 path[96], name[32], dir[PATH_MAX], why[256];
	int	 fd;

	if (!j->exited && e->start != 0 && procfs_start(-1, e->pid) != e->start) {
		jit_forget(c, e);	/* gone, another process has the pid now */
		return;
	}
	if (e->tmp == JIT_TMP_NONE) {
		log_debug("jit: pid %u's /tmp is not held: its map is not kept", e->pid);
		goto done;
	}
	snprintf(name, sizeof(name), "perf-%u.map", e->nspid);
	if (e->tmp >= 0)
		snprintf(path, sizeof(path), "/proc/%u/root/tmp/%s", e->pid, name);
	else
		snprintf(path, sizeof(path), "/tmp/%s", name);
	if ((fd = open_map(e->tmp >= 0 ? c->jtmp[e->tmp].fd : -1, name, &st)) < 0)
		goto done;	/* it writes none, or not as a plain file */
	/*
	 * Gone: the map under its name is its own only if nothing wrote it
	 * after the exit (a new process with its pid in its pid namespace, a
	 * container restarted over the same /tmp, writes its own there).
	 */
	if (j->exited > 1 && (uint64_t)ts_ns(&st.st_mtim) > j->exited + JIT_EXIT_SLACK_NS) {
		log_debug("jit: %s was written after its process %u exited: not kept", path,
		    e->pid);
		close(fd);
		goto done;
	}
	/* (one link: with protected_hardlinks off, a link to another's file of that uid) */
	if (!S_ISREG(st.st_mode) || st.st_uid != e->uid || st.st_nlink != 1 ||
	    (uint64_t)st.st_size > SYMBOLIZE_JIT_MAX) {
		log_debug("jit: %s is not a regular file of uid %u, one link, up to %d bytes: "
		    "not kept", path, e->uid, SYMBOLIZE_JIT_MAX);
		close(fd);
		goto done;
	}
	if ((size_t)snprintf(dir, sizeof(dir), "%s" PROFILE_JIT_SUFFIX, j->name) >= sizeof(dir)) {
		close(fd);
		goto done;
	}
	/*
	 * A long-lived process's map is kept again at every close: unchanged
	 * since its last keep, that copy is linked (no byte written, nothing
	 * charged).  Else a copy of a user's file into root's state
	 * directory: the user's share, the whole of it.
	 */
	if (!same_as_kept(e, &st) || link_kept(c, e, dir, e->pid) < 0) {
		if (user_share(c, e->uid, (uint64_t)st.st_size, &q, why, sizeof(why)) < 0) {
			log_debug("jit: %s not kept: %s", path, why);
			close(fd);
			goto done;
		}
		/* another namespace's /tmp (a container's, PrivateTmp=): its directories unknown, 0600 */
		if (copy_map(fd, (uint64_t)st.st_size, e->tmp >= 0 ? st.st_mode & ~(mode_t)S_IROTH :
		    st.st_mode, dir, e->pid) < 0) {
			log_warn("jit: keeping %s in %s", path, dir);
			close(fd);
			goto done;
		}
		user_share_charge(q, (uint64_t)st.st_size);
	}
	note_kept(e, &st, j->name);
	close(fd);
done:
	if (j->exited)
		jit_forget(c, e);
}

/*
 * PID's map kept with segment NAME, or (pid 0: a segment closes) the map
 * of every process watched that still lives.
 */
void
run_jit_keep(struct capture *c, struct job *j)
{
	struct jitproc *e;
	size_t	 i = 0, n;

	if (j->pid != 0) {
		if ((e = jit_find(c, j->pid)) != NULL)
			keep_one(c, e, j);
		return;
	}
	while (i < c->njit && !stop_late(c)) {
		n = c->njit;
		keep_one(c, &c->jit[i], j);
		if (c->njit == n)
			i++;	/* else forgotten: the last entry moved into I */
	}
	c->jit_late += c->njit - i;	/* a stop's bound came first: not kept (worker.c says so) */
}
