/*
 * recorder.h - the recording core: events and rings in, segments out.
 */
#ifndef PERFMAPD_RECORDER_H
#define PERFMAPD_RECORDER_H

#include <limits.h>
#include <stdint.h>

#include "binaries.h"
#include "buildid_reader.h"
#include "config.h"
#include "events.h"
#include "kernel.h"
#include "model.h"
#include "notify.h"
#include "perfdata.h"
#include "segment.h"
#include "synth.h"

struct recorder_stats {
	uint64_t	 samples;
	uint64_t	 records;
	uint64_t	 mmaps;
	uint64_t	 mmaps_kernel_id;	/* build-id came in the record */
	uint64_t	 mmaps_user_id;		/* read by us */
	uint64_t	 mmaps_no_id;		/* file mappings with no build-id */
	uint64_t	 lost;			/* records the kernel dropped (LOST) */
	uint64_t	 lost_samples;		/* LOST_SAMPLES */
	uint64_t	 bad_records;		/* malformed, dropped */
	uint64_t	 write_errors;		/* records that could not be written */
	uint64_t	 deleted_for_space;	/* segments deleted because the disk was full */
	uint64_t	 bytes;			/* written to segments */
	uint64_t	 segments;		/* closed */
	uint64_t	 rotations_size, rotations_age, rotations_signal, rotations_request;
};

enum rotate_reason {
	ROTATE_SIZE,
	ROTATE_AGE,
	ROTATE_SIGNAL,
	ROTATE_REQUEST,		/* snapshot */
	ROTATE_STOP,
};

struct recorder {
	const struct config *conf;
	char		 segdir[PATH_MAX];
	struct events	 ev;
	struct perfdata_attr attr;
	struct model	 model;
	struct binaries	*bins;		/* shared with the index (binaries.h) */
	struct notify	 notify;	/* who hears what happened (notify.h) */
	struct buildid_reader	 reader;
	struct kinfo	 kinfo;
	struct vdso	 vdso;
	struct hostinfo	 host;		/* the machine, for segment headers */
	struct segment	 seg;
	uint64_t	 seq;
	uint64_t	 limit;		/* this pass consumes records stamped before */
	uint64_t	 bound;		/* ... and, from the current ring, up to this */
	uint64_t	 peek;		/* time of the record ring_peek() looked at */
	uint64_t	*next;		/* per CPU: time of its ring's next record */
	uint8_t		 scratch[PATH_MAX + 512];
	int		 wrote;		/* records written since the last round marker */
	int		 argc;
	char *const	*argv;
	uint64_t	 start_mono_ns;
	struct recorder_stats st;
	char		 last_closed[PATH_MAX];
	struct {
		uint64_t samples, records, lost, bytes, nbuildids;
	}		 last_stats;		/* of last_closed */
	int		 disk_error;		/* errno while segments cannot be written, else 0 */
	uint64_t	 room_gone_at;		/* no segment left to delete for space, at */
	uint64_t	 host_mnt_ns;		/* PID 1's mount namespace; 0: unknown */
	uint64_t	 init_user_ns;		/* PID 1's user namespace */
	struct {
		uint64_t	 user_ns;
		int32_t		 uid;
	}		 ns_owner[64];		/* user namespace -> its owner (a small cache) */
	unsigned	 ns_owner_next;
};

uint64_t recorder_now(void);	/* CLOCK_MONOTONIC ns, the events' clock */

/*
 * The start, in two steps around the listeners' own start:
 *   recorder_init   the segment directory (segments torn by a crash are
 *                   repaired: the index reconciles with what is on disk),
 *                   the events opened (not enabled); BINS is the table of
 *                   binaries shared with the index
 *   recorder_listen every listener (index, capture)
 *   recorder_start  events enabled, /proc scanned, the binaries running
 *                   announced, the first segment opened
 * recorder_stop (or a failed recorder_start) releases everything.
 */
int	recorder_init(struct recorder *, const struct config *, const char *state_dir,
	    struct binaries *bins, int argc, char *const *argv, char *err, size_t errlen);
int	recorder_listen(struct recorder *, const struct recorder_listener *);
int	recorder_start(struct recorder *, char *err, size_t errlen);
/* Read every ring; returns the number of records read. */
uint64_t recorder_drain(struct recorder *);
/* Close the current segment at "now" and start the next; path of the closed one in last_closed. */
int	recorder_rotate(struct recorder *, enum rotate_reason);
/* Rotate if the size or age limit is reached. */
void	recorder_check_rotate(struct recorder *);
/* Disable events, drain, finish the segment. */
void	recorder_stop(struct recorder *);

#endif
