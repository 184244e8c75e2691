/*
 * check_model.c - unit tests for daemon/model.c: fork copies maps and comm,
 * a thread fork shares its process, exec drops the maps, overlapping MMAPs
 * split/trim/replace with the right pgoff, thread and process exit,
 * model_foreach, and the nprocs/nmaps counters against a recount after
 * every step.  Run under valgrind for leaks (10000 processes churned).
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "check_main.h"
#include "check_oom.h"

#include "hash.h"
#include "record/binaries.h"
#include "record/model.h"

static struct model M;

static void
setup(void)
{
	ck_assert_int_eq(model_init(&M), 0);
}

static void
teardown(void)
{
	model_free(&M);
}

struct tally {
	size_t	 nprocs, nmaps, nthreads;
	uint32_t bin_maps[256];		/* by binary id (add_map: the build-id's byte) */
	size_t	 name_bytes;		/* the maps' names' */
};

static int
tally_cb(struct model_proc *p, void *arg)
{
	struct tally *t = arg;
	size_t	 i, bytes = 0;

	t->nprocs++;
	t->nmaps += p->nmaps;
	t->nthreads += p->nthreads;
	/* invariants of every process: sorted, non-overlapping, owned names */
	for (i = 0; i < p->nmaps; i++) {
		ck_assert_uint_gt(p->maps[i].len, 0);
		if (p->maps[i].bin < 256)
			t->bin_maps[p->maps[i].bin]++;
		ck_assert_ptr_nonnull(p->maps[i].file->name);
		t->name_bytes += strlen(p->maps[i].file->name);
		bytes += strlen(p->maps[i].file->name);
		if (i > 0)
			ck_assert_uint_le(p->maps[i - 1].addr + p->maps[i - 1].len, p->maps[i].addr);
	}
	ck_assert_uint_eq(bytes, p->name_bytes);
	return 0;
}

/* Recount everything and compare with the model's counters. */
static void
check_counts(void)
{
	struct tally t;

	memset(&t, 0, sizeof(t));
	ck_assert_int_eq(model_foreach(&M, tally_cb, &t), 0);
	size_t	 b;

	ck_assert_uint_eq(t.nprocs, M.nprocs);
	ck_assert_uint_eq(t.nmaps, M.nmaps);
	ck_assert_uint_eq(t.name_bytes, M.name_bytes);
	/* each binary's count of maps, exact (cmd-lookup.c: mapped now?) */
	ck_assert_int_eq(M.bin_maps_lost, 0);
	for (b = 0; b < 256; b++) {
		ck_assert_uint_eq(b < M.nbin_maps ? M.bin_maps[b] : 0, t.bin_maps[b]);
		ck_assert_int_eq(model_bin_mapped(&M, (uint32_t)b), t.bin_maps[b] > 0);
	}
}

static int
add_map(uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff, const char *file,
    uint8_t bid_byte)
{
	struct record_mmap r;

	memset(&r, 0, sizeof(r));
	r.pid = pid;
	r.tid = pid;
	r.addr = addr;
	r.len = len;
	r.pgoff = pgoff;
	r.prot = 5;
	r.flags = 2;
	r.maj = 8;
	r.min = 1;
	r.ino = 1000 + bid_byte;
	r.has_inode = 1;
	if (bid_byte) {
		r.build_id_size = 20;
		memset(r.build_id, bid_byte, 20);
	}
	r.filename = file;
	/* its binary: the build-id's byte (none without), as the recorder names one */
	return model_add_map(&M, &r, bid_byte ? BID_MMAP2 : BID_NONE,
	    bid_byte ? bid_byte : UINT32_MAX);
}

/* Map I of PID is [addr, addr+len) of FILE at PGOFF. */
static void
check_map(uint32_t pid, size_t i, uint64_t addr, uint64_t len, uint64_t pgoff, const char *file)
{
	struct model_proc *p = model_find(&M, pid);

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_lt(i, p->nmaps);
	ck_assert_uint_eq(p->maps[i].addr, addr);
	ck_assert_uint_eq(p->maps[i].len, len);
	ck_assert_uint_eq(p->maps[i].pgoff, pgoff);
	ck_assert_str_eq(p->maps[i].file->name, file);
}

static size_t
nmaps_of(uint32_t pid)
{
	struct model_proc *p = model_find(&M, pid);

	return p == NULL ? 0 : p->nmaps;
}

START_TEST(test_empty)
{
	ck_assert_uint_eq(M.nprocs, 0);
	ck_assert_uint_eq(M.nmaps, 0);
	ck_assert_ptr_null(model_find(&M, 1));
	ck_assert_ptr_null(model_comm(&M, 1, 1));
	model_exit(&M, 1, 1);			/* unknown: no-op */
	model_exit(&M, 1, 2);
	ck_assert_uint_eq(M.nprocs, 0);
	check_counts();
}
END_TEST

START_TEST(test_add_sorted)
{
	ck_assert_int_eq(add_map(10, 0x3000, 0x1000, 0, "/c", 3), 0);
	ck_assert_int_eq(add_map(10, 0x1000, 0x1000, 0, "/a", 1), 0);
	ck_assert_int_eq(add_map(10, 0x2000, 0x1000, 0, "/b", 0), 0);
	ck_assert_uint_eq(M.nprocs, 1);
	ck_assert_uint_eq(M.nmaps, 3);
	check_map(10, 0, 0x1000, 0x1000, 0, "/a");
	check_map(10, 1, 0x2000, 0x1000, 0, "/b");
	check_map(10, 2, 0x3000, 0x1000, 0, "/c");
	{
		struct model_proc *p = model_find(&M, 10);

		ck_assert_uint_eq(p->maps[0].file->build_id_size, 20);
		ck_assert_uint_eq(p->maps[0].file->build_id[19], 1);
		ck_assert_uint_eq(p->maps[0].source, BID_MMAP2);
		ck_assert_uint_eq(p->maps[0].file->ino, 1001);
		ck_assert_uint_eq(p->maps[0].prot, 5);
		ck_assert_uint_eq(p->maps[1].file->build_id_size, 0);
		ck_assert_uint_eq(p->maps[1].source, BID_NONE);
	}
	/* Empty and wrapping maps are ignored. */
	ck_assert_int_eq(add_map(10, 0x5000, 0, 0, "/zero", 0), 0);
	ck_assert_int_eq(add_map(10, UINT64_MAX - 0xfff, 0x2000, 0, "/wrap", 0), 0);
	ck_assert_uint_eq(nmaps_of(10), 3);
	/* Many maps: capacity grows. */
	{
		uint64_t i;

		for (i = 0; i < 100; i++)
			ck_assert_int_eq(add_map(11, 0x100000 + (99 - i) * 0x1000, 0x1000, i, "/many", 0), 0);
		ck_assert_uint_eq(nmaps_of(11), 100);
		check_map(11, 0, 0x100000, 0x1000, 99, "/many");
		check_map(11, 99, 0x100000 + 99 * 0x1000, 0x1000, 0, "/many");
	}
	check_counts();
}
END_TEST

