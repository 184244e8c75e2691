/*
 * check_hostinfo.c - unit tests for common/hostinfo.c on a made-up /proc
 * and /sys: four CPUs present (3 offline) on two sockets, one CPU with the
 * old sysfs names, caches shared and duplicated, two NUMA nodes with memory
 * blocks, PMUs with capabilities and a hybrid one; then CPU hotplug (the
 * offline CPU keeps its place), an empty tree, and lists too big to take.
 * That perf reads what perfdata.c makes of it: check_perfdata, t_perftools.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <check.h>

#include "check_main.h"

#include "hostinfo.h"

static char	 root[64];

/* Write TEXT to ROOT/PATH, making the directories on the way. */
static void __attribute__((format(printf, 2, 3)))
put(const char *text, const char *fmt, ...)
{
	char	 rel[512], path[1024], *p;
	va_list	 ap;
	FILE	*f;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s", path);
		*p = '/';
	}
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static void
topology(unsigned cpu, const char *pkg, const char *die, const char *core,
    int core_id, int socket, int die_id, int old_names)
{
	char	 n[16];

	put(pkg, "sys/devices/system/cpu/cpu%u/topology/%s", cpu,
	    old_names ? "core_siblings_list" : "package_cpus_list");
	put(core, "sys/devices/system/cpu/cpu%u/topology/%s", cpu,
	    old_names ? "thread_siblings_list" : "core_cpus_list");
	put(die, "sys/devices/system/cpu/cpu%u/topology/die_cpus_list", cpu);
	snprintf(n, sizeof(n), "%d\n", core_id);
	put(n, "sys/devices/system/cpu/cpu%u/topology/core_id", cpu);
	snprintf(n, sizeof(n), "%d\n", socket);
	put(n, "sys/devices/system/cpu/cpu%u/topology/physical_package_id", cpu);
	snprintf(n, sizeof(n), "%d\n", die_id);
	put(n, "sys/devices/system/cpu/cpu%u/topology/die_id", cpu);
}

static void
cache(unsigned cpu, unsigned idx, const char *level, const char *type, const char *size,
    const char *map)
{
#define CACHE_FILE "sys/devices/system/cpu/cpu%u/cache/index%u/%s"

	put(level, CACHE_FILE, cpu, idx, "level");
	put("64\n", CACHE_FILE, cpu, idx, "coherency_line_size");
	put("64\n", CACHE_FILE, cpu, idx, "number_of_sets");
	put("8\n", CACHE_FILE, cpu, idx, "ways_of_associativity");
	put(type, CACHE_FILE, cpu, idx, "type");
	put(size, CACHE_FILE, cpu, idx, "size");
	put(map, CACHE_FILE, cpu, idx, "shared_cpu_list");
#undef CACHE_FILE
}

