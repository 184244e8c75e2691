/*
 * check_ring.c - unit tests for daemon/ring.c on a fake mmap page: records
 * are produced the way the kernel does (bytes written at head & mask,
 * wrapping, then data_head published), and the reader must hand each whole
 * record to the callback, in order, contiguous even when it wrapped, move
 * data_tail to head, and contain damage (torn headers, overruns).
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "check_main.h"

#include "record/events.h"
#include "record/ring.h"

#define SMALL	4096u

/* A fake ring and its producer. */
struct fake {
	struct perf_event_mmap_page *meta;
	uint8_t	*data;
	uint64_t size;
	struct ring r;
};

static void
fake_init(struct fake *f, uint64_t size, uint64_t start)
{
	f->meta = calloc(1, sizeof(*f->meta));
	f->data = calloc(1, size);
	ck_assert_ptr_nonnull(f->meta);
	ck_assert_ptr_nonnull(f->data);
	f->size = size;
	f->meta->data_head = start;
	f->meta->data_tail = start;
	ck_assert_int_eq(ring_init(&f->r, f->meta, f->data, size), 0);
	ck_assert_uint_eq(f->r.size, size);
	ck_assert_uint_eq(f->r.mask, size - 1);
}

static void
fake_free(struct fake *f)
{
	ring_unmap(&f->r);
	free(f->meta);
	free(f->data);
}

/* Write LEN raw bytes at position POS (wrapping). */
static void
put_bytes(struct fake *f, uint64_t pos, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t	 i;

	for (i = 0; i < len; i++)
		f->data[(pos + i) & (f->size - 1)] = p[i];
}

/* Body byte I of record SEQ. */
static uint8_t
pattern(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 31u + i * 7u + 1u);
}

/*
 * Produce a record of SIZE bytes (multiple of 8, >= 16) tagged SEQ at the
 * current head, without publishing it.  Returns the new (unpublished) head.
 */
static uint64_t
produce_at(struct fake *f, uint64_t head, uint32_t seq, uint16_t size)
{
	uint8_t	*rec = malloc(size);
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = 0, .size = size };
	size_t	 i;

	ck_assert_ptr_nonnull(rec);
	memcpy(rec, &h, sizeof(h));
	memcpy(rec + 8, &seq, 4);
	for (i = 12; i < size; i++)
		rec[i] = pattern(seq, i);
	put_bytes(f, head, rec, size);
	free(rec);
	return head + size;
}

static void
publish(struct fake *f, uint64_t head)
{
	__atomic_store_n(&f->meta->data_head, head, __ATOMIC_RELEASE);
}

/* Produce and publish. */
static void
produce(struct fake *f, uint32_t seq, uint16_t size)
{
	publish(f, produce_at(f, f->meta->data_head, seq, size));
}

/* What the callback saw. */
#define MAXSEEN	256
struct seen {
	size_t	 n;
	uint32_t seq[MAXSEEN];
	uint16_t size[MAXSEEN];
	int	 intact[MAXSEEN];	/* body matched the pattern, contiguously */
};

static int
collect(const struct perf_event_header *h, void *arg)
{
	struct seen *s = arg;
	const uint8_t *p = (const uint8_t *)h;
	struct perf_event_header hdr;		/* h may be unaligned (test_u64_overflow) */
	uint32_t seq;
	size_t	 i;
	int	 ok = 1;

	ck_assert_uint_lt(s->n, MAXSEEN);
	memcpy(&hdr, p, sizeof(hdr));
	memcpy(&seq, p + 8, 4);
	if (hdr.type != PERF_RECORD_SAMPLE || hdr.size < 16)
		ok = 0;
	for (i = 12; ok && i < hdr.size; i++)
		if (p[i] != pattern(seq, i))
			ok = 0;
	s->seq[s->n] = seq;
	s->size[s->n] = hdr.size;
	s->intact[s->n] = ok;
	s->n++;
	return 0;
}

static int
never(const struct perf_event_header *h, void *arg)
{
	ck_abort_msg("callback called with a record of size %u type %u", h->size, h->type);
	return 0;
}

/* Collect, but refuse (stop before) the record whose seq is *arg->stop_seq. */
struct stopper {
	struct seen s;
	uint32_t stop_seq;
	int	 refused;
};

static int
stop_at(const struct perf_event_header *h, void *arg)
{
	struct stopper *st = arg;
	uint32_t seq;

	memcpy(&seq, (const uint8_t *)h + 8, 4);
	if (seq == st->stop_seq) {
		st->refused++;
		return 1;
	}
	return collect(h, &st->s);
}

START_TEST(test_init_rejects_bad_size)
{
	struct perf_event_mmap_page meta;
	uint8_t	 buf[64];
	struct ring r;

	memset(&meta, 0, sizeof(meta));
	ck_assert_int_eq(ring_init(&r, &meta, buf, 0), -EINVAL);
	ck_assert_int_eq(ring_init(&r, &meta, buf, 48), -EINVAL);
	ck_assert_int_eq(ring_init(&r, &meta, buf, 64), 0);
	ck_assert_ptr_null(r.map);
	ring_unmap(&r);
}
END_TEST

