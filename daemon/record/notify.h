/*
 * notify.h - what the recorder tells the rest of the daemon, in one small
 * interface.  The index and the capture worker each register a listener
 * at start; the recorder and the parts of record/ that find things out
 * (synth.c at a segment's start, segment.c's retention) publish here and
 * know nothing of who listens.  Every call is on the loop thread and must
 * not block: a listener queues what it has to do.
 *
 *	segment_opened   a segment began; the kernel, modules and vDSO as now
 *	segment_closed   it is finished and renamed (seg->path), SIZE bytes
 *	segment_deleted  retention or a full disk removed file NAME
 *	binary_new       the first mapping of a binary in this run (M: where
 *	                 it is mapped, for a copy through map_files; FD: the
 *	                 mapped file, open, if the daemon just read its
 *	                 build-id from it, else -1: valid during the call,
 *	                 a listener that keeps it dups it); B->ns says
 *	                 whether a trusted namespace mapped it
 *	binary_gone      B leaves the table of binaries (no live process maps
 *	                 it, the current segment does not reference it): its
 *	                 id will name another binary (binaries.h)
 *	mapped           a new mmap of binary B by PID, at WALL_NS; SOURCE
 *	                 says where its build-id came from (enum buildid_source)
 *	seen             B still mapped by PID at WALL_NS: a segment's start
 *	                 state, the process's exit (last_seen moves)
 *	unresolved       a file mapping whose build-id could not be proven;
 *	                 CAUSE says why (enum bid_cause, buildid_reader.h)
 *	jit_mapped       PID mapped anonymous executable memory (JIT code) for
 *	                 the first time since its exec (or since the start);
 *	                 0 and *UID, its owner, if taken (left JIT_UID_NONE:
 *	                 nothing to keep at its exit, the process gone); -1 if
 *	                 the listener could not take it now (a full queue): it
 *	                 is told again at the next such mapping or segment close
 *	jit_keep         keep PID's /tmp/perf-PID.map with segment SEG: PID
 *	                 (owned by UID, as jit_mapped said) exited (EXITED:
 *	                 the wall-clock ns of its exit, 1 if not known)
 *	jit_close        SEG is about to close: keep the map of every process
 *	                 with JIT code that runs (once per close, after the
 *	                 jit_mapped of each)
 */
#ifndef PERFMAPD_NOTIFY_H
#define PERFMAPD_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

struct binary;
struct kinfo;
struct record_mmap;
struct segment;

#define JIT_UID_NONE	UINT32_MAX	/* jit_mapped: no watch taken, no keep at exit */

struct recorder_listener {
	void	(*segment_opened)(void *, const struct segment *, const struct kinfo *);
	void	(*segment_closed)(void *, const struct segment *, uint64_t size);
	void	(*segment_deleted)(void *, const char *name);
	void	(*binary_new)(void *, const struct binary *, const struct record_mmap *m, int fd);
	void	(*binary_gone)(void *, const struct binary *);
	void	(*mapped)(void *, const struct binary *, uint32_t pid, uint64_t wall_ns,
		    uint8_t source);
	void	(*seen)(void *, const struct binary *, uint32_t pid, uint64_t wall_ns);
	void	(*unresolved)(void *, const char *path, int cause, uint64_t wall_ns);
	int	(*jit_mapped)(void *, uint32_t pid, uint32_t *uid);	/* *UID left: JIT_UID_NONE */
	void	(*jit_keep)(void *, uint32_t pid, uint32_t uid, const struct segment *,
		    uint64_t exited);
	void	(*jit_close)(void *, const struct segment *);
	/*
	 * Every drain_interval, on the recorder's drain timer: periodic work
	 * of a listener rides on that wake-up of the loop instead of a timer
	 * of its own (on a virtual machine a wake-up costs more than the work).
	 */
	void	(*tick)(void *);
	/*
	 * On the same tick: 1 if the binaries already announced are to be
	 * announced again at their next mapping (binary_new): the capture's
	 * cache evicted some, which a binary mapped again needs copied again.
	 */
	int	(*reannounce)(void *);
	void	*arg;
};

#define NOTIFY_MAX	4

struct notify {
	struct recorder_listener l[NOTIFY_MAX];
	size_t		 n;
};

/* Add a listener (any callback may be NULL); -1 if the list is full. */
int	notify_listen(struct notify *, const struct recorder_listener *);

void	notify_segment_opened(const struct notify *, const struct segment *,
	    const struct kinfo *);
void	notify_segment_closed(const struct notify *, const struct segment *, uint64_t size);
void	notify_segment_deleted(const struct notify *, const char *name);
void	notify_binary_new(const struct notify *, const struct binary *,
	    const struct record_mmap *, int fd);
void	notify_binary_gone(const struct notify *, const struct binary *);
void	notify_mapped(const struct notify *, const struct binary *, uint32_t pid,
	    uint64_t wall_ns, uint8_t source);
void	notify_seen(const struct notify *, const struct binary *, uint32_t pid,
	    uint64_t wall_ns);
void	notify_unresolved(const struct notify *, const char *path, int cause,
	    uint64_t wall_ns);
/* 1 if a listener asks for the binaries to be announced again. */
int	notify_reannounce(const struct notify *);

/* -1 if a listener could not take it now. */
int	notify_jit_mapped(const struct notify *, uint32_t pid, uint32_t *uid);
void	notify_jit_keep(const struct notify *, uint32_t pid, uint32_t uid, const struct segment *,
	    uint64_t exited);
void	notify_jit_close(const struct notify *, const struct segment *);
void	notify_tick(const struct notify *);

#endif
