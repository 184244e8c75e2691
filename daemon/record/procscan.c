/*
 * procscan.c - the model at start-up, from /proc: every process's threads
 * and names, and its executable mappings with their build-ids.  After
 * that, the records keep the model up to date; /proc is never scanned
 * again.  The build-ids are read as for any mapping (resolver.h, on its
 * threads, each read bounded in time), a few dozen at a time: the
 * processes are alive, so map_files answers.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/mman.h>

#include "binaries.h"
#include "procfs.h"
#include "procscan.h"
#include "recorder.h"
#include "wallclock.h"
#include "walltime.h"

#define SCAN_BATCH	32	/* reads out at once */

struct scan {
	struct model	*m;
	struct resolver	*res;
	uint64_t	*unknown;
	struct resolve_req *head, **tail;
	size_t		 n;
	void		(*tick)(void *);
	void		*arg;
};

static void
tick(struct scan *sc)
{
	if (sc->tick != NULL)
		sc->tick(sc->arg);
}

/* Wait for the reads out, and put their answers into the model. */
static void
settle(struct scan *sc)
{
	struct resolve_req *q;
	const struct bid_answer *a;

	resolver_kick(sc->res);
	while ((q = sc->head) != NULL) {
		tick(sc);
		sc->head = q->next;
		resolver_check(sc->res, mono_ns());
		resolver_wait(sc->res, q);
		resolver_req_done(sc->res, q, mono_ns(), 0);
		a = resolver_req_answer(q);
		if (a->cause == BIDC_OK)
			model_set_map_buildid(sc->m, q->q.pid, q->q.addr, a->id, a->size,
			    bid_answer_name_flags(a), BID_USER);
		else
			sc->unknown[(unsigned)a->cause < BIDC_NCAUSES ? a->cause : BIDC_ERROR]++;
		resolver_req_put(sc->res, q, 0);
	}
	sc->tail = &sc->head;
	sc->n = 0;
}

static int
read_line(const char *path, char *buf, size_t len)
{
	FILE	*f = fopen(path, "re");
	char	*nl;

	if (f == NULL)
		return -1;
	if (fgets(buf, (int)len, f) == NULL) {
		fclose(f);
		return -1;
	}
	fclose(f);
	if ((nl = strchr(buf, '\n')) != NULL)
		*nl = '\0';
	return 0;
}