/*
 * A ring is whole pages: the side-band's 32 KiB (ring_size 128K / 4) on
 * 64 KiB pages is one page, as the kernel maps it (before: read with a
 * 32 KiB mask from a 64 KiB ring).  This machine's pages cannot be made
 * 64 KiB: the rule itself.
 */
START_TEST(test_ring_whole_pages)
{
	ck_assert_uint_eq(ring_data_size(32768, 65536), 65536);
	ck_assert_uint_eq(ring_data_size(8192, 65536), 65536);
	ck_assert_uint_eq(ring_data_size(1 << 20, 65536), 1 << 20);
	ck_assert_uint_eq(ring_data_size(8192, 4096), 8192);
	ck_assert_uint_eq(ring_data_size(65536, 65536), 65536);
}
END_TEST

START_TEST(test_empty)
{
	struct fake f;
	struct seen s = { 0 };

	fake_init(&f, SMALL, 0);
	ck_assert_uint_eq(ring_pending(&f.r), 0);
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), 0);
	ck_assert_uint_eq(s.n, 0);
	ck_assert_uint_eq(f.meta->data_tail, 0);
	ck_assert_uint_eq(f.r.records, 0);
	ck_assert_uint_eq(f.r.torn, 0);
	ck_assert_uint_eq(f.r.overruns, 0);
	fake_free(&f);
}
END_TEST

START_TEST(test_several_in_order)
{
	static const uint16_t sizes[] = { 16, 24, 64, 8 + 8, 256, 40, 1024 };
	struct fake f;
	struct seen s = { 0 };
	uint64_t total = 0;
	size_t	 i;

	fake_init(&f, SMALL, 0);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		produce(&f, (uint32_t)i + 100, sizes[i]);
		total += sizes[i];
	}
	ck_assert_uint_eq(ring_pending(&f.r), total);
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), 7);
	ck_assert_uint_eq(s.n, 7);
	for (i = 0; i < 7; i++) {
		ck_assert_uint_eq(s.seq[i], i + 100);
		ck_assert_uint_eq(s.size[i], sizes[i]);
		ck_assert_int_eq(s.intact[i], 1);
	}
	ck_assert_uint_eq(f.meta->data_tail, total);
	ck_assert_uint_eq(f.meta->data_tail, f.meta->data_head);
	ck_assert_uint_eq(ring_pending(&f.r), 0);
	ck_assert_uint_eq(f.r.records, 7);
	ck_assert_uint_eq(f.r.bytes, total);
	ck_assert_uint_eq(f.r.wrapped, 0);
	ck_assert_uint_eq(f.r.torn, 0);

	/* A second pass sees nothing new, a third the next record. */
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), 0);
	produce(&f, 7, 32);
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), 1);
	ck_assert_uint_eq(s.n, 8);
	ck_assert_uint_eq(s.seq[7], 7);
	ck_assert_uint_eq(f.r.records, 8);
	fake_free(&f);
}
END_TEST

/* Many passes going round the ring several times. */
START_TEST(test_many_laps)
{
	struct fake f;
	struct seen s;
	uint32_t seq = 0;
	int	 pass;

	fake_init(&f, SMALL, 0);
	for (pass = 0; pass < 100; pass++) {
		int	 k;

		memset(&s, 0, sizeof(s));
		for (k = 0; k < 5; k++)
			produce(&f, seq + (uint32_t)k, (uint16_t)(16 + 8 * ((seq + k) % 37)));
		ck_assert_uint_eq(ring_read(&f.r, collect, &s), 5);
		for (k = 0; k < 5; k++) {
			ck_assert_uint_eq(s.seq[k], seq + (uint32_t)k);
			ck_assert_int_eq(s.intact[k], 1);
		}
		seq += 5;
		ck_assert_uint_eq(f.meta->data_tail, f.meta->data_head);
	}
	ck_assert_uint_gt(f.meta->data_head, 10 * SMALL);
	ck_assert_uint_gt(f.r.wrapped, 0);
	ck_assert_uint_eq(f.r.records, 500);
	ck_assert_uint_eq(f.r.torn, 0);
	fake_free(&f);
}
END_TEST

/*
 * Wrapping: _i selects where the record starts relative to the end of the
 * buffer: header split (4 bytes before the end), header in the last 8 bytes
 * (body entirely at the start), body split, record ending exactly at the end
 * (no copy).
 */
static const uint64_t wrap_start[] = { SMALL - 4, SMALL - 8, SMALL - 24, SMALL - 48 };
static const uint64_t wrap_wrapped[] = { 1, 1, 1, 0 };

START_TEST(test_wrap)
{
	struct fake f;
	struct seen s = { 0 };
	uint64_t start = wrap_start[_i];

	fake_init(&f, SMALL, start);
	produce(&f, 42, 48);		/* straddles (or, for _i 3, ends at) the end */
	produce(&f, 43, 32);		/* then an ordinary record at the start */
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), 2);
	ck_assert_uint_eq(s.seq[0], 42);
	ck_assert_uint_eq(s.size[0], 48);
	ck_assert_int_eq(s.intact[0], 1);
	ck_assert_uint_eq(s.seq[1], 43);
	ck_assert_int_eq(s.intact[1], 1);
	ck_assert_uint_eq(f.r.wrapped, wrap_wrapped[_i]);
	ck_assert_uint_eq(f.meta->data_tail, start + 80);
	ck_assert_uint_eq(f.r.torn, 0);
	fake_free(&f);
}
END_TEST

