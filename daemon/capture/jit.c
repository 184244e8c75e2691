/*
 * jit.c - keeping JIT maps.  A JIT runtime (Node, a JVM agent, LuaJIT, ...)
 * names its generated code in /tmp/perf-PID.map, one "START SIZE NAME"
 * line per function; perf reads it while the process lives.  perfmapd
 * copies it next to the segments, so profiles name JIT frames after the
 * process and its file are gone:
 *
 *	loop: first anonymous executable mapping of PID: the uid of /proc/PID
 *	        ─► JOB_JIT_WATCH worker: note that owner, and the start time
 *	loop: PID exits, or a segment closes with PID alive ─► JOB_JIT_KEEP
 *	        worker: /tmp/perf-PID.map ─► STATE/segments/SEG.jit/perf-PID.map
 *
 * /tmp/perf-PID.map is written by the user: it is opened here, never on
 * the loop, with O_NOFOLLOW | O_NONBLOCK (no symlink, no FIFO that
 * blocks), kept only if fstat says a regular file owned by the process's
 * uid and at most SYMBOLIZE_JIT_MAX bytes, and read up to that size.  A
 * pid reused by another process (start time differs) is not kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "capture_int.h"
#include "log.h"
#include "profile.h"
#include "symbolize.h"

/* Field 22 of /proc/PID/stat (the start time in clock ticks), 0 if unknown. */
static uint64_t
proc_start(uint32_t pid)
{
	char	 path[64], buf[1024], *p;
	ssize_t	 n;
	int	 fd, field;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)	/* the comm may hold spaces and ')' */
		return 0;
	for (field = 2; field < 22 && p != NULL; field++)
		p = strchr(p + 1, ' ');
	return p != NULL ? strtoull(p + 1, NULL, 10) : 0;
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
	*e = c->jit[--c->njit];
}

void
run_jit_watch(struct capture *c, struct job *j)
{
	struct jitproc *e;

	if ((e = jit_find(c, j->pid)) == NULL) {
		if (c->njit == JIT_WATCH_MAX) {
			log_debug("jit: %u processes watched, pid %u is not", JIT_WATCH_MAX, j->pid);
			return;
		}
		e = &c->jit[c->njit++];
	}
	e->pid = j->pid;
	e->uid = j->uid;
	e->start = proc_start(j->pid);	/* 0 if it is gone already: pid reuse not told */
}

/* Copy IN (SIZE bytes at most) to DIR/perf-PID.map through a temporary name. */
static int
copy_map(int in, uint64_t size, const char *dir, uint32_t pid)
{
	char	 dst[PATH_MAX], tmp[PATH_MAX], buf[65536];
	uint64_t left = size;
	int	 out, rc = -1;

	if (mkdir(dir, 0750) == -1 && errno != EEXIST)
		return -1;
	snprintf(dst, sizeof(dst), "%s/perf-%u.map", dir, pid);
	snprintf(tmp, sizeof(tmp), "%s/.perf-%u.map.tmp", dir, pid);
	if ((out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640)) == -1)
		return -1;
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

void
run_jit_keep(struct capture *c, struct job *j)
{
	struct jitproc *e = jit_find(c, j->pid);
	struct stat st;
	char	 path[64], dir[PATH_MAX];
	int	 fd;

	if (e == NULL)
		return;
	if (!j->exited && e->start != 0 && proc_start(j->pid) != e->start) {
		jit_forget(c, e);	/* another process has the pid now */
		return;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", j->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd == -1)
		goto done;	/* it writes none (or a symlink: refused) */
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_uid != e->uid ||
	    (uint64_t)st.st_size > SYMBOLIZE_JIT_MAX) {
		log_debug("jit: %s is not a regular file of uid %u up to %d bytes: not kept",
		    path, e->uid, SYMBOLIZE_JIT_MAX);
		close(fd);
		goto done;
	}
	if ((size_t)snprintf(dir, sizeof(dir), "%s" PROFILE_JIT_SUFFIX, j->name) >= sizeof(dir) ||
	    copy_map(fd, (uint64_t)st.st_size, dir, j->pid) < 0)
		log_warn("jit: keeping %s in %s", path, dir);
	close(fd);
done:
	if (j->exited)
		jit_forget(c, e);
}
