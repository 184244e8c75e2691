/*
 * index.c - the writer of STATE/index.db.  See index.h for the threads and
 * common/index_reader.h for the schema.
 *
 * Rows live in memory first.  An object (path, build-id) is a slot of
 * ix->objs, found through an open-addressing hash; a sighting updates the
 * slot and puts it on the dirty list once.  A commit turns the queued
 * segment events and the dirty slots into one batch of operations, in an
 * order that keeps every reference valid inside the transaction:
 *
 *	segment events (open, close, deleted, modules) in arrival order
 *	objects                     INSERT ... ON CONFLICT(id) DO UPDATE
 *	object_segments left behind by a rotation
 *	object_segments of the current segment
 *	unresolved mappings
 *
 * The writer thread takes every batch queued when it gets to them and
 * commits them in one transaction (a writer that falls behind catches up
 * with bigger transactions); it checkpoints the WAL when idle.  A crash
 * loses at most the batches not yet committed, and index_open's
 * reconciliation scans the segments those rows came from.  Strings in a
 * batch point into an arena that lives as long as the index, so batches
 * copy no path.
 *
 * Times: first_seen/last_seen of an object move with each new mmap, with
 * the live state every segment starts with, and with the exit of a process
 * that had it mapped (the recorder reports the exit's maps).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "buildid.h"
#include "index.h"
#include "index_reader.h"
#include "walltime.h"
#include "hash.h"
#include "log.h"
#include "perfdata.h"
#include "record.h"

#define ARENA_CHUNK	(1024 * 1024)
#define OBJ_CHUNK	65536		/* objects per chunk of ix->objs */
#define RETENTION_EVERY_NS (3600ULL * 1000000000ULL)
#define WAL_IDLE_FRAMES	1024		/* checkpoint when idle past this (16 MiB of WAL) */
#define WAL_MAX_FRAMES	8192		/* ... and even when busy past this (128 MiB) */

enum { KIND_USER, KIND_KERNEL, KIND_MODULE };
static const char *const kind_names[] = { "user", "kernel", "module" };
static const char *const source_names[] = {
	[BID_NONE] = "unknown", [BID_MMAP3] = "mmap3", [BID_MMAP2] = "mmap2",
	[BID_USER] = "userspace", [BID_KERNEL] = "kernel",
};

#define OBJ_IN_DIRTY	0x01	/* on the dirty list */
#define OBJ_DIRTY	0x02	/* object row changed */
#define OBJ_SEG_DIRTY	0x04	/* object_segments row of seg_seq changed */
#define OBJ_WRITTEN	0x08	/* handed to the writer once (or loaded): a row exists */
#define OBJ_SEEN	0x10	/* sighted since index_open (not only loaded) */

struct ix_obj {
	const char	*path;		/* arena */
	uint64_t	 hash;
	int64_t		 id;
	uint64_t	 first, last, nr_maps, nr_procs;
	uint64_t	 seg_seq, seg_first, seg_last, seg_maps;
	uint32_t	 last_pid;	/* of the last mapping counted in nr_procs */
	uint8_t		 bid[BUILD_ID_MAX];
	uint8_t		 bidsize, source, kind, flags;
};

struct ix_unres {
	const char	*path;		/* arena */
	const char	*reason;	/* static */
	uint64_t	 hash, first, last, n;
	int		 dirty;
};

struct ix_mod {
	char		 name[64];
	uint64_t	 addr;
	uint8_t		 bid[BUILD_ID_MAX], bidsize;
};

enum ix_op_type {
	OP_SEG_OPEN,		/* v: seq, start */
	OP_SEG_FULL,		/* v: seq, start, end, size, samples, lost, records; s: name, reason: state */
	OP_SEG_CLOSE,		/* v: seq, end, size, samples, lost, records */
	OP_SEG_DELETED,		/* v: seq, when */
	OP_OBJ,			/* v: id, first, last, nr_maps, nr_procs */
	OP_OBJSEG,		/* v: id, seq, first, last, nr_maps */
	OP_UNRES,		/* v: first, last, n */
	OP_MODULE,		/* v: addr, size, first, last; owned: name; s: path */
	OP_RETENTION,		/* v: cutoff */
};

struct ix_op {
	uint8_t		 type, bidsize, kind, source, is_new;
	int64_t		 v[7];
	const char	*s;		/* arena or static */
	const char	*reason;	/* static */
	char		*owned;		/* freed with the batch */
	uint8_t		 bid[BUILD_ID_MAX];
	struct index_section *sect;	/* OP_MODULE, owned */
	size_t		 nsect;
};

struct ix_batch {
	struct ix_batch	*next;
	struct ix_op	*ops;
	size_t		 n, cap;
};

struct arena {
	char		**chunks;
	size_t		 nchunks;
	char		*cur;
	size_t		 left;
};

enum { ST_OBJ, ST_OBJ_NEW, ST_OBJ_UPD, ST_OBJSEG, ST_SEG_OPEN, ST_SEG_FULL, ST_SEG_CLOSE, ST_SEG_DELETED,
	ST_UNRES, ST_MODULE, ST_MODSECT, ST_MAX };

static const char *const stmt_sql[ST_MAX] = {
	[ST_OBJ] = "INSERT INTO objects(id, path, build_id, kind, source, first_seen, "
	    "last_seen, nr_maps, nr_procs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
	    "ON CONFLICT(id) DO UPDATE SET source = excluded.source, "
	    "first_seen = excluded.first_seen, last_seen = excluded.last_seen, "
	    "nr_maps = excluded.nr_maps, nr_procs = excluded.nr_procs",
	/* Rows the writer has not written yet: a plain insert is cheaper. */
	[ST_OBJ_NEW] = "INSERT INTO objects(id, path, build_id, kind, source, first_seen, "
	    "last_seen, nr_maps, nr_procs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[ST_OBJ_UPD] = "UPDATE objects SET source = ?5, first_seen = ?6, last_seen = ?7, "
	    "nr_maps = ?8, nr_procs = ?9 WHERE id = ?1",
	[ST_OBJSEG] = "INSERT INTO object_segments(object_id, seq, first_seen, last_seen, "
	    "nr_maps) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(object_id, seq) DO UPDATE "
	    "SET first_seen = min(first_seen, excluded.first_seen), "
	    "last_seen = max(last_seen, excluded.last_seen), nr_maps = excluded.nr_maps",
	[ST_SEG_OPEN] = "INSERT INTO segments(seq, name, start_ns, state) "
	    "VALUES (?1, ?2, ?3, 'open') ON CONFLICT(seq) DO UPDATE SET "
	    "name = excluded.name, start_ns = excluded.start_ns, state = 'open', "
	    "end_ns = NULL, deleted_ns = NULL",
	[ST_SEG_FULL] = "INSERT OR REPLACE INTO segments(seq, name, start_ns, end_ns, "
	    "size, samples, lost, records, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[ST_SEG_CLOSE] = "UPDATE segments SET end_ns = ?2, size = ?3, samples = ?4, "
	    "lost = ?5, records = ?6, state = 'closed' WHERE seq = ?1",
	[ST_SEG_DELETED] = "UPDATE segments SET state = 'deleted', deleted_ns = ?2 "
	    "WHERE seq = ?1",
	[ST_UNRES] = "INSERT INTO unresolved(path, reason, first_seen, last_seen, nr_maps) "
	    "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(path, reason) DO UPDATE SET "
	    "last_seen = excluded.last_seen, nr_maps = excluded.nr_maps",
	[ST_MODULE] = "INSERT INTO modules(name, path, build_id, addr, size, first_seen, "
	    "last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
	    "ON CONFLICT(name, build_id, addr) DO UPDATE SET last_seen = excluded.last_seen "
	    "RETURNING id",
	[ST_MODSECT] = "INSERT OR REPLACE INTO module_sections(module_id, name, addr) "
	    "VALUES (?1, ?2, ?3)",
};

