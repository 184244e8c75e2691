/*
 * check_profile.c - the profile engine (common/profile/) on what the kernel
 * cannot be made to produce on demand:
 *
 *   - synthetic segments and an index: a window cutting two segments, one
 *     still open (no CLOCK_DATA: its clock comes from the index); --pid
 *     and --comm; a segment from another boot, moved onto the first one's
 *     clock in the perf output;
 *   - the pprof read back with protobuf-c: string table, sample types,
 *     mappings with build-ids, labels, counts;
 *   - names that are not text (';', control bytes, bad UTF-8) in folded
 *     stacks and the SVG; hostile perf-PID.map lines;
 *   - the per-segment process model: overlapping maps, fork, exec, late
 *     samples after EXIT.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <check.h>
#include <zlib.h>

#include "check_main.h"
#include "buildid.h"
#include "config.h"
#include "index/index.h"
#include "log.h"
#include "perfdata.h"
#include "procs.h"
#include "profile.h"
#include "profile.pb-c.h"
#include "record.h"
#include "stacks.h"
#include "symbolize.h"

#define ST	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)
#define SEC	1000000000LL
#define T0	(1795000000LL * SEC)
#define OFF_A	(T0 - 100 * SEC)	/* boot A: wall = mono + OFF_A */
#define OFF_B	(T0 - 30 * SEC)		/* boot B, later: mono restarted */

static const struct record_layout LAYOUT = { .sample_type = ST, .sample_id_all = 1, .build_id = 1 };
static char	 tmpdir[64], state[128];

static void
setup(void)
{
	char	 d[256];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_profile.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(state, sizeof(state), "%s/state", tmpdir);
	ck_assert_int_eq(mkdir(state, 0750), 0);
	snprintf(d, sizeof(d), "%s/segments", state);
	ck_assert_int_eq(mkdir(d, 0750), 0);
	log_init("check_profile", 0);
}

static void
teardown(void)
{
	char	 cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
}

/* --- synthetic segments ------------------------------------------------- */

struct seg {
	struct perfdata	 pd;
	struct perfdata_attr a;
	uint64_t	 id;
	uint8_t		 buf[4096];
};

static void
seg_open(struct seg *s, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->id = 7;
	s->a.attr.size = PERF_FILE_ATTR_SIZE;
	s->a.attr.type = PERF_TYPE_SOFTWARE;
	s->a.attr.config = PERF_COUNT_SW_CPU_CLOCK;
	s->a.attr.sample_type = ST;
	s->a.attr.freq = 1;
	s->a.attr.sample_freq = 100;
	s->a.attr.sample_id_all = 1;
	s->a.attr.use_clockid = 1;
	s->a.attr.clockid = CLOCK_MONOTONIC;
	/* as a segment presents it: its MMAP2 records may carry build-ids (record.h) */
	perf_attr_set_flag(&s->a.attr, PERF_ATTR_FLAG_BUILD_ID_BIT, 1);
	s->a.name = "cpu-clock";
	s->a.ids = &s->id;
	s->a.nids = 1;
	ck_assert_int_eq(perfdata_create(&s->pd, path, &s->a, 1), 0);
}

static void
seg_comm(struct seg *s, uint32_t pid, const char *comm, uint64_t t)
{
	struct record_sample_id sid = { .pid = pid, .tid = pid, .time = t, .id = 7 };
	size_t	 n = record_build_comm(s->buf, pid, pid, comm, 0, &LAYOUT, &sid);

	ck_assert_int_eq(perfdata_write(&s->pd, s->buf, n), 0);
}

static void
seg_mmap(struct seg *s, uint32_t pid, uint64_t addr, const char *file, int idbyte, uint64_t t)
{
	struct record_sample_id sid = { .pid = pid, .tid = pid, .time = t, .id = 7 };
	struct record_mmap m;
	size_t	 n;

	memset(&m, 0, sizeof(m));
	m.pid = m.tid = pid;
	m.addr = addr;
	m.len = 0x10000;
	m.prot = 5;
	m.filename = file;
	m.build_id_size = 20;
	memset(m.build_id, idbyte, 20);
	n = record_build_mmap2(s->buf, &m, PERF_RECORD_MISC_USER, &LAYOUT, &sid);
	ck_assert_int_eq(perfdata_write(&s->pd, s->buf, n), 0);
}

/*
 * A sample at IP: KERNEL 0, a user one whose call chain is IP and IP +
 * 0x100; else a kernel one whose chain is IP alone.
 */
static void
seg_sample_in(struct seg *s, uint32_t pid, uint64_t ip, uint64_t t, int kernel)
{
	uint64_t v[] = { 7, ip, (uint64_t)pid << 32 | pid, t, 0, 10000000, kernel ? 2 : 3,
	    kernel ? (uint64_t)PERF_CONTEXT_KERNEL : (uint64_t)PERF_CONTEXT_USER, ip, ip + 0x100 };
	struct perf_event_header h = { PERF_RECORD_SAMPLE,
	    kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
	    (uint16_t)(sizeof(h) + sizeof(v) - (kernel ? 8 : 0)) };

	memcpy(s->buf, &h, sizeof(h));
	memcpy(s->buf + sizeof(h), v, h.size - sizeof(h));
	ck_assert_int_eq(perfdata_write(&s->pd, s->buf, h.size), 0);
}

static void
seg_sample(struct seg *s, uint32_t pid, uint64_t ip, uint64_t t)
{
	seg_sample_in(s, pid, ip, t, 0);
}

/* Finished, its clock at REF mono = OFF + REF wall; KERNEL_ID: a kernel build-id byte, or 0. */
static void
seg_close_kid(struct seg *s, int64_t off, uint64_t ref, int kernel_id)
{
	struct perfdata_meta m;
	struct perfdata_buildid b;

	memset(&m, 0, sizeof(m));
	m.hostname = "check";
	m.clockid = CLOCK_MONOTONIC;
	m.clock_wall_ns = (uint64_t)(off + (int64_t)ref);
	m.clock_ref_ns = ref;
	memset(&b, 0, sizeof(b));
	memset(b.id, kernel_id, 20);
	b.size = 20;
	b.kernel = 1;
	b.filename = "[kernel.kallsyms]";
	ck_assert_int_eq(perfdata_finish(&s->pd, &s->a, 1, &m, &b, kernel_id != 0), 0);
}

static void
seg_close(struct seg *s, int64_t off, uint64_t ref)
{
	seg_close_kid(s, off, ref, 0);
}

static const char *
segpath(int seq, char *buf, size_t len)
{
	snprintf(buf, len, "%s/segments/perf-%06d-20261118T000000Z.data", state, seq);
	return buf;
}

/* Segment 1 (boot A, closed): pid 10 "alpha", 10 samples at mono 100..109 s, wall T0 on. */
static void
make_seg_alpha(struct index *ix)
{
	struct seg s;
	char	 p[256];
	int	 i;

	seg_open(&s, segpath(1, p, sizeof(p)));
	seg_comm(&s, 10, "alpha", 100 * SEC);
	seg_mmap(&s, 10, 0x400000, "/opt/alpha", 0xa1, 100 * SEC);
	for (i = 0; i < 10; i++)
		seg_sample(&s, 10, 0x401000, (uint64_t)(100 + i) * SEC + 1);
	seg_close(&s, OFF_A, 100 * SEC);
	index_segment_open(ix, 1, strrchr(p, '/') + 1, T0);
	index_segment_close(ix, 1, T0 + 10 * SEC, 4096, 10, 0, 12);
}

/*
 * seg 1 (boot A, closed): pid 10 "alpha" samples at mono 100..109 s
 * seg 2 (boot A, open):   pid 11 "beta"  samples at mono 110..119 s
 * seg 3 (boot B, closed): pid 12 "gamma" samples at mono  50..59 s (wall T0+20..29)
 */
static void
make_state(void)
{
	struct config conf;
	struct index *ix;
	struct seg s;
	char	 p[256], partial[300], err[256];
	int	 i;

	config_defaults(&conf);
	ck_assert_msg(index_open(&ix, state, &conf, NULL, err, sizeof(err)) == 0, "%s", err);
	make_seg_alpha(ix);

	snprintf(partial, sizeof(partial), "%s.partial", segpath(2, p, sizeof(p)));
	seg_open(&s, partial);
	seg_comm(&s, 11, "beta", 110 * SEC);	/* the start state: stamped at the start */
	seg_mmap(&s, 11, 0x400000, "/opt/beta", 0xb1, 110 * SEC);
	for (i = 0; i < 10; i++)
		seg_sample(&s, 11, 0x402000, (uint64_t)(110 + i) * SEC + 1);
	ck_assert_int_eq(perfdata_flush(&s.pd), 0);
	perfdata_close(&s.pd);		/* open: no features, data.size 0 */
	index_segment_open(ix, 2, strrchr(p, '/') + 1, T0 + 10 * SEC);

	seg_open(&s, segpath(3, p, sizeof(p)));
	seg_comm(&s, 12, "gamma", 50 * SEC);
	seg_mmap(&s, 12, 0x400000, "/opt/gamma", 0xc1, 50 * SEC);
	for (i = 0; i < 10; i++)
		seg_sample(&s, 12, 0x403000, (uint64_t)(50 + i) * SEC + 1);
	seg_close(&s, OFF_B, 50 * SEC);
	index_segment_open(ix, 3, strrchr(p, '/') + 1, T0 + 20 * SEC);
	index_segment_close(ix, 3, T0 + 30 * SEC, 4096, 10, 0, 12);
	ck_assert_int_eq(index_flush(ix), 0);
	index_close(ix);
}

static int
run(struct profile_req *req, struct profile_stats *st, char *err, size_t errlen, const char *out)
{
	char	 path[256];
	int	 fd, rc;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, out);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	req->state_dir = state;
	req->fd = fd;
	rc = profile_run(req, st, err, errlen);
	close(fd);
	return rc;
}

static struct profile_req
window(int64_t since, int64_t until, enum profile_format f)
{
	struct profile_req r;

	memset(&r, 0, sizeof(r));
	r.since_ns = since;
	r.until_ns = until;
	r.pid = -1;
	r.format = f;
	return r;
}

