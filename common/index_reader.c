/*
 * index_reader.c - the read side of the index: read-only questions to
 * STATE/index.db.  See index_reader.h for the schema and the JSON each query
 * returns.
 *
 * The connection is opened with SQLITE_OPEN_READONLY, so it never writes
 * the database, whether the daemon runs or not.  A WAL database still needs
 * its -shm file; when that cannot be created (a read-only copy, a directory
 * we may not write) and no -wal file exists, the file is opened as
 * immutable: with no -wal there is nothing a writer left uncheckpointed.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "index_reader.h"
#include "walltime.h"
#include "buildid.h"
#include "perf_abi.h"
#include "proto.h"

#define Q_MAX	32		/* cached statements, one per query text */

struct index_reader {
	sqlite3		*db;
	char		 state_dir[PATH_MAX];
	sqlite3_stmt	*st[Q_MAX];
	uint64_t	 deadline;	/* index_reader_set_deadline: mono_ns() */
	size_t		 row_limit;	/* index_reader_set_limits; 0: none */
	size_t		 byte_limit;	/* the same, of a reply's rows as JSON */
	size_t		 bytes;		/* of the rows given since the limits were set */
};

#define OBJ_COLS	"o.path, o.build_id, o.kind, o.source, o.first_seen, o.last_seen, " \
			"o.nr_maps, o.nr_procs, o.mnt_ns, o.ns_uid"
#define OBJ_NCOLS	10
#define SEG_COLS	"s.seq, s.name, s.state, s.start_ns, s.end_ns, s.size, s.samples, " \
			"s.lost, s.records, (SELECT count(*) FROM objects o WHERE o.id " \
			"BETWEEN s.id_lo AND s.id_hi AND o.seq = s.seq) + " \
			"(SELECT count(*) FROM object_segs x WHERE x.seq = s.seq)"
#define SEG_NCOLS	10
/* The same without the count, which reads every row of the segment. */
#define SEG_COLS_NC	"s.seq, s.name, s.state, s.start_ns, s.end_ns, s.size, s.samples, " \
			"s.lost, s.records, NULL"

/* ---------------------------------------------------------------- open */

static int
version_ok(struct index_reader *q, char *err, size_t errlen)
{
	sqlite3_stmt *s;
	int	 v = -1, rc;

	if ((rc = sqlite3_prepare_v2(q->db, "PRAGMA user_version", -1, &s, NULL)) != SQLITE_OK) {
		snprintf(err, errlen, "%s/%s: %s", q->state_dir, INDEX_FILE, sqlite3_errmsg(q->db));
		return rc == SQLITE_CANTOPEN ? -2 : -1;
	}
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	else
		snprintf(err, errlen, "%s/%s: %s", q->state_dir, INDEX_FILE, sqlite3_errmsg(q->db));
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_CANTOPEN ? -2 : -1;
	if (v > INDEX_SCHEMA_VERSION) {
		snprintf(err, errlen, "%s/%s: schema version %d is newer than this program "
		    "understands (%d)", q->state_dir, INDEX_FILE, v, INDEX_SCHEMA_VERSION);
		return -1;
	}
	if (v < 1) {
		snprintf(err, errlen, "%s/%s: not an index (empty)", q->state_dir, INDEX_FILE);
		return -1;
	}
	if (v < INDEX_SCHEMA_VERSION) {
		snprintf(err, errlen, "%s/%s: schema version %d, older than this program reads "
		    "(%d): a perfmapd started on it migrates it", q->state_dir, INDEX_FILE, v,
		    INDEX_SCHEMA_VERSION);
		return -1;
	}
	return 0;
}

