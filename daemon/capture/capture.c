/*
 * capture.c - the loop's side of the capture worker: what the recorder and
 * the control commands hand over (capture.h), the queue they go through,
 * and the results that come back (capture_poll) to be sent to clients.
 *
 *	loop: capture_*() ─► queue (mutex, cond) ─► worker: run_job() (worker.c)
 *	  ─► result_post(): results (mutex) + eventfd ─► loop: capture_poll()
 *	  ─► control_send() to the client, unless it left (on-close hook)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/eventfd.h>
#include <sys/random.h>

#include <event2/event.h>

#include "buildid.h"
#include "capture_int.h"
#include "hash.h"
#include "control/control.h"
#include "log.h"
#include "procfs.h"
#include "proto.h"
#include "record/binaries.h"
#include "record/kernel.h"
#include "record/notify.h"
#include "record/segment.h"
#include "walltime.h"

/* ---- the queues ------------------------------------------------------ */

static struct job *
job_new(void)
{
	struct job *j = calloc(1, sizeof(*j));

	if (j != NULL)
		j->fd = -1;
	return j;
}

void
job_free(struct job *j)
{
	if (j->fd >= 0)
		close(j->fd);
	free(j->name);
	json_decref(j->segments);
	json_decref(j->params);
	free(j);
}

/* Have users' processes' JIT jobs their share of the queue, for one of UID?  Under c->mu. */
static int
jit_users_full(const struct capture *c, uint32_t uid)
{
	return uid != 0 && c->njitq_users >= JIT_QUEUE_USERS(c->qmax);
}

/* Queue J; returns -1 (J freed) if the worker is stopping. */
static int
submit(struct capture *c, struct job *j)
{
	pthread_mutex_lock(&c->mu);
	if (c->stop) {
		pthread_mutex_unlock(&c->mu);
		job_free(j);
		return -1;
	}
	if (j->kind == JOB_PROFILE && j->req != NULL) {
		TAILQ_INSERT_TAIL(&c->pjobs, j, entry);
		pthread_cond_signal(&c->pcv);
		pthread_mutex_unlock(&c->mu);
		return 0;
	}
	/*
	 * Bounded like the map jobs; users' (a watch or an exit's keep of a
	 * user's process) at most JIT_QUEUE_USERS of it: a user's thousand
	 * JIT processes killed at once queue a keep each, and root's exiting
	 * then must still find room.
	 */
	if ((j->kind == JOB_JIT_WATCH || (j->kind == JOB_JIT_KEEP && j->pid != 0)) &&
	    (c->njitq >= c->qmax || jit_users_full(c, j->uid))) {
		if (j->kind == JOB_JIT_KEEP)
			atomic_fetch_add(&c->n_jit_unkept, 1);	/* gone: not offered again */
		pthread_mutex_unlock(&c->mu);
		job_free(j);
		return -1;
	}
	TAILQ_INSERT_TAIL(&c->jobs, j, entry);
	if (j->kind == JOB_JIT_WATCH || j->kind == JOB_JIT_KEEP) {
		c->njitq++;
		c->njitq_users += j->uid != 0;
	}
	if (j->kind == JOB_MAP)
		c->nmap++;
	else if (j->kind == JOB_MISSED)
		c->nmissed++;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* C's results queue, empty; rcv by the monotonic clock (result_post's timed wait). */
void
results_init(struct capture *c)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->rcv, &ca);
	pthread_condattr_destroy(&ca);
	TAILQ_INIT(&c->results);
}

/* Worker: hand a result to the loop. */
void
result_post(struct capture *c, struct creq *req, json_t *msg, int final, int error)
{
	struct result *r;
	uint64_t one = 1;

	if (req == NULL && !final) {
		json_decref(msg);
		return;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		json_decref(msg);
		return;		/* the client waits; cannot happen in practice */
	}
	r->req = req;
	r->msg = msg;
	r->final = final;
	r->error = error;
	pthread_mutex_lock(&c->mu);
	/*
	 * A stream waits for its client (capture_int.h), CAPTURE_STREAM_WAIT_MS
	 * in all; a cancelled one ends soon.
	 */
	while (req != NULL && !final && req->queued >= CAPTURE_RESULTS_MAX && !c->stop &&
	    !atomic_load(&req->cancelled)) {
		struct timespec ts;
		uint64_t before = mono_ns();

		if (req->waited_ns >= c->stream_wait_ms * 1000000ULL) {
			req->stalled = 1;
			atomic_store(&req->cancelled, 1);
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&c->rcv, &c->mu, &ts);
		req->waited_ns += mono_ns() - before;
	}
	/* the last reply of a request stopped so: an error, not its summary */
	if (req != NULL && final && req->stalled && !error) {
		json_decref(r->msg);
		r->msg = proto_errorf(PROTO_ERR_FAILED, "stopped: the client read none of its "
		    "replies for %u s in all (%u waiting)", c->stream_wait_ms / 1000, req->queued);
		r->error = 1;
	}
	if (req != NULL)
		req->queued++;
	TAILQ_INSERT_TAIL(&c->results, r, entry);
	pthread_mutex_unlock(&c->mu);
	if (write(c->efd, &one, sizeof(one)) < 0) {
		/* the counter is full: the loop is reading already */
	}
}

