/*
 * resolver.c - the worker threads of the userspace build-id reads; see
 * resolver.h.  The loop owns the requests it makes and the list of slow
 * devices; the workers own nothing but the request in their hands.
 * Shared: the queue and the parked requests (mu, cv), the lanes (their
 * own mutex, taken after mu, never before), each worker's busy_since,
 * dev1 and lane, the requests' done flag and reference count, want_wakeup.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "log.h"
#include "resolver.h"
#include "userfs.h"
#include "wallclock.h"
#include "walltime.h"

#define SLOW_NS		(30ULL * 1000000000ULL)	/* a device that hung, avoided this long */
/*
 * A worker in one group of reads this long has hung in its device
 * (resolver_check): longer than any request's deadline, which ends the
 * reads of a group (resolve_each), so only a read that does not return
 * gets here.  A request's deadline alone proves nothing of its device: it
 * counts from the mapping's arrival, so the wait in the queue and for a
 * CPU (an exec storm at nice 19 on two CPUs, its page locks held by the
 * preempted) made a busy host's root device "slow" and every mapping on
 * it unknown for SLOW_NS.
 */
#define HUNG_NS		(1000ULL * 1000000ULL)
/* Every worker in one read this long, with reads waiting: start another. */
#define SPARE_AFTER_NS	(50ULL * 1000000ULL)
#define SLOW_MAX	16
#define TIMEOUT_NS	((uint64_t)RESOLVE_TIMEOUT_MS * 1000000ULL)
/*
 * Requests the loop put back are kept for the next ones (an exec storm
 * makes and drops hundreds a second): at most POOL_MAX, each with room
 * for a name of POOL_NAME bytes or its own, and its array of members
 * (up to RESOLVER_GROUP_MAX: 4 KiB).
 */
#define POOL_MAX	64
#define POOL_NAME	256
/*
 * The requests of the batch being made, by file, for resolver_req_join:
 * JOIN_SLOTS slots, JOIN_PROBE looked at; a slot is in use only if it was
 * filled in this batch (no clearing at each kick).
 */
#define JOIN_SLOTS	64
#define JOIN_PROBE	4
/* The owners of the last processes looked at (uid_of), each kept UID_KEEP_NS. */
#define UID_CACHE	64
#define UID_KEEP_NS	1000000000ULL

struct worker {
	pthread_t	 th;
	struct resolver	*r;
	atomic_uint_least64_t busy_since;	/* CLOCK_MONOTONIC ns, 0: idle */
	atomic_uint_least64_t dev1;		/* the device of the file in hand, plus 1; 0: none */
	atomic_int	 lane;			/* ... and it took a lane (a user's file system) */
	int		 started;
};

struct resolver {
	struct buildid_reader reader;		/* the workers' cache */
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	struct resolve_req *qhead, **qtail;	/* taken by the workers */
	struct resolve_req *q2head, **q2tail;	/* ... once qhead is empty (a heavy user's: back) */
	struct resolve_req *parked;		/* met a lane another worker holds (reader_guard) */
	size_t		 nparked;
	int		 stop;
	struct worker	 w[RESOLVER_MAX_WORKERS];
	int		 nworkers;
	int		 efd;
	atomic_int	 want_wakeup;
	atomic_int	 fds;			/* answers holding a file open */
	int		 keep_fds;		/* someone wants them (eager capture) */

	/* the loop's */
	struct resolve_req *busy;		/* answered "busy", shared by every mapping over the limit */
	struct resolve_req *busy_user;		/* ... over its user's share: not counted in pending */
	struct {
		uint64_t batch;
		struct resolve_req *q;
	}		 join[JOIN_SLOTS];
	uint64_t	 batch;			/* resolver_kick counts them */
	struct resolve_req *pool;		/* put back, for reuse (next) */
	size_t		 npool;
	struct resolve_req *bhead, **btail;	/* the batch resolver_kick hands over */
	struct resolve_req *b2head, **b2tail;	/* ... its requests for the back of the queue */
	size_t		 pending;		/* mappings the loop has not put */
	size_t		 reqs;			/* requests the loop holds (RESOLVER_MAX_REQS) */
	struct {
		dev_t	 dev;
		uint64_t until;
	}		 slow[SLOW_MAX];
	uint64_t	 requests, timeouts;
	/* pins (resolver.h): the files the loop proves mappings of itself */
	dev_t		 pin_dev[4];
	int		 npin_dev;
	struct pin {
		struct bid_pin p;
		uint64_t checked;	/* CLOCK_MONOTONIC before its last fstat that held */
		uint64_t used;		/* its last mapping, or when it was pinned: its idle time */
		/*
		 * The name it was proven by: a pin stands for that path alone
		 * (a user's bind mount of a pinned file over another path, in a
		 * namespace of theirs, maps the same device and inode under a
		 * name the host does not give it: read and judged on its own).
		 */
		char	*name;
	}		 pins[RESOLVER_PINS];
	struct pin_key {		/* pins[i]'s file, packed for pin_find's scan */
		uint64_t ino;
		dev_t	 dev;
	}		 pin_keys[RESOLVER_PINS];
	int		 npins;
	int		 pin_asks;		/* requests out asking for their file (want_pin) */
	uint64_t	 pins_looked;		/* resolver_check's last look at them */
	uint64_t	 pinned, pins_dropped;
	/* the users' shares (resolver.h, RESOLVER_USER_*): the loop's */
	struct user_share {
		uint32_t uid;
		uint32_t reqs, pending;	/* both 0: the slot is free */
	}		 users[RESOLVER_USER_SLOTS + 1];	/* the last: everyone without a slot */
	struct {
		uint32_t pid, uid;
		uint64_t at;		/* CLOCK_MONOTONIC ns of the look; 0: empty */
	}		 uids[UID_CACHE];
	uint32_t	(*uid_of)(uint32_t);	/* tests' */
	uint64_t	 user_full, uid_looks;
};

static void pin_drop(struct resolver *, int);

/* A request about no mapping, answered already (its answer "ok" until set); NULL: no memory. */
static struct resolve_req *
req_answered(void)
{
	struct resolve_req *q;

	if ((q = calloc(1, sizeof(*q) + 1)) == NULL)
		return NULL;
	q->fd = -1;
	q->pin.fd = -1;
	q->q.filename = q->name;
	atomic_init(&q->refs, 1);
	atomic_init(&q->done, 1);
	return q;
}

