/*
 * cmd-export.c - "export": segments and the binaries their samples fall in,
 * in one file laid out as perf archive --all lays out its bundle
 * (daemon/capture/export.c), written by the capture worker into
 * STATE/exports/.  The reply names that file and says how to unpack it;
 * the client copies it to the -o FILE it was given, so the daemon never
 * writes where a client points it.
 *
 *	parameters: segments: [NAME|PATH, ...]  |  since: TIME  (neither: all)
 *	            name: FILE (its extension picks the compression:
 *	                  .tar .tar.gz .tgz .tar.bz2 .tar.xz .tar.zst)
 *	            all_binaries: true (every binary referenced, hit or not)
 */
#include "capture/capture.h"
#include "command.h"
#include "daemon.h"
#include "proto.h"

static json_t *
cmd_export_run(struct control_request *req)
{
	json_t	*segments, *err = NULL;
	const char *name;
	int64_t	 since_ns;
	int	 all_binaries;

	if (control_segment_params(req, &segments, &since_ns, &err) < 0 ||
	    control_param_string(req, "name", 0, &name, &err) < 0 ||
	    control_param_bool(req, "all_binaries", &all_binaries, &err) < 0)
		return err;
	if (capture_export(req->d->cap, req->client, req->more, segments, since_ns, name,
	    all_binaries, &err) < 0)
		return err;
	return NULL;		/* the reply comes from the worker */
}

const struct control_command cmd_export = {
	.name = "export",
	.method = "io.perfmap.Export",
	.usage = "export [--since TIME | SEGMENT...] [--all-binaries] -o FILE",
	.help = "segments and the binaries their samples hit, as perf archive --all bundles them",
	.flags = CMD_PRIV,
	.params = { "segments", "since", "name", "all_binaries" },
	.handler = cmd_export_run,
};
