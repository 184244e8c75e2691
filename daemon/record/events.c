/*
 * events.c - open the per-CPU sampling events.
 *
 * The build-id mode is probed by asking the kernel: an attribute bit it
 * does not know makes perf_event_open fail with EINVAL (or E2BIG), so
 * opening a dummy event on ourselves with the mmap3 bit, then with
 * build_id, tells a patched kernel from mainline >= 5.12 from older ones.
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

static int
probe_bit(unsigned int bit)
{
	struct perf_event_attr a;
	int	 fd;

	memset(&a, 0, sizeof(a));
	a.size = PERF_FILE_ATTR_SIZE;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.disabled = 1;
	a.mmap2 = 1;
	a.exclude_kernel = 1;
	perf_attr_set_flag(&a, bit, 1);
	fd = sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd == -1)
		return -errno;
	close(fd);
	return 0;
}

int
events_probe_mode(enum buildid_mode want, enum buildid_mode *got, char *err, size_t errlen)
{
	int	 rc;

	if (want == BUILDID_AUTO || want == BUILDID_MMAP3) {
		if ((rc = probe_bit(PERF_ATTR_FLAG_MMAP3_BIT)) == 0) {
			*got = BUILDID_MMAP3;
			return 0;
		}
		if (rc == -EACCES || rc == -EPERM)
			goto denied;
		if (want == BUILDID_MMAP3) {
			snprintf(err, errlen, "buildid_mode = mmap3: this kernel does not "
			    "support the mmap3 attribute (%s); it needs kernel-patch/",
			    strerror(-rc));
			return -1;
		}
	}
	if (want == BUILDID_AUTO || want == BUILDID_MMAP2) {
		if ((rc = probe_bit(PERF_ATTR_FLAG_BUILD_ID_BIT)) == 0) {
			*got = BUILDID_MMAP2;
			return 0;
		}
		if (rc == -EACCES || rc == -EPERM)
			goto denied;
		if (want == BUILDID_MMAP2) {
			snprintf(err, errlen, "buildid_mode = mmap2: this kernel does not "
			    "support attr.build_id (%s); Linux 5.12 or later is needed",
			    strerror(-rc));
			return -1;
		}
	}
	*got = BUILDID_USERSPACE;
	return 0;
denied:
	snprintf(err, errlen, "perf_event_open: %s (run as root or with CAP_PERFMON; "
	    "see /proc/sys/kernel/perf_event_paranoid)", strerror(-rc));
	return -1;
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
	a->namespaces = 1;		/* provenance: whose mount namespace maps what */
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
	int	*cpus = NULL, n, i, rc, cycles, nons = 0;

	memset(e, 0, sizeof(*e));
	if (events_probe_mode(c->buildid_mode, &e->mode, err, errlen) < 0)
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
		e->attr.namespaces = !nons;
		if ((rc = open_one(&e->attr, cpus[0])) >= 0)
			break;
		if (rc == -EINVAL && !nons) {
			/* Linux < 4.12: no NAMESPACES records; every mapping is the host's */
			log_warnx("perf_event_open: no namespace records (%s): every mapping "
			    "is taken as the host's", strerror(-rc));
			nons = 1;
			continue;
		}
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
	return 0;
fail:
	free(cpus);
	events_close(e);
	return -1;
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
