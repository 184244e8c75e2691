/*
 * resolver.h - the userspace build-id reads, off the event loop.
 *
 * The loop makes a request for each mapping whose record carries no
 * build-id the moment the record arrives (while the process most likely
 * still lives), queues it, and later, when the record's turn comes in
 * time order, looks at the answer:
 *
 *	loop: resolver_req_new ─► resolver_queue ... resolver_kick (one lock
 *	      and one wake-up per batch) ─► worker thread: buildid_reader_resolve
 *	      ─► answer in the request, done = 1 (release) ─► eventfd, if the
 *	      loop said it waits ─► loop: resolver_req_done (acquire) ...
 *	      resolver_req_put
 *
 * A request that has no answer by its deadline (RESOLVE_TIMEOUT_MS after
 * it was made) is given up by the loop: "timeout".  A thread stuck in one
 * (a FUSE server that never answers) stays stuck: when every worker has
 * been in one read for 50 ms with reads waiting, another is started, up to
 * RESOLVER_MAX_WORKERS, and the device a worker has been in one read of
 * for a second (resolver_check) is marked slow for a while: its next
 * mappings are answered "timeout" at once instead of taking a thread each.
 * (A deadline passed does not make a device slow: it counts the wait in
 * the queue and for a CPU, and a busy host is not a hung device.)  A request is reference counted:
 * the loop's reference and the workers'; whoever drops the last frees it.
 *
 * The side-band joins the mappings of one file that arrive together
 * (resolver_req_join: same path, device, inode, generation, up to
 * RESOLVER_GROUP_MAX of them before resolver_kick) in one request: an exec
 * storm maps the same few files thousands of times a second.  The worker
 * proves the file once for all of them (buildid_reader_known, with the
 * earliest mapping's time) and writes one answer; if that proof fails,
 * each mapping is read on its own under the rules of buildid_reader.h and
 * gets its own answer (resolver_req_answer_of).  The loop keeps one
 * reference per mapping joined (loop_refs).
 */
#ifndef PERFMAPD_RESOLVER_H
#define PERFMAPD_RESOLVER_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "buildid_reader.h"
#include "record.h"

#define RESOLVE_TIMEOUT_MS	250	/* a read that takes longer: "timeout" */
#define RESOLVER_MAX_WORKERS	4
/*
 * What the loop may hold waiting for answers: mappings (a member each, some
 * 100 bytes: a burst of 60 programs starting with 100 libraries each makes
 * 6,000 before the first answer) and requests (a file's name each, up to
 * PATH_MAX: 16 MiB at most).  A mapping over either bound is answered
 * "busy".
 */
#define RESOLVER_MAX_PENDING	65536	/* mappings not yet put by the loop */
#define RESOLVER_MAX_REQS	4096	/* requests the loop holds */
/*
 * One user's share of them.  Below RESOLVER_FREE_* nothing is charged to
 * anyone (no look at a process's owner: an exec storm pays nothing); a
 * side-band mapping made past them is charged to its process's real uid
 * (the loop's look at /proc/PID/status, uid_of in resolver.c), and a user
 * other than root holding RESOLVER_USER_* already gets "busy" (counted:
 * user_full, and not in the pending count, whose bounds are everyone's)
 * where before one user's burst of new files took every request and made
 * everyone's new mappings "busy" until the reads drained.  A process whose
 * owner cannot be read (gone) is charged to RESOLVER_UID_UNKNOWN, one more
 * user with a quarter of a share.  A uid is a user: one with subordinate
 * uids (a rootless container's) has as many shares as uids it runs.
 */
#define RESOLVER_FREE_PENDING	(RESOLVER_MAX_PENDING / 8)
#define RESOLVER_FREE_REQS	(RESOLVER_MAX_REQS / 8)
#define RESOLVER_USER_PENDING	(RESOLVER_MAX_PENDING / 4)
#define RESOLVER_USER_REQS	(RESOLVER_MAX_REQS / 4)
#define RESOLVER_USER_SLOTS	64	/* users charged at once; the rest share one more */
/*
 * The reads are taken in order, but a user's requests past this many of
 * theirs go to the back of the queue, read once nothing else waits: the
 * user's burst delays everyone else's reads by this many at most, not by
 * the whole share.
 */
#define RESOLVER_USER_BACK	(RESOLVER_USER_REQS / 8)
#define RESOLVER_UID_UNKNOWN	((uint32_t)-1)
#define RESOLVER_MAX_FDS	256	/* files kept open in answers, for the capture */
#define RESOLVER_GROUP_MAX	64	/* mappings joined in one request */

