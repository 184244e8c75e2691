/*
 * check_perfdata.c - unit tests for common/perfdata.c: a file with one
 * cpu-clock attr, synthetic COMM, MMAP2 (build-id form), SAMPLE and
 * FINISHED_ROUND records, the metadata features and a build-id table is
 * written, read back with our reader, and judged by the real perf
 * (report -D, buildid-list, report --header-only, script).  The machine
 * features (CPUDESC, CPUID, topology, NUMA, caches, memory, PMUs) of a
 * made-up host are judged by perf report --header-only -I and --sort
 * socket, and perf data convert --to-json.  Then damage:
 * a torn file as after a crash, files that are not perf.data or have an
 * absurd header, and a write on a full filesystem (-ENOSPC, then recovery).
 * Compressed data sections (PERF_RECORD_COMPRESSED, zstd): made here with
 * libzstd as perf record -z makes them, the walker must hand over the
 * records inside, stop cleanly at a torn, corrupt or oversized one; and
 * perfdata's own compressing writer is read back by the walker and perf.
 */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <check.h>
#include <zstd.h>

#include "check_main.h"
#include "check_oom.h"

#include "compress.h"
#include "perfdata.h"
#include "record.h"
#include "record/repair.h"

#define ST	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
#define HOSTNAME	"perfmapd-test-host"
#define NSAMPLES	5
#define PID		4242

/* The event is opened with attr.build_id: its MMAP2 records may be in the build-id form. */
static const struct record_layout LAYOUT = { .sample_type = ST, .sample_id_all = 1, .build_id = 1 };
static const uint64_t IDS[2] = { 1001, 1002 };
static const uint8_t USER_BID[20] = {
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa,
	0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01, 0x02, 0x03, 0x04, 0x05,
};
static const uint8_t KERN_BID[20] = {
	0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96, 0x87, 0x78, 0x69,
	0x5a, 0x4b, 0x3c, 0x2d, 0x1e, 0x0f, 0x10, 0x20, 0x30, 0x40,
};

static char	 tmpdir[64];

static void
setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_perfdata.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
teardown(void)
{
	char	 cmd[128];

	if (getenv("CHECK_PERFDATA_KEEP") != NULL) {
		fprintf(stderr, "kept %s\n", tmpdir);
		return;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
}

static void
path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void
make_attr(struct perfdata_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->attr.type = PERF_TYPE_SOFTWARE;
	a->attr.size = PERF_FILE_ATTR_SIZE;
	a->attr.config = PERF_COUNT_SW_CPU_CLOCK;
	a->attr.sample_period = 1000000;
	a->attr.sample_type = ST;
	a->attr.sample_id_all = 1;
	a->attr.mmap2 = 1;
	a->attr.comm = 1;
	a->attr.task = 1;
	a->attr.disabled = 0;
	perf_attr_set_flag(&a->attr, PERF_ATTR_FLAG_BUILD_ID_BIT, 1);
	a->name = "cpu-clock";
	a->ids = IDS;
	a->nids = 2;
}

/* The records written, as the test expects to read them back. */
struct expect {
	uint8_t	 data[8192];
	size_t	 len;
	size_t	 nrec;
	size_t	 off[32];		/* start of each record */
};

static void
add(struct expect *e, const void *rec, size_t len)
{
	ck_assert_uint_le(e->len + len, sizeof(e->data));
	ck_assert_uint_lt(e->nrec, 32);
	e->off[e->nrec++] = e->len;
	memcpy(e->data + e->len, rec, len);
	e->len += len;
}

static void
build_records(struct expect *e)
{
	uint8_t	 buf[8192];
	struct record_sample_id sid = { .pid = PID, .tid = PID, .time = 1000, .id = IDS[0], .cpu = 0 };
	struct record_mmap m;
	struct perf_event_header fr = { .type = PERF_RECORD_FINISHED_ROUND, .misc = 0, .size = 8 };
	size_t	 n, i;

	memset(e, 0, sizeof(*e));
	n = record_build_comm(buf, PID, PID, "true", PERF_RECORD_MISC_COMM_EXEC, &LAYOUT, &sid);
	add(e, buf, n);

	memset(&m, 0, sizeof(m));
	m.pid = PID;
	m.tid = PID;
	m.addr = 0x400000;
	m.len = 0x10000;
	m.pgoff = 0;
	m.prot = 5;		/* PROT_READ | PROT_EXEC */
	m.flags = 2;		/* MAP_PRIVATE */
	m.build_id_size = 20;
	memcpy(m.build_id, USER_BID, 20);
	m.filename = "/bin/true";
	sid.time = 1001;
	n = record_build_mmap2(buf, &m, PERF_RECORD_MISC_USER, &LAYOUT, &sid);
	add(e, buf, n);

	for (i = 0; i < NSAMPLES; i++) {
		uint64_t v[6];
		struct perf_event_header h = {
			.type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
			.size = sizeof(h) + sizeof(v),
		};
		uint32_t pidtid[2] = { PID, PID }, cpu[2] = { (uint32_t)(i % 3), 0 };

		v[0] = IDS[i % 2];			/* IDENTIFIER */
		v[1] = 0x401000 + 0x10 * i;		/* IP */
		memcpy(&v[2], pidtid, 8);		/* TID */
		v[3] = 2000 + i;			/* TIME */
		memcpy(&v[4], cpu, 8);			/* CPU */
		v[5] = 1000000;				/* PERIOD */
		memcpy(buf, &h, sizeof(h));
		memcpy(buf + sizeof(h), v, sizeof(v));
		add(e, buf, h.size);
	}
	add(e, &fr, sizeof(fr));
}

static char *const ARGV[] = { "perfmapd", "-f", "--state-dir", "/var/lib/perfmapd" };

/*
 * A made-up machine: CPUs 0-3 present, 3 offline, on two sockets (one
 * die each), two NUMA nodes, three caches, memory blocks 0-3 on node 0 and
 * 64-65 on node 1, a core PMU with capabilities and a hybrid one.
 */
static char *PKG[] = { "0-1", "2-3" }, *DIES[] = { "0-1", "2-3" }, *CORES[] = { "0", "1", "2" };
static struct hostinfo_cpu CPUS[4] = {
	{ .core_id = 0, .socket_id = 0, .die_id = 0 },
	{ .core_id = 1, .socket_id = 0, .die_id = 0 },
	{ .core_id = 0, .socket_id = 1, .die_id = 1 },
	{ .core_id = -1, .socket_id = -1, .die_id = -1 },
};
static struct hostinfo_numa NUMA[2] = {
	{ .node = 0, .mem_total_kb = 1000, .mem_free_kb = 500, .cpus = "0-1" },
	{ .node = 1, .mem_total_kb = 2000, .mem_free_kb = 1500, .cpus = "2-3" },
};
static struct hostinfo_cache CACHES[3] = {
	{ .level = 1, .line_size = 64, .sets = 64, .ways = 8, .type = "Data", .size = "32K", .map = "0" },
	{ .level = 1, .line_size = 64, .sets = 64, .ways = 8, .type = "Instruction", .size = "32K", .map = "0" },
	{ .level = 2, .line_size = 64, .sets = 1024, .ways = 8, .type = "Unified", .size = "512K", .map = "0-1" },
};
static uint64_t MEMBITS0[1] = { 0xf }, MEMBITS1[2] = { 0, 0x3 };
static struct hostinfo_memnode MEM[2] = {
	{ .node = 0, .nbits = 4, .bits = MEMBITS0 },
	{ .node = 1, .nbits = 66, .bits = MEMBITS1 },
};
static struct hostinfo_cap CPUCAPS[2] = {
	{ .name = "branches", .value = "32" }, { .name = "max_precise", .value = "3" },
};
static struct hostinfo_cap HYBCAPS[1] = { { .name = "pmu_name", .value = "test_hybrid" } };
static struct hostinfo_pmu PMUS[3] = {
	{ .type = 4, .name = "cpu", .caps = CPUCAPS, .ncaps = 2 },
	{ .type = 1, .name = "software" },
	{ .type = 8, .name = "cpu_core", .caps = HYBCAPS, .ncaps = 1, .cpus = "0-1" },
};
static struct hostinfo HOST = {
	.cpudesc = "Test CPU 9000", .cpuid = "GenuineTest,6,85,7",
	.nr_cpus_avail = 4, .nr_cpus_online = 3, .total_mem_kb = 2048000,
	.has_topology = 1, .package_lists = PKG, .npackage = 2, .die_lists = DIES, .ndie = 2,
	.core_lists = CORES, .ncore = 3, .has_die = 1, .cpus = CPUS,
	.has_numa = 1, .numa = NUMA, .nnuma = 2,
	.has_cache = 1, .caches = CACHES, .ncaches = 3,
	.has_mem = 1, .mem_block_size = 0x8000000, .mem = MEM, .nmem = 2,
	.has_pmus = 1, .pmus = PMUS, .npmus = 3,
};

static void
make_meta(struct perfdata_meta *m)
{
	memset(m, 0, sizeof(*m));
	m->hostname = HOSTNAME;
	m->osrelease = "6.1.0-test-amd64";
	m->arch = "x86_64";
	m->version = "perfmapd 0.1.0";
	m->host = &HOST;
	m->argc = 4;
	m->argv = ARGV;
	m->clockid = CLOCK_MONOTONIC;
	m->clockid_res_ns = 1;
	m->clock_wall_ns = 1700000000000000000ULL;
	m->clock_ref_ns = 123456789;
	m->first_time = 1000;
	m->last_time = 2000 + NSAMPLES - 1;
}

static const struct perfdata_buildid BIDS[2] = {
	{ .size = 20, .kernel = 1, .filename = "[kernel.kallsyms]" },
	{ .size = 20, .kernel = 0, .filename = "/bin/true" },
};

/* Write the standard file at PATH; E gets the records. */
static void
write_file(const char *path, struct expect *e)
{
	struct perfdata pd;
	struct perfdata_attr a;
	struct perfdata_meta meta;
	struct perfdata_buildid bids[2];
	size_t	 i;

	memcpy(bids, BIDS, sizeof(bids));
	memcpy(bids[0].id, KERN_BID, 20);
	memcpy(bids[1].id, USER_BID, 20);
	make_attr(&a);
	make_meta(&meta);
	build_records(e);
	ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), 0);
	for (i = 0; i < e->nrec; i++) {
		size_t	 end = i + 1 < e->nrec ? e->off[i + 1] : e->len;

		ck_assert_int_eq(perfdata_write(&pd, e->data + e->off[i], end - e->off[i]), 0);
	}
	ck_assert_uint_eq(pd.data_size, e->len);
	ck_assert_int_eq(perfdata_finish(&pd, &a, 1, &meta, bids, 2), 0);
}