static void
req_unref(struct resolver *r, struct resolve_req *q)
{
	if (atomic_fetch_sub(&q->refs, 1) != 1)
		return;
	if (q->fd >= 0) {
		close(q->fd);
		atomic_fetch_sub(&r->fds, 1);
	}
	if (q->pin.fd >= 0)
		close(q->pin.fd);
	free(q->m);
	free(q);
}

/*
 * A file a user's process serves (userfs.h: a user's FUSE mount, a loop
 * device while a user's FUSE server exists, or what cannot be told from
 * one) is read under a lane of its device: one thread at a time on that
 * device, at most LANES_MAX devices at once.  A read has a deadline, but
 * the thread in it stays in the server's hands for as long as the server
 * likes (a read, or the FLUSH of the file's close): a user with
 * RESOLVER_MAX_WORKERS FUSE mounts that never answered the daemon held
 * every thread, and from then on no file no pin proves had a build-id,
 * root's neither (t_hostile_readers).  Now such servers hold LANES_MAX
 * threads at most, and one thread is always left for everyone else's
 * files.  No thread waits for a lane: a request that meets a device whose
 * lane another thread took within LANE_FRESH_NS is parked (not answered,
 * not counted as taken, so its device is not left alone when its deadline
 * passes), at most PARKED_MAX of them, and queued again when that lane is
 * let go (a snap's libraries, read one after the other; one that finds
 * the lane another's again is parked again before any system call); with
 * the lane held longer, no lane free, or the parking full, it is answered
 * "user-fs" at once, before the server is asked anything.  A file read
 * under a lane is closed there, never kept for the capture (whose worker
 * reads none of them anyway).
 */
#define LANES_MAX	(RESOLVER_MAX_WORKERS - 1)
#define PARKED_MAX	64
#define LANE_FRESH_NS	(100ULL * 1000 * 1000)	/* a lane held longer: not parked behind */

static struct {
	pthread_mutex_t	 mu;
	dev_t		 dev[LANES_MAX];
	int		 used[LANES_MAX];
	uint64_t	 since[LANES_MAX];	/* taken then (mono ns) */
} lanes = { .mu = PTHREAD_MUTEX_INITIALIZER };
static _Thread_local dev_t my_lanes[LANES_MAX];	/* the lanes this thread holds */
static _Thread_local int my_nlanes;
static _Thread_local int my_park;	/* refused: its device's lane another thread's */
static _Thread_local dev_t my_park_dev;	/* ... that device */
static _Thread_local dev_t my_released[LANES_MAX];	/* lane_release's */
static _Thread_local struct worker *my_worker;	/* this thread's, a worker's */

/*
 * Under lanes.mu: the free slot for DEV; -1 if another thread took DEV's
 * lane within LANE_FRESH_NS of NOW (a request may park behind it); -2 if
 * it took it earlier (a server that does not answer, most likely: its
 * requests would only wait out their deadlines, and the side-band's turn
 * with them), or no slot is free.
 */
static int
lane_slot(dev_t dev, uint64_t now)
{
	int	 i, slot = -2;

	for (i = 0; i < LANES_MAX; i++) {
		if (lanes.used[i] && lanes.dev[i] == dev)
			return now - lanes.since[i] < LANE_FRESH_NS ? -1 : -2;
		if (!lanes.used[i] && slot < 0)
			slot = i;
	}
	return slot;
}

/* Would a request for DEV park now (its lane another thread's, taken a moment ago)? */
static int
lane_parkable(dev_t dev, uint64_t now)
{
	int	 parkable;

	pthread_mutex_lock(&lanes.mu);
	parkable = lane_slot(dev, now) == -1;
	pthread_mutex_unlock(&lanes.mu);
	return parkable;
}

static int
reader_guard(int pathfd, uint32_t pid, char *why, size_t whylen)
{
	struct statx stx;
	uint64_t now;
	dev_t	 dev;
	int	 i, slot;

	if (!userfs_fd(pathfd, pid, why, whylen))
		return 0;
	/* The attributes the kernel holds: no request to the server. */
	if (statx(pathfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, 0, &stx) == -1)
		return 1;
	dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	for (i = 0; i < my_nlanes; i++)
		if (my_lanes[i] == dev)
			return 0;
	slot = -2;
	now = mono_ns();
	pthread_mutex_lock(&lanes.mu);
	if (my_nlanes < LANES_MAX && (slot = lane_slot(dev, now)) >= 0) {
		lanes.used[slot] = 1;
		lanes.dev[slot] = dev;
		lanes.since[slot] = now;
	}
	pthread_mutex_unlock(&lanes.mu);
	if (slot >= 0) {
		my_lanes[my_nlanes++] = dev;
		/*
		 * Held from here on, the thread is in a user's server's hands,
		 * not in the record's device's: a path on the host's device
		 * that leads into a user's mount is walked here.
		 */
		if (my_worker != NULL)
			atomic_store(&my_worker->lane, 1);
		return 0;
	}
	if (slot == -1 && !my_park) {
		my_park = 1;
		my_park_dev = dev;
	}
	snprintf(why, whylen, slot == -1 ? "a user's file system another thread reads" :
	    "a user's file system, and users' file systems hold every lane");
	return 1;
}

/* The lanes this thread holds let go (its requests are answered): how many, in my_released[]. */
static int
lane_release(void)
{
	int	 i, k, n = my_nlanes;

	if (n == 0)
		return 0;
	memcpy(my_released, my_lanes, (size_t)n * sizeof(*my_lanes));
	pthread_mutex_lock(&lanes.mu);
	for (k = 0; k < my_nlanes; k++)
		for (i = 0; i < LANES_MAX; i++)
			if (lanes.used[i] && lanes.dev[i] == my_lanes[k])
				lanes.used[i] = 0;
	pthread_mutex_unlock(&lanes.mu);
	my_nlanes = 0;
	return n;
}

/*
 * Requests for one file, taken together: an exec storm maps the same few
 * files thousands of times a second, and one proof by name answers them
 * all (buildid_reader_known).  SCAN_MAX bounds the look along the queue.
 */
#define GROUP_MAX	64
#define SCAN_MAX	256

