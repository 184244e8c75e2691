/*
 * check_index.c - the index without a daemon: the writer (daemon/index.c)
 * and the queries (common/index_reader.c) on temporary state directories.
 *
 *   - dates as users type them, and the ISO output;
 *   - a path replaced by a rebuilt binary: history, lookup at a time in
 *     each range, buildid naming its segments, per-segment lists;
 *   - repeat sightings are memory updates (counts), rows survive a reopen;
 *   - migrations from versions 1, 3 and 4; an index from a newer version
 *     refused;
 *   - a corrupt or truncated index.db moved aside and rebuilt from the
 *     segment files (MMAP2 records, build-id tables, CLOCK_DATA), with the
 *     last-seen times the live index has (exits, forks, execs);
 *   - reconciliation: segments open at a crash, deleted, never indexed;
 *   - module sections from a fake sysfs, an empty /proc/modules;
 *   - unresolved mappings, retention, read-only use of a copied state dir.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/stat.h>

#include <check.h>
#include <event2/event.h>

#include "check_main.h"
#include "check_oom.h"
#include <sqlite3.h>

#include "buildid.h"
#include "config.h"
#include "index/index.h"
#include "index/index_int.h"
#include "index_reader.h"
#include "walltime.h"
#include "log.h"
#include "record.h"
#include "record/buildid_reader.h"
#include "record/binaries.h"
#include "record/notify.h"
#include "record/segment.h"

#define ST	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
#define SEC	1000000000LL
#define T0	(1795000000LL * SEC)		/* 2026-11-18T... UTC */

/* The event is opened with attr.build_id: its MMAP2 records may be in the build-id form. */
static const struct record_layout LAYOUT = { .sample_type = ST, .sample_id_all = 1, .build_id = 1 };
static const uint64_t IDS[1] = { 77 };
static char	 tmpdir[64], state[128];
static struct config conf;

static void
setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_index.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(state, sizeof(state), "%s/state", tmpdir);
	ck_assert_int_eq(mkdir(state, 0750), 0);
	snprintf(state + strlen(state), sizeof(state) - strlen(state), "/segments");
	ck_assert_int_eq(mkdir(state, 0750), 0);
	snprintf(state, sizeof(state), "%s/state", tmpdir);
	config_defaults(&conf);
	log_init("check_index", 0);
}

static void
teardown(void)
{
	char	 cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (getenv("CHECK_INDEX_KEEP") == NULL && system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
}

static void
bid(uint8_t id[20], int n)
{
	int	 i;

	for (i = 0; i < 20; i++)
		id[i] = (uint8_t)(n * 31 + i);
}

static void
bidhex(char *hex, int n)
{
	uint8_t	 id[20];

	bid(id, n);
	buildid_to_hex(id, 20, hex);
}

static struct index *
open_ix(void)
{
	struct index *ix;
	char	 err[512];

	ck_assert_msg(index_open(&ix, state, &conf, NULL, err, sizeof(err)) == 0, "%s", err);
	return ix;
}

static struct index_reader *
open_q(void)
{
	struct index_reader *q;
	char	 err[512];

	q = index_reader_open(state, err, sizeof(err));
	ck_assert_msg(q != NULL, "%s", err);
	return q;
}

/* OUT is read after the query ran (arguments are evaluated in any order). */
static json_t *
query(int rc, json_t **out, const char *err)
{
	ck_assert_msg(rc == 0, "query failed (%d): %s", rc, err);
	ck_assert_ptr_nonnull(*out);
	return *out;
}

static int64_t
jint(json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	ck_assert_msg(json_is_integer(v), "no integer %s", key);
	return json_integer_value(v);
}

static const char *
jstr(json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	ck_assert_msg(json_is_string(v), "no string %s", key);
	return json_string_value(v);
}

/* ---------------------------------------------------------------- dates */

static int64_t
parse(const char *s)
{
	char	 err[256];
	int64_t	 t;

	ck_assert_msg(walltime_parse(s, T0, &t, err, sizeof(err)) == 0, "%s: %s", s, err);
	return t;
}

static void
parse_bad(const char *s)
{
	char	 err[256];
	int64_t	 t;

	ck_assert_msg(walltime_parse(s, T0, &t, err, sizeof(err)) == -1,
	    "%s accepted", s);
	ck_assert_msg(strstr(err, "bad time") != NULL, "%s: message '%s'", s, err);
}

/* S refused at NOW with a message that holds WHY. */
static void
parse_refused(const char *s, int64_t now, const char *why)
{
	char	 err[256];
	int64_t	 t = 0;

	ck_assert_msg(walltime_parse(s, now, &t, err, sizeof(err)) == -1,
	    "%s accepted as %lld", s, (long long)t);
	ck_assert_msg(strstr(err, why) != NULL, "%s: message '%s'", s, err);
}

START_TEST(test_time_parse)
{
	setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	tzset();
	/* 2026-11-22T13:04:19Z = 1795352659 */
	ck_assert_int_eq(parse("2026-11-22T13:04:19Z"), 1795352659LL * SEC);
	ck_assert_int_eq(parse("2026-11-22 13:04:19z"), 1795352659LL * SEC);
	ck_assert_int_eq(parse("2026-11-22T14:04:19+01:00"), 1795352659LL * SEC);
	ck_assert_int_eq(parse("2026-11-22T14:04:19+0100"), 1795352659LL * SEC);
	ck_assert_int_eq(parse("2026-11-22T08:04:19-05"), 1795352659LL * SEC);
	ck_assert_int_eq(parse("2026-11-22T13:04Z"), 1795352640LL * SEC);
	ck_assert_int_eq(parse("2026-11-22T13:04:19.250Z"), 1795352659LL * SEC + 250000000);
	ck_assert_int_eq(parse("2026-11-22Z"), 1795305600LL * SEC);
	/* Local time: CET in November is UTC+1. */
	ck_assert_int_eq(parse("2026-11-22 14:04:19"), 1795352659LL * SEC);
	ck_assert_int_eq(parse("2026-11-22T14:04"), 1795352640LL * SEC);
	ck_assert_int_eq(parse("2026-11-22"), (1795305600LL - 3600) * SEC);
	/* Summer time: CEST, UTC+2. */
	ck_assert_int_eq(parse("2026-07-01 02:00"), parse("2026-07-01T00:00Z"));
	ck_assert_int_eq(parse("@1795352659"), 1795352659LL * SEC);
	ck_assert_int_eq(parse("@1795352659.5"), 1795352659LL * SEC + 500000000);
	ck_assert_int_eq(parse("now"), T0);
	ck_assert_int_eq(parse("-10m"), T0 - 600 * SEC);
	ck_assert_int_eq(parse("-1h30m"), T0 - 5400 * SEC);
	ck_assert_int_eq(parse("-2d"), T0 - 2 * 86400 * SEC);
	ck_assert_int_eq(parse("-500ms"), T0 - 500000000);
	ck_assert_int_eq(parse("+90s"), T0 + 90 * SEC);
	parse_bad("");
	parse_bad("yesterday");
	parse_bad("2026-13-01");
	parse_bad("2026-02-30");
	parse_bad("2026-11-22T25:00");
	parse_bad("2026-11-22T13:04:19 junk");
	parse_bad("2026-11-22T13:04+1:00");
	parse_bad("-10");
	parse_bad("-10y");
	parse_bad("-");
	parse_bad("@");
	parse_bad("@12x");
	parse_bad("-99999999999999999999d");
	/* past int64_t nanoseconds: a date of 2300 wrapped to a negative time */
	parse_bad("2300-01-01");
	parse_bad("9999-12-31T23:59Z");
	ck_assert_int_eq(parse("2262-04-10Z"), 9223200000LL * SEC);

	/*
	 * The clock changes of CET: on 2026-03-29 02:00 becomes 03:00 (02:30
	 * names no instant), on 2026-10-25 03:00 becomes 02:00 again (02:30
	 * names two, an hour apart).  Neither is guessed; an offset makes
	 * either exact, and the times around them are as before.
	 */
	parse_refused("2026-03-29 02:30", T0, "no such local time");
	parse_refused("2026-03-29T02:00", T0, "no such local time");
	ck_assert_int_eq(parse("2026-03-29 01:59"), parse("2026-03-29T00:59Z"));
	ck_assert_int_eq(parse("2026-03-29 03:00"), parse("2026-03-29T01:00Z"));
	parse_refused("2026-10-25 02:30", T0, "comes twice, at +02:00 and at +01:00");
	parse_refused("2026-10-25T02:00:00", T0, "2026-10-25T02:00+02:00");
	ck_assert_int_eq(parse("2026-10-25T02:30+02:00"), parse("2026-10-25T00:30Z"));
	ck_assert_int_eq(parse("2026-10-25T02:30+01:00"), parse("2026-10-25T01:30Z"));
	ck_assert_int_eq(parse("2026-10-25 01:59"), parse("2026-10-24T23:59Z"));
	ck_assert_int_eq(parse("2026-10-25 03:00"), parse("2026-10-25T02:00Z"));
	/* A time of day alone that has come today is today's: on the day of the change, the same. */
	parse_refused("02:30", parse("2026-10-25T12:00Z"), "comes twice");
	parse_refused("02:30", parse("2026-03-29T12:00Z"), "no such local time");
	/* ... and one still to come today is yesterday's: the 25th's again, on the 26th. */
	parse_refused("02:30", parse("2026-10-26T01:00Z"), "comes twice");
	parse_refused("02:30", parse("2026-03-30T00:00Z"), "no such local time");
	/* A leap second is the minute's end, as before; its day must exist. */
	ck_assert_int_eq(parse("2026-06-30 23:59:60"), parse("2026-06-30T22:00Z"));
	ck_assert_int_eq(parse("2026-12-31T23:59:60Z"), parse("2027-01-01T00:00Z"));
	/* The epoch in CET, and the second before it: out of range, so said. */
	ck_assert_int_eq(parse("1970-01-01 01:00"), 0);
	parse_refused("1970-01-01 00:59:59", T0, "out of range");

	/*
	 * A change of the standard offset, no daylight-saving time on either
	 * side (tzdata: Volgograd went from +04 to +03 at 2020-12-27 02:00):
	 * 01:30 came twice, and is refused as well.
	 */
	ck_assert_msg(access("/usr/share/zoneinfo/Europe/Volgograd", R_OK) == 0,
	    "tzdata (priority required in Debian) has no Europe/Volgograd");
	setenv("TZ", "Europe/Volgograd", 1);
	tzset();
	parse_refused("2020-12-27 01:30", T0, "comes twice, at +04:00 and at +03:00");
	ck_assert_int_eq(parse("2020-12-27 00:59"), parse("2020-12-26T20:59Z"));
	ck_assert_int_eq(parse("2020-12-27 02:00"), parse("2020-12-26T23:00Z"));
	/*
	 * A date alone where the clocks skip its midnight (Havana: 00:00 CST
	 * is 01:00 CDT on 2026-03-08): the day starts where the skip ends.
	 * It was refused, "no such local time"; the time of day still is.
	 */
	ck_assert_msg(access("/usr/share/zoneinfo/America/Havana", R_OK) == 0,
	    "tzdata has no America/Havana");
	setenv("TZ", "America/Havana", 1);
	tzset();
	ck_assert_int_eq(parse("2026-03-08"), parse("2026-03-08T05:00Z"));
	ck_assert_int_eq(parse("2026-03-09"), parse("2026-03-09T04:00Z"));
	parse_refused("2026-03-08 00:30", T0, "no such local time");
	/* and where they repeat it (Amman, 2021-10-29: 00:00 EEST, then 00:00 EET) */
	setenv("TZ", "Asia/Amman", 1);
	tzset();
	ck_assert_int_eq(parse("2021-10-29"), parse("2021-10-28T21:00Z"));
	parse_refused("2021-10-29 00:30", T0, "comes twice");
	setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	tzset();
}
END_TEST

/* S as a time of day at NOW (walltime_parse), then as the end of a window from AFTER. */
static int64_t
tod(const char *s, int64_t now)
{
	char	 err[256];
	int64_t	 t;

	ck_assert_msg(walltime_parse(s, now, &t, err, sizeof(err)) == 0, "%s: %s", s, err);
	return t;
}

static int64_t
tod_after(const char *s, int64_t now, int64_t after)
{
	char	 err[256];
	int64_t	 t;

	ck_assert_msg(walltime_parse_after(s, now, after, &t, err, sizeof(err)) == 0, "%s: %s",
	    s, err);
	return t;
}

static void
window(const char *since, const char *until, int64_t now, int64_t *s, int64_t *u)
{
	char	 err[256];

	ck_assert_msg(walltime_window(since, until, now, 3600 * SEC, s, u, err,
	    sizeof(err)) == 0, "%s .. %s: %s", since, until, err);
}

/*
 * A time of day alone names its last occurrence, not today's: at 00:10,
 * "23:50" is yesterday's (today's is 23 h away, and nothing is recorded
 * yet).  A window's end is the first occurrence after its start.
 */
START_TEST(test_time_of_day)
{
	int64_t	 now, s, u;
	char	 err[256];

	setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	tzset();
	now = parse("2026-11-22T13:04:19Z");		/* 14:04:19 local */
	ck_assert_int_eq(tod("10:40", now), parse("2026-11-22T09:40Z"));
	ck_assert_int_eq(tod("14:04:19", now), now);	/* at now: today's */
	ck_assert_int_eq(tod("14:04:20", now), parse("2026-11-21T13:04:20Z"));
	ck_assert_int_eq(tod("23:50", now), parse("2026-11-21T22:50Z"));
	ck_assert_int_eq(tod("10:40Z", now), parse("2026-11-22T10:40Z"));
	ck_assert_int_eq(tod("13:10Z", now), parse("2026-11-21T13:10Z"));
	/* Just after midnight (00:10 local on the 23rd). */
	now = parse("2026-11-22T23:10Z");
	ck_assert_int_eq(tod("23:40", now), parse("2026-11-22T22:40Z"));
	ck_assert_int_eq(tod("00:05", now), parse("2026-11-22T23:05Z"));
	/* A month's and a year's end. */
	ck_assert_int_eq(tod("23:00", parse("2027-01-01T00:30+01:00")),
	    parse("2026-12-31T23:00+01:00"));
	ck_assert_int_eq(tod("23:00", parse("2026-03-01T00:30+01:00")),
	    parse("2026-02-28T23:00+01:00"));
	/*
	 * Today's is still to come, and today has no such time, or two:
	 * yesterday's, which has one (the day is chosen before its instant).
	 */
	ck_assert_int_eq(tod("02:30", parse("2026-03-29T00:30Z")), parse("2026-03-28T01:30Z"));
	ck_assert_int_eq(tod("02:30", parse("2026-10-24T23:30Z")), parse("2026-10-24T00:30Z"));
	/*
	 * Within the repeated hour, today's first 02:30 has come and its
	 * second not: today's, so refused (not yesterday's); the same for
	 * the first after a time between the two.
	 */
	parse_refused("02:30", parse("2026-10-25T01:15Z"), "comes twice");
	ck_assert_int_eq(walltime_parse_after("02:30", now, parse("2026-10-25T00:45Z"), &s, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "comes twice") != NULL, "message '%s'", err);
	/* Across a change of the clocks: yesterday's offset, not today's. */
	ck_assert_int_eq(tod("12:00", parse("2026-03-29T10:30Z")), parse("2026-03-29T10:00Z"));
	ck_assert_int_eq(tod("12:00", parse("2026-03-29T09:30Z")), parse("2026-03-28T11:00Z"));

	/* The end of a window. */
	now = parse("2026-11-22T13:04:19Z");
	ck_assert_int_eq(tod_after("10:55", now, parse("2026-11-22T09:40Z")),
	    parse("2026-11-22T09:55Z"));
	ck_assert_int_eq(tod_after("00:10", now, parse("2026-11-21T22:50Z")),
	    parse("2026-11-21T23:10Z"));
	ck_assert_int_eq(tod_after("10:40", now, parse("2026-11-22T09:40Z")),
	    parse("2026-11-23T09:40Z"));	/* after, not at */
	/* A date is a date, whatever the window. */
	ck_assert_int_eq(tod_after("2026-11-20 10:55", now, parse("2026-11-22T09:40Z")),
	    parse("2026-11-20T09:55Z"));

	/* Windows as perfmapctl profile reads them. */
	window("10:40", "10:55", now, &s, &u);		/* both past today */
	ck_assert_int_eq(s, parse("2026-11-22T09:40Z"));
	ck_assert_int_eq(u, parse("2026-11-22T09:55Z"));
	window("14:00", "14:15", now, &s, &u);		/* running now: to its end, not yesterday's */
	ck_assert_int_eq(s, parse("2026-11-22T13:00Z"));
	ck_assert_int_eq(u, parse("2026-11-22T13:15Z"));
	window("23:50", "00:10", parse("2026-11-22T23:30Z"), &s, &u);	/* 00:30: last night */
	ck_assert_int_eq(s, parse("2026-11-22T22:50Z"));
	ck_assert_int_eq(u, parse("2026-11-22T23:10Z"));
	window("2026-11-20 10:40", "10:55", now, &s, &u);	/* that day's 10:55 */
	ck_assert_int_eq(u, parse("2026-11-20T09:55Z"));
	window(NULL, "10:55", now, &s, &u);		/* an hour before it */
	ck_assert_int_eq(u, parse("2026-11-22T09:55Z"));
	ck_assert_int_eq(s, u - 3600 * SEC);
	window("-10m", NULL, now, &s, &u);		/* until now */
	ck_assert_int_eq(s, now - 600 * SEC);
	ck_assert_int_eq(u, now);
	/* an end most of a day ahead: a slip, refused */
	ck_assert_int_eq(walltime_window("10:40", "10:30", now, 3600 * SEC, &s, &u, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "from now") != NULL, "message '%s'", err);
	/* ... not a night that has passed, nor one still running, nor a long day */
	window("22:00", "09:00", parse("2026-11-23T08:00Z"), &s, &u);
	ck_assert_int_eq(s, parse("2026-11-22T21:00Z"));
	ck_assert_int_eq(u, parse("2026-11-23T08:00Z"));
	window("20:00", "09:00", parse("2026-11-23T07:00Z"), &s, &u);	/* at 08:00 */
	ck_assert_int_eq(u, parse("2026-11-23T08:00Z"));
	window("08:00", "21:00", parse("2026-11-23T09:00Z"), &s, &u);	/* at 10:00 */
	ck_assert_int_eq(u, parse("2026-11-23T20:00Z"));
	window("23:50", "00:10", parse("2026-11-22T22:55Z"), &s, &u);
	ck_assert_int_eq(u, parse("2026-11-22T23:10Z"));
	ck_assert_int_eq(walltime_window("-1m", "-2m", now, 3600 * SEC, &s, &u, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "is not before --until") != NULL, "message '%s'", err);
	ck_assert_int_eq(walltime_window("10:40", "10:61", now, 3600 * SEC, &s, &u, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "bad time '10:61'") != NULL, "message '%s'", err);

	/*
	 * A time of day with its zone is dated on that zone's date, not the
	 * host's: before, it began on the local date and could only move one
	 * way, a day (or two) off when the zone is far from the local one.
	 */
	setenv("TZ", "UTC0", 1);
	tzset();
	now = parse("2026-06-10T23:00Z");		/* 01:00 on the 11th at +02:00 */
	ck_assert_int_eq(tod("00:30+02:00", now), parse("2026-06-10T22:30Z"));
	ck_assert_int_eq(tod("01:30+02:00", now), parse("2026-06-09T23:30Z"));
	ck_assert_int_eq(tod("00:30+14:00", now), parse("2026-06-10T10:30Z"));
	setenv("TZ", "EST5EDT,M3.2.0,M11.1.0", 1);
	tzset();
	now = parse("2026-06-11T01:00Z");		/* 21:00 EDT on the 10th */
	ck_assert_int_eq(tod("00:30Z", now), parse("2026-06-11T00:30Z"));
	window("00:30Z", "00:45Z", now, &s, &u);	/* tonight's, not last night's */
	ck_assert_int_eq(s, parse("2026-06-11T00:30Z"));
	ck_assert_int_eq(u, parse("2026-06-11T00:45Z"));
	setenv("TZ", "JST-9", 1);
	tzset();
	now = parse("2026-06-10T23:00Z");		/* 08:00 on the 11th in Tokyo */
	window("22:00Z", "22:30Z", now, &s, &u);	/* an hour ago: not refused */
	ck_assert_int_eq(s, parse("2026-06-10T22:00Z"));
	ck_assert_int_eq(u, parse("2026-06-10T22:30Z"));
	ck_assert_int_eq(tod_after("22:30Z", now, parse("2026-06-10T22:00Z")),
	    parse("2026-06-10T22:30Z"));
}
END_TEST

START_TEST(test_time_format)
{
	char	 buf[40];

	walltime_format(1795352659LL * SEC + 123999999, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2026-11-22T13:04:19.123Z");
	walltime_format(0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1970-01-01T00:00:00.000Z");
	/* What we print parses back (to the millisecond). */
	ck_assert_int_eq(parse("2026-11-22T13:04:19.123Z"), 1795352659LL * SEC + 123000000);
}
END_TEST

/* ---------------------------------------------------------------- writer + queries */

static void
seg_name(char *buf, size_t len, uint64_t seq, int64_t wall)
{
	struct tm tm;
	time_t	 t = (time_t)(wall / SEC);
	char	 stamp[32];

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(buf, len, "perf-%06llu-%s.data", (unsigned long long)seq, stamp);
}

/* Sightings through the writer API: /usr/bin/app replaced between segment 1 and 2. */
static void
replace_scenario(struct index *ix)
{
	uint8_t	 a[20], b[20], libc[20];
	char	 name[128];

	bid(a, 1);
	bid(b, 2);
	bid(libc, 3);
	seg_name(name, sizeof(name), 1, T0);
	index_segment_open(ix, 1, name, T0);
	index_add_mapping(ix, "/usr/lib/libc.so.6", libc, 20, BID_USER, 1, T0, 1);
	index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 100, T0 + 1 * SEC, 0);
	index_add_mapping(ix, "/usr/lib/libc.so.6", libc, 20, BID_MMAP2, 100, T0 + 1 * SEC, 0);
	index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 101, T0 + 2 * SEC, 0);
	index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 101, T0 + 3 * SEC, 0);
	index_segment_close(ix, 1, T0 + 10 * SEC, 4096, 500, 0, 900);
	seg_name(name, sizeof(name), 2, T0 + 10 * SEC);
	index_segment_open(ix, 2, name, T0 + 10 * SEC);
	index_add_mapping(ix, "/usr/lib/libc.so.6", libc, 20, BID_USER, 1, T0 + 10 * SEC, 1);
	index_add_mapping(ix, "/usr/bin/app", b, 20, BID_MMAP2, 200, T0 + 12 * SEC, 0);
	index_add_mapping(ix, "/usr/bin/app", b, 20, BID_MMAP2, 200, T0 + 14 * SEC, 0);
	index_segment_close(ix, 2, T0 + 20 * SEC, 8192, 700, 3, 1200);
	ck_assert_int_eq(index_flush(ix), 0);
}

