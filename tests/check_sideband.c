/*
 * check_sideband.c - the side-band's two looks (sideband.c) over fake
 * rings: a recorder built by hand around them (no segment open: what is
 * written is counted, not kept), the resolver's real workers reading a
 * copy of a system binary by name (rule 2: the mapping's pid is gone),
 * and the pins that copy brings (root-owned, on the root's file system).
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <linux/magic.h>

#include <check.h>

#include "check_main.h"
#include "check_tmpfs.h"

#include "config.h"
#include "index_reader.h"
#include "procfs.h"
#include "hostinfo.h"
#include "perfdata.h"
#include "record/kernel.h"
#include "record/recorder.h"
#include "record/wallclock.h"
#include "walltime.h"

#define RINGSZ	65536u
#define DEADPID	0x3ffffff0u		/* no such process: rule 2 (by name) */

struct harness {
	struct recorder *r;
	struct config	 conf;
	struct perf_event_attr attr;
	char		 dir[64], path[128], path2[128];
	struct stat	 st, st2;
};

/*
 * A directory where a root-owned file can be pinned (resolver.h): on the
 * root's or /usr's file system, ext4 or XFS.  NULL if none of the usual
 * ones is (/tmp may be tmpfs).
 */
static const char *
pin_dir(void)
{
	static const char *const dirs[] = { "/var/tmp", "/tmp", "/root" };
	struct statfs sf;
	struct stat d, root, usr;
	size_t	 i;

	if (geteuid() != 0 || stat("/", &root) == -1 || stat("/usr", &usr) == -1)
		return NULL;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (stat(dirs[i], &d) == 0 && (d.st_dev == root.st_dev || d.st_dev == usr.st_dev) &&
		    statfs(dirs[i], &sf) == 0 && ((unsigned long)sf.f_type == EXT4_SUPER_MAGIC ||
		    (unsigned long)sf.f_type == XFS_SUPER_MAGIC))
			return dirs[i];
	return NULL;
}

/* A root-owned copy of /usr/bin/true where it can be pinned, fine ctime. */
static void
make_file(struct harness *h)
{
	char	 cmd[512];

	ck_assert_ptr_nonnull(pin_dir());
	snprintf(h->dir, sizeof(h->dir), "%s/check_sideband.XXXXXX", pin_dir());
	ck_assert_ptr_nonnull(mkdtemp(h->dir));
	chmod(h->dir, 0755);
	snprintf(h->path, sizeof(h->path), "%s/true", h->dir);
	snprintf(cmd, sizeof(cmd), "cp /usr/bin/true %s && chmod 755 %s", h->path, h->path);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(stat(h->path, &h->st), 0);
	/* Another file: never pinned before its own read. */
	snprintf(h->path2, sizeof(h->path2), "%s/true2", h->dir);
	snprintf(cmd, sizeof(cmd), "cp /usr/bin/true %s && chmod 755 %s", h->path2, h->path2);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(stat(h->path2, &h->st2), 0);
	usleep(50 * 1000);	/* changed before the mappings, by the ctime margin */
}

