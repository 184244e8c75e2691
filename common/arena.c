/*
 * arena.c - see arena.h.
 */
#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define ARENA_CHUNK	(1024 * 1024)

const char *
arena_strndup(struct arena *a, const char *s, size_t n)
{
	size_t	 len = n + 1;
	char	*p, **nc;

	if (len > a->left) {
		size_t sz = len > ARENA_CHUNK ? len : ARENA_CHUNK;

		if ((nc = reallocarray(a->chunks, a->nchunks + 1, sizeof(*nc))) == NULL)
			return NULL;
		a->chunks = nc;
		if ((a->cur = malloc(sz)) == NULL)
			return NULL;
		a->chunks[a->nchunks++] = a->cur;
		a->left = sz;
	}
	p = a->cur;
	memcpy(p, s, n);
	p[n] = '\0';
	a->cur += len;
	a->left -= len;
	a->bytes += len;
	return p;
}

const char *
arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

void
arena_free(struct arena *a)
{
	size_t	 i;

	for (i = 0; i < a->nchunks; i++)
		free(a->chunks[i]);
	free(a->chunks);
	memset(a, 0, sizeof(*a));
}
