/*
 * binaries.c - the table of binaries; see binaries.h.  An open-addressing
 * hash of entry ids over entries stored in fixed chunks; pruned entries
 * stay in their chunk as free ones (path NULL, bidsize 0) until their id
 * is handed out again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binaries.h"
#include "hash.h"
#include "record.h"

uint64_t
binaries_ns(uint64_t host_mnt_ns, uint64_t init_user_ns, uint64_t mnt_ns, uint64_t user_ns)
{
	if (host_mnt_ns == 0 || mnt_ns == 0 || user_ns == init_user_ns)
		return 0;
	if (mnt_ns != host_mnt_ns)
		return mnt_ns;
	/*
	 * The host's mount namespace, a user's user namespace: its chroot(2)
	 * needs no more, and the kernel names the chroot's files by their
	 * paths inside it (and a thread may have a mount namespace of its
	 * own, which the process's record does not tell).  Kept apart by the
	 * user namespace (an nsfs inode too: never a mount namespace's).
	 */
	return init_user_ns != 0 && user_ns != 0 ? user_ns : 0;
}

int
binaries_init(struct binaries *b)
{
	memset(b, 0, sizeof(*b));
	b->cap = 1024;
	b->slots = calloc(b->cap, sizeof(*b->slots));
	b->pslots = calloc(b->cap, sizeof(*b->pslots));
	if (b->slots == NULL || b->pslots == NULL) {
		binaries_free(b);
		return -ENOMEM;
	}
	return 0;
}

void
binaries_free(struct binaries *b)
{
	size_t	 i;

	for (i = 0; i < b->nchunks; i++)
		free(b->chunks[i]);
	free(b->chunks);
	free(b->slots);
	free(b->pslots);
	free(b->free_ids);
	arena_free(&b->names);
	memset(b, 0, sizeof(*b));
}

/* The hash of live entries again, CAP slots (a power of two). */
/* ID into PS (CAP slots) at its path's hash H: one slot per entry, a path's share them. */
static void
path_put(uint32_t *ps, size_t cap, uint64_t h, uint32_t id)
{
	size_t	 j;

	for (j = h & (cap - 1); ps[j] != 0; j = (j + 1) & (cap - 1))
		;
	ps[j] = id + 1;
}

static int
rehash(struct binaries *b, size_t cap)
{
	struct binary *e;
	size_t	 i, j;
	uint32_t *s, *ps;

	if ((s = calloc(cap, sizeof(*s))) == NULL)
		return -1;
	if ((ps = calloc(cap, sizeof(*ps))) == NULL) {
		free(s);
		return -1;
	}
	for (i = 0; i < b->n; i++) {
		if ((e = binaries_at(b, (uint32_t)i))->bidsize == 0)
			continue;
		for (j = e->hash & (cap - 1); s[j] != 0; j = (j + 1) & (cap - 1))
			;
		s[j] = (uint32_t)i + 1;
		path_put(ps, cap, e->path_hash, (uint32_t)i);
	}
	free(b->slots);
	free(b->pslots);
	b->slots = s;
	b->pslots = ps;
	b->cap = cap;
	return 0;
}

size_t
binaries_by_path(const struct binaries *b, const char *path, uint32_t *ids, size_t max,
    size_t walk_max)
{
	uint64_t h = hash_str(path, HASH_INIT);
	const struct binary *e;
	size_t	 j, n = 0, walked = 0, k;

	for (j = h & (b->cap - 1); b->pslots[j] != 0; j = (j + 1) & (b->cap - 1)) {
		if (++walked > walk_max)
			return SIZE_MAX;
		if ((e = binaries_at(b, b->pslots[j] - 1)) == NULL || e->bidsize == 0 ||
		    e->path_hash != h || strcmp(e->path, path) != 0)
			continue;
		/* an id twice: a prune that could not rehash for want of memory */
		for (k = 0; k < n && ids[k] != e->id; k++)
			;
		if (k < n)
			continue;
		if (n == max)
			return SIZE_MAX;
		ids[n++] = e->id;
	}
	return n;
}

static int
grow(struct binaries *b)
{
	return rehash(b, b->cap * 2);
}

/* Is E (NAME's first LEN bytes, ID) in NS? */
static int
match(const struct binary *e, const char *name, size_t len, const uint8_t *id,
    uint8_t idsize, uint64_t ns)
{
	return e->bidsize == idsize && e->ns == ns && memcmp(e->bid, id, idsize) == 0 &&
	    strncmp(e->path, name, len) == 0 && e->path[len] == '\0';
}

/* The length of NAME as an entry's path (binaries_get_ns). */
static size_t
key_len(const char *name, int unlinked)
{
	return unlinked ? record_name_len(name) : strlen(name);
}

int
binaries_match(const struct binary *e, const char *name, int unlinked, const uint8_t *id,
    uint8_t idsize, uint64_t ns)
{
	return idsize > 0 && match(e, name, key_len(name, unlinked), id, idsize, ns);
}

