/*
 * ordered.c - the records of a perf.data file in time order, as perf's
 * own readers see them.
 *
 * A writer that copies each CPU's ring in bulk (perf record, and perfmapd
 * since its side-band work) orders nothing: within a round (between two
 * FINISHED_ROUND records) a sample may come before the MMAP2 of its
 * binary, or after the EXIT of its process.  perf sorts on reading:
 * records are queued, and at each FINISHED_ROUND everything up to the
 * last time stamp of the round before is handed on in time order (a
 * record of the current round may be older than that one, never older
 * than the previous round's last: each round drains every ring up to a
 * time).  This file does the same, so that perfmapd's own readers (hits,
 * the index rebuild, profiles) see a sample with the mappings perf sees.
 *
 * A record without a time stamp (FINISHED_INIT and the other user types)
 * takes the latest time seen before it, and equal times keep file order.
 * The queue is bounded: past ORDER_MAX bytes its older half is handed on
 * (perf's OE_FLUSH__HALF).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata.h"
#include "record.h"

#define ORDER_MAX	(64u << 20)	/* bytes of records queued at most */

struct oent {
	uint64_t	 t;
	uint64_t	 seq;
	size_t		 off;		/* in the queue's bytes */
};

struct oq {
	const struct record_layouts *ls;
	perfdata_record_fn cb;
	void		*arg;
	struct oent	*v;
	size_t		 n, cap;
	uint8_t		*buf;
	size_t		 len, bufcap;
	uint64_t	 seq;
	uint64_t	 max_t;		/* the latest time stamp seen */
	uint64_t	 round_t;	/* max_t at the last FINISHED_ROUND */
	int		 stop;		/* the callback asked to stop, or no memory */
	int		 oom;		/* ... no memory: the walk fails (ENOMEM) */
};

static int
oent_cmp(const void *a, const void *b)
{
	const struct oent *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Hand on the K oldest queued records (all if K >= n, those <= LIMIT if K is 0). */
static void
flush(struct oq *q, uint64_t limit, size_t k)
{
	uint8_t	*nb = NULL;
	size_t	 i, done, nlen = 0;

	if (q->n == 0)
		return;
	qsort(q->v, q->n, sizeof(*q->v), oent_cmp);
	for (done = 0; done < q->n && !q->stop; done++) {
		if (k == 0 ? q->v[done].t > limit : done >= k)
			break;
		if (q->cb((const struct perf_event_header *)(void *)(q->buf + q->v[done].off),
		    q->arg) != 0)
			q->stop = 1;
	}
	if (q->stop)
		done = q->n;
	/* what is left, packed at the start of a new buffer */
	if (done < q->n) {
		for (i = done; i < q->n; i++)
			nlen += ((const struct perf_event_header *)(void *)
			    (q->buf + q->v[i].off))->size;
		if ((nb = malloc(nlen > 0 ? nlen : 1)) == NULL) {
			q->stop = q->oom = 1;
			done = q->n;
		} else {
			nlen = 0;
			for (i = done; i < q->n; i++) {
				const struct perf_event_header *h = (const void *)(q->buf + q->v[i].off);

				memcpy(nb + nlen, h, h->size);
				q->v[i - done] = q->v[i];
				q->v[i - done].off = nlen;
				nlen += h->size;
			}
		}
	}
	free(q->buf);
	q->buf = nb;
	q->bufcap = q->len = nb != NULL ? nlen : 0;
	q->n = q->n - done;
}

static int
queue_cb(const struct perf_event_header *h, void *arg)
{
	struct oq *q = arg;
	uint64_t t;

	if (h->type == PERF_RECORD_FINISHED_ROUND) {
		flush(q, q->round_t, 0);
		q->round_t = q->max_t;
		if (!q->stop && q->cb(h, q->arg) != 0)
			q->stop = 1;
		return q->stop;
	}
	if (h->type >= PERF_RECORD_USER_TYPE_START ||
	    record_time(h, h->size, record_layout_of(q->ls, h, h->size), &t) < 0)
		t = q->max_t;
	else if (t > q->max_t)
		q->max_t = t;
	if (q->len + h->size > ORDER_MAX)
		flush(q, 0, q->n / 2 > 0 ? q->n / 2 : q->n);
	if (q->stop)
		return 1;
	if (q->n == q->cap) {
		size_t	 cap = q->cap ? q->cap * 2 : 1024;
		struct oent *nv = reallocarray(q->v, cap, sizeof(*nv));

		if (nv == NULL)
			return q->stop = q->oom = 1;
		q->v = nv;
		q->cap = cap;
	}
	if (q->len + h->size > q->bufcap) {
		size_t	 cap = q->bufcap ? q->bufcap * 2 : 256 * 1024;
		uint8_t	*nb;

		while (cap < q->len + h->size)
			cap *= 2;
		if ((nb = realloc(q->buf, cap)) == NULL)
			return q->stop = q->oom = 1;
		q->buf = nb;
		q->bufcap = cap;
	}
	memcpy(q->buf + q->len, h, h->size);
	q->v[q->n++] = (struct oent){ .t = t, .seq = q->seq++, .off = q->len };
	q->len += h->size;
	return 0;
}

int64_t
perfdata_walk_ordered(struct perfdata_file *f, const struct record_layouts *ls,
    perfdata_record_fn cb, void *arg)
{
	struct oq q;
	int64_t	 rc;

	memset(&q, 0, sizeof(q));
	q.ls = ls;
	q.cb = cb;
	q.arg = arg;
	rc = perfdata_walk(f, queue_cb, &q);
	if (!q.stop)
		flush(&q, 0, q.n);
	free(q.v);
	free(q.buf);
	if (q.oom) {
		errno = ENOMEM;
		return -1;
	}
	return rc;
}
