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
 * Which binaries live processes map: a walk of the model's maps, on the
 * loop, at most once a second however many lookups come (any user may
 * ask, with public_queries).  Between walks, a binary's bit stands while
 * none of its maps was let go since the walk (the model notes when each
 * binary's last was, model_gone_at): one that was may be mapped no more,
 * and is not answered mapped.  A binary mapped after the walk is not in
 * it: the index's answer.  When binaries were pruned since (their ids are
 * reused), the walk stands for nothing, and a lookup within the second
 * has the index's answer alone.  Never a version that is not mapped:
 * before, the walk stood for a second whatever happened (a version whose
 * process had exited since was answered current and mapped), and then
 * for nothing once more than 256 maps anywhere were let go (on a busy
 * host, every running binary was "not mapped" to a second lookup).
 */
#define LIVE_MIN_GAP_NS	1000000000ULL

static struct {
	uint8_t		*bits;		/* by binary id: mapped by a live process */
	size_t		 n;
	uint64_t	 at, gen, ngone;
} live;

static int
live_cb(struct model_proc *p, void *arg)
{
	size_t	 i;

	(void)arg;
	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].bin < live.n)
			live.bits[p->maps[i].bin] = 1;
	return 0;
}

static int
live_fresh(struct recorder *r)
{
	uint64_t now = mono_ns();
	uint8_t	*nb;

	if (live.bits != NULL && now - live.at < LIVE_MIN_GAP_NS)
		return live.gen == r->bins_gen ? 0 : -1;
	if ((nb = realloc(live.bits, r->bins->n > 0 ? r->bins->n : 1)) == NULL)
		return -1;
	live.bits = nb;
	live.n = r->bins->n;
	memset(live.bits, 0, live.n);
	model_foreach(&r->model, live_cb, NULL);
	live.at = now;
	live.gen = r->bins_gen;
	live.ngone = r->model.ngone;
	return 0;
}

/* [[hex, mnt_ns], ...]: the versions of PATH live processes map now. */
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
	if (r->bins == NULL || live_fresh(r) < 0)
		return NULL;
	arr = json_array();
	for (i = 0; i < live.n && json_array_size(arr) < INDEX_LIVE_MAX; i++)
		if (live.bits[i] && model_gone_at(&r->model, (uint32_t)i) <= live.ngone &&
		    (b = binaries_at(r->bins, (uint32_t)i)) != NULL &&
		    b->path != NULL && b->bidsize != 0 && b->kind == BINARY_USER &&
		    b->path_hash == h && strcmp(b->path, path) == 0) {
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
