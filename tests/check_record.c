/*
 * check_record.c - unit tests for common/record.c: decoding every record
 * type perfmapd reads (MMAP, both forms of MMAP2, MMAP3, COMM, FORK, EXIT,
 * LOST, LOST_SAMPLES, SAMPLE with a callchain) with and without the
 * sample_id trailer; malformed records refused with -EINVAL (records are
 * built in exactly-sized heap buffers so valgrind/ASan see any overread);
 * and build -> decode round trips.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "check_main.h"

#include "record.h"

#define ST_ALL	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

static const struct record_layout L_SID = { .sample_type = ST_ALL, .sample_id_all = 1 };
static const struct record_layout L_NOSID = { .sample_type = ST_ALL, .sample_id_all = 0 };
static const struct record_layout L_MMAP3 = { .sample_type = ST_ALL, .sample_id_all = 1, .mmap3 = 1 };
/* An event opened with attr.build_id: MMAP2's flag is believed. */
static const struct record_layout L_BID = { .sample_type = ST_ALL, .sample_id_all = 1, .build_id = 1 };
static const struct record_layout L_BID_NOSID = { .sample_type = ST_ALL, .build_id = 1 };

static const uint8_t BID[20] = {
	0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
	0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
};

/* A record under construction. */
struct rb {
	uint8_t	 b[4096];
	size_t	 len;
};

static void
rb_put(struct rb *r, const void *p, size_t n)
{
	ck_assert_uint_le(r->len + n, sizeof(r->b));
	memcpy(r->b + r->len, p, n);
	r->len += n;
}

static void
rb_u32(struct rb *r, uint32_t v)
{
	rb_put(r, &v, 4);
}

static void
rb_u64(struct rb *r, uint64_t v)
{
	rb_put(r, &v, 8);
}

static void
rb_u8(struct rb *r, uint8_t v)
{
	rb_put(r, &v, 1);
}

/* NUL-terminated, padded to 8 with NULs. */
static void
rb_str(struct rb *r, const char *s)
{
	rb_put(r, s, strlen(s) + 1);
	while (r->len % 8)
		rb_u8(r, 0);
}

static void
rb_start(struct rb *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };

	memset(r, 0, sizeof(*r));
	rb_put(r, &h, sizeof(h));
}

/* The sample_id trailer of ST_ALL: TID, TIME, CPU, IDENTIFIER. */
static void
rb_sid(struct rb *r)
{
	rb_u32(r, 1234);	/* pid */
	rb_u32(r, 1235);	/* tid */
	rb_u64(r, 987654321);	/* time */
	rb_u32(r, 3);		/* cpu */
	rb_u32(r, 0);
	rb_u64(r, 0x77);	/* identifier */
}

static void
rb_end(struct rb *r)
{
	uint16_t sz = (uint16_t)r->len;

	memcpy(r->b + 6, &sz, 2);
}

/* Decode the record from an exactly-sized heap copy (LEN bytes of it). */
static int
decode_n(const struct rb *r, size_t len, const struct record_layout *l, struct record *out,
    uint8_t **keep)
{
	uint8_t	*copy = malloc(len ? len : 1);
	int	 rc;

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, r->b, len);
	rc = record_decode(copy, len, l, out);
	if (keep != NULL)
		*keep = copy;		/* strings point into it */
	else
		free(copy);
	return rc;
}

static int
decode(const struct rb *r, const struct record_layout *l, struct record *out, uint8_t **keep)
{
	return decode_n(r, r->len, l, out, keep);
}

static void
check_sid(const struct record *d)
{
	ck_assert_int_eq(d->has_sid, 1);
	ck_assert_uint_eq(d->sid.pid, 1234);
	ck_assert_uint_eq(d->sid.tid, 1235);
	ck_assert_uint_eq(d->sid.time, 987654321);
	ck_assert_uint_eq(d->sid.cpu, 3);
	ck_assert_uint_eq(d->sid.id, 0x77);
}

START_TEST(test_sample_id_size)
{
	struct record_layout l = { .sample_type = ST_ALL, .sample_id_all = 1 };

	ck_assert_uint_eq(record_sample_id_size(&l), 32);
	l.sample_type |= PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID;
	ck_assert_uint_eq(record_sample_id_size(&l), 48);
	l.sample_id_all = 0;
	ck_assert_uint_eq(record_sample_id_size(&l), 0);
}
END_TEST

/* The size record_layout_init keeps, and a layout changed after it. */
START_TEST(test_sample_id_size_kept)
{
	struct perf_event_attr a = { .sample_type = ST_ALL, .sample_id_all = 1 };
	struct record_layout l;

	record_layout_init(&l, &a);
	ck_assert_uint_eq(record_sample_id_size(&l), 32);
	l.sample_type |= PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID;
	ck_assert_uint_eq(record_sample_id_size(&l), 48);
	l.sample_type = ST_ALL;
	ck_assert_uint_eq(record_sample_id_size(&l), 32);
	l.sample_id_all = 0;
	ck_assert_uint_eq(record_sample_id_size(&l), 0);
	a.sample_id_all = 0;
	record_layout_init(&l, &a);
	l.sample_id_all = 1;
	ck_assert_uint_eq(record_sample_id_size(&l), 32);
}
END_TEST

START_TEST(test_mmap)
{
	struct rb r;
	struct record d;
	uint8_t	*keep;

	rb_start(&r, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
	rb_u32(&r, 0xffffffff);
	rb_u32(&r, 0);
	rb_u64(&r, 0xffffffff81000000ULL);
	rb_u64(&r, 0x1000000);
	rb_u64(&r, 0xffffffff81000000ULL);
	rb_str(&r, "[kernel.kallsyms]_text");
	rb_sid(&r);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_SID, &d, &keep), 0);
	ck_assert_uint_eq(d.type, PERF_RECORD_MMAP);
	ck_assert_uint_eq(d.misc, PERF_RECORD_MISC_KERNEL);
	ck_assert_uint_eq(d.size, r.len);
	ck_assert_uint_eq(d.mmap.pid, 0xffffffff);
	ck_assert_uint_eq(d.mmap.addr, 0xffffffff81000000ULL);
	ck_assert_uint_eq(d.mmap.len, 0x1000000);
	ck_assert_uint_eq(d.mmap.pgoff, 0xffffffff81000000ULL);
	ck_assert_int_eq(d.mmap.has_inode, 0);
	ck_assert_uint_eq(d.mmap.build_id_size, 0);
	ck_assert_str_eq(d.mmap.filename, "[kernel.kallsyms]_text");
	check_sid(&d);
	free(keep);
}
END_TEST

