/*
 * writer.c - the index's writer thread: it takes the batches the loop
 * hands over (index.c) and runs them in one SQLite transaction each, in
 * the order the loop queued them; it checkpoints the WAL when idle.  The
 * prepared statements and the SQL of every write live here.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "buildid.h"
#include "index_int.h"
#include "index_reader.h"
#include "log.h"
#include "record.h"
#include "walltime.h"

const char *const index_kind_names[3] = { "user", "kernel", "module" };
const char *const index_source_names[5] = {
	[BID_NONE] = "unknown", [BID_MMAP3] = "mmap3", [BID_MMAP2] = "mmap2",
	[BID_USER] = "userspace", [BID_KERNEL] = "kernel",
};

/*
 * Objects: the loop hands over, for each row that changed, its times and
 * how many maps and processes were added since the last hand-over, under
 * the id it gave the row.  A row the file does not have under that id is
 * inserted; if the file has its (path, build-id, namespace) under another
 * id (the loop forgot the binary and saw it again, or the daemon
 * restarted), that row takes the new id, its segments follow (and its
 * keys: the trigger objects_renumbered, schema.c), and the figures are
 * added up.  ?5 'unknown' (a sighting that is not a new map) keeps the
 * source the row has.
 *
 * New rows and rows of object_segs go in bulk: each statement marked
 * "bulk" inserts every row of the table batch_rows (below), which shows
 * the writer's array of the moment, in its order.  A new object is three
 * of them: its key into object_keys (a key the file has already is left
 * as it is), the row into objects, its build-id's key into object_bids
 * (index_bid_key); each in
 * the order of its table's key (run_new_objs), so that a burst of new
 * objects writes each page of the two key tables once per transaction,
 * and a statement per row (bind, step, reset, a seek from the root) is
 * not paid for each.
 *
 * Segments (schema.c, version 6): a new row holds its sightings in the
 * segment it is new in (objects.seq, seq_first, seq_last, seq_maps, the
 * "fold"), and the writer widens that segment's run of ids (segments.id_lo,
 * id_hi) to take it in; a row's sightings in any other segment go to
 * object_segs.  A row that takes another id (run_obj_known), or comes back
 * after retention, moves its fold to object_segs and folds nothing: its id
 * would widen a segment's run far past the segment's own ids.  The loop
 * marks the updates of a row it handed over new in the same segment
 * (write_op.fold): they go into the row if it holds that segment, the
 * others straight to object_segs; a row the writer did not fold after all
 * takes one statement more.
 */
#define OBJ_ADD	"source = CASE WHEN ?5 = 'unknown' THEN source ELSE ?5 END, " \
	"first_seen = min(first_seen, ?6), last_seen = max(last_seen, ?7), " \
	"nr_maps = nr_maps + ?8, nr_procs = nr_procs + ?9"
#define SEQ_NONE "seq = NULL, seq_first = NULL, seq_last = NULL, seq_maps = NULL"
/* Sightings added to a row's fold: first, last, the maps since the loop's last hand-over. */
#define SEQ_ADD(first, last, maps) "seq_first = min(seq_first, " first "), " \
	"seq_last = max(seq_last, " last "), seq_maps = seq_maps + " maps
/* The upsert of an object_segs row (nr_maps: the maps since the loop's last hand-over). */
#define OBJSEG_UPSERT "ON CONFLICT(object_id, seq) DO UPDATE " \
	"SET first_seen = min(first_seen, excluded.first_seen), " \
	"last_seen = max(last_seen, excluded.last_seen), nr_maps = nr_maps + excluded.nr_maps"

