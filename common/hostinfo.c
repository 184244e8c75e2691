/*
 * hostinfo.c - the machine as perf record describes it in a perf.data
 * header: CPU model, topology, NUMA nodes, caches, memory blocks and PMUs,
 * read from /proc and /sys the way tools/perf/util/header.c and cputopo.c
 * read them (our code; the formats are perf's).  See hostinfo.h for which
 * file feeds which feature.
 *
 * Everything here comes from the kernel, but every read is still bounded
 * (one line of at most LINE bytes per file, counts capped) so that a
 * strange sysfs cannot make the daemon allocate without limit.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "hostinfo.h"

#define MAX_CPUS	16384		/* above any NR_CPUS Linux is built with */
#define MAX_NODES	4096
#define MAX_CACHE_LVL	4		/* perf reads cache/index0..3 */
#define MAX_MEM_BLOCKS	(1U << 22)
#define MAX_PMUS	256
#define MAX_CAPS	64
#define LINE		4096

#define CPU_DIR		"/sys/devices/system/cpu"
#define NODE_DIR	"/sys/devices/system/node"
#define PMU_DIR		"/sys/bus/event_source/devices"

/* Where load() failed for want of memory; anything else is "left out". */
struct loader {
	struct hostinfo	*h;
	int		 oom;
};

static char *
ld_strdup(struct loader *l, const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		l->oom = 1;
	return p;
}

static void *
ld_calloc(struct loader *l, size_t n, size_t size)
{
	void	*p;

	if ((p = calloc(n ? n : 1, size)) == NULL)
		l->oom = 1;
	return p;
}

/* The first line of ROOT/FMT..., without its newline; 0 or -1. */
static int __attribute__((format(printf, 4, 5)))
read_line(const struct hostinfo *h, char *buf, size_t len, const char *fmt, ...)
{
	char	 rel[512], path[1024];
	FILE	*f;
	va_list	 ap;
	int	 rc = -1;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s%s", h->root, rel);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	if (fgets(buf, (int)len, f) != NULL) {
		buf[strcspn(buf, "\n")] = '\0';
		rc = 0;
	}
	fclose(f);
	return rc;
}

/*
 * The first line of a file that can be long (cpu/online on a big host with
 * every other CPU off: "0,2,4,..." past any fixed line), up to ONLINE_MAX
 * bytes, newly allocated; NULL if it cannot be read or is longer.
 */
#define ONLINE_MAX	(256U << 10)