/* Rows pending in the loop thread (not handed to the writer). */
static uint64_t
pending(struct index *ix)
{
	struct index_stats s;

	index_get_stats(ix, &s);
	return s.pending;
}

/*
 * index_tick: news (a new object, an object's first sighting in a segment,
 * segment events) is handed over at commit_interval; sightings of objects
 * the file has (counts, last seen) wait for INDEX_COUNTS_LAG intervals, unless
 * news comes.  (Where the machine stalled longer than that between a
 * commit and a tick, the wait cannot be told and is not asserted.)
 */
START_TEST(test_commit_news)
{
	const uint64_t ms = 50;		/* commit_interval */
	struct index *ix;
	uint8_t	 a[20], b[20];
	uint64_t committed;

	conf.index_commit_ms = ms;
	ix = open_ix();
	bid(a, 1);
	bid(b, 2);
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	index_add_mapping(ix, "/usr/bin/a", a, 20, BID_MMAP2, 100, T0 + SEC, 0);
	ck_assert_uint_gt(pending(ix), 0);
	usleep((useconds_t)(ms + 10) * 1000);
	committed = mono_ns() / 1000000;
	index_tick(ix);
	ck_assert_uint_eq(pending(ix), 0);	/* a segment and a new object */

	/* Counts alone: kept. */
	index_add_mapping(ix, "/usr/bin/a", a, 20, BID_MMAP2, 100, T0 + 2 * SEC, 0);
	usleep((useconds_t)(2 * ms) * 1000);
	index_tick(ix);
	if (mono_ns() / 1000000 - committed < (INDEX_COUNTS_LAG - 1) * ms)
		ck_assert_uint_eq(pending(ix), 1);
	/* A new object: handed over, the counts with it. */
	index_add_mapping(ix, "/usr/bin/b", b, 20, BID_MMAP2, 100, T0 + 3 * SEC, 0);
	committed = mono_ns() / 1000000;
	index_tick(ix);
	ck_assert_uint_eq(pending(ix), 0);

	/* Counts alone, until INDEX_COUNTS_LAG intervals have passed. */
	index_add_mapping(ix, "/usr/bin/b", b, 20, BID_MMAP2, 100, T0 + 4 * SEC, 0);
	usleep((useconds_t)(ms + 10) * 1000);
	index_tick(ix);
	if (mono_ns() / 1000000 - committed < (INDEX_COUNTS_LAG - 1) * ms)
		ck_assert_uint_eq(pending(ix), 1);
	usleep((useconds_t)(INDEX_COUNTS_LAG * ms) * 1000);
	index_tick(ix);
	ck_assert_uint_eq(pending(ix), 0);

	/* The first sighting of a known object in a new segment is news. */
	index_segment_close(ix, 1, T0 + 10 * SEC, 4096, 10, 0, 12);
	index_segment_open(ix, 2, "perf-000002-20261118T110650Z.data", T0 + 10 * SEC);
	committed = mono_ns() / 1000000;
	index_commit(ix);
	index_add_mapping(ix, "/usr/bin/a", a, 20, BID_MMAP2, 100, T0 + 11 * SEC, 0);
	usleep((useconds_t)(ms + 10) * 1000);
	index_tick(ix);
	ck_assert_uint_eq(pending(ix), 0);
	ck_assert_int_eq(index_flush(ix), 0);
	index_close(ix);
}
END_TEST

/* A sighting of A at T, and a query's hand-over within the gap: promised, the one after LAST. */
static uint64_t
promised(struct index *ix, const uint8_t *a, uint64_t t, uint64_t last)
{
	uint64_t seq;

	index_add_mapping(ix, "/usr/bin/a", a, 20, BID_MMAP2, 100, t, 0);
	seq = index_handoff(ix);
	ck_assert_uint_eq(seq, last + 1);
	ck_assert_uint_gt(pending(ix), 0);
	return seq;
}

/*
 * Queries hand the pending rows over at most every INDEX_HANDOFF_GAP_MS:
 * one within the gap is promised the hand-over the loop's timer makes at
 * the gap's end, or index_settle makes at a stop (the loop gone, nothing
 * else would, and a query thread waiting for it held the stop for good).
 */
START_TEST(test_handoff)
{
	struct event_base *base;
	struct index *ix;
	uint8_t	 a[20];
	uint64_t s1, s2, s3;

	ck_assert_ptr_nonnull(base = event_base_new());
	ix = open_ix();
	ck_assert_int_eq(index_attach(ix, base), 0);
	bid(a, 1);
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	usleep((INDEX_HANDOFF_GAP_MS + 10) * 1000);
	index_add_mapping(ix, "/usr/bin/a", a, 20, BID_MMAP2, 100, T0 + SEC, 0);
	s1 = index_handoff(ix);			/* past the gap: at once */
	ck_assert_uint_eq(pending(ix), 0);
	index_wait(ix, s1);

	/* Within the gap: promised, the same to a second query, then kept by the timer. */
	s2 = promised(ix, a, T0 + 2 * SEC, s1);
	ck_assert_uint_eq(index_handoff(ix), s2);
	ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);
	ck_assert_uint_eq(pending(ix), 0);
	index_wait(ix, s2);

	/* Promised, and the loop stops: index_settle keeps it. */
	s3 = promised(ix, a, T0 + 3 * SEC, s2);
	index_settle(ix);
	ck_assert_uint_eq(pending(ix), 0);
	index_wait(ix, s3);
	index_close(ix);
	event_base_free(base);
}
END_TEST

START_TEST(test_replace)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	struct index_stats s;
	json_t	*o, *arr, *x;
	char	 err[512], ha[64], hb[64], prefix[16];
	int	 rc;

	replace_scenario(ix);
	index_get_stats(ix, &s);
	ck_assert_uint_eq(s.objects, 3);
	ck_assert_uint_eq(s.sightings, 8);
	ck_assert_uint_eq(s.pending, 0);
	ck_assert_uint_eq(s.errors, 0);
	q = open_q();
	bidhex(ha, 1);
	bidhex(hb, 2);

	/* history: both, ordered, not overlapping. */
	o = query(index_reader_history(q, "/usr/bin/app", &o, err, sizeof(err)), &o, err);
	arr = json_object_get(o, "objects");
	ck_assert_uint_eq(json_array_size(arr), 2);
	x = json_array_get(arr, 0);
	ck_assert_str_eq(jstr(x, "build_id"), ha);
	ck_assert_int_eq(jint(x, "first_seen_ns"), T0 + 1 * SEC);
	ck_assert_int_eq(jint(x, "last_seen_ns"), T0 + 3 * SEC);
	ck_assert_int_eq(jint(x, "nr_maps"), 3);
	ck_assert_int_eq(jint(x, "nr_procs"), 2);
	ck_assert_int_eq(jint(x, "segments"), 1);
	ck_assert_str_eq(jstr(x, "source"), "mmap2");
	ck_assert_str_eq(jstr(x, "kind"), "user");
	ck_assert_str_eq(jstr(x, "first_seen"), "2026-11-18T11:06:41.000Z");
	x = json_array_get(arr, 1);
	ck_assert_str_eq(jstr(x, "build_id"), hb);
	ck_assert_int_eq(jint(x, "first_seen_ns"), T0 + 12 * SEC);
	ck_assert_int_eq(jint(x, "last_seen_ns"), T0 + 14 * SEC);
	json_decref(o);

	/* lookup at a time in each range, between them, before, after. */
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 2 * SEC, &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(json_object_get(o, "current"), "build_id"), ha);
	ck_assert(json_is_true(json_object_get(json_object_get(o, "current"), "mapped")));
	ck_assert_uint_eq(json_array_size(json_object_get(o, "mapped")), 1);
	json_decref(o);
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 8 * SEC, &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(json_object_get(o, "current"), "build_id"), ha);
	ck_assert(json_is_false(json_object_get(json_object_get(o, "current"), "mapped")));
	json_decref(o);
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 13 * SEC, &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(json_object_get(o, "current"), "build_id"), hb);
	ck_assert_int_eq(jint(o, "at_ns"), T0 + 13 * SEC);
	json_decref(o);
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 100 * SEC, &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(json_object_get(o, "current"), "build_id"), hb);
	json_decref(o);
	o = NULL;
	rc = index_reader_lookup(q, "/usr/bin/app", T0, &o, err, sizeof(err));
	ck_assert_int_eq(rc, -ENOENT);
	ck_assert_ptr_null(o);
	ck_assert_int_eq(index_reader_lookup(q, "/nope", T0 + 5 * SEC, &o, err, sizeof(err)), -ENOENT);
	ck_assert_int_eq(index_reader_history(q, "/nope", &o, err, sizeof(err)), -ENOENT);

	/* buildid of the old one: its segment, its path; by prefix too. */
	memcpy(prefix, ha, 10);
	prefix[10] = '\0';
	o = query(index_reader_buildid(q, prefix, &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(o, "build_id"), ha);
	arr = json_object_get(o, "segments");
	ck_assert_uint_eq(json_array_size(arr), 1);
	ck_assert_int_eq(jint(json_array_get(arr, 0), "seq"), 1);
	ck_assert_str_eq(jstr(json_array_get(arr, 0), "state"), "closed");
	ck_assert_str_eq(jstr(json_array_get(arr, 0), "path_seen"), "/usr/bin/app");
	ck_assert_int_eq(jint(json_array_get(arr, 0), "nr_maps"), 3);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 1);
	ck_assert(json_is_null(json_object_get(o, "cached")));
	json_decref(o);
	/* libc: in both segments (the second only from the initial state). */
	bidhex(ha, 3);
	o = query(index_reader_buildid(q, ha, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "segments")), 2);
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "objects"), 0), "nr_maps"), 1);
	json_decref(o);
	ck_assert_int_eq(index_reader_buildid(q, "00000000", &o, err, sizeof(err)), -ENOENT);
	ck_assert_int_eq(index_reader_buildid(q, "xyz", &o, err, sizeof(err)), -1);
	ck_assert_int_eq(index_reader_buildid(q, "abcd", &o, err, sizeof(err)), -1);

	/* segments and per-segment lists */
	o = query(index_reader_segments(q, 0, &o, err, sizeof(err)), &o, err);
	arr = json_object_get(o, "segments");
	ck_assert_uint_eq(json_array_size(arr), 2);
	x = json_array_get(arr, 1);
	ck_assert_int_eq(jint(x, "seq"), 2);
	ck_assert_int_eq(jint(x, "start_ns"), T0 + 10 * SEC);
	ck_assert_int_eq(jint(x, "end_ns"), T0 + 20 * SEC);
	ck_assert_int_eq(jint(x, "size"), 8192);
	ck_assert_int_eq(jint(x, "samples"), 700);
	ck_assert_int_eq(jint(x, "lost"), 3);
	ck_assert_int_eq(jint(x, "objects"), 2);
	ck_assert_ptr_nonnull(strstr(jstr(x, "path"), "/segments/perf-000002-"));
	{
		/* a profile's list: the same segments, no counts (no read of every row) */
		json_t	*nc = query(index_reader_segments(q, INDEX_SEGS_NO_COUNTS, &nc, err,
		    sizeof(err)), &nc, err), *y;

		ck_assert_uint_eq(json_array_size(json_object_get(nc, "segments")), 2);
		y = json_array_get(json_object_get(nc, "segments"), 1);
		ck_assert_int_eq(jint(y, "seq"), 2);
		ck_assert_int_eq(jint(y, "end_ns"), T0 + 20 * SEC);
		ck_assert_ptr_null(json_object_get(y, "objects"));
		json_decref(nc);
	}
	json_decref(o);
	o = query(index_reader_segment_buildids(q, "2", &o, err, sizeof(err)), &o, err);
	arr = json_object_get(o, "objects");
	ck_assert_uint_eq(json_array_size(arr), 2);
	ck_assert_str_eq(jstr(json_array_get(arr, 0), "path"), "/usr/bin/app");
	ck_assert_str_eq(jstr(json_array_get(arr, 0), "build_id"), hb);
	ck_assert_int_eq(jint(json_array_get(arr, 0), "nr_maps_in_segment"), 2);
	ck_assert_int_eq(jint(json_array_get(arr, 1), "nr_maps_in_segment"), 0);
	json_decref(o);
	ck_assert_int_eq(index_reader_segment_buildids(q, "9", &o, err, sizeof(err)), -ENOENT);
	index_reader_close(q);
	index_close(ix);
}
END_TEST

/*
 * A rollback: v1, then v2, then v1 again (a downgrade, an A/B switch).
 * One row per version holds its first and last sightings: "current" is
 * the version seen last at or before the time, not the one first seen
 * last (which named v2 for ever after the rollback).
 */
START_TEST(test_rollback)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	json_t	*o, *cur;
	char	 err[512], h1[64], h2[64], name[128];
	uint8_t	 v1[20], v2[20];

	bid(v1, 11);
	bid(v2, 12);
	bidhex(h1, 11);
	bidhex(h2, 12);
	seg_name(name, sizeof(name), 1, T0);
	index_segment_open(ix, 1, name, T0);
	index_add_mapping(ix, "/usr/bin/app", v1, 20, BID_MMAP2, 100, T0 + 1 * SEC, 0);
	index_add_mapping(ix, "/usr/bin/app", v1, 20, BID_MMAP2, 100, T0 + 3 * SEC, 0);
	index_add_mapping(ix, "/usr/bin/app", v2, 20, BID_MMAP2, 200, T0 + 12 * SEC, 0);
	index_add_mapping(ix, "/usr/bin/app", v2, 20, BID_MMAP2, 200, T0 + 14 * SEC, 0);
	index_add_mapping(ix, "/usr/bin/app", v1, 20, BID_MMAP2, 300, T0 + 21 * SEC, 0);
	index_add_mapping(ix, "/usr/bin/app", v1, 20, BID_MMAP2, 300, T0 + 23 * SEC, 0);
	index_segment_close(ix, 1, T0 + 30 * SEC, 4096, 500, 0, 900);
	ck_assert_int_eq(index_flush(ix), 0);
	q = open_q();
	/* during v2's time: v2 */
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 13 * SEC, &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(json_object_get(o, "current"), "build_id"), h2);
	json_decref(o);
	/* after the rollback, mapped and after its last sighting: v1 */
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 22 * SEC, &o, err, sizeof(err)), &o, err);
	cur = json_object_get(o, "current");
	ck_assert_str_eq(jstr(cur, "build_id"), h1);
	ck_assert(json_is_true(json_object_get(cur, "mapped")));
	json_decref(o);
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 40 * SEC, &o, err, sizeof(err)), &o, err);
	cur = json_object_get(o, "current");
	ck_assert_str_eq(jstr(cur, "build_id"), h1);
	ck_assert(json_is_false(json_object_get(cur, "mapped")));
	json_decref(o);
	/* before v2: v1 */
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 5 * SEC, &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(json_object_get(o, "current"), "build_id"), h1);
	json_decref(o);
	index_reader_close(q);
	index_close(ix);
}
END_TEST

/*
 * A version's row spans its first and last sightings, but it need not
 * have been mapped all along: v2 (B) mapped in segment 1 only, v1 (A) in
 * segment 2, nothing in segment 3, B again in segment 4.  Every segment
 * begins with what is mapped then, so a version a segment does not show
 * at or before the time was not mapped then: at segment 3's time nothing
 * was (the version seen last is A, not B, whose row spans 1 to 4), and
 * at segment 2's time only A (not B beside it).
 */
