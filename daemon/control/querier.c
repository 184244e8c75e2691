/*
 * querier.c - the index queries off the event loop; see querier.h.
 *
 * An SQLite read takes what it takes (a large index, a cold page cache,
 * a writer checkpointing): on the loop it would hold up the rings, the
 * timers and every other client, and eight clients pipelining queries
 * pushed root's ping to over a second.  So:
 *
 *	loop: control_query ─► index_handoff (the rows recorded so far go
 *	      to the writer; no wait) ─► job (root and the control group
 *	      first; QUERIER_MAX_JOBS in all) ─► querier thread:
 *	      index_wait (those rows are on disk) ─► query_run on its own
 *	      read-only connection (QUERIER_MAX_MS at most) ─► done list
 *	      ─► eventfd ─► loop: the reply to the client, if it is still
 *	      there (found again by its id: it may have left meanwhile)
 *
 * A connection has one call in flight at a time (control.c), so one
 * client holds at most one job while it stays; but a client may leave and
 * its job stay queued.  So the queue is bounded by class (root and the
 * control group, the others: each QUERIER_MAX_JOBS) and, among the
 * others, by user (QUERIER_MAX_USER_JOBS): a user who connects, asks and
 * leaves in a loop gets "busy" for the ninth, and root is never refused
 * for what other users queued.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "control.h"
#include "daemon.h"
#include "index/index.h"
#include "index_reader.h"
#include "log.h"
#include "proto.h"
#include "query.h"
#include "querier.h"

struct qjob {
	TAILQ_ENTRY(qjob) entry;
	uint64_t	 client;	/* control_client_id() */
	uid_t		 uid;
	void		(*fix)(struct perfmapd *, json_t *);	/* on the loop, or NULL */
	char		*method;
	json_t		*params;	/* a copy: the worker's own */
	uint64_t	 seq;		/* the index hand-over it must see */
	json_t		*reply;
};

TAILQ_HEAD(qjobq, qjob);

struct querier {
	struct perfmapd	*d;
	char		 state_dir[PATH_MAX];
	pthread_t	 th;
	int		 started;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	struct qjobq	 priv, others;	/* waiting, by priority */
	struct qjobq	 done;		/* answered, for the loop */
	size_t		 njobs[2];	/* waiting: others, privileged */
	int		 stop;
	int		 efd;
	struct event	*ev;
	struct index_reader *reader;	/* worker only */
};

static void
qjob_free(struct qjob *j)
{
	free(j->method);
	json_decref(j->params);
	json_decref(j->reply);
	free(j);
}

static json_t *
run(struct querier *q, struct qjob *j)
{
	char	 err[512];
	json_t	*reply;

	if (q->reader == NULL &&
	    (q->reader = index_reader_open(q->state_dir, err, sizeof(err))) == NULL)
		return proto_errorf(PROTO_ERR_FAILED, "%s", err);
	index_reader_set_deadline(q->reader, QUERIER_MAX_MS);
	index_reader_set_limits(q->reader, QUERIER_MAX_ROWS, QUERIER_MAX_BYTES);
	reply = query_run(q->reader, j->method, j->params);
	index_reader_set_deadline(q->reader, 0);
	return reply;
}

static void *
querier_main(void *arg)
{
	struct querier *q = arg;
	struct qjob *j;
	uint64_t one = 1;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->stop && TAILQ_EMPTY(&q->priv) && TAILQ_EMPTY(&q->others))
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->stop)
			break;
		if ((j = TAILQ_FIRST(&q->priv)) != NULL) {
			TAILQ_REMOVE(&q->priv, j, entry);
			q->njobs[1]--;
		} else {
			j = TAILQ_FIRST(&q->others);
			TAILQ_REMOVE(&q->others, j, entry);
			q->njobs[0]--;
		}
		pthread_mutex_unlock(&q->mu);
		index_wait(q->d->index, j->seq);
		j->reply = run(q, j);
		pthread_mutex_lock(&q->mu);
		TAILQ_INSERT_TAIL(&q->done, j, entry);
		if (write(q->efd, &one, sizeof(one)) < 0) {
			/* the counter is full: the loop is reading already */
		}
	}
	pthread_mutex_unlock(&q->mu);
	index_reader_close(q->reader);
	q->reader = NULL;
	return NULL;
}

