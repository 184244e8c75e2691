/*
 * walltime.c - wall-clock times as users type them and as perfmapd prints
 * them (see walltime.h).  Shared by the index's read side, the control
 * commands and perfmapctl.
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
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
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

int
walltime_parse(const char *s, int64_t now, int64_t *out, char *err, size_t errlen)
{
	struct tm tm, chk;
	const char *p = s;
	int64_t	 frac = 0, off = 0;
	int	 v, zone = 0, have_date = 1;
	time_t	 t;

	if (s == NULL || *s == '\0')
		return time_error(err, errlen, "", "empty");
	if (strcmp(s, "now") == 0) {
		*out = now;
		return 0;
	}
	if (s[0] == '-' || s[0] == '+')
		return parse_relative(s, now, out, err, errlen);
	if (s[0] == '@')
		return parse_unix(s, out, err, errlen);

	memset(&tm, 0, sizeof(tm));
	if (isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[1]) && p[2] == ':') {
		/* A time of day alone: today, local time. */
		time_t	 tn = (time_t)(now / 1000000000LL);

		have_date = 0;
		localtime_r(&tn, &tm);
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
		else
			goto zone;
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
	chk = tm;
	if (zone) {
		t = timegm(&tm);
		t -= (time_t)off;
	} else {
		tm.tm_isdst = -1;
		t = mktime(&tm);
	}
	/* nanoseconds in an int64_t: until 2262-04-11 */
	if (t == (time_t)-1 || t < 0 || t > INT64_MAX / 1000000000LL - 1)
		return time_error(err, errlen, s, "out of range");
	if (have_date && tm.tm_mday != chk.tm_mday && (zone || tm.tm_hour == chk.tm_hour))
		return time_error(err, errlen, s, "no such day");
	*out = (int64_t)t * 1000000000LL + frac;
	return 0;
}
