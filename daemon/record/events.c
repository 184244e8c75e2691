/*
 * events.c - open the per-CPU events: a sampling event and a side-band
 * event on every online CPU (see events.h).
 *
 * The sampling event carries no mmap, comm or task bit: its ring holds
 * samples and the records about them, copied in bulk.  The side-band event
 * is a software dummy (it never samples) that carries exactly those
 * records, with a watermark of one byte (a wake-up per record: wakeup_events
 * counts samples only, and a dummy has none): the loop hears of an mmap as it
 * happens, not when a sampling ring reaches its watermark or the drain
 * timer fires (up to drain_interval later, by which time a short-lived
 * process and its /proc/PID/map_files are gone).  Both have the same
 * sample_type, so their records carry the same sample_id trailer and the
 * same PERF_SAMPLE_IDENTIFIER position, as perf.data requires of the
 * events of one file.
 *
 * The build-id mode comes from the start-up probes (probe.h): what the
 * kernel does with the mmap3 bit and with attr.build_id, seen in records,
 * and the policy for kernels that leak the build-id flag.  The mode's bit
 * goes on the side-band event only.  Events are opened disabled and
 * enabled only once every ring is mapped, so nothing is produced that
 * nobody can read.
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
#include "perflimits.h"

/* Weak: a unit test's own stands for the kernel's refusals (tests/check_events.c). */
__attribute__((weak)) int
events_sys_open(struct perf_event_attr *a, pid_t pid, int cpu, int group,
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

/* The sampling event: samples only. */
static void
attr_setup(struct perf_event_attr *a, const struct config *c, int cycles)
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
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(c->wakeup_size ? c->wakeup_size : c->ring_size / 4);
}

/*
 * The side-band event: a dummy with the sampling event's sample_type,
 * MMAP2 (or MMAP3), COMM, FORK and EXIT, a wake-up per record.
 */
static void
attr_setup_sideband(struct perf_event_attr *a, const struct perf_event_attr *sampling,
    enum buildid_mode mode)
{
	memset(a, 0, sizeof(*a));
	a->size = PERF_FILE_ATTR_SIZE;
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_period = 1;
	a->sample_type = sampling->sample_type;
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
	/*
	 * wakeup_events counts samples only; a watermark of one byte wakes
	 * the reader for every record, as perf's own side-band events do.
	 */
	a->watermark = 1;
	a->wakeup_watermark = 1;
	if (mode == BUILDID_MMAP3)
		perf_attr_set_flag(a, PERF_ATTR_FLAG_MMAP3_BIT, 1);
	else if (mode == BUILDID_MMAP2)
		perf_attr_set_flag(a, PERF_ATTR_FLAG_BUILD_ID_BIT, 1);
}

/*
 * Half the sampling ring, 8 KiB to 1 MiB.  Side-band records are few, but
 * come in bursts: 60 programs starting with 100 new libraries each wrote
 * some 20 KB a millisecond into each CPU's ring, and a quarter (256 KiB)
 * filled between two looks of a loop sharing two CPUs with the burst's
 * processes (records lost in three bursts of four; at half, with the
 * rings spilled within a pass, none in six here, nor in eight with the
 * build-id readers niced, though one CI run of the latter lost 828
 * records in tests/integration/t_burst_maps.sh's three).
 */
static uint64_t
sideband_ring_size(uint64_t ring_size)
{
	uint64_t n = ring_size / 2;

	if (n < 8192)
		n = 8192;
	if (n > (1ULL << 20))
		n = 1ULL << 20;
	return n;
}

