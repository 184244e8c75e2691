/*
 * recorder.c - the recording core: the passes over the rings, the
 * segments and their rotation, and the recorder's events on the loop.
 *
 * A pass reads every ring up to a time limit and writes what it took to
 * the current segment:
 *
 *	side-band rings   merged by time into the model (sideband.c); a
 *	                  mapping waits there for its build-id read
 *	sampling rings    each copied in bulk, runs of whole records at once
 *	                  (ring_copy), in no order: perf sorts by time within
 *	                  a round
 *	FINISHED_ROUND    after a pass that read every ring, unless the
 *	                  side-band waits for a read below the limit: a round
 *	                  marker promises perf that nothing after it is older
 *	                  than the round before, and the mapping still to be
 *	                  written is; the round goes on into the next pass
 *
 * Time is cut, not the byte stream.  A pass consumes only records stamped
 * before now - RECORDER_MARGIN_NS and leaves younger ones in the rings: a
 * record takes far less than that from its time stamp to its place in the
 * ring, so everything stamped before the limit has been seen.  A rotation
 * at T reads up to T, closes the segment as [start, T), and opens the next
 * one at T with the model's state at T: each record lands in exactly one
 * segment and the ranges neither overlap nor leave gaps.  T is exact:
 * rotate_age after the segment began, or now - margin for the others; the
 * cut happens once the side-band is written up to T.
 *
 * When passes run (the loop, recorder_attach):
 *	a sampling ring's watermark, the drain timer     a full pass
 *	a side-band record arrives (a wake-up each)      a side-band pass: reads
 *	                                                 start; the side-band's
 *	                                                 wake-ups are then held
 *	                                                 off SB_HOLDOFF_MS while
 *	                                                 records keep coming
 *	the timer of the next thing due (a side-band     a side-band pass
 *	record old enough, a read's deadline, a cut)
 *	a read the side-band waits for is answered       a side-band pass
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
#include <linux/nsfs.h>

#include <event2/event.h>

#include "log.h"
#include "index_reader.h"
#include "procfs.h"
#include "procscan.h"
#include "perflimits.h"
#include "recorder.h"
#include "repair.h"
#include "wallclock.h"
#include "walltime.h"

/* A time stamp further ahead than this is garbage, not a reason to wait. */
#define FUTURE_NS		RECORDER_FUTURE_NS
/* The limit of the last pass at stop: every record. */
#define LIMIT_ALL		(UINT64_MAX - RECORDER_MARGIN_NS - FUTURE_NS)
/*
 * Side-band wake-ups after the first of a burst: at most one per hold-off,
 * SB_HOLDOFF_MS at first.  A wake-up of the loop is the main cost of the
 * side-band under an exec storm (each a context switch, costly in a VM,
 * and the resolver's worker woken with it); 5 ms still starts the build-id
 * read of a process that lives 10 ms while it lives, which only matters
 * for a file that changes soon after: a read started late is proven by
 * name while the file is unchanged.  So while a burst brings no news (every
 * answer a cached build-id proven again by name, none failed) the hold-off
 * doubles, up to [record] sideband_holdoff (80 ms by default: longer
 * costs fewer wake-ups, and a later read for a new file in a storm, whose
 * process may be gone by then); an answer that is news (a file read for
 * the first time, or one whose build-id could not be proven) brings it
 * back to SB_HOLDOFF_MS.  And the hold-off follows how full it left the
 * side-band rings: it doubles only while they were at most a quarter
 * full, stays while at most half full, and halves (down to
 * SB_HOLDOFF_MIN_MS) beyond; a ring over half full is also spilled into
 * memory (sideband_relieve), so that what waits never overflows it.
 */
#define SB_HOLDOFF_MIN_MS	1
#define SB_HOLDOFF_MS		5
/* Flight mode: binaries no process maps are forgotten this often (no rotation does it). */
#define FLIGHT_PRUNE_NS		(60ULL * 1000 * 1000 * 1000)

struct recorder_loop {
	struct event_base *base;
	struct event	**sample_evs;	/* per CPU: a sampling ring's watermark */
	struct event	**sb_evs;	/* per CPU: a side-band record */
	struct event	*answer_ev;	/* the resolver's eventfd */
	struct event	*drain_ev;	/* drain_interval */
	uint64_t	 drain_ms;	/* the period drain_ev is armed with */
	struct event	*holdoff_ev;
	struct event	*tick_ev;	/* the next thing due */
	int		 sb_watched;
};

uint64_t
recorder_wall_at(uint64_t mono)
{
	struct timespec w, m;
	uint64_t wn, mn;

	clock_gettime(CLOCK_REALTIME, &w);
	clock_gettime(CLOCK_MONOTONIC, &m);
	wn = (uint64_t)ts_ns(&w);
	mn = (uint64_t)ts_ns(&m);
	return wn - (mn - mono);
}

void
recorder_look(struct recorder *r)
{
	int64_t	 wall = wallclock_look(&r->now);

	r->wall_look = r->now;
	r->wall_off = wall - (int64_t)r->now;
}

struct bid_when
recorder_proof_when(const struct recorder *r, const struct record *rec)
{
	struct bid_when w = { 0, 0, 0, 0 };

	if (!rec->has_sid || rec->sid.time == 0 || r->wall_look == 0)
		return w;
	w.wall_ns = (uint64_t)((int64_t)rec->sid.time + r->wall_off);
	w.since_ns = rec->sid.time < r->wall_look ? rec->sid.time : r->wall_look;
	w.named_ns = w.wall_ns;		/* the kernel named the file as it mapped it */
	return w;
}

static void prune_binaries(struct recorder *);

/*
 * The provenance of what process P maps (binaries.h NS).  The model knows
 * a process's namespaces from the start's scan, its parent, or a
 * NAMESPACES record; one it does not (its FORK was lost in an overflow, or
 * came before its parent was seen) is looked up in /proc once, the
 * kernel's files.  One gone by then is of no known namespace, which is
 * never the host's: a lost record must not let a user's namespace write
 * the host's history.  Nor must a pid reused since: a process under it
 * that started after the record at its turn is another's.  What the look
 * finds is the model's from then on (unknown: mount namespace
 * INDEX_MNT_NS_UNKNOWN, which binaries_ns gives back, and which its
 * children inherit), and it goes into the stream as a NAMESPACES record
 * before the record at its turn: the start state of the next segment
 * carries it (synth.c) and a rebuild of the index from the segment
 * (index/rebuild.c) reads the same provenance, never the host's for a
 * process the segment shows no FORK of.
 * So is one whose namespaces the model learned before a side-band record
 * may have been lost (model.h NS_EPOCH, sideband.c): a NAMESPACES record
 * among them (a user's unshare) would have left it the host's.  Looked
 * at after the mapping, not at it: an unprivileged process leaves a
 * user's namespace for no namespace of the host's, so what the look
 * finds is never more trusted than what was true at the mapping.
 */
