/*
 * cmd-status.c - "status": what the daemon records, where, and how it goes:
 * mode, event, CPUs, the current segment, counters, disk use, uptime, and
 * the build-id cache's capture figures, the daemon's memory; what the
 * start-up probes found and why the build-id mode follows; the perf limits
 * perfmapd shares with the host's other perf users (perflimits.h).
 */
#include <malloc.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "control.h"
#include "capture/capture.h"
#include "command.h"
#include "index/index.h"
#include "daemon.h"
#include "record/events.h"
#include "record/wallclock.h"
#include "proto.h"
#include "walltime.h"

static const char *
iso(uint64_t ns, char buf[32])
{
	walltime_format((int64_t)ns, buf, 32);
	return buf;
}

/* The file mappings left without a build-id, by cause (all causes, zeros too). */
static json_t *
unknown_causes(const struct recorder_stats *s)
{
	json_t	*o = json_object();
	int	 i;

	for (i = 1; i < BIDC_NCAUSES; i++)
		json_object_set_new(o, buildid_cause_name(i), json_integer((json_int_t)s->unknown[i]));
	return o;
}

/* The userspace build-id reads: requests, timeouts, threads, the cache. */
static json_t *
resolver_json(struct resolver *res)
{
	struct resolver_stats rs;

	resolver_stats(res, &rs);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:I, s:I, s:I, s:I, s:I, s:I}",
	    "requests", (json_int_t)rs.requests,
	    "timeouts", (json_int_t)rs.timeouts, "threads", (json_int_t)rs.workers,
	    "threads_stuck", (json_int_t)rs.stuck, "reads", (json_int_t)rs.reads,
	    "cache_hits", (json_int_t)rs.hits, "pinned", (json_int_t)rs.pinned,
	    "pins_max", RESOLVER_PINS,
	    "pins", (json_int_t)rs.pins, "pins_dropped", (json_int_t)rs.pins_dropped,
	    "clock_steps", (json_int_t)wallclock_steps(),
	    "clock_looks_slow", (json_int_t)wallclock_slow_looks(),
	    "user_full", (json_int_t)rs.user_full, "uid_looks", (json_int_t)rs.uid_looks);
}

/* The probes' answers and the shared perf limits (perfmapd(8), "Other perf users"). */
static void
status_neighbours(struct perfmapd *d, json_t *out)
{
	const struct events *e = &d->rec.ev;
	const struct probe_report *p = &e->probe;
	struct perflimits *l = &d->limits;
	struct perflimits_mlock m;

	perflimits_check(l, d->rec.ev.frequency);
	perflimits_mlock(l, events_locked_bytes(e), (int)sysconf(_SC_NPROCESSORS_ONLN), &m);
	json_object_set_new(out, "buildid_mode_reason", json_string(e->mode_why));
	json_object_set_new(out, "probes", json_pack("{s:s, s:s, s:b, s:s, s:s, s:I}",
	    "leak", probe_leak_name(p->leak), "leak_detail", p->leak_why,
	    "foreign_buildid_events", p->foreign,
	    "mmap3", probe_mmap3_name(p->mmap3), "mmap3_detail", p->mmap3_why,
	    "duration_us", (json_int_t)p->duration_us));
	json_object_set_new(out, "perf_limits", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, "
	    "s:I, s:I, s:I, s:I, s:I, s:I, s:i}",
	    "max_sample_rate", (json_int_t)l->rate,
	    "max_sample_rate_at_start", (json_int_t)l->rate_at_start,
	    "max_sample_rate_lowest", (json_int_t)l->rate_lowest,
	    "max_sample_rate_drops", (json_int_t)l->rate_drops,
	    "cpu_time_max_percent", (json_int_t)l->cpu_time_max_percent,
	    "paranoid", (json_int_t)l->paranoid,
	    "mlock_kb", (json_int_t)l->mlock_kb,
	    "mlock_allowance_kb", (json_int_t)m.budget_kb,
	    "rings_kb", (json_int_t)m.rings_kb,
	    "rings_charged_kb", (json_int_t)m.charged_kb,
	    "rings_pinned_kb", (json_int_t)m.pinned_kb,
	    "mlock_left_kb", (json_int_t)m.left_kb,
	    "hw_counters_per_cpu", e->attr.type == PERF_TYPE_HARDWARE ? 1 : 0));
}

