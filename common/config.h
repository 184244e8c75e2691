/*
 * config.h - perfmapd's configuration: an INI file (/etc/perfmapd/perfmapd.conf)
 * parsed with inih into a struct with built-in defaults.  Every key lives in
 * one table (config.c) that gives its section, name, type, default and a
 * one-line description; the parser, `perfmapd --check-config`, and the test
 * that compares conf/perfmapd.conf and the man page all read that table.
 */
#ifndef PERFMAPD_CONFIG_H
#define PERFMAPD_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum buildid_mode {
	BUILDID_AUTO = 0,
	BUILDID_MMAP3,
	BUILDID_MMAP2,
	BUILDID_USERSPACE,
};

enum event_kind {
	EVENT_AUTO = 0,		/* cycles where a PMU exists, else cpu-clock */
	EVENT_CYCLES,
	EVENT_CPU_CLOCK,
};

struct config {
	/* [daemon] */
	char		 state_dir[4096];	/* state_dir = /var/lib/perfmapd */
	char		 socket_path[108];	/* socket = /run/perfmapd/control.sock */
	char		 control_group[64];	/* control_group = perfmapd */
	int		 readonly_public;	/* public_queries = no */

	/* [record] */
	enum event_kind	 event;			/* event = auto */
	unsigned	 frequency;		/* frequency = 99 (Hz, 1..100000) */
	int		 callchain;		/* callchain = fp | none (default fp) */
	enum buildid_mode buildid_mode;		/* buildid_mode = auto */
	int		 mmap2_on_leaky_kernel;	/* mmap2_on_leaky_kernel = no */
	uint64_t	 ring_size;		/* ring_size = 1M (per CPU, power of 2 >= 8K) */
	uint64_t	 wakeup_size;		/* wakeup_size = 0 (0 = ring_size / 4) */
	uint64_t	 drain_interval_ms;	/* drain_interval = 1s */
	uint64_t	 sb_holdoff_max_ms;	/* sideband_holdoff = 80ms */

	/* [segments] */
	uint64_t	 rotate_size;		/* rotate_size = 64M (0 = never by size) */
	uint64_t	 rotate_age_ms;		/* rotate_age = 10m (0 = never by age) */
	int		 segment_sync;		/* sync = no */
	uint64_t	 keep_size;		/* keep_size = 1G (0 = unlimited) */
	uint64_t	 keep_count;		/* keep_count = 0 (0 = unlimited) */
	uint64_t	 keep_age_ms;		/* keep_age = 7d (0 = unlimited) */
	int		 snapshot_pprof;	/* snapshot_pprof = no */
	int		 compress;		/* compress = none | zstd */
	unsigned	 compress_level;	/* compress_level = 1 (1..22) */
	int		 segment_mode;		/* mode = continuous | flight */
	uint64_t	 flight_size;		/* flight_size = 64M (1M..64G) */
	uint64_t	 flight_age_ms;		/* flight_age = 0 (0 = bounded by size only) */

	/* [index] */
	uint64_t	 index_commit_ms;	/* commit_interval = 1s */
	uint64_t	 index_commit_rows;	/* commit_rows = 10000 */
	uint64_t	 index_retention_ms;	/* retention = 0 (0 = keep history forever) */
	uint64_t	 index_cache_size;	/* cache_size = 2M (SQLite page cache) */
	uint64_t	 index_max_size;	/* db_max_size = 256M (0 = unlimited) */

	/* [cache] */
	char		 cache_dir[4096];	/* dir = (empty: state_dir/debug) */
	int		 capture;		/* capture = eager | lazy | off */
	uint64_t	 cache_max_size;	/* max_size = 2G (0 = unlimited) */
	unsigned	 capture_queue;		/* queue = 4096 (jobs) */
	int		 debuginfod;		/* debuginfod = no */
	uint64_t	 cache_user_bytes;	/* user_bytes = 256M (per user_interval; 0 = no limit) */
	uint64_t	 cache_user_files;	/* user_files = 1000 (per user_interval; 0 = no limit) */
	uint64_t	 cache_user_interval_ms;	/* user_interval = 1h */
};

