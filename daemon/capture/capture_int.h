/*
 * capture_int.h - what the files of daemon/capture/ share: jobs, the
 * requests of control clients, results, and struct capture.  Nothing
 * outside daemon/capture/ includes it (they use capture.h).
 */
#ifndef PERFMAPD_CAPTURE_INT_H
#define PERFMAPD_CAPTURE_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <elfutils/debuginfod.h>
#include <jansson.h>

#include "bidcache.h"
#include "capture.h"
#include "perf_abi.h"
#include "record/userfs.h"

#define EXPORTS_KEPT		4		/* newest export files kept */
#define EVICT_RETRY_NS		(60ULL * 1000000000ULL)
#define KALLSYMS_MAX		(256U << 20)
#define FAIL_MAX		4096		/* remembered failures (a reason is up to 1 KB) */
#define PIN_MAX			256		/* map_files fds held open at once */
/*
 * At stop, the worker still keeps the JIT maps the last segment's close
 * queued (JOB_JIT_KEEP), then makes the copies of binaries still queued
 * (the segments name them; a pinned map's file reads after its process
 * is gone), for at most this long in all: without them that segment's
 * JIT frames and binaries have no names.  A client's request is dropped
 * (its client is gone with the daemon).
 */
#define CAPTURE_STOP_KEEP_MS	2000
/*
 * A gone process's JIT map written later than its exit by more than this
 * is another process's (the wall clock of the exit record against the
 * file's mtime, which a coarse clock stamps a tick early).
 */
#define JIT_EXIT_SLACK_NS	20000000ULL
/*
 * How long the stop waits for the worker and the profile thread.  A
 * thread still running then (a copy from a root-mounted file system that
 * does not answer, userfs.c guarding only users' mounts; a long profile)
 * is left to the process's exit, with what it uses: the stop goes on.
 */
#define CAPTURE_STOP_JOIN_MS	5000
#define SEEN_MAX		65536		/* build-ids remembered as queued */
#define QUOTA_MAX		1024		/* users whose share is counted at once */

enum job_kind {
	JOB_MAP,	/* a mapping seen for the first time */
	JOB_MISSED,	/* the same, when the queue was full: path only */
	JOB_KERNEL,	/* /proc/kallsyms */
	JOB_MODULE,	/* a module file */
	JOB_VDSO,	/* our own vDSO image */
	JOB_CLOSED,	/* a segment closed: lazy store, eviction */
	JOB_STORE,
	JOB_EXPORT,
	JOB_JIT_WATCH,	/* a process mapped anonymous executable memory */
	JOB_JIT_KEEP,	/* keep its /tmp/perf-PID.map with a segment */
	JOB_PROFILE,	/* a profile (the profile thread) */
};

#define JIT_WATCH_MAX		4096		/* processes with JIT code watched */
#define JIT_WATCH_USERS_MAX	3072		/* of which users' (not root's) processes */
#define JIT_WATCH_USER_MAX	512		/* ... and one user's */
#define JIT_TMP_MAX		64		/* their distinct /tmp directories held open */
#define JIT_TMP_USERS_MAX	48		/* of which users' (not root's) processes' */
#define JIT_TMP_USER_MAX	8		/* ... and one user's */
#define JIT_ROOTS_QUEUED_MAX	64		/* watch jobs queued holding a process's root */
#define JIT_ROOTS_USERS_MAX	48		/* ... of which users' */
#define JIT_QUEUE_USERS(q)	((q) / 4 * 3)	/* users' JIT jobs queued, of [cache] queue */
#define JIT_SWEEP_MS		1000		/* at most one sweep of the gone this often */
#define PROFILES_KEPT		4		/* newest profile files kept */

/* A process that may write /tmp/perf-PID.map: who owned it (worker only). */
#define JIT_TMP_DAEMON	(-1)	/* its /tmp is the daemon's own (or its root not known,
				   nor its mount namespace another) */
