/*
 * events.h - the sampling events: one per online CPU, system-wide, and the
 * build-id mode chosen for them (mmap3 > mmap2 + build_id > userspace).
 */
#ifndef PERFMAPD_EVENTS_H
#define PERFMAPD_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "probe.h"
#include "record.h"
#include "ring.h"

struct cpu_event {
	int		 cpu;
	int		 fd;
	uint64_t	 id;		/* PERF_EVENT_IOC_ID */
	struct ring	 ring;
	void		*ev;		/* struct event *, owned by the caller */
};

struct events {
	enum buildid_mode mode;		/* resolved, never AUTO */
	char		 mode_why[512];	/* why this mode (probe_choose_mode) */
	struct probe_report probe;	/* what the start-up probes saw */
	const char	*name;		/* "cycles" or "cpu-clock" */
	struct perf_event_attr attr;	/* as opened */
	struct record_layout layout;
	int		 ncpus;
	struct cpu_event *cpus;
	uint64_t	*ids;		/* ncpus ids, for the perf.data attrs */
};

const char *events_mode_name(enum buildid_mode);

/* Probe the kernel and choose the build-id mode (E's mode, mode_why, probe). */
int	events_probe_mode(struct events *, const struct config *, char *err, size_t errlen);

/* Open, mmap and enable everything; on error ERR holds one line. */
int	events_open(struct events *, const struct config *, char *err, size_t errlen);
void	events_close(struct events *);

/* Bytes of ring mappings locked for these events (perflimits_mlock). */
uint64_t events_locked_bytes(const struct events *);

/* The list of online CPUs from /sys (or sysconf). */
int	events_online_cpus(int **cpus);

#endif
