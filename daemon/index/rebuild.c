/*
 * rebuild.c - the index from the segments themselves: after a crash the
 * rows of segments that were open (and repaired since) or that the index
 * never heard of are read back from their records and build-id tables; a
 * damaged index.db is rebuilt the same way from every segment on disk.
 *
 * A segment read back gives the times the live index had: its start state
 * (the records before FINISHED_INIT) is seen at the segment's start, each
 * later MMAP2 is a new mapping, and the EXIT of a process's leader is a
 * sighting of every mapping the process had then (record/recorder.c,
 * publish_exit).  For that last one the scan keeps a model of the
 * segment's processes (record/model.h), fed by the same records as the
 * recorder's: MMAP2, COMM, FORK, EXIT.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "buildid.h"
#include "index_int.h"
#include "index_reader.h"
#include "log.h"
#include "perfdata.h"
#include "procfs.h"
#include "record.h"
#include "record/model.h"

struct scan_ctx {
	struct index	*ix;
	struct record_layouts layouts;	/* each record by its event's attr */
	struct model	 model;		/* the segment's processes and their mappings */
	int64_t		 wall_ref, mono_ref;
	int		 init_done;	/* past FINISHED_INIT: mappings are new */
	int		 count;
	int		 model_oom;	/* an exit may have been missed: last_seen early */
	uint64_t	 samples, lost, records;
	uint64_t	 last;		/* latest time stamp seen */
	uint64_t	 host_mnt_ns, init_user_ns;
	/*
	 * The build-id table's entries the recorder marked as the paths of
	 * files proven unlinked (perfdata.h PERFDATA_MISC_UNLINKED,
	 * segment_note_binary), sorted (plain_cmp): "X (deleted)" with a
	 * build-id marked so for X is a mapping the live index filed under X.
	 */
	struct plain_entry *plain;
	size_t		 nplain, plaincap;
};

struct plain_entry {
	char		*name;
	size_t		 len;
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 size;
};

static int
plain_cmp(const void *a, const void *b)
{
	const struct plain_entry *x = a, *y = b;
	size_t	 n = x->len < y->len ? x->len : y->len;
	int	 c = memcmp(x->name, y->name, n);

	if (c != 0 || x->len != y->len)
		return c != 0 ? c : x->len < y->len ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return memcmp(x->id, y->id, x->size);
}

/*
 * Is M, named "X (deleted)", X's binary as the recorder filed it: does the
 * table mark X with M's build-id as proven unlinked?  (A mapping of the
 * same file the recorder could not prove so, in the same segment, is filed
 * under X here too: the mark is the pair's, not the mapping's.)
 */
static int
scan_unlinked(const struct scan_ctx *c, const struct record_mmap *m)
{
	struct plain_entry key;
	size_t	 len = record_name_len(m->filename);

	if (c->nplain == 0 || m->filename[len] == '\0')
		return 0;
	key.name = (char *)m->filename;
	key.len = len;
	key.size = m->build_id_size;
	memcpy(key.id, m->build_id, m->build_id_size);
	return bsearch(&key, c->plain, c->nplain, sizeof(key), plain_cmp) != NULL;
}

/* The provenance of what PID maps (binaries.h NS), from the model's namespaces. */
static uint64_t
scan_ns_of(struct scan_ctx *c, uint32_t pid)
{
	const struct model_proc *p = model_find(&c->model, pid);

	return p == NULL ? 0 : binaries_ns(c->host_mnt_ns, c->init_user_ns, p->mnt_ns,
	    p->user_ns);
}

static uint64_t
scan_wall(struct scan_ctx *c, uint64_t t)
{
	return (uint64_t)(c->wall_ref + ((int64_t)t - c->mono_ref));
}

/* The first time stamp of a segment: the reference when it has no CLOCK_DATA. */
static int
first_time_cb(const struct perf_event_header *h, void *arg)
{
	struct scan_ctx *c = arg;
	struct record rec;

	if (record_decode(h, h->size, record_layout_of(&c->layouts, h, h->size), &rec) < 0)
		return 1;
	if (rec.has_sid && rec.sid.time != 0) {
		c->mono_ref = (int64_t)rec.sid.time;
		return 1;
	}
	return 0;
}

/* When a record happened: its time stamp, else the segment's start. */
static uint64_t
scan_record_wall(struct scan_ctx *c, const struct record *rec)
{
	return rec->has_sid && rec->sid.time != 0 ? scan_wall(c, rec->sid.time) :
	    (uint64_t)c->wall_ref;
}