#define JIT_TMP_NONE	(-2)	/* its /tmp not held: its map is not kept */

struct jitproc {
	uint32_t	 pid;
	uint32_t	 nspid;		/* the map's name: its pid in its pid namespace (not
					   known: its pid) */
	uint32_t	 uid;
	int		 tmp;		/* its /tmp in capture's jtmp[], or JIT_TMP_* */
	uint64_t	 start;		/* /proc/PID/stat starttime: tells pid reuse */
	dev_t		 kept_dev;	/* its map as last kept: unchanged since (the */
	ino_t		 kept_ino;	/* same inode, size and ctime), the next keep */
	uint64_t	 kept_size;	/* links that copy, no byte written or charged */
	int64_t		 kept_ctime;
	char		 kept_seg[64];	/* ... the segment it was kept with, or "" */
};

/*
 * A /tmp of watched processes, as their mount namespace has it (a
 * container's, a unit's PrivateTmp, the daemon's own under its unit's
 * PrivateTmp=yes is not the host's), held open as O_PATH so that the map
 * is still there to read once the process and its namespace are gone.
 * Shared by the processes whose /tmp is the same directory.
 */
struct jittmp {
	uint64_t	 mnt_id;	/* the mount: another namespace's view is its own */
	dev_t		 dev;
	ino_t		 ino;
	int		 fd;
	uint32_t	 uid;		/* of the process that found it first */
	uint32_t	 refs;
};

/* A control request in flight; freed by the loop after its final result. */
struct creq {
	TAILQ_ENTRY(creq) entry;
	struct control_client *client;	/* NULL once the client left */
	int		 more;
	atomic_int	 cancelled;
	json_t		*items;		/* !more: the per-build-id replies */
	unsigned	 queued;	/* its results not delivered yet (under mu) */
	uint64_t	 held_pass;	/* loop: the capture_poll pass that held one back */
	uint64_t	 waited_ns;	/* the worker's time waiting for its client (under mu) */
	int		 stalled;	/* ... past CAPTURE_STREAM_WAIT_MS: stopped */
};

/*
 * A request's results not yet delivered, at most: a worker posting more
 * waits (result_post) until the loop has delivered some, and the loop
 * holds a client's results back while its replies wait unread beyond
 * CONTROL_HIGH_OUTPUT (capture_poll).  Before, a stream of replies
 * produced faster than its client read (a store of 55,000 build-ids, or a
 * user's few hundred binaries under long paths of control characters,
 * each reply 47 KB) passed CONTROL_MAX_OUTPUT and the client was dropped.
 */
#define CAPTURE_RESULTS_MAX	64
/*
 * The worker's whole wait for one request's client, at most: past it the
 * request is stopped, its last reply an error (the client reads what was
 * made before).  The one worker copies every binary: a client that reads
 * a reply now and then (a control-group member's store, one byte every
 * 50 s inside the socket's write timeout) held it, and every map job of
 * the host was missed meanwhile.
 */
#define CAPTURE_STREAM_WAIT_MS	30000

struct job {
	TAILQ_ENTRY(job) entry;
	enum job_kind	 kind;
	uint32_t	 pid;
	uint64_t	 addr, len;
	int		 fd;		/* JOB_MAP: the mapped file, opened early, or -1;
					   JOB_JIT_WATCH: the process's root (O_PATH) */
	uint64_t	 ns;		/* JOB_MAP: provenance (record/binaries.h NS) */
	int		 pin_errno;	/* why it could not be opened */
	int		 pinned;	/* FD opened by the worker's pin_maps */
	int		 has_inode;	/* JOB_MAP: the mapping's identity, from its record */
	uint32_t	 maj, min;
	uint64_t	 ino, gen;
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 idlen;
	char		*name;		/* file name, module path, export name */
	struct creq	*req;
	json_t		*segments;
	int64_t		 since_ns, until_ns;
	uint64_t	 seq_first, seq_last;	/* JOB_PROFILE of a period: its segments */
	int		 all, debuginfod;
	int		 all_binaries;	/* export: not only those with samples */
	uint64_t	 exited;	/* JOB_JIT_KEEP: the process is gone, since
					   this wall-clock ns (1: not known); 0
					   while it runs */
	uint32_t	 uid;		/* JOB_JIT_*: the process's owner when it mapped
					   JIT code (0: a close's keep); a client's
					   request: the client's */
	uint32_t	 nspid;		/* JOB_JIT_WATCH: its pid in its pid namespace */
	uint64_t	 mnt_ns;	/* JOB_JIT_WATCH: its mount namespace (nsfs inode), 0 not known */
	json_t		*params;	/* JOB_PROFILE */
};