START_TEST(test_rollback_gap)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	json_t	*o, *cur, *m;
	char	 err[512], ha[64], hb[64], name[128];
	uint8_t	 a[20], b[20];
	uint64_t i;

	bid(a, 21);
	bid(b, 22);
	bidhex(ha, 21);
	bidhex(hb, 22);
	for (i = 1; i <= 4; i++) {
		seg_name(name, sizeof(name), i, T0 + (i - 1) * 10 * SEC);
		index_segment_open(ix, i, name, T0 + (i - 1) * 10 * SEC);
		index_add_mapping(ix, "/usr/lib/x86_64-linux-gnu/libc.so.6", a, 20, BID_MMAP2, 1,
		    T0 + (i - 1) * 10 * SEC, i > 1);
		if (i == 1)
			index_add_mapping(ix, "/usr/bin/app", b, 20, BID_MMAP2, 100, T0 + 1 * SEC, 0);
		if (i == 2)
			index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 200, T0 + 12 * SEC, 0);
		if (i == 4)
			index_add_mapping(ix, "/usr/bin/app", b, 20, BID_MMAP2, 300, T0 + 31 * SEC, 0);
		if (i < 4)
			index_segment_close(ix, i, T0 + i * 10 * SEC, 4096, 10, 0, 20);
	}
	ck_assert_int_eq(index_flush(ix), 0);
	q = open_q();
	/* segment 3: nothing mapped; A the version seen last */
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 25 * SEC, &o, err, sizeof(err)), &o, err);
	cur = json_object_get(o, "current");
	ck_assert_str_eq(jstr(cur, "build_id"), ha);
	ck_assert(json_is_false(json_object_get(cur, "mapped")));
	ck_assert_uint_eq(json_array_size(json_object_get(o, "mapped")), 0);
	json_decref(o);
	/* segment 2: A alone */
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 12 * SEC, &o, err, sizeof(err)), &o, err);
	cur = json_object_get(o, "current");
	ck_assert_str_eq(jstr(cur, "build_id"), ha);
	m = json_object_get(o, "mapped");
	ck_assert_uint_eq(json_array_size(m), 1);
	ck_assert_str_eq(jstr(json_array_get(m, 0), "build_id"), ha);
	json_decref(o);
	/* before A, in segment 2: nothing mapped yet, B seen last */
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 11 * SEC, &o, err, sizeof(err)), &o, err);
	cur = json_object_get(o, "current");
	ck_assert_str_eq(jstr(cur, "build_id"), hb);
	ck_assert(json_is_false(json_object_get(cur, "mapped")));
	ck_assert_uint_eq(json_array_size(json_object_get(o, "mapped")), 0);
	json_decref(o);
	/* segment 1 after B's mapping, and segment 4's: B */
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 5 * SEC, &o, err, sizeof(err)), &o, err);
	cur = json_object_get(o, "current");
	ck_assert_str_eq(jstr(cur, "build_id"), hb);
	ck_assert(json_is_true(json_object_get(cur, "mapped")));
	json_decref(o);
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 31 * SEC, &o, err, sizeof(err)), &o, err);
	cur = json_object_get(o, "current");
	ck_assert_str_eq(jstr(cur, "build_id"), hb);
	ck_assert(json_is_true(json_object_get(cur, "mapped")));
	ck_assert_uint_eq(json_array_size(json_object_get(o, "mapped")), 1);
	json_decref(o);
	/* libc, in every segment's start state: mapped in segment 3 */
	o = query(index_reader_lookup(q, "/usr/lib/x86_64-linux-gnu/libc.so.6", T0 + 25 * SEC, &o,
	    err, sizeof(err)), &o, err);
	ck_assert(json_is_true(json_object_get(json_object_get(o, "current"), "mapped")));
	json_decref(o);
	index_reader_close(q);
	index_close(ix);
}
END_TEST

/*
 * The wall clock stepped back (a reboot with a wrong clock, fixed later):
 * segment 3 began and ended inside segment 2's time.  The segment that
 * holds a time is the newest that does, not the newest begun before it:
 * before, segment 3 hid segment 2, no segment held the time, and B's row
 * (segments 1 to 4) answered B mapped beside A at a time only A was.
 */
START_TEST(test_segment_clock_step)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	json_t	*o, *m;
	char	 err[512], ha[64], name[128];
	uint8_t	 a[20], b[20];
	/* ms after T0; segment 3 inside segment 2, before A's mapping */
	const int64_t start[4] = { 0, 10000, 11000, 30000 }, end[3] = { 10000, 20000, 11500 };
	uint64_t i;

	bid(a, 21);
	bid(b, 22);
	bidhex(ha, 21);
	for (i = 1; i <= 4; i++) {
		seg_name(name, sizeof(name), i, T0 + start[i - 1] * 1000000);
		index_segment_open(ix, i, name, T0 + start[i - 1] * 1000000);
		if (i == 1)
			index_add_mapping(ix, "/usr/bin/app", b, 20, BID_MMAP2, 100, T0 + 1 * SEC, 0);
		if (i == 2)
			index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 200, T0 + 12 * SEC, 0);
		if (i == 4)
			index_add_mapping(ix, "/usr/bin/app", b, 20, BID_MMAP2, 300, T0 + 31 * SEC, 0);
		if (i < 4)
			index_segment_close(ix, i, T0 + end[i - 1] * 1000000, 4096, 10, 0, 20);
	}
	ck_assert_int_eq(index_flush(ix), 0);
	q = open_q();
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 12 * SEC, &o, err, sizeof(err)), &o, err);
	m = json_object_get(o, "mapped");
	ck_assert_msg(json_array_size(m) == 1, "%zu versions mapped at a time only A was",
	    json_array_size(m));
	ck_assert_str_eq(jstr(json_array_get(m, 0), "build_id"), ha);
	json_decref(o);
	index_reader_close(q);
	index_close(ix);
}
END_TEST

/*
 * A version a live process maps now (the loop's "live" list) was mapped at
 * a past AT of the open segment only if the segment shows it by AT: v1 ran
 * before, v2 ran at 12 s and exited, v1 was started again at 15 s and
 * runs; at 13 s, v2 was the current version and nothing was mapped (found
 * by a review: v1 was "mapped" at 13 s, and current).
 */
START_TEST(test_lookup_live_after)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	struct index_live live;
	json_t	*o, *m;
	char	 err[512], ha[64], hb[64], name[128];
	uint8_t	 a[20], b[20];

	bid(a, 31);
	bid(b, 32);
	bidhex(ha, 31);
	bidhex(hb, 32);
	seg_name(name, sizeof(name), 1, T0);
	index_segment_open(ix, 1, name, T0);
	index_add_mapping(ix, "/opt/app", a, 20, BID_MMAP2, 100, T0 + 1 * SEC, 0);
	index_segment_close(ix, 1, T0 + 10 * SEC, 4096, 10, 0, 20);
	seg_name(name, sizeof(name), 2, T0 + 10 * SEC);
	index_segment_open(ix, 2, name, T0 + 10 * SEC);
	index_add_mapping(ix, "/opt/app", b, 20, BID_MMAP2, 200, T0 + 12 * SEC, 0);
	index_add_mapping(ix, "/opt/app", a, 20, BID_MMAP2, 300, T0 + 15 * SEC, 0);
	ck_assert_int_eq(index_flush(ix), 0);
	memset(&live, 0, sizeof(live));
	memcpy(live.bid, a, 20);
	live.bidsize = 20;
	q = open_q();
	o = query(index_reader_lookup_live(q, "/opt/app", T0 + 13 * SEC, 0, &live, 1, &o, err,
	    sizeof(err)), &o, err);
	m = json_object_get(o, "mapped");
	ck_assert_msg(json_array_size(m) == 0, "%zu versions mapped at 13 s, when none was",
	    json_array_size(m));
	ck_assert_str_eq(jstr(json_object_get(o, "current"), "build_id"), hb);
	json_decref(o);
	/* at 16 s, v1 is mapped (and current) */
	o = query(index_reader_lookup_live(q, "/opt/app", T0 + 16 * SEC, 0, &live, 1, &o, err,
	    sizeof(err)), &o, err);
	m = json_object_get(o, "mapped");
	ck_assert_int_eq(json_array_size(m), 1);
	ck_assert_str_eq(jstr(json_array_get(m, 0), "build_id"), ha);
	ck_assert_str_eq(jstr(json_object_get(o, "current"), "build_id"), ha);
	json_decref(o);
	index_reader_close(q);
	index_close(ix);
}
END_TEST

/* Readers back to back: at every moment one of two holds a snapshot. */
struct wal_readers {
	char		 path[256];
	int		 stop;		/* atomics: the test's thread and the readers' */
	int		 nsnap;
};

static void *
wal_readers_main(void *arg)
{
	struct wal_readers *w = arg;
	sqlite3	*db[2];
	int	 i = 0;

	if (sqlite3_open_v2(w->path, &db[0], SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_open_v2(w->path, &db[1], SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return NULL;		/* no snapshot: nsnap 0 fails the test */
	sqlite3_exec(db[0], "BEGIN; SELECT count(*) FROM segments", NULL, NULL, NULL);
	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		usleep(20 * 1000);
		i ^= 1;
		sqlite3_exec(db[i], "BEGIN; SELECT count(*) FROM segments", NULL, NULL, NULL);
		sqlite3_exec(db[i ^ 1], "COMMIT", NULL, NULL, NULL);
		__atomic_add_fetch(&w->nsnap, 1, __ATOMIC_RELAXED);
	}
	sqlite3_exec(db[i], "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db[0]);
	sqlite3_close(db[1]);
	return NULL;
}

/*
 * Queries back to back (a user's, each within its deadline) keep some
 * snapshot open at every moment, and a checkpoint that does not wait for
 * them never copies the whole WAL back: it grew without bound (past
 * db_max_size, which counts the file alone).  Past WAL_TRUNCATE_FRAMES the
 * writer waits for the readers of the old frames and empties it.
 */
START_TEST(test_wal_readers)
{
	struct index *ix = open_ix();
	struct index_stats st;
	struct wal_readers w;
	struct stat sb;
	pthread_t th;
	char	 name[128], path[PATH_MAX];
	uint8_t	 id[20];
	off_t	 most = 0;
	int	 i, j;

	seg_name(name, sizeof(name), 1, T0);
	index_segment_open(ix, 1, name, T0);
	ck_assert_int_eq(index_flush(ix), 0);
	memset(&w, 0, sizeof(w));
	snprintf(w.path, sizeof(w.path), "%s/index.db", state);
	ck_assert_int_eq(pthread_create(&th, NULL, wal_readers_main, &w), 0);
	snprintf(path, sizeof(path), "%s/index.db-wal", state);
	for (i = 0; i < 5000; i++) {
		for (j = 0; j < 40; j++) {
			char	 p[256];

			snprintf(p, sizeof(p), "/opt/wal/%0150d/lib-%d-%d.so", i, i, j);
			memset(id, 0, sizeof(id));
			memcpy(id, &i, sizeof(i));
			memcpy(id + 4, &j, sizeof(j));
			index_add_mapping(ix, p, id, 20, BID_MMAP2, 100, T0 + (uint64_t)i * SEC, 0);
		}
		ck_assert_int_eq(index_flush(ix), 0);
		ck_assert_int_eq(stat(path, &sb), 0);
		if (sb.st_size > most)
			most = sb.st_size;
		index_get_stats(ix, &st);
		if (st.wal_restarts >= 2 || most > (off_t)(96 << 20))
			break;
	}
	__atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	ck_assert_int_gt(w.nsnap, 10);
	fprintf(stderr, "test_wal_readers: %d transactions, the WAL at most %lld bytes, "
	    "emptied %llu times, %d snapshots\n", i, (long long)most,
	    (unsigned long long)st.wal_restarts, w.nsnap);
	ck_assert_msg(st.wal_restarts >= 2, "with readers back to back, the WAL grew to %lld "
	    "bytes in %d transactions and was never emptied", (long long)most, i);
	ck_assert_msg(most <= (off_t)(WAL_TRUNCATE_FRAMES + 1024) * 16384, "the WAL grew to "
	    "%lld bytes", (long long)most);
	index_close(ix);
}
END_TEST

/* Two programs at one path at the same time (two mount namespaces): both mapped. */
START_TEST(test_two_namespaces)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	uint8_t	 a[20], b[20];
	json_t	*o;
	char	 err[512];

	bid(a, 5);
	bid(b, 6);
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	index_add_mapping(ix, "/opt/svc", a, 20, BID_MMAP2, 10, T0 + 1 * SEC, 0);
	index_add_mapping(ix, "/opt/svc", b, 20, BID_MMAP2, 20, T0 + 2 * SEC, 0);
	index_segment_close(ix, 1, T0 + 5 * SEC, 1, 1, 0, 1);
	index_segment_open(ix, 2, "perf-000002-20261118T110645Z.data", T0 + 5 * SEC);
	index_add_mapping(ix, "/opt/svc", a, 20, BID_MMAP2, 10, T0 + 5 * SEC, 1);
	index_add_mapping(ix, "/opt/svc", b, 20, BID_MMAP2, 20, T0 + 5 * SEC, 1);
	ck_assert_int_eq(index_flush(ix), 0);
	q = open_q();
	o = query(index_reader_lookup(q, "/opt/svc", T0 + 3 * SEC, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "mapped")), 2);
	json_decref(o);
	o = query(index_reader_history(q, "/opt/svc", &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 2);
	json_decref(o);
	index_reader_close(q);
	index_close(ix);
}
END_TEST

/* "PATH (deleted)": a binary replaced under a running process is still PATH. */
START_TEST(test_deleted_suffix)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	uint8_t	 a[20];
	json_t	*o;
	char	 err[512];

	bid(a, 8);
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	index_add_mapping(ix, "/usr/sbin/daemon (deleted)", a, 20, BID_USER, 5, T0, 1);
	index_add_mapping(ix, "/usr/sbin/daemon", a, 20, BID_MMAP2, 6, T0 + SEC, 0);
	index_close(ix);
	q = open_q();
	o = query(index_reader_history(q, "/usr/sbin/daemon", &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 1);
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "objects"), 0), "nr_procs"), 2);
	json_decref(o);
	ck_assert_int_eq(index_reader_history(q, "/usr/sbin/daemon (deleted)", &o, err, sizeof(err)),
	    -ENOENT);
	index_reader_close(q);
}
END_TEST

/* Rows survive a reopen and counts go on from where they were. */
START_TEST(test_reopen)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	uint8_t	 a[20], b[20];
	json_t	*o;
	char	 err[512], hex[64];

	bid(a, 1);
	replace_scenario(ix);
	index_close(ix);
	ix = open_ix();
	index_segment_open(ix, 3, "perf-000003-20261118T110700Z.data", T0 + 20 * SEC);
	index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 300, T0 + 21 * SEC, 0);
	/* in the same batch, new objects beside the known one (writer.c: run_new_objs) */
	bid(b, 9);
	bidhex(hex, 9);
	index_add_mapping(ix, "/usr/bin/new", b, 20, BID_MMAP2, 301, T0 + 22 * SEC, 0);
	index_add_mapping(ix, "/usr/bin/zzz", b, 20, BID_MMAP2, 302, T0 + 23 * SEC, 0);
	index_close(ix);
	q = open_q();
	o = query(index_reader_buildid(q, hex, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 2);
	json_decref(o);
	o = query(index_reader_lookup(q, "/usr/bin/new", T0 + 22 * SEC, &o, err, sizeof(err)),
	    &o, err);
	ck_assert_str_eq(jstr(json_object_get(o, "current"), "build_id"), hex);
	json_decref(o);
	o = query(index_reader_history(q, "/usr/bin/app", &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 2);
	/* The old build-id came back: it sorts first (first seen) with 4 maps. */
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "objects"), 0), "nr_maps"), 4);
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "objects"), 0), "last_seen_ns"),
	    T0 + 21 * SEC);
	json_decref(o);
	/* Segments 1 and 2 have no files: reconciliation marked them deleted. */
	o = query(index_reader_segments(q, 1, &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(json_array_get(json_object_get(o, "segments"), 0), "state"),
	    "deleted");
	json_decref(o);
	o = query(index_reader_segments(q, 0, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "segments")), 1);
	json_decref(o);
	index_reader_close(q);
}
END_TEST

/* A batch goes out at commit_rows rows without a flush. */
START_TEST(test_commit_rows)
{
	struct index *ix;
	struct index_stats s;
	uint8_t	 id[20];
	char	 path[64];
	int	 i;

	conf.index_commit_rows = 100;
	ix = open_ix();
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	for (i = 0; i < 250; i++) {
		bid(id, i);
		snprintf(path, sizeof(path), "/bin/p%d", i);
		index_add_mapping(ix, path, id, 20, BID_MMAP2, 1, T0 + i, 0);
	}
	index_get_stats(ix, &s);
	ck_assert_uint_lt(s.pending, 100);
	ck_assert_uint_eq(s.objects, 250);
	/* Repeats are memory updates: nothing new pending beyond the dirty rows. */
	for (i = 0; i < 1000; i++)
		index_add_mapping(ix, "/bin/p0", (bid(id, 0), id), 20, BID_MMAP2, 1, T0 + i, 0);
	index_get_stats(ix, &s);
	ck_assert_uint_le(s.pending, 100);
	index_close(ix);
}
END_TEST

/* ---------------------------------------------------------------- versions */

