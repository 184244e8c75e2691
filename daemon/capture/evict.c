/*
 * evict.c - keeping the cache under [cache] max_size: the least recently
 * referenced binaries go first, never one a retained segment references;
 * and the admission of each copy (cache_admit): room made before it, the
 * share of its owner ([cache] user_bytes, user_files per user_interval).
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

/*
 * An error of a read that may go another time: descriptors, memory.  Not
 * EIO: a bad sector under one old segment would stop eviction until
 * retention takes it (days); like a damaged table, it holds nothing back.
 */
static int
evict_transient(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOMEM || e == ENOBUFS || e == EINTR ||
	    e == EAGAIN;
}

void
evict_maybe(struct capture *c, int force)
{
	evict_to(c, c->max_size, force);
}

/* One user's share: the entry of UID for the current interval. */
static struct quota *
quota_of(struct capture *c, unsigned uid, uint64_t now)
{
	struct quota *q = NULL;
	size_t	 i;

	for (i = 0; i < c->nquotas; i++)
		if (c->quotas[i].uid == uid) {
			q = &c->quotas[i];
			break;
		}
	if (q == NULL) {
		if (c->nquotas < QUOTA_MAX)
			q = &c->quotas[c->nquotas++];
		else		/* the oldest interval makes way */
			for (q = &c->quotas[0], i = 1; i < c->nquotas; i++)
				if (c->quotas[i].start_ns < q->start_ns)
					q = &c->quotas[i];
		memset(q, 0, sizeof(*q));
		q->uid = uid;
		q->start_ns = now;
	}
	if (now - q->start_ns >= c->user_interval_ns) {
		q->start_ns = now;
		q->bytes = q->files = 0;
		q->logged = 0;
	}
	return q;
}

int
user_share(struct capture *c, unsigned uid, uint64_t size, struct quota **qp, char *err,
    size_t errlen)
{
	struct quota *q;

	*qp = NULL;
	if (uid == 0 || (c->user_bytes == 0 && c->user_files == 0))
		return 0;
	q = quota_of(c, uid, (uint64_t)walltime_now());
	if ((c->user_files != 0 && q->files + 1 > c->user_files) ||
	    (c->user_bytes != 0 && q->bytes + size > c->user_bytes)) {
		snprintf(err, errlen, "uid %u used its share of the cache (%llu files, "
		    "%llu bytes this interval; user_files, user_bytes)", uid,
		    (unsigned long long)q->files, (unsigned long long)q->bytes);
		if (!q->logged++)
			log_warnx("cache: %s: its binaries and JIT maps wait for the next "
			    "interval", err);
		atomic_fetch_add(&c->n_refused_quota, 1);
		return -EDQUOT;
	}
	*qp = q;
	return 0;
}

void
user_share_charge(struct quota *q, uint64_t size)
{
	if (q != NULL) {
		q->files++;
		q->bytes += size;
	}
}

/*
 * Before a copy of SIZE bytes of a file UID owns: the user's share (root's
 * binaries have none), then room under max_size, evicting first; a copy
 * that fits neither is refused and counted, never made and evicted later.
 */
int
cache_admit(void *arg, unsigned uid, uint64_t size, char *err, size_t errlen)
{
	struct capture *c = arg;
	struct quota *q;
	int	 rc;

	if ((rc = user_share(c, uid, size, &q, err, errlen)) < 0)
		return rc;
	if (c->max_size != 0 && c->cache.size + size > c->max_size) {
		if (size <= c->max_size)
			evict_to(c, c->max_size - size, 0);
		if (c->cache.size + size > c->max_size) {
			snprintf(err, errlen, "no room in the cache for %llu bytes (%llu of max_size "
			    "%llu used, and what is left is referenced by retained segments)",
			    (unsigned long long)size, (unsigned long long)c->cache.size,
			    (unsigned long long)c->max_size);
			atomic_fetch_add(&c->n_refused_full, 1);
			return -ENOSPC;
		}
	}
	user_share_charge(q, size);
	return 0;
}

void
evict_to(struct capture *c, uint64_t target, int force)
{
	struct keepctx k;
	struct job j;
	struct segbid *bids = NULL;
	char	**segs = NULL, err[PATH_MAX + 128];
	size_t	 nsegs = 0, nbids = 0, i;
	uint64_t end, left = 0, now = (uint64_t)walltime_now();
	struct stat st;
	int	 removed, blind;

	if (c->max_size == 0 || c->cache.size <= target)
		return;
	if (c->evict_stuck && !force && now - c->last_evict_ns < EVICT_RETRY_NS)
		return;
	c->last_evict_ns = now;
	memset(&k, 0, sizeof(k));
	memset(&j, 0, sizeof(j));
	j.since_ns = -1;
	/* Entries touched since the newest closed segment may be in the open one. */
	k.since_ns = (int64_t)c->start_wall_ns;
	/*
	 * What the retained segments reference, all of it, or nothing is
	 * evicted: a list or a table that could not be read for want of
	 * descriptors or memory would have let their binaries go (a wrong
	 * answer for every sample of theirs).  A segment whose table is
	 * damaged names nothing perf could find, and does not hold the rest.
	 */
	blind = resolve_segments(c, &j, &segs, &nsegs, err, sizeof(err)) < 0;
	for (i = 0; !blind && i < nsegs; i++) {
		errno = 0;
		if (read_segment(segs[i], -1, &bids, &nbids, &k.ids, &end, err,
		    sizeof(err)) < 0 && evict_transient(errno))
			blind = 1;
		if (stat(segs[i], &st) == 0 &&
		    (int64_t)st.st_mtim.tv_sec * 1000000000LL > k.since_ns)
			k.since_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL;
	}
	free_strs(segs, nsegs);
	segbids_free(bids, nbids);
	if (blind) {
		free(k.ids.v);
		if (!c->evict_stuck)
			log_warnx("cache: nothing evicted: cannot tell what the retained segments "
			    "reference (%s); again in a minute", err);
		c->evict_stuck = 1;
		return;
	}
	removed = bidcache_evict(&c->cache, target, keep_cb, &k, &left);
	free(k.ids.v);
	c->evict_stuck = left > target;
	if (removed > 0) {
		log_info("cache: evicted %d binaries, %llu bytes left", removed,
		    (unsigned long long)left);
		atomic_fetch_add(&c->evict_gen, 1);	/* copied again if mapped again */
	}
	if (c->evict_stuck)
		log_warnx("cache: %llu bytes, above %llu, and every binary left is "
		    "referenced by a retained segment or the open one", (unsigned long long)left,
		    (unsigned long long)target);
	atomic_store(&c->cache_bytes, c->cache.size);
	atomic_store(&c->cache_entries, c->cache.entries);
}