static void
setup(struct harness *h, int ncpus)
{
	struct recorder *r;
	char	 err[256];
	int	 i;

	memset(h, 0, sizeof(*h));
	make_file(h);
	r = h->r = calloc(1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	r->conf = &h->conf;
	h->attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	h->attr.sample_id_all = 1;
	record_layout_init(&r->ev.sb_layout, &h->attr);
	record_clock_init(&r->ev.sb_clock, &r->ev.sb_layout);
	r->ev.ncpus = ncpus;
	r->ev.sb_ring_size = RINGSZ;
	r->ev.cpus = calloc((size_t)ncpus, sizeof(*r->ev.cpus));
	ck_assert_ptr_nonnull(r->ev.cpus);
	for (i = 0; i < ncpus; i++) {
		struct perf_event_mmap_page *meta = calloc(1, sizeof(*meta));
		void	*data = calloc(1, RINGSZ);

		ck_assert_int_eq(ring_init(&r->ev.cpus[i].sb_ring, meta, data, RINGSZ), 0);
	}
	ck_assert_int_eq(model_init(&r->model), 0);
	r->bins = calloc(1, sizeof(*r->bins));
	ck_assert_int_eq(binaries_init(r->bins), 0);
	ck_assert_int_eq(sideband_init(r, err, sizeof(err)), 0);
}

/* M, an MMAP2 by PID stamped T, at the head of ring CPU (published): its position. */
static uint64_t
put_record(struct harness *h, int cpu, const struct record_mmap *m, uint32_t pid, uint64_t t)
{
	struct ring *g = &h->r->ev.cpus[cpu].sb_ring;
	struct record_sample_id sid;
	uint8_t	 buf[PATH_MAX + 512];
	uint64_t head = g->meta->data_head;
	size_t	 n, i;

	memset(&sid, 0, sizeof(sid));
	sid.pid = sid.tid = pid;
	sid.time = t;
	n = record_build_mmap2_plain(buf, m, 0, &h->r->ev.sb_layout, &sid);
	ck_assert_uint_le(head + n - g->meta->data_tail, RINGSZ);
	for (i = 0; i < n; i++)
		g->data[(head + i) & (RINGSZ - 1)] = buf[i];
	__atomic_store_n(&g->meta->data_head, head + n, __ATOMIC_RELEASE);
	return head;
}

/* An MMAP2 of the file by PID at ADDR, stamped T, at the head of ring CPU (published). */
static uint64_t
put_file_pid(struct harness *h, int cpu, int file, uint64_t addr, uint64_t t, uint32_t pid)
{
	const struct stat *st = file == 0 ? &h->st : &h->st2;
	struct record_mmap m;

	memset(&m, 0, sizeof(m));
	m.pid = m.tid = pid;
	m.addr = addr;
	m.len = 4096;
	m.has_inode = 1;
	m.maj = major(st->st_dev);
	m.min = minor(st->st_dev);
	m.ino = st->st_ino;
	m.prot = PROT_READ | PROT_EXEC;
	m.flags = MAP_PRIVATE;
	m.filename = file == 0 ? h->path : h->path2;
	return put_record(h, cpu, &m, pid, t);
}

/* An MMAP2 of anonymous executable memory (JIT code) by PID at ADDR, stamped T, in ring 0. */
static void
put_jit(struct harness *h, uint32_t pid, uint64_t addr, uint64_t t)
{
	struct record_mmap m;

	memset(&m, 0, sizeof(m));
	m.pid = m.tid = pid;
	m.addr = addr;
	m.len = 4096;
	m.prot = PROT_READ | PROT_EXEC;
	m.flags = MAP_PRIVATE | MAP_ANONYMOUS;
	m.filename = "//anon";
	put_record(h, 0, &m, pid, t);
}

/* The same by DEADPID. */
static uint64_t
put_file(struct harness *h, int cpu, int file, uint64_t addr, uint64_t t)
{
	return put_file_pid(h, cpu, file, addr, t, DEADPID);
}

static uint64_t
put_mmap(struct harness *h, int cpu, uint64_t addr, uint64_t t)
{
	return put_file(h, cpu, 0, addr, t);
}

/* Drain until nothing waits (a read answered or given up each time). */
static void
drain_all(struct recorder *r, uint64_t limit)
{
	int	 i;

	for (i = 0; i < 100 && sideband_drain(r, limit) != 0; i++)
		sideband_wait(r);
	ck_assert_int_lt(i, 100);
}

static void
teardown(struct harness *h)
{
	struct recorder *r = h->r;
	char	 cmd[128];
	int	 i;

	sideband_free(r);		/* the resolver's workers stopped, the pins closed */
	model_free(&r->model);
	binaries_free(r->bins);
	free(r->bins);
	for (i = 0; i < r->ev.ncpus; i++) {
		struct ring *g = &r->ev.cpus[i].sb_ring;
		void	*meta = g->meta, *data = g->data;

		ring_unmap(g);		/* a fake ring: its scratch and spill */
		free(meta);
		free(data);
	}
	free(r->ev.cpus);
	free(r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", h->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", h->dir);
}

/* Read once by name: the file is then cached, and its next proof brings a pin. */
static void
warm_pin(struct harness *h)
{
	struct recorder *r = h->r;
	struct resolver_stats rs;
	uint64_t t = mono_ns();

	put_mmap(h, 0, 0x10000, t);
	drain_all(r, mono_ns() + 1);
	ck_assert_uint_eq(r->st.mmaps_user_id, 1);
	/* Proven by name from the cache: the request brings the pin, put adopts it. */
	put_mmap(h, 0, 0x20000, mono_ns());
	drain_all(r, mono_ns() + 1);
	ck_assert_uint_eq(r->st.mmaps_user_id, 2);
	resolver_stats(r->res, &rs);
	ck_assert_uint_eq(rs.pins, 1);
}

/* What the recorder writes goes into a segment in H's directory (seg_ns reads it). */
static const uint64_t SEG_IDS[1] = { 7 };

static void
seg_open(struct harness *h, struct perfdata_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->attr = h->attr;
	a->attr.type = PERF_TYPE_SOFTWARE;
	a->attr.config = PERF_COUNT_SW_DUMMY;
	a->attr.size = PERF_FILE_ATTR_SIZE;
	a->name = "dummy";
	a->ids = SEG_IDS;
	a->nids = 1;
	ck_assert_int_eq(segment_open(&h->r->seg, h->dir, 1, mono_ns(), (uint64_t)walltime_now(),
	    a, 1), 0);
}

struct ns_seen {
	const struct record_layout *l;
	uint32_t pid;
	uint64_t mnt_ns;
	int	 n;
};

static int
ns_seen_cb(const struct perf_event_header *eh, void *arg)
{
	struct ns_seen *s = arg;
	struct record rec;

	if (eh->type == PERF_RECORD_NAMESPACES && record_decode(eh, eh->size, s->l, &rec) == 0 &&
	    rec.ns.pid == s->pid) {
		s->mnt_ns = rec.ns.mnt_ns;
		s->n++;
	}
	return 0;
}

/* Close the segment seg_open began: the NAMESPACES records of each of PIDS, their mnt_ns into NS. */
static void
seg_ns(struct harness *h, struct perfdata_attr *a, const uint32_t *pids, uint64_t *ns, int npids)
{
	struct perfdata_meta m;
	struct perfdata_file f;
	struct ns_seen s;
	char	 err[256];
	int	 i;

	memset(&m, 0, sizeof(m));
	m.hostname = m.osrelease = m.arch = m.version = "check";
	m.clockid = CLOCK_MONOTONIC;
	h->r->seg.t_end = mono_ns();
	ck_assert_int_eq(segment_close(&h->r->seg, a, 1, &m), 0);
	ck_assert_msg(perfdata_open(&f, h->r->seg.path, err, sizeof(err)) == 0, "%s", err);
	for (i = 0; i < npids; i++) {
		memset(&s, 0, sizeof(s));
		s.l = &h->r->ev.sb_layout;
		s.pid = pids[i];
		ck_assert_int_ge(perfdata_walk(&f, ns_seen_cb, &s), 0);
		ck_assert_int_le(s.n, 1);	/* one look per process */
		ns[i] = s.n == 0 ? 0 : s.mnt_ns;
	}
	perfdata_file_close(&f);
}

/* A recorder over NCPUS fake rings whose file is pinned already. */
static struct recorder *
setup_pinned(struct harness *h, int ncpus)
{
	setup(h, ncpus);
	warm_pin(h);
	return h->r;
}

/*
 * Processes the model has no namespace for (their FORK lost): one alive is
 * looked up in /proc (here this process, the host's), one gone is of no
 * known namespace, which is not the host's: its binaries were the host's,
 * so a user whose child's FORK was lost could write the host's history.
 * Both findings go into the segment as NAMESPACES records, the unknown as
 * mount namespace 1: a rebuild of the index from the segment (which shows
 * no FORK of either) reads them, and takes neither for the host's by default.
 */
START_TEST(test_unknown_namespace)
{
	struct harness h;
	struct recorder *r;
	struct perfdata_attr a;
	const struct model_proc *p;
	const struct binary *b;
	uint32_t pids[2] = { DEADPID, (uint32_t)getpid() };
	uint64_t ns[2];

	setup(&h, 1);
	r = h.r;
	procfs_host_ns(&r->host_mnt_ns, &r->init_user_ns);
	ck_assert_uint_ne(r->host_mnt_ns, 0);
	seg_open(&h, &a);
	put_file_pid(&h, 0, 0, 0x10000, mono_ns(), DEADPID);
	put_file_pid(&h, 0, 1, 0x20000, mono_ns(), (uint32_t)getpid());
	put_file_pid(&h, 0, 1, 0x30000, mono_ns(), DEADPID);	/* no second look */
	drain_all(r, mono_ns() + 1);
	ck_assert_uint_eq(r->st.mmaps_user_id, 3);
	ck_assert_ptr_nonnull(p = model_find(&r->model, DEADPID));
	ck_assert_uint_eq(p->nmaps, 2);
	ck_assert_ptr_nonnull(b = binaries_at(r->bins, p->maps[0].bin));
	ck_assert_uint_eq(b->ns, INDEX_MNT_NS_UNKNOWN);
	ck_assert_ptr_nonnull(p = model_find(&r->model, (uint32_t)getpid()));
	ck_assert_uint_eq(p->nmaps, 1);
	ck_assert_ptr_nonnull(b = binaries_at(r->bins, p->maps[0].bin));
	ck_assert_uint_eq(b->ns, 0);
	ck_assert_uint_eq(r->st.ns_looked_up, 1);	/* looked up, not taken for the host's */
	ck_assert_uint_eq(p->mnt_ns, r->host_mnt_ns);
	seg_ns(&h, &a, pids, ns, 2);
	ck_assert_msg(ns[0] == INDEX_MNT_NS_UNKNOWN,
	    "the segment does not say the gone process's namespace is unknown (mnt_ns %llu)",
	    (unsigned long long)ns[0]);
	ck_assert_uint_eq(ns[1], r->host_mnt_ns);
	teardown(&h);
}
END_TEST

struct addr_seen {
	const struct record_layout *l;
	uint64_t addr;
	int	 n;
};

static int
addr_seen_cb(const struct perf_event_header *eh, void *arg)
{
	struct addr_seen *s = arg;
	struct record rec;

	if (eh->type == PERF_RECORD_MMAP2 && record_decode(eh, eh->size, s->l, &rec) == 0 &&
	    rec.mmap.addr == s->addr)
		s->n++;
	return 0;
}

/*
 * A stop while a cut is due (an age boundary passed a moment before): the
 * cut is made, and what the rings hold stamped after it goes into the
 * segment that follows.  Before, the stop's drain ended with the cut, and
 * the last segment closed with its start state only: the records after
 * the cut (up to a drain interval of samples) were lost, uncounted.
 */
START_TEST(test_finish_after_cut)
{
	struct harness h;
	struct recorder *r;
	struct perfdata_attr a;
	struct perfdata_file f;
	struct addr_seen s = { 0 };
	struct perf_event_mmap_page *meta = calloc(1, sizeof(*meta));
	void	*data = calloc(1, RINGSZ);
	char	 err[256];
	uint64_t now;

	setup(&h, 1);
	r = h.r;
	ck_assert_int_eq(ring_init(&r->ev.cpus[0].ring, meta, data, RINGSZ), 0);
	ck_assert_int_eq(hostinfo_load(&r->host, NULL), 0);
	snprintf(r->segdir, sizeof(r->segdir), "%s", h.dir);
	seg_open(&h, &a);
	r->attrs[0] = r->attrs[1] = a;
	r->ev.sb_ids = (uint64_t *)SEG_IDS;	/* the start state's records' id */
	r->seq = 1;
	h.conf.rotate_age_ms = 1000;
	now = mono_ns();
	r->seg.t_start = now - 1005 * 1000000ULL;	/* its age ran out 5 ms ago */
	put_file(&h, 0, 0, 0x10000, now - 2 * 1000000ULL);	/* after the cut */
	recorder_finish(r);
	ck_assert_uint_eq(r->seq, 2);			/* the cut was made */
	ck_assert(r->seg.open);
	r->seg.t_end = mono_ns();
	ck_assert_int_eq(recorder_close_segment(r, mono_ns()), 0);
	ck_assert_msg(perfdata_open(&f, r->last_closed, err, sizeof(err)) == 0, "%s", err);
	s.l = &r->ev.sb_layout;
	s.addr = 0x10000;
	ck_assert_int_ge(perfdata_walk(&f, addr_seen_cb, &s), 0);
	perfdata_file_close(&f);
	ck_assert_msg(s.n == 1, "the record stamped after the cut is not in the segment after it "
	    "(%d found)", s.n);
	kinfo_free(&r->kinfo);
	hostinfo_free(&r->host);
	ring_unmap(&r->ev.cpus[0].ring);
	free(meta);
	free(data);
	r->ev.sb_ids = NULL;
	teardown(&h);
}
END_TEST

/*
 * A pass whose limit is a cut the loop came to late (a stall across an
 * age boundary): a record stamped a second after it, and before the
 * pass, belongs to the next segment, and is left in its ring.  Before,
 * the far-future guard was measured from the limit, and took it into the
 * segment the cut ends, out of order with the other rings.  A stamp from
 * the far future of the pass's own clock is still taken as it is.
 */
START_TEST(test_stale_limit_not_future)
{
	struct harness h;
	struct recorder *r;
	uint64_t now, n0;

	r = setup_pinned(&h, 1);	/* proven by its pin: no read to wait for */
	n0 = r->st.sb_records;		/* the pin's own */
	now = mono_ns();
	put_file(&h, 0, 0, 0x10000, now - 1000000000ULL);
	drain_all(r, now - 3000000000ULL);
	ck_assert_msg(r->st.sb_records == n0, "a record of the next segment was taken into the "
	    "one its stale cut ends");
	drain_all(r, mono_ns() + 1);
	ck_assert_uint_eq(r->st.sb_records, n0 + 1);
	/* bogus: 60 s ahead of the clock, taken at once, not left to hold its ring */
	put_file(&h, 0, 0, 0x20000, mono_ns() + 60000000000ULL);
	drain_all(r, mono_ns() - RECORDER_MARGIN_NS);
	ck_assert_uint_eq(r->st.sb_records, n0 + 2);
	teardown(&h);
}
END_TEST

/*
 * A segment opened again after one could not be (a full disk): it starts
 * where the passes stopped taking records, so what the rings still hold
 * follows its start state.  Before, it started at the clock's now, after
 * records that then went into it: perf sorted them before the start
 * state's maps, and could not name them.  BLOCKED: the side-band waits for
 * a read at a time before the last pass's limit; the model knows the maps
 * only up to then, so the segment starts there, not at the limit (before,
 * its start state, stamped at the limit, came after the side-band records
 * between the two, an exec's among them, and perf took the old maps).
 */
static void
reopen_case(int blocked)
{
	struct harness h;
	struct recorder *r;
	struct perfdata_attr a;
	uint64_t now, want;

	setup(&h, 1);
	r = h.r;
	ck_assert_int_eq(hostinfo_load(&r->host, NULL), 0);
	snprintf(r->segdir, sizeof(r->segdir), "%s", h.dir);
	seg_open(&h, &a);		/* for the attrs; closed unfinished below */
	r->attrs[0] = r->attrs[1] = a;
	r->ev.sb_ids = (uint64_t *)SEG_IDS;
	segment_abandon(&r->seg);
	r->seq = 1;
	now = mono_ns();
	r->limit = now - 30 * 1000000ULL;		/* the last pass's */
	want = now - 10 * 1000000ULL;
	if (blocked)
		r->blocked = want = now - 60 * 1000000ULL;
	put_file(&h, 0, 0, 0x10000, now - 10 * 1000000ULL);	/* still in its ring */
	recorder_check_rotate(r);
	ck_assert(r->seg.open);
	ck_assert_msg(r->seg.t_start <= want, "the segment opened again starts %llu ns "
	    "after %s", (unsigned long long)(r->seg.t_start - want),
	    blocked ? "the side-band's wait" : "a record it holds");
	r->blocked = 0;
	segment_abandon(&r->seg);
	kinfo_free(&r->kinfo);
	hostinfo_free(&r->host);
	r->ev.sb_ids = NULL;
	teardown(&h);
}

START_TEST(test_reopen_at_limit)
{
	reopen_case(0);
}
END_TEST

START_TEST(test_reopen_while_blocked)
{
	reopen_case(1);
}
END_TEST

/*
 * A segment opened on a full disk where no room can be made (no segment
 * to delete), its start state past the write buffer's 1 MiB: the start
 * state's writing fails part way.  Such a segment is not kept: the
 * records after it would have no maps, no comm, for a whole rotate_age
 * (before, it was).  It is dropped, and opened again, whole, once the
 * disk has room.
 */
START_TEST(test_start_state_cut_short)
{
	struct harness h;
	struct recorder *r;
	struct perfdata_attr a;
	struct record_mmap m;
	char	 dir[] = "/tmp/check_sideband.XXXXXX", filler[600], cmd[700];
	uint64_t seq;
	int	 i;

	setup(&h, 1);
	r = h.r;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* 1.25 MiB taken: less than a start state's first flush left */
	check_full_tmpfs(dir, 1280, filler, sizeof(filler));
	ck_assert_int_eq(hostinfo_load(&r->host, NULL), 0);
	seg_open(&h, &a);		/* for the attrs (in h.dir) */
	r->attrs[0] = r->attrs[1] = a;
	r->ev.sb_ids = (uint64_t *)SEG_IDS;
	segment_abandon(&r->seg);
	snprintf(r->segdir, sizeof(r->segdir), "%s", dir);
	r->seq = 1;
	/* 12,000 executable maps of one process: some 1.3 MB of start state */
	memset(&m, 0, sizeof(m));
	m.pid = m.tid = DEADPID;
	m.len = 4096;
	m.prot = PROT_READ | PROT_EXEC;
	m.flags = MAP_PRIVATE | MAP_ANONYMOUS;
	m.filename = "//anon";
	for (i = 0; i < 12000; i++) {
		m.addr = 0x10000000ULL + (uint64_t)i * 0x2000;
		ck_assert_int_eq(model_add_map(&r->model, &m, BID_NONE, BINARY_NONE), 0);
	}
	r->limit = mono_ns() - 30 * 1000000ULL;
	recorder_check_rotate(r);
	ck_assert_msg(!r->seg.open, "a segment whose start state was cut short is kept "
	    "(start_rc %d)", r->seg.start_rc);
	snprintf(cmd, sizeof(cmd), "ls %s | grep -q partial", dir);
	ck_assert_msg(system(cmd) != 0, "its .partial is left");
	/* not tried again at once (each try synthesizes the whole model) */
	seq = r->seq;
	recorder_check_rotate(r);
	ck_assert_msg(r->seq == seq, "tried again at once: the loop would spin on a full disk");
	/* room again, a second later: opened, whole */
	ck_assert_int_eq(unlink(filler), 0);
	r->reopen_at = 0;
	r->limit = mono_ns() - 30 * 1000000ULL;
	recorder_check_rotate(r);
	ck_assert(r->seg.open);
	ck_assert_int_eq(r->seg.start_rc, 0);
	segment_abandon(&r->seg);
	kinfo_free(&r->kinfo);
	hostinfo_free(&r->host);
	r->ev.sb_ids = NULL;
	teardown(&h);
	ck_assert_int_eq(umount2(dir, MNT_DETACH), 0);
	rmdir(dir);
}
END_TEST

/* A listener of JIT processes that takes none until told to. */
struct jit_listener {
	int	 calls, take;
};

static int
jit_mapped_cb(void *arg, uint32_t pid, uint32_t *uid)
{
	struct jit_listener *l = arg;

	(void)pid;
	l->calls++;
	if (l->take)
		*uid = 4242;
	return l->take ? 0 : -1;
}

/*
 * A JIT process whose watch the listener could not take (capture's queue
 * full) is told again at its next JIT mapping, and again until one is
 * taken; then no more.  (Before: it was marked watched at the first try,
 * and its map was never kept.)
 */
START_TEST(test_jit_watch_retried)
{
	struct harness h;
	struct recorder *r;
	struct jit_listener jl = { 0, 0 };
	struct recorder_listener l = { .jit_mapped = jit_mapped_cb, .arg = &jl };
	const struct model_proc *p;

	setup(&h, 1);
	r = h.r;
	ck_assert_int_eq(notify_listen(&r->notify, &l), 0);
	put_jit(&h, DEADPID, 0x10000, mono_ns());
	drain_all(r, mono_ns() + 1);
	ck_assert_int_eq(jl.calls, 1);
	ck_assert_ptr_nonnull(p = model_find(&r->model, DEADPID));
	ck_assert_int_eq(p->jit, 0);		/* not taken: not watched */
	put_jit(&h, DEADPID, 0x20000, mono_ns());
	drain_all(r, mono_ns() + 1);
	ck_assert_int_eq(jl.calls, 2);		/* told again */
	jl.take = 1;
	put_jit(&h, DEADPID, 0x30000, mono_ns());
	drain_all(r, mono_ns() + 1);
	ck_assert_int_eq(jl.calls, 3);
	ck_assert_int_eq(model_find(&r->model, DEADPID)->jit, 1);
	ck_assert_uint_eq(model_find(&r->model, DEADPID)->jit_uid, 4242);	/* for its keep */
	put_jit(&h, DEADPID, 0x40000, mono_ns());
	drain_all(r, mono_ns() + 1);
	ck_assert_int_eq(jl.calls, 3);		/* taken: once */
	teardown(&h);
}
END_TEST

/*
 * The same with the pid reused: the record's process is gone, and the
 * process under its pid at the turn (a child started after the record)
 * is another, whose namespace says nothing of the record's.
 */
START_TEST(test_unknown_namespace_pid_reused)
{
	struct harness h;
	struct recorder *r;
	const struct model_proc *p;
	const struct binary *b;
	uint64_t t;
	pid_t	 child;

	setup(&h, 1);
	r = h.r;
	procfs_host_ns(&r->host_mnt_ns, &r->init_user_ns);
	t = mono_ns();
	usleep(50 * 1000);	/* more than a clock tick: /proc's start times are in ticks */
	if ((child = fork()) == 0) {
		alarm(30);	/* gone even if an assertion ends the test before its kill */
		pause();
		_exit(0);
	}
	ck_assert_int_gt(child, 0);
	put_file_pid(&h, 0, 0, 0x10000, t, (uint32_t)child);
	drain_all(r, mono_ns() + 1);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ck_assert_uint_eq(r->st.mmaps_user_id, 1);
	ck_assert_ptr_nonnull(p = model_find(&r->model, (uint32_t)child));
	ck_assert_uint_eq(p->nmaps, 1);
	ck_assert_ptr_nonnull(b = binaries_at(r->bins, p->maps[0].bin));
	ck_assert_msg(b->ns == INDEX_MNT_NS_UNKNOWN,
	    "a process started after the record was taken for the record's (ns %llu)",
	    (unsigned long long)b->ns);
	ck_assert_uint_eq(r->st.ns_looked_up, 0);
	teardown(&h);
}
END_TEST

/* A LOST record of ring CPU's side-band, stamped T (the harness's sample id layout). */
static void
put_lost(struct harness *h, int cpu, uint64_t t)
{
	struct ring *g = &h->r->ev.cpus[cpu].sb_ring;
	struct { struct perf_event_header h; uint64_t id, lost; uint32_t pid, tid; uint64_t time, ident; }
	    rec = { { PERF_RECORD_LOST, 0, sizeof(rec) }, 7, 1, 0, 0, t, 7 };
	uint64_t head = g->meta->data_head;
	size_t	 i;

	for (i = 0; i < sizeof(rec); i++)
		g->data[(head + i) & (RINGSZ - 1)] = ((const uint8_t *)&rec)[i];
	__atomic_store_n(&g->meta->data_head, head + sizeof(rec), __ATOMIC_RELEASE);
}

/*
 * A side-band record lost: a NAMESPACES record among them (a user's
 * unshare) leaves the process the host's in the model.  After a LOST
 * record, or a ring seen too full to take another record (the kernel's
 * LOST comes only once there is room again), the model's namespaces are
 * looked at again in /proc at each process's next mapping: the user's
 * namespace, not the host's.  Before, what the process mapped after the
 * loss was the host's for good (the history of /usr/bin/passwd).
 */
START_TEST(test_lost_namespaces)
{
	struct harness h;
	struct recorder *r;
	const struct model_proc *p;
	const struct binary *b;
	uint64_t addr = 0x10000, fill, n, epoch;
	int	 fds[2], i;
	pid_t	 child;
	char	 c;

	setup(&h, 1);
	r = h.r;
	procfs_host_ns(&r->host_mnt_ns, &r->init_user_ns);
	ck_assert_int_eq(pipe(fds), 0);
	if ((child = fork()) == 0) {
		alarm(30);
		c = unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 ? 'y' : 'n';
		if (write(fds[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ck_assert_int_gt(child, 0);
	ck_assert_int_eq(read(fds[0], &c, 1), 1);
	close(fds[0]);
	close(fds[1]);
	if (c != 'y') {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		fprintf(stderr, "test_lost_namespaces: cannot unshare a user namespace: not tried\n");
		teardown(&h);
		return;
	}
	/* What the model believes: the host's (the unshare's NAMESPACES record lost). */
	ck_assert_int_eq(model_set_ns(&r->model, (uint32_t)child, r->host_mnt_ns,
	    r->init_user_ns), 0);
	put_file_pid(&h, 0, 0, addr, mono_ns(), (uint32_t)child);
	drain_all(r, mono_ns() + 1);
	ck_assert_ptr_nonnull(p = model_find(&r->model, (uint32_t)child));
	ck_assert_ptr_nonnull(b = binaries_at(r->bins, p->maps[0].bin));
	ck_assert_uint_eq(b->ns, 0);	/* no loss seen: what the model knew */
	/* The kernel's LOST record: the next mapping's process is looked at. */
	put_lost(&h, 0, mono_ns());
	put_file_pid(&h, 0, 0, addr += 0x10000, mono_ns(), (uint32_t)child);
	drain_all(r, mono_ns() + 1);
	ck_assert_ptr_nonnull(p = model_find(&r->model, (uint32_t)child));
	ck_assert_uint_eq(p->nmaps, 2);
	ck_assert_ptr_nonnull(b = binaries_at(r->bins, p->maps[1].bin));
	ck_assert_msg(b->ns != 0 && b->ns != INDEX_MNT_NS_UNKNOWN,
	    "after a LOST record, a mapping of a process in a user's namespace is the host's "
	    "(ns %llu)", (unsigned long long)b->ns);
	ck_assert_uint_ne(p->mnt_ns, r->host_mnt_ns);
	/* Again believed the host's; a ring too full for another record, no LOST yet. */
	ck_assert_int_eq(model_set_ns(&r->model, (uint32_t)child, r->host_mnt_ns,
	    r->init_user_ns), 0);
	fill = ring_fill(&r->ev.cpus[0].sb_ring);
	put_file_pid(&h, 0, 0, addr += 0x10000, mono_ns(), (uint32_t)child);
	n = ring_fill(&r->ev.cpus[0].sb_ring) - fill;
	ck_assert_uint_lt(n, SB_NS_RECORD_ROOM);
	/* records after it, until the next would not fit */
	for (i = 0; ring_fill(&r->ev.cpus[0].sb_ring) + n <= RINGSZ; i++)
		put_file_pid(&h, 0, 0, 0x40000000 + (uint64_t)i * 0x10000, mono_ns(), DEADPID);
	drain_all(r, mono_ns() + 1);
	ck_assert_ptr_nonnull(p = model_find(&r->model, (uint32_t)child));
	ck_assert_uint_eq(p->nmaps, 3);
	ck_assert_ptr_nonnull(b = binaries_at(r->bins, p->maps[2].bin));
	ck_assert_msg(b->ns != 0, "after a ring too full to be sure of no loss, a mapping of a "
	    "process in a user's namespace is the host's");
	ck_assert_uint_ge(r->st.sb_full_looks, 1);
	/*
	 * Full at two looks, its head where it was: the kernel drops without
	 * moving the head, so the second look says so again (the processes
	 * looked again after the first may have lost a record since).
	 * Before, only a look with the head moved did.
	 */
	for (i = 0; ring_fill(&r->ev.cpus[0].sb_ring) + n <= RINGSZ; i++)
		put_file_pid(&h, 0, 0, 0x40000000 + (uint64_t)i * 0x10000, mono_ns(), DEADPID);
	epoch = r->model.ns_epoch;
	sideband_loss_look(r);
	ck_assert_uint_gt(r->model.ns_epoch, epoch);
	epoch = r->model.ns_epoch;
	sideband_loss_look(r);
	ck_assert_msg(r->model.ns_epoch > epoch, "a ring full at a second look, its head unmoved, "
	    "was taken for one that dropped nothing since");
	drain_all(r, mono_ns() + 1);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	teardown(&h);
}
END_TEST

START_TEST(test_unseen_read_then_pin)
{
	struct harness h;
	struct recorder *r;
	struct resolver_stats rs;
	uint64_t t;

	r = setup_pinned(&h, 1);
	/* A record old enough on first meeting, pinned: one look, no read kept. */
	t = mono_ns();
	put_mmap(&h, 0, 0x30000, t);
	ck_assert_int_eq(sideband_unseen(r), 1);
	ck_assert_uint_eq(sideband_drain(r, mono_ns() + 1), 0);
	ck_assert_uint_eq(r->st.mmaps_user_id, 3);
	ck_assert_uint_eq(r->sb[0].n, 0);
	ck_assert_int_eq(sideband_unseen(r), 0);
	resolver_stats(r->res, &rs);
	ck_assert_uint_ge(rs.pinned, 1);
	teardown(&h);
}
END_TEST

/*
 * A mapping's wall-clock time for its proof is taken on the wall clock's
 * offset now, not on the segment's, which was taken at its start: the wall
 * clock may have stepped since.  Here the segment's reads a second ahead of
 * the wall clock (as after a leap second, or date -s a second back).  The
 * file is rewritten in place
 * (cp, same inode) 100 ms after the mapping: its ctime, a second before the
 * segment's idea of the mapping's time, must not prove it the mapped file.
 */
START_TEST(test_proof_wall_not_segments)
{
	struct harness h;
	struct recorder *r;
	struct perfdata_attr pa;
	uint64_t id = 1, t;
	char	 cmd[512];

	setup(&h, 1);
	r = h.r;
	memset(&pa, 0, sizeof(pa));
	pa.attr = h.attr;
	pa.name = "cpu-clock";
	pa.ids = &id;
	pa.nids = 1;
	t = mono_ns();
	ck_assert_int_eq(segment_open(&r->seg, h.dir, 1, t, recorder_wall_at(t) + 1000000000ULL,
	    &pa, 1), 0);
	usleep(100 * 1000);
	snprintf(cmd, sizeof(cmd), "cp /usr/bin/false %s", h.path);
	ck_assert_int_eq(system(cmd), 0);
	put_mmap(&h, 0, 0x10000, t);
	drain_all(r, mono_ns() + 1);
	ck_assert_msg(r->st.mmaps_user_id == 0, "the rewritten file's build-id was given to the "
	    "mapping made before the rewrite");
	ck_assert_uint_eq(r->st.unknown[BIDC_CHANGED], 1);
	segment_abandon(&r->seg);
	teardown(&h);
}
END_TEST

/* The MMAP2 records at one address, in the segment's order. */
struct at_addr {
	const struct record_layout *l;
	uint64_t addr;
	int	 n;
	char	 name[2][PATH_MAX];	/* the first's and the last's */
	uint8_t	 idsize[2];
};

static int
at_addr_cb(const struct perf_event_header *eh, void *arg)
{
	struct at_addr *s = arg;
	struct record rec;
	int	 k;

	if (eh->type != PERF_RECORD_MMAP2 || record_decode(eh, eh->size, s->l, &rec) < 0 ||
	    rec.mmap.addr != s->addr)
		return 0;
	k = s->n++ == 0 ? 0 : 1;
	snprintf(s->name[k], sizeof(s->name[k]), "%s", rec.mmap.filename);
	s->idsize[k] = rec.mmap.build_id_size;
	return 0;
}

/*
 * A library mapped where another was (dlclose, then dlopen at the same
 * address), and its build-id cannot be proven (rewritten since the
 * mapping): perf keeps the map a segment showed last at an address, so
 * with nothing written it showed the first library's functions for the
 * second's samples.  A placeholder ends that map: a name no file has on
 * the reading host, no build-id, so the samples are [unknown].
 */
START_TEST(test_unknown_ends_map)
{
	struct harness h;
	struct recorder *r;
	struct perfdata_attr a;
	struct perfdata_meta m;
	struct perfdata_file f;
	struct at_addr s;
	struct record_layout l;
	char	 cmd[512], err[256];
	uint64_t t;

	setup(&h, 1);
	r = h.r;
	seg_open(&h, &a);
	put_file(&h, 0, 0, 0x10000, mono_ns());
	drain_all(r, mono_ns() + 1);
	ck_assert_uint_eq(r->st.mmaps_user_id, 1);
	t = mono_ns();
	usleep(100 * 1000);
	snprintf(cmd, sizeof(cmd), "cp /usr/bin/false %s", h.path2);
	ck_assert_int_eq(system(cmd), 0);
	put_file(&h, 0, 1, 0x10000, t);
	drain_all(r, mono_ns() + 1);
	ck_assert_uint_eq(r->st.mmaps_user_id, 1);
	ck_assert_uint_eq(r->st.unknown[BIDC_CHANGED], 1);
	memset(&m, 0, sizeof(m));
	m.hostname = m.osrelease = m.arch = m.version = "check";
	m.clockid = CLOCK_MONOTONIC;
	r->seg.t_end = mono_ns();
	ck_assert_int_eq(segment_close(&r->seg, &a, 1, &m), 0);
	ck_assert_msg(perfdata_open(&f, r->seg.path, err, sizeof(err)) == 0, "%s", err);
	memset(&s, 0, sizeof(s));
	l = r->ev.sb_layout;
	l.build_id = 1;		/* the segment's MMAP2s in the build-id form */
	s.l = &l;
	s.addr = 0x10000;
	ck_assert_int_ge(perfdata_walk(&f, at_addr_cb, &s), 0);
	perfdata_file_close(&f);
	ck_assert_str_eq(s.name[0], h.path);
	ck_assert_uint_gt(s.idsize[0], 0);
	ck_assert_msg(s.n == 2, "%d records at the address: perf keeps %s's map for the "
	    "unproven mapping", s.n, h.path);
	ck_assert_uint_eq(s.idsize[1], 0);
	ck_assert_msg(strncmp(s.name[1], "//", 2) == 0 && strstr(s.name[1], h.path2) != NULL,
	    "the placeholder is named %s", s.name[1]);
	teardown(&h);
}
END_TEST

/*
 * A step of the wall clock (wallclock.h) after a mapping of a pinned file:
 * the pin goes, the mapping has no build-id ("clock"); the next mapping,
 * made after the step, is proven again.
 */
START_TEST(test_clock_step)
{
	struct harness h;
	struct recorder *r;
	struct resolver_stats rs;
	struct timespec w, m;

	r = setup_pinned(&h, 1);
	put_mmap(&h, 0, 0x30000, mono_ns());
	/* A second back, then as it was: both are steps. */
	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &w);
	wallclock_look_at((int64_t)w.tv_sec * 1000000000LL + w.tv_nsec - 1000000000LL,
	    (uint64_t)m.tv_sec * 1000000000ULL + (uint64_t)m.tv_nsec);
	wallclock_look(NULL);
	drain_all(r, mono_ns() + 1);
	ck_assert_uint_eq(r->st.unknown[BIDC_CLOCK], 1);
	ck_assert_uint_eq(r->st.mmaps_user_id, 2);
	resolver_stats(r->res, &rs);
	ck_assert_uint_eq(rs.pins, 0);
	put_mmap(&h, 0, 0x40000, mono_ns());
	drain_all(r, mono_ns() + 1);
	ck_assert_uint_eq(r->st.mmaps_user_id, 3);
	ck_assert_uint_eq(r->st.unknown[BIDC_CLOCK], 1);
	teardown(&h);
}
END_TEST

/* Two rings: pinned records taken at the turn, peeked left behind the tail, then more. */
START_TEST(test_two_rings_mixed)
{
	struct harness h;
	struct recorder *r;
	uint64_t t;
	int	 k;

	r = setup_pinned(&h, 2);
	t = mono_ns();
	for (k = 0; k < 20; k++)
		put_mmap(&h, k & 1, 0x100000 + (uint64_t)k * 0x10000, t + (uint64_t)k);
	drain_all(r, mono_ns() + 1);
	ck_assert_uint_eq(r->st.mmaps_user_id, 22);
	ck_assert_uint_eq(r->st.mmaps_no_id, 0);
	ck_assert_uint_eq(r->sb[0].n + r->sb[1].n, 0);
	teardown(&h);
}
END_TEST

/* Pinned and unpinned mixed over two rings, some of it spilled: every one proven. */
static void
mixed(int spill, int more)
{
	struct harness h;
	struct recorder *r;
	uint64_t t;
	int	 k, n = 0;

	r = setup_pinned(&h, 2);
	t = mono_ns();
	for (k = 0; k < 24; k++, n++)
		put_file(&h, k & 1, (k / 2) % 3 == 1, 0x100000 + (uint64_t)k * 0x10000, t + (uint64_t)k);
	if (spill) {
		ring_spill(&r->ev.cpus[0].sb_ring, 1 << 20);
		ring_spill(&r->ev.cpus[1].sb_ring, 1 << 20);
	}
	for (k = 0; k < more; k++, n++)
		put_file(&h, k & 1, k % 3 == 2, 0x900000 + (uint64_t)k * 0x10000, t + 100 + (uint64_t)k);
	sideband_drain(r, mono_ns() + 1);	/* one pass first: the rest waits on reads */
	drain_all(r, mono_ns() + 1);
	ck_assert_uint_eq(r->st.mmaps_no_id, 0);
	ck_assert_uint_eq(r->st.mmaps_user_id, 2 + (uint64_t)n);
	ck_assert_uint_eq(r->sb[0].n + r->sb[1].n, 0);
	ck_assert_int_eq(sideband_unseen(r), 0);
	teardown(&h);
}

START_TEST(test_mixed)
{
	mixed(0, 0);
}
END_TEST

START_TEST(test_mixed_spilled)
{
	mixed(1, 0);
}
END_TEST

START_TEST(test_mixed_spilled_more)
{
	mixed(1, 10);
}
END_TEST

/* Young when first met (arrival at the pass's end), old at the next: read, proven. */
START_TEST(test_young_then_old)
{
	struct harness h;
	struct recorder *r;
	uint64_t t;
	int	 k;

	r = setup_pinned(&h, 2);
	t = mono_ns();
	for (k = 0; k < 8; k++)
		put_file(&h, k & 1, k % 3 == 0, 0x100000 + (uint64_t)k * 0x10000, t + (uint64_t)k * 1000);
	/* Only the first two old enough. */
	sideband_drain(r, t + 1500);
	ck_assert_int_eq(sideband_unseen(r), 0);
	drain_all(r, t + 1500);
	ck_assert_uint_eq(r->st.mmaps_user_id, 4);
	drain_all(r, mono_ns() + 1);
	ck_assert_uint_eq(r->st.mmaps_no_id, 0);
	ck_assert_uint_eq(r->st.mmaps_user_id, 10);
	ck_assert_uint_eq(r->sb[0].n + r->sb[1].n, 0);
	teardown(&h);
}
END_TEST

static Suite *
sideband_suite(void)
{
	Suite	*s = suite_create("sideband");
	TCase	*tc = tcase_create("looks");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_proof_wall_not_segments);
	tcase_add_test(tc, test_unknown_ends_map);
	tcase_add_test(tc, test_clock_step);
	tcase_add_test(tc, test_unseen_read_then_pin);
	tcase_add_test(tc, test_unknown_namespace);
	tcase_add_test(tc, test_finish_after_cut);
	tcase_add_test(tc, test_stale_limit_not_future);
	tcase_add_test(tc, test_reopen_at_limit);
	tcase_add_test(tc, test_reopen_while_blocked);
	tcase_add_test(tc, test_start_state_cut_short);
	tcase_add_test(tc, test_unknown_namespace_pid_reused);
	tcase_add_test(tc, test_lost_namespaces);
	tcase_add_test(tc, test_jit_watch_retried);
	tcase_add_test(tc, test_two_rings_mixed);
	tcase_add_test(tc, test_mixed);
	tcase_add_test(tc, test_mixed_spilled);
	tcase_add_test(tc, test_mixed_spilled_more);
	tcase_add_test(tc, test_young_then_old);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (pin_dir() == NULL) {
		printf("SKIP: needs root and a directory on the root's or /usr's ext4 or XFS "
		    "(/var/tmp, /tmp or /root) for the pins\n");
		return 77;
	}
	return check_run(sideband_suite());
}
