/*
 * bench_stretch.c - an hour of segments from one real minute, for the
 * profile benchmark: SEGMENT (a closed segment perfmapd wrote, with its
 * binaries in STATE/debug) is copied COPIES times, each copy's times moved
 * on by the segment's length, PER copies to an output segment, into
 * STATE/segments with their index rows.  The stacks, binaries and rates
 * are the real ones; only the clock is stretched.
 * Usage: bench_stretch SEGMENT STATE COPIES PER   (prints the window: @S @U)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "index/index.h"
#include "log.h"
#include "perfdata.h"
#include "record.h"

struct copy {
	struct perfdata	*out;
	struct record_layout l;
	uint64_t	 shift, samples, records;
	uint8_t		 buf[65536];
};

static int
copy_cb(const struct perf_event_header *h, void *arg)
{
	struct copy *c = arg;
	uint64_t t;

	memcpy(c->buf, h, h->size);
	if (record_time(c->buf, h->size, &c->l, &t) == 0)
		record_set_time(c->buf, h->size, &c->l, t + c->shift);
	if (h->type == PERF_RECORD_SAMPLE)
		c->samples++;
	c->records++;
	return perfdata_write(c->out, c->buf, h->size) < 0;
}

int
main(int argc, char **argv)
{
	struct perfdata_file f;
	struct perfdata_attr a;
	struct perfdata_meta m;
	struct perfdata pd;
	struct config conf;
	struct index *ix;
	struct copy *c;
	uint64_t ids[1024], len, wall, ref, first = 0, last = 0, *cd;
	void	*buf, *host = NULL;
	size_t	 blen, nids, hlen, nbids = 0;
	static struct perfdata_buildid bids[65536];
	char	 err[512], path[4096];
	int	 copies, per, k, seg;

	if (argc != 5 || (copies = atoi(argv[3])) <= 0 || (per = atoi(argv[4])) <= 0) {
		fprintf(stderr, "usage: bench_stretch SEGMENT STATE COPIES PER\n");
		return 2;
	}
	log_init("bench_stretch", 0);
	if (perfdata_open(&f, argv[1], err, sizeof(err)) < 0 ||
	    perfdata_read_feature(&f, HEADER_CLOCK_DATA, (void **)&cd, &blen, 64) < 0 ||
	    perfdata_read_feature(&f, HEADER_SAMPLE_TIME, &buf, &blen, 64) < 0) {
		fprintf(stderr, "%s: not a closed segment\n", argv[1]);
		return 1;
	}
	memcpy(&first, buf, 8);
	memcpy(&last, (char *)buf + 8, 8);
	free(buf);
	wall = cd[1];
	ref = cd[2];
	len = last - first + 1000000;
	nids = f.attrs[0].ids.size / 8;
	if (nids > 1024 || pread(f.fd, ids, nids * 8, (off_t)f.attrs[0].ids.offset) < 0)
		return 1;
	memset(&a, 0, sizeof(a));
	a.attr = f.attrs[0].attr;
	a.name = "cpu-clock";
	a.ids = ids;
	a.nids = nids;
	/* the source's build-id table, for every output segment */
	if (perfdata_read_feature(&f, HEADER_BUILD_ID, &buf, &blen, 64 << 20) == 0) {
		uint8_t	*p = buf, *end = p + blen;

		while (end - p > (ptrdiff_t)sizeof(struct build_id_entry) && nbids < 65536) {
			struct build_id_entry e;

			memcpy(&e, p, sizeof(e));
			if (e.header.size <= sizeof(e) || e.header.size > end - p)
				break;
			memcpy(bids[nbids].id, e.build_id, 20);
			bids[nbids].size = (e.header.misc & PERF_RECORD_MISC_BUILD_ID_SIZE) ?
			    e.build_id[20] : 20;
			bids[nbids].kernel = (e.header.misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
			    PERF_RECORD_MISC_KERNEL;
			bids[nbids].filename = (const char *)p + sizeof(e);
			nbids++;
			p += e.header.size;
		}
	}
	perfdata_read_feature(&f, HEADER_HOSTNAME, &host, &hlen, 4096);
	config_defaults(&conf);
	if (index_open(&ix, argv[2], &conf, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	c = calloc(1, sizeof(*c));
	c->l.sample_type = a.attr.sample_type;
	c->l.sample_id_all = a.attr.sample_id_all;
	for (seg = 0, k = 0; k < copies; seg++) {
		uint64_t start = first + (uint64_t)k * len, samples = 0, records = 0;
		int	 j;

		snprintf(path, sizeof(path), "%s/segments/perf-%06d-20260101T%02d%02d00Z.data",
		    argv[2], 900000 + seg, seg / 60, seg % 60);
		if (perfdata_create(&pd, path, &a, 1) < 0) {
			perror(path);
			return 1;
		}
		c->out = &pd;
		for (j = 0; j < per && k < copies; j++, k++) {
			c->shift = (uint64_t)k * len;
			c->samples = c->records = 0;
			if (perfdata_walk(&f, copy_cb, c) < 0)
				return 1;
			samples += c->samples;
			records += c->records;
		}
		memset(&m, 0, sizeof(m));
		m.hostname = "bench";
		m.clockid = a.attr.clockid;
		m.clock_wall_ns = wall - ref + start;
		m.clock_ref_ns = start;
		m.first_time = start;
		m.last_time = first + (uint64_t)k * len;
		if (perfdata_finish(&pd, &a, 1, &m, bids, nbids) < 0)
			return 1;
		index_segment_open(ix, 900000 + (uint64_t)seg, strrchr(path, '/') + 1,
		    wall - ref + start);
		index_segment_close(ix, 900000 + (uint64_t)seg, wall - ref + first +
		    (uint64_t)k * len, 0, samples, 0, records);
	}
	index_flush(ix);
	index_close(ix);
	printf("@%.3f @%.3f\n", (double)(wall - ref + first) / 1e9,
	    (double)(wall - ref + first + (uint64_t)copies * len) / 1e9);
	free(buf);
	free(host);
	free(c);
	perfdata_file_close(&f);
	return 0;
}
