/*
 * flight.h - the flight recorder's buffer: the last window of records in
 * memory, a FIFO of fixed-size chunks, oldest dropped first, never more
 * than its size.  It knows records only as perf_event_headers; what they
 * mean (the window's start state, the segment a snapshot writes) is
 * flightrec.c's.
 *
 * Time: every append says BOUND, a time all of its records are stamped
 * before (the pass's limit, recorder.c).  A chunk keeps the highest bound
 * of what went into it; when it is dropped, every record stamped before
 * that bound may be gone, so the buffer holds, from then on, every record
 * stamped at or after FROM (and maybe a few older ones, which a snapshot
 * leaves out: nothing older than the window, nothing missing inside it).
 */
#ifndef PERFMAPD_FLIGHT_H
#define PERFMAPD_FLIGHT_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

/* The default chunk: a sixteenth of the size, within these bounds. */
#define FLIGHT_CHUNK_MIN	(64 * 1024)
#define FLIGHT_CHUNK_MAX	(1024 * 1024)

struct flight_chunk;

struct flight {
	size_t		 size;		/* the bound: bytes of chunks at most */
	size_t		 chunk;		/* bytes of records one chunk holds */
	size_t		 nchunks, maxchunks;	/* allocated; size / chunk */
	struct flight_chunk *head, *tail;	/* oldest, newest */
	uint64_t	 from;		/* every record stamped at or after this is held */
	uint64_t	 bytes, records;		/* held now */
	uint64_t	 dropped_bytes, dropped_records;	/* dropped (space, age), ever */
	uint64_t	 too_big;	/* records larger than a chunk (dropped) */
	uint64_t	 bad;		/* appends that were not whole records (dropped) */
};

/*
 * A buffer of SIZE bytes in chunks of CHUNK bytes (0: the default), empty,
 * holding everything from FROM on.  Nothing is allocated until records come.
 */
void	flight_init(struct flight *, size_t size, size_t chunk, uint64_t from);
void	flight_free(struct flight *);
/*
 * Keep LEN bytes of whole records, NREC of them, every one stamped before
 * BOUND; the oldest chunks make room.  A record larger than a chunk is
 * dropped with everything before it (a window with a hole is no window).
 * Returns 0, or -1 if some of it could not be kept (counted).
 */
int	flight_append(struct flight *, const void *buf, size_t len, uint64_t nrec,
	    uint64_t bound);
/* Drop the chunks whose every record is stamped before T (flight_age). */
void	flight_expire(struct flight *, uint64_t t);
/* Empty it, not counted as dropped (a snapshot wrote it): it holds from FROM on. */
void	flight_reset(struct flight *, uint64_t from);
/*
 * Every record held, oldest chunk first (in a chunk, as appended); FN
 * returns non-zero to stop, which flight_foreach returns.
 */
typedef int (*flight_record_fn)(const struct perf_event_header *, void *arg);
int	flight_foreach(const struct flight *, flight_record_fn, void *arg);

#endif