struct index {
	char		 path[PATH_MAX];
	char		 segdir[PATH_MAX];
	const struct config *conf;
	sqlite3		*db;
	sqlite3_stmt	*st[ST_MAX];

	/* loop thread */
	struct arena	 arena;
	struct ix_obj	**objs;		/* chunks of OBJ_CHUNK: slots never move */
	size_t		 nobjs, nchunks;
	uint32_t	*ohash;		/* slot + 1, 0 = empty */
	size_t		 ohcap;
	int64_t		 next_id;
	struct ix_unres	*unres;
	size_t		 nunres, cunres;
	uint32_t	*uhash;
	size_t		 uhcap;
	uint32_t	*dirty;
	size_t		 ndirty, cdirty;
	int		 unres_dirty;
	struct ix_batch	 early, late;	/* segment events; object_segments of past segments */
	struct ix_mod	*mods;
	size_t		 nmods;
	uint64_t	 cur_seq;
	uint64_t	 last_commit_ns, last_retention_ns;
	struct index_stats stats;

	/* shared with the writer, under mu */
	pthread_t	 thread;
	int		 running, stopping;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv_work, cv_idle;
	struct ix_batch	*q_head, *q_tail;
	int		 busy;
	uint64_t	 w_batches, w_rows, w_errors, w_us_last, w_us_max;
	uint64_t	 w_failing, w_lost_rows;	/* writer thread only */
	int		 wal_frames;	/* in the WAL since the last checkpoint */
};

/* ---------------------------------------------------------------- helpers */

#define OBJ(ix, slot)	(&(ix)->objs[(slot) / OBJ_CHUNK][(slot) % OBJ_CHUNK])

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static const char *
arena_strdup(struct arena *a, const char *s)
{
	size_t	 len = strlen(s) + 1;
	char	*p, **nc;

	if (len > a->left) {
		size_t sz = len > ARENA_CHUNK ? len : ARENA_CHUNK;

		if ((nc = reallocarray(a->chunks, a->nchunks + 1, sizeof(*nc))) == NULL)
			return NULL;
		a->chunks = nc;
		if ((a->cur = malloc(sz)) == NULL)
			return NULL;
		a->chunks[a->nchunks++] = a->cur;
		a->left = sz;
	}
	p = a->cur;
	memcpy(p, s, len);
	a->cur += len;
	a->left -= len;
	return p;
}

static void
arena_free(struct arena *a)
{
	size_t	 i;

	for (i = 0; i < a->nchunks; i++)
		free(a->chunks[i]);
	free(a->chunks);
	memset(a, 0, sizeof(*a));
}

static struct ix_op *
batch_add(struct ix_batch *b, enum ix_op_type type)
{
	struct ix_op *n;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;

		if ((n = reallocarray(b->ops, cap, sizeof(*n))) == NULL)
			return NULL;
		b->ops = n;
		b->cap = cap;
	}
	n = &b->ops[b->n++];
	memset(n, 0, sizeof(*n));
	n->type = (uint8_t)type;
	return n;
}

static void
batch_clear(struct ix_batch *b)
{
	size_t	 i;

	for (i = 0; i < b->n; i++) {
		free(b->ops[i].owned);
		free(b->ops[i].sect);
	}
	b->n = 0;
}

static void
batch_free(struct ix_batch *b)
{
	batch_clear(b);
	free(b->ops);
	b->ops = NULL;
	b->cap = 0;
}

/* Move every op of SRC to the end of DST. */
static int
batch_move(struct ix_batch *dst, struct ix_batch *src)
{
	size_t	 i;

	for (i = 0; i < src->n; i++) {
		struct ix_op *o = batch_add(dst, (enum ix_op_type)src->ops[i].type);

		if (o == NULL)
			return -1;
		*o = src->ops[i];
	}
	src->n = 0;	/* ownership moved */
	return 0;
}

static const char *
unresolved_reason(int err)
{
	switch (-err) {
	case ENOENT: return "no build-id note, or file gone";
	case ENOEXEC: return "not an ELF file";
	case EINVAL: return "bad build-id note";
	case EACCES: case EPERM: return "permission denied";
	case ESRCH: return "process gone";
	case ENOMEM: return "out of memory";
	case 0: return "unknown";
	default: return "read error";
	}
}

/* ---------------------------------------------------------------- schema */

/*
 * Migration N brings the schema from version N - 1 to N.  Add new ones at
 * the end; never edit a released one.
 */
static const char *const migrations[] = {
	/* 1: segments, objects and where they were seen, unresolved mappings */
	"CREATE TABLE segments ("
	"  seq INTEGER PRIMARY KEY, name TEXT NOT NULL,"
	"  start_ns INTEGER NOT NULL, end_ns INTEGER,"
	"  size INTEGER NOT NULL DEFAULT 0, samples INTEGER NOT NULL DEFAULT 0,"
	"  lost INTEGER NOT NULL DEFAULT 0, records INTEGER NOT NULL DEFAULT 0,"
	"  state TEXT NOT NULL CHECK (state IN ('open', 'closed', 'repaired', 'deleted')),"
	"  deleted_ns INTEGER);"
	"CREATE TABLE objects ("
	"  id INTEGER PRIMARY KEY, path TEXT NOT NULL, build_id BLOB NOT NULL,"
	"  kind TEXT NOT NULL, source TEXT NOT NULL,"
	"  first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,"
	"  nr_maps INTEGER NOT NULL DEFAULT 0, nr_procs INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX objects_path ON objects(path, first_seen);"
	"CREATE INDEX objects_build_id ON objects(build_id);"
	"CREATE TABLE object_segments ("
	"  object_id INTEGER NOT NULL REFERENCES objects(id),"
	"  seq INTEGER NOT NULL REFERENCES segments(seq),"
	"  first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,"
	"  nr_maps INTEGER NOT NULL DEFAULT 0,"
	"  PRIMARY KEY (object_id, seq)) WITHOUT ROWID;"
	"CREATE INDEX object_segments_seq ON object_segments(seq);"
	"CREATE TABLE unresolved ("
	"  path TEXT NOT NULL, reason TEXT NOT NULL,"
	"  first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,"
	"  nr_maps INTEGER NOT NULL DEFAULT 0,"
	"  PRIMARY KEY (path, reason)) WITHOUT ROWID;",

	/* 2: kernel modules and their section addresses */
	"CREATE TABLE modules ("
	"  id INTEGER PRIMARY KEY, name TEXT NOT NULL, path TEXT NOT NULL,"
	"  build_id BLOB NOT NULL, addr INTEGER NOT NULL, size INTEGER NOT NULL,"
	"  first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,"
	"  UNIQUE (name, build_id, addr));"
	"CREATE TABLE module_sections ("
	"  module_id INTEGER NOT NULL REFERENCES modules(id), name TEXT NOT NULL,"
	"  addr INTEGER NOT NULL, PRIMARY KEY (module_id, name)) WITHOUT ROWID;",
};

#define NMIGRATIONS	((int)(sizeof(migrations) / sizeof(migrations[0])))
_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == INDEX_SCHEMA_VERSION,
    "a migration per schema version");

static int
db_version(sqlite3 *db, int *v)
{
	sqlite3_stmt *s;
	int	 rc;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(s) == SQLITE_ROW ? 0 : -1;
	if (rc == 0)
		*v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return rc;
}