static char *
read_long_line(const struct hostinfo *h, const char *rel)
{
	char	 path[1024], *buf;
	size_t	 n = 0;
	ssize_t	 r;
	int	 fd;

	snprintf(path, sizeof(path), "%s%s", h->root, rel);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	if ((buf = malloc(ONLINE_MAX + 1)) == NULL) {
		close(fd);
		return NULL;
	}
	while (n < ONLINE_MAX && (r = read(fd, buf + n, ONLINE_MAX - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (n == 0 || memchr(buf, '\n', n) == NULL) {	/* empty, unread, or cut short */
		free(buf);
		return NULL;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* Leading and trailing white space off, as perf's strim. */
static char *
trim(char *s)
{
	size_t	 n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

static int
read_int(const struct hostinfo *h, int64_t *v, int base, const char *rel)
{
	char	 buf[64], *end;

	if (read_line(h, buf, sizeof(buf), "%s", rel) < 0)
		return -1;
	errno = 0;
	*v = strtoll(trim(buf), &end, base);
	return errno != 0 || end == buf ? -1 : 0;
}

/*
 * A kernel list "0-3,8,10-11" into OUT (ascending as the kernel prints it),
 * at most MAX numbers each below MAX; the count, or -1.
 */
static int
list_parse(const char *s, unsigned max, unsigned **out)
{
	unsigned *v = NULL;
	unsigned long a, b;
	char	*end;
	int	 n = 0;

	*out = NULL;
	while (*s != '\0') {
		if (!isdigit((unsigned char)*s))
			goto bad;
		a = strtoul(s, &end, 10);
		b = a;
		if (*end == '-') {
			s = end + 1;
			if (!isdigit((unsigned char)*s))
				goto bad;
			b = strtoul(s, &end, 10);
		}
		if (a > b || b >= max)
			goto bad;
		for (; a <= b; a++) {
			unsigned *nv;

			if ((unsigned)n >= max)
				goto bad;
			if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL)
				goto bad;
			v = nv;
			v[n++] = (unsigned)a;
		}
		s = end;
		if (*s == ',')
			s++;
		else if (*s != '\0')
			goto bad;
	}
	*out = v;
	return n;
bad:
	free(v);
	return -1;
}

static int
list_has(const unsigned *v, int n, unsigned x)
{
	int	 i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/* --- /proc/cpuinfo, /proc/meminfo ------------------------------------------ */

/* The /proc/cpuinfo key perf's write_cpudesc takes, per architecture. */
static const char *const cpudesc_keys[] = {
#if defined(__powerpc__) || defined(__hppa__) || defined(__sparc__)
	"cpu",
#elif defined(__s390__)
	"vendor_id",
#elif defined(__sh__)
	"cpu type",
#elif defined(__alpha__) || defined(__mips__)
	"cpu model",
#elif defined(__arm__)
	"model name", "Processor",
#elif defined(__loongarch__)
	"Model Name",
#else
	"model name",
#endif
};

/* "key\t\t: value": the value if LINE's key is exactly KEY. */
static const char *
cpuinfo_value(const char *line, const char *key)
{
	size_t	 n = strlen(key);
	const char *p;

	if (strncmp(line, key, n) != 0)
		return NULL;
	for (p = line + n; *p == ' ' || *p == '\t'; p++)
		;
	if (*p != ':')
		return NULL;
	p++;
	return *p == ' ' ? p + 1 : p;
}

/*
 * perf's __write_cpudesc: the first line that starts with KEY, the text
 * after ": ", every run of white space squeezed to one space.
 */
static void
cpudesc_from(char *out, size_t outlen, const char *line)
{
	const char *p = line, *colon;
	size_t	 n = 0;
	int	 space = 0;

	if ((colon = strchr(line, ':')) != NULL && colon[1] == ' ' && colon[2] != '\0')
		p = colon + 2;
	for (; *p != '\0' && *p != '\n' && n + 1 < outlen; p++) {
		if (isspace((unsigned char)*p)) {
			if (!space)
				out[n++] = ' ';
			space = 1;
			continue;
		}
		space = 0;
		out[n++] = *p;
	}
	out[n] = '\0';
}

static void
load_cpuinfo(struct loader *l)
{
	struct hostinfo *h = l->h;
	char	 path[512], line[LINE], desc[LINE] = "", vendor[64] = "";
	long	 family = -1, model = -1, stepping = -1;
	const char *v;
	size_t	 k;
	int	 found = 0;
	FILE	*f;

	snprintf(path, sizeof(path), "%s/proc/cpuinfo", h->root);
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		for (k = 0; !found && k < sizeof(cpudesc_keys) / sizeof(cpudesc_keys[0]); k++)
			if (strncmp(line, cpudesc_keys[k], strlen(cpudesc_keys[k])) == 0) {
				cpudesc_from(desc, sizeof(desc), line);
				found = 1;
			}
		/* The first processor's block is enough for the CPUID. */
		if (vendor[0] == '\0' && (v = cpuinfo_value(line, "vendor_id")) != NULL)
			snprintf(vendor, sizeof(vendor), "%.*s", (int)strcspn(v, "\n"), v);
		else if (family < 0 && (v = cpuinfo_value(line, "cpu family")) != NULL)
			family = strtol(v, NULL, 10);
		else if (model < 0 && (v = cpuinfo_value(line, "model")) != NULL)
			model = strtol(v, NULL, 10);
		else if (stepping < 0 && (v = cpuinfo_value(line, "stepping")) != NULL)
			stepping = strtol(v, NULL, 10);
	}
	fclose(f);
	if (found)
		h->cpudesc = ld_strdup(l, desc);
#if defined(__x86_64__) || defined(__i386__)
	/* arch/x86/util/header.c get_cpuid: the same numbers the kernel prints. */
	if (vendor[0] != '\0' && family >= 0 && model >= 0 && stepping >= 0) {
		char	 id[128];

		snprintf(id, sizeof(id), "%s,%ld,%ld,%ld", vendor, family, model, stepping);
		h->cpuid = ld_strdup(l, id);
	}
#endif
}

static void
load_meminfo(struct loader *l)
{
	char	 path[512], line[256];
	unsigned long long kb;
	FILE	*f;

	snprintf(path, sizeof(path), "%s/proc/meminfo", l->h->root);
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "MemTotal: %llu", &kb) == 1) {
			l->h->total_mem_kb = kb;
			break;
		}
	fclose(f);
}

/* --- CPUs ---------------------------------------------------------------- */

/* Add S to LIST (of N) unless it is there: perf keeps each sibling list once. */
static void
add_unique(struct loader *l, char **list, uint32_t *n, const char *s)
{
	uint32_t i;

	for (i = 0; i < *n; i++)
		if (strcmp(list[i], s) == 0)
			return;
	if ((list[*n] = ld_strdup(l, s)) != NULL)
		(*n)++;
}

static int
topo_line(const struct hostinfo *h, char *buf, size_t len, unsigned cpu,
    const char *name, const char *old)
{
	if (read_line(h, buf, len, CPU_DIR "/cpu%u/topology/%s", cpu, name) == 0)
		return 0;
	return old != NULL ?
	    read_line(h, buf, len, CPU_DIR "/cpu%u/topology/%s", cpu, old) : -1;
}

static void
load_topology(struct loader *l, const unsigned *online, int nonline)
{
	struct hostinfo *h = l->h;
	char	 buf[LINE], rel[128];
	uint32_t cpu;
	int64_t	 v;

	h->package_lists = ld_calloc(l, h->nr_cpus_avail, sizeof(char *));
	h->die_lists = ld_calloc(l, h->nr_cpus_avail, sizeof(char *));
	h->core_lists = ld_calloc(l, h->nr_cpus_avail, sizeof(char *));
	h->cpus = ld_calloc(l, h->nr_cpus_avail, sizeof(*h->cpus));
	if (l->oom)
		return;
	/* cputopo.c has_die_topology: x86_64 and s390x, if cpu0 has die_cpus_list */
#if defined(__x86_64__) || defined(__s390x__)
	h->has_die = read_line(h, buf, sizeof(buf), CPU_DIR "/cpu0/topology/die_cpus_list") == 0;
#endif
	for (cpu = 0; cpu < h->nr_cpus_avail; cpu++) {
		if (!list_has(online, nonline, cpu))
			continue;
		if (topo_line(h, buf, sizeof(buf), cpu, "package_cpus_list",
		    "core_siblings_list") == 0)
			add_unique(l, h->package_lists, &h->npackage, buf);
		if (h->has_die && topo_line(h, buf, sizeof(buf), cpu, "die_cpus_list", NULL) == 0)
			add_unique(l, h->die_lists, &h->ndie, buf);
		if (topo_line(h, buf, sizeof(buf), cpu, "core_cpus_list",
		    "thread_siblings_list") == 0)
			add_unique(l, h->core_lists, &h->ncore, buf);
	}
	/* perf_env__read_cpu_topology_map: every CPU up to nr_cpus_avail, -1 if unknown */
	for (cpu = 0; cpu < h->nr_cpus_avail; cpu++) {
		struct hostinfo_cpu *c = &h->cpus[cpu];

		snprintf(rel, sizeof(rel), CPU_DIR "/cpu%u/topology/core_id", cpu);
		c->core_id = read_int(h, &v, 10, rel) == 0 ? (int32_t)v : -1;
		snprintf(rel, sizeof(rel), CPU_DIR "/cpu%u/topology/physical_package_id", cpu);
		c->socket_id = read_int(h, &v, 10, rel) == 0 ? (int32_t)v : -1;
		snprintf(rel, sizeof(rel), CPU_DIR "/cpu%u/topology/die_id", cpu);
		c->die_id = read_int(h, &v, 10, rel) == 0 ? (int32_t)v : -1;
	}
	h->has_topology = h->npackage > 0 || h->ncore > 0;
}

static int
cache_read(const struct hostinfo *h, struct loader *l, struct hostinfo_cache *c,
    unsigned cpu, unsigned idx)
{
	char	 rel[160], dir[128], buf[LINE];
	int64_t	 v;

	memset(c, 0, sizeof(*c));
	snprintf(dir, sizeof(dir), CPU_DIR "/cpu%u/cache/index%u", cpu, idx);
#define CACHE_INT(field, name) do {						\
	snprintf(rel, sizeof(rel), "%s/" name, dir);				\
	if (read_int(h, &v, 10, rel) < 0)					\
		return -1;							\
	c->field = (uint32_t)v;							\
} while (0)
	CACHE_INT(level, "level");
	CACHE_INT(line_size, "coherency_line_size");
	CACHE_INT(sets, "number_of_sets");
	CACHE_INT(ways, "ways_of_associativity");
#undef CACHE_INT
	if (read_line(h, buf, sizeof(buf), "%s/type", dir) < 0)
		return -1;
	c->type = ld_strdup(l, trim(buf));
	if (read_line(h, buf, sizeof(buf), "%s/size", dir) < 0)
		return -1;
	c->size = ld_strdup(l, trim(buf));
	if (read_line(h, buf, sizeof(buf), "%s/shared_cpu_list", dir) < 0)
		return -1;
	c->map = ld_strdup(l, trim(buf));
	return c->type != NULL && c->size != NULL && c->map != NULL ? 0 : -1;
}

static void
cache_free(struct hostinfo_cache *c)
{
	free(c->type);
	free(c->size);
	free(c->map);
}

static int
cache_same(const struct hostinfo_cache *a, const struct hostinfo_cache *b)
{
	return a->level == b->level && a->line_size == b->line_size &&
	    a->sets == b->sets && a->ways == b->ways && strcmp(a->type, b->type) == 0 &&
	    strcmp(a->size, b->size) == 0 && strcmp(a->map, b->map) == 0;
}

/*
 * perf's build_caches: each distinct cache of CPUs 0..possible-1, by
 * level.  A machine whose sysfs has no caches (some VMs) still has the
 * feature, with none in it, as perf writes it; a cache that cannot be
 * read leaves it out, as perf does.
 */
static void
load_caches(struct loader *l, unsigned ncpus_possible)
{
	struct hostinfo *h = l->h;
	struct hostinfo_cache c;
	uint32_t i, j, max = ncpus_possible * MAX_CACHE_LVL;
	unsigned cpu, idx;
	int	 bad = 0;

	if (ncpus_possible == 0 || (h->caches = ld_calloc(l, max, sizeof(*h->caches))) == NULL)
		return;
	for (cpu = 0; cpu < ncpus_possible; cpu++)
		for (idx = 0; idx < MAX_CACHE_LVL; idx++) {
			char	 buf[8];

			if (read_line(h, buf, sizeof(buf),
			    CPU_DIR "/cpu%u/cache/index%u/level", cpu, idx) < 0)
				break;
			if (cache_read(h, l, &c, cpu, idx) < 0) {
				cache_free(&c);
				bad = 1;
				continue;
			}
			for (i = 0; i < h->ncaches && !cache_same(&c, &h->caches[i]); i++)
				;
			if (i < h->ncaches || h->ncaches == max)
				cache_free(&c);
			else
				h->caches[h->ncaches++] = c;
		}
	/* By level, keeping the order found within a level. */
	for (i = 1; i < h->ncaches; i++) {
		c = h->caches[i];
		for (j = i; j > 0 && h->caches[j - 1].level > c.level; j--)
			h->caches[j] = h->caches[j - 1];
		h->caches[j] = c;
	}
	h->has_cache = !bad;
}

/* --- memory -------------------------------------------------------------- */

static void
load_numa(struct loader *l)
{
	struct hostinfo *h = l->h;
	char	 buf[LINE], path[1024], field[32];
	unsigned *nodes;
	unsigned long long kb;
	int	 n, i;
	FILE	*f;

	if (read_line(h, buf, sizeof(buf), NODE_DIR "/online") < 0 ||
	    (n = list_parse(trim(buf), MAX_NODES, &nodes)) <= 0)
		return;
	if ((h->numa = ld_calloc(l, (size_t)n, sizeof(*h->numa))) == NULL) {
		free(nodes);
		return;
	}
	for (i = 0; i < n; i++) {
		struct hostinfo_numa *nd = &h->numa[i];

		nd->node = nodes[i];
		snprintf(path, sizeof(path), "%s" NODE_DIR "/node%u/meminfo", h->root, nodes[i]);
		if ((f = fopen(path, "re")) == NULL)
			goto fail;
		/* "Node 0 MemTotal:       5335256 kB" */
		while (fgets(buf, sizeof(buf), f) != NULL) {
			if (sscanf(buf, "%*s %*d %31s %llu", field, &kb) != 2)
				continue;
			if (strcmp(field, "MemTotal:") == 0)
				nd->mem_total_kb = kb;
			else if (strcmp(field, "MemFree:") == 0)
				nd->mem_free_kb = kb;
		}
		fclose(f);
		if (read_line(h, buf, sizeof(buf), NODE_DIR "/node%u/cpulist", nodes[i]) < 0)
			goto fail;
		if ((nd->cpus = ld_strdup(l, buf)) == NULL)
			goto fail;
		h->nnuma++;
	}
	free(nodes);
	h->has_numa = 1;
	return;
fail:
	/* perf leaves NUMA_TOPOLOGY out when one node cannot be read. */
	free(nodes);
	for (i = 0; (uint32_t)i < h->nnuma; i++)
		free(h->numa[i].cpus);
	free(h->numa);
	h->numa = NULL;
	h->nnuma = 0;
}

static int
memnode_cmp(const void *a, const void *b)
{
	const struct hostinfo_memnode *x = a, *y = b;

	return x->node < y->node ? -1 : x->node > y->node;
}

/* The memoryN entries of one node directory: the highest, or set them in BITS. */
static int64_t
memnode_scan(const char *dir, uint64_t *bits, uint64_t nbits)
{
	struct dirent *de;
	unsigned phys;
	int64_t	 max = -1;
	DIR	*d;

	if ((d = opendir(dir)) == NULL)
		return -2;
	while ((de = readdir(d)) != NULL) {
		if (sscanf(de->d_name, "memory%u", &phys) != 1 || phys >= MAX_MEM_BLOCKS)
			continue;
		if (bits != NULL) {
			/* a block added since the first scan (memory hot-added): not in BITS */
			if (phys < nbits)
				bits[phys / 64] |= 1ULL << (phys % 64);
		} else if ((int64_t)phys > max)
			max = phys;
	}
	closedir(d);
	return max;
}

static void
load_mem(struct loader *l)
{
	struct hostinfo *h = l->h;
	struct dirent *de;
	char	 path[1024];
	int64_t	 v, max;
	unsigned idx;
	DIR	*d;

	if (read_int(h, &v, 16, "/sys/devices/system/memory/block_size_bytes") < 0 || v <= 0)
		return;
	h->mem_block_size = (uint64_t)v;
	snprintf(path, sizeof(path), "%s" NODE_DIR, h->root);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL && !l->oom) {
		struct hostinfo_memnode *nm, *nn;

		if (sscanf(de->d_name, "node%u", &idx) != 1 || h->nmem >= MAX_NODES)
			continue;
		snprintf(path, sizeof(path), "%s" NODE_DIR "/node%u", h->root, idx);
		if ((max = memnode_scan(path, NULL, 0)) < -1)
			continue;
		if ((nn = reallocarray(h->mem, h->nmem + 1, sizeof(*nn))) == NULL) {
			l->oom = 1;
			break;
		}
		h->mem = nn;
		nm = &h->mem[h->nmem];
		nm->node = idx;
		nm->nbits = max < 0 ? 1 : (uint64_t)max + 1;	/* as perf: at least one bit */
		if ((nm->bits = ld_calloc(l, (nm->nbits + 63) / 64, sizeof(uint64_t))) == NULL)
			break;
		memnode_scan(path, nm->bits, nm->nbits);
		h->nmem++;
	}
	closedir(d);
	qsort(h->mem, h->nmem, sizeof(*h->mem), memnode_cmp);
	h->has_mem = !l->oom;
}

/* --- PMUs ---------------------------------------------------------------- */

static void
load_pmu_caps(struct loader *l, struct hostinfo_pmu *p)
{
	struct hostinfo *h = l->h;
	struct dirent *de;
	char	 path[1024], buf[LINE];
	DIR	*d;

	snprintf(path, sizeof(path), "%s" PMU_DIR "/%s/caps", h->root, p->name);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL && p->ncaps < MAX_CAPS) {
		struct hostinfo_cap *nc;

		if (de->d_name[0] == '.' ||
		    read_line(h, buf, sizeof(buf), PMU_DIR "/%s/caps/%s", p->name, de->d_name) < 0)
			continue;
		if ((nc = reallocarray(p->caps, p->ncaps + 1, sizeof(*nc))) == NULL) {
			l->oom = 1;
			break;
		}
		p->caps = nc;
		nc[p->ncaps].name = ld_strdup(l, de->d_name);
		nc[p->ncaps].value = ld_strdup(l, buf);
		p->ncaps++;
	}
	closedir(d);
}

