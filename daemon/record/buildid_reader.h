/*
 * buildid_reader.h - the userspace build-id read of a mapping whose record
 * carries none, and the rule any such build-id must satisfy (provenance):
 * it is read from the very file that was mapped, or from a file proven to
 * be that file, or it is not given at all.
 *
 *	1. /proc/PID/map_files/START-END while the process lives: the mapped
 *	   file itself, whatever has become of its path (renamed over,
 *	   unlinked, another mount namespace's bind mount).  The inode number
 *	   must still be the record's, and its generation where the file
 *	   system keeps one (also in the cache's entries): the range could
 *	   have been unmapped and mapped again with another file, which may
 *	   have been given the freed number.
 *	2. Once the process is gone: the record's path in the daemon's own
 *	   namespace, opened with openat2(RESOLVE_NO_SYMLINKS |
 *	   RESOLVE_NO_MAGICLINKS) as O_PATH (no open of a FIFO or a device),
 *	   accepted only if it is a regular file with the record's device and
 *	   inode (and generation, where the file system gives one) whose
 *	   status last changed before the mapping (ctime): content rewritten
 *	   in place since (cp over it) is refused.
 *	3. Anything else: no build-id, with a cause (enum bid_cause).
 *
 * Every read is of a user's file: it may block for as long as the file
 * system likes (FUSE), so it happens on the resolver's threads (resolver.h)
 * and at start-up only, never on the event loop.  Reads are bounded (the
 * ELF reader of common/buildid.c reads notes only, with caps).
 *
 * The cache remembers answers by what fstat of the file actually read
 * says: (device, inode, size, mtime, ctime).  A hit needs the same five
 * from a fresh stat of the mapped file, so `cp v2 PATH`, which keeps the
 * inode but changes size, mtime or ctime, is a miss.  Only a state older
 * than the read by the ctime margin is remembered, a second more where
 * the file system keeps no nanoseconds: a rewrite after the read then
 * always shows in the state.  Rule 2's "before the mapping" takes the
 * same second on such file systems.  Both compare the wall clock's times:
 * a step of it (wallclock.h) empties the cache, and a proof by time about
 * a mapping made before a step is refused ("clock").  It is shared by the
 * threads (a mutex) and bounded (cleared when full: a miss costs a read,
 * never a wrong answer).
 */
#ifndef PERFMAPD_BUILDID_READER_H
#define PERFMAPD_BUILDID_READER_H

#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>

#include "record.h"

/* Why a mapping has no build-id; the names are what status and the index show. */
enum bid_cause {
	BIDC_OK = 0,
	BIDC_GONE,	/* "gone": the process exited, no file proven to be the mapped one */
	BIDC_REPLACED,	/* "replaced": the file at the path is another (device, inode) */
	BIDC_CHANGED,	/* "changed": the same inode, changed since it was mapped */
	BIDC_TIMEOUT,	/* "timeout": no answer within RESOLVE_TIMEOUT_MS */
	BIDC_NO_NOTE,	/* "no-build-id": an ELF file without a GNU build-id note */
	BIDC_NOT_ELF,	/* "not-elf": not ELF, truncated, or a bad note */
	BIDC_NOT_FILE,	/* "not-regular": not a regular file */
	BIDC_DENIED,	/* "denied": permission denied */
	BIDC_BUSY,	/* "busy": too many reads waiting */
	BIDC_ERROR,	/* "error": another I/O error */
	BIDC_CLOCK,	/* "clock": the wall clock stepped after the mapping (wallclock.h) */
	BIDC_USERFS,	/* "user-fs": a user's process serves the file, and no
			   reader thread could be given to it (resolver.c) */
	BIDC_NCAUSES
};

const char *buildid_cause_name(int cause);

/*
 * When a mapping was made, as the proofs by time use it: WALL_NS, its
 * wall-clock time (0: unknown, no proof by time), and SINCE_NS, from when
 * (CLOCK_MONOTONIC) no step of the wall clock may be seen for such a proof
 * to hold (wallclock.h).  FLOOR_NS, when WALL_NS is unknown: a wall-clock
 * time the mapping was not made before (its process's start, at the
 * start-up scan; 0: none): a file written clearly after it (its mtime: a
 * link or a chmod in the process's life moves only the ctime) may have
 * been written after the mapping, and is not read as the mapped one.
 * NAMED_NS: a wall-clock time by which the mapping's name had been read
 * (WALL_NS for a record, whose name the kernel wrote when it mapped the
 * file; the start-up scan's look at /proc/PID/maps), SINCE_NS holding for
 * it too; 0: unknown.  The proof of a name's " (deleted)" is by it
 * (struct bid_answer's UNLINKED).
 */
struct bid_when {
	uint64_t	 wall_ns;
	uint64_t	 since_ns;
	uint64_t	 floor_ns;
	uint64_t	 named_ns;
};