TAILQ_HEAD(jobq, job);

struct result {
	TAILQ_ENTRY(result) entry;
	struct creq	*req;
	json_t		*msg;		/* reply parameters, or an error message */
	int		 final, error;
};

struct idkey {
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 len, used;
	uint32_t	 ix;		/* the caller's (idset_add_ix) */
};

/* A set of build-ids (open addressing). */
struct idset {
	struct idkey	*v;
	size_t		 n, cap;
};

struct failrec {
	struct idkey	 key;
	char		*reason;
};

/* One build-id a segment references (from its HEADER_BUILD_ID table). */
#define SEGBID_ALT	8
struct segbid {
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 len;
	int		 kernel;
	char		*name;
	/*
	 * Other names the tables give it (SEGBID_ALT at most): a user's
	 * file may carry a system binary's build-id, and the copy of the
	 * first name seen may be the user's (store_one).
	 */
	char		*alt[SEGBID_ALT];
	size_t		 nalt;
};

/*
 * A path a store looks for in live processes (it names a build-id of the
 * job's segments), and the first LIVE_PER_PATH mappings of it found
 * (/proc/PID/maps): what a scan keeps is bounded by the segments' build-id
 * tables, not by what users map.
 */
#define LIVE_PER_PATH	16
struct livepath {
	char		*path;
	uint32_t	 n;
	struct {
		uint32_t pid;
		uint64_t start, end;
	}		 m[LIVE_PER_PATH];
};

/* One user's share of the cache in the current interval (worker only). */
struct quota {
	unsigned	 uid;
	uint64_t	 start_ns;	/* of its interval */
	uint64_t	 bytes, files;
	int		 logged;
};

/* Per store/export job: what it found, for the summary. */
struct storectx {
	struct job	*job;
	int		 debuginfod;
	debuginfod_client *dc;
	const struct segbid *bids;	/* the job's, whose names live_scan looks for */
	size_t		 nbids;
	struct livepath	*live;		/* sorted by path */
	size_t		 nlive;
	int		 live_done;
	uint64_t	 ok, failed, added;
};

struct capture {
	char		 statedir[PATH_MAX], segdir[PATH_MAX], exportdir[PATH_MAX];
	int		 mode;
	uint64_t	 max_size;
	size_t		 qmax;
	int		 debuginfod_default;

	pthread_t	 th;
	int		 started;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	struct jobq	 jobs;			/* not yet taken by the worker */
	struct jobq	 pjobs;			/* ... by the profile thread */
	pthread_cond_t	 pcv;
	pthread_t	 pth;
	int		 pstarted;
	char		 profiledir[PATH_MAX];
	size_t		 nmap, nmissed;		/* queued JOB_MAP, JOB_MISSED */
	size_t		 njitq;			/* queued JOB_JIT_* */
	size_t		 njitq_users;		/* ... of users' processes (uid not 0) */
	atomic_uint	 njitroots;		/* queued JOB_JIT_WATCH holding a root fd */
	atomic_uint	 njitroots_users;	/* ... of users' processes */
	TAILQ_HEAD(result_head, result) results;
	pthread_cond_t	 rcv;			/* a request's results delivered (result_post);
						   CLOCK_MONOTONIC */
	unsigned	 stream_wait_ms;	/* CAPTURE_STREAM_WAIT_MS (the tests' shorter) */
	TAILQ_HEAD(, result) held;		/* loop: results held back, in order */
	struct event	*held_ev;		/* loop: try them again */
	uint64_t	 pass;			/* loop: capture_poll's passes */
	int		 stop;
	atomic_uint_least64_t stop_asked;	/* capture_stop_begin's time (mono ns), else 0 */
	int		 efd;
	struct event	*ev;

