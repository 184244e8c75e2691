/*
 * procs.h - the processes of one segment while it is read: each thread's
 * comm and each process's executable mappings, from the segment's own
 * start state (synthesized COMM and MMAP2 records) and the records that
 * follow.  Reset between segments: every segment is self-contained, so
 * memory is bounded by what one segment holds alive.
 *
 *	COMM		the thread's comm; with COMM_EXEC the process's maps go
 *	FORK		a new process starts with its parent's maps and comm
 *	EXIT		the thread (and with its leader, the process) goes, but
 *			only after PROCS_GRAVE later exits: the kernel still
 *			samples a task in do_exit() after its EXIT record
 *	MMAP, MMAP2	replaces whatever it overlaps; pid -1 is the kernel's
 */
#ifndef PERFMAPD_PROCS_H
#define PERFMAPD_PROCS_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize.h"

#define PROCS_KERNEL	UINT32_MAX	/* the pid of kernel maps */
#define PROCS_GRAVE	1024		/* exited tasks kept for late samples */
/*
 * A segment's records are a user's to make: perf has no munmap record, so
 * a process mapping one file at 500,000 addresses holds them all, and
 * each of its children a copy.  A process is shed (its maps dropped, its
 * frames unmapped until its next exec; counted) when it would hold more
 * than PROCS_MAPS_MAX maps, as the recorder's model bounds a process; and
 * when the maps allocated for all would pass PROCS_MAPS_GLOBAL (32 bytes
 * each: 128 MiB), the process holding the most is, as the model bounds
 * them all.
 */
#define PROCS_MAPS_MAX		65530
#define PROCS_MAPS_GLOBAL	((size_t)4 << 20)

struct pmap {
	uint64_t	 start, end, pgoff;
	struct binary	*bin;
};

struct proc {
	struct proc	*hnext;
	uint32_t	 pid;
	char		 comm[16];
	struct pmap	*maps;		/* sorted, not overlapping */
	size_t		 nmaps, cap;
	struct binary	*jit;		/* its kept perf-PID.map in this segment */
	int		 jit_checked;
	int		 jit_elf_failed;	/* no image could be made of its kept map */
	int		 dead;		/* exited: forgotten when it leaves the grave */
	int		 shed;		/* over a bound: no maps until its next exec */
};

struct thr {
	struct thr	*hnext;
	uint32_t	 tid, pid;
	char		 comm[16];
	int		 dead;
};

struct procs {
	struct proc	**ph;
	size_t		 pcap, np;
	struct thr	**th;
	size_t		 tcap, nt;
	struct proc	 kernel;	/* pid PROCS_KERNEL */
	struct {
		uint32_t pid, tid;
	}		 grave[PROCS_GRAVE];	/* exited, not yet forgotten */
	size_t		 ngrave, grave_next;
	size_t		 maps_alloc;	/* maps allocated, all processes' */
	size_t		 maps_max, maps_global;	/* the bounds (tests lower them) */
	uint64_t	 shed;		/* processes shed (profile_stats.procs_shed) */
};

int	procs_init(struct procs *);
void	procs_clear(struct procs *);	/* forget everything, keep the tables */
void	procs_free(struct procs *);

struct proc *procs_get(struct procs *, uint32_t pid, int create);
/* The thread's comm, else its process's; NULL if neither is known. */
const char *procs_comm(struct procs *, uint32_t pid, uint32_t tid);

int	procs_set_comm(struct procs *, uint32_t pid, uint32_t tid, const char *comm, int exec);
int	procs_fork(struct procs *, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid);
void	procs_exit(struct procs *, uint32_t pid, uint32_t tid);
int	procs_map(struct procs *, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
	    struct binary *);
/* The mapping of PID (PROCS_KERNEL: the kernel's) that holds IP, or NULL. */
const struct pmap *procs_find(struct procs *, uint32_t pid, uint64_t ip);

#endif
