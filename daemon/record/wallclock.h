/*
 * wallclock.h - the wall clock as the build-id proofs use it, and its steps.
 *
 * A file's ctime comes from the wall clock (CLOCK_REALTIME, coarse), a
 * mapping's time from the records' clock (CLOCK_MONOTONIC).  Rule 2 of
 * buildid_reader.h compares the two through their offset, and the cache and
 * the pins tell a file's states apart by their timestamps.  Both hold only
 * while the wall clock runs on.  Set back, it gives a change made after a
 * mapping a ctime from before it, and a rewrite the very timestamps of a
 * state remembered before the step.  Set forward, it moves a mapping's wall
 * time past changes that followed it.  Slewing (adjtime, NTP's frequency)
 * runs both clocks alike and leaves their offset as it was; a step moves it:
 * settimeofday or clock_settime (date -s, an NTP client's step at boot, a
 * virtual machine's clock set after a resume), adjtimex's ADJ_SETOFFSET,
 * a leap second (one second back).  A segment's wall clock, taken at its
 * start, is then off by the step for the rest of the segment.
 *
 * So every look at the two clocks (wallclock_look) compares their offset
 * with the offset of the last step seen (or of the first look).  A move by
 * more than WALLCLOCK_STEP_NS, one step or small ones that added up, is a
 * step, seen at the monotonic time of that look.  A look knows the offset
 * within half the time between its reads (a thread may be preempted
 * there): one that knows it within WALLCLOCK_LOOK_ERR_NS is judged with
 * that error (a move that cannot be ruled out is a step); one that does
 * not is no proof's look (the step time goes past it), without moving
 * the offset compared with.
 *
 * A proof by time about a mapping stands only if no step was seen after
 * SINCE (the earlier of the mapping's monotonic time and of the look that
 * gave its wall time), by a look made after the proof's fstat.  Between
 * SINCE and that look the offset then moved by less than twice
 * WALLCLOCK_STEP_NS (and the reference look's error, 0.1 ms at most),
 * which with a coarse clock's tick (10 ms at most) fits in the ctime
 * margin of buildid_reader.c (20 ms).  The cache and the pins
 * made before a step are dropped: their states' timestamps may come again.
 *
 * Any thread may look; the state is a few atomics.  A step seen costs the
 * mappings in flight at that moment their build-ids (cause "clock").
 */
#ifndef PERFMAPD_WALLCLOCK_H
#define PERFMAPD_WALLCLOCK_H

#include <stdint.h>

#define WALLCLOCK_STEP_NS	(5LL * 1000 * 1000)
/*
 * A look reads the wall clock between two reads of the monotonic one, the
 * offset known within half their distance; it tries again (up to
 * WALLCLOCK_LOOK_TRIES reads) while that is over WALLCLOCK_LOOK_ERR_NS.
 */
#define WALLCLOCK_LOOK_TRIES	4
#define WALLCLOCK_LOOK_ERR_NS	(100LL * 1000)

/* Look at both clocks: the wall clock's ns now; *MONO (if not NULL) gets the monotonic. */
int64_t	 wallclock_look(uint64_t *mono);
/* The same for readings made elsewhere (tests): WALL and MONO in ns, read at the same instant. */
void	 wallclock_look_at(int64_t wall, uint64_t mono);
/* ... WALL read between MONO - ERR and MONO + ERR (tests). */
void	 wallclock_look_at_err(int64_t wall, uint64_t mono, uint64_t err);
/* CLOCK_REALTIME - CLOCK_MONOTONIC at the last step seen (or the first look), ns; INT64_MIN before any. */
int64_t	 wallclock_offset(void);
/* Was a step seen after the monotonic time SINCE?  (No look: the last one's word.) */
int	 wallclock_stepped_after(uint64_t since);
/* How many steps were seen: the cache and the pins of another count are dropped. */
uint64_t wallclock_steps(void);
/* How many looks were too slow to tell (each no proof's look). */
uint64_t wallclock_slow_looks(void);

#endif
