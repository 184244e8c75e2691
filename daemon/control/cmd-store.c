/*
 * cmd-store.c - "store": make sure every build-id the named segments
 * reference is in the build-id cache.  The work runs on the capture worker
 * (daemon/capture.c); with "more" the client gets one reply per build-id
 * ({"buildid", "path", "status": "OK"|"FAIL", "file"|"reason", "source"})
 * and a final summary, else the summary with a "results" array.
 *
 *	parameters: segments: [NAME|PATH, ...]  |  since: TIME  |  all: true
 *	            debuginfod: true  (fetch what is missing; DEBUGINFOD_URLS)
 */
#include <string.h>

#include "capture/capture.h"
#include "command.h"
#include "daemon.h"
#include "log.h"
#include "walltime.h"
#include "proto.h"

/* Shared by store and export: segments / since, checked for type. */
int
control_segment_params(struct control_request *req, json_t **segments, int64_t *since_ns,
    json_t **err)
{
	const char *since;
	json_t	*v;
	char	 msg[256];
	size_t	 i;

	*segments = json_object_get(req->params, "segments");
	if (*segments != NULL) {
		if (!json_is_array(*segments)) {
			*err = proto_invalid("segments");
			return -1;
		}
		json_array_foreach(*segments, i, v)
			if (!json_is_string(v)) {
				*err = proto_invalid("segments");
				return -1;
			}
	}
	if (control_param_string(req, "since", 0, &since, err) < 0)
		return -1;
	*since_ns = -1;
	if (since != NULL) {
		if (*segments != NULL && json_array_size(*segments) > 0) {
			*err = proto_invalid("since");
			return -1;
		}
		if (walltime_parse(since, walltime_now(), since_ns, msg, sizeof(msg)) < 0) {
			log_debug("control: since: %s", msg);
			*err = proto_invalid("since");
			return -1;
		}
	}
	return 0;
}

static json_t *
cmd_store_run(struct control_request *req)
{
	json_t	*segments, *err = NULL;
	int64_t	 since_ns;
	int	 all, dinfo;

	if (control_segment_params(req, &segments, &since_ns, &err) < 0 ||
	    control_param_bool(req, "all", &all, &err) < 0 ||
	    control_param_bool(req, "debuginfod", &dinfo, &err) < 0)
		return err;
	if (!all && since_ns < 0 && json_array_size(segments) == 0)
		return proto_invalid("segments");
	if (all && (since_ns >= 0 || json_array_size(segments) > 0))
		return proto_invalid("all");
	if (capture_store(req->d->cap, req->client, req->more, segments, since_ns, all, dinfo,
	    &err) < 0)
		return err;
	return NULL;		/* the replies come from the worker */
}

const struct control_command cmd_store = {
	.name = "store",
	.method = "io.perfmap.Store",
	.usage = "store [SEGMENT... | --since TIME | --all] [--debuginfod]",
	.help = "put every binary the segments reference into the build-id cache",
	.flags = CMD_PRIV,
	.params = { "segments", "since", "all", "debuginfod" },
	.handler = cmd_store_run,
};