/* A process's leader exits: its mappings were there until now. */
static void
scan_exit(struct scan_ctx *c, const struct record *rec)
{
	const struct model_proc *p;
	uint64_t wall = scan_record_wall(c, rec);
	size_t	 i;

	if ((p = model_find(&c->model, rec->task.pid)) == NULL)
		return;
	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].file->build_id_size > 0)
			table_add_object(c->ix, p->maps[i].file->name,
			    (p->maps[i].file->name_flags & MMAP_NAME_UNLINKED) != 0,
			    p->maps[i].file->build_id,
			    p->maps[i].file->build_id_size,
			    (p->maps[i].file->name_flags & MMAP_NAME_FOREIGN) ?
			    INDEX_MNT_NS_UNKNOWN : scan_ns_of(c, p->pid), BID_NONE, BINARY_USER,
			    p->pid, wall, 0);
}

static int
scan_record_cb(const struct perf_event_header *h, void *arg)
{
	struct scan_ctx *c = arg;
	const struct model_proc *p;
	struct record rec;

	if (record_decode(h, h->size, record_layout_of(&c->layouts, h, h->size), &rec) < 0)
		return 1;
	c->records++;
	if (rec.has_sid && rec.sid.time > c->last)
		c->last = rec.sid.time;
	switch (rec.type) {
	case PERF_RECORD_SAMPLE:
		c->samples++;
		break;
	case PERF_RECORD_LOST:
		c->lost += rec.lost.lost;
		break;
	case PERF_RECORD_FINISHED_INIT:
		c->init_done = 1;
		break;
	/*
	 * Provenance as the recorder saw it: a mapping in a user's namespace
	 * is not the host's here either.  A process that entered one before
	 * the segment began has its NAMESPACES record in the start state
	 * (synth.c); segments written before that was so count it as the host's.
	 */
	case PERF_RECORD_NAMESPACES:
		if (rec.ns.mnt_ns != 0 &&
		    model_set_ns(&c->model, rec.ns.pid, rec.ns.mnt_ns, rec.ns.user_ns) < 0)
			c->model_oom = 1;
		break;
	case PERF_RECORD_MMAP2:
		if (rec.mmap.pid == (uint32_t)-1)
			break;
		/*
		 * Written between NAMESPACES records of no known namespace
		 * (recorder_write_foreign): no known provenance, also at its exit.
		 */
		if ((p = model_find(&c->model, rec.mmap.pid)) != NULL &&
		    p->mnt_ns == INDEX_MNT_NS_UNKNOWN)
			rec.mmap.name_flags |= MMAP_NAME_FOREIGN;
		if (rec.mmap.build_id_size > 0 && scan_unlinked(c, &rec.mmap))
			rec.mmap.name_flags |= MMAP_NAME_UNLINKED;
		if (model_add_map(&c->model, &rec.mmap, BID_NONE, BINARY_NONE) < 0)
			c->model_oom = 1;
		/* its name whole, unless the table says it was proven unlinked */
		if (rec.mmap.build_id_size > 0)
			table_add_object(c->ix, rec.mmap.filename,
			    (rec.mmap.name_flags & MMAP_NAME_UNLINKED) != 0, rec.mmap.build_id,
			    rec.mmap.build_id_size, scan_ns_of(c, rec.mmap.pid), BID_NONE,
			    BINARY_USER, rec.mmap.pid, scan_record_wall(c, &rec),
			    c->count && c->init_done);
		break;
	case PERF_RECORD_COMM:
		if (model_set_comm(&c->model, rec.comm.pid, rec.comm.tid, rec.comm.comm,
		    (rec.misc & PERF_RECORD_MISC_COMM_EXEC) != 0) < 0)
			c->model_oom = 1;
		break;
	case PERF_RECORD_FORK:
		if (model_fork(&c->model, rec.task.pid, rec.task.ppid, rec.task.tid,
		    rec.task.ptid) < 0)
			c->model_oom = 1;
		break;
	case PERF_RECORD_EXIT:
		if (rec.task.pid == rec.task.tid)
			scan_exit(c, &rec);
		model_exit(&c->model, rec.task.pid, rec.task.tid);
		break;
	}
	return 0;
}

static int
read_section(struct perfdata_file *f, int feat, void *buf, size_t len)
{
	struct perf_file_section s;

	if (perfdata_feature(f, feat, &s) < 0 || s.size < len)
		return -1;
	return pread(f->fd, buf, len, (off_t)s.offset) == (ssize_t)len ? 0 : -1;
}

static int
is_repaired(struct perfdata_file *f)
{
	struct perf_file_section s;
	char	 buf[256];
	ssize_t	 n;

	if (perfdata_feature(f, HEADER_VERSION, &s) < 0 || s.size < 4)
		return 0;
	n = pread(f->fd, buf, s.size < sizeof(buf) - 1 ? s.size : sizeof(buf) - 1,
	    (off_t)s.offset);
	if (n <= 4)
		return 0;
	buf[n] = '\0';
	return memmem(buf + 4, (size_t)n - 4, "(repaired)", 10) != NULL;
}