/*
 * Free-running positions across 2^64: _i 0 starts at UINT64_MAX - 100 (not
 * 8-aligned, so the callback gets unaligned pointers: it copies the header),
 * _i 1 at 2^64 - 104 (8-aligned, as the kernel's positions always are).
 */
START_TEST(test_u64_overflow)
{
	struct fake f;
	struct seen s = { 0 };
	uint64_t start = _i == 0 ? UINT64_MAX - 100 : UINT64_MAX - 103, end;
	uint32_t i;

	fake_init(&f, SMALL, start);
	for (i = 0; i < 10; i++)
		produce(&f, i, 32);		/* 320 bytes: crosses 2^64 */
	end = start + 320;
	ck_assert_uint_lt(end, start);		/* it did overflow */
	ck_assert_uint_eq(ring_pending(&f.r), 320);
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), 10);
	for (i = 0; i < 10; i++) {
		ck_assert_uint_eq(s.seq[i], i);
		ck_assert_int_eq(s.intact[i], 1);
	}
	ck_assert_uint_eq(f.meta->data_tail, end);
	ck_assert_uint_eq(f.r.overruns, 0);
	ck_assert_uint_eq(f.r.torn, 0);
	/* start & 4095 = 3995 or 3992: one record straddles the buffer end */
	ck_assert_uint_eq(f.r.wrapped, 1);
	fake_free(&f);
}
END_TEST

/*
 * Torn headers: _i = 0 size 0, 1 size 4, 2 size larger than head - tail
 * (the writer published a head inside a record), 3 garbage header split
 * across the buffer end.
 */
static const uint16_t torn_size[] = { 0, 4, 512, 2 };

START_TEST(test_torn)
{
	struct fake f;
	struct seen s = { 0 };
	struct perf_event_header bad = { .type = 9, .misc = 0, .size = torn_size[_i] };
	uint64_t start = _i == 3 ? SMALL - 36 : 0, head;

	fake_init(&f, SMALL, start);
	produce(&f, 1, 32);			/* one good record first */
	head = f.meta->data_head;
	put_bytes(&f, head, &bad, sizeof(bad));
	publish(&f, head + 64);			/* 64 bytes pending after it */
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), 1);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.seq[0], 1);
	ck_assert_int_eq(s.intact[0], 1);
	ck_assert_uint_eq(f.r.torn, 1);
	ck_assert_uint_eq(f.meta->data_tail, head + 64);	/* skipped to head */
	ck_assert_uint_eq(f.r.records, 1);
	ck_assert_uint_eq(f.r.bytes, 32);

	/* The next pass reads new records normally. */
	produce(&f, 2, 24);
	produce(&f, 3, 40);
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), 2);
	ck_assert_uint_eq(s.n, 3);
	ck_assert_uint_eq(s.seq[1], 2);
	ck_assert_uint_eq(s.seq[2], 3);
	ck_assert_int_eq(s.intact[1], 1);
	ck_assert_int_eq(s.intact[2], 1);
	ck_assert_uint_eq(f.r.torn, 1);
	ck_assert_uint_eq(f.meta->data_tail, f.meta->data_head);
	fake_free(&f);
}
END_TEST

/* Only a torn header pending: no callback at all. */
START_TEST(test_torn_only)
{
	struct fake f;
	struct perf_event_header bad = { .type = 0, .misc = 0, .size = 0 };

	fake_init(&f, SMALL, 1000);
	put_bytes(&f, 1000, &bad, sizeof(bad));
	publish(&f, 1000 + 16);
	ck_assert_uint_eq(ring_read(&f.r, never, NULL), 0);
	ck_assert_uint_eq(f.r.torn, 1);
	ck_assert_uint_eq(f.meta->data_tail, 1016);
	fake_free(&f);
}
END_TEST

/*
 * Fewer than 8 bytes pending: not even a header.  The reader leaves them
 * (tail stays) and counts nothing: a writer that publishes whole records
 * never does this, and the bytes are consumed when the rest arrives.
 */
START_TEST(test_short_pending)
{
	struct fake f;
	struct seen s = { 0 };

	fake_init(&f, SMALL, 0);
	produce_at(&f, 0, 5, 32);
	publish(&f, 4);
	ck_assert_uint_eq(ring_read(&f.r, never, NULL), 0);
	ck_assert_uint_eq(f.meta->data_tail, 0);
	ck_assert_uint_eq(f.r.torn, 0);
	publish(&f, 32);
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), 1);
	ck_assert_uint_eq(s.seq[0], 5);
	ck_assert_int_eq(s.intact[0], 1);
	fake_free(&f);
}
END_TEST

/*
 * A head published in the middle of a record (the kernel never does that:
 * it moves data_head only past whole records).  The reader treats the
 * header as impossible - torn - and skips to head; the whole records before
 * it are delivered, the rest of the partial one is lost.  That is the
 * implemented and intended behaviour: with a well-behaved writer it cannot
 * happen, so it signals loss of sync rather than a record still in flight.
 */