static void
write_ns_as(struct recorder *r, uint32_t pid, uint64_t mnt_ns, uint64_t user_ns)
{
	struct record_sample_id sid;
	uint8_t	 buf[64 + 16 * 16 + sizeof(sid)];
	size_t	 n;

	if (r->turn_rec == NULL || !r->turn_rec->has_sid)
		return;
	sid = r->turn_rec->sid;
	sid.pid = sid.tid = pid;
	n = record_build_namespaces(buf, pid, pid, mnt_ns, user_ns, &r->ev.sb_layout, &sid);
	recorder_write(r, buf, n, 1);
}

static void
write_ns(struct recorder *r, const struct model_proc *p)
{
	write_ns_as(r, p->pid, p->mnt_ns, p->user_ns);
}

void
recorder_write_foreign(struct recorder *r, const struct model_proc *p, const void *rec,
    size_t len)
{
	write_ns_as(r, p->pid, INDEX_MNT_NS_UNKNOWN, 0);
	recorder_write(r, rec, len, 1);
	write_ns(r, p);
}

static uint64_t
proc_ns(struct recorder *r, const struct model_proc *p)
{
	if (r->host_mnt_ns == 0)
		return 0;	/* no namespaces known at all: every binary is the host's */
	if (p == NULL)
		return INDEX_MNT_NS_UNKNOWN;
	if (p->mnt_ns == 0 || p->ns_epoch != r->model.ns_epoch) {
		if (procscan_ns(&r->model, p->pid, 0, r->turn_t) == 0)
			r->st.ns_looked_up++;
		else if (model_set_ns(&r->model, p->pid, INDEX_MNT_NS_UNKNOWN, 0) < 0)
			return INDEX_MNT_NS_UNKNOWN;
		write_ns(r, p);
	}
	return binaries_ns(r->host_mnt_ns, r->init_user_ns, p->mnt_ns, p->user_ns);
}

/*
 * The uid owning user namespace USER_NS of PID, for the label of what it
 * maps; -1 when PID is gone or no longer in it.  /proc/PID/ns/user is the
 * kernel's, not a user's path: opening it does not block.
 */
static int32_t
ns_owner_uid(struct recorder *r, uint32_t pid, uint64_t user_ns)
{
	char	 path[64];
	struct stat st;
	uid_t	 uid;
	unsigned i;
	int	 fd;

	if (user_ns == 0)
		return -1;	/* not known (and an unused slot's key) */
	for (i = 0; i < sizeof(r->ns_owner) / sizeof(r->ns_owner[0]); i++)
		if (r->ns_owner[i].user_ns == user_ns)
			return r->ns_owner[i].uid;
	snprintf(path, sizeof(path), "/proc/%u/ns/user", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &st) == -1 || (uint64_t)st.st_ino != user_ns ||
	    ioctl(fd, NS_GET_OWNER_UID, &uid) == -1) {
		close(fd);
		return -1;
	}
	close(fd);
	i = r->ns_owner_next++ % (sizeof(r->ns_owner) / sizeof(r->ns_owner[0]));
	r->ns_owner[i].user_ns = user_ns;
	r->ns_owner[i].uid = (int32_t)uid;
	return (int32_t)uid;
}

/*
 * The provenance of a file process P maps, FLAGS what its read proved of
 * its name (record.h MMAP_NAME_*): P's (proc_ns), unless recorder_foreign.
 */
int
recorder_foreign(struct recorder *r, const struct model_proc *p, unsigned flags)
{
	return (flags & MMAP_NAME_FOREIGN) && p != NULL && r->host_mnt_ns != 0 &&
	    proc_ns(r, p) == 0 && p->mnt_ns == r->host_mnt_ns;
}

static uint64_t
file_ns(struct recorder *r, const struct model_proc *p, unsigned flags)
{
	return recorder_foreign(r, p, flags) ? INDEX_MNT_NS_UNKNOWN : proc_ns(r, p);
}

/*
 * The binary of (NAME, ID) as process P maps it, with its provenance
 * (FLAGS: record.h MMAP_NAME_*).
 */
struct binary *
recorder_binary(struct recorder *r, const struct model_proc *p, const char *name,
    unsigned flags, const uint8_t *id, uint8_t idsize)
{
	struct binary *b;
	uint64_t ns = file_ns(r, p, flags);
	int	 created;

	if ((b = binaries_get_ns(r->bins, name, flags & MMAP_NAME_UNLINKED, id, idsize, ns,
	    &created)) != NULL &&
	    created && ns != 0)
		b->ns_uid = p != NULL && ns != INDEX_MNT_NS_UNKNOWN ?
		    ns_owner_uid(r, p->pid, p->user_ns) : -1;
	return b;
}

struct binary *
recorder_file_binary(struct recorder *r, const struct model_proc *p, struct model_file *f)
{
	struct binary *b;
	uint64_t ns = file_ns(r, p, f->name_flags);

	/* The entry F remembers, if it still is F's (an id is reused after a prune). */
	if (f->bin != BINARY_NONE && f->bin_ns == ns &&
	    (b = binaries_at(r->bins, f->bin)) != NULL &&
	    binaries_match(b, f->name, f->name_flags & MMAP_NAME_UNLINKED, f->build_id,
	    f->build_id_size, ns))
		return b;
	if ((b = recorder_binary(r, p, f->name, f->name_flags, f->build_id,
	    f->build_id_size)) == NULL)
		return NULL;
	f->bin = b->id;
	f->bin_ns = ns;
	return b;
}

/* Wall clock of a record, from the current segment's reference pair. */
uint64_t
recorder_wall(struct recorder *r, const struct record *rec)
{
	if (!rec->has_sid || rec->sid.time == 0)
		return recorder_wall_at(mono_ns());
	if (!r->seg.open)
		return recorder_wall_at(rec->sid.time);
	return (uint64_t)((int64_t)r->seg.wall_start_ns +
	    ((int64_t)rec->sid.time - (int64_t)r->seg.t_start));
}

/*
 * The disk is full: make room the way retention would, by deleting the
 * oldest closed segment (never the open one).  Returns 0 if one was
 * deleted.  With nothing left to delete, it does not look again for a
 * second, so a full disk costs one failed write per second, not one per
 * record.
 */
static int
make_room(void *arg)
{
	struct recorder *r = arg;
	uint64_t now = mono_ns();

	if (r->room_off)
		return -1;
	if (r->room_gone_at != 0 && now - r->room_gone_at < 1000000000ULL)
		return -1;
	if (segment_delete_oldest(r->segdir, &r->notify, &r->usage) == 1) {
		r->st.deleted_for_space++;
		r->room_gone_at = 0;
		return 0;
	}
	r->room_gone_at = now;
	return -1;
}

