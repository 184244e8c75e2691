/*
 * profile.c - a profile of a time window: the segments that overlap it,
 * read one after the other, record by record.  See profile.h.
 *
 * Times: samples carry CLOCK_MONOTONIC; a segment's CLOCK_DATA feature
 * pairs it with the wall clock.  An open segment (NAME.partial) has no
 * features yet: its pair is the index's start time and the time of its
 * first record, which the daemon stamps at that same moment (the start
 * state is written at the segment's start).  The same goes for its
 * build-id table: an open segment's kernel is taken from the segment
 * before it, or from the index.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "buildid.h"
#include "index_reader.h"
#include "walltime.h"
#include "perfout.h"
#include "procs.h"
#include "profile.h"
#include "record.h"
#include "stacks.h"

#define PROFILE_MAX_FRAMES	512
#define PROFILE_MAX_SEGMENTS	100000

struct segref {
	uint64_t	 seq;
	char		*path;		/* the file as it is on disk now */
	int64_t		 start_ns;
	char		 name[256];
};

struct kname {
	char		*name;
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 size;
};

struct pctx {
	const struct profile_req *req;
	struct profile_stats *st;
	struct symbolize *sym;
	struct stacks	*stk;
	struct perfout	*out;
	struct procs	 procs;
	struct record_layout layout;	/* of the records it writes */
	struct record_layouts layouts;	/* each record read by its event's attr (record.h) */
	const struct segref *seg;
	int		 cpu_clock;	/* period is CPU ns */
	uint64_t	 freq_ns;	/* else: ns per sample */
	int		 have_ref;
	int64_t		 ref_wall;	/* wall = ref_wall + (mono - ref_mono) */
	uint64_t	 ref_mono;
	int		 out_have;	/* perf: the output clock */
	int64_t		 out_off;	/* output wall - mono */
	int64_t		 shift;		/* perf: this segment's times onto the output's */
	int		 clockid;	/* this segment's (perf: the output's is the first's) */
	struct kname	*ktab;		/* the segment's kernel and module build-ids */
	size_t		 nktab;
	struct kname	 kernel_id;	/* the last closed segment's kernel build-id */
	struct kname	 open_kernel;	/* the index's newest: the open segment's */
	int		 seg_open;	/* the segment read is still open (.partial) */
	struct binary	*kernel;	/* this segment's kernel */
	int64_t		 kdelta;	/* its _text here less its cached copy's */
	int		 kdelta_ok;	/* kdelta known (frame_location) */
	int		 pid_seen, comm_seen;
	uint64_t	 first_ns, last_ns;
	char		 jitdir[PATH_MAX];
	uint8_t		 rec[65536];
	int		 failed;
	char		 err[512];
};

int
profile_format_parse(const char *name, enum profile_format *f)
{
	static const char *const names[] = { "perf", "pprof", "folded", "svg" };
	size_t	 i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0) {
			*f = (enum profile_format)i;
			return 0;
		}
	return -1;
}