/* What perfdata_walk handed over. */
struct walked {
	uint8_t	 data[8192];
	size_t	 len, n;
	size_t	 stop_after;		/* 0: never */
};

static int
walk_cb(const struct perf_event_header *h, void *arg)
{
	struct walked *w = arg;

	ck_assert_uint_le(w->len + h->size, sizeof(w->data));
	memcpy(w->data + w->len, h, h->size);
	w->len += h->size;
	w->n++;
	return w->stop_after != 0 && w->n >= w->stop_after;
}

START_TEST(test_write_read_back)
{
	char	 path[128], err[256] = "";
	struct expect e;
	struct perfdata_file f;
	struct walked w;
	struct perf_event_attr *a;
	struct record_layouts ls;
	uint64_t ids[2];
	size_t	 i;

	path_in(path, sizeof(path), "perf.data");
	write_file(path, &e);

	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	ck_assert_uint_eq(f.h.magic, PERF_MAGIC2);
	ck_assert_uint_eq(f.h.size, 104);
	ck_assert_uint_eq(f.h.attr_size, PERF_FILE_ATTR_SIZE + 16);
	ck_assert_uint_eq(f.h.data.size, e.len);
	ck_assert_uint_eq(f.h.data.offset % 8, 0);
	ck_assert_uint_eq(f.nattrs, 1);
	a = &f.attrs[0].attr;
	ck_assert_uint_eq(a->type, PERF_TYPE_SOFTWARE);
	ck_assert_uint_eq(a->config, PERF_COUNT_SW_CPU_CLOCK);
	ck_assert_uint_eq(a->size, PERF_FILE_ATTR_SIZE);
	ck_assert_uint_eq(a->sample_type, ST);
	ck_assert_uint_eq(a->sample_id_all, 1);
	ck_assert_uint_eq(a->mmap2, 1);
	ck_assert_uint_eq(a->comm, 1);
	ck_assert_uint_eq(a->task, 1);
	ck_assert_uint_eq(f.attrs[0].ids.size, 16);
	ck_assert_int_eq(pread(f.fd, ids, 16, (off_t)f.attrs[0].ids.offset), 16);
	ck_assert_uint_eq(ids[0], 1001);
	ck_assert_uint_eq(ids[1], 1002);

	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(perfdata_walk(&f, walk_cb, &w), (int64_t)e.len);
	ck_assert_uint_eq(w.n, e.nrec);
	ck_assert_uint_eq(w.n, 2 + NSAMPLES + 1);
	ck_assert_uint_eq(w.len, e.len);
	ck_assert_mem_eq(w.data, e.data, e.len);
	/* The records decode with the file's layout, by their ids. */
	ck_assert_int_eq(perfdata_layouts(&f, &ls), 0);
	ck_assert_int_eq(ls.dflt.build_id, 1);
	for (i = 0; i < e.nrec; i++) {
		const uint8_t *rec = w.data + e.off[i];
		struct record r;

		ck_assert_int_eq(record_decode(rec, w.len - e.off[i],
		    record_layout_of(&ls, rec, w.len - e.off[i]), &r), 0);
		if (i == 0) {
			ck_assert_uint_eq(r.type, PERF_RECORD_COMM);
			ck_assert_str_eq(r.comm.comm, "true");
		} else if (i == 1) {
			ck_assert_uint_eq(r.type, PERF_RECORD_MMAP2);
			ck_assert_str_eq(r.mmap.filename, "/bin/true");
			ck_assert_mem_eq(r.mmap.build_id, USER_BID, 20);
		} else if (i < e.nrec - 1) {
			ck_assert_uint_eq(r.type, PERF_RECORD_SAMPLE);
			ck_assert_uint_eq(r.sample.ip, 0x401000 + 0x10 * (i - 2));
			ck_assert_uint_eq(r.sid.time, 2000 + (i - 2));
		} else
			ck_assert_uint_eq(r.type, PERF_RECORD_FINISHED_ROUND);
	}
	/* A callback that stops the walk early. */
	memset(&w, 0, sizeof(w));
	w.stop_after = 2;
	perfdata_walk(&f, walk_cb, &w);
	ck_assert_uint_eq(w.n, 2);
	/* A NULL callback counts bytes. */
	ck_assert_int_eq(perfdata_walk(&f, NULL, NULL), (int64_t)e.len);
	record_layouts_free(&ls);
	perfdata_file_close(&f);
}
END_TEST

/* What perfdata_walk_ordered handed over: each record's time (0: none), FR as -1. */
struct otimes {
	int64_t	 t[32];
	size_t	 n;
};

static int
otimes_cb(const struct perf_event_header *h, void *arg)
{
	struct otimes *o = arg;
	uint64_t t;

	ck_assert_uint_lt(o->n, 32);
	if (h->type == PERF_RECORD_FINISHED_ROUND)
		o->t[o->n++] = -1;
	else
		o->t[o->n++] = record_time(h, h->size, &LAYOUT, &t) == 0 ? (int64_t)t : 0;
	return 0;
}

/* A sample stamped T, as a bulk copy of a ring leaves it. */
static size_t
sample_at(uint8_t *buf, uint64_t t)
{
	uint64_t v[6];
	struct perf_event_header h = {
		.type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
		.size = sizeof(h) + sizeof(v),
	};
	uint32_t pidtid[2] = { PID, PID }, cpu[2] = { 0, 0 };

	v[0] = IDS[0];
	v[1] = 0x401000;
	memcpy(&v[2], pidtid, 8);
	v[3] = t;
	memcpy(&v[4], cpu, 8);
	v[5] = 1000000;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), v, sizeof(v));
	return h.size;
}

/*
 * Records out of order within their rounds come out in time order, as
 * perf reads them: at each FINISHED_ROUND, those up to the previous
 * round's last time; a record without a time after what came before it.
 */
START_TEST(test_walk_ordered)
{
	static const int64_t in[] = { 30, 10, 20, -1, 25, 40, 0, 35, -1, 50, 45 };
	static const int64_t want[] = { -1, 10, 20, 25, 30, -1, 35, 40, 0, 45, 50 };
	struct perf_event_header fr = { .type = PERF_RECORD_FINISHED_ROUND, .size = 8 };
	struct perf_event_header fi = { .type = PERF_RECORD_FINISHED_INIT, .size = 8 };
	char	 path[128], err[256] = "";
	struct perfdata pd;
	struct perfdata_attr a;
	struct perfdata_meta meta;
	struct perfdata_file f;
	struct record_layouts ls;
	struct otimes o = { .n = 0 };
	uint8_t	 buf[256];
	size_t	 i, n;

	path_in(path, sizeof(path), "ordered.data");
	make_attr(&a);
	make_meta(&meta);
	ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), 0);
	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		if (in[i] == -1)
			ck_assert_int_eq(perfdata_write(&pd, &fr, sizeof(fr)), 0);
		else if (in[i] == 0)
			ck_assert_int_eq(perfdata_write(&pd, &fi, sizeof(fi)), 0);
		else {
			n = sample_at(buf, (uint64_t)in[i]);
			ck_assert_int_eq(perfdata_write(&pd, buf, n), 0);
		}
	}
	ck_assert_int_eq(perfdata_finish(&pd, &a, 1, &meta, NULL, 0), 0);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	ck_assert_int_eq(perfdata_layouts(&f, &ls), 0);
	ck_assert_int_gt(perfdata_walk_ordered(&f, &ls, otimes_cb, &o), 0);
	ck_assert_uint_eq(o.n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < o.n; i++)
		ck_assert_msg(o.t[i] == want[i], "record %zu: time %lld, want %lld", i,
		    (long long)o.t[i], (long long)want[i]);
	/*
	 * Out of memory to order them: an error (ENOMEM), not a walk cut
	 * short, which a profile took for damage and went on without the
	 * rest of the segment (found by a review).
	 */
	o.n = 0;
	check_fail_reallocs = 1;
	errno = 0;
	ck_assert_int_eq(perfdata_walk_ordered(&f, &ls, otimes_cb, &o), -1);
	ck_assert_int_eq(errno, ENOMEM);
	check_fail_reallocs = 0;
	record_layouts_free(&ls);
	perfdata_file_close(&f);
}
END_TEST

