/*
 * timefmt.h - wall-clock times as people read them: ISO 8601 UTC with
 * milliseconds ("2026-11-22T13:04:19.768Z"), used in replies and tables.
 */
#ifndef PERFMAPD_TIMEFMT_H
#define PERFMAPD_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

#define TIMEFMT_LEN	32

char	*timefmt_iso(uint64_t wall_ns, char *buf, size_t len);
uint64_t timefmt_now_ns(void);		/* CLOCK_REALTIME */

#endif
