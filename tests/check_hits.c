/*
 * check_hits.c - unit tests for common/hits.c on a made-up perf.data: the
 * kernel, a module above it, a binary a process forks into its child, the
 * vDSO by name, an exec (which, as in perf, leaves the old maps under the
 * new), an exit that drops a process's maps, a binary mapped but never
 * sampled.  The same file is then judged by the
 * real perf buildid-list --with-hits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "check_main.h"

#include "hits.h"
#include "perfdata.h"
#include "record.h"

#define ST	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

/* The event is opened with attr.build_id: its MMAP2 records may be in the build-id form. */
static const struct record_layout LAYOUT = { .sample_type = ST, .sample_id_all = 1, .build_id = 1 };
static const uint64_t IDS[1] = { 7 };
static char	 tmpdir[64], path[128];
static uint64_t	 now = 1000;

enum { K, M, A, V, U, C, NIDS };
static const char *const NAMES[NIDS] = {
	"[kernel.kallsyms]", "/lib/modules/x/mod.ko", "/bin/a", "[vdso]", "/bin/unhit", "/bin/c",
};

static void
bid(uint8_t id[20], int which)
{
	memset(id, 0x10 + which, 20);
}

static void
put(struct perfdata *pd, const void *rec, size_t len)
{
	ck_assert_int_eq(perfdata_write(pd, rec, len), 0);
}

static struct record_sample_id
sid(uint32_t pid)
{
	struct record_sample_id s = { .pid = pid, .tid = pid, .time = now++, .id = IDS[0] };

	return s;
}

static void
map(struct perfdata *pd, uint32_t pid, const char *name, uint64_t addr, uint64_t len, int which)
{
	uint8_t	 buf[4096];
	struct record_mmap m;
	struct record_sample_id s = sid(pid);
	size_t	 n;

	memset(&m, 0, sizeof(m));
	m.pid = m.tid = pid;
	m.addr = addr;
	m.len = len;
	m.prot = 5;
	m.flags = 2;
	m.filename = name;
	if (pid == (uint32_t)-1)
		n = record_build_mmap(buf, &m, PERF_RECORD_MISC_KERNEL, &LAYOUT, &s);
	else if (which >= 0) {
		bid(m.build_id, which);
		m.build_id_size = 20;
		n = record_build_mmap2(buf, &m, PERF_RECORD_MISC_USER, &LAYOUT, &s);
	} else
		n = record_build_mmap2_plain(buf, &m, PERF_RECORD_MISC_USER, &LAYOUT, &s);
	put(pd, buf, n);
}

/* FORK or EXIT: {pid, ppid, tid, ptid, time} and the sample_id. */
static void
task(struct perfdata *pd, uint32_t type, uint32_t pid, uint32_t ppid)
{
	uint8_t	 buf[256];
	struct perf_event_header h = { .type = type };
	uint32_t ids[4] = { pid, ppid, pid, ppid };
	struct record_sample_id s = sid(pid);
	uint64_t t = s.time;
	size_t	 n = sizeof(h);

	memcpy(buf + n, ids, sizeof(ids));
	n += sizeof(ids);
	memcpy(buf + n, &t, sizeof(t));
	n += sizeof(t);
	record_encode_sample_id(&LAYOUT, &s, buf + n);
	n += record_sample_id_size(&LAYOUT);
	h.size = (uint16_t)n;
	memcpy(buf, &h, sizeof(h));
	put(pd, buf, n);
}

static void
sample(struct perfdata *pd, uint32_t pid, uint64_t ip, int kernel)
{
	uint64_t v[6];
	uint32_t pt[2] = { pid, pid }, cpu[2] = { 0, 0 };
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
	    .misc = kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
	    .size = sizeof(h) + sizeof(v) };
	uint8_t	 buf[sizeof(h) + sizeof(v)];

	v[0] = IDS[0];
	v[1] = ip;
	memcpy(&v[2], pt, 8);
	v[3] = now++;
	memcpy(&v[4], cpu, 8);
	v[5] = 1;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), v, sizeof(v));
	put(pd, buf, sizeof(buf));
}

