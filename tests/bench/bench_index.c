/*
 * bench_index.c - the index under load, in process, no daemon:
 *
 *   ingest   N distinct (path, build-id) mappings through index_add_mapping
 *            as the recorder calls it (loop thread), then index_flush until
 *            all are committed by the writer thread: the loop-thread cost
 *            per mapping, its worst single call (a batch hand-over included),
 *            the end-to-end rate to disk, and the writer thread's CPU time.
 *   repeat   the same mappings seen again (memory updates only).
 *   lookup   random `lookup PATH --at T` and `buildid ID` through the index reader
 *            on the read-only connection perfmapctl uses: p50/p99/max.
 *
 * usage: bench_index [-n OBJECTS] [-q QUERIES] [-d DIR] [-c CACHE_KIB]
 * (-c: the writer's [index] cache_size; the default is the daemon's)
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "buildid.h"
#include "config.h"
#include "index/index.h"
#include "index_reader.h"
#include "log.h"
#include "record.h"

#define T0	(1795000000LL * 1000000000LL)

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t
xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Object I: path (several build-ids per path, like upgrades) and build-id. */
static void
object(size_t i, char *path, size_t len, uint8_t id[20])
{
	uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ULL;
	int	 k;

	snprintf(path, len, "/usr/lib/x86_64-linux-gnu/libbench-%zu.so.%zu", i / 4, i % 4 / 2);
	for (k = 0; k < 20; k++) {
		h ^= h >> 29;
		h *= 0xbf58476d1ce4e5b9ULL;
		id[k] = (uint8_t)(h >> 56);
	}
}

/*
 * CPU time of the writer thread (perfmapd-index) so far, from its
 * schedstat: less disturbed by the other jobs of a shared machine than
 * the time to disk, which counts the writer's waits for a CPU.  0 if
 * not found.
 */
static uint64_t
writer_cpu_ns(void)
{
	DIR	*d;
	struct dirent *e;
	char	 p[300], comm[64];
	unsigned long long ns = 0;
	FILE	*f;

	if ((d = opendir("/proc/self/task")) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL && ns == 0) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/self/task/%s/comm", e->d_name);
		if ((f = fopen(p, "r")) == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) == NULL ||
		    strncmp(comm, "perfmapd-index", 14) != 0) {
			fclose(f);
			continue;
		}
		fclose(f);
		snprintf(p, sizeof(p), "/proc/self/task/%s/schedstat", e->d_name);
		if ((f = fopen(p, "r")) == NULL)
			continue;
		if (fscanf(f, "%llu", &ns) != 1)
			ns = 0;
		fclose(f);
	}
	closedir(d);
	return ns;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
report_lat(const char *what, uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	printf("%-22s %8zu queries   p50 %6.1f us   p99 %6.1f us   max %7.1f us\n", what, n,
	    v[n / 2] / 1000.0, v[n * 99 / 100] / 1000.0, v[n - 1] / 1000.0);
}