/* perf 6.1's perf_pmu__scan: sysfs order, every PMU that has a type. */
static void
load_pmus(struct loader *l)
{
	struct hostinfo *h = l->h;
	struct dirent *de;
	char	 path[1024], buf[LINE], rel[600];
	int64_t	 type;
	DIR	*d;

	snprintf(path, sizeof(path), "%s" PMU_DIR, h->root);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL && h->npmus < MAX_PMUS && !l->oom) {
		struct hostinfo_pmu *np, *p;

		if (de->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), PMU_DIR "/%s/type", de->d_name);
		if (read_int(h, &type, 10, rel) < 0)
			continue;
		if ((np = reallocarray(h->pmus, h->npmus + 1, sizeof(*np))) == NULL) {
			l->oom = 1;
			break;
		}
		h->pmus = np;
		p = &h->pmus[h->npmus++];
		memset(p, 0, sizeof(*p));
		p->type = (uint32_t)type;
		if ((p->name = ld_strdup(l, de->d_name)) == NULL)
			break;
		load_pmu_caps(l, p);
		/* pmu-hybrid.c: a "cpu_*" PMU with a cpus file is a hybrid core type */
		if (strncmp(p->name, "cpu_", 4) == 0 &&
		    read_line(h, buf, sizeof(buf), PMU_DIR "/%s/cpus", p->name) == 0)
			p->cpus = ld_strdup(l, buf);
	}
	closedir(d);
	h->has_pmus = h->npmus > 0;
}