static void
deliver(struct capture *c, struct result *r)
{
	struct creq *q = r->req;

	if (q != NULL) {
		pthread_mutex_lock(&c->mu);
		q->queued--;
		pthread_cond_broadcast(&c->rcv);
		pthread_mutex_unlock(&c->mu);
	}
	if (q == NULL || q->client == NULL) {
		json_decref(r->msg);
		goto done;
	}
	if (r->error)
		control_send(q->client, r->msg);
	else if (q->more)
		control_send(q->client, proto_reply(r->msg, !r->final));
	else if (!r->final)
		json_array_append_new(q->items, r->msg);
	else {
		json_object_set(r->msg, "results", q->items);
		control_send(q->client, proto_reply(r->msg, 0));
	}
done:
	if (r->final && q != NULL) {
		struct creq *o;

		TAILQ_REMOVE(&c->reqs, q, entry);
		if (q->client != NULL) {
			TAILQ_FOREACH(o, &c->reqs, entry)
				if (o->client == q->client)
					break;
			if (o == NULL)
				control_keep_alive(q->client, 0);
		}
		json_decref(q->items);
		free(q);
	}
	free(r);
}

void
capture_poll(struct capture *c)
{
	TAILQ_HEAD(, result) got = TAILQ_HEAD_INITIALIZER(got);
	struct result *r;
	uint64_t v;

	if (c == NULL)
		return;
	if (read(c->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing signalled; results may still be there */
	}
	pthread_mutex_lock(&c->mu);
	TAILQ_CONCAT(&c->held, &c->results, entry);
	pthread_mutex_unlock(&c->mu);
	/*
	 * In order, those held back before first; a client whose replies
	 * wait unread beyond CONTROL_HIGH_OUTPUT gets none of its results
	 * this pass (the rest of its stream after them), the others theirs.
	 */
	TAILQ_CONCAT(&got, &c->held, entry);
	c->pass++;
	while ((r = TAILQ_FIRST(&got)) != NULL) {
		struct creq *q = r->req;

		TAILQ_REMOVE(&got, r, entry);
		if (q != NULL && q->client != NULL && (q->held_pass == c->pass ||
		    control_output_pending(q->client) >= CONTROL_HIGH_OUTPUT)) {
			q->held_pass = c->pass;
			TAILQ_INSERT_TAIL(&c->held, r, entry);
			continue;
		}
		deliver(c, r);
	}
	if (!TAILQ_EMPTY(&c->held) && c->held_ev != NULL) {
		struct timeval tv = { 0, 10000 };

		evtimer_add(c->held_ev, &tv);
	}
}

static void
capture_ready_cb(evutil_socket_t fd, short what, void *arg)
{
	capture_poll(arg);
}

static void
capture_held_cb(evutil_socket_t fd, short what, void *arg)
{
	capture_poll(arg);
}

int
capture_attach(struct capture *c, struct event_base *base)
{
	if (c->ev != NULL)
		return 0;
	c->ev = event_new(base, c->efd, EV_READ | EV_PERSIST, capture_ready_cb, c);
	if (c->ev == NULL || event_add(c->ev, NULL) == -1)
		return -1;
	if ((c->held_ev = evtimer_new(base, capture_held_cb, c)) == NULL)
		return -1;
	return 0;
}

static void
client_closed_cb(struct control_client *cl, void *arg)
{
	struct capture *c = arg;
	struct creq *q;

	TAILQ_FOREACH(q, &c->reqs, entry)
		if (q->client == cl) {
			q->client = NULL;
			atomic_store(&q->cancelled, 1);
		}
}

static struct creq *
new_req(struct capture *c, struct control_client *cl, int more)
{
	struct creq *q;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	q->client = cl;
	q->more = more;
	q->items = json_array();
	TAILQ_INSERT_TAIL(&c->reqs, q, entry);
	control_on_close(cl, client_closed_cb, c);
	control_keep_alive(cl, 1);
	return q;
}

/* ---- the loop's side ------------------------------------------------- */

/*
 * Has this build-id been queued already?  From a trusted namespace (NS 0),
 * only a trusted queuing counts: its copy replaces one a user's namespace
 * made.  The sets forget everything past SEEN_MAX ids (the cache itself
 * knows what it holds): they stay bounded however many build-ids users
 * invent.
 */
/* KEY into S: 1 if it was there (or no memory: not queued), 0 if new; S forgets past SEEN_MAX. */
static int
seen_add(struct idset *s, const uint8_t *key, size_t len)
{
	if (s->n >= SEEN_MAX)
		idset_clear(s);
	return idset_add(s, key, len) != 1;
}

static int
seen_before(struct capture *c, const uint8_t *id, size_t len, uint64_t ns)
{
	struct idset *s = ns == 0 ? &c->seen : &c->seen_ns;

	if (ns != 0 && idset_has(&c->seen, id, len))
		return 1;
	return seen_add(s, id, len);
}

/*
 * A host's mapping whose file the loop did not look at (FD -1: the
 * kernel's build-id, a pin's proof, the start-up scan) may be the system
 * binary or a user's file claiming its build-id, and only the worker,
 * which looks, can tell.  So it is queued once per (build-id, name), not
 * per build-id: a user's file run first has a name of its own (the host's
 * system paths are root's), and does not keep the system binary from its
 * turn.  The key is a hash of the two under random keys, so that no
 * user can choose a name whose key is another's; the set is apart from
 * the others, whose keys are build-ids as they come.
 */
static int
seen_blind(struct capture *c, const uint8_t *id, size_t len, const char *name)
{
	uint8_t	 key[BUILD_ID_MAX];
	uint64_t h[2];
	int	 i;

	if (idset_has(&c->seen, id, len))
		return 1;
	for (i = 0; i < 2; i++)
		h[i] = hash_str(name, hash_bytes(id, len, c->blind_key[i]));
	memset(key, 0, sizeof(key));
	memcpy(key, h, sizeof(h));
	memcpy(key + sizeof(h), id, len < sizeof(key) - sizeof(h) ? len : sizeof(key) - sizeof(h));
	return seen_add(&c->seen_blind, key, sizeof(key));
}

/*
 * Is the file open at FD one bidcache_trusted_file trusts?  Asked on the
 * loop, of a user's file: statx with AT_STATX_DONT_SYNC, which answers
 * from what the kernel holds (an fstat on NFS may first write the file's
 * dirty pages back and ask the server; on FUSE, ask the user's server).
 */
static int
fd_trusted(int fd)
{
	struct statx stx;
	struct stat st;

	if (fd < 0)
		return 0;
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_UID | STATX_MODE, &stx) == 0 &&
	    (stx.stx_mask & (STATX_UID | STATX_MODE)) == (STATX_UID | STATX_MODE)) {
		memset(&st, 0, sizeof(st));
		st.st_uid = stx.stx_uid;
		st.st_mode = stx.stx_mode;
	} else if (fstat(fd, &st) == -1)	/* no statx (a filter that refuses it) */
		return 0;
	return bidcache_trusted_file(&st);
}