const char *
profile_format_name(enum profile_format f)
{
	switch (f) {
	case PROFILE_PERF:
		return "perf";
	case PROFILE_PPROF:
		return "pprof";
	case PROFILE_FOLDED:
		return "folded";
	case PROFILE_SVG:
		return "svg";
	}
	return "?";
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t	 n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int
profile_format_from_path(const char *path, enum profile_format *f)
{
	if (ends_with(path, ".data"))
		*f = PROFILE_PERF;
	else if (ends_with(path, ".pb.gz") || ends_with(path, ".pprof") ||
	    ends_with(path, ".pb"))
		*f = PROFILE_PPROF;
	else if (ends_with(path, ".folded") || ends_with(path, ".txt"))
		*f = PROFILE_FOLDED;
	else if (ends_with(path, ".svg"))
		*f = PROFILE_SVG;
	else
		return -1;
	return 0;
}

static void
window_text(const struct profile_req *req, char *buf, size_t len)
{
	char	 a[40], b[40];

	walltime_format(req->since_ns, a, sizeof(a));
	walltime_format(req->until_ns, b, sizeof(b));
	snprintf(buf, len, "%s .. %s", a, b);
}

static void
segrefs_free(struct segref *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free(s[i].path);
	free(s);
}

/* The segments the index lists that overlap the window, by seq, with their files. */
/* PATH without ".partial", into BUF (LEN bytes): a segment listed open, closed since. */
static const char *
closed_name(const char *path, char *buf, size_t len)
{
	size_t	 n = strlen(path);

	if (n > 8 && strcmp(path + n - 8, ".partial") == 0)
		n -= 8;
	snprintf(buf, len, "%.*s", (int)n, path);
	return buf;
}

static int
select_segments(const struct profile_req *req, struct segref **out, size_t *nout,
    struct kname *kernel_id, uint64_t *gone, char *err, size_t errlen)
{
	struct index_reader *q;
	json_t	*res = NULL, *segs, *s;
	struct segref *v = NULL;
	size_t	 i, n = 0;
	int	 rc = -1;

	*out = NULL;
	*nout = 0;
	if ((q = index_reader_open(req->state_dir, err, errlen)) == NULL)
		return -1;
	if (index_reader_segments(q, INDEX_SEGS_NO_COUNTS, &res, err, errlen) < 0)
		goto out;
	segs = json_object_get(res, "segments");
	if ((v = calloc(json_array_size(segs) + 1, sizeof(*v))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	json_array_foreach(segs, i, s) {
		json_t	*endj = json_object_get(s, "end_ns");
		int64_t	 start = json_integer_value(json_object_get(s, "start_ns"));
		int64_t	 end = json_is_integer(endj) ? json_integer_value(endj) : INT64_MAX;
		uint64_t seq = (uint64_t)json_integer_value(json_object_get(s, "seq"));
		const char *path = json_string_value(json_object_get(s, "path"));
		const char *name = json_string_value(json_object_get(s, "name"));
		char	 partial[PATH_MAX];

		if (path == NULL || name == NULL)
			continue;
		/* segments by number: all of them, whatever the wall clock says */
		if (req->seq_min != 0 ? seq < req->seq_min || seq > req->seq_max :
		    start >= req->until_ns || end <= req->since_ns)
			continue;
		if (n >= PROFILE_MAX_SEGMENTS) {
			snprintf(err, errlen, "more than %d segments in the window",
			    PROFILE_MAX_SEGMENTS);
			goto out;
		}
		v[n].seq = seq;
		v[n].start_ns = start;
		snprintf(v[n].name, sizeof(v[n].name), "%s", name);
		/* closed, or still open (NAME.partial) */
		snprintf(partial, sizeof(partial), "%s.partial", path);
		if (access(path, R_OK) == 0)
			v[n].path = strdup(path);
		else if (access(partial, R_OK) == 0)
			v[n].path = strdup(partial);
		else if (access(closed_name(path, partial, sizeof(partial)), R_OK) == 0)
			v[n].path = strdup(partial);	/* NAME.partial closed since it was listed */
		else {
			(*gone)++;	/* retention took it since the index was read */
			continue;
		}
		if (v[n].path == NULL) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		n++;
	}
	/* the newest kernel the index knows, for open segments */
	json_decref(res);
	res = NULL;
	if (index_reader_kernel(q, &res, err, errlen) == 0) {
		int64_t	 best = -1;

		json_array_foreach(json_object_get(res, "kernel"), i, s) {
			int64_t	 last = json_integer_value(json_object_get(s, "last_seen_ns"));
			const char *hex = json_string_value(json_object_get(s, "build_id"));
			int	 len;

			if (hex != NULL && last > best &&
			    (len = buildid_from_hex(hex, kernel_id->id)) > 0) {
				kernel_id->size = (uint8_t)len;
				best = last;
			}
		}
	}
	err[0] = '\0';
	*out = v;
	*nout = n;
	v = NULL;
	rc = 0;
out:
	json_decref(res);
	if (v != NULL)
		segrefs_free(v, n);
	index_reader_close(q);
	return rc;
}

static void
ktab_free(struct pctx *c)
{
	size_t	 i;

	for (i = 0; i < c->nktab; i++)
		free(c->ktab[i].name);
	free(c->ktab);
	c->ktab = NULL;
	c->nktab = 0;
}

struct ktab_ctx {
	struct pctx	*c;
	size_t		 cap;
};

static int
ktab_cb(const struct perfdata_buildid *b, void *arg)
{
	struct ktab_ctx *x = arg;
	struct pctx *c = x->c;
	const char *name = b->filename;
	const uint8_t *id = b->id;
	uint8_t	 size = b->size;
	int	 kernel = b->kernel;

	if (!kernel && strcmp(name, "[vdso]") != 0)
		return 0;	/* the vDSO's mappings come without a build-id: the table has it */
	if (c->nktab == x->cap) {
		struct kname *nk = realloc(c->ktab, (x->cap ? x->cap * 2 : 64) * sizeof(*nk));

		if (nk == NULL)
			return 1;
		c->ktab = nk;
		x->cap = x->cap ? x->cap * 2 : 64;
	}
	if ((c->ktab[c->nktab].name = strdup(name)) == NULL)
		return 1;
	memcpy(c->ktab[c->nktab].id, id, size);
	c->ktab[c->nktab].size = size;
	if (strcmp(name, "[kernel.kallsyms]") == 0) {
		c->kernel_id = c->ktab[c->nktab];	/* carried to open segments */
		c->kernel_id.name = NULL;
	}
	c->nktab++;
	return 0;
}

/* The kernel's, modules' and vDSO's build-ids from the segment's table. */
static void
ktab_load(struct pctx *c, struct perfdata_file *f)
{
	struct ktab_ctx x = { c, 0 };

	ktab_free(c);
	perfdata_buildids(f, ktab_cb, &x);
}

static const struct kname *
ktab_find(struct pctx *c, const char *name)
{
	size_t	 i;

	for (i = 0; i < c->nktab; i++)
		if (strcmp(c->ktab[i].name, name) == 0)
			return &c->ktab[i];
	return NULL;
}

static int
fail_oom(struct pctx *c)
{
	snprintf(c->err, sizeof(c->err), "out of memory");
	c->failed = 1;
	return 1;
}

/*
 * Is this [vdso] the daemon's kind, the one whose build-id the table has
 * (record/kernel.c reads the daemon's own)?  The kernel names a 32-bit or
 * x32 process's vDSO [vdso] too, another ELF: its frames would be named
 * from the wrong one.  Such a process's addresses are all below 4 GiB, and
 * a 64-bit one's vDSO is not (it sits by the stack, near the top of the
 * address space); a 64-bit one that asked for low addresses only
 * (personality ADDR_LIMIT_32BIT) gets an unknown vDSO, not a wrong one.
 */
static int
vdso_native(const struct record_mmap *m)
{
	return sizeof(void *) < 8 || m->addr >= (1ULL << 32);
}

static int
handle_mmap(struct pctx *c, const struct record *r)
{
	const struct record_mmap *m = &r->mmap;
	uint32_t pid = m->pid;
	const struct kname *k;
	struct binary *b;
	int	 kernel = (r->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL ||
	    pid == (uint32_t)-1;

	if (r->type != PERF_RECORD_MMAP && m->prot != 0 && !(m->prot & 4 /* PROT_EXEC */))
		return 0;
	if (c->req->pid >= 0 && pid == (uint32_t)c->req->pid)
		c->pid_seen = 1;
	if (kernel) {
		if (strncmp(m->filename, "[kernel.kallsyms]", 17) == 0) {
			/*
			 * A segment still open has no table yet: its kernel
			 * is the one the index saw last (the running one),
			 * not the last closed segment's (a boot before it may
			 * have run another: an upgrade).  A closed one's is
			 * its table's, or unknown (the last of a crashed
			 * boot, repaired in the next): never another
			 * segment's, whose boot may have run another kernel.
			 */
			k = ktab_find(c, "[kernel.kallsyms]");
			if (k == NULL && c->seg_open && c->open_kernel.size > 0)
				k = &c->open_kernel;
			else if (k == NULL && c->seg_open && c->kernel_id.size > 0)
				k = &c->kernel_id;
			b = symbolize_binary(c->sym, k != NULL ? BIN_KERNEL : BIN_NOID,
			    "[kernel.kallsyms]", k != NULL ? k->id : NULL, k != NULL ? k->size : 0,
			    NULL);
			if (b != NULL && b->kind == BIN_KERNEL) {
				c->kernel = b;
				b->map_pgoff = m->pgoff;	/* its _text in this boot */
				/* the range where its locations are (frame_location) */
				c->kdelta = 0;
				c->kdelta_ok = symbolize_kernel_delta(c->sym, b, m->pgoff, &c->kdelta);
				b->map_start = m->addr - (uint64_t)c->kdelta;
				b->map_end = m->addr + m->len - (uint64_t)c->kdelta;
			}
		} else {
			char	 at[24];

			/*
			 * A binary per placement (its locations are absolute
			 * addresses), named from the kernel's cached kallsyms
			 * only where that copy had the module: one reloaded
			 * elsewhere, or placed by another boot, is not.
			 */
			k = ktab_find(c, m->filename);
			snprintf(at, sizeof(at), "@%llx", (unsigned long long)m->addr);
			b = symbolize_binary(c->sym, BIN_MODULE, m->filename,
			    k != NULL ? k->id : NULL, k != NULL ? k->size : 0, at);
			if (b != NULL) {
				b->kernel = symbolize_module_placed(c->sym, c->kernel, m->filename,
				    m->addr) ? c->kernel : NULL;
				b->map_start = m->addr;
				b->map_end = m->addr + m->len;
			}
		}
		if (b == NULL || procs_map(&c->procs, PROCS_KERNEL, m->addr, m->len, m->pgoff, b) < 0)
			return fail_oom(c);
		return 0;
	}
	if (record_name_is_anon(m->filename))
		b = symbolize_binary(c->sym, BIN_ANON, "//anon", NULL, 0, NULL);
	else if (m->build_id_size > 0)
		b = symbolize_binary(c->sym, BIN_ELF, m->filename, m->build_id, m->build_id_size,
		    NULL);
	else if (strcmp(m->filename, "[vdso]") == 0 && vdso_native(m) &&
	    (k = ktab_find(c, "[vdso]")) != NULL)
		b = symbolize_binary(c->sym, BIN_ELF, m->filename, k->id, k->size, NULL);
	else
		b = symbolize_binary(c->sym, BIN_NOID, m->filename, NULL, 0, NULL);
	if (b == NULL || procs_map(&c->procs, pid, m->addr, m->len, m->pgoff, b) < 0)
		return fail_oom(c);
	return 0;
}

/* The kept perf-PID.map of PID in this segment, as a binary; NULL if none. */
static struct binary *
jit_binary(struct pctx *c, uint32_t pid)
{
	struct proc *pr = procs_get(&c->procs, pid, 0);
	char	 path[PATH_MAX], name[64];

	if (pr == NULL)
		return NULL;
	if (pr->jit_checked)
		return pr->jit;
	pr->jit_checked = 1;
	if ((size_t)snprintf(path, sizeof(path), "%s/perf-%u.map", c->jitdir, pid) >=
	    sizeof(path) || access(path, R_OK) != 0)
		return NULL;
	snprintf(name, sizeof(name), "/tmp/perf-%u.map", pid);
	pr->jit = symbolize_binary(c->sym, BIN_JIT, name, NULL, 0, path);
	return pr->jit;
}

/*
 * The perf format: stock perf names anonymous code only from
 * /tmp/perf-PID.map while that file exists.  An anonymous executable
 * mapping of a process whose map was kept becomes a mapping of an ELF
 * image made from the kept map (SEG.jit/perf-PID.so, made once, beside it;
 * symbolize_jit_elf), at pgoff = its start, so perf report names the JIT
 * frames from it, on this host, after the process and its file are gone.
 * Returns the record's new size in c->rec, or 0 to keep it as it is.
 */
static size_t
jit_mmap_record(struct pctx *c, const struct record *r)
{
	struct record_mmap m = r->mmap;
	char	 map[PATH_MAX], elf[PATH_MAX], tmp[PATH_MAX + 8], abs[PATH_MAX];
	struct stat st;
	struct proc *pr;
	int	 fd, bad;

	if (!(m.prot & 4 /* PROT_EXEC */) || !record_name_is_anon(m.filename) ||
	    ((pr = procs_get(&c->procs, m.pid, 0)) != NULL && pr->jit_elf_failed) ||
	    (size_t)snprintf(map, sizeof(map), "%s/perf-%u.map", c->jitdir, m.pid) >= sizeof(map) ||
	    (size_t)snprintf(elf, sizeof(elf), "%s/perf-%u.so", c->jitdir, m.pid) >= sizeof(elf) ||
	    stat(map, &st) == -1)
		return 0;
	if (stat(elf, &st) == -1) {
		/* made only in a real directory of ours (a copied state dir may be anybody's) */
		if (lstat(c->jitdir, &st) == -1 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			return 0;
		snprintf(tmp, sizeof(tmp), "%s.tmp", elf);
		if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644)) == -1)
			return 0;	/* a read-only state directory: left as it is */
		/*
		 * A map no image can be made of (no valid line) is tried once
		 * per process and segment: a process mapping code again and
		 * again made a read and parse of its map, up to 64 MiB, each.
		 */
		bad = symbolize_jit_elf(map, fd) < 0;
		if (close(fd) == -1 || bad || rename(tmp, elf) == -1) {
			unlink(tmp);
			if (pr != NULL)
				pr->jit_elf_failed = 1;
			return 0;
		}
	}
	if (realpath(elf, abs) == NULL)
		return 0;
	m.filename = abs;
	m.pgoff = m.addr;
	m.maj = m.min = 0;
	m.ino = m.ino_generation = 0;
	m.build_id_size = 0;
	return record_build_mmap2_plain(c->rec, &m, r->misc, &c->layout, &r->sid);
}

/* Write record H to the perf output; 1 (and the error) if that fails. */
static int
write_out(struct pctx *c, const struct perf_event_header *h, int sample, uint64_t t)
{
	if (perfout_write(c->out, h, h->size, sample, t) == 0)
		return 0;
	snprintf(c->err, sizeof(c->err), "writing the profile: %s", strerror(errno));
	c->failed = 1;
	return 1;
}

/*
 * With --pid the perf output keeps PID's records only: PID forked in the
 * window without an exec (a pre-fork server's worker) is made by perf
 * from its parent's maps at the FORK, which the output lacks, and all its
 * samples were [unknown] (found by a review).  Its maps, as the engine
 * has them from its parent, follow its FORK (R) at its time.
 */
static int
write_fork_maps(struct pctx *c, const struct record *r)
{
	const struct proc *pr = procs_get(&c->procs, r->task.pid, 0);
	struct record_sample_id sid = r->sid;
	struct record_mmap m;
	size_t	 i;

	if (pr == NULL)
		return 0;
	sid.pid = sid.tid = r->task.pid;
	sid.time += (uint64_t)c->shift;
	for (i = 0; i < pr->nmaps; i++) {
		const struct pmap *pm = &pr->maps[i];
		const struct binary *b = pm->bin;

		if (b == NULL || (b->kind != BIN_ELF && b->kind != BIN_NOID && b->kind != BIN_ANON))
			continue;	/* a JIT map is its process's own: not its child's */
		memset(&m, 0, sizeof(m));
		m.pid = m.tid = r->task.pid;
		m.addr = pm->start;
		m.len = pm->end - pm->start;
		m.pgoff = pm->pgoff;
		m.prot = 5;		/* PROT_READ | PROT_EXEC */
		m.flags = 2;		/* MAP_PRIVATE */
		m.filename = b->name;
		if (b->kind == BIN_ELF && b->idlen > 0 && b->idlen <= sizeof(m.build_id)) {
			memcpy(m.build_id, b->id, b->idlen);
			m.build_id_size = b->idlen;
			record_build_mmap2(c->rec, &m, PERF_RECORD_MISC_USER, &c->layout, &sid);
		} else
			record_build_mmap2_plain(c->rec, &m, PERF_RECORD_MISC_USER, &c->layout, &sid);
		if (write_out(c, (const struct perf_event_header *)c->rec, 0, 0) != 0)
			return 1;
	}
	return 0;
}

/*
 * Whose addresses a frame's are: the process's (0), the kernel's (1), or
 * SPACE_GUEST, a guest's or the hypervisor's (the events count guest
 * time too on a KVM host): no mapping of the host's names those, though
 * the vCPU thread's (qemu's) libraries may sit at the same addresses.
 */
#define SPACE_GUEST	2

static int
cpumode_space(uint16_t misc)
{
	switch (misc & PERF_RECORD_MISC_CPUMODE_MASK) {
	case PERF_RECORD_MISC_KERNEL:
		return 1;
	case PERF_RECORD_MISC_HYPERVISOR:
	case PERF_RECORD_MISC_GUEST_KERNEL:
	case PERF_RECORD_MISC_GUEST_USER:
		return SPACE_GUEST;
	default:
		return 0;
	}
}

static int
context_space(uint64_t ctx)
{
	return ctx == (uint64_t)PERF_CONTEXT_KERNEL ? 1 : ctx == (uint64_t)PERF_CONTEXT_USER ? 0 :
	    SPACE_GUEST;
}

/* The location of IP in process PID (KERNEL: in the kernel's maps; SPACE_GUEST: none). */
static uint32_t
frame_location(struct pctx *c, uint32_t pid, uint64_t ip, int kernel, int leaf)
{
	const struct pmap *m;
	struct binary *b;
	uint64_t addr = ip;

	uint32_t loc;

	c->st->frames++;
	if (kernel == SPACE_GUEST) {
		c->st->frames_unmapped++;
		return stacks_location(c->stk, NULL, ip, leaf);
	}
	m = procs_find(&c->procs, kernel ? PROCS_KERNEL : pid, ip);
	if ((m == NULL && kernel && c->kernel != NULL) || (m != NULL && m->bin->kind == BIN_KERNEL)) {
		/*
		 * The kernel's: where its cached kallsyms has it (KASLR
		 * places each boot's kernel elsewhere, and that copy is the
		 * first boot's of its build-id), so one function is one
		 * location in every segment.
		 */
		b = m != NULL ? m->bin : c->kernel;
		if (c->kernel != NULL && c->kdelta_ok)
			addr = ip - (uint64_t)c->kdelta;
	} else if (m == NULL) {
		c->st->frames_unmapped++;
		return stacks_location(c->stk, NULL, ip, leaf);
	} else if (m->bin->kind == BIN_ANON) {
		if ((b = jit_binary(c, pid)) == NULL)
			b = m->bin;
	} else {
		b = m->bin;
		addr = symbolize_rel(c->sym, b, ip, m->start, m->pgoff);
	}
	b->samples++;
	if ((loc = stacks_location(c->stk, b, addr, leaf)) != 0 &&
	    c->stk->locs[loc - 1].nlines == 0)
		c->st->frames_unsymbolized++;
	return loc;
}

static int
handle_sample(struct pctx *c, const struct perf_event_header *h, const struct record *r)
{
	const struct profile_req *req = c->req;
	uint32_t locs[PROFILE_MAX_FRAMES];
	size_t	 n = 0;
	uint64_t i, wall, ns;
	const char *comm;
	int	 kernel, leaf = 1;

	if (!c->have_ref)
		return 0;	/* no time reference yet: cannot place it in the window */
	wall = (uint64_t)(c->ref_wall + (int64_t)(r->sid.time - c->ref_mono));
	if (!req->whole && ((int64_t)wall < req->since_ns || (int64_t)wall >= req->until_ns))
		return 0;
	if (req->pid >= 0 && r->sid.pid != (uint32_t)req->pid)
		return 0;
	if (req->pid >= 0)
		c->pid_seen = 1;
	comm = procs_comm(&c->procs, r->sid.pid, r->sid.tid);
	if (req->comm != NULL) {
		if (comm == NULL || strcmp(comm, req->comm) != 0)
			return 0;
		c->comm_seen = 1;
	}
	c->st->samples++;
	if (c->first_ns == 0 || wall < c->first_ns)
		c->first_ns = wall;
	if (wall > c->last_ns)
		c->last_ns = wall;
	if (c->out != NULL) {
		uint64_t t = r->sid.time + (uint64_t)c->shift;

		if (c->shift != 0) {
			memcpy(c->rec, h, h->size);
			record_set_time(c->rec, h->size, &c->layout, t);
			h = (const struct perf_event_header *)c->rec;
		}
		return write_out(c, h, 1, t);
	}
	kernel = cpumode_space(r->misc);
	if (r->sample.nr == 0) {
		if ((locs[n++] = frame_location(c, r->sid.pid, r->sample.ip, kernel, 1)) == 0)
			return fail_oom(c);
	}
	for (i = 0; i < r->sample.nr && n < PROFILE_MAX_FRAMES; i++) {
		uint64_t ip;

		memcpy(&ip, &r->sample.ips[i], sizeof(ip));
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			/*
			 * A context's first frame is its registers' ip, exact
			 * (a fault at a function's first instruction), not a
			 * return address: the user's after the kernel's too.
			 */
			kernel = context_space(ip);
			leaf = 1;
			continue;
		}
		if ((locs[n++] = frame_location(c, r->sid.pid, ip, kernel, leaf)) == 0)
			return fail_oom(c);
		leaf = 0;
	}
	ns = c->cpu_clock ? r->sample.period : c->freq_ns;
	if (stacks_add(c->stk, r->sid.pid, stacks_intern(c->stk, comm != NULL ? comm : "[unknown]"),
	    locs, n, ns) < 0 || c->stk->oom)
		return fail_oom(c);
	return 0;
}

/*
 * Perf format: the output's clock is the first segment's with a clock
 * reference; another boot's (or a stepped clock's) records move onto it.
 * A segment's reference is its CLOCK_DATA, or for one still open (or
 * repaired) its first record's, taken as its start: both come here.
 */
static void
out_clock(struct pctx *c)
{
	int64_t	 d;

	if (c->out == NULL || !c->have_ref)
		return;
	if (!c->out_have) {
		c->out_have = 1;
		c->out_off = c->ref_wall - (int64_t)c->ref_mono;
		perfout_clock(c->out, c->clockid, (uint64_t)c->ref_wall, c->ref_mono);
		return;
	}
	d = (c->ref_wall - (int64_t)c->ref_mono) - c->out_off;
	if (d > 1000000 || d < -1000000)
		c->shift = d;
}

static int
record_cb(const struct perf_event_header *h, void *arg)
{
	struct pctx *c = arg;
	const struct profile_req *req = c->req;
	struct record r;
	size_t	 jit_len = 0;
	int	 keep = 1, fork_maps = 0;

	if (h->type >= PERF_RECORD_USER_TYPE_START)
		return c->out != NULL ? write_out(c, h, 0, 0) : 0;
	if (record_decode(h, h->size, record_layout_of(&c->layouts, h, h->size), &r) < 0) {
		c->st->bad_records++;
		return 0;
	}
	if (!c->have_ref && r.has_sid && r.sid.time != 0) {
		/* an open segment: its start state is stamped with its start time */
		c->have_ref = 1;
		c->ref_wall = c->seg->start_ns;
		c->ref_mono = r.sid.time;
		out_clock(c);
	}
	switch (r.type) {
	case PERF_RECORD_SAMPLE:
		c->st->samples_read++;
		return handle_sample(c, h, &r);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (handle_mmap(c, &r) != 0)
			return 1;
		if (req->pid >= 0 && r.mmap.pid != (uint32_t)req->pid && r.mmap.pid != (uint32_t)-1)
			keep = 0;
		else if (c->out != NULL && r.type == PERF_RECORD_MMAP2 &&
		    (jit_len = jit_mmap_record(c, &r)) > 0)
			h = (const struct perf_event_header *)c->rec;
		break;
	case PERF_RECORD_COMM:
		if (procs_set_comm(&c->procs, r.comm.pid, r.comm.tid, r.comm.comm,
		    (r.misc & PERF_RECORD_MISC_COMM_EXEC) != 0) < 0)
			return fail_oom(c);
		if (req->pid >= 0 && r.comm.pid == (uint32_t)req->pid)
			c->pid_seen = 1;
		if (req->comm != NULL && strcmp(r.comm.comm, req->comm) == 0)
			c->comm_seen = 1;
		if (req->pid >= 0 && r.comm.pid != (uint32_t)req->pid)
			keep = 0;
		break;
	case PERF_RECORD_FORK:
		if (procs_fork(&c->procs, r.task.pid, r.task.ppid, r.task.tid, r.task.ptid) < 0)
			return fail_oom(c);
		if (req->pid >= 0 && r.task.pid == (uint32_t)req->pid) {
			c->pid_seen = 1;
			fork_maps = r.task.pid != r.task.ppid && r.has_sid;
		}
		break;
	case PERF_RECORD_EXIT:
		procs_exit(&c->procs, r.task.pid, r.task.tid);
		break;
	case PERF_RECORD_LOST:
		c->st->lost += r.lost.lost;
		break;
	default:
		break;
	}
	if (c->out != NULL && keep) {
		uint64_t t = 0;

		if (c->shift != 0 && record_time(h, h->size, &c->layout, &t) == 0) {
			if (jit_len == 0)
				memcpy(c->rec, h, h->size);
			record_set_time(c->rec, h->size, &c->layout, t + (uint64_t)c->shift);
			h = (const struct perf_event_header *)c->rec;
		}
		if (write_out(c, h, 0, 0) != 0)
			return 1;
		return fork_maps ? write_fork_maps(c, &r) : 0;
	}
	return 0;
}

/* Layout, clock and kernel table of one segment, then its records. */
static int
read_segment(struct pctx *c, struct segref *seg)
{
	struct perfdata_file f;
	const struct perf_event_attr *a;
	void	*cd;
	size_t	 len, i;
	int64_t	 walked;
	char	 err[256];

	/* closed since it was listed: by its final name */
	if (perfdata_open_segment(&f, seg->path, err, sizeof(err)) < 0) {
		c->st->segments_gone++;	/* deleted or replaced under us */
		return 0;
	}
	a = &f.attrs[0].attr;
	for (i = 1; i < f.nattrs; i++)
		if (f.attrs[i].attr.sample_type != a->sample_type ||
		    f.attrs[i].attr.sample_id_all != a->sample_id_all) {
			snprintf(c->err, sizeof(c->err), "%s: events with different layouts",
			    seg->path);
			perfdata_file_close(&f);
			return -1;
		}
	c->seg = seg;
	c->layout.sample_type = a->sample_type;
	c->layout.sample_id_all = a->sample_id_all;
	c->layout.mmap3 = 0;	/* files carry MMAP2, never MMAP3 (perfdata.c) */
	c->cpu_clock = a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_CPU_CLOCK;
	c->freq_ns = a->freq && a->sample_freq > 0 ? 1000000000ULL / a->sample_freq : 0;
	c->have_ref = 0;
	if (perfdata_read_feature(&f, HEADER_CLOCK_DATA, &cd, &len, 64) == 0) {
		if (len >= 24) {
			uint64_t w, m;

			memcpy(&w, (char *)cd + 8, 8);
			memcpy(&m, (char *)cd + 16, 8);
			c->have_ref = 1;
			c->ref_wall = (int64_t)w;
			c->ref_mono = m;
		}
		free(cd);
	}
	c->shift = 0;
	c->clockid = a->use_clockid ? a->clockid : -1;
	if (c->out != NULL) {
		if (perfout_segment(c->out, &f) < 0) {
			snprintf(c->err, sizeof(c->err), "out of memory");
			perfdata_file_close(&f);
			return -1;
		}
		out_clock(c);
	}
	ktab_load(c, &f);
	c->kernel = NULL;
	c->kdelta_ok = 0;
	c->seg_open = strlen(seg->path) > 8 &&
	    strcmp(seg->path + strlen(seg->path) - 8, ".partial") == 0;
	procs_clear(&c->procs);
	{
		const char *slash = strrchr(seg->path, '/');

		size_t	 n = strlen(seg->name);

		/* kept under the segment's final name, whether it is still open or not */
		if (n > 8 && strcmp(seg->name + n - 8, ".partial") == 0)
			n -= 8;
		snprintf(c->jitdir, sizeof(c->jitdir), "%.*s/%.*s" PROFILE_JIT_SUFFIX,
		    slash != NULL ? (int)(slash - seg->path) : 1, slash != NULL ? seg->path : ".",
		    (int)n, seg->name);
	}
	c->st->segments++;
	if (seg->seq > c->st->last_seq)
		c->st->last_seq = seg->seq;
	/* Ids unreadable: the first event's layout, so no build-id is believed. */
	(void)perfdata_layouts(&f, &c->layouts);
	if ((walked = perfdata_walk_ordered(&f, &c->layouts, record_cb, c)) < 0 && !c->failed) {
		snprintf(c->err, sizeof(c->err), "%s: %s", seg->path, strerror(errno));
		c->failed = 1;
	} else if (walked >= 0 && !c->failed && !c->seg_open && f.h.data.size != 0 &&
	    (uint64_t)walked < f.h.data.size)
		c->st->segments_damaged++;	/* a torn tail is a .partial's, not a closed one's */
	record_layouts_free(&c->layouts);
	perfdata_file_close(&f);
	return c->failed ? -1 : 0;
}

static int
write_output(struct pctx *c, const struct profile_req *req, uint64_t period_ns, const char *event)
{
	struct profile_meta m;
	char	 comment[256], host[256];

	memset(&m, 0, sizeof(m));
	m.since_ns = req->since_ns;
	m.until_ns = req->until_ns;
	m.period_ns = period_ns;
	m.event = event;
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		m.hostname = host;
	}
	window_text(req, comment, sizeof(comment));
	m.comment = comment;
	switch (req->format) {
	case PROFILE_PPROF:
		return pprof_write(c->stk, &m, req->fd, &c->st->bytes, c->err, sizeof(c->err));
	case PROFILE_FOLDED:
		return folded_write(c->stk, req->fd, &c->st->bytes, c->err, sizeof(c->err));
	case PROFILE_SVG:
		return svg_write(c->stk, &m, req->fd, &c->st->bytes, c->err, sizeof(c->err));
	default:
		return -1;
	}
}