/* MMAP2, maj/min/ino form. */
static void
mk_mmap2_plain(struct rb *r, const char *name, int sid)
{
	rb_start(r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	rb_u32(r, 100);
	rb_u32(r, 101);
	rb_u64(r, 0x400000);
	rb_u64(r, 0x2000);
	rb_u64(r, 0x1000);
	rb_u32(r, 8);		/* maj */
	rb_u32(r, 1);		/* min */
	rb_u64(r, 123456);	/* ino */
	rb_u64(r, 7);		/* ino_generation */
	rb_u32(r, 5);		/* prot */
	rb_u32(r, 2);		/* flags */
	rb_str(r, name);
	if (sid)
		rb_sid(r);
	rb_end(r);
}

START_TEST(test_mmap2_plain)
{
	struct rb r;
	struct record d;
	uint8_t	*keep;
	static const uint8_t zero[20];

	mk_mmap2_plain(&r, "/usr/bin/true", 1);
	ck_assert_uint_eq(r.len, 72 + 16 + 32);
	ck_assert_int_eq(decode(&r, &L_SID, &d, &keep), 0);
	ck_assert_uint_eq(d.type, PERF_RECORD_MMAP2);
	ck_assert_uint_eq(d.mmap.pid, 100);
	ck_assert_uint_eq(d.mmap.tid, 101);
	ck_assert_uint_eq(d.mmap.addr, 0x400000);
	ck_assert_uint_eq(d.mmap.len, 0x2000);
	ck_assert_uint_eq(d.mmap.pgoff, 0x1000);
	ck_assert_int_eq(d.mmap.has_inode, 1);
	ck_assert_uint_eq(d.mmap.maj, 8);
	ck_assert_uint_eq(d.mmap.min, 1);
	ck_assert_uint_eq(d.mmap.ino, 123456);
	ck_assert_uint_eq(d.mmap.ino_generation, 7);
	ck_assert_uint_eq(d.mmap.prot, 5);
	ck_assert_uint_eq(d.mmap.flags, 2);
	ck_assert_uint_eq(d.mmap.build_id_size, 0);
	ck_assert_mem_eq(d.mmap.build_id, zero, 20);
	ck_assert_str_eq(d.mmap.filename, "/usr/bin/true");
	check_sid(&d);
	free(keep);

	/* Without sample_id_all the same body decodes without sid. */
	mk_mmap2_plain(&r, "/usr/bin/true", 0);
	ck_assert_int_eq(decode(&r, &L_NOSID, &d, &keep), 0);
	ck_assert_int_eq(d.has_sid, 0);
	ck_assert_uint_eq(d.mmap.ino, 123456);
	ck_assert_str_eq(d.mmap.filename, "/usr/bin/true");
	free(keep);
}
END_TEST

/* MMAP2, build-id form. */
static void
mk_mmap2_bid(struct rb *r, uint8_t bidsz, const char *name)
{
	rb_start(r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	rb_u32(r, 200);
	rb_u32(r, 201);
	rb_u64(r, 0x7f0000001000ULL);
	rb_u64(r, 0x3000);
	rb_u64(r, 0x2000);
	rb_u8(r, bidsz);
	rb_u8(r, 0);
	rb_u8(r, 0);
	rb_u8(r, 0);
	rb_put(r, BID, 20);
	rb_u32(r, 5);
	rb_u32(r, 2);
	rb_str(r, name);
	rb_sid(r);
	rb_end(r);
}

START_TEST(test_mmap2_buildid)
{
	struct rb r;
	struct record d;
	uint8_t	*keep;

	mk_mmap2_bid(&r, 20, "/lib/x86_64-linux-gnu/libc.so.6");
	ck_assert_int_eq(decode(&r, &L_BID, &d, &keep), 0);
	ck_assert_uint_eq(d.type, PERF_RECORD_MMAP2);
	ck_assert_uint_eq(d.misc & PERF_RECORD_MISC_MMAP_BUILD_ID, PERF_RECORD_MISC_MMAP_BUILD_ID);
	ck_assert_uint_eq(d.mmap.pid, 200);
	ck_assert_uint_eq(d.mmap.tid, 201);
	ck_assert_uint_eq(d.mmap.addr, 0x7f0000001000ULL);
	ck_assert_uint_eq(d.mmap.len, 0x3000);
	ck_assert_uint_eq(d.mmap.pgoff, 0x2000);
	ck_assert_int_eq(d.mmap.has_inode, 0);
	ck_assert_uint_eq(d.mmap.maj, 0);
	ck_assert_uint_eq(d.mmap.ino, 0);
	ck_assert_uint_eq(d.mmap.build_id_size, 20);
	ck_assert_mem_eq(d.mmap.build_id, BID, 20);
	ck_assert_uint_eq(d.mmap.prot, 5);
	ck_assert_uint_eq(d.mmap.flags, 2);
	ck_assert_str_eq(d.mmap.filename, "/lib/x86_64-linux-gnu/libc.so.6");
	check_sid(&d);
	free(keep);

	mk_mmap2_bid(&r, 21, "/x");
	ck_assert_int_eq(decode(&r, &L_BID, &d, NULL), -EINVAL);
	mk_mmap2_bid(&r, 255, "/x");
	ck_assert_int_eq(decode(&r, &L_BID, &d, NULL), -EINVAL);
}
END_TEST

static void
mk_mmap3(struct rb *r, uint8_t bidsz, const uint8_t *bid, const char *name)
{
	static const uint8_t zero[20];

	rb_start(r, PERF_RECORD_MMAP3, PERF_RECORD_MISC_USER);
	rb_u32(r, 300);
	rb_u32(r, 301);
	rb_u64(r, 0x555555554000ULL);
	rb_u64(r, 0x5000);
	rb_u64(r, 0x0);
	rb_u32(r, 254);
	rb_u32(r, 3);
	rb_u64(r, 99);
	rb_u64(r, 4);
	rb_u32(r, 5);
	rb_u32(r, 0x1002);
	rb_u8(r, bidsz);
	rb_u8(r, 0);
	rb_u8(r, 0);
	rb_u8(r, 0);
	rb_put(r, bid ? bid : zero, 20);
	ck_assert_uint_eq(r->len, 96);		/* filename offset in perf_abi.h */
	rb_str(r, name);
	rb_sid(r);
	rb_end(r);
}

START_TEST(test_mmap3)
{
	struct rb r;
	struct record d;
	uint8_t	*keep;
	static const uint8_t zero[20];

	mk_mmap3(&r, 20, BID, "/usr/lib/libfoo.so");
	ck_assert_int_eq(decode(&r, &L_MMAP3, &d, &keep), 0);
	ck_assert_uint_eq(d.type, PERF_RECORD_MMAP3);
	ck_assert_str_eq(record_type_name(d.type, &L_MMAP3), "MMAP3");
	ck_assert_uint_eq(d.mmap.pid, 300);
	ck_assert_uint_eq(d.mmap.tid, 301);
	ck_assert_uint_eq(d.mmap.addr, 0x555555554000ULL);
	ck_assert_uint_eq(d.mmap.len, 0x5000);
	ck_assert_int_eq(d.mmap.has_inode, 1);
	ck_assert_uint_eq(d.mmap.maj, 254);
	ck_assert_uint_eq(d.mmap.min, 3);
	ck_assert_uint_eq(d.mmap.ino, 99);
	ck_assert_uint_eq(d.mmap.ino_generation, 4);
	ck_assert_uint_eq(d.mmap.prot, 5);
	ck_assert_uint_eq(d.mmap.flags, 0x1002);
	ck_assert_uint_eq(d.mmap.build_id_size, 20);
	ck_assert_mem_eq(d.mmap.build_id, BID, 20);
	ck_assert_str_eq(d.mmap.filename, "/usr/lib/libfoo.so");
	check_sid(&d);
	free(keep);

	/* No build-id: size 0, zeroed id. */
	mk_mmap3(&r, 0, NULL, "/usr/lib/libbar.so");
	ck_assert_int_eq(decode(&r, &L_MMAP3, &d, &keep), 0);
	ck_assert_uint_eq(d.mmap.build_id_size, 0);
	ck_assert_mem_eq(d.mmap.build_id, zero, 20);
	ck_assert_uint_eq(d.mmap.ino, 99);
	ck_assert_str_eq(d.mmap.filename, "/usr/lib/libbar.so");
	free(keep);

	mk_mmap3(&r, 21, BID, "/x");
	ck_assert_int_eq(decode(&r, &L_MMAP3, &d, NULL), -EINVAL);
}
END_TEST

/* The MMAP3 type without the mmap3 bit is something else: header and sid only. */
START_TEST(test_mmap3_type_without_bit)
{
	struct rb r;
	struct record d;

	mk_mmap3(&r, 20, BID, "/usr/lib/libfoo.so");
	ck_assert_int_eq(decode(&r, &L_SID, &d, NULL), 0);
	ck_assert_uint_eq(d.type, PERF_RECORD_MMAP3);
	ck_assert_uint_eq(d.mmap.pid, 0);
	ck_assert_uint_eq(d.mmap.addr, 0);
	ck_assert_uint_eq(d.mmap.build_id_size, 0);
	ck_assert_ptr_null(d.mmap.filename);
	check_sid(&d);
	ck_assert_str_ne(record_type_name(PERF_RECORD_MMAP3, &L_SID), "MMAP3");
	ck_assert_str_eq(record_type_name(PERF_RECORD_MMAP3, NULL), "UNKNOWN");
	/* Even a body that would be a malformed MMAP3 is not an error then. */
	mk_mmap3(&r, 200, BID, "/x");
	ck_assert_int_eq(decode(&r, &L_SID, &d, NULL), 0);
}
END_TEST

/*
 * The kernel's leak (record.h): an MMAP2 record in the maj/min/ino form
 * with PERF_RECORD_MISC_MMAP_BUILD_ID set, on an event opened without
 * attr.build_id, is the plain form; believing the flag would take the
 * major's low byte (8) as a build-id size and inode bytes as a build-id.
 */
START_TEST(test_mmap2_leaked_flag)
{
	struct rb r;
	struct record d;
	uint8_t	*keep;
	struct perf_event_header h;

	mk_mmap2_plain(&r, "/usr/bin/true", 1);
	memcpy(&h, r.b, sizeof(h));
	h.misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	memcpy(r.b, &h, sizeof(h));
	ck_assert_int_eq(decode(&r, &L_SID, &d, &keep), 0);
	ck_assert_uint_eq(d.misc & PERF_RECORD_MISC_MMAP_BUILD_ID, PERF_RECORD_MISC_MMAP_BUILD_ID);
	ck_assert_int_eq(d.mmap.has_inode, 1);
	ck_assert_uint_eq(d.mmap.maj, 8);
	ck_assert_uint_eq(d.mmap.min, 1);
	ck_assert_uint_eq(d.mmap.ino, 123456);
	ck_assert_uint_eq(d.mmap.ino_generation, 7);
	ck_assert_uint_eq(d.mmap.build_id_size, 0);
	ck_assert_str_eq(d.mmap.filename, "/usr/bin/true");
	free(keep);
	/* What a reader that trusts the flag gets: a wrong "build-id". */
	ck_assert_int_eq(decode(&r, &L_BID, &d, &keep), 0);
	ck_assert_uint_eq(d.mmap.build_id_size, 8);
	ck_assert_int_eq(d.mmap.has_inode, 0);
	free(keep);
	/* MMAP3 and the plain MMAP are not affected by the bit. */
	mk_mmap3(&r, 20, BID, "/usr/lib/libfoo.so");
	ck_assert_int_eq(decode(&r, &L_MMAP3, &d, NULL), 0);
	ck_assert_uint_eq(d.mmap.build_id_size, 20);
}
END_TEST

/* A file's records decode with the attr their id names. */
START_TEST(test_layouts_by_id)
{
	struct perf_event_attr sampling, sideband;
	struct record_layouts ls;
	struct record_sample_id sid = { 5, 5, 1000, 0, 0, 0 };
	struct record_mmap m;
	uint8_t	 out[512];
	uint64_t ids_s[2] = { 11, 12 }, ids_b[2] = { 21, 22 };
	struct record d;
	size_t	 n;

	memset(&sampling, 0, sizeof(sampling));
	sampling.sample_type = ST_ALL;
	sampling.sample_id_all = 1;
	sideband = sampling;
	perf_attr_set_flag(&sideband, PERF_ATTR_FLAG_BUILD_ID_BIT, 1);
	memset(&ls, 0, sizeof(ls));
	ck_assert_int_eq(record_layouts_add(&ls, &sampling, ids_s, 2), 0);
	ck_assert_int_eq(record_layouts_add(&ls, &sideband, ids_b, 2), 0);
	ck_assert_int_eq(ls.dflt.build_id, 0);

	memset(&m, 0, sizeof(m));
	m.pid = m.tid = 5;
	m.maj = 8;
	m.ino = 42;
	m.build_id_size = 20;
	memcpy(m.build_id, BID, 20);
	m.filename = "/usr/bin/true";
	sid.id = 22;
	n = record_build_mmap2(out, &m, 0, &L_BID, &sid);
	ck_assert_int_eq(record_layout_of(&ls, out, n)->build_id, 1);
	ck_assert_int_eq(record_decode(out, n, record_layout_of(&ls, out, n), &d), 0);
	ck_assert_uint_eq(d.mmap.build_id_size, 20);
	/* the same bytes under a sampling event's id: the flag is not believed */
	sid.id = 12;
	n = record_build_mmap2(out, &m, 0, &L_BID, &sid);
	ck_assert_int_eq(record_layout_of(&ls, out, n)->build_id, 0);
	/* an id no attr lists, and a record too short for one: the default */
	sid.id = 99;
	n = record_build_mmap2(out, &m, 0, &L_BID, &sid);
	ck_assert_ptr_eq(record_layout_of(&ls, out, n), &ls.dflt);
	ck_assert_ptr_eq(record_layout_of(&ls, out, 4), &ls.dflt);
	record_layouts_free(&ls);
}
END_TEST

START_TEST(test_comm)
{
	struct rb r;
	struct record d;
	uint8_t	*keep;

	rb_start(&r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	rb_u32(&r, 42);
	rb_u32(&r, 43);
	rb_str(&r, "bash");
	rb_sid(&r);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_SID, &d, &keep), 0);
	ck_assert_uint_eq(d.type, PERF_RECORD_COMM);
	ck_assert_uint_eq(d.misc, PERF_RECORD_MISC_COMM_EXEC);
	ck_assert_uint_eq(d.comm.pid, 42);
	ck_assert_uint_eq(d.comm.tid, 43);
	ck_assert_str_eq(d.comm.comm, "bash");
	check_sid(&d);
	free(keep);
}
END_TEST

START_TEST(test_fork_exit)
{
	static const uint32_t types[] = { PERF_RECORD_FORK, PERF_RECORD_EXIT };
	struct rb r;
	struct record d;
	int	 i;

	for (i = 0; i < 2; i++) {
		rb_start(&r, types[i], 0);
		rb_u32(&r, 10);		/* pid */
		rb_u32(&r, 11);		/* ppid */
		rb_u32(&r, 12);		/* tid */
		rb_u32(&r, 13);		/* ptid */
		rb_u64(&r, 5555);	/* time */
		rb_sid(&r);
		rb_end(&r);
		ck_assert_int_eq(decode(&r, &L_SID, &d, NULL), 0);
		ck_assert_uint_eq(d.type, types[i]);
		ck_assert_uint_eq(d.task.pid, 10);
		ck_assert_uint_eq(d.task.ppid, 11);
		ck_assert_uint_eq(d.task.tid, 12);
		ck_assert_uint_eq(d.task.ptid, 13);
		ck_assert_uint_eq(d.task.time, 5555);
		check_sid(&d);
		/* One u64 short of a body. */
		rb_start(&r, types[i], 0);
		rb_u32(&r, 10);
		rb_u32(&r, 11);
		rb_u32(&r, 12);
		rb_u32(&r, 13);
		rb_sid(&r);
		rb_end(&r);
		ck_assert_int_eq(decode(&r, &L_SID, &d, NULL), -EINVAL);
	}
}
END_TEST

START_TEST(test_lost)
{
	struct rb r;
	struct record d;

	rb_start(&r, PERF_RECORD_LOST, 0);
	rb_u64(&r, 0x77);
	rb_u64(&r, 31337);
	rb_sid(&r);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_SID, &d, NULL), 0);
	ck_assert_uint_eq(d.type, PERF_RECORD_LOST);
	ck_assert_uint_eq(d.lost.id, 0x77);
	ck_assert_uint_eq(d.lost.lost, 31337);
	check_sid(&d);

	rb_start(&r, PERF_RECORD_LOST_SAMPLES, 0);
	rb_u64(&r, 4242);
	rb_sid(&r);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_SID, &d, NULL), 0);
	ck_assert_uint_eq(d.type, PERF_RECORD_LOST_SAMPLES);
	ck_assert_uint_eq(d.lost_samples.lost, 4242);
	check_sid(&d);

	/* LOST without its body (sid only). */
	rb_start(&r, PERF_RECORD_LOST, 0);
	rb_u64(&r, 1);
	rb_sid(&r);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_SID, &d, NULL), -EINVAL);
	/* LOST_SAMPLES with nothing but a header. */
	rb_start(&r, PERF_RECORD_LOST_SAMPLES, 0);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_NOSID, &d, NULL), -EINVAL);
	ck_assert_int_eq(decode(&r, &L_SID, &d, NULL), -EINVAL);
}
END_TEST