static void
capture_map(struct capture *c, const struct record_mmap *m, int fd, uint64_t ns)
{
	struct job *j;
	int	 missed, pinned;

	if (c == NULL || m->build_id_size == 0 || m->build_id_size > BUILD_ID_MAX ||
	    c->mode != CAPTURE_EAGER || m->filename[0] != '/')
		return;
	/*
	 * A host's file a user could have written (or none to look at: the
	 * worker decides) is copied untrusted (bidcache.h) and counted apart
	 * from the trusted ones: a user's file with a system binary's
	 * build-id must not keep the system binary from its turn.
	 */
	if (ns == 0 && fd < 0 ? seen_blind(c, m->build_id, m->build_id_size, m->filename) :
	    seen_before(c, m->build_id, m->build_id_size, ns != 0 ? ns :
	    fd_trusted(fd) ? 0 : BIDCACHE_NS_USER))
		return;
	atomic_fetch_add(&c->n_seen, 1);
	if ((j = job_new()) == NULL || (j->name = strdup(m->filename)) == NULL) {
		free(j);
		atomic_fetch_add(&c->n_missed, 1);
		return;
	}
	j->pid = m->pid;
	j->ns = ns;
	j->addr = m->addr;
	j->len = m->len;
	j->has_inode = m->has_inode;
	j->maj = m->maj;
	j->min = m->min;
	j->ino = m->ino;
	j->gen = m->ino_generation;
	memcpy(j->id, m->build_id, m->build_id_size);
	j->idlen = m->build_id_size;
	/* Never wait: a full queue degrades the job, then drops it. */
	pthread_mutex_lock(&c->mu);
	missed = c->nmap >= c->qmax;
	if (missed && c->nmissed >= c->qmax) {
		pthread_mutex_unlock(&c->mu);
		job_free(j);
		atomic_fetch_add(&c->n_missed, 1);
		return;
	}
	pinned = c->nmap < PIN_MAX;
	pthread_mutex_unlock(&c->mu);
	/*
	 * The file the recorder read the build-id from: the very mapped file,
	 * open while its process may be gone already; no other open needed.
	 * As many as the worker pins itself, at most.
	 */
	if (fd >= 0 && !missed && pinned)
		j->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	j->kind = missed ? JOB_MISSED : JOB_MAP;
	if (missed) {
		atomic_fetch_add(&c->n_missed, 1);
		if (!c->missed_logged++)
			log_warnx("capture: queue full (%zu jobs); binaries are noted as "
			    "missed for store to retry", c->qmax);
	}
	submit(c, j);
}

