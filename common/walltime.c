/*
 * walltime.c - wall-clock times as users type them and as perfmapd prints
 * them, and the monotonic clock (see walltime.h).  Shared by the index's
 * read side, the control commands, perfmapctl and the daemon's threads.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "walltime.h"

int64_t
walltime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts_ns(&ts);
}

uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts_ns(&ts);
}

void
walltime_format(int64_t ns, char *buf, size_t len)
{
	struct tm tm;
	time_t	 t;
	int64_t	 sec = ns / 1000000000LL, rem = ns % 1000000000LL;
	char	 s[32];

	if (rem < 0) {
		rem += 1000000000LL;
		sec--;
	}
	t = (time_t)sec;
	if (gmtime_r(&t, &tm) == NULL) {
		snprintf(buf, len, "?");
		return;
	}
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03dZ", s, (int)(rem / 1000000));
}

/* ---------------------------------------------------------------- dates */

static int
time_error(char *err, size_t errlen, const char *s, const char *why)
{
	snprintf(err, errlen, "bad time '%s': %s", s, why);
	return -1;
}

/* N digits exactly into *V; returns the pointer past them or NULL. */
static const char *
digits(const char *p, int n, int *v)
{
	int	 i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)p[i]))
			return NULL;
		*v = *v * 10 + (p[i] - '0');
	}
	return p + n;
}

/* ".250" -> 250000000 ns; returns the pointer past it. */
static const char *
fraction(const char *p, int64_t *ns)
{
	int64_t	 scale = 100000000LL;

	*ns = 0;
	if (*p != '.' && *p != ',')
		return p;
	for (p++; isdigit((unsigned char)*p); p++) {
		*ns += (*p - '0') * scale;
		scale /= 10;
	}
	return p;
}

static int
parse_relative(const char *s, int64_t now, int64_t *out, char *err, size_t errlen)
{
	const char *p = s + 1;
	int64_t	 total = 0;

	if (*p == '\0')
		return time_error(err, errlen, s, "a duration must follow the sign");
	while (*p != '\0') {
		int64_t	 n = 0, unit;

		if (!isdigit((unsigned char)*p))
			return time_error(err, errlen, s, "expected a number, as in -10m");
		for (; isdigit((unsigned char)*p); p++) {
			if (n > INT64_MAX / 10 / 1000000000LL)
				return time_error(err, errlen, s, "too large");
			n = n * 10 + (*p - '0');
		}
		if (strncmp(p, "ms", 2) == 0) {
			unit = 1000000LL;
			p += 2;
		} else {
			switch (*p) {
			case 's': unit = 1000000000LL; break;
			case 'm': unit = 60 * 1000000000LL; break;
			case 'h': unit = 3600 * 1000000000LL; break;
			case 'd': unit = 86400 * 1000000000LL; break;
			case 'w': unit = 7 * 86400 * 1000000000LL; break;
			default:
				return time_error(err, errlen, s,
				    "units are ms, s, m, h, d, w, as in -10m or -1h30m");
			}
			p++;
		}
		if (n > (INT64_MAX / 2 - total) / unit)
			return time_error(err, errlen, s, "too large");
		total += n * unit;
	}
	*out = s[0] == '-' ? now - total : now + total;
	return 0;
}

static int
parse_unix(const char *s, int64_t *out, char *err, size_t errlen)
{
	const char *p = s + 1;
	int64_t	 sec = 0, frac;

	if (!isdigit((unsigned char)*p))
		return time_error(err, errlen, s, "expected @<unix seconds>");
	for (; isdigit((unsigned char)*p); p++) {
		if (sec > (INT64_MAX / 1000000000LL - 9) / 10)
			return time_error(err, errlen, s, "too large");
		sec = sec * 10 + (*p - '0');
	}
	p = fraction(p, &frac);
	if (*p != '\0')
		return time_error(err, errlen, s, "expected @<unix seconds>[.fraction]");
	*out = sec * 1000000000LL + frac;
	return 0;
}

/* HH:MM[:SS[.frac]] at P into TM and *FRAC; returns the pointer past it. */
static const char *
clock_part(const char *p, struct tm *tm, int64_t *frac)
{
	int	 v;

	*frac = 0;
	if ((p = digits(p, 2, &v)) == NULL || v > 23)
		return NULL;
	tm->tm_hour = v;
	if (*p++ != ':' || (p = digits(p, 2, &v)) == NULL || v > 59)
		return NULL;
	tm->tm_min = v;
	if (*p == ':') {
		if ((p = digits(p + 1, 2, &v)) == NULL || v > 60)
			return NULL;
		tm->tm_sec = v;
		p = fraction(p, frac);
	}
	return p;
}

