/*
 * perfout.c - a profile as one perf.data.  See perfout.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"
#include "perfout.h"

#define PERFOUT_MAX_IDS		(1 << 16)
#define PERFOUT_MAX_ATTRS	16

struct oattr {
	struct perf_event_attr attr;
	uint64_t	*ids;
	size_t		 nids, cap;
};

struct perfout {
	struct perfdata	 pd;
	struct oattr	 a[PERFOUT_MAX_ATTRS];
	struct perfdata_attr pa[PERFOUT_MAX_ATTRS];
	size_t		 na;
	struct perfdata_buildid *bids;
	size_t		 nbids, capbids;
	uint64_t	*bidset;		/* hash of (id, name) + 1, open addressing */
	size_t		 bidsetcap;
	char		*host[4];		/* hostname, osrelease, version, arch */
	int		 have_host;
	int		 oom;
	int		 clockid;
	uint64_t	 wall, ref;
	uint64_t	 first, last;
};

static int
add_id(struct oattr *o, uint64_t id)
{
	size_t	 i;

	for (i = 0; i < o->nids; i++)
		if (o->ids[i] == id)
			return 0;
	if (o->nids >= PERFOUT_MAX_IDS)
		return -1;
	if (o->nids == o->cap) {
		size_t	 ncap = o->cap ? o->cap * 2 : 16;
		uint64_t *n = realloc(o->ids, ncap * sizeof(*n));

		if (n == NULL)
			return -1;
		o->ids = n;
		o->cap = ncap;
	}
	o->ids[o->nids++] = id;
	return 0;
}

/* The attributes and ids of one segment, merged into OUT's. */
static int
merge_attrs(struct perfout *out, struct perfdata_file *f, char *err, size_t errlen)
{
	size_t	 i, j, k;

	for (i = 0; i < f->nattrs; i++) {
		const struct perf_event_attr *a = &f->attrs[i].attr;
		uint64_t ids[1024];
		size_t	 nids = f->attrs[i].ids.size / sizeof(uint64_t);

		if (f->attrs[i].ids.size % sizeof(uint64_t) != 0 || nids > 1024 ||
		    f->attrs[i].ids.offset > f->file_size ||
		    (nids > 0 && pread(f->fd, ids, nids * sizeof(uint64_t),
		    (off_t)f->attrs[i].ids.offset) != (ssize_t)(nids * sizeof(uint64_t)))) {
			snprintf(err, errlen, "cannot read the event ids of a segment");
			return -1;
		}
		for (j = 0; j < out->na; j++)
			if (out->a[j].attr.type == a->type && out->a[j].attr.config == a->config &&
			    out->a[j].attr.sample_type == a->sample_type &&
			    out->a[j].attr.read_format == a->read_format)
				break;
		if (j == out->na) {
			if (out->na == PERFOUT_MAX_ATTRS) {
				snprintf(err, errlen, "more than %d different events in the window",
				    PERFOUT_MAX_ATTRS);
				return -1;
			}
			if (out->na > 0 && (out->a[0].attr.sample_id_all != a->sample_id_all ||
			    !(a->sample_type & PERF_SAMPLE_IDENTIFIER))) {
				snprintf(err, errlen, "segments with incompatible events in the window");
				return -1;
			}
			out->a[j].attr = *a;
			out->na++;
		}
		for (k = 0; k < nids; k++)
			if (add_id(&out->a[j], ids[k]) < 0) {
				snprintf(err, errlen, "too many event ids in the window");
				return -1;
			}
	}
	return 0;
}

