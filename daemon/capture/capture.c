/*
 * capture.c - the capture worker; see capture.h for the picture.
 *
 * A job's life:
 *
 *	loop: capture_*() ─► queue (mutex, cond) ─► worker: run_job()
 *	  ─► post(): results (mutex) + eventfd ─► loop: capture_poll()
 *	  ─► control_send() to the client, unless it left (on-close hook)
 *
 * Eager capture of a mapping tries, in order, the mapped inode itself
 * (/proc/PID/map_files/START-END: right even after the path was replaced
 * or unlinked), the file in the process's root, and the path; the first
 * whose build-id matches is copied.  What fails is remembered with its
 * reasons (worker-owned table) so that store can say why, and retries.
 *
 * Store and export read the segments' HEADER_BUILD_ID tables: that is the
 * list of build-ids a segment references.  Segment arguments are names or
 * paths inside STATE/segments only (realpath and prefix check).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/queue.h>
#include <sys/stat.h>

#include <archive.h>
#include <archive_entry.h>
#include <elfutils/debuginfod.h>
#include <event2/event.h>

#include "bidcache.h"
#include "buildid.h"
#include "capture.h"
#include "control/control.h"
#include "hash.h"
#include "log.h"
#include "perfdata.h"
#include "proto.h"
#include "record/synth.h"

#define EXPORTS_KEPT		4		/* newest export files kept */
#define EVICT_RETRY_NS		(60ULL * 1000000000ULL)
#define KALLSYMS_MAX		(256U << 20)
#define FAIL_MAX		65536		/* remembered failures */
#define PIN_MAX			256		/* map_files fds held open at once */

enum job_kind {
	JOB_MAP,	/* a mapping seen for the first time */
	JOB_MISSED,	/* the same, when the queue was full: path only */
	JOB_KERNEL,	/* /proc/kallsyms */
	JOB_MODULE,	/* a module file */
	JOB_VDSO,	/* our own vDSO image */
	JOB_CLOSED,	/* a segment closed: lazy store, eviction */
	JOB_STORE,
	JOB_EXPORT,
};

/* A control request in flight; freed by the loop after its final result. */
struct creq {
	TAILQ_ENTRY(creq) entry;
	struct control_client *client;	/* NULL once the client left */
	int		 more;
	atomic_int	 cancelled;
	json_t		*items;		/* !more: the per-build-id replies */
};

struct job {
	TAILQ_ENTRY(job) entry;
	enum job_kind	 kind;
	uint32_t	 pid;
	uint64_t	 addr, len;
	int		 fd;		/* JOB_MAP: map_files opened early, or -1 */
	int		 pin_errno;	/* why it could not be opened */
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 idlen;
	char		*name;		/* file name, module path, export name */
	struct creq	*req;
	json_t		*segments;
	int64_t		 since_ns;
	int		 all, debuginfod;
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
struct segbid {
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 len;
	int		 kernel;
	char		*name;
};

struct liveproc_map {
	char		*path;
	uint32_t	 pid;
	uint64_t	 start, end;
};

/* Per store/export job: what it found, for the summary. */
struct storectx {
	struct job	*job;
	int		 debuginfod;
	debuginfod_client *dc;
	struct liveproc_map *live;
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
	size_t		 nmap, nmissed;		/* queued JOB_MAP, JOB_MISSED */
	TAILQ_HEAD(, result) results;
	int		 stop;
	int		 efd;
	struct event	*ev;

	/* loop only */
	struct idset	 seen;
	TAILQ_HEAD(, creq) reqs;
	uint8_t		 kernel_id[BUILD_ID_MAX];
	uint8_t		 kernel_idlen;
	int		 missed_logged;

	/* set before the worker starts, read-only after */
	uint8_t		 vdso_id[BUILD_ID_MAX];
	int		 vdso_idlen;
	void		*vdso;
	size_t		 vdso_len;

	/* worker only */
	struct bidcache	 cache;
	struct failrec	*fails;
	size_t		 nfails, failcap;
	uint64_t	 last_evict_ns;
	int		 evict_stuck;
	uint64_t	 start_wall_ns;

