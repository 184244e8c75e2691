/*
 * check_oom.h - reallocarray, failing on demand: check_fail_reallocs > 0
 * makes that many calls fail with ENOMEM.  The test binary's own
 * definition is the one its code (the daemon's and common's objects)
 * calls; SQLite and the other libraries allocate with malloc and realloc,
 * never through here.  Include it in one test file of a binary only.
 */
#ifndef PERFMAPD_CHECK_OOM_H
#define PERFMAPD_CHECK_OOM_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

static int check_fail_reallocs;

void *
reallocarray(void *p, size_t n, size_t size)
{
	if (check_fail_reallocs > 0) {
		check_fail_reallocs--;
		errno = ENOMEM;
		return NULL;
	}
	if (size != 0 && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n * size);
}

#endif