/* A write failed with RC: enter the disk-full state (logged once). */
void
recorder_disk_trouble(struct recorder *r, int rc)
{
	if (r->disk_error != 0)
		return;
	r->disk_error = -rc;
	errno = -rc;
	log_warn("%s: cannot write%s%s", r->seg.open ? r->seg.partial : r->segdir,
	    segment_space_error(rc) ? "; deleting the oldest segments to make room" : "",
	    r->flight_on ? "; the window stays in memory for the next snapshot" :
	    segment_space_error(rc) ? ", dropping records while there is none" :
	    "; dropping records");
}

/* A flush went through: leave the disk-full state. */
void
recorder_disk_recovered(struct recorder *r)
{
	if (r->disk_error == 0)
		return;
	log_info("%s: writing again; %llu records could not be written meanwhile",
	    r->segdir, (unsigned long long)r->st.write_errors);
	r->disk_error = 0;
	r->room_gone_at = 0;
}

void
recorder_write(struct recorder *r, const void *buf, size_t len, uint64_t nrec)
{
	int	 rc;

	if (r->flight_on) {
		flightrec_keep(r, buf, len, nrec);
		return;
	}
	if (!r->seg.open) {
		r->st.write_errors += nrec;
		return;
	}
	if ((rc = segment_append(&r->seg, buf, len, nrec)) < 0) {	/* room made there */
		r->st.write_errors += nrec;
		recorder_disk_trouble(r, rc);
		return;
	}
	r->st.bytes += len;
	r->wrote = 1;
}

/* 1 when a record stamped T is left for later, 0 when it is taken now. */
int
recorder_not_yet(const struct recorder *r, uint64_t t)
{
	/*
	 * A stamp from the far future (after the pass began, by more than a
	 * second): taken as is, or it would hold its ring for ever.  From the
	 * pass's clock, not its limit: a cut the loop came late to is a
	 * limit in the past, and records of the next segment are not bogus.
	 */
	if (t >= r->future_at)
		return 0;
	return t >= r->limit ||		/* too young: next pass */
	    t > r->bound;		/* another ring has older records: those first */
}

/* ---- the sampling rings: runs of whole records ------------------------ */

static int
sample_pick_cb(const struct perf_event_header *h, void *arg)
{
	struct recorder *r = arg;
	struct record rec;
	uint64_t t;

	if (record_clock_time(&r->ev.clock, h, &t) < 0)
		t = 0;
	else if (recorder_not_yet(r, t))
		return RING_STOP;
	r->st.records++;
	/* Samples are most of the stream: counted, copied, never decoded. */
	if (h->type == PERF_RECORD_SAMPLE) {
		r->st.samples++;
		segment_note_sample(&r->seg, t);
		return RING_TAKE;
	}
	if (record_decode(h, h->size, &r->ev.layout, &rec) < 0) {
		r->st.bad_records++;
		return RING_DROP;
	}
	if (rec.type == PERF_RECORD_LOST) {
		r->st.lost += rec.lost.lost;
		r->seg.lost += rec.lost.lost;
	} else if (rec.type == PERF_RECORD_LOST_SAMPLES)
		r->st.lost_samples += rec.lost_samples.lost;
	return RING_TAKE;
}

static void
sample_run_cb(const void *buf, size_t len, uint64_t nrec, void *arg)
{
	recorder_write(arg, buf, len, nrec);
}

static void
drain_samples(struct recorder *r)
{
	int	 i;

	r->bound = UINT64_MAX;
	for (i = 0; i < r->ev.ncpus; i++)
		ring_copy(&r->ev.cpus[i].ring, sample_pick_cb, sample_run_cb, r);
}

/* A round marker, unless the side-band holds the round open; then a flush. */
static void
end_round(struct recorder *r, int marker)
{
	struct perf_event_header fr = { PERF_RECORD_FINISHED_ROUND, 0, sizeof(fr) };
	int	 rc;

	if (r->flight_on && r->wrote && marker) {
		flightrec_keep(r, &fr, sizeof(fr), 0);
		r->wrote = 0;
	}
	if (!r->wrote || !r->seg.open)
		return;
	if (marker) {
		if (segment_write(&r->seg, &fr, sizeof(fr)) == 0)
			r->st.bytes += sizeof(fr);
		r->wrote = 0;
	}
	if ((rc = segment_flush(&r->seg)) < 0)
		recorder_disk_trouble(r, rc);
	else
		recorder_disk_recovered(r);
}

/* P has JIT code (anonymous executable memory): its perf-PID.map is watched. */
void
recorder_jit_watch(struct recorder *r, struct model_proc *p)
{
	if (p == NULL || p->jit)
		return;
	/* Not taken (the worker's queue full): told again at its next JIT mapping or a close. */
	p->jit_uid = JIT_UID_NONE;
	p->jit = notify_jit_mapped(&r->notify, p->pid, &p->jit_uid) == 0;
}

/*
 * A segment closes: the JIT maps of its live processes are kept with it.
 * First the processes of the state perfmapd started with are watched, all
 * of them, then one jit_close: the keep comes after the watches (capture
 * keeps a close's maps in one job, which must find them watched).
 */
struct jit_walk {
	struct recorder	*r;
	size_t		 jit;		/* processes with JIT code */
};

static int
jit_watch_cb(struct model_proc *p, void *arg)
{
	struct jit_walk *w = arg;
	size_t	 i;

	for (i = 0; i < p->nmaps && !p->jit; i++)
		if ((p->maps[i].prot & PROT_EXEC) && record_name_is_anon(p->maps[i].file->name)) {
			recorder_jit_watch(w->r, p);
			break;		/* offered once a close, taken or not */
		}
	w->jit += p->jit;
	return 0;
}

/* The cut T is reached: [start, T) is closed, the next segment begins at T. */
static void
complete_cut(struct recorder *r)
{
	uint64_t t = r->cut;
	int	 rc, orc;

	r->cut = 0;
	rc = r->flight_on ? flightrec_snapshot(r, t) : recorder_close_segment(r, t);
	switch (r->cut_why) {
	case ROTATE_SIZE: r->st.rotations_size++; break;
	case ROTATE_AGE: r->st.rotations_age++; break;
	case ROTATE_SIGNAL: r->st.rotations_signal++; break;
	case ROTATE_REQUEST: r->st.rotations_request++; break;
	case ROTATE_STOP: break;
	}
	orc = r->flight_on ? 0 : recorder_open_segment(r, t, NULL);
	/* the next segment's start, as its readers put it on the wall clock */
	r->last_cut_wall_ns = orc == 0 && r->seg.open ? r->seg.wall_start_ns : recorder_wall_at(t);
	prune_binaries(r);
	recorder_retention(r);
	r->cut_rc = rc < 0 ? rc : orc;
}

void
recorder_retention(struct recorder *r)
{
	const struct config *c = r->conf;

	segment_retention(r->segdir, c->keep_count, c->keep_size, c->keep_age_ms, &r->notify,
	    &r->usage);
}

/*
 * Where the open segment ends by age (rotate_age), or UINT64_MAX: never
 * before what a pass consumed already (a reload lowered rotate_age below
 * its age: it ends now; before, back at the new age, holding records past
 * its end, and a segment of a start state alone followed for each age
 * step it had been open).
 */