/* A new map strictly inside an old one splits it in two. */
/* A build-id read after the map was added lands on that map only. */
START_TEST(test_set_buildid)
{
	static const uint8_t id[20] = { 0xab, 0xcd, [19] = 0xef };
	struct model_proc *p;

	ck_assert_int_eq(add_map(10, 0x1000, 0x1000, 0, "/a", 0), 0);
	ck_assert_int_eq(add_map(10, 0x3000, 0x1000, 0, "/b", 0), 0);
	ck_assert_int_eq(model_set_map_buildid(&M, 10, 0x3000, id, 20, 0, BID_USER), 0);
	p = model_find(&M, 10);
	ck_assert_uint_eq(p->maps[1].file->build_id_size, 20);
	ck_assert_mem_eq(p->maps[1].file->build_id, id, 20);
	ck_assert_uint_eq(p->maps[1].source, BID_USER);
	ck_assert_uint_eq(p->maps[0].file->build_id_size, 0);
	/* No map there, no process, no build-id: nothing changes. */
	ck_assert_int_eq(model_set_map_buildid(&M, 10, 0x2000, id, 20, 0, BID_USER), -ENOENT);
	ck_assert_int_eq(model_set_map_buildid(&M, 99, 0x1000, id, 20, 0, BID_USER), -ENOENT);
	ck_assert_int_eq(model_set_map_buildid(&M, 10, 0x1000, id, 0, 0, BID_USER), -ENOENT);
	ck_assert_uint_eq(model_find(&M, 10)->maps[0].file->build_id_size, 0);
	check_counts();
}
END_TEST

START_TEST(test_overlap_split)
{
	ck_assert_int_eq(add_map(20, 0x10000, 0x10000, 0x4000, "/lib/big.so", 7), 0);
	ck_assert_int_eq(add_map(20, 0x14000, 0x2000, 0, "/anon", 0), 0);
	ck_assert_uint_eq(nmaps_of(20), 3);
	ck_assert_uint_eq(M.nmaps, 3);
	check_map(20, 0, 0x10000, 0x4000, 0x4000, "/lib/big.so");
	check_map(20, 1, 0x14000, 0x2000, 0, "/anon");
	/* the tail keeps the file offset of the bytes it maps */
	check_map(20, 2, 0x16000, 0xa000, 0x4000 + 0x6000, "/lib/big.so");
	{
		struct model_proc *p = model_find(&M, 20);

		/* both halves keep the build-id, and share the name (counted) */
		ck_assert_uint_eq(p->maps[2].file->build_id_size, 20);
		ck_assert_uint_eq(p->maps[2].file->build_id[0], 7);
		ck_assert_uint_eq(p->maps[2].source, BID_MMAP2);
		ck_assert_ptr_eq(p->maps[0].file->name, p->maps[2].file->name);
		ck_assert_str_eq(p->maps[2].file->name, p->maps[0].file->name);
	}
	check_counts();
}
END_TEST

/* Partial overlaps trim the old maps on either side. */
START_TEST(test_overlap_trim)
{
	ck_assert_int_eq(add_map(30, 0x10000, 0x4000, 0x1000, "/a", 0), 0);	/* [10000,14000) */
	ck_assert_int_eq(add_map(30, 0x14000, 0x4000, 0x8000, "/b", 0), 0);	/* [14000,18000) */
	/* [12000,16000) covers the end of /a and the start of /b */
	ck_assert_int_eq(add_map(30, 0x12000, 0x4000, 0, "/c", 0), 0);
	ck_assert_uint_eq(nmaps_of(30), 3);
	check_map(30, 0, 0x10000, 0x2000, 0x1000, "/a");
	check_map(30, 1, 0x12000, 0x4000, 0, "/c");
	check_map(30, 2, 0x16000, 0x2000, 0x8000 + 0x2000, "/b");
	/* exactly at an edge: no overlap, nothing trimmed */
	ck_assert_int_eq(add_map(30, 0x18000, 0x1000, 0, "/d", 0), 0);
	ck_assert_int_eq(add_map(30, 0xf000, 0x1000, 0, "/e", 0), 0);
	ck_assert_uint_eq(nmaps_of(30), 5);
	check_map(30, 0, 0xf000, 0x1000, 0, "/e");
	check_map(30, 1, 0x10000, 0x2000, 0x1000, "/a");
	check_map(30, 4, 0x18000, 0x1000, 0, "/d");
	check_counts();
}
END_TEST

/* A map that covers old ones (exactly or more) replaces them. */
START_TEST(test_overlap_replace)
{
	ck_assert_int_eq(add_map(40, 0x10000, 0x1000, 0, "/a", 0), 0);
	ck_assert_int_eq(add_map(40, 0x11000, 0x1000, 0, "/b", 0), 0);
	ck_assert_int_eq(add_map(40, 0x12000, 0x1000, 0, "/c", 0), 0);
	ck_assert_int_eq(add_map(40, 0x20000, 0x1000, 0, "/far", 0), 0);
	/* exact replacement */
	ck_assert_int_eq(add_map(40, 0x11000, 0x1000, 0x5000, "/b2", 9), 0);
	ck_assert_uint_eq(nmaps_of(40), 4);
	check_map(40, 1, 0x11000, 0x1000, 0x5000, "/b2");
	ck_assert_uint_eq(model_find(&M, 40)->maps[1].file->build_id[0], 9);
	/* cover all three and more: they go, /far stays */
	ck_assert_int_eq(add_map(40, 0xf000, 0x5000, 0, "/all", 0), 0);
	ck_assert_uint_eq(nmaps_of(40), 2);
	ck_assert_uint_eq(M.nmaps, 2);
	check_map(40, 0, 0xf000, 0x5000, 0, "/all");
	check_map(40, 1, 0x20000, 0x1000, 0, "/far");
	/* overlap the start of /all: trimmed, its pgoff advanced */
	ck_assert_int_eq(add_map(40, 0xe000, 0x2000, 0, "/new", 0), 0);
	check_map(40, 0, 0xe000, 0x2000, 0, "/new");
	check_map(40, 1, 0x10000, 0x4000, 0x1000, "/all");
	check_counts();
}
END_TEST

START_TEST(test_comm)
{
	ck_assert_int_eq(model_set_comm(&M, 50, 50, "bash", 0), 0);
	ck_assert_int_eq(model_set_comm(&M, 50, 51, "worker", 0), 0);
	ck_assert_str_eq(model_comm(&M, 50, 50), "bash");
	ck_assert_str_eq(model_comm(&M, 50, 51), "worker");
	ck_assert_ptr_null(model_comm(&M, 50, 52));
	ck_assert_uint_eq(M.nprocs, 1);
	ck_assert_uint_eq(model_find(&M, 50)->nthreads, 2);
	/* rename, and a name longer than 15 chars is truncated */
	ck_assert_int_eq(model_set_comm(&M, 50, 50, "a-very-long-process-name", 0), 0);
	ck_assert_str_eq(model_comm(&M, 50, 50), "a-very-long-pro");
	ck_assert_uint_eq(model_find(&M, 50)->nthreads, 2);
	check_counts();
}
END_TEST

