/*
 * compress.h - the records of a perf.data data section as one zstd stream
 * in PERF_RECORD_COMPRESSED records, as `perf record -z` writes them, and
 * read back.  Both sides follow perf 6.1 (tools/perf/util/zstd.c,
 * session.c perf_session__process_compressed_event):
 *
 *   writer: records are staged whole, at most COMPRESS_STAGE bytes; each
 *           full stage (and each flush) is compressed with ZSTD_e_flush
 *           into one COMPRESSED record: zstd's bound for a stage, with
 *           the record's header, is under 64 KiB, so a record holds whole
 *           zstd blocks and decompresses to at least one byte (perf 6.1
 *           takes a record that decompresses to nothing, a part of a
 *           block, for corrupt data: "Couldn't decompress data") and at
 *           most COMPRESS_STAGE.  One stream per file: a record larger
 *           than a stage is split across flushes (perf carries the part
 *           over, as the reader here does).
 *   reader: one stream per file; each COMPRESSED record's payload is
 *           decompressed into at most MMAP_LEN bytes (the file's
 *           HEADER_COMPRESSED comp_mmap_len: perf allocates that much per
 *           record and no more), after the partial record the previous
 *           one left; whole records are handed out, the partial one
 *           carried.  More output than MMAP_LEN, a zstd error or a record
 *           smaller than its header is an error, never a larger buffer.
 */
#ifndef PERFMAPD_COMPRESS_H
#define PERFMAPD_COMPRESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf_abi.h"

#define PERF_RECORD_COMPRESSED	81
/* The most of the stream one COMPRESSED record holds (u16 size, header included). */
#define COMPRESS_RECORD_MAX	65535
/*
 * The most one COMPRESSED record decompresses to, the comp_mmap_len the
 * writer gives (files written before COMPRESS_STAGE staged this much).
 */
#define COMPRESS_CHUNK		(128 * 1024)
/*
 * Staged records per flush: ZSTD_compressBound(64000) is 64,282 bytes, so
 * a flush's output fits one record (65,535 bytes, 8 of them its header).
 */
#define COMPRESS_STAGE		64000
/* The largest comp_mmap_len a reader accepts from a file (perf record -m 16M). */
#define COMPRESS_MMAP_LEN_MAX	(16U << 20)

/* HEADER_COMPRESSED's payload: version 1, type 1 (zstd). */
struct compress_info {
	uint32_t	 version, type, level, ratio, mmap_len;
};

struct compress;
struct decompress;

struct compress	*compress_new(int level);
void	 compress_free(struct compress *);
/* The most compress_flush() can write for STAGED + LEN bytes of records. */
size_t	 compress_bound(const struct compress *, size_t len);
size_t	 compress_staged(const struct compress *);
/*
 * Stage LEN bytes of whole records; whenever the stage is full it is
 * compressed into OUT (*OUTLEN grows).  OUT must have compress_bound(LEN)
 * bytes free after *OUTLEN.  0, or -1 on a zstd error.
 */
int	 compress_put(struct compress *, const void *, size_t, uint8_t *out, size_t *outlen);
/* Compress what is staged (ZSTD_e_flush) into OUT, as compress_put. */
int	 compress_flush(struct compress *, uint8_t *out, size_t *outlen);
/* HEADER_COMPRESSED for what went through C. */
void	 compress_get_info(const struct compress *, struct compress_info *);

struct decompress *decompress_new(uint32_t mmap_len);
void	 decompress_free(struct decompress *);
/* One COMPRESSED record's payload.  0, or -1 with a message in ERR. */
int	 decompress_feed(struct decompress *, const void *, size_t, char *err, size_t errlen);
/*
 * The next whole record decompressed (valid until the next feed) in *H: 1;
 * 0 when none is whole; -1 (message in ERR) for a record shorter than its
 * header.
 */
int	 decompress_next(struct decompress *, const struct perf_event_header **h,
	    char *err, size_t errlen);
/* Bytes of a record begun and not finished (0: the stream is at a record's end). */
size_t	 decompress_pending(const struct decompress *);

#endif