int
index_migrate(sqlite3 *db, int version, char *err, size_t errlen)
{
	char	 sql[64], *msg = NULL;
	int	 v, i;

	if (db_version(db, &v) < 0) {
		snprintf(err, errlen, "cannot read the schema version: %s", sqlite3_errmsg(db));
		return -1;
	}
	if (v > NMIGRATIONS) {
		snprintf(err, errlen, "index schema version %d is newer than this perfmapd "
		    "understands (%d): refusing to touch it; use a newer perfmapd or move "
		    "the index aside", v, NMIGRATIONS);
		return -1;
	}
	for (i = v; i < version && i < NMIGRATIONS; i++) {
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", i + 1);
		if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK ||
		    sqlite3_exec(db, migrations[i], NULL, NULL, &msg) != SQLITE_OK ||
		    sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK ||
		    sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
			snprintf(err, errlen, "schema migration to version %d: %s", i + 1,
			    msg ? msg : sqlite3_errmsg(db));
			sqlite3_free(msg);
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
		if (v > 0)
			log_info("index: schema migrated to version %d", i + 1);
	}
	return 0;
}

/* ---------------------------------------------------------------- writer */


static int
step_reset(struct index *ix, sqlite3_stmt *s)
{
	int	 rc = sqlite3_step(s);

	sqlite3_reset(s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		log_warnx("index: %s", sqlite3_errmsg(ix->db));
		return -1;
	}
	return 0;
}

static int
run_retention(struct index *ix, int64_t cutoff)
{
	static const char *const sql[] = {
		"DELETE FROM object_segments WHERE seq IN (SELECT seq FROM segments "
		"  WHERE state = 'deleted' AND coalesce(end_ns, start_ns) < ?1)",
		"DELETE FROM segments WHERE state = 'deleted' AND coalesce(end_ns, start_ns) < ?1",
		"DELETE FROM objects WHERE last_seen < ?1 AND NOT EXISTS (SELECT 1 FROM "
		"  object_segments os WHERE os.object_id = objects.id)",
		"DELETE FROM module_sections WHERE module_id IN (SELECT id FROM modules "
		"  WHERE last_seen < ?1)",
		"DELETE FROM modules WHERE last_seen < ?1",
		"DELETE FROM unresolved WHERE last_seen < ?1",
	};
	sqlite3_stmt *s;
	size_t	 i;
	int	 rc = 0;

	for (i = 0; i < sizeof(sql) / sizeof(sql[0]) && rc == 0; i++) {
		if (sqlite3_prepare_v2(ix->db, sql[i], -1, &s, NULL) != SQLITE_OK) {
			log_warnx("index: retention: %s", sqlite3_errmsg(ix->db));
			return -1;
		}
		sqlite3_bind_int64(s, 1, cutoff);
		rc = step_reset(ix, s);
		sqlite3_finalize(s);
	}
	return rc;
}

static int
run_op(struct index *ix, const struct ix_op *o)
{
	sqlite3_stmt *s;
	size_t	 i;
	int64_t	 mid;
	int	 rc;

	switch ((enum ix_op_type)o->type) {
	case OP_OBJ:
		/* Known rows are updated; new ones inserted; anything odd (a row
		 * retention deleted, a failed batch) goes through the upsert. */
		s = ix->st[o->is_new ? ST_OBJ_NEW : ST_OBJ_UPD];
		for (;;) {
			sqlite3_bind_int64(s, 1, o->v[0]);
			sqlite3_bind_text(s, 2, o->s, -1, SQLITE_STATIC);
			sqlite3_bind_blob(s, 3, o->bid, o->bidsize, SQLITE_STATIC);
			sqlite3_bind_text(s, 4, kind_names[o->kind], -1, SQLITE_STATIC);
			sqlite3_bind_text(s, 5, source_names[o->source], -1, SQLITE_STATIC);
			for (i = 1; i <= 4; i++)
				sqlite3_bind_int64(s, (int)i + 5, o->v[i]);
			rc = sqlite3_step(s);
			sqlite3_reset(s);
			if (rc == SQLITE_DONE && sqlite3_changes(ix->db) > 0)
				return 0;
			if (s == ix->st[ST_OBJ])
				break;
			s = ix->st[ST_OBJ];
		}
		if (rc != SQLITE_DONE) {
			log_warnx("index: %s", sqlite3_errmsg(ix->db));
			return -1;
		}
		return 0;
	case OP_OBJSEG:
		s = ix->st[ST_OBJSEG];
		for (i = 0; i < 5; i++)
			sqlite3_bind_int64(s, (int)i + 1, o->v[i]);
		return step_reset(ix, s);
	case OP_SEG_OPEN:
		s = ix->st[ST_SEG_OPEN];
		sqlite3_bind_int64(s, 1, o->v[0]);
		sqlite3_bind_text(s, 2, o->owned, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, o->v[1]);
		return step_reset(ix, s);
	case OP_SEG_FULL:
		s = ix->st[ST_SEG_FULL];
		sqlite3_bind_int64(s, 1, o->v[0]);
		sqlite3_bind_text(s, 2, o->owned, -1, SQLITE_STATIC);
		for (i = 1; i < 7; i++)
			sqlite3_bind_int64(s, (int)i + 2, o->v[i]);
		sqlite3_bind_text(s, 9, o->reason, -1, SQLITE_STATIC);
		return step_reset(ix, s);
	case OP_SEG_CLOSE:
		s = ix->st[ST_SEG_CLOSE];
		for (i = 0; i < 6; i++)
			sqlite3_bind_int64(s, (int)i + 1, o->v[i]);
		return step_reset(ix, s);
	case OP_SEG_DELETED:
		s = ix->st[ST_SEG_DELETED];
		sqlite3_bind_int64(s, 1, o->v[0]);
		sqlite3_bind_int64(s, 2, o->v[1]);
		return step_reset(ix, s);
	case OP_UNRES:
		s = ix->st[ST_UNRES];
		sqlite3_bind_text(s, 1, o->s, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, o->reason, -1, SQLITE_STATIC);
		for (i = 0; i < 3; i++)
			sqlite3_bind_int64(s, (int)i + 3, o->v[i]);
		return step_reset(ix, s);
	case OP_MODULE:
		s = ix->st[ST_MODULE];
		sqlite3_bind_text(s, 1, o->owned, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, o->s, -1, SQLITE_STATIC);
		sqlite3_bind_blob(s, 3, o->bid, o->bidsize, SQLITE_STATIC);
		for (i = 0; i < 4; i++)
			sqlite3_bind_int64(s, (int)i + 4, o->v[i]);
		if ((rc = sqlite3_step(s)) != SQLITE_ROW) {
			sqlite3_reset(s);
			log_warnx("index: module %s: %s", o->owned, sqlite3_errmsg(ix->db));
			return -1;
		}
		mid = sqlite3_column_int64(s, 0);
		sqlite3_reset(s);
		for (i = 0; i < o->nsect; i++) {
			s = ix->st[ST_MODSECT];
			sqlite3_bind_int64(s, 1, mid);
			sqlite3_bind_text(s, 2, o->sect[i].name, -1, SQLITE_STATIC);
			sqlite3_bind_int64(s, 3, (int64_t)o->sect[i].addr);
			if (step_reset(ix, s) < 0)
				return -1;
		}
		return 0;
	case OP_RETENTION:
		return run_retention(ix, o->v[0]);
	}
	return -1;
}

/*
 * Batches, one transaction: every batch queued when the writer gets to
 * them (a writer that falls behind commits more rows at a time, which is
 * what makes it catch up: the cost of a commit is in the index pages it
 * dirties, not in the rows).  Called by the writer, or at open before it
 * starts.
 */
