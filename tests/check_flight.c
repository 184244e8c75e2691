/*
 * check_flight.c - unit tests for daemon/record/flight.c, the flight
 * recorder's bounded buffer: records kept in order, the oldest chunk
 * dropped first and counted, never more chunks than the size allows, the
 * window's start (FROM) moved past everything dropped, a record larger
 * than a chunk, runs split at record boundaries, expiry by age, a reset
 * after a snapshot, and a run that is not whole records.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "check_main.h"

#include "record/flight.h"

/* A record of SIZE bytes whose payload is its serial number N. */
static size_t
rec_make(uint8_t *out, uint16_t size, uint64_t n)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = 0, .size = size };

	memset(out, 0, size);
	memcpy(out, &h, sizeof(h));
	memcpy(out + sizeof(h), &n, sizeof(n));
	return size;
}

struct seen {
	uint64_t	 n, first, last;
	uint64_t	 bytes;
	int		 ordered;
};

static int
seen_cb(const struct perf_event_header *h, void *arg)
{
	struct seen *s = arg;
	uint64_t n;

	memcpy(&n, (const uint8_t *)h + sizeof(*h), sizeof(n));
	if (s->n == 0)
		s->first = n;
	else if (n != s->last + 1)
		s->ordered = 0;
	s->last = n;
	s->n++;
	s->bytes += h->size;
	return 0;
}

static struct seen
seen_all(const struct flight *f)
{
	struct seen s = { .ordered = 1 };

	ck_assert_int_eq(flight_foreach(f, seen_cb, &s), 0);
	return s;
}

START_TEST(test_keeps_in_order)
{
	struct flight f;
	uint8_t	 buf[64];
	uint64_t i;
	struct seen s;

	flight_init(&f, 4096, 1024, 5);
	ck_assert_uint_eq(f.nchunks, 0);	/* nothing allocated before records come */
	for (i = 1; i <= 10; i++)
		ck_assert_int_eq(flight_append(&f, buf, rec_make(buf, 64, i), 1, 100 + i), 0);
	s = seen_all(&f);
	ck_assert_uint_eq(s.n, 10);
	ck_assert_uint_eq(s.first, 1);
	ck_assert_uint_eq(s.last, 10);
	ck_assert(s.ordered);
	ck_assert_uint_eq(f.records, 10);
	ck_assert_uint_eq(f.bytes, 640);
	ck_assert_uint_eq(f.dropped_records, 0);
	ck_assert_uint_eq(f.from, 5);		/* nothing dropped: from where it began */
	flight_free(&f);
}
END_TEST

/* 4 chunks of 256 bytes, 64-byte records: 16 fit; 40 come. */
START_TEST(test_drops_oldest)
{
	struct flight f;
	uint8_t	 buf[64];
	uint64_t i;
	struct seen s;

	flight_init(&f, 1024, 256, 0);
	ck_assert_uint_eq(f.maxchunks, 4);
	for (i = 1; i <= 40; i++) {
		ck_assert_int_eq(flight_append(&f, buf, rec_make(buf, 64, i), 1, 1000 * i), 0);
		ck_assert_uint_le(f.nchunks, 4);
		ck_assert_uint_le(f.bytes, 1024);
	}
	s = seen_all(&f);
	ck_assert(s.ordered);
	ck_assert_uint_eq(s.last, 40);
	/* The newest chunk holds 37..40; three full ones before it: 25..36. */
	ck_assert_uint_eq(s.first, 25);
	ck_assert_uint_eq(s.n, 16);
	ck_assert_uint_eq(f.records, 16);
	ck_assert_uint_eq(f.bytes, 16 * 64);
	ck_assert_uint_eq(f.dropped_records, 24);
	ck_assert_uint_eq(f.dropped_bytes, 24 * 64);
	ck_assert_uint_eq(f.records + f.dropped_records, 40);
	/* Record 24, the last dropped, was appended with bound 24000. */
	ck_assert_uint_eq(f.from, 24000);
	flight_free(&f);
}
END_TEST

/* One run of many records: split at record boundaries, the bound kept. */
START_TEST(test_run_split)
{
	struct flight f;
	uint8_t	 run[64 * 10];
	uint64_t i;
	struct seen s;

	flight_init(&f, 1024, 256, 0);
	for (i = 0; i < 10; i++)
		rec_make(run + 64 * i, 64, i + 1);
	ck_assert_int_eq(flight_append(&f, run, sizeof(run), 10, 50), 0);
	ck_assert_uint_eq(f.nchunks, 3);		/* 4 + 4 + 2 */
	for (i = 0; i < 10; i++)
		rec_make(run + 64 * i, 64, i + 11);
	ck_assert_int_eq(flight_append(&f, run, sizeof(run), 10, 60), 0);
	s = seen_all(&f);
	ck_assert(s.ordered);
	ck_assert_uint_eq(s.last, 20);
	ck_assert_uint_eq(s.first, 5);			/* the first chunk (1..4) went */
	ck_assert_uint_eq(f.dropped_records, 4);
	ck_assert_uint_eq(f.from, 50);
	flight_free(&f);
}
END_TEST