/* Do A and B name the same wall-clock minute and second of the same day? */
static int
same_wall(const struct tm *a, const struct tm *b)
{
	return a->tm_year == b->tm_year && a->tm_mon == b->tm_mon && a->tm_mday == b->tm_mday &&
	    a->tm_hour == b->tm_hour && a->tm_min == b->tm_min && a->tm_sec == b->tm_sec;
}

/* "+02:00" for an offset east of UTC of OFF seconds. */
static void
format_offset(long off, char *buf, size_t len)
{
	long	 a = off < 0 ? -off : off;

	snprintf(buf, len, "%c%02ld:%02ld", off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
}

/*
 * The instant of the local time TM.  A time the clocks skip when they go
 * forward names no instant, one they repeat when they go back names two
 * (a change of daylight-saving time or of the zone's standard offset):
 * mktime() would pick one of them silently (the gap's 02:30 became
 * 03:30), so both are refused, the second with the offsets that make it
 * exact.  The candidates are the wall time less the zone's offset a day
 * before and a day after (one change at most in between); a candidate
 * stands if it reads back as the same wall time.  local_candidates gives
 * them (the earlier first) and how many stand, or -1 out of range, and
 * *BEFORE, the first candidate whether or not it stands (where a skipped
 * time would be); local_instant returns 0, or -1 with WHY set.
 */
static int
local_candidates(const struct tm *tm, time_t t[2], long off[2], time_t *before)
{
	struct tm want = *tm, back;
	time_t	 wall, x;
	long	 xo;
	int	 i, n = 0;

	if (want.tm_sec == 60)		/* a leap second: the minute's end, as before */
		want.tm_sec = 59;
	if ((wall = timegm(&want)) == (time_t)-1)
		return -1;
	*before = wall;
	for (i = 0; i < 2; i++) {
		time_t	 near = wall + (i == 0 ? -86400 : 86400), c;
		int	 j;

		if (localtime_r(&near, &back) == NULL)
			continue;
		c = wall - back.tm_gmtoff;
		if (i == 0)
			*before = c;
		for (j = 0; j < n && t[j] != c; j++)
			;
		if (j < n || localtime_r(&c, &back) == NULL || !same_wall(&back, &want))
			continue;
		t[n] = c;
		off[n++] = back.tm_gmtoff;
	}
	if (n == 2 && t[0] > t[1]) {	/* the earlier first */
		x = t[0], t[0] = t[1], t[1] = x;
		xo = off[0], off[0] = off[1], off[1] = xo;
	}
	return n;
}

static int
local_instant(const struct tm *tm, int day, time_t *out, char *why, size_t whylen)
{
	time_t	 t[2], before;
	long	 off[2];
	char	 o0[16], o1[16];
	int	 n = local_candidates(tm, t, off, &before);

	if (n < 0) {
		snprintf(why, whylen, "out of range");
		return -1;
	}
	/*
	 * DAY: a date alone, the day's start.  Where the clocks skip its
	 * midnight (America/Havana, Asia/Beirut), the day starts where the
	 * skip ends: the instant midnight would be by the offset before;
	 * where they repeat it (Asia/Amman until 2022), at the first.
	 */
	if (n == 0 && day) {
		*out = before;
		return 0;
	}
	if (n == 2 && day) {		/* midnight came twice: the day starts at the first */
		*out = t[0] < t[1] ? t[0] : t[1];
		return 0;
	}
	if (n == 0) {
		snprintf(why, whylen, "no such local time: the clocks skip it when they go "
		    "forward (give a UTC offset or Z to name an instant)");
		return -1;
	}
	if (n == 2) {
		format_offset(off[0], o0, sizeof(o0));
		format_offset(off[1], o1, sizeof(o1));
		snprintf(why, whylen, "the clocks go back here and this local time comes twice, "
		    "at %s and at %s: give the offset (as in %04d-%02d-%02dT%02d:%02d%s)", o0, o1,
		    tm->tm_year + 1900, tm->tm_mon + 1, tm->tm_mday, tm->tm_hour, tm->tm_min, o0);
		return -1;
	}
	*out = t[0] + (tm->tm_sec == 60);
	return 0;
}

/* Is S a time of day alone ("10:40", "10:40:30.5")? */
static int
is_time_of_day(const char *s)
{
	return isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[1]) && s[2] == ':';
}