/* A mapping joined to a request (resolver_req_join). */
struct resolve_member {
	uint32_t	 pid;
	int		 share;		/* the loop's: the user's share it is charged to, or -1 */
	uint64_t	 addr, len;
	struct bid_when	 when;
	struct bid_answer a;		/* the worker's, unless the request's answers all */
};

struct resolve_req {
	/*
	 * q.filename points into name[]; a joined request's q.map is the
	 * earliest of its members' (bid_when_earliest).
	 */
	struct bid_query q;
	uint64_t	 deadline;	/* CLOCK_MONOTONIC ns */
	struct bid_answer a;		/* the worker's, valid once done */
	int		 fd;		/* the file it was read from, or -1 (closed with REQ) */
	atomic_int	 done;
	atomic_int	 refs;
	int		 all;		/* a answers every member (the worker's, or a slow device's) */
	int		 want_pin;	/* the loop would pin the file (resolver_pinned); out asking until put */
	struct bid_pin	 pin;		/* the worker's: the file kept, or fd -1 */
	struct resolve_req *qnext;	/* the workers' queue, or the parked (resolver.c) */
	int		 park;		/* the worker's: to be parked, or parked */
	dev_t		 park_dev;	/* ... until this device's lane is let go */
	int		 parked_before;	/* the worker's: parked once at least */
	struct resolve_member *m;	/* joined mappings (nm of them, room for capm), or none */
	uint32_t	 nm, capm;
	/* the loop's own */
	int		 loop_refs;	/* mappings not yet put */
	int		 timed_out;
	int		 share;		/* the user's share the request is charged to, or -1 */
	int		 back;		/* queued at the back (RESOLVER_USER_BACK) */
	struct resolve_req *next;
	size_t		 namecap;	/* room in name[] */
	char		 name[];
};

struct resolver;

/*
 * Start one worker (and the cache of buildid_reader.h); KEEP_FDS: answers
 * keep the file read open (resolver_req_fd) for a copy into the cache.
 * 0 or -1 with ERR set.
 */
int	resolver_start(struct resolver **, int keep_fds, char *err, size_t errlen);
/* Stop the workers (a stuck one is left behind, detached). */
void	resolver_stop(struct resolver *);
/* The eventfd that becomes readable when an awaited answer is in. */
int	resolver_fd(struct resolver *);
/* Read the eventfd (the loop, after it fired). */
void	resolver_ack(struct resolver *);

/*
 * A request for mapping M, made at WHEN (for a proof by time), due by NOW +
 * RESOLVE_TIMEOUT_MS.  If M's device is slow, or RESOLVER_MAX_PENDING
 * mappings or RESOLVER_MAX_REQS requests are out, it comes back already
 * answered ("timeout", "busy").
 * NULL when out of memory.
 */
struct resolve_req *resolver_req_new(struct resolver *, const struct record_mmap *m,
	    struct bid_when when, uint64_t now);
/*
 * The same for the side-band: M joins the request of this batch (since the
 * last resolver_kick) for the same file if there is one with room, else a
 * new one, queued.  *IDX: M's member number for resolver_req_answer_of.
 * A mapping beyond RESOLVER_MAX_PENDING, or one that would need a new
 * request beyond RESOLVER_MAX_REQS, gets a request answered "busy"; so
 * does one past the RESOLVER_FREE_* bounds whose user holds a full share
 * (M's process's owner is looked up then, and only then).  Put once per
 * mapping joined, with its IDX.  NULL when out of memory.
 */
struct resolve_req *resolver_req_join(struct resolver *, const struct record_mmap *m,
	    struct bid_when when, uint64_t now, uint32_t *idx);
/* For tests: the owner of a process is FN(PID), not /proc/PID/status's. */
void	resolver_test_uid_of(struct resolver *, uint32_t (*fn)(uint32_t pid));
/* Queue REQ (no-op if answered already); resolver_kick hands the queue to the workers. */
void	resolver_queue(struct resolver *, struct resolve_req *);
void	resolver_kick(struct resolver *);
/*
 * Is REQ answered?  If not and NOW is past its deadline, it is answered
 * "timeout" here (its device marked slow) and this returns 1 too.  If
 * WANT_WAKEUP, the loop wants the eventfd when an answer comes.
 */
