/*
 * hash.h - the one string/bytes hash the daemon's tables use (FNV-1a,
 * 64-bit): build-id sets, the index's object table.  Chain it to hash
 * several fields: fnv1a(b, nb, fnv1a(a, na, FNV1A_INIT)).
 */
#ifndef PERFMAPD_HASH_H
#define PERFMAPD_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_INIT	14695981039346656037ULL

static inline uint64_t
fnv1a(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;

	while (n-- > 0) {
		h ^= *b++;
		h *= 1099511628211ULL;
	}
	return h;
}

#endif