START_TEST(test_features)
{
	char	 path[128], err[256] = "";
	struct expect e;
	struct perfdata_file f;
	struct perf_file_section sec;
	uint8_t	*buf;
	uint32_t len, u32;
	uint64_t u64[2], pos;
	int	 nent = 0;

	path_in(path, sizeof(path), "perf.data");
	write_file(path, &e);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);

	/* HOSTNAME: {u32 len; char s[len]} */
	ck_assert_int_eq(perfdata_feature(&f, HEADER_HOSTNAME, &sec), 0);
	ck_assert_uint_ge(sec.offset, f.h.data.offset + f.h.data.size);
	buf = malloc(sec.size + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(f.fd, buf, sec.size, (off_t)sec.offset), (ssize_t)sec.size);
	memcpy(&len, buf, 4);
	ck_assert_uint_eq(len + 4, sec.size);
	ck_assert_uint_eq(len % 64, 0);
	ck_assert_str_eq((char *)buf + 4, HOSTNAME);
	free(buf);

	/* NRCPUS, SAMPLE_TIME, CLOCK_DATA */
	ck_assert_int_eq(perfdata_feature(&f, HEADER_NRCPUS, &sec), 0);
	ck_assert_uint_eq(sec.size, 8);
	ck_assert_int_eq(pread(f.fd, &u32, 4, (off_t)sec.offset), 4);
	ck_assert_uint_eq(u32, 4);
	ck_assert_int_eq(perfdata_feature(&f, HEADER_SAMPLE_TIME, &sec), 0);
	ck_assert_int_eq(pread(f.fd, u64, 16, (off_t)sec.offset), 16);
	ck_assert_uint_eq(u64[0], 1000);
	ck_assert_uint_eq(u64[1], 2000 + NSAMPLES - 1);
	ck_assert_int_eq(perfdata_feature(&f, HEADER_CLOCK_DATA, &sec), 0);
	ck_assert_uint_eq(sec.size, 24);
	ck_assert_int_eq(pread(f.fd, &u32, 4, (off_t)sec.offset + 4), 4);
	ck_assert_uint_eq(u32, CLOCK_MONOTONIC);
	ck_assert_int_eq(pread(f.fd, u64, 16, (off_t)sec.offset + 8), 16);
	ck_assert_uint_eq(u64[0], 1700000000000000000ULL);
	ck_assert_uint_eq(u64[1], 123456789);
	ck_assert_int_eq(perfdata_feature(&f, HEADER_CMDLINE, &sec), 0);
	ck_assert_int_eq(pread(f.fd, &u32, 4, (off_t)sec.offset), 4);
	ck_assert_uint_eq(u32, 4);

	/* Absent and invalid features. */
	ck_assert_int_eq(perfdata_feature(&f, HEADER_TRACING_DATA, &sec), -1);
	ck_assert_int_eq(perfdata_feature(&f, HEADER_BRANCH_STACK, &sec), -1);
	ck_assert_int_eq(perfdata_feature(&f, HEADER_BPF_PROG_INFO, &sec), -1);
	ck_assert_int_eq(perfdata_feature(&f, 0, &sec), -1);
	ck_assert_int_eq(perfdata_feature(&f, 256, &sec), -1);

	/* BUILD_ID: entries walked by header.size. */
	ck_assert_int_eq(perfdata_feature(&f, HEADER_BUILD_ID, &sec), 0);
	buf = malloc(sec.size);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(f.fd, buf, sec.size, (off_t)sec.offset), (ssize_t)sec.size);
	for (pos = 0; pos + sizeof(struct build_id_entry) <= sec.size; nent++) {
		struct build_id_entry be;
		const char *name = (const char *)buf + pos + sizeof(be);

		memcpy(&be, buf + pos, sizeof(be));
		ck_assert_uint_ge(be.header.size, sizeof(be) + 8);
		ck_assert_uint_le(pos + be.header.size, sec.size);
		ck_assert_uint_eq(be.header.type, 0);
		ck_assert_int_eq(be.pid, -1);
		ck_assert_uint_eq(be.build_id[20], 20);
		ck_assert_uint_eq(be.header.misc & PERF_RECORD_MISC_BUILD_ID_SIZE,
		    PERF_RECORD_MISC_BUILD_ID_SIZE);
		ck_assert_ptr_nonnull(memchr(name, '\0', be.header.size - sizeof(be)));
		if (nent == 0) {
			ck_assert_uint_eq(be.header.misc & PERF_RECORD_MISC_CPUMODE_MASK,
			    PERF_RECORD_MISC_KERNEL);
			ck_assert_mem_eq(be.build_id, KERN_BID, 20);
			ck_assert_str_eq(name, "[kernel.kallsyms]");
		} else {
			ck_assert_uint_eq(be.header.misc & PERF_RECORD_MISC_CPUMODE_MASK,
			    PERF_RECORD_MISC_USER);
			ck_assert_mem_eq(be.build_id, USER_BID, 20);
			ck_assert_str_eq(name, "/bin/true");
		}
		pos += be.header.size;
	}
	ck_assert_int_eq(nent, 2);
	ck_assert_uint_eq(pos, sec.size);
	free(buf);
	perfdata_file_close(&f);
}
END_TEST

/* --- the real perf ------------------------------------------------------ */

static int
have_perf(void)
{
	return system("perf version >/dev/null 2>&1") == 0;
}

/* Run CMD, capture its output (stdout and stderr) into OUT; returns exit status. */
static int
run(const char *cmd, char *out, size_t outlen)
{
	char	 full[1024];
	FILE	*p;
	size_t	 n = 0, k;
	int	 st;

	snprintf(full, sizeof(full), "PERF_BUILDID_DIR='%s/bidcache' PAGER=cat %s 2>&1", tmpdir, cmd);
	ck_assert_ptr_nonnull(p = popen(full, "r"));
	while (n + 1 < outlen && (k = fread(out + n, 1, outlen - 1 - n, p)) > 0)
		n += k;
	out[n] = '\0';
	while (fread(full, 1, sizeof(full), p) > 0)
		;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Lines of OUT containing NEEDLE. */
static int
count(const char *out, const char *needle)
{
	int	 n = 0;

	for (; (out = strstr(out, needle)) != NULL; out += strlen(needle))
		n++;
	return n;
}

#define OUTSZ	(1 << 20)

START_TEST(test_perf_report_dump)
{
	char	 path[128], cmd[512];
	char	*out;
	struct expect e;

	ck_assert_msg(have_perf(), "perf is not installed (linux-perf is in tests/deps.sh)");
	path_in(path, sizeof(path), "perf.data");
	write_file(path, &e);
	out = malloc(OUTSZ);
	ck_assert_ptr_nonnull(out);
	snprintf(cmd, sizeof(cmd), "perf report -D -i '%s'", path);
	ck_assert_msg(run(cmd, out, OUTSZ) == 0, "perf report -D failed:\n%s", out);
	ck_assert_int_eq(count(out, ": PERF_RECORD_COMM"), 1);
	ck_assert_int_eq(count(out, ": PERF_RECORD_MMAP2"), 1);
	ck_assert_int_eq(count(out, ": PERF_RECORD_SAMPLE"), NSAMPLES);
	ck_assert_int_eq(count(out, ": PERF_RECORD_FINISHED_ROUND"), 1);
	ck_assert_msg(strstr(out, "true:4242/4242") != NULL, "COMM contents not shown:\n%s", out);
	ck_assert_msg(strstr(out, "/bin/true") != NULL, "MMAP2 file not shown");
	/* perf shows the build-id of an MMAP2 in build-id form */
	ck_assert_msg(strstr(out, "112233445566778899aabbccddeeff0102030405") != NULL,
	    "MMAP2 build-id not shown:\n%s", out);
	ck_assert_msg(strstr(out, "0x401040") != NULL, "last sample ip not shown");
	free(out);
}
END_TEST

START_TEST(test_perf_buildid_list)
{
	char	 path[128], cmd[512], out[65536];
	struct expect e;

	ck_assert_msg(have_perf(), "perf is not installed (linux-perf is in tests/deps.sh)");
	path_in(path, sizeof(path), "perf.data");
	write_file(path, &e);
	snprintf(cmd, sizeof(cmd), "perf buildid-list -i '%s'", path);
	ck_assert_msg(run(cmd, out, sizeof(out)) == 0, "perf buildid-list failed:\n%s", out);
	ck_assert_msg(strstr(out, "f0e1d2c3b4a5968778695a4b3c2d1e0f10203040 [kernel.kallsyms]") != NULL,
	    "kernel build-id missing:\n%s", out);
	ck_assert_msg(strstr(out, "112233445566778899aabbccddeeff0102030405 /bin/true") != NULL,
	    "user build-id missing:\n%s", out);
}
END_TEST

START_TEST(test_perf_header_and_script)
{
	char	 path[128], cmd[512], out[65536];
	struct expect e;

	ck_assert_msg(have_perf(), "perf is not installed (linux-perf is in tests/deps.sh)");
	path_in(path, sizeof(path), "perf.data");
	write_file(path, &e);
	snprintf(cmd, sizeof(cmd), "perf report --header-only -i '%s'", path);
	ck_assert_msg(run(cmd, out, sizeof(out)) == 0, "perf report --header-only failed:\n%s", out);
	ck_assert_msg(strstr(out, "# hostname : " HOSTNAME) != NULL, "no hostname:\n%s", out);
	ck_assert_msg(strstr(out, "# os release : 6.1.0-test-amd64") != NULL, "no osrelease:\n%s", out);
	ck_assert_msg(strstr(out, "# arch : x86_64") != NULL, "no arch:\n%s", out);
	ck_assert_msg(strstr(out, "# nrcpus online : 3") != NULL, "no nrcpus:\n%s", out);
	ck_assert_msg(strstr(out, "perfmapd -f --state-dir /var/lib/perfmapd") != NULL,
	    "no cmdline:\n%s", out);
	ck_assert_msg(strstr(out, "cpu-clock") != NULL, "no event desc:\n%s", out);

	snprintf(cmd, sizeof(cmd), "perf script -i '%s'", path);
	ck_assert_msg(run(cmd, out, sizeof(out)) == 0, "perf script failed:\n%s", out);
	ck_assert_msg(count(out, " cpu-clock: ") == NSAMPLES,
	    "perf script does not show %d samples:\n%s", NSAMPLES, out);
	ck_assert_int_eq(count(out, "true  4242 "), NSAMPLES);
	ck_assert_int_eq(count(out, "(/bin/true)"), NSAMPLES);
}
END_TEST

/* The made-up machine as perf reads it back: every line perf prints for it. */
START_TEST(test_perf_machine_features)
{
	static const char *const want[] = {
		"# nrcpus online : 3\n", "# nrcpus avail : 4\n",
		"# cpudesc : Test CPU 9000\n", "# cpuid : GenuineTest,6,85,7\n",
		"# total memory : 2048000 kB\n",
		"# sibling sockets : 0-1\n# sibling sockets : 2-3\n"
		"# sibling dies    : 0-1\n# sibling dies    : 2-3\n"
		"# sibling threads : 0\n# sibling threads : 1\n# sibling threads : 2\n"
		"# CPU 0: Core ID 0, Die ID 0, Socket ID 0\n"
		"# CPU 1: Core ID 1, Die ID 0, Socket ID 0\n"
		"# CPU 2: Core ID 0, Die ID 1, Socket ID 1\n"
		"# CPU 3: Core ID -1, Die ID -1, Socket ID -1\n"
		"# node0 meminfo  : total = 1000 kB, free = 500 kB\n# node0 cpu list : 0-1\n"
		"# node1 meminfo  : total = 2000 kB, free = 1500 kB\n# node1 cpu list : 2-3\n"
		"# pmu mappings: cpu = 4, software = 1, cpu_core = 8\n",
		"# CPU cache info:\n#  L1 Data                 32K [0]\n"
		"#  L1 Instruction          32K [0]\n#  L2 Unified             512K [0-1]\n",
		"# memory nodes (nr 2, block size 0x8000000):\n#    0 [512M]: 0-3\n"
		"#    1 [256M]: 64-65\n",
		"# cpu pmu capabilities: branches=32, max_precise=3\n",
		"# hybrid cpu system:\n# cpu_core cpu list : 0-1\n",
		"# cpu_core pmu capabilities: pmu_name=test_hybrid\n",
	};
	char	 path[128], cmd[512], out[65536];
	struct expect e;
	size_t	 i;

	if (!have_perf()) {
		printf("SKIP: perf not installed (perf report --header-only -I)\n");
		return;
	}
	path_in(path, sizeof(path), "perf.data");
	write_file(path, &e);
	snprintf(cmd, sizeof(cmd), "perf report --header-only -I -i '%s'", path);
	ck_assert_msg(run(cmd, out, sizeof(out)) == 0, "perf report --header-only failed:\n%s", out);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(strstr(out, want[i]) != NULL, "perf does not print\n%s\nin:\n%s",
		    want[i], out);
	ck_assert_msg(strstr(out, "missing features: TRACING_DATA BRANCH_STACK GROUP_DESC "
	    "AUXTRACE STAT DIR_FORMAT BPF_PROG_INFO BPF_BTF COMPRESSED \n") != NULL,
	    "other features missing than expected:\n%s", out);

	/* Samples on CPUs 0, 1, 2, 0, 1: sockets 0 and 1, none unknown. */
	snprintf(cmd, sizeof(cmd), "perf report --stdio --sort socket -i '%s' 2>/dev/null", path);
	ck_assert_msg(run(cmd, out, sizeof(out)) == 0, "perf report --sort socket failed:\n%s", out);
	ck_assert_msg(strstr(out, "80.00%     000\n") != NULL && strstr(out, "20.00%     001\n") != NULL &&
	    strstr(out, "-001") == NULL, "sockets wrong:\n%s", out);

	/* perf 6.1 crashed here without CPUDESC and CPUID. */
	snprintf(cmd, sizeof(cmd), "perf data convert --to-json '%s/out.json' -i '%s' && "
	    "cat '%s/out.json'", tmpdir, path, tmpdir);
	ck_assert_msg(run(cmd, out, sizeof(out)) == 0, "perf data convert --to-json failed:\n%s", out);
	ck_assert_msg(strstr(out, "\"cpu-desc\": \"Test CPU 9000\"") != NULL, "no cpu-desc:\n%s", out);
	ck_assert_int_eq(count(out, "\"timestamp\":"), NSAMPLES);
}
END_TEST

/* --- damage --------------------------------------------------------------- */

/* A crashed writer: data.size still 0, the file cut inside a record. */
/*
 * A build-id table of any size is read (a window at a time): a user's
 * 16,000 mapped links under 4 KiB paths make one of 64 MiB, and a reader
 * that refused it (store, hits, the cache's eviction) left that
 * segment's binaries unprotected (found by a review).  Here 20,000
 * entries of 4,000-byte names: 80 MB.
 */
static int
count_bid_cb(const struct perfdata_buildid *b, void *arg)
{
	size_t	*n = arg;

	ck_assert_uint_eq(b->id[0], (uint8_t)(*n & 0xff));
	ck_assert_uint_eq(b->id[1], (uint8_t)(*n >> 8));
	ck_assert_uint_eq(strlen(b->filename), 3999);
	/* the mark of a path proven unlinked (PERFDATA_MISC_UNLINKED) read back, the mode kept */
	ck_assert_int_eq(b->unlinked, (int)(*n & 1));
	ck_assert_int_eq(b->kernel, 0);
	(*n)++;
	return 0;
}

START_TEST(test_big_buildid_table)
{
	enum { N = 20000 };
	struct perfdata pd;
	struct perfdata_attr a;
	struct perfdata_meta meta;
	struct perfdata_buildid *bids;
	struct perfdata_file f;
	struct expect e;
	char	 path[128], err[256], *name;
	size_t	 i, n = 0;

	ck_assert_ptr_nonnull(bids = calloc(N, sizeof(*bids)));
	ck_assert_ptr_nonnull(name = malloc(4000));
	memset(name, 'p', 3999);
	name[0] = '/';
	name[3999] = '\0';
	for (i = 0; i < N; i++) {
		bids[i].id[0] = (uint8_t)(i & 0xff);
		bids[i].id[1] = (uint8_t)(i >> 8);
		bids[i].size = 20;
		bids[i].unlinked = (int)(i & 1);
		bids[i].filename = name;
	}
	path_in(path, sizeof(path), "big.data");
	make_attr(&a);
	make_meta(&meta);
	build_records(&e);
	ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), 0);
	ck_assert_int_eq(perfdata_write(&pd, e.data, e.len), 0);
	ck_assert_int_eq(perfdata_finish(&pd, &a, 1, &meta, bids, N), 0);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	ck_assert_int_eq(perfdata_buildids(&f, count_bid_cb, &n), N);
	ck_assert_uint_eq(n, N);
	perfdata_file_close(&f);
	unlink(path);
	free(name);
	free(bids);
}
END_TEST