	uint8_t		 kernel_id[BUILD_ID_MAX];	/* under mu */
	uint8_t		 kernel_idlen;

	/* loop only */
	struct idset	 seen;		/* queued from a trusted namespace */
	struct idset	 seen_ns;	/* ... from a user's namespace only */
	struct idset	 seen_blind;	/* ... from the host, the file not looked at:
					   (build-id, name), keyed (seen_blind) */
	uint64_t	 blind_key[2];	/* random: users cannot make keys collide */
	unsigned	 seen_gen;	/* evict_gen when the sets were last emptied */
	uint64_t	 host_mnt_ns;	/* the host's mount namespace, as the recorder's (0: unknown) */
	TAILQ_HEAD(, creq) reqs;
	int		 missed_logged;

	/* set before the worker starts, read-only after */
	uint8_t		 vdso_id[BUILD_ID_MAX];
	int		 vdso_idlen;
	void		*vdso;
	size_t		 vdso_len;

	/* set at start, read-only after */
	uint64_t	 user_bytes, user_files, user_interval_ns;

	/* worker only */
	struct quota	 quotas[QUOTA_MAX];
	size_t		 nquotas;
	struct jitproc	 jit[JIT_WATCH_MAX];
	size_t		 njit;
	struct jittmp	 jtmp[JIT_TMP_MAX];
	size_t		 njtmp;
	uint64_t	 jit_sweep_after[2];	/* no sweep before (mono ns): root's, users' */
	size_t		 jit_late;		/* maps a close's job left at the stop's bound */
	struct bidcache	 cache;
	struct failrec	*fails;
	size_t		 nfails, failcap;
	uint64_t	 last_evict_ns;
	int		 evict_stuck;
	uint64_t	 stop_by;	/* stopping: the end of the last jobs (mono ns), else 0 */
	uint64_t	 start_wall_ns;

	atomic_uint_least64_t n_seen, n_captured, n_present, n_failed, n_missed;
	atomic_uint_least64_t n_refused_full, n_refused_quota;
	atomic_uint_least64_t n_jit_unwatched;	/* JIT processes not watched: share, queue full */
	atomic_uint_least64_t n_jit_unkept;	/* exits whose keep found no room in the queue */
	atomic_uint_least64_t cache_bytes, cache_entries;
	atomic_uint	 evict_gen;	/* evictions that removed something (the loop's sets forget) */
};

/* capture.c: the loop's side */
void	job_free(struct job *);
/* Queue a result for the loop (worker thread); FINAL ends the request. */
void	result_post(struct capture *, struct creq *, json_t *msg, int final, int error);
/* C's results queue, empty, and its cond rcv on CLOCK_MONOTONIC (result_post's timed wait). */
void	results_init(struct capture *);

/* worker.c */
void	*worker_main(void *arg);

