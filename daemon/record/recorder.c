/*
 * recorder.c - the recording core.
 *
 * Every wake-up drains every ring (perf's FINISHED_ROUND contract: a round
 * marker promises that no later record is older than the previous round,
 * which holds only if all rings were read), processes each record, and
 * writes it to the current segment:
 *
 *	SAMPLE            counted, written unchanged
 *	MMAP2 (+id)       model updated, build-id noted for the header table
 *	MMAP2 (no id)     build-id read from the file (bidres), record rewritten
 *	                  in the build-id form so perf keys the map by contents
 *	MMAP3             decoded, rewritten as MMAP2 + build-id (stock perf
 *	                  does not know MMAP3)
 *	COMM/FORK/EXIT    model updated, written unchanged
 *	LOST*             counted, written unchanged
 *
 * Time is cut, not the byte stream.  A pass consumes only records stamped
 * before now - MARGIN and leaves younger ones in the rings: a record takes
 * far less than MARGIN from its time stamp to its place in the ring, so
 * everything stamped before the limit has been seen.  A rotation at T =
 * now - MARGIN then drains up to T, closes the segment as [start, T), and
 * opens the next one at T with the model's state at T: each record lands in
 * exactly one segment and the ranges neither overlap nor leave gaps.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "log.h"
#include "procscan.h"
#include "recorder.h"
#include "repair.h"

/* How far behind now a pass reads: longer than any record takes to land. */
#define DRAIN_MARGIN_NS		(20ULL * 1000 * 1000)
/* A time stamp further ahead than this is garbage, not a reason to wait. */
#define FUTURE_NS		(1000ULL * 1000 * 1000)

uint64_t
recorder_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t
wall_at(uint64_t mono)
{
	struct timespec w, m;
	uint64_t wn, mn;

	clock_gettime(CLOCK_REALTIME, &w);
	clock_gettime(CLOCK_MONOTONIC, &m);
	wn = (uint64_t)w.tv_sec * 1000000000ULL + (uint64_t)w.tv_nsec;
	mn = (uint64_t)m.tv_sec * 1000000000ULL + (uint64_t)m.tv_nsec;
	return wn - (mn - mono);
}

/* Wall clock of a record, from the current segment's reference pair. */
static uint64_t
record_wall(struct recorder *r, const struct record *rec)
{
	if (!rec->has_sid || rec->sid.time == 0 || !r->seg.open)
		return wall_at(recorder_now());
	return (uint64_t)((int64_t)r->seg.wall_start_ns +
	    ((int64_t)rec->sid.time - (int64_t)r->seg.t_start));
}

static int
is_space_error(int rc)
{
	return rc == -ENOSPC || rc == -EDQUOT;
}

/*
 * The disk is full: make room the way retention would, by deleting the
 * oldest closed segment (never the open one).  Returns 0 if one was
 * deleted.  With nothing left to delete, it does not look again for a
 * second, so a full disk costs one failed write per second, not one per
 * record.
 */
static int
make_room(struct recorder *r)
{
	uint64_t now = recorder_now();

	if (r->room_gone_at != 0 && now - r->room_gone_at < 1000000000ULL)
		return -1;
	if (segment_delete_oldest(r->segdir, &r->notify) == 1) {
		r->st.deleted_for_space++;
		r->room_gone_at = 0;
		return 0;
	}
	r->room_gone_at = now;
	return -1;
}

/* A write failed with RC: enter the disk-full state (logged once). */
static void
disk_trouble(struct recorder *r, int rc)
{
	if (r->disk_error != 0)
		return;
	r->disk_error = -rc;
	errno = -rc;
	log_warn("%s: cannot write%s", r->seg.open ? r->seg.partial : r->segdir,
	    is_space_error(rc) ? "; deleting the oldest segments to make room, "
	    "dropping records while there is none" : "; dropping records");
}

/* A flush went through: leave the disk-full state. */
static void
disk_recovered(struct recorder *r)
{
	if (r->disk_error == 0)
		return;
	log_info("%s: writing again; %llu records could not be written meanwhile",
	    r->segdir, (unsigned long long)r->st.write_errors);
	r->disk_error = 0;
	r->room_gone_at = 0;
}