/* The end of a window, as a time of day alone: at most this far ahead of now. */
#define WINDOW_AHEAD_MAX	(12 * 3600 * 1000000000LL)

/* TM's date moved by DAYS (the calendar's, whatever the zone). */
static void
add_days(struct tm *tm, int days)
{
	struct tm d = { .tm_year = tm->tm_year, .tm_mon = tm->tm_mon,
	    .tm_mday = tm->tm_mday + days, .tm_hour = 12 };
	time_t	 t = timegm(&d);

	gmtime_r(&t, &d);
	tm->tm_year = d.tm_year;
	tm->tm_mon = d.tm_mon;
	tm->tm_mday = d.tm_mday;
}

/*
 * How a time of day alone is dated: LATEST, its last occurrence at or
 * before REF; FIRST_AFTER, its first one after REF.
 */
enum tod_rule { TOD_LATEST, TOD_FIRST_AFTER };

static int
parse(const char *s, int64_t now, enum tod_rule rule, int64_t ref, int64_t *out,
    char *err, size_t errlen)
{
	struct tm tm, chk;
	const char *p = s;
	char	 why[224];
	int64_t	 frac = 0, off = 0;
	int	 v, zone = 0, have_date = 1, date_only = 0;
	time_t	 t;

	if (s == NULL || *s == '\0')
		return time_error(err, errlen, "", "empty");
	tzset();	/* the zone as it is now (localtime_r reads it once) */
	if (strcmp(s, "now") == 0) {
		*out = now;
		return 0;
	}
	if (s[0] == '-' || s[0] == '+')
		return parse_relative(s, now, out, err, errlen);
	if (s[0] == '@')
		return parse_unix(s, out, err, errlen);

	memset(&tm, 0, sizeof(tm));
	if (is_time_of_day(p)) {
		/* A time of day alone: on REF's local date (its zone's, below), then moved by RULE. */
		time_t	 tn = (time_t)(ref / 1000000000LL);

		have_date = 0;
		if (localtime_r(&tn, &tm) == NULL)
			return time_error(err, errlen, s, "out of range");
		tm.tm_sec = 0;
	} else {
		if ((p = digits(p, 4, &v)) == NULL || v < 1970 || *p++ != '-')
			return time_error(err, errlen, s, "expected YYYY-MM-DD[THH:MM[:SS]]"
			    "[Z|+HH:MM], @<unix seconds>, or -10m");
		tm.tm_year = v - 1900;
		if ((p = digits(p, 2, &v)) == NULL || v < 1 || v > 12 || *p++ != '-')
			return time_error(err, errlen, s, "bad month");
		tm.tm_mon = v - 1;
		if ((p = digits(p, 2, &v)) == NULL || v < 1 || v > 31)
			return time_error(err, errlen, s, "bad day");
		tm.tm_mday = v;
		if (*p == 'T' || *p == 't' || *p == ' ')
			p++;
		else if (*p != '\0' && *p != 'Z' && *p != 'z' && *p != '+' && *p != '-')
			return time_error(err, errlen, s, "expected T or a space after the date");
		else {
			date_only = 1;
			goto zone;
		}
	}
	if ((p = clock_part(p, &tm, &frac)) == NULL)
		return time_error(err, errlen, s, "bad time of day (HH:MM or HH:MM:SS)");
zone:
	if (*p == 'Z' || *p == 'z') {
		zone = 1;
		p++;
	} else if (*p == '+' || *p == '-') {
		int	 sign = *p == '-' ? -1 : 1, hh, mm = 0;

		if ((p = digits(p + 1, 2, &hh)) == NULL || hh > 23)
			return time_error(err, errlen, s, "bad UTC offset (+HH:MM)");
		if (*p == ':')
			p++;
		if (isdigit((unsigned char)*p) && ((p = digits(p, 2, &mm)) == NULL || mm > 59))
			return time_error(err, errlen, s, "bad UTC offset (+HH:MM)");
		zone = 1;
		off = sign * ((int64_t)hh * 3600 + mm * 60);
	}
	if (*p != '\0')
		return time_error(err, errlen, s, "trailing characters");
	if (!have_date && zone) {
		/* on REF's date in that zone, not the local one (a day apart near midnight) */
		time_t	 tz = (time_t)(ref / 1000000000LL) + (time_t)off;
		struct tm d;

		if (gmtime_r(&tz, &d) == NULL)
			return time_error(err, errlen, s, "out of range");
		tm.tm_year = d.tm_year;
		tm.tm_mon = d.tm_mon;
		tm.tm_mday = d.tm_mday;
	}
	/* The date itself first (February 30th), whatever the zone. */
	chk = tm;
	chk.tm_hour = chk.tm_min = chk.tm_sec = 0;
	if (have_date && (timegm(&chk) == (time_t)-1 || chk.tm_mday != tm.tm_mday))
		return time_error(err, errlen, s, "no such day");
	/*
	 * A time of day alone: the day before (LATEST) or after (FIRST_AFTER)
	 * while REF's date puts it on the wrong side of REF (once in local
	 * time or a zone given; a change of the clocks can take two).  A day that
	 * repeats the time stays when either of its instants is on REF's
	 * side, one that skips it when where it would be is: and then it is
	 * refused, as with a date, rather than another day's given.
	 */
	for (v = 0; !have_date && v < 3; v++) {
		time_t	 t2[2], before;
		long	 o2[2];
		int	 n = 1, move;

		if (zone)
			t2[0] = timegm(&tm) - (time_t)off;
		else if ((n = local_candidates(&tm, t2, o2, &before)) < 0)
			return time_error(err, errlen, s, "out of range");
		else if (n == 0) {
			t2[0] = before;	/* skipped: where it would be, by the offset before the change */
			n = 1;
		}
		/* the day moves if every instant it names (two: the clocks repeat it) is on the wrong side */
		if (rule == TOD_LATEST)
			move = (int64_t)t2[0] * 1000000000LL + frac > ref ? -1 : 0;
		else
			move = (int64_t)t2[n - 1] * 1000000000LL + frac <= ref ? 1 : 0;
		if (move == 0)
			break;
		add_days(&tm, move);
	}
	if (zone) {
		t = timegm(&tm);
		t -= (time_t)off;
	} else if (local_instant(&tm, date_only, &t, why, sizeof(why)) < 0)
		return time_error(err, errlen, s, why);
	/* nanoseconds in an int64_t: until 2262-04-11 */
	if (t == (time_t)-1 || t < 0 || t > INT64_MAX / 1000000000LL - 1)
		return time_error(err, errlen, s, "out of range");
	*out = (int64_t)t * 1000000000LL + frac;
	return 0;
}