static void
submit_id(struct capture *c, enum job_kind kind, const uint8_t *id, size_t len,
    const char *name)
{
	struct job *j;

	if (len == 0 || len > BUILD_ID_MAX || seen_before(c, id, len, 0))
		return;
	if ((j = job_new()) == NULL)
		return;
	j->kind = kind;
	memcpy(j->id, id, len);
	j->idlen = (uint8_t)len;
	if (name != NULL && (j->name = strdup(name)) == NULL) {
		free(j);
		return;
	}
	atomic_fetch_add(&c->n_seen, 1);
	submit(c, j);
}

static void
capture_kernel(struct capture *c, const struct kinfo *k)
{
	size_t	 i;

	if (c == NULL)
		return;
	/* Read by the worker (store_kallsyms): written under the queue's mutex. */
	if (k->idsize > 0) {
		pthread_mutex_lock(&c->mu);
		memcpy(c->kernel_id, k->id, k->idsize);
		c->kernel_idlen = k->idsize;
		pthread_mutex_unlock(&c->mu);
	}
	/*
	 * The vDSO image, copied once for the worker: store needs it in
	 * every capture mode.  Jobs submitted after this see it (the queue's
	 * mutex orders them); the worker only reads it.
	 */
	if (c->vdso == NULL && k->vdso != NULL && k->vdso->image != NULL &&
	    k->vdso->idsize > 0 && (c->vdso = malloc(k->vdso->len)) != NULL) {
		memcpy(c->vdso, k->vdso->image, k->vdso->len);
		c->vdso_len = k->vdso->len;
		memcpy(c->vdso_id, k->vdso->id, k->vdso->idsize);
		c->vdso_idlen = k->vdso->idsize;
	}
	if (c->mode != CAPTURE_EAGER)
		return;
	submit_id(c, JOB_KERNEL, k->id, k->idsize, BIDCACHE_KERNEL);
	for (i = 0; i < k->nmods; i++)
		submit_id(c, JOB_MODULE, k->mods[i].id, k->mods[i].idsize, k->mods[i].path);
	submit_id(c, JOB_VDSO, c->vdso_id, (size_t)c->vdso_idlen, BIDCACHE_VDSO);
}



static void
capture_segment_closed(struct capture *c, const char *path)
{
	struct job *j;

	if (c == NULL || path[0] == '\0' || (j = job_new()) == NULL)
		return;
	j->kind = JOB_CLOSED;
	j->since_ns = -1;
	if ((j->name = strdup(path)) == NULL) {
		free(j);
		return;
	}
	submit(c, j);
}

static void
segment_opened_cb(void *arg, const struct segment *seg, const struct kinfo *k)
{
	capture_kernel(arg, k);
}

static void
segment_closed_cb(void *arg, const struct segment *seg, uint64_t size)
{
	capture_segment_closed(arg, seg->path);
}

