/*
 * ctl-snapshot.c - "snapshot": close the current segment now.  The reply
 * names the closed file only once it is complete on disk (features,
 * header, fsync, rename), so the caller can hand it to perf at once.
 * Recording goes on in the next segment without a gap.
 */
#include <string.h>

#include "ctl.h"
#include "daemon.h"
#include "proto.h"

static json_t *
ctl_snapshot(struct ctl_request *req)
{
	struct recorder *r = &req->d->rec;
	void	*iter;

	for (iter = json_object_iter(req->params); iter != NULL;
	    iter = json_object_iter_next(req->params, iter))
		return proto_error(PROTO_ERR_INVALID, json_pack("{s:s, s:s}", "parameter",
		    json_object_iter_key(iter), "message", "unknown parameter"));
	r->last_closed[0] = '\0';
	if (recorder_rotate(r, ROTATE_REQUEST) < 0 || r->last_closed[0] == '\0')
		return proto_errorf(PROTO_ERR_FAILED, "the segment could not be finished; "
		    "see the daemon's log");
	return proto_reply(json_pack("{s:s, s:I, s:I, s:I, s:I}", "path", r->last_closed,
	    "samples", (json_int_t)r->last_stats.samples,
	    "records", (json_int_t)r->last_stats.records,
	    "lost", (json_int_t)r->last_stats.lost,
	    "buildids", (json_int_t)r->last_stats.nbuildids), 0);
}

const struct ctl_entry ctl_snapshot_entry = {
	.name = "snapshot",
	.method = "io.perfmap.Snapshot",
	.usage = "snapshot",
	.help = "close the current segment now and print its path",
	.flags = CTL_PRIV,
	.handler = ctl_snapshot,
};
