/*
 * ctl.c - the table of control commands, and parameter helpers.
 * Adding a command: write ctl-NAME.c, list its entry here, document it in
 * man/perfmapctl.8 (tests/check_ctl.c checks both), and teach the client.
 */
#include <string.h>

#include "ctl.h"
#include "daemon.h"
#include "index.h"
#include "indexq.h"
#include "proto.h"
#include "query.h"

extern const struct ctl_entry ctl_ping_entry, ctl_status_entry, ctl_snapshot_entry,
    ctl_reload_entry, ctl_stop_entry;
extern const struct ctl_entry ctl_store_entry, ctl_export_entry;
extern const struct ctl_entry ctl_segments_entry, ctl_lookup_entry, ctl_history_entry,
    ctl_buildid_entry;

const struct ctl_entry *const ctl_table[] = {
	&ctl_status_entry,
	&ctl_snapshot_entry,
	&ctl_store_entry,
	&ctl_export_entry,
	&ctl_segments_entry,
	&ctl_lookup_entry,
	&ctl_history_entry,
	&ctl_buildid_entry,
	&ctl_reload_entry,
	&ctl_stop_entry,
	&ctl_ping_entry,
};
const size_t ctl_ntable = sizeof(ctl_table) / sizeof(ctl_table[0]);

const struct ctl_entry *
ctl_find_method(const char *method)
{
	size_t	 i;

	for (i = 0; i < ctl_ntable; i++)
		if (strcmp(ctl_table[i]->method, method) == 0)
			return ctl_table[i];
	return NULL;
}

static json_t *
bad_param(const char *key, const char *want)
{
	return proto_error(PROTO_ERR_INVALID, json_pack("{s:s, s:s}", "parameter", key,
	    "message", want));
}

int
ctl_param_string(struct ctl_request *req, const char *key, int required,
    const char **out, json_t **err)
{
	json_t	*v = json_object_get(req->params, key);

	*out = NULL;
	if (v == NULL) {
		if (!required)
			return 0;
		*err = bad_param(key, "missing");
		return -1;
	}
	if (!json_is_string(v)) {
		*err = bad_param(key, "must be a string");
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

int
ctl_param_bool(struct ctl_request *req, const char *key, int *out, json_t **err)
{
	json_t	*v = json_object_get(req->params, key);

	*out = 0;
	if (v == NULL)
		return 0;
	if (!json_is_boolean(v)) {
		*err = bad_param(key, "must be a boolean");
		return -1;
	}
	*out = json_is_true(v);
	return 0;
}

/*
 * The index queries (ctl-lookup.c, ctl-history.c, ctl-buildid.c,
 * ctl-segments.c): what the loop has batched is committed first, so the
 * answer covers everything recorded so far; the query runs on its own
 * read-only connection, as perfmapctl --state-dir does without a daemon.
 */
json_t *
ctl_query(struct ctl_request *req)
{
	struct indexq *q;
	json_t	*reply;
	char	 err[512];

	index_flush(req->d->rec.index);
	if ((q = indexq_open(req->d->conf.state_dir, err, sizeof(err))) == NULL)
		return proto_errorf(PROTO_ERR_FAILED, "%s", err);
	reply = query_run(q, req->entry->method, req->params);
	indexq_close(q);
	return reply;
}