struct index_reader *
index_reader_open(const char *state_dir, char *err, size_t errlen)
{
	struct index_reader *q;
	struct stat sb;
	char	 path[PATH_MAX], wal[PATH_MAX + 8], uri[PATH_MAX * 3 + 32], *u;
	const char *c;
	int	 rc;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", state_dir, INDEX_FILE) >= sizeof(path)) {
		snprintf(err, errlen, "%s: path too long", state_dir);
		return NULL;
	}
	if (stat(path, &sb) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if ((q = calloc(1, sizeof(*q))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(q->state_dir, sizeof(q->state_dir), "%s", state_dir);
	rc = sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READONLY, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(q->db, 2000);
		if ((rc = version_ok(q, err, errlen)) == 0)
			return q;
		if (rc == -1)
			goto fail;
	}
	/* -shm cannot be created: immutable, if no writer left a -wal. */
	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (stat(wal, &sb) == 0) {
		if (rc == SQLITE_OK || q->db == NULL)
			snprintf(err, errlen, "%s: cannot open read-only (its -shm file cannot "
			    "be created here)", path);
		goto fail;
	}
	sqlite3_close(q->db);
	q->db = NULL;
	u = uri + snprintf(uri, sizeof(uri), "file:");
	for (c = path; *c != '\0'; c++) {
		if (*c == '%' || *c == '?' || *c == '#')
			u += sprintf(u, "%%%02X", (unsigned char)*c);
		else
			*u++ = *c;
	}
	snprintf(u, sizeof(uri) - (size_t)(u - uri), "?immutable=1");
	if (sqlite3_open_v2(uri, &q->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(q->db));
		goto fail;
	}
	if (version_ok(q, err, errlen) == 0)
		return q;
fail:
	index_reader_close(q);
	return NULL;
}

/* SQLite's progress callback: a query past its deadline is interrupted. */
static int
past_deadline(void *arg)
{
	struct index_reader *q = arg;

	return mono_ns() > q->deadline;
}

void
index_reader_set_deadline(struct index_reader *q, unsigned ms)
{
	if (ms == 0) {
		sqlite3_progress_handler(q->db, 0, NULL, NULL);
		return;
	}
	q->deadline = mono_ns() + (uint64_t)ms * 1000000ULL;
	sqlite3_progress_handler(q->db, 1000, past_deadline, q);
}

void
index_reader_close(struct index_reader *q)
{
	int	 i;

	if (q == NULL)
		return;
	for (i = 0; i < Q_MAX; i++)
		sqlite3_finalize(q->st[i]);
	sqlite3_close(q->db);
	free(q);
}

/* ---------------------------------------------------------------- JSON */

/*
 * Statement number ID, prepared once per connection: a lookup is then an
 * index seek, not a parse.  Callers sqlite3_reset() it when done.
 */
static sqlite3_stmt *
cached(struct index_reader *q, int id, const char *sql, char *err, size_t errlen)
{
	if (q->st[id] == NULL &&
	    sqlite3_prepare_v3(q->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &q->st[id], NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "index: %s", sqlite3_errmsg(q->db));
		q->st[id] = NULL;
		return NULL;
	}
	return q->st[id];
}

static int
prepare(struct index_reader *q, int id, const char *sql, sqlite3_stmt **s, char *err, size_t errlen)
{
	return (*s = cached(q, id, sql, err, errlen)) == NULL ? -1 : 0;
}

static void
set_time(json_t *o, const char *key, sqlite3_stmt *s, int col)
{
	char	 buf[40], nkey[64];

	snprintf(nkey, sizeof(nkey), "%s_ns", key);
	if (sqlite3_column_type(s, col) == SQLITE_NULL) {
		json_object_set_new(o, key, json_null());
		json_object_set_new(o, nkey, json_null());
		return;
	}
	walltime_format(sqlite3_column_int64(s, col), buf, sizeof(buf));
	json_object_set_new(o, key, json_string(buf));
	json_object_set_new(o, nkey, json_integer(sqlite3_column_int64(s, col)));
}

static void
set_text(json_t *o, const char *key, sqlite3_stmt *s, int col)
{
	const char *t = (const char *)sqlite3_column_text(s, col);

	json_object_set_new(o, key, t ? proto_string(t) : json_null());
}

/* A build-id column (BLOB) as hex; NULL or empty as null. */
static void
set_bid(json_t *o, const char *key, sqlite3_stmt *s, int col)
{
	const uint8_t *id = sqlite3_column_blob(s, col);
	int	 len = sqlite3_column_bytes(s, col);
	char	 hex[BUILD_ID_HEX_MAX];

	if (id == NULL || len <= 0 || len > BUILD_ID_MAX) {
		json_object_set_new(o, key, json_null());
		return;
	}
	buildid_to_hex(id, (size_t)len, hex);
	json_object_set_new(o, key, json_string(hex));
}

static void
set_int(json_t *o, const char *key, sqlite3_stmt *s, int col)
{
	json_object_set_new(o, key, json_integer(sqlite3_column_int64(s, col)));
}

/* OBJ from OBJ_COLS at column C. */
static json_t *
obj_json(sqlite3_stmt *s, int c)
{
	json_t	*o = json_object();

	set_text(o, "path", s, c);
	set_bid(o, "build_id", s, c + 1);
	set_text(o, "kind", s, c + 2);
	set_text(o, "source", s, c + 3);
	set_time(o, "first_seen", s, c + 4);
	set_time(o, "last_seen", s, c + 5);
	set_int(o, "nr_maps", s, c + 6);
	set_int(o, "nr_procs", s, c + 7);
	/* Provenance: only rows of a user's namespace are labelled (see label_host). */
	if (sqlite3_column_int64(s, c + 8) != 0) {
		char	 label[96];

		if (sqlite3_column_int64(s, c + 8) == INDEX_MNT_NS_UNKNOWN)
			snprintf(label, sizeof(label), "unknown");
		else if (sqlite3_column_type(s, c + 9) == SQLITE_NULL)
			snprintf(label, sizeof(label), "mnt:[%lld]",
			    (long long)sqlite3_column_int64(s, c + 8));
		else
			snprintf(label, sizeof(label), "mnt:[%lld] of uid %lld",
			    (long long)sqlite3_column_int64(s, c + 8),
			    (long long)sqlite3_column_int64(s, c + 9));
		json_object_set_new(o, "mnt_ns", json_string(label));
		if (sqlite3_column_int64(s, c + 8) != INDEX_MNT_NS_UNKNOWN)
			set_int(o, "mnt_ns_ino", s, c + 8);
		if (sqlite3_column_type(s, c + 9) != SQLITE_NULL)
			set_int(o, "ns_uid", s, c + 9);
	}
	return o;
}

/*
 * In a list that holds rows of a user's namespace, the others are labelled
 * too: "host" (the host's mount namespace, or one only root could make).
 */
static void
label_host(json_t *arr)
{
	json_t	*o;
	size_t	 i;
	int	 any = 0;

	json_array_foreach(arr, i, o)
		if (json_object_get(o, "mnt_ns") != NULL)
			any = 1;
	if (!any)
		return;
	json_array_foreach(arr, i, o)
		if (json_object_get(o, "mnt_ns") == NULL)
			json_object_set_new(o, "mnt_ns", json_string("host"));
}

/* SEG from SEG_COLS at column C. */
static json_t *
seg_json(struct index_reader *q, sqlite3_stmt *s, int c)
{
	json_t	*o = json_object();
	char	 path[PATH_MAX + 300];

	const char *state = (const char *)sqlite3_column_text(s, c + 2);
	struct stat st;

	set_int(o, "seq", s, c);
	set_text(o, "name", s, c + 1);
	snprintf(path, sizeof(path), "%s/segments/%s", q->state_dir,
	    (const char *)sqlite3_column_text(s, c + 1));
	json_object_set_new(o, "path", proto_string(path));
	set_text(o, "state", s, c + 2);
	set_time(o, "start", s, c + 3);
	set_time(o, "end", s, c + 4);
	set_int(o, "size", s, c + 5);
	set_int(o, "samples", s, c + 6);
	set_int(o, "lost", s, c + 7);
	set_int(o, "records", s, c + 8);
	/*
	 * The open segment is the file NAME.partial (segment.h), and the
	 * index learns its figures when it closes: name the file that is
	 * there, its size, and leave the rest unknown (the daemon fills in
	 * what it counts so far: cmd-segments.c).
	 */
	if (state != NULL && strcmp(state, "open") == 0) {
		char	 partial[sizeof(path) + 8];

		snprintf(partial, sizeof(partial), "%s.partial", path);
		if (stat(partial, &st) == 0) {
			json_object_set_new(o, "path", proto_string(partial));
			json_object_set_new(o, "name", proto_string(strrchr(partial, '/') + 1));
			json_object_set_new(o, "size", json_integer((json_int_t)st.st_size));
		} else
			json_object_set_new(o, "size", json_null());
		json_object_set_new(o, "samples", json_null());
		json_object_set_new(o, "lost", json_null());
		json_object_set_new(o, "records", json_null());
	}
	if (sqlite3_column_type(s, c + 9) != SQLITE_NULL)
		set_int(o, "objects", s, c + 9);
	return o;
}

void
index_reader_set_limits(struct index_reader *q, size_t rows, size_t bytes)
{
	q->row_limit = rows;
	q->byte_limit = bytes;
	q->bytes = 0;
}

/* S's bytes in JSON_COMPACT output at most: a control byte is \u00XX. */
static size_t
json_text_size(const char *s, size_t len)
{
	size_t	 i, n = 2;

	for (i = 0; i < len; i++)
		n += (unsigned char)s[i] < 0x20 ? 6 : s[i] == '"' || s[i] == '\\' ? 2 : 1;
	return n;
}

/* J's bytes as JSON_COMPACT writes it, at most (a number: 24). */
static size_t
json_size(const json_t *j)
{
	const char *key;
	json_t	*v;
	size_t	 i, n = 2;

	switch (json_typeof(j)) {
	case JSON_STRING:
		return json_text_size(json_string_value(j), json_string_length(j));
	case JSON_OBJECT:
		json_object_foreach((json_t *)j, key, v)
			n += json_text_size(key, strlen(key)) + 2 + json_size(v);
		return n;
	case JSON_ARRAY:
		json_array_foreach(j, i, v)
			n += json_size(v) + 1;
		return n;
	default:
		return 24;
	}
}

/*
 * ROW goes into a reply: its size counts toward the byte limit, with room
 * for what is added to it after (label_host's "mnt_ns":"host").
 */
static void
charge(struct index_reader *q, const json_t *row)
{
	if (q->byte_limit != 0 && row != NULL)
		q->bytes += json_size(row) + 32;
}

/* ROW, charged, at the end of ARR (the list takes it over). */
static void
append_row(struct index_reader *q, json_t *arr, json_t *row)
{
	charge(q, row);
	json_array_append_new(arr, row);
}

/*
 * Room for one more row in a list of N under the reader's limits (rows
 * in the list, bytes of the reply's rows); when there is none, RES says
 * its lists were cut ("truncated": true).
 */
static int
room(const struct index_reader *q, size_t n, json_t *res)
{
	if ((q->row_limit == 0 || n < q->row_limit) &&
	    (q->byte_limit == 0 || q->bytes < q->byte_limit))
		return 1;
	json_object_set_new(res, "truncated", json_true());
	return 0;
}

static int
step_error(struct index_reader *q, int rc, char *err, size_t errlen)
{
	if (rc == SQLITE_DONE)
		return 0;
	snprintf(err, errlen, "index: %s", sqlite3_errmsg(q->db));
	return -1;
}

/* A's elements in the other order. */
static void
json_array_reverse(json_t *a)
{
	size_t	 i, n = json_array_size(a);

	for (i = 0; i < n / 2; i++) {
		json_t	*t = json_incref(json_array_get(a, i));

		json_array_set(a, i, json_array_get(a, n - 1 - i));
		json_array_set_new(a, n - 1 - i, t);
	}
}

/* ---------------------------------------------------------------- queries */

int
index_reader_lookup(struct index_reader *q, const char *path, int64_t at, json_t **out,
    char *err, size_t errlen)
{
	return index_reader_lookup_ns(q, path, at, 0, out, err, errlen);
}

int
index_reader_lookup_ns(struct index_reader *q, const char *path, int64_t at, int all_ns,
    json_t **out, char *err, size_t errlen)
{
	return index_reader_lookup_live(q, path, at, all_ns, NULL, 0, out, err, errlen);
}

/* Newest first sighting first; the host's row first at a tie. */
static int
cmp_mapped(const void *pa, const void *pb)
{
	json_t	*a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
	json_int_t fa = json_integer_value(json_object_get(a, "first_seen_ns"));
	json_int_t fb = json_integer_value(json_object_get(b, "first_seen_ns"));

	if (fa != fb)
		return fa > fb ? -1 : 1;
	return (json_object_get(a, "mnt_ns") != NULL) - (json_object_get(b, "mnt_ns") != NULL);
}

static int	seen_in(struct index_reader *, int64_t id, int64_t seq, int64_t at,
		    int64_t first, int64_t *last, char *err, size_t errlen);

/*
 * The rows of LIVE's versions of PATH first seen by AT into MAPPED (IDS:
 * the object ids there, *NIDS of them), newest first; the first of them
 * is then the current version, and mapped.  With AT's segment SEG known,
 * only a version it shows mapped by AT: one a process maps now may have
 * been mapped again only after AT (v1, v2, v1 started again: at a time
 * between, v1 was not mapped).
 */
static int
lookup_add_live(struct index_reader *q, const char *path, int64_t at, int all_ns,
    int64_t seg, const struct index_live *live, size_t nlive, json_t *mapped, int64_t *ids,
    size_t *nids, char *err, size_t errlen)
{
	sqlite3_stmt *s;
	json_t	**v, *o;
	size_t	 i, j, n;
	int64_t	 id, last;
	int	 rc, in, added = 0;

	for (i = 0; i < nlive && i < INDEX_LIVE_MAX; i++) {
		if (prepare(q, 14, "SELECT o.id, " OBJ_COLS " FROM object_keys k CROSS JOIN "
		    "objects o ON o.id = k.id WHERE k.path = ?1 AND o.build_id = ?2 AND "
		    "o.mnt_ns = ?3 AND o.first_seen <= ?4 AND (?5 OR o.mnt_ns = 0) LIMIT 1",
		    &s, err, errlen) < 0)
			return -1;
		sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
		sqlite3_bind_blob(s, 2, live[i].bid, live[i].bidsize, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, (int64_t)live[i].mnt_ns);
		sqlite3_bind_int64(s, 4, at);
		sqlite3_bind_int(s, 5, all_ns);
		if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			id = sqlite3_column_int64(s, 0);
			for (j = 0; j < *nids && ids[j] != id; j++)
				;
			if (j == *nids && *nids < INDEX_LIVE_MAX * 2) {
				o = obj_json(s, 1);
				in = seg > 0 ? seen_in(q, id, seg, at, json_integer_value(
				    json_object_get(o, "first_seen_ns")), &last, err, errlen) : 1;
				if (in < 0) {
					json_decref(o);
					sqlite3_reset(s);
					return -1;
				}
				if (in) {
					ids[(*nids)++] = id;
					json_array_append_new(mapped, o);
					added = 1;
				} else
					json_decref(o);
			}
		} else if (step_error(q, rc, err, errlen) < 0) {
			sqlite3_reset(s);
			return -1;
		}
		sqlite3_reset(s);
	}
	if (!added || (n = json_array_size(mapped)) < 2)
		return 0;
	if ((v = calloc(n, sizeof(*v))) == NULL)
		return 0;
	for (i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(mapped, i));
	qsort(v, n, sizeof(*v), cmp_mapped);
	json_array_clear(mapped);
	for (i = 0; i < n; i++)
		json_array_append_new(mapped, v[i]);
	free(v);
	return 0;
}

