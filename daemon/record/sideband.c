/*
 * sideband.c - the side-band rings: MMAP2 (or MMAP3), COMM, FORK, EXIT
 * and their LOST, in time order, into the model, the segment and the
 * listeners.  Each record has two moments:
 *
 *	arrival   sideband_arrive, at the end of each pass (a few ms after
 *	          the mmap): the records the pass left are looked at where
 *	          they lie (ring_scan, nothing consumed) and a mapping whose
 *	          record has no build-id is proven by a file the loop holds (a
 *	          pin, resolver.h) or gets its read started, while the process
 *	          most likely still lives
 *	turn      sideband_drain, in a pass: the rings are merged by time up
 *	          to the pass's limit (the model needs a process's records in
 *	          order, and they may be spread over several CPUs' rings); a
 *	          mapping whose read has no answer yet stops the merge there:
 *	          the side-band after it waits, the samples do not (their
 *	          round marker does, recorder.c), until the answer or the
 *	          read's deadline
 *
 * A record old enough for its turn when the pass first meets it gets one
 * look, not two: the turn proves its mapping by a pin itself, and only a
 * mapping no pin proves sends the pass to arrival first (its read, and
 * those of the records after it, start before the turn waits for it).
 * Under an exec storm, whose records wait out a hold-off of up to 80 ms
 * ([record] sideband_holdoff, recorder.c), that is most of them.
 *
 * What a mapping of a file becomes:
 *	the record has a build-id (MMAP2 of an attr.build_id event, MMAP3):
 *	    written, MMAP3 rewritten as MMAP2 in the build-id form
 *	read by perfmapd under the provenance rule (buildid_reader.h):
 *	    rewritten as MMAP2 in the build-id form
 *	no build-id can be proven: counted by cause, published as unresolved,
 *	    kept in the model, and written as a placeholder (mmap_unknown).
 *	    Stock perf reads a mapping without a build-id from whatever file
 *	    is at its path when the report runs, which may be another binary:
 *	    its symbols would be shown for these samples.  With the
 *	    placeholder they are [unknown].
 * A mapping of anything else (anonymous memory, [vdso], a memfd) is
 * written as the kernel gave it, a leaked build-id flag cleared (record.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "log.h"
#include "recorder.h"
#include "walltime.h"

/*
 * Reads a ring keeps waiting for their turn, at most; a mapping beyond
 * gets none and is answered "busy" at its turn (RESOLVER_MAX_PENDING
 * answers most of them so before this).
 */
#define SB_READS_MAX	65536

/* Does this decoded record wait for a userspace read? */
static int
needs_read(const struct recorder *r, const struct record *rec)
{
	if (rec->type != PERF_RECORD_MMAP && rec->type != PERF_RECORD_MMAP2 &&
	    !(rec->type == PERF_RECORD_MMAP3 && r->ev.sb_layout.mmap3))
		return 0;
	return rec->mmap.pid != (uint32_t)-1 && rec->mmap.build_id_size == 0 &&
	    buildid_reader_is_file(rec->mmap.filename);
}

/*
 * The files the loop may pin (resolver.h) are those of the root's and
 * /usr's file systems: the system's binaries, which an exec storm runs,
 * on file systems nobody unmounts while the daemon runs (a pin holds its
 * file system busy).
 */
static void
sideband_pin_devices(struct recorder *r)
{
	static const char *const roots[] = { "/", "/usr" };
	struct stat st;
	dev_t	 devs[2];
	int	 i, n = 0;

	for (i = 0; i < 2; i++)
		if (stat(roots[i], &st) == 0 && (n == 0 || devs[0] != st.st_dev))
			devs[n++] = st.st_dev;
	resolver_pin_devices(r->res, devs, n);
}

