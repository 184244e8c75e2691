/*
 * query.h - the index queries as control methods: one place that checks a
 * call's parameters and runs it on an indexq, used both by the daemon's
 * handlers (ctl-lookup.c, ...) and by perfmapctl without a daemon
 * (--state-dir), so both answer alike.
 *
 *   io.perfmap.Lookup    { "path": s, "at_ns": i? }       indexq_lookup
 *   io.perfmap.History   { "path": s }                    indexq_history
 *   io.perfmap.BuildId   { "build_id": s }                indexq_buildid
 *   io.perfmap.Segments  { "segment": s?, "all": b? }     indexq_segments, or
 *                                                         indexq_segment_buildids
 */
#ifndef PERFMAPD_QUERY_H
#define PERFMAPD_QUERY_H

#include <stddef.h>
#include <jansson.h>

struct indexq;

/* Is METHOD one of the queries above? */
int	query_is_query(const char *method);

/*
 * Run METHOD with PARAMS.  Returns a reply message (proto_reply) or a typed
 * error message (proto_error: InvalidParameter, NotFound, Failed).
 */
json_t	*query_run(struct indexq *, const char *method, json_t *params);

#endif