/* --- the whole ----------------------------------------------------------- */

/* Highest number in a kernel list + 1 (cpu/present, cpu/possible); 0 if unreadable. */
static unsigned
list_top(const struct hostinfo *h, const char *rel)
{
	char	 buf[LINE];
	unsigned *v, top = 0;
	int	 n, i;

	if (read_line(h, buf, sizeof(buf), "%s", rel) < 0 ||
	    (n = list_parse(trim(buf), MAX_CPUS, &v)) <= 0)
		return 0;
	for (i = 0; i < n; i++)
		if (v[i] + 1 > top)
			top = v[i] + 1;
	free(v);
	return top;
}

int
hostinfo_load(struct hostinfo *h, const char *root)
{
	struct loader l = { .h = h };
	unsigned *online = NULL, possible;
	int	 nonline;
	long	 n;

	memset(h, 0, sizeof(*h));
	snprintf(h->root, sizeof(h->root), "%s", root != NULL ? root : "");
	load_cpuinfo(&l);
	load_meminfo(&l);

	/* NRCPUS as write_nrcpus: present (highest + 1) and online (count) */
	if ((h->online = read_long_line(h, CPU_DIR "/online")) == NULL ||
	    (nonline = list_parse(trim(h->online), MAX_CPUS, &online)) <= 0) {
		nonline = 0;
		if (h->root[0] == '\0' && (n = sysconf(_SC_NPROCESSORS_ONLN)) > 0)
			h->nr_cpus_online = (uint32_t)n;
	} else
		h->nr_cpus_online = (uint32_t)nonline;
	h->nr_cpus_avail = list_top(h, CPU_DIR "/present");
	if (h->nr_cpus_avail == 0 && h->root[0] == '\0' &&
	    (n = sysconf(_SC_NPROCESSORS_CONF)) > 0)
		h->nr_cpus_avail = (uint32_t)n;
	if ((possible = list_top(h, CPU_DIR "/possible")) == 0)
		possible = h->nr_cpus_avail;

	if (h->nr_cpus_avail > 0 && nonline > 0)
		load_topology(&l, online, nonline);
	free(online);
	if (!l.oom)
		load_numa(&l);
	if (!l.oom)
		load_caches(&l, possible);
	if (!l.oom)
		load_mem(&l);
	if (!l.oom)
		load_pmus(&l);
	if (l.oom) {
		hostinfo_free(h);
		return -1;
	}
	return 0;
}