/*
 * The segment that holds AT, if one does and retention left it: every
 * segment begins with the mappings of its time (its start state), so a
 * version it does not show at or before AT was not mapped then, though
 * its row spans AT (mapped before and again after: a rollback, B A B).
 * 0: none (a gap in the recording, or a deleted segment), and a row's
 * span is all there is.
 */
static int64_t
seg_at(struct index_reader *q, int64_t at, char *err, size_t errlen)
{
	sqlite3_stmt *s;
	int64_t	 seq = 0;
	int	 rc;

	/*
	 * The newest segment that holds AT, not the newest begun before it:
	 * after the wall clock stepped back, a later segment can begin and
	 * end inside an earlier one's time (and hid it).
	 */
	if (prepare(q, 16, "SELECT seq FROM segments WHERE start_ns <= ?1 AND "
	    "(end_ns IS NULL OR end_ns > ?1) AND state != 'deleted' ORDER BY seq DESC LIMIT 1",
	    &s, err, errlen) < 0)
		return -1;
	sqlite3_bind_int64(s, 1, at);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		seq = sqlite3_column_int64(s, 0);
	else if (step_error(q, rc, err, errlen) < 0)
		seq = -1;
	sqlite3_reset(s);
	return seq;
}

/*
 * Object ID's sightings in segment SEQ (the row's own fold, schema.c
 * version 6, or object_segs) and before it: 1 if one in SEQ is at or
 * before AT (mapped then), else 0 with *LAST its last sighting in an
 * earlier segment; -1 on error.  A row with no sighting in any segment
 * up to SEQ (a file older than its segments' rows) has only its span: 1.
 */
