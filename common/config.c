/*
 * config.c - the configuration file.  Every key is one row of config_keys[]:
 * section, name, type, where it lives in struct config, its default (as it
 * would be written in the file) and its bounds.  The defaults are applied by
 * parsing those strings, the shipped conf/perfmapd.conf and the man page are
 * checked against the table by tests/check_config.c, and config_dump walks it
 * to print the effective configuration.
 *
 * Parsing is libinih fed by our own line reader, which
 *   - strips leading white space, so indentation is allowed and there are no
 *     continuation lines (an indented "key = value" is never glued onto the
 *     value above it);
 *   - refuses NUL bytes and lines longer than inih's buffer instead of letting
 *     inih split them silently;
 *   - rejects unknown [sections] on their own line, even when empty;
 *   - stops at the first error, so the message we report is the first one.
 * inih itself reports syntax errors (no '=', no ']') only as a line number.
 *
 * config_load parses over whatever CONF holds; reload parses into a copy of
 * the defaults and swaps only on success, so a bad file never half-applies.
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "config.h"

#define KEY_FIELD(f)	.offset = offsetof(struct config, f),		\
			.size = sizeof(((struct config *)0)->f)

#define KIB	(UINT64_C(1) << 10)
#define MIB	(UINT64_C(1) << 20)
#define GIB	(UINT64_C(1) << 30)

/*
 * The longest line inih takes: its buffer holds the line, a newline and a
 * NUL.  String values are kept short enough that "key = value" fits, so
 * that config_dump's output always loads.
 */
#define CONFIG_LINE_MAX	(INI_MAX_LINE - 2)

#define MSEC_SECOND	UINT64_C(1000)
#define MSEC_MINUTE	(60 * MSEC_SECOND)
#define MSEC_HOUR	(60 * MSEC_MINUTE)
#define MSEC_DAY	(24 * MSEC_HOUR)
/*
 * A duration without a maximum of its own: 100 years.  The daemon works
 * in nanoseconds (int64_t: 292 years) and counts back from now with them.
 */
#define MSEC_DURATION_MAX	(36500 * MSEC_DAY)

_Static_assert(sizeof(enum event_kind) == sizeof(int), "enum is not an int");
_Static_assert(sizeof(enum buildid_mode) == sizeof(int), "enum is not an int");
_Static_assert(sizeof(enum capture_mode) == sizeof(int), "enum is not an int");

static const char *const config_event_names[] = {
	[EVENT_AUTO] = "auto",
	[EVENT_CYCLES] = "cycles",
	[EVENT_CPU_CLOCK] = "cpu-clock",
	NULL
};

static const char *const config_buildid_names[] = {
	[BUILDID_AUTO] = "auto",
	[BUILDID_MMAP3] = "mmap3",
	[BUILDID_MMAP2] = "mmap2",
	[BUILDID_USERSPACE] = "userspace",
	NULL
};

static const char *const config_callchain_names[] = { "none", "fp", NULL };

static const char *const config_compress_names[] = {
	[COMPRESS_NONE] = "none",
	[COMPRESS_ZSTD] = "zstd",
	NULL
};

static const char *const config_capture_names[] = {
	[CAPTURE_EAGER] = "eager",
	[CAPTURE_LAZY] = "lazy",
	[CAPTURE_OFF] = "off",
	NULL
};

static const char *const config_segment_mode_names[] = {
	[SEGMENT_CONTINUOUS] = "continuous",
	[SEGMENT_FLIGHT] = "flight",
	NULL
};