START_TEST(test_exec_drops_maps)
{
	ck_assert_int_eq(model_set_comm(&M, 60, 60, "sh", 0), 0);
	ck_assert_int_eq(model_fork(&M, 60, 60, 61, 60), 0);	/* a thread */
	ck_assert_int_eq(add_map(60, 0x400000, 0x1000, 0, "/bin/sh", 1), 0);
	ck_assert_int_eq(add_map(60, 0x7f0000000000ULL, 0x1000, 0, "/lib/libc.so.6", 2), 0);
	ck_assert_int_eq(add_map(70, 0x400000, 0x1000, 0, "/bin/other", 0), 0);
	ck_assert_uint_eq(M.nmaps, 3);
	/* not exec: only the name changes */
	ck_assert_int_eq(model_set_comm(&M, 60, 60, "sh2", 0), 0);
	ck_assert_uint_eq(nmaps_of(60), 2);
	/* exec: maps dropped, threads reduced to the exec'ing one */
	ck_assert_int_eq(model_set_comm(&M, 60, 61, "true", 1), 0);
	ck_assert_uint_eq(nmaps_of(60), 0);
	ck_assert_uint_eq(M.nmaps, 1);
	ck_assert_uint_eq(M.nprocs, 2);
	ck_assert_uint_eq(model_find(&M, 60)->nthreads, 1);
	ck_assert_str_eq(model_comm(&M, 60, 61), "true");
	ck_assert_ptr_null(model_comm(&M, 60, 60));
	ck_assert_uint_eq(nmaps_of(70), 1);
	/* the new image maps again */
	ck_assert_int_eq(add_map(60, 0x500000, 0x2000, 0, "/bin/true", 3), 0);
	check_map(60, 0, 0x500000, 0x2000, 0, "/bin/true");
	check_counts();
}
END_TEST

START_TEST(test_fork_copies)
{
	struct model_proc *p, *c;
	size_t	 i;

	ck_assert_int_eq(model_set_comm(&M, 100, 100, "parent", 0), 0);
	ck_assert_int_eq(add_map(100, 0x1000, 0x1000, 0, "/bin/parent", 1), 0);
	ck_assert_int_eq(add_map(100, 0x3000, 0x2000, 0x1000, "/lib/libx.so", 2), 0);
	ck_assert_int_eq(model_fork(&M, 200, 100, 200, 100), 0);
	ck_assert_uint_eq(M.nprocs, 2);
	ck_assert_uint_eq(M.nmaps, 4);
	p = model_find(&M, 100);
	c = model_find(&M, 200);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->nmaps, 2);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(c->maps[i].addr, p->maps[i].addr);
		ck_assert_uint_eq(c->maps[i].len, p->maps[i].len);
		ck_assert_uint_eq(c->maps[i].pgoff, p->maps[i].pgoff);
		ck_assert_mem_eq(c->maps[i].file->build_id, p->maps[i].file->build_id, BUILD_ID_MAX);
		ck_assert_uint_eq(c->maps[i].file->build_id_size, p->maps[i].file->build_id_size);
		ck_assert_str_eq(c->maps[i].file->name, p->maps[i].file->name);
		ck_assert_ptr_eq(c->maps[i].file->name, p->maps[i].file->name);	/* shared, counted */
	}
	/* a second child that does not exec keeps the names past the parent's exit */
	ck_assert_int_eq(model_fork(&M, 300, 100, 300, 100), 0);
	ck_assert_str_eq(model_comm(&M, 200, 200), "parent");
	ck_assert_uint_eq(c->nthreads, 1);
	/* independent afterwards: the child's exec does not touch the parent */
	ck_assert_int_eq(model_set_comm(&M, 200, 200, "child", 1), 0);
	ck_assert_uint_eq(nmaps_of(200), 0);
	ck_assert_uint_eq(nmaps_of(100), 2);
	ck_assert_str_eq(model_comm(&M, 100, 100), "parent");
	/* parent exits: the child is unaffected */
	model_exit(&M, 100, 100);
	ck_assert_ptr_null(model_find(&M, 100));
	ck_assert_str_eq(model_comm(&M, 200, 200), "child");
	c = model_find(&M, 300);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->nmaps, 2);
	ck_assert_str_eq(c->maps[0].file->name, "/bin/parent");
	ck_assert_str_eq(c->maps[1].file->name, "/lib/libx.so");
	model_exit(&M, 300, 300);
	ck_assert_uint_eq(M.nprocs, 1);
	ck_assert_uint_eq(M.nmaps, 0);
	check_counts();
}
END_TEST

/* The comm of the forking thread is inherited, not the process's first one. */
START_TEST(test_fork_from_thread)
{
	ck_assert_int_eq(model_set_comm(&M, 300, 300, "main", 0), 0);
	ck_assert_int_eq(model_set_comm(&M, 300, 301, "helper", 0), 0);
	ck_assert_int_eq(model_fork(&M, 400, 300, 400, 301), 0);
	ck_assert_str_eq(model_comm(&M, 400, 400), "helper");
	/* unknown parent thread: the leader thread's name */
	ck_assert_int_eq(model_fork(&M, 401, 300, 401, 399), 0);
	ck_assert_str_eq(model_comm(&M, 401, 401), "main");
	/* unknown parent: created empty */
	ck_assert_int_eq(model_fork(&M, 402, 9999, 402, 9999), 0);
	ck_assert_ptr_nonnull(model_find(&M, 402));
	ck_assert_ptr_null(model_comm(&M, 402, 402));
	ck_assert_ptr_null(model_find(&M, 9999));
	ck_assert_uint_eq(M.nprocs, 4);
	check_counts();
}
END_TEST

/* A fork to a pid the model still has (missed EXIT): the old one is replaced. */
START_TEST(test_fork_reused_pid)
{
	ck_assert_int_eq(add_map(500, 0x1000, 0x1000, 0, "/old", 0), 0);
	ck_assert_int_eq(add_map(500, 0x9000, 0x1000, 0, "/old2", 0), 0);
	ck_assert_int_eq(model_set_comm(&M, 500, 500, "old", 0), 0);
	ck_assert_int_eq(model_set_comm(&M, 1, 1, "init", 0), 0);
	ck_assert_int_eq(add_map(1, 0x2000, 0x1000, 0, "/sbin/init", 0), 0);
	ck_assert_int_eq(model_fork(&M, 500, 1, 500, 1), 0);
	ck_assert_uint_eq(nmaps_of(500), 1);
	check_map(500, 0, 0x2000, 0x1000, 0, "/sbin/init");
	ck_assert_str_eq(model_comm(&M, 500, 500), "init");
	ck_assert_uint_eq(M.nprocs, 2);
	ck_assert_uint_eq(M.nmaps, 2);
	check_counts();
}
END_TEST

/*
 * A process that went is reused for the next one (model.c spares): the
 * new one starts empty (no maps, threads, name, namespaces or JIT flag of
 * the old), and the files the old one mapped are let go.
 */
