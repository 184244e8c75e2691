/*
 * synth.h - the state a segment starts with: kernel and module maps, and
 * COMM (NAMESPACES) + MMAP2 records for every live process, from the model.  The model
 * itself is filled once at start-up from /proc (procscan.h).
 */
#ifndef PERFMAPD_SYNTH_H
#define PERFMAPD_SYNTH_H

#include <limits.h>
#include <stdint.h>

#include "binaries.h"
#include "kernel.h"
#include "model.h"
#include "notify.h"
#include "record.h"
#include "segment.h"

/* Room for one synthesized record. */
#define SYNTH_BUF	(PATH_MAX + 256)

struct synth_stats {
	uint64_t	 procs, threads, maps;
};

/*
 * What a segment's start state leaves out or adds (the flight recorder's
 * window, flightrec.c): KEEP says of a process (MM NULL) or of one of its
 * maps whether it is written; MORE writes records of its own after the
 * processes, before FINISHED_INIT.  Either may be NULL.
 */
struct synth_filter {
	int	(*keep)(const struct model_proc *, const struct model_map *mm, void *arg);
	int	(*more)(struct segment *, void *arg);
	void	*arg;
};

/*
 * Write the synthesized state into SEG: kernel + module MMAPs, then COMM
 * and MMAP2 records per process, then FINISHED_INIT and FINISHED_ROUND.
 * Records carry TIME and ID (the first event's id) in their sample_id.
 * Every binary written goes into the segment's build-id table (the kernel,
 * the modules and the vDSO too) and is published as "seen" at WALL_NS
 * through NOTIFY (BINS resolves the model's binary ids).
 */
/*
 * The host's namespaces (recorder.h): a process in others gets a
 * NAMESPACES record in the start state, so that a reader of the segment
 * alone (the index rebuilt from segments) knows what is the host's.
 */
struct synth_host {
	uint64_t	 mnt_ns, user_ns;
};

struct synth_args {
	const struct record_layout *layout;
	uint64_t	 id;		/* the sample id records carry */
	uint64_t	 time;		/* their time stamp: the segment's start */
	uint64_t	 wall_ns;	/* the same, on the wall clock */
	struct binaries	*bins;
	const struct notify *notify;
	const struct synth_filter *filter;	/* NULL: everything */
	const struct synth_host *host;		/* NULL: no NAMESPACES records */
};
int	synth_write(struct segment *, struct model *, const struct kinfo *,
	    const struct synth_args *, struct synth_stats *);

/*
 * The records of process P's state: a COMM per thread, a NAMESPACES if
 * HOST (may be NULL) says they are not the host's, an MMAP2 per map a
 * segment may hold (a file without a proven build-id is left out), built
 * in BUF (SYNTH_BUF bytes) with the sample_id SID (its pid and tid are set
 * here; its time moved up to P's scan_ns if P is dated, model.h), each
 * handed to EMIT with its map (NULL for a COMM).  EMIT's non-zero return
 * stops the walk and is returned.
 */
typedef int (*synth_emit_fn)(const void *rec, size_t len, const struct model_proc *,
	    const struct model_map *mm, void *arg);
int	synth_proc(const struct model_proc *, const struct record_layout *,
	    const struct synth_host *host, struct record_sample_id *sid, uint8_t *buf,
	    synth_emit_fn, void *arg);

#endif
