/*
 * check_main.h - the main() every Check test file shares: run its suite
 * with CK_FORK (a crash fails one test, not the run) and exit non-zero if
 * anything failed.  Use: CHECK_MAIN(ring_suite)
 */
#ifndef PERFMAPD_CHECK_MAIN_H
#define PERFMAPD_CHECK_MAIN_H

#include <stdlib.h>

#include <check.h>

static inline int
check_run(Suite *s)
{
	SRunner	*sr = srunner_create(s);
	int	 failed;

	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#define CHECK_MAIN(suite_fn)	int main(void) { return check_run(suite_fn()); }

#endif