/* maps.c: first-sight captures, build-id sets, the failure table */
int	idset_add(struct idset *, const uint8_t *id, size_t len);	/* 1 if new */
/* The same, IX kept with a new one; *IX set to the one kept with it either way. */
int	idset_add_ix(struct idset *, const uint8_t *id, size_t len, uint32_t *ix);
int	idset_has(const struct idset *, const uint8_t *id, size_t len);
void	idset_clear(struct idset *);	/* empty, its memory freed */
struct failrec *fail_find(struct capture *, const uint8_t *id, size_t len);
void	fail_forget(struct capture *, const uint8_t *id, size_t len);
void	fail_note(struct capture *, const uint8_t *id, size_t len, const char *reason);
void	name_strip_deleted(const char *name, char *out, size_t len);
int	cache_side(int rc);
void	reason_add(char *buf, size_t len, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
int	try_path(struct capture *, const char *path, uint32_t pid, const char *name, uint64_t ns,
	    const uint8_t *id, size_t idlen, char *file, size_t filelen, char *why,
	    size_t whylen);
void	count_result(struct capture *, int rc);
void	run_map(struct capture *, struct job *);

/* kernel.c */
int	store_kallsyms(struct capture *, const uint8_t *id, size_t idlen, char *file,
	    size_t filelen, char *why, size_t whylen);
int	store_module(struct capture *, const char *path, const uint8_t *id, size_t idlen,
	    char *file, size_t filelen, char *why, size_t whylen);
int	store_vdso(struct capture *, const uint8_t *id, size_t idlen, char *file,
	    size_t filelen, char *why, size_t whylen);

/* store.c */
void	run_store(struct capture *, struct job *);
json_t	*store_one(struct capture *, struct storectx *, const struct segbid *);
void	live_free(struct storectx *);
int	job_cancelled(const struct job *);
int	job_buildids(struct capture *, struct job *, char ***segs, size_t *nsegs,
	    struct segbid **bids, size_t *nbids);
int	resolve_segments(struct capture *, struct job *, char ***out, size_t *nout,
	    char *err, size_t errlen);
int	read_segment(const char *path, int64_t since_ns, struct segbid **v, size_t *n,
	    struct idset *seen, uint64_t *wall_end, char *err, size_t errlen);
void	segbids_free(struct segbid *, size_t n);
void	free_strs(char **v, size_t n);
int	strp_cmp(const void *a, const void *b);

/* export.c */
void	run_export(struct capture *, struct job *);
void	prune_dir(const char *dir, const char *prefix, size_t keep);

/* jit.c */
void	run_jit_watch(struct capture *, struct job *);
void	run_jit_keep(struct capture *, struct job *);
void	jit_free(struct capture *);
uint32_t jit_ns_pid(uint32_t pid);
void	jit_roots_count(struct capture *, uint32_t uid, int delta);

/* profile.c: the profile thread */
void	*profile_main(void *arg);
/* capture.c: a snapshot period's job, from the worker to the profile thread */
void	profile_handoff(struct capture *, struct job *);

/* evict.c */
void	evict_maybe(struct capture *, int force);
/* Evict down to TARGET bytes (FORCE: even if the last try found nothing to evict). */
void	evict_to(struct capture *, uint64_t target, int force);
/* bidcache's admission: room under max_size, the owner's share (worker thread). */
int	cache_admit(void *arg, unsigned uid, uint64_t size, char *err, size_t errlen);
/*
 * UID's share of the copies of users' files, binaries and JIT maps alike
 * ([cache] user_bytes, user_files per user_interval; root has none):
 * before a copy of SIZE bytes, 0 with *QP the share to charge once the
 * copy is made (user_share_charge; NULL: nothing to charge), or -EDQUOT
 * with ERR set (counted as refused_quota, logged once an interval).
 */
int	user_share(struct capture *, unsigned uid, uint64_t size, struct quota **qp,
	    char *err, size_t errlen);
/*
 * Stopping, and past the time the last jobs have: CAPTURE_STOP_KEEP_MS
 * from the worker's turn to them (finish_on_stop), or, for a job already
 * running when the stop was asked, from that ask.  A long job (a lazy
 * store) ends where it is.  Worker only.
 */
int	stop_late(struct capture *);
void	user_share_charge(struct quota *, uint64_t size);

#endif
