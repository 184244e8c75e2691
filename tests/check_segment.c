/*
 * check_segment.c - unit tests for daemon/record/segment.c's retention by
 * age: a segment older than keep_age goes (the newest always stays); one
 * whose time is in the future - the clock stepped back after it was
 * written - is not old.  Before, now minus a later time wrapped around to
 * a huge age, and a clock stepped back deleted every segment but the
 * newest.  And a write into a full disk: room made by the owner, and the
 * write done (the start state and flight snapshots wrote without it).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <check.h>

#include "check_main.h"
#include "check_tmpfs.h"

#include "perf_abi.h"
#include "record/binaries.h"
#include "record/segment.h"

/* The name of segment SEQ in DIR, in PATH (512 bytes). */
static const char *
seg_path(char *path, const char *dir, int seq)
{
	snprintf(path, 512, "%s/perf-%06d-20261129T000000Z.data", dir, seq);
	return path;
}

/* A segment file SEQ in DIR whose modification time is AGO_S seconds ago. */
static void
make_segment(const char *dir, int seq, long ago_s)
{
	char	 path[512];
	struct timeval tv[2];

	check_write_file(seg_path(path, dir, seq), "x", 1);
	gettimeofday(&tv[0], NULL);
	tv[0].tv_sec -= ago_s;
	tv[1] = tv[0];
	ck_assert_int_eq(utimes(path, tv), 0);
}

static void
remove_segment(const char *dir, int seq)
{
	char	 path[512];

	unlink(seg_path(path, dir, seq));
}

static int
exists(const char *dir, int seq)
{
	char	 path[512];

	return access(seg_path(path, dir, seq), F_OK) == 0;
}