START_TEST(test_partial_record)
{
	struct fake f;
	struct seen s = { 0 };
	uint64_t h;

	fake_init(&f, SMALL, 0);
	h = produce_at(&f, 0, 1, 32);
	h = produce_at(&f, h, 2, 64);
	publish(&f, 32 + 40);			/* 40 of the 64 bytes */
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), 1);
	ck_assert_uint_eq(s.seq[0], 1);
	ck_assert_uint_eq(f.r.torn, 1);
	ck_assert_uint_eq(f.meta->data_tail, 72);
	/* The rest of that record is now garbage at the tail... */
	publish(&f, h);
	produce(&f, 3, 32);
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), 0);
	ck_assert_uint_eq(f.r.torn, 2);
	ck_assert_uint_eq(f.meta->data_tail, f.meta->data_head);
	/* ...and records produced after the resync are read. */
	produce(&f, 4, 48);
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), 1);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(s.seq[1], 4);
	ck_assert_int_eq(s.intact[1], 1);
	fake_free(&f);
}
END_TEST

START_TEST(test_overrun)
{
	struct fake f;
	struct seen s = { 0 };
	uint32_t i;

	fake_init(&f, SMALL, 0);
	/* The writer ran more than a whole ring ahead (5000 bytes). */
	for (i = 0; i < 125; i++)
		produce(&f, i, 40);
	ck_assert_uint_gt(ring_pending(&f.r), SMALL);
	ck_assert_uint_eq(ring_read(&f.r, never, NULL), 0);
	ck_assert_uint_eq(f.r.overruns, 1);
	ck_assert_uint_eq(f.meta->data_tail, 5000);
	ck_assert_uint_eq(ring_pending(&f.r), 0);
	/* Resynced: new records are read. */
	produce(&f, 500, 40);
	produce(&f, 501, 16);
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), 2);
	ck_assert_uint_eq(s.seq[0], 500);
	ck_assert_uint_eq(s.seq[1], 501);
	ck_assert_int_eq(s.intact[0], 1);
	ck_assert_int_eq(s.intact[1], 1);
	ck_assert_uint_eq(f.r.overruns, 1);
	ck_assert_uint_eq(f.r.torn, 0);
	fake_free(&f);
}
END_TEST

/* Exactly a full ring pending is not an overrun. */
START_TEST(test_full_ring)
{
	struct fake f;
	struct seen s = { 0 };
	uint32_t i;

	fake_init(&f, SMALL, 100);
	for (i = 0; i < SMALL / 64; i++)
		produce(&f, i, 64);
	ck_assert_uint_eq(ring_pending(&f.r), SMALL);
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), SMALL / 64);
	ck_assert_uint_eq(f.r.overruns, 0);
	for (i = 0; i < SMALL / 64; i++) {
		ck_assert_uint_eq(s.seq[i], i);
		ck_assert_int_eq(s.intact[i], 1);
	}
	fake_free(&f);
}
END_TEST

/* Largest record (65528, a u16 multiple of 8) in a 128 KiB ring, wrapping. */
START_TEST(test_max_record)
{
	struct fake f;
	struct seen s = { 0 };
	uint64_t start = _i == 0 ? 0 : 131072 - 1000;

	fake_init(&f, 131072, start);
	produce(&f, 77, 65528);
	produce(&f, 78, 65528);
	ck_assert_uint_eq(ring_read(&f.r, collect, &s), 2);
	ck_assert_uint_eq(s.size[0], 65528);
	ck_assert_uint_eq(s.size[1], 65528);
	ck_assert_uint_eq(s.seq[0], 77);
	ck_assert_uint_eq(s.seq[1], 78);
	ck_assert_int_eq(s.intact[0], 1);
	ck_assert_int_eq(s.intact[1], 1);
	ck_assert_uint_eq(f.r.wrapped, _i == 0 ? 0 : 1);
	ck_assert_uint_eq(f.meta->data_tail, start + 2 * 65528);
	fake_free(&f);
}
END_TEST

/*
 * A callback that returns non-zero stops the pass before that record: it
 * is not consumed, the tail stays in front of it, and the next pass
 * delivers it first (also when it wrapped and was copied).
 */