static void
seg_write(struct recorder *r, const void *buf, size_t len)
{
	int	 rc, tries;

	if (!r->seg.open) {
		r->st.write_errors++;
		return;
	}
	for (tries = 0; (rc = segment_write(&r->seg, buf, len)) < 0 && tries < 8; tries++)
		if (!is_space_error(rc) || make_room(r) < 0)
			break;
	if (rc < 0) {
		r->st.write_errors++;
		disk_trouble(r, rc);
		return;
	}
	r->st.bytes += len;
	r->wrote = 1;
}

/* P has JIT code (anonymous executable memory): its perf-PID.map is watched. */
static void
jit_watch(struct recorder *r, struct model_proc *p)
{
	if (p == NULL || p->jit)
		return;
	p->jit = 1;
	notify_jit_mapped(&r->notify, p->pid);
}

/* A segment closes: the JIT maps of its live processes are kept with it. */
static int
jit_keep_cb(struct model_proc *p, void *arg)
{
	struct recorder *r = arg;
	size_t	 i;

	for (i = 0; i < p->nmaps && !p->jit; i++)	/* the state perfmapd started with */
		if ((p->maps[i].prot & PROT_EXEC) && record_name_is_anon(p->maps[i].filename))
			jit_watch(r, p);
	if (p->jit)
		notify_jit_keep(&r->notify, p->pid, &r->seg, 0);
	return 0;
}

static void
handle_mmap(struct recorder *r, const struct perf_event_header *h, struct record *rec)
{
	struct record_mmap *m = &rec->mmap;
	struct binary *b = NULL;
	uint8_t	 source = BID_NONE;
	uint64_t wall;
	int	 rewrite = 0, rc;
	size_t	 n;

	r->st.mmaps++;
	r->seg.mmaps++;
	if (m->pid == (uint32_t)-1) {		/* kernel: written as is */
		seg_write(r, h, h->size);
		return;
	}
	wall = record_wall(r, rec);
	if (m->build_id_size > 0) {
		source = rec->type == PERF_RECORD_MMAP3 ? BID_MMAP3 : BID_MMAP2;
		r->st.mmaps_kernel_id++;
	} else if (buildid_reader_is_file(m->filename)) {
		if ((rc = buildid_reader_resolve(&r->reader, m)) > 0) {
			source = BID_USER;
			r->st.mmaps_user_id++;
			rewrite = 1;
		} else {
			r->st.mmaps_no_id++;
			notify_unresolved(&r->notify, m->filename, rc, wall);
		}
	}
	if (rec->type == PERF_RECORD_MMAP3)
		rewrite = 1;
	/*
	 * The one lookup of (path, build-id) per mapping.  The binary says
	 * whether the segment's build-id table and the listeners have heard
	 * of it yet.
	 */
	if (m->build_id_size > 0 &&
	    (b = binaries_get(r->bins, m->filename, m->build_id, m->build_id_size, NULL)) != NULL) {
		if (r->seg.open)
			segment_note_binary(&r->seg, b, m->filename);
		if (!b->mapped) {
			b->mapped = 1;
			notify_binary_new(&r->notify, b, m);
		}
		notify_mapped(&r->notify, b, m->pid, wall, source);
	}
	if (model_add_map(&r->model, m, source, b != NULL ? b->id : BINARY_NONE) < 0)
		log_warnx("model: out of memory");
	if ((m->prot & PROT_EXEC) && record_name_is_anon(m->filename))
		jit_watch(r, model_find(&r->model, m->pid));
	if (!rewrite || strlen(m->filename) >= PATH_MAX) {
		seg_write(r, h, h->size);
		return;
	}
	n = m->build_id_size > 0 ?
	    record_build_mmap2(r->scratch, m, rec->misc, &r->ev.layout, &rec->sid) :
	    record_build_mmap2_plain(r->scratch, m, rec->misc, &r->ev.layout, &rec->sid);
	seg_write(r, r->scratch, n);
}

/* A process ends: its binaries were mapped until now (last_seen). */
static void
publish_exit(struct recorder *r, const struct record *rec)
{
	struct model_proc *p;
	struct binary *b;
	uint64_t wall;
	size_t	 i;

	if ((p = model_find(&r->model, rec->task.pid)) == NULL)
		return;
	wall = record_wall(r, rec);
	for (i = 0; i < p->nmaps; i++)
		if ((b = binaries_at(r->bins, p->maps[i].bin)) != NULL)
			notify_seen(&r->notify, b, p->pid, wall);
}

