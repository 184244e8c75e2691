/*
 * perflimits.c - see perflimits.h.  Each read is one small /proc/sys file,
 * done on the loop: cheap enough for every status tick (5 s).
 *
 * The mlock arithmetic follows perf_mmap() in kernel/events/core.c: a
 * ring of N data pages charges N + 1 pages to the user's locked_vm up to
 * perf_event_mlock_kb * num_online_cpus(); what does not fit is charged to
 * the process's pinned_vm (VmPin in /proc/PID/status) and checked against
 * RLIMIT_MEMLOCK unless it has CAP_IPC_LOCK.  The allowance is per user:
 * root's other perf tools share what we leave of it; other users have
 * their own.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "perflimits.h"

#define PERFLIMITS_DIR	"/proc/sys/kernel"

int
perflimits_read(const char *dir, const char *name, int64_t *out)
{
	char	 path[512], buf[64], *end;
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	errno = 0;
	*out = strtoll(buf, &end, 10);
	if (errno != 0 || end == buf || (*end != '\n' && *end != '\0'))
		return -1;
	return 0;
}

int
perflimits_init(struct perflimits *l, const char *dir)
{
	memset(l, 0, sizeof(*l));
	l->dir = dir != NULL ? dir : PERFLIMITS_DIR;
	l->rate_at_start = l->rate = l->rate_lowest = -1;
	l->cpu_time_max_percent = l->mlock_kb = l->paranoid = -1;
	perflimits_read(l->dir, "perf_cpu_time_max_percent", &l->cpu_time_max_percent);
	perflimits_read(l->dir, "perf_event_mlock_kb", &l->mlock_kb);
	perflimits_read(l->dir, "perf_event_paranoid", &l->paranoid);
	if (perflimits_read(l->dir, "perf_event_max_sample_rate", &l->rate) < 0)
		return -1;
	l->rate_at_start = l->rate_lowest = l->rate;
	return 0;
}

int
perflimits_check(struct perflimits *l, unsigned frequency)
{
	int64_t	 now, before = l->rate;

	if (perflimits_read(l->dir, "perf_event_max_sample_rate", &now) < 0)
		return -1;
	perflimits_read(l->dir, "perf_event_mlock_kb", &l->mlock_kb);
	l->rate = now;
	if (l->rate_lowest < 0 || now < l->rate_lowest)
		l->rate_lowest = now;
	if (before < 0 || now >= before)
		return 0;
	l->rate_drops++;
	log_warnx("kernel.perf_event_max_sample_rate dropped from %" PRId64 " to %" PRId64
	    " (%" PRId64 " at start): the kernel lowers it for every perf user when "
	    "sampling interrupts take more than perf_cpu_time_max_percent = %" PRId64
	    "%% of a CPU (or an administrator did)%s", before, now, l->rate_at_start,
	    l->cpu_time_max_percent, now < (int64_t)frequency ?
	    "; it is now below our frequency: our samples are throttled" : "");
	return 1;
}

/* VmPin of this process in kB, 0 if unknown. */
static uint64_t
perflimits_vmpin_kb(void)
{
	FILE	*f;
	char	 line[128];
	unsigned long long kb = 0;

	if ((f = fopen("/proc/self/status", "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmPin: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

void
perflimits_mlock(const struct perflimits *l, uint64_t locked, int online_cpus,
    struct perflimits_mlock *m)
{
	memset(m, 0, sizeof(*m));
	m->rings_kb = locked / 1024;
	m->budget_kb = l->mlock_kb > 0 ? (uint64_t)l->mlock_kb * (uint64_t)online_cpus : 0;
	m->pinned_kb = perflimits_vmpin_kb();
	m->charged_kb = m->rings_kb > m->pinned_kb ? m->rings_kb - m->pinned_kb : 0;
	/*
	 * Other users' locked_vm is not visible; but a ring charged beyond the
	 * allowance means it was full when that ring was mapped.
	 */
	if (m->pinned_kb == 0 && m->budget_kb > m->charged_kb)
		m->left_kb = m->budget_kb - m->charged_kb;
}
