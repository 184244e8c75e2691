/*
 * binaries.c - the table of binaries; see binaries.h.  An open-addressing
 * hash of entry ids over entries stored in fixed chunks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binaries.h"
#include "hash.h"
#include "record.h"

int
binaries_init(struct binaries *b)
{
	memset(b, 0, sizeof(*b));
	b->cap = 1024;
	b->slots = calloc(b->cap, sizeof(*b->slots));
	return b->slots == NULL ? -ENOMEM : 0;
}

void
binaries_free(struct binaries *b)
{
	size_t	 i;

	for (i = 0; i < b->nchunks; i++)
		free(b->chunks[i]);
	free(b->chunks);
	free(b->slots);
	arena_free(&b->names);
	memset(b, 0, sizeof(*b));
}

static int
grow(struct binaries *b)
{
	size_t	 cap = b->cap * 2, i, j;
	uint32_t *s;

	if ((s = calloc(cap, sizeof(*s))) == NULL)
		return -1;
	for (i = 0; i < b->n; i++) {
		for (j = binaries_at(b, (uint32_t)i)->hash & (cap - 1); s[j] != 0;
		    j = (j + 1) & (cap - 1))
			;
		s[j] = (uint32_t)i + 1;
	}
	free(b->slots);
	b->slots = s;
	b->cap = cap;
	return 0;
}

struct binary *
binaries_get(struct binaries *b, const char *name, const uint8_t *id, uint8_t idsize,
    int *created)
{
	size_t	 len = record_name_len(name), j;
	uint64_t h;
	struct binary *e;

	if (created != NULL)
		*created = 0;
	if (idsize == 0 || idsize > BUILD_ID_MAX)
		return NULL;
	h = hash_bytes(name, len, hash_bytes(id, idsize, HASH_INIT));
	if ((b->n + 1) * 2 > b->cap && grow(b) < 0)
		return NULL;
	for (j = h & (b->cap - 1); b->slots[j] != 0; j = (j + 1) & (b->cap - 1)) {
		e = binaries_at(b, b->slots[j] - 1);
		if (e->hash == h && e->bidsize == idsize && memcmp(e->bid, id, idsize) == 0 &&
		    strncmp(e->path, name, len) == 0 && e->path[len] == '\0')
			return e;
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
	e = &b->chunks[b->n / BINARIES_CHUNK][b->n % BINARIES_CHUNK];
	memset(e, 0, sizeof(*e));
	if ((e->path = arena_strndup(&b->names, name, len)) == NULL)
		return NULL;
	e->hash = h;
	e->id = (uint32_t)b->n;
	memcpy(e->bid, id, idsize);
	e->bidsize = idsize;
	b->slots[j] = (uint32_t)b->n + 1;
	b->n++;
	if (created != NULL)
		*created = 1;
	return e;
}
