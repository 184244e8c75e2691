/*
 * perfdata.h - writing and reading perf.data files (file mode).
 *
 * A file is written in three steps, so that a crash at any point leaves
 * something perf can read once repaired:
 *
 *   perfdata_create()   header (data.size = 0), ids, attrs: all known up front
 *   perfdata_write()    records appended to the data section (buffered)
 *   perfdata_finish()   feature sections after the data, then the header
 *                       rewritten with data.size and the feature bitmap
 *
 *   offset 0     struct perf_file_header
 *   104          u64 ids[] of each attr
 *   ...          struct perf_file_attr attrs[]
 *   data.offset  records ...
 *   data.end     struct perf_file_section per feature bit, then payloads
 */
#ifndef PERFMAPD_PERFDATA_H
#define PERFMAPD_PERFDATA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "compress.h"
#include "hostinfo.h"
#include "perf_abi.h"
#include "record.h"

struct perfdata_attr {
	struct perf_event_attr	 attr;
	const char		*name;		/* "cpu-clock" */
	const uint64_t		*ids;
	size_t			 nids;
};

struct perfdata_buildid {
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 size;
	int		 kernel;		/* kernel or module: misc KERNEL, else USER */
	/*
	 * FILENAME is the path of a file mapped once unlinked, as the daemon
	 * proved it (binaries.h), where the records name it "FILENAME
	 * (deleted)": misc PERFDATA_MISC_UNLINKED, a bit perf does not read in
	 * a build-id table's entry (it reads the cpumode and BUILD_ID_SIZE).
	 */
	int		 unlinked;
	const char	*filename;
};
#define PERFDATA_MISC_UNLINKED	(1 << 13)

/*
 * What the features say.  HOST (hostinfo.h) feeds NRCPUS, CPUDESC, CPUID,
 * TOTAL_MEM, CPU_TOPOLOGY, NUMA_TOPOLOGY, PMU_MAPPINGS, CACHE,
 * MEM_TOPOLOGY, CPU_PMU_CAPS, HYBRID_TOPOLOGY and PMU_CAPS; what it does
 * not know is left out, as perf record leaves it out.
 */
struct perfdata_meta {
	const char	*hostname, *osrelease, *arch, *version;
	const struct hostinfo *host;		/* NULL: none of the above */
	int		 argc;
	char *const	*argv;
	int		 clockid;		/* -1: none */
	uint64_t	 clockid_res_ns;
	uint64_t	 clock_wall_ns;		/* reference pair: wall clock ... */
	uint64_t	 clock_ref_ns;		/* ... and clockid at the same moment */
	uint64_t	 first_time, last_time;	/* HEADER_SAMPLE_TIME: the first and last
						 * sample's time (0, 0: no sample) */
	struct compress_info comp;		/* HEADER_COMPRESSED (mmap_len 0: none); a
						 * compressing writer fills it itself */
};

struct perfdata {
	int		 fd;
	uint64_t	 data_offset;
	uint64_t	 data_size;		/* written + buffered */
	uint8_t		*buf;
	size_t		 buflen, bufcap;
	int		 error;			/* errno of the last failed flush, 0 once one succeeds */
	int		 sync;			/* perfdata_finish: fdatasync before returning */
	struct compress	*z;			/* NULL: records written as they are */
};

int	perfdata_create(struct perfdata *, const char *path,
	    const struct perfdata_attr *, size_t nattrs);
/* The same on an open file (FD is the writer's from then on, closed with it). */
int	perfdata_create_fd(struct perfdata *, int fd, const struct perfdata_attr *,
	    size_t nattrs);
/*
 * From now on (before the first record), write the records as one zstd
 * stream of PERF_RECORD_COMPRESSED records at LEVEL (1..22), with the
 * HEADER_COMPRESSED feature (compress.h).  data_size then counts the
 * compressed bytes; up to COMPRESS_STAGE bytes of records wait in memory
 * for the next flush.  0 or -ENOMEM.
 */