static void
mk_sample(struct rb *r, uint64_t nr, size_t nips)
{
	size_t	 i;

	rb_start(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_u64(r, 0x99);		/* IDENTIFIER */
	rb_u64(r, 0x401234);		/* IP */
	rb_u32(r, 500);			/* pid */
	rb_u32(r, 501);			/* tid */
	rb_u64(r, 1000000007);		/* TIME */
	rb_u32(r, 1);			/* CPU */
	rb_u32(r, 0);
	rb_u64(r, 250000);		/* PERIOD */
	rb_u64(r, nr);			/* CALLCHAIN nr */
	for (i = 0; i < nips; i++)
		rb_u64(r, 0x401234 + 0x10 * i);
	rb_end(r);
}

START_TEST(test_sample)
{
	struct record_layout l = { .sample_type = ST_ALL | PERF_SAMPLE_CALLCHAIN, .sample_id_all = 1 };
	struct rb r;
	struct record d;
	uint8_t	*keep;
	uint64_t i;

	mk_sample(&r, 5, 5);
	ck_assert_int_eq(decode(&r, &l, &d, &keep), 0);
	ck_assert_uint_eq(d.type, PERF_RECORD_SAMPLE);
	ck_assert_int_eq(d.has_sid, 1);
	ck_assert_uint_eq(d.sid.id, 0x99);
	ck_assert_uint_eq(d.sid.pid, 500);
	ck_assert_uint_eq(d.sid.tid, 501);
	ck_assert_uint_eq(d.sid.time, 1000000007);
	ck_assert_uint_eq(d.sid.cpu, 1);
	ck_assert_uint_eq(d.sample.ip, 0x401234);
	ck_assert_uint_eq(d.sample.period, 250000);
	ck_assert_uint_eq(d.sample.nr, 5);
	ck_assert_ptr_nonnull(d.sample.ips);
	for (i = 0; i < 5; i++)
		ck_assert_uint_eq(d.sample.ips[i], 0x401234 + 0x10 * i);
	free(keep);

	/* Empty callchain. */
	mk_sample(&r, 0, 0);
	ck_assert_int_eq(decode(&r, &l, &d, NULL), 0);
	ck_assert_uint_eq(d.sample.nr, 0);

	/* nr past the end: one too many, and huge values that overflow nr * 8. */
	mk_sample(&r, 6, 5);
	ck_assert_int_eq(decode(&r, &l, &d, NULL), -EINVAL);
	mk_sample(&r, UINT64_MAX, 2);
	ck_assert_int_eq(decode(&r, &l, &d, NULL), -EINVAL);
	mk_sample(&r, (UINT64_MAX / 8) + 1, 2);
	ck_assert_int_eq(decode(&r, &l, &d, NULL), -EINVAL);
	mk_sample(&r, 1ULL << 61, 2);
	ck_assert_int_eq(decode(&r, &l, &d, NULL), -EINVAL);

	/* Callchain nr missing altogether. */
	rb_start(&r, PERF_RECORD_SAMPLE, 0);
	rb_u64(&r, 0x99);
	rb_u64(&r, 0x401234);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &l, &d, NULL), -EINVAL);
	/* Truncated in the fixed fields. */
	rb_start(&r, PERF_RECORD_SAMPLE, 0);
	rb_u64(&r, 0x99);
	rb_u64(&r, 0x401234);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &l, &d, NULL), -EINVAL);
}
END_TEST