START_TEST(test_spare_reused_clean)
{
	struct model_proc *p;
	uint32_t i;

	for (i = 0; i < 40; i++) {
		ck_assert_int_eq(model_set_comm(&M, 700 + i, 700 + i, "old", 0), 0);
		ck_assert_int_eq(model_fork(&M, 700 + i, 700 + i, 9700 + i, 700 + i), 0);
		ck_assert_int_eq(add_map(700 + i, 0x1000, 0x1000, 0, "/spare/old", 1), 0);
		ck_assert_int_eq(model_set_ns(&M, 700 + i, 11, 12), 0);
		model_find(&M, 700 + i)->jit = 1;
		model_exit(&M, 700 + i, 9700 + i);
		model_exit(&M, 700 + i, 700 + i);
	}
	ck_assert_uint_eq(M.nprocs, 0);
	ck_assert_uint_eq(M.nmaps, 0);
	ck_assert_uint_eq(M.nfiles, 0);
	for (i = 0; i < 40; i++) {
		ck_assert_int_eq(model_fork(&M, 800 + i, 1, 800 + i, 1), 0);
		ck_assert_ptr_nonnull(p = model_find(&M, 800 + i));
		ck_assert_uint_eq(p->nmaps, 0);
		ck_assert_uint_eq(p->nthreads, 1);
		ck_assert_ptr_null(model_comm(&M, 800 + i, 9700 + i - 100));
		ck_assert_ptr_null(model_comm(&M, 800 + i, 800 + i));
		ck_assert_uint_eq(p->mnt_ns, 0);
		ck_assert_uint_eq(p->user_ns, 0);
		ck_assert_int_eq(p->jit, 0);
		ck_assert_int_eq(p->leader_gone, 0);
		ck_assert_int_eq(add_map(800 + i, 0x2000, 0x1000, 0, "/spare/new", 2), 0);
		check_map(800 + i, 0, 0x2000, 0x1000, 0, "/spare/new");
	}
	ck_assert_uint_eq(M.nfiles, 1);
	/* Replaced with its threads alive (its pid forked again): none stays. */
	ck_assert_int_eq(model_set_comm(&M, 900, 950, "stale", 0), 0);
	ck_assert_int_eq(model_fork(&M, 900, 1, 900, 1), 0);
	ck_assert_ptr_null(model_comm(&M, 900, 950));
	ck_assert_uint_eq(model_find(&M, 900)->nthreads, 1);
	check_counts();
}
END_TEST

START_TEST(test_thread_fork_shares)
{
	struct model_proc *p;

	ck_assert_int_eq(model_set_comm(&M, 600, 600, "server", 0), 0);
	ck_assert_int_eq(add_map(600, 0x1000, 0x1000, 0, "/bin/server", 0), 0);
	ck_assert_int_eq(model_fork(&M, 600, 600, 601, 600), 0);
	ck_assert_int_eq(model_fork(&M, 600, 600, 602, 600), 0);
	ck_assert_uint_eq(M.nprocs, 1);
	ck_assert_uint_eq(M.nmaps, 1);
	p = model_find(&M, 600);
	ck_assert_uint_eq(p->nthreads, 3);
	ck_assert_uint_eq(p->nmaps, 1);
	ck_assert_str_eq(model_comm(&M, 600, 601), "server");
	ck_assert_str_eq(model_comm(&M, 600, 602), "server");
	/* a map added by any thread is the process's */
	ck_assert_int_eq(add_map(600, 0x5000, 0x1000, 0, "/lib/plugin.so", 0), 0);
	ck_assert_uint_eq(nmaps_of(600), 2);
	ck_assert_uint_eq(M.nprocs, 1);
	/* thread names are per thread */
	ck_assert_int_eq(model_set_comm(&M, 600, 601, "io", 0), 0);
	ck_assert_str_eq(model_comm(&M, 600, 601), "io");
	ck_assert_str_eq(model_comm(&M, 600, 600), "server");
	/* a fork from the renamed thread */
	ck_assert_int_eq(model_fork(&M, 600, 600, 603, 601), 0);
	ck_assert_str_eq(model_comm(&M, 600, 603), "io");

	/* thread exit: the thread goes, the process and maps stay */
	model_exit(&M, 600, 601);
	p = model_find(&M, 600);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->nthreads, 3);
	ck_assert_ptr_null(model_comm(&M, 600, 601));
	ck_assert_str_eq(model_comm(&M, 600, 602), "server");
	ck_assert_str_eq(model_comm(&M, 600, 603), "io");
	ck_assert_uint_eq(nmaps_of(600), 2);
	model_exit(&M, 600, 601);		/* twice: no-op */
	ck_assert_uint_eq(model_find(&M, 600)->nthreads, 3);
	/*
	 * The leader exits first (pthread_exit in main): the other threads
	 * still run with the process's maps, so the process stays ...
	 */
	model_exit(&M, 600, 600);
	p = model_find(&M, 600);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->nthreads, 2);
	ck_assert_uint_eq(nmaps_of(600), 2);
	/* ... until its last thread is gone */
	model_exit(&M, 600, 602);
	ck_assert_ptr_nonnull(model_find(&M, 600));
	model_exit(&M, 600, 603);
	ck_assert_ptr_null(model_find(&M, 600));
	ck_assert_uint_eq(M.nprocs, 0);
	ck_assert_uint_eq(M.nmaps, 0);
	check_counts();
}
END_TEST

static int
collect_pids(struct model_proc *p, void *arg)
{
	uint8_t	*seen = arg;

	ck_assert_uint_lt(p->pid, 20000);
	ck_assert_uint_eq(seen[p->pid], 0);	/* once only */
	seen[p->pid] = 1;
	return 0;
}

static int
stop_at_third(struct model_proc *p, void *arg)
{
	int	*n = arg;

	return ++*n == 3 ? 42 : 0;
}

START_TEST(test_foreach)
{
	static uint8_t seen[20000];
	uint32_t pid;
	int	 n = 0;

	/* 719 processes: the table doubles several times */
	for (pid = 1; pid <= 5000; pid += 7)
		ck_assert_int_eq(model_set_comm(&M, pid, pid, "p", 0), 0);
	for (pid = 4098; pid < 20000; pid += 4096)
		ck_assert_int_eq(model_set_comm(&M, pid, pid, "q", 0), 0);
	memset(seen, 0, sizeof(seen));
	ck_assert_int_eq(model_foreach(&M, collect_pids, seen), 0);
	for (pid = 1; pid <= 5000; pid += 7)
		ck_assert_uint_eq(seen[pid], 1);
	for (pid = 4098; pid < 20000; pid += 4096)
		ck_assert_uint_eq(seen[pid], 1);
	ck_assert_uint_eq(M.nprocs, 715 + 4);
	check_counts();
	/* a non-zero return stops the walk and is returned */
	ck_assert_int_eq(model_foreach(&M, stop_at_third, &n), 42);
	ck_assert_int_eq(n, 3);
}
END_TEST

/* Deleting inside foreach (the callback may exit the process it is given). */
static int
exit_each(struct model_proc *p, void *arg)
{
	model_exit(arg, p->pid, p->pid);
	return 0;
}

START_TEST(test_foreach_exit)
{
	uint32_t pid;

	for (pid = 1; pid <= 300; pid++) {
		ck_assert_int_eq(add_map(pid, 0x1000, 0x1000, 0, "/x", 0), 0);
		ck_assert_int_eq(add_map(pid + 4096, 0x1000, 0x1000, 0, "/y", 0), 0);
	}
	ck_assert_uint_eq(M.nprocs, 600);
	ck_assert_int_eq(model_foreach(&M, exit_each, &M), 0);
	ck_assert_uint_eq(M.nprocs, 0);
	ck_assert_uint_eq(M.nmaps, 0);
	check_counts();
}
END_TEST

/*
 * Every other process exited inside a walk (their slots kept as tombs so
 * the walk sees each slot once): each one visited once, the others all
 * found after it, the tombs gone with the walk.
 */