/* [segments] mode = flight: the buffer of the last window. */
static json_t *
status_flight(struct recorder *r)
{
	const struct flight *f = &r->fl;
	char	 from[32];

	return json_pack("{s:I, s:I, s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
	    "size", (json_int_t)f->size, "bytes", (json_int_t)f->bytes,
	    "records", (json_int_t)f->records,
	    "window_start", iso(recorder_wall_at(f->from), from),
	    "window_start_ns", (json_int_t)f->from,
	    "dropped_records", (json_int_t)f->dropped_records,
	    "dropped_bytes", (json_int_t)f->dropped_bytes,
	    "too_big", (json_int_t)f->too_big,
	    "states", (json_int_t)r->st.flight_states,
	    "states_bytes", (json_int_t)r->st.flight_state_bytes,
	    "states_short", (json_int_t)r->st.flight_states_short);
}

static json_t *
cmd_status_run(struct control_request *req)
{
	struct perfmapd *d = req->d;
	struct recorder *r = &d->rec;
	struct recorder_stats *s = &r->st;
	struct capture_stats cs;
	struct index_stats is;
	struct mallinfo2 mi;
	char	 started[32], segstart[32];
	uint64_t nseg, segbytes;
	json_t	*counters, *seg, *out;

	/*
	 * The closed segments as retention last listed them (each rotation,
	 * snapshot, reload), and the open one: status is public, and a walk
	 * of every segment's JIT maps per call was any user's to ask for.
	 */
	nseg = r->usage.count + (r->seg.open ? 1 : 0);
	segbytes = r->usage.bytes + (r->seg.open ? r->seg.pd.data_size : 0);
	capture_stats(req->d->cap, &cs);
	index_get_stats(req->d->index, &is);
	counters = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
	    "samples", (json_int_t)s->samples, "records", (json_int_t)s->records,
	    "mmaps", (json_int_t)s->mmaps,
	    "mmaps_kernel_buildid", (json_int_t)s->mmaps_kernel_id,
	    "mmaps_user_buildid", (json_int_t)s->mmaps_user_id,
	    "mmaps_no_buildid", (json_int_t)s->mmaps_no_id,
	    "lost", (json_int_t)s->lost, "lost_samples", (json_int_t)s->lost_samples,
	    "bad_records", (json_int_t)s->bad_records,
	    "write_errors", (json_int_t)s->write_errors,
	    "bytes_written", (json_int_t)s->bytes, "segments_closed", (json_int_t)s->segments);
	json_object_set_new(counters, "buildid_unknown", unknown_causes(s));
	json_object_set_new(counters, "lost_sideband", json_integer((json_int_t)s->lost_sideband));
	json_object_set_new(counters, "ns_looked_up", json_integer((json_int_t)s->ns_looked_up));
	{
		/* what the rings' reads gave up (before: counted, and shown nowhere) */
		uint64_t torn = 0, over = 0;
		int	 i;

		for (i = 0; i < r->ev.ncpus && r->ev.cpus != NULL; i++) {
			torn += r->ev.cpus[i].ring.torn + r->ev.cpus[i].sb_ring.torn;
			over += r->ev.cpus[i].ring.overruns + r->ev.cpus[i].sb_ring.overruns;
		}
		json_object_set_new(counters, "ring_torn", json_integer((json_int_t)torn));
		json_object_set_new(counters, "ring_overruns", json_integer((json_int_t)over));
	}
	seg = r->seg.open ? json_pack("{s:s, s:I, s:s, s:I, s:I, s:I}",
	    "path", r->seg.partial, "seq", (json_int_t)r->seg.seq,
	    "started", iso(r->seg.wall_start_ns, segstart),
	    "bytes", (json_int_t)r->seg.pd.data_size, "samples", (json_int_t)r->seg.samples,
	    "records", (json_int_t)r->seg.records) : json_null();
	out = json_pack("{s:s, s:i, s:s, s:I, s:s, s:s, s:i, s:b, s:i, s:s, s:o, s:o, "
	    "s:{s:I, s:I}, s:i, s:I, s:I}",
	    "version", PERFMAPD_VERSION, "pid", (int)getpid(),
	    "started", iso(d->start_wall_ns, started),
	    "uptime_s", (json_int_t)(((uint64_t)walltime_now() - d->start_wall_ns) / 1000000000ULL),
	    "buildid_mode", events_mode_name(r->ev.mode), "event", r->ev.name,
	    "frequency", (int)r->ev.frequency, "callchain", d->conf.callchain,
	    "cpus", r->ev.ncpus, "state_dir", d->conf.state_dir,
	    "segment", seg, "counters", counters,
	    "disk", "segments", (json_int_t)nseg, "segments_bytes", (json_int_t)segbytes,
	    "clients", (int)control_nclients(d->control),
	    "model_processes", (json_int_t)r->model.nprocs,
	    "model_maps", (json_int_t)r->model.nmaps);
	json_object_set_new(out, "model_maps_shed", json_integer((json_int_t)r->model.maps_shed));
	json_object_set_new(json_object_get(out, "disk"), "error",
	    r->disk_error != 0 ? json_string(strerror(r->disk_error)) : json_null());
	json_object_set_new(json_object_get(out, "disk"), "records_dropped",
	    json_integer((json_int_t)s->write_errors));
	json_object_set_new(json_object_get(out, "disk"), "segments_deleted_for_space",
	    json_integer((json_int_t)s->deleted_for_space));
	json_object_set_new(json_object_get(out, "disk"), "segments_unfinished",
	    json_integer((json_int_t)s->unfinished));
	json_object_set_new(out, "cache", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
	    "buildids_seen", (json_int_t)cs.seen, "captured", (json_int_t)cs.captured,
	    "already_cached", (json_int_t)cs.present, "failed", (json_int_t)cs.failed,
	    "missed", (json_int_t)cs.missed, "bytes", (json_int_t)cs.cache_bytes,
	    "entries", (json_int_t)cs.cache_entries));
	json_object_set_new(out, "buildid_reads", resolver_json(r->res));
	json_object_set_new(out, "sideband", json_pack("{s:I, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
	    "wakeups", (json_int_t)s->sb_wakeups, "holdoff_ms", r->sb_holdoff_ms,
	    "holdoff_news", (json_int_t)s->sb_holdoff_news,
	    "records", (json_int_t)s->sb_records, "arrival_looks", (json_int_t)s->sb_arrival_looks,
	    "backlog_bytes", (json_int_t)s->sb_spilled,
	    "backlog_full", (json_int_t)s->sb_spill_full,
	    "start_backlog_bytes", (json_int_t)s->start_spilled,
	    "start_backlog_full", (json_int_t)s->start_spill_full,
	    "start_dated", (json_int_t)s->start_dated,
	    "start_forks_unknown", (json_int_t)s->start_forks_unknown,
	    "full_looks", (json_int_t)s->sb_full_looks));
	json_object_set_new(json_object_get(out, "cache"), "refused_full",
	    json_integer((json_int_t)cs.refused_full));
	json_object_set_new(json_object_get(out, "cache"), "refused_quota",
	    json_integer((json_int_t)cs.refused_quota));
	json_object_set_new(json_object_get(out, "cache"), "jit_unwatched",
	    json_integer((json_int_t)cs.jit_unwatched));
	json_object_set_new(json_object_get(out, "cache"), "jit_unkept",
	    json_integer((json_int_t)cs.jit_unkept));
	mi = mallinfo2();
	json_object_set_new(out, "memory", json_pack("{s:I, s:I, s:I}",
	    "heap_in_use", (json_int_t)mi.uordblks,
	    "heap_from_system", (json_int_t)(mi.arena + mi.hblkhd),
	    "sqlite", (json_int_t)sqlite3_memory_used()));
	json_object_set_new(out, "index", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}",
	    "objects", (json_int_t)is.objects, "sightings", (json_int_t)is.sightings,
	    "unresolved", (json_int_t)is.unresolved, "pending", (json_int_t)is.pending,
	    "commit_us_max", (json_int_t)is.commit_us_max, "errors", (json_int_t)is.errors));
	if (r->flight_on)
		json_object_set_new(out, "flight", status_flight(r));
	status_neighbours(d, out);
	json_object_set_new(json_object_get(out, "index"), "transactions",
	    json_integer((json_int_t)is.batches));
	json_object_set_new(json_object_get(out, "index"), "rows_written",
	    json_integer((json_int_t)is.rows_written));
	json_object_set_new(json_object_get(out, "index"), "pruned",
	    json_integer((json_int_t)is.pruned));
	json_object_set_new(json_object_get(out, "index"), "wal_restarts",
	    json_integer((json_int_t)is.wal_restarts));
	json_object_set_new(json_object_get(out, "index"), "binaries",
	    json_integer((json_int_t)binaries_live(&d->bins)));
	return proto_reply(out, 0);
}

const struct control_command cmd_status = {
	.name = "status",
	.method = "io.perfmap.Status",
	.usage = "status",
	.help = "mode and probes, event, current segment, counters, disk use, perf limits",
	.flags = 0,
	.handler = cmd_status_run,
};
