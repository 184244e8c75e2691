/*
 * recorder.h - the recording core: events and rings in, segments out.
 *
 * recorder.c owns the passes, the segments and their rotation, and the
 * wiring to the event loop; sideband.c the side-band rings (the model's
 * records and the build-id reads they start); resolver.c and
 * buildid_reader.c the reads themselves, on threads.
 */
#ifndef PERFMAPD_RECORDER_H
#define PERFMAPD_RECORDER_H

#include <limits.h>
#include <stdint.h>

#include "binaries.h"
#include "buildid_reader.h"
#include "config.h"
#include "events.h"
#include "flight.h"
#include "kernel.h"
#include "model.h"
#include "notify.h"
#include "perfdata.h"
#include "resolver.h"
#include "segment.h"
#include "synth.h"

struct event_base;
struct recorder_loop;
struct tab;

/* How far behind now a pass reads: longer than any record takes to land. */
#define RECORDER_MARGIN_NS	(20ULL * 1000 * 1000)
/* A record stamped this far after its pass began is bogus: taken as it is. */
#define RECORDER_FUTURE_NS	(1000ULL * 1000 * 1000)

struct recorder_stats {
	uint64_t	 samples;
	uint64_t	 records;
	uint64_t	 mmaps;
	uint64_t	 mmaps_kernel_id;	/* build-id came in the record */
	uint64_t	 mmaps_user_id;		/* read by us */
	uint64_t	 mmaps_no_id;		/* file mappings with no build-id ("unknown") */
	uint64_t	 unknown[BIDC_NCAUSES];	/* ... by cause (buildid_reader.h) */
	uint64_t	 lost_sideband;		/* of lost: side-band records (the model missed) */
	uint64_t	 lost;			/* records the kernel dropped (LOST) */
	uint64_t	 lost_samples;		/* LOST_SAMPLES */
	uint64_t	 bad_records;		/* malformed, dropped */
	uint64_t	 write_errors;		/* records that could not be written */
	uint64_t	 deleted_for_space;	/* segments deleted because the disk was full */
	uint64_t	 unfinished;		/* closes that failed, their .partial left */
	uint64_t	 ns_looked_up;		/* processes whose namespaces the model lacked */
	uint64_t	 sb_full_looks;		/* side-band rings seen too full to be sure of no loss */
	uint64_t	 bytes;			/* written to segments */
	uint64_t	 segments;		/* closed */
	uint64_t	 rotations_size, rotations_age, rotations_signal, rotations_request;
	uint64_t	 flight_states;		/* flight: states of ended images kept */
	uint64_t	 flight_state_bytes;	/* ... their bytes */
	uint64_t	 flight_states_short;	/* ... not kept: the image lived too short */
	uint64_t	 sb_wakeups;		/* side-band passes of a burst (hold-off timer) */
	uint64_t	 sb_holdoff_news;	/* hold-offs brought back to the shortest by news */
	uint64_t	 sb_records;		/* side-band records taken at their turn ... */
	uint64_t	 sb_arrival_looks;	/* ... and looked at on arrival (sideband.c) */
	uint64_t	 start_spilled;		/* bytes held in memory during the start's scan */
	uint64_t	 start_spill_full;	/* ... times a ring's share of it was full */
	uint64_t	 start_dated;		/* processes changed during it (recorder.c, date_changed) */
	uint64_t	 start_forks_unknown;	/* ... children forked before their parent's change:
						   no maps (sideband.c, fork_before_scan) */
	uint64_t	 sb_spilled;		/* side-band bytes held in memory later (relieve) */
	uint64_t	 sb_spill_full;		/* ... times a ring's share of it was full */
};

enum rotate_reason {
	ROTATE_SIZE,
	ROTATE_AGE,
	ROTATE_SIGNAL,
	ROTATE_REQUEST,		/* snapshot */
	ROTATE_STOP,
};

/* A side-band ring's state (sideband.c). */
/* A mapping's read: where its record is in its ring, the request, its member number. */
struct sb_read {
	uint64_t	 pos;
	struct resolve_req *q;		/* NULL: proven by a pin at arrival, answer in a */
	uint32_t	 idx;
	struct bid_answer a;
};

/*
 * Room for a NAMESPACES record (7 namespaces, its sample id): a ring with
 * less free may have dropped one (sideband_loss_look).
 */
#define SB_NS_RECORD_ROOM	256