/* The state letter of thread TID of PID (its stat, after the name), or 0. */
static int
task_state(uint32_t pid, uint32_t tid)
{
	char	 buf[1024], path[64];
	const char *p;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	if (procfs_read(-1, path, buf, sizeof(buf)) < 0 ||
	    (p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return 0;
	return (unsigned char)p[2];
}

/*
 * PID's threads and their names into the model; returns a live thread's
 * id (PID's own if it lives), 0 if none.  A thread that has exited and
 * waits for its process (a zombie: a main thread that called
 * pthread_exit) is not one: its EXIT came before the events, so the model
 * would keep the process for good after its last thread's; the process's
 * leader is marked gone instead, and its maps are read through a live
 * thread (PID's own maps are its leader's, empty).
 */
static uint32_t
scan_threads(struct model *m, uint32_t pid)
{
	char	 path[64], comm[64];
	struct model_proc *p;
	DIR	*d;
	struct dirent *de;
	uint32_t live = 0;
	int	 leader_gone = 0, state;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char	 cpath[96];
		uint32_t tid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		tid = (uint32_t)strtoul(de->d_name, NULL, 10);
		if ((state = task_state(pid, tid)) == 'Z' || state == 'X') {
			leader_gone |= tid == pid;
			continue;
		}
		snprintf(cpath, sizeof(cpath), "/proc/%u/task/%u/comm", pid, tid);
		if (read_line(cpath, comm, sizeof(comm)) == 0 &&
		    model_set_comm(m, pid, tid, comm, 0) == 0 && (live == 0 || tid == pid))
			live = tid;
	}
	closedir(d);
	if (leader_gone && (p = model_find(m, pid)) != NULL)
		p->leader_gone = 1;
	return live;
}

int
procscan_ns(struct model *m, uint32_t pid, uint32_t tid, uint64_t before)
{
	char	 path[64];
	struct stat mnt, user;
	uint64_t start;
	int	 dfd, rc = -1;

	/*
	 * The directory holds on to the process: another under its pid is
	 * not seen through it.  Through thread TID (0: PID's own): a leader
	 * that has exited (a zombie) has no namespaces to show.
	 */
	if (tid == 0 || tid == pid)
		snprintf(path, sizeof(path), "/proc/%u", pid);
	else
		snprintf(path, sizeof(path), "/proc/%u/task/%u", pid, tid);
	if ((dfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	if (before != 0 && (start = procfs_start(dfd, pid)) != 0 &&
	    procfs_start_mono(start) > before)
		goto out;	/* started after: the pid's process is gone, this is another */
	if (fstatat(dfd, "ns/mnt", &mnt, 0) == 0 && fstatat(dfd, "ns/user", &user, 0) == 0)
		rc = model_set_ns(m, pid, (uint64_t)mnt.st_ino, (uint64_t)user.st_ino);
out:
	close(dfd);
	return rc;
}

/*
 * The wall-clock time PID's maps were not made before: its start (in
 * clock ticks, rounded down: never after it); 0 if unknown.  A step of
 * the wall clock since then moves it with the clock: a file written
 * before the start under a clock then ahead may be taken for a rewrite
 * (unknown, not wrong).
 */
static uint64_t
maps_floor(uint32_t pid)
{
	uint64_t ticks = procfs_start(-1, pid), start, now, wall;

	if (ticks == 0 || (start = procfs_start_mono(ticks)) == 0)
		return 0;
	now = mono_ns();
	wall = (uint64_t)walltime_now();
	if (now < start || wall < now - start)
		return 0;
	return wall - (now - start);
}

static void
scan_maps(struct scan *sc, uint32_t pid, uint32_t tid)
{
	char	 path[64], line[PATH_MAX + 256];
	struct resolve_req *q;
	struct bid_when when = { 0, 0, maps_floor(pid), 0 };
	int64_t	 wall;
	FILE	*f;

	/* The names read below are the kernel's of after this look. */
	if ((wall = wallclock_look(&when.since_ns)) > 0)
		when.named_ns = (uint64_t)wall;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/maps", pid, tid);
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (procfs_line(f, line, sizeof(line))) {
		struct record_mmap r;
		unsigned long long start, end, off, ino;
		unsigned int maj, min;
		char	 perms[8];
		int	 n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms,
		    &off, &maj, &min, &ino, &n) < 7 || n == 0 || perms[2] != 'x')
			continue;
		memset(&r, 0, sizeof(r));
		r.pid = r.tid = pid;
		r.addr = start;
		r.len = end - start;
		r.pgoff = off;
		r.has_inode = 1;
		r.maj = maj;
		r.min = min;
		r.ino = ino;
		r.prot = (perms[0] == 'r' ? PROT_READ : 0) |
		    (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
		r.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		r.filename = line + n;
		if (r.filename[0] == '\0')
			r.filename = "//anon";
		model_add_map(sc->m, &r, BID_NONE, BINARY_NONE);
		/* When it was mapped is unknown: only map_files can answer (it is alive). */
		if (!buildid_reader_is_file(r.filename) ||
		    (q = resolver_req_new(sc->res, &r, when,
		    mono_ns())) == NULL)
			continue;
		q->next = NULL;
		*sc->tail = q;
		sc->tail = &q->next;
		resolver_queue(sc->res, q);
		if (++sc->n >= SCAN_BATCH)
			settle(sc);
	}
	fclose(f);
}

int
procscan_run(struct model *m, struct resolver *res, uint64_t unknown[BIDC_NCAUSES],
    void (*tickfn)(void *), void *arg)
{
	struct scan sc = { m, res, unknown, NULL, NULL, 0, tickfn, arg };
	struct model_proc *p;
	DIR	*d;
	struct dirent *de;
	uint32_t live;
	uint64_t begin;
	int	 n = 0;

	sc.tail = &sc.head;
	if ((d = opendir("/proc")) == NULL)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		uint32_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (uint32_t)strtoul(de->d_name, NULL, 10);
		tick(&sc);
		begin = mono_ns();
		if ((live = scan_threads(m, pid)) == 0 || model_find(m, pid) == NULL)
			continue;	/* gone already */
		procscan_ns(m, pid, live, 0);
		scan_maps(&sc, pid, live);
		if ((p = model_find(m, pid)) != NULL) {
			/* what it saw was there then: changes before BEGIN, perhaps those after */
			p->scan_begin_ns = begin;
			p->scan_ns = mono_ns();
		}
		n++;
	}
	closedir(d);
	settle(&sc);
	return n;
}
