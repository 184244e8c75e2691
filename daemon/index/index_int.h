/*
 * index_int.h - what the files of daemon/index/ share: the in-memory rows,
 * the write operations handed to the writer thread, and struct index.
 * Nothing outside daemon/index/ includes it (they use index.h).
 */
#ifndef PERFMAPD_INDEX_INT_H
#define PERFMAPD_INDEX_INT_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <sqlite3.h>

#include "arena.h"
#include "config.h"
#include "index.h"
#include "record/binaries.h"
#include "perf_abi.h"

#define OBJ_CHUNK	65536		/* objects per chunk of ix->objs */
#define RETENTION_EVERY_NS (3600ULL * 1000000000ULL)
#define WAL_IDLE_FRAMES	1024		/* checkpoint when idle past this (16 MiB of WAL) */
#define WAL_MAX_FRAMES	8192		/* ... and even when busy past this (128 MiB) */
/*
 * Past this, a checkpoint that readers kept from copying the whole WAL
 * (queries back to back, each holding the snapshot it began in) waits for
 * them and starts the WAL over (32 MiB): else it grew without bound.
 */
#define WAL_TRUNCATE_FRAMES (2 * WAL_IDLE_FRAMES)

#define OBJ_IN_DIRTY	0x01	/* on the dirty list */
#define OBJ_DIRTY	0x02	/* object row changed */
#define OBJ_SEG_DIRTY	0x04	/* object_segments row of seg_seq changed */
#define OBJ_WRITTEN	0x08	/* handed to the writer once (or loaded): a row exists */
#define OBJ_FOLD	0x10	/* handed over new with seg_seq's sightings: its row holds them */

/*
 * The row of a binary (record/binaries.h), kept at the binary's id while
 * the binary is in the table.  The writer adds what changed since the
 * last hand-over (nr_maps - sent_maps, ...) to the row of its (path,
 * build-id, mount namespace), so a binary forgotten and seen again (the
 * table prunes, the daemon restarts) goes on counting in its old row.
 */
struct obj_row {
	int64_t		 id;		/* objects.id; 0 until the row exists or is assigned */
	uint64_t	 first, last, nr_maps, nr_procs;
	uint64_t	 sent_maps, sent_procs;	/* handed to the writer already */
	uint64_t	 seg_seq, seg_first, seg_last, seg_maps;
	uint64_t	 seg_sent;	/* of seg_maps, handed to the writer already */
	uint32_t	 last_pid;	/* of the last mapping counted in nr_procs */
	uint8_t		 source, flags;
};

struct unres_row {
	const char	*path;		/* arena */
	const char	*reason;	/* static */
	uint64_t	 hash, first, last, n, sent;
	int		 dirty;
};

/* Unresolved rows kept in memory after a commit at most (then forgotten). */
#define UNRES_KEEP	4096

struct mod_row {
	char		 name[64];
	uint64_t	 addr;
	uint8_t		 bid[BUILD_ID_MAX], bidsize;
};

enum write_op_type {
	OP_SEG_OPEN,		/* v: seq, start */
	OP_SEG_FULL,		/* v: seq, start, end, size, samples, lost, records; s: name, reason: state */
	OP_SEG_CLOSE,		/* v: seq, end, size, samples, lost, records */
	OP_SEG_DELETED,		/* v: seq, when */
	OP_OBJ,			/* v: id, first, last, +nr_maps, +nr_procs, mnt_ns, ns_uid; owned: path;
				   sv: its sightings in the current segment (seq 0: none) */
	OP_OBJSEG,		/* v: id; sv: a segment it was seen in before the current one */
	OP_UNRES,		/* v: first, last, +n; owned: path */
	OP_MODULE,		/* v: addr, size, first, last; owned: name */
	OP_RETENTION,		/* v: cutoff */
};

struct write_op {
	uint8_t		 type, bidsize, kind, source, is_new;
	uint8_t		 fold;		/* OP_OBJ: the row was handed over new with sv's segment */
	uint32_t	 pos;		/* writer: place in its transaction */
	int64_t		 v[7];
	int64_t		 sv[4];		/* a segment's sightings: seq, first, last, +nr_maps since the last hand-over */
	const char	*s;		/* arena or static */
	const char	*reason;	/* static */
	char		*owned;		/* freed with the batch */
	uint8_t		 bid[BUILD_ID_MAX];
	struct index_section *sect;	/* OP_MODULE, owned */
	size_t		 nsect;
};

/*
 * A batch is its ops in this order: segment events (early), objects
 * (with their sightings in the current segment), sightings in past
 * segments (late), unresolved mappings.  PLAIN: nothing but objects and
 * unresolved mappings, and no binary forgotten
 * since the batch before (whose row could be the same key under another
 * id): the writer may run its rows together with the batch before's.
 */
struct write_batch {
	struct write_batch	*next;
	struct write_op	*ops;
	size_t		 n, cap;
	uint64_t	 seq;		/* hand-over number (index_handoff) */
	int		 plain;
};

enum { ST_OBJ_KEY, ST_OBJ_NEW, ST_OBJ_BID, ST_OBJ_UPD, ST_OBJ_UPD_FOLD, ST_OBJ_FIND, ST_OBJ_MOVE, ST_OBJSEG_MOVE,
	ST_OBJ_UNFOLD, ST_OBJ_SEEN, ST_OBJSEG, ST_SEG_RANGE, ST_SEG_UNFOLD, ST_SEG_CLEAR,
	ST_SEG_OPEN, ST_SEG_FULL, ST_SEG_CLOSE, ST_SEG_DELETED, ST_SEG_FORGET, ST_UNRES,
	ST_MODULE, ST_MODSECT, ST_MAX };