/* Keys of one section must be adjacent: config_dump prints in table order. */
const struct config_key config_keys[] = {
	{ .section = "daemon", .name = "state_dir", .type = CONFIG_STRING,
	  KEY_FIELD(state_dir), .defval = "/var/lib/perfmapd",
	  .flags = CONFIG_F_PATH,
	  .help = "Directory for segments, the index and copied binaries." },
	{ .section = "daemon", .name = "socket", .type = CONFIG_STRING,
	  KEY_FIELD(socket_path), .defval = "/run/perfmapd/control.sock",
	  .flags = CONFIG_F_PATH,
	  .help = "Path of the control socket perfmapctl connects to." },
	{ .section = "daemon", .name = "control_group", .type = CONFIG_STRING,
	  KEY_FIELD(control_group), .defval = "perfmapd",
	  .flags = CONFIG_F_NAME,
	  .help = "Group whose members may send privileged commands." },
	{ .section = "daemon", .name = "public_queries", .type = CONFIG_BOOL,
	  KEY_FIELD(readonly_public), .defval = "no",
	  .help = "Let any local user run read-only queries." },

	{ .section = "record", .name = "event", .type = CONFIG_ENUM,
	  KEY_FIELD(event), .defval = "auto", .names = config_event_names,
	  .help = "Sampling event: cycles, cpu-clock, or auto (cycles if there "
	    "is a PMU)." },
	{ .section = "record", .name = "frequency", .type = CONFIG_UINT,
	  KEY_FIELD(frequency), .defval = "99", .min = 1, .max = 100000,
	  .help = "Sampling frequency in Hz, per CPU." },
	{ .section = "record", .name = "callchain", .type = CONFIG_ENUM,
	  KEY_FIELD(callchain), .defval = "fp", .names = config_callchain_names,
	  .help = "Call chains: fp (frame pointers) or none." },
	{ .section = "record", .name = "buildid_mode", .type = CONFIG_ENUM,
	  KEY_FIELD(buildid_mode), .defval = "auto",
	  .names = config_buildid_names,
	  .help = "Where build-ids come from: auto, mmap3, mmap2 or "
	    "userspace." },
	{ .section = "record", .name = "mmap2_on_leaky_kernel", .type = CONFIG_BOOL,
	  KEY_FIELD(mmap2_on_leaky_kernel), .defval = "no",
	  .help = "Use attr.build_id (mmap2) even on a kernel that leaks its "
	    "build-id flag into other tools' records (their perf record may "
	    "abort)." },
	{ .section = "record", .name = "ring_size", .type = CONFIG_SIZE,
	  KEY_FIELD(ring_size), .defval = "1M", .min = 8 * KIB, .max = GIB,
	  .flags = CONFIG_F_POW2,
	  .help = "Sampling ring buffer size per CPU, a power of two "
	    "(the side-band ring is a quarter of it)." },
	{ .section = "record", .name = "wakeup_size", .type = CONFIG_SIZE,
	  KEY_FIELD(wakeup_size), .defval = "0",
	  .help = "Wake up when this much data is waiting "
	    "(0 = ring_size / 4)." },
	{ .section = "record", .name = "drain_interval",
	  .type = CONFIG_DURATION,
	  KEY_FIELD(drain_interval_ms), .defval = "1s",
	  .min = 10, .max = MSEC_HOUR,
	  .help = "Read the sampling rings at least this often." },
	{ .section = "record", .name = "sideband_holdoff",
	  .type = CONFIG_DURATION,
	  KEY_FIELD(sb_holdoff_max_ms), .defval = "80ms",
	  .min = 5, .max = 1000,
	  .help = "The longest the side-band's wake-ups are held off in a burst "
	    "of mappings (longer: fewer wake-ups, later build-id reads)." },

	{ .section = "segments", .name = "rotate_size", .type = CONFIG_SIZE,
	  KEY_FIELD(rotate_size), .defval = "64M",
	  .help = "Start a new segment at this size (0 = never by size)." },
	{ .section = "segments", .name = "rotate_age", .type = CONFIG_DURATION,
	  KEY_FIELD(rotate_age_ms), .defval = "10m",
	  .help = "Start a new segment at this age (0 = never by age)." },
	{ .section = "segments", .name = "sync", .type = CONFIG_BOOL,
	  KEY_FIELD(segment_sync), .defval = "no",
	  .help = "Flush each segment to disk before it takes its final name "
	    "(survives a power loss; costs the writeback in the daemon)." },
	{ .section = "segments", .name = "keep_size", .type = CONFIG_SIZE,
	  KEY_FIELD(keep_size), .defval = "1G",
	  .help = "Delete the oldest segments above this total "
	    "(0 = unlimited)." },
	{ .section = "segments", .name = "keep_count", .type = CONFIG_UINT,
	  KEY_FIELD(keep_count), .defval = "0",
	  .help = "Keep at most this many segments (0 = unlimited)." },
	{ .section = "segments", .name = "keep_age", .type = CONFIG_DURATION,
	  KEY_FIELD(keep_age_ms), .defval = "7d",
	  .help = "Delete segments older than this (0 = unlimited)." },
	{ .section = "segments", .name = "snapshot_pprof", .type = CONFIG_BOOL,
	  KEY_FIELD(snapshot_pprof), .defval = "no",
	  .help = "On each snapshot, write SEGMENT.pb.gz beside the closed segment: a pprof "
	    "of the period since the previous snapshot." },
	{ .section = "segments", .name = "compress", .type = CONFIG_ENUM,
	  KEY_FIELD(compress), .defval = "none", .names = config_compress_names,
	  .help = "Write segments' records compressed: none, or zstd "
	    "(PERF_RECORD_COMPRESSED, as perf record -z; from the next segment on)." },
	{ .section = "segments", .name = "compress_level", .type = CONFIG_UINT,
	  KEY_FIELD(compress_level), .defval = "1", .min = 1, .max = 22,
	  .help = "zstd level with compress = zstd: 1 (fastest, perf record -z's "
	    "default) to 22 (smallest)." },
	{ .section = "segments", .name = "mode", .type = CONFIG_ENUM,
	  KEY_FIELD(segment_mode), .defval = "continuous",
	  .names = config_segment_mode_names,
	  .help = "continuous: segments on disk, rotated by size and age; flight: "
	    "only the last flight_size / flight_age in memory, written as one "
	    "segment on snapshot or SIGUSR2 (takes effect at restart)." },
	{ .section = "segments", .name = "flight_size", .type = CONFIG_SIZE,
	  KEY_FIELD(flight_size), .defval = "64M", .min = MIB, .max = 64 * GIB,
	  .help = "Flight mode: the memory the last window's records may take "
	    "(oldest dropped first; takes effect at restart)." },
	{ .section = "segments", .name = "flight_age", .type = CONFIG_DURATION,
	  KEY_FIELD(flight_age_ms), .defval = "0",
	  .help = "Flight mode: keep no record older than this (0 = bounded by "
	    "flight_size only)." },

	{ .section = "index", .name = "commit_interval", .type = CONFIG_DURATION,
	  KEY_FIELD(index_commit_ms), .defval = "1s",
	  .min = 10, .max = MSEC_HOUR,
	  .help = "Commit new index rows at least this often." },
	{ .section = "index", .name = "commit_rows", .type = CONFIG_UINT,
	  KEY_FIELD(index_commit_rows), .defval = "10000", .min = 1,
	  .max = 10000000,
	  .help = "Commit as soon as this many index rows are pending." },
	{ .section = "index", .name = "cache_size", .type = CONFIG_SIZE,
	  KEY_FIELD(index_cache_size), .defval = "2M", .min = 64 * KIB,
	  .max = 64 * GIB,
	  .help = "SQLite page cache of the index writer (memory it keeps)." },
	{ .section = "index", .name = "retention", .type = CONFIG_DURATION,
	  KEY_FIELD(index_retention_ms), .defval = "0",
	  .help = "Forget objects no segment references that were last seen "
	    "longer ago than this (0 = keep the history forever)." },
	{ .section = "index", .name = "db_max_size", .type = CONFIG_SIZE,
	  KEY_FIELD(index_max_size), .defval = "256M",
	  .help = "Above this size, forget the oldest objects no segment references "
	    "(0 = unlimited)." },

	{ .section = "cache", .name = "dir", .type = CONFIG_STRING,
	  KEY_FIELD(cache_dir), .defval = "",
	  .flags = CONFIG_F_PATH | CONFIG_F_EMPTY,
	  .help = "The build-id cache directory (empty: state_dir/debug)." },
	{ .section = "cache", .name = "capture", .type = CONFIG_ENUM,
	  KEY_FIELD(capture), .defval = "eager", .names = config_capture_names,
	  .help = "When binaries are copied: eager (at first sight), lazy (when "
	    "a segment closes) or off (perfmapctl store only)." },
	{ .section = "cache", .name = "max_size", .type = CONFIG_SIZE,
	  KEY_FIELD(cache_max_size), .defval = "2G",
	  .help = "Evict least recently referenced binaries above this size "
	    "(0 = unlimited)." },
	{ .section = "cache", .name = "queue", .type = CONFIG_UINT,
	  KEY_FIELD(capture_queue), .defval = "4096", .min = 16, .max = 1000000,
	  .help = "Capture jobs waiting for the worker at most." },
	{ .section = "cache", .name = "debuginfod", .type = CONFIG_BOOL,
	  KEY_FIELD(debuginfod), .defval = "no",
	  .help = "Let store fetch missing binaries from DEBUGINFOD_URLS without "
	    "--debuginfod." },
	{ .section = "cache", .name = "user_bytes", .type = CONFIG_SIZE,
	  KEY_FIELD(cache_user_bytes), .defval = "256M",
	  .help = "Bytes of binaries one user (their owner, not root) may add to the "
	    "cache per user_interval (0 = no limit)." },
	{ .section = "cache", .name = "user_files", .type = CONFIG_UINT,
	  KEY_FIELD(cache_user_files), .defval = "1000", .max = 100000000,
	  .help = "Binaries one user may add to the cache per user_interval (0 = no "
	    "limit)." },
	{ .section = "cache", .name = "user_interval", .type = CONFIG_DURATION,
	  KEY_FIELD(cache_user_interval_ms), .defval = "1h", .min = MSEC_SECOND,
	  .max = 30 * MSEC_DAY,
	  .help = "The interval of user_bytes and user_files." },
};

