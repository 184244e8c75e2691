/*
 * check_procfs.c - common/procfs.c: a process's start time from
 * /proc/PID/stat, whatever its name holds, and on the events' clock.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "check_main.h"
#include "procfs.h"
#include "walltime.h"

/* Field 22 follows the last ')': a name may hold spaces and parentheses. */
/*
 * A line of /proc/PID/maps longer than the buffer (the kernel prints a
 * mapped path whole, past PATH_MAX) is skipped whole.  Read with fgets
 * alone, its tail was a line of its own, and the tail of a path is the
 * user's to write: here a map of libc's name at an address of the
 * user's, which the start-up scan took as the process's libc.
 */
START_TEST(test_line_long)
{
	static const char fake[] = " 400000-401000 r-xp 00000000 fd:01 12 /usr/lib/libc.so.6";
	char	 in[4096], line[128];
	FILE	*f;
	size_t	 n = 0;

	n += (size_t)snprintf(in + n, sizeof(in) - n,
	    "7f00-7f01 r-xp 00000000 fd:01 7 /usr/bin/short\n");
	n += (size_t)snprintf(in + n, sizeof(in) - n, "7f10-7f11 r-xp 00000000 fd:01 8 /home/u/");
	memset(in + n, 'd', 200);
	n += 200;
	n += (size_t)snprintf(in + n, sizeof(in) - n, "%s\n", fake);
	n += (size_t)snprintf(in + n, sizeof(in) - n, "7f20-7f21 r-xp 00000000 fd:01 9 /usr/bin/last");
	ck_assert_ptr_nonnull(f = fmemopen(in, n, "r"));
	ck_assert_int_eq(procfs_line(f, line, sizeof(line)), 1);
	ck_assert_str_eq(line, "7f00-7f01 r-xp 00000000 fd:01 7 /usr/bin/short");
	ck_assert_int_eq(procfs_line(f, line, sizeof(line)), 1);
	ck_assert_msg(strstr(line, "libc") == NULL, "the tail of a long line read as a line: %s",
	    line);
	ck_assert_str_eq(line, "7f20-7f21 r-xp 00000000 fd:01 9 /usr/bin/last");	/* no newline */
	ck_assert_int_eq(procfs_line(f, line, sizeof(line)), 0);
	fclose(f);
}
END_TEST

START_TEST(test_stat_start)
{
	ck_assert_uint_eq(procfs_stat_start("42 (sh) S 1 42 42 0 -1 4194304 100 0 0 0 1 2 0 0 "
	    "20 0 1 0 98765 1000 100"), 98765);
	ck_assert_uint_eq(procfs_stat_start("42 (a) b ) c) S 1 42 42 0 -1 4194304 100 0 0 0 1 2 "
	    "0 0 20 0 1 0 12345 1000 100"), 12345);
	ck_assert_uint_eq(procfs_stat_start("42 (no end S 1"), 0);
	ck_assert_uint_eq(procfs_stat_start("42 (short) S 1 42"), 0);
	ck_assert_uint_eq(procfs_stat_start(""), 0);
}
END_TEST

/*
 * On the monotonic clock: this process started before now; a child
 * started after a moment taken more than a clock tick before its fork
 * is seen to have started after that moment (the ticks truncate: never
 * later than the truth), and before the moment after it.
 */
START_TEST(test_start_mono)
{
	uint64_t before, after, self, child_start;
	pid_t	 child;

	self = procfs_start_mono(procfs_start(-1, (uint32_t)getpid()));
	ck_assert_uint_gt(self, 0);
	ck_assert_uint_le(self, mono_ns());
	before = mono_ns();
	usleep(200 * 1000);	/* past a tick, and past a preemption between two clock reads */
	if ((child = fork()) == 0) {
		alarm(30);
		pause();
		_exit(0);
	}
	ck_assert_int_gt(child, 0);
	child_start = procfs_start_mono(procfs_start(-1, (uint32_t)child));
	after = mono_ns();
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ck_assert_msg(child_start > before && child_start <= after,
	    "child started at %llu, not in (%llu, %llu]", (unsigned long long)child_start,
	    (unsigned long long)before, (unsigned long long)after);
	ck_assert_uint_eq(procfs_start(-1, 0x3ffffff0u), 0);	/* no such process */
}
END_TEST

static Suite *
procfs_suite(void)
{
	Suite	*s = suite_create("procfs");
	TCase	*tc = tcase_create("stat");

	tcase_add_test(tc, test_stat_start);
	tcase_add_test(tc, test_line_long);
	tcase_add_test(tc, test_start_mono);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(procfs_suite)
