/*
 * query.c - control methods answered from the index; see query.h.
 */
#include <errno.h>
#include <string.h>

#include "index_reader.h"
#include "log.h"
#include "walltime.h"
#include "proto.h"
#include "buildid.h"
#include "query.h"

static const char *const queries[] = {
	"io.perfmap.Lookup", "io.perfmap.History", "io.perfmap.BuildId",
	"io.perfmap.Segments",
};

int
query_is_query(const char *method)
{
	size_t	 i;

	for (i = 0; i < sizeof(queries) / sizeof(queries[0]); i++)
		if (strcmp(method, queries[i]) == 0)
			return 1;
	return 0;
}

/* InvalidParameter carries the parameter's name only; the why goes to the debug log. */
static json_t *
bad(const char *key, const char *msg)
{
	log_debug("query: parameter %s: %s", key, msg);
	return proto_invalid(key);
}

/* Every key of PARAMS must be in KEYS (NULL-terminated). */
static json_t *
check_keys(json_t *params, const char *const *keys)
{
	const char *k;
	json_t	*v;
	size_t	 i;

	json_object_foreach(params, k, v) {
		for (i = 0; keys[i] != NULL; i++)
			if (strcmp(k, keys[i]) == 0)
				break;
		if (keys[i] == NULL)
			return bad(k, "unknown parameter");
	}
	return NULL;
}

static json_t *
get_string(json_t *params, const char *key, int required, const char **out)
{
	json_t	*v = json_object_get(params, key);

	*out = NULL;
	if (v == NULL)
		return required ? bad(key, "missing") : NULL;
	if (!json_is_string(v) || json_string_length(v) == 0)
		return bad(key, "must be a non-empty string");
	if (json_string_length(v) > 4096)
		return bad(key, "too long");
	*out = json_string_value(v);
	return NULL;
}

/* An optional boolean. */
static json_t *
get_bool(json_t *params, const char *key, int *out)
{
	json_t	*v = json_object_get(params, key);

	*out = 0;
	if (v == NULL || json_is_null(v))
		return NULL;
	if (!json_is_boolean(v))
		return bad(key, "must be a boolean");
	*out = json_is_true(v);
	return NULL;
}

static json_t *
result(int rc, json_t *out, const char *err)
{
	if (rc == 0)
		return proto_reply(out, 0);
	if (rc == -ENOENT)
		return proto_error(PROTO_ERR_NOTFOUND, json_pack("{s:o}", "message", proto_string(err)));
	return proto_error(PROTO_ERR_FAILED, json_pack("{s:o}", "message", proto_string(err)));
}

/* The versions of the path live processes map ("live": [[hex, mnt_ns], ...]) into V. */
static size_t
live_get(json_t *params, struct index_live *v)
{
	json_t	*e;
	size_t	 i, n = 0;
	int	 len;

	json_array_foreach(json_object_get(params, "live"), i, e) {
		const char *hex = json_string_value(json_array_get(e, 0));

		if (n == INDEX_LIVE_MAX || hex == NULL ||
		    !json_is_integer(json_array_get(e, 1)) ||
		    (len = buildid_from_hex(hex, v[n].bid)) <= 0)
			continue;
		v[n].bidsize = (uint8_t)len;
		v[n].mnt_ns = (uint64_t)json_integer_value(json_array_get(e, 1));
		n++;
	}
	return n;
}

/* A query's parameters, read and checked: Q NULL; else the query run on Q. */
static json_t *
query(struct index_reader *q, const char *method, json_t *params)
{
	/* "live": the daemon's own (cmd-lookup.c), after the client's keys were checked */
	static const char *const k_lookup[] = { "path", "at_ns", "all_namespaces", "live", NULL };
	static const char *const k_path[] = { "path", "all_namespaces", NULL };
	static const char *const k_bid[] = { "build_id", NULL };
	static const char *const k_seg[] = { "segment", "all", NULL };
	const char *s;
	json_t	*e, *out = NULL, *v;
	char	 err[512] = "";
	int	 rc = 0, all = 0;

	if (strcmp(method, "io.perfmap.Lookup") == 0) {
		struct index_live live[INDEX_LIVE_MAX];
		int64_t	 at = walltime_now();

		if ((e = check_keys(params, k_lookup)) || (e = get_string(params, "path", 1, &s)))
			return e;
		if ((v = json_object_get(params, "at_ns")) != NULL) {
			if (!json_is_integer(v) || json_integer_value(v) < 0)
				return bad("at_ns", "must be a non-negative integer (ns since the epoch)");
			at = (int64_t)json_integer_value(v);
		}
		if ((e = get_bool(params, "all_namespaces", &all)) != NULL || q == NULL)
			return e;
		rc = index_reader_lookup_live(q, s, at, all, live, live_get(params, live),
		    &out, err, sizeof(err));
	} else if (strcmp(method, "io.perfmap.History") == 0) {
		if ((e = check_keys(params, k_path)) || (e = get_string(params, "path", 1, &s)) ||
		    (e = get_bool(params, "all_namespaces", &all)) || q == NULL)
			return e;
		rc = index_reader_history_ns(q, s, all, &out, err, sizeof(err));
	} else if (strcmp(method, "io.perfmap.BuildId") == 0) {
		if ((e = check_keys(params, k_bid)) || (e = get_string(params, "build_id", 1, &s)) ||
		    q == NULL)
			return e;
		rc = index_reader_buildid(q, s, &out, err, sizeof(err));
	} else if (strcmp(method, "io.perfmap.Segments") == 0) {
		if ((e = check_keys(params, k_seg)) || (e = get_string(params, "segment", 0, &s)) ||
		    (e = get_bool(params, "all", &all)) || q == NULL)
			return e;
		rc = s != NULL ? index_reader_segment_buildids(q, s, &out, err, sizeof(err)) :
		    index_reader_segments(q, all ? INDEX_SEGS_ALL : 0, &out, err, sizeof(err));
	} else
		return proto_error(PROTO_ERR_NOMETHOD, json_pack("{s:s}", "method", method));
	return result(rc, out, err);
}

json_t *
query_check(const char *method, json_t *params)
{
	return query(NULL, method, params);
}

json_t *
query_run(struct index_reader *q, const char *method, json_t *params)
{
	return query(q, method, params);
}