static uint64_t
age_end(const struct recorder *r)
{
	uint64_t t;

	if (r->flight_on || !r->seg.open || r->conf->rotate_age_ms == 0)
		return UINT64_MAX;
	t = r->seg.t_start + r->conf->rotate_age_ms * 1000000ULL;
	return t < r->passed ? r->passed : t;
}

/*
 * A pass up to LIMIT (capped at a pending cut).  FULL: the sampling rings
 * too, with the round marker; otherwise the side-band only.  Returns the
 * time the side-band waits at, or 0.
 */
static uint64_t
pass(struct recorder *r, uint64_t limit, int full)
{
	uint64_t blocked, t;

	/*
	 * An age boundary inside the window is a cut, whatever woke the pass
	 * (a ring's wake-up can come before the rotation's timer): no record
	 * stamped after it goes into the segment it ends.
	 */
	if (r->cut == 0 && (t = age_end(r)) < limit && t <= mono_ns()) {
		r->cut = t;
		r->cut_why = ROTATE_AGE;
		r->cut_rc = 0;
	}
	if (r->cut != 0 && r->cut < limit)
		limit = r->cut;
	blocked = sideband_drain(r, limit);
	if (limit > r->passed && limit < LIMIT_ALL)
		r->passed = limit;
	if (full || r->cut != 0) {
		r->limit = limit;
		drain_samples(r);
		end_round(r, blocked == 0 && limit >= r->round_floor);
	}
	if (r->cut != 0 && limit == r->cut && blocked == 0)
		complete_cut(r);
	return blocked;
}

void
recorder_drain(struct recorder *r)
{
	pass(r, mono_ns() - RECORDER_MARGIN_NS, 1);
}

/*
 * The events are per CPU, opened at start: an online CPU without one (one
 * brought online since) is not sampled, and the log says so at each
 * change of the set.
 */
static void
unsampled_cpus(struct recorder *r)
{
	int	*cpus, n, i, k, missing = 0, first = -1;

	if ((n = events_online_cpus(&cpus)) < 0)
		return;
	for (i = 0; i < n; i++) {
		for (k = 0; k < r->ev.ncpus && r->ev.cpus[k].cpu != cpus[i]; k++)
			;
		if (k == r->ev.ncpus && missing++ == 0)
			first = cpus[i];
	}
	free(cpus);
	if (missing > 0)
		log_warnx("%d online CPUs have no events (cpu %d%s): the events are opened at "
		    "start, and a CPU brought online since is not sampled until perfmapd "
		    "restarts", missing, first, missing > 1 ? " and more" : "");
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
		log_info("online CPUs now %s: CPU topology read again",
		    r->host.online != NULL ? r->host.online : "(not read)");
		unsampled_cpus(r);
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
	m->clockid_res_ns = (uint64_t)ts_ns(&res);
	/* The reference pair at this segment's start: dates for its timestamps. */
	mono = r->seg.t_start;
	m->clock_ref_ns = mono;
	m->clock_wall_ns = r->seg.wall_start_ns;
}

