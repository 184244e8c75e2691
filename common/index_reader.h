/*
 * index_reader.h - the read side of the index: questions to STATE/index.db.
 * The daemon writes the index (daemon/index/); these functions only
 * read it, through a connection opened read-only, so perfmapctl can use
 * them without a daemon, on a copied state directory too.
 *
 * Schema (PRAGMA user_version = INDEX_SCHEMA_VERSION).  Times are wall
 * clock, ns since the epoch; build-ids are lower-case hex.
 *
 *   segments(seq PK, name, start_ns, end_ns, size, samples, lost, records,
 *            state 'open'|'closed'|'repaired'|'deleted', deleted_ns)
 *   objects(id PK, path, build_id, kind 'user'|'kernel'|'module',
 *            source 'mmap3'|'mmap2'|'userspace'|'kernel'|'unknown',
 *            first_seen, last_seen, nr_maps, nr_procs,
 *            mnt_ns, ns_uid)
 *   object_keys(path, build_id, mnt_ns, id)  PK(path, build_id, mnt_ns)
 *   object_bids(bid_key, id)                 PK(bid_key, id)
 *            (an object's keys, each table ordered by its key: lookups by
 *            path and by build-id go through them to objects; see
 *            daemon/index/schema.c, versions 4 and 5.  bid_key is
 *            index_bid_key() of the build-id, below: a lookup compares
 *            objects.build_id after the key)
 *   objects.seq, seq_first, seq_last, seq_maps
 *            (the object's sightings in the segment it was new in, or NULL)
 *   segments.id_lo, id_hi
 *            (the run of object ids whose row may hold this segment)
 *   object_segs(object_id, seq, first_seen, last_seen, nr_maps)
 *            PK(object_id, seq), indexed by seq: its sightings in other
 *            segments.  The view object_segments(object_id, seq,
 *            first_seen, last_seen, nr_maps) is both (schema.c, version
 *            6); rows of deleted segments are removed with them
 *   unresolved(path, reason, first_seen, last_seen, nr_maps)  PK(path, reason)
 *   modules(id PK, name, path, build_id, addr, size, first_seen, last_seen)
 *   module_sections(module_id, name, addr)
 *
 * first_seen/last_seen of an object: the first and last moment a process
 * was seen with it mapped (a new mmap, or the live state a segment starts
 * with).  nr_maps counts new mmaps; nr_procs the processes that mapped it
 * (approximate: counted in constant memory, see index.c add_object).
 *
 * Every query returns 0 and a new jansson object in *OUT (the caller
 * json_decref()s it), -ENOENT when there is nothing to report (*OUT is
 * then NULL, ERR says what was not found), or -1 with ERR set.  Times are
 * given twice: "first_seen": "2026-11-22T13:04:19.123Z" (UTC, ms) and
 * "first_seen_ns": 1795438459123456789 (exact).  An object is
 *
 *   OBJ = { "path": s, "build_id": s, "kind": s, "source": s,
 *           "first_seen": s, "first_seen_ns": i, "last_seen": s,
 *           "last_seen_ns": i, "nr_maps": i, "nr_procs": i,
 *           "mnt_ns": s, "mnt_ns_ino": i, "ns_uid": i }
 *
 * Provenance: a row seen in a mount namespace a user made (inside a user
 * namespace of theirs: unshare -Urm) has "mnt_ns": "mnt:[INODE] of uid
 * UID" (the namespace's inode, and the uid owning its user namespace if
 * known) and "mnt_ns_ino"; in a list that holds such a row, the others
 * have "mnt_ns": "host"; where there is none, no row has the key.
 * lookup and history answer for the host (rows of the host's mount
 * namespace, or of one only root could make) unless ALL_NS.
 *
 * and a segment is
 *
 *   SEG = { "seq": i, "name": s, "path": s (STATE/segments/name),
 *           "state": s, "start": s, "start_ns": i, "end": s|null,
 *           "end_ns": i|null, "size": i, "samples": i, "lost": i,
 *           "records": i, "objects": i (distinct objects it references) }
 */
#ifndef PERFMAPD_INDEX_READER_H
#define PERFMAPD_INDEX_READER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include "perf_abi.h"

#define INDEX_SCHEMA_VERSION	6
#define INDEX_FILE		"index.db"
/*
 * objects.mnt_ns of a mapping by a process whose namespace is not known
 * (its FORK was lost and it was gone before it could be looked up): not
 * the host's, and no namespace's inode (nsfs numbers start near 2^32).
 * The capture files its binaries with users' untrusted copies: the same
 * number as bidcache.h's BIDCACHE_NS_USER, on purpose.
 */
#define INDEX_MNT_NS_UNKNOWN	1

struct index_reader;

/*
 * object_bids.bid_key of the build-id ID[0..LEN): its first 8 bytes (0s
 * after a shorter one) as a big-endian number with the top bit flipped,
 * so that the keys' order is the build-ids' byte order and the ids of a
 * prefix are a range of keys.  Several build-ids may share a key: it
 * finds rows, objects.build_id decides.  schema.c computes the same in
 * SQL for its triggers (BID_KEY_SQL).
 */
static inline int64_t
index_bid_key(const uint8_t *id, size_t len)
{
	uint64_t k = 0;
	size_t	 i;

	for (i = 0; i < 8; i++)
		k = k << 8 | (i < len ? id[i] : 0);
	return (int64_t)(k ^ 0x8000000000000000ULL);
}

/* Open STATE/index.db read-only.  NULL with ERR set on failure. */
struct index_reader *index_reader_open(const char *state_dir, char *err, size_t errlen);
void	index_reader_close(struct index_reader *);
/*
 * Queries from now on end within MS milliseconds (an error "interrupted"
 * past it); 0: no limit.  The daemon's query thread sets one per query.
 */
