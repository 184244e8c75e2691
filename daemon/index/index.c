/*
 * index.c - the writer of STATE/index.db: open (check, migrate, rebuild,
 * rebuild_reconcile), the hand-over of batches from the loop to the writer thread,
 * and close.  See index.h for the threads and common/index_reader.h for
 * the schema.
 *
 * A commit turns the queued segment events and the dirty rows
 * (table.c) into one batch of operations, in an order that keeps every
 * reference valid inside the transaction:
 *
 *	segment events (open, close, deleted, modules) in arrival order
 *	objects                     what changed, added to the row of
 *	                            (path, build-id, namespace) (writer.c),
 *	                            with the sightings in the current segment
 *	sightings in segments left behind by a rotation
 *	unresolved mappings
 *
 * The writer thread (writer.c) takes every batch queued when it gets to
 * them and commits them in one transaction (a writer that falls behind
 * catches up with bigger transactions).  A crash loses at most the batches
 * not yet committed, and index_open's reconciliation (rebuild.c) scans the
 * segments those rows came from.  A batch holds copies of its paths: the
 * binaries they name may be forgotten (binaries_prune) before the writer
 * gets to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "index_int.h"
#include "index_reader.h"
#include "log.h"
#include "walltime.h"

/* ---------------------------------------------------------------- commit */

/* The row of B as an operation: what changed since the last hand-over. */
static int
op_from_obj(struct write_op *o, struct obj_row *e, const struct binary *b)
{
	if ((o->owned = strdup(b->path)) == NULL)
		return -1;
	o->s = o->owned;	/* a copy: B may be forgotten before the writer runs */
	o->is_new = !(e->flags & OBJ_WRITTEN);
	e->flags |= OBJ_WRITTEN;
	o->v[0] = e->id;
	o->v[1] = (int64_t)e->first;
	o->v[2] = (int64_t)e->last;
	o->v[3] = (int64_t)(e->nr_maps - e->sent_maps);
	o->v[4] = (int64_t)(e->nr_procs - e->sent_procs);
	o->v[5] = (int64_t)b->ns;
	o->v[6] = b->ns != 0 ? b->ns_uid : -1;
	e->sent_maps = e->nr_maps;
	e->sent_procs = e->nr_procs;
	memcpy(o->bid, b->bid, b->bidsize);
	o->bidsize = b->bidsize;
	o->kind = b->kind;
	o->source = e->source;
	return 0;
}

void
op_from_objseg(struct write_op *o, struct obj_row *e)
{
	o->v[0] = e->id;
	o->sv[0] = (int64_t)e->seg_seq;
	o->sv[1] = (int64_t)e->seg_first;
	o->sv[2] = (int64_t)e->seg_last;
	/*
	 * The maps since the last hand-over, added by the writer: a row that
	 * takes another id (forgotten and seen again, the daemon restarted)
	 * counts again from 0 in a segment its old id has sightings in.
	 */
	o->sv[3] = (int64_t)(e->seg_maps - e->seg_sent);
	e->seg_sent = e->seg_maps;
}

static uint64_t
pending_rows(struct index *ix)
{
	return ix->early.n + ix->late.n + ix->ndirty;
}

/* B to the writer, numbered. */
static void
queue_batch(struct index *ix, struct write_batch *b)
{
	pthread_mutex_lock(&ix->mu);
	b->seq = ++ix->q_seq;
	pthread_mutex_unlock(&ix->mu);
	if (!ix->running) {		/* at open: synchronously */
		writer_run_batches(ix, b);
		pthread_mutex_lock(&ix->mu);
		ix->done_seq = b->seq;
		pthread_mutex_unlock(&ix->mu);
		batch_free_list(b);
		return;
	}
	pthread_mutex_lock(&ix->mu);
	if (ix->q_tail != NULL)
		ix->q_tail->next = b;
	else
		ix->q_head = b;
	ix->q_tail = b;
	pthread_cond_signal(&ix->cv_work);
	pthread_mutex_unlock(&ix->mu);
}

