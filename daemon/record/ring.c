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

uint64_t
ring_data_size(uint64_t size, uint64_t page)
{
	return size < page ? page : size;
}

int
ring_map(struct ring *r, int fd, uint64_t size)
{
	long	 page = sysconf(_SC_PAGESIZE);
	size_t	 len;
	void	*m;
	int	 rc;

	/*
	 * Whole pages: with 64 KiB pages a 32 KiB side-band ring was mapped
	 * as 64 KiB (mmap rounds up, and the kernel took it), read as 32 KiB:
	 * records seen twice or torn.
	 */
	size = ring_data_size(size, page > 0 ? (uint64_t)page : 4096);
	len = (size_t)size + (size_t)page;

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
	free(r->spill.data);
	memset(r, 0, sizeof(*r));
}

uint64_t
ring_tail(const struct ring *r)
{
	return r->spill.end != r->spill.start ? r->spill.start : r->meta->data_tail;
}

uint64_t
ring_fill(const struct ring *r)
{
	return __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE) - r->meta->data_tail;
}

/*
 * Where a scan from FROM starts and the head it runs to: -1 in an overrun
 * ring, which a scan does not look at (ring_read resyncs it); a FROM behind
 * the tail (or garbage) starts at the tail.
 */
static int
scan_start(const struct ring *r, uint64_t *from, uint64_t *head)
{
	uint64_t tail = ring_tail(r);

	*head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	if (*head - r->meta->data_tail > r->size)
		return -1;
	if (*from - tail > *head - tail)
		*from = tail;
	return 0;
}

int
ring_unseen(const struct ring *r, uint64_t from)
{
	uint64_t head;

	return scan_start(r, &from, &head) == 0 && from != head;
}

uint64_t
ring_pending(const struct ring *r)
{
	return __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE) - ring_tail(r);
}

/* Bytes of a ring: the kernel's, or the spill's. */
struct span {
	const uint8_t	*data;
	uint64_t	 size, mask;
};

static struct span
kernel_span(const struct ring *r)
{
	return (struct span){ r->data, r->size, r->mask };
}

static struct span
spill_span(const struct ring *r)
{
	return (struct span){ r->spill.data, r->spill.size, r->spill.mask };
}

static int
spill_held(const struct ring *r)
{
	return r->spill.end != r->spill.start;
}

/* LEN bytes at position POS of span S into DST (wrapping). */
static void
span_copy(const struct span *s, uint64_t pos, void *dst, size_t len)
{
	uint64_t off = pos & s->mask;
	size_t	 first = off + len <= s->size ? len : (size_t)(s->size - off);

	memcpy(dst, s->data + off, first);
	memcpy((uint8_t *)dst + first, s->data, len - first);
}

/* LEN bytes at position POS of span S into the same positions of TO, SIZE bytes (2^n). */
static void
span_put(const struct span *s, uint64_t pos, uint64_t len, uint8_t *to, uint64_t size)
{
	while (len > 0) {
		uint64_t off = pos & (size - 1), n = off + len > size ? size - off : len;

		span_copy(s, pos, to + off, n);
		pos += n;
		len -= n;
	}
}

/*
 * Hand FN the records of span S in [*POS, HEAD); *POS ends after the last
 * one FN accepted (at HEAD after a torn header: counted, when consuming).
 * Returns the number of records accepted; *BYTES gets their size.
 */