static const char *const stmt_sql[ST_MAX] = {
	/* bulk ("WHERE true": the ON of the upsert is not a join's) */
	[ST_OBJ_KEY] = "INSERT INTO object_keys(path, build_id, mnt_ns, id) "
	    "SELECT s, bid, v5, v0 FROM batch_rows WHERE true ON CONFLICT DO NOTHING",
	/* bulk */
	[ST_OBJ_NEW] = "INSERT INTO objects(id, path, build_id, kind, source, first_seen, "
	    "last_seen, nr_maps, nr_procs, mnt_ns, ns_uid, seq, seq_first, seq_last, seq_maps) "
	    "SELECT v0, s, bid, kind, source, v1, v2, v3, v4, v5, v6, sq, sf, sl, sm "
	    "FROM batch_rows",
	/* bulk */
	[ST_OBJ_BID] = "INSERT OR IGNORE INTO object_bids(bid_key, id) "
	    "SELECT bk, v0 FROM batch_rows",
	[ST_OBJ_UPD] = "UPDATE objects SET " OBJ_ADD " WHERE id = ?1",
	/* the same, with sightings in segment ?13 if the row holds it (+?16 maps) */
	[ST_OBJ_UPD_FOLD] = "UPDATE objects SET " OBJ_ADD ", " SEQ_ADD("?14", "?15", "?16")
	    " WHERE id = ?1 AND seq = ?13",
	[ST_OBJ_FIND] = "SELECT id FROM object_keys WHERE path = ?2 AND build_id = ?3 AND "
	    "mnt_ns = ?10",
	[ST_OBJ_MOVE] = "UPDATE objects SET id = ?1, " OBJ_ADD ", " SEQ_NONE " WHERE id = ?12",
	[ST_OBJSEG_MOVE] = "UPDATE object_segs SET object_id = ?1 WHERE object_id = ?2",
	/* the fold of row ?1 (its id still in its segment's run) into object_segs */
	[ST_OBJ_UNFOLD] = "INSERT INTO object_segs(object_id, seq, first_seen, last_seen, nr_maps) "
	    "SELECT id, seq, seq_first, seq_last, seq_maps FROM objects "
	    "WHERE id = ?1 AND seq IS NOT NULL " OBJSEG_UPSERT,
	/* sightings in segment ?2, into the fold of row ?1 if it is of ?2 */
	[ST_OBJ_SEEN] = "UPDATE objects SET " SEQ_ADD("?3", "?4", "?5") " WHERE id = ?1 AND seq = ?2",
	/* bulk; none of a deleted segment (deleted before the batch's rows ran) */
	[ST_OBJSEG] = "INSERT INTO object_segs(object_id, seq, first_seen, last_seen, nr_maps) "
	    "SELECT v0, sq, sf, sl, sm FROM batch_rows WHERE NOT EXISTS (SELECT 1 FROM "
	    "segments g WHERE g.seq = sq AND g.state = 'deleted') " OBJSEG_UPSERT,
	/* ids ?2 .. ?3 folded into segment ?1: its run takes them in (not a deleted one's) */
	[ST_SEG_RANGE] = "UPDATE segments SET id_lo = min(coalesce(id_lo, ?2), ?2), "
	    "id_hi = max(coalesce(id_hi, ?3), ?3) WHERE seq = ?1 AND state != 'deleted'",
	/*
	 * the folds of segment ?1 among ids ?2 .. ?3 (the segment's run if NULL)
	 * to object_segs if it has no row yet, ...
	 */
	[ST_SEG_UNFOLD] = "INSERT INTO object_segs(object_id, seq, first_seen, last_seen, "
	    "nr_maps) SELECT id, seq, seq_first, seq_last, seq_maps FROM objects "
	    "WHERE id BETWEEN ?2 AND ?3 AND seq = ?1 AND NOT EXISTS (SELECT 1 FROM segments "
	    "WHERE seq = ?1) " OBJSEG_UPSERT,
	/* ... and out of the rows */
	[ST_SEG_CLEAR] = "UPDATE objects SET " SEQ_NONE " WHERE id BETWEEN "
	    "coalesce(?2, (SELECT id_lo FROM segments WHERE seq = ?1)) AND "
	    "coalesce(?3, (SELECT id_hi FROM segments WHERE seq = ?1)) AND seq = ?1",
	[ST_SEG_OPEN] = "INSERT INTO segments(seq, name, start_ns, state) "
	    "VALUES (?1, ?2, ?3, 'open') ON CONFLICT(seq) DO UPDATE SET "
	    "name = excluded.name, start_ns = excluded.start_ns, state = 'open', "
	    "end_ns = NULL, deleted_ns = NULL",
	/* an upsert, not a replace: the row's run of ids stays */
	[ST_SEG_FULL] = "INSERT INTO segments(seq, name, start_ns, end_ns, "
	    "size, samples, lost, records, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
	    "ON CONFLICT(seq) DO UPDATE SET name = excluded.name, start_ns = excluded.start_ns, "
	    "end_ns = excluded.end_ns, size = excluded.size, samples = excluded.samples, "
	    "lost = excluded.lost, records = excluded.records, state = excluded.state, "
	    "deleted_ns = NULL",
	[ST_SEG_CLOSE] = "UPDATE segments SET end_ns = ?2, size = ?3, samples = ?4, "
	    "lost = ?5, records = ?6, state = ?7 WHERE seq = ?1",
	[ST_SEG_DELETED] = "UPDATE segments SET state = 'deleted', deleted_ns = ?2 "
	    "WHERE seq = ?1",
	/* The segment row stays as history; which objects it held goes with it. */
	[ST_SEG_FORGET] = "DELETE FROM object_segs WHERE seq = ?1",
	[ST_UNRES] = "INSERT INTO unresolved(path, reason, first_seen, last_seen, nr_maps) "
	    "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(path, reason) DO UPDATE SET "
	    "first_seen = min(first_seen, excluded.first_seen), "
	    "last_seen = max(last_seen, excluded.last_seen), "
	    "nr_maps = nr_maps + excluded.nr_maps",
	[ST_MODULE] = "INSERT INTO modules(name, path, build_id, addr, size, first_seen, "
	    "last_seen) VALUES (?1, '[' || ?1 || ']', ?3, ?4, ?5, ?6, ?7) "
	    "ON CONFLICT(name, build_id, addr) DO UPDATE SET last_seen = excluded.last_seen "
	    "RETURNING id",
	[ST_MODSECT] = "INSERT OR REPLACE INTO module_sections(module_id, name, addr) "
	    "VALUES (?1, ?2, ?3)",
};

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

/*
 * batch_rows: an eponymous virtual table (of the writer's connection
 * only, nothing of it is in the file) over ix->rows, the array of the
 * moment: write_ops as rows (v0, s, bid, kind, source, v1 ... v6, bk,
 * sq, sf, sl, sm), in the array's order.  v6 < 0 reads as NULL
 * (objects.ns_uid); bk is the build-id's key in object_bids; sq ... sm
 * are the op's sightings in a segment (sv), NULL if it has none or while
 * ix->rows_unfolded.
 */
enum { BR_V0, BR_S, BR_BID, BR_KIND, BR_SOURCE, BR_V1, BR_BK = BR_V1 + 6, BR_SQ };

struct batch_vtab {
	sqlite3_vtab	 base;
	struct index	*ix;
};

struct batch_cursor {
	sqlite3_vtab_cursor base;
	size_t		 i;
};

static int
batch_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
    sqlite3_vtab **vt, char **err)
{
	struct batch_vtab *b;

	if (sqlite3_declare_vtab(db, "CREATE TABLE x(v0, s, bid, kind, source, v1, v2, v3, "
	    "v4, v5, v6, bk, sq, sf, sl, sm)") != SQLITE_OK)
		return SQLITE_ERROR;
	if ((b = sqlite3_malloc(sizeof(*b))) == NULL)
		return SQLITE_NOMEM;
	memset(b, 0, sizeof(*b));
	b->ix = aux;
	*vt = &b->base;
	return SQLITE_OK;
}

static int
batch_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int
batch_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	info->estimatedCost = 1e6;
	return SQLITE_OK;
}

static int
batch_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **cur)
{
	struct batch_cursor *c;

	if ((c = sqlite3_malloc(sizeof(*c))) == NULL)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*cur = &c->base;
	return SQLITE_OK;
}

static int
batch_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int
batch_filter(sqlite3_vtab_cursor *cur, int idxnum, const char *idxstr, int argc,
    sqlite3_value **argv)
{
	((struct batch_cursor *)cur)->i = 0;
	return SQLITE_OK;
}