void
index_commit(struct index *ix)
{
	struct write_batch *b;
	struct write_op *o;
	size_t	 i;

	ix->last_commit_ns = mono_ns();
	ix->news = 0;
	if (pending_rows(ix) == 0 && !ix->unres_dirty)
		return;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		goto oom;
	b->plain = ix->early.n == 0 && ix->late.n == 0 && !ix->forgot;
	if (batch_move(b, &ix->early) < 0)
		goto oom;
	for (i = 0; i < ix->ndirty; i++) {
		struct obj_row *e = OBJ(ix, ix->dirty[i]);

		if (!(e->flags & OBJ_DIRTY) || (o = batch_add(b, OP_OBJ)) == NULL)
			continue;
		if (op_from_obj(o, e, BIN(ix, ix->dirty[i])) < 0) {
			b->n--;		/* out of memory: this sighting is lost */
			continue;
		}
		if (e->flags & OBJ_SEG_DIRTY) {	/* the current segment's, with the row */
			op_from_objseg(o, e);
			o->fold = !o->is_new && (e->flags & OBJ_FOLD);
			if (o->is_new)
				e->flags |= OBJ_FOLD;	/* until seg_seq changes (table.c) */
		}
		e->flags &= OBJ_WRITTEN | OBJ_FOLD;
	}
	if (batch_move(b, &ix->late) < 0)
		goto oom;
	for (i = 0; i < ix->ndirty; i++) {
		struct obj_row *e = OBJ(ix, ix->dirty[i]);

		if ((e->flags & OBJ_SEG_DIRTY) && (o = batch_add(b, OP_OBJSEG)) != NULL)
			op_from_objseg(o, e);	/* a row not handed over (out of memory) */
		e->flags &= OBJ_WRITTEN | OBJ_FOLD;
	}
	ix->ndirty = 0;
	if (ix->unres_dirty) {
		for (i = 0; i < ix->nunres; i++) {
			struct unres_row *u = &ix->unres[i];

			if (!u->dirty || (o = batch_add(b, OP_UNRES)) == NULL)
				continue;
			if ((o->owned = strdup(u->path)) == NULL) {
				b->n--;
				continue;
			}
			o->s = o->owned;
			o->reason = u->reason;
			o->v[0] = (int64_t)u->first;
			o->v[1] = (int64_t)u->last;
			o->v[2] = (int64_t)(u->n - u->sent);
			u->sent = u->n;
			u->dirty = 0;
		}
		ix->unres_dirty = 0;
		table_trim_unresolved(ix);
	}
	ix->forgot = 0;
	queue_batch(ix, b);
	return;
oom:
	log_warnx("index: out of memory, rows dropped");
	if (b != NULL) {
		batch_free(b);
		free(b);
	}
}

int
index_flush(struct index *ix)
{
	uint64_t errs;

	if (ix == NULL)
		return 0;
	pthread_mutex_lock(&ix->mu);
	errs = ix->w_errors;
	pthread_mutex_unlock(&ix->mu);
	index_commit(ix);
	if (!ix->running)
		return ix->w_errors > errs ? -1 : 0;
	pthread_mutex_lock(&ix->mu);
	while (ix->q_head != NULL || ix->busy)
		pthread_cond_wait(&ix->cv_idle, &ix->mu);
	errs = ix->w_errors - errs;
	pthread_mutex_unlock(&ix->mu);
	return errs ? -1 : 0;
}

/*
 * The hand-over a query waits for.  Every transaction costs the writer a
 * few hundred microseconds however little it writes, and splits a burst's
 * inserts into the big trees into smaller, dearer ones (tests/bench/
 * RESULTS.md, "Where the writer's floor is"); a user who may query (with
 * public_queries, anyone) asking in a loop made one per call.  So queries
 * hand over at most every INDEX_HANDOFF_GAP_MS (or commit_interval, if
 * shorter): one that comes sooner is promised the next hand-over, which
 * a timer brings at the gap's end, and its thread waits for that one
 * (index_wait), off the loop.  Its answer is as current as before.
 */
