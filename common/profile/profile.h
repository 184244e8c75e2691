/*
 * profile.h - profiles of a time window, from the segments: every segment,
 * closed or open, that overlaps the wall-clock window [since, until), its
 * samples kept when their time falls in the window (and their pid or comm
 * matches), written in one of four formats:
 *
 *	perf	one perf.data that stock `perf report -i` reads: every
 *		segment's start state and records, the samples of the
 *		window, the union of their attributes, ids and build-id
 *		tables (profile_perf.c)
 *	pprof	a gzipped profile.proto (pprof.c), symbolized from the
 *		build-id cache, one Mapping per binary with its build-id
 *	folded	"comm;outer;...;inner COUNT" lines (folded.c)
 *	svg	a self-contained flame graph (svg.c)
 *
 * The engine streams: one segment is read at a time, record by record, and
 * what is kept across segments is bounded by what is distinct (binaries,
 * locations, functions, stacks), never by the number of samples:
 *
 *	index.db ─► segments overlapping the window (by seq)
 *	   │
 *	   ▼ for each segment (profile.c)
 *	perf.data records ─► procs (procs.c): per-segment comm and maps,
 *	   │                  from its own start state, reset per segment
 *	   ▼ a sample in the window, pid/comm matching
 *	frames ─► binary + ELF-relative address (symbolize.c: the build-id
 *	   │      cache's ELF symbols, DWARF lines through libdw, kallsyms,
 *	   │      kept JIT maps) ─► locations, functions (stacks.c)
 *	   ▼
 *	stacks: (pid, comm, locations) -> samples, CPU ns  ─► pprof, folded, svg
 *
 * Nothing here knows about the daemon: perfmapctl --state-dir calls it
 * directly, the daemon calls it on a worker thread.  Every call may block.
 */
#ifndef PERFMAPD_PROFILE_H
#define PERFMAPD_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

enum profile_format {
	PROFILE_PERF = 0,
	PROFILE_PPROF,
	PROFILE_FOLDED,
	PROFILE_SVG,
};

/* Directory of the JIT maps kept with segment NAME: STATE/segments/NAME.jit */
#define PROFILE_JIT_SUFFIX	".jit"

struct profile_req {
	const char	*state_dir;	/* STATE: index.db, segments/ */
	const char	*cache_dir;	/* the build-id cache; NULL: STATE/debug */
	int64_t		 since_ns;	/* wall clock, [since, until) */
	int64_t		 until_ns;
	int64_t		 pid;		/* -1: every process */
	const char	*comm;		/* NULL: every command */
	uint64_t	 seq_min;	/* 0: any; else only segments seq_min..seq_max */
	uint64_t	 seq_max;
	int		 whole;		/* every sample of those segments, whatever its time
					   (a snapshot's period: its segments, exactly) */
	enum profile_format format;
	int		 fd;		/* the output (perf: must be seekable) */
	/*
	 * The running kernel's build-id, where the caller knows it (the
	 * daemon: its open segment is of this boot); size 0: an open
	 * segment's kernel is the one the index saw last, by the wall
	 * clock, which a boot with its clock ahead, or a profile before the
	 * index heard of a new kernel, makes another kernel.
	 */
	uint8_t		 running_kernel[BUILD_ID_MAX];
	uint8_t		 running_kernel_size;
};

struct profile_stats {
	uint64_t	 segments;		/* read */
	uint64_t	 segments_gone;		/* listed by the index, not on disk */
	uint64_t	 segments_damaged;	/* closed, their records cut short by damage */
	uint64_t	 samples;		/* kept in the profile */
	uint64_t	 samples_read;		/* in the segments read, any time */
	uint64_t	 lost;			/* records the kernel lost in them */
	uint64_t	 bad_records;		/* malformed, skipped */
	uint64_t	 frames;		/* of kept samples */
	uint64_t	 frames_unmapped;	/* no mapping covered the address */
	uint64_t	 frames_unsymbolized;	/* mapped, but no name for it */
	uint64_t	 binaries;		/* distinct (path, build-id) with samples */
	uint64_t	 binaries_uncached;	/* build-id known, not in the cache */
	uint64_t	 binaries_unknown;	/* build-id unknown: never symbolized */
	uint64_t	 jit_maps;		/* kept perf-PID.map files used */
	uint64_t	 stacks;		/* distinct stacks (pprof samples) */
	uint64_t	 samples_truncated;	/* in the "[truncated]" stack (stacks.h) */
	uint64_t	 names_truncated;	/* "[truncated]" past the names' bytes (stacks.h) */
	uint64_t	 procs_shed;		/* their maps dropped past a bound (procs.h) */
	uint64_t	 first_ns, last_ns;	/* wall clock of the first, last kept sample */
	uint64_t	 bytes;			/* written */
	uint64_t	 last_seq;		/* the newest segment read */
};

/* "perf", "pprof", "folded", "svg": 0, or -1. */
int	profile_format_parse(const char *name, enum profile_format *);
/* By FILE's extension: .data, .pb.gz/.pprof, .folded/.txt, .svg; 0 or -1. */
int	profile_format_from_path(const char *path, enum profile_format *);
const char *profile_format_name(enum profile_format);

/*
 * Write the profile REQ asks for to REQ->fd.  Returns 0, or -1 with one
 * line in ERR: a bad window, no segment overlapping it, a pid or comm
 * that never ran in it, an index that cannot be read, a write error.  The
 * caller removes what was written on error.  STATS may be NULL.
 */
int	profile_run(const struct profile_req *, struct profile_stats *, char *err,
	    size_t errlen);

/*
 * io.perfmap.Profile's parameters into REQ (state_dir, cache_dir and fd are
 * left to the caller): 0, or -1 with the parameter at fault in *PARAM and
 * what it should be in ERR.  params.c.
 */
int	profile_params(json_t *params, struct profile_req *, const char **param, char *err,
	    size_t errlen);
/* The reply: what was written, from what (params.c documents the fields). */
json_t	*profile_reply(const struct profile_req *, const struct profile_stats *);

#endif
