/*
 * check_events.c - how events_open falls back, on the real kernel with
 * perf_event_open refused on demand: the test binary's events_sys_open
 * replaces the daemon's (weak) one, refuses what a test says (a PMU that
 * answers EINVAL for cycles, a kernel before NAMESPACES), else opens the
 * real event.  What the kernel here cannot be made to do.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <check.h>

#include "check_main.h"

#include "config.h"
#include "record/events.h"

static int refuse_cycles;	/* PERF_TYPE_HARDWARE: EINVAL (a PMU that refuses sampling) */
static int refuse_namespaces;	/* attr.namespaces: EINVAL (Linux < 4.12) */

int
events_sys_open(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags)
{
	if ((refuse_cycles && a->type == PERF_TYPE_HARDWARE) ||
	    (refuse_namespaces && a->namespaces)) {
		errno = EINVAL;
		return -1;
	}
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

static void
open_events(struct events *e)
{
	struct config c;
	char	 err[512];

	config_defaults(&c);
	c.frequency = 99;
	c.buildid_mode = BUILDID_USERSPACE;	/* no probe needed to tell */
	ck_assert_msg(events_open(e, &c, err, sizeof(err)) == 0, "events_open: %s", err);
}

static int
can_open(void)
{
	struct perf_event_attr a;
	int	 fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.disabled = 1;
	if ((fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, 0UL)) < 0)
		return 0;
	close(fd);
	return 1;
}

/*
 * cycles refused with EINVAL (some PMUs answer so for sampling): cpu-clock,
 * with namespace records still on.  Before, the first EINVAL was taken
 * for a kernel without NAMESPACES and turned them off for good: every
 * container's mapping taken as the host's.
 */
START_TEST(test_cycles_einval_keeps_namespaces)
{
	struct events e;

	if (!can_open()) {
		fprintf(stderr, "SKIP: perf_event_open refused here (not root?)\n");
		return;
	}
	refuse_cycles = 1;
	open_events(&e);
	refuse_cycles = 0;
	ck_assert_str_eq(e.name, "cpu-clock");
	ck_assert_int_eq(e.sb_attr.namespaces, 1);
	events_close(&e);
}
END_TEST

/* A kernel without NAMESPACES (Linux < 4.12): recording, without them. */
START_TEST(test_no_namespaces)
{
	struct events e;

	if (!can_open()) {
		fprintf(stderr, "SKIP: perf_event_open refused here (not root?)\n");
		return;
	}
	refuse_namespaces = 1;
	open_events(&e);
	refuse_namespaces = 0;
	ck_assert_int_eq(e.sb_attr.namespaces, 0);
	ck_assert_int_gt(e.ncpus, 0);
	events_close(&e);
}
END_TEST

static Suite *
events_suite(void)
{
	Suite	*s = suite_create("events");
	TCase	*tc = tcase_create("fallback");

	tcase_add_test(tc, test_cycles_einval_keeps_namespaces);
	tcase_add_test(tc, test_no_namespaces);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(events_suite)