/*
 * The rows are read in a table's key order, not in the order they are in
 * memory (cache misses were most of batch_column): while SQLite inserts
 * this one, the row 2 * AHEAD on is fetched, and the path of the row
 * AHEAD on (fetched by then).
 */
#define BATCH_AHEAD	8

static int
batch_next(sqlite3_vtab_cursor *cur)
{
	const struct batch_vtab *b = (const struct batch_vtab *)cur->pVtab;
	const struct write_op *o;
	size_t	 i = ++((struct batch_cursor *)cur)->i;

	if (i + 2 * BATCH_AHEAD < b->ix->nrows) {
		o = b->ix->rows[i + 2 * BATCH_AHEAD];
		__builtin_prefetch(o);
		__builtin_prefetch((const char *)o + sizeof(*o) - 1);
	}
	if (i + BATCH_AHEAD < b->ix->nrows && (o = b->ix->rows[i + BATCH_AHEAD])->s != NULL)
		__builtin_prefetch(o->s);
	return SQLITE_OK;
}

static int
batch_eof(sqlite3_vtab_cursor *cur)
{
	const struct batch_vtab *b = (const struct batch_vtab *)cur->pVtab;

	return ((struct batch_cursor *)cur)->i >= b->ix->nrows;
}

static int
batch_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	const struct batch_vtab *b = (const struct batch_vtab *)cur->pVtab;
	const struct write_op *o = b->ix->rows[((struct batch_cursor *)cur)->i];

	switch (col) {
	case BR_V0:
		sqlite3_result_int64(ctx, o->v[0]);
		break;
	case BR_S:
		sqlite3_result_text(ctx, o->s, -1, SQLITE_STATIC);
		break;
	case BR_BID:
		sqlite3_result_blob(ctx, o->bid, o->bidsize, SQLITE_STATIC);
		break;
	case BR_KIND:
		sqlite3_result_text(ctx, index_kind_names[o->kind], -1, SQLITE_STATIC);
		break;
	case BR_SOURCE:
		sqlite3_result_text(ctx, index_source_names[o->source], -1, SQLITE_STATIC);
		break;
	case BR_BK:
		sqlite3_result_int64(ctx, index_bid_key(o->bid, o->bidsize));
		break;
	case BR_SQ:
	case BR_SQ + 1:
	case BR_SQ + 2:
	case BR_SQ + 3:
		if (o->sv[0] == 0 || b->ix->rows_unfolded)
			sqlite3_result_null(ctx);
		else
			sqlite3_result_int64(ctx, o->sv[col - BR_SQ]);
		break;
	default:		/* v1 ... v6 */
		if (col - BR_V1 + 1 == 6 && o->v[6] < 0)
			sqlite3_result_null(ctx);
		else
			sqlite3_result_int64(ctx, o->v[col - BR_V1 + 1]);
		break;
	}
	return SQLITE_OK;
}

static int
batch_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = (sqlite3_int64)((struct batch_cursor *)cur)->i;
	return SQLITE_OK;
}

static const sqlite3_module batch_module = {
	.iVersion = 0,
	.xCreate = NULL,		/* eponymous only */
	.xConnect = batch_connect,
	.xBestIndex = batch_best_index,
	.xDisconnect = batch_disconnect,
	.xOpen = batch_open,
	.xClose = batch_close,
	.xFilter = batch_filter,
	.xNext = batch_next,
	.xEof = batch_eof,
	.xColumn = batch_column,
	.xRowid = batch_rowid,
};

/* Bulk statement ST over V[0..N) (batch_rows); the rows it changed, or -1. */
static int64_t
run_bulk(struct index *ix, int st, const struct write_op **v, size_t n)
{
	int	 rc;

	if (n == 0)
		return 0;
	ix->rows = v;
	ix->nrows = n;
	rc = step_reset(ix, ix->st[st]);
	ix->rows = NULL;
	ix->nrows = 0;
	return rc < 0 ? -1 : sqlite3_changes64(ix->db);
}