static uint64_t
handoff_gap_ns(const struct index *ix)
{
	uint64_t ms = ix->conf->index_commit_ms;

	return (ms != 0 && ms < INDEX_HANDOFF_GAP_MS ? ms : INDEX_HANDOFF_GAP_MS) * 1000000ULL;
}

/*
 * The hand-over promised to queries: the rows pending then, or an empty
 * batch when none are left (a row forgotten); out of memory, again soon.
 */
static void
handoff_due(struct index *ix)
{
	struct write_batch *b;
	struct timeval tv = { 0, 10000 };

	if (ix->q_seq < ix->owed_seq)
		index_commit(ix);
	if (ix->q_seq >= ix->owed_seq)
		return;
	if ((b = calloc(1, sizeof(*b))) != NULL) {
		b->plain = 1;
		queue_batch(ix, b);
	} else if (ix->handoff_ev != NULL)
		evtimer_add(ix->handoff_ev, &tv);
}

static void
handoff_cb(evutil_socket_t fd, short what, void *arg)
{
	handoff_due(arg);
}

void
index_settle(struct index *ix)
{
	if (ix == NULL)
		return;
	if (ix->handoff_ev != NULL)
		evtimer_del(ix->handoff_ev);
	handoff_due(ix);
	if (ix->handoff_ev != NULL)
		evtimer_del(ix->handoff_ev);	/* out of memory: no loop will retry */
	if (ix->q_seq < ix->owed_seq) {
		/* Not kept: the queries waiting for it answer with what is written. */
		pthread_mutex_lock(&ix->mu);
		ix->settled = 1;
		pthread_cond_broadcast(&ix->cv_idle);
		pthread_mutex_unlock(&ix->mu);
	}
}

uint64_t
index_handoff(struct index *ix)
{
	uint64_t now, gap;
	struct timeval tv;

	if (ix == NULL)
		return 0;
	if (pending_rows(ix) == 0 && !ix->unres_dirty)
		return ix->owed_seq > ix->q_seq ? ix->owed_seq : ix->q_seq;
	now = mono_ns();
	gap = handoff_gap_ns(ix);
	if (ix->handoff_ev == NULL && ix->base != NULL)
		ix->handoff_ev = evtimer_new(ix->base, handoff_cb, ix);
	if (ix->handoff_ev == NULL || now - ix->last_commit_ns >= gap) {
		index_commit(ix);
		return ix->q_seq;	/* written by this thread only */
	}
	if (!evtimer_pending(ix->handoff_ev, NULL)) {
		gap -= now - ix->last_commit_ns;
		tv.tv_sec = (time_t)(gap / 1000000000ULL);
		tv.tv_usec = (suseconds_t)(gap % 1000000000ULL / 1000);
		if (evtimer_add(ix->handoff_ev, &tv) == -1) {
			index_commit(ix);
			return ix->q_seq;
		}
	}
	ix->owed_seq = ix->q_seq + 1;	/* promised only with the timer set */
	return ix->owed_seq;
}

void
index_wait(struct index *ix, uint64_t seq)
{
	if (ix == NULL)
		return;
	pthread_mutex_lock(&ix->mu);
	while (ix->done_seq < seq && ix->running && !ix->stopping && !ix->settled)
		pthread_cond_wait(&ix->cv_idle, &ix->mu);
	pthread_mutex_unlock(&ix->mu);
}

void
index_tick(struct index *ix)
{
	uint64_t now, lag;

	if (ix == NULL)
		return;
	now = mono_ns();
	if (ix->conf->index_retention_ms != 0 &&
	    now - ix->last_retention_ns >= RETENTION_EVERY_NS) {
		struct write_op *o = batch_add(&ix->early, OP_RETENTION);

		ix->last_retention_ns = now;
		if (o != NULL)
			o->v[0] = walltime_now() - (int64_t)(ix->conf->index_retention_ms * 1000000ULL);
	}
	/*
	 * News (new objects, unresolved paths, an object's first sighting in a
	 * segment, segment and module events) every commit_interval; counts
	 * of sightings alone every INDEX_COUNTS_LAG of them.  A query hands over
	 * what is pending first (index_handoff): the daemon's answers are
	 * current either way.  A tick an eighth of an interval early counts:
	 * the ticks come every interval.
	 */
	lag = now - ix->last_commit_ns + ix->conf->index_commit_ms * 1000000ULL / 8;
	if (lag >= ix->conf->index_commit_ms * 1000000ULL &&
	    (ix->news || ix->early.n > 0 || ix->late.n > 0 ||
	    lag >= INDEX_COUNTS_LAG * ix->conf->index_commit_ms * 1000000ULL))
		index_commit(ix);
}

