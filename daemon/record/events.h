/*
 * events.h - the perf events, two per online CPU, system-wide:
 *
 *	sampling   cpu-clock or cycles; its ring holds SAMPLE, LOST,
 *	           THROTTLE...; read in bulk on a watermark or a timer
 *	side-band  a software dummy event (as perf's own tracking and
 *	           side-band events) with mmap2, comm and task: MMAP2 or
 *	           MMAP3, COMM, FORK, EXIT (and LOST); it wakes the daemon
 *	           for every record, so a mapping reaches it within
 *	           milliseconds, while the process that mapped it still lives
 *
 * and the build-id mode chosen for the side-band event (mmap3 > mmap2 +
 * build_id > userspace).  Each ring is decoded with the layout of its own
 * event's attr (record.h).
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
	int		 fd;		/* the sampling event */
	uint64_t	 id;		/* PERF_EVENT_IOC_ID */
	struct ring	 ring;
	int		 sb_fd;		/* the side-band event */
	uint64_t	 sb_id;
	struct ring	 sb_ring;
};

struct events {
	enum buildid_mode mode;		/* resolved, never AUTO */
	char		 mode_why[512];	/* why this mode (probe_choose_mode) */
	struct probe_report probe;	/* what the start-up probes saw */
	const char	*name;		/* "cycles" or "cpu-clock" */
	unsigned	 frequency;	/* [record] frequency, at most the kernel's limit */
	struct perf_event_attr attr;	/* sampling, as opened */
	struct perf_event_attr sb_attr;	/* side-band, as opened */
	struct record_layout layout;	/* of the sampling rings */
	struct record_layout sb_layout;	/* of the side-band rings */
	struct record_clock clock, sb_clock;	/* where their records' times are */
	uint64_t	 sb_ring_size;
	int		 ncpus;
	struct cpu_event *cpus;
	uint64_t	*ids;		/* ncpus ids of each, for the perf.data attrs */
	uint64_t	*sb_ids;
};

const char *events_mode_name(enum buildid_mode);

/* Probe the kernel and choose the build-id mode (E's mode, mode_why, probe). */
int	events_probe_mode(struct events *, const struct config *, char *err, size_t errlen);

/* Open and mmap everything, disabled; on error ERR holds one line. */
int	events_open(struct events *, const struct config *, char *err, size_t errlen);
/* Enable (the side-band events first) or disable every event; 0 or -errno. */
int	events_enable(struct events *);
void	events_disable(struct events *);
void	events_close(struct events *);

/*
 * The start's backlog: while the /proc scan keeps the loop from reading
 * (seconds on a big host), what waits in the rings is taken into the
 * daemon's memory (ring_spill) so that the kernel's rings do not overflow,
 * EVENTS_SPILL_MAX bytes at most over all rings (each ring at least its
 * own size).  Adds the bytes taken to *SPILLED and the rings whose share
 * was full to *FULL.
 */
#define EVENTS_SPILL_MAX	(256ULL << 20)
void	events_spill(struct events *, uint64_t *spilled, uint64_t *full);
/*
 * After the start, only the side-band rings are spilled (sideband.c), within
 * EVENTS_SPILL_SIDEBAND bytes over all of them (each at least its own size):
 * a backlog that outgrows it is a loop that cannot keep up, and the kernel
 * drops (and counts) what follows, rather than the daemon's memory growing
 * with another user's exec storm.
 */
#define EVENTS_SPILL_SIDEBAND	(32ULL << 20)
void	events_spill_sideband(const struct events *, int cpu, uint64_t *spilled,
	    uint64_t *full);

/* Bytes of ring mappings locked for these events (perflimits_mlock). */
uint64_t events_locked_bytes(const struct events *);

/* The list of online CPUs from /sys (or sysconf). */
int	events_online_cpus(int **cpus);
/* perf_event_open(2), every event's (weak: a unit test replaces it). */
int	events_sys_open(struct perf_event_attr *, pid_t pid, int cpu, int group,
	    unsigned long flags);

#endif
