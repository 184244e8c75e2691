/*
 * record.h - decoding perf records (from a ring or a perf.data file) into a
 * flat struct.  The decoder never trusts a record: every length is checked
 * against header.size, and a record that does not fit its type is refused
 * with -EINVAL, not read past.
 *
 * What follows the body of a non-sample record (sample_id_all) and the body
 * of a SAMPLE depend on the event's sample_type; struct record_layout
 * carries that.  perfmapd always uses PERF_SAMPLE_IDENTIFIER, so the id is
 * the first u64 of a sample and the last u64 of every other record.
 *
 * The layout is the attr of the event that produced the record, never the
 * record's own flags: the body of an MMAP2 record is in the build-id form
 * only if its event was opened with attr.build_id.  Kernels before the fix
 * of kernel-patch/0001 (6.1.y, and mainline up to at least 6.18) leave
 * PERF_RECORD_MISC_MMAP_BUILD_ID set in the records of other events that
 * see the same mmap; on an event without attr.build_id the flag is a lie
 * and the body holds maj/min/ino.  A ring is read with its event's layout;
 * a perf.data file with the layout of the attr whose ids hold the record's
 * id (struct record_layouts).
 */
#ifndef PERFMAPD_RECORD_H
#define PERFMAPD_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "perf_abi.h"

struct record_layout {
	uint64_t	sample_type;
	int		sample_id_all;
	int		mmap3;		/* PERF_RECORD_MMAP3 is MMAP3 (event opened with the mmap3 bit) */
	int		build_id;	/* attr.build_id: MMAP2's flag may be believed */
	/*
	 * The sample_id trailer's size for sample_type and sample_id_all as
	 * record_layout_init found them (record_sample_id_size counts the bits
	 * again if either changed since).  A layout built by hand has zeros
	 * here: the right size for zeros, and counted for anything else.
	 */
	uint64_t	sid_type;
	int		sid_all;
	size_t		sid_size;
};

/* The layout of records produced by an event opened with A. */
void	record_layout_init(struct record_layout *, const struct perf_event_attr *a);

/*
 * The layouts of a perf.data file's events, to decode each record with the
 * attr of the event that wrote it: the record's PERF_SAMPLE_IDENTIFIER (the
 * first u64 of a sample, the last of any other record) names the event.
 * Records without an id (perf's own types), or with one no attr lists,
 * get DFLT, the first attr's layout.
 */
struct record_layouts {
	struct record_layout dflt;
	size_t		 n;
	struct {
		uint64_t		id;
		struct record_layout	l;
	}		*v;
};

/* Add the ids IDS[0..N) of the event opened with A; 0 or -ENOMEM. */
int	record_layouts_add(struct record_layouts *, const struct perf_event_attr *a,
	    const uint64_t *ids, size_t n);
void	record_layouts_free(struct record_layouts *);
/* The layout that decodes the record at BUF (LEN bytes available). */
const struct record_layout *record_layout_of(const struct record_layouts *,
	    const void *buf, size_t len);

struct record_sample_id {
	uint32_t	pid, tid;	/* PERF_SAMPLE_TID */
	uint64_t	time;		/* PERF_SAMPLE_TIME */
	uint64_t	id;		/* PERF_SAMPLE_ID / IDENTIFIER */
	uint64_t	stream_id;
	uint32_t	cpu;		/* PERF_SAMPLE_CPU */
};

/* Where the build-id of a mapping came from. */
enum buildid_source {
	BID_NONE = 0,
	BID_MMAP3,	/* MMAP3 record of a patched kernel */
	BID_MMAP2,	/* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
	BID_USER,	/* read from the file by perfmapd */
	BID_KERNEL,	/* /sys/kernel/notes or /sys/module/.../notes */
};

struct record_mmap {
	uint32_t	pid, tid;
	uint64_t	addr, len, pgoff;
	int		has_inode;		/* maj/min/ino valid (MMAP2 plain form, MMAP3) */
	uint32_t	maj, min;
	uint64_t	ino, ino_generation;
	uint32_t	prot, flags;		/* MMAP2/MMAP3 only */
	uint8_t		build_id_size;		/* 0: none in the record */
	uint8_t		build_id[BUILD_ID_MAX];
	const char	*filename;		/* points into the record, NUL-terminated */
	uint8_t		name_flags;		/* not decoded: MMAP_NAME_* below */
};

/*
 * What perfmapd proved of a mapping's FILENAME (daemon/record/
 * buildid_reader.h, struct bid_answer): a " (deleted)" ending it is the
 * kernel's mark; it is the file's path in a mount namespace other than
 * the host's (or whose, was not known), whoever mapped it.
 */
#define MMAP_NAME_UNLINKED	0x1
#define MMAP_NAME_FOREIGN	0x2

struct record_sample {
	uint64_t	ip;
	uint64_t	period;
	uint64_t	nr;			/* callchain length */
	const uint64_t	*ips;			/* points into the record (unaligned-safe: records are 8-aligned) */
};

struct record {
	uint32_t	type;
	uint16_t	misc;
	uint16_t	size;
	int		has_sid;		/* sid valid (samples, or sample_id_all) */
	struct record_sample_id sid;
	union {
		struct record_mmap	mmap;	/* MMAP, MMAP2, MMAP3 */
		struct {
			uint32_t	pid, tid;
			const char	*comm;
		} comm;
		struct {
			uint32_t	pid, ppid, tid, ptid;
			uint64_t	time;
		} task;				/* FORK, EXIT */
		struct {
			uint64_t	id, lost;
		} lost;
		struct {
			uint64_t	lost;
		} lost_samples;
		struct {
			uint32_t	pid, tid;
			uint64_t	mnt_ns, user_ns;	/* nsfs inodes; 0: not in the record */
		} ns;				/* NAMESPACES */
		struct record_sample	sample;
	};
};