START_TEST(test_retention_age)
{
	char	 dir[] = "/tmp/check_segment.XXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	make_segment(dir, 1, 7200);		/* two hours old: goes */
	make_segment(dir, 2, -86400);		/* a day ahead (clock stepped back): stays */
	make_segment(dir, 3, 60);		/* the newest */
	ck_assert_int_eq(segment_retention(dir, 0, 0, 3600 * 1000, NULL, NULL), 1);
	ck_assert(!exists(dir, 1));
	ck_assert_msg(exists(dir, 2), "a segment whose time is ahead of the clock was deleted");
	ck_assert(exists(dir, 3));
	remove_segment(dir, 2);
	remove_segment(dir, 3);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static int	 rooms;

/* A cpu-clock event with the one sample id ID, as the tests' segments have it. */
static void
seg_attr(struct perfdata_attr *a, const uint64_t *id)
{
	memset(a, 0, sizeof(*a));
	a->attr.size = PERF_FILE_ATTR_SIZE;
	a->attr.type = PERF_TYPE_SOFTWARE;
	a->attr.config = PERF_COUNT_SW_CPU_CLOCK;
	a->attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME;
	a->name = "cpu-clock";
	a->ids = id;
	a->nids = 1;
}

/* The owner's room: the filler ARG deleted, once. */
static int
room_test(void *arg)
{
	rooms++;
	return unlink(arg) == 0 ? 0 : -1;
}

/*
 * A segment on a full file system (a 2 MiB tmpfs, 1.5 MiB of it a filler):
 * its first flush fails for want of space, the owner's room deletes the
 * filler, and every write goes through, counted once.  Before, the start
 * state and a flight snapshot's writes stopped at the first ENOSPC (only
 * the recorder's own writes made room), leaving a start state cut short.
 */
START_TEST(test_room_on_full_disk)
{
	char	 dir[] = "/tmp/check_segment.XXXXXX", filler[600];
	struct segment seg;
	struct perfdata_attr a;
	struct perf_event_header fr = { PERF_RECORD_FINISHED_ROUND, 0, 8 };
	uint8_t	 buf[4096];
	uint64_t id = 1;
	size_t	 i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	if (geteuid() != 0) {
		printf("SKIP: the full-disk test mounts a 2 MiB tmpfs: not root\n");
		return;
	}
	check_full_tmpfs(dir, 1536, filler, sizeof(filler));
	seg_attr(&a, &id);
	ck_assert_int_eq(segment_open(&seg, dir, 1, 1, 1, &a, 1), 0);
	seg.room = room_test;
	seg.room_arg = filler;
	for (i = 0; i < sizeof(buf); i += sizeof(fr))
		memcpy(buf + i, &fr, sizeof(fr));
	for (i = 0; i < 400; i++)	/* 1.6 MiB: past the write buffer's 1 MiB */
		ck_assert_msg(segment_append(&seg, buf, sizeof(buf), sizeof(buf) / 8) == 0,
		    "write %zu failed on a full disk (room made %d times)", i, rooms);
	ck_assert_int_eq(perfdata_flush(&seg.pd), 0);
	ck_assert_int_eq(rooms, 1);
	ck_assert_uint_eq(seg.records, 400 * sizeof(buf) / 8);
	perfdata_close(&seg.pd);
	ck_assert_int_eq(umount2(dir, MNT_DETACH), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/*
 * The same at the close: records still in memory (less than the write
 * buffer) and a disk without room for them.  The close makes room as any
 * write does, and every record is in the file (before: the finish flushed
 * once, failed, and threw the buffer away).
 */
START_TEST(test_room_at_close)
{
	char	 dir[] = "/tmp/check_segment.XXXXXX", filler[600];
	struct segment seg;
	struct perfdata_attr a;
	struct perfdata_meta m;
	struct perfdata_file f;
	struct perf_event_header fr = { PERF_RECORD_FINISHED_ROUND, 0, 8 };
	uint8_t	 buf[4096];
	uint64_t id = 1;
	char	 err[256];
	size_t	 i;
	int64_t	 got;
	int	 rc;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	check_full_tmpfs(dir, 1536, filler, sizeof(filler));
	seg_attr(&a, &id);
	ck_assert_int_eq(segment_open(&seg, dir, 1, 1, 1, &a, 1), 0);
	rooms = 0;
	seg.room = room_test;
	seg.room_arg = filler;
	for (i = 0; i < sizeof(buf); i += sizeof(fr))
		memcpy(buf + i, &fr, sizeof(fr));
	for (i = 0; i < 200; i++)	/* 800 KiB: in memory, the buffer is 1 MiB */
		ck_assert_int_eq(segment_append(&seg, buf, sizeof(buf), sizeof(buf) / 8), 0);
	memset(&m, 0, sizeof(m));
	m.hostname = m.osrelease = m.arch = m.version = "check";
	m.clockid = CLOCK_MONOTONIC;
	rc = segment_close(&seg, &a, 1, &m);
	ck_assert_msg(rc == 0, "the close failed on a full disk (room made %d times): %s",
	    rooms, strerror(-rc));
	ck_assert_int_eq(rooms, 1);
	ck_assert_msg(perfdata_open(&f, seg.path, err, sizeof(err)) == 0, "%s", err);
	got = perfdata_walk(&f, NULL, NULL);
	perfdata_file_close(&f);
	ck_assert_int_eq(got, (int64_t)(200 * sizeof(buf)));
	ck_assert_int_eq(unlink(seg.path), 0);
	ck_assert_int_eq(umount2(dir, MNT_DETACH), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* Is an entry of SEG's build-id table by NAME marked as a path proven unlinked? */
static int
table_marked(const struct segment *seg, const char *name)
{
	for (size_t i = 0; i < seg->bids.cap; i++)
		if (seg->bids.e[i].filename != NULL && strcmp(seg->bids.e[i].filename, name) == 0 &&
		    seg->bids.e[i].unlinked)
			return 1;
	return 0;
}

/* How many entries of SEG's build-id table are NAME's. */
static size_t
table_has(const struct segment *seg, const char *name)
{
	size_t	 i, n = 0;

	for (i = 0; i < seg->bids.cap; i++)
		n += seg->bids.e[i].filename != NULL && strcmp(seg->bids.e[i].filename, name) == 0;
	return n;
}

/*
 * A binary's " (deleted)" name noted before its plain name (a start state
 * visits the old process first): both go into the build-id table (before,
 * the plain one was taken as there already, and perf buildid-list lacked it).
 * A binary filed under X from "X (deleted)" (proven unlinked) lists X at
 * its first note, for the index rebuild; one filed under its whole name
 * does not.
 */
START_TEST(test_deleted_name_first)
{
	char	 dir[] = "/tmp/check_segment.XXXXXX";
	struct segment seg;
	struct perfdata_attr a;
	struct binary b, w;
	uint64_t id = 1;
	size_t	 plain, deleted;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	seg_attr(&a, &id);
	ck_assert_int_eq(segment_open(&seg, dir, 1, 1, 1, &a, 1), 0);
	memset(&b, 0, sizeof(b));
	memset(b.bid, 0xab, 20);
	b.bidsize = 20;
	b.kind = BINARY_USER;
	b.path = "/opt/x";		/* proven unlinked when named "/opt/x (deleted)" */
	ck_assert_int_eq(segment_note_binary(&seg, &b, "/opt/x (deleted)"), 0);
	ck_assert_msg(table_has(&seg, "/opt/x") == 1, "a binary proven unlinked is not listed "
	    "by its path at its first note");
	ck_assert_msg(table_marked(&seg, "/opt/x") && !table_marked(&seg, "/opt/x (deleted)"),
	    "the path of a binary proven unlinked is not marked so, or its record's name is");
	ck_assert_int_eq(segment_note_binary(&seg, &b, "/opt/x"), 0);
	ck_assert_int_eq(segment_note_binary(&seg, &b, "/opt/x"), 0);
	memset(&w, 0, sizeof(w));
	memset(w.bid, 0xcd, 20);
	w.bidsize = 20;
	w.kind = BINARY_USER;
	w.path = "/opt/w (deleted)";	/* not proven unlinked: its whole name */
	ck_assert_int_eq(segment_note_binary(&seg, &w, "/opt/w (deleted)"), 0);
	ck_assert_int_eq(segment_note_binary(&seg, &w, "/opt/w (deleted)"), 0);
	plain = table_has(&seg, "/opt/x");
	deleted = table_has(&seg, "/opt/x (deleted)");
	ck_assert_uint_eq(deleted, 1);
	ck_assert_msg(plain == 1, "the plain name is %zu times in the table", plain);
	ck_assert_uint_eq(table_has(&seg, "/opt/w (deleted)"), 1);
	ck_assert_msg(table_has(&seg, "/opt/w") == 0,
	    "a binary not proven unlinked is listed by the plain name");
	ck_assert(!table_marked(&seg, "/opt/w (deleted)"));
	/* A plain name listed first, unmarked (a mapping of the file while it was linked). */
	memset(w.bid, 0xef, 20);
	w.path = "/opt/v";
	ck_assert_int_eq(segment_note_binary(&seg, &w, "/opt/v"), 0);
	ck_assert(!table_marked(&seg, "/opt/v"));
	ck_assert_int_eq(segment_note_binary(&seg, &w, "/opt/v (deleted)"), 0);
	ck_assert_msg(table_marked(&seg, "/opt/v"), "a proof after a plain mapping does not mark");
	segment_abandon(&seg);
	ck_assert_int_eq(unlink(seg.partial), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *
segment_suite(void)
{
	Suite	*s = suite_create("segment");
	TCase	*tc = tcase_create("retention");

	tcase_add_test(tc, test_retention_age);
	tcase_add_test(tc, test_room_on_full_disk);
	tcase_add_test(tc, test_room_at_close);
	tcase_add_test(tc, test_deleted_name_first);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(segment_suite)