int
profile_run(const struct profile_req *req, struct profile_stats *stats, char *err,
    size_t errlen)
{
	struct profile_stats st0;
	struct pctx	*c = NULL;
	struct segref	*segs = NULL;
	struct symbolize_stats ss;
	struct kname	 kid;
	char		 cache[PATH_MAX], win[128], **paths = NULL;
	size_t		 nsegs = 0, i;
	uint64_t	 period_ns = 0;
	const char	*event = "cpu-clock";
	int		 rc = -1;

	if (stats == NULL)
		stats = &st0;
	memset(stats, 0, sizeof(*stats));
	memset(&kid, 0, sizeof(kid));
	window_text(req, win, sizeof(win));
	if (req->since_ns >= req->until_ns) {
		snprintf(err, errlen, "empty window %s: since must come before until", win);
		return -1;
	}
	if (select_segments(req, &segs, &nsegs, &kid, &stats->segments_gone, err, errlen) < 0)
		return -1;
	if (nsegs == 0) {
		snprintf(err, errlen, "no segment overlaps %s", win);
		goto out;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL || procs_init(&c->procs) < 0) {
		free(c);
		c = NULL;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	c->req = req;
	c->st = stats;
	c->kernel_id = kid;
	c->open_kernel = kid;
	if (req->running_kernel_size > 0 && req->running_kernel_size <= BUILD_ID_MAX) {
		memcpy(c->open_kernel.id, req->running_kernel, req->running_kernel_size);
		c->open_kernel.size = req->running_kernel_size;
	}
	snprintf(cache, sizeof(cache), "%s", req->cache_dir != NULL ? req->cache_dir : "");
	if (req->cache_dir == NULL)
		snprintf(cache, sizeof(cache), "%s/debug", req->state_dir);
	if ((c->sym = symbolize_new(cache)) == NULL || (c->stk = stacks_new(c->sym)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (req->format == PROFILE_PERF) {
		if ((paths = calloc(nsegs, sizeof(*paths))) == NULL) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		for (i = 0; i < nsegs; i++)
			paths[i] = segs[i].path;
		if (perfout_open(&c->out, req->fd, paths, nsegs, err, errlen) < 0)
			goto out;
	}
	for (i = 0; i < nsegs; i++) {
		if (read_segment(c, &segs[i]) < 0) {
			snprintf(err, errlen, "%s", c->err);
			goto out;
		}
		if (period_ns == 0 && c->layout.sample_type != 0) {
			period_ns = c->freq_ns;
			event = c->cpu_clock ? "cpu-clock" : "cycles";
		}
	}
	if (req->pid >= 0 && !c->pid_seen) {
		snprintf(err, errlen, "pid %lld did not run in %s", (long long)req->pid, win);
		goto out;
	}
	if (req->comm != NULL && !c->comm_seen) {
		snprintf(err, errlen, "no process named \"%s\" ran in %s", req->comm, win);
		goto out;
	}
	stats->first_ns = c->first_ns;
	stats->last_ns = c->last_ns;
	if (c->out != NULL) {
		rc = perfout_finish(c->out, &stats->bytes, err, errlen);
		c->out = NULL;
		if (rc < 0)
			goto out;
		rc = -1;
	} else if (write_output(c, req, period_ns, event) < 0) {
		snprintf(err, errlen, "%s", c->err);
		goto out;
	}
	stats->stacks = c->stk->nstk;
	stats->samples_truncated = c->stk->truncated_samples;
	stats->names_truncated = c->stk->names_truncated;
	stats->procs_shed = c->procs.shed;
	symbolize_stats(c->sym, &ss);
	stats->binaries_uncached = ss.uncached;
	stats->binaries_unknown = ss.unknown;
	stats->jit_maps = ss.jit_maps;
	{
		struct binary *b;

		for (b = symbolize_first(c->sym); b != NULL; b = b->next)
			if (b->samples > 0)
				stats->binaries++;
	}
	rc = 0;
out:
	if (c != NULL) {
		perfout_abort(c->out);
		stacks_free(c->stk);
		symbolize_free(c->sym);
		procs_free(&c->procs);
		ktab_free(c);
		free(c);
	}
	free(paths);
	segrefs_free(segs, nsegs);
	return rc;
}