enum segment_compress {
	COMPRESS_NONE = 0,	/* records as the kernel wrote them */
	COMPRESS_ZSTD,		/* PERF_RECORD_COMPRESSED, as perf record -z */
};

enum segment_mode {
	SEGMENT_CONTINUOUS = 0,	/* segments on disk, rotated by size and age */
	SEGMENT_FLIGHT,		/* the last window in memory, a segment per snapshot */
};

enum capture_mode {
	CAPTURE_EAGER = 0,	/* copy each binary when its build-id is first seen */
	CAPTURE_LAZY,		/* copy a segment's binaries when it closes */
	CAPTURE_OFF,		/* only "perfmapctl store" copies */
};

enum config_type {
	CONFIG_STRING,		/* char array, size in the table */
	CONFIG_BOOL,		/* int: yes/no/true/false/on/off/1/0 */
	CONFIG_UINT,		/* unsigned or uint64_t (by size), range checked */
	CONFIG_SIZE,		/* uint64_t bytes: 123, 64K, 64M, 1.5G, 1T */
	CONFIG_DURATION,	/* uint64_t ms: 500ms, 10s, 10m, 2h, 7d; bare number = seconds */
	CONFIG_ENUM,		/* int from a list of names */
};

struct config_key {
	const char	*section;
	const char	*name;
	enum config_type type;
	size_t		 offset;	/* in struct config */
	size_t		 size;		/* CONFIG_STRING: buffer size */
	const char	*defval;	/* default, as written in the file */
	uint64_t	 min, max;	/* CONFIG_UINT/SIZE/DURATION bounds (max 0 = none) */
	const char *const *names;	/* CONFIG_ENUM: NULL-terminated, index = value */
	const char	*help;		/* one line */
	unsigned	 flags;		/* CONFIG_F_* */
};

#define CONFIG_F_POW2	0x01	/* SIZE: a power of two */
#define CONFIG_F_PATH	0x02	/* STRING: an absolute path */
#define CONFIG_F_NAME	0x04	/* STRING: a user or group name */
#define CONFIG_F_EMPTY	0x08	/* STRING: may be empty ("use the default") */

extern const struct config_key	config_keys[];
extern const size_t		config_nkeys;

/* Fill with built-in defaults (the table's defval for every key). */
void	config_defaults(struct config *);

/*
 * Parse FILE over the current contents of CONF (normally defaults first).
 * On error returns -1 and writes one line "FILE:LINE: message" (or
 * "FILE: strerror") into ERR; CONF is then unspecified: parse into a
 * scratch copy and swap on success (that is what reload does).
 */
int	config_load(struct config *, const char *file, char *err, size_t errlen);

/*
 * Parse a single value for KEY (used by the parser and by the tests).  On
 * error returns -1 with "[section] key: message" in ERR; CONF is unchanged.
 */
int	config_set(struct config *, const char *section, const char *name,
	    const char *value, char *err, size_t errlen);

/*
 * Every per-key check again plus the cross-field ones (wakeup_size below
 * ring_size, ...).  config_load runs it itself, naming the line at fault.
 */
int	config_validate(const struct config *, char *err, size_t errlen);

/*
 * Print every key with its value in INI form (perfmapd --check-config -d).
 * The output loads back into the same struct.
 */
void	config_dump(const struct config *, FILE *);

/*
 * Helpers also used by perfmapctl: "64M" -> bytes, "10m" -> ms.  They return
 * -1 with errno EINVAL (not a size/duration), ERANGE (overflow) or EDOM (a
 * fraction that is not a whole number of bytes/ms, "0.1K").  The formatters
 * are exact ("1025" stays "1025"), so their output parses back to the value.
 */
int	config_parse_size(const char *, uint64_t *);
int	config_parse_duration(const char *, uint64_t *ms);
void	config_format_size(uint64_t bytes, char *buf, size_t len);	/* "1.5G" */
void	config_format_duration(uint64_t ms, char *buf, size_t len);	/* "10m" */

#endif