static int
open_one(struct perf_event_attr *a, int cpu)
{
	int fd = events_sys_open(a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd == -1 ? -errno : fd;
}

/* Open, identify and map one event of CPU; 0 or -1 with ERR set. */
static int
open_mapped(struct perf_event_attr *a, int cpu, const char *what, uint64_t ringsz,
    int *fd, uint64_t *id, struct ring *ring, char *err, size_t errlen)
{
	int	 rc;

	if ((*fd = open_one(a, cpu)) < 0) {
		snprintf(err, errlen, "perf_event_open %s on cpu %d: %s", what, cpu,
		    strerror(-*fd));
		*fd = -1;
		return -1;
	}
	if (ioctl(*fd, PERF_EVENT_IOC_ID, id) == -1) {
		snprintf(err, errlen, "PERF_EVENT_IOC_ID: %s", strerror(errno));
		return -1;
	}
	if ((rc = ring_map(ring, *fd, ringsz)) < 0) {
		snprintf(err, errlen, "mmap of the cpu %d %s ring (%llu bytes): %s%s", cpu, what,
		    (unsigned long long)ringsz, strerror(-rc),
		    rc == -EPERM ? " (raise perf_event_mlock_kb or RLIMIT_MEMLOCK)" : "");
		return -1;
	}
	return 0;
}

/*
 * 1 if the kernel refuses NAMESPACES on CPU where it takes the same
 * cpu-clock event without (Linux < 4.12), else 0; A is scratch.
 */
static int
namespaces_refused(struct perf_event_attr *a, const struct config *c, int cpu)
{
	int	 fd;

	attr_setup(a, c, 0);
	a->sample_freq = 1;
	a->namespaces = 1;
	if ((fd = open_one(a, cpu)) >= 0) {
		close(fd);
		return 0;
	}
	if (fd != -EINVAL)
		return 0;
	a->namespaces = 0;
	if ((fd = open_one(a, cpu)) < 0)
		return 0;	/* not namespaces' doing: the open below says what is */
	close(fd);
	return 1;
}

int
events_open(struct events *e, const struct config *c, char *err, size_t errlen)
{
	int	*cpus = NULL, n, i, rc, cycles, nons = 0;
	int64_t	 maxrate;

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
	e->sb_ids = calloc(n, sizeof(*e->sb_ids));
	if (e->cpus == NULL || e->ids == NULL || e->sb_ids == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (i = 0; i < n; i++)
		e->cpus[i].fd = e->cpus[i].sb_fd = -1;

	cycles = c->event != EVENT_CPU_CLOCK;
	/*
	 * Above the kernel's limit every open fails with EINVAL, taken for an
	 * old kernel's (no namespaces) or no cycles first: the frequency is
	 * lowered to the limit instead, and said, as perf record does.
	 */
	e->frequency = c->frequency;
	if (perflimits_read("/proc/sys/kernel", "perf_event_max_sample_rate", &maxrate) == 0 &&
	    maxrate > 0 && (int64_t)c->frequency > maxrate) {
		log_warnx("frequency %u is above kernel.perf_event_max_sample_rate (%lld): "
		    "sampling at %lld Hz (lower [record] frequency, or raise the sysctl)",
		    c->frequency, (long long)maxrate, (long long)maxrate);
		e->frequency = (unsigned)maxrate;
	}
	/*
	 * Whether the kernel knows NAMESPACES (Linux >= 4.12), asked of a
	 * software event alone: EINVAL is also what cycles, a frequency or
	 * anything else the kernel refuses answers, and taken for this it
	 * turned namespace records off for good on a kernel that has them.
	 */
	nons = namespaces_refused(&e->attr, c, cpus[0]);
	if (nons)
		log_warnx("perf_event_open: no namespace records (EINVAL): every mapping "
		    "is taken as the host's");
	for (;;) {
		attr_setup(&e->attr, c, cycles);
		e->attr.sample_freq = e->frequency;
		e->attr.namespaces = !nons;
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
	close(rc);
	e->name = cycles ? "cycles" : "cpu-clock";
	/* NAMESPACES records (mapping provenance) come with the side-band's task records. */
	e->attr.namespaces = 0;
	attr_setup_sideband(&e->sb_attr, &e->attr, e->mode);
	e->sb_attr.namespaces = !nons;
	record_layout_init(&e->layout, &e->attr);
	record_layout_init(&e->sb_layout, &e->sb_attr);
	record_clock_init(&e->clock, &e->layout);
	record_clock_init(&e->sb_clock, &e->sb_layout);
	e->sb_ring_size = sideband_ring_size(c->ring_size);

	for (i = 0; i < n; i++) {
		struct cpu_event *ce = &e->cpus[i];

		ce->cpu = cpus[i];
		if (open_mapped(&e->attr, ce->cpu, e->name, c->ring_size, &ce->fd, &ce->id,
		    &ce->ring, err, errlen) < 0 ||
		    open_mapped(&e->sb_attr, ce->cpu, "side-band", e->sb_ring_size, &ce->sb_fd,
		    &ce->sb_id, &ce->sb_ring, err, errlen) < 0)
			goto fail;
		e->ids[i] = ce->id;
		e->sb_ids[i] = ce->sb_id;
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

int
events_enable(struct events *e)
{
	int	 i;

	/* Side-band first: a mapping is known before any sample in it. */
	for (i = 0; i < e->ncpus; i++)
		if (ioctl(e->cpus[i].sb_fd, PERF_EVENT_IOC_ENABLE, 0) == -1)
			return -errno;
	for (i = 0; i < e->ncpus; i++)
		if (ioctl(e->cpus[i].fd, PERF_EVENT_IOC_ENABLE, 0) == -1)
			return -errno;
	return 0;
}

void
events_disable(struct events *e)
{
	int	 i;

	for (i = 0; i < e->ncpus; i++)
		ioctl(e->cpus[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	for (i = 0; i < e->ncpus; i++)
		ioctl(e->cpus[i].sb_fd, PERF_EVENT_IOC_DISABLE, 0);
}

/* Ring G into memory, within SHARE bytes (at least its own size); counted. */
static void
spill_ring(struct ring *g, uint64_t share, uint64_t *spilled, uint64_t *full)
{
	uint64_t before = g->spill_full;

	*spilled += ring_spill(g, share > g->size ? share : g->size);
	*full += g->spill_full != before;
}

void
events_spill(struct events *e, uint64_t *spilled, uint64_t *full)
{
	uint64_t share = EVENTS_SPILL_MAX / (2 * (uint64_t)(e->ncpus > 0 ? e->ncpus : 1));
	int	 i;

	/* The side-band first: what the model misses cannot be had again. */
	for (i = 0; i < e->ncpus; i++)
		spill_ring(&e->cpus[i].sb_ring, share, spilled, full);
	for (i = 0; i < e->ncpus; i++)
		spill_ring(&e->cpus[i].ring, share, spilled, full);
}

void
events_spill_sideband(const struct events *e, int cpu, uint64_t *spilled, uint64_t *full)
{
	spill_ring(&e->cpus[cpu].sb_ring, EVENTS_SPILL_SIDEBAND / (uint64_t)e->ncpus, spilled,
	    full);
}

uint64_t
events_locked_bytes(const struct events *e)
{
	uint64_t n = 0;
	int	 i;

	for (i = 0; i < e->ncpus; i++)
		n += e->cpus[i].ring.maplen + e->cpus[i].sb_ring.maplen;
	return n;
}

void
events_close(struct events *e)
{
	int	 i;

	for (i = 0; i < e->ncpus && e->cpus != NULL; i++) {
		ring_unmap(&e->cpus[i].ring);
		ring_unmap(&e->cpus[i].sb_ring);
		if (e->cpus[i].fd >= 0)
			close(e->cpus[i].fd);
		if (e->cpus[i].sb_fd >= 0)
			close(e->cpus[i].sb_fd);
	}
	free(e->cpus);
	free(e->ids);
	free(e->sb_ids);
	memset(e, 0, sizeof(*e));
}
