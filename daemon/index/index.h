/*
 * index.h - the daemon's writer of STATE/index.db: which build-id every
 * path had, and when (see common/index_reader.h for the schema and the queries).
 *
 * Calls come from the loop thread and never wait for SQLite: each sighting
 * updates an in-memory row (a hash of (path, build-id) -> row state), and
 * the rows that changed are handed in one batch to a writer thread, which
 * commits them in one transaction.  A batch is handed over when
 * commit_interval has passed and something in it is news (index_tick: a
 * row the file does not have yet, a segment or module event), when
 * INDEX_COUNTS_LAG intervals have passed (rows that only count sightings
 * of objects the file has), when commit_rows rows are pending, when a
 * query asks (index_handoff), and when a segment closes.
 *
 *	loop thread                          writer thread
 *	index_add_mapping ─► row dirty
 *	index_segment_* ───► op queued
 *	index_commit ──────► batch ─────────► BEGIN; ops; rows; COMMIT
 *	index_flush ───────► batch, then waits until the writer is idle
 *
 * At open: PRAGMA quick_check; a corrupt file is moved aside as
 * index.db.corrupt-<unix time> and a fresh index is rebuilt from the
 * segments on disk.  Then the index is reconciled with the segment
 * directory: segments that were open at a crash (repaired since) and
 * segments the index never heard of are scanned, rows of segments that no
 * longer exist are marked deleted.
 */
#ifndef PERFMAPD_INDEX_H
#define PERFMAPD_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "perf_abi.h"

/*
 * Rows that only count sightings of objects the file has (last seen, maps,
 * processes) wait up to this many commit_intervals: on a host that keeps
 * running the same binaries every batch is such, and a writer woken for a
 * transaction costs a few hundred microseconds of CPU however little it
 * writes (tests/bench/RESULTS.md).  News goes at commit_interval.
 */
#define INDEX_COUNTS_LAG	10

struct index;
struct binaries;
struct event_base;
struct recorder_listener;

struct index_stats {
	uint64_t	 objects;		/* rows in memory: (path, build-id) of live binaries */
	uint64_t	 sightings;		/* mappings reported */
	uint64_t	 unresolved;		/* mappings with no build-id */
	uint64_t	 pending;		/* rows not handed to the writer yet */
	uint64_t	 batches, rows_written;
	uint64_t	 commit_us_last, commit_us_max;	/* writer thread, per batch */
	uint64_t	 errors;		/* failed batches */
	uint64_t	 pruned;		/* rows of history forgotten above db_max_size */
	uint64_t	 prune_runs;		/* looks for such rows (a scan of every object) */
	uint64_t	 wal_restarts;		/* WALs readers kept, emptied after them */
};

/*
 * Open (create, migrate, check, rebuild, reconcile) STATE/index.db and
 * start the writer.  BINS is the table of binaries shared with the
 * recorder (the index keeps its rows at the binaries' ids); NULL: the index
 * keeps a table of its own (tools and tests).
 */
int	index_open(struct index **, const char *state_dir, const struct config *,
	    struct binaries *bins, char *err, size_t errlen);
/* The listener the recorder publishes to (record/notify.h). */
void	index_listener(struct index *, struct recorder_listener *);
/*
 * Tick on a timer of BASE every commit_interval if that is shorter than
 * drain_interval; else the recorder's drain timer ticks the index through
 * the listener (index_listener), and no timer of its own wakes the loop.
 */
int	index_attach(struct index *, struct event_base *);
/* The same again for the intervals the configuration has now (a reload). */
int	index_retime(struct index *);
/* Commit everything, stop the writer, close. */
void	index_close(struct index *);

/* A segment began at WALL_START_NS (wall clock, ns); NAME is its file name. */
void	index_segment_open(struct index *, uint64_t seq, const char *name,
	    uint64_t wall_start_ns);
/* It closed: end time, final figures; the pending rows are committed. */
void	index_segment_close(struct index *, uint64_t seq, uint64_t wall_end_ns,
	    uint64_t size, uint64_t samples, uint64_t lost, uint64_t records);
/* Retention (or anything else) deleted segment file NAME. */
void	index_segment_deleted(struct index *, const char *name);

/*
 * A mapping of PATH with build-id ID, seen at WALL_NS by process PID, in
 * the current segment.  SOURCE is an enum buildid_source.  SYNTHESIZED: it
 * comes from a segment's initial state, not from a new mmap, so it moves
 * last_seen and links the segment but is not counted as a mapping.  A
 * " (deleted)" ending PATH is taken for the kernel's mark, proven by the
 * caller (binaries.h).  (The recorder's mappings arrive through the
 * listener instead, with their binary already looked up.)
 */
void	index_add_mapping(struct index *, const char *path, const uint8_t *id,
	    uint8_t idsize, uint8_t source, uint32_t pid, uint64_t wall_ns,
	    int synthesized);
/* A file mapping whose build-id could not be learned: ERR is the -errno of the read. */
/* CAUSE: why no build-id (enum bid_cause, record/buildid_reader.h). */
void	index_add_unresolved(struct index *, const char *path, int cause, uint64_t wall_ns);

/*
 * The kernel ([kernel.kallsyms], ID) and the loaded modules: PROC_MODULES
 * is /proc/modules, SYS_MODULE /sys/module (each module's build-id from
 * NAME/notes/.note.gnu.build-id, its section addresses from NAME/sections/).
 * A module seen with the same build-id and address as last time only has
 * its last_seen moved.  Returns the number of modules, or -errno.
 */
int	index_scan_kernel(struct index *, const uint8_t *id, uint8_t idsize,
	    const char *proc_modules, const char *sys_module, uint64_t wall_ns);

/*
 * Commit what is due (commit_interval for news, INDEX_COUNTS_LAG of them
 * for counts; a tick an eighth of an interval early counts), and queue the
 * retention when an hour has passed.
 */
void	index_tick(struct index *);
/* Hand the pending rows to the writer now. */
void	index_commit(struct index *);
/*
 * Commit and wait until they are on disk; returns 0, or -1 if a batch
 * failed.  This waits for the writer thread (a commit is ~0.1-1 ms for the
 * daemon's usual batches, longer under a burst of new objects).
 */
int	index_flush(struct index *);
/*
 * The same without waiting: hand the pending rows to the writer (loop
 * thread) and return the number of that hand-over; index_wait(SEQ), from
 * any other thread, returns once everything handed over up to SEQ is
 * written (or the writer stops).  A query that must see what the loop
 * recorded before it was asked waits there, off the loop.  Within
 * INDEX_HANDOFF_GAP_MS of the last hand-over (or commit_interval, if
 * shorter), the rows go at the gap's end instead, and SEQ is that one's:
 * queries in a loop make at most one transaction per gap.
 */
#define INDEX_HANDOFF_GAP_MS	50
uint64_t index_handoff(struct index *);
void	index_wait(struct index *, uint64_t seq);
/*
 * The hand-over promised to queries, now: before the loop stops, whose
 * timer would have made it (a query thread waits for it).
 */
void	index_settle(struct index *);

void	index_get_stats(struct index *, struct index_stats *);

/*
 * Module sections as the parser sees them (exported for the tests):
 * every regular file of DIR (sys_module/NAME/sections) holding "0x<hex>".
 */
struct index_section {
	char		 name[64];
	uint64_t	 addr;
};
int	index_read_sections(const char *dir, struct index_section **, size_t *n);

/* Create or migrate an open database to schema VERSION (tests use old versions). */
struct sqlite3;
int	index_migrate(struct sqlite3 *, int version, char *err, size_t errlen);

#endif