START_TEST(test_callback_stops)
{
	struct fake f;
	struct stopper st;
	uint64_t start = _i == 0 ? 0 : SMALL - 40;	/* _i 1: record 2 wraps */
	uint64_t before2;

	memset(&st, 0, sizeof(st));
	fake_init(&f, SMALL, start);
	produce(&f, 1, 32);
	before2 = f.meta->data_head;
	produce(&f, 2, 48);
	produce(&f, 3, 16);
	st.stop_seq = 2;
	ck_assert_uint_eq(ring_read(&f.r, stop_at, &st), 1);
	ck_assert_int_eq(st.refused, 1);
	ck_assert_uint_eq(st.s.n, 1);
	ck_assert_uint_eq(st.s.seq[0], 1);
	ck_assert_uint_eq(f.meta->data_tail, before2);
	ck_assert_uint_eq(ring_pending(&f.r), 64);
	ck_assert_uint_eq(f.r.records, 1);
	ck_assert_uint_eq(f.r.bytes, 32);
	ck_assert_uint_eq(f.r.torn, 0);
	/* Refused again: nothing moves. */
	ck_assert_uint_eq(ring_read(&f.r, stop_at, &st), 0);
	ck_assert_int_eq(st.refused, 2);
	ck_assert_uint_eq(f.meta->data_tail, before2);
	/* Accepted: 2 then 3, whole. */
	st.stop_seq = 0;
	ck_assert_uint_eq(ring_read(&f.r, stop_at, &st), 2);
	ck_assert_uint_eq(st.s.n, 3);
	ck_assert_uint_eq(st.s.seq[1], 2);
	ck_assert_uint_eq(st.s.seq[2], 3);
	ck_assert_int_eq(st.s.intact[1], 1);
	ck_assert_int_eq(st.s.intact[2], 1);
	ck_assert_uint_eq(f.meta->data_tail, f.meta->data_head);
	ck_assert_uint_eq(f.r.records, 3);
	ck_assert_uint_eq(f.r.bytes, 96);
	fake_free(&f);
}
END_TEST

/* Positions handed to callbacks, and ring_scan's look-ahead. */
struct scanctx {
	struct fake	*f;
	struct seen	 s;
	uint64_t	 pos[MAXSEEN];
	size_t		 stop_at;	/* refuse the record with this index (0: none) */
};

static int
scan_cb(const struct perf_event_header *h, void *arg)
{
	struct scanctx *c = arg;

	if (c->stop_at != 0 && c->s.n == c->stop_at)
		return 1;
	c->pos[c->s.n] = c->f->r.pos;
	return collect(h, &c->s);
}

START_TEST(test_scan_then_read)
{
	struct fake f;
	struct scanctx c;
	uint64_t from, head, start = _i ? SMALL - 40 : 0;	/* _i: wrap in the middle */
	size_t	 i;

	fake_init(&f, SMALL, start);
	memset(&c, 0, sizeof(c));
	c.f = &f;
	produce(&f, 1, 32);
	produce(&f, 2, 48);
	produce(&f, 3, 16);
	head = f.meta->data_head;
	/* A scan sees all three, with their positions, and consumes nothing. */
	from = ring_scan(&f.r, 0, scan_cb, &c);
	ck_assert_uint_eq(from, head);
	ck_assert_uint_eq(c.s.n, 3);
	ck_assert_uint_eq(c.pos[0], start);
	ck_assert_uint_eq(c.pos[1], start + 32);
	ck_assert_uint_eq(c.pos[2], start + 80);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(c.s.intact[i], 1);
	ck_assert_uint_eq(f.meta->data_tail, start);
	ck_assert_uint_eq(f.r.records, 0);
	/* Scanned to the head: nothing unseen; from the tail, all of it. */
	ck_assert_int_eq(ring_unseen(&f.r, from), 0);
	ck_assert_int_eq(ring_unseen(&f.r, start), 1);
	ck_assert_int_eq(ring_unseen(&f.r, start + 80), 1);
	/* From where it stopped, the next scan sees only what is new. */
	produce(&f, 4, 24);
	ck_assert_int_eq(ring_unseen(&f.r, from), 1);
	from = ring_scan(&f.r, from, scan_cb, &c);
	ck_assert_uint_eq(c.s.n, 4);
	ck_assert_uint_eq(c.s.seq[3], 4);
	ck_assert_uint_eq(c.pos[3], head);
	/* A refused record stops the scan before it. */
	memset(&c.s, 0, sizeof(c.s));
	c.stop_at = 2;
	ck_assert_uint_eq(ring_scan(&f.r, start, scan_cb, &c), start + 80);
	/* Consuming then hands out the same records and positions. */
	memset(&c.s, 0, sizeof(c.s));
	c.stop_at = 0;
	ck_assert_uint_eq(ring_read(&f.r, scan_cb, &c), 4);
	ck_assert_uint_eq(c.pos[2], start + 80);
	ck_assert_uint_eq(ring_tail(&f.r), from);
	/* Consumed: a position behind the tail (or the tail) has nothing unseen. */
	ck_assert_int_eq(ring_unseen(&f.r, start), 0);
	ck_assert_int_eq(ring_unseen(&f.r, from), 0);
	/* A scan from behind the tail starts at the tail. */
	produce(&f, 5, 16);
	ck_assert_int_eq(ring_unseen(&f.r, start), 1);
	memset(&c.s, 0, sizeof(c.s));
	ring_scan(&f.r, start, scan_cb, &c);
	ck_assert_uint_eq(c.s.n, 1);
	ck_assert_uint_eq(c.s.seq[0], 5);
	fake_free(&f);
}
END_TEST

/* ring_copy: runs of whole records, contiguous, before the tail moves. */
struct copyctx {
	struct fake	*f;
	size_t		 nrec, drop_seq, stop_seq;
	size_t		 nruns;
	uint64_t	 runrec[64];
	size_t		 runlen[64];
	uint8_t		 bytes[262144];
	size_t		 nbytes;
	uint64_t	 tail_at_run;
};