static int
exit_odd(struct model_proc *p, void *arg)
{
	uint8_t	*seen = arg;

	ck_assert_uint_eq(seen[p->pid]++, 0);
	if (p->pid & 1)
		model_exit(&M, p->pid, p->pid);
	return 0;
}

START_TEST(test_foreach_exit_some)
{
	static uint8_t seen[4001];
	uint32_t pid;

	for (pid = 1; pid <= 4000; pid++)
		ck_assert_int_eq(add_map(pid, 0x1000, 0x1000, 0, "/x", 0), 0);
	ck_assert_int_eq(model_foreach(&M, exit_odd, seen), 0);
	ck_assert_uint_eq(M.nprocs, 2000);
	ck_assert_uint_eq(M.ntombs, 0);
	for (pid = 1; pid <= 4000; pid++) {
		ck_assert_uint_eq(seen[pid], 1);
		if (pid & 1)
			ck_assert_ptr_null(model_find(&M, pid));
		else
			ck_assert_ptr_nonnull(model_find(&M, pid));
	}
	check_counts();
	for (pid = 2; pid <= 4000; pid += 2)
		model_exit(&M, pid, pid);
	ck_assert_uint_eq(M.nprocs, 0);
	check_counts();
}
END_TEST

/* 10000 processes with threads and maps created and exited: nothing left. */
START_TEST(test_churn)
{
	uint32_t i;

	ck_assert_int_eq(model_set_comm(&M, 1, 1, "init", 0), 0);
	ck_assert_int_eq(add_map(1, 0x400000, 0x10000, 0, "/sbin/init", 1), 0);
	ck_assert_int_eq(add_map(1, 0x7f0000000000ULL, 0x200000, 0, "/lib/libc.so.6", 2), 0);
	for (i = 0; i < 10000; i++) {
		uint32_t pid = 1000 + i;

		ck_assert_int_eq(model_fork(&M, pid, 1, pid, 1), 0);
		ck_assert_int_eq(model_fork(&M, pid, pid, pid + 100000, pid), 0);
		ck_assert_int_eq(model_set_comm(&M, pid, pid, "job", 1), 0);
		ck_assert_int_eq(add_map(pid, 0x500000, 0x8000, 0, "/usr/bin/job", 3), 0);
		ck_assert_int_eq(add_map(pid, 0x502000, 0x1000, 0, "/anon", 0), 0);	/* split */
		ck_assert_uint_eq(nmaps_of(pid), 3);
		if (i % 2 == 0) {
			model_exit(&M, pid, pid + 100000);
			model_exit(&M, pid, pid);
		}
	}
	ck_assert_uint_eq(M.nprocs, 1 + 5000);
	ck_assert_uint_eq(M.nmaps, 2 + 5000 * 3);
	check_counts();
	for (i = 1; i < 10000; i += 2)
		model_exit(&M, 1000 + i, 1000 + i);
	model_exit(&M, 1, 1);
	ck_assert_uint_eq(M.nprocs, 0);
	ck_assert_uint_eq(M.nmaps, 0);
	check_counts();
}
END_TEST

/*
 * Each binary's count of maps, exact through a binary named after the
 * map was added (the recorder's lookup), a fork, a split, an exec and
 * exits: lookup's "mapped now" (cmd-lookup.c).  A count that could not be
 * kept (out of memory) makes every binary's unknown (-1), never "not
 * mapped", until a recount.  Before: a walk of the maps, once a second,
 * stood only for binaries none of whose maps was let go since.
 */
START_TEST(test_bin_counts)
{
	struct model_proc *p;

	ck_assert_int_eq(model_set_comm(&M, 10, 10, "sh", 0), 0);
	ck_assert_int_eq(add_map(10, 0x400000, 0x10000, 0, "/bin/sh", 1), 0);
	ck_assert_int_eq(add_map(10, 0x7f0000000000ULL, 0x200000, 0, "/lib/libc.so.6", 0), 0);
	ck_assert_int_eq(model_bin_mapped(&M, 2), 0);
	p = model_find(&M, 10);
	model_map_set_bin(&M, &p->maps[1], 2);		/* libc named binary 2 */
	ck_assert_int_eq(model_bin_mapped(&M, 2), 1);
	check_counts();
	ck_assert_int_eq(model_fork(&M, 11, 10, 11, 10), 0);
	ck_assert_int_eq(add_map(11, 0x7f0000100000ULL, 0x1000, 0, "//anon", 0), 0);	/* split */
	check_counts();
	ck_assert_uint_eq(M.bin_maps[2], 3);
	ck_assert_int_eq(model_set_comm(&M, 11, 11, "true", 1), 0);	/* exec */
	check_counts();
	ck_assert_uint_eq(M.bin_maps[2], 1);
	model_exit(&M, 10, 10);
	check_counts();
	ck_assert_int_eq(model_bin_mapped(&M, 1), 0);
	ck_assert_int_eq(model_bin_mapped(&M, 2), 0);
	/* a count not kept: unknown for all, until a recount */
	ck_assert_int_eq(add_map(11, 0x400000, 0x10000, 0, "/bin/true", 3), 0);
	ck_assert_int_eq(add_map(11, 0x600000, 0x10000, 0, "/bin/true", 3), 0);
	p = model_find(&M, 11);
	ck_assert_uint_gt(p->cmaps, p->nmaps);	/* no room wanted: the next realloc is the count's */
	check_fail_reallocs = 1;
	model_map_set_bin(&M, &p->maps[0], 200);
	check_fail_reallocs = 0;
	ck_assert_int_eq(model_bin_mapped(&M, 3), -1);
	ck_assert_int_eq(model_bin_mapped(&M, 2), -1);
	ck_assert_int_eq(model_bin_recount(&M), 0);
	ck_assert_int_eq(model_bin_mapped(&M, 200), 1);
	ck_assert_int_eq(model_bin_mapped(&M, 3), 1);
	check_counts();
	model_exit(&M, 11, 11);
	ck_assert_int_eq(model_bin_mapped(&M, 200), 0);
	check_counts();
}
END_TEST

/* Anonymous executable memory of PID at ADDR, one page (JIT code, or a user's churn). */
static int
add_anon(uint32_t pid, uint64_t addr)
{
	struct record_mmap r;

	memset(&r, 0, sizeof(r));
	r.pid = r.tid = pid;
	r.addr = addr;
	r.len = 4096;
	r.prot = 5;
	r.flags = 0x22;		/* MAP_PRIVATE | MAP_ANONYMOUS */
	r.filename = "//anon";
	return model_add_map(&M, &r, BID_NONE, -1);
}

/*
 * A user's process maps and unmaps 9,000 pages at new addresses (all
 * stale in the model: perf has no munmap) and forks five children, each
 * a copy: past the model's budget (20,000 here) the process with the most
 * maps is shed, and a small process's maps stay.  Before, nothing bounded
 * the model but the per-process cap: K children held K times 65,000 maps.
 */
