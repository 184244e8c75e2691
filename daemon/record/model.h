/*
 * model.h - the daemon's in-memory picture of the machine: every live
 * process with its threads' names and its executable mappings (with their
 * build-ids), kept up to date from MMAP2/MMAP3/COMM/FORK/EXIT records.
 * Each new segment starts with this state synthesized as records, so a
 * segment is self-contained without rescanning /proc.
 */
#ifndef PERFMAPD_MODEL_H
#define PERFMAPD_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

/*
 * A mapped file as the records name it: name, inode and build-id.  Each
 * is kept once however many maps name it (every process maps libc), and
 * freed a while after the last (once FILES_IDLE more went out of use);
 * read-only outside model.c but for bin and bin_ns, the recorder's cache
 * (recorder_file_binary).
 */
struct model_file {
	struct model_file *next;	/* hash chain */
	uint64_t	 hash;
	uint64_t	 ino, ino_generation;
	uint32_t	 maj, min;
	uint32_t	 refs;		/* the maps naming it */
	uint32_t	 bin;		/* the binary it was last found to be (BINARY_NONE:
					   none yet; an id may be reused since) ... */
	uint64_t	 bin_ns;	/* ... in this provenance (binaries.h NS) */
	uint16_t	 namelen;	/* strlen(name): a map's share of name_bytes */
	uint8_t		 idle;		/* in struct model's idle ring */
	uint8_t		 build_id_size;	/* 0: not known (yet) */
	uint8_t		 name_flags;	/* what was proven of NAME: record.h MMAP_NAME_* */
	uint8_t		 build_id[BUILD_ID_MAX];
	char		 name[];
};

/* 48 bytes: what differs between two maps of one file. */
struct model_map {
	uint64_t	 addr, len, pgoff;
	struct model_file *file;
	uint32_t	 prot, flags;
	uint32_t	 bin;		/* its binary's id (binaries.h), or BINARY_NONE */
	uint8_t		 source;	/* enum buildid_source */
};

/* A slot of a process's thread table; free when !used. */
struct model_thread {
	uint32_t	 tid;
	uint8_t		 used;
	char		 comm[16];
};

struct model_proc {
	struct model_proc *next;	/* the spares' list */
	uint32_t	 pid;
	uint32_t	 jit_uid;	/* if jit: its owner when its watch was taken */
	uint64_t	 mnt_ns, user_ns;	/* its namespaces (nsfs inodes), 0 unknown */
	uint32_t	 ns_epoch;	/* struct model's NS_EPOCH when they were learned */
	int		 leader_gone;	/* EXIT of pid seen, other threads remain */
	int		 jit;		/* maps anonymous executable memory: its
					   /tmp/perf-PID.map is watched (capture/jit.c) */
	struct model_thread *threads;	/* open addressing by tid: cthreads slots
					   (a power of two), nthreads used */
	size_t		 nthreads, cthreads;
	struct model_map *maps;		/* sorted by addr, non-overlapping */
	size_t		 nmaps, cmaps;
	/*
	 * When the start-up scan began to read it and when it was done (0:
	 * it did not); DATED (recorder.c, date_changed): MODEL_DATED, it
	 * changed between the events' start and SCAN_BEGIN_NS, and no start
	 * state shows it before SCAN_NS; MODEL_UNREAD, it changed while the
	 * scan read it (what the scan saw may be either image), and no start
	 * state shows it before SCAN_NS at all.
	 */
	uint64_t	 scan_begin_ns, scan_ns;
	uint64_t	 changed_ns;	/* its last change the scan saw (or may have), or 0 */
	int		 dated;
	size_t		 name_bytes;	/* its maps' names' (model.name_bytes) */
};

#define MODEL_DATED	1
#define MODEL_UNREAD	2

#define FILES_IDLE	16
#define FILES_RECENT_BITS 6
#define FILES_RECENT	(1 << FILES_RECENT_BITS)	/* files found by inode first */

/*
 * Processes by pid in an open-addressing table whose slots hold the pid
 * (a lookup, found or not, reads the slots, not the processes), files by
 * what they are in a chained hash; both grow with their number, so
 * lookups stay O(1) on a host of any size.
 */
struct model_slot {
	uint32_t	 pid;
	struct model_proc *p;		/* NULL: empty; model.c's tomb: removed in a walk */
};

