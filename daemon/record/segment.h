/*
 * segment.h - one perf.data segment: created as NAME.partial, written as
 * records arrive, finished (features, header) and renamed to NAME when it
 * closes.  A closed segment is a complete perf.data file on its own.
 */
#ifndef PERFMAPD_SEGMENT_H
#define PERFMAPD_SEGMENT_H

#include <limits.h>
#include <stdint.h>

#include "binaries.h"
#include "notify.h"
#include "perfdata.h"

struct bidset_entry {
	uint64_t	 hash;
	char		*filename;	/* NULL: empty slot */
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 size;
	uint8_t		 kernel;
	uint8_t		 unlinked;	/* perfdata_buildid's */
};

/* The distinct (filename, build-id) pairs a segment references. */
struct bidset {
	struct bidset_entry *e;
	size_t		 n, cap;
};

struct segment {
	uint64_t	 seq;
	char		 path[PATH_MAX];	/* final name */
	char		 partial[PATH_MAX];	/* name while open */
	struct perfdata	 pd;
	int		 open;
	uint64_t	 t_start, t_end;	/* CLOCK_MONOTONIC ns, [start, end) */
	uint64_t	 wall_start_ns;		/* wall clock at t_start */
	uint64_t	 samples, records, lost, mmaps;
	uint64_t	 start_size;	/* bytes of its synthesized start state: not
					   counted toward rotate_size */
	int		 start_rc;	/* that start state's write: 0, or -errno */
	uint64_t	 first_sample, last_sample;	/* times; 0 until a sample */
	struct bidset	 bids;
	/*
	 * A write the disk refused for want of space (ENOSPC, EDQUOT): room
	 * made by the owner (the oldest segment deleted: 0), and the write
	 * tried again, up to SEGMENT_ROOM_TRIES times; NULL: not tried.
	 */
	int		(*room)(void *);
	void		*room_arg;
};

#define SEGMENT_ROOM_TRIES	8

/* perf-000042-20261122T125535Z.data */
int	segment_open(struct segment *, const char *dir, uint64_t seq,
	    uint64_t t_start, uint64_t wall_start_ns,
	    const struct perfdata_attr *, size_t nattrs);
/*
 * Write one record; segment_append: NREC whole records at once (counted
 * once written).  Every writer of a segment, the start state and a flight
 * snapshot's included, has room made for it (ROOM) when the disk is full.
 */
int	segment_write(struct segment *, const void *, size_t);
int	segment_append(struct segment *, const void *, size_t, uint64_t nrec);
/* The buffered records to disk, room made as for a write: 0 or -errno. */
int	segment_flush(struct segment *);
/* RC (-errno) is the disk's want of space: ENOSPC or EDQUOT. */
int	segment_space_error(int rc);
/* A sample taken at TIME: counted, and the segment's first/last sample times kept. */
void	segment_note_sample(struct segment *, uint64_t time);
int	segment_add_buildid(struct segment *, const char *filename,
	    const uint8_t *id, uint8_t size, int kernel);
/*
 * Binary B is referenced under NAME (as the record names it): into the
 * build-id table, unless B is there already (B->seg_seq, no lookup).  A
 * name the kernel marked " (deleted)" is kept as such beside the plain one.
 */
int	segment_note_binary(struct segment *, struct binary *b, const char *name);
/* Finish the file and rename it; META's first/last time are the samples'. */
int	segment_close(struct segment *, const struct perfdata_attr *, size_t nattrs,
	    struct perfdata_meta *);
/* Drop without finishing (fatal paths); the .partial stays for repair. */
void	segment_abandon(struct segment *);

/* Highest sequence number among DIR's segments (0 if none). */
uint64_t segment_last_seq(const char *dir);

/* DIR's closed segments after a retention pass, and the bytes of everything of theirs. */
struct segment_usage {
	uint64_t	 count, bytes;
	int		 known;		/* a pass has listed them */
};

/*
 * Disk full: delete DIR's oldest closed segment (published through
 * NOTIFY, which may be NULL), taken off *USAGE (may be NULL).  Returns 1
 * if one was deleted, 0 if none is left, -errno.
 */
int	segment_delete_oldest(const char *dir, const struct notify *, struct segment_usage *);
/* Sequence number of a segment file name (*PARTIAL: NAME.partial), 0 if it is not one. */
uint64_t segment_name_seq(const char *name, int *partial);

/*
 * Retention over DIR's closed segments, oldest first: delete while more
 * than KEEP_COUNT, more than KEEP_SIZE bytes, or older than KEEP_AGE_MS
 * (0 = no limit), but never the newest: the one a snapshot just handed
 * out stays even when it alone is larger than KEEP_SIZE.  Each file
 * deleted is published through NOTIFY (may be NULL).  What is left, with
 * its pprof files and JIT maps, in *USAGE (may be NULL).  Returns the
 * number deleted.
 */
int	segment_retention(const char *dir, uint64_t keep_count, uint64_t keep_size,
	    uint64_t keep_age_ms, const struct notify *, struct segment_usage *usage);

void	bidset_free(struct bidset *);

#endif