/* *INTO becomes the earlier of itself and W, each field (a request's members). */
static inline void
bid_when_earliest(struct bid_when *into, struct bid_when w)
{
	if (w.wall_ns < into->wall_ns)
		into->wall_ns = w.wall_ns;
	if (w.since_ns < into->since_ns)
		into->since_ns = w.since_ns;
	if (w.floor_ns < into->floor_ns)
		into->floor_ns = w.floor_ns;
	if (w.named_ns < into->named_ns)
		into->named_ns = w.named_ns;
}

/* What the record says of a mapping: the question. */
struct bid_query {
	uint32_t	 pid;
	uint64_t	 addr, len;
	int		 has_inode;
	uint32_t	 maj, min;
	uint64_t	 ino, gen;
	struct bid_when	 map;		/* when it was mapped */
	const char	*filename;
};

/*
 * UNLINKED: the file read through map_files had no link left, and its
 * status last changed (the unlink moves the ctime; nothing moves it back)
 * before the query's NAMED_NS by the margin of rule 2: it was unlinked
 * when its name was read, so a " (deleted)" ending that name is the
 * kernel's mark, not part of the file's name.  Anyone can name a file
 * "tool (deleted)" beside another's "tool" in /tmp: without this proof
 * the name is the file's own, whole.
 *
 * FOREIGN: the file read through map_files is on a mount the host's mount
 * namespace does not have, or it could not be told (buildid_reader's
 * HOST_MOUNT): its name is its path in another namespace, whoever maps it
 * (recorder_foreign).
 */
struct bid_answer {
	int		 cause;		/* BIDC_OK: ID holds SIZE bytes */
	uint8_t		 size;
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 cached;	/* answered from the cache */
	uint8_t		 unlinked;	/* see above */
	uint8_t		 foreign;	/* see below */
};

/* What A proved of the mapping's name: record.h MMAP_NAME_*. */
static inline unsigned
bid_answer_name_flags(const struct bid_answer *a)
{
	return (a->unlinked ? MMAP_NAME_UNLINKED : 0) | (a->foreign ? MMAP_NAME_FOREIGN : 0);
}

struct buildid_reader_entry {
	uint64_t	 key;		/* 0: empty */
	dev_t		 dev;
	ino_t		 ino;
	off_t		 size;
	int64_t		 mtime_ns, ctime_ns;
	int8_t		 cause;		/* BIDC_NO_NOTE, BIDC_NOT_ELF or BIDC_OK */
	uint8_t		 has_gen;	/* GEN is the file's (FS_IOC_GETVERSION) */
	uint32_t	 gen;
	uint8_t		 idsize;
	uint8_t		 id[BUILD_ID_MAX];
};

struct buildid_reader {
	/*
	 * Shown every O_PATH handle before anything is read or looked up
	 * through it (struct bid_guard's FN; NULL: none); a refusal is the
	 * answer "user-fs".
	 */
	int		(*guard)(int pathfd, uint32_t pid, char *why, size_t whylen);
	/*
	 * Is the file of an O_PATH handle on a mount of the host's mount
	 * namespace: 1 yes, 0 no, -1 not known (userfs_host_mount)?  NULL:
	 * every file is taken for the host's (the tests' readers).
	 */
	int		(*host_mount)(int pathfd);
	pthread_mutex_t	 mu;
	struct buildid_reader_entry *e;
	size_t		 n, cap;
	uint64_t	 reads, hits;	/* under mu */
	uint64_t	 epoch;		/* wallclock_steps() the entries were made in; under mu */
};

int	buildid_reader_init(struct buildid_reader *);
void	buildid_reader_free(struct buildid_reader *);

/*
 * Answer Q (blocks on the file system: threads and start-up only).  If FD
 * is not NULL and the answer is a build-id read from a file just now (not
 * the cache), *FD gets that file, still open (the caller closes it): the
 * capture worker may copy it; else -1.
 */
void	buildid_reader_resolve(struct buildid_reader *, const struct bid_query *q,
	    struct bid_answer *a, int *fd);

/*
 * The cheap proof for mappings of one file (an exec storm maps the same
 * few files thousands of times a second): Q's path, opened as rule 2
 * opens it, is the record's inode, unchanged since before WHEN (the
 * earliest of the mappings answered, bid_when_earliest), in the state the
 * cache read it in.  Then the cache's answer is each mapping's: 1, *A
 * filled.  0: no proof, nothing filled (buildid_reader_resolve for each).
 * No file is read.
 * PIN (or NULL): the file opened for the proof, kept when it may be pinned
 * (struct bid_pin below).
 */
struct bid_pin;
int	buildid_reader_known(struct buildid_reader *, const struct bid_query *q,
	    struct bid_when when, struct bid_answer *a, struct bid_pin *pin);

/*
 * A file the loop keeps open to prove its next mappings itself
 * (resolver_pinned): what the proof of buildid_reader_known opened, kept
 * if PIN is not NULL, the answer a build-id, and the file one whose
 * content only root can change and whose status costs no I/O: a regular
 * file owned by root, not writable by its group or others (an ACL that
 * lets anyone else write shows in the group bits), on ext4 or XFS, in a
 * state older than the proof by the ctime margin (a second more where the
 * timestamps are whole seconds, so a change in the same second as the
 * state's ctime cannot follow the proof).  FD is an O_PATH descriptor (no
 * open(2) of the file): fstat works on it, and it holds the inode, so the
 * device and inode number name this file for as long as it is kept (on
 * those file systems two live files never share a number).  Else FD
 * stays -1.
 */