/* Loop: the answers to the clients still there. */
static void
querier_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct querier *q = arg;
	struct qjobq got = TAILQ_HEAD_INITIALIZER(got);
	struct control_client *c;
	struct qjob *j;
	uint64_t v;

	if (read(q->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing signalled; answers may still be there */
	}
	pthread_mutex_lock(&q->mu);
	TAILQ_CONCAT(&got, &q->done, entry);
	pthread_mutex_unlock(&q->mu);
	while ((j = TAILQ_FIRST(&got)) != NULL) {
		TAILQ_REMOVE(&got, j, entry);
		if ((c = control_client_find(q->d->control, j->client)) != NULL) {
			if (j->fix != NULL)
				j->fix(q->d, j->reply);
			control_send(c, j->reply);
			j->reply = NULL;
		}
		qjob_free(j);
	}
}

int
querier_submit(struct querier *q, struct control_client *c, const char *method,
    json_t *params, int priv, void (*fix)(struct perfmapd *, json_t *), json_t **err)
{
	struct qjob *j;
	uid_t	 uid = control_client_uid(c);
	size_t	 mine = 0;

	*err = NULL;
	priv = priv != 0;
	pthread_mutex_lock(&q->mu);
	if (!priv)
		TAILQ_FOREACH(j, &q->others, entry)	/* at most QUERIER_MAX_JOBS */
			mine += j->uid == uid;
	if (q->njobs[priv] >= QUERIER_MAX_JOBS || mine >= QUERIER_MAX_USER_JOBS) {
		pthread_mutex_unlock(&q->mu);
		*err = proto_errorf(PROTO_ERR_BUSY, "%zu queries %s waiting: try again",
		    mine >= QUERIER_MAX_USER_JOBS ? mine : q->njobs[priv],
		    mine >= QUERIER_MAX_USER_JOBS ? "of this user" : "are");
		return -1;
	}
	pthread_mutex_unlock(&q->mu);
	if ((*err = query_check(method, params)) != NULL)
		return -1;
	if ((j = calloc(1, sizeof(*j))) == NULL || (j->method = strdup(method)) == NULL ||
	    (j->params = json_deep_copy(params)) == NULL) {
		if (j != NULL)
			qjob_free(j);
		*err = proto_errorf(PROTO_ERR_FAILED, "out of memory");
		return -1;
	}
	j->client = control_client_id(c);
	j->uid = uid;
	j->fix = fix;
	j->seq = index_handoff(q->d->index);
	pthread_mutex_lock(&q->mu);
	TAILQ_INSERT_TAIL(priv ? &q->priv : &q->others, j, entry);
	q->njobs[priv]++;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

int
querier_start(struct querier **out, struct perfmapd *d, char *err, size_t errlen)
{
	struct querier *q;
	int	 rc;

	*out = NULL;
	if ((q = calloc(1, sizeof(*q))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	q->d = d;
	q->efd = -1;
	snprintf(q->state_dir, sizeof(q->state_dir), "%s", d->conf.state_dir);
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	TAILQ_INIT(&q->priv);
	TAILQ_INIT(&q->others);
	TAILQ_INIT(&q->done);
	if ((q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1 ||
	    (q->ev = event_new(d->base, q->efd, EV_READ | EV_PERSIST, querier_done_cb,
	    q)) == NULL || event_add(q->ev, NULL) == -1) {
		snprintf(err, errlen, "querier: %s", strerror(errno));
		goto fail;
	}
	if ((rc = pthread_create(&q->th, NULL, querier_main, q)) != 0) {
		snprintf(err, errlen, "cannot start the query thread: %s", strerror(rc));
		goto fail;
	}
	q->started = 1;
	pthread_setname_np(q->th, "perfmapd-query");
	*out = q;
	return 0;
fail:
	querier_stop(q);
	return -1;
}

void
querier_stop(struct querier *q)
{
	struct qjob *j;

	if (q == NULL)
		return;
	pthread_mutex_lock(&q->mu);
	q->stop = 1;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	if (q->started)
		pthread_join(q->th, NULL);
	TAILQ_CONCAT(&q->done, &q->priv, entry);
	TAILQ_CONCAT(&q->done, &q->others, entry);
	while ((j = TAILQ_FIRST(&q->done)) != NULL) {
		TAILQ_REMOVE(&q->done, j, entry);
		qjob_free(j);
	}
	if (q->ev != NULL)
		event_free(q->ev);
	if (q->efd >= 0)
		close(q->efd);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	free(q);
}