START_TEST(test_user_types_and_unknown)
{
	struct rb r;
	struct record d;

	rb_start(&r, PERF_RECORD_FINISHED_ROUND, 0);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_SID, &d, NULL), 0);
	ck_assert_uint_eq(d.type, PERF_RECORD_FINISHED_ROUND);
	ck_assert_int_eq(d.has_sid, 0);
	ck_assert_str_eq(record_type_name(d.type, &L_SID), "FINISHED_ROUND");
	ck_assert_str_eq(record_type_name(PERF_RECORD_MMAP2, NULL), "MMAP2");
	ck_assert_str_eq(record_type_name(PERF_RECORD_SAMPLE, NULL), "SAMPLE");
	ck_assert_str_eq(record_type_name(1000, NULL), "UNKNOWN");

	/* Unknown kernel type: header and sid. */
	rb_start(&r, PERF_RECORD_THROTTLE, 0);
	rb_u64(&r, 1);
	rb_u64(&r, 2);
	rb_u64(&r, 3);
	rb_sid(&r);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_SID, &d, NULL), 0);
	check_sid(&d);
	/* ...but too short for the sid trailer. */
	rb_start(&r, PERF_RECORD_THROTTLE, 0);
	rb_u64(&r, 1);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_SID, &d, NULL), -EINVAL);
}
END_TEST