void
index_maybe_commit(struct index *ix)
{
	if (pending_rows(ix) >= ix->conf->index_commit_rows)
		index_commit(ix);
}

void
index_get_stats(struct index *ix, struct index_stats *s)
{
	*s = ix->stats;
	s->objects = ix->nobjs;
	s->pending = pending_rows(ix);
	pthread_mutex_lock(&ix->mu);
	s->batches = ix->w_batches;
	s->rows_written = ix->w_rows;
	s->commit_us_last = ix->w_us_last;
	s->commit_us_max = ix->w_us_max;
	s->errors = ix->w_errors;
	s->pruned = ix->w_pruned;
	s->prune_runs = ix->w_prune_runs;
	s->wal_restarts = ix->w_wal_restarts;
	pthread_mutex_unlock(&ix->mu);
}

/* ---------------------------------------------------------------- open/close */

/* Row ids go on from the highest in the file (rows are not loaded: see obj_row). */
static int
load_next_id(struct index *ix, char *err, size_t errlen)
{
	sqlite3_stmt *s;
	int	 rc;

	if (sqlite3_prepare_v2(ix->db, "SELECT coalesce(max(id), 0) FROM objects", -1, &s,
	    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", ix->path, sqlite3_errmsg(ix->db));
		return -1;
	}
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		ix->next_id = sqlite3_column_int64(s, 0) + 1;
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW) {
		snprintf(err, errlen, "%s: %s", ix->path, sqlite3_errmsg(ix->db));
		return -1;
	}
	return 0;
}

/*
 * quick_check's words for a page it could not read ("unable to get the
 * page. error code=266"): the first such code that is not the file's own
 * damage (I/O, out of memory, busy), else 0.
 */
static int
read_failure(const char *res)
{
	const char *p = res;
	int	 code;

	while ((p = strstr(p, "error code=")) != NULL) {
		p += sizeof("error code=") - 1;
		code = atoi(p);
		if ((code & 0xff) != SQLITE_CORRUPT && (code & 0xff) != SQLITE_NOTADB && code != 0)
			return code;
	}
	return 0;
}