static int
seen_in(struct index_reader *q, int64_t id, int64_t seq, int64_t at, int64_t first,
    int64_t *last, char *err, size_t errlen)
{
	sqlite3_stmt *s;
	int	 rc, in = 0, any = 0;

	if (prepare(q, 17, "SELECT sq, f, l FROM (SELECT s.seq AS sq, o.seq_first AS f, "
	    "o.seq_last AS l FROM objects o JOIN segments s ON s.seq = o.seq AND o.id "
	    "BETWEEN s.id_lo AND s.id_hi WHERE o.id = ?1 AND o.seq <= ?2 UNION ALL "
	    "SELECT seq, first_seen, last_seen FROM object_segs WHERE object_id = ?1 AND "
	    "seq <= ?2) ORDER BY sq DESC LIMIT 2", &s, err, errlen) < 0)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, seq);
	*last = first;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		any = 1;
		if (sqlite3_column_int64(s, 0) == seq) {
			if (sqlite3_column_int64(s, 1) <= at)
				in = 1;
			continue;
		}
		*last = sqlite3_column_int64(s, 2);
		break;
	}
	if (rc != SQLITE_ROW && step_error(q, rc, err, errlen) < 0)
		in = -1;
	else if (!any)
		in = 1;
	sqlite3_reset(s);
	return in;
}

/* Versions spanning a time but not mapped then: the one seen last before it. */
struct gap_best {
	json_t	*o;
	int64_t	 last, first;
};

static void
gap_take(struct gap_best *g, json_t *o, int64_t last, int64_t first)
{
	if (g->o == NULL || last > g->last || (last == g->last && first > g->first)) {
		json_decref(g->o);
		g->o = json_incref(o);
		g->last = last;
		g->first = first;
	}
}