struct kernel_scan {
	struct index	*ix;
	uint64_t	 wall;
	struct scan_ctx	*c;
};

/* An entry of the table marked as a path proven unlinked, for scan_unlinked. */
static void
plain_add(struct scan_ctx *c, const struct perfdata_buildid *b)
{
	struct plain_entry *e;

	if (!b->unlinked || b->size == 0 || b->size > BUILD_ID_MAX)
		return;
	if (c->nplain == c->plaincap) {
		size_t	 cap = c->plaincap ? c->plaincap * 2 : 64;

		if ((e = reallocarray(c->plain, cap, sizeof(*e))) == NULL)
			return;		/* such mappings keep their whole names */
		c->plain = e;
		c->plaincap = cap;
	}
	e = &c->plain[c->nplain];
	if ((e->name = strdup(b->filename)) == NULL)
		return;
	e->len = strlen(e->name);
	e->size = b->size;
	memcpy(e->id, b->id, b->size);
	c->nplain++;
}

static int
table_entry_cb(const struct perfdata_buildid *b, void *arg)
{
	struct kernel_scan *k = arg;
	char	 name[80], mod[64];

	if (!b->kernel) {
		plain_add(k->c, b);
		return 0;
	}
	if (strcmp(b->filename, "[kernel.kallsyms]") == 0)
		table_add_object(k->ix, b->filename, 0, b->id, b->size, 0, BID_KERNEL, BINARY_KERNEL,
		    0, k->wall, 0);
	else {
		/* as live ingest names it (kernel.c, from /proc/modules): "[nf_nat]" */
		record_module_name(b->filename, mod, sizeof(mod));
		snprintf(name, sizeof(name), "[%s]", mod);
		table_add_object(k->ix, name, 0, b->id, b->size, 0, BID_KERNEL, BINARY_MODULE, 0,
		    k->wall, 0);
	}
	return 0;
}

/* The kernel's and modules' build-ids of a segment's table; its user binaries' plain names. */
static void
scan_buildid_table(struct scan_ctx *c, struct perfdata_file *f, uint64_t wall)
{
	struct kernel_scan k = { c->ix, wall, c };

	perfdata_buildids(f, table_entry_cb, &k);
	if (c->nplain > 0)
		qsort(c->plain, c->nplain, sizeof(*c->plain), plain_cmp);
}

static void
plain_free(struct scan_ctx *c)
{
	for (size_t i = 0; i < c->nplain; i++)
		free(c->plain[i].name);
	free(c->plain);
	c->plain = NULL;
	c->nplain = c->plaincap = 0;
}

/* perf-000042-20261122T125535Z.data: the wall clock second it began. */
static int64_t
name_wall(const char *name)
{
	struct tm tm;
	const char *p = strrchr(name, '-');

	memset(&tm, 0, sizeof(tm));
	if (p == NULL || strptime(p + 1, "%Y%m%dT%H%M%SZ", &tm) == NULL)
		return 0;
	return (int64_t)timegm(&tm) * 1000000000LL;
}

/*
 * Index a closed segment from its file: a segment the index does not know
 * (COUNT: its mappings count as new), or one that was open at a crash
 * (KNOWN_START: the start time the index has; mappings already counted).
 */
