/*
 * worker.c - the capture worker thread: it takes every queued job,
 * pins the map_files of map jobs first (an open fd keeps a short-lived
 * process's binary readable), then runs the jobs one by one.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildid.h"
#include "capture_int.h"
#include "log.h"
#include "record/buildid_reader.h"
#include "walltime.h"

static void
run_job(struct capture *c, struct job *j)
{
	char	 why[1024] = "", hex[BUILD_ID_HEX_MAX];
	int	 rc;

	switch (j->kind) {
	case JOB_MAP:
	case JOB_MISSED:
		run_map(c, j);
		break;
	case JOB_KERNEL:
		rc = store_kallsyms(c, j->id, j->idlen, NULL, 0, why, sizeof(why));
		goto kernel;
	case JOB_MODULE:
		rc = store_module(c, j->name, j->id, j->idlen, NULL, 0, why, sizeof(why));
		goto kernel;
	case JOB_VDSO:
		rc = store_vdso(c, j->id, j->idlen, NULL, 0, why, sizeof(why));
	kernel:
		if (rc < 0) {
			buildid_to_hex(j->id, j->idlen, hex);
			atomic_fetch_add(&c->n_failed, 1);
			fail_note(c, j->id, j->idlen, why);
			log_warnx("capture %s %s: %s", hex, j->name ? j->name : "", why);
		} else
			count_result(c, rc);
		break;
	case JOB_CLOSED:
		if (c->mode == CAPTURE_LAZY) {
			j->segments = json_pack("[s]", j->name);
			run_store(c, j);
		}
		evict_maybe(c, 1);
		break;
	case JOB_STORE:
		run_store(c, j);
		break;
	case JOB_EXPORT:
		run_export(c, j);
		break;
	case JOB_JIT_WATCH:
		run_jit_watch(c, j);
		break;
	case JOB_JIT_KEEP:
		run_jit_keep(c, j);
		break;
	case JOB_PROFILE:	/* a snapshot's period: captures done, over to profile.c */
		profile_handoff(c, j);
		break;
	}
}

/*
 * Open /proc/PID/map_files/... of every map job not yet pinned: an open fd
 * keeps the mapped inode readable after the process exits and the file is
 * unlinked, so short-lived processes wait only for this, not for copies.
 */
static void
pin_maps(struct capture *c, struct jobq *q, size_t *pinned)
{
	struct job *j;
	struct stat st;
	char	 why[PATH_MAX + 128];

	TAILQ_FOREACH(j, q, entry) {
		if (*pinned >= PIN_MAX)
			return;
		if (j->kind != JOB_MAP || j->fd >= 0 || j->pin_errno != 0)
			continue;
		/* A user's FUSE server could hold the open for ever: run_map says why. */
		if ((j->fd = buildid_reader_open_mapped(j->pid, j->addr, j->len, j->has_inode,
		    j->maj, j->min, j->ino, j->gen, userfs_guard(why, j->pid), &st)) < 0) {
			j->pin_errno = -j->fd;
			j->fd = -1;
		} else {
			j->pinned = 1;
			(*pinned)++;
		}
	}
}

int
stop_late(struct capture *c)
{
	uint64_t now = mono_ns(), asked = atomic_load(&c->stop_asked);

	if (c->stop_by != 0)		/* the worker's turn to the last jobs: its own 2 s */
		return now >= c->stop_by;
	return asked != 0 && now >= asked + CAPTURE_STOP_KEEP_MS * 1000000ULL;
}

/* What a stop still does: 1 the JIT maps, 2 the binaries the segments name, 0 nothing. */
static int
stop_rank(const struct capture *c, const struct job *j)
{
	switch (j->kind) {
	case JOB_JIT_WATCH:
	case JOB_JIT_KEEP:
		return 1;
	case JOB_MAP:
	case JOB_KERNEL:
	case JOB_MODULE:
	case JOB_VDSO:
		return 2;
	case JOB_CLOSED:	/* lazy: the last segment's binaries (eager: an eviction) */
		return c->mode == CAPTURE_LAZY ? 2 : 0;
	default:		/* a client's request (cancelled), a missed map, a profile */
		return 0;
	}
}

/*
 * Stop asked: within CAPTURE_STOP_KEEP_MS, the JIT maps still to keep
 * (the last segment's, queued at its close, each perhaps after the watch
 * it needs), then the copies of binaries still queued (each pinned map
 * reads after its process is gone; a lazy store stops at the deadline),
 * each in queue order; LOCAL and the queue then hold only what is
 * dropped.
 */
static void
finish_on_stop(struct capture *c, struct jobq *local)
{
	struct job *j, *next;
	size_t	 late[3] = { 0, 0, 0 };
	int	 rank;

	c->stop_by = mono_ns() + CAPTURE_STOP_KEEP_MS * 1000000ULL;
	pthread_mutex_lock(&c->mu);
	TAILQ_CONCAT(local, &c->jobs, entry);
	pthread_mutex_unlock(&c->mu);
	for (rank = 1; rank <= 2; rank++)
		for (j = TAILQ_FIRST(local); j != NULL; j = next) {
			next = TAILQ_NEXT(j, entry);
			if (stop_rank(c, j) != rank)
				continue;
			if (mono_ns() >= c->stop_by) {
				/* a watch's keep counts; a close's one job, every map it was to keep */
				late[rank] += j->kind == JOB_JIT_KEEP && j->pid == 0 ? c->njit :
				    j->kind != JOB_JIT_WATCH;
				continue;
			}
			TAILQ_REMOVE(local, j, entry);
			run_job(c, j);
			job_free(j);
		}
	late[1] += c->jit_late;
	if (late[1] > 0 || late[2] > 0)
		log_warnx("capture: stopping: %zu JIT maps not kept and %zu binary copies not "
		    "made within %d ms", late[1], late[2], CAPTURE_STOP_KEEP_MS);
}

void *
worker_main(void *arg)
{
	struct capture *c = arg;
	struct jobq local = TAILQ_HEAD_INITIALIZER(local);
	struct job *j;
	size_t	 pinned = 0;

	for (;;) {
		pthread_mutex_lock(&c->mu);
		while (!c->stop && TAILQ_EMPTY(&c->jobs) && TAILQ_EMPTY(&local))
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->stop) {
			pthread_mutex_unlock(&c->mu);
			finish_on_stop(c, &local);
			break;
		}
		TAILQ_CONCAT(&local, &c->jobs, entry);
		pthread_mutex_unlock(&c->mu);
		pin_maps(c, &local, &pinned);
		j = TAILQ_FIRST(&local);
		TAILQ_REMOVE(&local, j, entry);
		if (j->pinned)
			pinned--;
		run_job(c, j);
		pthread_mutex_lock(&c->mu);
		if (j->kind == JOB_MAP)
			c->nmap--;
		else if (j->kind == JOB_MISSED)
			c->nmissed--;
		else if (j->kind == JOB_JIT_WATCH || j->kind == JOB_JIT_KEEP) {
			c->njitq--;
			c->njitq_users -= j->uid != 0;
		}
		pthread_mutex_unlock(&c->mu);
		job_free(j);
		if (c->max_size != 0 && c->cache.size > c->max_size)
			evict_maybe(c, 0);
	}
	while ((j = TAILQ_FIRST(&local)) != NULL) {
		TAILQ_REMOVE(&local, j, entry);
		job_free(j);
	}
	return NULL;
}