int
index_reader_lookup_live(struct index_reader *q, const char *path, int64_t at, int all_ns,
    const struct index_live *live, size_t nlive, json_t **out, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	json_t	*res = NULL, *cur = NULL, *mapped;
	struct gap_best gap = { NULL, 0, 0 };
	int64_t	 ids[INDEX_LIVE_MAX * 2], seg;
	size_t	 nids = 0;
	char	 buf[40];
	int	 rc;

	*out = NULL;
	if ((seg = seg_at(q, at, err, errlen)) < 0)
		return -1;
	/*
	 * The version seen last at or before AT: a row holds a version's first
	 * and last sightings, so after a rollback (v1, v2, v1 again) v1's row
	 * is the one seen last, though v2 was first seen after it.  Of those
	 * seen up to AT (mapped then), the one first seen last; the host's row
	 * first at a tie: another namespace's never hides it.  With AT's
	 * segment known, a row spanning AT counts as seen at AT only if the
	 * segment shows it mapped (below); this one is then of the others.
	 */
	if (prepare(q, 1, "SELECT " OBJ_COLS " FROM object_keys k CROSS JOIN objects o "
	    "ON o.id = k.id WHERE k.path = ?1 AND "
	    "o.first_seen <= ?2 AND (?3 OR o.mnt_ns = 0) AND (?4 = 0 OR o.last_seen < ?2) "
	    "ORDER BY min(o.last_seen, ?2) DESC, o.first_seen DESC, o.mnt_ns != 0 LIMIT 1",
	    &s, err, errlen) < 0)
		return -1;
	sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, at);
	sqlite3_bind_int(s, 3, all_ns);
	sqlite3_bind_int64(s, 4, seg);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		cur = obj_json(s, 0);
		json_object_set_new(cur, "mapped",
		    json_boolean(sqlite3_column_int64(s, 5) >= at));
		if (seg > 0)
			gap_take(&gap, cur, sqlite3_column_int64(s, 5), sqlite3_column_int64(s, 4));
	} else if (step_error(q, rc, err, errlen) < 0)
		goto fail;
	sqlite3_reset(s);
	s = NULL;
	res = json_object();
	json_object_set_new(res, "path", proto_string(path));
	walltime_format(at, buf, sizeof(buf));
	json_object_set_new(res, "at", json_string(buf));
	json_object_set_new(res, "at_ns", json_integer(at));
	mapped = json_array();
	json_object_set_new(res, "mapped", mapped);
	if (prepare(q, 2, "SELECT o.id, " OBJ_COLS " FROM object_keys k CROSS JOIN objects o "
	    "ON o.id = k.id WHERE k.path = ?1 AND "
	    "o.first_seen <= ?2 AND o.last_seen >= ?2 AND (?3 OR o.mnt_ns = 0) "
	    "ORDER BY o.first_seen DESC, o.mnt_ns != 0", &s, err, errlen) < 0)
		goto fail;
	sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, at);
	sqlite3_bind_int(s, 3, all_ns);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t	 last;
		int	 in = 1;

		if (!room(q, json_array_size(mapped), res)) {
			rc = SQLITE_DONE;
			break;
		}
		if (seg > 0 && (in = seen_in(q, sqlite3_column_int64(s, 0), seg, at,
		    sqlite3_column_int64(s, 5), &last, err, errlen)) < 0)
			goto fail;
		if (!in) {
			json_t	*o = obj_json(s, 1);

			json_object_set_new(o, "mapped", json_false());
			gap_take(&gap, o, last, sqlite3_column_int64(s, 5));
			json_decref(o);
			continue;
		}
		if (nids < INDEX_LIVE_MAX)
			ids[nids++] = sqlite3_column_int64(s, 0);
		append_row(q, mapped, obj_json(s, 1));
	}
	if (step_error(q, rc, err, errlen) < 0)
		goto fail;
	sqlite3_reset(s);
	s = NULL;
	if (seg > 0) {
		/* mapped at AT: the one first seen last; else the one seen last before */
		json_decref(cur);
		if (json_array_size(mapped) > 0) {
			cur = json_deep_copy(json_array_get(mapped, 0));
			json_object_set_new(cur, "mapped", json_true());
		} else
			cur = json_incref(gap.o);
	}
	if (nlive > 0) {
		if (lookup_add_live(q, path, at, all_ns, seg, live, nlive, mapped, ids, &nids, err,
		    errlen) < 0)
			goto fail;
		/* the version first seen last of those mapped: the current one */
		if (json_array_size(mapped) > 0 && (cur == NULL ||
		    !json_is_true(json_object_get(cur, "mapped")) ||
		    json_integer_value(json_object_get(json_array_get(mapped, 0), "first_seen_ns")) >
		    json_integer_value(json_object_get(cur, "first_seen_ns")))) {
			json_decref(cur);
			cur = json_deep_copy(json_array_get(mapped, 0));
			json_object_set_new(cur, "mapped", json_true());
		}
	}
	if (cur == NULL) {
		json_decref(res);
		json_decref(gap.o);
		walltime_format(at, buf, sizeof(buf));
		snprintf(err, errlen, "%s: not seen at or before %s", path, buf);
		return -ENOENT;
	}
	json_object_set_new(res, "current", cur);
	label_host(mapped);
	if (json_object_get(cur, "mnt_ns") == NULL && json_array_size(mapped) > 0 &&
	    json_object_get(json_array_get(mapped, 0), "mnt_ns") != NULL)
		json_object_set_new(cur, "mnt_ns", json_string("host"));
	json_decref(gap.o);
	*out = res;
	return 0;
fail:
	sqlite3_reset(s);
	json_decref(cur);
	json_decref(gap.o);
	json_decref(res);
	return -1;
}

/* A row of history, in its order: first seen, then the row's id. */
struct hrow {
	json_t	*o;
	int64_t	 first, id;
};

static int
cmp_hrow(const void *pa, const void *pb)
{
	const struct hrow *a = pa, *b = pb;

	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

int
index_reader_history(struct index_reader *q, const char *path, json_t **out, char *err, size_t errlen)
{
	return index_reader_history_ns(q, path, 0, out, err, errlen);
}

int
index_reader_history_ns(struct index_reader *q, const char *path, int all_ns, json_t **out,
    char *err, size_t errlen)
{
	sqlite3_stmt *s;
	struct hrow *v = NULL, *nv;
	json_t	*res, *arr;
	size_t	 i, n = 0, cap = 0;
	int	 rc;

	*out = NULL;
	/*
	 * Read last seen first, so that a list cut at the row limit keeps the
	 * versions seen last (the one mapped now among them, also when an
	 * older build-id came back: its row is the old one); given first seen
	 * first.
	 */
	if (prepare(q, 3, "SELECT " OBJ_COLS ", (SELECT count(*) FROM segments s WHERE "
	    "s.seq = o.seq AND o.id BETWEEN s.id_lo AND s.id_hi) + (SELECT count(*) FROM "
	    "object_segs x WHERE x.object_id = o.id), o.id FROM object_keys k CROSS JOIN "
	    "objects o ON o.id = k.id WHERE k.path = ?1 AND "
	    "(?2 OR o.mnt_ns = 0) ORDER BY o.last_seen DESC, o.id DESC", &s, err, errlen) < 0)
		return -1;
	sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, all_ns);
	res = json_object();
	json_object_set_new(res, "path", proto_string(path));
	arr = json_array();
	json_object_set_new(res, "objects", arr);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (!room(q, n, res)) {
			rc = SQLITE_DONE;
			break;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nv = realloc(v, cap * sizeof(*v))) == NULL) {
				snprintf(err, errlen, "out of memory");
				rc = SQLITE_NOMEM;
				break;
			}
			v = nv;
		}
		v[n].o = obj_json(s, 0);
		set_int(v[n].o, "segments", s, OBJ_NCOLS);
		charge(q, v[n].o);
		v[n].first = sqlite3_column_int64(s, 4);
		v[n++].id = sqlite3_column_int64(s, OBJ_NCOLS + 1);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_NOMEM && step_error(q, rc, err, errlen) < 0)
		rc = SQLITE_ERROR;
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_hrow);
	for (i = 0; i < n; i++)
		json_array_append_new(arr, v[i].o);
	free(v);
	if (rc != SQLITE_DONE) {
		json_decref(res);
		return -1;
	}
	if (n == 0) {
		json_decref(res);
		snprintf(err, errlen, "%s: not in the index%s", path, all_ns ? "" :
		    " (as the host's mount namespace saw it)");
		return -ENOENT;
	}
	label_host(arr);
	*out = res;
	return 0;
}

