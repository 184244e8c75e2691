/*
 * check_main.h - the main() every Check test file shares: run its suite
 * with CK_FORK (a crash fails one test, not the run) and exit non-zero if
 * anything failed.  Use: CHECK_MAIN(ring_suite).  And the helpers more than
 * one test file wants.
 */
#ifndef PERFMAPD_CHECK_MAIN_H
#define PERFMAPD_CHECK_MAIN_H

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <check.h>

/* PATH (created or emptied, mode 0600) holds the LEN bytes at P. */
static inline void
check_write_file(const char *path, const void *p, size_t len)
{
	int	 fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, p, len), (ssize_t)len);
	close(fd);
}

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