int
recorder_close_segment(struct recorder *r, uint64_t t_end)
{
	struct perfdata_meta meta;
	struct jit_walk jw = { .r = r };
	struct utsname u;
	struct stat st;
	char	 host[256];
	size_t	 nbids = r->seg.bids.n;
	int	 rc;

	if (!r->seg.open)
		return 0;
	model_foreach(&r->model, jit_watch_cb, &jw);
	if (jw.jit > 0)
		notify_jit_close(&r->notify, &r->seg);
	r->seg.t_end = t_end;
	fill_meta(r, &meta, &u, host, sizeof(host));
	if ((rc = segment_close(&r->seg, r->attrs, 2, &meta)) < 0) {
		char	 err[512];
		int	 rr = -1;

		errno = -rc;
		log_warn("%s: cannot finish segment", r->seg.partial);
		/*
		 * Out of space for its features and header: make room and
		 * finish it from its records, as after a crash (not one
		 * record whole: removed, and still an error).
		 */
		if (!segment_space_error(rc) || make_room(r) < 0 ||
		    (rr = repair_segment(r->seg.partial, err, sizeof(err))) != 0) {
			if (rr == 1)	/* the index's open segment is gone */
				notify_segment_deleted(&r->notify, strrchr(r->seg.path, '/') != NULL ?
				    strrchr(r->seg.path, '/') + 1 : r->seg.path);
			else		/* left for the repair at the stop or the next start */
				r->st.unfinished++;
			return rc;
		}
	}
	r->st.segments++;
	snprintf(r->last_closed, sizeof(r->last_closed), "%s", r->seg.path);
	r->last_closed_seq = r->seg.seq;
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

void
recorder_drop_segment(struct recorder *r)
{
	const char *base = strrchr(r->seg.path, '/');

	if (!r->seg.open)
		return;
	segment_abandon(&r->seg);
	if (unlink(r->seg.partial) == -1 && errno != ENOENT)
		log_warn("%s: unlink", r->seg.partial);
	notify_segment_deleted(&r->notify, base != NULL ? base + 1 : r->seg.path);
}

int
recorder_open_segment(struct recorder *r, uint64_t t_start, const struct synth_filter *filter)
{
	struct synth_stats ss;
	struct synth_args sa;
	struct synth_host host = { .mnt_ns = r->host_mnt_ns, .user_ns = r->init_user_ns };
	uint64_t t0 = mono_ns();
	int	 rc, tries;

	for (tries = 0; ; tries++) {
		rc = segment_open(&r->seg, r->segdir, r->seq + 1, t_start, recorder_wall_at(t_start),
		    r->attrs, 2);
		if (rc == 0 || !segment_space_error(rc) || tries == 8 || make_room(r) < 0)
			break;
	}
	if (rc < 0) {
		recorder_disk_trouble(r, rc);
		return rc;
	}
	r->seq++;
	r->seg.pd.sync = r->conf->segment_sync;
	r->seg.room = make_room;	/* every writer's: the start state's, a snapshot's */
	r->seg.room_arg = r;
	/* From the first record on, the start state included: perf reads it decompressed. */
	if (r->conf->compress == COMPRESS_ZSTD &&
	    perfdata_compress(&r->seg.pd, (int)r->conf->compress_level) < 0)
		log_warnx("%s: out of memory to compress: written uncompressed", r->seg.partial);
	kinfo_free(&r->kinfo);
	kinfo_load(&r->kinfo);
	if (r->kinfo.text == 0 && !r->kallsyms_warned) {
		r->kallsyms_warned = 1;
		log_warnx("/proc/kallsyms names no _text (unreadable: a sandbox that hides it, "
		    "as systemd's ProtectKernelTunables=, or addresses hidden without "
		    "CAP_SYSLOG): segments have no [kernel.kallsyms] map, and kernel samples "
		    "cannot be symbolized");
	}
	r->kinfo.vdso = &r->vdso;
	notify_segment_opened(&r->notify, &r->seg, &r->kinfo);
	sa = (struct synth_args){ .layout = &r->ev.sb_layout, .id = r->ev.sb_ids[0],
	    .time = t_start, .wall_ns = r->seg.wall_start_ns, .bins = r->bins,
	    .notify = &r->notify, .filter = filter, .host = &host };
	rc = synth_write(&r->seg, &r->model, &r->kinfo, &sa, &ss);
	if (rc < 0) {
		errno = -rc;
		if (r->disk_error == 0)
			log_warn("%s: writing the initial state", r->seg.partial);
		/*
		 * Records after a start state cut short would have no maps, no
		 * comm, for a whole rotate_age: the segment goes, and is opened
		 * again once there is room (recorder_check_rotate, at most once
		 * a second: each try synthesizes the whole model).  No segment
		 * is open then, as when the disk refuses the file itself: not
		 * an error of the cut that came before (a snapshot's segment
		 * was written whole), nor of the start.  A flight snapshot
		 * (FILTER) says so to its caller (start_rc).
		 */
		if (filter == NULL) {
			recorder_drop_segment(r);
			recorder_disk_trouble(r, rc);
			r->reopen_at = mono_ns() + REOPEN_GAP_NS;
			return 0;
		}
	}
	r->seg.start_rc = rc;
	/* On disk now: a crash any time later leaves a segment that repairs to a useful one. */
	if ((rc = segment_flush(&r->seg)) < 0) {
		errno = -rc;
		log_warn("%s: cannot write the initial state", r->seg.partial);
		if (r->seg.start_rc == 0)
			r->seg.start_rc = rc;
	}
	/*
	 * The start state grows with the host, not with what was recorded: on
	 * a host with millions of maps it alone may pass rotate_size, and
	 * every drain tick would rotate.  Only what follows it counts (taken
	 * after the flush: compressed, the staged records count from there).
	 */
	r->seg.start_size = r->seg.pd.data_size;
	log_debug("opened %s: %llu processes, %llu threads, %llu maps synthesized in %llu us",
	    r->seg.partial, (unsigned long long)ss.procs, (unsigned long long)ss.threads,
	    (unsigned long long)ss.maps, (unsigned long long)((mono_ns() - t0) / 1000));
	return 0;
}

/*
 * After a rotation: the binaries no live process maps and the new segment
 * does not reference are forgotten (binaries.h), the listeners told
 * first, so that the table holds what is live, not every binary since the
 * start.
 */
static int
prune_mark_cb(struct model_proc *p, void *arg)
{
	struct recorder *r = arg;
	struct binary *b;
	size_t	 i;

	for (i = 0; i < p->nmaps; i++)
		if ((b = binaries_at(r->bins, p->maps[i].bin)) != NULL)
			b->keep = 1;
	return 0;
}

static int
prune_keep_cb(const struct binary *b, void *arg)
{
	const struct recorder *r = arg;

	return b->keep || b->kind != BINARY_USER || (r->seg.open && b->seg_seq == r->seg.seq) ||
	    (r->flight_on && b->flight_at >= r->fl.from);	/* the next snapshot's */
}

static void
prune_gone_cb(const struct binary *b, void *arg)
{
	struct recorder *r = arg;

	notify_binary_gone(&r->notify, b);
}

static void
prune_binaries(struct recorder *r)
{
	size_t	 n;

	if (r->model.bin_maps_lost && model_bin_recount(&r->model) < 0)
		log_warnx("model: out of memory counting binaries' maps");
	model_foreach(&r->model, prune_mark_cb, r);
	if ((n = binaries_prune(r->bins, prune_keep_cb, prune_gone_cb, r)) > 0) {
		log_debug("forgot %zu binaries no process maps; %zu left", n,
		    binaries_live(r->bins));
	}
}

int
recorder_rotate(struct recorder *r, enum rotate_reason why)
{
	uint64_t t;
	int	 wait = why == ROTATE_SIGNAL || why == ROTATE_REQUEST;

	if (r->cut == 0) {
		/* Exactly rotate_age after the start, or a little in the past. */
		t = why == ROTATE_AGE ? age_end(r) : mono_ns() - RECORDER_MARGIN_NS;
		if (r->flight_on && t <= r->fl.from)	/* a window of at least 1 ns */
			t = r->fl.from + 1;
		else if (!r->flight_on && t <= r->seg.t_start)
			t = r->seg.t_start + 1;
		r->cut = t;
		r->cut_why = why;
		r->cut_rc = 0;
	}
	for (;;) {
		pass(r, mono_ns() - RECORDER_MARGIN_NS, 1);
		if (r->cut == 0)
			return r->cut_rc;
		if (!wait)
			return 0;
		/* Bounded: every read is answered or given up within RESOLVE_TIMEOUT_MS. */
		sideband_wait(r);
	}
}

void
recorder_check_rotate(struct recorder *r)
{
	const struct config *c = r->conf;
	uint64_t now, t;

	if (r->cut != 0)
		return;		/* one is under way */
	if (r->flight_on) {
		/* No rotation: records age out of the window, binaries out of the table. */
		now = mono_ns();
		if (c->flight_age_ms != 0 && now > c->flight_age_ms * 1000000ULL + RECORDER_MARGIN_NS)
			flight_expire(&r->fl, now - RECORDER_MARGIN_NS - c->flight_age_ms * 1000000ULL);
		if (now - r->flight_pruned_at >= FLIGHT_PRUNE_NS) {
			prune_binaries(r);
			r->flight_pruned_at = now;
		}
		return;
	}
	if (!r->seg.open) {
		/*
		 * A segment could not be opened (disk full?): try again, from
		 * where the passes stopped taking records (they went nowhere):
		 * those stamped since are still in the rings, and go into it,
		 * after its start state, not before.  Where the side-band
		 * waits for a read, if earlier: the model (the start state)
		 * is as it stood then, and its records from then on follow.
		 */
		now = mono_ns();
		if (now < r->reopen_at)
			return;		/* a start state that did not fit, a moment ago */
		t = r->limit != 0 && r->limit < now ? r->limit : now;
		if (r->blocked > 1 && r->blocked < t)	/* (1: a record of no time waits) */
			t = r->blocked;
		if (recorder_open_segment(r, t, NULL) == 0)
			recorder_retention(r);
		return;
	}
	if (c->rotate_size != 0 &&
	    r->seg.pd.data_size - r->seg.start_size >= c->rotate_size)
		recorder_rotate(r, ROTATE_SIZE);
	else if (mono_ns() - RECORDER_MARGIN_NS >= age_end(r))
		recorder_rotate(r, ROTATE_AGE);
}

/* ---- the loop ------------------------------------------------------------- */

/*
 * When the recorder next needs a pass without a ring waking it.  While a
 * burst of side-band records is held off, the hold-off timer's passes do
 * the side-band's work: only a read the side-band waits for counts then.
 */
static uint64_t
due(struct recorder *r)
{
	uint64_t d, t;

	if (r->loop->sb_watched || r->blocked != 0)
		d = sideband_due(r);
	else
		d = UINT64_MAX;

	if (r->cut != 0 && r->blocked == 0 && r->cut + RECORDER_MARGIN_NS + 1 < d)
		d = r->cut + RECORDER_MARGIN_NS + 1;
	if (r->cut == 0 && (t = age_end(r)) != UINT64_MAX && t + RECORDER_MARGIN_NS < d)
		d = t + RECORDER_MARGIN_NS;
	return d;
}

/* After anything the recorder did on the loop: rotation, spare readers, the timer. */
static void
after(struct recorder *r)
{
	struct recorder_loop *l = r->loop;
	struct timeval tv;
	uint64_t d, now;

	recorder_check_rotate(r);
	sideband_relieve(r);		/* what waits does not overflow the kernel's rings */
	now = mono_ns();
	resolver_kick(r->res);		/* files to close, reads started by a pass */
	resolver_check(r->res, now);
	if ((d = due(r)) == UINT64_MAX) {
		evtimer_del(l->tick_ev);
		return;
	}
	d = d > now ? d - now : 0;
	tv.tv_sec = (time_t)(d / 1000000000ULL);
	tv.tv_usec = (suseconds_t)(d % 1000000000ULL / 1000);
	evtimer_add(l->tick_ev, &tv);
}

static void
sample_ready_cb(evutil_socket_t fd, short what, void *arg)
{
	recorder_drain(arg);
	after(arg);
}

static void
drain_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct recorder *r = arg;

	recorder_drain(r);
	notify_tick(&r->notify);
	if (notify_reannounce(&r->notify))
		binaries_unmark(r->bins);
	after(r);
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct recorder *r = arg;

	pass(r, mono_ns() - RECORDER_MARGIN_NS, 0);
	after(r);
}