const size_t config_nkeys = sizeof(config_keys) / sizeof(config_keys[0]);

/* State of one config_load: the reader and the handler share it. */
struct config_parse {
	struct config	*conf;
	FILE		*fp;
	char		*line;
	size_t		 linesz;
	int		 lineno;
	int		 errline;	/* line of the first error, 0 = none */
	int		 errnum;	/* read error */
	char		 errmsg[512];
	int		*setline;	/* per key: line that last set it */
};

static void
config_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
config_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static const struct config_key *
config_find_key(const char *section, const char *name)
{
	size_t	i;

	for (i = 0; i < config_nkeys; i++)
		if (strcmp(config_keys[i].section, section) == 0 &&
		    strcmp(config_keys[i].name, name) == 0)
			return &config_keys[i];
	return NULL;
}

static int
config_known_section(const char *section)
{
	size_t	i;

	for (i = 0; i < config_nkeys; i++)
		if (strcmp(config_keys[i].section, section) == 0)
			return 1;
	return 0;
}

/*
 * "123", "1.5" followed by an optional unit.  The fraction is exact: the
 * result must be a whole number of base units (bytes or ms), else EDOM.
 */
static int
config_parse_scaled(const char *s, uint64_t (*unit)(const char *),
    uint64_t *out)
{
	unsigned __int128	 whole = 0, frac = 0, pow10 = 1, v;
	uint64_t		 mult;
	const char		*sp;
	int			 overflow = 0, inexact = 0;

	if (!isdigit((unsigned char)*s)) {
		errno = EINVAL;
		return -1;
	}
	for (; isdigit((unsigned char)*s); s++) {
		whole = whole * 10 + (*s - '0');
		if (whole > UINT64_MAX) {
			overflow = 1;
			whole = UINT64_MAX;
		}
	}
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s)) {
			errno = EINVAL;
			return -1;
		}
		for (; isdigit((unsigned char)*s); s++) {
			if (pow10 >= UINT64_C(1000000000000000000)) {
				/* Past 18 digits only zeros are exact. */
				if (*s != '0')
					inexact = 1;
				continue;
			}
			frac = frac * 10 + (*s - '0');
			pow10 *= 10;
		}
	}
	/* "64 M" is fine, "64 " is not. */
	for (sp = s; *s == ' ' || *s == '\t'; s++)
		;
	if ((s != sp && *s == '\0') || (mult = unit(s)) == 0) {
		errno = EINVAL;
		return -1;
	}
	if (overflow) {
		errno = ERANGE;
		return -1;
	}
	if (inexact || (frac * mult) % pow10 != 0) {
		errno = EDOM;
		return -1;
	}
	v = whole * mult + frac * mult / pow10;
	if (v > UINT64_MAX) {
		errno = ERANGE;
		return -1;
	}
	*out = (uint64_t)v;
	return 0;
}