int
hostinfo_refresh(struct hostinfo *h)
{
	struct hostinfo	 n;
	char	*now;
	uint32_t i;
	int	 same;

	if ((now = read_long_line(h, CPU_DIR "/online")) == NULL)
		return 0;
	same = h->online != NULL && strcmp(trim(now), h->online) == 0;
	free(now);
	if (same)
		return 0;
	if (hostinfo_load(&n, h->root) < 0)
		return -1;
	/* A CPU gone offline keeps where it was: its samples are still in the segment. */
	for (i = 0; n.cpus != NULL && h->cpus != NULL && i < n.nr_cpus_avail &&
	    i < h->nr_cpus_avail; i++)
		if (n.cpus[i].socket_id == -1 && n.cpus[i].core_id == -1)
			n.cpus[i] = h->cpus[i];
	hostinfo_free(h);
	*h = n;
	return 1;
}

void
hostinfo_cpu_model_only(struct hostinfo *h, uint32_t nr_cpus)
{
	char	*desc = h->cpudesc, *id = h->cpuid;

	h->cpudesc = h->cpuid = NULL;
	hostinfo_free(h);
	h->cpudesc = desc;
	h->cpuid = id;
	h->nr_cpus_avail = h->nr_cpus_online = nr_cpus;
}

static void
free_list(char **v, uint32_t n)
{
	uint32_t i;

	for (i = 0; v != NULL && i < n; i++)
		free(v[i]);
	free(v);
}

void
hostinfo_free(struct hostinfo *h)
{
	uint32_t i, j;
	uint64_t k;

	free(h->cpudesc);
	free(h->cpuid);
	free_list(h->package_lists, h->npackage);
	free_list(h->die_lists, h->ndie);
	free_list(h->core_lists, h->ncore);
	free(h->cpus);
	for (i = 0; h->numa != NULL && i < h->nnuma; i++)
		free(h->numa[i].cpus);
	free(h->numa);
	for (i = 0; h->caches != NULL && i < h->ncaches; i++)
		cache_free(&h->caches[i]);
	free(h->caches);
	for (k = 0; h->mem != NULL && k < h->nmem; k++)
		free(h->mem[k].bits);
	free(h->mem);
	for (i = 0; h->pmus != NULL && i < h->npmus; i++) {
		for (j = 0; j < h->pmus[i].ncaps; j++) {
			free(h->pmus[i].caps[j].name);
			free(h->pmus[i].caps[j].value);
		}
		free(h->pmus[i].caps);
		free(h->pmus[i].name);
		free(h->pmus[i].cpus);
	}
	free(h->pmus);
	free(h->online);
	memset(h, 0, sizeof(*h));
}
