/*
 * cmd-export.c - "export": a perf archive-style tarball of segments and the
 * build-id cache entries they reference (".build-id/xx/rest" links and
 * "<path>/<build-id>/elf" files next to the segments), written by the
 * capture worker into STATE/exports/.  The reply names that file; the
 * client copies it to the -o FILE it was given, so the daemon never writes
 * where a client points it.
 *
 *	parameters: segments: [NAME|PATH, ...]  |  since: TIME  (neither: all)
 *	            name: FILE (its extension picks the compression:
 *	                  .tar .tar.gz .tgz .tar.bz2 .tar.xz .tar.zst)
 */
#include "capture/capture.h"
#include "command.h"
#include "daemon.h"
#include "proto.h"

static json_t *
cmd_export_run(struct control_request *req)
{
	static const char *const allowed[] = { "segments", "since", "name", NULL };
	json_t	*segments, *err = NULL;
	const char *name;
	int64_t	 since_ns;

	if (control_segment_params(req, allowed, &segments, &since_ns, &err) < 0 ||
	    control_param_string(req, "name", 0, &name, &err) < 0)
		return err;
	if (capture_export(req->d->cap, req->client, req->more, segments, since_ns, name, &err) < 0)
		return err;
	return NULL;		/* the reply comes from the worker */
}

const struct control_command cmd_export = {
	.name = "export",
	.method = "io.perfmap.Export",
	.usage = "export [--since TIME | SEGMENT...] -o FILE",
	.help = "write a perf archive-style tarball: segments plus their binaries",
	.flags = CMD_PRIV,
	.handler = cmd_export_run,
};