/* "", B, K, KB, KiB, ... T, any case; 0 if not a size unit. */
static uint64_t
config_size_unit(const char *s)
{
	static const char	 letters[] = "KMGT";
	const char		*p;

	if (*s == '\0' || strcasecmp(s, "b") == 0)
		return 1;
	if ((p = strchr(letters, toupper((unsigned char)*s))) == NULL)
		return 0;
	s++;
	if (*s != '\0' && strcasecmp(s, "b") != 0 && strcasecmp(s, "ib") != 0)
		return 0;
	return UINT64_C(1) << (10 * (p - letters + 1));
}

/* ms, s, m, h, d; a bare number is seconds.  0 if not a duration unit. */
static uint64_t
config_duration_unit(const char *s)
{
	if (*s == '\0' || strcmp(s, "s") == 0)
		return MSEC_SECOND;
	if (strcmp(s, "ms") == 0)
		return 1;
	if (strcmp(s, "m") == 0)
		return MSEC_MINUTE;
	if (strcmp(s, "h") == 0)
		return MSEC_HOUR;
	if (strcmp(s, "d") == 0)
		return MSEC_DAY;
	return 0;
}

static uint64_t
config_no_unit(const char *s)
{
	return *s == '\0';
}

int
config_parse_size(const char *s, uint64_t *bytes)
{
	return config_parse_scaled(s, config_size_unit, bytes);
}

int
config_parse_duration(const char *s, uint64_t *ms)
{
	return config_parse_scaled(s, config_duration_unit, ms);
}

/* A plain decimal integer: digits only. */
static int
config_parse_uint(const char *s, uint64_t *out)
{
	const char	*p;

	for (p = s; *p != '\0'; p++)
		if (!isdigit((unsigned char)*p)) {
			errno = EINVAL;
			return -1;
		}
	return config_parse_scaled(s, config_no_unit, out);
}

void
config_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char	 units[] = "TGMK";
	uint64_t		 unit, whole, rem, frac, pow10;
	int			 i, d;

	for (i = 0; units[i] != '\0'; i++) {
		unit = UINT64_C(1) << (10 * (4 - i));
		if (bytes < unit)
			continue;
		whole = bytes / unit;
		rem = bytes % unit;
		if (rem == 0) {
			snprintf(buf, len, "%" PRIu64 "%c", whole, units[i]);
			return;
		}
		/* At most three decimals, and only when exact. */
		for (d = 1, pow10 = 10; d <= 3; d++, pow10 *= 10) {
			if ((rem * pow10) % unit != 0)
				continue;
			frac = rem * pow10 / unit;
			snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64 "%c",
			    whole, d, frac, units[i]);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64, bytes);
}