static void
binary_new_cb(void *arg, const struct binary *b, const struct record_mmap *m, int fd)
{
	if (b->kind == BINARY_USER)
		capture_map(arg, m, fd, b->ns);
}

static int
jit_mapped_cb(void *arg, uint32_t pid, uint32_t *uid)
{
	return capture_jit_watch(arg, pid, uid);
}

static void
jit_keep_cb(void *arg, uint32_t pid, uint32_t uid, const struct segment *seg, uint64_t exited)
{
	capture_jit_keep(arg, pid, uid, seg->path, exited);
}

static void
jit_close_cb(void *arg, const struct segment *seg)
{
	capture_jit_close(arg, seg->path);
}

/*
 * After an eviction the sets forget what they hold, and the recorder
 * announces every binary again at its next mapping: one evicted and
 * mapped again is queued again (copied again; the others' entries are
 * found present and touched, so that the open segment's reference
 * protects them).  Before, one evicted was never copied again in this run.
 */
static int
reannounce_cb(void *arg)
{
	struct capture *c = arg;
	unsigned g = atomic_load(&c->evict_gen);

	if (g == c->seen_gen)
		return 0;
	c->seen_gen = g;
	idset_clear(&c->seen);
	idset_clear(&c->seen_ns);
	idset_clear(&c->seen_blind);
	return 1;
}

void
capture_listener(struct capture *c, struct recorder_listener *l)
{
	*l = (struct recorder_listener){
		.segment_opened = segment_opened_cb,
		.segment_closed = segment_closed_cb,
		.binary_new = binary_new_cb,
		.jit_mapped = jit_mapped_cb,
		.jit_keep = jit_keep_cb,
		.jit_close = jit_close_cb,
		.reannounce = reannounce_cb,
		.arg = c,
	};
}

static int
request(struct capture *c, enum job_kind kind, struct control_client *cl, int more,
    json_t *segments, int64_t since_ns, int all, int debuginfod, const char *name,
    json_t **err)
{
	struct job *j;

	/*
	 * The job's own copy of SEGMENTS: a value shared with the loop would
	 * be freed by whichever thread drops it last, and jansson's decref
	 * orders nothing (a release, no acquire): the worker's reads could
	 * race the free.
	 */
	if ((j = job_new()) == NULL ||
	    (name != NULL && (j->name = strdup(name)) == NULL) ||
	    (segments != NULL && (j->segments = json_deep_copy(segments)) == NULL) ||
	    (j->req = new_req(c, cl, more)) == NULL) {
		if (j != NULL)
			job_free(j);
		*err = proto_errorf(PROTO_ERR_FAILED, "out of memory");
		return -1;
	}
	j->kind = kind;
	j->uid = control_client_uid(cl);
	j->since_ns = since_ns;
	if (kind == JOB_EXPORT)
		j->all_binaries = all;
	else
		j->all = all;
	j->debuginfod = debuginfod || c->debuginfod_default;
	if (submit(c, j) < 0) {
		*err = proto_errorf(PROTO_ERR_FAILED, "perfmapd is stopping");
		return -1;	/* the creq stays until capture_stop frees it */
	}
	return 0;
}

int
capture_store(struct capture *c, struct control_client *cl, int more, json_t *segments,
    int64_t since_ns, int all, int debuginfod, json_t **err)
{
	return request(c, JOB_STORE, cl, more, segments, since_ns, all, debuginfod, NULL, err);
}

int
capture_export(struct capture *c, struct control_client *cl, int more, json_t *segments,
    int64_t since_ns, const char *name, int all_binaries, json_t **err)
{
	return request(c, JOB_EXPORT, cl, more, segments, since_ns, all_binaries, 0, name, err);
}

int
capture_profile(struct capture *c, struct control_client *cl, json_t *params, json_t **err)
{
	struct job *j;

	/*
	 * One reply, the final one: sent as it is (no "results" list).  The
	 * job's own copy of PARAMS, as request() takes.
	 */
	if ((j = job_new()) == NULL || (j->params = json_deep_copy(params)) == NULL ||
	    (j->req = new_req(c, cl, 1)) == NULL) {
		if (j != NULL)
			job_free(j);
		*err = proto_errorf(PROTO_ERR_FAILED, "out of memory");
		return -1;
	}
	j->kind = JOB_PROFILE;
	if (submit(c, j) < 0) {
		*err = proto_errorf(PROTO_ERR_FAILED, "perfmapd is stopping");
		return -1;
	}
	return 0;
}