int
sideband_init(struct recorder *r, char *err, size_t errlen)
{
	if ((r->sb = calloc((size_t)r->ev.ncpus, sizeof(*r->sb))) == NULL ||
	    (r->next = calloc((size_t)r->ev.ncpus, sizeof(*r->next))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (resolver_start(&r->res, r->conf->capture == CAPTURE_EAGER, err, errlen) < 0)
		return -1;
	sideband_pin_devices(r);
	return 0;
}

/* The oldest read of S, put. */
static void
read_pop(struct recorder *r, struct sb_ring *s)
{
	if (s->rd[s->first].q != NULL)
		resolver_req_put(r->res, s->rd[s->first].q, s->rd[s->first].idx);
	s->first = (s->first + 1) & (s->cap - 1);
	s->n--;
}

void
sideband_free(struct recorder *r)
{
	int	 i;

	for (i = 0; r->sb != NULL && i < r->ev.ncpus; i++) {
		while (r->sb[i].n > 0)
			read_pop(r, &r->sb[i]);
		free(r->sb[i].rd);
	}
	resolver_stop(r->res);
	r->res = NULL;
	free(r->sb);
	free(r->next);
	r->sb = NULL;
	r->next = NULL;
}

/* ---- arrival --------------------------------------------------------- */

/* Room for one more read in S: 0, or -1 when out of memory. */
static int
read_room(struct sb_ring *s)
{
	struct sb_read *rd;
	uint32_t cap = s->cap == 0 ? 64 : s->cap * 2, k;

	if (s->n < s->cap)
		return 0;
	if ((rd = calloc(cap, sizeof(*rd))) == NULL)
		return -1;
	for (k = 0; k < s->n; k++)
		rd[k] = s->rd[(s->first + k) & (s->cap - 1)];
	free(s->rd);
	s->rd = rd;
	s->cap = cap;
	s->first = 0;
	return 0;
}

static int
arrive_cb(const struct perf_event_header *h, void *arg)
{
	struct recorder *r = arg;
	struct sb_ring *s = &r->sb[r->cur];
	struct sb_read *e;
	struct resolve_req *q = NULL;
	struct bid_answer pinned;
	struct record rec;
	struct bid_when when;
	uint32_t idx = 0;

	r->st.sb_arrival_looks++;
	if (h->type == PERF_RECORD_LOST)
		r->model.ns_epoch++;	/* sideband_loss_look */
	if (h->type != PERF_RECORD_MMAP2 && h->type != PERF_RECORD_MMAP3 &&
	    h->type != PERF_RECORD_MMAP)
		return 0;
	if (record_decode(h, h->size, &r->ev.sb_layout, &rec) < 0 || !needs_read(r, &rec))
		return 0;
	if (s->n >= SB_READS_MAX)
		return 0;	/* no read: "busy" at its turn */
	if (read_room(s) < 0)
		return 1;	/* out of memory: looked at again next time */
	when = recorder_proof_when(r, &rec);
	/* A file the loop holds (resolver.h, pins): no request. */
	if (!(rec.has_sid &&
	    resolver_pinned(r->res, &rec.mmap, rec.sid.time, when, r->now, &pinned)) &&
	    (q = resolver_req_join(r->res, &rec.mmap, when, r->now, &idx)) == NULL)
		return 1;
	e = &s->rd[(s->first + s->n++) & (s->cap - 1)];
	e->pos = r->ev.cpus[r->cur].sb_ring.pos;
	e->q = q;
	e->idx = idx;
	if (q == NULL)
		e->a = pinned;
	return 0;
}

/*
 * A side-band ring that could not take a NAMESPACES record may have lost
 * one: the kernel's LOST record says so only once there is room again,
 * and records of the other CPUs' rings stamped after the loss may be
 * handled first.  A NAMESPACES record among them (a user's unshare) would
 * leave the process the host's in the model: its namespaces, and every
 * process's, are looked at again (model.h NS_EPOCH) before anything is
 * handled.  A ring is consumed only by the passes and by the spills
 * (sideband_relieve), and a record dropped leaves it that full: the look
 * before each read of the ring in a pass, and before a spill, sees it.
 * Every look that finds it so says so, its head moved or not: the kernel
 * drops without moving the head, so a ring full at two looks may have
 * dropped between them, after the processes looked again at the first.
 * (A LOST record does the same, when it is looked at.)
 */
static void
loss_look_ring(struct recorder *r, int i)
{
	struct ring *g = &r->ev.cpus[i].sb_ring;

	if (ring_fill(g) + SB_NS_RECORD_ROOM > g->size) {
		r->model.ns_epoch++;
		r->st.sb_full_looks++;
	}
}

void
sideband_loss_look(struct recorder *r)
{
	int	 i;

	for (i = 0; r->sb != NULL && i < r->ev.ncpus; i++)
		loss_look_ring(r, i);
}

/*
 * Ring I, past half full, spilled (its records held in memory, the
 * kernel's ring emptied; never while a walk of it is under way).  At the
 * end of each pass (sideband_relieve) and, within a long pass, between
 * the work of two rings: a burst of 6,000 mappings of new files wrote
 * 20 KB a millisecond into each 256 KiB ring, and a pass under it took up
 * to 18 ms, long enough to fill one (tests/integration/t_burst_maps.sh).
 */
static int
relieve_ring(struct recorder *r, int i)
{
	if (ring_fill(&r->ev.cpus[i].sb_ring) <= r->ev.sb_ring_size / 2)
		return 0;
	loss_look_ring(r, i);		/* before the spill makes room */
	events_spill_sideband(&r->ev, i, &r->st.sb_spilled, &r->st.sb_spill_full);
	return 1;
}

/* Within a pass, the merge looks at the rings every SB_RELIEVE_STEPS steps. */
#define SB_RELIEVE_STEPS	16

void
sideband_arrive(struct recorder *r)
{
	int	 i;

	recorder_look(r);
	for (i = 0; i < r->ev.ncpus; i++) {
		r->cur = i;
		r->sb[i].peeked = ring_scan(&r->ev.cpus[i].sb_ring, r->sb[i].peeked, arrive_cb, r);
		/* the next ring's arrival may take long: this one's room first */
		(void)relieve_ring(r, i);
	}
	resolver_kick(r->res);
}

int
sideband_unseen(const struct recorder *r)
{
	int	 i;

	for (i = 0; i < r->ev.ncpus; i++)
		if (ring_unseen(&r->ev.cpus[i].sb_ring, r->sb[i].peeked))
			return 1;
	return 0;
}

/* ---- turn -------------------------------------------------------------- */

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
	wall = recorder_wall(r, rec);
	for (i = 0; i < p->nmaps; i++)
		if ((b = binaries_at(r->bins, p->maps[i].bin)) != NULL)
			notify_seen(&r->notify, b, p->pid, wall);
}

/* The time of a side-band record (EXIT and FORK have their own), or 0. */
static uint64_t
record_t(const struct record *rec)
{
	if (rec->has_sid && rec->sid.time != 0)
		return rec->sid.time;
	return rec->type == PERF_RECORD_EXIT || rec->type == PERF_RECORD_FORK ?
	    rec->task.time : 0;
}

/*
 * A file mapping without a provable build-id: counted, published, and
 * written as a placeholder.  Not as itself: stock perf reads a mapping
 * without a build-id from whatever file is at its path when the report
 * runs (sideband.c's head).  But not left out either: perf keeps the map
 * the segment showed last at these addresses (a library dlclose'd, this
 * one dlopen'ed where it was), and would show its functions for this
 * mapping's samples.  The placeholder ends that map: the file's name
 * under RECORD_UNKNOWN_PREFIX, a directory of / that no user can make on
 * the reading host, no build-id, no inode: perf finds no file, and the
 * samples are [unknown] (the engine's too: common/profile/).
 */
static void
mmap_unknown(struct recorder *r, struct record *rec, int cause)
{
	struct record_mmap pm = rec->mmap;
	char	 name[PATH_MAX];
	size_t	 n;

	r->st.mmaps_no_id++;
	r->st.unknown[(unsigned)cause < BIDC_NCAUSES ? cause : BIDC_ERROR]++;
	log_debug("build-id of %s (pid %u, %llx-%llx) unknown: %s", rec->mmap.filename,
	    rec->mmap.pid, (unsigned long long)rec->mmap.addr,
	    (unsigned long long)(rec->mmap.addr + rec->mmap.len), buildid_cause_name(cause));
	notify_unresolved(&r->notify, rec->mmap.filename, cause, recorder_wall(r, rec));
	if (model_add_map(&r->model, &rec->mmap, BID_NONE, BINARY_NONE) < 0)
		log_warnx("model: out of memory");
	snprintf(name, sizeof(name), "%s%s", RECORD_UNKNOWN_PREFIX, rec->mmap.filename);
	pm.filename = name;
	pm.has_inode = 0;
	pm.maj = pm.min = 0;
	pm.ino = pm.ino_generation = 0;
	pm.build_id_size = 0;
	n = record_build_mmap2_plain(r->scratch, &pm, rec->misc & ~PERF_RECORD_MISC_MMAP_BUILD_ID,
	    &r->ev.sb_layout, &rec->sid);
	recorder_write(r, r->scratch, n, 1);
}

/*
 * A (or NULL: the record's own build-id, or not a file) answers REC's
 * read; FD is the file it was read from, or -1.
 */
static void
handle_mmap(struct recorder *r, const struct perf_event_header *h, struct record *rec,
    const struct bid_answer *a, int fd)
{
	struct record_mmap *m = &rec->mmap;
	struct model_map *mm = NULL;
	struct model_proc *p;
	struct binary *b = NULL;
	const void *out;
	uint8_t	 source = BID_NONE;
	uint64_t wall;
	int	 rewrite;
	size_t	 n;

	r->st.mmaps++;
	r->seg.mmaps++;
	if (m->pid == (uint32_t)-1) {		/* kernel: written as is */
		recorder_write(r, h, h->size, 1);
		return;
	}
	/* MMAP3 becomes MMAP2; a flag our attr does not explain is cleared. */
	rewrite = rec->type == PERF_RECORD_MMAP3 ||
	    (rec->type == PERF_RECORD_MMAP2 && (rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
	    m->build_id_size == 0);
	if (m->build_id_size > 0) {
		source = rec->type == PERF_RECORD_MMAP3 ? BID_MMAP3 : BID_MMAP2;
		r->st.mmaps_kernel_id++;
	} else if (a != NULL) {
		if (a->cause != BIDC_OK || a->size == 0 || strlen(m->filename) >= PATH_MAX) {
			mmap_unknown(r, rec, a->cause != BIDC_OK ? a->cause : BIDC_ERROR);
			return;
		}
		memcpy(m->build_id, a->id, a->size);
		m->build_id_size = a->size;
		m->name_flags = (uint8_t)bid_answer_name_flags(a);
		source = BID_USER;
		r->st.mmaps_user_id++;
		rewrite = 1;
	}
	wall = recorder_wall(r, rec);
	if (model_add_map_at(&r->model, m, source, BINARY_NONE, &mm) < 0)
		log_warnx("model: out of memory");
	/*
	 * The one lookup of (path, build-id) per mapping, remembered in the
	 * model's file: the next map of the file costs none.  The binary says
	 * whether the segment's build-id table and the listeners have heard
	 * of it yet.
	 */
	if (m->build_id_size > 0)
		b = mm != NULL ?
		    recorder_file_binary(r, model_find(&r->model, m->pid), mm->file) :
		    recorder_binary(r, model_find(&r->model, m->pid), m->filename, m->name_flags,
		    m->build_id, m->build_id_size);
	if (b != NULL) {
		if (mm != NULL)
			model_map_set_bin(&r->model, mm, b->id);
		if (r->seg.open)
			segment_note_binary(&r->seg, b, m->filename);
		if (!b->mapped) {
			b->mapped = 1;
			notify_binary_new(&r->notify, b, m, fd);
		}
		notify_mapped(&r->notify, b, m->pid, wall, source);
		if (r->flight_on) {
			b->flight_at = record_t(rec);
			b->flight_pid = m->pid;
		}
	}
	if ((m->prot & PROT_EXEC) && record_name_is_anon(m->filename))
		recorder_jit_watch(r, model_find(&r->model, m->pid));
	if (rewrite && strlen(m->filename) < PATH_MAX) {
		n = m->build_id_size > 0 ?
		    record_build_mmap2(r->scratch, m, rec->misc, &r->ev.sb_layout, &rec->sid) :
		    record_build_mmap2_plain(r->scratch, m, rec->misc, &r->ev.sb_layout,
		    &rec->sid);
		out = r->scratch;
	} else {
		out = h;
		n = h->size;
	}
	if (b != NULL && (p = model_find(&r->model, m->pid)) != NULL &&
	    recorder_foreign(r, p, m->name_flags))
		recorder_write_foreign(r, p, out, n);
	else
		recorder_write(r, out, n, 1);
}


/*
 * A FORK of the start-up scan's time (the records held while it ran, read
 * after it): the model's parent is what the scan read, later than the
 * fork.  If the parent changed between the fork and its scan (an exec: the
 * scan saw the new image), the copy would give the child maps it never
 * had; the child the scan read after the fork is as it saw it (its own
 * records after it come next), and one it did not read has no maps
 * (unknown, counted) rather than the parent's later ones.  1: the FORK is
 * done with.
 */
static int
fork_before_scan(struct recorder *r, const struct record *rec)
{
	struct model_proc *parent, *child;
	uint64_t t = record_t(rec);

	if ((parent = model_find(&r->model, rec->task.ppid)) == NULL ||
	    parent->scan_ns <= t || parent->changed_ns <= t)
		return 0;
	if ((child = model_find(&r->model, rec->task.pid)) != NULL && child->scan_ns > t)
		return 1;
	if (model_fork(&r->model, rec->task.pid, rec->task.ppid, rec->task.tid,
	    rec->task.ptid) == 0 && (child = model_find(&r->model, rec->task.pid)) != NULL) {
		model_forget_maps(&r->model, child);
		r->st.start_forks_unknown++;
	}
	return 1;
}

static void
process_record(struct recorder *r, const struct perf_event_header *h, struct record *rec,
    const struct bid_answer *a, int fd)
{
	r->st.records++;
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		handle_mmap(r, h, rec, a, fd);
		return;
	case PERF_RECORD_MMAP3:
		if (r->ev.sb_layout.mmap3) {
			handle_mmap(r, h, rec, a, fd);
			return;
		}
		break;
	case PERF_RECORD_COMM:
		if (r->flight_on && (rec->misc & PERF_RECORD_MISC_COMM_EXEC)) {
			flightrec_ended(r, model_find(&r->model, rec->comm.pid), record_t(rec));
			flightrec_born(r, rec->comm.pid, record_t(rec));
		}
		model_set_comm(&r->model, rec->comm.pid, rec->comm.tid, rec->comm.comm,
		    (rec->misc & PERF_RECORD_MISC_COMM_EXEC) != 0);
		break;
	case PERF_RECORD_FORK:
		if (r->flight_on && rec->task.pid != rec->task.ppid)
			flightrec_born(r, rec->task.pid, record_t(rec));
		if (rec->task.pid != rec->task.ppid && fork_before_scan(r, rec))
			break;
		model_fork(&r->model, rec->task.pid, rec->task.ppid, rec->task.tid,
		    rec->task.ptid);
		break;
	case PERF_RECORD_EXIT:
		if (rec->task.pid == rec->task.tid) {
			struct model_proc *p = model_find(&r->model, rec->task.pid);

			publish_exit(r, rec);
			if (r->flight_on)
				flightrec_ended(r, p, record_t(rec));
			if (p != NULL && p->jit && p->jit_uid != JIT_UID_NONE && r->seg.open)
				notify_jit_keep(&r->notify, p->pid, p->jit_uid, &r->seg,
				    recorder_proof_when(r, rec).wall_ns | 1);	/* 1: unknown */
		}
		model_exit(&r->model, rec->task.pid, rec->task.tid);
		break;
	case PERF_RECORD_LOST:
		r->model.ns_epoch++;	/* sideband_loss_look */
		r->st.lost += rec->lost.lost;
		r->st.lost_sideband += rec->lost.lost;
		r->seg.lost += rec->lost.lost;
		break;
	case PERF_RECORD_NAMESPACES:
		if (rec->ns.mnt_ns != 0)
			model_set_ns(&r->model, rec->ns.pid, rec->ns.mnt_ns, rec->ns.user_ns);
		break;
	default:
		break;
	}
	recorder_write(r, h, h->size, 1);
}

/*
 * The read of the record at POS in ring S: the oldest of S, once reads
 * for records the ring no longer holds (a resync) are dropped.
 */
static struct sb_read *
read_of(struct recorder *r, struct sb_ring *s, uint64_t pos)
{
	while (s->n > 0 && (int64_t)(s->rd[s->first].pos - pos) < 0)
		read_pop(r, s);
	return s->n > 0 && s->rd[s->first].pos == pos ? &s->rd[s->first] : NULL;
}

static int
sb_record_cb(const struct perf_event_header *h, void *arg)
{
	static const struct bid_answer busy = { .cause = BIDC_BUSY };
	struct recorder *r = arg;
	struct sb_ring *s = &r->sb[r->cur];
	struct sb_read *e = NULL;
	const struct bid_answer *a = NULL;
	struct bid_answer pinned;
	struct record rec;
	uint64_t t = 0;
	int	 fd = -1;

	if (record_clock_time(&r->ev.sb_clock, h, &t) == 0 && recorder_not_yet(r, t))
		return 1;
	if (record_decode(h, h->size, &r->ev.sb_layout, &rec) < 0) {
		r->st.bad_records++;
		return 0;
	}
	if (needs_read(r, &rec)) {
		uint64_t pos = r->ev.cpus[r->cur].sb_ring.pos;

		/* No read: arrival could not start one (out of memory, SB_READS_MAX). */
		a = &busy;
		if ((e = read_of(r, s, pos)) == NULL) {
			/* Not looked at on arrival (or no read then): a pin, or arrival first. */
			if (rec.has_sid && resolver_pinned(r->res, &rec.mmap, rec.sid.time,
			    recorder_proof_when(r, &rec), r->now, &pinned))
				a = &pinned;
			else if ((int64_t)(pos - s->peeked) >= 0 && !r->sb_arrived) {
				r->sb_unseen = 1;
				return 1;
			}
		} else if (e->q == NULL)
			a = &e->a;	/* proven at arrival */
		else {
			if (!resolver_req_done(r->res, e->q, r->now, 1)) {
				r->blocked = t != 0 ? t : 1;
				r->blocked_deadline = e->q->deadline;
				return 1;
			}
			a = resolver_req_answer_of(e->q, e->idx);
			fd = resolver_req_fd(e->q);
			if (!a->cached || a->cause != BIDC_OK)
				r->sb_news++;
		}
	}
	r->st.sb_records++;
	r->turn_t = t;
	r->turn_rec = &rec;
	process_record(r, h, &rec, a, fd);
	r->turn_t = 0;
	r->turn_rec = NULL;
	if (e != NULL)
		read_pop(r, s);
	return 0;
}

/* Note the time of the next record of a ring without consuming it. */
static int
ring_peek_cb(const struct perf_event_header *h, void *arg)
{
	struct recorder *r = arg;
	uint64_t t;

	/* Undecodable or timeless: first, so sb_record_cb deals with it now. */
	r->peek = record_clock_time(&r->ev.sb_clock, h, &t) < 0 ? 0 : t;
	return 1;
}

static uint64_t
ring_peek(struct recorder *r, int i)
{
	r->peek = UINT64_MAX;
	ring_scan(&r->ev.cpus[i].sb_ring, 0, ring_peek_cb, r);
	return r->peek;
}

uint64_t
sideband_drain(struct recorder *r, uint64_t limit)
{
	uint64_t got, *next = r->next;
	unsigned steps = 0;
	int	 i, min, ncpus = r->ev.ncpus;

	recorder_look(r);
	sideband_loss_look(r);
	r->limit = limit;
	r->future_at = mono_ns() + RECORDER_MARGIN_NS + RECORDER_FUTURE_NS;
	r->blocked = 0;
	r->sb_arrived = 0;
	for (i = 0; i < ncpus; i++)
		next[i] = ring_peek(r, i);
	/*
	 * Take records from the ring with the oldest next record, up to the
	 * next record of any other ring, then look again.  When that oldest
	 * record cannot be taken (too young, or its read not answered), no
	 * other can be either, in time order: the pass ends there.
	 */
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
		r->cur = min;
		r->sb_unseen = 0;
		loss_look_ring(r, min);		/* filled since the pass began? */
		got = ring_read(&r->ev.cpus[min].sb_ring, sb_record_cb, r);
		if (r->sb_unseen) {
			/* A mapping no pin proves: every read starts, then its turn. */
			sideband_arrive(r);
			r->sb_arrived = 1;
		} else if (r->blocked != 0 || got == 0)
			break;
		if (++steps % SB_RELIEVE_STEPS == 0)
			for (i = 0; i < ncpus; i++)
				(void)relieve_ring(r, i);
		next[min] = ring_peek(r, min);
	}
	/* What the pass leaves (too young, or after a wait): reads start now. */
	sideband_arrive(r);
	return r->blocked;
}

