/*
 * fuzz_record.c - libFuzzer harness for what reads untrusted perf data:
 * the record decoder (as the ring reader feeds it, under each layout
 * perfmapd uses) and the perf.data reader that crash repair runs on torn
 * segments (perfdata_open + perfdata_walk + the feature table), compressed
 * data sections included (seeds segment-zstd*: PERF_RECORD_COMPRESSED).
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Icommon \
 *       tests/fuzz/fuzz_record.c common/record.c common/perfdata.c common/perf_abi.c \
 *       common/compress.c -lzstd -o fuzz_record && ./fuzz_record tests/fuzz/corpus/record
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "perfdata.h"
#include "record.h"

static int
walk_cb(const struct perf_event_header *h, void *arg)
{
	const struct record_layout *l = arg;
	struct record r;

	if (record_decode(h, h->size, l, &r) == 0 && r.type == PERF_RECORD_SAMPLE &&
	    r.sample.nr > 0)
		(void)r.sample.ips[r.sample.nr - 1];	/* must be in bounds */
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t types[] = {
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
		    PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
		    PERF_SAMPLE_CALLCHAIN,
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
		    PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
		PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
		    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_ADDR | PERF_SAMPLE_READ,
	};
	struct perfdata_file f;
	struct perf_file_section sec;
	char	 path[64], err[256];
	size_t	 i, j;
	int	 fd;

	/* The decoder on the raw bytes, as one record, under every layout. */
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		for (j = 0; j < 4; j++) {
			struct record_layout l = { types[i], 1, (int)(j & 1), (int)(j >> 1) };
			struct record r;
			uint8_t	*copy = malloc(size ? size : 1);

			memcpy(copy, data, size);
			if (record_decode(copy, size, &l, &r) == 0) {
				if ((r.type == PERF_RECORD_MMAP || r.type == PERF_RECORD_MMAP2 ||
				    r.type == PERF_RECORD_MMAP3) && r.mmap.filename != NULL)
					(void)strlen(r.mmap.filename);
				if (r.type == PERF_RECORD_COMM && r.comm.comm != NULL)
					(void)strlen(r.comm.comm);
				if (r.type == PERF_RECORD_SAMPLE && r.sample.nr > 0)
					(void)r.sample.ips[r.sample.nr - 1];
			}
			free(copy);
		}

	/* The same bytes as a perf.data file, as repair reads a torn segment. */
	if ((fd = memfd_create("fuzz_record", MFD_CLOEXEC)) < 0)
		abort();
	if (size > 0 && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (perfdata_open(&f, path, err, sizeof(err)) == 0) {
		struct record_layout l = { f.attrs[0].attr.sample_type,
		    f.attrs[0].attr.sample_id_all, 0 };

		perfdata_walk(&f, walk_cb, &l);
		for (i = 1; i < 32; i++)
			perfdata_feature(&f, (int)i, &sec);
		perfdata_file_close(&f);
	}
	close(fd);
	return 0;
}
