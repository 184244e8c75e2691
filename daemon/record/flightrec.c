/*
 * flightrec.c - [segments] mode = flight: the recorder runs as always (the
 * model, the side-band and its build-id reads, the index, the capture of
 * binaries), but what a pass takes goes to a bounded buffer in memory
 * (flight.h) instead of a segment, and nothing is written until a
 * snapshot (perfmapctl snapshot, SIGUSR2): a cut, as a rotation's, at T;
 * the window is [T0, T), T0 the latest of the buffer's FROM (past what it
 * dropped), the previous snapshot and T - flight_age.  The snapshot writes
 * one segment:
 *
 *	start state at T0     kernel and modules; each process alive at T0
 *	                      with the maps it had then (below)
 *	the window's records  as the passes took them, FINISHED_ROUND as in
 *	                      any segment, none stamped before T0
 *	build-id table        the start state's and every MMAP2 of the window
 *
 * and the buffer starts again at T: consecutive snapshots neither overlap
 * nor leave a gap between them (what came between is not recorded).
 *
 * The start state.  The buffer dropped the side-band records of before
 * T0 with everything else, so the state at T0 is put together from what
 * is left:
 *
 *	a process whose image ended in the window (its exit, or an exec): its
 *	    state as it was then, kept in the buffer when it ended
 *	    (flightrec_ended: a STATE pseudo-record, never written as such),
 *	    the first such state at or after T0; an image that lived less
 *	    than STATE_MIN_LIFE_NS keeps none
 *	a process born (FORK) or exec'd in the window before any such state:
 *	    nothing; the window's own records build it, as perf does
 *	any other process the model knows now: its maps now, but those the
 *	    window's MMAP records bring themselves
 *
 * All stamped T0.  What is left out is left out honestly: a map that
 * replaced another at the same addresses inside the window (dlclose, then
 * dlopen) lacks the old one before it (perf says [unknown]); a trimmed map
 * the window mapped appears at T0 too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "hash.h"
#include "log.h"
#include "recorder.h"

/* The state of an image that ended: a record type no kernel or perf uses. */
#define FLIGHT_STATE	0x7fff4601u
#define STATE_MAX	(60 * 1024)
/*
 * An image that lived less than this keeps no state: a window would need
 * it only if it began inside that short life, and an exec storm would
 * otherwise fill the buffer with states (two per process, more bytes than
 * its records).  The cost: the samples such an image took at the very
 * start of a window, before its end, are [unknown].
 */
#define STATE_MIN_LIFE_NS	(50ULL * 1000 * 1000)

struct state_rec {
	struct perf_event_header h;
	uint32_t	 pid, pad;
	uint64_t	 time;
	/* COMM and MMAP2 records follow (synth_proc), stamped TIME */
};

/* pid or map -> a time (open addressing, linear probing; key 0 is empty). */
struct tab {
	uint64_t	*k, *v;
	size_t		 cap, n;
};

struct snap {
	struct recorder	*r;
	uint64_t	 t0;
	/*
	 * The side-band's records as the segment presents them (recorder.c,
	 * present_attrs): their build-id flags are the recorder's, believed.
	 */
	struct record_layout layout;
	struct tab	 born;		/* pid + 1 -> FORK (new process) or exec, >= T0 */
	struct tab	 state;		/* pid + 1 -> first STATE >= T0 */
	struct tab	 maps;		/* map key -> MMAP in the window */
	uint64_t	 states, samples;
	uint8_t		 buf[65536];	/* a record: header.size is a u16 */
	int		 rc;
};

struct ended {
	struct recorder	*r;
	struct state_rec *s;
	uint64_t	 bound;
	uint8_t		 rec[STATE_MAX + SYNTH_BUF];
	uint8_t		 buf[SYNTH_BUF];
};

static int
tab_grow(struct tab *t)
{
	struct tab n = { .cap = t->cap ? t->cap * 2 : 1024 };
	size_t	 i, j;

	if ((n.k = calloc(n.cap, sizeof(*n.k))) == NULL ||
	    (n.v = calloc(n.cap, sizeof(*n.v))) == NULL) {
		free(n.k);
		return -ENOMEM;
	}
	for (i = 0; i < t->cap; i++) {
		if (t->k[i] == 0)
			continue;
		for (j = t->k[i] & (n.cap - 1); n.k[j] != 0; j = (j + 1) & (n.cap - 1))
			;
		n.k[j] = t->k[i];
		n.v[j] = t->v[i];
	}
	n.n = t->n;
	free(t->k);
	free(t->v);
	*t = n;
	return 0;
}