/* Header-level damage, for every type the decoder knows. */
START_TEST(test_bad_sizes)
{
	struct rb r;
	struct record d;
	uint16_t sz;

	mk_mmap2_plain(&r, "/usr/bin/true", 1);
	/* size not a multiple of 8 */
	sz = (uint16_t)(r.len - 4);
	memcpy(r.b + 6, &sz, 2);
	ck_assert_int_eq(decode_n(&r, r.len, &L_SID, &d, NULL), -EINVAL);
	sz = (uint16_t)(r.len + 1);
	memcpy(r.b + 6, &sz, 2);
	ck_assert_int_eq(decode_n(&r, r.len + 1, &L_SID, &d, NULL), -EINVAL);
	/* size > len */
	rb_end(&r);
	ck_assert_int_eq(decode_n(&r, r.len - 8, &L_SID, &d, NULL), -EINVAL);
	/* size < 8 */
	for (sz = 0; sz < 8; sz++) {
		memcpy(r.b + 6, &sz, 2);
		ck_assert_int_eq(decode_n(&r, r.len, &L_SID, &d, NULL), -EINVAL);
	}
	/* len < header */
	ck_assert_int_eq(decode_n(&r, 4, &L_SID, &d, NULL), -EINVAL);
	ck_assert_int_eq(decode_n(&r, 0, &L_SID, &d, NULL), -EINVAL);
	/* size 8: header only, too short for any MMAP2 body */
	sz = 8;
	memcpy(r.b + 6, &sz, 2);
	ck_assert_int_eq(decode_n(&r, 8, &L_NOSID, &d, NULL), -EINVAL);
	/* len larger than size is fine: the record is size bytes */
	rb_end(&r);
	ck_assert_int_eq(decode_n(&r, r.len, &L_SID, &d, NULL), 0);
}
END_TEST

