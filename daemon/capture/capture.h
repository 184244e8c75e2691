/*
 * capture.h - the capture worker: copies binaries into the build-id cache
 * (common/bidcache.h) on a thread of its own, so that the loop that reads
 * the rings never waits for a disk, an ELF parse or a network.
 *
 * The loop hands jobs over through a bounded queue and never blocks on it:
 *
 *	loop (recorder's listener)             worker
 *	binary_new ───── first sight of ID ──► copy /proc/PID/map_files/A-B
 *	  (queue full: ID noted as missed)       (▸ /proc/PID/root/PATH ▸ PATH),
 *	                                         verify the copy's build-id
 *	segment_opened ──────────────────────► /proc/kallsyms, modules, vDSO
 *	segment_closed ──────────────────────► lazy mode: store the segment;
 *	                                         eviction above max_size
 *	capture_jit_watch(), _keep() ────────► /tmp/perf-PID.map kept with a segment
 *	capture_store(), capture_export() ───► one reply per build-id ...
 *	        ◄── results queue + eventfd ──  ... and a final one
 *	capture_poll(): replies to clients, counters
 *	capture_profile() ──► the profile thread (common/profile/), same replies
 *
 * Shared state is only the two queues (under one mutex) and the counters
 * (atomics); the cache itself belongs to the worker.
 */
#ifndef PERFMAPD_CAPTURE_H
#define PERFMAPD_CAPTURE_H

#include <stdint.h>
#include <jansson.h>

#include "config.h"
#include "perf_abi.h"
#include "record.h"

struct capture;
struct control_client;
struct event_base;
struct recorder_listener;

struct capture_stats {
	uint64_t	 seen;		/* distinct build-ids handed to capture */
	uint64_t	 captured;	/* copied into the cache */
	uint64_t	 present;	/* already there */
	uint64_t	 failed;	/* no source could give a verified copy */
	uint64_t	 missed;	/* queue full: left for store */
	uint64_t	 cache_bytes, cache_entries;
	uint64_t	 refused_full;	/* no room under max_size, nothing to evict */
	uint64_t	 refused_quota;	/* its owner had used their share */
	uint64_t	 jit_unwatched;	/* JIT processes not watched: share or queue full */
	uint64_t	 jit_unkept;	/* JIT processes exited, their keep not queued */
};

/* Open the cache (conf->cache_dir or STATE/debug) and start the worker. */
int	capture_start(struct capture **, const struct config *, const char *state_dir,
	    char *err, size_t errlen);
/*
 * Ask the worker and the profile thread to stop: the worker ends after
 * the job at hand and the JIT maps still to keep (CAPTURE_STOP_KEEP_MS).
 */
void	capture_stop_begin(struct capture *);
/*
 * The same, then wait for them (CAPTURE_STOP_JOIN_MS at most) and free
 * everything: 0.  1: a thread did not stop in time (stuck in a file
 * system): it is left running with what it uses, for the process's exit,
 * which must then be _exit (no exit handler may run beside it).
 */
int	capture_stop(struct capture *);
/* Watch the worker's eventfd from BASE: results reach the loop as they come. */
int	capture_attach(struct capture *, struct event_base *);
/* Deliver finished results: replies to clients, counters.  Loop only. */
void	capture_poll(struct capture *);
void	capture_stats(struct capture *, struct capture_stats *);

/*
 * The listener the recorder publishes to (record/notify.h): a binary's
 * first mapping (eager mode copies it), a segment's start (the kernel, its
 * modules and the vDSO, once per build-id), a segment closed (lazy
 * capture, eviction).
 */
void	capture_listener(struct capture *, struct recorder_listener *);

/*
 * Control requests, answered from the worker through capture_poll:
 * SEGMENTS (array of strings, may be NULL), SINCE_NS (-1: none), ALL.
 * MORE: stream one reply per build-id, else one reply with a "results"
 * array.  Returns 0, or -1 with *ERR a proto_error message.
 */
int	capture_store(struct capture *, struct control_client *, int more,
	    json_t *segments, int64_t since_ns, int all, int debuginfod, json_t **err);
/* NAME: the file the client will write (for the instructions); ALL_BINARIES: not only those hit. */
int	capture_export(struct capture *, struct control_client *, int more,
	    json_t *segments, int64_t since_ns, const char *name, int all_binaries,
	    json_t **err);
/*
 * io.perfmap.Profile (PARAMS as common/profile/params.c reads them), run on
 * a thread of its own (a long window must not hold up captures); the reply
 * names the file written under STATE/profiles/.  0, or -1 with *ERR.
 */
int	capture_profile(struct capture *, struct control_client *, json_t *params,
	    json_t **err);
/*
 * The pprof of segments FIRST..LAST, [SINCE, UNTIL) on the wall clock (a
 * snapshot's period), written beside segment SEGPATH (LAST's) as
 * SEGPATH.pb.gz.
 */
void	capture_profile_period(struct capture *, const char *segpath, uint64_t first,
	    uint64_t last, int64_t since_ns, int64_t until_ns);

/*
 * JIT maps (perf's /tmp/perf-PID.map convention), from the recorder's
 * jit_mapped, jit_keep and jit_close (capture_listener).  A process that
 * maps anonymous executable memory is watched: its owner is noted while it
 * lives (capture_jit_watch: 0 and *UID, or -1 when the worker's queue has
 * no room for it, and the recorder tells it again later).
 * capture_jit_keep, PID of UID exited: its map, if it wrote one, is copied
 * into SEGPATH.jit/ (EXITED: the process is gone since that wall-clock
 * ns, 1 if not known: forget it, and keep no map written after it).
 * Users' jobs take at most JIT_QUEUE_USERS of the queue, so that one
 * user's mass exit (a keep each) leaves room for root's.
 * capture_jit_close, SEGPATH closes: the maps of every process watched
 * that still lives are kept, in one job.
 */
int	capture_jit_watch(struct capture *, uint32_t pid, uint32_t *uid);
void	capture_jit_keep(struct capture *, uint32_t pid, uint32_t uid, const char *segpath,
	    uint64_t exited);
void	capture_jit_close(struct capture *, const char *segpath);

#endif