int	perfdata_compress(struct perfdata *, int level);
/* Append whole records: all of them are taken, or none (the error is returned). */
int	perfdata_write(struct perfdata *, const void *, size_t);
int	perfdata_flush(struct perfdata *);
int	perfdata_finish(struct perfdata *, const struct perfdata_attr *, size_t nattrs,
	    const struct perfdata_meta *, const struct perfdata_buildid *, size_t nbids);
void	perfdata_close(struct perfdata *);	/* without finishing (error paths) */

/* Reading, for tests, repair and the index rebuild. */
struct perfdata_file {
	int			 fd;
	struct perf_file_header	 h;
	uint64_t		 file_size;
	size_t			 nattrs;
	struct perf_file_attr	*attrs;
	/* what the last perfdata_walk found */
	uint64_t		 ncompressed;	/* PERF_RECORD_COMPRESSED records read */
	char			 error[192];	/* why it stopped early ("": at the end
						 * or at a torn last record) */
};

int	perfdata_open(struct perfdata_file *, const char *path, char *err, size_t errlen);
/*
 * The same for a segment named PATH when it was listed: one still open
 * then (NAME.partial) may have closed since (renamed NAME), and is opened
 * by that name, PATH changed to it.
 */
int	perfdata_open_segment(struct perfdata_file *, char *path, char *err, size_t errlen);
void	perfdata_file_close(struct perfdata_file *);

/*
 * Walk the records of the data section (or up to the end of the file when
 * data.size is 0, as after a crash).  CB gets each whole record; a torn
 * last record stops the walk.  Returns the number of bytes of whole
 * records, or -1 on I/O error.
 *
 * PERF_RECORD_COMPRESSED records are decompressed here (compress.h), and
 * CB gets the records they hold, never the COMPRESSED records: every
 * reader of segments sees plain records.  Decompression is bounded by the
 * file's comp_mmap_len (COMPRESS_CHUNK for a segment not finished yet,
 * at most COMPRESS_MMAP_LEN_MAX); a stream that is corrupt or does not
 * fit stops the walk with the reason in F->error.  The bytes returned
 * then end at the last COMPRESSED record after which the stream was at a
 * record's end, so that a file cut there (repair) reads whole.  Records
 * of a COMPRESSED record after that point may have been handed to CB.
 */
typedef int (*perfdata_record_fn)(const struct perf_event_header *, void *arg);
int64_t	perfdata_walk(struct perfdata_file *, perfdata_record_fn, void *arg);
/*
 * The same in time order, as perf reads a file (ordered.c): each record's
 * time by its event's layout (LS), sorted within FINISHED_ROUND rounds.
 * Returns what perfdata_walk returns, or -1 (ENOMEM) with no memory to
 * order the records: not a walk cut short, which would read as damage.
 */
int64_t	perfdata_walk_ordered(struct perfdata_file *, const struct record_layouts *ls,
	    perfdata_record_fn, void *arg);

/*
 * The sample ids of attr I (a new array in *IDS, *N of them; free it).
 * 0, or -1 if they cannot be read or lie outside the file.
 */
int	perfdata_ids(struct perfdata_file *, size_t i, uint64_t **ids, size_t *n);

/*
 * The layouts of the file's events (record.h), so that each record is
 * decoded by the attr of the event that wrote it, not by its own flags.
 * 0 or -1; record_layouts_free() it either way.
 */
int	perfdata_layouts(struct perfdata_file *, struct record_layouts *);

/* A feature section's location; -1 if the feature is absent. */
int	perfdata_feature(struct perfdata_file *, int feat, struct perf_file_section *);
/* Its payload, at most MAX bytes, NUL-terminated, in *BUF (freed by the caller). */
int	perfdata_read_feature(struct perfdata_file *, int feat, void **buf, size_t *len,
	    size_t max);

/*
 * Each entry of the BUILD_ID feature, as a struct perfdata_buildid (kernel:
 * the kernel or a module).  Malformed entries are skipped; CB returning
 * non-zero stops the walk.  Returns the number of entries handed over (0
 * without a table), or -1 if the table cannot be read (larger than 64 MiB,
 * I/O error).
 */
typedef int (*perfdata_buildid_fn)(const struct perfdata_buildid *, void *arg);
int	perfdata_buildids(struct perfdata_file *, perfdata_buildid_fn, void *arg);

#endif
