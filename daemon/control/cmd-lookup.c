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

struct live_scan {
	const struct binaries *bins;
	uint8_t		*want;		/* by binary id: 1 = of PATH, 2 = mapped too */
	size_t		 n;
};

static int
live_cb(struct model_proc *p, void *arg)
{
	struct live_scan *x = arg;
	size_t	 i;

	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].bin < x->n && x->want[p->maps[i].bin] != 0)
			x->want[p->maps[i].bin] = 2;
	return 0;
}

/* [[hex, mnt_ns], ...]: the versions of PATH live processes map now. */
static json_t *
live_versions(struct recorder *r, const char *path)
{
	struct live_scan x;
	struct binary *b;
	char	 hex[BUILD_ID_HEX_MAX];
	json_t	*arr;
	size_t	 i, of_path = 0;

	if (r->bins == NULL || r->bins->n == 0 ||
	    (x.want = calloc(r->bins->n, 1)) == NULL)
		return NULL;
	x.bins = r->bins;
	x.n = r->bins->n;
	for (i = 0; i < x.n; i++)
		if ((b = binaries_at(r->bins, (uint32_t)i)) != NULL && b->path != NULL &&
		    b->bidsize != 0 && b->kind == BINARY_USER && strcmp(b->path, path) == 0) {
			x.want[i] = 1;
			of_path++;
		}
	arr = json_array();
	if (of_path > 0)
		model_foreach(&r->model, live_cb, &x);
	for (i = 0; i < x.n && json_array_size(arr) < INDEX_LIVE_MAX; i++)
		if (x.want[i] == 2 && (b = binaries_at(r->bins, (uint32_t)i)) != NULL) {
			buildid_to_hex(b->bid, b->bidsize, hex);
			json_array_append_new(arr, json_pack("[s, I]", hex, (json_int_t)b->ns));
		}
	free(x.want);
	return arr;
}

static json_t *
cmd_lookup_run(struct control_request *req)
{
	struct recorder *r = &req->d->rec;
	const char *path = json_string_value(json_object_get(req->params, "path"));
	json_t	*at = json_object_get(req->params, "at_ns"), *live;

	if (path != NULL && r->seg.open &&
	    (at == NULL || (json_is_integer(at) &&
	    (uint64_t)json_integer_value(at) >= r->seg.wall_start_ns)) &&
	    (live = live_versions(r, path)) != NULL)
		json_object_set_new(req->params, "live", live);
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
