/*
 * wallclock.c - the wall clock's steps (wallclock.h).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "log.h"
#include "wallclock.h"
#include "walltime.h"

#define NO_REF	INT64_MIN

static atomic_int_least64_t ref_off = NO_REF;	/* the offset of the last step seen */
static atomic_uint_least64_t stepped;	/* the monotonic time of the last look that saw one */
static atomic_uint_least64_t nsteps;

void
wallclock_look_at(int64_t wall, uint64_t mono)
{
	int64_t	 off = wall - (int64_t)mono, ref, d;
	uint64_t was;

	for (;;) {
		ref = atomic_load(&ref_off);
		if (ref == NO_REF) {
			/* the first look: the offset to compare with */
			if (atomic_compare_exchange_strong(&ref_off, &ref, off))
				return;
			continue;
		}
		d = off - ref;
		if (d <= WALLCLOCK_STEP_NS && d >= -WALLCLOCK_STEP_NS)
			return;
		/*
		 * The time of the step before the new offset: a look that finds
		 * the new offset must find the step too.
		 */
		was = atomic_load(&stepped);
		while (was < mono && !atomic_compare_exchange_weak(&stepped, &was, mono))
			;
		if (atomic_compare_exchange_strong(&ref_off, &ref, off))
			break;
	}
	atomic_fetch_add(&nsteps, 1);
	log_warnx("the wall clock stepped by %+lld ms: build-ids of mappings made before "
	    "are not proven by time (cause \"clock\"), the cache of reads and the pins are "
	    "dropped", (long long)(d / 1000000));
}

int64_t
wallclock_look(uint64_t *mono)
{
	struct timespec w, m;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &w);
	wallclock_look_at(ts_ns(&w), (uint64_t)ts_ns(&m));
	if (mono != NULL)
		*mono = (uint64_t)ts_ns(&m);
	return ts_ns(&w);
}

int64_t
wallclock_offset(void)
{
	return atomic_load(&ref_off);
}

int
wallclock_stepped_after(uint64_t since)
{
	return atomic_load(&stepped) > since;
}

uint64_t
wallclock_steps(void)
{
	return atomic_load(&nsteps);
}