/* The cached copy in perf's layout, if there is one. */
static json_t *
cached_path(struct index_reader *q, const char *hex)
{
	char	 path[PATH_MAX + 128], elf[PATH_MAX + 140];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/debug/.build-id/%.2s/%s", q->state_dir, hex, hex + 2);
	if (stat(path, &sb) == -1)
		return json_null();
	if (S_ISDIR(sb.st_mode)) {
		snprintf(elf, sizeof(elf), "%s/elf", path);
		return stat(elf, &sb) == 0 && S_ISREG(sb.st_mode) ? proto_string(elf) : json_null();
	}
	return S_ISREG(sb.st_mode) ? proto_string(path) : json_null();
}

int
index_reader_buildid(struct index_reader *q, const char *arg, json_t **out, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	json_t	*res = NULL, *objs = NULL, *segs = NULL;
	char	 hex[2 * BUILD_ID_MAX + 1], full[2 * BUILD_ID_MAX + 1];
	uint8_t	 lo[BUILD_ID_MAX], hi[BUILD_ID_MAX], id[BUILD_ID_MAX];
	int64_t	 first = INT64_MAX, last = 0;
	size_t	 i, len = strlen(arg), idlen = 0;
	int	 rc, n = 0;

	*out = NULL;
	if (len < 8 || len > 2 * BUILD_ID_MAX) {
		snprintf(err, errlen, "bad build-id '%s': 8 to %d hex digits", arg, 2 * BUILD_ID_MAX);
		return -1;
	}
	for (i = 0; i <= len; i++) {
		if (i < len && !isxdigit((unsigned char)arg[i])) {
			snprintf(err, errlen, "bad build-id '%s': not hex", arg);
			return -1;
		}
		hex[i] = (char)tolower((unsigned char)arg[i]);
	}
	/*
	 * A whole id is itself, whatever longer ids it begins (an 8- or
	 * 16-byte id, which anyone may extend into a 20-byte one of their
	 * own binary's: the whole id was then "ambiguous" for good).
	 */
	if (len % 2 == 0) {
		memcpy(full, hex, len);
		full[len] = '\0';
		buildid_from_hex(full, lo);
		if ((s = cached(q, 15, "SELECT 1 FROM object_bids b CROSS JOIN objects o "
		    "ON o.id = b.id WHERE b.bid_key = ?2 AND o.build_id = ?1 LIMIT 1", err,
		    errlen)) == NULL)
			return -1;
		sqlite3_bind_blob(s, 1, lo, (int)(len / 2), SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, index_bid_key(lo, len / 2));
		rc = sqlite3_step(s);
		sqlite3_reset(s);
		if (rc == SQLITE_ROW) {
			idlen = len / 2;
			memcpy(id, lo, idlen);
			n = 1;
			goto found;
		}
		if (step_error(q, rc, err, errlen) < 0)
			return -1;
	}
	/* A prefix: every id between it padded with 0s and padded with fs. */
	memset(full, '0', 2 * BUILD_ID_MAX);
	memcpy(full, hex, len);
	full[(len + 1) & ~(size_t)1] = '\0';
	buildid_from_hex(full, lo);
	memset(full, 'f', 2 * BUILD_ID_MAX);
	memcpy(full, hex, len);
	full[2 * BUILD_ID_MAX] = '\0';
	buildid_from_hex(full, hi);
	/* the keys' range, then the build-ids themselves (several share a key) */
	s = cached(q, 0, "SELECT DISTINCT o.build_id FROM object_bids b CROSS JOIN objects o "
	    "ON o.id = b.id WHERE b.bid_key BETWEEN ?3 AND ?4 AND o.build_id >= ?1 "
	    "AND o.build_id <= ?2 LIMIT 2", err, errlen);
	if (s == NULL)
		return -1;
	sqlite3_bind_blob(s, 1, lo, (int)((len + 1) / 2), SQLITE_STATIC);
	sqlite3_bind_blob(s, 2, hi, BUILD_ID_MAX, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, index_bid_key(lo, (len + 1) / 2));
	sqlite3_bind_int64(s, 4, index_bid_key(hi, BUILD_ID_MAX));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (n++ == 0) {
			idlen = (size_t)sqlite3_column_bytes(s, 0);
			if (idlen > BUILD_ID_MAX)
				idlen = BUILD_ID_MAX;
			memcpy(id, sqlite3_column_blob(s, 0), idlen);
		}
	sqlite3_reset(s);
	if (step_error(q, rc, err, errlen) < 0)
		return -1;
	if (n == 0) {
		snprintf(err, errlen, "build-id %s: not in the index", hex);
		return -ENOENT;
	}
	if (n > 1) {
		snprintf(err, errlen, "build-id %s: ambiguous prefix", hex);
		return -1;
	}
found:
	buildid_to_hex(id, idlen, full);
	res = json_object();
	json_object_set_new(res, "build_id", json_string(full));
	objs = json_array();
	segs = json_array();
	if (prepare(q, 4, "SELECT " OBJ_COLS " FROM object_bids b CROSS JOIN objects o "
	    "ON o.id = b.id WHERE b.bid_key = ?2 AND o.build_id = ?1 "
	    "ORDER BY o.first_seen, o.path", &s, err, errlen) < 0)
		goto fail;
	sqlite3_bind_blob(s, 1, id, (int)idlen, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, index_bid_key(id, idlen));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (sqlite3_column_int64(s, 4) < first)
			first = sqlite3_column_int64(s, 4);
		if (sqlite3_column_int64(s, 5) > last)
			last = sqlite3_column_int64(s, 5);
		if (room(q, json_array_size(objs), res)) {	/* first and last of every row all the same */
			append_row(q, objs, obj_json(s, 0));
		}
	}
	if (step_error(q, rc, err, errlen) < 0)
		goto fail;
	sqlite3_reset(s);
	s = NULL;
	label_host(objs);	/* a user's row beside the host's: each says whose */
	/* the segment each row folds (schema.c, version 6), then those of object_segs */
	if (prepare(q, 5, "SELECT " SEG_COLS_NC ", o.path, o.seq_first, o.seq_last, o.seq_maps "
	    "FROM object_bids b CROSS JOIN objects o ON o.id = b.id "
	    "JOIN segments s ON s.seq = o.seq AND o.id BETWEEN s.id_lo AND s.id_hi "
	    "WHERE b.bid_key = ?2 AND o.build_id = ?1 "
	    "UNION ALL SELECT " SEG_COLS_NC ", o.path, x.first_seen, x.last_seen, x.nr_maps "
	    "FROM object_bids b CROSS JOIN objects o ON o.id = b.id "
	    "JOIN object_segs x ON x.object_id = o.id "
	    "JOIN segments s ON s.seq = x.seq WHERE b.bid_key = ?2 AND o.build_id = ?1 "
	    "ORDER BY 1 DESC, 11 DESC", &s, err, errlen) < 0)	/* cut: the newest kept */
		goto fail;
	sqlite3_bind_blob(s, 1, id, (int)idlen, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, index_bid_key(id, idlen));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_t	*o;
		char	 buf[40];

		if (!room(q, json_array_size(segs), res)) {
			rc = SQLITE_DONE;
			break;
		}
		o = seg_json(q, s, 0);
		set_text(o, "path_seen", s, SEG_NCOLS);
		walltime_format(sqlite3_column_int64(s, SEG_NCOLS + 1), buf, sizeof(buf));
		json_object_set_new(o, "seen_first", json_string(buf));
		walltime_format(sqlite3_column_int64(s, SEG_NCOLS + 2), buf, sizeof(buf));
		json_object_set_new(o, "seen_last", json_string(buf));
		set_int(o, "nr_maps", s, SEG_NCOLS + 3);
		append_row(q, segs, o);
	}
	if (step_error(q, rc, err, errlen) < 0)
		goto fail;
	sqlite3_reset(s);
	json_array_reverse(segs);	/* oldest first, as before */
	{
		char	 buf[40];

		walltime_format(first, buf, sizeof(buf));
		json_object_set_new(res, "first_seen", json_string(buf));
		json_object_set_new(res, "first_seen_ns", json_integer(first));
		walltime_format(last, buf, sizeof(buf));
		json_object_set_new(res, "last_seen", json_string(buf));
		json_object_set_new(res, "last_seen_ns", json_integer(last));
	}
	label_host(objs);
	json_object_set_new(res, "objects", objs);
	json_object_set_new(res, "segments", segs);
	json_object_set_new(res, "cached", cached_path(q, full));
	*out = res;
	return 0;