int
perfout_open(struct perfout **outp, int fd, char *const *paths, size_t n, char *err,
    size_t errlen)
{
	struct perfout *out;
	struct perfdata_file f;
	size_t	 i, opened;
	int	 rc, nfd = -1;

	if ((out = calloc(1, sizeof(*out))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	out->pd.fd = -1;
	out->clockid = -1;
	/*
	 * One closed since it was listed is read by its final name (the path
	 * changed to it); one gone (retention) is left out here, and counted
	 * gone when its records are read.
	 */
	for (i = 0, opened = 0; i < n; i++) {
		if (perfdata_open_segment(&f, paths[i], err, errlen) < 0)
			continue;
		opened++;
		rc = merge_attrs(out, &f, err, errlen);
		perfdata_file_close(&f);
		if (rc < 0)
			goto fail;
	}
	if (opened == 0)
		goto fail;		/* ERR: the last one's */
	for (i = 0; i < out->na; i++) {
		out->pa[i].attr = out->a[i].attr;
		out->pa[i].name = perf_event_name(&out->a[i].attr);
		out->pa[i].ids = out->a[i].ids;
		out->pa[i].nids = out->a[i].nids;
	}
	if ((nfd = dup(fd)) == -1 || (rc = perfdata_create_fd(&out->pd, nfd, out->pa, out->na)) < 0) {
		snprintf(err, errlen, "writing the profile: %s", strerror(nfd == -1 ? errno : -rc));
		if (nfd == -1)
			goto fail;
		out->pd.fd = -1;	/* closed by perfdata_create_fd */
		goto fail;
	}
	*outp = out;
	return 0;
fail:
	perfout_abort(out);
	return -1;
}

/* A perf header string: u32 len, then len bytes (NUL-padded). */
static char *
feat_string(struct perfdata_file *f, int feat)
{
	void	*buf;
	size_t	 len;
	uint32_t n = 0;
	char	*s = NULL;

	if (perfdata_read_feature(f, feat, &buf, &len, 4096) < 0)
		return NULL;
	memcpy(&n, buf, len >= 4 ? 4 : 0);
	if (len >= 4 && n <= len - 4)
		s = strndup((char *)buf + 4, n);
	free(buf);
	return s;
}

static int
bid_add(struct perfout *out, const uint8_t *id, uint8_t size, int kernel, const char *name)
{
	uint64_t h = hash_str(name, hash_bytes(id, size, HASH_INIT)) | 1;
	size_t	 j;

	if ((out->nbids + 1) * 2 > out->bidsetcap) {
		size_t	 ncap = out->bidsetcap ? out->bidsetcap * 2 : 1024, i;
		uint64_t *ns = calloc(ncap, sizeof(*ns));

		if (ns == NULL)
			return -1;
		for (i = 0; i < out->bidsetcap; i++) {
			uint64_t v = out->bidset[i];

			if (v == 0)
				continue;
			for (j = (v >> 32) & (ncap - 1); ns[j] != 0; j = (j + 1) & (ncap - 1))
				;
			ns[j] = v;
		}
		free(out->bidset);
		out->bidset = ns;
		out->bidsetcap = ncap;
	}
	/* the set holds (hash high bits << 32 | index + 1); equal hashes are compared whole */
	for (j = (h >> 32) & (out->bidsetcap - 1); out->bidset[j] != 0;
	    j = (j + 1) & (out->bidsetcap - 1)) {
		uint64_t v = out->bidset[j];
		const struct perfdata_buildid *b = &out->bids[(v & 0xffffffff) - 1];

		if ((v >> 32) == (h >> 32) && b->size == size &&
		    memcmp(b->id, id, size) == 0 && strcmp(b->filename, name) == 0)
			return 0;
	}
	if (out->nbids == out->capbids) {
		size_t	 ncap = out->capbids ? out->capbids * 2 : 256;
		struct perfdata_buildid *nb = realloc(out->bids, ncap * sizeof(*nb));

		if (nb == NULL)
			return -1;
		out->bids = nb;
		out->capbids = ncap;
	}
	memset(&out->bids[out->nbids], 0, sizeof(out->bids[0]));
	memcpy(out->bids[out->nbids].id, id, size);
	out->bids[out->nbids].size = size;
	out->bids[out->nbids].kernel = kernel;
	if ((out->bids[out->nbids].filename = strdup(name)) == NULL)
		return -1;
	out->nbids++;
	out->bidset[j] = (h & 0xffffffff00000000ULL) | out->nbids;
	return 0;
}

static int
bid_cb(const struct perfdata_buildid *b, void *arg)
{
	struct perfout *out = arg;

	if (bid_add(out, b->id, b->size, b->kernel, b->filename) < 0) {
		out->oom = 1;
		return 1;
	}
	return 0;
}

int
perfout_segment(struct perfout *out, struct perfdata_file *f)
{
	static const int hostfeat[4] = {
		HEADER_HOSTNAME, HEADER_OSRELEASE, HEADER_VERSION, HEADER_ARCH,
	};
	int	 i;

	if (!out->have_host) {
		for (i = 0; i < 4; i++)
			out->host[i] = feat_string(f, hostfeat[i]);
		out->have_host = out->host[0] != NULL;
	}
	/* an open segment has no table yet: its mappings carry the build-ids */
	if (perfdata_buildids(f, bid_cb, out) >= 0 && out->oom)
		return -1;
	return 0;
}

void
perfout_clock(struct perfout *out, int clockid, uint64_t wall_ns, uint64_t ref_ns)
{
	out->clockid = clockid;
	out->wall = wall_ns;
	out->ref = ref_ns;
}

int
perfout_write(struct perfout *out, const void *rec, size_t len, int sample, uint64_t out_time)
{
	if (sample) {
		if (out->first == 0 || out_time < out->first)
			out->first = out_time;
		if (out_time > out->last)
			out->last = out_time;
	}
	return perfdata_write(&out->pd, rec, len);
}

int
perfout_finish(struct perfout *out, uint64_t *bytes, char *err, size_t errlen)
{
	struct perfdata_meta m;
	char	*argv[] = { "perfmapctl", "profile" };
	int	 rc;

	memset(&m, 0, sizeof(m));
	m.hostname = out->host[0];
	m.osrelease = out->host[1];
	m.version = out->host[2];
	m.arch = out->host[3];
	m.argc = 2;
	m.argv = argv;
	m.clockid = out->clockid;
	m.clockid_res_ns = 1;
	m.clock_wall_ns = out->wall;
	m.clock_ref_ns = out->ref;
	m.first_time = out->first;
	m.last_time = out->last;
	*bytes = out->pd.data_offset + out->pd.data_size;
	rc = perfdata_finish(&out->pd, out->pa, out->na, &m, out->bids, out->nbids);
	if (rc < 0)
		snprintf(err, errlen, "writing the profile: %s", strerror(-rc));
	perfout_abort(out);
	return rc < 0 ? -1 : 0;
}

void
perfout_abort(struct perfout *out)
{
	size_t	 i;

	if (out == NULL)
		return;
	if (out->pd.fd >= 0)
		perfdata_close(&out->pd);
	for (i = 0; i < out->na; i++)
		free(out->a[i].ids);
	for (i = 0; i < out->nbids; i++)
		free((char *)out->bids[i].filename);
	for (i = 0; i < 4; i++)
		free(out->host[i]);
	free(out->bids);
	free(out->bidset);
	free(out);
}
