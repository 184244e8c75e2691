/*
 * cmd-segments.c - "segments": list segments (time range, size, samples,
 * lost); with SEGMENT, the build-ids it references.  Answered from the
 * index (common/query.c), read-only; for the segment being written, which
 * the index knows only by name until it closes, the recorder's own figures.
 */
#include <string.h>

#include "command.h"
#include "daemon.h"

/* The open segment's figures so far, as status gives them. */
static void
fill_open(struct recorder *r, json_t *seg)
{
	if (!r->seg.open || json_integer_value(json_object_get(seg, "seq")) !=
	    (json_int_t)r->seg.seq ||
	    strcmp(json_string_value(json_object_get(seg, "state")) ?: "", "open") != 0)
		return;
	json_object_set_new(seg, "samples", json_integer((json_int_t)r->seg.samples));
	json_object_set_new(seg, "records", json_integer((json_int_t)r->seg.records));
	json_object_set_new(seg, "lost", json_integer((json_int_t)r->seg.lost));
}

/* The query thread's answer, on the loop: the open segment's figures in. */
static void
segments_fix(struct perfmapd *d, json_t *reply)
{
	json_t	*p, *v;
	size_t	 i;

	if ((p = json_object_get(reply, "parameters")) == NULL ||
	    json_object_get(reply, "error") != NULL)
		return;
	json_array_foreach(json_object_get(p, "segments"), i, v)
		fill_open(&d->rec, v);
	if ((v = json_object_get(p, "segment")) != NULL)
		fill_open(&d->rec, v);
}

static json_t *
cmd_segments_run(struct control_request *req)
{
	return control_query_then(req, segments_fix);
}

const struct control_command cmd_segments = {
	.name = "segments",
	.method = "io.perfmap.Segments",
	.usage = "segments [SEGMENT] [--all]",
	.help = "list segments (time range, size, samples, lost); with SEGMENT, the build-ids it references",
	.flags = 0,
	.params = { "segment", "all" },
	.handler = cmd_segments_run,
};