static void
answer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct recorder *r = arg;

	resolver_ack(r->res);
	if (r->blocked != 0)
		pass(r, mono_ns() - RECORDER_MARGIN_NS, 0);
	after(r);
}

static void
sb_watch(struct recorder_loop *l, int ncpus, int on)
{
	int	 i;

	if (l->sb_watched == on)
		return;
	for (i = 0; i < ncpus; i++)
		if (on)
			event_add(l->sb_evs[i], NULL);
		else
			event_del(l->sb_evs[i]);
	l->sb_watched = on;
}

/*
 * A side-band record arrived: start its read now, and hold the side-band's
 * wake-ups off for SB_HOLDOFF_MS, looking again then, for as long as
 * records keep coming (an exec storm wakes the loop a few dozen times a
 * second, not once per record); the hold-off grows while nothing new
 * comes (SB_HOLDOFF_MS above).
 */
static void
holdoff_arm(struct recorder *r)
{
	struct timeval tv = { r->sb_holdoff_ms / 1000, r->sb_holdoff_ms % 1000 * 1000 };

	evtimer_add(r->loop->holdoff_ev, &tv);
}

static void
sb_ready_cb(evutil_socket_t fd, short what, void *arg)
{
	struct recorder *r = arg;

	/* Awake anyway: what is old enough is written too (no tick of its own). */
	r->sb_news = 0;
	pass(r, mono_ns() - RECORDER_MARGIN_NS, 0);
	sb_watch(r->loop, r->ev.ncpus, 0);
	r->sb_holdoff_ms = SB_HOLDOFF_MS;
	holdoff_arm(r);
	after(r);
}

static void
holdoff_cb(evutil_socket_t fd, short what, void *arg)
{
	struct recorder *r = arg;

	if (sideband_unseen(r)) {
		/* How full this hold-off left the fullest side-band ring. */
		uint64_t fill = sideband_fill(r), quarter = r->ev.sb_ring_size / 4;

		r->st.sb_wakeups++;
		pass(r, mono_ns() - RECORDER_MARGIN_NS, 0);
		if (r->sb_news != 0) {
			if (r->sb_holdoff_ms > SB_HOLDOFF_MS) {
				r->sb_holdoff_ms = SB_HOLDOFF_MS;
				r->st.sb_holdoff_news++;
			}
		} else if (fill <= quarter) {
			if ((uint64_t)r->sb_holdoff_ms * 2 <= r->conf->sb_holdoff_max_ms)
				r->sb_holdoff_ms *= 2;
			else
				r->sb_holdoff_ms = (int)r->conf->sb_holdoff_max_ms;
		} else if (fill > 2 * quarter && r->sb_holdoff_ms > SB_HOLDOFF_MIN_MS)
			r->sb_holdoff_ms /= 2;
		r->sb_news = 0;
		holdoff_arm(r);
	} else {
		r->sb_holdoff_ms = 0;		/* none: the burst is over */
		sb_watch(r->loop, r->ev.ncpus, 1);	/* quiet again: a wake-up per record */
	}
	after(r);
}

static void
loop_free(struct recorder *r)
{
	struct recorder_loop *l = r->loop;
	int	 i;

	if (l == NULL)
		return;
	for (i = 0; i < r->ev.ncpus; i++) {
		if (l->sample_evs != NULL && l->sample_evs[i] != NULL)
			event_free(l->sample_evs[i]);
		if (l->sb_evs != NULL && l->sb_evs[i] != NULL)
			event_free(l->sb_evs[i]);
	}
	free(l->sample_evs);
	free(l->sb_evs);
	if (l->answer_ev != NULL)
		event_free(l->answer_ev);
	if (l->drain_ev != NULL)
		event_free(l->drain_ev);
	if (l->holdoff_ev != NULL)
		event_free(l->holdoff_ev);
	if (l->tick_ev != NULL)
		event_free(l->tick_ev);
	free(l);
	r->loop = NULL;
}

int
recorder_attach(struct recorder *r, struct event_base *base)
{
	struct recorder_loop *l;
	int	 i, n = r->ev.ncpus;

	if ((l = r->loop = calloc(1, sizeof(*l))) == NULL ||
	    (l->sample_evs = calloc((size_t)n, sizeof(*l->sample_evs))) == NULL ||
	    (l->sb_evs = calloc((size_t)n, sizeof(*l->sb_evs))) == NULL)
		goto fail;
	l->base = base;
	for (i = 0; i < n; i++) {
		l->sample_evs[i] = event_new(base, r->ev.cpus[i].fd, EV_READ | EV_PERSIST,
		    sample_ready_cb, r);
		l->sb_evs[i] = event_new(base, r->ev.cpus[i].sb_fd, EV_READ | EV_PERSIST,
		    sb_ready_cb, r);
		if (l->sample_evs[i] == NULL || l->sb_evs[i] == NULL ||
		    event_add(l->sample_evs[i], NULL) == -1)
			goto fail;
	}
	sb_watch(l, n, 1);
	l->answer_ev = event_new(base, resolver_fd(r->res), EV_READ | EV_PERSIST, answer_cb, r);
	l->drain_ev = event_new(base, -1, EV_PERSIST, drain_timer_cb, r);
	l->holdoff_ev = evtimer_new(base, holdoff_cb, r);
	l->tick_ev = evtimer_new(base, tick_cb, r);
	if (l->answer_ev == NULL || l->drain_ev == NULL || l->holdoff_ev == NULL ||
	    l->tick_ev == NULL || event_add(l->answer_ev, NULL) == -1 ||
	    recorder_retime(r) < 0)
		goto fail;
	after(r);
	return 0;
fail:
	loop_free(r);
	return -1;
}