int
main(int argc, char *argv[])
{
	struct config conf;
	struct index *ix;
	struct index_stats st;
	struct index_reader *q;
	size_t	 n = 1000000, nq = 100000, i;
	char	 dir[256] = "", tmpl[] = "/tmp/bench_index.XXXXXX", segdir[300], err[512];
	char	 path[128], hex[BUILD_ID_HEX_MAX], cmd[400];
	uint8_t	 id[20];
	uint64_t t0, t1, t2, worst = 0, wcpu, *lat;
	struct stat sb;
	int	 ch, rc;

	uint64_t cache = 0;

	while ((ch = getopt(argc, argv, "n:q:d:c:")) != -1) {
		switch (ch) {
		case 'n': n = strtoul(optarg, NULL, 10); break;
		case 'q': nq = strtoul(optarg, NULL, 10); break;
		case 'd': snprintf(dir, sizeof(dir), "%s", optarg); break;
		case 'c': cache = strtoull(optarg, NULL, 10) * 1024; break;
		default:
			fprintf(stderr, "usage: bench_index [-n OBJECTS] [-q QUERIES] [-d DIR] "
			    "[-c CACHE_KIB]\n");
			return 2;
		}
	}
	if (dir[0] == '\0') {
		if (mkdtemp(tmpl) == NULL)
			return 1;
		snprintf(dir, sizeof(dir), "%s", tmpl);
	}
	snprintf(segdir, sizeof(segdir), "%s/segments", dir);
	mkdir(dir, 0750);
	mkdir(segdir, 0750);
	log_init("bench_index", 0);
	config_defaults(&conf);
	if (cache != 0)
		conf.index_cache_size = cache;	/* [index] cache_size */
	if (index_open(&ix, dir, &conf, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("index in %s, commit_rows %llu, cache_size %llu KiB, %zu objects\n", dir,
	    (unsigned long long)conf.index_commit_rows,
	    (unsigned long long)(conf.index_cache_size / 1024), n);
	index_segment_open(ix, 1, "perf-000001-20261118T110640Z.data", T0);

	/* ingest */
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		uint64_t a, b;

		object(i, path, sizeof(path), id);
		a = now_ns();
		index_add_mapping(ix, path, id, 20, BID_MMAP2, (uint32_t)(1000 + i % 5000),
		    (uint64_t)(T0 + (int64_t)i * 1000), 0);
		b = now_ns();
		if (b - a > worst)
			worst = b - a;
	}
	t1 = now_ns();
	index_flush(ix);
	t2 = now_ns();
	wcpu = writer_cpu_ns();
	index_get_stats(ix, &st);
	printf("ingest, loop thread    %8zu mappings  %8.0f /s   %5.2f us each, worst call %.1f ms\n",
	    n, n / ((t1 - t0) / 1e9), (t1 - t0) / 1e3 / n, worst / 1e6);
	printf("ingest, to disk        %8zu mappings  %8.0f /s   (%.2f s; %llu batches, "
	    "commit max %.1f ms, writer thread)\n", n, n / ((t2 - t0) / 1e9), (t2 - t0) / 1e9,
	    (unsigned long long)st.batches, st.commit_us_max / 1e3);
	printf("ingest, writer CPU     %8.2f s\n", wcpu / 1e9);

	/* repeat sightings */
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		object(i, path, sizeof(path), id);
		index_add_mapping(ix, path, id, 20, BID_MMAP2, 7, (uint64_t)(T0 + 2000000000000LL), 0);
	}
	t1 = now_ns();
	index_flush(ix);
	t2 = now_ns();
	printf("repeat, loop thread    %8zu mappings  %8.0f /s   (to disk %.2f s)\n", n,
	    n / ((t1 - t0) / 1e9), (t2 - t0) / 1e9);
	index_close(ix);

	/* queries */
	if ((q = index_reader_open(dir, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if ((lat = calloc(nq, sizeof(*lat))) == NULL)
		return 1;
	for (i = 0; i < nq; i++) {
		size_t	 k = (size_t)(xorshift() % n);
		json_t	*o;

		object(k, path, sizeof(path), id);
		t0 = now_ns();
		rc = index_reader_lookup(q, path, T0 + (int64_t)k * 1000 + 500, &o, err, sizeof(err));
		lat[i] = now_ns() - t0;
		if (rc != 0) {
			fprintf(stderr, "lookup %s: %s\n", path, err);
			return 1;
		}
		json_decref(o);
	}
	report_lat("lookup PATH --at T", lat, nq);
	for (i = 0; i < nq; i++) {
		size_t	 k = (size_t)(xorshift() % n);
		json_t	*o;

		object(k, path, sizeof(path), id);
		buildid_to_hex(id, 20, hex);
		t0 = now_ns();
		rc = index_reader_buildid(q, hex, &o, err, sizeof(err));
		lat[i] = now_ns() - t0;
		if (rc != 0) {
			fprintf(stderr, "buildid %s: %s\n", hex, err);
			return 1;
		}
		json_decref(o);
	}
	report_lat("buildid ID", lat, nq);
	for (i = 0; i < nq / 10; i++) {
		size_t	 k = (size_t)(xorshift() % n);
		json_t	*o;

		object(k, path, sizeof(path), id);
		t0 = now_ns();
		rc = index_reader_history(q, path, &o, err, sizeof(err));
		lat[i] = now_ns() - t0;
		if (rc != 0)
			return 1;
		json_decref(o);
	}
	report_lat("history PATH", lat, nq / 10);
	index_reader_close(q);
	free(lat);
	snprintf(path, sizeof(path), "%s/index.db", dir);
	if (stat(path, &sb) == 0)
		printf("index.db               %.1f MB for %zu objects\n", sb.st_size / 1e6, n);
	if (strncmp(dir, "/tmp/bench_index.", 17) == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	return 0;
}