START_TEST(test_torn_file)
{
	char	 path[128], err[256] = "";
	struct expect e;
	struct perfdata_file f;
	struct walked w;
	uint64_t zero = 0, data_off, cut;
	int	 fd;
	size_t	 whole = 4;		/* COMM, MMAP2, 2 SAMPLEs, then cut */

	path_in(path, sizeof(path), "torn.data");
	write_file(path, &e);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	data_off = f.h.data.offset;
	perfdata_file_close(&f);

	cut = data_off + e.off[whole] + 20;	/* inside the third SAMPLE */
	ck_assert_int_ge(fd = open(path, O_RDWR), 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)cut), 0);
	ck_assert_int_eq(pwrite(fd, &zero, 8, offsetof(struct perf_file_header, data.size)), 8);
	close(fd);

	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	ck_assert_uint_eq(f.h.data.size, 0);
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(perfdata_walk(&f, walk_cb, &w), (int64_t)e.off[whole]);
	ck_assert_uint_eq(w.n, whole);
	ck_assert_mem_eq(w.data, e.data, e.off[whole]);
	perfdata_file_close(&f);

	/* Cut exactly after a record: all of them, nothing torn. */
	ck_assert_int_ge(fd = open(path, O_RDWR), 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)(data_off + e.off[3])), 0);
	close(fd);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(perfdata_walk(&f, walk_cb, &w), (int64_t)e.off[3]);
	ck_assert_uint_eq(w.n, 3);
	perfdata_file_close(&f);

	/* Cut inside a header (fewer than 8 bytes left). */
	ck_assert_int_ge(fd = open(path, O_RDWR), 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)(data_off + e.off[2] + 5)), 0);
	close(fd);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	ck_assert_int_eq(perfdata_walk(&f, NULL, NULL), (int64_t)e.off[2]);
	perfdata_file_close(&f);
}
END_TEST

/*
 * A data.size so large that data.offset + data.size wraps around 2^64 must
 * not hide the records: the walk is bounded by the file, as with size 0.
 */
START_TEST(test_huge_data_size)
{
	char	 path[128], err[256] = "";
	struct expect e;
	struct perfdata_file f;
	struct walked w;
	uint64_t sizes[3];
	int	 fd, k;

	path_in(path, sizeof(path), "huge.data");
	write_file(path, &e);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	sizes[0] = UINT64_MAX - f.h.data.offset + 1 + 16;	/* end wraps to 16 */
	sizes[1] = UINT64_MAX;
	sizes[2] = f.file_size;					/* past the end, no wrap */
	perfdata_file_close(&f);
	for (k = 0; k < 3; k++) {
		ck_assert_int_ge(fd = open(path, O_RDWR), 0);
		ck_assert_int_eq(pwrite(fd, &sizes[k], 8, offsetof(struct perf_file_header, data.size)), 8);
		close(fd);
		ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
		memset(&w, 0, sizeof(w));
		/* all the records, then it stops in the feature table */
		ck_assert_int_ge(perfdata_walk(&f, walk_cb, &w), (int64_t)e.len);
		ck_assert_uint_ge(w.n, e.nrec);
		ck_assert_mem_eq(w.data, e.data, e.len);
		perfdata_file_close(&f);
	}
}
END_TEST

/* A zeroed region after the last record (preallocated, crash) stops the walk. */
START_TEST(test_zero_tail)
{
	char	 path[128], err[256] = "";
	struct expect e;
	struct perfdata_file f;
	uint64_t zero = 0;
	int	 fd;

	path_in(path, sizeof(path), "zero.data");
	write_file(path, &e);
	ck_assert_int_ge(fd = open(path, O_RDWR), 0);
	ck_assert_int_eq(pwrite(fd, &zero, 8, offsetof(struct perf_file_header, data.size)), 8);
	close(fd);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	/* Runs into the feature section table after the records: must stop, not crash. */
	ck_assert_int_ge(perfdata_walk(&f, NULL, NULL), (int64_t)e.len);
	perfdata_file_close(&f);
}
END_TEST

static void
expect_open_fails(const char *path, const char *what)
{
	struct perfdata_file f;
	char	 err[256] = "";

	ck_assert_msg(perfdata_open(&f, path, err, sizeof(err)) == -1, "%s: opened", what);
	ck_assert_msg(err[0] != '\0', "%s: no error message", what);
	ck_assert_msg(strstr(err, path) != NULL, "%s: message does not name the file: %s", what, err);
	ck_assert_int_eq(f.fd, -1);
	ck_assert_ptr_null(f.attrs);
}