START_TEST(test_migration_from_v1)
{
	struct index_reader *q;
	sqlite3	*db;
	char	 path[256], err[512];
	json_t	*o;
	struct index *ix;
	int	 v = 0;
	sqlite3_stmt *s;
	char	 hex[64];

	bidhex(hex, 1);
	snprintf(path, sizeof(path), "%s/index.db", state);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_msg(index_migrate(db, 1, err, sizeof(err)) == 0, "%s", err);
	snprintf(path, sizeof(path), "INSERT INTO objects VALUES (1, '/bin/old', '%s', "
	    "'user', 'mmap2', %lld, %lld, 1, 1)", hex, (long long)T0, (long long)T0);
	ck_assert_int_eq(sqlite3_exec(db, path, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	ix = open_ix();
	index_close(ix);
	snprintf(path, sizeof(path), "%s/index.db", state);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	ck_assert_int_eq(v, INDEX_SCHEMA_VERSION);
	q = open_q();
	o = query(index_reader_history(q, "/bin/old", &o, err, sizeof(err)), &o, err);
	json_decref(o);
	o = query(index_reader_kernel(q, &o, err, sizeof(err)), &o, err);	/* v2 tables */
	json_decref(o);
	index_reader_close(q);
}
END_TEST

/*
 * A file of version 3 (the keys as indexes of objects) moves its keys to
 * object_keys and object_bids: the same answers by path, build-id and
 * build-id prefix, and an object seen again after the restart goes on in
 * its row (found through object_keys) under the id the daemon now gives it.
 */
START_TEST(test_migration_from_v3)
{
	struct index_reader *q;
	struct index *ix;
	sqlite3	*db;
	char	 path[256], sql[1024], err[512], hex[64], hex2[64];
	uint8_t	 a[20];
	json_t	*o, *arr;

	bidhex(hex, 1);
	bidhex(hex2, 2);
	snprintf(path, sizeof(path), "%s/index.db", state);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_msg(index_migrate(db, 3, err, sizeof(err)) == 0, "%s", err);
	snprintf(sql, sizeof(sql), "INSERT INTO segments(seq, name, start_ns, end_ns, state) "
	    "VALUES (1, 'perf-000001-20261118T110640Z.data', %lld, %lld, 'closed');"
	    "INSERT INTO objects VALUES (1, '/bin/app', x'%s', 'user', 'mmap2', %lld, %lld, "
	    "1, 1, 0, NULL), (2, '/bin/app', x'%s', 'user', 'mmap2', %lld, %lld, 1, 1, 0, "
	    "NULL), (3, '/bin/app', x'%s', 'user', 'mmap2', %lld, %lld, 1, 1, 7, 1000);"
	    "INSERT INTO object_segments VALUES (1, 1, %lld, %lld, 1)",
	    (long long)T0, (long long)(T0 + 9 * SEC), hex, (long long)T0,
	    (long long)(T0 + SEC), hex2, (long long)(T0 + 2 * SEC), (long long)(T0 + 3 * SEC),
	    hex, (long long)(T0 + 4 * SEC), (long long)(T0 + 5 * SEC), (long long)T0,
	    (long long)(T0 + SEC));
	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK, "%s",
	    sqlite3_errmsg(db));
	sqlite3_close(db);
	snprintf(path, sizeof(path), "%s/segments/perf-000001-20261118T110640Z.data", state);
	ck_assert_int_eq(close(open(path, O_WRONLY | O_CREAT, 0640)), 0);	/* kept */

	ix = open_ix();
	bid(a, 1);
	index_segment_open(ix, 2, "perf-000002-20261118T110650Z.data", T0 + 10 * SEC);
	index_add_mapping(ix, "/bin/app", a, 20, BID_MMAP2, 5, T0 + 11 * SEC, 0);
	index_close(ix);
	q = open_q();
	o = query(index_reader_history(q, "/bin/app", &o, err, sizeof(err)), &o, err);
	arr = json_object_get(o, "objects");
	ck_assert_uint_eq(json_array_size(arr), 2);	/* the host's two */
	ck_assert_str_eq(jstr(json_array_get(arr, 0), "build_id"), hex);
	ck_assert_int_eq(jint(json_array_get(arr, 0), "nr_maps"), 2);	/* merged */
	ck_assert_int_eq(jint(json_array_get(arr, 0), "last_seen_ns"), T0 + 11 * SEC);
	ck_assert_int_eq(jint(json_array_get(arr, 0), "segments"), 2);
	ck_assert_str_eq(jstr(json_array_get(arr, 1), "build_id"), hex2);
	json_decref(o);
	o = query(index_reader_lookup(q, "/bin/app", T0 + 2 * SEC + 1, &o, err, sizeof(err)),
	    &o, err);
	ck_assert_str_eq(jstr(json_object_get(o, "current"), "build_id"), hex2);
	json_decref(o);
	hex[12] = '\0';	/* a prefix */
	o = query(index_reader_buildid(q, hex, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 2);	/* both ns */
	ck_assert_uint_eq(json_array_size(json_object_get(o, "segments")), 2);
	json_decref(o);
	index_reader_close(q);
}
END_TEST

/*
 * A file of version 4 (object_bids keyed by the build-id), as the daemon
 * of that version wrote it, takes the integer keys of version 5: a key
 * per object equal to index_bid_key(), whatever the build-id's length or
 * first bit; the same answers by build-id and prefix, exact where two
 * build-ids share the first 8 bytes (one key); the triggers still keep
 * object_bids with objects when a row goes or takes a new id.
 */
static const char *const v4_bids[] = {
	"0102030405060708090a0b0c0d0e0f1011121314",
	"0102030405060708ff0a0b0c0d0e0f1011121314",	/* the same key */
	"ff02030405060708090a0b0c0d0e0f1011121314",	/* top bit set */
	"8000000000000000000000000000000000000000",
	"7fffffffffffffffffffffffffffffffffffffff",
	"deadbeef",					/* short */
};
#define NV4	(sizeof(v4_bids) / sizeof(v4_bids[0]))

START_TEST(test_migration_from_v4)
{
	struct index_reader *q;
	struct index *ix;
	sqlite3	*db;
	sqlite3_stmt *s;
	char	 path[256], sql[1024], err[512];
	uint8_t	 id[20];
	json_t	*o;
	size_t	 i;

	snprintf(path, sizeof(path), "%s/index.db", state);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_msg(index_migrate(db, 4, err, sizeof(err)) == 0, "%s", err);
	snprintf(sql, sizeof(sql), "INSERT INTO segments(seq, name, start_ns, end_ns, state) "
	    "VALUES (1, 'perf-000001-20261118T110640Z.data', %lld, %lld, 'closed')",
	    (long long)T0, (long long)(T0 + 9 * SEC));
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	for (i = 0; i < NV4; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO objects VALUES (%zu, '/bin/v4-%zu', "
		    "x'%s', 'user', 'mmap2', %lld, %lld, 1, 1, 0, NULL);"
		    "INSERT INTO object_segments VALUES (%zu, 1, %lld, %lld, 1)", i + 1, i,
		    v4_bids[i], (long long)T0, (long long)(T0 + SEC), i + 1, (long long)T0,
		    (long long)(T0 + SEC));
		ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK, "%s",
		    sqlite3_errmsg(db));
	}
	/* the keys as the writer of version 4 inserts them */
	ck_assert_int_eq(sqlite3_exec(db, "INSERT INTO object_keys SELECT path, build_id, "
	    "mnt_ns, id FROM objects ORDER BY 1, 2, 3; INSERT INTO object_bids "
	    "SELECT build_id, id FROM objects ORDER BY 1, 2", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	snprintf(sql, sizeof(sql), "%s/segments/perf-000001-20261118T110640Z.data", state);
	ck_assert_int_eq(close(open(sql, O_WRONLY | O_CREAT, 0640)), 0);	/* kept */

	ix = open_ix();		/* migrates */
	index_close(ix);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT o.build_id, b.bid_key FROM objects o "
	    "LEFT JOIN object_bids b ON b.id = o.id ORDER BY o.id", -1, &s, NULL), SQLITE_OK);
	for (i = 0; sqlite3_step(s) == SQLITE_ROW; i++) {
		ck_assert_int_eq(sqlite3_column_type(s, 1), SQLITE_INTEGER);
		ck_assert_int_eq(sqlite3_column_int64(s, 1), index_bid_key(
		    sqlite3_column_blob(s, 0), (size_t)sqlite3_column_bytes(s, 0)));
	}
	sqlite3_finalize(s);
	ck_assert_uint_eq(i, NV4);
	sqlite3_close(db);

	q = open_q();
	for (i = 0; i < NV4; i++) {
		o = query(index_reader_buildid(q, v4_bids[i], &o, err, sizeof(err)), &o, err);
		ck_assert_str_eq(jstr(o, "build_id"), v4_bids[i]);
		ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 1);
		ck_assert_uint_eq(json_array_size(json_object_get(o, "segments")), 1);
		json_decref(o);
	}
	/* one key, two build-ids: the prefix decides, exactly */
	ck_assert_int_eq(index_reader_buildid(q, "0102030405060708", &o, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "ambiguous") != NULL, "%s", err);
	o = query(index_reader_buildid(q, "0102030405060708ff", &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(o, "build_id"), v4_bids[1]);
	json_decref(o);
	o = query(index_reader_buildid(q, "ff0203040506", &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(o, "build_id"), v4_bids[2]);
	json_decref(o);
	ck_assert_int_eq(index_reader_buildid(q, "0102030405060709", &o, err, sizeof(err)),
	    -ENOENT);
	index_reader_close(q);

	/* the triggers, with keys computed in SQL */
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_msg(sqlite3_exec(db, "UPDATE objects SET id = 100 WHERE id = 3; "
	    "DELETE FROM object_segs WHERE object_id IN (1, 6); "
	    "DELETE FROM objects WHERE id IN (1, 6)", NULL, NULL, NULL) == SQLITE_OK, "%s",
	    sqlite3_errmsg(db));
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT group_concat(id) FROM (SELECT id FROM "
	    "object_bids ORDER BY bid_key, id)", -1, &s, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(s, 0), "2,5,4,100");
	sqlite3_finalize(s);
	sqlite3_close(db);

	/* an object of the old file seen again goes on in its row */
	ix = open_ix();
	buildid_from_hex(v4_bids[1], id);
	index_add_mapping(ix, "/bin/v4-1", id, 20, BID_MMAP2, 5, T0 + 11 * SEC, 0);
	index_close(ix);
	q = open_q();
	o = query(index_reader_buildid(q, v4_bids[1], &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 1);
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "objects"), 0), "nr_maps"), 2);
	json_decref(o);
	index_reader_close(q);
}
END_TEST

START_TEST(test_newer_refused)
{
	struct index *ix = NULL;
	sqlite3	*db;
	char	 path[256], err[512];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/index.db", state);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "CREATE TABLE future(x); PRAGMA user_version = 99",
	    NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	ck_assert_int_eq(index_open(&ix, state, &conf, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_null(ix);
	ck_assert_msg(strstr(err, "version 99 is newer") != NULL, "%s", err);
	ck_assert_ptr_null(index_reader_open(state, err, sizeof(err)));
	ck_assert_msg(strstr(err, "newer") != NULL, "%s", err);
	/* Refused, not moved aside: the file is still there. */
	ck_assert_int_eq(stat(path, &sb), 0);
}
END_TEST

/* ---------------------------------------------------------------- segment files */

struct segrec {
	const char	*path;
	int		 id;		/* bid(n); 0: no build-id */
	uint32_t	 pid;
	uint64_t	 t;		/* CLOCK_MONOTONIC */
	int		 synth;		/* before FINISHED_INIT */
	uint32_t	 type;		/* 0: MMAP2 of path; FORK (from ppid), EXIT, COMM (exec),
					   NAMESPACES (mount namespace ppid) */
	uint32_t	 ppid;		/* FORK: the parent; EXIT: the thread (0: the leader) */
};

/* A FORK or EXIT record of PID (thread TID; parent PPID for a fork). */
static size_t
build_task(uint8_t *buf, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
    const struct record_sample_id *sid)
{
	struct perf_event_header h = { type, 0, 0 };
	uint32_t ids[4] = { pid, ppid, tid, type == PERF_RECORD_FORK ? ppid : tid };
	size_t	 n = sizeof(h);

	memcpy(buf + n, ids, sizeof(ids));
	n += sizeof(ids);
	memcpy(buf + n, &sid->time, 8);
	n += 8;
	record_encode_sample_id(&LAYOUT, sid, buf + n);
	n += record_sample_id_size(&LAYOUT);
	h.size = (uint16_t)n;
	memcpy(buf, &h, sizeof(h));
	return n;
}

#define MONO0	5000000000ULL

/* write_segment's table names a module too, by its file, as the recorder's does. */
static int	with_module;

/* A closed segment as the recorder writes it; REPAIRED: as repair.c leaves it. */
static void
write_segment(uint64_t seq, int64_t wall, const struct segrec *r, size_t n, int repaired)
{
	struct perfdata_attr a;
	struct perfdata_meta m;
	struct segment seg;
	uint8_t	 buf[8192], id[20];
	char	 dir[256];
	struct perf_event_header fi = { PERF_RECORD_FINISHED_INIT, 0, 8 };
	size_t	 i, len;
	int	 init = 0;

	memset(&a, 0, sizeof(a));
	a.attr.type = PERF_TYPE_SOFTWARE;
	a.attr.size = PERF_FILE_ATTR_SIZE;
	a.attr.config = PERF_COUNT_SW_CPU_CLOCK;
	a.attr.sample_type = ST;
	a.attr.sample_id_all = 1;
	a.attr.mmap2 = 1;
	perf_attr_set_flag(&a.attr, PERF_ATTR_FLAG_BUILD_ID_BIT, 1);
	a.name = "cpu-clock";
	a.ids = IDS;
	a.nids = 1;
	snprintf(dir, sizeof(dir), "%s/segments", state);
	ck_assert_int_eq(segment_open(&seg, dir, seq, MONO0, (uint64_t)wall, &a, 1), 0);
	for (i = 0; i < n; i++) {
		struct record_mmap mm;
		struct record_sample_id sid = { .pid = r[i].pid, .tid = r[i].pid,
		    .time = r[i].t, .id = IDS[0] };

		if (!r[i].synth && !init) {
			segment_write(&seg, &fi, sizeof(fi));
			init = 1;
		}
		if (r[i].type == PERF_RECORD_FORK || r[i].type == PERF_RECORD_EXIT) {
			uint32_t tid = r[i].type == PERF_RECORD_FORK || r[i].ppid == 0 ?
			    r[i].pid : r[i].ppid;

			sid.tid = tid;
			len = build_task(buf, r[i].type, r[i].pid,
			    r[i].type == PERF_RECORD_FORK ? r[i].ppid : r[i].pid, tid, &sid);
			ck_assert_int_eq(segment_write(&seg, buf, len), 0);
			continue;
		}
		if (r[i].type == PERF_RECORD_NAMESPACES) {
			len = record_build_namespaces(buf, r[i].pid, r[i].pid, r[i].ppid, 0, &LAYOUT,
			    &sid);
			ck_assert_int_eq(segment_write(&seg, buf, len), 0);
			continue;
		}
		if (r[i].type == PERF_RECORD_COMM) {
			len = record_build_comm(buf, r[i].pid, r[i].pid, r[i].path,
			    PERF_RECORD_MISC_COMM_EXEC, &LAYOUT, &sid);
			ck_assert_int_eq(segment_write(&seg, buf, len), 0);
			continue;
		}
		memset(&mm, 0, sizeof(mm));
		mm.pid = mm.tid = r[i].pid;
		mm.addr = 0x400000;
		mm.len = 0x1000;
		mm.prot = 5;
		mm.flags = 2;
		mm.filename = r[i].path;
		if (r[i].id != 0) {
			bid(id, r[i].id);
			memcpy(mm.build_id, id, 20);
			mm.build_id_size = 20;
			len = record_build_mmap2(buf, &mm, PERF_RECORD_MISC_USER, &LAYOUT, &sid);
			segment_add_buildid(&seg, r[i].path, id, 20, 0);
		} else
			len = record_build_mmap2_plain(buf, &mm, PERF_RECORD_MISC_USER, &LAYOUT,
			    &sid);
		ck_assert_int_eq(segment_write(&seg, buf, len), 0);
	}
	bid(id, 99);
	segment_add_buildid(&seg, "[kernel.kallsyms]", id, 20, 1);
	if (with_module) {
		bid(id, 98);
		segment_add_buildid(&seg, "/lib/modules/6.1.0/kernel/net/nf-nat.ko.xz", id, 20, 1);
	}
	memset(&m, 0, sizeof(m));
	m.hostname = "h";
	m.osrelease = "r";
	m.arch = "x86_64";
	m.version = repaired ? "perfmapd 0.1.0 (repaired)" : "perfmapd 0.1.0";
	m.clockid = repaired ? -1 : CLOCK_MONOTONIC;
	m.clock_wall_ns = (uint64_t)wall;
	m.clock_ref_ns = MONO0;
	seg.t_end = MONO0 + 10ULL * SEC;
	ck_assert_int_eq(segment_close(&seg, &a, 1, &m), 0);
}

static const struct segrec SEG1[] = {
	{ "/usr/lib/libc.so.6", 3, 1, MONO0, 1, 0, 0 },
	{ "/usr/bin/app", 1, 100, MONO0 + 1 * SEC, 0, 0, 0 },
	{ "/usr/bin/app", 1, 101, MONO0 + 3 * SEC, 0, 0, 0 },
	{ "/usr/bin/nobid", 0, 102, MONO0 + 4 * SEC, 0, 0, 0 },
};
static const struct segrec SEG2[] = {
	{ "/usr/lib/libc.so.6", 3, 1, MONO0, 1, 0, 0 },
	{ "/usr/bin/app", 2, 200, MONO0 + 2 * SEC, 0, 0, 0 },
};

static void
two_segments(void)
{
	write_segment(1, T0, SEG1, 4, 0);
	write_segment(2, T0 + 10 * SEC, SEG2, 2, 1);
}

/*
 * A module in a segment's table, rebuilt: under the name live ingest
 * gives it ("[nf_nat]", from /proc/modules), not its file's.  Before, a
 * rebuild (a damaged index, a crash's open segment) indexed it as
 * "/lib/modules/.../nf-nat.ko.xz", and history "[nf_nat]" found nothing.
 */
START_TEST(test_rebuild_module_name)
{
	struct index *ix;
	struct index_reader *q;
	json_t	*o = NULL;
	char	 err[512];
	int	 rc;

	with_module = 1;
	write_segment(1, T0, SEG1, 4, 0);
	with_module = 0;
	ix = open_ix();			/* reconciled: segment 1 indexed from its file */
	index_close(ix);
	q = open_q();
	rc = index_reader_history(q, "[nf_nat]", &o, err, sizeof(err));
	ck_assert_msg(rc == 0, "the module rebuilt from a segment is not \"[nf_nat]\" (%d): %s",
	    rc, err);
	json_decref(o);
	o = NULL;
	ck_assert_int_eq(index_reader_history(q, "/lib/modules/6.1.0/kernel/net/nf-nat.ko.xz", &o,
	    err, sizeof(err)), -ENOENT);
	index_reader_close(q);
}
END_TEST

/* What index_open rebuilt from the files of two_segments(). */
static void
check_rebuilt(void)
{
	struct index_reader *q = open_q();
	json_t	*o, *arr;
	char	 err[512], ha[64], hk[64];

	bidhex(ha, 1);
	bidhex(hk, 99);
	o = query(index_reader_history(q, "/usr/bin/app", &o, err, sizeof(err)), &o, err);
	arr = json_object_get(o, "objects");
	ck_assert_uint_eq(json_array_size(arr), 2);
	ck_assert_str_eq(jstr(json_array_get(arr, 0), "build_id"), ha);
	ck_assert_int_eq(jint(json_array_get(arr, 0), "first_seen_ns"), T0 + 1 * SEC);
	ck_assert_int_eq(jint(json_array_get(arr, 0), "last_seen_ns"), T0 + 3 * SEC);
	ck_assert_int_eq(jint(json_array_get(arr, 0), "nr_maps"), 2);
	/* Segment 2 has no CLOCK_DATA (repaired): its name's second is the reference. */
	ck_assert_int_eq(jint(json_array_get(arr, 1), "first_seen_ns"), T0 + 12 * SEC);
	json_decref(o);
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 5 * SEC, &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(json_object_get(o, "current"), "build_id"), ha);
	json_decref(o);
	o = query(index_reader_buildid(q, ha, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "segments")), 1);
	json_decref(o);
	o = query(index_reader_segments(q, 0, &o, err, sizeof(err)), &o, err);
	arr = json_object_get(o, "segments");
	ck_assert_uint_eq(json_array_size(arr), 2);
	ck_assert_str_eq(jstr(json_array_get(arr, 0), "state"), "closed");
	ck_assert_str_eq(jstr(json_array_get(arr, 1), "state"), "repaired");
	ck_assert_int_eq(jint(json_array_get(arr, 0), "start_ns"), T0);
	/*
	 * Rebuilt from the file, the end is the last record's time (T0 + 4 s):
	 * SAMPLE_TIME holds the samples' times, as perf record writes it, and
	 * the file has no other word on where the cut (T0 + 10 s) was.
	 */
	ck_assert_int_eq(jint(json_array_get(arr, 0), "end_ns"), T0 + 4 * SEC);
	ck_assert_int_eq(jint(json_array_get(arr, 0), "records"), 5);
	json_decref(o);
	o = query(index_reader_kernel(q, &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(json_array_get(json_object_get(o, "kernel"), 0), "build_id"), hk);
	json_decref(o);
	index_reader_close(q);
}

START_TEST(test_rebuild_from_segments)
{
	two_segments();
	index_close(open_ix());
	check_rebuilt();
	/* A second open finds nothing to do and changes nothing. */
	index_close(open_ix());
	check_rebuilt();
}
END_TEST

/*
 * The times the live index publishes (record/recorder.c): a mapping counts
 * from its MMAP2 or the segment's start state, and lasts until the exit of
 * the process's leader - with the mappings a fork copied, without those an
 * exec dropped; a thread's exit ends nothing.  The rebuild must give the
 * same.
 */
static const struct segrec SEG_EXIT[] = {
	{ "/usr/bin/old", 5, 300, MONO0, 1, 0, 0 },	/* running before the segment */
	{ "/usr/bin/thr", 6, 400, MONO0, 1, 0, 0 },
	{ "/usr/bin/app", 1, 100, MONO0 + 1 * SEC, 0, 0, 0 },
	{ NULL, 0, 101, MONO0 + 2 * SEC, 0, PERF_RECORD_FORK, 100 },	/* 101 has app too */
	{ NULL, 0, 100, MONO0 + 3 * SEC, 0, PERF_RECORD_EXIT, 0 },
	{ "other", 0, 101, MONO0 + 4 * SEC, 0, PERF_RECORD_COMM, 0 },	/* exec: app gone */
	{ "/usr/bin/other", 2, 101, MONO0 + 4 * SEC + 1000, 0, 0, 0 },
	{ NULL, 0, 400, MONO0 + 5 * SEC, 0, PERF_RECORD_EXIT, 401 },	/* a thread of 400 */
	{ NULL, 0, 101, MONO0 + 6 * SEC, 0, PERF_RECORD_EXIT, 0 },
	{ NULL, 0, 300, MONO0 + 7 * SEC, 0, PERF_RECORD_EXIT, 0 },
};

static void
expect_seen(struct index_reader *q, const char *path, int64_t first, int64_t last)
{
	json_t	*o, *obj;
	char	 err[512];

	o = query(index_reader_history(q, path, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 1);
	obj = json_array_get(json_object_get(o, "objects"), 0);
	ck_assert_msg(jint(obj, "first_seen_ns") == first && jint(obj, "last_seen_ns") == last,
	    "%s: seen %lld .. %lld, expected %lld .. %lld (T0 + ns)", path,
	    (long long)(jint(obj, "first_seen_ns") - T0), (long long)(jint(obj, "last_seen_ns") - T0),
	    (long long)(first - T0), (long long)(last - T0));
	json_decref(o);
}

START_TEST(test_rebuild_exit_times)
{
	struct index_reader *q;

	write_segment(1, T0, SEG_EXIT, sizeof(SEG_EXIT) / sizeof(SEG_EXIT[0]), 0);
	index_close(open_ix());
	q = open_q();
	expect_seen(q, "/usr/bin/app", T0 + 1 * SEC, T0 + 3 * SEC);
	expect_seen(q, "/usr/bin/other", T0 + 4 * SEC + 1000, T0 + 6 * SEC);
	expect_seen(q, "/usr/bin/old", T0, T0 + 7 * SEC);
	expect_seen(q, "/usr/bin/thr", T0, T0);
	index_reader_close(q);
}
END_TEST

/*
 * Provenance read back: the start state's processes and what they fork
 * are the host's; a process whose FORK the recorder lost, and whose
 * namespace it could not look up, has a NAMESPACES record of mount
 * namespace 1 (record/recorder.c, proc_ns): its binary must not enter the
 * host's history after a rebuild either.
 */
static const struct segrec SEG_NS[] = {
	{ "/usr/bin/host", 5, 300, MONO0, 1, 0, 0 },
	{ NULL, 0, 301, MONO0 + 1 * SEC, 0, PERF_RECORD_FORK, 300 },
	{ "/usr/bin/child", 6, 301, MONO0 + 2 * SEC, 0, 0, 0 },
	{ "orphan", 0, 500, MONO0 + 3 * SEC, 0, PERF_RECORD_COMM, 0 },
	{ NULL, 0, 500, MONO0 + 3 * SEC + 500, 0, PERF_RECORD_NAMESPACES, INDEX_MNT_NS_UNKNOWN },
	{ "/usr/bin/orphan", 7, 500, MONO0 + 3 * SEC + 1000, 0, 0, 0 },
	{ NULL, 0, 500, MONO0 + 4 * SEC, 0, PERF_RECORD_EXIT, 0 },
};

/* The mnt_ns label of PATH's one object (NULL: the host's), ALL_NS or not; "" when none. */
static char *
ns_label(struct index_reader *q, const char *path, int all_ns)
{
	json_t	*o = NULL, *objs, *ns;
	char	 err[512], *s;
	int	 rc;

	rc = index_reader_history_ns(q, path, all_ns, &o, err, sizeof(err));
	if (rc == -ENOENT)
		return strdup("");
	o = query(rc, &o, err);
	objs = json_object_get(o, "objects");
	if (json_array_size(objs) == 0) {
		json_decref(o);
		return strdup("");
	}
	ck_assert_uint_eq(json_array_size(objs), 1);
	ns = json_object_get(json_array_get(objs, 0), "mnt_ns");
	s = ns == NULL ? NULL : strdup(json_string_value(ns));
	json_decref(o);
	return s;
}

START_TEST(test_rebuild_unknown_ns)
{
	struct index_reader *q;
	char	*s;

	write_segment(1, T0, SEG_NS, sizeof(SEG_NS) / sizeof(SEG_NS[0]), 0);
	index_close(open_ix());
	q = open_q();
	ck_assert_ptr_null(ns_label(q, "/usr/bin/host", 0));
	ck_assert_ptr_null(ns_label(q, "/usr/bin/child", 0));
	s = ns_label(q, "/usr/bin/orphan", 0);
	ck_assert_msg(s != NULL && *s == '\0',
	    "a process of no known namespace entered the host's history after a rebuild");
	free(s);
	s = ns_label(q, "/usr/bin/orphan", 1);
	ck_assert_msg(s != NULL && strcmp(s, "unknown") == 0, "orphan's mnt_ns: %s",
	    s == NULL ? "(the host's)" : s);
	free(s);
	index_reader_close(q);
}
END_TEST

static int
count_aside(void)
{
	DIR	*d = opendir(state);
	struct dirent *de;
	int	 n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "index.db.corrupt-", 17) == 0 &&
		    strchr(de->d_name + 17, '-') == NULL)
			n++;
	closedir(d);
	return n;
}