static int
scan_segment(struct index *ix, const char *name, uint64_t seq, int count,
    int64_t known_start)
{
	struct perfdata_file f;
	struct scan_ctx c;
	struct write_op *o;
	char	 path[PATH_MAX], err[512];
	uint64_t clock[3], st[2], saved = ix->cur_seq;
	int64_t	 end;
	int	 have_clock;

	snprintf(path, sizeof(path), "%s/%s", ix->segdir, name);
	if (perfdata_open(&f, path, err, sizeof(err)) < 0) {
		log_warnx("index: cannot scan %s", err);
		return -1;
	}
	memset(&c, 0, sizeof(c));
	if (model_init(&c.model) < 0) {
		log_warnx("index: cannot scan %s: out of memory", path);
		perfdata_file_close(&f);
		return -1;
	}
	c.ix = ix;
	procfs_host_ns(&c.host_mnt_ns, &c.init_user_ns);
	c.count = count;
	if (perfdata_layouts(&f, &c.layouts) < 0)
		log_warnx("index: %s: cannot read the sample ids", path);
	memset(st, 0, sizeof(st));
	read_section(&f, HEADER_SAMPLE_TIME, st, sizeof(st));
	/* The reference pair: CLOCK_DATA, else the name's second and the first time stamp. */
	if ((have_clock = read_section(&f, HEADER_CLOCK_DATA, clock, sizeof(clock)) == 0)) {
		c.wall_ref = (int64_t)clock[1];
		c.mono_ref = (int64_t)clock[2];
	} else {
		c.wall_ref = known_start ? known_start : name_wall(name);
		c.mono_ref = (int64_t)st[0];
		if (perfdata_walk(&f, first_time_cb, &c) < 0)
			log_warnx("index: %s: read error", path);
	}
	ix->cur_seq = seq;
	scan_buildid_table(&c, &f, (uint64_t)c.wall_ref);
	if (perfdata_walk_ordered(&f, &c.layouts, scan_record_cb, &c) < 0)
		log_warnx("index: %s: read error, indexed up to it", path);
	if (c.model_oom)
		log_warnx("index: %s: out of memory for its processes; the exits of some "
		    "may be missing from the last-seen times", path);
	model_free(&c.model);
	plain_free(&c);
	/*
	 * SAMPLE_TIME holds the first and last sample's time, inside the cut:
	 * the cut began at CLOCK_DATA's reference and ended after the last
	 * record.
	 */
	end = c.last != 0 ? (int64_t)scan_wall(&c, c.last) :
	    st[1] != 0 ? (int64_t)scan_wall(&c, st[1]) : c.wall_ref;
	if ((o = batch_add(&ix->early, OP_SEG_FULL)) != NULL &&
	    (o->owned = strdup(name)) != NULL) {
		o->v[0] = (int64_t)seq;
		o->v[1] = !have_clock && st[0] != 0 ? (int64_t)scan_wall(&c, st[0]) : c.wall_ref;
		o->v[2] = end;
		o->v[3] = (int64_t)f.file_size;
		o->v[4] = (int64_t)c.samples;
		o->v[5] = (int64_t)c.lost;
		o->v[6] = (int64_t)c.records;
		o->reason = is_repaired(&f) ? "repaired" : "closed";
	} else if (o != NULL)
		ix->early.n--;
	record_layouts_free(&c.layouts);
	perfdata_file_close(&f);
	ix->cur_seq = saved;
	index_commit(ix);
	return 0;
}

/*
 * Make the index agree with the segment directory (see index.h).  Runs at
 * open, before the writer starts.
 */
int
rebuild_reconcile(struct index *ix)
{
	struct dbseg { uint64_t seq; int64_t start; char state[16]; char name[256]; } *v = NULL, *nv;
	size_t	 n = 0, i;
	sqlite3_stmt *s;
	DIR	*d;
	struct dirent *de;
	char	 path[PATH_MAX];
	struct stat sb;
	int	 scanned = 0, deleted = 0, repaired = 0;

	if (sqlite3_prepare_v2(ix->db, "SELECT seq, start_ns, state, name FROM segments "
	    "WHERE state != 'deleted'", -1, &s, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL)
			break;
		v = nv;
		v[n].seq = (uint64_t)sqlite3_column_int64(s, 0);
		v[n].start = sqlite3_column_int64(s, 1);
		snprintf(v[n].state, sizeof(v[n].state), "%s", sqlite3_column_text(s, 2));
		snprintf(v[n].name, sizeof(v[n].name), "%s", sqlite3_column_text(s, 3));
		n++;
	}
	sqlite3_finalize(s);

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", ix->segdir, v[i].name);
		if (stat(path, &sb) == 0) {
			if (strcmp(v[i].state, "open") == 0) {
				/* Open at a crash, finished by repair since. */
				scan_segment(ix, v[i].name, v[i].seq, 0, v[i].start);
				repaired++;
			}
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s.partial", ix->segdir, v[i].name);
		if (stat(path, &sb) == 0)
			continue;	/* torn and not repairable: left to the operator */
		index_segment_deleted(ix, v[i].name);
		deleted++;
	}
	if ((d = opendir(ix->segdir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			uint64_t seq = index_name_seq(de->d_name);
			size_t	 len = strlen(de->d_name);

			if (seq == 0 || len < 5 || strcmp(de->d_name + len - 5, ".data") != 0)
				continue;
			for (i = 0; i < n && v[i].seq != seq; i++)
				;
			if (i < n)
				continue;
			scan_segment(ix, de->d_name, seq, 1, 0);
			scanned++;
		}
		closedir(d);
	}
	free(v);
	index_commit(ix);
	if (scanned || deleted || repaired)
		log_info("index: reconciled with %s: %d segments indexed from their files, "
		    "%d open at a crash, %d gone", ix->segdir, scanned, repaired, deleted);
	return 0;
}