/* Size in bytes of the sample_id trailer for this layout (0 without sample_id_all). */
size_t	record_sample_id_size(const struct record_layout *);

/*
 * Decode the record at BUF (LEN bytes available, at least header.size).
 * Returns 0, or -EINVAL for a malformed record (too short for its type,
 * unterminated string, callchain past the end, size not a multiple of 8).
 * Unknown types decode to the header (and sample_id when possible) only.
 */
int	record_decode(const void *buf, size_t len, const struct record_layout *,
	    struct record *);

/*
 * Only the time stamp of the record at BUF (LEN bytes available), as
 * record_decode would find it, without decoding the rest: the ring merge
 * asks this of every ring's next record.  Returns 0, or -1 if the record
 * is malformed or carries no time.
 */
int	record_time(const void *buf, size_t len, const struct record_layout *, uint64_t *time);
/* Rewrite that time stamp (profiles moving a segment onto another's clock). */
int	record_set_time(void *buf, size_t len, const struct record_layout *, uint64_t time);

/*
 * Where a layout's records carry their time, worked out once.  record_time
 * works it out from the sample_type at each call; the loop asks it of every
 * record of its rings (the merge's peeks, the turn, the sample runs), where
 * that was 5% of its CPU under an exec storm.  record_clock_time answers as
 * record_time does for a record whose header.size bytes are all there.
 */
struct record_clock {
	uint32_t	sample_off;	/* a sample's time, from its start; 0: none */
	uint32_t	sid_size;	/* other records: the sample_id trailer's size */
	uint32_t	sid_back;	/* their time, back from their end; 0: none */
};

void	record_clock_init(struct record_clock *, const struct record_layout *);

static inline int
record_clock_time(const struct record_clock *c, const struct perf_event_header *h,
    uint64_t *time)
{
	uint32_t off;

	if (h->size < sizeof(*h))
		return -1;
	if (h->type == PERF_RECORD_SAMPLE)
		off = c->sample_off;
	else if (c->sid_back == 0 || h->type >= PERF_RECORD_USER_TYPE_START ||
	    h->size < sizeof(*h) + c->sid_size)
		return -1;
	else
		off = h->size - c->sid_back;
	if (off == 0 || off + 8 > h->size)
		return -1;
	__builtin_memcpy(time, (const uint8_t *)h + off, sizeof(*time));
	return 0;
}

/*
 * The length of a mapped file's name without the " (deleted)" the kernel
 * appends when the file was unlinked since it was mapped (strlen(NAME)
 * for a name without it).
 */
size_t	record_name_len(const char *name);

/*
 * Is a mapping of NAME anonymous memory, where JIT code lives ("//anon",
 * "/dev/zero", "/anon_hugepage", "[anon:...]": perf's is_anon_memory and
 * named anonymous memory)?  perf looks its code up in /tmp/perf-PID.map.
 */
int	record_name_is_anon(const char *name);
/*
 * A mapping whose build-id is unknown is written under this name (then its
 * path): a directory of / that no user can make, so no reader finds a file
 * there (record/sideband.c, mmap_unknown).
 */
#define RECORD_UNKNOWN_PREFIX	"//build-id-unknown"

/*
 * A module's name as the kernel gives it (kallsyms' tags, /proc/modules)
 * from its mapping's or its file's: "/x/nf-nat.ko.xz" and "[nf_nat]" are
 * "nf_nat".  Into OUT, cut to LEN.
 */
void	record_module_name(const char *path, char *out, size_t len);

/* Write the sample_id trailer for SID into OUT (record_sample_id_size bytes). */
void	record_encode_sample_id(const struct record_layout *,
	    const struct record_sample_id *, void *out);

/*
 * Build an MMAP2 record with the build-id form of the union (what stock perf
 * reads since 5.12) from a decoded mapping, into OUT (at least
 * sizeof(struct mmap2_record) + PATH_MAX + 8 + sample_id size bytes).
 * Returns the record's size.
 */
size_t	record_build_mmap2(void *out, const struct record_mmap *, uint16_t misc,
	    const struct record_layout *, const struct record_sample_id *);

/* Same for the plain (maj/min/ino) form, used when no build-id is known. */
size_t	record_build_mmap2_plain(void *out, const struct record_mmap *, uint16_t misc,
	    const struct record_layout *, const struct record_sample_id *);

/* A plain MMAP record (what perf synthesizes for the kernel and modules). */
size_t	record_build_mmap(void *out, const struct record_mmap *, uint16_t misc,
	    const struct record_layout *, const struct record_sample_id *);

/* A COMM record. */
/* A NAMESPACES record as the kernel's: all of them, only MNT_NS and USER_NS known (inodes). */
size_t	record_build_namespaces(void *out, uint32_t pid, uint32_t tid, uint64_t mnt_ns,
	    uint64_t user_ns, const struct record_layout *, const struct record_sample_id *);
size_t	record_build_comm(void *out, uint32_t pid, uint32_t tid, const char *comm,
	    uint16_t misc, const struct record_layout *, const struct record_sample_id *);

/* Name of a record type ("MMAP2", "SAMPLE", ...), for logs and tests. */
const char *record_type_name(uint32_t type, const struct record_layout *);

#endif