START_TEST(test_maps_budget)
{
	uint32_t i;

	M.maps_global_max = 20000;
	ck_assert_int_eq(model_set_comm(&M, 1, 1, "init", 0), 0);
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(add_map(1, 0x400000 + (uint64_t)i * 0x10000, 0x1000, 0,
		    "/sbin/init", 1), 0);
	ck_assert_int_eq(model_set_comm(&M, 2, 2, "churn", 0), 0);
	ck_assert_int_eq(add_map(2, 0x500000, 0x1000, 0, "/usr/bin/churn", 2), 0);
	for (i = 0; i < 9000; i++)
		ck_assert_int_eq(add_anon(2, 0x7f0000000000ULL + (uint64_t)i * 0x2000), 0);
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(model_fork(&M, 100 + i, 2, 100 + i, 2), 0);
		ck_assert_uint_le(M.nmaps, M.maps_global_max);
	}
	ck_assert_uint_gt(M.maps_shed_global, 0);
	ck_assert_uint_eq(nmaps_of(1), 10);		/* the small process: untouched */
	ck_assert_uint_ge(nmaps_of(104), 1);		/* a child keeps its binary */
	check_counts();
}
END_TEST

/*
 * The names' bytes are bounded too: a user's process mapping a file under
 * a 4,000-byte path at 60,000 addresses (perf has no munmap record), then
 * forking, held 4M maps under the count's budget, 17 GB of every start
 * state (found by a review).  Past name_bytes_max, the process whose
 * names weigh most is shed until they are under 7/8 of it; the small
 * process with short names is untouched.
 */
START_TEST(test_name_bytes_budget)
{
	char	*name;
	uint32_t i;

	ck_assert_uint_eq(M.name_bytes_max, MODEL_NAME_BYTES_MAX);
	M.name_bytes_max = 64 << 20;
	ck_assert_ptr_nonnull(name = malloc(4001));
	memset(name, 'd', 4000);
	name[0] = '/';
	name[4000] = '\0';
	ck_assert_int_eq(model_set_comm(&M, 1, 1, "init", 0), 0);
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(add_map(1, 0x400000 + (uint64_t)i * 0x10000, 0x1000, 0,
		    "/sbin/init", 1), 0);
	ck_assert_int_eq(model_set_comm(&M, 2, 2, "long", 0), 0);
	for (i = 0; i < 6000; i++)
		ck_assert_int_eq(add_map(2, 0x10000000ULL + (uint64_t)i * 0x2000, 0x1000, 0,
		    name, 2), 0);
	ck_assert_uint_lt(M.name_bytes, M.name_bytes_max);	/* 24 MB */
	for (i = 0; i < 8; i++) {
		ck_assert_int_eq(model_fork(&M, 100 + i, 2, 100 + i, 2), 0);
		ck_assert_uint_le(M.name_bytes, M.name_bytes_max);
	}
	ck_assert_uint_gt(M.maps_shed_global, 0);
	ck_assert_uint_eq(nmaps_of(1), 10);		/* the small process: untouched */
	check_counts();
	free(name);
}
END_TEST

/*
 * perf has no munmap record: a process that maps and unmaps executable
 * memory at ever new addresses (a user's loop of mmap and munmap) grew
 * its list for ever, 48 bytes a map, each insert moving every map above
 * it.  A process has at most vm.max_map_count maps: past that the model
 * sheds its anonymous maps, and keeps its binary's; a churn of a file's
 * maps sheds them all.
 */
START_TEST(test_maps_shed)
{
	struct model_proc *p;
	uint64_t i;

	ck_assert_uint_eq(M.maps_max, MODEL_MAPS_MAX);
	ck_assert_int_eq(add_map(7, 0x400000, 0x10000, 0, "/usr/bin/jit", 1), 0);
	{
		/* a library as the kernel's build-id records give it: no inode */
		struct record_mmap r;

		memset(&r, 0, sizeof(r));
		r.pid = r.tid = 7;
		r.addr = 0x500000;
		r.len = 0x10000;
		r.prot = 5;
		r.flags = 2;
		r.build_id_size = 20;
		memset(r.build_id, 9, 20);
		r.filename = "/usr/lib/libjit.so";
		ck_assert_int_eq(model_add_map(&M, &r, BID_MMAP2, -1), 0);
	}
	for (i = 0; i < 100000; i++)
		ck_assert_int_eq(add_anon(7, 0x10000000ULL + i * 8192), 0);
	ck_assert_uint_le(nmaps_of(7), MODEL_MAPS_MAX);
	ck_assert_uint_ge(M.maps_shed, 1);
	p = model_find(&M, 7);
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p->maps[0].file->name, "/usr/bin/jit");	/* the binary stays */
	ck_assert_str_eq(p->maps[1].file->name, "/usr/lib/libjit.so");	/* and its library */
	/* the newest anonymous map is there: only older ones went */
	ck_assert_uint_eq(p->maps[p->nmaps - 1].addr, 0x10000000ULL + 99999 * 8192);
	check_counts();
	/* the same churn with a file's maps */
	for (i = 0; i < 100000; i++)
		ck_assert_int_eq(add_map(8, 0x10000000ULL + i * 8192, 4096, 0, "/tmp/lib", 2), 0);
	ck_assert_uint_le(nmaps_of(8), MODEL_MAPS_MAX);
	ck_assert_uint_ge(M.maps_shed, 2);
	ck_assert_uint_le(M.nmaps, 2 * MODEL_MAPS_MAX);
	check_counts();
	model_exit(&M, 7, 7);
	model_exit(&M, 8, 8);
	ck_assert_uint_eq(M.nmaps, 0);
	check_counts();
}
END_TEST

/*
 * Many overlapping maps in one process against a page-by-page oracle:
 * the binary searches, the punch that drops a run of maps at once, splits
 * and trims leave exactly what the last mapping of each page says.
 */
#define ORACLE_PAGES	2048
START_TEST(test_many_maps_oracle)
{
	static int16_t file[ORACLE_PAGES];	/* -1: unmapped */
	static uint32_t pgoff[ORACLE_PAGES];
	struct model_proc *p;
	char	 name[32];
	uint32_t seed = 12345, step;
	size_t	 i, pg, covered;

	for (i = 0; i < ORACLE_PAGES; i++)
		file[i] = -1;
	for (step = 0; step < 3000; step++) {
		uint32_t start, len, f, off;

		seed = seed * 1103515245u + 12345u;
		start = (seed >> 8) % ORACLE_PAGES;
		seed = seed * 1103515245u + 12345u;
		len = 1 + (seed >> 8) % (step % 10 == 0 ? 300 : 12);
		if (start + len > ORACLE_PAGES)
			len = ORACLE_PAGES - start;
		f = step % 37;
		off = step;
		snprintf(name, sizeof(name), "/lib/f%u.so", f);
		ck_assert_int_eq(add_map(7, (uint64_t)start << 12, (uint64_t)len << 12,
		    (uint64_t)off << 12, name, (uint8_t)(f % 5)), 0);
		for (i = 0; i < len; i++) {
			file[start + i] = (int16_t)f;
			pgoff[start + i] = off + (uint32_t)i;
		}
		if (step % 100 != 99)
			continue;
		p = model_find(&M, 7);
		ck_assert_ptr_nonnull(p);
		covered = 0;
		for (i = 0; i < p->nmaps; i++) {
			struct model_map *mm = &p->maps[i];

			if (i > 0)
				ck_assert_uint_le(p->maps[i - 1].addr + p->maps[i - 1].len, mm->addr);
			for (pg = mm->addr >> 12; pg < (mm->addr + mm->len) >> 12; pg++) {
				snprintf(name, sizeof(name), "/lib/f%d.so", file[pg]);
				ck_assert_int_ge(file[pg], 0);
				ck_assert_str_eq(mm->file->name, name);
				ck_assert_uint_eq(mm->pgoff + ((pg << 12) - mm->addr),
				    (uint64_t)pgoff[pg] << 12);
				covered++;
			}
		}
		for (pg = 0; pg < ORACLE_PAGES; pg++)
			if (file[pg] >= 0)
				covered--;
		ck_assert_uint_eq(covered, 0);
		check_counts();
	}
	/* 37 names, each once however many maps name it */
	ck_assert_uint_le(M.nfiles, 37);
}
END_TEST