static void
setup(void)
{
	snprintf(root, sizeof(root), "/tmp/check_hostinfo.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
	put("processor\t: 0\nvendor_id\t: GenuineTest\ncpu family\t: 6\nmodel\t\t: 85\n"
	    "model name\t: Test  CPU\t  @ 2.00GHz\nstepping\t: 7\n\n"
	    "processor\t: 1\nvendor_id\t: GenuineTest\ncpu family\t: 6\nmodel\t\t: 85\n"
	    "model name\t: Other CPU\nstepping\t: 7\n", "proc/cpuinfo");
	put("MemTotal:        2048000 kB\nMemFree:          100000 kB\n", "proc/meminfo");
	put("0-3\n", "sys/devices/system/cpu/present");
	put("0-7\n", "sys/devices/system/cpu/possible");
	put("0-2\n", "sys/devices/system/cpu/online");
	topology(0, "0-1\n", "0-1\n", "0\n", 0, 0, 0, 0);
	topology(1, "0-1\n", "0-1\n", "1\n", 1, 0, 0, 1);
	topology(2, "2-3\n", "2-3\n", "2\n", 0, 1, 1, 0);
	/* cpu3 offline: no topology; its cache entries stay in sysfs */
	cache(0, 0, "1\n", "Data\n", "32K\n", "0\n");
	cache(0, 1, "1\n", "Instruction\n", "32K\n", "0\n");
	cache(0, 2, "2\n", "Unified\n", "512K\n", "0-1\n");
	cache(1, 0, "1\n", "Data\n", "32K\n", "1\n");
	cache(1, 1, "2\n", "Unified\n", "512K\n", "0-1\n");	/* the same L2: kept once */
	cache(2, 0, "3\n", "Unified \n", " 8M\n", "2-3\n");	/* white space trimmed */
	cache(2, 5, "4\n", "Unified\n", "64M\n", "2-3\n");	/* after a gap: not read */
	put("0-1\n", "sys/devices/system/node/online");
	put("Node 0 MemTotal:        1000 kB\nNode 0 MemFree:          500 kB\n",
	    "sys/devices/system/node/node0/meminfo");
	put("0-1\n", "sys/devices/system/node/node0/cpulist");
	put("Node 1 MemTotal:        2000 kB\nNode 1 MemFree:         1500 kB\n",
	    "sys/devices/system/node/node1/meminfo");
	put("2-3\n", "sys/devices/system/node/node1/cpulist");
	put("", "sys/devices/system/node/node1/memory64/online");
	put("", "sys/devices/system/node/node1/memory65/online");
	put("", "sys/devices/system/node/node0/memory0/online");
	put("", "sys/devices/system/node/node0/memory3/online");
	put("8000000\n", "sys/devices/system/memory/block_size_bytes");
	put("4\n", "sys/bus/event_source/devices/cpu/type");
	put("32\n", "sys/bus/event_source/devices/cpu/caps/branches");
	put("1\n", "sys/bus/event_source/devices/software/type");
	put("8\n", "sys/bus/event_source/devices/cpu_core/type");
	put("0-1\n", "sys/bus/event_source/devices/cpu_core/cpus");
	put("test_hybrid\n", "sys/bus/event_source/devices/cpu_core/caps/pmu_name");
	put("", "sys/bus/event_source/devices/notype/uevent");
}

static void
teardown(void)
{
	char	 cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
}

static const struct hostinfo_pmu *
pmu(const struct hostinfo *h, const char *name)
{
	uint32_t i;

	for (i = 0; i < h->npmus; i++)
		if (strcmp(h->pmus[i].name, name) == 0)
			return &h->pmus[i];
	return NULL;
}

START_TEST(test_load)
{
	struct hostinfo h;
	const struct hostinfo_pmu *p;

	ck_assert_int_eq(hostinfo_load(&h, root), 0);
	/* perf's write_cpudesc: the first "model name", white space squeezed */
	ck_assert_str_eq(h.cpudesc, "Test CPU @ 2.00GHz");
#if defined(__x86_64__) || defined(__i386__)
	ck_assert_str_eq(h.cpuid, "GenuineTest,6,85,7");
#endif
	ck_assert_uint_eq(h.nr_cpus_avail, 4);		/* present, not possible */
	ck_assert_uint_eq(h.nr_cpus_online, 3);
	ck_assert_uint_eq(h.total_mem_kb, 2048000);

	ck_assert(h.has_topology);
	ck_assert_uint_eq(h.npackage, 2);
	ck_assert_str_eq(h.package_lists[0], "0-1");
	ck_assert_str_eq(h.package_lists[1], "2-3");
	ck_assert_uint_eq(h.ncore, 3);
	ck_assert_str_eq(h.core_lists[1], "1");		/* thread_siblings_list */
#if defined(__x86_64__)
	ck_assert(h.has_die);
	ck_assert_uint_eq(h.ndie, 2);
#endif
	ck_assert_int_eq(h.cpus[1].core_id, 1);
	ck_assert_int_eq(h.cpus[2].socket_id, 1);
	ck_assert_int_eq(h.cpus[2].die_id, 1);
	ck_assert_int_eq(h.cpus[3].core_id, -1);
	ck_assert_int_eq(h.cpus[3].socket_id, -1);

	ck_assert(h.has_numa);
	ck_assert_uint_eq(h.nnuma, 2);
	ck_assert_uint_eq(h.numa[1].node, 1);
	ck_assert_uint_eq(h.numa[1].mem_total_kb, 2000);
	ck_assert_uint_eq(h.numa[1].mem_free_kb, 1500);
	ck_assert_str_eq(h.numa[1].cpus, "2-3");

	/* L1d 0, L1i 0, L1d 1, L2 0-1 (once), L3: by level, found order within */
	ck_assert(h.has_cache);
	ck_assert_uint_eq(h.ncaches, 5);
	ck_assert_uint_eq(h.caches[0].level, 1);
	ck_assert_str_eq(h.caches[1].type, "Instruction");
	ck_assert_str_eq(h.caches[2].map, "1");
	ck_assert_uint_eq(h.caches[3].level, 2);
	ck_assert_uint_eq(h.caches[4].level, 3);
	ck_assert_str_eq(h.caches[4].type, "Unified");
	ck_assert_str_eq(h.caches[4].size, "8M");

	ck_assert(h.has_mem);
	ck_assert_uint_eq(h.mem_block_size, 0x8000000);
	ck_assert_uint_eq(h.nmem, 2);
	ck_assert_uint_eq(h.mem[0].node, 0);
	ck_assert_uint_eq(h.mem[0].nbits, 4);
	ck_assert_uint_eq(h.mem[0].bits[0], 0x9);
	ck_assert_uint_eq(h.mem[1].nbits, 66);
	ck_assert_uint_eq(h.mem[1].bits[0], 0);
	ck_assert_uint_eq(h.mem[1].bits[1], 0x3);

	ck_assert(h.has_pmus);
	ck_assert_uint_eq(h.npmus, 3);			/* "notype" has no type */
	ck_assert_ptr_nonnull(p = pmu(&h, "cpu"));
	ck_assert_uint_eq(p->type, 4);
	ck_assert_uint_eq(p->ncaps, 1);
	ck_assert_str_eq(p->caps[0].name, "branches");
	ck_assert_str_eq(p->caps[0].value, "32");
	ck_assert_ptr_null(p->cpus);
	ck_assert_ptr_nonnull(p = pmu(&h, "cpu_core"));
	ck_assert_str_eq(p->cpus, "0-1");
	ck_assert_str_eq(p->caps[0].value, "test_hybrid");
	hostinfo_free(&h);
}
END_TEST

/* CPU 2 goes offline, then comes back: read again each time the online set changes. */
START_TEST(test_hotplug)
{
	struct hostinfo h;
	char	 cmd[256];

	ck_assert_int_eq(hostinfo_load(&h, root), 0);
	ck_assert_int_eq(hostinfo_refresh(&h), 0);		/* nothing changed */
	put("0-1\n", "sys/devices/system/cpu/online");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/sys/devices/system/cpu/cpu2/topology'", root);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(hostinfo_refresh(&h), 1);
	ck_assert_uint_eq(h.nr_cpus_online, 2);
	ck_assert_uint_eq(h.npackage, 1);
	/* gone offline, still on socket 1: its samples are in the segment */
	ck_assert_int_eq(h.cpus[2].socket_id, 1);
	ck_assert_int_eq(h.cpus[2].core_id, 0);
	ck_assert_int_eq(h.cpus[3].socket_id, -1);		/* never seen */
	ck_assert_int_eq(hostinfo_refresh(&h), 0);

	put("0-3\n", "sys/devices/system/cpu/online");
	topology(2, "2-3\n", "2-3\n", "2\n", 0, 1, 1, 0);
	topology(3, "2-3\n", "2-3\n", "3\n", 1, 1, 1, 0);
	ck_assert_int_eq(hostinfo_refresh(&h), 1);
	ck_assert_uint_eq(h.nr_cpus_online, 4);
	ck_assert_int_eq(h.cpus[3].socket_id, 1);
	ck_assert_int_eq(h.cpus[3].core_id, 1);
	hostinfo_free(&h);
}
END_TEST

/*
 * A big host with every other CPU off (nosmt): cpu/online is longer than
 * any line read whole before (511 bytes): the count of online CPUs from
 * all of it, and a change past where the line was cut is seen.  Before:
 * the list cut mid-number, a wrong NRCPUS or none.
 */
START_TEST(test_long_online)
{
	struct hostinfo h;
	char	 list[4096];
	size_t	 n = 0;
	unsigned cpu;

	for (cpu = 0; cpu < 512; cpu += 2)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%u", cpu ? "," : "", cpu);
	ck_assert_uint_gt(n, 900);			/* past the 511 bytes read before */
	snprintf(list + n, sizeof(list) - n, "\n");
	put(list, "sys/devices/system/cpu/online");
	put("0-511\n", "sys/devices/system/cpu/present");
	ck_assert_int_eq(hostinfo_load(&h, root), 0);
	ck_assert_uint_eq(h.nr_cpus_online, 256);
	ck_assert_int_eq(hostinfo_refresh(&h), 0);
	list[n - 1] = '9';			/* the last CPU, 510, off; 509 on */
	put(list, "sys/devices/system/cpu/online");
	ck_assert_int_eq(hostinfo_refresh(&h), 1);
	ck_assert_uint_eq(h.nr_cpus_online, 256);
	hostinfo_free(&h);
}
END_TEST

/* Nothing there: every feature left out, as perf leaves it out. */
START_TEST(test_empty)
{
	struct hostinfo h;
	char	 empty[80];

	snprintf(empty, sizeof(empty), "%s/empty", root);
	ck_assert_int_eq(mkdir(empty, 0755), 0);
	ck_assert_int_eq(hostinfo_load(&h, empty), 0);
	ck_assert_ptr_null(h.cpudesc);
	ck_assert_ptr_null(h.cpuid);
	ck_assert_uint_eq(h.nr_cpus_avail, 0);
	ck_assert(!h.has_topology && !h.has_numa && !h.has_cache && !h.has_mem && !h.has_pmus);
	ck_assert_int_eq(hostinfo_refresh(&h), 0);
	hostinfo_free(&h);
}
END_TEST

/*
 * CPUs but no caches in sysfs (a VM's): the feature with none in it, as
 * perf record writes it there; a cache that cannot be read: left out.
 */
START_TEST(test_no_caches)
{
	struct hostinfo h;
	char	 cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/sys/devices/system/cpu/cpu*/cache", root);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(hostinfo_load(&h, root), 0);
	ck_assert_uint_ge(h.nr_cpus_avail, 1);
	ck_assert(h.has_cache);
	ck_assert_uint_eq(h.ncaches, 0);
	hostinfo_free(&h);
	put("1\n", "sys/devices/system/cpu/cpu0/cache/index0/level");	/* and nothing else */
	ck_assert_int_eq(hostinfo_load(&h, root), 0);
	ck_assert(!h.has_cache);
	hostinfo_free(&h);
}
END_TEST

/* Lists out of bounds or malformed are not taken. */
START_TEST(test_bad_lists)
{
	struct hostinfo h;

	put("0-99999999\n", "sys/devices/system/cpu/present");
	put("0,x\n", "sys/devices/system/node/online");
	ck_assert_int_eq(hostinfo_load(&h, root), 0);
	ck_assert_uint_eq(h.nr_cpus_avail, 0);
	ck_assert(!h.has_topology);
	ck_assert(!h.has_numa);
	hostinfo_free(&h);

	put("3-1\n", "sys/devices/system/cpu/present");
	put("", "sys/devices/system/node/online");
	ck_assert_int_eq(hostinfo_load(&h, root), 0);
	ck_assert_uint_eq(h.nr_cpus_avail, 0);
	ck_assert(!h.has_numa);
	hostinfo_free(&h);
}
END_TEST

/* The real machine: what perf record would write (t_perftools compares them). */
START_TEST(test_this_machine)
{
	struct hostinfo h;

	ck_assert_int_eq(hostinfo_load(&h, NULL), 0);
	ck_assert_uint_ge(h.nr_cpus_avail, 1);
	ck_assert_uint_ge(h.nr_cpus_online, 1);
	ck_assert_uint_le(h.nr_cpus_online, h.nr_cpus_avail);
	ck_assert_uint_gt(h.total_mem_kb, 0);
	ck_assert_int_eq(hostinfo_refresh(&h), 0);
	hostinfo_free(&h);
}
END_TEST

static Suite *
hostinfo_suite(void)
{
	Suite	*s = suite_create("hostinfo");
	TCase	*tc = tcase_create("sysfs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_load);
	tcase_add_test(tc, test_hotplug);
	tcase_add_test(tc, test_long_online);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_bad_lists);
	tcase_add_test(tc, test_no_caches);
	tcase_add_test(tc, test_this_machine);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(hostinfo_suite)
