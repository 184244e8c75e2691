/*
 * query.h - the index queries as control methods: one place that checks a
 * call's parameters and runs it on the index's read side (index_reader.h), used both by the daemon's
 * handlers (control/cmd-lookup.c, ...) and by perfmapctl without a daemon
 * (--state-dir), so both answer alike.
 *
 *   io.perfmap.Lookup    { "path": s, "at_ns": i? }       index_reader_lookup
 *   io.perfmap.History   { "path": s }                    index_reader_history
 *   io.perfmap.BuildId   { "build_id": s }                index_reader_buildid
 *   io.perfmap.Segments  { "segment": s?, "all": b? }     index_reader_segments, or
 *                                                         index_reader_segment_buildids
 */
#ifndef PERFMAPD_QUERY_H
#define PERFMAPD_QUERY_H

#include <stddef.h>
#include <jansson.h>

struct index_reader;

/* Is METHOD one of the queries above? */
int	query_is_query(const char *method);

/*
 * Run METHOD with PARAMS.  Returns a reply message (proto_reply) or a typed
 * error message (proto_error: InvalidParameter, NotFound, Failed).
 */
json_t	*query_run(struct index_reader *, const char *method, json_t *params);
/*
 * METHOD's PARAMS checked as query_run checks them, without a reader: NULL
 * when they are good, else the error message query_run would give.  The
 * daemon asks it before it copies PARAMS for its query thread (a bad call
 * costs no copy: a 256 KiB array of zeros was 5 MB of JSON).
 */
json_t	*query_check(const char *method, json_t *params);

#endif