static size_t
tab_slot(const struct tab *t, uint64_t key)
{
	size_t	 j;

	for (j = key & (t->cap - 1); t->k[j] != 0 && t->k[j] != key; j = (j + 1) & (t->cap - 1))
		;
	return j;
}

/* KEY (non-zero) -> the smaller of its value and V. */
static int
tab_put_min(struct tab *t, uint64_t key, uint64_t v)
{
	size_t	 j;

	if ((t->n + 1) * 2 > t->cap && tab_grow(t) < 0)
		return -ENOMEM;
	j = tab_slot(t, key);
	if (t->k[j] == 0) {
		t->k[j] = key;
		t->v[j] = v;
		t->n++;
	} else if (v < t->v[j])
		t->v[j] = v;
	return 0;
}

static int
tab_get(const struct tab *t, uint64_t key, uint64_t *v)
{
	size_t	 j;

	if (t->cap == 0 || t->k[j = tab_slot(t, key)] == 0)
		return 0;
	*v = t->v[j];
	return 1;
}

/* KEY (non-zero) -> V. */
static int
tab_put(struct tab *t, uint64_t key, uint64_t v)
{
	size_t	 j;

	if ((t->n + 1) * 2 > t->cap && tab_grow(t) < 0)
		return -ENOMEM;
	if (t->k[j = tab_slot(t, key)] == 0)
		t->n++;
	t->k[j] = key;
	t->v[j] = v;
	return 0;
}

/* Remove KEY: the entries after it in its run move back (no tombstones). */
static void
tab_del(struct tab *t, uint64_t key)
{
	size_t	 i, j, h, m;

	if (t->cap == 0 || t->k[i = tab_slot(t, key)] == 0)
		return;
	m = t->cap - 1;
	t->k[i] = 0;
	t->n--;
	for (j = (i + 1) & m; t->k[j] != 0; j = (j + 1) & m) {
		h = t->k[j] & m;
		/* Stays if its home lies cyclically in (i, j]. */
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		t->k[i] = t->k[j];
		t->v[i] = t->v[j];
		t->k[j] = 0;
		i = j;
	}
}

