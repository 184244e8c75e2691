/*
 * synth.h - the state a segment starts with: kernel and module maps, and
 * COMM + MMAP2 records for every live process, from the model.  The model
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

struct synth_stats {
	uint64_t	 procs, threads, maps;
};

/*
 * Write the synthesized state into SEG: kernel + module MMAPs, then COMM
 * and MMAP2 records per process, then FINISHED_INIT and FINISHED_ROUND.
 * Records carry TIME and ID (the first event's id) in their sample_id.
 * Every binary written goes into the segment's build-id table (the kernel,
 * the modules and the vDSO too) and is published as "seen" at WALL_NS
 * through NOTIFY (BINS resolves the model's binary ids).
 */
struct synth_args {
	const struct record_layout *layout;
	uint64_t	 id;		/* the sample id records carry */
	uint64_t	 time;		/* their time stamp: the segment's start */
	uint64_t	 wall_ns;	/* the same, on the wall clock */
	struct binaries	*bins;
	const struct notify *notify;
};
int	synth_write(struct segment *, struct model *, const struct kinfo *,
	    const struct synth_args *, struct synth_stats *);

#endif