fail:
	sqlite3_reset(s);
	json_decref(objs);
	json_decref(segs);
	json_decref(res);
	return -1;
}

/* ARR's rows in the other order, ARR taken over. */
static json_t *
reversed(json_t *arr)
{
	json_t	*r = json_array();
	size_t	 i = json_array_size(arr);

	while (i-- > 0)
		json_array_append(r, json_array_get(arr, i));
	json_decref(arr);
	return r;
}

int
index_reader_segments(struct index_reader *q, unsigned flags, json_t **out, char *err,
    size_t errlen)
{
	sqlite3_stmt *s;
	json_t	*res, *arr;
	int	 rc, all = (flags & INDEX_SEGS_ALL) != 0;

	*out = NULL;
	/*
	 * The segments on disk, whole (retention bounds them); with the
	 * deleted ones, which stay in the index for good (a year of them was
	 * a reply of megabytes, built and sent on the daemon's loop), within
	 * the reader's limits.  Newest first, so that a list cut keeps the
	 * newest; given oldest first.
	 */
	if ((flags & INDEX_SEGS_NO_COUNTS) && (flags & INDEX_SEGS_ALL) ?
	    prepare(q, 19, "SELECT " SEG_COLS_NC " FROM segments s ORDER BY s.seq DESC", &s,
	    err, errlen) < 0 :
	    (flags & INDEX_SEGS_NO_COUNTS) ?
	    prepare(q, 18, "SELECT " SEG_COLS_NC " FROM segments s WHERE "
	    "s.state != 'deleted' ORDER BY s.seq DESC", &s, err, errlen) < 0 :
	    (flags & INDEX_SEGS_ALL) ?
	    prepare(q, 12, "SELECT " SEG_COLS " FROM segments s ORDER BY s.seq DESC", &s,
	    err, errlen) < 0 : prepare(q, 13, "SELECT " SEG_COLS " FROM segments s WHERE "
	    "s.state != 'deleted' ORDER BY s.seq DESC", &s, err, errlen) < 0)
		return -1;
	res = json_object();
	arr = json_array();
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (all && !room(q, json_array_size(arr), res)) {
			rc = SQLITE_DONE;	/* cut: "truncated" */
			break;
		}
		append_row(q, arr, seg_json(q, s, 0));
	}
	sqlite3_reset(s);
	if (step_error(q, rc, err, errlen) < 0) {
		json_decref(arr);
		json_decref(res);
		return -1;
	}
	json_object_set_new(res, "segments", reversed(arr));
	*out = res;
	return 0;
}

int
index_reader_segment_buildids(struct index_reader *q, const char *seg, json_t **out, char *err,
    size_t errlen)
{
	sqlite3_stmt *s = NULL;
	json_t	*res = NULL, *segj = NULL, *arr;
	const char *base = strrchr(seg, '/'), *p;
	int64_t	 seq = -1;
	size_t	 blen;
	int	 rc;

	*out = NULL;
	base = base ? base + 1 : seg;
	for (p = base; isdigit((unsigned char)*p); p++)
		;
	if (*p == '\0' && p != base)
		seq = strtoll(base, NULL, 10);
	if (prepare(q, 6, "SELECT " SEG_COLS " FROM segments s WHERE s.seq = ?1 OR s.name = ?2",
	    &s, err, errlen) < 0)
		return -1;
	sqlite3_bind_int64(s, 1, seq);
	/* the open one by the name it has on disk too: NAME.partial */
	blen = strlen(base);
	if (blen > 8 && strcmp(base + blen - 8, ".partial") == 0)
		blen -= 8;
	sqlite3_bind_text(s, 2, base, (int)blen, SQLITE_STATIC);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		segj = seg_json(q, s, 0);
	else if (step_error(q, rc, err, errlen) < 0) {
		sqlite3_reset(s);
		return -1;
	}
	sqlite3_reset(s);
	s = NULL;
	if (segj == NULL) {
		snprintf(err, errlen, "%s: no such segment in the index", seg);
		return -ENOENT;
	}
	seq = json_integer_value(json_object_get(segj, "seq"));
	res = json_object();
	json_object_set_new(res, "segment", segj);
	arr = json_array();
	json_object_set_new(res, "objects", arr);
	if (prepare(q, 7, "SELECT " OBJ_COLS ", o.seq_first, o.seq_last, o.seq_maps FROM "
	    "segments s JOIN objects o ON o.id BETWEEN s.id_lo AND s.id_hi AND o.seq = s.seq "
	    "WHERE s.seq = ?1 UNION ALL SELECT " OBJ_COLS ", x.first_seen, x.last_seen, "
	    "x.nr_maps FROM object_segs x JOIN objects o ON o.id = x.object_id "
	    "WHERE x.seq = ?1 ORDER BY 1, 5", &s, err, errlen) < 0)
		goto fail;
	sqlite3_bind_int64(s, 1, seq);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_t	*o;
		char	 buf[40];

		if (!room(q, json_array_size(arr), res)) {
			rc = SQLITE_DONE;
			break;
		}
		o = obj_json(s, 0);
		walltime_format(sqlite3_column_int64(s, OBJ_NCOLS), buf, sizeof(buf));
		json_object_set_new(o, "seen_first", json_string(buf));
		walltime_format(sqlite3_column_int64(s, OBJ_NCOLS + 1), buf, sizeof(buf));
		json_object_set_new(o, "seen_last", json_string(buf));
		set_int(o, "nr_maps_in_segment", s, OBJ_NCOLS + 2);
		append_row(q, arr, o);
	}
	if (step_error(q, rc, err, errlen) < 0)
		goto fail;
	sqlite3_reset(s);
	label_host(arr);
	*out = res;
	return 0;