int
recorder_retime(struct recorder *r)
{
	struct recorder_loop *l = r->loop;
	const struct config *c = r->conf;
	uint64_t ms = c->drain_interval_ms;
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	/*
	 * The open segment writes as [segments] sync says now, and keep_*
	 * apply at once: lowered to free a full disk, they are not to wait
	 * for a rotation (never, with rotate_age and rotate_size 0).
	 */
	if (r->seg.open)
		r->seg.pd.sync = c->segment_sync;
	recorder_retention(r);
	if (l == NULL || l->drain_ms == ms)
		return 0;
	if (event_add(l->drain_ev, &tv) == -1)
		return -1;
	l->drain_ms = ms;
	return 0;
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
		if (mm->file->build_id_size == 0 ||
		    (b = recorder_file_binary(r, p, mm->file)) == NULL)
			continue;
		model_map_set_bin(&r->model, mm, b->id);
		if (b->mapped)
			continue;
		b->mapped = 1;
		model_map_record(p, mm, &m);
		notify_binary_new(&r->notify, b, &m, -1);
	}
	return 0;
}

/* Everything recorder_init and recorder_start set up, in reverse; safe on a partial start. */
static void
release(struct recorder *r)
{
	loop_free(r);
	sideband_free(r);
	flightrec_free(r);
	events_close(&r->ev);
	model_free(&r->model);
	kinfo_free(&r->kinfo);
	vdso_free(&r->vdso);
	hostinfo_free(&r->host);
}

/*
 * The events as segments present them.  The side-band's records are
 * written as MMAP2 (MMAP3 rewritten), in the build-id form exactly when a
 * build-id is known, the flag always truthful: its attr says build_id, so
 * that a reader decoding by attr (record.h) believes those flags and only
 * those.
 */
static void
present_attrs(struct recorder *r)
{
	struct perf_event_attr sb = r->ev.sb_attr;

	perf_attr_set_flag(&sb, PERF_ATTR_FLAG_MMAP3_BIT, 0);
	perf_attr_set_flag(&sb, PERF_ATTR_FLAG_BUILD_ID_BIT, 1);
	r->attrs[0] = (struct perfdata_attr){ .attr = r->ev.attr, .name = r->ev.name,
	    .ids = r->ev.ids, .nids = (size_t)r->ev.ncpus };
	r->attrs[1] = (struct perfdata_attr){ .attr = sb, .name = "dummy",
	    .ids = r->ev.sb_ids, .nids = (size_t)r->ev.ncpus };
}