START_TEST(test_open_bad)
{
	char	 path[128], good[128];
	struct expect e;
	uint8_t	 raw[16384];		/* the whole file, machine features included */
	struct perf_file_header h;
	int	 fd;
	ssize_t	 n;

	path_in(good, sizeof(good), "good.data");
	write_file(good, &e);
	ck_assert_int_ge(fd = open(good, O_RDONLY), 0);
	n = read(fd, raw, sizeof(raw));
	close(fd);
	ck_assert_int_gt(n, 512);
	ck_assert_int_lt(n, (ssize_t)sizeof(raw));	/* the whole file */

	path_in(path, sizeof(path), "bad.data");

	/* Missing file. */
	expect_open_fails(path, "missing");
	/* Not a perf file. */
	{
		static const char text[] = "#!/bin/sh\necho this is not perf data at all, just text....\n"
		    "padding padding padding padding padding padding padding padding\n";

		ck_assert_uint_gt(strlen(text), 104);
		check_write_file(path, text, strlen(text));
	}
	expect_open_fails(path, "text");
	/* Empty file, truncated header. */
	check_write_file(path, raw, 0);
	expect_open_fails(path, "empty");
	check_write_file(path, raw, 50);
	expect_open_fails(path, "50 bytes");
	check_write_file(path, raw, 103);
	expect_open_fails(path, "103 bytes");
	/* Header only: the attrs it points to are missing. */
	check_write_file(path, raw, 104);
	expect_open_fails(path, "header only");

	/* Absurd attr_size / attrs.size / offsets. */
#define BAD(field, value, what) do {					\
		memcpy(&h, raw, sizeof(h));				\
		h.field = (value);					\
		memcpy(raw, &h, sizeof(h));				\
		check_write_file(path, raw, (size_t)n);			\
		expect_open_fails(path, what);				\
		memcpy(&h, raw, sizeof(h));				\
	} while (0)
	{
		struct perf_file_header orig;

		memcpy(&orig, raw, sizeof(orig));
		BAD(attr_size, 0, "attr_size 0");
		memcpy(raw, &orig, sizeof(orig));
		BAD(attr_size, 8, "attr_size 8");
		memcpy(raw, &orig, sizeof(orig));
		BAD(attr_size, 1ULL << 40, "attr_size 2^40");
		memcpy(raw, &orig, sizeof(orig));
		BAD(attr_size, UINT64_MAX, "attr_size max");
		memcpy(raw, &orig, sizeof(orig));
		BAD(attrs.size, UINT64_MAX - 15, "attrs.size huge");
		memcpy(raw, &orig, sizeof(orig));
		BAD(attrs.size, orig.attr_size * 1000000, "attrs.size 10^6 attrs");
		memcpy(raw, &orig, sizeof(orig));
		BAD(attrs.size, orig.attr_size + 1, "attrs.size not a multiple");
		memcpy(raw, &orig, sizeof(orig));
		BAD(attrs.size, 0, "no attrs");
		memcpy(raw, &orig, sizeof(orig));
		BAD(attrs.offset, UINT64_MAX - 8, "attrs.offset huge");
		memcpy(raw, &orig, sizeof(orig));
		BAD(attrs.offset, (uint64_t)n - 16, "attrs past the end");
		memcpy(raw, &orig, sizeof(orig));
		BAD(data.offset, 1ULL << 50, "data.offset past the end");
		memcpy(raw, &orig, sizeof(orig));
		BAD(magic, 0x454c4946524550ULL, "bad magic");
		memcpy(raw, &orig, sizeof(orig));
		BAD(size, 96, "header size");
		memcpy(raw, &orig, sizeof(orig));
		/* attr_size larger than any attr but consistent with the file. */
		{
			static uint8_t big[16384];

			memcpy(&h, raw, sizeof(h));
			h.attr_size = 8192;
			h.attrs.offset = 104;
			h.attrs.size = 8192;
			h.data.offset = 104 + 8192;
			h.data.size = 0;
			memcpy(big, &h, sizeof(h));
			check_write_file(path, big, sizeof(big));
			expect_open_fails(path, "attr_size 8192");
		}
		/* The untouched prefix still opens. */
		check_write_file(path, raw, (size_t)n);
		{
			struct perfdata_file f;
			char	 err[256];

			ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
			perfdata_file_close(&f);
		}
	}
#undef BAD
}
END_TEST

/* perfdata_create refuses to overwrite (O_EXCL) and reports errno. */
START_TEST(test_create_errors)
{
	char	 path[128];
	struct perfdata pd;
	struct perfdata_attr a;

	make_attr(&a);
	path_in(path, sizeof(path), "x.data");
	ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), 0);
	perfdata_close(&pd);
	ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), -EEXIST);
	path_in(path, sizeof(path), "nodir/x.data");
	ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), -ENOENT);
}
END_TEST

/*
 * A segment listed while still open (NAME.partial) and closed since
 * (renamed NAME), as during a long profile: opened by its final name, the
 * path changed to it (before, the profile's newest segment was "gone").
 */
START_TEST(test_open_segment_closed_since)
{
	char	 path[128], listed[160], err[256];
	struct perfdata pd;
	struct perfdata_attr a;
	struct perfdata_meta meta;
	struct perfdata_file f;

	make_attr(&a);
	make_meta(&meta);
	path_in(path, sizeof(path), "perf-000002-20261118T000000Z.data");
	snprintf(listed, sizeof(listed), "%s.partial", path);
	ck_assert_int_eq(perfdata_create(&pd, listed, &a, 1), 0);
	ck_assert_int_eq(perfdata_finish(&pd, &a, 1, &meta, NULL, 0), 0);
	ck_assert_int_eq(rename(listed, path), 0);
	ck_assert_msg(perfdata_open_segment(&f, listed, err, sizeof(err)) == 0, "%s", err);
	perfdata_file_close(&f);
	ck_assert_str_eq(listed, path);
	/* gone for good: an error, the path as it was */
	ck_assert_int_eq(unlink(path), 0);
	snprintf(listed, sizeof(listed), "%s.partial", path);
	ck_assert_int_eq(perfdata_open_segment(&f, listed, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(listed, ".partial"));
}
END_TEST

/* Records larger than the buffer go straight to the file. */
START_TEST(test_big_writes)
{
	char	 path[128], err[256];
	struct perfdata pd;
	struct perfdata_attr a;
	struct perfdata_meta meta;
	struct perfdata_file f;
	uint8_t	*big;
	const size_t chunk = 65528, total_chunks = 40;	/* ~2.5 MiB: > 2 buffers */
	size_t	 i;
	int64_t	 bytes;

	make_attr(&a);
	make_meta(&meta);
	big = calloc(1, chunk * 20);
	ck_assert_ptr_nonnull(big);
	for (i = 0; i < 20; i++) {
		struct perf_event_header h = { .type = PERF_RECORD_FINISHED_INIT + 100, .size = (uint16_t)chunk };

		memcpy(big + i * chunk, &h, sizeof(h));
		big[i * chunk + 8] = (uint8_t)i;
	}
	path_in(path, sizeof(path), "big.data");
	ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), 0);
	for (i = 0; i < total_chunks / 2; i++)		/* small writes: buffered */
		ck_assert_int_eq(perfdata_write(&pd, big, chunk), 0);
	ck_assert_int_eq(perfdata_write(&pd, big, chunk * 20), 0);	/* 1.3 MB > the 1 MiB buffer */
	ck_assert_uint_eq(pd.data_size, chunk * 40);
	ck_assert_int_eq(perfdata_finish(&pd, &a, 1, &meta, NULL, 0), 0);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	ck_assert_uint_eq(f.h.data.size, chunk * 40);
	bytes = perfdata_walk(&f, NULL, NULL);
	ck_assert_int_eq(bytes, (int64_t)(chunk * 40));
	perfdata_file_close(&f);
	free(big);
}
END_TEST

/*
 * A run of PERFDATA_DIRECT bytes or more is written from where it lies,
 * behind the buffered records (one pwritev): the file holds every record in
 * the order given.  A failed one takes nothing (neither the buffer nor the
 * run are counted as written) and the next write puts both in place.
 */
START_TEST(test_runs_in_place)
{
	char	 path[128], err[256];
	struct perfdata pd;
	struct perfdata_attr a;
	struct perfdata_meta meta;
	struct perfdata_file f;
	const size_t rec = 512, small = 3, run = 160;	/* 80 KiB runs */
	uint8_t	*in, *want;
	size_t	 i, off = 0, wlen = 0;
	uint64_t size;
	int	 fd, ro;

	in = calloc(4, rec * (run + small));	/* the records, then the file read back */
	want = calloc(4, rec * (run + small));
	ck_assert(in != NULL && want != NULL);
	for (i = 0; i < run; i++) {
		struct perf_event_header h = { .type = PERF_RECORD_FINISHED_INIT + 100,
		    .size = (uint16_t)rec };

		memcpy(in + i * rec, &h, sizeof(h));
		memset(in + i * rec + sizeof(h), (int)(i + 1), rec - sizeof(h));
	}
	make_attr(&a);
	make_meta(&meta);
	path_in(path, sizeof(path), "runs.data");
	ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), 0);
#define PUT(p, n) do {							\
	ck_assert_int_eq(perfdata_write(&pd, (p), (n)), 0);		\
	memcpy(want + wlen, (p), (n));					\
	wlen += (n);							\
} while (0)
	PUT(in, rec * small);			/* buffered */
	PUT(in + rec * 7, rec * (run - 7));	/* through, behind them */
	PUT(in + rec * 2, rec);
	PUT(in, rec * run);			/* through */
	ck_assert_uint_eq(pd.buflen, 0);
	PUT(in + rec * 5, rec * small);

	/* a write-through that fails: nothing of it counts, the buffer stays */
	size = pd.data_size;
	off = pd.buflen;
	fd = pd.fd;
	ck_assert_int_ge(ro = open(path, O_RDONLY), 0);
	pd.fd = ro;
	ck_assert_int_eq(perfdata_write(&pd, in, rec * run), -EBADF);
	ck_assert_uint_eq(pd.data_size, size);
	ck_assert_uint_eq(pd.buflen, off);
	ck_assert_int_eq(pd.error, EBADF);
	pd.fd = fd;
	close(ro);
	PUT(in + rec, rec * (run - 1));		/* then both land */
	ck_assert_int_eq(pd.error, 0);
