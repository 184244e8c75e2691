/*
 * procscan.h - the model at start-up, from /proc (see procscan.c).
 */
#ifndef PERFMAPD_PROCSCAN_H
#define PERFMAPD_PROCSCAN_H

#include <stdint.h>

#include "buildid_reader.h"
#include "model.h"
#include "resolver.h"

/*
 * PID's mount and user namespaces from /proc (the kernel's files), into
 * the model: what the NAMESPACES records say of later ones; read through
 * its thread TID if not 0 (a leader that exited shows none).  0, or -1 if
 * PID is gone, or (BEFORE, CLOCK_MONOTONIC ns, not 0; TID 0) the process
 * under PID now started after BEFORE: not the one a record stamped then
 * was of.
 */
int	procscan_ns(struct model *, uint32_t pid, uint32_t tid, uint64_t before);

/*
 * Fill the model from /proc, the build-ids read through RES; the maps
 * left without one are counted in UNKNOWN by cause.  TICK (if not NULL)
 * is called with ARG between reads, often (the recorder keeps its rings
 * from overflowing meanwhile).  Returns the number of processes seen.
 */
int	procscan_run(struct model *, struct resolver *res, uint64_t unknown[BIDC_NCAUSES],
	    void (*tick)(void *), void *arg);

#endif
