/*
 * hash.h - the one string/bytes hash the daemon's tables use: build-id
 * sets, the index's object and unresolved tables, the capture worker's
 * id sets.  In memory only (never stored), so it can change freely.
 *
 * Eight bytes per step (a multiply and a shift), then a final mix so the
 * low bits, which the open-addressing tables use, depend on every input
 * byte.  It replaced a byte-at-a-time FNV-1a that was a tenth of the
 * daemon's CPU under an exec storm (tests/bench/RESULTS.md).  Chain it to
 * hash several fields: hash_str(path, hash_bytes(id, n, HASH_INIT)).
 */
#ifndef PERFMAPD_HASH_H
#define PERFMAPD_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HASH_INIT	0x9e3779b97f4a7c15ULL

static inline uint64_t
hash_step(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xff51afd7ed558ccdULL;
	return h ^ (h >> 32);
}

static inline uint64_t
hash_bytes(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;
	uint64_t w;

	h = hash_step(h, n);
	for (; n >= 8; b += 8, n -= 8) {
		memcpy(&w, b, 8);
		h = hash_step(h, w);
	}
	if (n > 0) {
		w = 0;
		memcpy(&w, b, n);
		h = hash_step(h, w);
	}
	/* fmix64 (MurmurHash3): every output bit depends on every input bit */
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

static inline uint64_t
hash_str(const char *s, uint64_t h)
{
	return hash_bytes(s, strlen(s), h);
}

#endif
