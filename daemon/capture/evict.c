/*
 * evict.c - keeping the cache under [cache] max_size: the least recently
 * referenced binaries go first, never one a retained segment references.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "capture_int.h"
#include "log.h"
#include "walltime.h"

struct keepctx {
	struct idset	 ids;		/* referenced by retained segments */
	int64_t		 since_ns;	/* referenced by the open segment, maybe */
};

static int
keep_cb(const uint8_t *id, size_t len, int64_t ref_ns, void *arg)
{
	struct keepctx *k = arg;

	return ref_ns >= k->since_ns || idset_has(&k->ids, id, len);
}

void
evict_maybe(struct capture *c, int force)
{
	struct keepctx k;
	struct job j;
	struct segbid *bids = NULL;
	char	**segs = NULL, err[PATH_MAX + 128];
	size_t	 nsegs = 0, nbids = 0, i;
	uint64_t end, left = 0, now = (uint64_t)walltime_now();
	struct stat st;
	int	 removed;

	if (c->max_size == 0 || c->cache.size <= c->max_size)
		return;
	if (c->evict_stuck && !force && now - c->last_evict_ns < EVICT_RETRY_NS)
		return;
	c->last_evict_ns = now;
	memset(&k, 0, sizeof(k));
	memset(&j, 0, sizeof(j));
	j.since_ns = -1;
	/* Entries touched since the newest closed segment may be in the open one. */
	k.since_ns = (int64_t)c->start_wall_ns;
	if (resolve_segments(c, &j, &segs, &nsegs, err, sizeof(err)) == 0) {
		for (i = 0; i < nsegs; i++) {
			read_segment(segs[i], -1, &bids, &nbids, &k.ids, &end, err, sizeof(err));
			if (stat(segs[i], &st) == 0 &&
			    (int64_t)st.st_mtim.tv_sec * 1000000000LL > k.since_ns)
				k.since_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL;
		}
		free_strs(segs, nsegs);
		segbids_free(bids, nbids);
	}
	removed = bidcache_evict(&c->cache, c->max_size, keep_cb, &k, &left);
	free(k.ids.v);
	c->evict_stuck = left > c->max_size;
	if (removed > 0)
		log_info("cache: evicted %d binaries, %llu bytes left", removed,
		    (unsigned long long)left);
	if (c->evict_stuck)
		log_warnx("cache: %llu bytes, above max_size, and every binary left is "
		    "referenced by a retained segment or the open one", (unsigned long long)left);
	atomic_store(&c->cache_bytes, c->cache.size);
	atomic_store(&c->cache_entries, c->cache.entries);
}
