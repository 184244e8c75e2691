/*
 * hostinfo.h - what a perf.data header says about the machine, read from
 * the sources perf record reads (tools/perf/util/header.c, cputopo.c):
 *
 *	CPUDESC        /proc/cpuinfo "model name" (per architecture)
 *	CPUID          /proc/cpuinfo vendor,family,model,stepping (x86 only:
 *	               arm64's midr_el1 is not read, the feature left out)
 *	NRCPUS         cpu/present (highest + 1), cpu/online (count)
 *	TOTAL_MEM      /proc/meminfo MemTotal
 *	CPU_TOPOLOGY   cpuN/topology/{package,die,core}_cpus_list, core_id,
 *	               physical_package_id, die_id
 *	NUMA_TOPOLOGY  node/online, nodeN/meminfo, nodeN/cpulist
 *	CACHE          cpuN/cache/indexM/{level,size,type,...}
 *	MEM_TOPOLOGY   memory/block_size_bytes, nodeN/memoryM
 *	PMU_MAPPINGS   bus/event_source/devices/PMU/type
 *	PMU_CAPS,      .../PMU/caps/NAME (the "cpu" PMU's in CPU_PMU_CAPS)
 *	CPU_PMU_CAPS
 *	HYBRID_TOPOLOGY .../cpu_NAME/cpus
 *
 * It is read once when the daemon starts and again when the set of online
 * CPUs changes (hostinfo_refresh: one read of cpu/online), never per
 * segment.  A CPU that goes offline keeps the core, die and socket it had:
 * the samples it took before are still in the segment and belong there.
 */
#ifndef PERFMAPD_HOSTINFO_H
#define PERFMAPD_HOSTINFO_H

#include <stdint.h>

struct hostinfo_cpu {
	int32_t		 core_id, socket_id, die_id;	/* -1: unknown (offline) */
};

struct hostinfo_cache {
	uint32_t	 level, line_size, sets, ways;
	char		*type, *size, *map;
};

struct hostinfo_numa {
	uint32_t	 node;
	uint64_t	 mem_total_kb, mem_free_kb;
	char		*cpus;
};

struct hostinfo_memnode {
	uint64_t	 node;
	uint64_t	 nbits;			/* highest memory block + 1 */
	uint64_t	*bits;			/* (nbits + 63) / 64 words */
};

struct hostinfo_cap {
	char		*name, *value;
};

struct hostinfo_pmu {
	uint32_t	 type;
	char		*name;
	struct hostinfo_cap *caps;
	uint32_t	 ncaps;
	char		*cpus;			/* hybrid PMUs (cpu_*): their CPUs */
};

struct hostinfo {
	char		*cpudesc;		/* NULL: not found */
	char		*cpuid;			/* NULL: not known on this arch */
	uint32_t	 nr_cpus_avail, nr_cpus_online;
	uint64_t	 total_mem_kb;		/* 0: unknown */

	int		 has_topology;
	char		**package_lists, **die_lists, **core_lists;
	uint32_t	 npackage, ndie, ncore;
	int		 has_die;
	struct hostinfo_cpu *cpus;		/* nr_cpus_avail of them */

	int		 has_numa;
	struct hostinfo_numa *numa;
	uint32_t	 nnuma;

	int		 has_cache;
	struct hostinfo_cache *caches;
	uint32_t	 ncaches;

	int		 has_mem;
	uint64_t	 mem_block_size;
	struct hostinfo_memnode *mem;
	uint64_t	 nmem;

	int		 has_pmus;
	struct hostinfo_pmu *pmus;		/* in the order sysfs lists them */
	uint32_t	 npmus;

	char		*online;		/* cpu/online as read (the hotplug check), or NULL */
	char		 root[256];		/* "" or a test tree standing in for / */
};

/*
 * Read everything under ROOT (NULL or "": the real /proc and /sys).  What
 * is missing is left out (has_* = 0, NULL strings), as perf leaves such a
 * feature out; only running out of memory fails (-1).
 */
int	hostinfo_load(struct hostinfo *, const char *root);
/*
 * If the online CPUs changed since the last load, read everything again
 * (offline CPUs keep their last known place).  1: reloaded, 0: unchanged,
 * -1: out of memory (the old information stays).
 */
int	hostinfo_refresh(struct hostinfo *);
/*
 * Keep only what a machine's CPU model says (CPUDESC, CPUID) and NR_CPUS
 * CPUs: for a segment recorded in an earlier boot, whose topology this
 * boot cannot vouch for.
 */
void	hostinfo_cpu_model_only(struct hostinfo *, uint32_t nr_cpus);
void	hostinfo_free(struct hostinfo *);

#endif