static int
run_retention(struct index *ix, int64_t cutoff)
{
	static const char *const sql[] = {
		"DELETE FROM object_segs WHERE seq IN (SELECT seq FROM segments "
		"  WHERE state = 'deleted' AND coalesce(end_ns, start_ns) < ?1)",
		"UPDATE objects SET " SEQ_NONE " WHERE id IN (SELECT o.id FROM segments s "
		"  CROSS JOIN objects o ON o.id BETWEEN s.id_lo AND s.id_hi AND +o.seq = s.seq "
		"  WHERE s.state = 'deleted' AND coalesce(s.end_ns, s.start_ns) < ?1)",
		"DELETE FROM segments WHERE state = 'deleted' AND coalesce(end_ns, start_ns) < ?1",
		"DELETE FROM objects WHERE last_seen < ?1 AND seq IS NULL AND NOT EXISTS "
		"  (SELECT 1 FROM object_segs os WHERE os.object_id = objects.id)",
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

/* The parameters of an object statement (the ones it has: see stmt_sql). */
static void
bind_obj(sqlite3_stmt *s, const struct write_op *o)
{
	int	 i, n = sqlite3_bind_parameter_count(s);

	sqlite3_bind_int64(s, 1, o->v[0]);
	sqlite3_bind_text(s, 2, o->s, -1, SQLITE_STATIC);
	sqlite3_bind_blob(s, 3, o->bid, o->bidsize, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, index_kind_names[o->kind], -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, index_source_names[o->source], -1, SQLITE_STATIC);
	for (i = 1; i <= 4; i++)
		sqlite3_bind_int64(s, i + 5, o->v[i]);
	if (n >= 10)
		sqlite3_bind_int64(s, 10, o->v[5]);
	if (n >= 11 && o->v[6] >= 0)
		sqlite3_bind_int64(s, 11, o->v[6]);
	else if (n >= 11)
		sqlite3_bind_null(s, 11);
	for (i = 0; n >= 16 && i < 4; i++)	/* ST_OBJ_UPD_FOLD */
		sqlite3_bind_int64(s, 13 + i, o->sv[i]);
}

/*
 * An object row the file has under another id (the key's): it takes O's,
 * its fold going to object_segs with its other segments (writer.c's
 * head); O's sightings go there too, later (the caller's).
 */
static int
run_obj_known(struct index *ix, const struct write_op *o)
{
	sqlite3_stmt *s;
	int64_t	 old;
	int	 rc;

	bind_obj(s = ix->st[ST_OBJ_FIND], o);
	rc = sqlite3_step(s);
	old = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_reset(s);
	if (rc != SQLITE_ROW) {
		log_warnx("index: object %s: %s", o->s, sqlite3_errmsg(ix->db));
		return -1;
	}
	s = ix->st[ST_OBJ_UNFOLD];
	sqlite3_bind_int64(s, 1, old);
	if (step_reset(ix, s) < 0)
		return -1;
	s = ix->st[ST_OBJSEG_MOVE];
	sqlite3_bind_int64(s, 1, o->v[0]);
	sqlite3_bind_int64(s, 2, old);
	if (step_reset(ix, s) < 0)
		return -1;
	bind_obj(s = ix->st[ST_OBJ_MOVE], o);
	sqlite3_bind_int64(s, 12, old);
	return step_reset(ix, s);
}

static int
cmp_int64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* Build-ids as SQLite orders blobs: bytes, then the shorter first. */
static int
cmp_bid(const struct write_op *a, const struct write_op *b)
{
	int	 c;

	if ((c = memcmp(a->bid, b->bid, a->bidsize < b->bidsize ? a->bidsize :
	    b->bidsize)) != 0)
		return c;
	return a->bidsize < b->bidsize ? -1 : a->bidsize > b->bidsize;
}

/* The order of object_keys' key: path, build-id, namespace. */
static int
cmp_op_key(const void *pa, const void *pb)
{
	const struct write_op *a = *(const struct write_op *const *)pa;
	const struct write_op *b = *(const struct write_op *const *)pb;
	int	 c;

	if ((c = strcmp(a->s, b->s)) != 0 || (c = cmp_bid(a, b)) != 0)
		return c;
	return cmp_int64(a->v[5], b->v[5]);
}

/* A row and its build-id's key (index_bid_key) as an unsigned number. */
struct bid_ref {
	uint64_t	 key;
	const struct write_op *o;
};

static int
cmp_bid_ref_id(const void *pa, const void *pb)
{
	return cmp_int64(((const struct bid_ref *)pa)->o->v[0],
	    ((const struct bid_ref *)pb)->o->v[0]);
}

/*
 * V[0..N) in object_bids' order: the build-id's key, then the id.  BR:
 * room for 2N.  The keys of a burst are random and a comparison sort
 * through pointers was a sixth of the writer's time: a radix sort of the
 * keys, a byte a pass (stable; a byte all keys share is skipped), then
 * each run of equal keys (a build-id seen under several paths) by id.
 */
static void
sort_bids(const struct write_op **v, size_t n, struct bid_ref *br)
{
	struct bid_ref *a = br, *b = br + n, *t;
	size_t	 count[256], i, j, sum;
	int	 shift;

	for (i = 0; i < n; i++) {
		a[i].key = (uint64_t)index_bid_key(v[i]->bid, v[i]->bidsize) ^
		    0x8000000000000000ULL;
		a[i].o = v[i];
	}
	for (shift = 0; shift < 64; shift += 8) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[a[i].key >> shift & 0xff]++;
		if (n == 0 || count[a[0].key >> shift & 0xff] == n)
			continue;
		for (i = 0, sum = 0; i < 256; i++) {
			j = count[i];
			count[i] = sum;
			sum += j;
		}
		for (i = 0; i < n; i++)
			b[count[a[i].key >> shift & 0xff]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && a[j].key == a[i].key; j++)
			;
		if (j - i > 1)
			qsort(a + i, j - i, sizeof(*a), cmp_bid_ref_id);
	}
	for (i = 0; i < n; i++)
		v[i] = a[i].o;
}

static int
cmp_op_id(const void *pa, const void *pb)
{
	const struct write_op *a = *(const struct write_op *const *)pa;
	const struct write_op *b = *(const struct write_op *const *)pb;

	return cmp_int64(a->v[0], b->v[0]);
}

/*
 * V[0..N) in CMP's order.  The rows come in the order they were seen,
 * often the order of a table's key already (ids, object_segs): a
 * pass over them is cheaper than sorting.
 */
static void
sort_ops(const struct write_op **v, size_t n, int (*cmp)(const void *, const void *))
{
	size_t	 i;

	for (i = 1; i < n; i++)
		if (cmp(&v[i - 1], &v[i]) > 0) {
			qsort(v, n, sizeof(*v), cmp);
			return;
		}
}

/*
 * The rows of a transaction gathered until the next segment event (or
 * its end), each kind in the transaction's order: objects, then
 * sightings in past segments, then unresolved mappings, as each batch
 * has them.  SEGS also takes, as the objects are written, the ops whose
 * sightings go to object_segs (writer.c's head); NEWV, TMP and BR are
 * room to sort in.
 */
struct rows {
	const struct write_op **objs, **segs, **unres, **newv, **tmp;
	struct bid_ref *br;		/* room for 2 * cap */
	size_t	 nobjs, nsegs, nunres, cap;
};

/*
 * Segment SEQ's run of ids widened to LO .. HI; its folds there undone if
 * it has no row (to object_segs), or is deleted (gone: they were handed
 * over in the batch that deleted it, after its deletion ran).
 */
static int
run_seg_range(struct index *ix, int64_t seq, int64_t lo, int64_t hi)
{
	static const int st[] = { ST_SEG_RANGE, ST_SEG_UNFOLD, ST_SEG_CLEAR };
	sqlite3_stmt *s;
	size_t	 i;

	for (i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		s = ix->st[st[i]];
		sqlite3_bind_int64(s, 1, seq);
		sqlite3_bind_int64(s, 2, lo);
		sqlite3_bind_int64(s, 3, hi);
		if (step_reset(ix, s) < 0)
			return -1;
		if (i == 0 && sqlite3_changes(ix->db) > 0)
			return 0;
		if (i == 0)	/* a rebuild's scan hands objects over before the segment's row */
			log_debug("index: objects of segment %lld, which has no row yet or is "
			    "deleted", (long long)seq);
	}
	return 0;
}

/* The runs of ids the rows V[0..N) (in id order) folded into their segments. */
static int
run_seg_ranges(struct index *ix, const struct write_op **v, size_t n)
{
	struct { int64_t seq, lo, hi; } g[8];
	size_t	 i, j, ng = 0;

	for (i = 0; i < n; i++) {
		if (v[i]->sv[0] == 0)
			continue;
		for (j = 0; j < ng && g[j].seq != v[i]->sv[0]; j++)
			;
		if (j == ng && ng == sizeof(g) / sizeof(g[0])) {
			for (j = 0; j < ng; j++)
				if (run_seg_range(ix, g[j].seq, g[j].lo, g[j].hi) < 0)
					return -1;
			j = ng = 0;
		}
		if (j == ng) {
			g[ng].seq = v[i]->sv[0];
			g[ng++].lo = v[i]->v[0];
		}
		g[j].hi = v[i]->v[0];
	}
	for (j = 0; j < ng; j++)
		if (run_seg_range(ix, g[j].seq, g[j].lo, g[j].hi) < 0)
			return -1;
	return 0;
}

/*
 * The new object rows of a group (see stmt_sql), V[0..N) (reordered;
 * R's TMP and BR: room to sort): the keys in key order; if some were in
 * the file already (fewer rows added than keys), which ones: their key's
 * id is not the row's.  The others' rows in id order (at the end of
 * objects), folding their segment if FOLD (writer.c's head), their
 * build-ids in their keys' order; then the rows the file had take their
 * new ids, once every row they could be is in.  The sightings not folded
 * are added to R's SEGS.
 */
static int
run_new_objs(struct index *ix, struct rows *r, const struct write_op **v, size_t n, int fold)
{
	const struct write_op **tmp = r->tmp;
	sqlite3_stmt *s;
	int64_t	 added, id;
	size_t	 i, nnew = n;
	int	 rc;

	memcpy(tmp, v, n * sizeof(*v));		/* in id order as a rule */
	sort_ops(v, n, cmp_op_key);
	if ((added = run_bulk(ix, ST_OBJ_KEY, v, n)) < 0)
		return -1;
	if ((size_t)added < n)
		nnew = 0;
	for (i = 0; (size_t)added < n && i < n; i++) {
		const struct write_op *o = v[i];

		bind_obj(s = ix->st[ST_OBJ_FIND], o);
		rc = sqlite3_step(s);
		id = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
		sqlite3_reset(s);
		if (rc != SQLITE_ROW) {
			log_warnx("index: object %s: %s", o->s, sqlite3_errmsg(ix->db));
			return -1;
		}
		/* new keys first, the known ones at the end */
		if (id == o->v[0]) {
			v[i] = v[nnew];
			v[nnew++] = o;
		}
	}
	if (nnew < n)
		memcpy(tmp, v, nnew * sizeof(*v));
	sort_ops(tmp, nnew, cmp_op_id);
	ix->rows_unfolded = !fold;
	added = run_bulk(ix, ST_OBJ_NEW, tmp, nnew);
	ix->rows_unfolded = 0;
	if (added < 0 || (fold && run_seg_ranges(ix, tmp, nnew) < 0))
		return -1;
	sort_bids(v, nnew, r->br);
	if (run_bulk(ix, ST_OBJ_BID, v, nnew) < 0)
		return -1;
	for (i = 0; !fold && i < nnew; i++)
		if (v[i]->sv[0] != 0)
			r->segs[r->nsegs++] = v[i];
	for (i = nnew; i < n; i++) {
		if (run_obj_known(ix, v[i]) < 0)
			return -1;
		if (v[i]->sv[0] != 0)
			r->segs[r->nsegs++] = v[i];
	}
	return 0;
}

/* The order of the writer's transaction (write_op.pos). */
static int
cmp_op_pos(const void *pa, const void *pb)
{
	const struct write_op *a = *(const struct write_op *const *)pa;
	const struct write_op *b = *(const struct write_op *const *)pb;

	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* The order of objects' key, then the transaction's. */
static int
cmp_op_id_pos(const void *pa, const void *pb)
{
	int	 c;

	if ((c = cmp_op_id(pa, pb)) != 0)
		return c;
	return cmp_op_pos(pa, pb);
}

/*
 * An update of row O; *GONE when the file no longer has it.  Its
 * sightings go into the row if the loop handed it over new with their
 * segment (O's fold) and the writer folded it then, else to R's SEGS.
 */
static int
run_obj_upd(struct index *ix, struct rows *r, const struct write_op *o, int *gone)
{
	sqlite3_stmt *s;

	*gone = 0;
	if (o->fold && o->sv[0] != 0) {
		bind_obj(s = ix->st[ST_OBJ_UPD_FOLD], o);
		if (step_reset(ix, s) < 0)
			return -1;
		if (sqlite3_changes(ix->db) > 0)
			return 0;
	}
	bind_obj(s = ix->st[ST_OBJ_UPD], o);
	if (step_reset(ix, s) < 0)
		return -1;
	if (sqlite3_changes(ix->db) == 0)
		*gone = 1;
	else if (o->sv[0] != 0)
		r->segs[r->nsegs++] = o;
	return 0;
}

/*
 * The object rows of a group of batches, R's OBJS in the group's order
 * (reordered): the new rows first (one of them may be updated by a later
 * batch of the group), then the others updated in place.  A row the file
 * no longer has (retention, pruning) goes in as new again, its first
 * update in the group as the row, the later ones as updates of it.
 */
static int
run_objs(struct index *ix, struct rows *r)
{
	const struct write_op **v = r->objs, **newv = r->newv;
	size_t	 i, j, n = r->nobjs, nnew = 0, ngone = 0;
	int	 gone;

	for (i = 0; i < n; i++)
		if (v[i]->is_new)
			newv[nnew++] = v[i];
	if (run_new_objs(ix, r, newv, nnew, 1) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		const struct write_op *o = v[i];

		if (o->is_new)
			continue;
		if (run_obj_upd(ix, r, o, &gone) < 0)
			return -1;
		if (gone)
			v[ngone++] = o;		/* i >= ngone */
	}
	if (ngone == 0)
		return 0;
	sort_ops(v, ngone, cmp_op_id_pos);
	for (i = 0, nnew = 0; i < ngone; i = j) {
		newv[nnew++] = v[i];
		for (j = i + 1; j < ngone && v[j]->v[0] == v[i]->v[0]; j++)
			;
	}
	if (run_new_objs(ix, r, newv, nnew, 0) < 0)
		return -1;
	for (i = 1; i < ngone; i++) {
		if (v[i]->v[0] != v[i - 1]->v[0])
			continue;
		if (run_obj_upd(ix, r, v[i], &gone) < 0)
			return -1;
	}
	return 0;
}

/* The order of object_segs' key: object, segment; then the transaction's. */
static int
cmp_op_objseg(const void *pa, const void *pb)
{
	const struct write_op *a = *(const struct write_op *const *)pa;
	const struct write_op *b = *(const struct write_op *const *)pb;
	int	 c;

	if ((c = cmp_int64(a->v[0], b->v[0])) != 0 || (c = cmp_int64(a->sv[0], b->sv[0])) != 0)
		return c;
	return cmp_op_pos(pa, pb);
}

static int
run_op(struct index *ix, const struct write_op *o)
{
	sqlite3_stmt *s;
	size_t	 i;
	int64_t	 mid;
	int	 rc;

	switch ((enum write_op_type)o->type) {
	case OP_OBJ:
	case OP_OBJSEG:
	case OP_UNRES:
		return -1;		/* rows of a group: run_rows */
	case OP_SEG_OPEN:
		ix->w_seg_lost = 0;
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
		/*
		 * A batch lost while it was open (a full disk, the write lock
		 * held too long) took some of its rows with it, for good: the
		 * segment stays "open" in the index, and the next start indexes
		 * it again from its file, as after a crash.
		 */
		sqlite3_bind_text(s, 7, ix->w_seg_lost ? "open" : "closed", -1, SQLITE_STATIC);
		if (ix->w_seg_lost)
			log_warnx("index: segment %lld lost rows to write errors while it was "
			    "open: it is indexed again from its file at the next start",
			    (long long)o->v[0]);
		return step_reset(ix, s);
	case OP_SEG_DELETED:
		ix->w_prune_stuck = 0;		/* what it referenced may be forgotten now */
		s = ix->st[ST_SEG_DELETED];
		sqlite3_bind_int64(s, 1, o->v[0]);
		sqlite3_bind_int64(s, 2, o->v[1]);
		if (step_reset(ix, s) < 0)
			return -1;
		s = ix->st[ST_SEG_FORGET];
		sqlite3_bind_int64(s, 1, o->v[0]);
		if (step_reset(ix, s) < 0)
			return -1;
		s = ix->st[ST_SEG_CLEAR];	/* ?2, ?3 NULL: the segment's run */
		sqlite3_bind_int64(s, 1, o->v[0]);
		sqlite3_bind_null(s, 2);
		sqlite3_bind_null(s, 3);
		return step_reset(ix, s);
	case OP_MODULE:
		s = ix->st[ST_MODULE];
		sqlite3_bind_text(s, 1, o->owned, -1, SQLITE_STATIC);
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

static int
rows_grow(struct rows *r, size_t n)
{
	const struct write_op ***v[] = { &r->objs, &r->segs, &r->unres, &r->newv, &r->tmp };
	struct bid_ref *br;
	size_t	 i;

	if (n <= r->cap)
		return 0;
	if ((br = reallocarray(r->br, n, 2 * sizeof(*br))) == NULL)
		return -1;
	r->br = br;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		const struct write_op **nw = reallocarray(*v[i], n, sizeof(*nw));

		if (nw == NULL)
			return -1;
		*v[i] = nw;
	}
	r->cap = n;
	return 0;
}

static void
rows_free(struct rows *r)
{
	free(r->objs);
	free(r->segs);
	free(r->unres);
	free(r->newv);
	free(r->tmp);
	free(r->br);
}

/*
 * The sightings in past segments gathered, R's SEGS: those of a row's
 * fold into it, the others kept in SEGS for object_segs.
 */
static int
run_late(struct index *ix, struct rows *r)
{
	sqlite3_stmt *s = ix->st[ST_OBJ_SEEN];
	size_t	 i, j, n = 0;

	for (i = 0; i < r->nsegs; i++) {
		const struct write_op *o = r->segs[i];

		sqlite3_bind_int64(s, 1, o->v[0]);
		for (j = 0; j < 4; j++)
			sqlite3_bind_int64(s, (int)j + 2, o->sv[j]);
		if (step_reset(ix, s) < 0)
			return -1;
		if (sqlite3_changes(ix->db) == 0)
			r->segs[n++] = o;
	}
	r->nsegs = n;
	return 0;
}

/* The rows gathered: objects, sightings (object_segs in bulk), unresolved mappings. */
static int
run_rows(struct index *ix, struct rows *r)
{
	sqlite3_stmt *s;
	size_t	 i;
	int	 rc = 0;

	if (r->nsegs > 0)
		rc = run_late(ix, r);
	if (rc == 0 && r->nobjs > 0)
		rc = run_objs(ix, r);
	if (rc == 0 && r->nsegs > 0) {
		sort_ops(r->segs, r->nsegs, cmp_op_objseg);
		rc = run_bulk(ix, ST_OBJSEG, r->segs, r->nsegs) < 0 ? -1 : 0;
	}
	for (i = 0; rc == 0 && i < r->nunres; i++) {
		const struct write_op *o = r->unres[i];

		s = ix->st[ST_UNRES];
		sqlite3_bind_text(s, 1, o->s, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, o->reason, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, o->v[0]);
		sqlite3_bind_int64(s, 4, o->v[1]);
		sqlite3_bind_int64(s, 5, o->v[2]);
		rc = step_reset(ix, s);
	}
	r->nobjs = r->nsegs = r->nunres = 0;
	return rc;
}

/*
 * Batches, one transaction: every batch queued when the writer gets to
 * them (a writer that falls behind commits more rows at a time, which is
 * what makes it catch up: the cost of a commit is in the index pages it
 * dirties, not in the rows).  Called by the writer, or at open before it
 * starts.
 *
 * The rows of a batch and of the plain batches after it (index_int.h)
 * go together, in one statement per table (run_rows): the key tables'
 * pages are written once for all of them, not once per batch (a burst of
 * new objects comes as batches of [index] commit_rows rows).  Nothing
 * between two batches' rows then could tell the order apart: a segment
 * event runs the rows gathered before it first, and a binary forgotten
 * and seen again (its key under another id) makes the next batch not
 * plain.
 */
int
writer_run_batches(struct index *ix, struct write_batch *list)
{
	struct write_batch *b;
	struct rows r = { 0 };
	uint64_t t0 = mono_ns(), us, rows = 0;
	size_t	 i, n = 0;
	uint32_t pos = 0;
	int	 rc = 0;

	if (sqlite3_exec(ix->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		log_warnx("index: begin: %s", sqlite3_errmsg(ix->db));
		rc = -1;
		goto out;
	}
	for (b = list; b != NULL; b = b->next)
		n += b->n;
	if (rows_grow(&r, n) < 0) {
		log_warnx("index: out of memory");
		rc = -1;
	}
	for (b = list; b != NULL && rc == 0; b = b->next) {
		if (!b->plain)
			rc = run_rows(ix, &r);
		for (i = 0; i < b->n && rc == 0; i++) {
			struct write_op *o = &b->ops[i];

			o->pos = pos++;
			switch ((enum write_op_type)o->type) {
			case OP_OBJ:
				r.objs[r.nobjs++] = o;
				break;
			case OP_OBJSEG:
				r.segs[r.nsegs++] = o;
				break;
			case OP_UNRES:
				r.unres[r.nunres++] = o;
				break;
			default:
				if ((rc = run_rows(ix, &r)) == 0)
					rc = run_op(ix, o);
				break;
			}
		}
		rows += b->n;
	}
	if (rc == 0)
		rc = run_rows(ix, &r);
	if (rc == 0 && sqlite3_exec(ix->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		if (ix->w_failing == 0)
			log_warnx("index: commit: %s", sqlite3_errmsg(ix->db));
		rc = -1;
	}
	if (rc < 0)
		sqlite3_exec(ix->db, "ROLLBACK", NULL, NULL, NULL);
out:
	rows_free(&r);
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
	 * A failing disk is reported once, and its end once.  What the lost
	 * batches held comes back with the reconciliation at the next start:
	 * the segment they were of is left "open" (OP_SEG_CLOSE), and is
	 * indexed again from its file, as is one whose own rows were lost.
	 */
	if (rc < 0) {
		ix->w_seg_lost = 1;	/* the open segment's rows among them (OP_SEG_CLOSE) */
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

void
batch_free_list(struct write_batch *list)
{
	struct write_batch *next;

	for (; list != NULL; list = next) {
		next = list->next;
		batch_free(list);
		free(list);
	}
}

/* PRAGMA NAME's value, or -1. */
static int64_t
pragma_int(struct index *ix, const char *sql)
{
	sqlite3_stmt *s;
	int64_t	 v = -1;

	if (sqlite3_prepare_v2(ix->db, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* Bytes of index.db in use (its free pages are reused before it grows). */
static int64_t
db_used(struct index *ix)
{
	int64_t	 pages = pragma_int(ix, "PRAGMA page_count");
	int64_t	 free = pragma_int(ix, "PRAGMA freelist_count");
	int64_t	 size = pragma_int(ix, "PRAGMA page_size");

	if (pages < 0 || free < 0 || size < 0)
		return -1;
	return (pages - free) * size;
}

/*
 * Writer thread, after a batch: above db_max_size, the oldest history no
 * remaining segment references goes (objects, unresolved mappings), a
 * thousand rows a transaction, until 90% of the limit.  What segments
 * reference stays: the segments' own retention bounds it.
 */
void
writer_prune(struct index *ix)
{
	static const char *const sql[] = {
		"DELETE FROM objects WHERE id IN (SELECT o.id FROM objects o WHERE "
		"  o.kind = 'user' AND o.seq IS NULL AND NOT EXISTS (SELECT 1 FROM object_segs x "
		"  WHERE x.object_id = o.id) ORDER BY o.last_seen LIMIT 1000)",
		"DELETE FROM unresolved WHERE (path, reason) IN (SELECT path, reason FROM "
		"  unresolved ORDER BY last_seen LIMIT 1000)",
	};
	uint64_t max = ix->conf->index_max_size, pruned = 0, n;
	int64_t	 used;
	size_t	 i;
	int	 round, failed = 0;

	if (max == 0 || (used = db_used(ix)) < 0 || (uint64_t)used <= max) {
		ix->w_prune_stuck = 0;
		return;
	}
	/*
	 * Nothing was left to forget at the last look: not again (a scan of
	 * every object, after every batch, and any client can make batches)
	 * until the file grew by a 64th of the limit, or a segment went
	 * (OP_SEG_DELETED: what it referenced may go now).
	 */
	if (ix->w_prune_stuck && (uint64_t)used < ix->w_prune_used + max / 64)
		return;
	pthread_mutex_lock(&ix->mu);
	ix->w_prune_runs++;
	pthread_mutex_unlock(&ix->mu);
	for (round = 0; round < 64 && (uint64_t)used > max / 10 * 9; round++) {
		n = 0;
		if (sqlite3_exec(ix->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
			failed = 1;	/* the lock held elsewhere: not "nothing to forget" */
			break;
		}
		for (i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
			if (sqlite3_exec(ix->db, sql[i], NULL, NULL, NULL) != SQLITE_OK)
				break;
			n += (uint64_t)sqlite3_changes(ix->db);
		}
		if (i < sizeof(sql) / sizeof(sql[0]) ||
		    sqlite3_exec(ix->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
			log_warnx("index: pruning: %s", sqlite3_errmsg(ix->db));
			sqlite3_exec(ix->db, "ROLLBACK", NULL, NULL, NULL);
			failed = 1;
			break;
		}
		if (n == 0)
			break;
		pruned += n;
		if ((used = db_used(ix)) < 0)
			break;
	}
	if (pruned > 0) {
		/* The freed pages back to the file system (files made with auto_vacuum). */
		sqlite3_exec(ix->db, "PRAGMA incremental_vacuum", NULL, NULL, NULL);
		pthread_mutex_lock(&ix->mu);
		ix->w_pruned += pruned;
		ix->wal_frames = WAL_MAX_FRAMES;	/* checkpoint: the file shrinks then */
		pthread_mutex_unlock(&ix->mu);
		log_info("index: above db_max_size (%llu bytes): %llu rows of history no segment "
		    "references forgotten", (unsigned long long)max, (unsigned long long)pruned);
		ix->w_full_logged = 0;
		ix->w_prune_stuck = 0;
		return;
	}
	if (failed)
		return;			/* looked again after the next batch */
	ix->w_prune_stuck = 1;
	ix->w_prune_used = (uint64_t)used;
	if (!ix->w_full_logged) {
		log_warnx("index: %lld bytes, above db_max_size (%llu), and every object left is "
		    "referenced by a remaining segment", (long long)used, (unsigned long long)max);
		ix->w_full_logged = 1;
	}
}

/*
 * Copy the WAL back into the file, without waiting for readers: a
 * reader's snapshot keeps the frames it may read.  With queries back to
 * back (a user's, each up to QUERIER_MAX_MS) some snapshot always held
 * some frames, the WAL was never started over, and it grew without bound,
 * uncounted by db_max_size.  Past WAL_TRUNCATE_FRAMES (copied back whole
 * or not: a reader's old mark also keeps it from starting over) it is
 * done again waiting for the readers of the old frames (the busy timeout:
 * the queries' deadline is well within it; a reader that begins meanwhile
 * reads the file, not the WAL), and the WAL is emptied.
 */
static void
writer_checkpoint(struct index *ix)
{
	int	 nlog = 0;

	if (sqlite3_wal_checkpoint_v2(ix->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &nlog,
	    NULL) != SQLITE_OK) {
		log_warnx("index: checkpoint: %s", sqlite3_errmsg(ix->db));
		return;
	}
	/* (all copied, the WAL may still not start over while a reader holds an old mark) */
	if (nlog < WAL_TRUNCATE_FRAMES)
		return;
	if (sqlite3_wal_checkpoint_v2(ix->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, &nlog,
	    NULL) != SQLITE_OK)
		log_warnx("index: checkpoint of a WAL of %d pages that readers kept: %s", nlog,
		    sqlite3_errmsg(ix->db));
	else {
		pthread_mutex_lock(&ix->mu);
		ix->w_wal_restarts++;
		pthread_mutex_unlock(&ix->mu);
	}
}

/* After each commit (writer thread): how big the WAL has grown. */
int
writer_wal_cb(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct index *ix = arg;

	pthread_mutex_lock(&ix->mu);
	ix->wal_frames = frames;
	pthread_mutex_unlock(&ix->mu);
	return SQLITE_OK;
}

void *
writer_main(void *arg)
{
	struct index *ix = arg;
	struct write_batch *list, *b;
	uint64_t last;

	pthread_mutex_lock(&ix->mu);
	for (;;) {
		while (ix->q_head == NULL && !ix->stopping)
			pthread_cond_wait(&ix->cv_work, &ix->mu);
		if ((list = ix->q_head) == NULL)
			break;		/* stopping, queue empty */
		ix->q_head = ix->q_tail = NULL;
		ix->busy = 1;
		pthread_mutex_unlock(&ix->mu);
		writer_run_batches(ix, list);
		for (b = list; b->next != NULL; b = b->next)
			;
		last = b->seq;
		batch_free_list(list);
		/* queries waiting for these rows go before any pruning */
		pthread_mutex_lock(&ix->mu);
		ix->done_seq = last;
		pthread_cond_broadcast(&ix->cv_idle);
		pthread_mutex_unlock(&ix->mu);
		writer_prune(ix);
		pthread_mutex_lock(&ix->mu);
		if (ix->wal_frames >= (ix->q_head == NULL ? WAL_IDLE_FRAMES : WAL_MAX_FRAMES)) {
			/*
			 * Checkpoint when idle rather than inside a commit, so a
			 * burst is written once to the WAL and copied back later;
			 * a writer that is never idle still checkpoints.
			 */
			pthread_mutex_unlock(&ix->mu);
			writer_checkpoint(ix);
			pthread_mutex_lock(&ix->mu);
			ix->wal_frames = 0;
		}
		ix->busy = 0;
		/* index_flush waits for idle, index_wait for its batch: both hear */
		pthread_cond_broadcast(&ix->cv_idle);
	}
	pthread_mutex_unlock(&ix->mu);
	return NULL;
}

/* Prepare every statement of the writer (at open, before the thread starts). */
int
writer_prepare(struct index *ix, char *err, size_t errlen)
{
	int	 i;

	if (sqlite3_create_module_v2(ix->db, "batch_rows", &batch_module, ix, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", ix->path, sqlite3_errmsg(ix->db));
		return -1;
	}
	for (i = 0; i < ST_MAX; i++)
		if (sqlite3_prepare_v3(ix->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
		    &ix->st[i], NULL) != SQLITE_OK) {
			snprintf(err, errlen, "%s: %s", ix->path, sqlite3_errmsg(ix->db));
			return -1;
		}
	return 0;
}
