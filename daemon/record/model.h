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

struct model_map {
	uint64_t	 addr, len, pgoff;
	uint32_t	 prot, flags;
	uint32_t	 maj, min;
	uint64_t	 ino, ino_generation;
	uint8_t		 build_id[BUILD_ID_MAX];
	uint8_t		 build_id_size;
	uint8_t		 source;	/* enum buildid_source */
	uint32_t	 bin;		/* its binary's id (binaries.h), or BINARY_NONE */
	char		*filename;	/* shared by copies of the map (counted) */
};

struct model_thread {
	uint32_t	 tid;
	char		 comm[16];
};

struct model_proc {
	struct model_proc *next;	/* hash chain */
	uint32_t	 pid;
	uint64_t	 mnt_ns, user_ns;	/* its namespaces (nsfs inodes), 0 unknown */
	int		 leader_gone;	/* EXIT of pid seen, other threads remain */
	int		 jit;		/* maps anonymous executable memory: its
					   /tmp/perf-PID.map is watched (capture/jit.c) */
	struct model_thread *threads;
	size_t		 nthreads, cthreads;
	struct model_map *maps;		/* sorted by addr, non-overlapping */
	size_t		 nmaps, cmaps;
};

struct model {
	struct model_proc **buckets;
	size_t		 nbuckets;
	size_t		 nprocs;
	size_t		 nmaps;
};

int	model_init(struct model *);
void	model_free(struct model *);

struct model_proc *model_find(struct model *, uint32_t pid);
/* The thread's name, or NULL. */
const char *model_comm(struct model *, uint32_t pid, uint32_t tid);

/*
 * Record a mapping (replaces whatever it overlaps); BIN is the id of its
 * binary (binaries.h), or BINARY_NONE.  Returns 0 or -ENOMEM.
 */
int	model_add_map(struct model *, const struct record_mmap *, uint8_t source, uint32_t bin);
/* The build-id of PID's map at ADDR, once read; -ENOENT if there is none. */
int	model_set_map_buildid(struct model *, uint32_t pid, uint64_t addr, const uint8_t *id,
	    uint8_t size, uint8_t source);
int	model_set_comm(struct model *, uint32_t pid, uint32_t tid, const char *comm, int exec);
int	model_fork(struct model *, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid);
void	model_exit(struct model *, uint32_t pid, uint32_t tid);
/*
 * The namespaces of PID (a NAMESPACES record: at fork, unshare and setns;
 * the /proc scan at start).  A new process inherits its parent's.
 */
int	model_set_ns(struct model *, uint32_t pid, uint64_t mnt_ns, uint64_t user_ns);

/* The mapping MM of process P as a decoded MMAP2 record (filename shared with MM). */
void	model_map_record(const struct model_proc *p, const struct model_map *mm,
	    struct record_mmap *out);

/* Visit every process (in no particular order). */
typedef int (*model_proc_fn)(struct model_proc *, void *arg);
int	model_foreach(struct model *, model_proc_fn, void *arg);

#endif