static int
same_file(const struct resolve_req *a, const struct resolve_req *b)
{
	return a->q.has_inode && b->q.has_inode && a->q.ino == b->q.ino &&
	    a->q.maj == b->q.maj && a->q.min == b->q.min && a->q.gen == b->q.gen &&
	    strcmp(a->q.filename, b->q.filename) == 0;
}

/*
 * Under mu, a queue not empty: the head of the queue (the back one only
 * when the other is empty) and its requests for the same file.
 */
static size_t
take_group(struct resolver *r, struct resolve_req **g)
{
	struct resolve_req **pp, *q, **head = &r->qhead, ***tail = &r->qtail;
	size_t	 n = 0, seen = 0;

	if (*head == NULL) {
		head = &r->q2head;
		tail = &r->q2tail;
	}
	g[n++] = q = *head;
	*head = q->qnext;
	for (pp = head; (q = *pp) != NULL && n < GROUP_MAX && seen < SCAN_MAX; seen++) {
		if (same_file(g[0], q)) {
			*pp = q->qnext;
			g[n++] = q;
		} else
			pp = &q->qnext;
	}
	if (*pp == NULL)
		*tail = pp;
	return n;
}

/*
 * Answer BQ alone into A: the reading rules of buildid_reader.h.  The file
 * read goes to *FD (NULL: closed), for a copy into the cache, within a
 * quota of fds.
 */
static void
resolve_one(struct resolver *r, const struct bid_query *bq, struct bid_answer *a, int *fd)
{
	if (fd != NULL && r->keep_fds && atomic_fetch_add(&r->fds, 1) < RESOLVER_MAX_FDS) {
		buildid_reader_resolve(&r->reader, bq, a, fd);
		if (*fd >= 0 && my_nlanes > 0) {
			close(*fd);	/* under its lane: a FLUSH may never come back */
			*fd = -1;
		}
		if (*fd < 0)
			atomic_fetch_sub(&r->fds, 1);
	} else {
		if (fd != NULL && r->keep_fds)
			atomic_fetch_sub(&r->fds, 1);
		buildid_reader_resolve(&r->reader, bq, a, NULL);
	}
}

/* Answer Q without the proof: each of its mappings on its own. */
static void
resolve_each(struct resolver *r, struct resolve_req *q)
{
	struct resolve_member *mb;
	struct bid_query bq = q->q;
	uint32_t i;

	if (q->nm == 0) {
		resolve_one(r, &q->q, &q->a, &q->fd);
		return;
	}
	for (i = 0; i < q->nm; i++) {
		mb = &q->m[i];
		/* The loop gives the whole request up at its deadline: no more reads. */
		if (mono_ns() >= q->deadline) {
			memset(&mb->a, 0, sizeof(mb->a));
			mb->a.cause = BIDC_TIMEOUT;
			continue;
		}
		bq.pid = mb->pid;
		bq.addr = mb->addr;
		bq.len = mb->len;
		bq.map = mb->when;
		resolve_one(r, &bq, &mb->a, q->fd < 0 ? &q->fd : NULL);
	}
}

/* Answer the requests of G (N of them, one file) that still want an answer. */
static void
resolve_group(struct resolver *r, struct resolve_req **g, size_t n)
{
	struct bid_answer a;
	struct bid_when when = { UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX };
	uint64_t now = mono_ns();
	size_t	 i, live = 0;

	for (i = 0; i < n; i++) {
		/*
		 * Done already: handed back to close its file (resolver_req_put).
		 * Past its deadline: the loop has given up on it, no read.
		 */
		if (atomic_load(&g[i]->done) || now >= g[i]->deadline) {
			g[i] = NULL;
			continue;
		}
		/*
		 * Parked before, its device's lane another's still (a hand-off
		 * to another parked request): parked again, no system call.
		 */
		if (g[i]->parked_before) {
			if ((g[i]->park = lane_parkable(g[i]->park_dev, now))) {
				g[i] = NULL;
				continue;
			}
		}
		bid_when_earliest(&when, g[i]->q.map);
		live++;
	}
	if (live == 0)
		return;
	for (i = 0; i < n && g[i] == NULL; i++)
		;
	if (buildid_reader_known(&r->reader, &g[i]->q, when, &a,
	    g[i]->want_pin ? &g[i]->pin : NULL)) {
		for (; i < n; i++)
			if (g[i] != NULL) {
				g[i]->a = a;
				g[i]->all = 1;
				atomic_store_explicit(&g[i]->done, 1, memory_order_release);
			}
		return;
	}
	for (; i < n; i++)
		if (g[i] != NULL) {
			my_park = 0;
			resolve_each(r, g[i]);
			/* its device's lane another thread's: parked by worker_main, perhaps */
			if ((g[i]->park = my_park)) {
				g[i]->park_dev = my_park_dev;
				g[i]->parked_before = 1;
				continue;
			}
			atomic_store_explicit(&g[i]->done, 1, memory_order_release);
		}
}

/* Q, parked no more, queued first.  Under r->mu. */
static void
queue_front(struct resolver *r, struct resolve_req *q)
{
	q->park = 0;
	q->qnext = r->qhead;
	if (r->qhead == NULL)
		r->qtail = &q->qnext;
	r->qhead = q;
}

/*
 * Q (its answer "user-fs" written) parked until its device's lane is let
 * go, if there is room and time; else answered (0).  Those past their
 * deadline go first (the loop has given up on them: a lane held for
 * good).  Under r->mu, which is taken before lanes.mu, never after.
 */
static int
park(struct resolver *r, struct resolve_req *q)
{
	struct resolve_req **pp, *e;
	uint64_t now = mono_ns();

	for (pp = &r->parked; (e = *pp) != NULL;)
		if (now >= e->deadline) {
			*pp = e->qnext;
			r->nparked--;
			atomic_store_explicit(&e->done, 1, memory_order_release);
			req_unref(r, e);
		} else
			pp = &e->qnext;
	if (r->nparked >= PARKED_MAX || now >= q->deadline) {
		q->park = 0;
		atomic_store_explicit(&q->done, 1, memory_order_release);
		return 0;
	}
	/*
	 * Its lane let go since the guard met it (its holder's unpark, which
	 * takes r->mu after, came first): queued again at once.
	 */
	if (!lane_parkable(q->park_dev, now)) {
		queue_front(r, q);
		pthread_cond_signal(&r->cv);
		return 1;
	}
	q->qnext = r->parked;
	r->parked = q;
	r->nparked++;
	return 1;
}