static uint64_t
walk(struct ring *r, const struct span *s, uint64_t *pos, uint64_t head, ring_record_fn fn,
    void *arg, int consuming, uint64_t *bytes)
{
	uint64_t tail = *pos, n = 0;

	*bytes = 0;
	while (head - tail >= sizeof(struct perf_event_header)) {
		const struct perf_event_header *h;
		struct perf_event_header hdr;
		uint64_t off = tail & s->mask;

		/* A header never wraps (records are 8-byte multiples): a copy of constant size. */
		if (off + sizeof(hdr) <= s->size)
			memcpy(&hdr, s->data + off, sizeof(hdr));
		else
			span_copy(s, tail, &hdr, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail) {
			r->torn += consuming;
			tail = head;
			break;
		}
		if (off + hdr.size <= s->size)
			h = (const struct perf_event_header *)(const void *)(s->data + off);
		else {
			span_copy(s, tail, r->scratch, hdr.size);
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

static void
spill_free(struct ring *r)
{
	free(r->spill.data);
	r->spill.data = NULL;
	r->spill.size = r->spill.mask = 0;
}

/*
 * Consume the records in [tail, head) through FN, the spill's first; END
 * (if not NULL) runs after the last one and before the tail moves, while
 * the records are still the ring's to read.
 */
static uint64_t
consume(struct ring *r, ring_record_fn fn, void *arg, void (*end)(void *), void *endarg)
{
	struct span s;
	uint64_t head, tail, n = 0, bytes;

	if (spill_held(r)) {
		s = spill_span(r);
		tail = r->spill.start;
		n = walk(r, &s, &tail, r->spill.end, fn, arg, 1, &bytes);
		r->bytes += bytes;
		r->spill.start = tail;
		if (spill_held(r)) {		/* FN stopped in the spill */
			if (end != NULL)
				end(endarg);
			r->records += n;
			return n;
		}
	}
	head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	tail = r->meta->data_tail;
	if (head - tail > r->size) {
		/* Cannot happen with a well-behaved writer: resync at head. */
		r->overruns++;
		tail = head;
	}
	s = kernel_span(r);
	n += walk(r, &s, &tail, head, fn, arg, 1, &bytes);
	if (end != NULL)
		end(endarg);
	if (r->spill.data != NULL)
		spill_free(r);			/* all consumed, runs handed on */
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
	struct span s;
	uint64_t head, bytes;

	if (scan_start(r, &from, &head) < 0)
		return from;		/* untouched: ring_read resyncs it */
	if (spill_held(r) && from - r->spill.start < r->spill.end - r->spill.start) {
		s = spill_span(r);
		walk(r, &s, &from, r->spill.end, fn, arg, 0, &bytes);
		if (from != r->spill.end)
			return from;
	}
	s = kernel_span(r);
	walk(r, &s, &from, head, fn, arg, 0, &bytes);
	return from;
}

/* The whole records of [TAIL, HEAD) that fit in LIMIT bytes: their size. */
static uint64_t
fitting(struct ring *r, uint64_t tail, uint64_t head, uint64_t limit)
{
	struct span s = kernel_span(r);
	struct perf_event_header hdr;
	uint64_t pos = tail;

	while (head - pos >= sizeof(hdr)) {
		span_copy(&s, pos, &hdr, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > head - pos ||
		    pos - tail + hdr.size > limit)
			break;		/* torn: left for consume to count */
		pos += hdr.size;
	}
	return pos - tail;
}

/* Room in the spill for NEED more bytes (a power of two up to CAP), or -1. */
static int
spill_grow(struct ring *r, uint64_t need, uint64_t cap)
{
	uint64_t held = r->spill.end - r->spill.start, n = r->spill.size ? r->spill.size : 65536;
	struct span old = spill_span(r);
	uint8_t	*nd;

	if (held + need <= r->spill.size)
		return 0;
	while (n < held + need)
		n *= 2;
	if (n > cap || (nd = malloc(n)) == NULL)
		return -1;
	span_put(&old, r->spill.start, held, nd, n);	/* same positions, the new mask */
	free(r->spill.data);
	r->spill.data = nd;
	r->spill.size = n;
	r->spill.mask = n - 1;
	return 0;
}

uint64_t
ring_spill(struct ring *r, uint64_t max)
{
	struct span k = kernel_span(r);
	uint64_t head, tail, held, cap = 65536, take;

	head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	tail = r->meta->data_tail;
	if (head == tail || head - tail > r->size)
		return 0;		/* nothing, or an overrun consume resyncs */
	while (cap * 2 <= max)
		cap *= 2;
	if (!spill_held(r))
		r->spill.start = r->spill.end = tail;
	held = r->spill.end - r->spill.start;
	take = held < cap ? fitting(r, tail, head, cap - held) : 0;
	if (take < head - tail)
		r->spill_full++;
	if (take == 0 || spill_grow(r, take, cap) < 0)
		return 0;
	span_put(&k, tail, take, r->spill.data, r->spill.size);
	r->spill.end = tail + take;
	r->spilled += take;
	__atomic_store_n(&r->meta->data_tail, tail + take, __ATOMIC_RELEASE);
	return take;
}
