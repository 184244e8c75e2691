/*
 * cmd-snapshot.c - "snapshot": close the current segment now.  The reply
 * names the closed file only once it is complete on disk (features,
 * header, fsync, rename), so the caller can hand it to perf at once.
 * Recording goes on in the next segment without a gap.  With "store" the
 * binaries it references are then put into the build-id cache, streamed
 * as by "store" (cmd-store.c).  With [segments] snapshot_pprof, the
 * profile thread then writes SEGMENT.pb.gz, a pprof of the period since
 * the previous snapshot.  In flight mode ([segments] mode = flight) there
 * is no current segment: the recorder writes the last window it holds in
 * memory as one (record/flightrec.c), the same reply.
 */
#include <string.h>

#include "capture/capture.h"
#include "control.h"
#include "command.h"
#include "daemon.h"
#include "proto.h"
#include "walltime.h"

static json_t *
cmd_snapshot_run(struct control_request *req)
{
	struct recorder *r = &req->d->rec;
	struct perfmapd *d = req->d;
	json_t	*reply, *segs, *err = NULL;
	uint64_t now;
	int	 store = 0;

	if (control_param_bool(req, "store", &store, &err) < 0)
		return err;
	if (store && !req->more)
		return proto_error(PROTO_ERR_MORE, json_object());
	r->last_closed[0] = '\0';
	if (recorder_rotate(r, ROTATE_REQUEST) < 0 || r->last_closed[0] == '\0')
		return proto_errorf(PROTO_ERR_FAILED, "the segment could not be finished; "
		    "see the daemon's log");
	/*
	 * The period: from the previous cut to this one (not to this reply,
	 * which comes later: what came between was in neither period), every
	 * segment closed between them, by age or size too, and this one.
	 */
	now = r->last_cut_wall_ns != 0 ? r->last_cut_wall_ns : (uint64_t)walltime_now();
	if (d->conf.snapshot_pprof)
		capture_profile_period(d->cap, r->last_closed, d->period_seq <= r->last_closed_seq ?
		    d->period_seq : r->last_closed_seq, r->last_closed_seq,
		    (int64_t)(d->snapshot_wall_ns ? d->snapshot_wall_ns : d->start_wall_ns),
		    (int64_t)now);
	d->snapshot_wall_ns = now;
	d->period_seq = r->last_closed_seq + 1;
	reply = json_pack("{s:s, s:I, s:I, s:I, s:I}", "path", r->last_closed,
	    "samples", (json_int_t)r->last_stats.samples,
	    "records", (json_int_t)r->last_stats.records,
	    "lost", (json_int_t)r->last_stats.lost,
	    "buildids", (json_int_t)r->last_stats.nbuildids);
	if (!store)
		return proto_reply(reply, 0);
	/* The path first, then the store's own replies from the worker. */
	control_send(req->client, proto_reply(reply, 1));
	segs = json_pack("[s]", r->last_closed);
	if (capture_store(req->d->cap, req->client, 1, segs, -1, 0, 0, &err) < 0) {
		json_decref(segs);
		return err;
	}
	json_decref(segs);
	return NULL;
}

const struct control_command cmd_snapshot = {
	.name = "snapshot",
	.method = "io.perfmap.Snapshot",
	.usage = "snapshot [--store]",
	.help = "close the current segment now and print its path; --store also stores its binaries",
	.flags = CMD_PRIV,
	.params = { "store" },
	.handler = cmd_snapshot_run,
};