struct sb_ring {
	uint64_t	 peeked;	/* records before this were looked at on arrival
					   (or, behind the tail, consumed by their turn) */
	struct sb_read	*rd;		/* their reads, in ring order: a circular array */
	uint32_t	 cap, first, n;	/* cap a power of two */
};

/* A segment whose start state did not fit on the disk: tried again this much later. */
#define REOPEN_GAP_NS	1000000000ULL

struct recorder {
	const struct config *conf;
	char		 segdir[PATH_MAX];
	struct events	 ev;
	struct perfdata_attr attrs[2];	/* as segments present them: sampling, side-band */
	struct model	 model;
	struct binaries	*bins;		/* shared with the index (binaries.h) */
	struct notify	 notify;	/* who hears what happened (notify.h) */
	struct resolver	*res;		/* userspace build-id reads (resolver.h) */
	struct sb_ring	*sb;		/* per CPU */
	struct kinfo	 kinfo;
	int		 kallsyms_warned;	/* no _text in /proc/kallsyms: said once */
	struct vdso	 vdso;
	struct hostinfo	 host;		/* the machine, for segment headers */
	struct segment	 seg;
	struct segment_usage usage;		/* closed segments, as retention last listed them */
	uint64_t	 seq;
	uint64_t	 now;		/* of this pass */
	uint64_t	 turn_t;	/* the time stamp of the side-band record at its turn, or 0 */
	const struct record *turn_rec;	/* ... that record, decoded, or NULL */
	int64_t		 wall_off;	/* the wall clock's offset at this pass's look (recorder_look) */
	uint64_t	 wall_look;	/* the monotonic time of that look */
	uint64_t	 limit;		/* this pass consumes records stamped before */
	uint64_t	 passed;	/* the highest limit a pass had (age_end) */
	uint64_t	 round_floor;	/* no round marker before a pass reaches this (date_changed) */
	uint64_t	 future_at;	/* a stamp from then on is bogus (recorder_not_yet) */
	uint64_t	 bound;		/* ... and, from the current ring, up to this */
	uint64_t	 peek;		/* time of the record ring_peek() looked at */
	uint64_t	*next;		/* per CPU: time of its side-band ring's next record */
	int		 cur;		/* the CPU whose ring is being read */
	uint64_t	 blocked;	/* the side-band waits for a read at this time (0: no) */
	uint64_t	 blocked_deadline;
	uint64_t	 sb_news;	/* answers that were news: read, not known (recorder.c) */
	int		 sb_unseen;	/* the turn met a mapping arrival has not looked at */
	int		 sb_arrived;	/* this pass ran arrival for one (sideband.c) */
	int		 sb_holdoff_ms;	/* the side-band's current hold-off (recorder.c) */
	uint64_t	 spill_at;	/* the start scan's last events_spill (recorder.c) */
	uint64_t	 cut;		/* a rotation cuts here once the side-band is there */
	enum rotate_reason cut_why;
	int		 cut_rc;
	uint8_t		 scratch[PATH_MAX + 512];
	int		 wrote;		/* records written since the last round marker */
	int		 argc;
	char *const	*argv;
	uint64_t	 start_mono_ns;
	struct recorder_stats st;
	uint64_t	 reopen_at;	/* no segment open: not tried again before (mono) */
	char		 last_closed[PATH_MAX];
	uint64_t	 last_closed_seq;	/* its sequence number */
	uint64_t	 last_cut_wall_ns;	/* the last cut, on the wall clock (as segments read it) */
	struct {
		uint64_t samples, records, lost, bytes, nbuildids;
	}		 last_stats;		/* of last_closed */
	int		 disk_error;		/* errno while segments cannot be written, else 0 */
	uint64_t	 room_gone_at;		/* no segment left to delete for space, at */
	int		 room_off;		/* none deleted for space (flightrec.c) */
	struct recorder_loop *loop;		/* the recorder's events on the loop */
	uint64_t	 host_mnt_ns;		/* PID 1's mount namespace; 0: unknown */
	uint64_t	 init_user_ns;		/* PID 1's user namespace */
	struct {
		uint64_t	 user_ns;
		int32_t		 uid;
	}		 ns_owner[64];		/* user namespace -> its owner (a small cache) */
	unsigned	 ns_owner_next;
	int		 flight_on;		/* [segments] mode = flight (flightrec.c) */
	struct flight	 fl;			/* ... the last window's records */
	uint64_t	 flight_pruned_at;	/* binaries last pruned (no rotation does it) */
	struct tab	*flight_born;		/* pid -> when its image began (flightrec.c) */
};