static void
process_record(struct recorder *r, const struct perf_event_header *h, struct record *rec)
{
	r->st.records++;
	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		r->st.samples++;
		segment_note_sample(&r->seg, rec->has_sid ? rec->sid.time : 0);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		handle_mmap(r, h, rec);
		return;
	case PERF_RECORD_MMAP3:
		if (r->ev.layout.mmap3) {
			handle_mmap(r, h, rec);
			return;
		}
		break;
	case PERF_RECORD_COMM:
		model_set_comm(&r->model, rec->comm.pid, rec->comm.tid, rec->comm.comm,
		    (rec->misc & PERF_RECORD_MISC_COMM_EXEC) != 0);
		break;
	case PERF_RECORD_FORK:
		model_fork(&r->model, rec->task.pid, rec->task.ppid, rec->task.tid,
		    rec->task.ptid);
		break;
	case PERF_RECORD_EXIT:
		if (rec->task.pid == rec->task.tid) {
			struct model_proc *p = model_find(&r->model, rec->task.pid);

			publish_exit(r, rec);
			if (p != NULL && p->jit && r->seg.open)
				notify_jit_keep(&r->notify, p->pid, &r->seg, 1);
		}
		model_exit(&r->model, rec->task.pid, rec->task.tid);
		break;
	case PERF_RECORD_LOST:
		r->st.lost += rec->lost.lost;
		r->seg.lost += rec->lost.lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		r->st.lost_samples += rec->lost_samples.lost;
		break;
	default:
		break;
	}
	seg_write(r, h, h->size);
}

/* 1 when a record stamped T is left for later, 0 when it is taken now. */
static int
not_yet(const struct recorder *r, uint64_t t)
{
	if (t >= r->limit + DRAIN_MARGIN_NS + FUTURE_NS)
		return 0;		/* a stamp from the far future: taken as is */
	return t >= r->limit ||		/* too young: next pass */
	    t > r->bound;		/* another ring has older records: those first */
}

static int
ring_record_cb(const struct perf_event_header *h, void *arg)
{
	struct recorder *r = arg;
	struct record rec;
	uint64_t t;

	/*
	 * Samples are most of the stream and need nothing but their time:
	 * copied as they are, like perf record does, without a full decode.
	 */
	if (h->type == PERF_RECORD_SAMPLE &&
	    record_time(h, h->size, &r->ev.layout, &t) == 0) {
		if (not_yet(r, t))
			return 1;
		/* all process_record reads of a sample: its type and time */
		rec.type = PERF_RECORD_SAMPLE;
		rec.has_sid = 1;
		rec.sid.time = t;
		process_record(r, h, &rec);
		return 0;
	}
	if (record_decode(h, h->size, &r->ev.layout, &rec) < 0) {
		r->st.bad_records++;
		return 0;
	}
	if (rec.has_sid && not_yet(r, rec.sid.time))
		return 1;
	process_record(r, h, &rec);
	return 0;
}

/* Note the time of the next record of a ring without consuming it. */
static int
ring_peek_cb(const struct perf_event_header *h, void *arg)
{
	struct recorder *r = arg;
	uint64_t t;

	/* Undecodable or timeless: first, so ring_record_cb deals with it now. */
	r->peek = record_time(h, h->size, &r->ev.layout, &t) < 0 ? 0 : t;
	return 1;
}

static uint64_t
ring_peek(struct recorder *r, int i)
{
	r->peek = UINT64_MAX;
	ring_read(&r->ev.cpus[i].ring, ring_peek_cb, r);
	return r->peek;
}

static void
write_round(struct recorder *r)
{
	struct perf_event_header fr = { PERF_RECORD_FINISHED_ROUND, 0, sizeof(fr) };
	int	 rc, tries;

	if (!r->wrote || !r->seg.open)
		return;

	if (segment_write(&r->seg, &fr, sizeof(fr)) == 0)
		r->st.bytes += sizeof(fr);
	r->wrote = 0;
	for (tries = 0; (rc = perfdata_flush(&r->seg.pd)) < 0 && tries < 8; tries++)
		if (!is_space_error(rc) || make_room(r) < 0)
			break;
	if (rc < 0)
		disk_trouble(r, rc);
	else
		disk_recovered(r);
}

