/*
 * check_segment.c - unit tests for daemon/record/segment.c's retention by
 * age: a segment older than keep_age goes (the newest always stays); one
 * whose time is in the future - the clock stepped back after it was
 * written - is not old.  Before, now minus a later time wrapped around to
 * a huge age, and a clock stepped back deleted every segment but the
 * newest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <check.h>

#include "check_main.h"

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
	ck_assert_int_eq(segment_retention(dir, 0, 0, 3600 * 1000, NULL), 1);
	ck_assert(!exists(dir, 1));
	ck_assert_msg(exists(dir, 2), "a segment whose time is ahead of the clock was deleted");
	ck_assert(exists(dir, 3));
	remove_segment(dir, 2);
	remove_segment(dir, 3);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *
segment_suite(void)
{
	Suite	*s = suite_create("segment");
	TCase	*tc = tcase_create("retention");

	tcase_add_test(tc, test_retention_age);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(segment_suite)
