/*
 * compress.c - PERF_RECORD_COMPRESSED streams (zstd), written and read.
 * See compress.h for the framing and the bounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "compress.h"

struct compress {
	ZSTD_CCtx	*cctx;
	int		 level;
	uint8_t		*stage;
	size_t		 staged;
	uint64_t	 bytes_in, bytes_out;
};

struct decompress {
	ZSTD_DCtx	*dctx;
	uint32_t	 mmap_len;
	uint8_t		*buf;		/* carried partial record, then the output */
	size_t		 head, size;
};

/* A perf record is at most 64 KiB; what a feed may carry over. */
#define CARRY_MAX	65536

struct compress *
compress_new(int level)
{
	struct compress *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->level = level;
	if ((c->stage = malloc(COMPRESS_STAGE)) == NULL ||
	    (c->cctx = ZSTD_createCCtx()) == NULL ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, level))) {
		compress_free(c);
		return NULL;
	}
	return c;
}

void
compress_free(struct compress *c)
{
	if (c == NULL)
		return;
	ZSTD_freeCCtx(c->cctx);
	free(c->stage);
	free(c);
}

size_t
compress_staged(const struct compress *c)
{
	return c->staged;
}

/*
 * zstd's own bound is about n + n/256 per frame; each flush adds block
 * and record headers (8 bytes per record): n/128 and 1 KiB per stage
 * cover both with room to spare.
 */
size_t
compress_bound(const struct compress *c, size_t len)
{
	size_t	 n = c->staged + len;

	return n + n / 128 + (n / COMPRESS_STAGE + 2) * 1024;
}

int
compress_flush(struct compress *c, uint8_t *out, size_t *outlen)
{
	ZSTD_inBuffer	 in = { c->stage, c->staged, 0 };
	size_t		 left;
	int		 guard;

	if (c->staged == 0)
		return 0;
	/* One round (a stage's bound fits a record); each more would make progress. */
	for (guard = 0; guard < 64; guard++) {
		struct perf_event_header h = { PERF_RECORD_COMPRESSED, 0, 0 };
		ZSTD_outBuffer	 o = { out + *outlen + sizeof(h),
		    COMPRESS_RECORD_MAX - sizeof(h), 0 };

		left = ZSTD_compressStream2(c->cctx, &o, &in, ZSTD_e_flush);
		if (ZSTD_isError(left))
			return -1;
		if (o.pos > 0) {
			h.size = (uint16_t)(sizeof(h) + o.pos);
			memcpy(out + *outlen, &h, sizeof(h));
			*outlen += h.size;
			c->bytes_out += h.size;
		}
		if (left == 0 && in.pos == in.size) {
			c->bytes_in += c->staged;
			c->staged = 0;
			return 0;
		}
	}
	return -1;
}

int
compress_put(struct compress *c, const void *data, size_t len, uint8_t *out, size_t *outlen)
{
	const uint8_t *p = data;

	while (len > 0) {
		struct perf_event_header h;
		size_t	 n = len;

		/* A whole record at a time, so that a flush ends on a record's end. */
		if (len >= sizeof(h)) {
			memcpy(&h, p, sizeof(h));
			if (h.size >= sizeof(h) && h.size <= len)
				n = h.size;
		}
		if (n > COMPRESS_STAGE - c->staged && c->staged > 0 &&
		    compress_flush(c, out, outlen) < 0)
			return -1;
		if (n > COMPRESS_STAGE - c->staged)
			n = COMPRESS_STAGE - c->staged;	/* too big for a stage, or not records */
		memcpy(c->stage + c->staged, p, n);
		c->staged += n;
		p += n;
		len -= n;
	}
	return 0;
}

void
compress_get_info(const struct compress *c, struct compress_info *ci)
{
	ci->version = 1;
	ci->type = 1;		/* zstd */
	ci->level = (uint32_t)c->level;
	ci->ratio = c->bytes_out == 0 ? 1 :
	    (uint32_t)((c->bytes_in + c->bytes_out / 2) / c->bytes_out);
	if (ci->ratio == 0)
		ci->ratio = 1;
	ci->mmap_len = COMPRESS_CHUNK;
}

struct decompress *
decompress_new(uint32_t mmap_len)
{
	struct decompress *d;

	if (mmap_len < sizeof(struct perf_event_header) || mmap_len > COMPRESS_MMAP_LEN_MAX)
		return NULL;
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	d->mmap_len = mmap_len;
	if ((d->buf = malloc(CARRY_MAX + (size_t)mmap_len + 1)) == NULL ||
	    (d->dctx = ZSTD_createDCtx()) == NULL) {
		decompress_free(d);
		return NULL;
	}
	return d;
}

void
decompress_free(struct decompress *d)
{
	if (d == NULL)
		return;
	ZSTD_freeDCtx(d->dctx);
	free(d->buf);
	free(d);
}

size_t
decompress_pending(const struct decompress *d)
{
	return d->size - d->head;
}

int
decompress_feed(struct decompress *d, const void *src, size_t len, char *err, size_t errlen)
{
	size_t	 carry = d->size - d->head;
	ZSTD_inBuffer	 in = { src, len, 0 };
	ZSTD_outBuffer	 out;

	/* decompress_next leaves less than one record (< 64 KiB) behind */
	if (carry >= CARRY_MAX) {
		snprintf(err, errlen, "a record longer than 64 KiB in the stream");
		return -1;
	}
	memmove(d->buf, d->buf + d->head, carry);
	d->head = 0;
	d->size = carry;
	/* One byte more than perf's buffer: a chunk that does not fit is seen. */
	out = (ZSTD_outBuffer){ d->buf + carry, (size_t)d->mmap_len + 1, 0 };
	while (in.pos < in.size) {
		size_t	 inpos = in.pos, outpos = out.pos;
		size_t	 rc = ZSTD_decompressStream(d->dctx, &out, &in);

		if (ZSTD_isError(rc)) {
			snprintf(err, errlen, "zstd: %s", ZSTD_getErrorName(rc));
			return -1;
		}
		if (out.pos > d->mmap_len) {
			snprintf(err, errlen, "decompresses to more than comp_mmap_len (%u bytes)",
			    d->mmap_len);
			return -1;
		}
		if (in.pos == inpos && out.pos == outpos) {
			snprintf(err, errlen, "zstd makes no progress");
			return -1;
		}
	}
	d->size += out.pos;
	return 0;
}

int
decompress_next(struct decompress *d, const struct perf_event_header **hp, char *err,
    size_t errlen)
{
	struct perf_event_header h;

	if (d->size - d->head < sizeof(h))
		return 0;
	memcpy(&h, d->buf + d->head, sizeof(h));
	/* perf records are whole u64s; anything else is damage, and would be read misaligned */
	if (h.size < sizeof(h) || h.size % 8 != 0) {
		snprintf(err, errlen, "a record of %u bytes in the stream", h.size);
		return -1;
	}
	if (d->size - d->head < h.size)
		return 0;
	*hp = (const struct perf_event_header *)(d->buf + d->head);
	d->head += h.size;
	return 1;
}
