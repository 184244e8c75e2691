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
#include "index_reader.h"
#include "walltime.h"

/*
 * [[hex, mnt_ns], ...]: the versions of PATH live processes map now, of
 * the host's unless ALL_NS; NULL: not known (the model's counts lost to a
 * shortage of memory, until the next rotation counts them again; more
 * versions of PATH than a lookup can name, INDEX_LIVE_MAX: a part of them
 * would say the others are not mapped): the index's answer alone.  The
 * entries of PATH are found by its hash (binaries_by_path): the cost is
 * theirs, not the table's; before, every lookup walked every binary known
 * on the loop, and a user's million hard links made each one cost
 * milliseconds.  The model
 * keeps each binary's count of maps exact (model_bin_mapped), so the
 * answer is now's whatever happened since any walk.  Before, a walk of
 * every live map, at most once a second, stood between walks only for a
 * binary none of whose maps was let go since: within the second, libc on
 * a host that forks was "not mapped".
 */
#define LOOKUP_IDS_MAX		1024	/* entries of one path looked at */
#define LOOKUP_WALK_MAX		4096	/* ... slots walked for them */

static json_t *
live_versions(struct recorder *r, const char *path, int all_ns)
{
	static uint32_t ids[LOOKUP_IDS_MAX];	/* the loop's */
	struct binary *b;
	char	 hex[BUILD_ID_HEX_MAX];
	json_t	*arr;
	size_t	 i, n;

	if (r->bins == NULL || r->model.bin_maps_lost ||
	    (n = binaries_by_path(r->bins, path, ids, LOOKUP_IDS_MAX, LOOKUP_WALK_MAX)) ==
	    SIZE_MAX)
		return NULL;
	arr = json_array();
	for (i = 0; i < n; i++) {
		b = binaries_at(r->bins, ids[i]);
		if (b->kind != BINARY_USER || (b->ns != 0 && !all_ns) ||
		    model_bin_mapped(&r->model, ids[i]) == 0)
			continue;
		if (json_array_size(arr) == INDEX_LIVE_MAX) {
			json_decref(arr);
			return NULL;
		}
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
	int	 all_ns = json_is_true(json_object_get(req->params, "all_namespaces"));

	if (path != NULL && r->seg.open &&
	    (at == NULL || (json_is_integer(at) &&
	    (uint64_t)json_integer_value(at) >= r->seg.wall_start_ns)) &&
	    (v = live_versions(r, path, all_ns)) != NULL)
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