void	index_reader_set_deadline(struct index_reader *, unsigned ms);
/*
 * The lists a user can make long (lookup's "mapped", history's and
 * buildid's "objects" and "segments", a segment's "objects"; not the list
 * of segments, whose rows the daemon makes) hold at most ROWS rows from
 * now on, and the rows of a reply (all its lists together) at most about
 * BYTES bytes of JSON, counted as JSON_COMPACT writes them (a control
 * byte of a path is six); a reply whose list was cut says "truncated":
 * true (history keeps the rows seen last, still given oldest first).
 * 0: no limit.  The byte count starts again at each call; the daemon's
 * query thread calls it before every query with QUERIER_MAX_ROWS and
 * QUERIER_MAX_BYTES (querier.h): another user's files must not make a
 * reply of hundreds of MB on the daemon, neither with many rows nor with
 * a few long paths.
 */
void	index_reader_set_limits(struct index_reader *, size_t rows, size_t bytes);

/*
 * lookup PATH [at TIME]: the build-id PATH had at AT_NS.
 *   { "path": s, "at": s, "at_ns": i,
 *     "current": OBJ + { "mapped": b },	the newest object first seen
 *					at or before AT ("mapped": AT is
 *					within its [first_seen, last_seen])
 *     "mapped": [ OBJ, ... ] }		every object of PATH mapped at AT
 *					(several when versions overlap,
 *					or mount namespaces differ), newest
 *					first
 * -ENOENT: PATH was never seen at or before AT.
 */
int	index_reader_lookup(struct index_reader *, const char *path, int64_t at_ns, json_t **out,
	    char *err, size_t errlen);
int	index_reader_lookup_ns(struct index_reader *, const char *path, int64_t at_ns,
	    int all_ns, json_t **out, char *err, size_t errlen);
/*
 * The same, knowing which versions of PATH live processes map now (the
 * daemon's model: LIVE, NLIVE): a row's last sighting is the last segment
 * start or mmap before now, so a version still mapped was "not mapped"
 * at any AT after it.  The daemon passes them for an AT in the open
 * segment; each counts as mapped from its first sighting to now.
 */
struct index_live {
	uint8_t		 bid[BUILD_ID_MAX];
	uint8_t		 bidsize;
	uint64_t	 mnt_ns;
};
#define INDEX_LIVE_MAX	64
int	index_reader_lookup_live(struct index_reader *, const char *path, int64_t at_ns,
	    int all_ns, const struct index_live *live, size_t nlive, json_t **out, char *err,
	    size_t errlen);

/*
 * history PATH: every build-id PATH has had, oldest first.
 *   { "path": s, "objects": [ OBJ + { "segments": i }, ... ] }
 */
int	index_reader_history(struct index_reader *, const char *path, json_t **out,
	    char *err, size_t errlen);
int	index_reader_history_ns(struct index_reader *, const char *path, int all_ns,
	    json_t **out, char *err, size_t errlen);

/*
 * buildid ID (full hex, or a prefix of at least 8 digits that is unique):
 *   { "build_id": s, "first_seen": s, "first_seen_ns": i, "last_seen": s,
 *     "last_seen_ns": i,
 *     "objects": [ OBJ, ... ],			every path it was seen under
 *     "segments": [ SEG + { "path_seen": s, "seen_first": s,
 *                   "seen_last": s, "nr_maps": i }, ... ],  by seq
 *     "cached": s|null }			STATE/debug/.build-id/xx/rest
 *						(its elf file for perf's
 *						directory form) if it exists
 */
int	index_reader_buildid(struct index_reader *, const char *hex, json_t **out,
	    char *err, size_t errlen);

/*
 * segments: { "segments": [ SEG, ... ] } by seq; deleted ones only with
 * INDEX_SEGS_ALL (their rows are kept as history); each one's count of
 * binaries (a read of every row of the index) unless INDEX_SEGS_NO_COUNTS
 * (a profile's choice of segments wants none: at a million objects the
 * counts were most of its SQL).
 */
#define INDEX_SEGS_ALL		1u
#define INDEX_SEGS_NO_COUNTS	2u
int	index_reader_segments(struct index_reader *, unsigned flags, json_t **out, char *err,
	    size_t errlen);

/*
 * The build-ids one segment references; SEGMENT is its seq number or file
 * name (with or without the directory).
 *   { "segment": SEG, "objects": [ OBJ + { "seen_first": s,
 *     "seen_last": s, "nr_maps_in_segment": i }, ... ] }  by path
 */
int	index_reader_segment_buildids(struct index_reader *, const char *segment, json_t **out,
	    char *err, size_t errlen);

/*
 * The kernel and modules, with section addresses.
 *   { "kernel": [ OBJ, ... ],
 *     "modules": [ { "name": s, "path": s, "build_id": s|null, "addr": s (0x..),
 *                    "size": i, "first_seen": s, "last_seen": s,
 *                    "sections": { ".text": "0x...", ... } }, ... ] }
 */
int	index_reader_kernel(struct index_reader *, json_t **out, char *err, size_t errlen);

/*
 * Coverage, for status:
 *   { "schema": i, "objects": i, "paths": i, "segments": i,
 *     "segments_deleted": i, "unresolved_maps": i,
 *     "unresolved": [ { "path": s, "reason": s, "nr_maps": i,
 *                       "first_seen": s, "last_seen": s }, ... ] }
 *					(the 100 most mapped)
 */
int	index_reader_summary(struct index_reader *, json_t **out, char *err, size_t errlen);

#endif