/* A record larger than a chunk: it and everything before it are dropped. */
START_TEST(test_too_big)
{
	struct flight f;
	uint8_t	 buf[512];
	struct seen s;

	flight_init(&f, 1024, 256, 0);
	ck_assert_int_eq(flight_append(&f, buf, rec_make(buf, 64, 1), 1, 10), 0);
	ck_assert_int_eq(flight_append(&f, buf, rec_make(buf, 64, 2), 1, 20), 0);
	ck_assert_int_eq(flight_append(&f, buf, rec_make(buf, 512, 3), 1, 30), -1);
	ck_assert_uint_eq(f.too_big, 1);
	ck_assert_uint_eq(f.records, 0);
	ck_assert_uint_eq(f.bytes, 0);
	ck_assert_uint_eq(f.dropped_records, 3);
	ck_assert_uint_eq(f.dropped_bytes, 64 + 64 + 512);
	ck_assert_uint_eq(f.from, 30);		/* a window without a hole: from after it */
	ck_assert_int_eq(flight_append(&f, buf, rec_make(buf, 64, 4), 1, 40), 0);
	s = seen_all(&f);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.first, 4);
	flight_free(&f);
}
END_TEST

/* A buffer of one chunk still turns over. */
START_TEST(test_one_chunk)
{
	struct flight f;
	uint8_t	 buf[64];
	uint64_t i;
	struct seen s;

	flight_init(&f, 256, 256, 0);
	for (i = 1; i <= 9; i++)
		ck_assert_int_eq(flight_append(&f, buf, rec_make(buf, 64, i), 1, i), 0);
	ck_assert_uint_eq(f.nchunks, 1);
	s = seen_all(&f);
	ck_assert_uint_eq(s.first, 9);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(f.from, 8);
	flight_free(&f);
}
END_TEST

START_TEST(test_expire)
{
	struct flight f;
	uint8_t	 buf[64];
	uint64_t i;
	struct seen s;

	flight_init(&f, 4096, 256, 0);
	for (i = 1; i <= 12; i++)	/* chunks: 1..4 (bound 4), 5..8 (8), 9..12 (12) */
		ck_assert_int_eq(flight_append(&f, buf, rec_make(buf, 64, i), 1, i), 0);
	flight_expire(&f, 7);		/* only the first chunk is all before 7 */
	s = seen_all(&f);
	ck_assert_uint_eq(s.first, 5);
	ck_assert_uint_eq(f.from, 4);
	ck_assert_uint_eq(f.dropped_records, 4);
	flight_expire(&f, 100);
	ck_assert_uint_eq(f.records, 0);
	ck_assert_uint_eq(f.nchunks, 0);
	ck_assert_uint_eq(f.from, 12);
	ck_assert_uint_eq(f.dropped_records, 12);
	/* and it fills again */
	ck_assert_int_eq(flight_append(&f, buf, rec_make(buf, 64, 13), 1, 13), 0);
	ck_assert_uint_eq(seen_all(&f).first, 13);
	flight_free(&f);
}
END_TEST

START_TEST(test_reset)
{
	struct flight f;
	uint8_t	 buf[64];
	uint64_t i;

	flight_init(&f, 1024, 256, 0);
	for (i = 1; i <= 20; i++)
		flight_append(&f, buf, rec_make(buf, 64, i), 1, i);
	ck_assert_uint_eq(f.dropped_records, 4);
	flight_reset(&f, 77);
	ck_assert_uint_eq(f.records, 0);
	ck_assert_uint_eq(f.bytes, 0);
	ck_assert_uint_eq(f.nchunks, 0);
	ck_assert_uint_eq(f.from, 77);
	ck_assert_uint_eq(f.dropped_records, 4);	/* written, not dropped */
	ck_assert_uint_eq(seen_all(&f).n, 0);
	flight_free(&f);
}
END_TEST

/* Not whole records (a zero or overlong size): dropped, counted, no loop. */
START_TEST(test_bad_run)
{
	struct flight f;
	uint8_t	 run[300];
	struct perf_event_header *h = (struct perf_event_header *)(run + 64);

	flight_init(&f, 1024, 256, 0);
	memset(run, 0, sizeof(run));
	rec_make(run, 64, 1);
	h->size = (uint16_t)(_i == 0 ? 0 : 4000);	/* forces the split walk: 300 > 256 */
	ck_assert_int_eq(flight_append(&f, run, sizeof(run), 3, 9), -1);
	ck_assert_uint_eq(f.bad, 1);
	ck_assert_uint_eq(seen_all(&f).n, 1);		/* what came before the damage */
	flight_free(&f);
}
END_TEST

static Suite *
flight_suite(void)
{
	Suite	*s = suite_create("flight");
	TCase	*tc = tcase_create("buffer");

	tcase_add_test(tc, test_keeps_in_order);
	tcase_add_test(tc, test_drops_oldest);
	tcase_add_test(tc, test_run_split);
	tcase_add_test(tc, test_too_big);
	tcase_add_test(tc, test_one_chunk);
	tcase_add_test(tc, test_expire);
	tcase_add_test(tc, test_reset);
	tcase_add_loop_test(tc, test_bad_run, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(flight_suite)