struct model {
	struct model_slot *slots;	/* a power of two, at most half used */
	size_t		 nslots;
	size_t		 ntombs;
	struct model_proc *last;	/* the last one found: a process's records come
					   in runs, and each is looked up more than once */
	size_t		 nprocs;
	size_t		 nmaps;
	struct model_file **fbuckets;
	size_t		 nfbuckets;
	size_t		 nfiles;	/* in use (idle ones not counted) */
	struct model_file *idle[FILES_IDLE];	/* the last to go out of use (model.c) */
	struct model_file *recent[FILES_RECENT];	/* by inode: found again unhashed (model.c) */
	size_t		 idle_next;
	struct model_proc *spare;	/* gone, kept for reuse (next) */
	size_t		 nspare;
	int		 walking;	/* in model_foreach: no moving slots */
	/*
	 * Bumped when a side-band record may have been lost (recorder.c
	 * proc_ns): a NAMESPACES record among them would have left a process
	 * in the namespaces it had before, the host's for a user's unshare.
	 * A process's namespaces learned before are looked at again.
	 */
	uint32_t	 ns_epoch;
	/*
	 * The maps of each binary, by binary id (cmd-lookup.c: which
	 * versions of a path live processes map): kept exact by every
	 * change of the maps.  bin_maps_lost: a count could not be kept
	 * (out of memory): none is known until model_bin_recount.
	 */
	uint32_t	*bin_maps;
	size_t		 nbin_maps;
	int		 bin_maps_lost;
	/*
	 * A process's maps at most (the kernel's vm.max_map_count: it can
	 * have no more): perf has no munmap record, so a map leaves only
	 * when another covers it, and a process that maps and unmaps at
	 * new addresses would grow its list for ever.  At the cap its
	 * anonymous maps go, and all of them if that frees too little
	 * (maps_shed, counted): they are stale but for at most this many.
	 */
	size_t		 maps_max;
	uint64_t	 maps_shed;	/* times a process's maps were shed */
	/*
	 * All processes' maps at most: a user's process that maps and
	 * unmaps 65,000 pages (all stale in the model, perf has no munmap)
	 * and forks a child a second gave each child a copy, 3 MB of the
	 * daemon's memory and 8 MB of every segment's start state.  Past
	 * it, the process with the most maps is shed, as at its own cap,
	 * until the model is under it (maps_shed_global counts).
	 */
	size_t		 maps_global_max;
	uint64_t	 maps_shed_global;
	/*
	 * And their names' bytes at most (each map's file name, as every
	 * segment's start state writes it): 4M maps of 4,000-byte names (a
	 * user's long path, mapped at 65,000 addresses, and forked) were
	 * 17 GB of every start state.  Past it, the process whose maps' names
	 * weigh most is shed, until the names are under 7/8 of it.
	 */
	size_t		 name_bytes, name_bytes_max;
};

#define MODEL_MAPS_MAX	65530	/* the kernel's default vm.max_map_count */
#define MODEL_MAPS_GLOBAL_MAX	((size_t)4 << 20)	/* twice the benchmark's big host */
#define MODEL_NAME_BYTES_MAX	((size_t)512 << 20)	/* its 2M maps: 180 MB */

int	model_init(struct model *);
void	model_free(struct model *);
/* Binary BIN's maps in live processes: 1 some, 0 none, -1 not known (bin_maps_lost). */
int	model_bin_mapped(const struct model *, uint32_t bin);
/* MM is binary BIN's (BINARY_NONE: none's) from now on. */
void	model_map_set_bin(struct model *, struct model_map *mm, uint32_t bin);
/* Count every binary's maps again (after bin_maps_lost): 0, or -1 out of memory. */
int	model_bin_recount(struct model *);

struct model_proc *model_find(struct model *, uint32_t pid);
/* The thread's name, or NULL. */
const char *model_comm(struct model *, uint32_t pid, uint32_t tid);
/* P's thread after PREV in its table (the first: PREV NULL), or NULL: to iterate. */
struct model_thread *model_thread_next(const struct model_proc *p, struct model_thread *prev);

/*
 * Record a mapping (replaces whatever it overlaps); BIN is the id of its
 * binary (binaries.h), or BINARY_NONE.  Returns 0 or -ENOMEM.
 */
int	model_add_map(struct model *, const struct record_mmap *, uint8_t source, uint32_t bin);
/* The same, *OUT the map as added (valid until P's maps change). */
int	model_add_map_at(struct model *, const struct record_mmap *, uint8_t source,
	    uint32_t bin, struct model_map **out);
/*
 * The build-id of PID's map at ADDR, once read, and what the read proved
 * of its name (record.h MMAP_NAME_*); -ENOENT if there is none.
 */
int	model_set_map_buildid(struct model *, uint32_t pid, uint64_t addr, const uint8_t *id,
	    uint8_t size, unsigned name_flags, uint8_t source);
int	model_set_comm(struct model *, uint32_t pid, uint32_t tid, const char *comm, int exec);
int	model_fork(struct model *, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid);
/* P's maps let go: what the model has of them is not P's (sideband.c). */
void	model_forget_maps(struct model *, struct model_proc *p);
void	model_exit(struct model *, uint32_t pid, uint32_t tid);
/*
 * The namespaces of PID (a NAMESPACES record: at fork, unshare and setns;
 * the /proc scan at start).  A new process inherits its parent's.
 */
int	model_set_ns(struct model *, uint32_t pid, uint64_t mnt_ns, uint64_t user_ns);

/*
 * The mapping MM of process P as a decoded MMAP2 record (filename shared
 * with MM: valid until MM changes).
 */
void	model_map_record(const struct model_proc *p, const struct model_map *mm,
	    struct record_mmap *out);

/*
 * Visit every process (in no particular order).  FN may remove the
 * process it is given (model_exit), not add any.
 */
typedef int (*model_proc_fn)(struct model_proc *, void *arg);
int	model_foreach(struct model *, model_proc_fn, void *arg);

#endif