int
recorder_init(struct recorder *r, const struct config *c, const char *state_dir,
    struct binaries *bins, int argc, char *const *argv, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->conf = c;
	r->flight_on = c->segment_mode == SEGMENT_FLIGHT;
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
	procfs_host_ns(&r->host_mnt_ns, &r->init_user_ns);
	if (r->host_mnt_ns == 0)
		log_warnx("/proc/self/ns: no namespaces; every mapping is taken as the host's");
	repair_all(r->segdir);
	r->seq = segment_last_seq(r->segdir);
	if (model_init(&r->model) < 0 || hostinfo_load(&r->host, NULL) < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	{
		int64_t	 mc;

		/* as many maps as a process can have, and no more (model.h) */
		if (perflimits_read("/proc/sys/vm", "max_map_count", &mc) == 0 && mc > 0)
			r->model.maps_max = (size_t)mc;
	}
	vdso_load(&r->vdso);
	if (events_open(&r->ev, c, err, errlen) < 0 || sideband_init(r, err, errlen) < 0)
		goto fail;
	present_attrs(r);
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

/*
 * During the start's /proc scan the loop does not run: every 10 ms what
 * waits in the rings is taken into memory (events_spill), read after it.
 */
static void
scan_tick(void *arg)
{
	struct recorder *r = arg;
	uint64_t now = mono_ns();

	if (now - r->spill_at < 10ULL * 1000 * 1000)
		return;
	r->spill_at = now;
	sideband_loss_look(r);		/* before the spill makes room */
	events_spill(&r->ev, &r->st.start_spilled, &r->st.start_spill_full);
}

/*
 * The scan reads each process in turn, some after the events began (t0):
 * seconds later on a big host.  A process that changed before the scan
 * began to read it (an exec, a new mapping: a side-band record of it
 * stamped before its scan_begin_ns) has a state that was not there at
 * t0; dated t0, its old image's samples of that time would be read
 * against the new image: another binary's functions, where the two share
 * addresses (non-PIE programs).  Such a process is dated (model.h): its
 * start state is stamped when the scan was done with it, and its samples
 * before have no map ("unknown", not wrong); its records of the time come
 * in the stream as ever.  One that changed while the scan read it (its
 * maps read over a wait for build-ids) may have been seen before or after
 * the change: its start state is left out until then (MODEL_UNREAD), or
 * the old image's, stamped after the exec, would be laid over the new.  A
 * child forked before its dated parent's stamp is dated too: perf makes a
 * forked process from its parent's maps of the time, which would lack the
 * parent's start state.  A side-band record lost during the scan (or a
 * side-band ring's share of the held records full) hides which processes
 * changed: then every process is dated.
 *
 * perf orders a round's records by time and flushes, at each round
 * marker, what is older than the round before's newest: the first round
 * (the start state) now reaches the latest such stamp, so no marker is
 * written before a pass has consumed every record up to it
 * (round_floor), or the records of the scan's time would come after it.
 */
struct dating {
	struct recorder	*r;
	int		 lost;
	int		 forks;		/* the FORK pass: children of dated parents */
	int		 more;		/* ... it dated one: another pass */
};

static int
dating_cb(const struct perf_event_header *h, void *arg)
{
	struct dating *d = arg;
	struct model_proc *p, *parent;
	struct record rec;
	uint32_t pid;
	int	 how;

	if (h->type == PERF_RECORD_LOST) {
		d->lost = 1;
		return 0;
	}
	if (d->forks ? h->type != PERF_RECORD_FORK : (h->type != PERF_RECORD_MMAP2 &&
	    h->type != PERF_RECORD_MMAP3 && h->type != PERF_RECORD_MMAP &&
	    !(h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC))))
		return 0;
	if (record_decode(h, h->size, &d->r->ev.sb_layout, &rec) < 0 || !rec.has_sid)
		return 0;
	if (d->forks) {
		/* a process, not a thread; its parent dated after the fork */
		if (rec.task.pid == rec.task.ppid ||
		    (parent = model_find(&d->r->model, rec.task.ppid)) == NULL ||
		    !parent->dated || rec.sid.time >= parent->scan_ns ||
		    (p = model_find(&d->r->model, rec.task.pid)) == NULL || p->dated ||
		    rec.sid.time >= p->scan_ns)
			return 0;
		p->dated = rec.sid.time < p->scan_begin_ns ? MODEL_DATED : MODEL_UNREAD;
		d->more = 1;
		return 0;
	}
	pid = rec.type == PERF_RECORD_COMM ? rec.comm.pid : rec.mmap.pid;
	if ((p = model_find(&d->r->model, pid)) == NULL || rec.sid.time >= p->scan_ns)
		return 0;
	if (rec.sid.time > p->changed_ns)
		p->changed_ns = rec.sid.time;	/* a fork before it copies no such state */
	how = rec.sid.time < p->scan_begin_ns ? MODEL_DATED : MODEL_UNREAD;
	if (how > p->dated)
		p->dated = how;
	return 0;
}

static int
dating_all_cb(struct model_proc *p, void *arg)
{
	if (p->scan_ns != 0 && !p->dated)
		p->dated = MODEL_DATED;
	p->changed_ns = p->scan_ns;	/* any time before its scan */
	return 0;
}

static int
dated_cb(struct model_proc *p, void *arg)
{
	struct recorder *r = arg;

	if (!p->dated)
		return 0;
	r->st.start_dated++;
	if (p->scan_ns > r->round_floor)
		r->round_floor = p->scan_ns;
	log_debug("pid %u changed %s the /proc scan read it: its start state is %s "
	    "%.3f s after the events' start", p->pid,
	    p->dated == MODEL_DATED ? "before" : "while",
	    p->dated == MODEL_DATED ? "dated" : "left out until",
	    (double)(p->scan_ns - r->start_mono_ns) / 1e9);
	return 0;
}

static void
date_changed(struct recorder *r)
{
	struct dating d = { r, 0, 0, 0 };
	int	 i, pass;

	for (i = 0; i < r->ev.ncpus; i++)
		d.lost |= r->ev.cpus[i].sb_ring.spill_full > 0;
	for (i = 0; i < r->ev.ncpus && !d.lost; i++)
		ring_scan(&r->ev.cpus[i].sb_ring, 0, dating_cb, &d);
	/* children of dated parents, and theirs: a pass per generation, a few at most */
	d.forks = 1;
	for (pass = 0, d.more = 1; d.more && !d.lost && pass < 8; pass++)
		for (i = 0, d.more = 0; i < r->ev.ncpus; i++)
			ring_scan(&r->ev.cpus[i].sb_ring, 0, dating_cb, &d);
	if (d.lost)
		model_foreach(&r->model, dating_all_cb, r);
	model_foreach(&r->model, dated_cb, r);
	if (r->st.start_dated > 0)
		log_info("start: %llu processes changed during the /proc scan%s: their start "
		    "state is dated when the scan read them", (unsigned long long)r->st.start_dated,
		    d.lost ? " (records were lost: every process is taken as changed)" : "");
}

int
recorder_start(struct recorder *r, char *err, size_t errlen)
{
	const struct config *c = r->conf;
	uint64_t t0;
	int	 n, rc, i;

	/* Enable before the scan: whatever changes during it is in the rings. */
	r->start_mono_ns = t0 = mono_ns();
	if ((rc = events_enable(&r->ev)) < 0) {
		snprintf(err, errlen, "PERF_EVENT_IOC_ENABLE: %s", strerror(-rc));
		goto fail;
	}
	log_info("events on; reading the processes' state from /proc");
	n = procscan_run(&r->model, r->res, r->st.unknown, scan_tick, r);
	for (i = 0; i < BIDC_NCAUSES; i++)
		r->st.mmaps_no_id += r->st.unknown[i];
	scan_tick(r);
	date_changed(r);
	model_foreach(&r->model, announce_model_cb, r);
	log_info("build-id mode %s, event %s at %u Hz%s on %d CPUs; %d processes, "
	    "%zu executable maps at start", events_mode_name(r->ev.mode), r->ev.name,
	    r->ev.frequency, c->callchain ? " with call chains" : "", r->ev.ncpus, n,
	    r->model.nmaps);
	if (r->st.start_spilled > 0)
		log_info("start: %llu bytes of records held in memory during the /proc scan%s",
		    (unsigned long long)r->st.start_spilled, r->st.start_spill_full > 0 ?
		    " (a ring's share full: the kernel may have dropped some)" : "");
	if (r->flight_on) {
		char	 size[32], age[32];

		if (flightrec_init(r, t0) < 0) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		config_format_size(c->flight_size, size, sizeof(size));
		config_format_duration(c->flight_age_ms, age, sizeof(age));
		log_info("flight recorder: the last %s%s%s of records in memory; a segment on "
		    "snapshot or SIGUSR2", size, c->flight_age_ms != 0 ? ", at most " : "",
		    c->flight_age_ms != 0 ? age : "");
	} else if (recorder_open_segment(r, t0, NULL) < 0) {
		snprintf(err, errlen, "%s: cannot create the first segment", r->segdir);
		goto fail;
	}
	recorder_retention(r);		/* what the last run left: keep_* now, and status's figures */
	return 0;
fail:
	release(r);
	return -1;
}

void
recorder_finish(struct recorder *r)
{
	for (;;) {
		uint64_t seq = r->seq;

		if (pass(r, LIMIT_ALL, 1) != 0 || r->cut != 0) {
			sideband_wait(r);
			continue;
		}
		/* a cut completed: what is stamped after it is still to take */
		if (r->seq == seq || !r->seg.open)
			break;
	}
}

int
recorder_stop(struct recorder *r)
{
	int	 rc = 0;

	loop_free(r);
	events_disable(&r->ev);
	if (r->flight_on)
		log_info("flight recorder: %llu records of the last window not written (no "
		    "snapshot at stop)", (unsigned long long)r->fl.records);
	if (r->seg.open) {
		/*
		 * Everything left, each read answered or given up (bounded); a
		 * rotation by age that is due comes first (pass): its cut stays
		 * exact.
		 */
		recorder_finish(r);
		recorder_close_segment(r, mono_ns());	/* a failure counts in unfinished */
	}
	if (r->st.unfinished > 0) {
		/*
		 * A close that failed left its .partial (the last one's, or a
		 * rotation's while the disk was full): the repair the next start
		 * would make, now, so that what was recorded reads at once.
		 */
		int	 left, n = repair_partials(r->segdir, &left);

		if (n > 0)
			log_info("stop: %d segment%s left unfinished by a failed write repaired", n,
			    n == 1 ? "" : "s");
		rc = left > 0 ? -1 : 0;
	}
	release(r);
	return rc;
}