#undef PUT
	ck_assert_uint_eq(pd.data_size, wlen);
	ck_assert_int_eq(perfdata_finish(&pd, &a, 1, &meta, NULL, 0), 0);

	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	ck_assert_uint_eq(f.h.data.size, wlen);
	ck_assert_int_eq(perfdata_walk(&f, NULL, NULL), (int64_t)wlen);
	ck_assert_int_eq(pread(f.fd, in, wlen, (off_t)f.h.data.offset), (ssize_t)wlen);
	ck_assert_mem_eq(in, want, wlen);
	perfdata_file_close(&f);
	free(in);
	free(want);
}
END_TEST

/*
 * A full filesystem: -ENOSPC from write/flush/finish while it lasts; what
 * was buffered is kept, and once space returns it all lands, the file
 * finishes and reads back whole.
 */
START_TEST(test_enospc)
{
	char	 mnt[128], path[160];
	struct perfdata pd;
	struct perfdata_attr a;
	struct perfdata_meta meta;
	uint8_t	 rec[4096];
	struct perf_event_header h = { .type = PERF_RECORD_FINISHED_INIT + 100, .size = sizeof(rec) };
	int	 rc = 0, i;

	path_in(mnt, sizeof(mnt), "full");
	ck_assert_int_eq(mkdir(mnt, 0700), 0);
	/*
	 * In a private mount namespace of this (forked) test process: the
	 * mount vanishes with it even when an assertion ends the test early.
	 */
	if (geteuid() != 0) {
		printf("SKIP: the ENOSPC test mounts a 64k tmpfs: not root\n");
		return;
	}
	ck_assert_msg(unshare(CLONE_NEWNS) == 0 &&
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0 &&
	    mount("tmpfs", mnt, "tmpfs", 0, "size=64k") == 0,
	    "cannot mount a 64k tmpfs for the ENOSPC test: %s", strerror(errno));
	make_attr(&a);
	make_meta(&meta);
	memset(rec, 0x5a, sizeof(rec));
	memcpy(rec, &h, sizeof(h));
	snprintf(path, sizeof(path), "%s/perf.data", mnt);
	ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), 0);
	/* 2 MiB of records into 64 KiB: the first flush of the 1 MiB buffer fails. */
	for (i = 0; i < 512 && rc == 0; i++)
		rc = perfdata_write(&pd, rec, sizeof(rec));
	ck_assert_int_eq(rc, -ENOSPC);
	ck_assert_int_eq(pd.error, ENOSPC);
	/* The buffer is full and cannot be flushed: writes and flushes keep failing. */
	ck_assert_int_eq(perfdata_write(&pd, rec, sizeof(rec)), -ENOSPC);
	ck_assert_int_eq(perfdata_write(&pd, rec, 8), -ENOSPC);
	ck_assert_int_eq(perfdata_flush(&pd), -ENOSPC);
	ck_assert_int_eq(perfdata_flush(&pd), -ENOSPC);
	ck_assert_int_eq(perfdata_finish(&pd, &a, 1, &meta, NULL, 0), -ENOSPC);
	ck_assert_int_eq(pd.fd, -1);

	/* Small file, explicit flush: the error comes from perfdata_flush. */
	unlink(path);
	{
		char	 filler[160];
		int	 fd;
		static uint8_t junk[4096];

		snprintf(filler, sizeof(filler), "%s/filler", mnt);
		ck_assert_int_ge(fd = open(filler, O_WRONLY | O_CREAT, 0600), 0);
		while (write(fd, junk, sizeof(junk)) > 0)
			;
		close(fd);
		unlink(filler);
		/* leave ~8 KiB free: enough for the prologue, not for the records */
		ck_assert_int_ge(fd = open(filler, O_WRONLY | O_CREAT, 0600), 0);
		for (i = 0; i < 14; i++)
			ck_assert_int_eq(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
		close(fd);
		ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), 0);
		for (i = 0; i < 4; i++)
			ck_assert_int_eq(perfdata_write(&pd, rec, sizeof(rec)), 0);
		ck_assert_int_eq(perfdata_flush(&pd), -ENOSPC);
		ck_assert_int_eq(pd.error, ENOSPC);
		/* still room in the buffer: a record is taken (not lost) */
		ck_assert_int_eq(perfdata_write(&pd, rec, sizeof(rec)), 0);
		ck_assert_int_eq(perfdata_flush(&pd), -ENOSPC);
		/* space returns: everything buffered lands, the file finishes */
		ck_assert_int_eq(unlink(filler), 0);
		ck_assert_int_eq(perfdata_flush(&pd), 0);
		ck_assert_int_eq(pd.error, 0);
		ck_assert_int_eq(perfdata_finish(&pd, &a, 1, &meta, NULL, 0), 0);
		{
			struct perfdata_file f;
			char	 err[256];
			int64_t	 good;

			ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
			good = perfdata_walk(&f, NULL, NULL);
			ck_assert_int_eq(good, 5 * (int64_t)sizeof(rec));
			ck_assert_uint_eq(f.h.data.size, 5 * sizeof(rec));
			perfdata_file_close(&f);
		}
	}
	umount(mnt);
}
END_TEST


/* --- compressed data sections ---------------------------------------------- */

/*
 * LEN bytes of SRC as COMPRESSED records of at most MAXPAY bytes of
 * payload each, ending with a flush (as perf record -z's zstd.c): appended
 * to OUT at *N; the end of each record in ENDS (if not NULL).
 */
static void
zrecords(ZSTD_CCtx *z, const void *src, size_t len, size_t maxpay, uint8_t *out,
    size_t *n, size_t *ends, size_t *nends)
{
	ZSTD_inBuffer in = { src, len, 0 };
	size_t	 left;

	do {
		struct perf_event_header h = { PERF_RECORD_COMPRESSED, 0, 0 };
		ZSTD_outBuffer o = { out + *n + sizeof(h), maxpay, 0 };

		left = ZSTD_compressStream2(z, &o, &in, ZSTD_e_flush);
		ck_assert(!ZSTD_isError(left));
		if (o.pos == 0)
			continue;
		h.size = (uint16_t)(sizeof(h) + o.pos);
		memcpy(out + *n, &h, sizeof(h));
		*n += h.size;
		if (ends != NULL)
			ends[(*nends)++] = *n;
	} while (left != 0 || in.pos < in.size);
}

struct zfile {
	uint64_t data_off;
	size_t	 len;			/* bytes of COMPRESSED records */
	size_t	 a_end;			/* end of the first chunk (records 0-3) */
	size_t	 ends[64], nends;	/* end of each COMPRESSED record */
};

/*
 * The standard records as perf record -z would write them: records 0-3 in
 * one COMPRESSED record, the rest in COMPRESSED records of 8 bytes of
 * payload each, so that records straddle them.  No HEADER_COMPRESSED: as a
 * segment cut by a crash before its features.
 */
static void
write_zfile(const char *path, struct expect *e, struct zfile *zf)
{
	struct perfdata pd;
	struct perfdata_attr a;
	struct perfdata_meta meta;
	ZSTD_CCtx *z = ZSTD_createCCtx();
	static uint8_t out[65536];
	size_t	 n = 0;

	memset(zf, 0, sizeof(*zf));
	make_attr(&a);
	make_meta(&meta);
	build_records(e);
	ck_assert_ptr_nonnull(z);
	zrecords(z, e->data, e->off[4], 60000, out, &n, zf->ends, &zf->nends);
	zf->a_end = n;
	zrecords(z, e->data + e->off[4], e->len - e->off[4], 8, out, &n, zf->ends, &zf->nends);
	ck_assert_uint_ge(zf->nends, 4);
	ZSTD_freeCCtx(z);
	zf->len = n;
	ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), 0);
	zf->data_off = pd.data_offset;
	ck_assert_int_eq(perfdata_write(&pd, out, n), 0);
	ck_assert_int_eq(perfdata_finish(&pd, &a, 1, &meta, NULL, 0), 0);
}

START_TEST(test_compressed_walk)
{
	char	 path[128], err[256] = "";
	struct expect e;
	struct zfile zf;
	struct perfdata_file f;
	struct walked w;

	path_in(path, sizeof(path), "z.data");
	write_zfile(path, &e, &zf);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(perfdata_walk(&f, walk_cb, &w), (int64_t)zf.len);
	ck_assert_uint_eq(w.n, e.nrec);
	ck_assert_uint_eq(w.len, e.len);
	ck_assert_mem_eq(w.data, e.data, e.len);
	ck_assert_uint_eq(f.ncompressed, zf.nends);
	ck_assert_str_eq(f.error, "");
	/* stopped by the callback inside a COMPRESSED record */
	memset(&w, 0, sizeof(w));
	w.stop_after = 2;
	ck_assert_int_eq(perfdata_walk(&f, walk_cb, &w), 0);
	ck_assert_uint_eq(w.n, 2);
	perfdata_file_close(&f);
}
END_TEST

/* Cut as by a crash: the walk ends at the last COMPRESSED record after which no record is torn. */
START_TEST(test_compressed_torn)
{
	char	 path[128], err[256] = "";
	struct expect e;
	struct zfile zf;
	struct perfdata_file f;
	struct walked w;
	uint64_t zero = 0;
	size_t	 k;
	int	 fd;

	path_in(path, sizeof(path), "ztorn.data");
	write_zfile(path, &e, &zf);
	ck_assert_int_ge(fd = open(path, O_RDWR), 0);
	ck_assert_int_eq(pwrite(fd, &zero, 8, offsetof(struct perf_file_header, data.size)), 8);
	/* inside the second-to-last COMPRESSED record */
	k = zf.nends - 2;
	ck_assert_int_eq(ftruncate(fd, (off_t)(zf.data_off + zf.ends[k] - 3)), 0);
	close(fd);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	memset(&w, 0, sizeof(w));
	ck_assert_int_le(perfdata_walk(&f, walk_cb, &w), (int64_t)zf.ends[k - 1]);
	ck_assert_int_ge(perfdata_walk(&f, NULL, NULL), (int64_t)zf.a_end);
	ck_assert_uint_ge(w.n, 4);
	ck_assert_uint_lt(w.n, e.nrec);
	ck_assert_mem_eq(w.data, e.data, w.len);
	ck_assert_str_eq(f.error, "");
	perfdata_file_close(&f);

	/* cut right after the first chunk: its four records, all of it */
	ck_assert_int_ge(fd = open(path, O_RDWR), 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)(zf.data_off + zf.a_end)), 0);
	close(fd);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(perfdata_walk(&f, walk_cb, &w), (int64_t)zf.a_end);
	ck_assert_uint_eq(w.n, 4);
	ck_assert_mem_eq(w.data, e.data, e.off[4]);
	perfdata_file_close(&f);
}
END_TEST