/* Consume every ring up to records stamped at LIMIT. */
static uint64_t
drain_until(struct recorder *r, uint64_t limit)
{
	uint64_t n = 0, got, *next = r->next;
	int	 i, min, ncpus = r->ev.ncpus;

	/*
	 * Merge the rings by time: the model must see a process's records in
	 * the order they happened, and a process that moved between CPUs has
	 * them in several rings (an exec on one CPU, its exit on another).
	 * Take records from the ring with the oldest next record, up to the
	 * next record of any other ring, then look again.
	 */
	r->limit = limit;
	for (i = 0; i < ncpus; i++)
		next[i] = ring_peek(r, i);
	for (;;) {
		min = -1;
		r->bound = UINT64_MAX;
		for (i = 0; i < ncpus; i++) {
			if (next[i] == UINT64_MAX)
				continue;
			if (min < 0 || next[i] < next[min]) {
				if (min >= 0)
					r->bound = next[min];
				min = i;
			} else if (next[i] < r->bound)
				r->bound = next[i];
		}
		if (min < 0)
			break;
		got = ring_read(&r->ev.cpus[min].ring, ring_record_cb, r);
		n += got;
		/* Nothing taken: what is left there is too young for this pass. */
		next[min] = got == 0 ? UINT64_MAX : ring_peek(r, min);
	}
	write_round(r);
	return n;
}

uint64_t
recorder_drain(struct recorder *r)
{
	return drain_until(r, recorder_now() - DRAIN_MARGIN_NS);
}

static void
fill_meta(struct recorder *r, struct perfdata_meta *m, struct utsname *u,
    char *host, size_t hostlen)
{
	struct timespec res;
	uint64_t mono;

	memset(m, 0, sizeof(*m));
	uname(u);
	if (gethostname(host, hostlen) == -1)
		snprintf(host, hostlen, "%s", u->nodename);
	m->hostname = host;
	m->osrelease = u->release;
	m->arch = u->machine;
	m->version = "perfmapd " PERFMAPD_VERSION;
	/* Read at start; again only if the online CPUs changed (hotplug). */
	switch (hostinfo_refresh(&r->host)) {
	case 1:
		log_info("online CPUs now %s: CPU topology read again", r->host.online);
		break;
	case -1:
		log_warnx("CPUs changed, but out of memory to read their topology again");
		break;
	}
	m->host = &r->host;
	m->argc = r->argc;
	m->argv = r->argv;
	m->clockid = CLOCK_MONOTONIC;
	clock_getres(CLOCK_MONOTONIC, &res);
	m->clockid_res_ns = (uint64_t)res.tv_nsec + (uint64_t)res.tv_sec * 1000000000ULL;
	/* The reference pair at this segment's start: dates for its timestamps. */
	mono = r->seg.t_start;
	m->clock_ref_ns = mono;
	m->clock_wall_ns = r->seg.wall_start_ns;
}

static int
close_segment(struct recorder *r, uint64_t t_end)
{
	struct perfdata_meta meta;
	struct utsname u;
	struct stat st;
	char	 host[256];
	size_t	 nbids = r->seg.bids.n;
	int	 rc;

	if (!r->seg.open)
		return 0;
	r->seg.t_end = t_end;
	fill_meta(r, &meta, &u, host, sizeof(host));
	if ((rc = segment_close(&r->seg, &r->attr, 1, &meta)) < 0) {
		char	 err[512];

		errno = -rc;
		log_warn("%s: cannot finish segment", r->seg.partial);
		/*
		 * Out of space for its features and header: make room and
		 * finish it from its records, as after a crash.
		 */
		if (!is_space_error(rc) || make_room(r) < 0 ||
		    repair_segment(r->seg.partial, err, sizeof(err)) < 0)
			return rc;
	}
	r->st.segments++;
	snprintf(r->last_closed, sizeof(r->last_closed), "%s", r->seg.path);
	notify_segment_closed(&r->notify, &r->seg,
	    stat(r->seg.path, &st) == 0 ? (uint64_t)st.st_size : 0);
	r->last_stats.samples = r->seg.samples;
	r->last_stats.records = r->seg.records;
	r->last_stats.lost = r->seg.lost;
	r->last_stats.bytes = r->seg.pd.data_size;
	r->last_stats.nbuildids = nbids;
	log_info_field("SEGMENT", r->seg.path, "closed %s: %llu samples, %llu records, "
	    "%llu lost, %zu build-ids", r->seg.path, (unsigned long long)r->seg.samples,
	    (unsigned long long)r->seg.records, (unsigned long long)r->seg.lost, nbids);
	return 0;
}