static void
damage(int how)
{
	char	 path[256];
	struct stat sb;
	int	 fd;
	off_t	 off;
	char	 junk[4096];

	snprintf(path, sizeof(path), "%s/index.db", state);
	if (how == 4) {		/* a page past the first, overwritten (in the file, not the WAL) */
		sqlite3	*db;
		sqlite3_stmt *st;
		int64_t	 psz;
		char	*page;

		ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
		ck_assert_int_eq(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL,
		    NULL), SQLITE_OK);
		ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL),
		    SQLITE_OK);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		psz = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		sqlite3_close(db);
		ck_assert_int_eq(stat(path, &sb), 0);
		ck_assert_int_ge(sb.st_size, 4 * psz);
		ck_assert_ptr_nonnull(page = malloc((size_t)psz));
		memset(page, 0xa5, (size_t)psz);
		ck_assert_int_ge(fd = open(path, O_RDWR), 0);
		ck_assert_int_eq(pwrite(fd, page, (size_t)psz, 2 * psz), psz);	/* page 3 */
		close(fd);
		free(page);
		return;
	}
	if (how == 3) {		/* a schema entry with a name that is not text */
		sqlite3	*db;

		ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
		ck_assert_int_eq(sqlite3_exec(db, "PRAGMA writable_schema = ON; "
		    "UPDATE sqlite_schema SET name = CAST(x'ff41' AS TEXT), rootpage = 99999 "
		    "WHERE name = 'unresolved'", NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(db);
		return;
	}
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_int_ge(sb.st_size, 8192);
	ck_assert_int_ge(fd = open(path, O_RDWR), 0);
	memset(junk, 0xa5, sizeof(junk));
	switch (how) {
	case 0:		/* truncated */
		ck_assert_int_eq(ftruncate(fd, sb.st_size / 2 + 100), 0);
		break;
	case 1:		/* overwritten pages in the middle */
		for (off = 4096; off + 4096 <= sb.st_size; off += 8192)
			ck_assert_int_eq(pwrite(fd, junk, sizeof(junk), off), 4096);
		break;
	case 2:		/* header */
		ck_assert_int_eq(pwrite(fd, junk, 100, 0), 100);
		break;
	}
	close(fd);
}

static void
corrupt_case(int how)
{
	two_segments();
	index_close(open_ix());
	check_rebuilt();
	damage(how);
	index_close(open_ix());
	ck_assert_int_eq(count_aside(), 1);
	check_rebuilt();
}

/*
 * A VFS over the default one whose reads of a main database past its
 * first page fail with EIO while eio_on is set: a disk's transient error
 * in the start-up check, which SQLite cannot be made to have otherwise.
 */
struct eio_file {
	sqlite3_file	 base;
	sqlite3_file	*real;		/* right after this struct */
	int		 main_db;
};

static sqlite3_vfs *eio_real, eio_vfs;
static sqlite3_io_methods eio_methods;
static int eio_on, eio_failed;
static sqlite3_int64 eio_from = 16384;		/* the first byte past page 1 */

#define EIO_REAL(f)	(((struct eio_file *)(f))->real)

static int eio_close(sqlite3_file *f) { return EIO_REAL(f)->pMethods->xClose(EIO_REAL(f)); }
static int
eio_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	if (eio_on && ((struct eio_file *)f)->main_db && off >= eio_from) {
		eio_failed++;
		return SQLITE_IOERR_READ;
	}
	return EIO_REAL(f)->pMethods->xRead(EIO_REAL(f), buf, n, off);
}
static int eio_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{ return EIO_REAL(f)->pMethods->xWrite(EIO_REAL(f), b, n, o); }
static int eio_truncate(sqlite3_file *f, sqlite3_int64 n)
{ return EIO_REAL(f)->pMethods->xTruncate(EIO_REAL(f), n); }
static int eio_sync(sqlite3_file *f, int fl) { return EIO_REAL(f)->pMethods->xSync(EIO_REAL(f), fl); }
static int eio_size(sqlite3_file *f, sqlite3_int64 *n)
{ return EIO_REAL(f)->pMethods->xFileSize(EIO_REAL(f), n); }
static int eio_lock(sqlite3_file *f, int l) { return EIO_REAL(f)->pMethods->xLock(EIO_REAL(f), l); }
static int eio_unlock(sqlite3_file *f, int l) { return EIO_REAL(f)->pMethods->xUnlock(EIO_REAL(f), l); }
static int eio_reserved(sqlite3_file *f, int *r)
{ return EIO_REAL(f)->pMethods->xCheckReservedLock(EIO_REAL(f), r); }
static int eio_fcntl(sqlite3_file *f, int op, void *a)
{ return EIO_REAL(f)->pMethods->xFileControl(EIO_REAL(f), op, a); }
static int eio_sector(sqlite3_file *f) { return EIO_REAL(f)->pMethods->xSectorSize(EIO_REAL(f)); }
static int eio_dev(sqlite3_file *f)
{ return EIO_REAL(f)->pMethods->xDeviceCharacteristics(EIO_REAL(f)); }
static int eio_shmmap(sqlite3_file *f, int i, int sz, int ext, void volatile **p)
{ return EIO_REAL(f)->pMethods->xShmMap(EIO_REAL(f), i, sz, ext, p); }
static int eio_shmlock(sqlite3_file *f, int off, int n, int fl)
{ return EIO_REAL(f)->pMethods->xShmLock(EIO_REAL(f), off, n, fl); }
static void eio_shmbarrier(sqlite3_file *f) { EIO_REAL(f)->pMethods->xShmBarrier(EIO_REAL(f)); }
static int eio_shmunmap(sqlite3_file *f, int del)
{ return EIO_REAL(f)->pMethods->xShmUnmap(EIO_REAL(f), del); }

static int
eio_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out)
{
	struct eio_file *e = (struct eio_file *)f;
	int	 rc;

	(void)v;
	e->real = (sqlite3_file *)(e + 1);
	e->main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
	if ((rc = eio_real->xOpen(eio_real, name, e->real, flags, out)) != SQLITE_OK) {
		e->base.pMethods = NULL;
		return rc;
	}
	e->base.pMethods = &eio_methods;
	return SQLITE_OK;
}

static void
eio_register(void)
{
	ck_assert_ptr_nonnull(eio_real = sqlite3_vfs_find(NULL));
	eio_vfs = *eio_real;
	eio_vfs.zName = "perfmapd-eio";
	eio_vfs.szOsFile = (int)sizeof(struct eio_file) + eio_real->szOsFile;
	eio_vfs.xOpen = eio_open;
	eio_vfs.pNext = NULL;
	eio_methods = (sqlite3_io_methods){ .iVersion = 2, .xClose = eio_close,
	    .xRead = eio_read, .xWrite = eio_write, .xTruncate = eio_truncate,
	    .xSync = eio_sync, .xFileSize = eio_size, .xLock = eio_lock,
	    .xUnlock = eio_unlock, .xCheckReservedLock = eio_reserved,
	    .xFileControl = eio_fcntl, .xSectorSize = eio_sector,
	    .xDeviceCharacteristics = eio_dev, .xShmMap = eio_shmmap,
	    .xShmLock = eio_shmlock, .xShmBarrier = eio_shmbarrier,
	    .xShmUnmap = eio_shmunmap };
	ck_assert_int_eq(sqlite3_vfs_register(&eio_vfs, 1), SQLITE_OK);
}

/*
 * A read error in the start-up check (a transient EIO) is not damage:
 * the open fails and says so, and the index stays where it is.  Before,
 * any failure of quick_check's step was taken for damage: the index
 * (with the history of every deleted segment) was moved aside and
 * rebuilt from the segments left.  The next open, the disk well again,
 * finds it whole.
 */
START_TEST(test_check_read_error)
{
	struct index *ix = NULL;
	char	 err[512];

	sqlite3	*db;
	char	 path[512];

	two_segments();
	index_close(open_ix());
	/* every page in the main file (none in the WAL): quick_check reads them there */
	snprintf(path, sizeof(path), "%s/index.db", state);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL),
	    SQLITE_OK);
	{
		sqlite3_stmt *st;

		ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL),
		    SQLITE_OK);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		eio_from = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	eio_register();
	eio_on = 1;
	eio_failed = 0;
	ck_assert_int_eq(index_open(&ix, state, &conf, NULL, err, sizeof(err)), -1);
	eio_on = 0;
	sqlite3_vfs_unregister(&eio_vfs);
	ck_assert_int_gt(eio_failed, 0);
	ck_assert_msg(strstr(err, "quick_check") != NULL, "message '%s'", err);
	ck_assert_int_eq(count_aside(), 0);
	index_close(open_ix());
	ck_assert_int_eq(count_aside(), 0);
	check_rebuilt();
}
END_TEST

/* index_close(open_ix()) with the log (stderr) in a file: what it logged. */
static char *
open_logged(void)
{
	static char buf[16384];
	char	 path[256];
	ssize_t	 n;
	int	 fd, saved;

	snprintf(path, sizeof(path), "%s/log", tmpdir);
	ck_assert_int_ge(fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600), 0);
	fflush(stderr);
	ck_assert_int_ge(saved = dup(2), 0);
	ck_assert_int_eq(dup2(fd, 2), 2);
	index_close(open_ix());
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/*
 * SQLite quotes the damage it finds, here a name read from the file: the
 * log line says what happened in printable text, whatever the file holds.
 */
START_TEST(test_corrupt_reason_printable)
{
	const char *log, *p;

	two_segments();
	index_close(open_ix());
	damage(3);
	log = open_logged();
	ck_assert_int_eq(count_aside(), 1);
	check_rebuilt();
	ck_assert_msg(strstr(log, "malformed database schema (?A)") != NULL &&
	    strstr(log, "moved aside as") != NULL, "logged: %s", log);
	for (p = log; *p != '\0'; p++)
		ck_assert_msg(*p == '\n' || (*p >= 0x20 && *p <= 0x7e),
		    "byte 0x%02x at %td of the log", (unsigned char)*p, p - log);
}
END_TEST

START_TEST(test_corrupt_truncated) { corrupt_case(0); } END_TEST
START_TEST(test_corrupt_overwritten) { corrupt_case(1); } END_TEST
START_TEST(test_corrupt_header) { corrupt_case(2); } END_TEST
/*
 * A page past the first damaged: quick_check's rows name it (no "error
 * code=" of a read): moved aside and rebuilt (a slip in test_check_read_error's
 * change once took every such row for a read failure, and the start failed
 * for good).
 */
START_TEST(test_corrupt_leaf) { corrupt_case(4); } END_TEST

/*
 * A crash: the index knew segment 1 as open with some rows; the segment
 * was finished by repair since, and segment 2 was never indexed.
 */
START_TEST(test_reconcile_after_crash)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	uint8_t	 a[20];
	json_t	*o, *arr;
	char	 err[512];

	bid(a, 1);
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 100, T0 + 1 * SEC, 0);
	index_close(ix);	/* as the last commit before the crash */
	write_segment(1, T0, SEG1, 4, 1);
	write_segment(2, T0 + 10 * SEC, SEG2, 2, 0);
	index_close(open_ix());
	q = open_q();
	o = query(index_reader_segments(q, 0, &o, err, sizeof(err)), &o, err);
	arr = json_object_get(o, "segments");
	ck_assert_uint_eq(json_array_size(arr), 2);
	ck_assert_str_eq(jstr(json_array_get(arr, 0), "state"), "repaired");
	ck_assert_int_eq(jint(json_array_get(arr, 0), "start_ns"), T0);
	ck_assert_str_eq(jstr(json_array_get(arr, 1), "state"), "closed");
	json_decref(o);
	/* The map counted before the crash is not counted twice; the later one is lost. */
	o = query(index_reader_history(q, "/usr/bin/app", &o, err, sizeof(err)), &o, err);
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "objects"), 0), "nr_maps"), 1);
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "objects"), 0), "last_seen_ns"),
	    T0 + 3 * SEC);
	json_decref(o);
	o = query(index_reader_segment_buildids(q, "perf-000002-20261118T110650Z.data", &o, err,
	    sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 3);
	json_decref(o);
	index_reader_close(q);
}
END_TEST

/* Retention deletes a file: the segment row is marked, the objects stay (history). */
START_TEST(test_segment_deleted)
{
	struct index *ix;
	struct index_reader *q;
	json_t	*o;
	char	 err[512], hex[64];

	two_segments();
	ix = open_ix();
	index_segment_deleted(ix, "perf-000001-20261118T110640Z.data");
	ck_assert_int_eq(index_flush(ix), 0);
	q = open_q();
	o = query(index_reader_segments(q, 1, &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(json_array_get(json_object_get(o, "segments"), 0), "state"),
	    "deleted");
	json_decref(o);
	/*
	 * The object stays as history; which segments held it goes with them
	 * (rows of deleted segments would grow the index forever).
	 */
	bidhex(hex, 1);
	o = query(index_reader_buildid(q, hex, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_ge(json_array_size(json_object_get(o, "objects")), 1);
	{
		json_t	*seg;
		size_t	 i;

		json_array_foreach(json_object_get(o, "segments"), i, seg)
			ck_assert_str_ne(jstr(seg, "state"), "deleted");
	}
	json_decref(o);
	index_reader_close(q);
	index_close(ix);
}
END_TEST

START_TEST(test_retention)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	uint8_t	 a[20], b[20];
	int64_t	 old = walltime_now() - 3 * 3600 * SEC;
	json_t	*o;
	char	 err[512], hex[64];

	bid(a, 1);
	bid(b, 2);
	index_segment_open(ix, 1, "perf-000001-20200101T000000Z.data", old);
	index_add_mapping(ix, "/bin/gone", a, 20, BID_MMAP2, 1, old + SEC, 0);
	index_segment_close(ix, 1, old + 2 * SEC, 1, 1, 0, 1);
	index_segment_open(ix, 2, "perf-000002-20200101T000010Z.data", old + 2 * SEC);
	index_add_mapping(ix, "/bin/kept", b, 20, BID_MMAP2, 1, old + 3 * SEC, 0);
	index_close(ix);
	/* No files: both segments are marked deleted at the next open. */
	conf.index_retention_ms = 3600 * 1000;
	index_close(open_ix());
	index_close(open_ix());	/* the retention of the open before saw them live */
	q = open_q();
	ck_assert_int_eq(index_reader_history(q, "/bin/gone", &o, err, sizeof(err)), -ENOENT);
	o = query(index_reader_segments(q, 1, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "segments")), 0);
	json_decref(o);
	index_reader_close(q);
	/* its keys went with it: seen again, it is a new row, found by both */
	conf.index_retention_ms = 0;
	ix = open_ix();
	index_segment_open(ix, 3, "perf-000003-20200101T000020Z.data", old + 4 * SEC);
	index_add_mapping(ix, "/bin/gone", a, 20, BID_MMAP2, 1, old + 5 * SEC, 0);
	index_close(ix);
	q = open_q();
	o = query(index_reader_history(q, "/bin/gone", &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 1);
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "objects"), 0), "first_seen_ns"),
	    old + 5 * SEC);
	json_decref(o);
	buildid_to_hex(a, 20, hex);
	o = query(index_reader_buildid(q, hex, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 1);
	json_decref(o);
	index_reader_close(q);
}
END_TEST