/* Unterminated strings: the NUL and its padding removed. */
START_TEST(test_unterminated)
{
	struct rb r;
	struct record d;

	/* MMAP2: 8-char name fills its slot with no NUL. */
	rb_start(&r, PERF_RECORD_MMAP2, 0);
	rb_u32(&r, 1);
	rb_u32(&r, 1);
	rb_u64(&r, 0x1000);
	rb_u64(&r, 0x1000);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_put(&r, "/bin/abc", 8);
	rb_sid(&r);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_SID, &d, NULL), -EINVAL);
	/* Without a sid the trailer bytes are not a terminator either. */
	rb_start(&r, PERF_RECORD_MMAP2, 0);
	rb_u32(&r, 1);
	rb_u32(&r, 1);
	rb_u64(&r, 0x1000);
	rb_u64(&r, 0x1000);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_put(&r, "/bin/abc", 8);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_NOSID, &d, NULL), -EINVAL);
	/* MMAP2 with no room for a filename at all. */
	rb_start(&r, PERF_RECORD_MMAP2, 0);
	rb_u32(&r, 1);
	rb_u32(&r, 1);
	rb_u64(&r, 0x1000);
	rb_u64(&r, 0x1000);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_u64(&r, 0);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_NOSID, &d, NULL), -EINVAL);

	/* COMM: 16 chars, no NUL, then the sid whose first byte is not 0. */
	rb_start(&r, PERF_RECORD_COMM, 0);
	rb_u32(&r, 1);
	rb_u32(&r, 1);
	rb_put(&r, "abcdefghijklmnop", 16);
	rb_sid(&r);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_SID, &d, NULL), -EINVAL);
	/* COMM without pid/tid. */
	rb_start(&r, PERF_RECORD_COMM, 0);
	rb_sid(&r);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_SID, &d, NULL), -EINVAL);

	/* MMAP (old) and MMAP3 too. */
	rb_start(&r, PERF_RECORD_MMAP, 0);
	rb_u32(&r, 1);
	rb_u32(&r, 1);
	rb_u64(&r, 0x1000);
	rb_u64(&r, 0x1000);
	rb_u64(&r, 0);
	rb_put(&r, "12345678", 8);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &L_NOSID, &d, NULL), -EINVAL);
	mk_mmap3(&r, 20, BID, "/y");
	r.len -= 32;				/* drop the sid */
	r.len -= 8;				/* and the name */
	rb_put(&r, "ABCDEFGH", 8);
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &(struct record_layout){ .sample_type = ST_ALL, .mmap3 = 1 }, &d, NULL), -EINVAL);
	/* MMAP3 cut inside its fixed part. */
	mk_mmap3(&r, 20, BID, "/y");
	r.len = 88;
	rb_end(&r);
	ck_assert_int_eq(decode(&r, &(struct record_layout){ .mmap3 = 1 }, &d, NULL), -EINVAL);
}
END_TEST

/* Round trips through the builders. */
static uint8_t *
out_buf(void)
{
	uint8_t	*p = malloc(sizeof(struct mmap2_record) + 4096 + 8 + 64);

	ck_assert_ptr_nonnull(p);
	memset(p, 0xa5, sizeof(struct mmap2_record) + 4096 + 8 + 64);
	return p;
}

/* The padding after the NUL of the string at OFF in a SIZE-byte record. */
static void
check_padding(const uint8_t *rec, size_t off, const char *s, size_t end)
{
	size_t	 n = strlen(s) + 1, i, padded = (n + 7) & ~(size_t)7;

	ck_assert_mem_eq(rec + off, s, n);
	for (i = off + n; i < off + padded; i++)
		ck_assert_uint_eq(rec[i], 0);
	ck_assert_uint_eq(off + padded, end);
}

static const struct record_sample_id SID = {
	.pid = 1234, .tid = 1235, .time = 987654321, .id = 0x77, .cpu = 3,
};

static const char *const names[] = {
	"/a", "/bin/true", "/usr/lib/x86_64-linux-gnu/libc.so.6", "1234567", "12345678", "",
};