static char *
slurp(const char *name)
{
	char	 path[256], *buf;
	FILE	*f;
	long	 n;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	ck_assert_int_eq(fread(buf, 1, (size_t)n, f), n);
	fclose(f);
	return buf;
}

/* --- the kernel in two boots ---------------------------------------------- */

#define KTEXT_A		0xffffffff81000000ULL	/* boot A: where the cached kallsyms has it */
#define KTEXT_B		0xffffffff9b000000ULL	/* boot B: KASLR put it 0x1a000000 higher */
#define MOD_A		0xffffffffc0001000ULL
#define MOD_B		0xffffffffc5001000ULL

/* The kernel's and module my-mod's (MODLEN bytes at MOD), as a start state at T has them. */
static void
seg_kernel(struct seg *s, uint64_t text, uint64_t mod, uint64_t modlen, uint64_t t)
{
	struct record_sample_id sid = { .pid = (uint32_t)-1, .tid = (uint32_t)-1, .time = t,
	    .id = 7 };
	struct record_mmap m;
	size_t	 n;

	memset(&m, 0, sizeof(m));
	m.pid = m.tid = (uint32_t)-1;
	m.addr = text;
	m.len = 0x3000;
	m.pgoff = text;
	m.filename = "[kernel.kallsyms]_text";
	n = record_build_mmap(s->buf, &m, PERF_RECORD_MISC_KERNEL, &LAYOUT, &sid);
	ck_assert_int_eq(perfdata_write(&s->pd, s->buf, n), 0);
	m.addr = mod;
	m.len = modlen;
	m.pgoff = 0;
	m.filename = "/lib/modules/6.1.0/kernel/net/my-mod.ko.xz";
	n = record_build_mmap(s->buf, &m, PERF_RECORD_MISC_KERNEL, &LAYOUT, &sid);
	ck_assert_int_eq(perfdata_write(&s->pd, s->buf, n), 0);
}

/*
 * One kernel build-id, two boots: its kallsyms was cached in boot A, and
 * boot B's KASLR put the kernel (and, apart from it, the modules)
 * elsewhere.  Boot B's kernel frames are named where A's copy has them
 * (relocated by _text, as perf does); a module's frames are named only
 * where A's copy had it (not in B, nor in A once reloaded elsewhere: the
 * same address there is another binary's location), and only from its own
 * symbols; an address outside every mapping (a module loaded later, a BPF
 * program) is never given the symbol below it.
 */
START_TEST(test_kernel_other_boot)
{
	struct profile_req r = window(T0 - SEC, T0 + 40 * SEC, PROFILE_FOLDED);
	struct profile_stats st;
	struct config conf;
	struct index *ix;
	struct seg s;
	char	 p[256], err[256], *out;
	FILE	*f;

	snprintf(p, sizeof(p), "mkdir -p '%s/debug/.build-id/4b/%s'", state,
	    "4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b");
	ck_assert_int_eq(system(p), 0);
	snprintf(p, sizeof(p), "%s/debug/.build-id/4b/%s/kallsyms", state,
	    "4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b");
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fprintf(f, "ffffffff81000000 T _text\nffffffff81001000 T k_alpha\n"
	    "ffffffff81002000 t k_beta\nffffffff81003000 T _etext\n"
	    "ffffffffc0001000 t m_gamma\t[my_mod]\nffffffffc0002000 t m_delta\t[other]\n"
	    "ffffffffc0002800 t m_other2\t[other]\n");
	fclose(f);

	config_defaults(&conf);
	ck_assert_msg(index_open(&ix, state, &conf, NULL, err, sizeof(err)) == 0, "%s", err);
	seg_open(&s, segpath(1, p, sizeof(p)));
	seg_kernel(&s, KTEXT_A, MOD_A, 0x1000, 100 * SEC);
	seg_comm(&s, 10, "alpha", 100 * SEC);
	seg_sample_in(&s, 10, KTEXT_A + 0x1010, 101 * SEC, 1);	/* k_alpha */
	seg_sample_in(&s, 10, MOD_A + 0x10, 102 * SEC, 1);		/* m_gamma, in my-mod */
	seg_sample_in(&s, 10, 0xffffffffc0002010ULL, 103 * SEC, 1);	/* no mapping: not m_delta */
	seg_close_kid(&s, OFF_A, 100 * SEC, 0x4b);
	index_segment_open(ix, 1, strrchr(p, '/') + 1, T0);
	index_segment_close(ix, 1, T0 + 4 * SEC, 4096, 3, 0, 6);
	/*
	 * Boot A still, my-mod reloaded a page lower (rmmod, modprobe): the
	 * kernel where it was, the module not, and the same address is
	 * another place in it.
	 */
	seg_open(&s, segpath(3, p, sizeof(p)));
	seg_kernel(&s, KTEXT_A, MOD_A - 0x1000, 0x2000, 105 * SEC);
	seg_comm(&s, 13, "delta", 105 * SEC);
	seg_sample_in(&s, 13, MOD_A + 0x10, 106 * SEC, 1);		/* not m_gamma */
	seg_close_kid(&s, OFF_A, 105 * SEC, 0x4b);
	index_segment_open(ix, 3, strrchr(p, '/') + 1, T0 + 5 * SEC);
	index_segment_close(ix, 3, T0 + 8 * SEC, 4096, 1, 0, 4);
	seg_open(&s, segpath(2, p, sizeof(p)));
	seg_kernel(&s, KTEXT_B, MOD_B, 0x1000, 50 * SEC);
	seg_comm(&s, 12, "gamma", 50 * SEC);
	seg_sample_in(&s, 12, KTEXT_B + 0x2010, 51 * SEC, 1);	/* k_beta, not _etext */
	seg_sample_in(&s, 12, MOD_B + 0x10, 52 * SEC, 1);		/* my-mod moved: not named */
	seg_close_kid(&s, OFF_B, 50 * SEC, 0x4b);
	index_segment_open(ix, 2, strrchr(p, '/') + 1, T0 + 20 * SEC);
	index_segment_close(ix, 2, T0 + 30 * SEC, 4096, 2, 0, 5);
	ck_assert_int_eq(index_flush(ix), 0);
	index_close(ix);

	ck_assert_msg(run(&r, &st, err, sizeof(err), "k.folded") == 0, "%s", err);
	ck_assert_uint_eq(st.samples, 6);
	out = slurp("k.folded");
	ck_assert_msg(strstr(out, "delta;[my-mod.ko.xz]_[k] 1\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "alpha;k_alpha_[k] 1\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "alpha;m_gamma_[k] 1\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "alpha;[kernel.kallsyms]_[k] 1\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "gamma;k_beta_[k] 1\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "gamma;[my-mod.ko.xz]_[k] 1\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "etext") == NULL && strstr(out, "m_delta") == NULL, "%s", out);
	free(out);
}
END_TEST