static int
run_batches(struct index *ix, struct ix_batch *list)
{
	struct ix_batch *b;
	uint64_t t0 = mono_ns(), us, rows = 0;
	size_t	 i;
	int	 rc = 0;

	if (sqlite3_exec(ix->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		log_warnx("index: begin: %s", sqlite3_errmsg(ix->db));
		rc = -1;
		goto out;
	}
	for (b = list; b != NULL && rc == 0; b = b->next) {
		for (i = 0; i < b->n && rc == 0; i++)
			rc = run_op(ix, &b->ops[i]);
		rows += b->n;
	}
	if (rc == 0 && sqlite3_exec(ix->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		if (ix->w_failing == 0)
			log_warnx("index: commit: %s", sqlite3_errmsg(ix->db));
		rc = -1;
	}
	if (rc < 0)
		sqlite3_exec(ix->db, "ROLLBACK", NULL, NULL, NULL);
out:
	us = (mono_ns() - t0) / 1000;
	pthread_mutex_lock(&ix->mu);
	ix->w_batches++;
	ix->w_us_last = us;
	if (us > ix->w_us_max)
		ix->w_us_max = us;
	if (rc == 0)
		ix->w_rows += rows;
	else
		ix->w_errors++;
	pthread_mutex_unlock(&ix->mu);
	/*
	 * A failing disk is reported once, and its end once: rows of objects
	 * come back with their next sighting, segments with the reconciliation
	 * at the next start.
	 */
	if (rc < 0) {
		if (ix->w_failing++ == 0)
			log_warnx("index: batches are not written (%llu rows so far) until "
			    "this is fixed", (unsigned long long)rows);
		ix->w_lost_rows += rows;
	} else {
		if (ix->w_failing > 0)
			log_info("index: writing again; %llu batches (%llu rows) were lost",
			    (unsigned long long)ix->w_failing,
			    (unsigned long long)ix->w_lost_rows);
		ix->w_failing = 0;
		ix->w_lost_rows = 0;
		log_debug("index: committed %llu rows in %llu us", (unsigned long long)rows,
		    (unsigned long long)us);
	}
	return rc;
}

static void
free_batches(struct ix_batch *list)
{
	struct ix_batch *next;

	for (; list != NULL; list = next) {
		next = list->next;
		batch_free(list);
		free(list);
	}
}

/* After each commit (writer thread): how big the WAL has grown. */
static int
wal_cb(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct index *ix = arg;

	pthread_mutex_lock(&ix->mu);
	ix->wal_frames = frames;
	pthread_mutex_unlock(&ix->mu);
	return SQLITE_OK;
}

static void *
writer_main(void *arg)
{
	struct index *ix = arg;
	struct ix_batch *list;

	pthread_mutex_lock(&ix->mu);
	for (;;) {
		while (ix->q_head == NULL && !ix->stopping)
			pthread_cond_wait(&ix->cv_work, &ix->mu);
		if ((list = ix->q_head) == NULL)
			break;		/* stopping, queue empty */
		ix->q_head = ix->q_tail = NULL;
		ix->busy = 1;
		pthread_mutex_unlock(&ix->mu);
		run_batches(ix, list);
		free_batches(list);
		pthread_mutex_lock(&ix->mu);
		if (ix->wal_frames >= (ix->q_head == NULL ? WAL_IDLE_FRAMES : WAL_MAX_FRAMES)) {
			/*
			 * Checkpoint when idle rather than inside a commit, so a
			 * burst is written once to the WAL and copied back later;
			 * a writer that is never idle still checkpoints.
			 */
			pthread_mutex_unlock(&ix->mu);
			if (sqlite3_wal_checkpoint_v2(ix->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
			    NULL, NULL) != SQLITE_OK)
				log_warnx("index: checkpoint: %s", sqlite3_errmsg(ix->db));
			pthread_mutex_lock(&ix->mu);
			ix->wal_frames = 0;
		}
		ix->busy = 0;
		if (ix->q_head == NULL)
			pthread_cond_broadcast(&ix->cv_idle);
	}
	pthread_mutex_unlock(&ix->mu);
	return NULL;
}

/* ---------------------------------------------------------------- commit */

static void
op_obj(struct ix_op *o, struct ix_obj *e)
{
	o->is_new = !(e->flags & OBJ_WRITTEN);
	e->flags |= OBJ_WRITTEN;
	o->v[0] = e->id;
	o->v[1] = (int64_t)e->first;
	o->v[2] = (int64_t)e->last;
	o->v[3] = (int64_t)e->nr_maps;
	o->v[4] = (int64_t)e->nr_procs;
	o->s = e->path;
	memcpy(o->bid, e->bid, e->bidsize);
	o->bidsize = e->bidsize;
	o->kind = e->kind;
	o->source = e->source;
}

static void
op_objseg(struct ix_op *o, const struct ix_obj *e)
{
	o->v[0] = e->id;
	o->v[1] = (int64_t)e->seg_seq;
	o->v[2] = (int64_t)e->seg_first;
	o->v[3] = (int64_t)e->seg_last;
	o->v[4] = (int64_t)e->seg_maps;
}

static uint64_t
pending_rows(struct index *ix)
{
	return ix->early.n + ix->late.n + ix->ndirty;
}

void
index_commit(struct index *ix)
{
	struct ix_batch *b;
	struct ix_op *o;
	size_t	 i;

	ix->last_commit_ns = mono_ns();
	if (pending_rows(ix) == 0 && !ix->unres_dirty)
		return;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		goto oom;
	if (batch_move(b, &ix->early) < 0)
		goto oom;
	for (i = 0; i < ix->ndirty; i++) {
		struct ix_obj *e = OBJ(ix, ix->dirty[i]);

		if ((e->flags & OBJ_DIRTY) && (o = batch_add(b, OP_OBJ)) != NULL)
			op_obj(o, e);
	}
	if (batch_move(b, &ix->late) < 0)
		goto oom;
	for (i = 0; i < ix->ndirty; i++) {
		struct ix_obj *e = OBJ(ix, ix->dirty[i]);

		if ((e->flags & OBJ_SEG_DIRTY) && (o = batch_add(b, OP_OBJSEG)) != NULL)
			op_objseg(o, e);
		e->flags &= OBJ_WRITTEN;
	}
	ix->ndirty = 0;
	if (ix->unres_dirty) {
		for (i = 0; i < ix->nunres; i++) {
			struct ix_unres *u = &ix->unres[i];

			if (!u->dirty || (o = batch_add(b, OP_UNRES)) == NULL)
				continue;
			o->s = u->path;
			o->reason = u->reason;
			o->v[0] = (int64_t)u->first;
			o->v[1] = (int64_t)u->last;
			o->v[2] = (int64_t)u->n;
			u->dirty = 0;
		}
		ix->unres_dirty = 0;
	}
	if (!ix->running) {		/* at open: synchronously */
		run_batches(ix, b);
		free_batches(b);
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

void
index_tick(struct index *ix)
{
	uint64_t now;

	if (ix == NULL)
		return;
	now = mono_ns();
	if (ix->conf->index_retention_ms != 0 &&
	    now - ix->last_retention_ns >= RETENTION_EVERY_NS) {
		struct ix_op *o = batch_add(&ix->early, OP_RETENTION);

		ix->last_retention_ns = now;
		if (o != NULL)
			o->v[0] = walltime_now() - (int64_t)(ix->conf->index_retention_ms * 1000000ULL);
	}
	if (now - ix->last_commit_ns >= ix->conf->index_commit_ms * 1000000ULL)
		index_commit(ix);
}

static void
maybe_commit(struct index *ix)
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
	pthread_mutex_unlock(&ix->mu);
}

/* ---------------------------------------------------------------- memory rows */

static int
ohash_grow(struct index *ix)
{
	size_t	 cap = ix->ohcap ? ix->ohcap * 2 : 1024, i, j;
	uint32_t *h;

	if ((h = calloc(cap, sizeof(*h))) == NULL)
		return -1;
	for (i = 0; i < ix->nobjs; i++) {
		for (j = OBJ(ix, i)->hash & (cap - 1); h[j] != 0; j = (j + 1) & (cap - 1))
			;
		h[j] = (uint32_t)i + 1;
	}
	free(ix->ohash);
	ix->ohash = h;
	ix->ohcap = cap;
	return 0;
}

static uint64_t
obj_hash(const char *path, const uint8_t *id, uint8_t size)
{
	return hash_str(path, hash_bytes(id, size, HASH_INIT));
}

/* The slot of (PATH, ID), created if new; -1 when out of memory. */
static ssize_t
obj_get(struct index *ix, const char *path, const uint8_t *id, uint8_t size,
    int64_t known_id)
{
	uint64_t h = obj_hash(path, id, size);
	struct ix_obj *e;
	size_t	 j;

	if ((ix->nobjs + 1) * 2 > ix->ohcap && ohash_grow(ix) < 0)
		return -1;
	for (j = h & (ix->ohcap - 1); ix->ohash[j] != 0; j = (j + 1) & (ix->ohcap - 1)) {
		e = OBJ(ix, (size_t)ix->ohash[j] - 1);
		if (e->hash == h && e->bidsize == size && memcmp(e->bid, id, size) == 0 &&
		    strcmp(e->path, path) == 0)
			return (ssize_t)ix->ohash[j] - 1;
	}
	if (ix->nobjs == ix->nchunks * OBJ_CHUNK) {
		struct ix_obj **n = reallocarray(ix->objs, ix->nchunks + 1, sizeof(*n));

		if (n == NULL)
			return -1;
		ix->objs = n;
		if ((n[ix->nchunks] = malloc(OBJ_CHUNK * sizeof(**n))) == NULL)
			return -1;
		ix->nchunks++;
	}
	e = OBJ(ix, ix->nobjs);
	memset(e, 0, sizeof(*e));
	if ((e->path = arena_strdup(&ix->arena, path)) == NULL)
		return -1;
	e->hash = h;
	memcpy(e->bid, id, size);
	e->bidsize = size;
	e->id = known_id > 0 ? known_id : ix->next_id++;
	if (e->id >= ix->next_id)
		ix->next_id = e->id + 1;
	ix->ohash[j] = (uint32_t)ix->nobjs + 1;
	return (ssize_t)ix->nobjs++;
}


static void
mark_dirty(struct index *ix, size_t slot, uint8_t what)
{
	struct ix_obj *e = OBJ(ix, slot);

	if (!(e->flags & OBJ_IN_DIRTY)) {
		if (ix->ndirty == ix->cdirty) {
			size_t	 cap = ix->cdirty ? ix->cdirty * 2 : 1024;
			uint32_t *n = reallocarray(ix->dirty, cap, sizeof(*n));

			if (n == NULL)
				return;
			ix->dirty = n;
			ix->cdirty = cap;
		}
		ix->dirty[ix->ndirty++] = (uint32_t)slot;
		e->flags |= OBJ_IN_DIRTY;
	}
	e->flags |= what;
}

/* A sighting of the object in SLOT; what was new about it into *OUT (may be NULL). */
static void
sight(struct index *ix, size_t slot, uint8_t source, uint8_t kind, uint32_t pid,
    uint64_t wall, int count, struct index_sighting *out)
{
	struct ix_obj *e = OBJ(ix, slot);

	ix->stats.sightings++;
	/* The recorder's sightings (OUT given) mark it seen; scans of old segments do not. */
	if (out != NULL) {
		out->obj = (int32_t)slot;
		out->new_in_segment = ix->cur_seq == 0 || e->seg_seq != ix->cur_seq;
		out->new_in_run = !(e->flags & OBJ_SEEN);
		e->flags |= OBJ_SEEN;
	}
	if (e->first == 0 || wall < e->first)
		e->first = wall;
	if (wall > e->last)
		e->last = wall;
	if (source != BID_NONE)
		e->source = source;
	e->kind = kind;
	if (count)
		e->nr_maps++;
	/*
	 * Processes, counted in O(1) memory: a new mapping from another pid
	 * than the last one (a process maps its pieces of a file one after
	 * the other); a segment's initial state counts only for an object no
	 * process was counted for yet (what the start-up scan found running).
	 * Approximate by design: a pid reused for the same object, or two
	 * processes alternating, are not told apart.
	 */
	if (kind == KIND_USER && (count || e->nr_procs == 0)) {
		if (pid != e->last_pid)
			e->nr_procs++;
		e->last_pid = pid;
	}
	if (ix->cur_seq != 0) {
		if (e->seg_seq != ix->cur_seq) {
			struct ix_op *o;

			/* Left behind by a rotation before a commit: queue it. */
			if ((e->flags & OBJ_SEG_DIRTY) && (o = batch_add(&ix->late, OP_OBJSEG)))
				op_objseg(o, e);
			e->flags &= (uint8_t)~OBJ_SEG_DIRTY;
			e->seg_seq = ix->cur_seq;
			e->seg_first = e->seg_last = wall;
			e->seg_maps = 0;
		}
		if (wall < e->seg_first)
			e->seg_first = wall;
		if (wall > e->seg_last)
			e->seg_last = wall;
		if (count)
			e->seg_maps++;
		mark_dirty(ix, (size_t)slot, OBJ_DIRTY | OBJ_SEG_DIRTY);
	} else
		mark_dirty(ix, (size_t)slot, OBJ_DIRTY);
	maybe_commit(ix);
}

static void
add_object(struct index *ix, const char *path, const uint8_t *id, uint8_t idsize,
    uint8_t source, uint8_t kind, uint32_t pid, uint64_t wall, int count,
    struct index_sighting *out)
{
	ssize_t	 slot;

	if (idsize == 0 || idsize > BUILD_ID_MAX)
		return;
	if ((slot = obj_get(ix, path, id, idsize, 0)) < 0 || slot > INT32_MAX) {
		log_warnx("index: out of memory");
		return;
	}
	sight(ix, (size_t)slot, source, kind, pid, wall, count, out);
}

/*
 * The kernel names a file that was unlinked (replaced by an upgrade) when
 * it was mapped "PATH (deleted)"; /proc/PID/maps does the same for a
 * running process whose binary was replaced since.  The object is PATH
 * with its old build-id: that is what "history PATH" must show.
 */
static const char *
strip_deleted(const char *path, char *buf, size_t len)
{
	size_t	 n = record_name_len(path);

	if (path[n] == '\0' || n >= len)
		return path;
	memcpy(buf, path, n);
	buf[n] = '\0';
	return buf;
}

void
index_add_mapping(struct index *ix, const char *path, const uint8_t *id, uint8_t idsize,
    uint8_t source, uint32_t pid, uint64_t wall_ns, int synthesized,
    struct index_sighting *out)
{
	char	 buf[PATH_MAX];

	if (out != NULL)
		out->obj = -1;		/* until a slot is found */
	if (ix == NULL)
		return;
	add_object(ix, strip_deleted(path, buf, sizeof(buf)), id, idsize, source, KIND_USER,
	    pid, wall_ns, !synthesized, out);
}

void
index_add_object(struct index *ix, int32_t obj, uint32_t pid, uint64_t wall_ns,
    int synthesized)
{
	if (ix == NULL || obj < 0 || (size_t)obj >= ix->nobjs)
		return;
	sight(ix, (size_t)obj, BID_NONE, KIND_USER, pid, wall_ns, !synthesized, NULL);
}

void
index_add_unresolved(struct index *ix, const char *path, int err, uint64_t wall_ns)
{
	const char *reason = unresolved_reason(err);
	struct ix_unres *u;
	uint64_t h;
	size_t	 j, i;

	if (ix == NULL)
		return;
	ix->stats.unresolved++;
	h = hash_str(reason, hash_str(path, HASH_INIT));
	if ((ix->nunres + 1) * 2 > ix->uhcap) {
		size_t	 cap = ix->uhcap ? ix->uhcap * 2 : 256;
		uint32_t *n = calloc(cap, sizeof(*n));

		if (n == NULL)
			return;
		for (i = 0; i < ix->nunres; i++) {
			for (j = ix->unres[i].hash & (cap - 1); n[j] != 0; j = (j + 1) & (cap - 1))
				;
			n[j] = (uint32_t)i + 1;
		}
		free(ix->uhash);
		ix->uhash = n;
		ix->uhcap = cap;
	}
	for (j = h & (ix->uhcap - 1); ix->uhash[j] != 0; j = (j + 1) & (ix->uhcap - 1)) {
		u = &ix->unres[ix->uhash[j] - 1];
		if (u->hash == h && u->reason == reason && strcmp(u->path, path) == 0)
			goto found;
	}
	if (ix->nunres == ix->cunres) {
		size_t	 cap = ix->cunres ? ix->cunres * 2 : 256;
		struct ix_unres *n = reallocarray(ix->unres, cap, sizeof(*n));

		if (n == NULL)
			return;
		ix->unres = n;
		ix->cunres = cap;
	}
	u = &ix->unres[ix->nunres];
	memset(u, 0, sizeof(*u));
	if ((u->path = arena_strdup(&ix->arena, path)) == NULL)
		return;
	u->hash = h;
	u->reason = reason;
	u->first = wall_ns;
	ix->uhash[j] = (uint32_t)++ix->nunres;
found:
	if (wall_ns < u->first || u->first == 0)
		u->first = wall_ns;
	if (wall_ns > u->last)
		u->last = wall_ns;
	u->n++;
	u->dirty = 1;
	ix->unres_dirty = 1;
}

/* ---------------------------------------------------------------- segments */

static uint64_t
name_seq(const char *name)
{
	unsigned long long seq;
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	if (sscanf(base, "perf-%llu-", &seq) != 1)
		return 0;
	return seq;
}

void
index_segment_open(struct index *ix, uint64_t seq, const char *name, uint64_t wall_start_ns)
{
	const char *base;
	struct ix_op *o;

	if (ix == NULL)
		return;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	ix->cur_seq = seq;
	if ((o = batch_add(&ix->early, OP_SEG_OPEN)) == NULL ||
	    (o->owned = strdup(base)) == NULL) {
		if (o != NULL)
			ix->early.n--;
		log_warnx("index: out of memory");
		return;
	}
	o->v[0] = (int64_t)seq;
	o->v[1] = (int64_t)wall_start_ns;
}

void
index_segment_close(struct index *ix, uint64_t seq, uint64_t wall_end_ns, uint64_t size,
    uint64_t samples, uint64_t lost, uint64_t records)
{
	struct ix_op *o;

	if (ix == NULL)
		return;
	if ((o = batch_add(&ix->early, OP_SEG_CLOSE)) != NULL) {
		o->v[0] = (int64_t)seq;
		o->v[1] = (int64_t)wall_end_ns;
		o->v[2] = (int64_t)size;
		o->v[3] = (int64_t)samples;
		o->v[4] = (int64_t)lost;
		o->v[5] = (int64_t)records;
	}
	index_commit(ix);
}

void
index_segment_deleted(struct index *ix, const char *name)
{
	struct ix_op *o;
	uint64_t seq = name_seq(name);

	if (ix == NULL || seq == 0)
		return;
	if ((o = batch_add(&ix->early, OP_SEG_DELETED)) != NULL) {
		o->v[0] = (int64_t)seq;
		o->v[1] = walltime_now();
	}
}

/* ---------------------------------------------------------------- kernel */

static int
section_cmp(const void *a, const void *b)
{
	return strcmp(((const struct index_section *)a)->name,
	    ((const struct index_section *)b)->name);
}

int
index_read_sections(const char *dir, struct index_section **out, size_t *n)
{
	struct index_section *v = NULL, *nv;
	struct dirent *de;
	DIR	*d;
	size_t	 cnt = 0;

	*out = NULL;
	*n = 0;
	if ((d = opendir(dir)) == NULL)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		char	 path[PATH_MAX], buf[64], *end;
		unsigned long long addr;
		ssize_t	 len;
		int	 fd;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strlen(de->d_name) >= sizeof(v->name) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path))
			continue;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		errno = 0;
		addr = strtoull(buf, &end, 16);
		if (errno != 0 || end == buf || (*end != '\0' && !isspace((unsigned char)*end)))
			continue;
		if ((nv = reallocarray(v, cnt + 1, sizeof(*v))) == NULL) {
			closedir(d);
			free(v);
			return -ENOMEM;
		}
		v = nv;
		snprintf(v[cnt].name, sizeof(v[cnt].name), "%s", de->d_name);
		v[cnt].addr = addr;
		cnt++;
	}
	closedir(d);
	if (cnt > 0)
		qsort(v, cnt, sizeof(*v), section_cmp);
	*out = v;
	*n = cnt;
	return 0;
}