/* A process of thousands of threads: found, named and removed in any order. */
START_TEST(test_many_threads)
{
	struct model_proc *p;
	struct model_thread *t = NULL;
	char	 comm[16];
	uint32_t tid;
	size_t	 n = 0;

	for (tid = 1000; tid < 6000; tid++) {
		snprintf(comm, sizeof(comm), "t%u", tid);
		ck_assert_int_eq(model_fork(&M, 1000, 1000, tid, 1000), 0);
		ck_assert_int_eq(model_set_comm(&M, 1000, tid, comm, 0), 0);
	}
	p = model_find(&M, 1000);
	ck_assert_uint_eq(p->nthreads, 5000);
	ck_assert_uint_ge(p->cthreads * 3, p->nthreads * 4);
	/* two of three exit, in an order unrelated to the table's */
	for (tid = 5999; tid >= 1000; tid--)
		if (tid % 3 != 0 && tid != 1000)
			model_exit(&M, 1000, tid);
	for (tid = 1000; tid < 6000; tid++) {
		snprintf(comm, sizeof(comm), "t%u", tid);
		if (tid % 3 != 0 && tid != 1000)
			ck_assert_ptr_null(model_comm(&M, 1000, tid));
		else
			ck_assert_str_eq(model_comm(&M, 1000, tid), comm);
	}
	while ((t = model_thread_next(p, t)) != NULL)
		n++;
	ck_assert_uint_eq(n, p->nthreads);
	ck_assert_uint_eq(p->nthreads, 1 + 1666);
	/* the rest go, the leader last: the process with them */
	for (tid = 1001; tid < 6000; tid++)
		model_exit(&M, 1000, tid);
	ck_assert_uint_eq(model_find(&M, 1000)->nthreads, 1);
	model_exit(&M, 1000, 1000);
	ck_assert_ptr_null(model_find(&M, 1000));
}
END_TEST

/*
 * A big host: 50k processes forked from one with three maps.  The tables
 * grow (every process a few slots from its home), the three files
 * are held once, a build-id set on one map is that map's alone, and the
 * files go with the last map.
 */
START_TEST(test_big_host)
{
	static const uint8_t id[20] = { 0xab, 0xcd };
	struct model_proc *p;
	uint32_t pid;
	size_t	 i, dist, total = 0;

	ck_assert_int_eq(model_set_comm(&M, 1, 1, "init", 0), 0);
	ck_assert_int_eq(add_map(1, 0x400000, 0x10000, 0, "/sbin/init", 1), 0);
	ck_assert_int_eq(add_map(1, 0x7f0000000000ULL, 0x200000, 0, "/lib/libc.so.6", 0), 0);
	ck_assert_int_eq(add_map(1, 0x7f0000400000ULL, 0x1000, 0, "/lib/ld.so", 3), 0);
	for (pid = 2; pid <= 50000; pid++)
		ck_assert_int_eq(model_fork(&M, pid, 1, pid, 1), 0);
	ck_assert_uint_eq(M.nprocs, 50000);
	ck_assert_uint_eq(M.nmaps, 150000);
	ck_assert_uint_eq(M.nfiles, 3);
	ck_assert_uint_ge(M.nslots, 2 * M.nprocs);
	for (pid = 1; pid <= 50000; pid++) {
		ck_assert_ptr_nonnull(p = model_find(&M, pid));
		ck_assert_uint_eq(p->nmaps, 3);
	}
	/* each process a few slots from its home at most, one on average */
	for (i = 0; i < M.nslots; i++) {
		size_t	 home;

		if ((p = M.slots[i].p) == NULL)
			continue;
		ck_assert_uint_eq(M.slots[i].pid, p->pid);
		home = (size_t)hash_step(HASH_INIT, p->pid) & (M.nslots - 1);
		dist = (i - home) & (M.nslots - 1);
		ck_assert_uint_lt(dist, 64);
		total += dist;
	}
	ck_assert_uint_lt(total, M.nprocs);
	ck_assert_ptr_null(model_find(&M, 50001));
	ck_assert_int_eq(model_set_map_buildid(&M, 777, 0x7f0000000000ULL, id, 20, 0, BID_USER), 0);
	ck_assert_uint_eq(M.nfiles, 4);
	p = model_find(&M, 777);
	ck_assert_uint_eq(p->maps[1].file->build_id_size, 20);
	ck_assert_mem_eq(p->maps[1].file->build_id, id, 20);
	ck_assert_uint_eq(p->maps[1].source, BID_USER);
	ck_assert_uint_eq(model_find(&M, 778)->maps[1].file->build_id_size, 0);
	ck_assert_ptr_eq(model_find(&M, 778)->maps[1].file, model_find(&M, 1)->maps[1].file);
	check_counts();
	for (pid = 50000; pid >= 1; pid--)
		model_exit(&M, pid, pid);
	ck_assert_uint_eq(M.nprocs, 0);
	ck_assert_uint_eq(M.nmaps, 0);
	ck_assert_uint_eq(M.nfiles, 0);
}
END_TEST

/*
 * A file whose last map went stays findable as one of the FILES_IDLE last
 * to go (an exec storm's binary between two runs): the same entry, with
 * what the recorder cached in it, comes back; FILES_IDLE others going
 * after it free it.  Not counted in nfiles while idle.
 */
START_TEST(test_idle_files)
{
	struct model_file *f;
	char	 name[32];
	uint32_t pid;

	ck_assert_int_eq(add_map(1, 0x1000, 0x1000, 0, "/bin/a", 7), 0);
	f = model_find(&M, 1)->maps[0].file;
	f->bin = 42;
	model_exit(&M, 1, 1);
	ck_assert_uint_eq(M.nfiles, 0);
	ck_assert_int_eq(add_map(2, 0x1000, 0x1000, 0, "/bin/a", 7), 0);
	ck_assert_ptr_eq(model_find(&M, 2)->maps[0].file, f);
	ck_assert_uint_eq(f->bin, 42);
	ck_assert_uint_eq(M.nfiles, 1);
	check_counts();
	model_exit(&M, 2, 2);
	/* idle twice without being freed or listed twice */
	ck_assert_int_eq(add_map(3, 0x1000, 0x1000, 0, "/bin/a", 7), 0);
	model_exit(&M, 3, 3);
	for (pid = 10; pid < 10 + 2 * FILES_IDLE; pid++) {
		snprintf(name, sizeof(name), "/bin/other%u", pid);
		ck_assert_int_eq(add_map(pid, 0x1000, 0x1000, 0, name, 9), 0);
		model_exit(&M, pid, pid);
	}
	ck_assert_uint_eq(M.nfiles, 0);
	ck_assert_int_eq(add_map(4, 0x1000, 0x1000, 0, "/bin/a", 7), 0);
	ck_assert_uint_eq(model_find(&M, 4)->maps[0].file->bin, UINT32_MAX);
	ck_assert_uint_eq(M.nfiles, 1);
	check_counts();
}
END_TEST

