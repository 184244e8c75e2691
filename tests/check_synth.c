/*
 * check_synth.c - unit tests for daemon/record/synth.c's kernel maps: the
 * kernel's MMAP ends where the first module above it begins (as perf
 * synthesizes it), so perf does not put the modules' samples on the
 * kernel; with no module it runs to the top of the address space.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "check_main.h"

#include "record/synth.h"

#define TEXT	0xffffffff81000000ULL

struct found {
	struct record_layout layout;
	uint64_t	 kernel_len;
	int		 modules;
};

static int
walk_cb(const struct perf_event_header *h, void *arg)
{
	struct found *f = arg;
	struct record rec;

	ck_assert_int_eq(record_decode(h, h->size, &f->layout, &rec), 0);
	if (rec.type != PERF_RECORD_MMAP || rec.mmap.pid != (uint32_t)-1)
		return 0;
	if (strcmp(rec.mmap.filename, "[kernel.kallsyms]_text") == 0) {
		ck_assert_uint_eq(rec.mmap.addr, TEXT);
		f->kernel_len = rec.mmap.len;
	} else
		f->modules++;
	return 0;
}

/* The kernel map's length in a segment synthesized with MODS. */
static uint64_t
kernel_len(struct kmod *mods, size_t nmods)
{
	static const uint64_t ids[1] = { 1 };
	struct record_layout l = { .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
	    PERF_SAMPLE_TIME | PERF_SAMPLE_IP, .sample_id_all = 1 };
	struct perfdata_attr a = { .name = "cpu-clock", .ids = ids, .nids = 1 };
	struct perfdata_meta meta = { .hostname = "h", .clockid = -1 };
	struct perfdata_file pf;
	struct kinfo k = { .text = TEXT, .mods = mods, .nmods = nmods };
	struct segment seg;
	struct synth_stats st;
	struct model m;
	struct found f = { .layout = l };
	struct synth_args sa = { .layout = &l, .id = ids[0], .time = 1000,
	    .wall_ns = 1700000000000000000ULL };	/* no process: no binaries, no one to tell */
	char	 dir[] = "/tmp/check_synth.XXXXXX", err[256], cmd[64];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	a.attr.type = PERF_TYPE_SOFTWARE;
	a.attr.size = PERF_FILE_ATTR_SIZE;
	a.attr.sample_type = l.sample_type;
	a.attr.sample_id_all = 1;
	ck_assert_int_eq(model_init(&m), 0);
	ck_assert_int_eq(segment_open(&seg, dir, 1, 1000, 1700000000000000000ULL, &a, 1), 0);
	ck_assert_int_eq(synth_write(&seg, &m, &k, &sa, &st), 0);
	ck_assert_int_eq(segment_close(&seg, &a, 1, &meta), 0);
	ck_assert_int_eq(perfdata_open(&pf, seg.path, err, sizeof(err)), 0);
	ck_assert_int_ge(perfdata_walk(&pf, walk_cb, &f), 0);
	perfdata_file_close(&pf);
	ck_assert_int_eq(f.modules, (int)nmods);
	model_free(&m);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	return f.kernel_len;
}

START_TEST(test_kernel_map_ends_at_modules)
{
	struct kmod mods[2];

	memset(mods, 0, sizeof(mods));
	snprintf(mods[0].path, sizeof(mods[0].path), "/lib/modules/x/b.ko");
	mods[0].addr = 0xffffffffc0200000ULL;
	mods[0].size = 0x1000;
	snprintf(mods[1].path, sizeof(mods[1].path), "/lib/modules/x/a.ko");
	mods[1].addr = 0xffffffffc0000000ULL;
	mods[1].size = 0x1000;
	ck_assert_uint_eq(kernel_len(mods, 2), 0xffffffffc0000000ULL - TEXT);
	ck_assert_uint_eq(kernel_len(NULL, 0), ~0ULL - TEXT);
}
END_TEST

static Suite *
synth_suite(void)
{
	Suite	*s = suite_create("synth");
	TCase	*tc = tcase_create("kernel");

	tcase_add_test(tc, test_kernel_map_ends_at_modules);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(synth_suite)