static int
read_module_id(const char *sys_module, const char *name, uint8_t id[BUILD_ID_MAX])
{
	char	 path[PATH_MAX];
	uint8_t	 buf[4096];
	ssize_t	 len;
	int	 fd;

	snprintf(path, sizeof(path), "%s/%s/notes/.note.gnu.build-id", sys_module, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -errno;
	len = read(fd, buf, sizeof(buf));
	close(fd);
	if (len <= 0)
		return -ENOENT;
	return buildid_parse_notes(buf, (size_t)len, id);
}

int
index_scan_kernel(struct index *ix, const uint8_t *id, uint8_t idsize,
    const char *proc_modules, const char *sys_module, uint64_t wall_ns)
{
	struct ix_mod *seen = NULL, *ns;
	size_t	 nseen = 0, i;
	FILE	*f;
	char	 line[1024];

	if (ix == NULL)
		return 0;
	if (idsize > 0)
		add_object(ix, "[kernel.kallsyms]", id, idsize, BID_KERNEL, KIND_KERNEL,
		    0, wall_ns, 0, NULL);
	if ((f = fopen(proc_modules, "re")) == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL) {
		struct ix_mod m;
		struct ix_op *o;
		unsigned long long size, addr;
		char	 path[PATH_MAX + 64], dir[PATH_MAX];
		int	 rc, known = 0;

		memset(&m, 0, sizeof(m));
		if (sscanf(line, "%63s %llu %*d %*s %*s %llx", m.name, &size, &addr) != 3)
			continue;
		m.addr = addr;
		if ((rc = read_module_id(sys_module, m.name, m.bid)) > 0)
			m.bidsize = (uint8_t)rc;
		snprintf(path, sizeof(path), "[%s]", m.name);
		if (m.bidsize > 0)
			add_object(ix, path, m.bid, m.bidsize, BID_KERNEL, KIND_MODULE, 0,
			    wall_ns, 0, NULL);
		for (i = 0; i < ix->nmods; i++)
			if (strcmp(ix->mods[i].name, m.name) == 0 && ix->mods[i].addr == m.addr &&
			    ix->mods[i].bidsize == m.bidsize &&
			    memcmp(ix->mods[i].bid, m.bid, m.bidsize) == 0)
				known = 1;
		if ((o = batch_add(&ix->early, OP_MODULE)) == NULL ||
		    (o->owned = strdup(m.name)) == NULL) {
			if (o != NULL)
				ix->early.n--;
			continue;
		}
		o->s = arena_strdup(&ix->arena, path);
		if (o->s == NULL)
			o->s = "";
		memcpy(o->bid, m.bid, m.bidsize);
		o->bidsize = m.bidsize;
		o->v[0] = (int64_t)addr;
		o->v[1] = (int64_t)size;
		o->v[2] = o->v[3] = (int64_t)wall_ns;
		if (!known) {		/* new or changed: its sections too */
			snprintf(dir, sizeof(dir), "%s/%s/sections", sys_module, m.name);
			index_read_sections(dir, &o->sect, &o->nsect);
			log_debug("index: module %s at 0x%llx, %zu sections", m.name, addr,
			    o->nsect);
		}
		if ((ns = reallocarray(seen, nseen + 1, sizeof(*ns))) != NULL) {
			seen = ns;
			seen[nseen++] = m;
		}
	}
	fclose(f);
	free(ix->mods);
	ix->mods = seen;
	ix->nmods = nseen;
	return (int)nseen;
}

/* ---------------------------------------------------------------- segment scans */

struct scan_ctx {
	struct index	*ix;
	struct record_layout layout;
	int64_t		 wall_ref, mono_ref;
	int		 init_done;	/* past FINISHED_INIT: mappings are new */
	int		 count;
	uint64_t	 samples, lost, records;
};

static uint64_t
scan_wall(struct scan_ctx *c, uint64_t t)
{
	return (uint64_t)(c->wall_ref + ((int64_t)t - c->mono_ref));
}

static int
scan_record_cb(const struct perf_event_header *h, void *arg)
{
	struct scan_ctx *c = arg;
	struct record rec;
	uint64_t wall;
	char	 buf[PATH_MAX];

	if (record_decode(h, h->size, &c->layout, &rec) < 0)
		return 1;
	c->records++;
	switch (rec.type) {
	case PERF_RECORD_SAMPLE:
		c->samples++;
		break;
	case PERF_RECORD_LOST:
		c->lost += rec.lost.lost;
		break;
	case PERF_RECORD_FINISHED_INIT:
		c->init_done = 1;
		break;
	case PERF_RECORD_MMAP2:
		if (rec.mmap.build_id_size == 0 || rec.mmap.pid == (uint32_t)-1)
			break;
		wall = rec.has_sid && rec.sid.time != 0 ?
		    scan_wall(c, rec.sid.time) : (uint64_t)c->wall_ref;
		add_object(c->ix, strip_deleted(rec.mmap.filename, buf, sizeof(buf)),
		    rec.mmap.build_id, rec.mmap.build_id_size, BID_NONE, KIND_USER,
		    rec.mmap.pid, wall, c->count && c->init_done, NULL);
		break;
	}
	return 0;
}

static int
read_section(struct perfdata_file *f, int feat, void *buf, size_t len)
{
	struct perf_file_section s;

	if (perfdata_feature(f, feat, &s) < 0 || s.size < len)
		return -1;
	return pread(f->fd, buf, len, (off_t)s.offset) == (ssize_t)len ? 0 : -1;
}

static int
is_repaired(struct perfdata_file *f)
{
	struct perf_file_section s;
	char	 buf[256];
	ssize_t	 n;

	if (perfdata_feature(f, HEADER_VERSION, &s) < 0 || s.size < 4)
		return 0;
	n = pread(f->fd, buf, s.size < sizeof(buf) - 1 ? s.size : sizeof(buf) - 1,
	    (off_t)s.offset);
	if (n <= 4)
		return 0;
	buf[n] = '\0';
	return memmem(buf + 4, (size_t)n - 4, "(repaired)", 10) != NULL;
}

/* The kernel and modules of a segment's build-id table, at its start. */
static void
scan_buildid_table(struct index *ix, struct perfdata_file *f, uint64_t wall)
{
	struct perf_file_section s;
	uint8_t	*buf, *p;

	if (perfdata_feature(f, HEADER_BUILD_ID, &s) < 0 || s.size > (64U << 20) ||
	    (buf = malloc(s.size + 1)) == NULL)
		return;
	if (pread(f->fd, buf, s.size, (off_t)s.offset) != (ssize_t)s.size) {
		free(buf);
		return;
	}
	buf[s.size] = '\0';
	for (p = buf; p + sizeof(struct build_id_entry) <= buf + s.size;) {
		struct build_id_entry *e = (struct build_id_entry *)p;
		size_t	 len = e->header.size, idsize = BUILD_ID_MAX;
		const char *name = e->filename;

		if (len < sizeof(*e) || p + len > buf + s.size)
			break;
		if (e->header.misc & PERF_RECORD_MISC_BUILD_ID_SIZE)
			idsize = e->build_id[20];
		if ((e->header.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL &&
		    idsize > 0 && idsize <= BUILD_ID_MAX &&
		    memchr(name, '\0', len - sizeof(*e)) != NULL)
			add_object(ix, name, e->build_id, (uint8_t)idsize, BID_KERNEL,
			    strcmp(name, "[kernel.kallsyms]") == 0 ? KIND_KERNEL : KIND_MODULE,
			    0, wall, 0, NULL);
		p += len;
	}
	free(buf);
}

/* perf-000042-20261122T125535Z.data: the wall clock second it began. */
static int64_t
name_wall(const char *name)
{
	struct tm tm;
	const char *p = strrchr(name, '-');

	memset(&tm, 0, sizeof(tm));
	if (p == NULL || strptime(p + 1, "%Y%m%dT%H%M%SZ", &tm) == NULL)
		return 0;
	return (int64_t)timegm(&tm) * 1000000000LL;
}

/*
 * Index a closed segment from its file: a segment the index does not know
 * (COUNT: its mappings count as new), or one that was open at a crash
 * (KNOWN_START: the start time the index has; mappings already counted).
 */
static int
scan_segment(struct index *ix, const char *name, uint64_t seq, int count,
    int64_t known_start)
{
	struct perfdata_file f;
	struct scan_ctx c;
	struct ix_op *o;
	char	 path[PATH_MAX], err[512];
	uint64_t clock[3], st[2], saved = ix->cur_seq;
	int64_t	 end;

	snprintf(path, sizeof(path), "%s/%s", ix->segdir, name);
	if (perfdata_open(&f, path, err, sizeof(err)) < 0) {
		log_warnx("index: cannot scan %s", err);
		return -1;
	}
	memset(&c, 0, sizeof(c));
	c.ix = ix;
	c.count = count;
	c.layout.sample_type = f.attrs[0].attr.sample_type;
	c.layout.sample_id_all = f.attrs[0].attr.sample_id_all;
	memset(st, 0, sizeof(st));
	read_section(&f, HEADER_SAMPLE_TIME, st, sizeof(st));
	/* The reference pair: CLOCK_DATA, else the name's second and the first time stamp. */
	if (read_section(&f, HEADER_CLOCK_DATA, clock, sizeof(clock)) == 0) {
		c.wall_ref = (int64_t)clock[1];
		c.mono_ref = (int64_t)clock[2];
	} else {
		c.wall_ref = known_start ? known_start : name_wall(name);
		c.mono_ref = (int64_t)st[0];
	}
	ix->cur_seq = seq;
	scan_buildid_table(ix, &f, (uint64_t)c.wall_ref);
	if (perfdata_walk(&f, scan_record_cb, &c) < 0)
		log_warnx("index: %s: read error, indexed up to it", path);
	end = st[1] != 0 ? (int64_t)scan_wall(&c, st[1]) : c.wall_ref;
	if ((o = batch_add(&ix->early, OP_SEG_FULL)) != NULL &&
	    (o->owned = strdup(name)) != NULL) {
		o->v[0] = (int64_t)seq;
		o->v[1] = st[0] != 0 ? (int64_t)scan_wall(&c, st[0]) : c.wall_ref;
		o->v[2] = end;
		o->v[3] = (int64_t)f.file_size;
		o->v[4] = (int64_t)c.samples;
		o->v[5] = (int64_t)c.lost;
		o->v[6] = (int64_t)c.records;
		o->reason = is_repaired(&f) ? "repaired" : "closed";
	} else if (o != NULL)
		ix->early.n--;
	perfdata_file_close(&f);
	ix->cur_seq = saved;
	index_commit(ix);
	return 0;
}

/*
 * Make the index agree with the segment directory (see index.h).  Runs at
 * open, before the writer starts.
 */
static int
reconcile(struct index *ix)
{
	struct dbseg { uint64_t seq; int64_t start; char state[16]; char name[256]; } *v = NULL, *nv;
	size_t	 n = 0, i;
	sqlite3_stmt *s;
	DIR	*d;
	struct dirent *de;
	char	 path[PATH_MAX];
	struct stat sb;
	int	 scanned = 0, deleted = 0, repaired = 0;

	if (sqlite3_prepare_v2(ix->db, "SELECT seq, start_ns, state, name FROM segments "
	    "WHERE state != 'deleted'", -1, &s, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL)
			break;
		v = nv;
		v[n].seq = (uint64_t)sqlite3_column_int64(s, 0);
		v[n].start = sqlite3_column_int64(s, 1);
		snprintf(v[n].state, sizeof(v[n].state), "%s", sqlite3_column_text(s, 2));
		snprintf(v[n].name, sizeof(v[n].name), "%s", sqlite3_column_text(s, 3));
		n++;
	}
	sqlite3_finalize(s);

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", ix->segdir, v[i].name);
		if (stat(path, &sb) == 0) {
			if (strcmp(v[i].state, "open") == 0) {
				/* Open at a crash, finished by repair since. */
				scan_segment(ix, v[i].name, v[i].seq, 0, v[i].start);
				repaired++;
			}
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s.partial", ix->segdir, v[i].name);
		if (stat(path, &sb) == 0)
			continue;	/* torn and not repairable: left to the operator */
		index_segment_deleted(ix, v[i].name);
		deleted++;
	}
	if ((d = opendir(ix->segdir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			uint64_t seq = name_seq(de->d_name);
			size_t	 len = strlen(de->d_name);

			if (seq == 0 || len < 5 || strcmp(de->d_name + len - 5, ".data") != 0)
				continue;
			for (i = 0; i < n && v[i].seq != seq; i++)
				;
			if (i < n)
				continue;
			scan_segment(ix, de->d_name, seq, 1, 0);
			scanned++;
		}
		closedir(d);
	}
	free(v);
	index_commit(ix);
	if (scanned || deleted || repaired)
		log_info("index: reconciled with %s: %d segments indexed from their files, "
		    "%d open at a crash, %d gone", ix->segdir, scanned, repaired, deleted);
	return 0;
}

/* ---------------------------------------------------------------- open/close */

static int
load_rows(struct index *ix, char *err, size_t errlen)
{
	sqlite3_stmt *s;
	int	 rc;

	if (sqlite3_prepare_v2(ix->db, "SELECT id, path, build_id, kind, source, "
	    "first_seen, last_seen, nr_maps, nr_procs FROM objects", -1, &s, NULL) != SQLITE_OK)
		goto fail;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const uint8_t *id = sqlite3_column_blob(s, 2);
		const char *kind = (const char *)sqlite3_column_text(s, 3);
		const char *src = (const char *)sqlite3_column_text(s, 4);
		struct ix_obj *e;
		ssize_t	 slot;
		int	 len = sqlite3_column_bytes(s, 2);
		size_t	 k;

		if (id == NULL || len <= 0 || len > BUILD_ID_MAX)
			continue;
		slot = obj_get(ix, (const char *)sqlite3_column_text(s, 1), id, (uint8_t)len,
		    sqlite3_column_int64(s, 0));
		if (slot < 0) {
			sqlite3_finalize(s);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		e = OBJ(ix, (size_t)slot);
		e->flags = OBJ_WRITTEN;
		e->first = (uint64_t)sqlite3_column_int64(s, 5);
		e->last = (uint64_t)sqlite3_column_int64(s, 6);
		e->nr_maps = (uint64_t)sqlite3_column_int64(s, 7);
		e->nr_procs = (uint64_t)sqlite3_column_int64(s, 8);
		for (k = 0; k < 3; k++)
			if (kind && strcmp(kind, kind_names[k]) == 0)
				e->kind = (uint8_t)k;
		for (k = 0; k < sizeof(source_names) / sizeof(source_names[0]); k++)
			if (src && strcmp(src, source_names[k]) == 0)
				e->source = (uint8_t)k;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", ix->path, sqlite3_errmsg(ix->db));
	return -1;
}

/* Open and check; 1 if the file is damaged, -1 on other errors. */
static int
db_open(struct index *ix, char *err, size_t errlen)
{
	sqlite3_stmt *s;
	const char *res;
	char	 sql[256];
	int	 rc, damaged = 0;

	rc = sqlite3_open_v2(ix->path, &ix->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	    SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", ix->path, ix->db ? sqlite3_errmsg(ix->db) :
		    sqlite3_errstr(rc));
		return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ? 1 : -1;
	}
	sqlite3_busy_timeout(ix->db, 5000);
	sqlite3_extended_result_codes(ix->db, 0);
	/* Larger pages: fewer splits for the random inserts of the two indexes (new files only). */
	sqlite3_exec(ix->db, "PRAGMA page_size = 16384", NULL, NULL, NULL);
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
			rc = sqlite3_step(s);
			res = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(s, 0) : NULL;
			if (res == NULL || strcmp(res, "ok") != 0) {
				char	*nl;

				snprintf(err, errlen, "%s", res ? res : sqlite3_errmsg(ix->db));
				while ((nl = strchr(err, '\n')) != NULL)
					*nl = ' ';
				damaged = 1;
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
	snprintf(sql, sizeof(sql), "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -%llu; "
	    "PRAGMA temp_store = MEMORY; PRAGMA wal_autocheckpoint = 0",
	    (unsigned long long)(ix->conf->index_cache_size / 1024));
	sqlite3_exec(ix->db, sql, NULL, NULL, NULL);
	return 0;
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
    char *err, size_t errlen)
{
	struct index *ix;
	char	 why[512], aside[PATH_MAX + 32];
	int	 rc, i;

	*out = NULL;
	if ((ix = calloc(1, sizeof(*ix))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ix->conf = conf;
	ix->next_id = 1;
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
	why[0] = '\0';
	if ((rc = db_open(ix, why, sizeof(why))) < 0) {
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
	for (i = 0; i < ST_MAX; i++)
		if (sqlite3_prepare_v3(ix->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
		    &ix->st[i], NULL) != SQLITE_OK) {
			snprintf(err, errlen, "%s: %s", ix->path, sqlite3_errmsg(ix->db));
			goto fail;
		}
	if (load_rows(ix, err, errlen) < 0)
		goto fail;
	reconcile(ix);
	if (conf->index_retention_ms != 0) {
		struct ix_op *o = batch_add(&ix->early, OP_RETENTION);

		if (o != NULL)
			o->v[0] = walltime_now() - (int64_t)(conf->index_retention_ms * 1000000ULL);
		index_commit(ix);
	}
	ix->last_retention_ns = ix->last_commit_ns = mono_ns();
	sqlite3_wal_hook(ix->db, wal_cb, ix);
	if ((rc = pthread_create(&ix->thread, NULL, writer_main, ix)) != 0) {
		snprintf(err, errlen, "index: cannot start the writer: %s", strerror(rc));
		goto fail;
	}
	ix->running = 1;
	log_info("index: %s, %zu objects", ix->path, ix->nobjs);
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
	if (ix->db != NULL)
		index_flush(ix);
	if (ix->running) {
		pthread_mutex_lock(&ix->mu);
		ix->stopping = 1;
		pthread_cond_signal(&ix->cv_work);
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
	free(ix->ohash);
	free(ix->unres);
	free(ix->uhash);
	free(ix->dirty);
	free(ix->mods);
	pthread_mutex_destroy(&ix->mu);
	pthread_cond_destroy(&ix->cv_work);
	pthread_cond_destroy(&ix->cv_idle);
	free(ix);
}