struct bid_pin {
	int		 fd;
	dev_t		 dev;
	ino_t		 ino;
	off_t		 size;
	int64_t		 mtime_ns, ctime_ns;	/* the state the answer was read in */
	int64_t		 gran;		/* of its timestamps: 0, or a second (whole seconds) */
	uint64_t	 steps;		/* wallclock_steps() when pinned: a step drops it */
	struct bid_answer a;
};

/* Is ST (fstat of the pin's fd now) the file P was read from, unchanged, still linked? */
int	buildid_pin_holds(const struct bid_pin *p, const struct stat *st);
/*
 * Was the pinned file, unchanged since (buildid_pin_holds), in this state
 * before MAP_WALL_NS, by the rule 2 margin for a coarse ctime?
 */
int	buildid_pin_before(const struct bid_pin *p, uint64_t map_wall_ns);

/*
 * Is FILENAME a file whose build-id is wanted: a path, but none of the
 * names perf treats as anonymous memory ("//anon", "/dev/zero",
 * "/anon_hugepage", "/SYSV...", "/memfd:...")?
 */
int	buildid_reader_is_file(const char *filename);

/* "/proc/PID/map_files/ADDR-END" of the mapping [ADDR, ADDR + SIZE), into BUF. */
void	buildid_reader_map_files(char *buf, size_t len, uint32_t pid, uint64_t addr,
	    uint64_t size);

/*
 * A guard is shown every O_PATH handle before anything is opened or
 * looked up through it (of a path's directories, the first on each mount:
 * its verdict must be its mount's and device's, the same for every
 * directory of one mount, and it stands for the rest of that walk, a few
 * milliseconds, though what it rests on - the mount table, whether a
 * user's FUSE server exists - may change meanwhile, as it may after any
 * verdict); FN returning nonzero refuses it, its reason in WHY; PID is
 * the process the handle is reached through (its map_files, its root), 0
 * for a path of the daemon's.  The capture worker's is
 * userfs_fd: its reads have no deadline, so nothing a user's FUSE server
 * serves may be reached.  The reader's reads have one, but a thread in a
 * read stays in the server's hands: its guard (struct buildid_reader's,
 * resolver.c) lets one thread per device into such files, on three
 * devices at most.
 */
struct bid_guard {
	int	(*fn)(int pathfd, uint32_t pid, char *why, size_t whylen);
	char	*why;
	size_t	 whylen;
	uint32_t pid;
};
#define EBID_GUARD	EREMOTEIO	/* -EBID_GUARD: a guard refused (not a kernel's EPERM) */
/* The guard of FN (NULL: none) for a handle reached through PID, its reason into WHY (an array). */
#define bid_guard_of(fn, why, pid) \
	((fn) != NULL ? &(struct bid_guard){ (fn), (why), sizeof(why), (pid) } : NULL)

/*
 * The opening rules, for every reader of a user's file (the capture
 * worker too): the mapped file of PID at [ADDR, ADDR + LEN) through
 * map_files, or PATH by name as rule 2 above opens it (without the
 * ctime check), each looked at as O_PATH and shown GUARD first (PATH:
 * each directory on the way too); each returns a read-only fd of a
 * regular file with *ST filled, or -errno (-ESTALE: not the expected
 * file: another device or inode, or generation where that is all there
 * is; -EBID_GUARD: GUARD refused).
 */
int	buildid_reader_open_mapped(uint32_t pid, uint64_t addr, uint64_t len, int has_inode,
	    uint32_t maj, uint32_t min, uint64_t ino, uint64_t gen, const struct bid_guard *guard,
	    struct stat *st);
int	buildid_reader_open_verified(const char *path, uint32_t maj, uint32_t min, uint64_t ino,
	    uint64_t gen, const struct bid_guard *guard, struct stat *st);
/*
 * A user's file by PATH for a copy, nothing to compare it with: a regular
 * file, opened without following a symlink (MAGIC: PATH is a map_files
 * link, and following that one is the point), and never opened at all
 * when it is a FIFO or a device (some open with side effects: a
 * watchdog).  -ELOOP: a symlink on the path; -EISDIR: not a regular file.
 */
int	buildid_reader_open_regular(const char *path, int magic, const struct bid_guard *guard,
	    struct stat *st);
/*
 * The file of the O_PATH handle PFD, with *ST its state, opened for
 * reading if it is a regular file (nothing else is opened: a FIFO or a
 * device may act at its open); -ELOOP: a symlink, -EISDIR: not a regular
 * file, -ESTALE: not the same inode once open.  The openers' last step,
 * and the JIT maps' (jit.c).
 */
int	buildid_reader_reopen_regular(int pfd, struct stat *st);

#endif
