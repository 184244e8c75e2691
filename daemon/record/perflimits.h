/*
 * perflimits.h - the host's perf limits that perfmapd shares with every
 * other perf user, watched so that status and the log can say what we
 * take and what the kernel did:
 *
 *	perf_event_max_sample_rate	lowered by the kernel for everyone when
 *					sampling interrupts take too long
 *					(perf_cpu_time_max_percent); read at
 *					start and on every status tick
 *	perf_event_mlock_kb		each user's allowance of locked ring
 *					pages, per online CPU; our rings count
 *					against root's, the excess against our
 *					own RLIMIT_MEMLOCK (VmPin)
 */
#ifndef PERFMAPD_PERFLIMITS_H
#define PERFMAPD_PERFLIMITS_H

#include <stdint.h>

struct perflimits {
	const char	*dir;			/* /proc/sys/kernel (tests: elsewhere) */
	int64_t		 rate_at_start;		/* perf_event_max_sample_rate */
	int64_t		 rate;			/* as last read */
	int64_t		 rate_lowest;
	uint64_t	 rate_drops;		/* times it was lower than the read before */
	int64_t		 cpu_time_max_percent;
	int64_t		 mlock_kb;		/* perf_event_mlock_kb */
	int64_t		 paranoid;		/* perf_event_paranoid */
};

/* Our rings against the mlock allowance, in kB. */
struct perflimits_mlock {
	uint64_t	 rings_kb;	/* our ring mappings (data + the header page each) */
	uint64_t	 budget_kb;	/* perf_event_mlock_kb * online CPUs, per user */
	uint64_t	 pinned_kb;	/* VmPin: charged to our RLIMIT_MEMLOCK instead */
	uint64_t	 charged_kb;	/* rings_kb - pinned_kb: taken of root's allowance */
	uint64_t	 left_kb;	/* at most this is left for root's other perf users:
					   budget_kb - charged_kb, 0 once pinned_kb > 0 */
};

/* A small decimal file DIR/NAME (a sysctl); -1 if it cannot be read or parsed. */
int	perflimits_read(const char *dir, const char *name, int64_t *out);
/* Read everything from DIR (NULL: /proc/sys/kernel); -1 if the rate cannot be read. */
int	perflimits_init(struct perflimits *, const char *dir);

/*
 * Read perf_event_max_sample_rate again; returns 1 (and logs) when it is
 * lower than at the last read, 0 otherwise, -1 when it cannot be read.
 * FREQUENCY is ours: the log says when the kernel's cap is now below it.
 */
int	perflimits_check(struct perflimits *, unsigned frequency);

/* What LOCKED bytes of ring mappings take of the mlock allowance. */
void	perflimits_mlock(const struct perflimits *, uint64_t locked, int online_cpus,
	    struct perflimits_mlock *);

#endif
