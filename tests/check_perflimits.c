/*
 * check_perflimits.c - unit tests for daemon/record/perflimits.c on a
 * directory of our own standing in for /proc/sys/kernel: the sample-rate
 * cap read at start, a drop seen (and counted once per drop), a rise not
 * counted, unreadable and malformed files refused; the mlock arithmetic.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "check_main.h"

#include "record/perflimits.h"

static char	 dir[64];

static void
put(const char *name, const char *value)
{
	char	 path[128];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(value, f);
	fclose(f);
}

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_perflimits.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	put("perf_event_max_sample_rate", "100000\n");
	put("perf_cpu_time_max_percent", "25\n");
	put("perf_event_mlock_kb", "516\n");
	put("perf_event_paranoid", "2\n");
}

static void
teardown(void)
{
	char	 cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_init)
{
	struct perflimits l;

	ck_assert_int_eq(perflimits_init(&l, dir), 0);
	ck_assert_int_eq(l.rate_at_start, 100000);
	ck_assert_int_eq(l.rate, 100000);
	ck_assert_int_eq(l.cpu_time_max_percent, 25);
	ck_assert_int_eq(l.mlock_kb, 516);
	ck_assert_int_eq(l.paranoid, 2);
	ck_assert_uint_eq(l.rate_drops, 0);
}
END_TEST

START_TEST(test_drops)
{
	struct perflimits l;

	ck_assert_int_eq(perflimits_init(&l, dir), 0);
	ck_assert_int_eq(perflimits_check(&l, 99), 0);
	put("perf_event_max_sample_rate", "63000\n");
	ck_assert_int_eq(perflimits_check(&l, 99), 1);
	ck_assert_int_eq(perflimits_check(&l, 99), 0);		/* the same drop once */
	ck_assert_uint_eq(l.rate_drops, 1);
	put("perf_event_max_sample_rate", "80000\n");		/* raised by an admin */
	ck_assert_int_eq(perflimits_check(&l, 99), 0);
	put("perf_event_max_sample_rate", "50\n");		/* below our 99 Hz */
	ck_assert_int_eq(perflimits_check(&l, 99), 1);
	ck_assert_uint_eq(l.rate_drops, 2);
	ck_assert_int_eq(l.rate, 50);
	ck_assert_int_eq(l.rate_lowest, 50);
	ck_assert_int_eq(l.rate_at_start, 100000);
}
END_TEST

START_TEST(test_bad_files)
{
	struct perflimits l;

	ck_assert_int_eq(perflimits_init(&l, dir), 0);
	put("perf_event_max_sample_rate", "fast\n");
	ck_assert_int_eq(perflimits_check(&l, 99), -1);
	ck_assert_int_eq(l.rate, 100000);			/* unchanged */
	put("perf_event_max_sample_rate", "");
	ck_assert_int_eq(perflimits_check(&l, 99), -1);
	ck_assert_int_eq(perflimits_init(&l, "/nonexistent"), -1);
	ck_assert_int_eq(l.rate_at_start, -1);
}
END_TEST

START_TEST(test_mlock)
{
	struct perflimits l;
	struct perflimits_mlock m;
	long	 page = sysconf(_SC_PAGESIZE);

	ck_assert_int_eq(perflimits_init(&l, dir), 0);
	perflimits_mlock(&l, 2 * ((1 << 20) + (uint64_t)page), 2, &m);
	ck_assert_uint_eq(m.rings_kb, 2 * (1024 + (uint64_t)page / 1024));
	ck_assert_uint_eq(m.budget_kb, 1032);
	ck_assert_uint_eq(m.charged_kb + m.pinned_kb, m.rings_kb);
	ck_assert_uint_le(m.left_kb, m.budget_kb);
}
END_TEST

static Suite *
perflimits_suite(void)
{
	Suite	*s = suite_create("perflimits");
	TCase	*tc = tcase_create("limits");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_init);
	tcase_add_test(tc, test_drops);
	tcase_add_test(tc, test_bad_files);
	tcase_add_test(tc, test_mlock);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(perflimits_suite)