static int
copy_pick(const struct perf_event_header *h, void *arg)
{
	struct copyctx *c = arg;
	uint32_t seq;

	memcpy(&seq, (const uint8_t *)h + 8, 4);
	if (c->stop_seq != 0 && seq == c->stop_seq)
		return RING_STOP;
	if (c->drop_seq != 0 && seq == c->drop_seq)
		return RING_DROP;
	return RING_TAKE;
}

static void
copy_run(const void *buf, size_t len, uint64_t nrec, void *arg)
{
	struct copyctx *c = arg;

	c->runrec[c->nruns] = nrec;
	c->runlen[c->nruns++] = len;
	memcpy(c->bytes + c->nbytes, buf, len);
	c->nbytes += len;
	c->nrec += nrec;
	c->tail_at_run = c->f->meta->data_tail;
}

START_TEST(test_copy_runs)
{
	struct fake f;
	struct copyctx c;
	uint64_t start = SMALL - 64;	/* the third record wraps */
	uint32_t seq;

	fake_init(&f, SMALL, start);
	memset(&c, 0, sizeof(c));
	c.f = &f;
	produce(&f, 1, 32);
	produce(&f, 2, 24);
	produce(&f, 3, 48);		/* wraps: a run of its own */
	produce(&f, 4, 16);
	produce(&f, 5, 16);		/* dropped: ends the run */
	produce(&f, 6, 40);
	produce(&f, 7, 16);		/* stops the copy */
	c.drop_seq = 5;
	c.stop_seq = 7;
	ck_assert_uint_eq(ring_copy(&f.r, copy_pick, copy_run, &c), 6);
	/* [1 2] [3 wrapped] [4] (5 dropped) [6] */
	ck_assert_uint_eq(c.nruns, 4);
	ck_assert_uint_eq(c.runrec[0], 2);
	ck_assert_uint_eq(c.runlen[0], 56);
	ck_assert_uint_eq(c.runrec[1], 1);
	ck_assert_uint_eq(c.runlen[1], 48);
	ck_assert_uint_eq(c.runrec[2], 1);
	ck_assert_uint_eq(c.runlen[2], 16);
	ck_assert_uint_eq(c.runrec[3], 1);
	ck_assert_uint_eq(c.runlen[3], 40);
	ck_assert_uint_eq(c.nrec, 5);
	/* Every run was handed over before the tail moved past it. */
	ck_assert_uint_eq(c.tail_at_run, start);
	/* The tail stops before record 7, which comes first next time. */
	ck_assert_uint_eq(f.meta->data_tail, start + 32 + 24 + 48 + 16 + 16 + 40);
	ck_assert_uint_eq(f.r.records, 6);
	/* The bytes are the records, whole: the wrapped one contiguous. */
	memcpy(&seq, c.bytes + 56 + 8, 4);
	ck_assert_uint_eq(seq, 3);
	ck_assert_uint_eq(c.bytes[56 + 47], pattern(3, 47));
	memcpy(&seq, c.bytes + 56 + 48 + 16 + 8, 4);
	ck_assert_uint_eq(seq, 6);
	memset(&c, 0, sizeof(c));
	c.f = &f;
	ck_assert_uint_eq(ring_copy(&f.r, copy_pick, copy_run, &c), 1);
	ck_assert_uint_eq(c.nruns, 1);
	fake_free(&f);
}
END_TEST

/*
 * ring_spill: records taken out of the kernel's ring keep their order and
 * positions for reads, scans and copies, the kernel's tail moves at the
 * spill, and the spill holds at most what it is allowed.
 */
