/*
 * params.c - io.perfmap.Profile's parameters and reply, in one place for
 * the daemon's handler and perfmapctl --state-dir, so both read a call the
 * same way and answer alike:
 *
 *	parameters  { "since_ns": i, "until_ns": i, "format": s,
 *	              "pid": i?, "comm": s? }
 *	reply       { "format": s, "since": s, "until": s, "samples": i,
 *	              "segments": i, "segments_gone": i, "lost": i,
 *	              "bad_records": i, "frames": i, "frames_unmapped": i,
 *	              "frames_unsymbolized": i, "binaries": i,
 *	              "binaries_uncached": i, "binaries_unknown": i,
 *	              "jit_maps": i, "stacks": i, "samples_truncated": i,
 *	              "names_truncated": i, "procs_shed": i,
 *	              "first": s|null,
 *	              "last": s|null, "bytes": i }
 *	            (the daemon adds "path", the file it wrote)
 */
#include <stdio.h>
#include <string.h>

#include "index_reader.h"
#include "walltime.h"
#include "profile.h"

int
profile_params(json_t *params, struct profile_req *req, const char **param, char *err,
    size_t errlen)
{
	static const char *const allowed[] = {
		"since_ns", "until_ns", "format", "pid", "comm", NULL,
	};
	const char *key, *fmt;
	json_t	*v;
	size_t	 i;

	json_object_foreach(params, key, v) {
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(allowed[i], key) == 0)
				break;
		if (allowed[i] == NULL) {
			*param = key;
			snprintf(err, errlen, "unknown parameter");
			return -1;
		}
	}
	/* types first (every parameter), then values */
	*param = "since_ns";
	if (!json_is_integer(json_object_get(params, "since_ns")))
		goto type;
	*param = "until_ns";
	if (!json_is_integer(json_object_get(params, "until_ns")))
		goto type;
	*param = "format";
	if (!json_is_string(json_object_get(params, "format"))) {
		snprintf(err, errlen, "a string: perf, pprof, folded or svg");
		return -1;
	}
	*param = "pid";
	if ((v = json_object_get(params, "pid")) != NULL && !json_is_integer(v)) {
		snprintf(err, errlen, "a process id");
		return -1;
	}
	*param = "comm";
	if ((v = json_object_get(params, "comm")) != NULL && !json_is_string(v)) {
		snprintf(err, errlen, "a command name");
		return -1;
	}
	req->since_ns = json_integer_value(json_object_get(params, "since_ns"));
	req->until_ns = json_integer_value(json_object_get(params, "until_ns"));
	*param = "format";
	fmt = json_string_value(json_object_get(params, "format"));
	if (profile_format_parse(fmt, &req->format) < 0) {
		snprintf(err, errlen, "one of perf, pprof, folded, svg");
		return -1;
	}
	req->pid = -1;
	*param = "pid";
	if ((v = json_object_get(params, "pid")) != NULL) {
		if (json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX) {
			snprintf(err, errlen, "a process id");
			return -1;
		}
		req->pid = json_integer_value(v);
	}
	*param = "comm";
	req->comm = NULL;
	if ((v = json_object_get(params, "comm")) != NULL) {
		if (json_string_length(v) == 0 || json_string_length(v) > 15) {
			snprintf(err, errlen, "a command name of 1 to 15 characters");
			return -1;
		}
		req->comm = json_string_value(v);
	}
	*param = NULL;
	return 0;
type:
	snprintf(err, errlen, "an integer (ns since the epoch)");
	return -1;
}

static json_t *
time_or_null(uint64_t ns)
{
	char	 buf[40];

	if (ns == 0)
		return json_null();
	walltime_format((int64_t)ns, buf, sizeof(buf));
	return json_string(buf);
}

json_t *
profile_reply(const struct profile_req *req, const struct profile_stats *st)
{
	char	 since[40], until[40];

	walltime_format(req->since_ns, since, sizeof(since));
	walltime_format(req->until_ns, until, sizeof(until));
	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
	    "s:I, s:I, s:I, s:I, s:o, s:o, s:I, s:I, s:I, s:I}",
	    "format", profile_format_name(req->format), "since", since, "until", until,
	    "samples", (json_int_t)st->samples, "segments", (json_int_t)st->segments,
	    "segments_gone", (json_int_t)st->segments_gone, "lost", (json_int_t)st->lost,
	    "bad_records", (json_int_t)st->bad_records, "frames", (json_int_t)st->frames,
	    "frames_unmapped", (json_int_t)st->frames_unmapped,
	    "frames_unsymbolized", (json_int_t)st->frames_unsymbolized,
	    "binaries", (json_int_t)st->binaries,
	    "binaries_uncached", (json_int_t)st->binaries_uncached,
	    "binaries_unknown", (json_int_t)st->binaries_unknown,
	    "jit_maps", (json_int_t)st->jit_maps, "stacks", (json_int_t)st->stacks,
	    "samples_truncated", (json_int_t)st->samples_truncated,
	    "first", time_or_null(st->first_ns), "last", time_or_null(st->last_ns),
	    "bytes", (json_int_t)st->bytes, "segments_damaged", (json_int_t)st->segments_damaged,
	    "names_truncated", (json_int_t)st->names_truncated,
	    "procs_shed", (json_int_t)st->procs_shed);
}