/* ---------------------------------------------------------------- bounds */

static int
keep_none_cb(const struct binary *b, void *arg)
{
	return 0;
}

static void
gone_cb(const struct binary *b, void *arg)
{
	struct recorder_listener *l = arg;

	l->binary_gone(l->arg, b);
}

/*
 * The index as the daemon opens it, with its table of binaries: L is what
 * the table tells of a binary it forgets (binaries_prune with gone_cb).
 */
static struct index *
open_ix_bins(struct binaries *bins, struct recorder_listener *l)
{
	struct index *ix;
	char	 err[512];

	ck_assert_int_eq(binaries_init(bins), 0);
	ck_assert_msg(index_open(&ix, state, &conf, bins, err, sizeof(err)) == 0, "%s", err);
	index_listener(ix, l);
	return ix;
}

static void
close_ix_bins(struct index *ix, struct binaries *bins)
{
	index_close(ix);
	binaries_free(bins);
}

/*
 * A binary forgotten by the table (pruned at a rotation) and seen again
 * goes on in its old row: one row per (path, build-id), the counts and
 * times added up, its segments kept.  The table holds only what is live.
 */
START_TEST(test_forget_and_merge)
{
	struct binaries bins;
	struct recorder_listener l;
	struct index *ix;
	struct index_reader *q;
	uint8_t	 a[20];
	json_t	*o, *obj;
	char	 err[512];

	ix = open_ix_bins(&bins, &l);
	bid(a, 3);
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 10, T0 + 1 * SEC, 0);
	index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 11, T0 + 2 * SEC, 0);
	ck_assert_int_eq(index_flush(ix), 0);
	ck_assert_uint_eq(binaries_prune(&bins, keep_none_cb, gone_cb, &l), 1);
	ck_assert_uint_eq(binaries_live(&bins), 0);
	index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 12, T0 + 3 * SEC, 0);
	/* forgotten again before its first hand-over: written first, then gone */
	ck_assert_uint_eq(binaries_prune(&bins, keep_none_cb, gone_cb, &l), 1);
	index_add_mapping(ix, "/usr/bin/app", a, 20, BID_USER, 13, T0 + 4 * SEC, 0);
	close_ix_bins(ix, &bins);
	q = open_q();
	o = query(index_reader_history(q, "/usr/bin/app", &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 1);
	obj = json_array_get(json_object_get(o, "objects"), 0);
	ck_assert_int_eq(jint(obj, "nr_maps"), 4);
	ck_assert_int_eq(jint(obj, "nr_procs"), 4);
	ck_assert_int_eq(jint(obj, "first_seen_ns"), T0 + 1 * SEC);
	ck_assert_int_eq(jint(obj, "last_seen_ns"), T0 + 4 * SEC);
	ck_assert_int_eq(jint(obj, "segments"), 1);
	ck_assert_str_eq(jstr(obj, "source"), "userspace");
	json_decref(o);
	index_reader_close(q);
}
END_TEST

/*
 * A commit out of memory half way through a move of queued ops (segment
 * events) into its batch: the move is all or nothing.  Before, the ops
 * moved so far were in both batches, their strings owned twice: the
 * commit freed its batch as lost, and the queue's copies were freed again
 * (or written) at the next commit.
 */
START_TEST(test_batch_move_oom)
{
	struct write_batch dst, src;
	struct write_op *o;
	size_t	 i;

	memset(&dst, 0, sizeof(dst));
	memset(&src, 0, sizeof(src));
	for (i = 0; i < 63; i++)		/* one free slot of 64 */
		ck_assert_ptr_nonnull(batch_add(&dst, OP_OBJ));
	ck_assert_uint_eq(dst.cap, 64);
	for (i = 0; i < 3; i++) {
		ck_assert_ptr_nonnull(o = batch_add(&src, OP_UNRES));
		ck_assert_ptr_nonnull(o->owned = strdup("/usr/bin/queued"));
		o->s = o->owned;
	}
	check_fail_reallocs = 1;
	ck_assert_int_eq(batch_move(&dst, &src), -1);
	check_fail_reallocs = 0;
	ck_assert_msg(dst.n == 63 && src.n == 3,
	    "a failed move left %zu ops in the batch (63 before) and %zu queued (3): "
	    "the moved ones are owned by both", dst.n, src.n);
	ck_assert_int_eq(batch_move(&dst, &src), 0);
	ck_assert_uint_eq(dst.n, 66);
	ck_assert_uint_eq(src.n, 0);
	ck_assert_str_eq(dst.ops[65].s, "/usr/bin/queued");
	batch_free(&src);
	batch_free(&dst);
}
END_TEST

/*
 * A whole build-id is itself, whatever longer ids begin with it: a 16-byte
 * id (md5, uuid) and a user's 20-byte one made of it and four bytes more.
 * Before, the whole id was an "ambiguous prefix", for good: anyone could
 * make the host's short build-id unqueryable.
 */
START_TEST(test_buildid_whole_short)
{
	struct index *ix;
	struct index_reader *q;
	uint8_t	 x[20];
	char	 hx[41], hlong[41], err[512];
	json_t	*o = NULL;

	bid(x, 9);
	memset(x + 16, 0, 4);
	ix = open_ix();
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	index_add_mapping(ix, "/usr/bin/short", x, 16, BID_MMAP2, 100, T0 + 1 * SEC, 0);
	index_add_mapping(ix, "/home/u/long", x, 20, BID_MMAP2, 200, T0 + 2 * SEC, 0);
	index_commit(ix);
	ck_assert_int_eq(index_flush(ix), 0);
	index_close(ix);
	q = open_q();
	buildid_to_hex(x, 16, hx);
	buildid_to_hex(x, 20, hlong);
	ck_assert_msg(index_reader_buildid(q, hx, &o, err, sizeof(err)) == 0,
	    "the whole 16-byte id: %s", err);
	ck_assert_str_eq(jstr(o, "build_id"), hx);
	ck_assert_str_eq(jstr(json_array_get(json_object_get(o, "objects"), 0), "path"),
	    "/usr/bin/short");
	json_decref(o);
	o = NULL;
	ck_assert_int_eq(index_reader_buildid(q, hlong, &o, err, sizeof(err)), 0);
	ck_assert_str_eq(jstr(o, "build_id"), hlong);
	json_decref(o);
	o = NULL;
	hx[10] = '\0';			/* a prefix of both: ambiguous */
	ck_assert_int_eq(index_reader_buildid(q, hx, &o, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "ambiguous"));
	index_reader_close(q);
}
END_TEST

/* The write lock of index.db, from a connection of the test's: the writer waits for it. */
static sqlite3 *
writer_hold(void)
{
	char	 path[256];
	sqlite3	*lk;

	snprintf(path, sizeof(path), "%s/index.db", state);
	ck_assert_int_eq(sqlite3_open(path, &lk), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(lk, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	return lk;
}

static void
writer_release(sqlite3 *lk)
{
	ck_assert_int_eq(sqlite3_exec(lk, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(lk);
}

/*
 * A batch the writer could not write (a full disk, the write lock held
 * past the busy timeout; here a trigger of the test's refuses the new
 * object) took the open segment's rows with it.  Before, the segment was
 * then closed as "closed", and its binary was unknown to every query for
 * good, restarts included, though its file has the mapping.  Now the
 * close leaves it "open", and the next start indexes it from its file.
 */
START_TEST(test_lost_batch_rescanned)
{
	static const char name[] = "perf-000001-20261118T110640Z.data";
	struct index *ix;
	struct index_reader *q;
	sqlite3	*db;
	uint8_t	 id[20];
	json_t	*o;
	char	 err[512], path[256];
	int	 rc;

	ix = open_ix();
	index_segment_open(ix, 1, name, T0);
	ck_assert_int_eq(index_flush(ix), 0);
	snprintf(path, sizeof(path), "%s/index.db", state);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "CREATE TRIGGER refuse BEFORE INSERT ON objects "
	    "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END", NULL, NULL, NULL), SQLITE_OK);
	index_add_mapping(ix, "/usr/bin/app", (bid(id, 1), id), 20, BID_MMAP2, 100,
	    T0 + 1 * SEC, 0);
	/* the flush commits: a commit of the test's first could be written,
	 * and its error counted, before the flush takes its count */
	ck_assert_int_eq(index_flush(ix), -1);		/* lost */
	ck_assert_int_eq(sqlite3_exec(db, "DROP TRIGGER refuse", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	/* the recorder closes the segment: its file has the mapping */
	write_segment(1, T0, SEG1, 4, 0);
	index_segment_close(ix, 1, T0 + 10 * SEC, 4096, 0, 0, 4);
	ck_assert_int_eq(index_flush(ix), 0);
	index_close(ix);
	ix = open_ix();					/* the next start */
	index_close(ix);
	q = open_q();
	o = NULL;
	rc = index_reader_history(q, "/usr/bin/app", &o, err, sizeof(err));
	ck_assert_msg(rc == 0, "the binary of a lost batch is unknown after a restart (%d): %s",
	    rc, err);
	json_decref(o);
	index_reader_close(q);
}
END_TEST

/*
 * The writer held up (another connection holds the write lock) while
 * batches queue: it runs them in one transaction, the rows of the plain
 * ones together (writer.c, writer_run_batches).  An object new in one
 * batch and seen again in the next (its row inserted before the update,
 * its object_segments row the later one's); a binary forgotten and seen
 * again (the batch after is not plain: its key goes to the new id after
 * the rows before it are in).
 */
START_TEST(test_batches_grouped)
{
	struct binaries bins;
	struct recorder_listener l;
	struct index *ix;
	struct index_reader *q;
	struct index_stats st;
	sqlite3	*lk;
	sqlite3_stmt *s;
	uint8_t	 id[20];
	uint64_t seq;
	json_t	*o, *obj;
	char	 err[512], path[256], hex[64];

	ix = open_ix_bins(&bins, &l);
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	ck_assert_int_eq(index_flush(ix), 0);
	lk = writer_hold();
	index_add_mapping(ix, "/bin/a", (bid(id, 1), id), 20, BID_MMAP2, 1, T0 + 1 * SEC, 0);
	index_handoff(ix);
	usleep(50000);		/* the writer takes it, and waits for the lock */
	index_add_mapping(ix, "/bin/p", (bid(id, 2), id), 20, BID_MMAP2, 10, T0 + 2 * SEC, 0);
	index_add_mapping(ix, "/bin/s", (bid(id, 5), id), 20, BID_MMAP2, 30, T0 + 2 * SEC, 0);
	index_handoff(ix);
	index_add_mapping(ix, "/bin/p", (bid(id, 2), id), 20, BID_MMAP2, 11, T0 + 3 * SEC, 0);
	index_add_mapping(ix, "/bin/s", (bid(id, 5), id), 20, BID_MMAP2, 31, T0 + 3 * SEC, 0);
	index_add_mapping(ix, "/bin/r", (bid(id, 4), id), 20, BID_MMAP2, 40, T0 + 3 * SEC, 0);
	index_handoff(ix);
	ck_assert_uint_eq(binaries_prune(&bins, keep_none_cb, gone_cb, &l), 4);
	index_add_mapping(ix, "/bin/p", (bid(id, 2), id), 20, BID_MMAP2, 12, T0 + 4 * SEC, 0);
	seq = index_handoff(ix);
	writer_release(lk);
	ck_assert_int_eq(index_flush(ix), 0);
	index_get_stats(ix, &st);
	ck_assert_uint_eq(st.errors, 0);
	/* at least two batches went in one transaction */
	ck_assert_uint_lt(st.batches, seq);
	close_ix_bins(ix, &bins);
	/* every object_segments row is an object's, under the id the loop gave it last */
	snprintf(path, sizeof(path), "%s/index.db", state);
	ck_assert_int_eq(sqlite3_open(path, &lk), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(lk, "SELECT (SELECT count(*) FROM object_segments "
	    "WHERE object_id NOT IN (SELECT id FROM objects)), (SELECT max(id) FROM objects "
	    "WHERE path = '/bin/p')", -1, &s, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(s, 0), 0);
	ck_assert_int_eq(sqlite3_column_int(s, 1), 5);	/* a, p, s, r, then p again */
	sqlite3_finalize(s);
	sqlite3_close(lk);
	q = open_q();
	o = query(index_reader_history(q, "/bin/p", &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 1);
	obj = json_array_get(json_object_get(o, "objects"), 0);
	ck_assert_int_eq(jint(obj, "nr_maps"), 3);
	ck_assert_int_eq(jint(obj, "first_seen_ns"), T0 + 2 * SEC);
	ck_assert_int_eq(jint(obj, "last_seen_ns"), T0 + 4 * SEC);
	ck_assert_int_eq(jint(obj, "segments"), 1);
	json_decref(o);
	bidhex(hex, 5);
	o = query(index_reader_buildid(q, hex, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 1);
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "objects"), 0), "nr_maps"), 2);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "segments")), 1);
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "segments"), 0), "nr_maps"), 2);
	json_decref(o);
	o = query(index_reader_lookup(q, "/bin/r", T0 + 3 * SEC, &o, err, sizeof(err)), &o, err);
	bidhex(hex, 4);
	ck_assert_str_eq(jstr(json_object_get(o, "current"), "build_id"), hex);
	json_decref(o);
	index_reader_close(q);
}
END_TEST

/* The rows of the view object_segments, "path:seq:first:last:nr_maps" (times in s after T0) by path, seq. */
static void
view_rows(char *out, size_t len)
{
	char	 path[256];
	sqlite3	*db;
	sqlite3_stmt *s;
	size_t	 n = 0;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/index.db", state);
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT o.path, x.seq, (x.first_seen - ?1) / ?2, "
	    "(x.last_seen - ?1) / ?2, x.nr_maps FROM object_segments x JOIN objects o "
	    "ON o.id = x.object_id ORDER BY o.path, x.seq", -1, &s, NULL), SQLITE_OK);
	sqlite3_bind_int64(s, 1, T0);
	sqlite3_bind_int64(s, 2, SEC);
	while (sqlite3_step(s) == SQLITE_ROW && n < len)
		n += (size_t)snprintf(out + n, len - n, "%s%s:%lld:%lld:%lld:%lld", n ? " " : "",
		    (const char *)sqlite3_column_text(s, 0), sqlite3_column_int64(s, 1),
		    sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3),
		    sqlite3_column_int64(s, 4));
	sqlite3_finalize(s);
	/* a sighting is in the row's fold or in object_segs, never both; a fold is in its run */
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM objects o JOIN "
	    "object_segs x ON x.object_id = o.id AND x.seq = o.seq), (SELECT count(*) FROM "
	    "objects o WHERE o.seq IS NOT NULL AND NOT EXISTS (SELECT 1 FROM segments s WHERE "
	    "s.seq = o.seq AND o.id BETWEEN s.id_lo AND s.id_hi))", -1, &s, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(s, 0), 0);
	ck_assert_int_eq(sqlite3_column_int(s, 1), 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
}

/* How many rows of objects fold a segment, and how many rows object_segs has. */
static void
fold_counts(int *folded, int *segs)
{
	char	 path[256];
	sqlite3	*db;
	sqlite3_stmt *s;

	snprintf(path, sizeof(path), "%s/index.db", state);
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM objects WHERE "
	    "seq IS NOT NULL), (SELECT count(*) FROM object_segs)", -1, &s, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	*folded = sqlite3_column_int(s, 0);
	*segs = sqlite3_column_int(s, 1);
	sqlite3_finalize(s);
	sqlite3_close(db);
}

/* The objects of segment SEQ as "path:nr_maps_in_segment ..." (index_reader_segment_buildids). */
static void
segment_objects(struct index_reader *q, const char *seq, char *out, size_t len)
{
	json_t	*o, *obj;
	size_t	 i, n = 0;
	char	 err[512];

	out[0] = '\0';
	o = query(index_reader_segment_buildids(q, seq, &o, err, sizeof(err)), &o, err);
	json_array_foreach(json_object_get(o, "objects"), i, obj)
		n += (size_t)snprintf(out + n, len - n, "%s%s:%lld", n ? " " : "",
		    jstr(obj, "path"), (long long)jint(obj, "nr_maps_in_segment"));
	ck_assert_int_eq(jint(json_object_get(o, "segment"), "objects"), (int64_t)i);
	json_decref(o);
}

/*
 * Schema 6 (schema.c): an object's sightings in the segment it is new in
 * are kept in its row, those in other segments in object_segs, and the
 * answers are those of one row per (object, segment): sightings again in
 * the same segment in a later batch, before and after a rotation; a later
 * segment; a rotation before
 * the hand-over (the row new in the next segment, its first segment a
 * sighting of a past one); a binary forgotten and seen again (its row
 * takes a new id outside its segment's run: the fold moves out); a
 * deleted segment (its folds go with it).
 */
