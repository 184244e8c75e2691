/*
 * ring.c - the perf ring-buffer reader.
 *
 * The kernel produces at data_head, we consume at data_tail; both are
 * free-running u64 byte counters, the offset in the buffer is pos & mask.
 *
 *	load_acquire(head) -> read records in [tail, head) -> store_release(tail)
 *
 * A pointer into the ring is only valid until the tail is stored, so the
 * callback must copy what it keeps (the segment writer does).  The callback
 * may also leave a record (and all after it) in the ring for the next pass:
 * the recorder does this with records younger than its time limit.  A record
 * that wraps past the end of the buffer is copied whole into scratch first.
 * Damage is contained: a header whose size is impossible (smaller than a
 * header, past head) means we lost sync; the pass skips to head and counts
 * it as torn rather than interpreting garbage.
 *
 * ring_scan looks ahead without consuming: the recorder sees a side-band
 * ring's new records the moment they arrive (to start their build-id
 * reads) and consumes them later, in time order with the other rings.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"

int
ring_init(struct ring *r, struct perf_event_mmap_page *meta, void *data, uint64_t size)
{
	memset(r, 0, sizeof(*r));
	if (size == 0 || (size & (size - 1)) != 0)
		return -EINVAL;
	if ((r->scratch = malloc(65536)) == NULL)
		return -ENOMEM;
	r->meta = meta;
	r->data = data;
	r->size = size;
	r->mask = size - 1;
	return 0;
}

int
ring_map(struct ring *r, int fd, uint64_t size)
{
	long	 page = sysconf(_SC_PAGESIZE);
	size_t	 len = (size_t)size + (size_t)page;
	void	*m;
	int	 rc;

	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	if ((rc = ring_init(r, m, (uint8_t *)m + page, size)) < 0) {
		munmap(m, len);
		return rc;
	}
	r->map = m;
	r->maplen = len;
	return 0;
}

void
ring_unmap(struct ring *r)
{
	if (r->map != NULL)
		munmap(r->map, r->maplen);
	free(r->scratch);
	memset(r, 0, sizeof(*r));
}

uint64_t
ring_pending(const struct ring *r)
{
	return __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE) - r->meta->data_tail;
}

uint64_t
ring_tail(const struct ring *r)
{
	return r->meta->data_tail;
}

/*
 * Hand FN the records in [*POS, HEAD); *POS ends after the last one FN
 * accepted (at HEAD after a torn header: counted, when consuming).
 * Returns the number of records accepted; *BYTES gets their size.
 */
static uint64_t
walk(struct ring *r, uint64_t *pos, uint64_t head, ring_record_fn fn, void *arg,
    int consuming, uint64_t *bytes)
{
	uint64_t tail = *pos, n = 0;

	*bytes = 0;
	while (head - tail >= sizeof(struct perf_event_header)) {
		const struct perf_event_header *h;
		struct perf_event_header hdr;
		uint64_t off = tail & r->mask;

		if (off + sizeof(hdr) <= r->size)
			memcpy(&hdr, r->data + off, sizeof(hdr));
		else {
			size_t first = r->size - off;

			memcpy(&hdr, r->data + off, first);
			memcpy((uint8_t *)&hdr + first, r->data, sizeof(hdr) - first);
		}
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail) {
			r->torn += consuming;
			tail = head;
			break;
		}
		if (off + hdr.size <= r->size)
			h = (const struct perf_event_header *)(const void *)(r->data + off);
		else {
			size_t first = r->size - off;

			memcpy(r->scratch, r->data + off, first);
			memcpy(r->scratch + first, r->data, hdr.size - first);
			h = (const struct perf_event_header *)(const void *)r->scratch;
			r->wrapped++;
		}
		r->pos = tail;
		if (fn(h, arg) != 0)
			break;
		tail += hdr.size;
		*bytes += hdr.size;
		n++;
	}
	*pos = tail;
	return n;
}

/*
 * Consume the records in [tail, head) through FN; END (if not NULL) runs
 * after the last one and before the tail moves, while the records are
 * still the ring's to read.
 */
static uint64_t
consume(struct ring *r, ring_record_fn fn, void *arg, void (*end)(void *), void *endarg)
{
	uint64_t head, tail, n, bytes;

	head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	tail = r->meta->data_tail;
	if (head - tail > r->size) {
		/* Cannot happen with a well-behaved writer: resync at head. */
		r->overruns++;
		tail = head;
	}
	n = walk(r, &tail, head, fn, arg, 1, &bytes);
	if (end != NULL)
		end(endarg);
	r->records += n;
	r->bytes += bytes;
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

uint64_t
ring_read(struct ring *r, ring_record_fn fn, void *arg)
{
	return consume(r, fn, arg, NULL, NULL);
}

struct copy_ctx {
	struct ring	*r;
	ring_record_fn	 pick;
	ring_run_fn	 run;
	void		*arg;
	const uint8_t	*p;		/* the run so far */
	size_t		 len;
	uint64_t	 nrec;
};

static void
copy_flush(struct copy_ctx *c)
{
	if (c->len > 0)
		c->run(c->p, c->len, c->nrec, c->arg);
	c->len = 0;
	c->nrec = 0;
}

static int
copy_cb(const struct perf_event_header *h, void *arg)
{
	struct copy_ctx *c = arg;
	const uint8_t *p = (const uint8_t *)h;
	int	 rc = c->pick(h, c->arg);

	if (rc == RING_STOP)
		return 1;
	if (rc == RING_DROP) {
		copy_flush(c);
		return 0;
	}
	if (p == c->r->scratch) {
		/* Wrapped, copied whole: the scratch is reused by the next one. */
		copy_flush(c);
		c->run(p, h->size, 1, c->arg);
		return 0;
	}
	if (c->len == 0 || c->p + c->len != p) {
		copy_flush(c);
		c->p = p;
	}
	c->len += h->size;
	c->nrec++;
	return 0;
}

static void
copy_end(void *arg)
{
	copy_flush(arg);
}

uint64_t
ring_copy(struct ring *r, ring_record_fn pick, ring_run_fn run, void *arg)
{
	struct copy_ctx c = { r, pick, run, arg, NULL, 0, 0 };

	return consume(r, copy_cb, &c, copy_end, &c);
}

uint64_t
ring_scan(struct ring *r, uint64_t from, ring_record_fn fn, void *arg)
{
	uint64_t head, tail = r->meta->data_tail, bytes;

	head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	if (head - tail > r->size)
		return from;		/* ring_read resyncs it */
	if (from - tail > head - tail)
		from = tail;		/* behind the tail (or garbage): from the tail */
	walk(r, &from, head, fn, arg, 0, &bytes);
	return from;
}
