/*
 * command.c - the table of control commands, and parameter helpers.
 * Adding a command: write cmd-NAME.c, list it here, document it in
 * man/perfmapctl.8 (tests/check_control.c checks both), and teach the client.
 */
#include <string.h>

#include "command.h"
#include "control.h"
#include "daemon.h"
#include "log.h"
#include "proto.h"
#include "querier.h"
#include "query.h"

extern const struct control_command cmd_ping, cmd_status, cmd_snapshot,
    cmd_reload, cmd_stop;
extern const struct control_command cmd_store, cmd_export, cmd_profile;
extern const struct control_command cmd_segments, cmd_lookup, cmd_history,
    cmd_buildid;

const struct control_command *const control_commands[] = {
	&cmd_status,
	&cmd_snapshot,
	&cmd_store,
	&cmd_export,
	&cmd_profile,
	&cmd_segments,
	&cmd_lookup,
	&cmd_history,
	&cmd_buildid,
	&cmd_reload,
	&cmd_stop,
	&cmd_ping,
};
const size_t control_ncommands = sizeof(control_commands) / sizeof(control_commands[0]);

const struct control_command *
control_find_method(const char *method)
{
	size_t	 i;

	for (i = 0; i < control_ncommands; i++)
		if (strcmp(control_commands[i]->method, method) == 0)
			return control_commands[i];
	return NULL;
}

/* InvalidParameter carries the parameter's name only; the why goes to the debug log. */
static json_t *
bad_param(const char *key, const char *want)
{
	log_debug("control: parameter %s: %s", key, want);
	return proto_invalid(key);
}

int
control_param_string(struct control_request *req, const char *key, int required,
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
control_param_bool(struct control_request *req, const char *key, int *out, json_t **err)
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
 * The index queries (cmd-lookup.c, cmd-history.c, cmd-buildid.c,
 * cmd-segments.c), answered by the query thread (querier.c), never on the
 * loop: the answer covers everything recorded before the call (the thread
 * waits for those rows to be written), from a read-only connection as
 * perfmapctl --state-dir uses without a daemon.  NULL: the reply comes
 * from the thread.
 */
json_t *
control_query(struct control_request *req)
{
	return control_query_then(req, NULL);
}

json_t *
control_query_then(struct control_request *req, void (*fix)(struct perfmapd *, json_t *))
{
	json_t	*err;

	if (querier_submit(req->d->querier, req->client, req->entry->method, req->params,
	    control_client_privileged(req->client), fix, &err) < 0)
		return err;
	return NULL;
}