/* Open and check; 1 if the file is damaged, -1 on other errors. */
static int
db_open(struct index *ix, char *err, size_t errlen)
{
	sqlite3_stmt *s;
	const char *res;
	char	 sql[256];
	int	 rc, damaged = 0;

	/* No symlink anywhere on the path, nor as the file or its -wal/-shm. */
	rc = sqlite3_open_v2(ix->path, &ix->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", ix->path, ix->db ? sqlite3_errmsg(ix->db) :
		    sqlite3_errstr(rc));
		return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ? 1 : -1;
	}
	sqlite3_busy_timeout(ix->db, 5000);
	sqlite3_extended_result_codes(ix->db, 0);
	/*
	 * New files only: larger pages (fewer splits for the random inserts
	 * of the indexes), and pages freed by pruning given back to the file
	 * system (writer.c, writer_prune).
	 */
	sqlite3_exec(ix->db, "PRAGMA page_size = 16384; PRAGMA auto_vacuum = INCREMENTAL",
	    NULL, NULL, NULL);
	rc = sqlite3_exec(ix->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
	if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB)
		damaged = 1;
	else if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", ix->path, sqlite3_errmsg(ix->db));
		return -1;
	}
	if (!damaged) {
		rc = sqlite3_prepare_v2(ix->db, "PRAGMA quick_check", -1, &s, NULL);
		if (rc == SQLITE_OK) {
			/*
			 * Damage is a row that is not "ok", or the file's own
			 * word (CORRUPT, NOTADB).  Any other failure (a transient
			 * EIO, BUSY, out of memory) is not the file's: the start
			 * fails and says so, and the index is not moved aside
			 * (with it, the history of every deleted segment).
			 */
			int	 rf;

			rc = sqlite3_step(s);
			res = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(s, 0) : NULL;
			rf = res != NULL ? read_failure(res) : 0;
			if (rc == SQLITE_ROW && rf != 0) {
				/* quick_check words a page it could not read as a row */
				snprintf(err, errlen, "%s: quick_check could not read it (%s): "
				    "not taken for damage", ix->path, sqlite3_errstr(rf));
				sqlite3_finalize(s);
				return -1;
			} else if (rc == SQLITE_ROW && (res == NULL || strcmp(res, "ok") != 0)) {
				snprintf(err, errlen, "%s", res ? res : "quick_check: no answer");
				damaged = 1;
			} else if (rc != SQLITE_ROW) {
				snprintf(err, errlen, "%s: quick_check: %s", ix->path,
				    sqlite3_errmsg(ix->db));
				damaged = rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
				if (!damaged) {
					sqlite3_finalize(s);
					return -1;
				}
			}
			sqlite3_finalize(s);
		} else {
			snprintf(err, errlen, "%s", sqlite3_errmsg(ix->db));
			damaged = rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
			if (!damaged)
				return -1;
		}
	} else
		snprintf(err, errlen, "%s", sqlite3_errmsg(ix->db));
	if (damaged)
		return 1;
	/* cache_size < 0: in KiB.  The memory the writer keeps, whatever the index's size. */
	/* The WAL is cut back to 4 MiB at each checkpoint: a burst does not keep its size. */
	snprintf(sql, sizeof(sql), "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -%llu; "
	    "PRAGMA temp_store = MEMORY; PRAGMA wal_autocheckpoint = 0; "
	    "PRAGMA journal_size_limit = 4194304",
	    (unsigned long long)(ix->conf->index_cache_size / 1024));
	sqlite3_exec(ix->db, sql, NULL, NULL, NULL);
	return 0;
}

/*
 * SQLite's word on a damaged file may quote the damage ("malformed
 * database schema (<a name read from the file>)"): one line of printable
 * ASCII, whatever bytes the file holds.
 */