/* The lanes of DEVS[0..N) were let go: their parked requests queued again, first.  Under r->mu. */
static void
unpark(struct resolver *r, const dev_t *devs, int n)
{
	struct resolve_req **pp, *q;
	int	 i, woke = 0;

	for (pp = &r->parked; (q = *pp) != NULL;) {
		for (i = 0; i < n && devs[i] != q->park_dev; i++)
			;
		if (i == n) {
			pp = &q->qnext;
			continue;
		}
		*pp = q->qnext;
		r->nparked--;
		queue_front(r, q);
		woke = 1;
	}
	if (woke)
		pthread_cond_broadcast(&r->cv);
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct resolver *r = w->r;
	struct resolve_req *g[GROUP_MAX], *keep[GROUP_MAX];
	uint64_t one = 1;
	size_t	 i, n;
	int	 released;

	my_worker = w;
	for (;;) {
		pthread_mutex_lock(&r->mu);
		while (!r->stop && r->qhead == NULL && r->q2head == NULL)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stop) {
			pthread_mutex_unlock(&r->mu);
			break;
		}
		n = take_group(r, g);
		pthread_mutex_unlock(&r->mu);

		atomic_store(&w->lane, 0);
		atomic_store(&w->dev1, g[0]->q.has_inode ?
		    (uint64_t)makedev(g[0]->q.maj, g[0]->q.min) + 1 : 0);
		atomic_store(&w->busy_since, mono_ns());
		memcpy(keep, g, n * sizeof(*g));
		resolve_group(r, g, n);
		released = lane_release();
		atomic_store(&w->busy_since, 0);
		atomic_store(&w->dev1, 0);
		/* the parked keep the queue's reference */
		pthread_mutex_lock(&r->mu);
		for (i = 0; i < n; i++)
			if (keep[i]->park && park(r, keep[i]))
				keep[i] = NULL;
		if (released > 0)
			unpark(r, my_released, released);
		pthread_mutex_unlock(&r->mu);
		if (atomic_exchange(&r->want_wakeup, 0) && write(r->efd, &one, sizeof(one)) < 0) {
			/* the counter is full: the loop has a wake-up already */
		}
		for (i = 0; i < n; i++)
			if (keep[i] != NULL)
				req_unref(r, keep[i]);
	}
	return NULL;
}

static int
spawn(struct resolver *r)
{
	struct worker *w;
	int	 rc;

	if (r->nworkers >= RESOLVER_MAX_WORKERS)
		return -1;
	w = &r->w[r->nworkers];
	w->r = r;
	atomic_store(&w->busy_since, 0);
	if ((rc = pthread_create(&w->th, NULL, worker_main, w)) != 0)
		return -rc;
	w->started = 1;
	pthread_setname_np(w->th, "perfmapd-bid");
	r->nworkers++;
	return 0;
}

