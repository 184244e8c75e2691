/*
 * binaries.h - every binary the daemon knows of in this run: one entry per
 * (path, build-id).  It is the identity the recorder, the index and the
 * capture worker share.  The recorder looks a mapping's binary up once
 * (binaries_get); what it tells the others (notify.h) carries the entry,
 * so nobody hashes the pair again: the index keeps its row of a binary at
 * the entry's id, the model keeps the id in each map.
 *
 * Entries are created by the recorder (a mapping) and by the index (rows
 * loaded from index.db, kernel and module scans, segments read back at
 * start), never freed before the table, and never move: a pointer or an
 * id stays valid for the run.
 *
 * The kernel names a file that was unlinked when it was mapped "PATH
 * (deleted)"; /proc/PID/maps does the same for a running process whose
 * binary was replaced since.  The entry is PATH with its build-id: that is
 * what the history of PATH must show.
 */
#ifndef PERFMAPD_BINARIES_H
#define PERFMAPD_BINARIES_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "perf_abi.h"

enum binary_kind {
	BINARY_USER = 0,
	BINARY_KERNEL,		/* [kernel.kallsyms] */
	BINARY_MODULE,
};

#define BINARY_NONE	UINT32_MAX	/* "no binary" where an id is kept */

struct binary {
	const char	*path;		/* arena, without " (deleted)" */
	uint64_t	 hash;
	uint64_t	 seg_seq;	/* recorder: last segment whose build-id table lists it */
	uint32_t	 id;		/* 0, 1, 2, ... in order of creation */
	uint8_t		 bid[BUILD_ID_MAX];
	uint8_t		 bidsize;
	uint8_t		 kind;		/* enum binary_kind */
	uint8_t		 mapped;	/* recorder: mapped in this run (not only known) */
};

#define BINARIES_CHUNK	16384		/* entries per chunk: entries never move */

struct binaries {
	struct binary	**chunks;
	size_t		 n, nchunks;
	uint32_t	*slots;		/* id + 1, 0 = empty (open addressing) */
	size_t		 cap;
	struct arena	 names;
};

int	binaries_init(struct binaries *);
void	binaries_free(struct binaries *);

/*
 * The entry of (NAME without " (deleted)", ID), created if new (then
 * *CREATED, if not NULL, is 1).  NULL if IDSIZE is 0 or too large, or
 * when out of memory.
 */
struct binary *binaries_get(struct binaries *, const char *name, const uint8_t *id,
	    uint8_t idsize, int *created);

static inline struct binary *
binaries_at(const struct binaries *b, uint32_t id)
{
	if (id >= b->n)
		return NULL;
	return &b->chunks[id / BINARIES_CHUNK][id % BINARIES_CHUNK];
}

#endif