	atomic_uint_least64_t n_seen, n_captured, n_present, n_failed, n_missed;
	atomic_uint_least64_t cache_bytes, cache_entries;
};

static uint64_t
wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- id sets and the failure table ---------------------------------- */

static size_t
id_hash(const uint8_t *id, size_t len)
{
	return (size_t)hash_bytes(id, len, HASH_INIT);
}

/* Insert; 1 if new, 0 if present, -1 out of memory. */
static int
idset_add(struct idset *s, const uint8_t *id, size_t len)
{
	size_t	 i, j;

	if ((s->n + 1) * 2 > s->cap) {
		struct idset ns = { NULL, 0, s->cap ? s->cap * 2 : 1024 };

		if ((ns.v = calloc(ns.cap, sizeof(*ns.v))) == NULL)
			return -1;
		for (i = 0; i < s->cap; i++)
			if (s->v[i].used) {
				for (j = id_hash(s->v[i].id, s->v[i].len) & (ns.cap - 1);
				    ns.v[j].used; j = (j + 1) & (ns.cap - 1))
					;
				ns.v[j] = s->v[i];
				ns.n++;
			}
		free(s->v);
		*s = ns;
	}
	for (j = id_hash(id, len) & (s->cap - 1); s->v[j].used; j = (j + 1) & (s->cap - 1))
		if (s->v[j].len == len && memcmp(s->v[j].id, id, len) == 0)
			return 0;
	memcpy(s->v[j].id, id, len);
	s->v[j].len = (uint8_t)len;
	s->v[j].used = 1;
	s->n++;
	return 1;
}

static int
idset_has(const struct idset *s, const uint8_t *id, size_t len)
{
	size_t	 j;

	if (s->cap == 0)
		return 0;
	for (j = id_hash(id, len) & (s->cap - 1); s->v[j].used; j = (j + 1) & (s->cap - 1))
		if (s->v[j].len == len && memcmp(s->v[j].id, id, len) == 0)
			return 1;
	return 0;
}

static struct failrec *
fail_find(struct capture *c, const uint8_t *id, size_t len)
{
	size_t	 i;

	for (i = 0; i < c->nfails; i++)
		if (c->fails[i].key.len == len && memcmp(c->fails[i].key.id, id, len) == 0)
			return &c->fails[i];
	return NULL;
}

static void
fail_forget(struct capture *c, const uint8_t *id, size_t len)
{
	struct failrec *f = fail_find(c, id, len);

	if (f == NULL)
		return;
	free(f->reason);
	*f = c->fails[--c->nfails];
}

static void
fail_note(struct capture *c, const uint8_t *id, size_t len, const char *reason)
{
	struct failrec *f = fail_find(c, id, len), *nf;

	if (f == NULL) {
		if (c->nfails >= FAIL_MAX)
			return;
		if (c->nfails == c->failcap) {
			c->failcap = c->failcap ? c->failcap * 2 : 64;
			if ((nf = reallocarray(c->fails, c->failcap, sizeof(*nf))) == NULL)
				return;
			c->fails = nf;
		}
		f = &c->fails[c->nfails++];
		memset(f, 0, sizeof(*f));
		memcpy(f->key.id, id, len);
		f->key.len = (uint8_t)len;
	}
	free(f->reason);
	f->reason = strdup(reason);
}

/* ---- the queues ------------------------------------------------------ */

static struct job *
job_new(void)
{
	struct job *j = calloc(1, sizeof(*j));

	if (j != NULL)
		j->fd = -1;
	return j;
}

static void
job_free(struct job *j)
{
	if (j->fd >= 0)
		close(j->fd);
	free(j->name);
	json_decref(j->segments);
	free(j);
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
	TAILQ_INSERT_TAIL(&c->jobs, j, entry);
	if (j->kind == JOB_MAP)
		c->nmap++;
	else if (j->kind == JOB_MISSED)
		c->nmissed++;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* Worker: hand a result to the loop. */
static void
post(struct capture *c, struct creq *req, json_t *msg, int final, int error)
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
	TAILQ_CONCAT(&got, &c->results, entry);
	pthread_mutex_unlock(&c->mu);
	while ((r = TAILQ_FIRST(&got)) != NULL) {
		TAILQ_REMOVE(&got, r, entry);
		deliver(c, r);
	}
}

static void
capture_ready_cb(evutil_socket_t fd, short what, void *arg)
{
	capture_poll(arg);
}

void
capture_attach(struct capture *c, struct event_base *base)
{
	if (c == NULL || c->ev != NULL)
		return;
	c->ev = event_new(base, c->efd, EV_READ | EV_PERSIST, capture_ready_cb, c);
	if (c->ev == NULL || event_add(c->ev, NULL) == -1)
		log_warnx("capture: cannot watch the worker's eventfd; replies come with "
		    "the drain timer");
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

/* ---- sources --------------------------------------------------------- */

static void
strip_deleted(const char *name, char *out, size_t len)
{
	snprintf(out, len, "%.*s", (int)record_name_len(name), name);
}

static int
cache_side(int rc)
{
	return rc == -ENOSPC || rc == -EDQUOT || rc == -EROFS || rc == -EIO ||
	    rc == -ENAMETOOLONG || rc == -ENOTDIR;
}

static void
reason_add(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
reason_add(char *buf, size_t len, const char *fmt, ...)
{
	size_t	 n = strlen(buf);
	va_list	 ap;

	if (n > 0 && n + 2 < len) {
		memcpy(buf + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/*
 * Copy PATH (opened here) into the cache under NAME.  1 or 0 (present) on
 * success; else -errno with the reason appended to WHY.
 */
static int
try_path(struct capture *c, const char *path, const char *name, const uint8_t *id,
    size_t idlen, char *file, size_t filelen, char *why, size_t whylen)
{
	char	 err[512];
	int	 fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) == -1) {
		rc = -errno;
		reason_add(why, whylen, "%s: %s", path, strerror(errno));
		return rc;
	}
	rc = bidcache_add_fd(&c->cache, name, id, idlen, fd, file, filelen, err, sizeof(err));
	close(fd);
	if (rc < 0)
		reason_add(why, whylen, "%s: %s", path, err);
	return rc;
}

static void
count_result(struct capture *c, int rc)
{
	if (rc > 0)
		atomic_fetch_add(&c->n_captured, 1);
	else if (rc == 0)
		atomic_fetch_add(&c->n_present, 1);
	atomic_store(&c->cache_bytes, c->cache.size);
	atomic_store(&c->cache_entries, c->cache.entries);
}

static void
run_map(struct capture *c, struct job *j)
{
	char	 why[1024] = "", path[PATH_MAX + 64], plain[PATH_MAX], hex[BUILD_ID_HEX_MAX];
	int	 rc = -ENOENT;

	if (bidcache_find(&c->cache, j->id, j->idlen, NULL, 0) > 0) {
		bidcache_touch(&c->cache, j->id, j->idlen);
		count_result(c, 0);
		return;
	}
	strip_deleted(j->name, plain, sizeof(plain));
	if (j->kind == JOB_MISSED)
		reason_add(why, sizeof(why), "capture queue was full");
	else {
		snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", j->pid,
		    (unsigned long long)j->addr, (unsigned long long)(j->addr + j->len));
		if (j->fd >= 0) {
			char	 err[512];

			rc = bidcache_add_fd(&c->cache, j->name, j->id, j->idlen, j->fd, NULL, 0,
			    err, sizeof(err));
			if (rc < 0)
				reason_add(why, sizeof(why), "%s: %s", path, err);
		} else if (j->pin_errno != 0) {
			rc = -j->pin_errno;
			reason_add(why, sizeof(why), "%s: %s", path, strerror(j->pin_errno));
		} else
			rc = try_path(c, path, j->name, j->id, j->idlen, NULL, 0, why,
			    sizeof(why));
		if (rc < 0 && !cache_side(rc)) {
			snprintf(path, sizeof(path), "/proc/%u/root%s", j->pid, plain);
			rc = try_path(c, path, j->name, j->id, j->idlen, NULL, 0, why,
			    sizeof(why));
		}
	}
	if (rc < 0 && !cache_side(rc))
		rc = try_path(c, plain, j->name, j->id, j->idlen, NULL, 0, why, sizeof(why));
	if (rc >= 0) {
		fail_forget(c, j->id, j->idlen);
		count_result(c, rc);
		return;
	}
	atomic_fetch_add(&c->n_failed, 1);
	fail_note(c, j->id, j->idlen, why);
	buildid_to_hex(j->id, j->idlen, hex);
	log_debug("capture %s %s failed: %s", hex, j->name, why);
}

/* Read a whole (small, virtual) file such as /proc/kallsyms. */
static int
slurp(const char *path, size_t max, char **out, size_t *outlen)
{
	char	*buf = NULL, *nb;
	size_t	 len = 0, cap = 0;
	ssize_t	 n;
	int	 fd, rc = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -errno;
	for (;;) {
		if (len + 1 >= cap) {
			if (cap >= max) {
				rc = -EFBIG;
				break;
			}
			cap = cap ? cap * 2 : 1 << 20;
			if ((nb = realloc(buf, cap)) == NULL) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
		}
		if ((n = read(fd, buf + len, cap - len - 1)) < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
}

/* The kernel's symbols under its build-id; refused when the addresses are hidden. */
static int
store_kallsyms(struct capture *c, const uint8_t *id, size_t idlen, char *file,
    size_t filelen, char *why, size_t whylen)
{
	char	 err[512], *buf = NULL, *p;
	size_t	 len = 0, i;
	int	 rc, nonzero = 0;

	if (c->kernel_idlen == 0 || idlen != c->kernel_idlen ||
	    memcmp(id, c->kernel_id, idlen) != 0) {
		reason_add(why, whylen, "not the running kernel's build-id");
		return -ESRCH;
	}
	if ((rc = slurp("/proc/kallsyms", KALLSYMS_MAX, &buf, &len)) < 0) {
		reason_add(why, whylen, "/proc/kallsyms: %s", strerror(-rc));
		return rc;
	}
	/* kptr_restrict shows every address as zeros. */
	for (p = buf, i = 0; p < buf + len && i < 100; i++) {
		char	*nl = memchr(p, '\n', (size_t)(buf + len - p));

		if (strspn(p, "0") < strcspn(p, " \n")) {
			nonzero = 1;
			break;
		}
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	if (!nonzero) {
		free(buf);
		reason_add(why, whylen, "/proc/kallsyms shows no addresses "
		    "(kernel.kptr_restrict; perfmapd needs CAP_SYSLOG and kptr_restrict < 2)");
		return -EPERM;
	}
	rc = bidcache_add_buf(&c->cache, BIDCACHE_KERNEL, id, idlen, buf, len, file, filelen,
	    err, sizeof(err));
	free(buf);
	if (rc < 0)
		reason_add(why, whylen, "%s", err);
	return rc;
}

static int
store_module(struct capture *c, const char *path, const uint8_t *id, size_t idlen,
    char *file, size_t filelen, char *why, size_t whylen)
{
	char	 err[512];
	size_t	 n = strlen(path);
	int	 fd, dfd, rc;

	if (path[0] != '/') {
		reason_add(why, whylen, "module file unknown (not in modules.dep)");
		return -ENOENT;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		rc = -errno;
		reason_add(why, whylen, "%s: %s", path, strerror(errno));
		return rc;
	}
	if ((n > 3 && strcmp(path + n - 3, ".xz") == 0) ||
	    (n > 4 && strcmp(path + n - 4, ".zst") == 0)) {
		dfd = bidcache_decompress(fd, path);
		close(fd);
		if (dfd < 0) {
			reason_add(why, whylen, "%s: cannot decompress: %s", path,
			    strerror(-dfd));
			return dfd;
		}
		fd = dfd;
	}
	rc = bidcache_add_fd(&c->cache, path, id, idlen, fd, file, filelen, err, sizeof(err));
	close(fd);
	if (rc < 0)
		reason_add(why, whylen, "%s: %s", path, err);
	return rc;
}

static int
store_vdso(struct capture *c, const uint8_t *id, size_t idlen, char *file, size_t filelen,
    char *why, size_t whylen)
{
	char	 err[512];
	int	 rc;

	if (c->vdso_idlen <= 0 || (size_t)c->vdso_idlen != idlen ||
	    memcmp(c->vdso_id, id, idlen) != 0) {
		reason_add(why, whylen, "not this host's vDSO");
		return -ESRCH;
	}
	rc = bidcache_add_buf(&c->cache, BIDCACHE_VDSO, id, idlen, c->vdso, c->vdso_len,
	    file, filelen, err, sizeof(err));
	if (rc < 0)
		reason_add(why, whylen, "%s", err);
	return rc;
}

/* Our own vDSO: its image from memory and its build-id from its notes. */
static void
load_vdso(struct capture *c)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char	 line[512];
	FILE	*f;
	int	 fd, rc;

	if (base == 0 || (f = fopen("/proc/self/maps", "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long long s, e;

		if (strstr(line, "[vdso]") == NULL ||
		    sscanf(line, "%llx-%llx", &s, &e) != 2 || s != base)
			continue;
		if ((c->vdso = malloc(e - s)) != NULL) {
			memcpy(c->vdso, (const void *)base, e - s);
			c->vdso_len = e - s;
		}
		break;
	}
	fclose(f);
	if (c->vdso == NULL)
		return;
	if ((fd = memfd_create("perfmapd-vdso", MFD_CLOEXEC)) == -1)
		return;
	if (write(fd, c->vdso, c->vdso_len) == (ssize_t)c->vdso_len &&
	    (rc = buildid_read_fd(fd, c->vdso_id)) > 0)
		c->vdso_idlen = rc;
	close(fd);
}

/* ---- segments -------------------------------------------------------- */

static void
segbids_free(struct segbid *v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/*
 * A segment's build-id table, appended to *V (duplicates skipped through
 * SEEN), and its wall-clock end (0 if unknown).  Returns 1 without reading
 * the table if the segment ended before SINCE_NS (>= 0).
 */
static int
read_segment(const char *path, int64_t since_ns, struct segbid **v, size_t *n,
    struct idset *seen, uint64_t *wall_end, char *err, size_t errlen)
{
	struct perfdata_file pf;
	struct perf_file_section sec, st, cd;
	uint8_t	*buf = NULL;
	uint64_t off;
	int	 rc = 0;

	*wall_end = 0;
	if (perfdata_open(&pf, path, err, errlen) < 0)
		return -1;
	if (perfdata_feature(&pf, HEADER_SAMPLE_TIME, &st) == 0 && st.size >= 16 &&
	    perfdata_feature(&pf, HEADER_CLOCK_DATA, &cd) == 0 && cd.size >= 24) {
		uint64_t t[2], clk[3];

		if (pread(pf.fd, t, sizeof(t), (off_t)st.offset) == sizeof(t) &&
		    pread(pf.fd, clk, sizeof(clk), (off_t)cd.offset) == sizeof(clk))
			*wall_end = clk[1] + (t[1] - clk[2]);
	}
	if (since_ns >= 0 && *wall_end != 0 && (int64_t)*wall_end < since_ns) {
		rc = 1;		/* ended before SINCE: not wanted */
		goto out;
	}
	if (perfdata_feature(&pf, HEADER_BUILD_ID, &sec) < 0 || sec.size == 0)
		goto out;
	if (sec.size > 64U << 20 || (buf = malloc(sec.size)) == NULL ||
	    pread(pf.fd, buf, sec.size, (off_t)sec.offset) != (ssize_t)sec.size) {
		snprintf(err, errlen, "%s: cannot read its build-id table", path);
		rc = -1;
		goto out;
	}
	for (off = 0; off + sizeof(struct build_id_entry) <= sec.size;) {
		struct build_id_entry *e = (struct build_id_entry *)(buf + off);
		size_t	 fnmax, idlen;
		struct segbid *nv;
		int	 mode;

		if (e->header.size < sizeof(*e) || off + e->header.size > sec.size)
			break;
		fnmax = e->header.size - sizeof(*e);
		idlen = (e->header.misc & PERF_RECORD_MISC_BUILD_ID_SIZE) ? e->build_id[20] :
		    BUILD_ID_MAX;
		off += e->header.size;
		if (idlen == 0 || idlen > BUILD_ID_MAX || fnmax == 0 ||
		    memchr(e->filename, '\0', fnmax) == NULL)
			continue;
		if (idset_add(seen, e->build_id, idlen) != 1)
			continue;
		if ((nv = reallocarray(*v, *n + 1, sizeof(**v))) == NULL)
			break;
		*v = nv;
		memset(&nv[*n], 0, sizeof(nv[*n]));
		memcpy(nv[*n].id, e->build_id, idlen);
		nv[*n].len = (uint8_t)idlen;
		mode = e->header.misc & PERF_RECORD_MISC_CPUMODE_MASK;
		nv[*n].kernel = mode == PERF_RECORD_MISC_KERNEL ||
		    mode == PERF_RECORD_MISC_GUEST_KERNEL;
		if ((nv[*n].name = strdup(e->filename)) == NULL)
			break;
		(*n)++;
	}
out:
	free(buf);
	perfdata_file_close(&pf);
	return rc;
}

static int
strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
has_dotdot(const char *s)
{
	const char *p;

	for (p = s; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == s || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return 1;
	return 0;
}

static int
is_segment_name(const char *s)
{
	size_t	 n = strlen(s);

	return strncmp(s, "perf-", 5) == 0 && n > 10 && strcmp(s + n - 5, ".data") == 0;
}

/*
 * The segment files a request names: its arguments (names or paths inside
 * STATE/segments, checked after realpath), else every closed segment,
 * those ending at or after SINCE_NS if it is set.  Sorted by name.
 */
static int
resolve_segments(struct capture *c, struct job *j, char ***out, size_t *nout, char *err,
    size_t errlen)
{
	char	 segreal[PATH_MAX], **v = NULL, **nv;
	size_t	 n = 0, i;
	int	 rc = -1;

	*out = NULL;
	*nout = 0;
	if (realpath(c->segdir, segreal) == NULL) {
		snprintf(err, errlen, "%s: %s", c->segdir, strerror(errno));
		return -1;
	}
	if (j->segments != NULL && json_array_size(j->segments) > 0) {
		for (i = 0; i < json_array_size(j->segments); i++) {
			const char *s = json_string_value(json_array_get(j->segments, i));
			char	 path[PATH_MAX], real[PATH_MAX];
			struct stat st;
			const char *base;

			if (s == NULL || *s == '\0' || has_dotdot(s)) {
				snprintf(err, errlen, "%s: not a segment name", s ? s : "?");
				goto out;
			}
			if (strchr(s, '/') == NULL)
				snprintf(path, sizeof(path), "%s/%s", c->segdir, s);
			else
				snprintf(path, sizeof(path), "%s", s);
			if (realpath(path, real) == NULL) {
				snprintf(err, errlen, "%s: %s", s, strerror(errno));
				goto out;
			}
			base = strrchr(real, '/') + 1;
			if (strncmp(real, segreal, strlen(segreal)) != 0 ||
			    real[strlen(segreal)] != '/' ||
			    strchr(real + strlen(segreal) + 1, '/') != NULL ||
			    !is_segment_name(base) || stat(real, &st) == -1 ||
			    !S_ISREG(st.st_mode)) {
				snprintf(err, errlen, "%s: not a segment in %s", s, c->segdir);
				goto out;
			}
			if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL)
				goto out;
			v = nv;
			if ((v[n] = strdup(real)) == NULL)
				goto out;
			n++;
		}
	} else {
		DIR	*d;
		struct dirent *de;

		if ((d = opendir(c->segdir)) == NULL) {
			snprintf(err, errlen, "%s: %s", c->segdir, strerror(errno));
			goto out;
		}
		while ((de = readdir(d)) != NULL) {
			if (!is_segment_name(de->d_name))
				continue;
			if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL)
				break;
			v = nv;
			if (asprintf(&v[n], "%s/%s", segreal, de->d_name) < 0)
				break;
			n++;
		}
		closedir(d);
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), strp_cmp);
	rc = 0;
out:
	if (rc < 0) {
		for (i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return rc;
	}
	*out = v;
	*nout = n;
	return 0;
}

/* ---- store ----------------------------------------------------------- */

static int
debuginfod_progress_cb(debuginfod_client *dc, long a, long b)
{
	struct storectx *x = debuginfod_get_user_data(dc);

	return x->job->req != NULL && atomic_load(&x->job->req->cancelled);
}

static void
live_free(struct storectx *x)
{
	size_t	 i;

	for (i = 0; i < x->nlive; i++)
		free(x->live[i].path);
	free(x->live);
	x->live = NULL;
	x->nlive = 0;
}

/* Every file mapping of every live process, once per store job. */
static void
live_scan(struct storectx *x)
{
	DIR	*d;
	struct dirent *de;

	x->live_done = 1;
	if ((d = opendir("/proc")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char	 path[64], line[PATH_MAX + 256];
		FILE	*f;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/maps", de->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL) {
			unsigned long long s, e;
			struct liveproc_map *nv;
			char	*nl;
			int	 off = 0;

			if (sscanf(line, "%llx-%llx %*s %*x %*x:%*x %*u %n", &s, &e, &off) < 2 ||
			    off == 0 || line[off] != '/')
				continue;
			if ((nl = strchr(line + off, '\n')) != NULL)
				*nl = '\0';
			if ((nv = reallocarray(x->live, x->nlive + 1, sizeof(*nv))) == NULL)
				break;
			x->live = nv;
			nv[x->nlive].path = malloc(strlen(line + off) + 1);
			if (nv[x->nlive].path == NULL)
				break;
			strip_deleted(line + off, nv[x->nlive].path, strlen(line + off) + 1);
			nv[x->nlive].pid = (uint32_t)strtoul(de->d_name, NULL, 10);
			nv[x->nlive].start = s;
			nv[x->nlive].end = e;
			x->nlive++;
		}
		fclose(f);
	}
	closedir(d);
}

static int
store_user(struct capture *c, struct storectx *x, const struct segbid *b, char *file,
    size_t filelen, const char **source, char *why, size_t whylen)
{
	char	 plain[PATH_MAX], path[128], err[512];
	size_t	 i, tried = 0;
	int	 rc, fd;

	strip_deleted(b->name, plain, sizeof(plain));
	*source = "path";
	if (plain[0] == '/') {
		rc = try_path(c, plain, b->name, b->id, b->len, file, filelen, why, whylen);
		if (rc >= 0 || cache_side(rc))
			return rc;
	} else
		reason_add(why, whylen, "%s: not a file path", b->name);
	*source = "map_files";
	if (!x->live_done)
		live_scan(x);
	for (i = 0; i < x->nlive && tried < 16; i++) {
		if (strcmp(x->live[i].path, plain) != 0)
			continue;
		tried++;
		snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", x->live[i].pid,
		    (unsigned long long)x->live[i].start, (unsigned long long)x->live[i].end);
		rc = try_path(c, path, b->name, b->id, b->len, file, filelen, why, whylen);
		if (rc >= 0 || cache_side(rc))
			return rc;
	}
	if (tried == 0)
		reason_add(why, whylen, "no live process maps it");
	if (!x->debuginfod)
		return -ENOENT;
	*source = "debuginfod";
	if (x->dc == NULL && (x->dc = debuginfod_begin()) != NULL) {
		debuginfod_set_user_data(x->dc, x);
		debuginfod_set_progressfn(x->dc, debuginfod_progress_cb);
	}
	if (x->dc == NULL) {
		reason_add(why, whylen, "debuginfod: cannot start a client");
		return -ENOMEM;
	}
	if ((fd = debuginfod_find_executable(x->dc, b->id, (int)b->len, NULL)) < 0) {
		reason_add(why, whylen, "debuginfod: %s", fd == -ENOSYS ?
		    "DEBUGINFOD_URLS is not set in perfmapd's environment" : strerror(-fd));
		return fd;
	}
	rc = bidcache_add_fd(&c->cache, b->name, b->id, b->len, fd, file, filelen, err,
	    sizeof(err));
	close(fd);
	if (rc < 0)
		reason_add(why, whylen, "debuginfod: %s", err);
	return rc;
}

/* Make sure B is in the cache; the reply parameters for it. */
static json_t *
store_one(struct capture *c, struct storectx *x, const struct segbid *b)
{
	char	 hex[BUILD_ID_HEX_MAX], file[PATH_MAX], why[2048] = "";
	const char *source = "cache";
	struct failrec *f;
	int	 rc;

	buildid_to_hex(b->id, b->len, hex);
	file[0] = '\0';
	if ((rc = bidcache_find(&c->cache, b->id, b->len, file, sizeof(file))) > 0) {
		bidcache_touch(&c->cache, b->id, b->len);
		rc = 0;
	} else if (strcmp(b->name, BIDCACHE_KERNEL) == 0) {
		source = "kallsyms";
		rc = store_kallsyms(c, b->id, b->len, file, sizeof(file), why, sizeof(why));
	} else if (strcmp(b->name, BIDCACHE_VDSO) == 0) {
		source = "vdso";
		rc = store_vdso(c, b->id, b->len, file, sizeof(file), why, sizeof(why));
	} else if (b->kernel) {
		source = "module";
		rc = store_module(c, b->name, b->id, b->len, file, sizeof(file), why,
		    sizeof(why));
	} else
		rc = store_user(c, x, b, file, sizeof(file), &source, why, sizeof(why));
	count_result(c, rc >= 0 ? rc : -1);
	if (rc >= 0) {
		fail_forget(c, b->id, b->len);
		x->ok++;
		if (rc > 0)
			x->added++;
		return json_pack("{s:s, s:s, s:s, s:s, s:s}", "buildid", hex, "path", b->name,
		    "status", "OK", "file", file, "source", rc > 0 ? source : "cache");
	}
	if ((f = fail_find(c, b->id, b->len)) != NULL && f->reason != NULL)
		reason_add(why, sizeof(why), "at first sight: %s", f->reason);
	if (cache_side(rc) && strstr(why, strerror(-rc)) == NULL)
		reason_add(why, sizeof(why), "%s", strerror(-rc));
	x->failed++;
	return json_pack("{s:s, s:s, s:s, s:s}", "buildid", hex, "path", b->name,
	    "status", "FAIL", "reason", why[0] ? why : "not found");
}

static int
cancelled(const struct job *j)
{
	return j->req != NULL && atomic_load(&j->req->cancelled);
}

/* The build-ids of the job's segments; NULL + error result if bad input. */
static int
job_buildids(struct capture *c, struct job *j, char ***segs, size_t *nsegs,
    struct segbid **bids, size_t *nbids)
{
	struct idset seen = { 0 };
	char	 err[PATH_MAX + 128];
	size_t	 i, kept = 0;
	uint64_t end;

	*bids = NULL;
	*nbids = 0;
	if (resolve_segments(c, j, segs, nsegs, err, sizeof(err)) < 0) {
		post(c, j->req, proto_error(PROTO_ERR_NOSEGMENT,
		    json_pack("{s:s}", "message", err)), 1, 1);
		return -1;
	}
	for (i = 0; i < *nsegs; i++) {
		int64_t since = j->segments != NULL && json_array_size(j->segments) > 0 ?
		    -1 : j->since_ns;
		int	 rc = read_segment((*segs)[i], since, bids, nbids, &seen, &end, err,
		    sizeof(err));

		if (rc < 0)
			log_warnx("%s", err);
		if (rc != 0) {
			free((*segs)[i]);
			continue;
		}
		(*segs)[kept++] = (*segs)[i];
	}
	*nsegs = kept;
	free(seen.v);
	return 0;
}

static void
free_strs(char **v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void
run_store(struct capture *c, struct job *j)
{
	struct storectx x;
	struct segbid *bids;
	char	**segs;
	size_t	 nsegs, nbids, i;

	if (job_buildids(c, j, &segs, &nsegs, &bids, &nbids) < 0)
		return;
	memset(&x, 0, sizeof(x));
	x.job = j;
	x.debuginfod = j->debuginfod;
	for (i = 0; i < nbids && !cancelled(j); i++)
		post(c, j->req, store_one(c, &x, &bids[i]), 0, 0);
	if (j->req == NULL && x.failed > 0)
		log_info("lazy capture of %s: %llu of %zu build-ids could not be stored",
		    nsegs == 1 ? segs[0] : "segments", (unsigned long long)x.failed, nbids);
	post(c, j->req, json_pack("{s:I, s:I, s:I, s:I, s:I, s:s}",
	    "segments", (json_int_t)nsegs, "buildids", (json_int_t)nbids,
	    "ok", (json_int_t)x.ok, "failed", (json_int_t)x.failed,
	    "added", (json_int_t)x.added, "cache", c->cache.dir), 1, 0);
	if (x.dc != NULL)
		debuginfod_end(x.dc);
	live_free(&x);
	segbids_free(bids, nbids);
	free_strs(segs, nsegs);
}

/* ---- export ---------------------------------------------------------- */

static int
tar_file(struct archive *a, const char *src, const char *name, char *err, size_t errlen)
{
	struct archive_entry *e;
	struct stat st;
	char	 buf[65536];
	ssize_t	 n;
	int	 fd, rc = -1;

	if ((fd = open(src, O_RDONLY | O_CLOEXEC)) == -1 || fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", src, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	e = archive_entry_new();
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, st.st_size);
	archive_entry_set_mtime(e, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	if (archive_write_header(a, e) != ARCHIVE_OK)
		goto out;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (archive_write_data(a, buf, (size_t)n) != n)
			goto out;
	rc = n < 0 ? -1 : 0;
out:
	if (rc < 0)
		snprintf(err, errlen, "%s: %s", name, archive_error_string(a) ?
		    archive_error_string(a) : strerror(errno));
	archive_entry_free(e);
	close(fd);
	return rc;
}

static int
tar_link(struct archive *a, const char *name, const char *target)
{
	struct archive_entry *e = archive_entry_new();
	int	 rc;

	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFLNK);
	archive_entry_set_perm(e, 0777);
	archive_entry_set_symlink(e, target);
	archive_entry_set_mtime(e, time(NULL), 0);
	rc = archive_write_header(a, e) == ARCHIVE_OK ? 0 : -1;
	archive_entry_free(e);
	return rc;
}

static const char *
export_ext(const char *name)
{
	static const char *const exts[] = {
		".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar.zst", ".tar",
	};
	size_t	 i, n = name ? strlen(name) : 0;

	for (i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
		if (n > strlen(exts[i]) && strcmp(name + n - strlen(exts[i]), exts[i]) == 0)
			return exts[i];
	return ".tar";
}

/* Keep the newest EXPORTS_KEPT files of STATE/exports. */
static void
prune_exports(struct capture *c)
{
	char	**v = NULL, **nv;
	size_t	 n = 0, i;
	struct dirent *de;
	DIR	*d;

	if ((d = opendir(c->exportdir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "perfmapd-export-", 16) != 0)
			continue;
		if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL ||
		    (nv[n] = strdup(de->d_name)) == NULL) {
			if (nv != NULL)
				v = nv;
			break;
		}
		v = nv;
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), strp_cmp);
	for (i = 0; i + EXPORTS_KEPT < n; i++) {
		char	 path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", c->exportdir, v[i]);
		unlink(path);
	}
	free_strs(v, n);
}

static void
run_export(struct capture *c, struct job *j)
{
	struct storectx x;
	struct segbid *bids;
	struct archive *a = NULL;
	char	**segs, path[PATH_MAX], tmp[PATH_MAX], err[PATH_MAX + 256], stamp[32];
	const char *ext = export_ext(j->name);
	size_t	 nsegs, nbids, i, packed = 0, missing = 0;
	struct stat st;
	struct tm tm;
	time_t	 now = time(NULL);
	int	 ok = 0;

	if (job_buildids(c, j, &segs, &nsegs, &bids, &nbids) < 0)
		return;
	memset(&x, 0, sizeof(x));
	x.job = j;
	x.debuginfod = j->debuginfod;
	if (nsegs == 0) {
		snprintf(err, sizeof(err), "no segment to export");
		goto out;
	}
	if (mkdir(c->exportdir, 0750) == -1 && errno != EEXIST) {
		snprintf(err, sizeof(err), "%s: %s", c->exportdir, strerror(errno));
		goto out;
	}
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(path, sizeof(path), "%s/perfmapd-export-%s-%d%s", c->exportdir, stamp,
	    (int)(random() % 100000), ext);
	snprintf(tmp, sizeof(tmp), "%s.partial", path);
	a = archive_write_new();
	if (archive_write_set_format_filter_by_ext(a, path) != ARCHIVE_OK &&
	    archive_write_set_format_pax_restricted(a) != ARCHIVE_OK) {
		snprintf(err, sizeof(err), "libarchive: %s", archive_error_string(a));
		goto out;
	}
	if (archive_write_open_filename(a, tmp) != ARCHIVE_OK) {
		snprintf(err, sizeof(err), "%s: %s", tmp, archive_error_string(a));
		goto out;
	}
	for (i = 0; i < nsegs && !cancelled(j); i++)
		if (tar_file(a, segs[i], strrchr(segs[i], '/') + 1, err, sizeof(err)) < 0)
			goto out;
	for (i = 0; i < nbids && !cancelled(j); i++) {
		char	 file[PATH_MAX], hex[BUILD_ID_HEX_MAX], rel[PATH_MAX], lname[80];
		char	 target[PATH_MAX + 8], member[PATH_MAX];
		json_t	*r = store_one(c, &x, &bids[i]);
		const char *base;

		if (strcmp(json_string_value(json_object_get(r, "status")), "OK") != 0 ||
		    bidcache_find(&c->cache, bids[i].id, bids[i].len, file, sizeof(file)) <= 0) {
			missing++;
			post(c, j->req, r, 0, 0);
			continue;
		}
		json_decref(r);
		/* The entry as the cache names it: DIR/<rel>/<base>. */
		snprintf(rel, sizeof(rel), "%s", file + strlen(c->cache.dir) + 1);
		base = strrchr(rel, '/');
		if (base == NULL)
			continue;
		*(char *)base = '\0';
		base = strrchr(file, '/') + 1;
		buildid_to_hex(bids[i].id, bids[i].len, hex);
		snprintf(lname, sizeof(lname), ".build-id/%.2s/%s", hex, hex + 2);
		snprintf(target, sizeof(target), "../../%s", rel);
		snprintf(member, sizeof(member), "%s/%s", rel, base);
		if (tar_file(a, file, member, err, sizeof(err)) < 0 ||
		    tar_link(a, lname, target) < 0)
			goto out;
		packed++;
	}
	if (cancelled(j)) {
		snprintf(err, sizeof(err), "cancelled");
		goto out;
	}
	if (archive_write_close(a) != ARCHIVE_OK) {
		snprintf(err, sizeof(err), "%s: %s", tmp, archive_error_string(a));
		goto out;
	}
	if (rename(tmp, path) == -1) {
		snprintf(err, sizeof(err), "%s: %s", path, strerror(errno));
		goto out;
	}
	ok = 1;
out:
	if (a != NULL)
		archive_write_free(a);
	if (!ok) {
		unlink(tmp);
		post(c, j->req, proto_errorf(PROTO_ERR_FAILED, "%s", err), 1, 1);
	} else {
		prune_exports(c);
		post(c, j->req, json_pack("{s:s, s:I, s:I, s:I, s:I}", "path", path,
		    "segments", (json_int_t)nsegs, "buildids", (json_int_t)packed,
		    "missing", (json_int_t)missing,
		    "bytes", (json_int_t)(stat(path, &st) == 0 ? st.st_size : 0)), 1, 0);
	}
	if (x.dc != NULL)
		debuginfod_end(x.dc);
	live_free(&x);
	segbids_free(bids, nbids);
	free_strs(segs, nsegs);
}

/* ---- eviction -------------------------------------------------------- */

struct keepctx {
	struct idset	 ids;		/* referenced by retained segments */
	int64_t		 since_ns;	/* referenced by the open segment, maybe */
};

static int
keep_cb(const uint8_t *id, size_t len, int64_t ref_ns, void *arg)
{
	struct keepctx *k = arg;

	return ref_ns >= k->since_ns || idset_has(&k->ids, id, len);
}

static void
maybe_evict(struct capture *c, int force)
{
	struct keepctx k;
	struct job j;
	struct segbid *bids = NULL;
	char	**segs = NULL, err[PATH_MAX + 128];
	size_t	 nsegs = 0, nbids = 0, i;
	uint64_t end, left = 0, now = wall_now();
	struct stat st;
	int	 removed;

	if (c->max_size == 0 || c->cache.size <= c->max_size)
		return;
	if (c->evict_stuck && !force && now - c->last_evict_ns < EVICT_RETRY_NS)
		return;
	c->last_evict_ns = now;
	memset(&k, 0, sizeof(k));
	memset(&j, 0, sizeof(j));
	j.since_ns = -1;
	/* Entries touched since the newest closed segment may be in the open one. */
	k.since_ns = (int64_t)c->start_wall_ns;
	if (resolve_segments(c, &j, &segs, &nsegs, err, sizeof(err)) == 0) {
		for (i = 0; i < nsegs; i++) {
			read_segment(segs[i], -1, &bids, &nbids, &k.ids, &end, err, sizeof(err));
			if (stat(segs[i], &st) == 0 &&
			    (int64_t)st.st_mtim.tv_sec * 1000000000LL > k.since_ns)
				k.since_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL;
		}
		free_strs(segs, nsegs);
		segbids_free(bids, nbids);
	}
	removed = bidcache_evict(&c->cache, c->max_size, keep_cb, &k, &left);
	free(k.ids.v);
	c->evict_stuck = left > c->max_size;
	if (removed > 0)
		log_info("cache: evicted %d binaries, %llu bytes left", removed,
		    (unsigned long long)left);
	if (c->evict_stuck)
		log_warnx("cache: %llu bytes, above max_size, and every binary left is "
		    "referenced by a retained segment or the open one", (unsigned long long)left);
	atomic_store(&c->cache_bytes, c->cache.size);
	atomic_store(&c->cache_entries, c->cache.entries);
}

/* ---- the worker ------------------------------------------------------ */

static void
run_job(struct capture *c, struct job *j)
{
	char	 why[1024] = "", hex[BUILD_ID_HEX_MAX];
	int	 rc;

	switch (j->kind) {
	case JOB_MAP:
	case JOB_MISSED:
		run_map(c, j);
		break;
	case JOB_KERNEL:
		rc = store_kallsyms(c, j->id, j->idlen, NULL, 0, why, sizeof(why));
		goto kernel;
	case JOB_MODULE:
		rc = store_module(c, j->name, j->id, j->idlen, NULL, 0, why, sizeof(why));
		goto kernel;
	case JOB_VDSO:
		rc = store_vdso(c, j->id, j->idlen, NULL, 0, why, sizeof(why));
	kernel:
		if (rc < 0) {
			buildid_to_hex(j->id, j->idlen, hex);
			atomic_fetch_add(&c->n_failed, 1);
			fail_note(c, j->id, j->idlen, why);
			log_warnx("capture %s %s: %s", hex, j->name ? j->name : "", why);
		} else
			count_result(c, rc);
		break;
	case JOB_CLOSED:
		if (c->mode == CAPTURE_LAZY) {
			j->segments = json_pack("[s]", j->name);
			run_store(c, j);
		}
		maybe_evict(c, 1);
		break;
	case JOB_STORE:
		run_store(c, j);
		break;
	case JOB_EXPORT:
		run_export(c, j);
		break;
	}
}

/*
 * Open /proc/PID/map_files/... of every map job not yet pinned: an open fd
 * keeps the mapped inode readable after the process exits and the file is
 * unlinked, so short-lived processes wait only for this, not for copies.
 */
static void
pin_maps(struct capture *c, struct jobq *q, size_t *pinned)
{
	struct job *j;
	char	 path[128];

	TAILQ_FOREACH(j, q, entry) {
		if (*pinned >= PIN_MAX)
			return;
		if (j->kind != JOB_MAP || j->fd >= 0 || j->pin_errno != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", j->pid,
		    (unsigned long long)j->addr, (unsigned long long)(j->addr + j->len));
		if ((j->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) == -1)
			j->pin_errno = errno;
		else
			(*pinned)++;
	}
}

static void *
worker_main(void *arg)
{
	struct capture *c = arg;
	struct jobq local = TAILQ_HEAD_INITIALIZER(local);
	struct job *j;
	size_t	 pinned = 0;

	for (;;) {
		pthread_mutex_lock(&c->mu);
		while (!c->stop && TAILQ_EMPTY(&c->jobs) && TAILQ_EMPTY(&local))
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->stop) {
			pthread_mutex_unlock(&c->mu);
			break;
		}
		TAILQ_CONCAT(&local, &c->jobs, entry);
		pthread_mutex_unlock(&c->mu);
		pin_maps(c, &local, &pinned);
		j = TAILQ_FIRST(&local);
		TAILQ_REMOVE(&local, j, entry);
		if (j->fd >= 0)
			pinned--;
		run_job(c, j);
		pthread_mutex_lock(&c->mu);
		if (j->kind == JOB_MAP)
			c->nmap--;
		else if (j->kind == JOB_MISSED)
			c->nmissed--;
		pthread_mutex_unlock(&c->mu);
		job_free(j);
		if (c->max_size != 0 && c->cache.size > c->max_size)
			maybe_evict(c, 0);
	}
	while ((j = TAILQ_FIRST(&local)) != NULL) {
		TAILQ_REMOVE(&local, j, entry);
		job_free(j);
	}
	return NULL;
}

/* ---- the loop's side ------------------------------------------------- */

void
capture_map(struct capture *c, const struct record_mmap *m)
{
	struct job *j;
	int	 missed;

	if (c == NULL || m->build_id_size == 0 || m->build_id_size > BUILD_ID_MAX ||
	    c->mode != CAPTURE_EAGER || m->filename[0] != '/')
		return;
	if (idset_add(&c->seen, m->build_id, m->build_id_size) != 1)
		return;
	atomic_fetch_add(&c->n_seen, 1);
	if ((j = job_new()) == NULL || (j->name = strdup(m->filename)) == NULL) {
		free(j);
		atomic_fetch_add(&c->n_missed, 1);
		return;
	}
	j->pid = m->pid;
	j->addr = m->addr;
	j->len = m->len;
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
	pthread_mutex_unlock(&c->mu);
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

	if (len == 0 || len > BUILD_ID_MAX || idset_add(&c->seen, id, len) != 1)
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

void
capture_kernel(struct capture *c, const struct kinfo *k)
{
	size_t	 i;

	if (c == NULL)
		return;
	if (k->idsize > 0) {
		memcpy(c->kernel_id, k->id, k->idsize);
		c->kernel_idlen = k->idsize;
	}
	if (c->mode != CAPTURE_EAGER)
		return;
	submit_id(c, JOB_KERNEL, k->id, k->idsize, BIDCACHE_KERNEL);
	for (i = 0; i < k->nmods; i++)
		submit_id(c, JOB_MODULE, k->mods[i].id, k->mods[i].idsize, k->mods[i].path);
	submit_id(c, JOB_VDSO, c->vdso_id, (size_t)c->vdso_idlen, BIDCACHE_VDSO);
}

int
capture_vdso_id(struct capture *c, uint8_t id[BUILD_ID_MAX])
{
	if (c == NULL || c->vdso_idlen <= 0)
		return 0;
	memcpy(id, c->vdso_id, (size_t)c->vdso_idlen);
	return c->vdso_idlen;
}

void
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

static int
request(struct capture *c, enum job_kind kind, struct control_client *cl, int more,
    json_t *segments, int64_t since_ns, int all, int debuginfod, const char *name,
    json_t **err)
{
	struct job *j;

	if ((j = job_new()) == NULL ||
	    (name != NULL && (j->name = strdup(name)) == NULL) ||
	    (j->req = new_req(c, cl, more)) == NULL) {
		if (j != NULL)
			free(j->name);
		free(j);
		*err = proto_errorf(PROTO_ERR_FAILED, "out of memory");
		return -1;
	}
	j->kind = kind;
	j->segments = json_incref(segments);
	j->since_ns = since_ns;
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
    int64_t since_ns, const char *name, json_t **err)
{
	return request(c, JOB_EXPORT, cl, more, segments, since_ns, 0, 0, name, err);
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
}

int
capture_start(struct capture **out, const struct config *conf, const char *state_dir,
    char *err, size_t errlen)
{
	struct capture *c;
	char	 dir[PATH_MAX];
	int	 rc;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->efd = -1;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	TAILQ_INIT(&c->jobs);
	TAILQ_INIT(&c->results);
	TAILQ_INIT(&c->reqs);
	c->mode = conf->capture;
	c->max_size = conf->cache_max_size;
	c->qmax = conf->capture_queue;
	c->debuginfod_default = conf->debuginfod;
	c->start_wall_ns = wall_now();
	snprintf(c->statedir, sizeof(c->statedir), "%s", state_dir);
	snprintf(c->segdir, sizeof(c->segdir), "%s/segments", state_dir);
	snprintf(c->exportdir, sizeof(c->exportdir), "%s/exports", state_dir);
	if (conf->cache_dir[0] != '\0')
		snprintf(dir, sizeof(dir), "%s", conf->cache_dir);
	else if ((size_t)snprintf(dir, sizeof(dir), "%s/debug", state_dir) >= sizeof(dir)) {
		snprintf(err, errlen, "%s: path too long", state_dir);
		goto fail;
	}
	if (bidcache_open(&c->cache, dir, err, errlen) < 0)
		goto fail;
	c->cache_bytes = c->cache.size;
	c->cache_entries = c->cache.entries;
	if ((c->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	load_vdso(c);
	if ((rc = pthread_create(&c->th, NULL, worker_main, c)) != 0) {
		snprintf(err, errlen, "cannot start the capture thread: %s", strerror(rc));
		goto fail;
	}
	c->started = 1;
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
capture_stop(struct capture *c)
{
	struct creq *q;
	struct result *r;
	struct job *j;
	struct capture_stats s;
	size_t	 i;

	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	c->stop = 1;
	TAILQ_FOREACH(q, &c->reqs, entry)
		atomic_store(&q->cancelled, 1);
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	if (c->started)
		pthread_join(c->th, NULL);
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
	for (i = 0; i < c->nfails; i++)
		free(c->fails[i].reason);
	free(c->fails);
	free(c->seen.v);
	free(c->vdso);
	bidcache_close(&c->cache);
	close(c->efd);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	free(c);
}