void
config_format_duration(uint64_t ms, char *buf, size_t len)
{
	static const struct {
		uint64_t	 ms;
		const char	*suffix;
	} units[] = {
		{ MSEC_DAY, "d" }, { MSEC_HOUR, "h" }, { MSEC_MINUTE, "m" },
		{ MSEC_SECOND, "s" },
	};
	size_t	i;

	if (ms == 0) {
		snprintf(buf, len, "0");
		return;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (ms % units[i].ms == 0) {
			snprintf(buf, len, "%" PRIu64 "%s", ms / units[i].ms,
			    units[i].suffix);
			return;
		}
	snprintf(buf, len, "%" PRIu64 "ms", ms);
}

/* A number in the key's own notation, for range messages. */
static void
config_format_value(const struct config_key *k, uint64_t v, char *buf,
    size_t len)
{
	if (k->type == CONFIG_SIZE)
		config_format_size(v, buf, len);
	else if (k->type == CONFIG_DURATION)
		config_format_duration(v, buf, len);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

static int
config_check_number(const struct config_key *k, uint64_t v, char *err,
    size_t errlen)
{
	char	 a[32], b[32];
	uint64_t max = k->max == 0 && k->type == CONFIG_DURATION ? MSEC_DURATION_MAX : k->max;

	if (v < k->min || (max != 0 && v > max)) {
		config_format_value(k, v, a, sizeof(a));
		config_format_value(k, k->min, b, sizeof(b));
		if (max == 0) {
			config_error(err, errlen, "[%s] %s: %s is below the "
			    "minimum %s", k->section, k->name, a, b);
		} else {
			char	 c[32];

			config_format_value(k, max, c, sizeof(c));
			config_error(err, errlen, "[%s] %s: %s is out of range "
			    "(%s..%s)", k->section, k->name, a, b, c);
		}
		return -1;
	}
	if ((k->flags & CONFIG_F_POW2) && (v & (v - 1)) != 0) {
		config_format_value(k, v, a, sizeof(a));
		config_error(err, errlen, "[%s] %s: %s is not a power of two",
		    k->section, k->name, a);
		return -1;
	}
	return 0;
}

static int
config_check_string(const struct config_key *k, const char *s, char *err,
    size_t errlen)
{
	const char	*p;
	size_t		 len, max;

	max = k->size - 1;
	if (max > CONFIG_LINE_MAX - strlen(k->name) - 3)
		max = CONFIG_LINE_MAX - strlen(k->name) - 3;
	len = strnlen(s, k->size);
	if (len == 0 && (k->flags & CONFIG_F_EMPTY))
		return 0;
	if (len > max) {
		config_error(err, errlen, "[%s] %s: value is too long "
		    "(at most %zu characters)", k->section, k->name, max);
		return -1;
	}
	if (len == 0) {
		config_error(err, errlen, "[%s] %s: value is empty",
		    k->section, k->name);
		return -1;
	}
	for (p = s; *p != '\0'; p++) {
		/* No control characters; no " ;" (a comment in the file). */
		if (iscntrl((unsigned char)*p) ||
		    (isspace((unsigned char)*p) && p[1] == ';'))
			goto bad;
		if ((k->flags & CONFIG_F_NAME) && !isalnum((unsigned char)*p) &&
		    *p != '_' && *p != '.' && *p != '-')
			goto bad;
	}
	if (isspace((unsigned char)s[0]) || isspace((unsigned char)s[len - 1]))
		goto bad;
	if ((k->flags & CONFIG_F_PATH) && s[0] != '/') {
		config_error(err, errlen, "[%s] %s: \"%s\" is not an absolute "
		    "path", k->section, k->name, s);
		return -1;
	}
	if ((k->flags & CONFIG_F_NAME) && s[0] == '-')
		goto bad;
	return 0;
 bad:
	config_error(err, errlen, "[%s] %s: \"%.*s\" is not a valid %s",
	    k->section, k->name, (int)len, s,
	    (k->flags & CONFIG_F_NAME) ? "name" : "value");
	return -1;
}

int
config_set(struct config *conf, const char *section, const char *name,
    const char *value, char *err, size_t errlen)
{
	const struct config_key	*k;
	const char		*what = "number";
	char			*field;
	uint64_t		 v = 0;
	size_t			 i;
	int			 rv = -1;

	if (*section == '\0') {
		config_error(err, errlen, "key \"%s\" is not in a [section]",
		    name);
		goto out;
	}
	if ((k = config_find_key(section, name)) == NULL) {
		if (config_known_section(section))
			config_error(err, errlen, "unknown key \"%s\" in "
			    "section [%s]", name, section);
		else
			config_error(err, errlen, "unknown section [%s]",
			    section);
		goto out;
	}
	field = (char *)conf + k->offset;

	switch (k->type) {
	case CONFIG_STRING:
		if (config_check_string(k, value, err, errlen) == -1)
			goto out;
		memset(field, 0, k->size);
		memcpy(field, value, strlen(value));
		rv = 0;
		goto out;
	case CONFIG_BOOL:
		if (strcasecmp(value, "yes") == 0 ||
		    strcasecmp(value, "true") == 0 ||
		    strcasecmp(value, "on") == 0 || strcmp(value, "1") == 0)
			v = 1;
		else if (strcasecmp(value, "no") == 0 ||
		    strcasecmp(value, "false") == 0 ||
		    strcasecmp(value, "off") == 0 || strcmp(value, "0") == 0)
			v = 0;
		else {
			config_error(err, errlen, "[%s] %s: \"%s\" is not a "
			    "boolean (yes or no)", k->section, k->name, value);
			goto out;
		}
		*(int *)field = (int)v;
		rv = 0;
		goto out;
	case CONFIG_ENUM:
		for (i = 0; k->names[i] != NULL; i++)
			if (strcasecmp(value, k->names[i]) == 0)
				break;
		if (k->names[i] == NULL) {
			char	 list[256] = "";

			for (i = 0; k->names[i] != NULL; i++) {
				if (i > 0)
					strncat(list, ", ", sizeof(list) -
					    strlen(list) - 1);
				strncat(list, k->names[i], sizeof(list) -
				    strlen(list) - 1);
			}
			config_error(err, errlen, "[%s] %s: \"%s\" is not one "
			    "of %s", k->section, k->name, value, list);
			goto out;
		}
		*(int *)field = (int)i;
		rv = 0;
		goto out;
	case CONFIG_UINT:
		what = "number";
		if (config_parse_uint(value, &v) == -1)
			goto bad;
		break;
	case CONFIG_SIZE:
		what = "size";
		if (config_parse_size(value, &v) == -1)
			goto bad;
		break;
	case CONFIG_DURATION:
		what = "duration";
		if (config_parse_duration(value, &v) == -1)
			goto bad;
		break;
	}

	if (k->size == sizeof(unsigned) && v > UINT_MAX) {
		errno = ERANGE;
		goto bad;
	}
	if (config_check_number(k, v, err, errlen) == -1)
		goto out;
	if (k->size == sizeof(unsigned))
		*(unsigned *)field = (unsigned)v;
	else
		*(uint64_t *)field = v;
	rv = 0;
	goto out;

 bad:
	if (*value == '\0')
		config_error(err, errlen, "[%s] %s: value is empty",
		    k->section, k->name);
	else if (*value == '-')
		config_error(err, errlen, "[%s] %s: \"%s\": negative values "
		    "are not allowed", k->section, k->name, value);
	else if (errno == ERANGE)
		config_error(err, errlen, "[%s] %s: \"%s\" is too large",
		    k->section, k->name, value);
	else if (errno == EDOM)
		config_error(err, errlen, "[%s] %s: \"%s\" is not a whole "
		    "number of %s", k->section, k->name, value,
		    k->type == CONFIG_SIZE ? "bytes" : "milliseconds");
	else if (k->type == CONFIG_SIZE)
		config_error(err, errlen, "[%s] %s: \"%s\" is not a size "
		    "(a number with an optional K, M, G or T suffix)",
		    k->section, k->name, value);
	else if (k->type == CONFIG_DURATION)
		config_error(err, errlen, "[%s] %s: \"%s\" is not a duration "
		    "(a number with ms, s, m, h or d)", k->section, k->name,
		    value);
	else
		config_error(err, errlen, "[%s] %s: \"%s\" is not a %s",
		    k->section, k->name, value, what);
 out:
	return rv;
}

void
config_defaults(struct config *conf)
{
	const struct config_key	*k;
	char			 err[256];
	size_t			 i;

	memset(conf, 0, sizeof(*conf));
	for (i = 0; i < config_nkeys; i++) {
		k = &config_keys[i];
		if (config_set(conf, k->section, k->name, k->defval, err,
		    sizeof(err)) == -1) {
			/* The table is wrong: check_config catches this. */
			fprintf(stderr, "config_defaults: %s\n", err);
			abort();
		}
	}
}

static const struct config_key *
config_key_by_offset(size_t offset)
{
	size_t	i;

	for (i = 0; i < config_nkeys; i++)
		if (config_keys[i].offset == offset)
			return &config_keys[i];
	return NULL;
}

static uint64_t
config_get_number(const struct config *conf, const struct config_key *k)
{
	const char	*field = (const char *)conf + k->offset;

	if (k->type == CONFIG_BOOL || k->type == CONFIG_ENUM)
		return (uint64_t)*(const int *)field;
	if (k->size == sizeof(unsigned))
		return *(const unsigned *)field;
	return *(const uint64_t *)field;
}

/*
 * The later of two keys set in the file, the one a cross-field error is
 * blamed on; 0 when neither came from the file (or there is no file).
 */
static int
config_blame_line(const int *setline, const struct config_key *a,
    const struct config_key *b)
{
	int	 la, lb;

	if (setline == NULL)
		return 0;
	la = setline[a - config_keys];
	lb = setline[b - config_keys];
	return la > lb ? la : lb;
}

/* "A must be below B" for two keys where 0 means off in either. */
static int
config_check_order(const struct config *conf, const int *setline,
    size_t off_small, size_t off_big, const char *why, int *line, char *err,
    size_t errlen)
{
	const struct config_key	*a, *b;
	uint64_t		 va, vb;
	char			 sa[32], sb[32];

	a = config_key_by_offset(off_small);
	b = config_key_by_offset(off_big);
	if (a == NULL || b == NULL)
		return 0;		/* not in the table: cannot happen */
	va = config_get_number(conf, a);
	vb = config_get_number(conf, b);
	if (va == 0 || vb == 0 || va < vb)
		return 0;
	config_format_value(a, va, sa, sizeof(sa));
	config_format_value(b, vb, sb, sizeof(sb));
	*line = config_blame_line(setline, a, b);
	config_error(err, errlen, "[%s] %s (%s) must be less than %s (%s): %s",
	    a->section, a->name, sa, b->name, sb, why);
	return -1;
}

/* config_validate with, when loading a file, the line each key came from. */
static int
config_check(const struct config *conf, const int *setline, int *line,
    char *err, size_t errlen)
{
	const struct config_key	*k;
	const char		*field;
	uint64_t		 v;
	size_t			 i, n;

	*line = 0;
	for (i = 0; i < config_nkeys; i++) {
		k = &config_keys[i];
		field = (const char *)conf + k->offset;
		if (setline != NULL)
			*line = setline[i];
		switch (k->type) {
		case CONFIG_STRING:
			if (config_check_string(k, field, err, errlen) == -1)
				return -1;
			break;
		case CONFIG_BOOL:
		case CONFIG_ENUM:
			v = config_get_number(conf, k);
			n = 2;
			if (k->type == CONFIG_ENUM)
				for (n = 0; k->names[n] != NULL; n++)
					;
			if (v >= n) {
				config_error(err, errlen, "[%s] %s: bad value "
				    "%d", k->section, k->name,
				    *(const int *)field);
				return -1;
			}
			break;
		case CONFIG_UINT:
		case CONFIG_SIZE:
		case CONFIG_DURATION:
			if (config_check_number(k, config_get_number(conf, k),
			    err, errlen) == -1)
				return -1;
			break;
		}
	}

	if (config_check_order(conf, setline,
	    offsetof(struct config, wakeup_size),
	    offsetof(struct config, ring_size),
	    "the ring would never wake us up", line, err, errlen) == -1)
		return -1;
	if (config_check_order(conf, setline,
	    offsetof(struct config, rotate_size),
	    offsetof(struct config, keep_size),
	    "every closed segment would be deleted at once", line, err,
	    errlen) == -1)
		return -1;
	if (config_check_order(conf, setline,
	    offsetof(struct config, rotate_age_ms),
	    offsetof(struct config, keep_age_ms),
	    "every closed segment would be deleted at once", line, err,
	    errlen) == -1)
		return -1;
	*line = 0;
	return 0;
}

int
config_validate(const struct config *conf, char *err, size_t errlen)
{
	int	 line;

	return config_check(conf, NULL, &line, err, errlen);
}

/*
 * inih's line reader: one line per call, so p->lineno is the line the
 * handler is looking at.  Returning NULL ends the parse.
 */
static char *
config_read_cb(char *buf, int num, void *arg)
{
	struct config_parse	*p = arg;
	ssize_t			 len;
	char			*s, *end;
	size_t			 n;

	if (p->errline != 0)
		return NULL;
	errno = 0;
	if ((len = getline(&p->line, &p->linesz, p->fp)) == -1) {
		if (ferror(p->fp))
			p->errnum = errno != 0 ? errno : EIO;
		return NULL;
	}
	p->lineno++;
	s = p->line;
	if (memchr(s, '\0', (size_t)len) != NULL) {
		p->errline = p->lineno;
		snprintf(p->errmsg, sizeof(p->errmsg), "NUL byte in line");
		return NULL;
	}
	if (p->lineno == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
		s += 3;
	while (*s == ' ' || *s == '\t' || *s == '\f' || *s == '\v')
		s++;
	/* inih needs no newline; without it a CRLF line fits as well. */
	n = strlen(s);
	if (n > 0 && s[n - 1] == '\n')
		s[--n] = '\0';
	if (n > 0 && s[n - 1] == '\r')
		s[--n] = '\0';
	if (num < 2 || n > (size_t)num - 2 || n > CONFIG_LINE_MAX) {
		p->errline = p->lineno;
		snprintf(p->errmsg, sizeof(p->errmsg), "line too long (at most "
		    "%d characters)", CONFIG_LINE_MAX);
		return NULL;
	}
	memcpy(buf, s, n + 1);

	/*
	 * Unknown sections are errors even when they hold no key; so is text
	 * after a section's name ("[segments] keep_size = 50G" set nothing,
	 * and the parser dropped the rest of the line without a word).
	 */
	if (buf[0] == '[' && (end = strchr(buf, ']')) != NULL) {
		const char *t = end + 1;

		*end = '\0';
		t += strspn(t, " \t\r\n");
		if (!config_known_section(buf + 1)) {
			p->errline = p->lineno;
			snprintf(p->errmsg, sizeof(p->errmsg),
			    "unknown section [%s]", buf + 1);
		} else if (*t != '\0' && *t != '#' && *t != ';') {
			p->errline = p->lineno;
			snprintf(p->errmsg, sizeof(p->errmsg), "text after [%s]: a key goes "
			    "on a line of its own", buf + 1);
		}
		*end = ']';
	}
	return buf;
}

static int
config_key_cb(void *arg, const char *section, const char *name,
    const char *value)
{
	struct config_parse	*p = arg;
	const struct config_key	*k;

	if (p->errline != 0)
		return 0;
	if (config_set(p->conf, section, name, value, p->errmsg,
	    sizeof(p->errmsg)) == -1) {
		p->errline = p->lineno;
		return 0;
	}
	if ((k = config_find_key(section, name)) != NULL)
		p->setline[k - config_keys] = p->lineno;
	return 1;
}

int
config_load(struct config *conf, const char *file, char *err, size_t errlen)
{
	struct config_parse	 p;
	int			 ret, line, rv = -1;
	char			 msg[512], *s;

	memset(&p, 0, sizeof(p));
	p.conf = conf;
	if ((p.setline = calloc(config_nkeys, sizeof(*p.setline))) == NULL) {
		config_error(err, errlen, "%s: %s", file, strerror(errno));
		goto out;
	}
	if ((p.fp = fopen(file, "re")) == NULL) {
		config_error(err, errlen, "%s: %s", file, strerror(errno));
		goto out;
	}

	ret = ini_parse_stream(config_read_cb, &p, config_key_cb, &p);

	/* inih counts lines as we do; keep whichever error came first. */
	if (p.errline != 0 && (ret <= 0 || ret >= p.errline)) {
		config_error(err, errlen, "%s:%d: %s", file, p.errline,
		    p.errmsg);
		goto out;
	}
	if (ret > 0) {
		config_error(err, errlen, "%s:%d: syntax error (expected "
		    "[section] or key = value)", file, ret);
		goto out;
	}
	if (ret < 0) {
		config_error(err, errlen, "%s: %s", file, strerror(ENOMEM));
		goto out;
	}
	if (p.errnum != 0) {
		config_error(err, errlen, "%s: %s", file, strerror(p.errnum));
		goto out;
	}
	if (config_check(conf, p.setline, &line, msg, sizeof(msg)) == -1) {
		if (line > 0)
			config_error(err, errlen, "%s:%d: %s", file, line, msg);
		else
			config_error(err, errlen, "%s: %s", file, msg);
		goto out;
	}
	rv = 0;
 out:
	/* The message quotes the file: keep it one printable line. */
	if (rv == -1 && err != NULL)
		for (s = err; s < err + errlen && *s != '\0'; s++)
			if (iscntrl((unsigned char)*s))
				*s = '?';
	if (p.fp != NULL)
		fclose(p.fp);
	free(p.line);
	free(p.setline);
	return rv;
}

void
config_dump(const struct config *conf, FILE *fp)
{
	const struct config_key	*k;
	const char		*section = NULL, *field;
	char			 buf[32];
	uint64_t		 v;
	size_t			 i, n;

	for (i = 0; i < config_nkeys; i++) {
		k = &config_keys[i];
		field = (const char *)conf + k->offset;
		if (section == NULL || strcmp(section, k->section) != 0) {
			fprintf(fp, "%s[%s]\n", section == NULL ? "" : "\n",
			    k->section);
			section = k->section;
		}
		switch (k->type) {
		case CONFIG_STRING:
			fprintf(fp, "%s = %.*s\n", k->name, (int)k->size,
			    field);
			break;
		case CONFIG_BOOL:
			fprintf(fp, "%s = %s\n", k->name,
			    *(const int *)field ? "yes" : "no");
			break;
		case CONFIG_ENUM:
			v = config_get_number(conf, k);
			for (n = 0; k->names[n] != NULL; n++)
				;
			if (v < n)
				fprintf(fp, "%s = %s\n", k->name, k->names[v]);
			else
				fprintf(fp, "%s = %d\n", k->name,
				    *(const int *)field);
			break;
		case CONFIG_UINT:
		case CONFIG_SIZE:
		case CONFIG_DURATION:
			config_format_value(k, config_get_number(conf, k), buf,
			    sizeof(buf));
			fprintf(fp, "%s = %s\n", k->name, buf);
			break;
		}
	}
}