START_TEST(test_roundtrip_mmap2)
{
	struct record_mmap m;
	struct record d;
	uint8_t	*out = out_buf();
	size_t	 n;

	memset(&m, 0, sizeof(m));
	m.pid = 7;
	m.tid = 8;
	m.addr = 0x7fff0000;
	m.len = 0x4000;
	m.pgoff = 0x3000;
	m.prot = 5;
	m.flags = 2;
	m.maj = 8;
	m.min = 3;
	m.ino = 42;
	m.ino_generation = 9;
	m.build_id_size = 20;
	memcpy(m.build_id, BID, 20);
	m.filename = names[_i];

	/* build-id form */
	n = record_build_mmap2(out, &m, PERF_RECORD_MISC_USER, &L_BID, &SID);
	ck_assert_uint_eq(n % 8, 0);
	ck_assert_int_eq(record_decode(out, n, &L_BID, &d), 0);
	ck_assert_uint_eq(d.size, n);
	ck_assert_uint_eq(d.type, PERF_RECORD_MMAP2);
	ck_assert_uint_eq(d.misc, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	ck_assert_uint_eq(d.mmap.pid, 7);
	ck_assert_uint_eq(d.mmap.tid, 8);
	ck_assert_uint_eq(d.mmap.addr, 0x7fff0000);
	ck_assert_uint_eq(d.mmap.len, 0x4000);
	ck_assert_uint_eq(d.mmap.pgoff, 0x3000);
	ck_assert_uint_eq(d.mmap.prot, 5);
	ck_assert_uint_eq(d.mmap.flags, 2);
	ck_assert_uint_eq(d.mmap.build_id_size, 20);
	ck_assert_mem_eq(d.mmap.build_id, BID, 20);
	ck_assert_int_eq(d.mmap.has_inode, 0);
	ck_assert_str_eq(d.mmap.filename, names[_i]);
	check_padding(out, 72, names[_i], n - 32);
	check_sid(&d);

	/* short build-id: the rest of the 20 bytes zero */
	m.build_id_size = 8;
	n = record_build_mmap2(out, &m, 0, &L_BID, &SID);
	ck_assert_int_eq(record_decode(out, n, &L_BID, &d), 0);
	ck_assert_uint_eq(d.mmap.build_id_size, 8);
	ck_assert_mem_eq(d.mmap.build_id, BID, 8);
	ck_assert_uint_eq(d.mmap.build_id[8], 0);
	ck_assert_uint_eq(d.mmap.build_id[19], 0);

	/* no build-id: record_build_mmap2 falls back to the plain form */
	m.build_id_size = 0;
	n = record_build_mmap2(out, &m, PERF_RECORD_MISC_MMAP_BUILD_ID, &L_BID, &SID);
	ck_assert_int_eq(record_decode(out, n, &L_BID, &d), 0);
	ck_assert_uint_eq(d.misc & PERF_RECORD_MISC_MMAP_BUILD_ID, 0);
	ck_assert_int_eq(d.mmap.has_inode, 1);
	ck_assert_uint_eq(d.mmap.ino, 42);

	/* plain form, without sid */
	m.build_id_size = 20;
	n = record_build_mmap2_plain(out, &m, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID,
	    &L_NOSID, &SID);
	ck_assert_uint_eq(n % 8, 0);
	ck_assert_int_eq(record_decode(out, n, &L_BID_NOSID, &d), 0);
	ck_assert_uint_eq(d.size, n);
	ck_assert_uint_eq(d.misc, PERF_RECORD_MISC_USER);
	ck_assert_int_eq(d.has_sid, 0);
	ck_assert_int_eq(d.mmap.has_inode, 1);
	ck_assert_uint_eq(d.mmap.maj, 8);
	ck_assert_uint_eq(d.mmap.min, 3);
	ck_assert_uint_eq(d.mmap.ino, 42);
	ck_assert_uint_eq(d.mmap.ino_generation, 9);
	ck_assert_uint_eq(d.mmap.build_id_size, 0);
	ck_assert_uint_eq(d.mmap.prot, 5);
	ck_assert_str_eq(d.mmap.filename, names[_i]);
	check_padding(out, 72, names[_i], n);
	free(out);
}
END_TEST

START_TEST(test_roundtrip_mmap_comm)
{
	struct record_mmap m;
	struct record d;
	uint8_t	*out = out_buf();
	size_t	 n;

	memset(&m, 0, sizeof(m));
	m.pid = UINT32_MAX;
	m.tid = 0;
	m.addr = 0xffffffff81000000ULL;
	m.len = 0x2000000;
	m.pgoff = 0xffffffff81000000ULL;
	m.filename = names[_i];
	n = record_build_mmap(out, &m, PERF_RECORD_MISC_KERNEL, &L_SID, &SID);
	ck_assert_uint_eq(n % 8, 0);
	ck_assert_int_eq(record_decode(out, n, &L_SID, &d), 0);
	ck_assert_uint_eq(d.type, PERF_RECORD_MMAP);
	ck_assert_uint_eq(d.size, n);
	ck_assert_uint_eq(d.misc, PERF_RECORD_MISC_KERNEL);
	ck_assert_uint_eq(d.mmap.pid, UINT32_MAX);
	ck_assert_uint_eq(d.mmap.addr, 0xffffffff81000000ULL);
	ck_assert_uint_eq(d.mmap.len, 0x2000000);
	ck_assert_uint_eq(d.mmap.pgoff, 0xffffffff81000000ULL);
	ck_assert_str_eq(d.mmap.filename, names[_i]);
	check_padding(out, 40, names[_i], n - 32);
	check_sid(&d);

	n = record_build_comm(out, 55, 56, names[_i], PERF_RECORD_MISC_COMM_EXEC, &L_SID, &SID);
	ck_assert_uint_eq(n % 8, 0);
	ck_assert_int_eq(record_decode(out, n, &L_SID, &d), 0);
	ck_assert_uint_eq(d.type, PERF_RECORD_COMM);
	ck_assert_uint_eq(d.size, n);
	ck_assert_uint_eq(d.misc, PERF_RECORD_MISC_COMM_EXEC);
	ck_assert_uint_eq(d.comm.pid, 55);
	ck_assert_uint_eq(d.comm.tid, 56);
	ck_assert_str_eq(d.comm.comm, names[_i]);
	check_padding(out, 16, names[_i], n - 32);
	check_sid(&d);

	n = record_build_comm(out, 55, 56, names[_i], 0, &L_NOSID, &SID);
	ck_assert_int_eq(record_decode(out, n, &L_NOSID, &d), 0);
	ck_assert_int_eq(d.has_sid, 0);
	check_padding(out, 16, names[_i], n);
	free(out);
}
END_TEST

START_TEST(test_encode_sample_id)
{
	struct record_layout l = {
		.sample_type = ST_ALL | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID,
		.sample_id_all = 1,
	};
	struct record_sample_id sid = SID;
	uint8_t	 buf[48];
	uint64_t v;
	uint32_t w;

	sid.stream_id = 0x5151;
	memset(buf, 0xff, sizeof(buf));
	record_encode_sample_id(&l, &sid, buf);
	memcpy(&w, buf, 4);
	ck_assert_uint_eq(w, 1234);
	memcpy(&w, buf + 4, 4);
	ck_assert_uint_eq(w, 1235);
	memcpy(&v, buf + 8, 8);
	ck_assert_uint_eq(v, 987654321);
	memcpy(&v, buf + 16, 8);
	ck_assert_uint_eq(v, 0x77);		/* ID */
	memcpy(&v, buf + 24, 8);
	ck_assert_uint_eq(v, 0x5151);		/* STREAM_ID */
	memcpy(&w, buf + 32, 4);
	ck_assert_uint_eq(w, 3);		/* CPU */
	memcpy(&w, buf + 36, 4);
	ck_assert_uint_eq(w, 0);		/* res */
	memcpy(&v, buf + 40, 8);
	ck_assert_uint_eq(v, 0x77);		/* IDENTIFIER */

	/* No sample_id_all: nothing written. */
	l.sample_id_all = 0;
	memset(buf, 0xff, sizeof(buf));
	record_encode_sample_id(&l, &sid, buf);
	ck_assert_uint_eq(buf[0], 0xff);
}
END_TEST

/* record_time() must find the same time as record_decode(), or refuse. */
START_TEST(test_record_time_agrees)
{
	static const uint64_t types[] = {
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
		PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
		PERF_SAMPLE_IP | PERF_SAMPLE_TIME | PERF_SAMPLE_ID,
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID,		/* no time */
	};
	uint8_t	 buf[512];
	size_t	 i, j;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct record_layout l = { .sample_type = types[i], .sample_id_all = 1 };
		struct record_sample_id sid = { 11, 12, 0x1122334455667788ULL, 99, 0, 1 };
		struct record_mmap m;
		struct record r;
		uint64_t t;
		size_t	 n;

		memset(&m, 0, sizeof(m));
		m.pid = m.tid = 11;
		m.filename = "/usr/bin/true";
		n = record_build_mmap2_plain(buf, &m, 0, &l, &sid);
		ck_assert_int_eq(record_decode(buf, n, &l, &r), 0);
		if (types[i] & PERF_SAMPLE_TIME) {
			ck_assert_int_eq(record_time(buf, n, &l, &t), 0);
			ck_assert_uint_eq(t, r.sid.time);
			ck_assert_uint_eq(t, 0x1122334455667788ULL);
		} else
			ck_assert_int_eq(record_time(buf, n, &l, &t), -1);

		/* a SAMPLE laid out by hand: each u64 field in order */
		{
			uint64_t *q = (uint64_t *)(void *)(buf + 8);
			struct perf_event_header *h = (struct perf_event_header *)(void *)buf;
			size_t	 k = 0;

			if (types[i] & PERF_SAMPLE_IDENTIFIER) q[k++] = 1;
			if (types[i] & PERF_SAMPLE_IP) q[k++] = 0x401000;
			if (types[i] & PERF_SAMPLE_TID) q[k++] = (12ULL << 32) | 11;
			if (types[i] & PERF_SAMPLE_TIME) q[k++] = 777;
			if (types[i] & PERF_SAMPLE_ID) q[k++] = 5;
			if (types[i] & PERF_SAMPLE_CPU) q[k++] = 0;
			if (types[i] & PERF_SAMPLE_PERIOD) q[k++] = 1000;
			if (types[i] & PERF_SAMPLE_CALLCHAIN) q[k++] = 0;
			h->type = PERF_RECORD_SAMPLE;
			h->misc = 0;
			h->size = (uint16_t)(8 + 8 * k);
			ck_assert_int_eq(record_decode(buf, h->size, &l, &r), 0);
			if (types[i] & PERF_SAMPLE_TIME) {
				ck_assert_int_eq(record_time(buf, h->size, &l, &t), 0);
				ck_assert_uint_eq(t, 777);
				ck_assert_uint_eq(t, r.sid.time);
			}
			/* every truncation is refused or agrees, never read past */
			for (j = 0; j < h->size; j += 8)
				if (record_time(buf, j, &l, &t) == 0)
					ck_abort_msg("time from a record cut to %zu bytes", j);
		}
	}
}
END_TEST