START_TEST(test_spill_read_scan)
{
	struct fake f;
	struct scanctx c;
	uint64_t start = _i ? SMALL - 40 : 0, head;	/* _i: records wrap */
	uint32_t seq;
	size_t	 i;

	fake_init(&f, SMALL, start);
	memset(&c, 0, sizeof(c));
	c.f = &f;
	produce(&f, 1, 32);
	produce(&f, 2, 48);
	ck_assert_uint_eq(ring_spill(&f.r, 1 << 20), 80);
	/* The kernel's ring is free again; the records are still pending. */
	ck_assert_uint_eq(f.meta->data_tail, start + 80);
	ck_assert_uint_eq(ring_tail(&f.r), start);
	ck_assert_uint_eq(ring_pending(&f.r), 80);
	/* The kernel writes over the spilled records' old bytes: no matter. */
	for (seq = 3; seq < 3 + SMALL / 64; seq++)
		produce(&f, seq, 64);
	ck_assert_uint_eq(ring_spill(&f.r, 1 << 20), SMALL);
	produce(&f, seq, 16);
	head = f.meta->data_head;
	/* A scan sees all, in order, with their positions. */
	ck_assert_uint_eq(ring_scan(&f.r, 0, scan_cb, &c), head);
	ck_assert_uint_eq(c.s.n, seq);
	ck_assert_uint_eq(c.pos[0], start);
	ck_assert_uint_eq(c.pos[1], start + 32);
	ck_assert_uint_eq(c.pos[2], start + 80);
	ck_assert_uint_eq(c.pos[seq - 1], head - 16);
	for (i = 0; i < c.s.n; i++) {
		ck_assert_uint_eq(c.s.seq[i], i + 1);
		ck_assert_int_eq(c.s.intact[i], 1);
	}
	/* A scan from inside the spill, stopped inside the spill. */
	memset(&c.s, 0, sizeof(c.s));
	c.stop_at = 2;
	ck_assert_uint_eq(ring_scan(&f.r, start + 32, scan_cb, &c), start + 32 + 48 + 64);
	ck_assert_uint_eq(c.s.seq[0], 2);
	/* A read stopped inside the spill leaves the rest for the next one. */
	memset(&c.s, 0, sizeof(c.s));
	c.stop_at = 1;
	ck_assert_uint_eq(ring_read(&f.r, scan_cb, &c), 1);
	ck_assert_uint_eq(ring_tail(&f.r), start + 32);
	ck_assert_ptr_nonnull(f.r.spill.data);
	memset(&c.s, 0, sizeof(c.s));
	c.stop_at = 0;
	ck_assert_uint_eq(ring_read(&f.r, scan_cb, &c), seq - 1);
	ck_assert_uint_eq(c.pos[0], start + 32);
	ck_assert_uint_eq(c.s.seq[seq - 2], seq);
	for (i = 0; i < c.s.n; i++)
		ck_assert_int_eq(c.s.intact[i], 1);
	ck_assert_uint_eq(f.meta->data_tail, head);
	ck_assert_uint_eq(ring_pending(&f.r), 0);
	ck_assert_ptr_null(f.r.spill.data);	/* given back once read */
	ck_assert_uint_eq(f.r.records, seq);
	ck_assert_uint_eq(f.r.spilled, 80 + SMALL);
	fake_free(&f);
}
END_TEST

/* Records in sequence from NEXT on, whole: counted, anything else fails. */
static int
in_order(const struct perf_event_header *h, void *arg)
{
	uint32_t *next = arg, seq;

	memcpy(&seq, (const uint8_t *)h + 8, 4);
	ck_assert_uint_eq(seq, *next);
	ck_assert_uint_eq(((const uint8_t *)h)[h->size - 1], pattern(seq, h->size - 1u));
	(*next)++;
	return 0;
}

/* The spill's bound: whole records up to it, the rest left in the kernel's ring. */
START_TEST(test_spill_bound)
{
	struct fake f;
	uint64_t got = 0, n;
	uint32_t seq = 1, next = 1;
	size_t	 i;

	fake_init(&f, SMALL, SMALL - 8);
	/* 65536 bytes allowed (the smallest spill); 40-byte records do not divide it. */
	do {
		for (i = 0; i < SMALL / 2 / 40; i++)
			produce(&f, seq++, 40);
		n = ring_spill(&f.r, 100000);
		ck_assert_uint_eq(n % 40, 0);
		got += n;
	} while (n == SMALL / 2 / 40 * 40);
	ck_assert_uint_le(got, 65536);
	ck_assert_uint_gt(got, 65536 - 40);
	ck_assert_uint_eq(f.r.spill.size, 65536);
	ck_assert_uint_eq(f.r.spill_full, 1);
	produce(&f, seq++, 40);
	ck_assert_uint_eq(ring_spill(&f.r, 100000), 0);	/* full */
	ck_assert_uint_eq(f.r.spill_full, 2);
	ck_assert_uint_eq(ring_pending(&f.r), (seq - 1) * 40ULL);
	/* Everything, in order, by one read. */
	ck_assert_uint_eq(ring_read(&f.r, in_order, &next), seq - 1);
	ck_assert_uint_eq(next, seq);
	ck_assert_uint_eq(ring_pending(&f.r), 0);
	fake_free(&f);
}
END_TEST

/*
 * The spill's two bounds over an events' rings: after the start, a
 * side-band ring's backlog stops at its share of EVENTS_SPILL_SIDEBAND (the
 * rest left for the kernel to drop and count); the start's spill
 * (events_spill) holds on, up to its share of EVENTS_SPILL_MAX.
 */
static uint64_t
spill_until_full(struct events *e, struct fake *f, int start, uint32_t *seq)
{
	uint64_t spilled = 0, full = 0;

	while (full == 0) {
		while (f->meta->data_head - f->meta->data_tail <= f->size - 4096)
			produce(f, (*seq)++, 4096);
		if (start)
			events_spill(e, &spilled, &full);
		else
			events_spill_sideband(e, 0, &spilled, &full);
	}
	return spilled;
}