int	resolver_req_done(struct resolver *, struct resolve_req *, uint64_t now, int want_wakeup);
/* The answer of a done request (its own, or "timeout"), and the file read or -1. */
const struct bid_answer *resolver_req_answer(const struct resolve_req *);
/* The answer of member IDX of a done request (resolver_req_join). */
const struct bid_answer *resolver_req_answer_of(const struct resolve_req *, uint32_t idx);
int	resolver_req_fd(const struct resolve_req *);
/*
 * The loop is done with REQ, or with its member IDX (0 for a request of
 * resolver_req_new): a worker closes its file (resolver_kick sends it).
 */
void	resolver_req_put(struct resolver *, struct resolve_req *, uint32_t idx);
/* Block until REQ is done or its deadline passed (start-up, stop, snapshot). */
void	resolver_wait(struct resolver *, struct resolve_req *);
/*
 * Workers that are stuck get a spare, a device a worker has hung in for a
 * second is marked slow, pins are looked over; call now and then.
 */
void	resolver_check(struct resolver *, uint64_t now);
/*
 * Tests: the first worker taken for one in a read on DEV since SINCE (a
 * hang the kernel will not make on demand); SINCE 0 lets it go.  The
 * worker must be idle, with nothing queued.
 */
void	resolver_test_hang(struct resolver *, dev_t dev, uint64_t since);

/*
 * Pins: the loop proves the mappings of the files an exec storm maps
 * over and over itself, without a request, the hand-over to a thread or
 * the path's walk.  A request proven by name (buildid_reader_known) may
 * bring the file back open (struct bid_pin); the loop keeps up to
 * RESOLVER_PINS of them, of the devices resolver_pin_devices names (the
 * root's and /usr's: a pin holds its file system busy, and nobody
 * unmounts those).  A mapping of a pinned file (same device and inode)
 * made at TIME (CLOCK_MONOTONIC, the records' clock) is proven when fstat
 * of the pin, made after TIME, shows the file as it was read
 * (buildid_pin_holds) and unchanged since before the mapping
 * (buildid_pin_before): the rule 2 proof (buildid_reader.h), the pin
 * standing for the path.  One fstat per pin serves every mapping made
 * before it.  A pin that fails is dropped (a worker closes it: the last
 * close of a deleted file frees its blocks); so is one unused for
 * RESOLVER_PIN_IDLE_S seconds or whose file was deleted, looked at by
 * resolver_check once a second.  With all pins taken, a new file takes the
 * place of the least recently used one if that was unused for 100 ms
 * (the files of the processes scanned at start, a user's few): the hot
 * ones stay.  Used: a mapping of it arrived, proven by a new fstat or by
 * the last (the side-band holdoff brings most mappings after a look).  A
 * request asks its worker for the file only while fewer requests are out
 * asking than there are pins to take: the files a burst's requests bring
 * back are bounded by the room for them, not by the burst.
 */
/*
 * A build's storm maps some sixty files over and over (tests/bench/
 * bench_pins.sh): with 32 pins, 40-60 were let go a second and a sixth of
 * the mappings went to the reader (the daemon 5.7-5.8 ms/s of CPU); with
 * 128, none were and 10 mappings in 8 s did (3.5-3.7 ms/s).  pin_find
 * scans their keys, 2 kB.
 */
#define RESOLVER_PINS		128
#define RESOLVER_PIN_IDLE_S	10

/* The devices whose files may be pinned (at most 4; none: no pins). */
void	resolver_pin_devices(struct resolver *, const dev_t *devs, int n);
/*
 * Is M, made at TIME (its record's) and WHEN (for a proof by time), a
 * mapping of a pinned file, proven?  1 with *A its answer (cached
 * set), else 0: make a request.  The loop's.  A step seen drops the pins.
 * NOW: CLOCK_MONOTONIC read before this call (the pass's look at the
 * clocks); a mapping made after it is not proven.
 */
int	resolver_pinned(struct resolver *, const struct record_mmap *m, uint64_t time,
	    struct bid_when when, uint64_t now, struct bid_answer *a);

struct resolver_stats {
	uint64_t	 requests, timeouts, workers, stuck;
	uint64_t	 reads, hits;	/* of the reader */
	uint64_t	 pinned;	/* mappings proven by a pin */
	uint64_t	 pins, pins_dropped;	/* files pinned now; dropped so far */
	uint64_t	 user_full;	/* mappings answered "busy": their user's share was full */
	uint64_t	 uid_looks;	/* /proc/PID/status read for a share */
};
void	resolver_stats(struct resolver *, struct resolver_stats *);

#endif