/* Garbage in a COMPRESSED record's payload: a clean stop after the good ones, with a reason. */
START_TEST(test_compressed_corrupt)
{
	char	 path[128], err[256] = "";
	uint8_t	 junk[40];
	struct expect e;
	struct zfile zf;
	struct perfdata_file f;
	struct walked w;
	int	 fd;

	path_in(path, sizeof(path), "zbad.data");
	write_zfile(path, &e, &zf);
	memset(junk, 0xa5, sizeof(junk));
	ck_assert_int_ge(fd = open(path, O_RDWR), 0);
	/* the payload of the record after the first chunk */
	ck_assert_int_eq(pwrite(fd, junk, 20, (off_t)(zf.data_off + zf.a_end + 8)), 20);
	close(fd);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(perfdata_walk(&f, walk_cb, &w), (int64_t)zf.a_end);
	ck_assert_uint_eq(w.n, 4);
	ck_assert_msg(strstr(f.error, "compressed record at offset") != NULL, "error: %s", f.error);
	perfdata_file_close(&f);
}
END_TEST

/*
 * A COMPRESSED record that decompresses to more than comp_mmap_len (perf
 * would not read it either): refused without allocating for it.  Then a
 * HEADER_COMPRESSED with an absurd comp_mmap_len and one of another type.
 */
START_TEST(test_compressed_bomb)
{
	char	 path[128], err[256] = "";
	struct perfdata pd;
	struct perfdata_attr a;
	struct perfdata_meta meta;
	struct perfdata_file f;
	struct walked w;
	ZSTD_CCtx *z = ZSTD_createCCtx();
	struct perf_event_header fr = { PERF_RECORD_FINISHED_ROUND, 0, 8 };
	uint8_t	*big, out[65536];
	size_t	 i, n = 0, bigsz = COMPRESS_CHUNK + 4096;
	int	 k;

	ck_assert_ptr_nonnull(big = malloc(bigsz));
	for (i = 0; i < bigsz; i += 8)
		memcpy(big + i, &fr, 8);
	zrecords(z, big, bigsz, 60000, out, &n, NULL, NULL);
	ZSTD_freeCCtx(z);
	free(big);
	ck_assert_uint_lt(n, 2000);	/* a few hundred bytes for 132 KiB */
	make_attr(&a);
	path_in(path, sizeof(path), "zbomb.data");
	for (k = 0; k < 3; k++) {
		make_meta(&meta);
		meta.comp = (struct compress_info){ 1, 1, 1, 1, COMPRESS_CHUNK };
		if (k == 1)
			meta.comp.mmap_len = 0xffffffffu;
		if (k == 2)
			meta.comp.type = 2;
		unlink(path);
		ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), 0);
		ck_assert_int_eq(perfdata_write(&pd, out, n), 0);
		ck_assert_int_eq(perfdata_finish(&pd, &a, 1, &meta, NULL, 0), 0);
		ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
		memset(&w, 0, sizeof(w));
		ck_assert_int_eq(perfdata_walk(&f, walk_cb, &w), 0);
		ck_assert_uint_eq(w.n, 0);
		ck_assert_msg(strstr(f.error, k == 0 ? "more than comp_mmap_len" :
		    k == 1 ? "comp_mmap_len 4294967295 out of range" : "not zstd") != NULL,
		    "case %d: %s", k, f.error);
		perfdata_file_close(&f);
	}
}
END_TEST

struct count_walk {
	size_t	 n, bytes;
};

static int
count_cb(const struct perf_event_header *h, void *arg)
{
	struct count_walk *c = arg;

	c->n++;
	c->bytes += h->size;
	return 0;
}

/*
 * perfdata's compressing writer: many records (more than a chunk, so that
 * flushes and straddles happen), read back whole by the walker; every
 * COMPRESSED record at most 64 KiB; HEADER_COMPRESSED as perf record's.
 */
START_TEST(test_compress_writer)
{
	char	 path[128], err[256] = "";
	struct perfdata pd;
	struct perfdata_attr a;
	struct perfdata_meta meta;
	struct perfdata_file f;
	struct expect e;
	struct compress_info ci;
	void	*feat;
	struct count_walk cw = { 0, 0 };
	size_t	 flen, i, total = 0, nrec = 0;
	uint64_t pos, raw_end;
	int64_t	 good;

	path_in(path, sizeof(path), "zw.data");
	make_attr(&a);
	make_meta(&meta);
	build_records(&e);
	ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), 0);
	ck_assert_int_eq(perfdata_compress(&pd, 3), 0);
	/* 3 MB: the standard records again and again, a random IP each time */
	srandom(7);
	for (i = 0; total < 3U << 20; i++) {
		uint64_t ip = (uint64_t)random();

		memcpy(e.data + e.off[3] + 16, &ip, 8);	/* the 2nd sample's IP */
		ck_assert_int_eq(perfdata_write(&pd, e.data, e.len), 0);
		total += e.len;
		nrec += e.nrec;
	}
	ck_assert_int_eq(perfdata_flush(&pd), 0);
	ck_assert_uint_lt(pd.data_size, total / 2);
	ck_assert_int_eq(perfdata_finish(&pd, &a, 1, &meta, NULL, 0), 0);

	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	ck_assert_int_eq(perfdata_read_feature(&f, HEADER_COMPRESSED, &feat, &flen, 64), 0);
	ck_assert_uint_eq(flen, sizeof(ci));
	memcpy(&ci, feat, sizeof(ci));
	free(feat);
	ck_assert_uint_eq(ci.version, 1);
	ck_assert_uint_eq(ci.type, 1);
	ck_assert_uint_eq(ci.level, 3);
	ck_assert_uint_ge(ci.ratio, 2);
	ck_assert_uint_eq(ci.mmap_len, COMPRESS_CHUNK);
	/* only COMPRESSED records at the top, each at most 64 KiB */
	raw_end = f.h.data.offset + f.h.data.size;
	for (pos = f.h.data.offset; pos < raw_end; ) {
		struct perf_event_header h;

		ck_assert_int_eq(pread(f.fd, &h, 8, (off_t)pos), 8);
		ck_assert_uint_eq(h.type, PERF_RECORD_COMPRESSED);
		ck_assert_uint_gt(h.size, 8);
		pos += h.size;
	}
	ck_assert_uint_eq(pos, raw_end);
	good = perfdata_walk(&f, count_cb, &cw);
	ck_assert_int_eq(good, (int64_t)f.h.data.size);
	ck_assert_uint_eq(cw.n, nrec);
	ck_assert_uint_eq(cw.bytes, total);
	ck_assert_str_eq(f.error, "");
	perfdata_file_close(&f);
}
END_TEST

/* perf itself reads the writer's compressed file: the same samples, the feature shown. */
/* The standard records (E), compressed at level 1 into PATH, with build-ids BIDS. */
static void
write_compressed(const char *path, const struct perfdata_buildid *bids, size_t nbids,
    struct expect *e)
{
	struct perfdata pd;
	struct perfdata_attr a;
	struct perfdata_meta meta;

	make_attr(&a);
	make_meta(&meta);
	build_records(e);
	ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), 0);
	ck_assert_int_eq(perfdata_compress(&pd, 1), 0);
	ck_assert_int_eq(perfdata_write(&pd, e->data, e->len), 0);
	ck_assert_int_eq(perfdata_finish(&pd, &a, 1, &meta, bids, nbids), 0);
}

START_TEST(test_perf_compressed)
{
	char	 path[128], cmd[512], out[65536];
	struct perfdata_buildid bids[2];
	struct expect e;

	ck_assert_msg(have_perf(), "perf is not installed (linux-perf is in tests/deps.sh)");
	path_in(path, sizeof(path), "zperf.data");
	memcpy(bids, BIDS, sizeof(bids));
	memcpy(bids[0].id, KERN_BID, 20);
	memcpy(bids[1].id, USER_BID, 20);
	write_compressed(path, bids, 2, &e);
	snprintf(cmd, sizeof(cmd), "perf script -i '%s'", path);
	ck_assert_msg(run(cmd, out, sizeof(out)) == 0, "perf script failed:\n%s", out);
	ck_assert_msg(count(out, " cpu-clock: ") == NSAMPLES,
	    "perf script does not show %d samples:\n%s", NSAMPLES, out);
	ck_assert_int_eq(count(out, "(/bin/true)"), NSAMPLES);
	snprintf(cmd, sizeof(cmd), "perf report --header-only -i '%s'", path);
	ck_assert_msg(run(cmd, out, sizeof(out)) == 0, "perf report --header-only failed:\n%s", out);
	ck_assert_msg(strstr(out, "# compressed : Zstd, level = 1, ratio = ") != NULL,
	    "no compressed header:\n%s", out);
	snprintf(cmd, sizeof(cmd), "perf report -D -i '%s'", path);
	ck_assert_msg(run(cmd, out, sizeof(out)) == 0, "perf report -D failed:\n%s", out);
	ck_assert_int_eq(count(out, "PERF_RECORD_SAMPLE("), NSAMPLES);
}
END_TEST

/*
 * Records that compress poorly (a user's file names: random text): each
 * stage's block is then larger than half a stage.  perf 6.1 takes a
 * COMPRESSED record that decompresses to nothing as corrupt ("Couldn't
 * decompress data"), so no record may hold only part of a zstd block:
 * perf reads every sample of such a file.
 */
