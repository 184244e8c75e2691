/*
 * priority.h - the daemon's worker threads yield to its loop.
 *
 * The loop alone empties the kernel's side-band rings; the build-id
 * readers and the capture worker do work that can wait.  Under a burst of
 * mappings of new files (60 programs starting with 100 fresh libraries
 * each: 6,000 mappings in some 40 ms, each proven by a read of its own)
 * the readers took three quarters of the daemon's CPU at the loop's
 * priority, and the default 256 KiB side-band rings lost records in five
 * bursts of nine.  These workers run WORKER_NICE below the daemon's own
 * priority (a thread's nice value is its own on Linux): a third of a CPU's
 * share against the loop's.  Fewer bursts lost records so, not none: the
 * loop competes with the burst's 60 processes too; what made it none is
 * the rings' spill within a pass (sideband.c relieve_ring) and side-band
 * rings of half the sampling ring (events.c).  The threads that answer users
 * (queries, profiles) keep the daemon's priority: niced, a user's queries
 * on a busy host were answered late.
 */
#ifndef PERFMAPD_PRIORITY_H
#define PERFMAPD_PRIORITY_H

#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WORKER_NICE	5

/* The calling thread: WORKER_NICE below where it is (at most 19). */
static inline void
worker_yield_to_loop(void)
{
	id_t	 tid = (id_t)syscall(SYS_gettid);
	int	 n;

	errno = 0;
	if ((n = getpriority(PRIO_PROCESS, tid)) == -1 && errno != 0)
		return;
	(void)setpriority(PRIO_PROCESS, tid, n + WORKER_NICE > 19 ? 19 : n + WORKER_NICE);
}

#endif