struct event;
struct event_base;

struct index {
	char		 path[PATH_MAX];
	char		 segdir[PATH_MAX];
	const struct config *conf;
	sqlite3		*db;
	sqlite3_stmt	*st[ST_MAX];
	const struct write_op **rows;	/* writer: what the table batch_rows shows */
	size_t		 nrows;
	int		 rows_unfolded;	/* writer: batch_rows shows no segment (sq ... sm NULL) */

	/* loop thread */
	struct binaries	*bins;		/* shared with the recorder, or own_bins */
	struct binaries	 own_bins;
	struct arena	 arena;		/* unresolved paths */
	struct obj_row	**objs;		/* by binary id, chunks of OBJ_CHUNK */
	size_t		 nchunks;
	size_t		 nobjs;		/* rows with an id */
	int64_t		 next_id;
	struct unres_row	*unres;
	size_t		 nunres, cunres;
	uint32_t	*uhash;
	size_t		 uhcap;
	uint32_t	*dirty;
	size_t		 ndirty, cdirty;
	int		 unres_dirty;
	int		 news;		/* a row the file does not have yet is pending (index_tick) */
	int		 forgot;	/* a binary forgotten since the last hand-over */
	struct write_batch	 early, late;	/* segment events; object_segments of past segments */
	struct mod_row	*mods;
	size_t		 nmods;
	uint64_t	 cur_seq;
	uint64_t	 last_commit_ns, last_retention_ns;
	struct event_base *base;	/* index_attach */
	struct event	*tick_ev;	/* every tick_ms: index_retime */
	struct event	*handoff_ev;	/* a hand-over promised to a query (index_handoff) */
	uint64_t	 owed_seq;	/* ... its number */
	uint64_t	 tick_ms;
	struct index_stats stats;

	/* shared with the writer, under mu */
	pthread_t	 thread;
	int		 running, stopping;
	int		 settled;	/* index_settle could not keep a promise: no more waits */
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv_work, cv_idle;
	struct write_batch	*q_head, *q_tail;
	uint64_t	 q_seq;		/* batches handed over (written by the loop) */
	uint64_t	 done_seq;	/* ... and written (by the writer) */
	int		 busy;
	uint64_t	 w_batches, w_rows, w_errors, w_us_last, w_us_max;
	uint64_t	 w_failing, w_lost_rows;	/* writer thread only */
	int		 w_seg_lost;	/* a batch lost since the last segment opened (writer) */
	int		 w_prune_stuck;	/* the last prune found nothing to forget (writer) */
	uint64_t	 w_prune_used;	/* ... at this size (writer) */
	uint64_t	 w_prune_runs;	/* looks for history to forget above db_max_size */
	uint64_t	 w_pruned;	/* history rows pruned above max_size */
	uint64_t	 w_wal_restarts;	/* writer_checkpoint's waits for readers */
	int		 w_full_logged;	/* writer thread only */
	int		 wal_frames;	/* in the WAL since the last checkpoint */
};

#define OBJ(ix, slot)	(&(ix)->objs[(slot) / OBJ_CHUNK][(slot) % OBJ_CHUNK])
#define BIN(ix, slot)	binaries_at((ix)->bins, (uint32_t)(slot))

/* writer.c */
extern const char *const index_kind_names[3];	/* by enum binary_kind */
extern const char *const index_source_names[5];	/* by enum buildid_source */
int	writer_prepare(struct index *, char *err, size_t errlen);
void	*writer_main(void *arg);
int	writer_run_batches(struct index *, struct write_batch *list);
int	writer_wal_cb(void *arg, sqlite3 *, const char *name, int frames);
/* Above [index] max_size: history no segment references goes, oldest first. */
void	writer_prune(struct index *);
void	batch_free_list(struct write_batch *list);

/* table.c */
struct write_op *batch_add(struct write_batch *, enum write_op_type);
void	batch_free(struct write_batch *);
int	batch_move(struct write_batch *dst, struct write_batch *src);
/* The row of binary B, created (with a new objects.id) if new; NULL when out of memory. */
struct obj_row *table_row(struct index *, const struct binary *b);
/* The row at binary id ID, as it is (id 0: no row yet). */
struct obj_row *table_row_slot(struct index *, uint32_t id);
/* Binary B leaves the table (its id will be reused): its row goes, written first. */
void	table_forget(struct index *, const struct binary *b);
/* A sighting of B at WALL by PID; COUNT: a new mmap, not a state seen again. */
void	table_sight(struct index *, const struct binary *b, uint8_t source, uint32_t pid,
	    uint64_t wall, int count);
/*
 * The same for (NAME, ID, provenance NS) of kind KIND, its binary found or
 * created (UNLINKED: binaries_get_ns).  A segment read back does not say
 * whether a " (deleted)" in a mapping's name was proven the kernel's mark:
 * the scan of one (rebuild.c) keeps every name whole.
 */
void	table_add_object(struct index *, const char *name, int unlinked, const uint8_t *id,
	    uint8_t idsize, uint64_t ns, uint8_t source, uint8_t kind, uint32_t pid, uint64_t wall,
	    int count);
/* After a commit: forget the unresolved rows if there are many (all are written). */
void	table_trim_unresolved(struct index *);
uint64_t index_name_seq(const char *name);	/* of a segment file name, 0 if none */

/* index.c */
void	op_from_objseg(struct write_op *, struct obj_row *);
void	index_maybe_commit(struct index *);

/* rebuild.c */
int	rebuild_reconcile(struct index *);

#endif
