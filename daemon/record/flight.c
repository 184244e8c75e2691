/*
 * flight.c - the flight recorder's bounded buffer; see flight.h.
 *
 *	append ──► the newest chunk, while it has room
 *	       └─► a new chunk: allocated while fewer than size / chunk
 *	           exist, else the oldest is dropped (counted, FROM moves
 *	           past it) and reused
 *
 * Records never straddle chunks, so a chunk is dropped whole and a
 * snapshot reads records where they lie.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flight.h"

struct flight_chunk {
	struct flight_chunk *next;
	uint64_t	 tmax;		/* every record in it is stamped before this */
	uint64_t	 nrec;
	size_t		 used;
	uint8_t		 data[];
};

void
flight_init(struct flight *f, size_t size, size_t chunk, uint64_t from)
{
	memset(f, 0, sizeof(*f));
	if (chunk == 0) {
		chunk = size / 16;
		if (chunk < FLIGHT_CHUNK_MIN)
			chunk = FLIGHT_CHUNK_MIN;
		if (chunk > FLIGHT_CHUNK_MAX)
			chunk = FLIGHT_CHUNK_MAX;
	}
	if (chunk > size)
		chunk = size;
	f->size = size;
	f->chunk = chunk;
	f->maxchunks = chunk == 0 ? 0 : size / chunk;
	f->from = from;
}

/* Take the oldest chunk out; DROPPED: its records are lost (counted). */
static struct flight_chunk *
unlink_oldest(struct flight *f, int dropped)
{
	struct flight_chunk *c = f->head;

	if (c == NULL)
		return NULL;
	if ((f->head = c->next) == NULL)
		f->tail = NULL;
	f->bytes -= c->used;
	f->records -= c->nrec;
	if (dropped) {
		f->dropped_bytes += c->used;
		f->dropped_records += c->nrec;
		if (c->tmax > f->from)
			f->from = c->tmax;
	}
	return c;
}

static void
free_all(struct flight *f, int dropped)
{
	struct flight_chunk *c;

	while ((c = unlink_oldest(f, dropped)) != NULL) {
		free(c);
		f->nchunks--;
	}
}

void
flight_free(struct flight *f)
{
	free_all(f, 0);
}

void
flight_reset(struct flight *f, uint64_t from)
{
	free_all(f, 0);
	f->from = from;
}

void
flight_expire(struct flight *f, uint64_t t)
{
	while (f->head != NULL && f->head->tmax <= t) {
		free(unlink_oldest(f, 1));
		f->nchunks--;
	}
}

/* A new, empty newest chunk: allocated, or the oldest one dropped and reused. */
static struct flight_chunk *
chunk_new(struct flight *f)
{
	struct flight_chunk *c = NULL;

	if (f->nchunks < f->maxchunks &&
	    (c = malloc(sizeof(*c) + f->chunk)) != NULL)
		f->nchunks++;
	else if ((c = unlink_oldest(f, 1)) == NULL)
		return NULL;
	c->next = NULL;
	c->tmax = 0;
	c->nrec = 0;
	c->used = 0;
	if (f->tail != NULL)
		f->tail->next = c;
	else
		f->head = c;
	f->tail = c;
	return c;
}

/* Into the newest chunk, which has room for LEN. */
static void
put(struct flight *f, const void *buf, size_t len, uint64_t nrec, uint64_t bound)
{
	struct flight_chunk *c = f->tail;

	memcpy(c->data + c->used, buf, len);
	c->used += len;
	c->nrec += nrec;
	if (bound > c->tmax)
		c->tmax = bound;
	f->bytes += len;
	f->records += nrec;
}

int
flight_append(struct flight *f, const void *buf, size_t len, uint64_t nrec, uint64_t bound)
{
	const uint8_t *p = buf, *end = p + len;
	struct perf_event_header h;
	int	 rc = 0;

	if (f->tail != NULL && f->chunk - f->tail->used >= len) {
		put(f, buf, len, nrec, bound);
		return 0;
	}
	/* Record by record, a new chunk where the newest is full. */
	while (p < end) {
		if ((size_t)(end - p) < sizeof(h)) {
			f->bad++;
			return -1;
		}
		memcpy(&h, p, sizeof(h));
		if (h.size < sizeof(h) || h.size > (size_t)(end - p)) {
			f->bad++;
			return -1;
		}
		if (h.size > f->chunk) {
			/* Everything before it goes too: no hole in the window. */
			free_all(f, 1);
			f->too_big++;
			f->dropped_bytes += h.size;
			f->dropped_records++;
			if (bound > f->from)
				f->from = bound;
			rc = -1;
		} else if ((f->tail == NULL || f->chunk - f->tail->used < h.size) &&
		    chunk_new(f) == NULL) {
			f->dropped_bytes += h.size;	/* no memory and no chunk to reuse */
			f->dropped_records++;
			if (bound > f->from)
				f->from = bound;
			rc = -1;
		} else
			put(f, p, h.size, 1, bound);
		p += h.size;
	}
	return rc;
}

int
flight_foreach(const struct flight *f, flight_record_fn fn, void *arg)
{
	const struct flight_chunk *c;
	struct perf_event_header h;
	size_t	 off;
	int	 rc;

	for (c = f->head; c != NULL; c = c->next)
		for (off = 0; off + sizeof(h) <= c->used; off += h.size) {
			memcpy(&h, c->data + off, sizeof(h));
			if (h.size < sizeof(h))
				break;
			if ((rc = fn((const struct perf_event_header *)(c->data + off), arg)) != 0)
				return rc;
		}
	return 0;
}