int
walltime_parse(const char *s, int64_t now, int64_t *out, char *err, size_t errlen)
{
	return parse(s, now, TOD_LATEST, now, out, err, errlen);
}

int
walltime_parse_after(const char *s, int64_t now, int64_t after, int64_t *out, char *err,
    size_t errlen)
{
	return parse(s, now, TOD_FIRST_AFTER, after, out, err, errlen);
}

int
walltime_window(const char *since, const char *until, int64_t now, int64_t len,
    int64_t *s, int64_t *u, char *err, size_t errlen)
{
	char	 a[40], b[40];

	*u = now;
	if (since != NULL && walltime_parse(since, now, s, err, errlen) < 0)
		return -1;
	if (until != NULL && (since != NULL ?
	    walltime_parse_after(until, now, *s, u, err, errlen) :
	    walltime_parse(until, now, u, err, errlen)) < 0)
		return -1;
	if (since == NULL)
		*s = *u - len;
	if (*s >= *u) {
		walltime_format(*s, a, sizeof(a));
		walltime_format(*u, b, sizeof(b));
		snprintf(err, errlen, "--since %s is not before --until %s", a, b);
		return -1;
	}
	/*
	 * --until 10:30 after --since 10:40 is tomorrow's 10:30: an end most
	 * of a day ahead is far likelier a slip than a wish; a date says it.
	 */
	if (since != NULL && until != NULL && is_time_of_day(until) && *u - now > WINDOW_AHEAD_MAX) {
		walltime_format(*u, b, sizeof(b));
		snprintf(err, errlen, "--until %s is %s, %lld h from now: give its date if that is "
		    "what is meant", until, b, (long long)((*u - now) / 3600000000000LL));
		return -1;
	}
	return 0;
}
