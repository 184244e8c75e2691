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
	tcase_add_test(tc, test_start_mono);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(procfs_suite)
