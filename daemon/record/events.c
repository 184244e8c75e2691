/*
 * events.c - open the per-CPU sampling events.
 *
 * The build-id mode comes from the start-up probes (probe.h): what the
 * kernel does with the mmap3 bit and with attr.build_id, seen in records,
 * and the policy for kernels that leak the build-id flag.
 * Events are opened disabled and enabled only once every ring is mapped,
 * so nothing is produced that nobody can read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "events.h"
#include "log.h"

static int
sys_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group,
    unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

const char *
events_mode_name(enum buildid_mode m)
{
	switch (m) {
	case BUILDID_MMAP3:
		return "mmap3";
	case BUILDID_MMAP2:
		return "mmap2";
	case BUILDID_USERSPACE:
		return "userspace";
	default:
		return "auto";
	}
}

/*
 * The mode follows from what the probes saw (probe.h), never from
 * perf_event_open accepting a bit alone: a leaky kernel accepts
 * attr.build_id like a fixed one, and a kernel where the mmap3 bit means
 * something else accepts that too.
 */
int
events_probe_mode(struct events *e, const struct config *c, char *err, size_t errlen)
{
	probe_all(&e->probe, c->state_dir,
	    c->buildid_mode == BUILDID_AUTO || c->buildid_mode == BUILDID_MMAP3 ? PROBE_MMAP3 : 0);
	return probe_choose_mode(c->buildid_mode, c->mmap2_on_leaky_kernel, &e->probe,
	    &e->mode, e->mode_why, sizeof(e->mode_why), err, errlen);
}

int
events_online_cpus(int **out)
{
	FILE	*f;
	int	*cpus = NULL, n = 0, a, b;
	char	 sep;

	if ((f = fopen("/sys/devices/system/cpu/online", "re")) != NULL) {
		while (fscanf(f, "%d", &a) == 1) {
			b = a;
			if ((sep = (char)fgetc(f)) == '-') {
				if (fscanf(f, "%d", &b) != 1)
					break;
				sep = (char)fgetc(f);
			}
			for (; a <= b; a++) {
				int *nc = reallocarray(cpus, n + 1, sizeof(*cpus));

				if (nc == NULL) {
					free(cpus);
					fclose(f);
					return -ENOMEM;
				}
				cpus = nc;
				cpus[n++] = a;
			}
			if (sep != ',')
				break;
		}
		fclose(f);
	}
	if (n == 0) {
		long nc = sysconf(_SC_NPROCESSORS_ONLN);

		free(cpus);
		if (nc < 1)
			nc = 1;
		if ((cpus = calloc(nc, sizeof(*cpus))) == NULL)
			return -ENOMEM;
		for (n = 0; n < nc; n++)
			cpus[n] = n;
	}
	*out = cpus;
	return n;
}

static void
attr_setup(struct perf_event_attr *a, const struct config *c, int cycles,
    enum buildid_mode mode)
{
	memset(a, 0, sizeof(*a));
	a->size = PERF_FILE_ATTR_SIZE;
	if (cycles) {
		a->type = PERF_TYPE_HARDWARE;
		a->config = PERF_COUNT_HW_CPU_CYCLES;
	} else {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_CPU_CLOCK;
	}
	a->freq = 1;
	a->sample_freq = c->frequency;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
	    PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (c->callchain)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	a->disabled = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(c->wakeup_size ? c->wakeup_size : c->ring_size / 4);
	if (mode == BUILDID_MMAP3)
		perf_attr_set_flag(a, PERF_ATTR_FLAG_MMAP3_BIT, 1);
	else if (mode == BUILDID_MMAP2)
		perf_attr_set_flag(a, PERF_ATTR_FLAG_BUILD_ID_BIT, 1);
}

