/*
 * cmd-lookup.c - "lookup": the build-id PATH had at TIME (default: now).
 * Answered from the index (common/query.c), read-only.  A row's last
 * sighting is the last segment start or mmap before now, so for a TIME in
 * the open segment the loop first names the versions of PATH that live
 * processes map (the model), and the query counts them as mapped until
 * now: before, every running binary was "not mapped" at now.
 */
#include <stdlib.h>
#include <string.h>

#include "buildid.h"
#include "command.h"
#include "daemon.h"
#include "hash.h"
#include "index_reader.h"
#include "walltime.h"

/*
 * [[hex, mnt_ns], ...]: the versions of PATH live processes map now; NULL:
 * not known (the model's counts lost to a shortage of memory, until the
 * next rotation counts them again): the index's answer alone.  The model
 * keeps each binary's count of maps exact (model_bin_mapped), so the
 * answer is now's whatever happened since any walk.  Before, a walk of
 * every live map, at most once a second, stood between walks only for a
 * binary none of whose maps was let go since: within the second, libc on
 * a host that forks was "not mapped".
 */
static json_t *
live_versions(struct recorder *r, const char *path)
{
	struct binary *b;
	char	 hex[BUILD_ID_HEX_MAX];
	json_t	*arr;
	uint64_t h;
	size_t	 i;

	/* by the path's hash: a user's many long names cost a compare each, not a scan */
	h = hash_str(path, HASH_INIT);
	if (r->bins == NULL || r->model.bin_maps_lost)
		return NULL;
	arr = json_array();
	for (i = 0; i < r->bins->n && json_array_size(arr) < INDEX_LIVE_MAX; i++)
		if ((b = binaries_at(r->bins, (uint32_t)i)) != NULL && b->path_hash == h &&
		    b->path != NULL && b->bidsize != 0 && b->kind == BINARY_USER &&
		    strcmp(b->path, path) == 0 && model_bin_mapped(&r->model, (uint32_t)i) > 0) {
			buildid_to_hex(b->bid, b->bidsize, hex);
			json_array_append_new(arr, json_pack("[s, I]", hex, (json_int_t)b->ns));
		}
	return arr;
}

static json_t *
cmd_lookup_run(struct control_request *req)
{
	struct recorder *r = &req->d->rec;
	const char *path = json_string_value(json_object_get(req->params, "path"));
	json_t	*at = json_object_get(req->params, "at_ns"), *v;

	if (path != NULL && r->seg.open &&
	    (at == NULL || (json_is_integer(at) &&
	    (uint64_t)json_integer_value(at) >= r->seg.wall_start_ns)) &&
	    (v = live_versions(r, path)) != NULL)
		json_object_set_new(req->params, "live", v);
	return control_query(req);
}

const struct control_command cmd_lookup = {
	.name = "lookup",
	.method = "io.perfmap.Lookup",
	.usage = "lookup PATH [--at TIME] [--all-namespaces]",
	.help = "the build-id PATH had at TIME (default: now)",
	.flags = 0,
	.params = { "path", "at_ns", "all_namespaces" },
	.handler = cmd_lookup_run,
};