static void
write_file(void)
{
	struct perfdata pd;
	struct perfdata_attr a;
	struct perfdata_meta meta;
	struct perfdata_buildid bids[NIDS];
	uint8_t	 buf[512];
	struct record_sample_id s;
	size_t	 i, n;

	memset(&a, 0, sizeof(a));
	a.attr.type = PERF_TYPE_SOFTWARE;
	a.attr.size = PERF_FILE_ATTR_SIZE;
	a.attr.config = PERF_COUNT_SW_CPU_CLOCK;
	a.attr.sample_period = 1;
	a.attr.sample_type = ST;
	a.attr.sample_id_all = 1;
	a.attr.mmap2 = 1;
	a.attr.comm = 1;
	a.attr.task = 1;
	perf_attr_set_flag(&a.attr, PERF_ATTR_FLAG_BUILD_ID_BIT, 1);
	a.name = "cpu-clock";
	a.ids = IDS;
	a.nids = 1;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_hits.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/perf.data", tmpdir);
	ck_assert_int_eq(perfdata_create(&pd, path, &a, 1), 0);

	/* the kernel's map ends where the first module begins, as perf synthesizes it */
	map(&pd, (uint32_t)-1, "[kernel.kallsyms]_text", 0xffffffff81000000ULL,
	    0xffffffffc0000000ULL - 0xffffffff81000000ULL, -1);
	map(&pd, (uint32_t)-1, NAMES[M], 0xffffffffc0000000ULL, 0x10000, -1);
	s = sid(100);
	n = record_build_comm(buf, 100, 100, "a", PERF_RECORD_MISC_COMM_EXEC, &LAYOUT, &s);
	put(&pd, buf, n);
	map(&pd, 100, NAMES[A], 0x400000, 0x1000, A);
	map(&pd, 100, NAMES[V], 0x7000, 0x1000, -1);	/* no build-id: the table's, by name */
	map(&pd, 100, NAMES[U], 0x500000, 0x1000, U);
	task(&pd, PERF_RECORD_FORK, 200, 100);		/* 200 inherits /bin/a */
	task(&pd, PERF_RECORD_FORK, 300, 100);
	s = sid(300);
	n = record_build_comm(buf, 300, 300, "c", PERF_RECORD_MISC_COMM_EXEC, &LAYOUT, &s);
	put(&pd, buf, n);
	map(&pd, 300, NAMES[C], 0x600000, 0x1000, C);
	map(&pd, 300, NAMES[C], 0x500000, 0x1000, C);	/* C over /bin/unhit */
	sample(&pd, 200, 0x400010, 0);			/* A, through the fork */
	sample(&pd, 100, 0x7010, 0);			/* V */
	sample(&pd, 0, 0xffffffffc0000100ULL, 1);	/* M, not the kernel under it */
	sample(&pd, 0, 0xffffffff81001000ULL, 1);	/* K */
	sample(&pd, 300, 0x600020, 0);			/* C */
	sample(&pd, 300, 0x500010, 0);			/* C: the newest map there */
	task(&pd, PERF_RECORD_EXIT, 100, 100);
	sample(&pd, 100, 0x500010, 0);			/* 100 is gone: not /bin/unhit */

	memset(&meta, 0, sizeof(meta));
	meta.hostname = "h";
	meta.clockid = -1;
	for (i = 0; i < NIDS; i++) {
		bid(bids[i].id, (int)i);
		bids[i].size = 20;
		bids[i].kernel = i == K || i == M;
		bids[i].filename = NAMES[i];
	}
	ck_assert_int_eq(perfdata_finish(&pd, &a, 1, &meta, bids, NIDS), 0);
}

static void
teardown(void)
{
	char	 cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
}

static void
hit_cb(const uint8_t *id, size_t len, const char *name, void *arg)
{
	int	*hits = arg;

	ck_assert_uint_eq(len, 20);
	ck_assert_uint_lt(id[0] - 0x10, NIDS);
	ck_assert_str_eq(name, NAMES[id[0] - 0x10]);
	hits[id[0] - 0x10]++;
}

START_TEST(test_hits)
{
	int	 hits[NIDS] = { 0 };
	char	 err[256];

	write_file();
	ck_assert_int_eq(hits_read(path, hit_cb, hits, err, sizeof(err)), 5);
	ck_assert_int_eq(hits[K], 1);
	ck_assert_int_eq(hits[M], 1);
	ck_assert_int_eq(hits[A], 1);
	ck_assert_int_eq(hits[V], 1);
	ck_assert_int_eq(hits[C], 1);
	ck_assert_int_eq(hits[U], 0);
}
END_TEST

/* The real perf names the same binaries. */
START_TEST(test_perf_agrees)
{
	static const char *const sorted[] = { "/bin/a", "/bin/c", "/lib/modules/x/mod.ko",
	    "[kernel.kallsyms]", "[vdso]" };
	char	 cmd[256], line[256], got[512] = "", want[512] = "";
	size_t	 j;
	FILE	*p;

	ck_assert_msg(system("perf version >/dev/null 2>&1") == 0,
	    "perf is not installed (linux-perf is in tests/deps.sh)");
	write_file();
	snprintf(cmd, sizeof(cmd), "perf buildid-list --with-hits -i '%s' 2>/dev/null | "
	    "cut -d' ' -f2- | sort", path);
	ck_assert_ptr_nonnull(p = popen(cmd, "r"));
	while (fgets(line, sizeof(line), p) != NULL)
		strncat(got, line, sizeof(got) - strlen(got) - 1);
	pclose(p);
	for (j = 0; j < sizeof(sorted) / sizeof(sorted[0]); j++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s\n", sorted[j]);
	ck_assert_msg(strcmp(got, want) == 0, "perf --with-hits says\n%s, hits.c\n%s", got, want);
}
END_TEST

static Suite *
hits_suite(void)
{
	Suite	*s = suite_create("hits");
	TCase	*tc = tcase_create("walk");

	if (getenv("CHECK_HITS_KEEP") == NULL)
		tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_hits);
	tcase_add_test(tc, test_perf_agrees);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(hits_suite)