static void
printable_line(char *s)
{
	unsigned char *p;

	for (p = (unsigned char *)s; *p != '\0'; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = *p == '\n' ? ' ' : '?';
}

/* index.db (and its -wal, -shm) -> index.db.corrupt-<time>. */
static int
move_aside(struct index *ix, char *aside, size_t asidelen, char *err, size_t errlen)
{
	static const char *const sfx[] = { "", "-wal", "-shm" };
	char	 from[PATH_MAX + 8], to[PATH_MAX + 48];
	long long t = (long long)time(NULL);
	size_t	 i;

	snprintf(aside, asidelen, "%s.corrupt-%lld", ix->path, t);
	for (i = 0; i < 3; i++) {
		snprintf(from, sizeof(from), "%s%s", ix->path, sfx[i]);
		snprintf(to, sizeof(to), "%s%s", aside, sfx[i]);
		if (rename(from, to) == -1 && errno != ENOENT) {
			snprintf(err, errlen, "%s: cannot move it aside: %s", from, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int
index_open(struct index **out, const char *state_dir, const struct config *conf,
    struct binaries *bins, char *err, size_t errlen)
{
	struct index *ix;
	char	 why[512], aside[PATH_MAX + 32];
	int	 rc;

	*out = NULL;
	if ((ix = calloc(1, sizeof(*ix))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ix->conf = conf;
	ix->next_id = 1;
	ix->bins = bins;
	pthread_mutex_init(&ix->mu, NULL);
	pthread_cond_init(&ix->cv_work, NULL);
	pthread_cond_init(&ix->cv_idle, NULL);
	if ((size_t)snprintf(ix->path, sizeof(ix->path), "%s/%s", state_dir, INDEX_FILE) >=
	    sizeof(ix->path) ||
	    (size_t)snprintf(ix->segdir, sizeof(ix->segdir), "%s/segments", state_dir) >=
	    sizeof(ix->segdir)) {
		snprintf(err, errlen, "%s: path too long", state_dir);
		goto fail;
	}
	if (bins == NULL) {
		if (binaries_init(&ix->own_bins) < 0) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		ix->bins = &ix->own_bins;
	}
	why[0] = '\0';
	rc = db_open(ix, why, sizeof(why));
	printable_line(why);
	if (rc < 0) {
		snprintf(err, errlen, "index: %s", why);
		goto fail;
	}
	if (rc == 1) {
		sqlite3_close(ix->db);
		ix->db = NULL;
		if (move_aside(ix, aside, sizeof(aside), err, errlen) < 0)
			goto fail;
		log_warnx("index: %s is damaged (%s): moved aside as %s, "
		    "rebuilding it from the segments", ix->path, why, aside);
		if ((rc = db_open(ix, why, sizeof(why))) != 0) {
			snprintf(err, errlen, "index: %s", why);
			goto fail;
		}
	}
	if (index_migrate(ix->db, INDEX_SCHEMA_VERSION, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", ix->path, why);
		goto fail;
	}
	if (writer_prepare(ix, err, errlen) < 0)
		goto fail;
	if (load_next_id(ix, err, errlen) < 0)
		goto fail;
	rebuild_reconcile(ix);
	if (conf->index_retention_ms != 0) {
		struct write_op *o = batch_add(&ix->early, OP_RETENTION);

		if (o != NULL)
			o->v[0] = walltime_now() - (int64_t)(conf->index_retention_ms * 1000000ULL);
		index_commit(ix);
	}
	ix->last_retention_ns = ix->last_commit_ns = mono_ns();
	sqlite3_wal_hook(ix->db, writer_wal_cb, ix);
	if ((rc = pthread_create(&ix->thread, NULL, writer_main, ix)) != 0) {
		snprintf(err, errlen, "index: cannot start the writer: %s", strerror(rc));
		goto fail;
	}
	ix->running = 1;
	pthread_setname_np(ix->thread, "perfmapd-index");
	log_info("index: %s, next object %lld", ix->path, (long long)ix->next_id);
	*out = ix;
	return 0;
fail:
	index_close(ix);
	return -1;
}

void
index_close(struct index *ix)
{
	int	 i;

	if (ix == NULL)
		return;
	if (ix->tick_ev != NULL)
		event_free(ix->tick_ev);
	if (ix->handoff_ev != NULL)
		event_free(ix->handoff_ev);
	if (ix->db != NULL)
		index_flush(ix);
	if (ix->running) {
		pthread_mutex_lock(&ix->mu);
		ix->stopping = 1;
		pthread_cond_signal(&ix->cv_work);
		pthread_cond_broadcast(&ix->cv_idle);	/* an index_wait of a tool's thread */
		pthread_mutex_unlock(&ix->mu);
		pthread_join(ix->thread, NULL);
		ix->running = 0;
	}
	for (i = 0; i < ST_MAX; i++)
		sqlite3_finalize(ix->st[i]);
	if (ix->db != NULL && sqlite3_close(ix->db) != SQLITE_OK)
		log_warnx("index: close: %s", sqlite3_errmsg(ix->db));
	batch_free(&ix->early);
	batch_free(&ix->late);
	arena_free(&ix->arena);
	for (i = 0; i < (int)ix->nchunks; i++)
		free(ix->objs[i]);
	free(ix->objs);
	if (ix->bins == &ix->own_bins)
		binaries_free(&ix->own_bins);
	free(ix->unres);
	free(ix->uhash);
	free(ix->dirty);
	free(ix->mods);
	pthread_mutex_destroy(&ix->mu);
	pthread_cond_destroy(&ix->cv_work);
	pthread_cond_destroy(&ix->cv_idle);
	free(ix);
}