START_TEST(test_spill_shares)
{
	struct events e;
	struct fake f[4];
	uint64_t steady, more;
	uint32_t seq = 1, next = 1;
	int	 i;

	memset(&e, 0, sizeof(e));
	e.ncpus = 2;
	e.cpus = calloc(2, sizeof(*e.cpus));
	ck_assert_ptr_nonnull(e.cpus);
	for (i = 0; i < 4; i++) {
		fake_init(&f[i], 1 << 20, 0);
		if (i < 2)
			e.cpus[i].sb_ring = f[i].r;
		else
			e.cpus[i - 2].ring = f[i].r;
	}
	/* F[0]'s bytes are CPU 0's side-band ring (its reader: e.cpus[0].sb_ring) */
	steady = spill_until_full(&e, &f[0], 0, &seq);
	ck_assert_uint_le(steady, EVENTS_SPILL_SIDEBAND / 2);
	ck_assert_uint_gt(steady, EVENTS_SPILL_SIDEBAND / 2 - 4096);
	/* the start's share is larger: the same ring takes more */
	more = spill_until_full(&e, &f[0], 1, &seq);
	ck_assert_uint_gt(steady + more, EVENTS_SPILL_SIDEBAND);
	ck_assert_uint_le(steady + more, EVENTS_SPILL_MAX / 4);
	/* and all of it comes back, in order */
	ck_assert_uint_eq(ring_read(&e.cpus[0].sb_ring, in_order, &next), seq - 1);
	ck_assert_uint_eq(next, seq);
	for (i = 0; i < 2; i++) {
		ring_unmap(&e.cpus[i].sb_ring);
		ring_unmap(&e.cpus[i].ring);
		free(f[i].meta);
		free(f[i].data);
		free(f[i + 2].meta);
		free(f[i + 2].data);
	}
	free(e.cpus);
}
END_TEST

/* The spill grows while its records wrap in it; ring_copy's runs stay whole. */
static void
fill_spill(struct fake *f, uint32_t *seq, int rounds)
{
	while (rounds-- > 0) {
		while (f->meta->data_head - f->meta->data_tail <= SMALL - 400)
			produce(f, (*seq)++, 400);
		ring_spill(&f->r, 1 << 20);
	}
}

START_TEST(test_spill_grow_copy)
{
	struct fake f;
	struct copyctx c;
	uint32_t seq = 1, next;
	size_t	 off;

	fake_init(&f, SMALL, 0);
	/* Fill most of a 64 KiB spill, consume most of it, then spill past its end. */
	fill_spill(&f, &seq, 15);
	ck_assert_uint_eq(f.r.spill.size, 65536);
	next = 1;
	while (next < seq - 20) {
		struct stopper st;

		memset(&st, 0, sizeof(st));
		st.stop_seq = seq - 20;
		ring_read(&f.r, stop_at, &st);
		next += (uint32_t)st.s.n;
	}
	fill_spill(&f, &seq, 4);
	ck_assert_uint_eq(f.r.spill.size, 65536);	/* wrapped in place */
	ck_assert_uint_gt((f.r.spill.start & f.r.spill.mask) + (f.r.spill.end - f.r.spill.start),
	    f.r.spill.size);
	fill_spill(&f, &seq, 16);
	ck_assert_uint_eq(f.r.spill.size, 131072);	/* grew with wrapped contents */
	produce(&f, seq++, 16);
	memset(&c, 0, sizeof(c));
	c.f = &f;
	c.stop_seq = seq - 1;			/* the kernel ring's last one stays */
	ck_assert_uint_gt(ring_copy(&f.r, copy_pick, copy_run, &c), 0);
	for (off = 0; off < c.nbytes; ) {
		struct perf_event_header h;
		uint32_t got;

		memcpy(&h, c.bytes + off, sizeof(h));
		memcpy(&got, c.bytes + off + 8, 4);
		ck_assert_uint_eq(got, next);
		ck_assert_uint_eq(c.bytes[off + h.size - 1], pattern(got, h.size - 1u));
		next++;
		off += h.size;
	}
	ck_assert_uint_eq(next, seq - 1);
	ck_assert_uint_eq(ring_pending(&f.r), 16);
	ck_assert_ptr_null(f.r.spill.data);
	fake_free(&f);
}
END_TEST

static Suite *
ring_suite(void)
{
	Suite	*s = suite_create("ring");
	TCase	*tc;

	tc = tcase_create("basic");
	/* the spill tests copy up to 64 MiB: seconds under ThreadSanitizer on a busy machine */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_init_rejects_bad_size);
	tcase_add_test(tc, test_ring_whole_pages);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_several_in_order);
	tcase_add_test(tc, test_many_laps);
	tcase_add_test(tc, test_full_ring);
	tcase_add_loop_test(tc, test_callback_stops, 0, 2);
	tcase_add_loop_test(tc, test_scan_then_read, 0, 2);
	tcase_add_test(tc, test_copy_runs);
	tcase_add_loop_test(tc, test_spill_read_scan, 0, 2);
	tcase_add_test(tc, test_spill_bound);
	tcase_add_test(tc, test_spill_shares);
	tcase_add_test(tc, test_spill_grow_copy);
	suite_add_tcase(s, tc);

	tc = tcase_create("wrap");
	tcase_add_loop_test(tc, test_wrap, 0, 4);
	tcase_add_loop_test(tc, test_u64_overflow, 0, 2);
	tcase_add_loop_test(tc, test_max_record, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("damage");
	tcase_add_loop_test(tc, test_torn, 0, 4);
	tcase_add_test(tc, test_torn_only);
	tcase_add_test(tc, test_short_pending);
	tcase_add_test(tc, test_partial_record);
	tcase_add_test(tc, test_overrun);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(ring_suite)