START_TEST(test_fold)
{
	struct binaries bins;
	struct recorder_listener l;
	struct index *ix;
	struct index_reader *q;
	uint8_t	 id[20];
	char	 err[512], rows[1024], hex[64];
	json_t	*o, *obj;
	int	 folded, segs;

	ix = open_ix_bins(&bins, &l);
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	index_add_mapping(ix, "/bin/a", (bid(id, 1), id), 20, BID_MMAP2, 1, T0 + 1 * SEC, 0);
	index_add_mapping(ix, "/bin/b", (bid(id, 2), id), 20, BID_MMAP2, 2, T0 + 1 * SEC, 0);
	ck_assert_int_eq(index_flush(ix), 0);
	fold_counts(&folded, &segs);
	ck_assert_int_eq(folded, 2);		/* both new rows hold segment 1 */
	ck_assert_int_eq(segs, 0);
	view_rows(rows, sizeof(rows));
	ck_assert_str_eq(rows, "/bin/a:1:1:1:1 /bin/b:1:1:1:1");
	/* b seen again in segment 1, a batch later: into its row */
	index_add_mapping(ix, "/bin/b", (bid(id, 2), id), 20, BID_MMAP2, 9, T0 + 3 * SEC, 0);
	ck_assert_int_eq(index_flush(ix), 0);
	fold_counts(&folded, &segs);
	ck_assert_int_eq(segs, 0);
	/* a seen again in segment 1, handed over only after the rotation: into its row */
	index_add_mapping(ix, "/bin/a", (bid(id, 1), id), 20, BID_MMAP2, 3, T0 + 2 * SEC, 0);
	index_segment_open(ix, 2, "perf-000002-20261118T110650Z.data", T0 + 10 * SEC);
	index_add_mapping(ix, "/bin/a", (bid(id, 1), id), 20, BID_MMAP2, 4, T0 + 11 * SEC, 0);
	index_add_mapping(ix, "/bin/c", (bid(id, 3), id), 20, BID_MMAP2, 5, T0 + 12 * SEC, 0);
	/* a rotation before the hand-over: c is new, seen in segments 2 and 3 */
	index_segment_open(ix, 3, "perf-000003-20261118T110700Z.data", T0 + 20 * SEC);
	index_add_mapping(ix, "/bin/c", (bid(id, 3), id), 20, BID_MMAP2, 6, T0 + 21 * SEC, 0);
	ck_assert_int_eq(index_flush(ix), 0);
	/* b forgotten and seen again: its row takes a new id */
	ck_assert_uint_eq(binaries_prune(&bins, keep_none_cb, gone_cb, &l), 3);
	index_add_mapping(ix, "/bin/b", (bid(id, 2), id), 20, BID_MMAP2, 7, T0 + 22 * SEC, 0);
	ck_assert_int_eq(index_flush(ix), 0);
	index_add_mapping(ix, "/bin/b", (bid(id, 2), id), 20, BID_MMAP2, 8, T0 + 23 * SEC, 0);
	ck_assert_int_eq(index_flush(ix), 0);
	view_rows(rows, sizeof(rows));
	ck_assert_str_eq(rows, "/bin/a:1:1:2:2 /bin/a:2:11:11:1 /bin/b:1:1:3:2 "
	    "/bin/b:3:22:23:2 /bin/c:2:12:12:1 /bin/c:3:21:21:1");
	fold_counts(&folded, &segs);
	ck_assert_int_eq(folded, 2);		/* a's segment 1, c's 3 */
	ck_assert_int_eq(segs, 4);

	q = open_q();
	segment_objects(q, "1", rows, sizeof(rows));
	ck_assert_str_eq(rows, "/bin/a:2 /bin/b:2");
	segment_objects(q, "2", rows, sizeof(rows));
	ck_assert_str_eq(rows, "/bin/a:1 /bin/c:1");
	segment_objects(q, "3", rows, sizeof(rows));
	ck_assert_str_eq(rows, "/bin/b:2 /bin/c:1");
	o = query(index_reader_history(q, "/bin/a", &o, err, sizeof(err)), &o, err);
	obj = json_array_get(json_object_get(o, "objects"), 0);
	ck_assert_int_eq(jint(obj, "segments"), 2);
	ck_assert_int_eq(jint(obj, "nr_maps"), 3);
	json_decref(o);
	bidhex(hex, 2);
	o = query(index_reader_buildid(q, hex, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "segments")), 2);
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "segments"), 0), "seq"), 1);
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "segments"), 1), "nr_maps"), 2);
	json_decref(o);
	index_reader_close(q);

	/* segment 1 deleted: a's fold and b's row of it go */
	index_segment_deleted(ix, "perf-000001-20261118T110640Z.data");
	ck_assert_int_eq(index_flush(ix), 0);
	view_rows(rows, sizeof(rows));
	ck_assert_str_eq(rows, "/bin/a:2:11:11:1 /bin/b:3:22:23:2 /bin/c:2:12:12:1 "
	    "/bin/c:3:21:21:1");
	q = open_q();
	o = query(index_reader_history(q, "/bin/a", &o, err, sizeof(err)), &o, err);
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "objects"), 0), "segments"), 1);
	json_decref(o);
	index_reader_close(q);
	close_ix_bins(ix, &bins);
}
END_TEST

static int64_t
db_used_bytes(void)
{
	char	 path[256];
	sqlite3	*db;
	sqlite3_stmt *s;
	int64_t	 v = -1;

	snprintf(path, sizeof(path), "%s/index.db", state);
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT (SELECT page_count FROM "
	    "pragma_page_count()) - (SELECT freelist_count FROM pragma_freelist_count())",
	    -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0) * 16384;
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

/* PATH: "/xxx...", LEN - 1 bytes long (the tests write a number at 1500 into it). */
static void
long_path(char *path, size_t len)
{
	memset(path, 'x', len - 1);
	path[0] = '/';
	path[len - 1] = '\0';
}

/*
 * 2,000 execs through long hard-linked paths, then more: index.db stays
 * within db_max_size, the oldest history no segment references goes, and
 * what the open segment references stays.
 */
START_TEST(test_db_max_size)
{
	struct index *ix;
	struct index_reader *q;
	char	 path[2048], name[64], err[512];
	uint8_t	 a[20];
	json_t	*o;
	int	 i, round;

	conf.index_max_size = 2U << 20;
	ix = open_ix();
	bid(a, 4);
	long_path(path, sizeof(path));
	for (round = 0; round < 4; round++) {
		snprintf(name, sizeof(name), "perf-%06d-20261118T110640Z.data", round + 1);
		index_segment_open(ix, (uint64_t)round + 1, name, T0 + round * 100 * SEC);
		for (i = 0; i < (round < 3 ? 1000 : 300); i++) {
			snprintf(path + 1500, 32, "/%d-%d", round, i);
			index_add_mapping(ix, path, a, 20, BID_MMAP2, (uint32_t)i,
			    T0 + (round * 100 + 1) * SEC, 0);
		}
		index_segment_close(ix, (uint64_t)round + 1, T0 + (round * 100 + 50) * SEC,
		    1, 1, 0, 1);
		/* every segment but the last is deleted: its objects are history */
		if (round < 3)
			index_segment_deleted(ix, name);
		ck_assert_int_eq(index_flush(ix), 0);
	}
	index_close(ix);
	ck_assert_int_le(db_used_bytes(), 2 << 20);
	q = open_q();
	snprintf(path + 1500, 32, "/0-0");
	ck_assert_int_eq(index_reader_history(q, path, &o, err, sizeof(err)), -ENOENT);
	snprintf(path + 1500, 32, "/3-299");
	o = query(index_reader_history(q, path, &o, err, sizeof(err)), &o, err);
	json_decref(o);
	index_reader_close(q);
}
END_TEST

/*
 * Above db_max_size with nothing to forget (every object referenced by a
 * segment still there): before, each batch, however small, scanned and
 * sorted all of objects and unresolved again, and any client's query
 * makes a batch every 50 ms.  Now the look waits for the file to grow by
 * a 64th of the limit, or for a segment to go.
 */
START_TEST(test_prune_stuck)
{
	struct index *ix;
	struct index_stats st;
	char	 path[2048];
	uint8_t	 a[20];
	uint64_t runs;
	int	 i;

	conf.index_max_size = 2U << 20;
	ix = open_ix();
	bid(a, 4);
	long_path(path, sizeof(path));
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	for (i = 0; i < 1200; i++) {
		snprintf(path + 1500, 32, "/%d", i);
		index_add_mapping(ix, path, a, 20, BID_MMAP2, (uint32_t)i, T0 + SEC, 0);
	}
	ck_assert_int_eq(index_flush(ix), 0);
	index_get_stats(ix, &st);
	ck_assert_uint_ge(st.prune_runs, 1);		/* above the limit: looked */
	runs = st.prune_runs;
	for (i = 0; i < 60; i++) {			/* 60 small batches */
		snprintf(path + 1500, 32, "/more-%d", i);
		index_add_mapping(ix, path, a, 20, BID_MMAP2, 5000, T0 + 2 * SEC, 0);
		ck_assert_int_eq(index_flush(ix), 0);
	}
	index_get_stats(ix, &st);
	ck_assert_msg(st.prune_runs - runs <= 8, "%llu scans for history to forget in 60 batches "
	    "with none to forget", (unsigned long long)(st.prune_runs - runs));
	ck_assert_uint_eq(st.pruned, 0);
	index_close(ix);
}
END_TEST

/* ---------------------------------------------------------------- schema 6: the folds, further cases */

/* An empty file for segment NAME: reconciliation at open leaves a closed segment alone. */
static void
touch_segment(const char *name)
{
	char	 p[512];
	FILE	*f;

	snprintf(p, sizeof(p), "%s/segments/%s", state, name);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fclose(f);
}

/* How many rows of objects fold a segment whose state is 'deleted' (or that has no row). */
static int
folds_of_deleted(void)
{
	char	 path[256];
	sqlite3	*db;
	sqlite3_stmt *s;
	int	 n;

	snprintf(path, sizeof(path), "%s/index.db", state);
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM objects o WHERE "
	    "o.seq IS NOT NULL AND NOT EXISTS (SELECT 1 FROM segments s WHERE s.seq = o.seq AND "
	    "s.state != 'deleted')) + (SELECT count(*) FROM object_segs x WHERE NOT EXISTS "
	    "(SELECT 1 FROM segments s WHERE s.seq = x.seq AND s.state != 'deleted'))",
	    -1, &s, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	n = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return n;
}

/*
 * A binary forgotten and seen again in the segment its row folds: one
 * row per (object, segment) has all its maps of the segment (3), as the
 * row's nr_maps has them.
 */
START_TEST(test_fold_merge_same_segment)
{
	struct binaries bins;
	struct recorder_listener l;
	struct index *ix;
	uint8_t	 a[20];
	char	 rows[1024];

	ix = open_ix_bins(&bins, &l);
	bid(a, 3);
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 10, T0 + 1 * SEC, 0);
	index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 11, T0 + 2 * SEC, 0);
	ck_assert_int_eq(index_flush(ix), 0);
	ck_assert_uint_eq(binaries_prune(&bins, keep_none_cb, gone_cb, &l), 1);
	index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 12, T0 + 3 * SEC, 0);
	ck_assert_int_eq(index_flush(ix), 0);
	close_ix_bins(ix, &bins);
	view_rows(rows, sizeof(rows));
	ck_assert_str_eq(rows, "/usr/bin/app:1:1:3:3");
}
END_TEST

/*
 * Restart on an existing file: ids go on from max(id); a known object
 * seen again takes a new id (its fold moves out), a new one folds the
 * new segment.
 */
START_TEST(test_fold_restart)
{
	struct index *ix;
	struct index_reader *q;
	uint8_t	 id[20];
	char	 rows[1024];

	ix = open_ix();
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	index_add_mapping(ix, "/bin/a", (bid(id, 1), id), 20, BID_MMAP2, 1, T0 + 1 * SEC, 0);
	index_add_mapping(ix, "/bin/b", (bid(id, 2), id), 20, BID_MMAP2, 2, T0 + 2 * SEC, 0);
	index_segment_close(ix, 1, T0 + 5 * SEC, 1, 1, 0, 1);
	index_segment_open(ix, 2, "perf-000002-20261118T110650Z.data", T0 + 10 * SEC);
	index_add_mapping(ix, "/bin/b", (bid(id, 2), id), 20, BID_MMAP2, 3, T0 + 11 * SEC, 0);
	index_add_mapping(ix, "/bin/c", (bid(id, 3), id), 20, BID_MMAP2, 4, T0 + 12 * SEC, 0);
	index_segment_close(ix, 2, T0 + 15 * SEC, 1, 1, 0, 1);
	index_close(ix);
	touch_segment("perf-000001-20261118T110640Z.data");
	touch_segment("perf-000002-20261118T110650Z.data");
	ix = open_ix();
	index_segment_open(ix, 3, "perf-000003-20261118T110700Z.data", T0 + 20 * SEC);
	index_add_mapping(ix, "/bin/a", (bid(id, 1), id), 20, BID_MMAP2, 5, T0 + 21 * SEC, 0);
	index_add_mapping(ix, "/bin/d", (bid(id, 4), id), 20, BID_MMAP2, 6, T0 + 22 * SEC, 0);
	index_add_mapping(ix, "/bin/c", (bid(id, 3), id), 20, BID_MMAP2, 7, T0 + 23 * SEC, 0);
	ck_assert_int_eq(index_flush(ix), 0);
	index_add_mapping(ix, "/bin/a", (bid(id, 1), id), 20, BID_MMAP2, 8, T0 + 24 * SEC, 0);
	index_add_mapping(ix, "/bin/d", (bid(id, 4), id), 20, BID_MMAP2, 9, T0 + 25 * SEC, 0);
	index_close(ix);
	touch_segment("perf-000003-20261118T110700Z.data");
	index_close(open_ix());
	view_rows(rows, sizeof(rows));
	ck_assert_str_eq(rows, "/bin/a:1:1:1:1 /bin/a:3:21:24:2 /bin/b:1:2:2:1 /bin/b:2:11:11:1 "
	    "/bin/c:2:12:12:1 /bin/c:3:23:23:1 /bin/d:3:22:25:2");
	q = open_q();
	segment_objects(q, "1", rows, sizeof(rows));
	ck_assert_str_eq(rows, "/bin/a:1 /bin/b:1");
	segment_objects(q, "3", rows, sizeof(rows));
	ck_assert_str_eq(rows, "/bin/a:2 /bin/c:1 /bin/d:2");
	index_reader_close(q);
}
END_TEST

/*
 * Batches grouped in one transaction (the writer held up): an object
 * new, seen again, a rotation, seen in the next segment, forgotten and
 * seen again (renumbered in the same transaction as its insert), then
 * a second rotation.
 */
START_TEST(test_fold_grouped)
{
	struct binaries bins;
	struct recorder_listener l;
	struct index *ix;
	struct index_reader *q;
	sqlite3	*lk;
	uint8_t	 id[20];
	char	 rows[1024];

	ix = open_ix_bins(&bins, &l);
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	ck_assert_int_eq(index_flush(ix), 0);
	lk = writer_hold();
	index_add_mapping(ix, "/bin/a", (bid(id, 1), id), 20, BID_MMAP2, 1, T0 + 1 * SEC, 0);
	index_handoff(ix);
	usleep(50000);
	index_add_mapping(ix, "/bin/a", (bid(id, 1), id), 20, BID_MMAP2, 2, T0 + 2 * SEC, 0);
	index_add_mapping(ix, "/bin/b", (bid(id, 2), id), 20, BID_MMAP2, 3, T0 + 2 * SEC, 0);
	index_handoff(ix);
	index_add_mapping(ix, "/bin/b", (bid(id, 2), id), 20, BID_MMAP2, 4, T0 + 3 * SEC, 0);
	index_segment_open(ix, 2, "perf-000002-20261118T110650Z.data", T0 + 10 * SEC);
	index_add_mapping(ix, "/bin/a", (bid(id, 1), id), 20, BID_MMAP2, 5, T0 + 11 * SEC, 0);
	index_handoff(ix);
	ck_assert_uint_eq(binaries_prune(&bins, keep_none_cb, gone_cb, &l), 2);
	index_add_mapping(ix, "/bin/b", (bid(id, 2), id), 20, BID_MMAP2, 6, T0 + 12 * SEC, 0);
	index_add_mapping(ix, "/bin/a", (bid(id, 1), id), 20, BID_MMAP2, 7, T0 + 12 * SEC, 0);
	index_handoff(ix);
	index_add_mapping(ix, "/bin/a", (bid(id, 1), id), 20, BID_MMAP2, 8, T0 + 13 * SEC, 0);
	index_segment_open(ix, 3, "perf-000003-20261118T110700Z.data", T0 + 20 * SEC);
	index_add_mapping(ix, "/bin/b", (bid(id, 2), id), 20, BID_MMAP2, 9, T0 + 21 * SEC, 0);
	index_add_mapping(ix, "/bin/a", (bid(id, 1), id), 20, BID_MMAP2, 10, T0 + 22 * SEC, 0);
	index_handoff(ix);
	writer_release(lk);
	ck_assert_int_eq(index_flush(ix), 0);
	close_ix_bins(ix, &bins);
	view_rows(rows, sizeof(rows));
	ck_assert_str_eq(rows, "/bin/a:1:1:2:2 /bin/a:2:11:13:3 /bin/a:3:22:22:1 "
	    "/bin/b:1:2:3:2 /bin/b:2:12:12:1 /bin/b:3:21:21:1");
	q = open_q();
	segment_objects(q, "2", rows, sizeof(rows));
	ck_assert_str_eq(rows, "/bin/a:3 /bin/b:1");
	index_reader_close(q);
}
END_TEST

/*
 * The current segment deleted (its file removed) while a new object's
 * sightings in it wait for the hand-over: no row may hold it after.
 */
START_TEST(test_fold_current_deleted)
{
	struct index *ix = open_ix();
	uint8_t	 id[20];
	char	 rows[1024];

	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	index_add_mapping(ix, "/bin/a", (bid(id, 1), id), 20, BID_MMAP2, 1, T0 + 1 * SEC, 0);
	ck_assert_int_eq(index_flush(ix), 0);
	index_add_mapping(ix, "/bin/b", (bid(id, 2), id), 20, BID_MMAP2, 2, T0 + 2 * SEC, 0);
	index_segment_deleted(ix, "perf-000001-20261118T110640Z.data");
	ck_assert_int_eq(index_flush(ix), 0);
	index_close(ix);
	view_rows(rows, sizeof(rows));
	ck_assert_int_eq(folds_of_deleted(), 0);
	ck_assert_str_eq(rows, "");
}
END_TEST

/*
 * Rows pruned (db_max_size) after their segment was deleted, seen again
 * in a later segment and again in the same one within a grouped
 * transaction: they go in again, one row per (object, segment).
 */
START_TEST(test_fold_pruned_seen_again)
{
	struct index *ix;
	sqlite3	*lk;
	char	 path[2048], name[64], rows[4096];
	uint8_t	 a[20];
	int	 i;

	conf.index_max_size = 1U << 20;
	ix = open_ix();
	bid(a, 4);
	long_path(path, sizeof(path));
	snprintf(name, sizeof(name), "perf-000001-20261118T110640Z.data");
	index_segment_open(ix, 1, name, T0);
	for (i = 0; i < 1500; i++) {
		snprintf(path + 1500, 32, "/%d", i);
		index_add_mapping(ix, path, a, 20, BID_MMAP2, (uint32_t)i, T0 + 1 * SEC, 0);
	}
	index_segment_close(ix, 1, T0 + 5 * SEC, 1, 1, 0, 1);
	index_segment_deleted(ix, name);
	ck_assert_int_eq(index_flush(ix), 0);
	index_segment_open(ix, 2, "perf-000002-20261118T110650Z.data", T0 + 10 * SEC);
	ck_assert_int_eq(index_flush(ix), 0);
	lk = writer_hold();
	snprintf(path + 1500, 32, "/%d", 0);
	index_add_mapping(ix, path, a, 20, BID_MMAP2, 1, T0 + 11 * SEC, 0);
	index_handoff(ix);
	usleep(50000);
	index_add_mapping(ix, path, a, 20, BID_MMAP2, 2, T0 + 12 * SEC, 0);
	index_handoff(ix);
	writer_release(lk);
	ck_assert_int_eq(index_flush(ix), 0);
	index_close(ix);
	snprintf(path + 1500, 32, "/%d", 0);
	view_rows(rows, sizeof(rows));
	snprintf(name, sizeof(name), ":2:11:12:2");
	ck_assert_int_eq(strlen(rows), strlen(path) + strlen(name));
	ck_assert_str_eq(rows + strlen(path), name);
}
END_TEST

/*
 * A rebuild from the segment files hands objects over before their
 * segment's row exists when a batch goes out mid-scan (commit_rows): the
 * answers are those of a rebuild in one batch a segment.
 */