/*
 * What the recorder checks before it trusts the binary a file remembers
 * (recorder_file_binary): binaries_match says yes exactly where
 * binaries_get_ns would give the entry, and no to a pruned entry or to
 * the entry its reused id names now.
 */
static int
keep_none_cb(const struct binary *b, void *arg)
{
	return 0;
}

static int
keep_x_cb(const struct binary *b, void *arg)
{
	return b == arg;
}

static int
keep_ns_cb(const struct binary *b, void *arg)
{
	return b->ns != 0;
}

START_TEST(test_binary_match)
{
	static const uint8_t a[20] = { 1 }, b[20] = { 2 };
	struct binaries bins;
	struct binary *e, *e2;
	uint32_t id;

	ck_assert_int_eq(binaries_init(&bins), 0);
	ck_assert_ptr_nonnull(e = binaries_get_ns(&bins, "/bin/x", 1, a, 20, 7, NULL));
	id = e->id;
	ck_assert_int_eq(binaries_match(e, "/bin/x", 1, a, 20, 7), 1);
	ck_assert_int_eq(binaries_match(e, "/bin/x (deleted)", 1, a, 20, 7), 1);
	ck_assert_int_eq(binaries_match(e, "/bin/x", 1, a, 20, 0), 0);
	ck_assert_int_eq(binaries_match(e, "/bin/x", 1, b, 20, 7), 0);
	ck_assert_int_eq(binaries_match(e, "/bin/x", 1, a, 19, 7), 0);
	ck_assert_int_eq(binaries_match(e, "/bin/xy", 1, a, 20, 7), 0);
	ck_assert_int_eq(binaries_match(e, "/bin/", 1, a, 20, 7), 0);
	/*
	 * A " (deleted)" not proven the kernel's mark is part of the name: a
	 * file the user named "/bin/x (deleted)" is not /bin/x.
	 */
	ck_assert_int_eq(binaries_match(e, "/bin/x (deleted)", 0, a, 20, 7), 0);
	ck_assert_ptr_nonnull(e2 = binaries_get_ns(&bins, "/bin/x (deleted)", 0, a, 20, 7, NULL));
	ck_assert_ptr_ne(e2, e);
	ck_assert_str_eq(e2->path, "/bin/x (deleted)");
	ck_assert_ptr_eq(binaries_get_ns(&bins, "/bin/x (deleted)", 1, a, 20, 7, NULL), e);
	ck_assert_str_eq(e->path, "/bin/x");
	ck_assert_uint_eq(binaries_prune(&bins, keep_x_cb, NULL, e), 1);
	ck_assert_uint_eq(binaries_prune(&bins, keep_none_cb, NULL, NULL), 1);
	ck_assert_int_eq(binaries_match(binaries_at(&bins, id), "/bin/x", 1, a, 20, 7), 0);
	/* the id handed out again, to another path with the same build-id */
	ck_assert_ptr_nonnull(e2 = binaries_get_ns(&bins, "/bin/y", 1, a, 20, 7, NULL));
	ck_assert_uint_eq(e2->id, id);
	ck_assert_int_eq(binaries_match(binaries_at(&bins, id), "/bin/x", 1, a, 20, 7), 0);
	ck_assert_int_eq(binaries_match(e2, "/bin/y", 1, a, 20, 7), 1);
	binaries_free(&bins);
}
END_TEST

/*
 * The entries of a path, found by its hash (a lookup on the loop): every
 * provenance and version, each once; none of another path; "more" past
 * MAX or past WALK_MAX slots; the same after a prune.
 */
START_TEST(test_binaries_by_path)
{
	struct binaries bins;
	struct binary *e;
	uint8_t	 id[20] = { 0 };
	uint32_t ids[8];
	char	 name[64];
	int	 i;

	ck_assert_int_eq(binaries_init(&bins), 0);
	for (i = 0; i < 3000; i++) {		/* other paths: a bigger table than one walk */
		snprintf(name, sizeof(name), "/other/%d", i);
		id[0] = (uint8_t)i;
		ck_assert_ptr_nonnull(binaries_get_ns(&bins, name, 0, id, 20, 0, NULL));
	}
	for (i = 0; i < 5; i++) {
		id[1] = (uint8_t)(i + 1);
		ck_assert_ptr_nonnull(e = binaries_get_ns(&bins, "/bin/x", 0, id, 20,
		    i < 3 ? 0 : 100 + (uint64_t)i, NULL));
	}
	ck_assert_uint_eq(binaries_by_path(&bins, "/bin/x", ids, 8, 64), 5);
	for (i = 0; i < 5; i++) {
		e = binaries_at(&bins, ids[i]);
		ck_assert_str_eq(e->path, "/bin/x");
	}
	ck_assert_uint_eq(binaries_by_path(&bins, "/bin/y", ids, 8, 64), 0);
	ck_assert_uint_eq(binaries_by_path(&bins, "/bin/x", ids, 4, 64), SIZE_MAX);
	ck_assert_uint_eq(binaries_by_path(&bins, "/bin/x", ids, 8, 2), SIZE_MAX);
	/* pruned: the two kept are found, the others not */
	ck_assert_uint_eq(binaries_prune(&bins, keep_ns_cb, NULL, NULL), 3000 + 3);
	ck_assert_uint_eq(binaries_by_path(&bins, "/bin/x", ids, 8, 64), 2);
	ck_assert_uint_ne(binaries_at(&bins, ids[0])->ns, 0);
	binaries_free(&bins);
}
END_TEST

static Suite *
model_suite(void)
{
	Suite	*s = suite_create("model");
	TCase	*tc;

	tc = tcase_create("maps");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_add_sorted);
	tcase_add_test(tc, test_set_buildid);
	tcase_add_test(tc, test_overlap_split);
	tcase_add_test(tc, test_overlap_trim);
	tcase_add_test(tc, test_overlap_replace);
	suite_add_tcase(s, tc);

	tc = tcase_create("tasks");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_comm);
	tcase_add_test(tc, test_exec_drops_maps);
	tcase_add_test(tc, test_fork_copies);
	tcase_add_test(tc, test_fork_from_thread);
	tcase_add_test(tc, test_fork_reused_pid);
	tcase_add_test(tc, test_spare_reused_clean);
	tcase_add_test(tc, test_thread_fork_shares);
	suite_add_tcase(s, tc);

	tc = tcase_create("all");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);	/* valgrind */
	tcase_add_test(tc, test_foreach);
	tcase_add_test(tc, test_foreach_exit);
	tcase_add_test(tc, test_foreach_exit_some);
	tcase_add_test(tc, test_churn);
	tcase_add_test(tc, test_bin_counts);
	tcase_add_test(tc, test_maps_budget);
	tcase_add_test(tc, test_name_bytes_budget);
	tcase_add_test(tc, test_many_maps_oracle);
	tcase_add_test(tc, test_many_threads);
	tcase_add_test(tc, test_big_host);
	tcase_add_test(tc, test_binary_match);
	tcase_add_test(tc, test_binaries_by_path);
	tcase_add_test(tc, test_idle_files);
	tcase_add_test(tc, test_maps_shed);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(model_suite)