static int
open_segment(struct recorder *r, uint64_t t_start)
{
	struct synth_stats ss;
	struct synth_args sa;
	int	 rc, tries;

	for (tries = 0; ; tries++) {
		rc = segment_open(&r->seg, r->segdir, r->seq + 1, t_start, wall_at(t_start),
		    &r->attr, 1);
		if (rc == 0 || !is_space_error(rc) || tries == 8 || make_room(r) < 0)
			break;
	}
	if (rc < 0) {
		disk_trouble(r, rc);
		return rc;
	}
	r->seq++;
	r->seg.pd.sync = r->conf->segment_sync;
	kinfo_free(&r->kinfo);
	kinfo_load(&r->kinfo);
	r->kinfo.vdso = &r->vdso;
	notify_segment_opened(&r->notify, &r->seg, &r->kinfo);
	sa = (struct synth_args){ .layout = &r->ev.layout, .id = r->ev.ids[0],
	    .time = t_start, .wall_ns = r->seg.wall_start_ns, .bins = r->bins,
	    .notify = &r->notify };
	rc = synth_write(&r->seg, &r->model, &r->kinfo, &sa, &ss);
	if (rc < 0) {
		errno = -rc;
		log_warn("%s: writing the initial state", r->seg.partial);
	}
	/* On disk now: a crash any time later leaves a segment that repairs to a useful one. */
	if (perfdata_flush(&r->seg.pd) < 0)
		log_warnx("%s: cannot write the initial state", r->seg.partial);
	log_debug("opened %s: %llu processes, %llu threads, %llu maps synthesized",
	    r->seg.partial, (unsigned long long)ss.procs, (unsigned long long)ss.threads,
	    (unsigned long long)ss.maps);
	return 0;
}

int
recorder_rotate(struct recorder *r, enum rotate_reason why)
{
	uint64_t t;
	int	 rc, orc;

	/*
	 * Cut a little in the past (see the top of this file), but never
	 * before the segment began.  At stop the events are disabled: read
	 * everything.
	 */
	t = recorder_now() - (why == ROTATE_STOP ? 0 : DRAIN_MARGIN_NS);
	if (t <= r->seg.t_start)
		t = r->seg.t_start + 1;
	drain_until(r, why == ROTATE_STOP ? UINT64_MAX - DRAIN_MARGIN_NS - FUTURE_NS : t);
	if (r->seg.open)
		model_foreach(&r->model, jit_keep_cb, r);
	rc = close_segment(r, t);
	switch (why) {
	case ROTATE_SIZE: r->st.rotations_size++; break;
	case ROTATE_AGE: r->st.rotations_age++; break;
	case ROTATE_SIGNAL: r->st.rotations_signal++; break;
	case ROTATE_REQUEST: r->st.rotations_request++; break;
	case ROTATE_STOP: return rc;
	}
	orc = open_segment(r, t);
	segment_retention(r->segdir, r->conf->keep_count, r->conf->keep_size,
	    r->conf->keep_age_ms, &r->notify);
	return rc < 0 ? rc : orc;
}

void
recorder_check_rotate(struct recorder *r)
{
	const struct config *c = r->conf;

	if (!r->seg.open) {
		/* A segment could not be opened (disk full?): try again. */
		if (open_segment(r, recorder_now()) == 0)
			segment_retention(r->segdir, c->keep_count, c->keep_size, c->keep_age_ms,
			    &r->notify);
		return;
	}
	if (c->rotate_size != 0 && r->seg.pd.data_size >= c->rotate_size)
		recorder_rotate(r, ROTATE_SIZE);
	else if (c->rotate_age_ms != 0 &&
	    recorder_now() - r->seg.t_start >= c->rotate_age_ms * 1000000ULL)
		recorder_rotate(r, ROTATE_AGE);
}