void
capture_profile_period(struct capture *c, const char *segpath, uint64_t first,
    uint64_t last, int64_t since_ns, int64_t until_ns)
{
	struct job *j;

	/*
	 * Queued behind the captures on the worker, which hands it to the
	 * profile thread: the binaries mapped in the period are cached first.
	 */
	if (c == NULL || (j = job_new()) == NULL)
		return;
	j->kind = JOB_PROFILE;
	j->since_ns = since_ns;
	j->until_ns = until_ns;
	j->seq_first = first;
	j->seq_last = last;
	if ((j->name = strdup(segpath)) == NULL) {
		free(j);
		return;
	}
	submit(c, j);
}

/* Worker: a snapshot period's job, its captures done, to the profile thread. */
void
profile_handoff(struct capture *c, struct job *j)
{
	struct job *n;

	if ((n = job_new()) == NULL || (n->name = strdup(j->name)) == NULL) {
		free(n);
		return;
	}
	n->kind = JOB_PROFILE;
	n->since_ns = j->since_ns;
	n->until_ns = j->until_ns;
	n->seq_first = j->seq_first;
	n->seq_last = j->seq_last;
	pthread_mutex_lock(&c->mu);
	if (c->stop) {
		pthread_mutex_unlock(&c->mu);
		job_free(n);
		return;
	}
	TAILQ_INSERT_TAIL(&c->pjobs, n, entry);
	pthread_cond_signal(&c->pcv);
	pthread_mutex_unlock(&c->mu);
}