fail:
	sqlite3_reset(s);
	json_decref(res);
	return -1;
}

int
index_reader_kernel(struct index_reader *q, json_t **out, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL, *ss = NULL;
	json_t	*res, *kern, *mods;
	int	 rc;

	*out = NULL;
	res = json_object();
	kern = json_array();
	mods = json_array();
	json_object_set_new(res, "kernel", kern);
	json_object_set_new(res, "modules", mods);
	/*
	 * By its name's key (a kernel is always "[kernel.kallsyms]": kernel.c,
	 * rebuild.c), not a scan of every object: objects has no index on
	 * kind, and at a million objects this was most of a profile's SQL.
	 */
	if (prepare(q, 8, "SELECT " OBJ_COLS " FROM object_keys k CROSS JOIN objects o "
	    "ON o.id = k.id WHERE k.path = '[kernel.kallsyms]' AND o.kind = 'kernel' "
	    "ORDER BY o.first_seen", &s, err, errlen) < 0)
		goto fail;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		json_array_append_new(kern, obj_json(s, 0));
	if (step_error(q, rc, err, errlen) < 0)
		goto fail;
	sqlite3_reset(s);
	s = NULL;
	if (prepare(q, 9, "SELECT id, name, path, build_id, addr, size, first_seen, last_seen "
	    "FROM modules ORDER BY name, first_seen", &s, err, errlen) < 0 ||
	    prepare(q, 10, "SELECT name, addr FROM module_sections WHERE module_id = ?1 "
	    "ORDER BY name", &ss, err, errlen) < 0)
		goto fail;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_t	*m = json_object(), *sect = json_object();
		char	 buf[40];
		int	 rc2;

		set_text(m, "name", s, 1);
		set_text(m, "path", s, 2);
		set_bid(m, "build_id", s, 3);
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)sqlite3_column_int64(s, 4));
		json_object_set_new(m, "addr", json_string(buf));
		set_int(m, "size", s, 5);
		set_time(m, "first_seen", s, 6);
		set_time(m, "last_seen", s, 7);
		sqlite3_bind_int64(ss, 1, sqlite3_column_int64(s, 0));
		while ((rc2 = sqlite3_step(ss)) == SQLITE_ROW) {
			snprintf(buf, sizeof(buf), "0x%llx",
			    (unsigned long long)sqlite3_column_int64(ss, 1));
			json_object_set_new(sect, (const char *)sqlite3_column_text(ss, 0),
			    json_string(buf));
		}
		sqlite3_reset(ss);
		json_object_set_new(m, "sections", sect);
		json_array_append_new(mods, m);
	}
	if (step_error(q, rc, err, errlen) < 0)
		goto fail;
	sqlite3_reset(s);
	sqlite3_reset(ss);
	*out = res;
	return 0;
fail:
	sqlite3_reset(s);
	sqlite3_reset(ss);
	json_decref(res);
	return -1;
}

static int64_t
count(struct index_reader *q, const char *sql)
{
	sqlite3_stmt *s;
	int64_t	 n = -1;

	if (sqlite3_prepare_v2(q->db, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

int
index_reader_summary(struct index_reader *q, json_t **out, char *err, size_t errlen)
{
	sqlite3_stmt *s;
	json_t	*res, *arr;
	int	 rc;

	*out = NULL;
	res = json_object();
	json_object_set_new(res, "schema", json_integer(count(q, "PRAGMA user_version")));
	json_object_set_new(res, "objects", json_integer(count(q,
	    "SELECT count(*) FROM object_bids")));
	json_object_set_new(res, "paths", json_integer(count(q,
	    "SELECT count(DISTINCT path) FROM object_keys")));
	json_object_set_new(res, "segments", json_integer(count(q,
	    "SELECT count(*) FROM segments WHERE state != 'deleted'")));
	json_object_set_new(res, "segments_deleted", json_integer(count(q,
	    "SELECT count(*) FROM segments WHERE state = 'deleted'")));
	json_object_set_new(res, "unresolved_maps", json_integer(count(q,
	    "SELECT coalesce(sum(nr_maps), 0) FROM unresolved")));
	arr = json_array();
	json_object_set_new(res, "unresolved", arr);
	if (prepare(q, 11, "SELECT path, reason, nr_maps, first_seen, last_seen FROM unresolved "
	    "ORDER BY nr_maps DESC, path LIMIT 100", &s, err, errlen) < 0) {
		json_decref(res);
		return -1;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_t	*u = json_object();
		char	 buf[40];

		set_text(u, "path", s, 0);
		set_text(u, "reason", s, 1);
		set_int(u, "nr_maps", s, 2);
		walltime_format(sqlite3_column_int64(s, 3), buf, sizeof(buf));
		json_object_set_new(u, "first_seen", json_string(buf));
		walltime_format(sqlite3_column_int64(s, 4), buf, sizeof(buf));
		json_object_set_new(u, "last_seen", json_string(buf));
		json_array_append_new(arr, u);
	}
	sqlite3_reset(s);
	if (step_error(q, rc, err, errlen) < 0) {
		json_decref(res);
		return -1;
	}
	*out = res;
	return 0;
}
