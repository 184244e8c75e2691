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

static atomic_uint_least64_t nslow;	/* looks too slow to tell */

/* No proof whose SINCE is before T may stand (wallclock_stepped_after). */
static void
stepped_at(uint64_t t)
{
	uint64_t was = atomic_load(&stepped);

	while (was < t && !atomic_compare_exchange_weak(&stepped, &was, t))
		;
}

/*
 * WALL was read between monotonic times MONO - ERR and MONO + ERR: the
 * offset is known within ERR.  A step is seen unless the offset certainly
 * moved by WALLCLOCK_STEP_NS at most.
 *
 * A look too slow to tell (ERR over WALLCLOCK_LOOK_ERR_NS: every try of
 * wallclock_look preempted between its reads, the first look too) gives
 * a pair no proof may stand on, nor any proof whose SINCE came before it:
 * the step time goes past its MONO.  It neither moves the offset compared
 * with nor drops the cache and the pins: if the clock did step, the next
 * look sees it.
 */
static void
look_at(int64_t wall, uint64_t mono, uint64_t err)
{
	int64_t	 off = wall - (int64_t)mono, ref, d, ad;

	if (err > WALLCLOCK_LOOK_ERR_NS) {
		stepped_at(mono + 1);
		if (atomic_fetch_add(&nslow, 1) == 0)
			log_warnx("a look at the clocks took %llu us (the thread preempted "
			    "between its reads): no build-id is proven by time on it (cause "
			    "\"clock\"); such looks are counted (status: clock_looks_slow)",
			    (unsigned long long)(2 * err / 1000));
		return;
	}
	for (;;) {
		ref = atomic_load(&ref_off);
		if (ref == NO_REF) {
			/* the first look: the offset to compare with */
			if (atomic_compare_exchange_strong(&ref_off, &ref, off))
				return;
			continue;
		}
		d = off - ref;
		ad = d < 0 ? -d : d;
		if (ad + (int64_t)err <= WALLCLOCK_STEP_NS)
			return;
		/*
		 * The time of the step before the new offset: a look that finds
		 * the new offset must find the step too.
		 */
		stepped_at(mono);
		if (atomic_compare_exchange_strong(&ref_off, &ref, off))
			break;
	}
	atomic_fetch_add(&nsteps, 1);
	log_warnx("the wall clock stepped by %+lld ms: build-ids of mappings made before "
	    "are not proven by time (cause \"clock\"), the cache of reads and the pins are "
	    "dropped", (long long)(d / 1000000));
}

void
wallclock_look_at_err(int64_t wall, uint64_t mono, uint64_t err)
{
	look_at(wall, mono, err);
}

void
wallclock_look_at(int64_t wall, uint64_t mono)
{
	look_at(wall, mono, 0);
}

/*
 * The wall clock read between two reads of the monotonic one, the
 * tightest of WALLCLOCK_LOOK_TRIES tries: a thread preempted between the
 * two reads of a plain pair made the offset look moved by the time it
 * waited (20 ms on a busy machine of two CPUs), a step that never was, and
 * thousands of a burst's build-ids "clock".
 */
int64_t
wallclock_look(uint64_t *mono)
{
	struct timespec m1, w, m2;
	int64_t	 best_w = 0;
	uint64_t best_m = 0, best_err = UINT64_MAX, a, b;

	for (int i = 0; i < WALLCLOCK_LOOK_TRIES && best_err > WALLCLOCK_LOOK_ERR_NS; i++) {
		clock_gettime(CLOCK_MONOTONIC, &m1);
		clock_gettime(CLOCK_REALTIME, &w);
		clock_gettime(CLOCK_MONOTONIC, &m2);
		a = (uint64_t)ts_ns(&m1);
		b = (uint64_t)ts_ns(&m2);
		if ((b - a + 1) / 2 < best_err) {
			best_err = (b - a + 1) / 2;
			best_m = a + (b - a) / 2;
			best_w = ts_ns(&w);
		}
	}
	look_at(best_w, best_m, best_err);
	if (mono != NULL)
		*mono = best_m;
	return best_w;
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

uint64_t
wallclock_slow_looks(void)
{
	return atomic_load(&nslow);
}