static int
mkdir_p(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0750) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (access(dir, W_OK | X_OK) == -1) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The binaries of the processes running at start: each map gets its
 * binary, and the listeners hear of each binary once (eager capture copies
 * them now).  Their sightings come with the first segment's start state.
 */
static int
announce_model_cb(struct model_proc *p, void *arg)
{
	struct recorder *r = arg;
	struct model_map *mm;
	struct record_mmap m;
	struct binary *b;
	size_t	 i;

	for (i = 0; i < p->nmaps; i++) {
		mm = &p->maps[i];
		if (mm->build_id_size == 0 ||
		    (b = binaries_get(r->bins, mm->filename, mm->build_id, mm->build_id_size,
		    NULL)) == NULL)
			continue;
		mm->bin = b->id;
		if (b->mapped)
			continue;
		b->mapped = 1;
		model_map_record(p, mm, &m);
		notify_binary_new(&r->notify, b, &m);
	}
	return 0;
}

/* Everything recorder_init and recorder_start set up, in reverse; safe on a partial start. */
static void
release(struct recorder *r)
{
	events_close(&r->ev);
	free(r->next);
	r->next = NULL;
	model_free(&r->model);
	buildid_reader_free(&r->reader);
	kinfo_free(&r->kinfo);
	vdso_free(&r->vdso);
	hostinfo_free(&r->host);
}

int
recorder_init(struct recorder *r, const struct config *c, const char *state_dir,
    struct binaries *bins, int argc, char *const *argv, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->conf = c;
	r->bins = bins;
	r->argc = argc;
	r->argv = argv;
	if ((size_t)snprintf(r->segdir, sizeof(r->segdir), "%s/segments", state_dir) >=
	    sizeof(r->segdir)) {
		snprintf(err, errlen, "%s: state directory path too long", state_dir);
		return -1;
	}
	if (mkdir_p(r->segdir, err, errlen) < 0)
		return -1;
	repair_all(r->segdir);
	r->seq = segment_last_seq(r->segdir);
	if (model_init(&r->model) < 0 || buildid_reader_init(&r->reader) < 0 ||
	    hostinfo_load(&r->host, NULL) < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	vdso_load(&r->vdso);
	if (events_open(&r->ev, c, err, errlen) < 0)
		goto fail;
	if ((r->next = calloc((size_t)r->ev.ncpus, sizeof(*r->next))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	r->attr.attr = r->ev.attr;
	r->attr.name = r->ev.name;
	r->attr.ids = r->ev.ids;
	r->attr.nids = (size_t)r->ev.ncpus;
	return 0;
fail:
	release(r);
	return -1;
}

int
recorder_listen(struct recorder *r, const struct recorder_listener *l)
{
	return notify_listen(&r->notify, l);
}

int
recorder_start(struct recorder *r, char *err, size_t errlen)
{
	const struct config *c = r->conf;
	uint64_t t0;
	int	 i, n;

	/* Enable before the scan: whatever changes during it is in the rings. */
	r->start_mono_ns = t0 = recorder_now();
	for (i = 0; i < r->ev.ncpus; i++)
		if (ioctl(r->ev.cpus[i].fd, PERF_EVENT_IOC_ENABLE, 0) == -1) {
			snprintf(err, errlen, "PERF_EVENT_IOC_ENABLE: %s", strerror(errno));
			goto fail;
		}
	n = procscan_run(&r->model, &r->reader);
	model_foreach(&r->model, announce_model_cb, r);
	log_info("build-id mode %s, event %s at %u Hz%s on %d CPUs; %d processes, "
	    "%zu executable maps at start", events_mode_name(r->ev.mode), r->ev.name,
	    c->frequency, c->callchain ? " with call chains" : "", r->ev.ncpus, n,
	    r->model.nmaps);
	if (open_segment(r, t0) < 0) {
		snprintf(err, errlen, "%s: cannot create the first segment", r->segdir);
		goto fail;
	}
	return 0;
fail:
	release(r);
	return -1;
}

void
recorder_stop(struct recorder *r)
{
	int	 i;

	for (i = 0; i < r->ev.ncpus; i++)
		ioctl(r->ev.cpus[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	if (r->seg.open)
		recorder_rotate(r, ROTATE_STOP);
	release(r);
}