int
capture_jit_watch(struct capture *c, uint32_t pid, uint32_t *uid)
{
	struct job *j;
	struct stat st, nst;
	char	 path[32];
	int	 root, full, stopping;
	unsigned roots, users;

	/*
	 * A full queue first, before any system call: the recorder offers
	 * the process again at each of its JIT mappings until one is taken.
	 */
	if (c == NULL)
		return 0;
	pthread_mutex_lock(&c->mu);
	stopping = c->stop;
	full = c->njitq >= c->qmax;
	pthread_mutex_unlock(&c->mu);
	if (stopping)
		return 0;	/* not offered again */
	if (full) {
		atomic_fetch_add(&c->n_jit_unwatched, 1);
		return -1;
	}
	/*
	 * The owner is taken now, on the loop, while the process surely
	 * lives: the worker may come to it only after a short-lived JIT
	 * process is gone.  /proc/PID is procfs, not a user's path.
	 */
	snprintf(path, sizeof(path), "/proc/%u", pid);
	if (stat(path, &st) == -1)
		return 0;	/* gone: nothing to watch, nor to keep (*UID untold) */
	/* A user's share full: no more system calls for it either. */
	pthread_mutex_lock(&c->mu);
	full = jit_users_full(c, st.st_uid);
	pthread_mutex_unlock(&c->mu);
	if (full) {
		atomic_fetch_add(&c->n_jit_unwatched, 1);
		return -1;
	}
	if ((j = job_new()) == NULL)
		return -1;
	j->kind = JOB_JIT_WATCH;
	j->pid = pid;
	j->uid = st.st_uid;
	/*
	 * Its root too, where its /tmp is: procfs's magic link taken as
	 * O_PATH opens nothing of the user's; the worker walks to tmp.
	 * Bounded (fds, whatever the queue), users' to a share of it.
	 */
	snprintf(path, sizeof(path), "/proc/%u/root", pid);
	roots = atomic_load(&c->njitroots);
	users = atomic_load(&c->njitroots_users);
	if (roots < JIT_ROOTS_QUEUED_MAX && (j->uid == 0 || users < JIT_ROOTS_USERS_MAX) &&
	    (j->fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0)
		jit_roots_count(c, st.st_uid, 1);
	j->nspid = jit_ns_pid(pid);
	/* its mount namespace: without its root, its /tmp is the daemon's only if it is the same */
	snprintf(path, sizeof(path), "/proc/%u/ns/mnt", pid);
	if (stat(path, &nst) == 0)
		j->mnt_ns = (uint64_t)nst.st_ino;
	root = j->fd >= 0;
	if (submit(c, j) < 0) {		/* J is freed */
		atomic_fetch_add(&c->n_jit_unwatched, 1);	/* no room in the queue */
		if (root)
			jit_roots_count(c, st.st_uid, -1);	/* its fd closed */
		return -1;
	}
	*uid = st.st_uid;
	return 0;
}

/* PID 0: every map the worker watches (a close). */
static void
jit_keep(struct capture *c, uint32_t pid, uint32_t uid, const char *segpath, uint64_t exited)
{
	struct job *j;

	if (c == NULL || segpath[0] == '\0' || (j = job_new()) == NULL)
		return;
	j->kind = JOB_JIT_KEEP;
	j->pid = pid;
	j->uid = uid;
	j->exited = exited;
	if ((j->name = strdup(segpath)) == NULL) {
		free(j);
		return;
	}
	submit(c, j);
}

void
capture_jit_keep(struct capture *c, uint32_t pid, uint32_t uid, const char *segpath,
    uint64_t exited)
{
	jit_keep(c, pid, uid, segpath, exited != 0 ? exited : 1);
}

/*
 * One job keeps the map of every process the worker watches, however
 * many there are: one queue slot, not one each of a user's thousands,
 * and taken whatever the queue holds (one per close, a bound of its own).
 */
void
capture_jit_close(struct capture *c, const char *segpath)
{
	jit_keep(c, 0, 0, segpath, 0);
}

void
capture_stats(struct capture *c, struct capture_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (c == NULL)
		return;
	s->seen = atomic_load(&c->n_seen);
	s->captured = atomic_load(&c->n_captured);
	s->present = atomic_load(&c->n_present);
	s->failed = atomic_load(&c->n_failed);
	s->missed = atomic_load(&c->n_missed);
	s->cache_bytes = atomic_load(&c->cache_bytes);
	s->cache_entries = atomic_load(&c->cache_entries);
	s->refused_full = atomic_load(&c->n_refused_full);
	s->refused_quota = atomic_load(&c->n_refused_quota);
	s->jit_unwatched = atomic_load(&c->n_jit_unwatched);
	s->jit_unkept = atomic_load(&c->n_jit_unkept);
}

int
capture_start(struct capture **out, const struct config *conf, const char *state_dir,
    char *err, size_t errlen)
{
	struct capture *c;
	char	 dir[PATH_MAX];
	uint64_t user_ns;
	int	 rc;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->efd = -1;
	c->stream_wait_ms = CAPTURE_STREAM_WAIT_MS;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	pthread_cond_init(&c->pcv, NULL);
	results_init(c);
	TAILQ_INIT(&c->held);
	TAILQ_INIT(&c->jobs);
	TAILQ_INIT(&c->pjobs);
	TAILQ_INIT(&c->reqs);
	c->mode = conf->capture;
	c->max_size = conf->cache_max_size;
	c->qmax = conf->capture_queue;
	c->debuginfod_default = conf->debuginfod;
	c->user_bytes = conf->cache_user_bytes;
	c->user_files = conf->cache_user_files;
	c->user_interval_ns = conf->cache_user_interval_ms * 1000000ULL;
	c->start_wall_ns = (uint64_t)walltime_now();
	procfs_host_ns(&c->host_mnt_ns, &user_ns);	/* as the recorder tells the host's */
	if (getrandom(c->blind_key, sizeof(c->blind_key), 0) != sizeof(c->blind_key)) {
		snprintf(err, errlen, "getrandom: %s", strerror(errno));
		goto fail;
	}
	snprintf(c->statedir, sizeof(c->statedir), "%s", state_dir);
	snprintf(c->segdir, sizeof(c->segdir), "%s/segments", state_dir);
	snprintf(c->exportdir, sizeof(c->exportdir), "%s/exports", state_dir);
	snprintf(c->profiledir, sizeof(c->profiledir), "%s/profiles", state_dir);
	if (conf->cache_dir[0] != '\0')
		snprintf(dir, sizeof(dir), "%s", conf->cache_dir);
	else if ((size_t)snprintf(dir, sizeof(dir), "%s/debug", state_dir) >= sizeof(dir)) {
		snprintf(err, errlen, "%s: path too long", state_dir);
		goto fail;
	}
	if (bidcache_open(&c->cache, dir, err, errlen) < 0)
		goto fail;
	if (c->cache.tmp_removed > 0)
		log_info("cache %s: %llu temporary files left by a crash removed", dir,
		    (unsigned long long)c->cache.tmp_removed);
	c->cache.admit = cache_admit;
	c->cache.admit_arg = c;
	c->cache_bytes = c->cache.size;
	c->cache_entries = c->cache.entries;
	if ((c->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	if ((rc = pthread_create(&c->th, NULL, worker_main, c)) != 0) {
		snprintf(err, errlen, "cannot start the capture thread: %s", strerror(rc));
		goto fail;
	}
	c->started = 1;
	pthread_setname_np(c->th, "perfmapd-cap");
	if ((rc = pthread_create(&c->pth, NULL, profile_main, c)) != 0) {
		snprintf(err, errlen, "cannot start the profile thread: %s", strerror(rc));
		capture_stop(c);
		return -1;
	}
	c->pstarted = 1;
	pthread_setname_np(c->pth, "perfmapd-prof");
	log_info("build-id cache %s: %llu binaries, %llu bytes; capture %s",
	    c->cache.dir, (unsigned long long)c->cache.entries,
	    (unsigned long long)c->cache.size,
	    c->mode == CAPTURE_EAGER ? "eager" : c->mode == CAPTURE_LAZY ? "lazy" : "off");
	*out = c;
	return 0;
fail:
	bidcache_close(&c->cache);
	if (c->efd >= 0)
		close(c->efd);
	free(c);
	return -1;
}

void
capture_stop_begin(struct capture *c)
{
	struct creq *q;

	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	if (!c->stop)		/* capture_stop asks again: the first ask's time */
		atomic_store(&c->stop_asked, mono_ns());
	c->stop = 1;
	TAILQ_FOREACH(q, &c->reqs, entry)
		atomic_store(&q->cancelled, 1);
	pthread_cond_signal(&c->cv);
	pthread_cond_signal(&c->pcv);
	pthread_cond_broadcast(&c->rcv);
	pthread_mutex_unlock(&c->mu);
}

int
capture_stop(struct capture *c)
{
	struct creq *q;
	struct result *r;
	struct job *j;
	struct capture_stats s;
	struct timespec until;
	size_t	 i;
	int	 left = 0;

	if (c == NULL)
		return 0;
	capture_stop_begin(c);
	/*
	 * CLOCK_REALTIME: pthread_clockjoin_np would take the monotonic clock,
	 * but ThreadSanitizer (GCC 12) does not know it, and sees no join.
	 */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CAPTURE_STOP_JOIN_MS / 1000;
	if (c->started && pthread_timedjoin_np(c->th, NULL, &until) != 0) {
		pthread_detach(c->th);
		left = 1;
	}
	if (c->pstarted && pthread_timedjoin_np(c->pth, NULL, &until) != 0) {
		pthread_detach(c->pth);
		left = 1;
	}
	if (left) {
		log_warnx("capture: a worker did not stop within %d s (a file system that does "
		    "not answer, or a long profile): left to the exit", CAPTURE_STOP_JOIN_MS / 1000);
		if (c->ev != NULL)
			event_del(c->ev);
		return 1;	/* what it uses stays: the process ends */
	}
	capture_stats(c, &s);
	log_info("capture: %llu build-ids seen, %llu copied, %llu present, %llu failed, "
	    "%llu missed (queue full); cache %llu bytes", (unsigned long long)s.seen,
	    (unsigned long long)s.captured, (unsigned long long)s.present,
	    (unsigned long long)s.failed, (unsigned long long)s.missed,
	    (unsigned long long)s.cache_bytes);
	while ((j = TAILQ_FIRST(&c->jobs)) != NULL) {
		TAILQ_REMOVE(&c->jobs, j, entry);
		job_free(j);
	}
	while ((j = TAILQ_FIRST(&c->pjobs)) != NULL) {
		TAILQ_REMOVE(&c->pjobs, j, entry);
		job_free(j);
	}
	TAILQ_CONCAT(&c->results, &c->held, entry);
	while ((r = TAILQ_FIRST(&c->results)) != NULL) {
		TAILQ_REMOVE(&c->results, r, entry);
		json_decref(r->msg);
		free(r);
	}
	while ((q = TAILQ_FIRST(&c->reqs)) != NULL) {
		TAILQ_REMOVE(&c->reqs, q, entry);
		json_decref(q->items);
		free(q);
	}
	if (c->ev != NULL)
		event_free(c->ev);
	if (c->held_ev != NULL)
		event_free(c->held_ev);
	for (i = 0; i < c->nfails; i++)
		free(c->fails[i].reason);
	free(c->fails);
	free(c->seen.v);
	free(c->seen_ns.v);
	free(c->seen_blind.v);
	free(c->vdso);
	jit_free(c);
	bidcache_close(&c->cache);
	close(c->efd);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	pthread_cond_destroy(&c->pcv);
	pthread_cond_destroy(&c->rcv);
	free(c);
	return 0;
}
