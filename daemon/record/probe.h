/*
 * probe.h - the start-up probes: what this kernel really does with
 * build-ids, asked of the kernel on the daemon's own task in a few
 * milliseconds, and the build-id mode that follows from the answers.
 *
 * Each probe comes in two halves so the meaning can be tested without a
 * special kernel (tests/check_probe.c):
 *
 *	probe_run	what the kernel did: open results and the raw records
 *			each probe event's ring held after one mmap of a file
 *			whose build-id we wrote ourselves (struct probe_obs);
 *	probe_judge	what it means (struct probe_report), from a
 *			probe_obs alone;
 *	probe_choose_mode  the policy: buildid_mode and
 *			mmap2_on_leaky_kernel against the report.
 */
#ifndef PERFMAPD_PROBE_H
#define PERFMAPD_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "perf_abi.h"

#define PROBE_RING_PAGES	2			/* data pages of a probe ring */
#define PROBE_DATA_MAX		(PROBE_RING_PAGES * 4096)

/* One probe event and what its ring held. */
struct probe_ring {
	int		 open_err;	/* 0, or -errno of perf_event_open */
	int		 map_err;	/* 0, or -errno of the ring's mmap */
	int		 overflow;	/* more than PROBE_DATA_MAX was written */
	size_t		 len;		/* bytes of records in data */
	uint8_t		 data[PROBE_DATA_MAX];
};

/* The mapping the probe made: a file whose build-id we wrote. */
struct probe_target {
	int		 err;		/* 0, or -errno: no file, or no mapping */
	const char	*step;		/* which step failed ("memfd_create", "mmap", ...) */
	uint32_t	 pid, tid;
	uint64_t	 addr, len;
	uint32_t	 maj, min;
	uint64_t	 ino;
	uint8_t		 build_id[BUILD_ID_MAX];
	int		 build_id_size;
};

/*
 * What the kernel did.  The leak probe opens three dummy events on our
 * task: a plain MMAP2 one, one with attr.build_id, another plain one.
 * The kernel reports an mmap to a task's events newest first, and a leaky
 * kernel leaves PERF_RECORD_MISC_MMAP_BUILD_ID in the header it shares
 * with every event reported after a build_id one: with a plain event on
 * each side of the build_id one, one of them comes after it whatever the
 * order.  Both plain records flagged means another tool's build_id event
 * (system-wide ones are reported before a task's) leaked into ours.
 */
struct probe_obs {
	struct probe_target target;
	struct probe_ring plain_old;	/* opened before with_id */
	struct probe_ring with_id;	/* attr.build_id */
	struct probe_ring plain_new;	/* opened after with_id */
	int		 mmap3_tried;
	struct probe_ring mmap3;	/* the mmap3 attribute bit */
};

enum probe_leak {
	PROBE_LEAK_UNKNOWN = 0,	/* could not tell: leak_why says why */
	PROBE_LEAK_NO,		/* a build_id record, and clean plain ones after it */
	PROBE_LEAK_YES,		/* a plain MMAP2 record carried the build-id flag */
	PROBE_LEAK_NA,		/* no attr.build_id in this kernel: nothing to leak */
};

enum probe_mmap3 {
	PROBE_MMAP3_NOT_RUN = 0, /* buildid_mode does not want it */
	PROBE_MMAP3_PROVEN,	/* an MMAP3 record with our file's build-id */
	PROBE_MMAP3_REFUSED,	/* the kernel refuses the bit */
	PROBE_MMAP3_FAILED,	/* the bit is accepted but nothing proves MMAP3 */
};

struct probe_report {
	enum probe_leak	 leak;
	int		 foreign;	/* another tool's build_id event leaked into ours */
	char		 leak_why[256];
	enum probe_mmap3 mmap3;
	char		 mmap3_why[256];
	int		 denied;	/* -EACCES/-EPERM from perf_event_open, else 0 */
	uint64_t	 duration_us;	/* both probes, wall clock */
};

/*
 * Run the probes on the calling thread: the leak probe always, the mmap3
 * one with PROBE_MMAP3.  The probe file is a memfd, or an unlinked
 * O_TMPFILE in STATE_DIR where memfd_create is refused (systemd's
 * @system-service filter does not allow it) or with PROBE_TMPFILE.
 */
#define PROBE_MMAP3	0x01
#define PROBE_TMPFILE	0x02
void	probe_run(struct probe_obs *, const char *state_dir, unsigned flags);

/* What OBS means. */
void	probe_judge(const struct probe_obs *, struct probe_report *);

/* probe_run and probe_judge, once more when the leak probe could not tell. */
void	probe_all(struct probe_report *, const char *state_dir, unsigned flags);

/*
 * The policy.  WANT is buildid_mode, ACCEPT_LEAK mmap2_on_leaky_kernel:
 *
 *	mmap3		when proven (auto, mmap3); buildid_mode = mmap3
 *			without the proof is an error;
 *	mmap2		when attr.build_id exists and the kernel does not
 *			leak, or leaks (or could not be told) and ACCEPT_LEAK;
 *			buildid_mode = mmap2 on a leaky kernel without
 *			ACCEPT_LEAK is an error;
 *	userspace	otherwise, or when asked for.
 *
 * Returns 0 with *GOT and a one-line reason in WHY, or -1 with ERR.
 */
int	probe_choose_mode(enum buildid_mode want, int accept_leak,
	    const struct probe_report *, enum buildid_mode *got,
	    char *why, size_t whylen, char *err, size_t errlen);

/* "yes", "no", "unknown", "n/a"; "proven", "refused", "failed", "not run". */
const char *probe_leak_name(enum probe_leak);
const char *probe_mmap3_name(enum probe_mmap3);

#endif
