/*
 * schema.c - the schema of STATE/index.db (documented in
 * common/index_reader.h) as a list of migrations, and the migration itself.
 */
#include <stdio.h>

#include <sqlite3.h>

#include "index_int.h"
#include "index_reader.h"
#include "log.h"

/*
 * index_bid_key() (index_reader.h) of the blob B in SQL (the version
 * of SQLite Debian 12 has no unhex()): the first 16 hex digits, 0s
 * after a shorter id, each digit's value at its place, the first one's
 * top bit flipped.
 */
#define BID_NIBBLE(i, shift) \
	" | ((instr('0123456789ABCDEF', substr(h, " #i ", 1)) - 1) << " #shift ")"
#define BID_KEY_SQL(b) \
	"(SELECT ((instr('89ABCDEF01234567', substr(h, 1, 1)) - 1) << 60)" \
	BID_NIBBLE(2, 56) BID_NIBBLE(3, 52) BID_NIBBLE(4, 48) BID_NIBBLE(5, 44) \
	BID_NIBBLE(6, 40) BID_NIBBLE(7, 36) BID_NIBBLE(8, 32) BID_NIBBLE(9, 28) \
	BID_NIBBLE(10, 24) BID_NIBBLE(11, 20) BID_NIBBLE(12, 16) BID_NIBBLE(13, 12) \
	BID_NIBBLE(14, 8) BID_NIBBLE(15, 4) BID_NIBBLE(16, 0) \
	" FROM (SELECT substr(hex(" b ") || '0000000000000000', 1, 16) AS h))"

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

	/*
	 * 3: provenance (record/binaries.h NS): the mount namespace of a user
	 * namespace an object was mapped in (0: a trusted one) and the uid
	 * owning it; one row per (path, build-id, namespace), which the
	 * writer finds again by that key, and whose index also serves the
	 * lookups by path.  Rows of deleted segments' object_segments go.  (A file of version 2 has no duplicate keys:
	 * the daemon kept one row per pair; any there would be merged.)
	 */
	"ALTER TABLE objects ADD COLUMN mnt_ns INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE objects ADD COLUMN ns_uid INTEGER;"
	"UPDATE OR IGNORE object_segments SET object_id = (SELECT min(d.id) FROM objects o "
	"  JOIN objects d ON d.path = o.path AND d.build_id = o.build_id "
	"  WHERE o.id = object_segments.object_id);"
	"DELETE FROM object_segments WHERE object_id NOT IN (SELECT min(id) FROM objects "
	"  GROUP BY path, build_id);"
	"DELETE FROM objects WHERE id NOT IN (SELECT min(id) FROM objects "
	"  GROUP BY path, build_id);"
	"CREATE UNIQUE INDEX objects_key ON objects(path, build_id, mnt_ns);"
	"DROP INDEX objects_path;"		/* objects_key leads with path: one copy of each path */
	"DELETE FROM object_segments WHERE seq IN (SELECT seq FROM segments "
	"  WHERE state = 'deleted');",

	/*
	 * 4: the two keys of an object out of its table, each in a table of
	 * its own ordered by that key (object_keys: path, build-id,
	 * namespace; object_bids: build-id), so that the writer inserts a
	 * transaction's new keys in key order, each table's pages once,
	 * instead of indexes of objects updated row by row in id order, which
	 * dirtied pages all over both (writer.c).  The triggers keep them
	 * with objects when rows go (retention, pruning) or take a new id.
	 */
	"CREATE TABLE object_keys ("
	"  path TEXT NOT NULL, build_id BLOB NOT NULL, mnt_ns INTEGER NOT NULL,"
	"  id INTEGER NOT NULL, PRIMARY KEY (path, build_id, mnt_ns)) WITHOUT ROWID;"
	"CREATE TABLE object_bids ("
	"  build_id BLOB NOT NULL, id INTEGER NOT NULL,"
	"  PRIMARY KEY (build_id, id)) WITHOUT ROWID;"
	"INSERT INTO object_keys SELECT path, build_id, mnt_ns, id FROM objects "
	"  ORDER BY path, build_id, mnt_ns;"
	"INSERT INTO object_bids SELECT build_id, id FROM objects ORDER BY build_id, id;"
	"DROP INDEX objects_key;"
	"DROP INDEX objects_build_id;"
	"CREATE TRIGGER objects_gone AFTER DELETE ON objects BEGIN"
	"  DELETE FROM object_keys WHERE path = old.path AND build_id = old.build_id"
	"    AND mnt_ns = old.mnt_ns AND id = old.id;"
	"  DELETE FROM object_bids WHERE build_id = old.build_id AND id = old.id;"
	" END;"
	"CREATE TRIGGER objects_renumbered AFTER UPDATE OF id ON objects BEGIN"
	"  UPDATE object_keys SET id = new.id WHERE path = old.path"
	"    AND build_id = old.build_id AND mnt_ns = old.mnt_ns AND id = old.id;"
	"  UPDATE object_bids SET id = new.id WHERE build_id = old.build_id AND id = old.id;"
	" END;",

	/*
	 * 5: object_bids keyed by an integer, index_bid_key() of the
	 * build-id (index_reader.h) instead of the build-id: 14 bytes a row
	 * instead of 28, and integer compares instead of blob compares in the
	 * sorted insert of a transaction's new build-ids (the largest share
	 * of a burst's writing after schema 4).  Readers match the key, then
	 * objects.build_id.  The triggers compute the key in SQL.
	 */
	"DROP TRIGGER objects_gone;"
	"DROP TRIGGER objects_renumbered;"
	"DROP TABLE object_bids;"
	"CREATE TABLE object_bids ("
	"  bid_key INTEGER NOT NULL, id INTEGER NOT NULL,"
	"  PRIMARY KEY (bid_key, id)) WITHOUT ROWID;"
	"INSERT INTO object_bids SELECT " BID_KEY_SQL("build_id") ", id FROM objects "
	"  ORDER BY 1, 2;"
	"CREATE TRIGGER objects_gone AFTER DELETE ON objects BEGIN"
	"  DELETE FROM object_keys WHERE path = old.path AND build_id = old.build_id"
	"    AND mnt_ns = old.mnt_ns AND id = old.id;"
	"  DELETE FROM object_bids WHERE bid_key = " BID_KEY_SQL("old.build_id")
	"    AND id = old.id;"
	" END;"
	"CREATE TRIGGER objects_renumbered AFTER UPDATE OF id ON objects BEGIN"
	"  UPDATE object_keys SET id = new.id WHERE path = old.path"
	"    AND build_id = old.build_id AND mnt_ns = old.mnt_ns AND id = old.id;"
	"  UPDATE object_bids SET id = new.id WHERE bid_key = " BID_KEY_SQL("old.build_id")
	"    AND id = old.id;"
	" END;",

	/*
	 * 6: an object's sightings in the segment its id was given in kept in
	 * its own row (objects.seq and seq_first, seq_last, seq_maps), not in
	 * a row of object_segments: a new object was two B-tree inserts more
	 * (the row and its seq index), a fifth of the writer's time in a burst
	 * (tests/bench/RESULTS.md).  The table, renamed object_segs, holds the
	 * other segments an object is seen in.  Ids are given in time order,
	 * so the objects whose row holds segment S are a run of ids:
	 * segments.id_lo .. id_hi, kept by the writer, through which the
	 * readers find them without an index on objects.seq.  object_segments
	 * is now a view of the two (for people's queries: the daemon's own
	 * queries read the tables).  Rows of version 5 keep their segments in
	 * object_segs (seq NULL).
	 */
	"ALTER TABLE object_segments RENAME TO object_segs;"
	"ALTER TABLE objects ADD COLUMN seq INTEGER;"
	"ALTER TABLE objects ADD COLUMN seq_first INTEGER;"
	"ALTER TABLE objects ADD COLUMN seq_last INTEGER;"
	"ALTER TABLE objects ADD COLUMN seq_maps INTEGER;"
	"ALTER TABLE segments ADD COLUMN id_lo INTEGER;"
	"ALTER TABLE segments ADD COLUMN id_hi INTEGER;"
	"CREATE VIEW object_segments(object_id, seq, first_seen, last_seen, nr_maps) AS"
	"  SELECT o.id, s.seq, o.seq_first, o.seq_last, o.seq_maps FROM segments s"
	"    JOIN objects o ON o.id BETWEEN s.id_lo AND s.id_hi AND o.seq = s.seq"
	"  UNION ALL SELECT object_id, seq, first_seen, last_seen, nr_maps FROM object_segs;",
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