/*
 * record_clock_time() answers as record_time() does, for every sample_type
 * of the fields that come before or around the time, with and without
 * sample_id_all, for samples, kernel records and perf's own types, at
 * every size from nothing to a whole record.
 */
START_TEST(test_record_clock_agrees)
{
	static const uint64_t bits[] = {
		PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
		PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD,
	};
	static const uint32_t types[] = {
		PERF_RECORD_SAMPLE, PERF_RECORD_MMAP2, PERF_RECORD_COMM, PERF_RECORD_EXIT,
		PERF_RECORD_USER_TYPE_START, PERF_RECORD_USER_TYPE_START + 4, 30,
	};
	uint8_t	 buf[256];
	unsigned mask, k, agreed = 0, timed = 0;
	size_t	 i, size;
	int	 all;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + 11);
	for (mask = 0; mask < 1u << 8; mask++)
		for (all = 0; all <= 1; all++) {
			struct record_layout l = { .sample_id_all = all };
			struct record_clock c;

			for (k = 0; k < 8; k++)
				if (mask & (1u << k))
					l.sample_type |= bits[k];
			record_clock_init(&c, &l);
			for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
				for (size = 0; size <= 120; size += 4) {
					struct perf_event_header *h = (void *)buf;
					uint64_t t1 = 0, t2 = 0;
					int	 a, b;

					h->type = types[i];
					h->misc = 0;
					h->size = (uint16_t)size;
					a = record_time(buf, size, &l, &t1);
					b = record_clock_time(&c, h, &t2);
					if (a != b || (a == 0 && t1 != t2))
						ck_abort_msg("sample_type %#llx, sample_id_all %d, type %u, "
						    "size %zu: record_time %d (%#llx), record_clock_time %d (%#llx)",
						    (unsigned long long)l.sample_type, all, types[i], size,
						    a, (unsigned long long)t1, b, (unsigned long long)t2);
					agreed++;
					timed += a == 0;
				}
		}
	/* not a comparison of two refusals: here 17,408 of 111,104 have a time */
	ck_assert_uint_gt(timed, agreed / 10);
}
END_TEST

/* Anonymous memory by name, as perf's is_anon_memory and named anonymous memory. */
START_TEST(test_name_is_anon)
{
	static const char *const anon[] = { "//anon", "//anon (deleted)", "/dev/zero",
	    "/dev/zero (deleted)", "/anon_hugepage", "/anon_hugepage (deleted)",
	    "[anon:v8]", "[anon:]" };
	static const char *const not[] = { "", "/", "//", "//ano", "/dev/zer", "/dev/null",
	    "/anon_hugepag", "/usr/lib/libc.so.6", "[vdso]", "[anon", "[heap]", "anon",
	    "/a", "/d", "x//anon", "/lib//anon" };
	size_t	 i;

	for (i = 0; i < sizeof(anon) / sizeof(anon[0]); i++)
		ck_assert_msg(record_name_is_anon(anon[i]), "%s", anon[i]);
	for (i = 0; i < sizeof(not) / sizeof(not[0]); i++)
		ck_assert_msg(!record_name_is_anon(not[i]), "%s", not[i]);
}
END_TEST

static Suite *
record_suite(void)
{
	Suite	*s = suite_create("record");
	TCase	*tc;

	tc = tcase_create("decode");
	tcase_add_test(tc, test_sample_id_size);
	tcase_add_test(tc, test_sample_id_size_kept);
	tcase_add_test(tc, test_record_time_agrees);
	tcase_add_test(tc, test_record_clock_agrees);
	tcase_add_test(tc, test_mmap);
	tcase_add_test(tc, test_mmap2_plain);
	tcase_add_test(tc, test_mmap2_buildid);
	tcase_add_test(tc, test_mmap3);
	tcase_add_test(tc, test_mmap3_type_without_bit);
	tcase_add_test(tc, test_mmap2_leaked_flag);
	tcase_add_test(tc, test_layouts_by_id);
	tcase_add_test(tc, test_comm);
	tcase_add_test(tc, test_fork_exit);
	tcase_add_test(tc, test_lost);
	tcase_add_test(tc, test_sample);
	tcase_add_test(tc, test_user_types_and_unknown);
	tcase_add_test(tc, test_name_is_anon);
	suite_add_tcase(s, tc);

	tc = tcase_create("malformed");
	tcase_add_test(tc, test_bad_sizes);
	tcase_add_test(tc, test_unterminated);
	suite_add_tcase(s, tc);

	tc = tcase_create("roundtrip");
	tcase_add_loop_test(tc, test_roundtrip_mmap2, 0, sizeof(names) / sizeof(names[0]));
	tcase_add_loop_test(tc, test_roundtrip_mmap_comm, 0, sizeof(names) / sizeof(names[0]));
	tcase_add_test(tc, test_encode_sample_id);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(record_suite)