START_TEST(test_perf_compressed_noise)
{
	char	 path[128], cmd[512], *out, name[3001];
	struct perfdata pd;
	struct perfdata_attr a;
	struct perfdata_meta meta;
	struct record_sample_id sid = { .pid = PID, .tid = PID, .time = 1500, .id = IDS[0] };
	struct record_mmap m;
	struct expect e;
	uint8_t	 buf[8192];
	size_t	 i, j, n;

	ck_assert_msg(have_perf(), "perf is not installed (linux-perf is in tests/deps.sh)");
	ck_assert_ptr_nonnull(out = malloc(1 << 20));
	path_in(path, sizeof(path), "znoise.data");
	make_attr(&a);
	make_meta(&meta);
	build_records(&e);
	ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), 0);
	ck_assert_int_eq(perfdata_compress(&pd, 1), 0);
	ck_assert_int_eq(perfdata_write(&pd, e.data, e.off[2]), 0);	/* COMM, MMAP2 */
	srandom(11);
	memset(&m, 0, sizeof(m));
	m.pid = m.tid = PID + 1;
	m.len = 0x1000;
	m.prot = 5;
	m.flags = 2;
	m.filename = name;
	for (i = 0; i < 400; i++) {		/* 1.2 MB of text no dictionary knows */
		name[0] = '/';
		for (j = 1; j < sizeof(name) - 1; j++)
			name[j] = (char)(' ' + 1 + random() % 94);
		name[sizeof(name) - 1] = '\0';
		m.addr = 0x10000000 + i * 0x1000;
		n = record_build_mmap2(buf, &m, PERF_RECORD_MISC_USER, &LAYOUT, &sid);
		ck_assert_int_eq(perfdata_write(&pd, buf, n), 0);
	}
	ck_assert_int_eq(perfdata_write(&pd, e.data + e.off[2], e.len - e.off[2]), 0);
	ck_assert_int_eq(perfdata_finish(&pd, &a, 1, &meta, NULL, 0), 0);
	snprintf(cmd, sizeof(cmd), "perf script -i '%s'", path);
	ck_assert_msg(run(cmd, out, 1 << 20) == 0, "perf script failed:\n%.2000s", out);
	ck_assert_msg(count(out, " cpu-clock: ") == NSAMPLES,
	    "perf script does not show %d samples:\n%.2000s", NSAMPLES, out);
	snprintf(cmd, sizeof(cmd), "perf report --stats -i '%s'", path);
	ck_assert_msg(run(cmd, out, 1 << 20) == 0, "perf report --stats failed:\n%.2000s", out);
	ck_assert_msg(strstr(out, "MMAP2 events:        401") != NULL, "%.2000s", out);
	free(out);
}
END_TEST

/*
 * A compressed segment whose header reached the disk and whose feature
 * table did not (a power loss after its close): HEADER_COMPRESSED cannot
 * be read, and the records decompress under the writer's comp_mmap_len.
 * Repair kept nothing of it and removed it ("not one whole record").
 */
START_TEST(test_repair_compressed_no_features)
{
	char	 path[128], partial[160], err[256] = "", cmd[512], out[65536];
	struct perfdata_file f;
	struct count_walk cw = { 0, 0 };
	struct expect e;
	uint64_t end;

	ck_assert_msg(have_perf(), "perf is not installed (linux-perf is in tests/deps.sh)");
	path_in(path, sizeof(path), "zlost.data");
	snprintf(partial, sizeof(partial), "%s.partial", path);
	write_compressed(path, NULL, 0, &e);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	end = f.h.data.offset + f.h.data.size;
	perfdata_file_close(&f);
	ck_assert_int_eq(truncate(path, (off_t)end), 0);	/* the features lost */
	ck_assert_int_eq(rename(path, partial), 0);
	ck_assert_msg(repair_segment(partial, err, sizeof(err)) == 0, "repair: %s", err);
	ck_assert_int_eq(access(partial, F_OK), -1);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	ck_assert_int_eq(perfdata_walk(&f, count_cb, &cw), (int64_t)f.h.data.size);
	ck_assert_uint_eq(cw.n, e.nrec);
	perfdata_file_close(&f);
	snprintf(cmd, sizeof(cmd), "perf script -i '%s'", path);
	ck_assert_msg(run(cmd, out, sizeof(out)) == 0, "perf script failed:\n%s", out);
	ck_assert_int_eq(count(out, " cpu-clock: "), NSAMPLES);
}
END_TEST

/*
 * Bytes after the last whole record of a .partial that read as a record
 * of a type the daemon never writes (a short write's tail left past the
 * data on a full disk, then a crash): repair stops there, and perf reads
 * the segment (before: a user type was taken for a record, counted into
 * data.size, and perf refused the whole file).
 */
START_TEST(test_repair_garbage_tail)
{
	static const struct perf_event_header junk[2] = {
		{ 0x41414141u, 0, 16 }, { 0x41414141u, 0x4141, 0x4141 },
	};
	char	 path[128], partial[160], err[256] = "", cmd[512], out[65536];
	struct perfdata_file f;
	struct count_walk cw = { 0, 0 };
	struct expect e;
	uint64_t end, zero = 0;
	int	 fd;

	ck_assert_msg(have_perf(), "perf is not installed (linux-perf is in tests/deps.sh)");
	path_in(path, sizeof(path), "junk.data");
	snprintf(partial, sizeof(partial), "%s.partial", path);
	write_file(path, &e);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	end = f.h.data.offset + f.h.data.size;
	perfdata_file_close(&f);
	ck_assert_int_eq(truncate(path, (off_t)end), 0);	/* the features lost */
	ck_assert_int_ge(fd = open(path, O_WRONLY), 0);
	ck_assert_int_eq(pwrite(fd, junk, sizeof(junk), (off_t)end), (ssize_t)sizeof(junk));
	/* never finished: its header says nothing of the data's size */
	ck_assert_int_eq(pwrite(fd, &zero, 8, offsetof(struct perf_file_header, data.size)), 8);
	close(fd);
	ck_assert_int_eq(rename(path, partial), 0);
	ck_assert_msg(repair_segment(partial, err, sizeof(err)) == 0, "repair: %s", err);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	ck_assert_int_eq(perfdata_walk(&f, count_cb, &cw), (int64_t)f.h.data.size);
	ck_assert_uint_eq(cw.n, e.nrec);
	perfdata_file_close(&f);
	snprintf(cmd, sizeof(cmd), "perf report -i '%s' --stdio", path);
	ck_assert_msg(run(cmd, out, sizeof(out)) == 0, "perf report failed on the repaired file:\n%s",
	    out);
}
END_TEST

/*
 * A .partial whose first record does not read (its header's data.offset
 * damaged): not an empty file, so not removed as one; it is kept, as
 * NAME.corrupt, and nothing is left to repair again (before: removed,
 * with every record in it, as "not one whole record").
 */
START_TEST(test_repair_corrupt_kept)
{
	char	 path[128], partial[160], corrupt[160], err[256] = "";
	struct perfdata_file f;
	struct expect e;
	uint64_t zero = 0;
	int	 fd;

	path_in(path, sizeof(path), "bad.data");
	snprintf(partial, sizeof(partial), "%s.partial", path);
	snprintf(corrupt, sizeof(corrupt), "%s.corrupt", path);
	write_file(path, &e);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	perfdata_file_close(&f);
	ck_assert_int_ge(fd = open(path, O_WRONLY), 0);
	ck_assert_int_eq(pwrite(fd, &zero, 8, offsetof(struct perf_file_header, data.offset)), 8);
	ck_assert_int_eq(pwrite(fd, &zero, 8, offsetof(struct perf_file_header, data.size)), 8);
	close(fd);
	ck_assert_int_eq(rename(path, partial), 0);
	ck_assert_int_eq(repair_segment(partial, err, sizeof(err)), 1);
	ck_assert_int_eq(access(partial, F_OK), -1);
	ck_assert_msg(access(corrupt, F_OK) == 0, "the damaged file was removed, not kept");
	/* a .partial with no byte of data is removed, as before */
	write_file(path, &e);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	ck_assert_int_eq(truncate(path, (off_t)f.h.data.offset), 0);
	perfdata_file_close(&f);
	ck_assert_int_ge(fd = open(path, O_WRONLY), 0);
	ck_assert_int_eq(pwrite(fd, &zero, 8, offsetof(struct perf_file_header, data.size)), 8);
	close(fd);
	ck_assert_int_eq(rename(path, partial), 0);
	ck_assert_int_eq(repair_segment(partial, err, sizeof(err)), 1);
	ck_assert_int_eq(access(partial, F_OK), -1);
}
END_TEST

static Suite *
perfdata_suite(void)
{
	Suite	*s = suite_create("perfdata");
	TCase	*tc;

	tc = tcase_create("write");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_write_read_back);
	tcase_add_test(tc, test_walk_ordered);
	tcase_add_test(tc, test_features);
	tcase_add_test(tc, test_create_errors);
	tcase_add_test(tc, test_open_segment_closed_since);
	tcase_add_test(tc, test_big_writes);
	tcase_add_test(tc, test_runs_in_place);
	suite_add_tcase(s, tc);

	tc = tcase_create("perf");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_perf_report_dump);
	tcase_add_test(tc, test_perf_buildid_list);
	tcase_add_test(tc, test_perf_header_and_script);
	tcase_add_test(tc, test_perf_machine_features);
	tcase_add_test(tc, test_perf_compressed);
	tcase_add_test(tc, test_perf_compressed_noise);
	tcase_add_test(tc, test_repair_compressed_no_features);
	tcase_add_test(tc, test_repair_garbage_tail);
	tcase_add_test(tc, test_repair_corrupt_kept);
	suite_add_tcase(s, tc);

	tc = tcase_create("compressed");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_compressed_walk);
	tcase_add_test(tc, test_compressed_torn);
	tcase_add_test(tc, test_compressed_corrupt);
	tcase_add_test(tc, test_compressed_bomb);
	tcase_add_test(tc, test_compress_writer);
	suite_add_tcase(s, tc);

	tc = tcase_create("damage");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_big_buildid_table);
	tcase_add_test(tc, test_torn_file);
	tcase_add_test(tc, test_zero_tail);
	tcase_add_test(tc, test_huge_data_size);
	tcase_add_test(tc, test_open_bad);
	tcase_add_test(tc, test_enospc);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(perfdata_suite)
