/*
 * walltime.h - wall-clock time: now, dates as users type them, and the one
 * format perfmapd prints (UTC, milliseconds); and the monotonic clock, the
 * one every deadline and every record's time stamp is on.
 */
#ifndef PERFMAPD_WALLTIME_H
#define PERFMAPD_WALLTIME_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/*
 * A date as users type it, into wall-clock ns since the epoch:
 *   2026-11-22                    midnight, local time
 *   2026-11-22T13:04, 2026-11-22 13:04:19, 2026-11-22T13:04:19.250
 *   13:04, 13:04:19               the last time the clock showed it, at or
 *                                 before NOW_NS: today's, or yesterday's
 *                                 if today's is still to come
 *   ... followed by Z, +01:00, +0100 or -05 (else local time)
 *   @1795438459, @1795438459.5    unix seconds
 *   now, -10m, -90s, -2h, -1d, -1h30m   relative to NOW_NS
 * Returns 0, or -1 with ERR set ("bad time '...': ...").
 */
int	walltime_parse(const char *s, int64_t now_ns, int64_t *ns,
	    char *err, size_t errlen);
/*
 * The same, but a time of day alone is its first occurrence after
 * AFTER_NS: the end of a window that begins there (23:50 to 00:10).
 */
int	walltime_parse_after(const char *s, int64_t now_ns, int64_t after_ns,
	    int64_t *ns, char *err, size_t errlen);
/*
 * A window [*S, *U) from --since and --until (either NULL): UNTIL after
 * SINCE as walltime_parse_after reads it, now without UNTIL, LEN_NS before
 * *U without SINCE.  Returns 0, or -1 with ERR set (a bad time, one not
 * before the other, or an UNTIL of a time of day alone more than 12 hours
 * from now: "--since 10:40 --until 10:30" at 10:50).
 */
int	walltime_window(const char *since, const char *until, int64_t now_ns,
	    int64_t len_ns, int64_t *s, int64_t *u, char *err, size_t errlen);
/* "2026-11-22T13:04:19.123Z" (UTC, milliseconds); LEN >= 32. */
void	walltime_format(int64_t ns, char *buf, size_t len);
/* Wall clock now, ns. */
int64_t	walltime_now(void);
/* CLOCK_MONOTONIC now, ns: the events' clock (attr.clockid), and deadlines'. */
uint64_t mono_ns(void);
/* A timespec (a clock's, a file's times) in ns. */
static inline int64_t
ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

#endif