/* kallsyms for kernel build-id IDBYTE x 20: _text at KTEXT_A, FN at +0x1000. */
static void
cache_kallsyms(int idbyte, const char *fn)
{
	char	 hex[41], p[512];
	FILE	*f;
	int	 i;

	for (i = 0; i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", idbyte);
	snprintf(p, sizeof(p), "mkdir -p '%s/debug/.build-id/%.2s/%s'", state, hex, hex + 2);
	ck_assert_int_eq(system(p), 0);
	snprintf(p, sizeof(p), "%s/debug/.build-id/%.2s/%s/kallsyms", state, hex, hex + 2);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fprintf(f, "ffffffff81000000 T _text\nffffffff81001000 T %s\n"
	    "ffffffff81003000 T _etext\n", fn);
	fclose(f);
}

/* The index sees kernel 0x4c (the one booted since) at T0 + 20 s, and closes. */
static void
index_new_kernel_close(struct index *ix)
{
	uint8_t	 k2[20];
	char	 empty[256];

	memset(k2, 0x4c, sizeof(k2));
	snprintf(empty, sizeof(empty), "%s/modules", tmpdir);
	check_write_file(empty, "", 0);
	ck_assert_int_ge(index_scan_kernel(ix, k2, 20, empty, "/nonexistent", T0 + 20 * SEC), 0);
	ck_assert_int_eq(index_flush(ix), 0);
	index_close(ix);
}

/*
 * A kernel upgrade and a reboot: the closed segment ran kernel 0x4b (its
 * build-id table says so), the open one, which has no table yet, kernel
 * 0x4c, the newest the index saw.  The open segment's frames are named
 * from 0x4c's symbols; they were named from the last closed segment's
 * kernel, the old one.
 */
START_TEST(test_kernel_open_segment)
{
	struct profile_req r = window(T0 - SEC, T0 + 40 * SEC, PROFILE_FOLDED);
	struct profile_stats st;
	struct config conf;
	struct index *ix;
	struct seg s;
	char	 p[256], partial[300], err[256], *out;

	cache_kallsyms(0x4b, "old_fn");
	cache_kallsyms(0x4c, "new_fn");
	config_defaults(&conf);
	ck_assert_msg(index_open(&ix, state, &conf, NULL, err, sizeof(err)) == 0, "%s", err);
	seg_open(&s, segpath(1, p, sizeof(p)));
	seg_kernel(&s, KTEXT_A, MOD_A, 0x1000, 100 * SEC);
	seg_comm(&s, 10, "alpha", 100 * SEC);
	seg_sample_in(&s, 10, KTEXT_A + 0x1010, 101 * SEC, 1);
	seg_close_kid(&s, OFF_A, 100 * SEC, 0x4b);		/* table: 0x4b */
	index_segment_open(ix, 1, strrchr(p, '/') + 1, T0);
	index_segment_close(ix, 1, T0 + 10 * SEC, 4096, 1, 0, 4);

	snprintf(partial, sizeof(partial), "%s.partial", segpath(2, p, sizeof(p)));
	seg_open(&s, partial);
	seg_kernel(&s, KTEXT_A, MOD_A, 0x1000, 50 * SEC);
	seg_comm(&s, 11, "beta", 50 * SEC);		/* the start state: stamped at the start */
	seg_sample_in(&s, 11, KTEXT_A + 0x1010, 51 * SEC, 1);
	ck_assert_int_eq(perfdata_flush(&s.pd), 0);
	perfdata_close(&s.pd);		/* open: no features, no table */
	index_segment_open(ix, 2, strrchr(p, '/') + 1, T0 + 20 * SEC);
	index_new_kernel_close(ix);

	ck_assert_msg(run(&r, &st, err, sizeof(err), "o.folded") == 0, "%s", err);
	ck_assert_uint_eq(st.samples, 2);
	out = slurp("o.folded");
	ck_assert_msg(strstr(out, "alpha;old_fn_[k] 1\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "beta;new_fn_[k] 1\n") != NULL, "%s", out);
	free(out);
}
END_TEST

/*
 * The daemon knows the running kernel: its open segment's frames are named
 * from it, not from the kernel the index saw last by the wall clock (a
 * boot whose clock ran ahead left the old kernel "newest", and a profile
 * before the index heard of a new kernel named its frames from the old
 * one; found by a review).  Here the index's newest is 0x4c, the running
 * kernel 0x4d.
 */
START_TEST(test_kernel_open_running)
{
	struct profile_req r = window(T0 - SEC, T0 + 40 * SEC, PROFILE_FOLDED);
	struct profile_stats st;
	struct config conf;
	struct index *ix;
	struct seg s;
	char	 p[256], partial[300], err[256], *out;

	cache_kallsyms(0x4c, "stale_fn");
	cache_kallsyms(0x4d, "running_fn");
	config_defaults(&conf);
	ck_assert_msg(index_open(&ix, state, &conf, NULL, err, sizeof(err)) == 0, "%s", err);
	snprintf(partial, sizeof(partial), "%s.partial", segpath(1, p, sizeof(p)));
	seg_open(&s, partial);
	seg_kernel(&s, KTEXT_A, MOD_A, 0x1000, 50 * SEC);
	seg_comm(&s, 11, "beta", 50 * SEC);
	seg_sample_in(&s, 11, KTEXT_A + 0x1010, 51 * SEC, 1);
	ck_assert_int_eq(perfdata_flush(&s.pd), 0);
	perfdata_close(&s.pd);		/* open: no features, no table */
	index_segment_open(ix, 1, strrchr(p, '/') + 1, T0 + 20 * SEC);
	index_new_kernel_close(ix);	/* the index's newest: 0x4c */
	memset(r.running_kernel, 0x4d, 20);
	r.running_kernel_size = 20;
	ck_assert_msg(run(&r, &st, err, sizeof(err), "r.folded") == 0, "%s", err);
	ck_assert_uint_eq(st.samples, 1);
	out = slurp("r.folded");
	ck_assert_msg(strstr(out, "beta;running_fn_[k] 1\n") != NULL, "%s", out);
	free(out);
}
END_TEST

/*
 * A closed segment whose table names no kernel (the last of a boot that
 * crashed, repaired in the next one, which cannot read that boot's
 * kernel): its kernel frames are the kernel's, unnamed.  They were named
 * from another kernel's symbols: the index's newest (after an upgrade,
 * the new one), relocated by this segment's _text.
 */
START_TEST(test_kernel_unknown_closed)
{
	struct profile_req r = window(T0 - SEC, T0 + 40 * SEC, PROFILE_FOLDED);
	struct profile_stats st;
	struct config conf;
	struct index *ix;
	struct seg s;
	char	 p[256], err[256], *out;

	cache_kallsyms(0x4c, "new_fn");
	config_defaults(&conf);
	ck_assert_msg(index_open(&ix, state, &conf, NULL, err, sizeof(err)) == 0, "%s", err);
	seg_open(&s, segpath(1, p, sizeof(p)));
	seg_kernel(&s, KTEXT_A, MOD_A, 0x1000, 100 * SEC);
	seg_comm(&s, 10, "alpha", 100 * SEC);
	seg_sample_in(&s, 10, KTEXT_A + 0x1010, 101 * SEC, 1);
	seg_close_kid(&s, OFF_A, 100 * SEC, 0);		/* table: no kernel */
	index_segment_open(ix, 1, strrchr(p, '/') + 1, T0);
	index_segment_close(ix, 1, T0 + 10 * SEC, 4096, 1, 0, 4);
	index_new_kernel_close(ix);		/* the kernel booted since */

	ck_assert_msg(run(&r, &st, err, sizeof(err), "u.folded") == 0, "%s", err);
	ck_assert_uint_eq(st.samples, 1);
	out = slurp("u.folded");
	ck_assert_msg(strstr(out, "alpha;[kernel.kallsyms]_[k] 1\n") != NULL,
	    "a kernel frame named from another kernel's symbols: %s", out);
	free(out);
}
END_TEST

/*
 * The segment's build-id table names the daemon's own vDSO, a 64-bit one.
 * The kernel names a 32-bit (or x32) process's vDSO [vdso] too, another
 * ELF: its frames were named from the 64-bit one's functions.  Such a
 * process maps it below 4 GiB: there the vDSO is unknown; at a 64-bit
 * process's address (near the top), it is the table's, and named.
 */
START_TEST(test_vdso_compat)
{
	struct profile_req r = window(T0 - SEC, T0 + 40 * SEC, PROFILE_FOLDED);
	struct profile_stats st;
	struct record_sample_id sid = { .tid = 0, .time = 100 * SEC, .id = 7 };
	struct perfdata_buildid tab[2];
	struct perfdata_meta meta;
	struct record_mmap m;
	struct config conf;
	struct index *ix;
	struct seg s;
	unsigned long long lo = 0, hi = 0, off = 0;
	uint8_t	 id[BUILD_ID_MAX];
	char	 p[512], vd[256], hex[BUILD_ID_HEX_MAX], err[256], fn[128] = "", *out;
	const uint64_t at[2] = { 0xf7fc1000ULL, 0x7ffff7fc1000ULL };	/* 32-bit's, 64-bit's */
	FILE	*f;
	size_t	 n;
	int	 idlen, i, fd;

	/* this process's vDSO, copied out, cached under its build-id */
	ck_assert_ptr_nonnull(f = fopen("/proc/self/maps", "r"));
	while (fgets(p, sizeof(p), f) != NULL)
		if (strstr(p, "[vdso]") != NULL)
			ck_assert_int_eq(sscanf(p, "%llx-%llx", &lo, &hi), 2);
	fclose(f);
	ck_assert_uint_gt(hi, lo);
	snprintf(vd, sizeof(vd), "%s/vdso.so", tmpdir);
	ck_assert_int_ge(fd = open(vd, O_WRONLY | O_CREAT | O_TRUNC, 0644), 0);
	ck_assert_int_eq(write(fd, (const void *)(uintptr_t)lo, hi - lo), (ssize_t)(hi - lo));
	close(fd);
	ck_assert_int_gt(idlen = buildid_read_path(vd, id), 0);
	buildid_to_hex(id, (size_t)idlen, hex);
	snprintf(p, sizeof(p), "mkdir -p %s/debug/.build-id/%.2s/%s && cp %s %s/debug/.build-id/"
	    "%.2s/%s/vdso", state, hex, hex + 2, vd, state, hex, hex + 2);
	ck_assert_int_eq(system(p), 0);
	snprintf(p, sizeof(p), "nm -D --defined-only %s | awk '$2 == \"T\" && $1 !~ /^0+$/ "
	    "{ print $1, $3; exit }'", vd);
	ck_assert_ptr_nonnull(f = popen(p, "r"));
	ck_assert_int_eq(fscanf(f, "%llx %127s", &off, fn), 2);
	pclose(f);
	if (strchr(fn, '@') != NULL)
		*strchr(fn, '@') = '\0';

	/* pid 20 maps it where a 32-bit process does, pid 21 where a 64-bit one does */
	config_defaults(&conf);
	ck_assert_msg(index_open(&ix, state, &conf, NULL, err, sizeof(err)) == 0, "%s", err);
	seg_open(&s, segpath(1, p, sizeof(p)));
	for (i = 0; i < 2; i++) {
		sid.pid = sid.tid = 20 + (uint32_t)i;
		seg_comm(&s, 20 + (uint32_t)i, i == 0 ? "compat" : "native", 100 * SEC);
		memset(&m, 0, sizeof(m));
		m.pid = m.tid = 20 + (uint32_t)i;
		m.addr = at[i];
		m.len = hi - lo;
		m.prot = 5;
		m.has_inode = 1;
		m.filename = "[vdso]";
		n = record_build_mmap2_plain(s.buf, &m, PERF_RECORD_MISC_USER, &LAYOUT, &sid);
		ck_assert_int_eq(perfdata_write(&s.pd, s.buf, n), 0);
		seg_sample(&s, 20 + (uint32_t)i, at[i] + off, 101 * SEC);
	}
	memset(&meta, 0, sizeof(meta));
	meta.hostname = "check";
	meta.clockid = CLOCK_MONOTONIC;
	meta.clock_wall_ns = (uint64_t)(OFF_A + (int64_t)(100 * SEC));
	meta.clock_ref_ns = 100 * SEC;
	memset(tab, 0, sizeof(tab));
	memset(tab[0].id, 0x11, 20);
	tab[0].size = 20;
	tab[0].kernel = 1;
	tab[0].filename = "[kernel.kallsyms]";
	memcpy(tab[1].id, id, (size_t)idlen);
	tab[1].size = (uint8_t)idlen;
	tab[1].filename = "[vdso]";
	ck_assert_int_eq(perfdata_finish(&s.pd, &s.a, 1, &meta, tab, 2), 0);
	index_segment_open(ix, 1, strrchr(p, '/') + 1, T0);
	index_segment_close(ix, 1, T0 + 10 * SEC, 4096, 2, 0, 6);
	ck_assert_int_eq(index_flush(ix), 0);
	index_close(ix);

	ck_assert_msg(run(&r, &st, err, sizeof(err), "vdso.folded") == 0, "%s", err);
	ck_assert_uint_eq(st.samples, 2);
	out = slurp("vdso.folded");
	snprintf(p, sizeof(p), ";%s ", fn);	/* the leaf, innermost: last */
	{
		char	*nat = strstr(out, "native;"), *com = strstr(out, "compat;");
		char	*nl;

		ck_assert_ptr_nonnull(nat);
		ck_assert_ptr_nonnull(com);
		if ((nl = strchr(nat, '\n')) != NULL)
			*nl = '\0';
		if ((nl = strchr(com, '\n')) != NULL)
			*nl = '\0';
		ck_assert_msg(strstr(nat, p) != NULL, "the 64-bit process's vDSO frame is not "
		    "%s: %s", fn, nat);
		ck_assert_msg(strstr(com, "__vdso") == NULL, "the 32-bit process's vDSO frames "
		    "are named from the 64-bit vDSO: %s", com);
	}
	free(out);
}
END_TEST

/*
 * A sample taken in the kernel (a page fault at a function's first
 * instruction): the first user frame after PERF_CONTEXT_USER is the user
 * registers' exact ip, not a return address.  It was looked up at ip - 1,
 * in the function before (or its padding).
 */
START_TEST(test_user_ip_after_kernel)
{
	struct profile_req r = window(T0 - SEC, T0 + 40 * SEC, PROFILE_FOLDED);
	struct profile_stats st;
	struct record_sample_id sid = { .pid = 10, .tid = 10, .time = 100 * SEC, .id = 7 };
	struct record_mmap m;
	struct config conf;
	struct index *ix;
	struct seg s;
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, 0 };
	unsigned long long f2 = 0;
	uint64_t v[11];
	uint8_t	 id[BUILD_ID_MAX];
	char	 p[512], src[256], prog[256], hex[BUILD_ID_HEX_MAX], err[256], *out;
	FILE	*f;
	size_t	 n;
	int	 idlen;

	snprintf(src, sizeof(src), "%s/two.c", tmpdir);
	snprintf(prog, sizeof(prog), "%s/two", tmpdir);
	ck_assert_ptr_nonnull(f = fopen(src, "w"));
	fprintf(f, "__attribute__((noinline)) int f1(int x) { return x * 3 + 1; }\n"
	    "__attribute__((noinline)) int f2(int x) { return x * 5 + 2; }\n"
	    "int main(int c, char **v) { (void)v; return f1(c) + f2(c); }\n");
	fclose(f);
	snprintf(p, sizeof(p), "cc -O1 -g0 -fno-pie -no-pie -Wl,--build-id -o %s %s", prog, src);
	ck_assert_int_eq(system(p), 0);
	snprintf(p, sizeof(p), "nm -P %s | awk '$1 == \"f2\" { print $3 }'", prog);
	ck_assert_ptr_nonnull(f = popen(p, "r"));
	ck_assert_int_eq(fscanf(f, "%llx", &f2), 1);
	pclose(f);
	ck_assert_int_gt(idlen = buildid_read_path(prog, id), 0);
	buildid_to_hex(id, (size_t)idlen, hex);
	snprintf(p, sizeof(p), "mkdir -p %s/debug/.build-id/%.2s/%s && cp %s %s/debug/.build-id/"
	    "%.2s/%s/elf", state, hex, hex + 2, prog, state, hex, hex + 2);
	ck_assert_int_eq(system(p), 0);

	config_defaults(&conf);
	ck_assert_msg(index_open(&ix, state, &conf, NULL, err, sizeof(err)) == 0, "%s", err);
	seg_open(&s, segpath(1, p, sizeof(p)));
	seg_comm(&s, 10, "two", 100 * SEC);
	memset(&m, 0, sizeof(m));		/* non-PIE: file offset 0 at 0x400000 */
	m.pid = m.tid = 10;
	m.addr = 0x400000;
	m.len = 0x10000;
	m.prot = 5;
	m.filename = prog;
	m.build_id_size = (uint8_t)idlen;
	memcpy(m.build_id, id, (size_t)idlen);
	n = record_build_mmap2(s.buf, &m, PERF_RECORD_MISC_USER, &LAYOUT, &sid);
	ck_assert_int_eq(perfdata_write(&s.pd, s.buf, n), 0);
	v[0] = 7;
	v[1] = 0xffffffff81001010ULL;
	v[2] = 10ULL << 32 | 10;
	v[3] = 101 * SEC;
	v[4] = 0;
	v[5] = 10000000;
	v[6] = 4;
	v[7] = (uint64_t)PERF_CONTEXT_KERNEL;
	v[8] = 0xffffffff81001010ULL;
	v[9] = (uint64_t)PERF_CONTEXT_USER;
	v[10] = f2;			/* the user registers' ip: f2's first instruction */
	h.size = (uint16_t)(sizeof(h) + sizeof(v));
	memcpy(s.buf, &h, sizeof(h));
	memcpy(s.buf + sizeof(h), v, sizeof(v));
	ck_assert_int_eq(perfdata_write(&s.pd, s.buf, h.size), 0);
	seg_close_kid(&s, OFF_A, 100 * SEC, 0);
	index_segment_open(ix, 1, strrchr(p, '/') + 1, T0);
	index_segment_close(ix, 1, T0 + 10 * SEC, 4096, 1, 0, 3);
	ck_assert_int_eq(index_flush(ix), 0);
	index_close(ix);

	ck_assert_msg(run(&r, &st, err, sizeof(err), "two.folded") == 0, "%s", err);
	ck_assert_uint_eq(st.samples, 1);
	out = slurp("two.folded");
	ck_assert_msg(strstr(out, "two;f2;") != NULL, "the user frame after the kernel's: %s", out);
	free(out);
}
END_TEST

START_TEST(test_window_open_segment)
{
	struct profile_req r = window(T0 + 5 * SEC, T0 + 15 * SEC, PROFILE_FOLDED);
	struct profile_stats st;
	char	 err[256], *out;

	make_state();
	ck_assert_msg(run(&r, &st, err, sizeof(err), "w.folded") == 0, "%s", err);
	ck_assert_uint_eq(st.segments, 2);
	ck_assert_uint_eq(st.samples, 10);	/* 105..109 of seg 1, 110..114 of seg 2 */
	out = slurp("w.folded");
	ck_assert_msg(strstr(out, "alpha;[alpha];[alpha] 5\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "beta;[beta];[beta] 5\n") != NULL, "%s", out);
	free(out);
	ck_assert_uint_eq(st.binaries_uncached, 2);	/* /opt/alpha, /opt/beta: no copies */

	r.comm = "beta";
	ck_assert_msg(run(&r, &st, err, sizeof(err), "c.folded") == 0, "%s", err);
	ck_assert_uint_eq(st.samples, 5);
	r.comm = NULL;
	r.pid = 10;
	ck_assert_msg(run(&r, &st, err, sizeof(err), "p.folded") == 0, "%s", err);
	ck_assert_uint_eq(st.samples, 5);
	r.pid = 99;
	ck_assert_int_eq(run(&r, &st, err, sizeof(err), "x.folded"), -1);
	ck_assert_msg(strstr(err, "pid 99 did not run") != NULL, "%s", err);
	r.pid = -1;
	r.comm = "nobody";
	ck_assert_int_eq(run(&r, &st, err, sizeof(err), "x.folded"), -1);
	r = window(T0 + 15 * SEC, T0 + 5 * SEC, PROFILE_FOLDED);
	ck_assert_int_eq(run(&r, &st, err, sizeof(err), "x.folded"), -1);
	r = window(T0 - 100 * SEC, T0 - 50 * SEC, PROFILE_FOLDED);
	ck_assert_int_eq(run(&r, &st, err, sizeof(err), "x.folded"), -1);
	ck_assert_msg(strstr(err, "no segment overlaps") != NULL, "%s", err);
}
END_TEST

struct times {
	uint64_t	 t[64];
	size_t		 n;
};

static int
sample_time_cb(const struct perf_event_header *h, void *arg)
{
	struct times *x = arg;
	uint64_t t;

	if (h->type == PERF_RECORD_SAMPLE && record_time(h, h->size, &LAYOUT, &t) == 0 &&
	    x->n < 64)
		x->t[x->n++] = t;
	return 0;
}

START_TEST(test_perf_other_boot)
{
	struct profile_req r = window(T0 + 5 * SEC, T0 + 25 * SEC, PROFILE_PERF);
	struct profile_stats st;
	struct perfdata_file f;
	struct times x = { .n = 0 };
	char	 err[256], path[256];
	size_t	 i;

	make_state();
	ck_assert_msg(run(&r, &st, err, sizeof(err), "o.data") == 0, "%s", err);
	ck_assert_uint_eq(st.segments, 3);
	ck_assert_uint_eq(st.samples, 20);	/* 105..109, 110..119, T0+20..24 of boot B */
	snprintf(path, sizeof(path), "%s/o.data", tmpdir);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	perfdata_walk(&f, sample_time_cb, &x);
	perfdata_file_close(&f);
	ck_assert_uint_eq(x.n, 20);
	/* on the output's clock (boot A's): every sample's date is in the window, in order */
	for (i = 0; i < x.n; i++) {
		int64_t	 wall = OFF_A + (int64_t)x.t[i];

		ck_assert_msg(wall >= r.since_ns && wall < r.until_ns, "sample %zu at %lld", i,
		    (long long)(wall - T0));
		if (i > 0)
			ck_assert_uint_gt(x.t[i], x.t[i - 1]);
	}
}
END_TEST

/* A FORK of PID from PPID at T. */
static void
seg_fork(struct seg *s, uint32_t pid, uint32_t ppid, uint64_t t)
{
	struct record_sample_id sid = { .pid = pid, .tid = pid, .time = t, .id = 7 };
	struct perf_event_header h = { PERF_RECORD_FORK, 0, 0 };
	size_t	 n = 32 + record_sample_id_size(&LAYOUT);

	h.size = (uint16_t)n;
	memcpy(s->buf, &h, sizeof(h));
	memcpy(s->buf + 8, &pid, 4);
	memcpy(s->buf + 12, &ppid, 4);
	memcpy(s->buf + 16, &pid, 4);
	memcpy(s->buf + 20, &ppid, 4);
	memcpy(s->buf + 24, &t, 8);
	record_encode_sample_id(&LAYOUT, &sid, s->buf + 32);
	ck_assert_int_eq(perfdata_write(&s->pd, s->buf, n), 0);
}

struct childmaps {
	uint32_t pid;
	int	 covered, fork_seen, before_fork;
};

static int
childmaps_cb(const struct perf_event_header *h, void *arg)
{
	struct childmaps *x = arg;
	struct record r;

	if (record_decode(h, h->size, &LAYOUT, &r) < 0)
		return 0;
	if (r.type == PERF_RECORD_FORK && r.task.pid == x->pid)
		x->fork_seen = 1;
	if (r.type == PERF_RECORD_MMAP2 && r.mmap.pid == x->pid &&
	    r.mmap.addr <= 0x403000 && 0x403000 < r.mmap.addr + r.mmap.len &&
	    strcmp(r.mmap.filename, "/opt/srv") == 0) {
		x->covered++;
		x->before_fork += !x->fork_seen;
	}
	return 0;
}

/*
 * --pid with the perf format keeps only PID's records: PID forked in the
 * window without an exec (a pre-fork server's worker) was made by perf
 * from its parent's maps, which the output lacked, and all its samples
 * were [unknown] (found by a review).  Its maps follow its FORK now.
 */
START_TEST(test_perf_pid_forked)
{
	struct profile_req r = window(T0 - SEC, T0 + 40 * SEC, PROFILE_PERF);
	struct profile_stats st;
	struct perfdata_file f;
	struct childmaps x = { .pid = 21 };
	struct config conf;
	struct index *ix;
	struct seg s;
	char	 err[256], path[256], p[256];
	int	 i;

	config_defaults(&conf);
	ck_assert_msg(index_open(&ix, state, &conf, NULL, err, sizeof(err)) == 0, "%s", err);
	seg_open(&s, segpath(1, p, sizeof(p)));
	seg_comm(&s, 20, "srv", 100 * SEC);
	seg_mmap(&s, 20, 0x400000, "/opt/srv", 0xd1, 100 * SEC);
	seg_fork(&s, 21, 20, 101 * SEC);
	for (i = 0; i < 5; i++)
		seg_sample(&s, 21, 0x403000, (uint64_t)(102 + i) * SEC);
	seg_close(&s, OFF_A, 100 * SEC);
	index_segment_open(ix, 1, strrchr(p, '/') + 1, T0);
	index_segment_close(ix, 1, T0 + 10 * SEC, 4096, 5, 0, 9);
	ck_assert_int_eq(index_flush(ix), 0);
	index_close(ix);

	r.pid = 21;
	ck_assert_msg(run(&r, &st, err, sizeof(err), "fk.data") == 0, "%s", err);
	ck_assert_uint_eq(st.samples, 5);
	snprintf(path, sizeof(path), "%s/fk.data", tmpdir);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	perfdata_walk(&f, childmaps_cb, &x);
	perfdata_file_close(&f);
	ck_assert_int_eq(x.fork_seen, 1);
	ck_assert_msg(x.covered == 1 && x.before_fork == 0,
	    "the forked child's map of /opt/srv: %d after its FORK, %d before", x.covered,
	    x.before_fork);
}
END_TEST

/*
 * The same when the other boot's segment is the open one (no CLOCK_DATA
 * yet: its clock comes from its first record, the start state's): its
 * records move onto the output's clock too (before: only a closed one's
 * did, and a reboot's open segment was dated days off in perf's output).
 */
START_TEST(test_perf_open_other_boot)
{
	struct profile_req r = window(T0 + 5 * SEC, T0 + 30 * SEC, PROFILE_PERF);
	struct profile_stats st;
	struct perfdata_file f;
	struct times x = { .n = 0 };
	struct config conf;
	struct index *ix;
	struct seg s;
	char	 err[256], path[256], p[256], partial[300];
	size_t	 i;

	config_defaults(&conf);
	ck_assert_msg(index_open(&ix, state, &conf, NULL, err, sizeof(err)) == 0, "%s", err);
	make_seg_alpha(ix);				/* boot A, closed: mono 100..109 s */
	/* boot B, open: mono 50..59 s, wall T0+20..29 */
	snprintf(partial, sizeof(partial), "%s.partial", segpath(2, p, sizeof(p)));
	seg_open(&s, partial);
	seg_comm(&s, 12, "gamma", 50 * SEC);
	seg_mmap(&s, 12, 0x400000, "/opt/gamma", 0xc1, 50 * SEC);
	for (i = 0; i < 10; i++)
		seg_sample(&s, 12, 0x403000, (uint64_t)(50 + i) * SEC + 1);
	ck_assert_int_eq(perfdata_flush(&s.pd), 0);
	perfdata_close(&s.pd);
	index_segment_open(ix, 2, strrchr(p, '/') + 1, T0 + 20 * SEC);
	ck_assert_int_eq(index_flush(ix), 0);
	index_close(ix);

	ck_assert_msg(run(&r, &st, err, sizeof(err), "oo.data") == 0, "%s", err);
	ck_assert_uint_eq(st.segments, 2);
	ck_assert_uint_eq(st.samples, 15);	/* 105..109 of boot A, T0+20..29 of boot B */
	snprintf(path, sizeof(path), "%s/oo.data", tmpdir);
	ck_assert_int_eq(perfdata_open(&f, path, err, sizeof(err)), 0);
	perfdata_walk(&f, sample_time_cb, &x);
	perfdata_file_close(&f);
	ck_assert_uint_eq(x.n, 15);
	for (i = 0; i < x.n; i++) {
		int64_t	 wall = OFF_A + (int64_t)x.t[i];

		ck_assert_msg(wall >= r.since_ns && wall < r.until_ns, "sample %zu at T0%+lld s "
		    "on the output's clock", i, (long long)((wall - T0) / SEC));
		if (i > 0)
			ck_assert_uint_gt(x.t[i], x.t[i - 1]);
	}
}
END_TEST

/*
 * A KVM host's events count guest time too: a sample in guest mode (or a
 * chain's guest context) holds the guest's addresses, which no mapping of
 * the host names, though the vCPU thread's libraries may be at the same
 * addresses (before: named from them).  Here /opt/alpha is mapped where
 * the guest's ip is: its frames stay unmapped.
 */
START_TEST(test_guest_samples)
{
	struct profile_req r = window(T0 - SEC, T0 + 40 * SEC, PROFILE_FOLDED);
	struct profile_stats st;
	struct config conf;
	struct index *ix;
	struct seg s;
	char	 err[256], p[256];
	const uint64_t ip = 0x401000;
	/* misc, then the chain's context; the host's own sample last */
	const struct { uint16_t misc; uint64_t ctx; } kinds[] = {
		{ PERF_RECORD_MISC_GUEST_USER, (uint64_t)PERF_CONTEXT_GUEST_USER },
		{ PERF_RECORD_MISC_GUEST_KERNEL, (uint64_t)PERF_CONTEXT_GUEST_KERNEL },
		{ PERF_RECORD_MISC_USER, (uint64_t)PERF_CONTEXT_USER },
	};
	size_t	 i;

	config_defaults(&conf);
	ck_assert_msg(index_open(&ix, state, &conf, NULL, err, sizeof(err)) == 0, "%s", err);
	seg_open(&s, segpath(1, p, sizeof(p)));
	seg_comm(&s, 10, "qemu", 100 * SEC);
	seg_mmap(&s, 10, 0x400000, "/opt/alpha", 0xa1, 100 * SEC);
	for (i = 0; i < 3; i++) {
		uint64_t v[] = { 7, ip, 10ULL << 32 | 10, 101 * SEC + i, 0, 10000000, 2,
		    kinds[i].ctx, ip };
		struct perf_event_header h = { PERF_RECORD_SAMPLE, kinds[i].misc,
		    (uint16_t)(sizeof(h) + sizeof(v)) };

		memcpy(s.buf, &h, sizeof(h));
		memcpy(s.buf + sizeof(h), v, sizeof(v));
		ck_assert_int_eq(perfdata_write(&s.pd, s.buf, h.size), 0);
	}
	seg_close(&s, OFF_A, 100 * SEC);
	index_segment_open(ix, 1, strrchr(p, '/') + 1, T0);
	index_segment_close(ix, 1, T0 + 10 * SEC, 4096, 3, 0, 5);
	ck_assert_int_eq(index_flush(ix), 0);
	index_close(ix);
	ck_assert_msg(run(&r, &st, err, sizeof(err), "g.folded") == 0, "%s", err);
	ck_assert_uint_eq(st.samples, 3);
	ck_assert_uint_eq(st.frames, 3);
	ck_assert_msg(st.frames_unmapped == 2, "%llu of the two guest samples' frames taken for "
	    "the host's /opt/alpha", (unsigned long long)(2 - st.frames_unmapped));
}
END_TEST

/* --- pprof, read back ---------------------------------------------------- */

START_TEST(test_pprof_roundtrip)
{
	struct profile_req r = window(T0, T0 + 30 * SEC, PROFILE_PPROF);
	Perftools__Profiles__Profile *p;
	struct profile_stats st;
	uint8_t	*buf = malloc(1 << 20);
	char	 err[256], path[256];
	int64_t	 total = 0;
	size_t	 i, j, n, maps_with_id = 0;
	gzFile	 gz;

	make_state();
	ck_assert_msg(run(&r, &st, err, sizeof(err), "r.pb.gz") == 0, "%s", err);
	snprintf(path, sizeof(path), "%s/r.pb.gz", tmpdir);
	ck_assert_ptr_nonnull(gz = gzopen(path, "rb"));
	n = (size_t)gzread(gz, buf, 1 << 20);
	gzclose(gz);
	ck_assert_ptr_nonnull(p = perftools__profiles__profile__unpack(NULL, n, buf));
	ck_assert_str_eq(p->string_table[0], "");
	ck_assert_uint_eq(p->n_sample_type, 2);
	ck_assert_str_eq(p->string_table[p->sample_type[0]->type], "samples");
	ck_assert_str_eq(p->string_table[p->sample_type[1]->unit], "nanoseconds");
	ck_assert_int_eq(p->time_nanos, T0);
	ck_assert_int_eq(p->duration_nanos, 30 * SEC);
	for (i = 0; i < p->n_mapping; i++)
		if (strcmp(p->string_table[p->mapping[i]->build_id],
		    "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1") == 0) {
			ck_assert_str_eq(p->string_table[p->mapping[i]->filename], "/opt/alpha");
			maps_with_id++;
		}
	ck_assert_uint_eq(maps_with_id, 1);
	for (i = 0; i < p->n_sample; i++) {
		Perftools__Profiles__Sample *s = p->sample[i];

		total += s->value[0];
		ck_assert_uint_eq(s->n_label, 2);
		ck_assert_str_eq(p->string_table[s->label[0]->key], "pid");
		ck_assert_str_eq(p->string_table[s->label[1]->key], "comm");
		for (j = 0; j < s->n_location_id; j++)
			ck_assert_uint_le(s->location_id[j], p->n_location);
	}
	ck_assert_int_eq(total, 30);
	ck_assert_int_eq((int64_t)st.samples, total);
	for (i = 0; i < p->n_location; i++) {
		ck_assert_uint_eq(p->location[i]->id, i + 1);
		ck_assert_uint_le(p->location[i]->mapping_id, p->n_mapping);
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
}
END_TEST

#ifndef __SANITIZE_THREAD__	/* profile_suite */
/* --- segments cut or garbled ------------------------------------------------ */

/*
 * Every format over the window of segment 1, as it is on disk now: a
 * profile or one line of error, never a crash (the daemon runs this on a
 * thread of its own).  Counts the runs that failed in *FAILED.
 */
static void
profile_every_format(const char *what, unsigned *failed)
{
	static const enum profile_format fmts[] = { PROFILE_FOLDED, PROFILE_PPROF, PROFILE_SVG,
	    PROFILE_PERF };
	struct profile_req r;
	struct profile_stats st;
	char	 err[256];
	size_t	 i;

	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		r = window(T0, T0 + 10 * SEC, fmts[i]);
		err[0] = '\0';
		if (run(&r, &st, err, sizeof(err), "corrupt.out") != 0) {
			ck_assert_msg(err[0] != '\0' && strchr(err, '\n') == NULL,
			    "%s, %s: no error line", what, profile_format_name(fmts[i]));
			(*failed)++;
		} else
			ck_assert_uint_le(st.samples, 10);
	}
}

/*
 * A closed segment cut at every 16 bytes, and with single bytes replaced
 * (at every 3rd offset, 0x00, 0xff or 0x80 in turn): header, attributes,
 * records, feature sections.  Every run ends in a profile or an error; none
 * crashes (CI runs this under ASan and UBSan), and the intact segment
 * still gives its ten samples after all.
 */
START_TEST(test_corrupt_segments)
{
	static const uint8_t vals[] = { 0x00, 0xff, 0x80 };
	struct profile_req r = window(T0, T0 + 10 * SEC, PROFILE_FOLDED);
	struct profile_stats st;
	struct stat sb;
	uint8_t	*orig, *buf;
	char	 p[256], what[64], err[256];
	unsigned failed = 0, runs = 0;
	size_t	 n, off, v;
	int	 fd;

	make_state();
	segpath(1, p, sizeof(p));
	ck_assert_int_eq(stat(p, &sb), 0);
	n = (size_t)sb.st_size;
	ck_assert_ptr_nonnull(orig = malloc(n));
	ck_assert_ptr_nonnull(buf = malloc(n));
	ck_assert_int_ge(fd = open(p, O_RDONLY), 0);
	ck_assert_int_eq(read(fd, orig, n), (ssize_t)n);
	close(fd);
	for (off = 0; off < n; off += 16, runs++) {
		check_write_file(p, orig, off);
		snprintf(what, sizeof(what), "cut at %zu of %zu", off, n);
		profile_every_format(what, &failed);
	}
	for (off = 0; off < n; off += 3, runs++) {
		v = off / 3 % sizeof(vals);
		memcpy(buf, orig, n);
		buf[off] = orig[off] != vals[v] ? vals[v] : (uint8_t)~vals[v];
		check_write_file(p, buf, n);
		snprintf(what, sizeof(what), "byte %zu = %#x", off, buf[off]);
		profile_every_format(what, &failed);
	}
	/* Most cuts leave nothing to read: errors, not crashes. */
	ck_assert_uint_gt(failed, 0);
	/*
	 * A record's size zeroed half way in the data of a closed segment:
	 * the records after it are not read, and the profile says so
	 * (segments_damaged; before, a clean success with half the samples).
	 */
	{
		uint64_t doff, dsize, pos;
		uint16_t sz;
		int	 k;

		memcpy(buf, orig, n);
		memcpy(&doff, buf + 40, 8);
		memcpy(&dsize, buf + 48, 8);
		for (pos = doff, k = 0; k < 8 && pos + 8 <= doff + dsize; k++) {
			memcpy(&sz, buf + pos + 6, 2);
			pos += sz;
		}
		ck_assert_uint_lt(pos, doff + dsize);
		memset(buf + pos + 6, 0, 2);
		check_write_file(p, buf, n);
		ck_assert_msg(run(&r, &st, err, sizeof(err), "d.folded") == 0, "%s", err);
		ck_assert_uint_lt(st.samples, 10);
		ck_assert_msg(st.segments_damaged == 1, "a segment cut short by a damaged "
		    "record is not counted (%llu samples of 10 read)",
		    (unsigned long long)st.samples);
	}
	check_write_file(p, orig, n);
	ck_assert_msg(run(&r, &st, err, sizeof(err), "w.folded") == 0, "%s", err);
	ck_assert_uint_eq(st.samples, 10);
	fprintf(stderr, "test_corrupt_segments: %u variants of a %zu-byte segment, %u runs "
	    "failed with an error\n", runs, n, failed);
	free(orig);
	free(buf);
}
END_TEST
#endif

/* --- names that are not text ---------------------------------------------- */

/* Bytes of a little-endian integer of LEN bytes into F. */
static void
put_le(FILE *f, uint64_t v, int len)
{
	while (len-- > 0) {
		fputc((int)(v & 0xff), f);
		v >>= 8;
	}
}

/*
 * A user's binary whose DWARF nests lexical blocks 200,000 deep over
 * main, each covering it (a few MB, objcopy'd into a real program): the
 * profile thread symbolized it with libdw's scopes, which recurse a call
 * per level, and the stack overflow killed the daemon.  Now such a
 * compile unit is walked once without recursion and its scopes are not
 * read: main is named from the symbol table.
 */
START_TEST(test_deep_dwarf)
{
	enum { DEPTH = 200000 };
	struct symbolize *sym;
	struct sym_frame fr[SYMBOLIZE_MAX_INLINE];
	struct binary *b;
	char	 cmd[1024], src[256], prog[256], info[256], abbr[256], ar[256], dir[512];
	char	 hex[BUILD_ID_HEX_MAX];
	unsigned long long mainaddr = 0;
	uint8_t	 id[BUILD_ID_MAX];
	FILE	*f;
	int	 i, idlen;

	snprintf(src, sizeof(src), "%s/deep.c", tmpdir);
	snprintf(prog, sizeof(prog), "%s/deep", tmpdir);
	ck_assert_ptr_nonnull(f = fopen(src, "w"));
	fprintf(f, "int main(void) { volatile int i = 0; while (i < 10) i++; return 0; }\n");
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -g0 -O0 -Wl,--build-id -o %s %s", prog, src);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "nm -P %s | awk '$1 == \"main\" { print $3 }'", prog);
	ck_assert_ptr_nonnull(f = popen(cmd, "r"));
	ck_assert_int_eq(fscanf(f, "%llx", &mainaddr), 1);
	pclose(f);
	/* abbrevs: 1 compile unit, 2 lexical block; both low_pc (addr), high_pc (data8) */
	snprintf(abbr, sizeof(abbr), "%s/abbrev", tmpdir);
	ck_assert_ptr_nonnull(f = fopen(abbr, "w"));
	fwrite("\x01\x11\x01\x11\x01\x12\x07\x00\x00\x02\x0b\x01\x11\x01\x12\x07\x00\x00\x00", 1, 19,
	    f);
	fclose(f);
	snprintf(info, sizeof(info), "%s/info", tmpdir);
	ck_assert_ptr_nonnull(f = fopen(info, "w"));
	put_le(f, 7 + (uint64_t)(DEPTH + 1) * 17 + DEPTH + 1, 4);	/* unit_length */
	put_le(f, 4, 2);					/* DWARF 4 */
	put_le(f, 0, 4);
	put_le(f, 8, 1);
	for (i = 0; i <= DEPTH; i++) {
		put_le(f, i == 0 ? 1 : 2, 1);
		put_le(f, mainaddr, 8);
		put_le(f, 16, 8);
	}
	for (i = 0; i <= DEPTH; i++)
		put_le(f, 0, 1);
	fclose(f);
	snprintf(ar, sizeof(ar), "%s/aranges", tmpdir);
	ck_assert_ptr_nonnull(f = fopen(ar, "w"));
	put_le(f, 44, 4);		/* 2 + 4 + 1 + 1 + 4 (pad) + 2 x 16 */
	put_le(f, 2, 2);
	put_le(f, 0, 4);
	put_le(f, 8, 1);
	put_le(f, 0, 1);
	put_le(f, 0, 4);
	put_le(f, mainaddr, 8);
	put_le(f, 16, 8);
	put_le(f, 0, 8);
	put_le(f, 0, 8);
	fclose(f);
	idlen = buildid_read_path(prog, id);
	ck_assert_int_gt(idlen, 0);
	buildid_to_hex(id, (size_t)idlen, hex);
	snprintf(dir, sizeof(dir), "%s/cache/.build-id/%.2s/%s", tmpdir, hex, hex + 2);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && objcopy --add-section .debug_info=%s "
	    "--add-section .debug_abbrev=%s --add-section .debug_aranges=%s %s %s/elf",
	    dir, info, abbr, ar, prog, dir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(dir, sizeof(dir), "%s/cache", tmpdir);
	ck_assert_ptr_nonnull(sym = symbolize_new(dir));
	b = symbolize_binary(sym, BIN_ELF, "/home/user/deep", id, (size_t)idlen, NULL);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(symbolize_addr(sym, b, mainaddr + 4, 1, fr), 1);
	ck_assert_str_eq(fr[0].func, "main");
	symbolize_free(sym);
}
END_TEST

/*
 * What is distinct is what users make it: a process's random call chains
 * (the kernel copies user stacks from user memory) or random names.  Past
 * a million locations a new one is "[truncated]", and past 64 MiB of
 * stacks a new stack is the one "[truncated]" stack, every sample still
 * counted.  Before, the root daemon's profile thread grew without bound.
 * The caps are fields: the test checks the defaults, then runs with caps
 * 256 times smaller (at full size it took over 4 s under ThreadSanitizer
 * on the CI's machine, and tested the same lines).
 */
START_TEST(test_distinct_bounded)
{
	struct symbolize *sym = symbolize_new("/nonexistent");
	struct stacks *s = stacks_new(sym);
	const size_t max_locs = (size_t)1 << 12, nstacks = 600;
	uint32_t locs[127], first;
	size_t	 i, j;

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->max_locs, STACKS_MAX_LOCS);
	ck_assert_uint_eq(s->max_bytes, STACKS_MAX_BYTES);
	s->max_locs = max_locs;
	s->max_bytes = STACKS_MAX_BYTES / 256;			/* 256 KiB */
	first = stacks_location(s, NULL, 1, 1);
	for (i = 2; i < max_locs + 5000; i++)
		stacks_location(s, NULL, i, 1);
	ck_assert_msg(s->nlocs <= max_locs + 1, "%zu locations kept", s->nlocs);
	ck_assert_uint_eq(stacks_location(s, NULL, 1, 1), first);	/* found, as before */
	for (i = 0; i < nstacks; i++) {		/* 556 bytes each: 333 KB */
		for (j = 0; j < 127; j++)
			locs[j] = (uint32_t)(i * 127 + j) % (uint32_t)max_locs + 1;
		ck_assert_int_eq(stacks_add(s, (uint32_t)i, 0, locs, 127, 1000), 0);
	}
	ck_assert_uint_eq(s->samples, nstacks);
	ck_assert_msg(s->nstk < 480, "%zu distinct stacks kept (%zu bytes a stack)", s->nstk,
	    sizeof(struct stack) + sizeof(locs));
	ck_assert_uint_gt(s->truncated_samples, 0);
	ck_assert_uint_le(s->stack_bytes, s->max_bytes + 64);
	stacks_free(s);
	symbolize_free(sym);
}
END_TEST

/*
 * The profile's copy of a segment's processes is a user's to make: perf
 * records no munmap, so a process mapping a file at 500,000 addresses
 * held them all, and each of its forked children a copy (16 GB by a
 * review's count).  A process is shed past maps_max, or when the maps of
 * all would pass maps_global: its maps dropped (its frames unmapped, not
 * another's binary), none kept until its exec, its children shed too.
 */
START_TEST(test_procs_bounded)
{
	struct procs p;
	struct binary b;
	uint64_t i;

	memset(&b, 0, sizeof(b));
	ck_assert_int_eq(procs_init(&p), 0);
	ck_assert_uint_eq(p.maps_max, PROCS_MAPS_MAX);
	ck_assert_uint_eq(p.maps_global, PROCS_MAPS_GLOBAL);
	p.maps_max = 1000;
	p.maps_global = 4096;
	/* one process past maps_max, mapping downward (each a memmove of all) */
	for (i = 0; i < 5000; i++)
		ck_assert_int_eq(procs_map(&p, 10, 0x7f0000000000ULL - i * 0x2000, 0x1000, 0, &b), 0);
	ck_assert_uint_eq(p.shed, 1);
	ck_assert_ptr_null(procs_find(&p, 10, 0x7f0000000000ULL));
	ck_assert_uint_le(p.maps_alloc, p.maps_global);
	/* its child: shed too; an exec maps again */
	ck_assert_int_eq(procs_fork(&p, 11, 10, 11, 10), 0);
	ck_assert_uint_eq(p.shed, 2);
	ck_assert_int_eq(procs_set_comm(&p, 10, 10, "new", 1), 0);
	ck_assert_int_eq(procs_map(&p, 10, 0x400000, 0x1000, 0, &b), 0);
	ck_assert_ptr_nonnull(procs_find(&p, 10, 0x400000));
	/* under maps_max each, but forks' copies pass maps_global: the biggest are shed */
	for (i = 0; i < 900; i++)
		ck_assert_int_eq(procs_map(&p, 20, 0x10000000ULL + i * 0x2000, 0x1000, 0, &b), 0);
	for (i = 0; i < 100; i++)
		ck_assert_int_eq(procs_fork(&p, 100 + (uint32_t)i, 20, 100 + (uint32_t)i, 20), 0);
	ck_assert_uint_le(p.maps_alloc, p.maps_global);
	ck_assert_uint_gt(p.shed, 2);
	/* a user's process fills the budget; a small one maps then: the big one goes, not it */
	procs_clear(&p);
	p.maps_max = 4000;
	for (i = 0; i < 3000; i++)
		ck_assert_int_eq(procs_map(&p, 40, 0x10000000ULL + i * 0x2000, 0x1000, 0, &b), 0);
	ck_assert_uint_eq(p.maps_alloc, p.maps_global);
	ck_assert_int_eq(procs_map(&p, 41, 0x400000, 0x1000, 0, &b), 0);
	ck_assert_ptr_nonnull(procs_find(&p, 41, 0x400000));
	ck_assert_ptr_null(procs_find(&p, 40, 0x10000000ULL));
	ck_assert_uint_le(p.maps_alloc, p.maps_global);
	procs_clear(&p);
	ck_assert_uint_eq(p.maps_alloc, 0);
	procs_free(&p);
}
END_TEST

/* Past max_str_bytes of names, a new one is "[truncated]", counted. */
START_TEST(test_name_bytes_bounded)
{
	struct symbolize *sym = symbolize_new("/nonexistent");
	struct stacks *s = stacks_new(sym);
	char	 name[4000];
	uint32_t trunc = 0, id;
	size_t	 i;

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->max_str_bytes, STACKS_MAX_STR_BYTES);
	s->max_str_bytes = 1 << 20;
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	for (i = 0; i < 1000; i++) {		/* 4 MB of distinct names */
		snprintf(name, 20, "%019zu", i);
		name[19] = 'n';
		id = stacks_intern(s, name);
		ck_assert_uint_ne(id, 0);
		if (strcmp(s->str[id], "[truncated]") == 0)
			trunc = id;
	}
	ck_assert_uint_ne(trunc, 0);
	ck_assert_uint_le(s->str_bytes, s->max_str_bytes + sizeof("[truncated]") + STACKS_STR_COST);
	ck_assert_uint_gt(s->names_truncated, 700);
	ck_assert_int_eq(s->oom, 0);
	stacks_free(s);
	symbolize_free(sym);
}
END_TEST

/*
 * A user's binary names a function with 64 KB (ELF and the compilers
 * allow it): a name is kept to STACKS_NAME_MAX bytes.  Past max_folded
 * bytes of folded lines, a new stack folds into the one "[truncated]"
 * line, its samples counted there.  Before: 127 frames of such names were
 * 8 MB of one line, and a few thousand stacks tens of GB, in the daemon.
 */
START_TEST(test_names_bounded)
{
	struct symbolize *sym = symbolize_new("/nonexistent");
	struct stacks *s = stacks_new(sym);
	struct folded f;
	char	*big, comm[2100];
	uint32_t id, loc;
	size_t	 i, bytes = 0, len;
	uint64_t total = 0;
	int	 trunc = 0;

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(big = malloc(65536));
	memset(big, 'x', 65535);
	big[65535] = '\0';
	id = stacks_intern(s, big);
	free(big);
	len = strlen(s->str[id]);
	ck_assert_msg(len <= STACKS_NAME_MAX, "a name of 64 KB kept with %zu bytes", len);
	ck_assert_str_eq(s->str[id] + len - 3, "...");
	s->max_folded = 64 << 10;
	for (i = 0; i < 100; i++) {	/* 100 lines of 2 KB: 200 KB */
		snprintf(comm, sizeof(comm), "%02000zu", i);
		loc = stacks_location(s, NULL, 0x1000 + i, 1);
		ck_assert_int_eq(stacks_add(s, (uint32_t)i + 1, stacks_intern(s, comm), &loc, 1,
		    1000), 0);
	}
	ck_assert_int_eq(folded_build(s, &f), 0);
	for (i = 0; i < f.n; i++) {
		bytes += strlen(f.lines[i]) + 1;
		total += f.counts[i];
		trunc |= strcmp(f.lines[i], "[truncated]") == 0;
	}
	ck_assert_msg(bytes <= (64 << 10) + 16, "%zu bytes of folded lines", bytes);
	ck_assert(trunc);
	ck_assert_uint_eq(total, 100);
	folded_free(&f);
	stacks_free(s);
	symbolize_free(sym);
}
END_TEST

START_TEST(test_hostile_names)
{
	struct symbolize *sym = symbolize_new("/nonexistent");
	struct stacks *s = stacks_new(sym);
	struct sym_frame fr[SYMBOLIZE_MAX_INLINE];
	struct profile_meta m = { .since_ns = T0, .until_ns = T0 + SEC, .comment = "w<&>" };
	struct binary *b;
	struct folded f;
	char	 map[256], *svg;
	uint32_t loc[2];
	uint64_t bytes;
	FILE	*fp;
	int	 fd;

	/* a perf-PID.map with garbage, a 0x prefix, a zero size, a name with ';' and bytes */
	snprintf(map, sizeof(map), "%s/perf-1.map", tmpdir);
	ck_assert_ptr_nonnull(fp = fopen(map, "w"));
	fprintf(fp, "garbage\n1000\n0x2000 10 good_one\n3000 0 zero_size\n"
	    "4000 10 a;b\x01<x>\xff&\"'\n5000 zz bad_size\n");
	fclose(fp);
	b = symbolize_binary(sym, BIN_JIT, "/tmp/perf-1.map", NULL, 0, map);
	ck_assert_int_eq(symbolize_addr(sym, b, 0x2008, 1, fr), 1);
	ck_assert_str_eq(fr[0].func, "good_one");
	ck_assert_int_eq(symbolize_addr(sym, b, 0x2010, 1, fr), 0);	/* past its size */
	ck_assert_int_eq(symbolize_addr(sym, b, 0x3000, 1, fr), 0);	/* size 0: refused */
	ck_assert_int_eq(symbolize_addr(sym, b, 0x1000, 1, fr), 0);
	ck_assert_uint_ne(loc[0] = stacks_location(s, b, 0x4004, 1), 0);
	ck_assert_uint_ne(loc[1] = stacks_location(s, b, 0x2004, 0), 0);
	/* a process named "c\nm;main": its ';' would be a frame of the flame graph */
	ck_assert_int_eq(stacks_add(s, 1, stacks_intern(s, "c\nm;main"), loc, 2, 10), 0);
	ck_assert_int_eq(stacks_add(s, 2, stacks_intern(s, "c\nm;main"), loc, 2, 10), 0);
	ck_assert_int_eq(folded_build(s, &f), 0);
	ck_assert_uint_eq(f.n, 1);		/* two pids, one comm and stack: one line */
	ck_assert_uint_eq(f.counts[0], 2);
	ck_assert_str_eq(f.lines[0], "c?m:main;good_one_[j];a:b?<x>?&\"'_[j]");
	folded_free(&f);
	/*
	 * A binary nothing names a function of is shown by its name, which a
	 * user chose: "x\nsshd 999999" would end the line and forge another.
	 */
	b = symbolize_binary(sym, BIN_NOID, "/home/u/x\nsshd 999999;y\xff\xef\xbf\xbf", NULL, 0,
	    NULL);
	ck_assert_uint_ne(loc[0] = stacks_location(s, b, 0x10, 1), 0);
	ck_assert_int_eq(stacks_add(s, 3, stacks_intern(s, "u"), loc, 2, 10), 0);
	ck_assert_int_eq(folded_build(s, &f), 0);
	ck_assert_uint_eq(f.n, 2);
	ck_assert_str_eq(f.lines[0][0] == 'u' ? f.lines[0] : f.lines[1],
	    "u;good_one_[j];[x?sshd 999999:y????]");	/* U+FFFF: not XML */
	folded_free(&f);
	fd = open(map, O_RDWR | O_TRUNC);
	ck_assert_int_eq(svg_write(s, &m, fd, &bytes, map, sizeof(map)), 0);
	close(fd);
	svg = slurp("perf-1.map");
	ck_assert_ptr_nonnull(strstr(svg, "a:b?&lt;x&gt;?&amp;&quot;&apos;_[j]"));
	ck_assert_ptr_null(strstr(svg, "<x>"));
	ck_assert_ptr_nonnull(strstr(svg, "w&lt;&amp;&gt;"));
	free(svg);
	stacks_free(s);
	symbolize_free(sym);
}
END_TEST

/*
 * Kept JIT maps: one file linked into many segments' directories (a map
 * unchanged between segments) is parsed once, and the maps parsed stay
 * within the budget; past it, frames are left unnamed.
 */
START_TEST(test_jit_budget)
{
	struct symbolize *sym = symbolize_new("/nonexistent");
	struct symbolize_stats ss;
	struct sym_frame fr[SYMBOLIZE_MAX_INLINE];
	struct binary *b[4];
	char	 map[4][256];
	FILE	*fp;
	int	 i;

	for (i = 0; i < 4; i++)
		snprintf(map[i], sizeof(map[i]), "%s/perf-%d.map", tmpdir, i);
	for (i = 0; i < 4; i += 3) {	/* 0 and 3: two files of 26 bytes */
		ck_assert_ptr_nonnull(fp = fopen(map[i], "w"));
		fprintf(fp, "1000 100 jit_fn_%d_aaaaaaa\n", i);
		fclose(fp);
	}
	ck_assert_int_eq(link(map[0], map[1]), 0);	/* the same map, two segments */
	ck_assert_int_eq(link(map[0], map[2]), 0);
	symbolize_jit_budget(sym, 40);
	for (i = 0; i < 4; i++)
		b[i] = symbolize_binary(sym, BIN_JIT, "/tmp/perf-9.map", NULL, 0, map[i]);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(symbolize_addr(sym, b[i], 0x1010, 1, fr), 1);
		ck_assert_str_eq(fr[0].func, "jit_fn_0_aaaaaaa");
	}
	/* another file, past the budget: unnamed */
	ck_assert_int_eq(symbolize_addr(sym, b[3], 0x1010, 1, fr), 0);
	symbolize_stats(sym, &ss);
	ck_assert_uint_eq(ss.jit_maps, 1);
	symbolize_free(sym);
	/* a map with no valid line (UBSan: nothing to sort is no array) */
	sym = symbolize_new("/nonexistent");
	ck_assert_ptr_nonnull(fp = fopen(map[3], "w"));
	fprintf(fp, "zz\n");
	fclose(fp);
	b[0] = symbolize_binary(sym, BIN_JIT, "/tmp/perf-9.map", NULL, 0, map[3]);
	ck_assert_int_eq(symbolize_addr(sym, b[0], 0x1010, 1, fr), 0);
	symbolize_free(sym);
}
END_TEST

/* --- the per-segment process model ---------------------------------------- */

START_TEST(test_procs)
{
	struct procs p;
	struct binary *a = (struct binary *)0x1, *b = (struct binary *)0x2;
	const struct pmap *m;
	int	 i;

	ck_assert_int_eq(procs_init(&p), 0);
	ck_assert_int_eq(procs_map(&p, 5, 0x1000, 0x3000, 0, a), 0);
	ck_assert_int_eq(procs_map(&p, 5, 0x2000, 0x1000, 0x100000, b), 0);	/* splits a */
	ck_assert_ptr_eq(procs_find(&p, 5, 0x1800)->bin, a);
	ck_assert_ptr_eq(procs_find(&p, 5, 0x2800)->bin, b);
	m = procs_find(&p, 5, 0x3800);
	ck_assert_ptr_eq(m->bin, a);
	ck_assert_uint_eq(m->start, 0x3000);
	ck_assert_uint_eq(m->pgoff, 0x2000);	/* the right part keeps its file offset */
	ck_assert_ptr_null(procs_find(&p, 5, 0x4000));
	ck_assert_int_eq(procs_set_comm(&p, 5, 5, "parent", 0), 0);
	ck_assert_int_eq(procs_fork(&p, 6, 5, 6, 5), 0);
	ck_assert_ptr_eq(procs_find(&p, 6, 0x2800)->bin, b);	/* the child has the maps */
	ck_assert_str_eq(procs_comm(&p, 6, 6), "parent");
	ck_assert_int_eq(procs_set_comm(&p, 6, 6, "child", 1), 0);	/* exec */
	ck_assert_ptr_null(procs_find(&p, 6, 0x2800));
	ck_assert_ptr_nonnull(procs_find(&p, 5, 0x2800));
	/* EXIT: still known for late samples, forgotten PROCS_GRAVE exits later */
	procs_exit(&p, 5, 5);
	ck_assert_str_eq(procs_comm(&p, 5, 5), "parent");
	ck_assert_ptr_nonnull(procs_find(&p, 5, 0x2800));
	for (i = 0; i < PROCS_GRAVE; i++)
		procs_exit(&p, 1000 + (uint32_t)i, 1000 + (uint32_t)i);
	ck_assert_ptr_null(procs_comm(&p, 5, 5));
	ck_assert_ptr_null(procs_find(&p, 5, 0x2800));
	/* a pid reused while its old process lies in the grave stays */
	ck_assert_int_eq(procs_set_comm(&p, 7, 7, "old", 0), 0);
	procs_exit(&p, 7, 7);
	ck_assert_int_eq(procs_fork(&p, 7, 6, 7, 6), 0);
	for (i = 0; i < PROCS_GRAVE; i++)
		procs_exit(&p, 3000 + (uint32_t)i, 3000 + (uint32_t)i);
	ck_assert_str_eq(procs_comm(&p, 7, 7), "child");
	procs_free(&p);
}
END_TEST

static Suite *
profile_suite(void)
{
	Suite	*s = suite_create("profile");
	TCase	*tc = tcase_create("profile");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_window_open_segment);
	tcase_add_test(tc, test_kernel_other_boot);
	tcase_add_test(tc, test_kernel_open_segment);
	tcase_add_test(tc, test_kernel_open_running);
	tcase_add_test(tc, test_kernel_unknown_closed);
	tcase_add_test(tc, test_user_ip_after_kernel);
	tcase_add_test(tc, test_vdso_compat);
	tcase_add_test(tc, test_perf_other_boot);
	tcase_add_test(tc, test_perf_pid_forked);
	tcase_add_test(tc, test_perf_open_other_boot);
	tcase_add_test(tc, test_guest_samples);
	tcase_add_test(tc, test_pprof_roundtrip);
	tcase_add_test(tc, test_hostile_names);
	tcase_add_test(tc, test_deep_dwarf);
	tcase_add_test(tc, test_distinct_bounded);
	tcase_add_test(tc, test_names_bounded);
	tcase_add_test(tc, test_procs_bounded);
	tcase_add_test(tc, test_name_bytes_bounded);
	tcase_add_test(tc, test_jit_budget);
	tcase_add_test(tc, test_procs);
	suite_add_tcase(s, tc);
#ifndef __SANITIZE_THREAD__
	/*
	 * Memory's test (the plain build and ASan): profiles are built on one
	 * thread, so under ThreadSanitizer its 3,000 runs were 30 s of the
	 * CI's time and no race to find.
	 */
	tc = tcase_create("corrupt");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);		/* some 3,000 profiles; ASan */
	tcase_add_test(tc, test_corrupt_segments);
	suite_add_tcase(s, tc);
#endif
	return s;
}

CHECK_MAIN(profile_suite)