uint64_t recorder_wall_at(uint64_t mono);	/* that time on the wall clock (ns) */

/*
 * The start, in two steps around the listeners' own start:
 *   recorder_init   the segment directory (segments torn by a crash are
 *                   repaired: the index reconciles with what is on disk),
 *                   the events opened (not enabled); BINS is the table of
 *                   binaries shared with the index
 *   recorder_listen every listener (index, capture)
 *   recorder_start  events enabled, /proc scanned, the binaries running
 *                   announced, the first segment opened
 * recorder_stop (or a failed recorder_start) releases everything.
 */
int	recorder_init(struct recorder *, const struct config *, const char *state_dir,
	    struct binaries *bins, int argc, char *const *argv, char *err, size_t errlen);
int	recorder_listen(struct recorder *, const struct recorder_listener *);
int	recorder_start(struct recorder *, char *err, size_t errlen);
/*
 * Watch the rings, the build-id reads and the recorder's timers on BASE
 * (after recorder_start); recorder_stop unwatches them.
 */
int	recorder_attach(struct recorder *, struct event_base *base);
/*
 * After a reload: the drain timer set to [record] drain_interval as the
 * configuration has it now (rearmed if that changed, the first drain one
 * new interval from now), the open segment's sync, and the retention of
 * the [segments] keep_* keys, at once.
 */
int	recorder_retime(struct recorder *);
/* Read every ring (a full pass, with its round marker). */
void	recorder_drain(struct recorder *);
/*
 * Cut the current segment and start the next: at "now" (minus the drain
 * margin), or, by age, exactly rotate_age after it began.  The cut waits
 * for the side-band records before it to be written (their build-id
 * reads, at most RESOLVE_TIMEOUT_MS): a rotation by signal or request
 * waits for that here (the path of the closed segment is then in
 * last_closed), one by size or age completes in a later pass.
 */
int	recorder_rotate(struct recorder *, enum rotate_reason);
/* Rotate if the size or age limit is reached. */
void	recorder_check_rotate(struct recorder *);
/*
 * Everything the rings hold into the segments (recorder_stop's drain): a
 * cut that is due, or pending, is made, and what is stamped after it
 * still goes into the segment that follows.
 */
void	recorder_finish(struct recorder *);
/*
 * Disable events, drain, finish the segment, and repair the .partial
 * files that failed closes left (the last segment's, or a rotation's on a
 * full disk).  -1 when one is still left (logged; repaired at the next
 * start), else 0.
 */
int	recorder_stop(struct recorder *);

/* For the other files of record/: */
/* Write records to the current segment (disk-full handling); NREC of them. */
void	recorder_write(struct recorder *, const void *, size_t, uint64_t nrec);
/* Wall clock of a record (its time, or now), on the current segment's clock. */
uint64_t recorder_wall(struct recorder *, const struct record *);
/* A pass's look at the clocks (wallclock.h): now, and the wall clock's offset. */
void	recorder_look(struct recorder *);
/*
 * When a mapping was made, as the proofs by time use it: its record's
 * time on the wall clock by the offset of this pass's look, not the
 * segment's (the wall clock may have stepped since the segment began),
 * and no step to be seen after the earlier of the record's time and that
 * look's.  All 0: the record has no time (no proof by time).
 */
struct bid_when recorder_proof_when(const struct recorder *, const struct record *);
/*
 * Is a file P maps, FLAGS what its read proved of its name (record.h
 * MMAP_NAME_*), on a mount the host's mount namespace does not have, while
 * P is of that namespace (and no other provenance is P's, binaries.h NS)?
 * Then P reached another namespace's mount (through /proc/PID/root, or a
 * descriptor passed on), and the kernel named the file by its path there:
 * a user's bind mount over /usr/bin/passwd in a namespace of theirs, run
 * from the host's, is no host's /usr/bin/passwd.  Its provenance is not
 * known (INDEX_MNT_NS_UNKNOWN).  (A root-made namespace's processes map
 * its own mounts, none of the host's: theirs are taken as they were.)
 */
