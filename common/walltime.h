/*
 * walltime.h - wall-clock time: now, dates as users type them, and the one
 * format perfmapd prints (UTC, milliseconds).
 */
#ifndef PERFMAPD_WALLTIME_H
#define PERFMAPD_WALLTIME_H

#include <stddef.h>
#include <stdint.h>

/*
 * A date as users type it, into wall-clock ns since the epoch:
 *   2026-11-22                    midnight, local time
 *   2026-11-22T13:04, 2026-11-22 13:04:19, 2026-11-22T13:04:19.250
 *   ... followed by Z, +01:00, +0100 or -05 (else local time)
 *   @1795438459, @1795438459.5    unix seconds
 *   now, -10m, -90s, -2h, -1d, -1h30m   relative to NOW_NS
 * Returns 0, or -1 with ERR set ("bad time '...': ...").
 */
int	walltime_parse(const char *s, int64_t now_ns, int64_t *ns,
	    char *err, size_t errlen);
/* "2026-11-22T13:04:19.123Z" (UTC, milliseconds); LEN >= 32. */
void	walltime_format(int64_t ns, char *buf, size_t len);
/* Wall clock now, ns. */
int64_t	walltime_now(void);

#endif