START_TEST(test_fold_rebuild_small_batches)
{
	struct index_reader *q;
	char	 want[2048], got[2048], w1[512], w2[512], g1[512], g2[512], p[256];

	two_segments();
	index_close(open_ix());
	view_rows(want, sizeof(want));
	q = open_q();
	segment_objects(q, "1", w1, sizeof(w1));
	segment_objects(q, "2", w2, sizeof(w2));
	index_reader_close(q);
	snprintf(p, sizeof(p), "%s/index.db", state);
	ck_assert_int_eq(unlink(p), 0);
	conf.index_commit_rows = 1;
	index_close(open_ix());
	view_rows(got, sizeof(got));
	ck_assert_str_eq(got, want);
	q = open_q();
	segment_objects(q, "1", g1, sizeof(g1));
	segment_objects(q, "2", g2, sizeof(g2));
	index_reader_close(q);
	ck_assert_str_eq(g1, w1);
	ck_assert_str_eq(g2, w2);
	check_rebuilt();
}
END_TEST

/*
 * A segment open at a crash, finished by repair and scanned at the next
 * open (its mappings not counted again): the map counted in it before the
 * crash stays counted in the segment, as in the object's row.
 */
START_TEST(test_fold_repaired_counts)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	uint8_t	 a[20];
	char	 rows[1024];

	bid(a, 1);
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 100, T0 + 1 * SEC, 0);
	index_close(ix);	/* as the last commit before the crash */
	write_segment(1, T0, SEG1, 4, 1);
	index_close(open_ix());
	q = open_q();
	segment_objects(q, "1", rows, sizeof(rows));
	ck_assert_str_eq(rows, "/usr/bin/app:1 /usr/lib/libc.so.6:0 [kernel.kallsyms]:0");
	index_reader_close(q);
}
END_TEST

/* ---------------------------------------------------------------- kernel, unresolved */

static void
write_file(const char *path, const void *buf, size_t len)
{
	FILE	*f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
}

START_TEST(test_module_sections)
{
	struct index_section *s;
	struct index *ix;
	struct index_reader *q;
	size_t	 n;
	char	 p[512], err[512], hk[64], hm[64];
	uint8_t	 kid[20], note[64];
	uint32_t hdr[3] = { 4, 20, 3 };	/* namesz, descsz, NT_GNU_BUILD_ID */
	json_t	*o, *m;

	snprintf(p, sizeof(p), "%s/sys", tmpdir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/sys/fake_mod", tmpdir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/sys/fake_mod/sections", tmpdir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/sys/fake_mod/notes", tmpdir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/sys/fake_mod/sections/.text", tmpdir);
	write_file(p, "0xffffffffc0a01000\n", 19);
	snprintf(p, sizeof(p), "%s/sys/fake_mod/sections/.data", tmpdir);
	write_file(p, "0xffffffffc0a05000\n", 19);
	snprintf(p, sizeof(p), "%s/sys/fake_mod/sections/.bad", tmpdir);
	write_file(p, "zzz\n", 4);
	snprintf(p, sizeof(p), "%s/sys/fake_mod/sections/.empty", tmpdir);
	write_file(p, "", 0);
	bid(kid, 42);
	memcpy(note, hdr, 12);
	memcpy(note + 12, "GNU", 4);
	memcpy(note + 16, kid, 20);
	snprintf(p, sizeof(p), "%s/sys/fake_mod/notes/.note.gnu.build-id", tmpdir);
	write_file(p, note, 36);

	snprintf(p, sizeof(p), "%s/sys/fake_mod/sections", tmpdir);
	ck_assert_int_eq(index_read_sections(p, &s, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(s[0].name, ".data");
	ck_assert_uint_eq(s[0].addr, 0xffffffffc0a05000ULL);
	ck_assert_str_eq(s[1].name, ".text");
	free(s);
	snprintf(p, sizeof(p), "%s/sys/none/sections", tmpdir);
	ck_assert_int_eq(index_read_sections(p, &s, &n), -ENOENT);

	snprintf(p, sizeof(p), "%s/modules", tmpdir);
	write_file(p, "fake_mod 16384 0 - Live 0xffffffffc0a00000\n"
	    "nosys_mod 8192 1 fake_mod, Live 0xffffffffc0b00000 (OE)\n", 98);
	ix = open_ix();
	bid(kid, 99);
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);
	snprintf(err, sizeof(err), "%s/sys", tmpdir);
	ck_assert_int_eq(index_scan_kernel(ix, kid, 20, p, err, T0), 2);
	/* Unchanged at the next segment: only last_seen moves. */
	ck_assert_int_eq(index_scan_kernel(ix, kid, 20, p, err, T0 + 5 * SEC), 2);
	/* An empty /proc/modules (no loadable modules, like this machine). */
	snprintf(p, sizeof(p), "%s/empty", tmpdir);
	write_file(p, "", 0);
	ck_assert_int_eq(index_scan_kernel(ix, kid, 20, p, err, T0 + 6 * SEC), 0);
	ck_assert_int_eq(index_scan_kernel(ix, kid, 20, "/nonexistent", err, T0), -ENOENT);
	ck_assert_int_eq(index_flush(ix), 0);
	index_close(ix);

	q = open_q();
	o = query(index_reader_kernel(q, &o, err, sizeof(err)), &o, err);
	bidhex(hk, 99);
	bidhex(hm, 42);
	ck_assert_str_eq(jstr(json_array_get(json_object_get(o, "kernel"), 0), "build_id"), hk);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "modules")), 2);
	m = json_array_get(json_object_get(o, "modules"), 0);
	ck_assert_str_eq(jstr(m, "name"), "fake_mod");
	ck_assert_str_eq(jstr(m, "build_id"), hm);
	ck_assert_str_eq(jstr(m, "addr"), "0xffffffffc0a00000");
	ck_assert_int_eq(jint(m, "size"), 16384);
	ck_assert_int_eq(jint(m, "last_seen_ns"), T0 + 5 * SEC);
	ck_assert_str_eq(jstr(json_object_get(m, "sections"), ".text"), "0xffffffffc0a01000");
	ck_assert_uint_eq(json_object_size(json_object_get(m, "sections")), 2);
	m = json_array_get(json_object_get(o, "modules"), 1);
	ck_assert_str_eq(jstr(m, "name"), "nosys_mod");
	ck_assert(json_is_null(json_object_get(m, "build_id")));
	ck_assert_uint_eq(json_object_size(json_object_get(m, "sections")), 0);
	json_decref(o);
	/* The module's build-id is an object too: buildid finds it. */
	o = query(index_reader_buildid(q, hm, &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(json_array_get(json_object_get(o, "objects"), 0), "kind"), "module");
	json_decref(o);
	index_reader_close(q);
}
END_TEST

START_TEST(test_unresolved)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	json_t	*o, *u;
	char	 err[512];

	index_add_unresolved(ix, "/usr/bin/stripped", BIDC_NO_NOTE, T0);
	index_add_unresolved(ix, "/usr/bin/stripped", BIDC_NO_NOTE, T0 + SEC);
	index_add_unresolved(ix, "/data/blob", BIDC_NOT_ELF, T0);
	index_close(ix);
	q = open_q();
	o = query(index_reader_summary(q, &o, err, sizeof(err)), &o, err);
	ck_assert_int_eq(jint(o, "unresolved_maps"), 3);
	ck_assert_int_eq(jint(o, "schema"), INDEX_SCHEMA_VERSION);
	u = json_array_get(json_object_get(o, "unresolved"), 0);
	ck_assert_str_eq(jstr(u, "path"), "/usr/bin/stripped");
	ck_assert_int_eq(jint(u, "nr_maps"), 2);
	ck_assert_str_eq(jstr(u, "reason"), "no-build-id");
	ck_assert_str_eq(jstr(json_array_get(json_object_get(o, "unresolved"), 1), "reason"),
	    "not-elf");
	json_decref(o);
	index_reader_close(q);
}
END_TEST

/* The cached copy in perf's layout: a directory with elf, or a plain file. */
START_TEST(test_cached_path)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	char	 p[512], hex[64], err[512];
	json_t	*o;

	replace_scenario(ix);
	index_close(ix);
	bidhex(hex, 1);
	snprintf(p, sizeof(p), "%s/debug", state);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/debug/.build-id", state);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/debug/.build-id/%.2s", state, hex);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/debug/.build-id/%.2s/%s", state, hex, hex + 2);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/debug/.build-id/%.2s/%s/elf", state, hex, hex + 2);
	write_file(p, "ELF", 3);
	q = open_q();
	o = query(index_reader_buildid(q, hex, &o, err, sizeof(err)), &o, err);
	ck_assert_str_eq(jstr(o, "cached"), p);
	json_decref(o);
	index_reader_close(q);
}
END_TEST

/*
 * The daemon's replies hold at most a number of rows per list (a user's
 * files could make one of hundreds of MB): cut, and said so; the list of
 * segments on disk, which users do not make and retention bounds, is
 * whole, and with the deleted ones (the index keeps them for good) cut.
 */
START_TEST(test_row_limit)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	char	 err[512], hex[64];
	json_t	*o;

	replace_scenario(ix);
	q = open_q();
	index_reader_set_limits(q, 1, 0);
	o = query(index_reader_history(q, "/usr/bin/app", &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 1);
	ck_assert(json_is_true(json_object_get(o, "truncated")));
	bidhex(hex, 2);		/* the newest kept: the path's build-id now */
	ck_assert_str_eq(jstr(json_array_get(json_object_get(o, "objects"), 0), "build_id"), hex);
	json_decref(o);
	{
		/* the old build-id back (its old row, first seen long ago): it is the one kept */
		uint8_t	 a[20];
		char	 name[128];

		bid(a, 1);
		seg_name(name, sizeof(name), 3, T0 + 20 * SEC);
		index_segment_open(ix, 3, name, T0 + 20 * SEC);
		index_add_mapping(ix, "/usr/bin/app", a, 20, BID_MMAP2, 300, T0 + 25 * SEC, 0);
		ck_assert_int_eq(index_flush(ix), 0);
	}
	o = query(index_reader_history(q, "/usr/bin/app", &o, err, sizeof(err)), &o, err);
	bidhex(hex, 1);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 1);
	ck_assert_str_eq(jstr(json_array_get(json_object_get(o, "objects"), 0), "build_id"), hex);
	json_decref(o);
	bidhex(hex, 3);		/* libc: in both segments */
	o = query(index_reader_buildid(q, hex, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "segments")), 1);
	ck_assert(json_is_true(json_object_get(o, "truncated")));
	/* cut, the newest kept (perfmapctl(8)); the oldest were */
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "segments"), 0), "seq"), 2);
	ck_assert_int_eq(jint(o, "first_seen_ns"), T0);
	ck_assert_int_eq(jint(o, "last_seen_ns"), T0 + 10 * SEC);
	json_decref(o);
	o = query(index_reader_segment_buildids(q, "1", &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 1);
	ck_assert(json_is_true(json_object_get(o, "truncated")));
	json_decref(o);
	o = query(index_reader_segments(q, 0, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "segments")), 3);
	ck_assert_ptr_null(json_object_get(o, "truncated"));
	json_decref(o);
	/* with the deleted ones, which the index keeps for good: cut, the newest kept */
	o = query(index_reader_segments(q, 1, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "segments")), 1);
	ck_assert(json_is_true(json_object_get(o, "truncated")));
	ck_assert_int_eq(jint(json_array_get(json_object_get(o, "segments"), 0), "seq"), 3);
	json_decref(o);
	/* within the limit, or none: whole, and nothing said */
	o = query(index_reader_lookup(q, "/usr/bin/app", T0 + 2 * SEC, &o, err, sizeof(err)), &o,
	    err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "mapped")), 1);
	ck_assert_ptr_null(json_object_get(o, "truncated"));
	json_decref(o);
	index_reader_set_limits(q, 0, 0);
	o = query(index_reader_history(q, "/usr/bin/app", &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 2);
	ck_assert_ptr_null(json_object_get(o, "truncated"));
	json_decref(o);
	index_reader_close(q);
	index_close(ix);
}
END_TEST

/*
 * And at most a number of bytes of JSON (a user's long paths of control
 * bytes, six bytes each in the reply, made one of hundreds of MB within the
 * row limit): 40 paths of ~3 KB of \x01 under one build-id are ~720 KB of
 * rows; under a limit of 100 KB the reply is cut near it and says so, its
 * JSON within the limit and a row; with no limit, whole.
 */
START_TEST(test_byte_limit)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	char	 err[512], hex[64], name[128], path[3100], *js;
	uint8_t	 a[20];
	size_t	 i, n, len;
	json_t	*o;

	bid(a, 7);
	bidhex(hex, 7);
	seg_name(name, sizeof(name), 1, T0);
	index_segment_open(ix, 1, name, T0);
	for (i = 0; i < 40; i++) {
		memset(path, '\x01', sizeof(path));
		path[0] = '/';
		snprintf(path + sizeof(path) - 8, 8, "/f%03zu", i);
		index_add_mapping(ix, path, a, 20, BID_USER, 100 + (uint32_t)i, T0 + SEC, 0);
	}
	ck_assert_int_eq(index_flush(ix), 0);
	q = open_q();
	index_reader_set_limits(q, 10000, 100000);
	o = query(index_reader_buildid(q, hex, &o, err, sizeof(err)), &o, err);
	n = json_array_size(json_object_get(o, "objects"));
	ck_assert_msg(n >= 3 && n < 40, "%zu of 40 rows under a limit of 100 kB", n);
	ck_assert(json_is_true(json_object_get(o, "truncated")));
	js = json_dumps(o, JSON_COMPACT);
	len = strlen(js);
	free(js);
	ck_assert_msg(len < 100000 + 2 * 20000, "a reply of %zu bytes under a limit of 100 kB", len);
	json_decref(o);
	/* the count starts again with each setting: the same reply again */
	index_reader_set_limits(q, 10000, 100000);
	o = query(index_reader_buildid(q, hex, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), n);
	json_decref(o);
	index_reader_set_limits(q, 10000, 0);
	o = query(index_reader_buildid(q, hex, &o, err, sizeof(err)), &o, err);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "objects")), 40);
	ck_assert_ptr_null(json_object_get(o, "truncated"));
	js = json_dumps(o, JSON_COMPACT);
	ck_assert_msg(strlen(js) > 40 * 3000 * 6, "whole: %zu bytes", strlen(js));
	free(js);
	json_decref(o);
	index_reader_close(q);
	index_close(ix);
}
END_TEST

/* A copied state directory, no daemon, no -wal: read-only queries work and write nothing. */
START_TEST(test_readonly_copy)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	struct stat a, b;
	char	 cmd[512], copy[256], path[300], err[512];
	json_t	*o;

	replace_scenario(ix);
	index_close(ix);
	snprintf(copy, sizeof(copy), "%s/copy", tmpdir);
	snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", state, copy);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/index.db", copy);
	ck_assert_int_eq(stat(path, &a), 0);
	q = index_reader_open(copy, err, sizeof(err));
	ck_assert_msg(q != NULL, "%s", err);
	o = query(index_reader_history(q, "/usr/bin/app", &o, err, sizeof(err)), &o, err);
	json_decref(o);
	index_reader_close(q);
	ck_assert_int_eq(stat(path, &b), 0);
	ck_assert_int_eq(a.st_mtime, b.st_mtime);
	ck_assert_int_eq(a.st_size, b.st_size);
	ck_assert_ptr_null(index_reader_open(tmpdir, err, sizeof(err)));	/* no index there */
}
END_TEST

/* Readers see committed rows while the writer goes on (WAL). */
START_TEST(test_concurrent_reader)
{
	struct index *ix = open_ix();
	struct index_reader *q;
	uint8_t	 id[20];
	char	 path[64], err[512];
	json_t	*o;
	int	 i;

	replace_scenario(ix);
	q = open_q();
	index_segment_open(ix, 3, "perf-000003-20261118T110700Z.data", T0 + 20 * SEC);
	for (i = 0; i < 5000; i++) {
		bid(id, i + 1000);
		snprintf(path, sizeof(path), "/bin/x%d", i);
		index_add_mapping(ix, path, id, 20, BID_MMAP2, 1, T0 + 21 * SEC, 0);
		if (i % 1000 == 0) {
			index_commit(ix);
			o = query(index_reader_history(q, "/usr/bin/app", &o, err, sizeof(err)), &o, err);
			json_decref(o);
		}
	}
	ck_assert_int_eq(index_flush(ix), 0);
	o = query(index_reader_history(q, "/bin/x4999", &o, err, sizeof(err)), &o, err);
	json_decref(o);
	index_reader_close(q);
	index_close(ix);
}
END_TEST

static Suite *
index_suite(void)
{
	Suite	*s = suite_create("index");
	TCase	*tc;

	tc = tcase_create("time");
	tcase_add_test(tc, test_time_parse);
	tcase_add_test(tc, test_time_of_day);
	tcase_add_test(tc, test_time_format);
	suite_add_tcase(s, tc);

	tc = tcase_create("writer");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_replace);
	tcase_add_test(tc, test_rollback);
	tcase_add_test(tc, test_rollback_gap);
	tcase_add_test(tc, test_segment_clock_step);
	tcase_add_test(tc, test_lookup_live_after);
	tcase_add_test(tc, test_wal_readers);
	tcase_add_test(tc, test_commit_news);
	tcase_add_test(tc, test_handoff);
	tcase_add_test(tc, test_two_namespaces);
	tcase_add_test(tc, test_deleted_suffix);
	tcase_add_test(tc, test_reopen);
	tcase_add_test(tc, test_commit_rows);
	tcase_add_test(tc, test_batches_grouped);
	tcase_add_test(tc, test_lost_batch_rescanned);
	tcase_add_test(tc, test_prune_stuck);
	tcase_add_test(tc, test_fold);
	tcase_add_test(tc, test_fold_merge_same_segment);
	tcase_add_test(tc, test_fold_restart);
	tcase_add_test(tc, test_fold_grouped);
	tcase_add_test(tc, test_fold_current_deleted);
	tcase_add_test(tc, test_fold_pruned_seen_again);
	tcase_add_test(tc, test_fold_rebuild_small_batches);
	tcase_add_test(tc, test_fold_repaired_counts);
	tcase_add_test(tc, test_migration_from_v1);
	tcase_add_test(tc, test_migration_from_v3);
	tcase_add_test(tc, test_migration_from_v4);
	tcase_add_test(tc, test_newer_refused);
	tcase_add_test(tc, test_rebuild_from_segments);
	tcase_add_test(tc, test_rebuild_exit_times);
	tcase_add_test(tc, test_rebuild_unknown_ns);
	tcase_add_test(tc, test_rebuild_module_name);
	tcase_add_test(tc, test_corrupt_truncated);
	tcase_add_test(tc, test_corrupt_overwritten);
	tcase_add_test(tc, test_corrupt_header);
	tcase_add_test(tc, test_check_read_error);
	tcase_add_test(tc, test_corrupt_leaf);
	tcase_add_test(tc, test_corrupt_reason_printable);
	tcase_add_test(tc, test_reconcile_after_crash);
	tcase_add_test(tc, test_segment_deleted);
	tcase_add_test(tc, test_retention);
	tcase_add_test(tc, test_forget_and_merge);
	tcase_add_test(tc, test_db_max_size);
	tcase_add_test(tc, test_module_sections);
	tcase_add_test(tc, test_unresolved);
	tcase_add_test(tc, test_cached_path);
	tcase_add_test(tc, test_readonly_copy);
	tcase_add_test(tc, test_row_limit);
	tcase_add_test(tc, test_batch_move_oom);
	tcase_add_test(tc, test_buildid_whole_short);
	tcase_add_test(tc, test_byte_limit);
	tcase_add_test(tc, test_concurrent_reader);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(index_suite)