static void
tab_free(struct tab *t)
{
	free(t->k);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static uint64_t
map_key(uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff)
{
	uint64_t w[4] = { pid, addr, len, pgoff };
	uint64_t h = hash_bytes(w, sizeof(w), HASH_INIT);

	return h != 0 ? h : 1;
}

int
flightrec_init(struct recorder *r, uint64_t from)
{
	flight_init(&r->fl, (size_t)r->conf->flight_size, 0, from);
	r->flight_pruned_at = from;
	if ((r->flight_born = calloc(1, sizeof(*r->flight_born))) == NULL)
		return -ENOMEM;
	return 0;
}

void
flightrec_free(struct recorder *r)
{
	flight_free(&r->fl);
	if (r->flight_born != NULL)
		tab_free(r->flight_born);
	free(r->flight_born);
	r->flight_born = NULL;
}

void
flightrec_keep(struct recorder *r, const void *buf, size_t len, uint64_t nrec)
{
	/* Counted in the buffer (status): too big, out of memory. */
	flight_append(&r->fl, buf, len, nrec, r->limit);
	r->wrote = 1;
}

/* ---- an image ends: its state into the buffer ---------------------------- */

static void
ended_flush(struct ended *e)
{
	if (e->s->h.size == sizeof(*e->s))
		return;
	flight_append(&e->r->fl, e->s, e->s->h.size, 1, e->bound);
	e->r->st.flight_states++;
	e->r->st.flight_state_bytes += e->s->h.size;
	e->s->h.size = sizeof(*e->s);
}

static int
ended_emit_cb(const void *rec, size_t len, const struct model_proc *p,
    const struct model_map *mm, void *arg)
{
	struct ended *e = arg;

	if (e->s->h.size + len > STATE_MAX)
		ended_flush(e);
	memcpy(e->rec + e->s->h.size, rec, len);
	e->s->h.size = (uint16_t)(e->s->h.size + len);
	return 0;
}

void
flightrec_born(struct recorder *r, uint32_t pid, uint64_t time)
{
	if (time != 0 && tab_put(r->flight_born, (uint64_t)pid + 1, time) < 0)
		r->fl.bad++;	/* its state will be kept whatever its life: only room */
}

void
flightrec_ended(struct recorder *r, const struct model_proc *p, uint64_t time)
{
	struct record_sample_id sid = { .id = r->ev.sb_ids[0], .time = time };
	struct synth_host host = { .mnt_ns = r->host_mnt_ns, .user_ns = r->init_user_ns };
	struct ended *e;
	struct binary *b;
	uint64_t born;
	size_t	 i;

	if (p == NULL)
		return;
	if (tab_get(r->flight_born, (uint64_t)p->pid + 1, &born)) {
		tab_del(r->flight_born, (uint64_t)p->pid + 1);
		if (time >= born && time - born < STATE_MIN_LIFE_NS) {
			r->st.flight_states_short++;
			return;
		}
	}
	if (p->nthreads == 0 && p->nmaps == 0)
		return;
	/* Its binaries were in use until TIME: the window's, if it holds TIME. */
	for (i = 0; i < p->nmaps; i++)
		if ((b = binaries_at(r->bins, p->maps[i].bin)) != NULL && b->flight_at < time) {
			b->flight_at = time;
			b->flight_pid = p->pid;
		}
	if ((e = malloc(sizeof(*e))) == NULL) {
		r->fl.bad++;		/* that process's state is not kept: counted */
		return;
	}
	e->r = r;
	e->s = (struct state_rec *)e->rec;
	memset(e->s, 0, sizeof(*e->s));
	e->s->h.type = FLIGHT_STATE;
	e->s->h.size = sizeof(*e->s);
	e->s->pid = p->pid;
	e->s->time = time;
	e->bound = time >= r->limit ? time + 1 : r->limit;
	synth_proc(p, &r->ev.sb_layout, &host, &sid, e->buf, ended_emit_cb, e);
	ended_flush(e);
	free(e);
}

/* ---- a snapshot ---------------------------------------------------------- */

/*
 * Could deleting closed segments make room for a snapshot?  Not if the
 * free space and every closed segment together hold less than the window
 * may take: its records as held (uncompressed: compressed they take
 * less, so it is written all the same) and a start state of the model's
 * size (a record and a name per map).  1 when the disk or the segments'
 * sizes are not known.
 */
static int
room_can_help(struct recorder *r)
{
	struct statvfs sv;
	uint64_t need, have;

	if (!r->usage.known || statvfs(r->segdir, &sv) == -1)
		return 1;
	need = r->fl.bytes + (uint64_t)r->model.nmaps * 128 + r->model.name_bytes;
	have = (uint64_t)sv.f_bavail * sv.f_frsize + r->usage.bytes;
	if (have >= need)
		return 1;
	log_warnx("flight recorder: the window needs up to %llu bytes, the disk has %llu free "
	    "and %llu in older segments: none is deleted for it",
	    (unsigned long long)need, (unsigned long long)sv.f_bavail * sv.f_frsize,
	    (unsigned long long)r->usage.bytes);
	return 0;
}

/* The record's time, or 0 if it has none. */
static uint64_t
rec_time(const struct recorder *r, const struct perf_event_header *h)
{
	uint64_t t;

	if (record_clock_time(h->type == PERF_RECORD_SAMPLE ? &r->ev.clock : &r->ev.sb_clock,
	    h, &t) < 0)
		return 0;
	return t;
}

/* What the window holds: births, execs, states, maps. */
static int
scan_cb(const struct perf_event_header *h, void *arg)
{
	struct snap *s = arg;
	const struct state_rec *st;
	struct record rec;
	uint64_t t;
	int	 rc = 0;

	if (h->type == FLIGHT_STATE) {
		st = (const struct state_rec *)h;
		if (st->time >= s->t0)
			rc = tab_put_min(&s->state, (uint64_t)st->pid + 1, st->time);
		goto out;
	}
	if (h->type == PERF_RECORD_SAMPLE || (t = rec_time(s->r, h)) < s->t0 ||
	    record_decode(h, h->size, &s->layout, &rec) < 0)
		return 0;
	switch (rec.type) {
	case PERF_RECORD_FORK:
		if (rec.task.pid != rec.task.ppid)
			rc = tab_put_min(&s->born, (uint64_t)rec.task.pid + 1, t);
		break;
	case PERF_RECORD_COMM:
		if (rec.misc & PERF_RECORD_MISC_COMM_EXEC)
			rc = tab_put_min(&s->born, (uint64_t)rec.comm.pid + 1, t);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (rec.mmap.pid != (uint32_t)-1)
			rc = tab_put_min(&s->maps, map_key(rec.mmap.pid, rec.mmap.addr,
			    rec.mmap.len, rec.mmap.pgoff), t);
		break;
	}
out:
	if (rc < 0)
		s->rc = rc;
	return rc < 0;
}

/* The state at T0 comes from STATE records (1), the model (0), or the window (-1). */
static int
state_source(const struct snap *s, uint32_t pid)
{
	uint64_t st, born;
	int	 has_born = tab_get(&s->born, (uint64_t)pid + 1, &born);

	if (tab_get(&s->state, (uint64_t)pid + 1, &st))
		return !has_born || st <= born ? 1 : -1;
	return has_born ? -1 : 0;
}

/*
 * Does a record of the window, stamped before BEFORE, map this (so that
 * the start state leaves it to that record)?  A state's maps are those of
 * an image that ended at its time: a record after it maps for the image
 * that came next, at the same place if it ran the same files without
 * address randomization, and brings nothing of the state's.
 */
static int
in_window(const struct snap *s, uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
    uint64_t before)
{
	uint64_t t;

	return tab_get(&s->maps, map_key(pid, addr, len, pgoff), &t) && t < before;
}

static int
keep_cb(const struct model_proc *p, const struct model_map *mm, void *arg)
{
	const struct snap *s = arg;

	if (mm == NULL)
		return state_source(s, p->pid) == 0;
	return !in_window(s, p->pid, mm->addr, mm->len, mm->pgoff, UINT64_MAX);
}

/* One record of a STATE of time ENDED, restamped T0: into the segment. */
static int
state_write(struct snap *s, const struct perf_event_header *h, uint64_t ended)
{
	struct recorder *r = s->r;
	struct record rec;
	int	 rc;

	if (h->size < sizeof(*h) ||
	    record_decode(h, h->size, &s->layout, &rec) < 0)
		return 0;
	if (rec.type == PERF_RECORD_MMAP2 && in_window(s, rec.mmap.pid, rec.mmap.addr,
	    rec.mmap.len, rec.mmap.pgoff, ended))
		return 0;
	memcpy(s->buf, h, h->size);
	if (record_set_time(s->buf, h->size, &r->ev.sb_layout, s->t0) < 0)
		return 0;
	if ((rc = segment_write(&r->seg, s->buf, h->size)) < 0)
		return rc;
	if (rec.type == PERF_RECORD_MMAP2 && rec.mmap.build_id_size > 0)
		rc = segment_add_buildid(&r->seg, rec.mmap.filename, rec.mmap.build_id,
		    rec.mmap.build_id_size, 0);
	return rc;
}

static int
states_cb(const struct perf_event_header *h, void *arg)
{
	struct snap *s = arg;
	const struct state_rec *st = (const struct state_rec *)h;
	const uint8_t *p, *end;
	struct perf_event_header in;
	uint64_t first;

	if (h->type != FLIGHT_STATE || state_source(s, st->pid) != 1 ||
	    !tab_get(&s->state, (uint64_t)st->pid + 1, &first) || first != st->time)
		return 0;
	s->states++;
	for (p = (const uint8_t *)(st + 1), end = (const uint8_t *)h + h->size;
	    p + sizeof(in) <= end; p += in.size) {
		memcpy(&in, p, sizeof(in));
		if (in.size < sizeof(in) || in.size > (size_t)(end - p))
			break;
		if ((s->rc = state_write(s, (const struct perf_event_header *)p, st->time)) < 0)
			return 1;
	}
	return 0;
}

static int
more_cb(struct segment *seg, void *arg)
{
	struct snap *s = arg;

	flight_foreach(&s->r->fl, states_cb, s);
	return s->rc;
}

/* The window's records, none older than T0. */
static int
data_cb(const struct perf_event_header *h, void *arg)
{
	struct snap *s = arg;
	struct recorder *r = s->r;
	struct record rec;
	uint64_t t;

	if (h->type == FLIGHT_STATE)
		return 0;
	t = rec_time(r, h);
	if (t != 0 && t < s->t0)
		return 0;
	if (h->type == PERF_RECORD_SAMPLE) {
		segment_note_sample(&r->seg, t);
		s->samples++;
	} else if (record_decode(h, h->size, &s->layout, &rec) == 0) {
		if (rec.type == PERF_RECORD_LOST)
			r->seg.lost += rec.lost.lost;
		else if ((rec.type == PERF_RECORD_MMAP2 || rec.type == PERF_RECORD_MMAP) &&
		    rec.mmap.build_id_size > 0 && (s->rc = segment_add_buildid(&r->seg,
		    rec.mmap.filename, rec.mmap.build_id, rec.mmap.build_id_size,
		    rec.mmap.pid == (uint32_t)-1)) < 0)
			return 1;
	}
	if ((s->rc = segment_write(&r->seg, h, h->size)) < 0)
		return 1;
	return 0;
}

/*
 * The index learns which binaries the segment references as it does in
 * continuous mode, by sightings while it is open: the start state's from
 * synth.c, the window's here (mapped, or in use by a process that ended,
 * at or after T0).
 */
static void
publish_window(struct recorder *r, uint64_t t0)
{
	struct binary *b;
	uint32_t id;

	for (id = 0; id < r->bins->n; id++)
		if ((b = binaries_at(r->bins, id)) != NULL && b->bidsize != 0 &&
		    b->flight_at >= t0)
			notify_seen(&r->notify, b, b->flight_pid, recorder_wall_at(b->flight_at));
}

int
flightrec_snapshot(struct recorder *r, uint64_t t_end)
{
	uint64_t age = r->conf->flight_age_ms * 1000000ULL;
	struct synth_filter filter;
	struct snap *s;
	int	 rc;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	s->r = r;
	record_layout_init(&s->layout, &r->attrs[1].attr);
	s->t0 = r->fl.from;
	if (age != 0 && t_end > age && t_end - age > s->t0)
		s->t0 = t_end - age;
	if (s->t0 >= t_end)
		s->t0 = t_end - 1;
	filter = (struct synth_filter){ .keep = keep_cb, .more = more_cb, .arg = s };
	if (flight_foreach(&r->fl, scan_cb, s) != 0) {
		rc = s->rc;
		goto out;
	}
	/*
	 * The buffer stays as it is if the segment cannot be made, or the
	 * window cannot be written whole (disk full, room made for every
	 * write first): the segment goes, and the next snapshot writes the
	 * window then, none of it lost.  Room is made by deleting the older
	 * snapshots only where that can help: a snapshot that could not be
	 * written with them all gone deleted every one and gave up all the
	 * same (found by a review).
	 */
	r->room_off = !room_can_help(r);
	if ((rc = recorder_open_segment(r, s->t0, &filter)) < 0)
		goto out;
	if ((s->rc = r->seg.start_rc) == 0)
		flight_foreach(&r->fl, data_cb, s);
	if (s->rc == 0)
		s->rc = segment_flush(&r->seg);
	if ((rc = s->rc) < 0) {
		errno = -rc;
		log_warn("%s: writing the window; the snapshot is given up", r->seg.partial);
		recorder_drop_segment(r);
		recorder_disk_trouble(r, rc);
		goto out;
	}
	publish_window(r, s->t0);
	/* A close that fails leaves the window whole on disk, to be repaired. */
	if ((rc = recorder_close_segment(r, t_end)) == 0)
		recorder_disk_recovered(r);
	log_info("flight recorder: snapshot of %.3f s, %llu samples, %llu states of ended "
	    "processes; %llu records dropped for space or age so far",
	    (double)(t_end - s->t0) / 1e9, (unsigned long long)s->samples,
	    (unsigned long long)s->states, (unsigned long long)r->fl.dropped_records);
	flight_reset(&r->fl, t_end);
out:
	r->room_off = 0;
	tab_free(&s->born);
	tab_free(&s->state);
	tab_free(&s->maps);
	free(s);
	return rc;
}