static int
open_one(struct perf_event_attr *a, int cpu)
{
	int fd = sys_perf_event_open(a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd == -1 ? -errno : fd;
}

int
events_open(struct events *e, const struct config *c, char *err, size_t errlen)
{
	int	*cpus = NULL, n, i, rc, cycles;

	memset(e, 0, sizeof(*e));
	if (events_probe_mode(e, c, err, errlen) < 0)
		return -1;
	if ((n = events_online_cpus(&cpus)) < 0) {
		snprintf(err, errlen, "cannot list CPUs: %s", strerror(-n));
		return -1;
	}
	e->ncpus = n;
	e->cpus = calloc(n, sizeof(*e->cpus));
	e->ids = calloc(n, sizeof(*e->ids));
	if (e->cpus == NULL || e->ids == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (i = 0; i < n; i++)
		e->cpus[i].fd = -1;

	cycles = c->event != EVENT_CPU_CLOCK;
	for (;;) {
		attr_setup(&e->attr, c, cycles, e->mode);
		if ((rc = open_one(&e->attr, cpus[0])) >= 0)
			break;
		if (cycles && c->event == EVENT_AUTO &&
		    (rc == -ENOENT || rc == -EOPNOTSUPP || rc == -ENODEV || rc == -EINVAL)) {
			log_debug("cycles not available (%s), using cpu-clock", strerror(-rc));
			cycles = 0;
			continue;
		}
		if (rc == -EACCES || rc == -EPERM)
			snprintf(err, errlen, "perf_event_open: %s (run as root or with "
			    "CAP_PERFMON; see /proc/sys/kernel/perf_event_paranoid)",
			    strerror(-rc));
		else
			snprintf(err, errlen, "perf_event_open %s on cpu %d: %s",
			    cycles ? "cycles" : "cpu-clock", cpus[0], strerror(-rc));
		goto fail;
	}
	e->cpus[0].fd = rc;
	e->name = cycles ? "cycles" : "cpu-clock";
	e->layout.sample_type = e->attr.sample_type;
	e->layout.sample_id_all = 1;
	e->layout.mmap3 = e->mode == BUILDID_MMAP3;

	for (i = 0; i < n; i++) {
		struct cpu_event *ce = &e->cpus[i];

		ce->cpu = cpus[i];
		if (i > 0 && (ce->fd = open_one(&e->attr, cpus[i])) < 0) {
			snprintf(err, errlen, "perf_event_open on cpu %d: %s", cpus[i],
			    strerror(-ce->fd));
			ce->fd = -1;
			goto fail;
		}
		if (ioctl(ce->fd, PERF_EVENT_IOC_ID, &ce->id) == -1) {
			snprintf(err, errlen, "PERF_EVENT_IOC_ID: %s", strerror(errno));
			goto fail;
		}
		e->ids[i] = ce->id;
		if ((rc = ring_map(&ce->ring, ce->fd, c->ring_size)) < 0) {
			snprintf(err, errlen, "mmap of the cpu %d ring (%llu bytes): %s%s",
			    cpus[i], (unsigned long long)c->ring_size, strerror(-rc),
			    rc == -EPERM ? " (raise perf_event_mlock_kb or RLIMIT_MEMLOCK)" : "");
			goto fail;
		}
	}
	free(cpus);
	log_info("probe (%llu us): build-id flag leak: %s (%s); mmap3: %s (%s)",
	    (unsigned long long)e->probe.duration_us, probe_leak_name(e->probe.leak),
	    e->probe.leak_why, probe_mmap3_name(e->probe.mmap3), e->probe.mmap3_why);
	log_info("build-id mode %s: %s", events_mode_name(e->mode), e->mode_why);
	return 0;
fail:
	free(cpus);
	events_close(e);
	return -1;
}

uint64_t
events_locked_bytes(const struct events *e)
{
	uint64_t n = 0;
	int	 i;

	for (i = 0; i < e->ncpus; i++)
		n += e->cpus[i].ring.maplen;
	return n;
}

void
events_close(struct events *e)
{
	int	 i;

	for (i = 0; i < e->ncpus && e->cpus != NULL; i++) {
		ring_unmap(&e->cpus[i].ring);
		if (e->cpus[i].fd >= 0)
			close(e->cpus[i].fd);
	}
	free(e->cpus);
	free(e->ids);
	memset(e, 0, sizeof(*e));
}
