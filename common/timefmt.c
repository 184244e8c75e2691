/*
 * timefmt.c - see timefmt.h.
 */
#include <stdio.h>
#include <time.h>

#include "timefmt.h"

char *
timefmt_iso(uint64_t wall_ns, char *buf, size_t len)
{
	time_t	 t = (time_t)(wall_ns / 1000000000ULL);
	struct tm tm;
	char	 day[24];

	gmtime_r(&t, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03uZ", day, (unsigned)(wall_ns / 1000000ULL % 1000));
	return buf;
}

uint64_t
timefmt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