int	recorder_foreign(struct recorder *, const struct model_proc *p, unsigned flags);
/*
 * Write REC (LEN bytes), a mapping of P's that recorder_foreign says is of
 * no known provenance, between NAMESPACES records that say so (mount
 * namespace INDEX_MNT_NS_UNKNOWN) and then P's own again: a rebuild of
 * the index from the segment (index/rebuild.c) reads the same.
 */
void	recorder_write_foreign(struct recorder *, const struct model_proc *p, const void *rec,
	    size_t len);
/*
 * The binary of (NAME, ID) as process P maps it, with its provenance
 * (FLAGS: what a read proved of NAME, record.h MMAP_NAME_*).
 */
struct binary *recorder_binary(struct recorder *, const struct model_proc *, const char *name,
	    unsigned flags, const uint8_t *id, uint8_t idsize);
/*
 * The same for file F (with a build-id) as P maps it: remembered in F, so
 * that the next map of F by a process of the same provenance costs no
 * lookup.
 */
struct binary *recorder_file_binary(struct recorder *, const struct model_proc *,
	    struct model_file *f);
/*
 * P mapped JIT code: watch its perf-PID.map (notify jit_mapped, once it
 * is taken).
 */
void	recorder_jit_watch(struct recorder *, struct model_proc *);
/* Is a record stamped T left for a later pass? */
int	recorder_not_yet(const struct recorder *, uint64_t t);
/*
 * Open the segment that begins at T_START with the model's state
 * (FILTER: what of it, NULL for all); finish the current one, cut at
 * T_END.  0 or -errno.
 */
int	recorder_open_segment(struct recorder *, uint64_t t_start,
	    const struct synth_filter *filter);
int	recorder_close_segment(struct recorder *, uint64_t t_end);
/* [segments] keep_* over the closed segments; what is left noted in usage. */
void	recorder_retention(struct recorder *);
/* Give the open segment up: its file removed, the index told (a failed snapshot). */
void	recorder_drop_segment(struct recorder *);
/* A write failed with -errno RC: the disk-full state (status, logged once); and its end. */
void	recorder_disk_trouble(struct recorder *, int rc);
void	recorder_disk_recovered(struct recorder *);

/*
 * flightrec.c: [segments] mode = flight.  Records go to the buffer
 * (recorder_write), no segment is open, and a snapshot (a cut by signal
 * or request) writes the window as one segment.
 */
int	flightrec_init(struct recorder *, uint64_t from);
void	flightrec_free(struct recorder *);
/* A process image begins at TIME (a new process, an exec). */
void	flightrec_born(struct recorder *, uint32_t pid, uint64_t time);
/* What a pass took, NREC records all stamped before the pass's limit. */
void	flightrec_keep(struct recorder *, const void *, size_t, uint64_t nrec);
/*
 * Process P's image ends at TIME (its exit, or an exec): its state is
 * kept in the buffer, for a snapshot whose window begins before TIME.
 */
void	flightrec_ended(struct recorder *, const struct model_proc *p, uint64_t time);
/*
 * Write the window that ends at T_END as a segment and empty the buffer;
 * a window that cannot be written whole leaves no segment, and the buffer
 * as it was, for the next snapshot.
 */
int	flightrec_snapshot(struct recorder *, uint64_t t_end);

/* sideband.c */
int	sideband_init(struct recorder *, char *err, size_t errlen);
void	sideband_free(struct recorder *);
/* Look at new side-band records, start their reads. */
void	sideband_arrive(struct recorder *);
/* Has a side-band record maybe been lost since the last look?  Then model.h NS_EPOCH. */
void	sideband_loss_look(struct recorder *);
/* 1 if a side-band ring holds records arrival has not looked at. */
int	sideband_unseen(const struct recorder *);
/* Merge the side-band rings up to LIMIT; the time it waits at, or 0. */
uint64_t sideband_drain(struct recorder *, uint64_t limit);
/* When a pass is next needed for the side-band (CLOCK_MONOTONIC ns), or UINT64_MAX. */
uint64_t sideband_due(struct recorder *);
/* Block until the read the side-band waits for is in (or its deadline). */
void	sideband_wait(struct recorder *);
/*
 * Room in the side-band rings while their records wait (the margin, a
 * read not answered yet, a hold-off): a ring over half full is spilled
 * into memory.
 */
void	sideband_relieve(struct recorder *);
/* Bytes waiting in the fullest side-band ring (the kernel's part). */
uint64_t sideband_fill(const struct recorder *);

#endif
