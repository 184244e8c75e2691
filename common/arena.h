/*
 * arena.h - strings that live as long as their table: copied into 1 MiB
 * chunks, never freed one by one.  The tables of binaries and of the
 * index's unresolved paths keep their names here, so a row costs no
 * malloc of its own.
 */
#ifndef PERFMAPD_ARENA_H
#define PERFMAPD_ARENA_H

#include <stddef.h>

struct arena {
	char		**chunks;
	size_t		 nchunks;
	char		*cur;
	size_t		 left;
	size_t		 bytes;		/* handed out */
};

/* A copy of the first LEN bytes of S, NUL-terminated; NULL when out of memory. */
const char *arena_strndup(struct arena *, const char *s, size_t len);
const char *arena_strdup(struct arena *, const char *s);
void	arena_free(struct arena *);

#endif
