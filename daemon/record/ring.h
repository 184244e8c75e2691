/*
 * ring.h - reading one perf ring buffer (tools/lib/perf/mmap.c contract).
 */
#ifndef PERFMAPD_RING_H
#define PERFMAPD_RING_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct ring {
	struct perf_event_mmap_page *meta;	/* page 0: data_head / data_tail */
	uint8_t		*data;			/* 2^n bytes */
	uint64_t	 size, mask;
	void		*map;			/* whole mapping, NULL for a fake ring */
	size_t		 maplen;
	uint8_t		*scratch;		/* 64 KiB for records that wrap */
	uint64_t	 records, bytes;	/* consumed */
	uint64_t	 wrapped;		/* records copied because they wrapped */
	uint64_t	 torn;			/* bad headers, the rest of the pass skipped */
	uint64_t	 overruns;		/* head ran more than a ring ahead of tail */
	uint64_t	 pos;			/* in a callback: its record's position */
	/*
	 * Records taken out of the kernel's ring into memory (ring_spill)
	 * and not consumed yet: positions [start, end), end the kernel's
	 * data_tail; they come before the ring's in every read and scan.
	 */
	struct {
		uint8_t		*data;		/* 2^n bytes, NULL: none */
		uint64_t	 size, mask;
		uint64_t	 start, end;
	}		 spill;
	uint64_t	 spilled;		/* bytes ever spilled */
	uint64_t	 spill_full;		/* spills that found no room for all */
};

/*
 * Called for every whole record; the pointer is valid during the call only.
 * Returns 0 to consume the record, non-zero to stop before it (it stays in
 * the ring and comes first in the next pass).
 */
typedef int (*ring_record_fn)(const struct perf_event_header *, void *arg);

/* A ring's data bytes for SIZE (a power of two) on pages of PAGE bytes: at least one page. */
uint64_t ring_data_size(uint64_t size, uint64_t page);
int	ring_map(struct ring *, int fd, uint64_t size);
/* A ring over caller-provided memory (unit tests). */
int	ring_init(struct ring *, struct perf_event_mmap_page *, void *data, uint64_t size);
void	ring_unmap(struct ring *);

/* Consume everything up to data_head; returns the number of records read. */
uint64_t ring_read(struct ring *, ring_record_fn, void *arg);
/*
 * Look at the records from position FROM (or the tail, if FROM is behind
 * it) up to data_head without consuming them: FN's return value only stops
 * the scan.  Returns the position after the last record FN accepted, the
 * FROM of the next scan.  The data stays in the ring until ring_read
 * consumes it, so a record is seen by a scan at most once.
 */
uint64_t ring_scan(struct ring *, uint64_t from, ring_record_fn, void *arg);
/*
 * Consume records and hand them on in bulk: PICK says of each record
 * RING_TAKE (copy it), RING_DROP (consume it without copying) or RING_STOP
 * (leave it and the rest for the next pass); the records taken are handed
 * to RUN as runs of consecutive whole records, each run one contiguous
 * piece of the ring (a record that wraps is a run of its own, copied whole
 * first), NREC records in it, all before the tail moves.  Returns the
 * number of records consumed.
 */
#define RING_TAKE	0
#define RING_STOP	1
#define RING_DROP	2
typedef void (*ring_run_fn)(const void *buf, size_t len, uint64_t nrec, void *arg);
uint64_t ring_copy(struct ring *, ring_record_fn pick, ring_run_fn run, void *arg);
/*
 * Take the records waiting in the kernel's ring into memory of the
 * reader's own (at most MAX bytes held), so that the kernel's ring has
 * room again while nobody consumes: for the daemon's start, when the
 * /proc scan keeps the loop from reading.  The records keep their
 * positions and are read, scanned and copied as if still in the ring.
 * Returns the bytes taken.
 */
uint64_t ring_spill(struct ring *, uint64_t max);
/* 1 if the ring holds records from position FROM (or the tail, if FROM is behind it) on. */
int	ring_unseen(const struct ring *, uint64_t from);
/* Position of the next record to consume (data_tail, or the spill's start). */
uint64_t ring_tail(const struct ring *);
/* Bytes waiting (head - tail), the spill's included. */
uint64_t ring_pending(const struct ring *);
/* Bytes waiting in the kernel's ring itself: how full it is. */
uint64_t ring_fill(const struct ring *);

#endif