int
resolver_start(struct resolver **out, int keep_fds, char *err, size_t errlen)
{
	struct resolver *r;
	int	 rc;

	*out = NULL;
	if ((r = calloc(1, sizeof(*r))) == NULL || buildid_reader_init(&r->reader) < 0) {
		free(r);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	r->qtail = &r->qhead;
	r->q2tail = &r->q2head;
	r->btail = &r->bhead;
	r->b2tail = &r->b2head;
	r->keep_fds = keep_fds;
	r->reader.guard = reader_guard;
	r->reader.host_mount = userfs_host_mount;
	if ((r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	if ((r->busy = req_answered()) == NULL || (r->busy_user = req_answered()) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	r->busy->a.cause = BIDC_BUSY;
	r->busy_user->a.cause = BIDC_BUSY;
	r->batch = 1;
	if ((rc = spawn(r)) < 0) {
		snprintf(err, errlen, "cannot start the build-id reader thread: %s",
		    strerror(-rc));
		goto fail;
	}
	*out = r;
	return 0;
fail:
	if (r->efd >= 0)
		close(r->efd);
	buildid_reader_free(&r->reader);
	free(r->busy);
	free(r->busy_user);
	free(r);
	return -1;
}

void
resolver_stop(struct resolver *r)
{
	struct resolve_req *q;
	struct timespec ts;
	int	 i, stuck = 0;

	if (r == NULL)
		return;
	while (r->npins > 0)
		pin_drop(r, r->npins - 1);
	resolver_kick(r);
	pthread_mutex_lock(&r->mu);
	r->stop = 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	clock_gettime(CLOCK_REALTIME, &ts);	/* as capture_stop: TSan knows no clockjoin */
	ts.tv_sec += 1;
	for (i = 0; i < r->nworkers; i++)
		if (pthread_timedjoin_np(r->w[i].th, NULL, &ts) != 0) {
			pthread_detach(r->w[i].th);
			stuck++;
		}
	if (stuck > 0) {
		/* They still hold requests and use the reader: leave it all to exit(). */
		log_warnx("build-id reader: %d thread%s stuck in a file system; left behind",
		    stuck, stuck > 1 ? "s" : "");
		return;
	}
	while ((q = r->qhead) != NULL) {
		r->qhead = q->qnext;
		req_unref(r, q);
	}
	while ((q = r->q2head) != NULL) {
		r->q2head = q->qnext;
		req_unref(r, q);
	}
	while ((q = r->parked) != NULL) {
		r->parked = q->qnext;
		req_unref(r, q);
	}
	while ((q = r->pool) != NULL) {
		r->pool = q->next;
		free(q->m);
		free(q);
	}
	free(r->busy);
	free(r->busy_user);
	close(r->efd);
	buildid_reader_free(&r->reader);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	free(r);
}

int
resolver_fd(struct resolver *r)
{
	return r->efd;
}

void
resolver_ack(struct resolver *r)
{
	uint64_t v;

	if (read(r->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing to read */
	}
}

static int
dev_slow(struct resolver *r, dev_t dev, uint64_t now)
{
	int	 i;

	for (i = 0; i < SLOW_MAX; i++)
		if (r->slow[i].until > now && r->slow[i].dev == dev)
			return 1;
	return 0;
}

static void
mark_slow(struct resolver *r, dev_t dev, uint64_t now)
{
	int	 i, oldest = 0;

	for (i = 0; i < SLOW_MAX; i++) {
		if (r->slow[i].until <= now || r->slow[i].dev == dev) {
			oldest = i;
			break;
		}
		if (r->slow[i].until < r->slow[oldest].until)
			oldest = i;
	}
	if (r->slow[oldest].until <= now || r->slow[oldest].dev != dev)
		log_warnx("build-id reader: device %u:%u did not answer within %llu ms; "
		    "its mappings are left unknown for %llu s", major(dev), minor(dev),
		    (unsigned long long)(HUNG_NS / 1000000ULL),
		    (unsigned long long)(SLOW_NS / 1000000000ULL));
	r->slow[oldest].dev = dev;
	r->slow[oldest].until = now + SLOW_NS;
}

/* ---- pins (resolver.h) ------------------------------------------------ */

/* The pin of (DEV, INO), or -1. */
static int
pin_find(const struct resolver *r, dev_t dev, uint64_t ino)
{
	int	 i;

	for (i = 0; i < r->npins; i++)
		if (r->pin_keys[i].ino == ino && r->pin_keys[i].dev == dev)
			return i;
	return -1;
}

/*
 * The pin to make room with when all are taken: the least recently used,
 * if unused for PIN_SPARE_NS, else -1 (the hot ones stay).  A storm's file
 * is used every few milliseconds; the files unused for 100 ms are those of
 * a program that ran once (a client's thirty libraries, the processes
 * scanned at start) or a user's churn.  (A second let such a program keep
 * every pin from a new storm for its first second.)
 */
#define PIN_SPARE_NS	(100ULL * 1000 * 1000)

/* May a new file take PN's place? */
static int
pin_replaceable(const struct pin *pn, uint64_t now)
{
	return pn->used + PIN_SPARE_NS < now;
}

static int
pin_spare(const struct resolver *r, uint64_t now)
{
	int	 i, old = -1;

	if (r->npins < RESOLVER_PINS)
		return r->npins;
	for (i = 0; i < r->npins; i++)
		if (old < 0 || r->pins[i].used < r->pins[old].used)
			old = i;
	return pin_replaceable(&r->pins[old], now) ? old : -1;
}

/* How many pins a new file could take now: those free, and the replaceable ones. */
static int
pin_room(const struct resolver *r, uint64_t now)
{
	int	 i, n = RESOLVER_PINS - r->npins;

	for (i = 0; i < r->npins; i++)
		n += pin_replaceable(&r->pins[i], now);
	return n;
}

/*
 * Would the loop pin M's file, if its proof brought it?  Not while as many
 * requests are out asking as there is room: under a user's churn every
 * request of a burst would bring its file back open, most of them only to
 * be closed by a worker, and a slow worker's backlog of them grew with
 * the burst (t_hostile_pins under ASan: 51 such files over the pins).
 */
static int
pin_wanted(const struct resolver *r, const struct record_mmap *m, uint64_t now)
{
	dev_t	 dev = makedev(m->maj, m->min);
	int	 i;

	if (!m->has_inode || pin_find(r, dev, m->ino) >= 0 || r->pin_asks >= pin_room(r, now))
		return 0;
	for (i = 0; i < r->npin_dev; i++)
		if (r->pin_dev[i] == dev)
			return 1;
	return 0;
}

/*
 * FD to be closed by a worker, in the next batch: the last close of a
 * deleted file frees its blocks, which takes as long as the file is large.
 */
static void
close_later(struct resolver *r, int fd)
{
	struct resolve_req *q;

	if ((q = req_answered()) == NULL) {
		close(fd);		/* out of memory: here, then */
		return;
	}
	q->pin.fd = fd;
	q->qnext = NULL;
	*r->btail = q;
	r->btail = &q->qnext;
}

static void
pin_drop(struct resolver *r, int i)
{
	close_later(r, r->pins[i].p.fd);
	free(r->pins[i].name);
	r->pins[i] = r->pins[--r->npins];
	r->pin_keys[i] = r->pin_keys[r->npins];
	r->pins_dropped++;
}

/* The file Q's proof brought, pinned if still wanted (Q is done); else it goes with Q. */
static void
pin_adopt(struct resolver *r, struct resolve_req *q)
{
	uint64_t now = mono_ns();
	struct pin *pn;
	char	*name;
	int	 i;

	if (pin_find(r, q->pin.dev, q->pin.ino) >= 0 || (i = pin_spare(r, now)) < 0 ||
	    (name = strdup(q->q.filename)) == NULL)
		return;
	if (i < r->npins)
		pin_drop(r, i);		/* the least recently used */
	r->pin_keys[r->npins] = (struct pin_key){ .ino = q->pin.ino, .dev = q->pin.dev };
	pn = &r->pins[r->npins++];
	pn->p = q->pin;
	pn->name = name;
	pn->checked = 0;		/* not looked at since the worker's proof */
	pn->used = now;
	q->pin.fd = -1;
}

void
resolver_pin_devices(struct resolver *r, const dev_t *devs, int n)
{
	int	 i;

	r->npin_dev = 0;
	for (i = 0; i < n && r->npin_dev < (int)(sizeof(r->pin_dev) / sizeof(r->pin_dev[0])); i++)
		r->pin_dev[r->npin_dev++] = devs[i];
}

int
resolver_pinned(struct resolver *r, const struct record_mmap *m, uint64_t time,
    struct bid_when when, uint64_t now, struct bid_answer *a)
{
	struct pin *pn;
	struct stat st;
	int	 i;

	if (r->npins == 0 || !m->has_inode || time == 0 ||
	    (i = pin_find(r, makedev(m->maj, m->min), m->ino)) < 0)
		return 0;
	pn = &r->pins[i];
	if (strcmp(pn->name, m->filename) != 0)
		return 0;
	if (time >= pn->checked) {
		/*
		 * The file's state after the mapping: the clock first (NOW, read
		 * before this call), then fstat.  (A record stamped later than
		 * now cannot be proven.)  The state holds for the mappings before
		 * NOW, not up to the fstat: the next look is at the next pass.
		 */
		if (time >= now)
			return 0;
		if (fstat(pn->p.fd, &st) == -1 || !buildid_pin_holds(&pn->p, &st)) {
			pin_drop(r, i);
			return 0;
		}
		wallclock_look(NULL);	/* after the fstat: a step before it is seen */
		pn->checked = now;
	}
	/* A step of the wall clock: the state's timestamps may come again. */
	if (pn->p.steps != wallclock_steps()) {
		pin_drop(r, i);
		return 0;
	}
	/*
	 * Used now, looked at or not: a mapping reaches the loop after the
	 * side-band holdoff, mostly stamped before the last look, and a file
	 * mapped every few milliseconds must not look unused for 100 ms.
	 */
	pn->used = now;
	if (!buildid_pin_before(&pn->p, when.wall_ns) || wallclock_stepped_after(when.since_ns))
		return 0;
	*a = pn->p.a;
	a->cached = 1;
	r->pinned++;
	return 1;
}

/* Once a second: drop the pins unused for RESOLVER_PIN_IDLE_S, or whose file changed or went. */
static void
pins_look(struct resolver *r, uint64_t now)
{
	struct stat st;
	int	 i;

	if (now < r->pins_looked + 1000000000ULL)
		return;
	r->pins_looked = now;
	for (i = r->npins - 1; i >= 0; i--)
		if (now > r->pins[i].used + RESOLVER_PIN_IDLE_S * 1000000000ULL ||
		    r->pins[i].p.steps != wallclock_steps() ||
		    fstat(r->pins[i].p.fd, &st) == -1 || !buildid_pin_holds(&r->pins[i].p, &st))
			pin_drop(r, i);
}

/* A request for M, from the pool or new, not counted yet; NULL when out of memory. */
static struct resolve_req *
req_alloc(struct resolver *r, const struct record_mmap *m, struct bid_when when, uint64_t now)
{
	struct resolve_req *q;
	struct resolve_member *mem = NULL;
	size_t	 n = strlen(m->filename) + 1, cap = n > POOL_NAME ? n : POOL_NAME;
	uint32_t capm = 0;

	if ((q = r->pool) != NULL && q->namecap >= n) {
		r->pool = q->next;
		r->npool--;
		cap = q->namecap;
		mem = q->m;
		capm = q->capm;
		memset(q, 0, sizeof(*q));
	} else if ((q = calloc(1, sizeof(*q) + cap)) == NULL)
		return NULL;
	q->m = mem;
	q->capm = capm;
	q->namecap = cap;
	memcpy(q->name, m->filename, n);
	q->q.pid = m->pid;
	q->q.addr = m->addr;
	q->q.len = m->len;
	q->q.has_inode = m->has_inode;
	q->q.maj = m->maj;
	q->q.min = m->min;
	q->q.ino = m->ino;
	q->q.gen = m->ino_generation;
	q->q.map = when;
	q->q.filename = q->name;
	q->fd = -1;
	q->pin.fd = -1;
	if ((q->want_pin = pin_wanted(r, m, now)) != 0)
		r->pin_asks++;
	q->deadline = now + TIMEOUT_NS;
	q->loop_refs = 1;
	q->share = -1;
	atomic_init(&q->refs, 1);
	atomic_init(&q->done, 0);
	return q;
}

struct resolve_req *
resolver_req_new(struct resolver *r, const struct record_mmap *m, struct bid_when when,
    uint64_t now)
{
	struct resolve_req *q;

	if ((q = req_alloc(r, m, when, now)) == NULL)
		return NULL;
	r->requests++;
	r->pending++;
	r->reqs++;
	if (m->has_inode && dev_slow(r, makedev(m->maj, m->min), now))
		q->a.cause = BIDC_TIMEOUT;
	else if (r->pending > RESOLVER_MAX_PENDING || r->reqs > RESOLVER_MAX_REQS)
		q->a.cause = BIDC_BUSY;
	else
		return q;
	atomic_store(&q->done, 1);
	return q;
}

/*
 * The real uid of process PID: the first field of /proc/PID/status's
 * "Uid:" line, which comes within its first few hundred bytes (a name of
 * 64 escaped bytes at most before it, a newline in it printed as "\n");
 * RESOLVER_UID_UNKNOWN if it cannot be read.  The status of a process is
 * made by the kernel from counters (no lock its process can hold), so the
 * loop reads it.  The pid's owner is kept UID_KEEP_NS: a pid reused within
 * it charges the new process's mappings to the old one's owner (root's:
 * no share; a user cannot choose the pid the kernel gives a process).
 */
static uint32_t
uid_of(struct resolver *r, uint32_t pid, uint64_t now)
{
	char	 path[32], buf[1024], *p;
	unsigned long v;
	size_t	 k = pid % UID_CACHE;
	ssize_t	 n;
	int	 fd;

	if (r->uid_of != NULL)
		return r->uid_of(pid);
	if (r->uids[k].at != 0 && r->uids[k].pid == pid && now < r->uids[k].at + UID_KEEP_NS)
		return r->uids[k].uid;
	r->uid_looks++;
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return RESOLVER_UID_UNKNOWN;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return RESOLVER_UID_UNKNOWN;
	buf[n] = '\0';
	if ((p = strstr(buf, "\nUid:\t")) == NULL)
		return RESOLVER_UID_UNKNOWN;
	errno = 0;
	v = strtoul(p + 6, NULL, 10);
	if (errno != 0 || v >= RESOLVER_UID_UNKNOWN)
		return RESOLVER_UID_UNKNOWN;
	r->uids[k].pid = pid;
	r->uids[k].uid = (uint32_t)v;
	r->uids[k].at = now;
	return (uint32_t)v;
}

/*
 * UID's share: the index of its slot, a free one taken, or the one of
 * those without a slot; -1 for root.  A charge keeps its index (member,
 * request): a slot is free again only when nothing is charged to it.
 */
static int
share_of(struct resolver *r, uint32_t uid)
{
	int	 i, free_slot = RESOLVER_USER_SLOTS;

	if (uid == 0)
		return -1;
	for (i = 0; i < RESOLVER_USER_SLOTS; i++) {
		if (r->users[i].reqs == 0 && r->users[i].pending == 0) {
			if (free_slot == RESOLVER_USER_SLOTS)
				free_slot = i;
		} else if (r->users[i].uid == uid)
			return i;
	}
	r->users[free_slot].uid = uid;
	return free_slot;
}

void
resolver_test_uid_of(struct resolver *r, uint32_t (*fn)(uint32_t))
{
	r->uid_of = fn;
}

/*
 * May M, charged to SHARE, join Q, a request of this batch?  Not one at
 * the back of the queue that is another's: it would wait there too.
 */
static int
joinable(const struct resolve_req *q, const struct record_mmap *m, int share)
{
	return q->nm < RESOLVER_GROUP_MAX && (!q->back || q->share == share) &&
	    q->q.ino == m->ino && q->q.maj == m->maj &&
	    q->q.min == m->min && q->q.gen == m->ino_generation &&
	    strcmp(q->name, m->filename) == 0;
}

/* Add M as a member of Q; -1 when out of memory. */
static int
member_add(struct resolve_req *q, const struct record_mmap *m, struct bid_when when, int share)
{
	struct resolve_member *mb;
	uint32_t cap;

	if (q->nm == q->capm) {
		cap = q->capm == 0 ? 4 : q->capm * 2;
		if (cap > RESOLVER_GROUP_MAX)
			cap = RESOLVER_GROUP_MAX;
		if ((mb = reallocarray(q->m, cap, sizeof(*mb))) == NULL)
			return -1;
		q->m = mb;
		q->capm = cap;
	}
	mb = &q->m[q->nm++];
	/* No answer until one is written: never a pooled request's last one. */
	memset(&mb->a, 0, sizeof(mb->a));
	mb->a.cause = BIDC_ERROR;
	mb->pid = m->pid;
	mb->share = share;
	mb->addr = m->addr;
	mb->len = m->len;
	mb->when = when;
	bid_when_earliest(&q->q.map, when);
	q->loop_refs = (int)q->nm;
	return 0;
}

struct resolve_req *
resolver_req_join(struct resolver *r, const struct record_mmap *m, struct bid_when when,
    uint64_t now, uint32_t *idx)
{
	struct resolve_req *q = NULL;
	struct user_share *u = NULL;
	size_t	 h, k, slot = JOIN_SLOTS;
	uint32_t uid, div = 1;
	int	 share = -1;

	*idx = 0;
	if (r->pending >= RESOLVER_MAX_PENDING) {
		r->requests++;
		r->pending++;
		return r->busy;
	}
	/*
	 * Past the free bounds: charged to its user, within the user's share
	 * (a quarter of one for the processes gone before their look: any
	 * user's whose processes map and exit at once would otherwise have
	 * two).  Over it: "busy", not counted in pending, whose bounds are
	 * everyone's.
	 */
	if ((r->pending >= RESOLVER_FREE_PENDING || r->reqs >= RESOLVER_FREE_REQS) &&
	    (share = share_of(r, uid = uid_of(r, m->pid, now))) >= 0) {
		u = &r->users[share];
		div = uid == RESOLVER_UID_UNKNOWN ? 4 : 1;
		if (u->pending >= RESOLVER_USER_PENDING / div) {
			r->user_full++;
			r->requests++;
			return r->busy_user;
		}
	}
	if (m->has_inode) {
		h = (size_t)(((m->ino ^ ((uint64_t)m->maj << 40) ^ ((uint64_t)m->min << 20)) *
		    0x9e3779b97f4a7c15ULL) >> 58);
		for (k = 0; k < JOIN_PROBE; k++) {
			slot = (h + k) & (JOIN_SLOTS - 1);
			if (r->join[slot].batch != r->batch)
				break;
			if (joinable(r->join[slot].q, m, share)) {
				q = r->join[slot].q;
				break;
			}
			/* the same file, full: its next request takes the slot */
			if (r->join[slot].q->q.ino == m->ino)
				break;
		}
		if (k == JOIN_PROBE)
			slot = JOIN_SLOTS;
	}
	if (q != NULL) {
		if (member_add(q, m, when, share) < 0)
			return NULL;
		*idx = q->nm - 1;
		r->requests++;
		r->pending++;
		if (u != NULL)
			u->pending++;
		return q;
	}
	if (u != NULL && u->reqs >= RESOLVER_USER_REQS / div && r->reqs < RESOLVER_MAX_REQS) {
		r->user_full++;
		r->requests++;
		return r->busy_user;
	}
	if (r->reqs >= RESOLVER_MAX_REQS) {
		r->requests++;
		r->pending++;
		return r->busy;
	}
	if ((q = req_alloc(r, m, when, now)) == NULL)
		return NULL;
	if (member_add(q, m, when, share) < 0) {
		if (q->want_pin)
			r->pin_asks--;	/* not out asking: never made */
		free(q->m);
		free(q);
		return NULL;
	}
	r->requests++;
	r->pending++;
	r->reqs++;
	q->share = share;
	if (u != NULL) {
		/*
		 * A user holding many already (requests, or mappings: each may
		 * be read on its own): read after everyone else's.
		 */
		q->back = u->reqs >= RESOLVER_USER_BACK || u->pending >= RESOLVER_USER_BACK * 8;
		u->pending++;
		u->reqs++;
	}
	if (slot < JOIN_SLOTS) {
		r->join[slot].batch = r->batch;
		r->join[slot].q = q;
	}
	if (m->has_inode && dev_slow(r, makedev(m->maj, m->min), now)) {
		/* One answer for every member, the ones that join it later too. */
		q->a.cause = BIDC_TIMEOUT;
		q->all = 1;
		atomic_store(&q->done, 1);
	} else
		resolver_queue(r, q);
	return q;
}

void
resolver_queue(struct resolver *r, struct resolve_req *q)
{
	if (atomic_load(&q->done))
		return;
	atomic_fetch_add(&q->refs, 1);
	q->qnext = NULL;
	if (q->back) {
		*r->b2tail = q;
		r->b2tail = &q->qnext;
	} else {
		*r->btail = q;
		r->btail = &q->qnext;
	}
}

void
resolver_kick(struct resolver *r)
{
	r->batch++;			/* no more joins to what is handed over */
	if (r->bhead == NULL && r->b2head == NULL)
		return;
	pthread_mutex_lock(&r->mu);
	if (r->bhead != NULL) {
		*r->qtail = r->bhead;
		r->qtail = r->btail;
	}
	if (r->b2head != NULL) {
		*r->q2tail = r->b2head;
		r->q2tail = r->b2tail;
	}
	pthread_mutex_unlock(&r->mu);
	/*
	 * After the unlock: a worker woken inside it would find the mutex
	 * held, sleep on it and be woken again by the unlock (__lll_lock_wait
	 * and __lll_lock_wake in the two threads' profiles under an exec storm).
	 */
	pthread_cond_signal(&r->cv);
	r->bhead = NULL;
	r->btail = &r->bhead;
	r->b2head = NULL;
	r->b2tail = &r->b2head;
}

int
resolver_req_done(struct resolver *r, struct resolve_req *q, uint64_t now, int want_wakeup)
{
	if (atomic_load_explicit(&q->done, memory_order_acquire))
		return 1;
	if (q->timed_out)
		return 1;
	if (now >= q->deadline) {
		/* A worker may still be in it: its answer field stays its own. */
		q->timed_out = 1;
		r->timeouts++;
		return 1;
	}
	if (want_wakeup) {
		atomic_store(&r->want_wakeup, 1);
		/* The worker may have finished before it could see the flag. */
		if (atomic_load_explicit(&q->done, memory_order_acquire))
			return 1;
	}
	return 0;
}

int
resolver_req_fd(const struct resolve_req *q)
{
	return q->timed_out ? -1 : q->fd;
}

const struct bid_answer *
resolver_req_answer_of(const struct resolve_req *q, uint32_t idx)
{
	static const struct bid_answer timeout = { .cause = BIDC_TIMEOUT };

	if (q->timed_out)
		return &timeout;
	return q->nm == 0 || q->all ? &q->a : &q->m[idx].a;
}

const struct bid_answer *
resolver_req_answer(const struct resolve_req *q)
{
	return resolver_req_answer_of(q, 0);
}

void
resolver_req_put(struct resolver *r, struct resolve_req *q, uint32_t idx)
{
	if (q == r->busy_user)
		return;
	r->pending--;
	if (q == r->busy)
		return;
	if (idx < q->nm && q->m[idx].share >= 0)
		r->users[q->m[idx].share].pending--;
	if (--q->loop_refs > 0)
		return;
	r->reqs--;
	if (q->share >= 0)
		r->users[q->share].reqs--;
	if (q->want_pin)
		r->pin_asks--;		/* the loop's last put: no longer out asking */
	/* Done (not given up on): the worker is through with its pin. */
	if (!q->timed_out && atomic_load_explicit(&q->done, memory_order_acquire) &&
	    q->pin.fd >= 0)
		pin_adopt(r, q);
	/*
	 * The last reference, with a user's file open: a worker closes it.
	 * The close may free a deleted file's blocks, which takes as long as
	 * the file is large; never on the loop.  (refs == 1: no worker holds
	 * it, and what the worker wrote is visible.)
	 */
	if (atomic_load(&q->refs) == 1 && (q->fd >= 0 || q->pin.fd >= 0)) {
		q->qnext = NULL;
		*r->btail = q;
		r->btail = &q->qnext;
		return;
	}
	/* The last reference, no file: kept for the next request. */
	if (atomic_load(&q->refs) == 1 && r->npool < POOL_MAX) {
		q->next = r->pool;
		r->pool = q;
		r->npool++;
		return;
	}
	req_unref(r, q);
}

void
resolver_wait(struct resolver *r, struct resolve_req *q)
{
	struct pollfd pfd = { .fd = r->efd, .events = POLLIN };
	uint64_t now;

	resolver_kick(r);
	while (!atomic_load_explicit(&q->done, memory_order_acquire) &&
	    (now = mono_ns()) < q->deadline) {
		atomic_store(&r->want_wakeup, 1);
		if (atomic_load_explicit(&q->done, memory_order_acquire))
			break;
		poll(&pfd, 1, (int)((q->deadline - now) / 1000000ULL) + 1);
		resolver_ack(r);
	}
}

void
resolver_check(struct resolver *r, uint64_t now)
{
	uint64_t busy, dev1;
	int	 i, stuck = 0, waiting;

	pins_look(r, now);
	for (i = 0; i < r->nworkers; i++) {
		busy = atomic_load(&r->w[i].busy_since);
		if (busy != 0 && now > busy + SPARE_AFTER_NS)
			stuck++;
		/*
		 * Hung in its device (HUNG_NS); not one held in a user's file
		 * system (a lane: the user's device has it, whatever device
		 * the record names; a path into a user's mount).
		 */
		if (busy != 0 && now > busy + HUNG_NS && (dev1 = atomic_load(&r->w[i].dev1)) != 0 &&
		    !atomic_load(&r->w[i].lane) && atomic_load(&r->w[i].busy_since) == busy)
			mark_slow(r, (dev_t)(dev1 - 1), now);
	}
	if (stuck < r->nworkers || r->nworkers >= RESOLVER_MAX_WORKERS)
		return;
	pthread_mutex_lock(&r->mu);
	waiting = r->qhead != NULL || r->q2head != NULL;
	pthread_mutex_unlock(&r->mu);
	if (waiting && spawn(r) == 0)
		log_warnx("build-id reader: %d thread%s busy in a file system for over "
		    "%llu ms; started another", stuck, stuck > 1 ? "s" : "",
		    (unsigned long long)(SPARE_AFTER_NS / 1000000ULL));
}

void
resolver_test_hang(struct resolver *r, dev_t dev, uint64_t since)
{
	atomic_store(&r->w[0].lane, 0);
	atomic_store(&r->w[0].dev1, since != 0 ? (uint64_t)dev + 1 : 0);
	atomic_store(&r->w[0].busy_since, since);
}

void
resolver_stats(struct resolver *r, struct resolver_stats *s)
{
	uint64_t now = mono_ns(), busy;
	int	 i;

	memset(s, 0, sizeof(*s));
	if (r == NULL)
		return;
	s->requests = r->requests;
	s->timeouts = r->timeouts;
	s->pinned = r->pinned;
	s->pins = (uint64_t)r->npins;
	s->pins_dropped = r->pins_dropped;
	s->user_full = r->user_full;
	s->uid_looks = r->uid_looks;
	s->workers = (uint64_t)r->nworkers;
	for (i = 0; i < r->nworkers; i++) {
		busy = atomic_load(&r->w[i].busy_since);
		if (busy != 0 && now > busy + TIMEOUT_NS)
			s->stuck++;
	}
	pthread_mutex_lock(&r->reader.mu);
	s->reads = r->reader.reads;
	s->hits = r->reader.hits;
	pthread_mutex_unlock(&r->reader.mu);
}