struct binary *
binaries_get(struct binaries *b, const char *name, int unlinked, const uint8_t *id,
    uint8_t idsize, int *created)
{
	return binaries_get_ns(b, name, unlinked, id, idsize, 0, created);
}

struct binary *
binaries_get_ns(struct binaries *b, const char *name, int unlinked, const uint8_t *id,
    uint8_t idsize, uint64_t ns, int *created)
{
	size_t	 len = key_len(name, unlinked), j;
	uint64_t h;
	uint32_t nid;
	struct binary *e;

	if (created != NULL)
		*created = 0;
	if (idsize == 0 || idsize > BUILD_ID_MAX)
		return NULL;
	h = hash_bytes(&ns, sizeof(ns), hash_bytes(name, len, hash_bytes(id, idsize, HASH_INIT)));
	if ((binaries_live(b) + 1) * 2 > b->cap && grow(b) < 0)
		return NULL;
	for (j = h & (b->cap - 1); b->slots[j] != 0; j = (j + 1) & (b->cap - 1)) {
		e = binaries_at(b, b->slots[j] - 1);
		if (e->hash == h && match(e, name, len, id, idsize, ns))
			return e;
	}
	if (b->nfree > 0) {
		nid = b->free_ids[--b->nfree];
		goto fill;
	}
	if (b->n >= BINARY_NONE - 1)
		return NULL;
	if (b->n == b->nchunks * BINARIES_CHUNK) {
		struct binary **nc = reallocarray(b->chunks, b->nchunks + 1, sizeof(*nc));

		if (nc == NULL)
			return NULL;
		b->chunks = nc;
		if ((nc[b->nchunks] = malloc(BINARIES_CHUNK * sizeof(**nc))) == NULL)
			return NULL;
		b->nchunks++;
	}
	nid = (uint32_t)b->n++;
fill:
	e = binaries_at(b, nid);
	memset(e, 0, sizeof(*e));
	if ((e->path = arena_strndup(&b->names, name, len)) == NULL) {
		if (nid + 1 == b->n)
			b->n--;
		else
			b->free_ids[b->nfree++] = nid;	/* where it was taken from */
		return NULL;
	}
	b->names_live += len + 1;
	e->hash = h;
	e->path_hash = hash_bytes(name, len, HASH_INIT);
	e->id = nid;
	e->ns = ns;
	e->ns_uid = -1;
	memcpy(e->bid, id, idsize);
	e->bidsize = idsize;
	b->slots[j] = nid + 1;
	path_put(b->pslots, b->cap, e->path_hash, nid);
	if (created != NULL)
		*created = 1;
	return e;
}

/* The names of live entries into a new arena, the old one freed. */
static void
compact(struct binaries *b)
{
	struct arena a;
	struct binary *e;
	const char *p;
	size_t	 i;

	memset(&a, 0, sizeof(a));
	for (i = 0; i < b->n; i++) {
		if ((e = binaries_at(b, (uint32_t)i))->bidsize == 0)
			continue;
		if ((p = arena_strdup(&a, e->path)) == NULL) {
			arena_free(&a);		/* out of memory: keep the old one */
			return;
		}
		e->path = p;
	}
	arena_free(&b->names);
	b->names = a;
}

size_t
binaries_prune(struct binaries *b, int (*keep)(const struct binary *, void *),
    void (*gone)(const struct binary *, void *), void *arg)
{
	struct binary *e;
	size_t	 i, n = 0, cap;
	uint32_t *nf;

	for (i = 0; i < b->n; i++) {
		if ((e = binaries_at(b, (uint32_t)i))->bidsize == 0)
			continue;
		if (keep(e, arg)) {
			e->keep = 0;
			continue;
		}
		if (b->nfree == b->cfree) {
			cap = b->cfree ? b->cfree * 2 : 1024;
			if ((nf = reallocarray(b->free_ids, cap, sizeof(*nf))) == NULL)
				break;		/* out of memory: the rest stays */
			b->free_ids = nf;
			b->cfree = cap;
		}
		if (gone != NULL)
			gone(e, arg);
		b->names_live -= strlen(e->path) + 1;
		memset(e, 0, sizeof(*e));
		e->id = (uint32_t)i;
		b->free_ids[b->nfree++] = (uint32_t)i;
		n++;
	}
	if (n == 0)
		return 0;
	for (cap = 1024; cap < (binaries_live(b) + 1) * 4; cap *= 2)
		;
	if (cap < b->cap)
		rehash(b, cap);		/* out of memory: the bigger one stays */
	else
		rehash(b, b->cap);
	if (b->names.bytes > 2 * b->names_live + (1U << 20))
		compact(b);
	return n;
}

void
binaries_unmark(struct binaries *b)
{
	uint32_t id;

	for (id = 0; id < b->n; id++)
		binaries_at(b, id)->mapped = 0;
}