uint64_t
sideband_due(struct recorder *r)
{
	uint64_t due = UINT64_MAX, t;
	int	 i;

	/* Waiting for a read: its answer wakes the loop, its deadline the timer. */
	if (r->blocked != 0)
		return r->blocked_deadline;
	for (i = 0; i < r->ev.ncpus; i++)
		if ((t = ring_peek(r, i)) != UINT64_MAX && t + RECORDER_MARGIN_NS + 1 < due)
			due = t + RECORDER_MARGIN_NS + 1;
	return due;
}

uint64_t
sideband_fill(const struct recorder *r)
{
	uint64_t fill, high = 0;
	int	 i;

	for (i = 0; i < r->ev.ncpus; i++)
		if ((fill = ring_fill(&r->ev.cpus[i].sb_ring)) > high)
			high = fill;
	return high;
}

void
sideband_relieve(struct recorder *r)
{
	int	 i;

	for (i = 0; i < r->ev.ncpus; i++)
		if (!relieve_ring(r, i))
			loss_look_ring(r, i);	/* every ring, spilled or not */
}

void
sideband_wait(struct recorder *r)
{
	struct resolve_req *q;
	int	 i;

	/* Every read still out is due within RESOLVE_TIMEOUT_MS. */
	for (i = 0; i < r->ev.ncpus; i++)
		if (r->sb[i].n > 0 && (q = r->sb[i].rd[r->sb[i].first].q) != NULL &&
		    !resolver_req_done(r->res, q, mono_ns(), 0))
			resolver_wait(r->res, q);
}
