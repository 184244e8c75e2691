/*
 * perfdata.c - perf.data (file mode) writer and reader.  See perfdata.h for
 * the layout; feature payload formats follow tools/perf/util/header.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "perfdata.h"

#define PERFDATA_BUFSZ	(1 << 20)
/*
 * A run of records this long goes to the file from where it lies (a
 * sampling ring), behind what the buffer holds, in one pwritev: the bytes
 * are not copied into the buffer first (perf record writes from its rings
 * so too).  Shorter runs are gathered, for fewer writes.
 */
#define PERFDATA_DIRECT	(32 << 10)
#define ALIGN_UP(x, a)	(((x) + (a) - 1) & ~((uint64_t)(a) - 1))

/* A growable byte buffer for feature payloads. */
struct fbuf {
	uint8_t	*p;
	size_t	 len, cap;
	int	 oom;
};

static void
fbuf_put(struct fbuf *b, const void *data, size_t len)
{
	if (b->oom)
		return;
	if (b->len + len > b->cap) {
		size_t	 ncap = b->cap ? b->cap * 2 : 4096;
		uint8_t	*np;

		while (ncap < b->len + len)
			ncap *= 2;
		if ((np = realloc(b->p, ncap)) == NULL) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

static void
fbuf_zero(struct fbuf *b, size_t len)
{
	static const uint8_t zeros[PERF_NAME_ALIGN];

	while (len > 0) {
		size_t n = len < sizeof(zeros) ? len : sizeof(zeros);

		fbuf_put(b, zeros, n);
		len -= n;
	}
}

static void
fbuf_u32(struct fbuf *b, uint32_t v)
{
	fbuf_put(b, &v, sizeof(v));
}

static void
fbuf_u64(struct fbuf *b, uint64_t v)
{
	fbuf_put(b, &v, sizeof(v));
}

/* perf's do_write_string: u32 len (NUL included, padded to 64), bytes. */
static void
fbuf_string(struct fbuf *b, const char *s)
{
	size_t	 n = strlen(s) + 1;
	uint32_t len = (uint32_t)ALIGN_UP(n, PERF_NAME_ALIGN);

	fbuf_u32(b, len);
	fbuf_put(b, s, n);
	fbuf_zero(b, len - n);
}

static int
pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

static void
attr_for_file(struct perf_event_attr *out, const struct perf_event_attr *in)
{
	memcpy(out, in, sizeof(*out));
	out->size = PERF_FILE_ATTR_SIZE;
	/* The file says what the records are: MMAP2 with build-ids, never MMAP3. */
	if (perf_attr_get_flag(in, PERF_ATTR_FLAG_MMAP3_BIT)) {
		perf_attr_set_flag(out, PERF_ATTR_FLAG_MMAP3_BIT, 0);
		perf_attr_set_flag(out, PERF_ATTR_FLAG_BUILD_ID_BIT, 1);
	}
}

static void
header_init(struct perf_file_header *h, uint64_t attrs_off, size_t nattrs,
    uint64_t data_off)
{
	memset(h, 0, sizeof(*h));
	h->magic = PERF_MAGIC2;
	h->size = PERF_FILE_HEADER_SIZE;
	h->attr_size = PERF_FILE_ATTR_SIZE + sizeof(struct perf_file_section);
	h->attrs.offset = attrs_off;
	h->attrs.size = nattrs * h->attr_size;
	h->data.offset = data_off;
}

/* Header, ids and attrs; returns the data offset or -errno. */
static int64_t
write_prologue(int fd, const struct perfdata_attr *attrs, size_t nattrs)
{
	struct perf_file_header h;
	struct fbuf	 b = { 0 };
	uint64_t	 off = PERF_FILE_HEADER_SIZE, attrs_off, data_off;
	size_t		 i;
	int		 rc;

	fbuf_zero(&b, PERF_FILE_HEADER_SIZE);
	for (i = 0; i < nattrs; i++)
		fbuf_put(&b, attrs[i].ids, attrs[i].nids * sizeof(uint64_t));
	attrs_off = b.len;
	for (i = 0; i < nattrs; i++) {
		uint8_t	 fa[PERF_FILE_ATTR_SIZE];
		struct perf_event_attr a;
		struct perf_file_section ids;

		attr_for_file(&a, &attrs[i].attr);
		memcpy(fa, &a, sizeof(fa));
		fbuf_put(&b, fa, sizeof(fa));
		ids.offset = off;
		ids.size = attrs[i].nids * sizeof(uint64_t);
		off += ids.size;
		fbuf_put(&b, &ids, sizeof(ids));
	}
	data_off = ALIGN_UP(b.len, 8);
	fbuf_zero(&b, data_off - b.len);
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	header_init(&h, attrs_off, nattrs, data_off);
	memcpy(b.p, &h, sizeof(h));
	rc = pwrite_all(fd, b.p, b.len, 0);
	free(b.p);
	return rc < 0 ? rc : (int64_t)data_off;
}

int
perfdata_create(struct perfdata *pd, const char *path,
    const struct perfdata_attr *attrs, size_t nattrs)
{
	int	 fd, rc;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640)) == -1)
		return -errno;
	if ((rc = perfdata_create_fd(pd, fd, attrs, nattrs)) < 0)
		unlink(path);
	return rc;
}

int
perfdata_create_fd(struct perfdata *pd, int fd, const struct perfdata_attr *attrs,
    size_t nattrs)
{
	int64_t	 off;

	memset(pd, 0, sizeof(*pd));
	pd->fd = fd;
	if ((pd->buf = malloc(PERFDATA_BUFSZ)) == NULL) {
		off = -ENOMEM;
		goto fail;
	}
	pd->bufcap = PERFDATA_BUFSZ;
	if ((off = write_prologue(pd->fd, attrs, nattrs)) < 0)
		goto fail;
	pd->data_offset = (uint64_t)off;
	return 0;
fail:
	perfdata_close(pd);
	return (int)off;
}

/*
 * The buffer, then LEN bytes of DATA (if any), at the buffer's place in the
 * file.  A failed write keeps what it could not write and says why
 * (pd->error); the next one tries again from the same offset, so the file
 * never has a hole or half a record once it succeeds: the caller can make
 * room (ENOSPC) and carry on.  DATA is not taken unless it all lands.
 */
static int
write_through(struct perfdata *pd, const void *data, size_t len)
{
	struct iovec iov[2] = { { pd->buf, pd->buflen }, { (void *)(uintptr_t)data, len } };
	struct iovec *v = pd->buflen > 0 ? iov : iov + 1;
	int	 nv = pd->buflen > 0 ? 2 : 1;
	off_t	 pos = (off_t)(pd->data_offset + pd->data_size - pd->buflen);
	ssize_t	 n;

	while (nv > 0) {
		if ((n = pwritev(pd->fd, v, nv, pos)) == -1) {
			if (errno == EINTR)
				continue;
			/* the buffer is written again from its start next time */
			pd->error = errno;
			return -errno;
		}
		pos += n;
		for (; nv > 0 && (size_t)n >= v->iov_len; v++, nv--)
			n -= (ssize_t)v->iov_len;
		if (nv > 0) {
			v->iov_base = (uint8_t *)v->iov_base + n;
			v->iov_len -= (size_t)n;
		}
	}
	pd->buflen = 0;
	pd->error = 0;
	pd->data_size += len;
	return 0;
}

static int
flush_buf(struct perfdata *pd)
{
	return pd->buflen == 0 ? 0 : write_through(pd, NULL, 0);
}

/*
 * Room in the buffer for NEED more bytes: written out first if it must,
 * grown if NEED is more than it holds.  Nothing is lost if it fails.
 */
static int
buf_room(struct perfdata *pd, size_t need)
{
	uint8_t	*nb;
	int	 rc;

	if (pd->buflen + need <= pd->bufcap)
		return 0;
	if ((rc = flush_buf(pd)) < 0)
		return rc;
	if (need <= pd->bufcap)
		return 0;
	if ((nb = realloc(pd->buf, need)) == NULL)
		return -ENOMEM;
	pd->buf = nb;
	pd->bufcap = need;
	return 0;
}

/* Compressed output appended to the buffer (room made for it already). */
static int
compressed_out(struct perfdata *pd, int rc, size_t before)
{
	pd->data_size += pd->buflen - before;
	if (rc < 0) {
		pd->error = EIO;
		return -EIO;	/* zstd failed on memory it was given: cannot happen */
	}
	return 0;
}

int
perfdata_flush(struct perfdata *pd)
{
	size_t	 before;
	int	 rc;

	if (pd->z != NULL && compress_staged(pd->z) > 0) {
		if ((rc = buf_room(pd, compress_bound(pd->z, 0))) < 0)
			return rc;
		before = pd->buflen;
		rc = compress_flush(pd->z, pd->buf, &pd->buflen);
		if ((rc = compressed_out(pd, rc, before)) < 0)
			return rc;
	}
	return flush_buf(pd);
}

int
perfdata_compress(struct perfdata *pd, int level)
{
	if ((pd->z = compress_new(level)) == NULL)
		return -ENOMEM;
	return 0;
}

/* Append records; it fails, and the records are not taken, only if they cannot be buffered. */
int
perfdata_write(struct perfdata *pd, const void *data, size_t len)
{
	size_t	 before;
	int	 rc;

	if (pd->z != NULL) {
		/* the worst case first: then staging and compressing cannot fail halfway */
		if ((rc = buf_room(pd, compress_bound(pd->z, len))) < 0)
			return rc;
		before = pd->buflen;
		rc = compress_put(pd->z, data, len, pd->buf, &pd->buflen);
		return compressed_out(pd, rc, before);
	}
	if (len >= PERFDATA_DIRECT)
		return write_through(pd, data, len);
	if (pd->buflen + len > pd->bufcap && (rc = flush_buf(pd)) < 0)
		return rc;
	memcpy(pd->buf + pd->buflen, data, len);
	pd->buflen += len;
	pd->data_size += len;
	return 0;
}

static void
feat_build_id(struct fbuf *b, const struct perfdata_buildid *bids, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		struct build_id_entry e;
		size_t	 len = strlen(bids[i].filename) + 1;
		size_t	 padded = ALIGN_UP(len, PERF_NAME_ALIGN);

		memset(&e, 0, sizeof(e));
		e.header.type = 0;
		e.header.misc = (bids[i].kernel ? PERF_RECORD_MISC_KERNEL :
		    PERF_RECORD_MISC_USER) | PERF_RECORD_MISC_BUILD_ID_SIZE |
		    (bids[i].unlinked ? PERFDATA_MISC_UNLINKED : 0);
		e.header.size = (uint16_t)(sizeof(e) + padded);
		e.pid = -1;
		memcpy(e.build_id, bids[i].id, bids[i].size);
		e.build_id[20] = bids[i].size;
		fbuf_put(b, &e, sizeof(e));
		fbuf_put(b, bids[i].filename, len);
		fbuf_zero(b, padded - len);
	}
}

static void
feat_event_desc(struct fbuf *b, const struct perfdata_attr *attrs, size_t n)
{
	size_t	 i;

	fbuf_u32(b, (uint32_t)n);
	fbuf_u32(b, PERF_FILE_ATTR_SIZE);
	for (i = 0; i < n; i++) {
		struct perf_event_attr a;

		attr_for_file(&a, &attrs[i].attr);
		fbuf_put(b, &a, PERF_FILE_ATTR_SIZE);
		fbuf_u32(b, (uint32_t)attrs[i].nids);
		fbuf_string(b, attrs[i].name);
		fbuf_put(b, attrs[i].ids, attrs[i].nids * sizeof(uint64_t));
	}
}

/*
 * CPU_TOPOLOGY (cputopo.c): the distinct package and core sibling lists,
 * core and socket of every CPU up to NRCPUS' "available", then (x86_64,
 * s390x) the die lists and each CPU's die.
 */
static int
feat_cpu_topology(struct fbuf *b, const struct hostinfo *h)
{
	uint32_t i;

	if (!h->has_topology)
		return 0;
	fbuf_u32(b, h->npackage);
	for (i = 0; i < h->npackage; i++)
		fbuf_string(b, h->package_lists[i]);
	fbuf_u32(b, h->ncore);
	for (i = 0; i < h->ncore; i++)
		fbuf_string(b, h->core_lists[i]);
	for (i = 0; i < h->nr_cpus_avail; i++) {
		fbuf_u32(b, (uint32_t)h->cpus[i].core_id);
		fbuf_u32(b, (uint32_t)h->cpus[i].socket_id);
	}
	if (h->ndie == 0)
		return 1;
	fbuf_u32(b, h->ndie);
	for (i = 0; i < h->ndie; i++)
		fbuf_string(b, h->die_lists[i]);
	for (i = 0; i < h->nr_cpus_avail; i++)
		fbuf_u32(b, (uint32_t)h->cpus[i].die_id);
	return 1;
}

static int
feat_numa_topology(struct fbuf *b, const struct hostinfo *h)
{
	uint32_t i;

	if (!h->has_numa)
		return 0;
	fbuf_u32(b, h->nnuma);
	for (i = 0; i < h->nnuma; i++) {
		fbuf_u32(b, h->numa[i].node);
		fbuf_u64(b, h->numa[i].mem_total_kb);
		fbuf_u64(b, h->numa[i].mem_free_kb);
		fbuf_string(b, h->numa[i].cpus);
	}
	return 1;
}

static int
feat_pmu_mappings(struct fbuf *b, const struct hostinfo *h)
{
	uint32_t i;

	if (!h->has_pmus)
		return 0;
	fbuf_u32(b, h->npmus);
	for (i = 0; i < h->npmus; i++) {
		fbuf_u32(b, h->pmus[i].type);
		fbuf_string(b, h->pmus[i].name);
	}
	return 1;
}

static int
feat_cache(struct fbuf *b, const struct hostinfo *h)
{
	uint32_t i;

	if (!h->has_cache)
		return 0;
	fbuf_u32(b, 1);			/* version */
	fbuf_u32(b, h->ncaches);
	for (i = 0; i < h->ncaches; i++) {
		const struct hostinfo_cache *c = &h->caches[i];

		fbuf_u32(b, c->level);
		fbuf_u32(b, c->line_size);
		fbuf_u32(b, c->sets);
		fbuf_u32(b, c->ways);
		fbuf_string(b, c->type);
		fbuf_string(b, c->size);
		fbuf_string(b, c->map);
	}
	return 1;
}

/* MEM_TOPOLOGY: version, block size, nodes {node, size, bitmap {nbits, words}}. */
static int
feat_mem_topology(struct fbuf *b, const struct hostinfo *h)
{
	uint64_t i;

	if (!h->has_mem)
		return 0;
	fbuf_u64(b, 1);			/* version */
	fbuf_u64(b, h->mem_block_size);
	fbuf_u64(b, h->nmem);
	for (i = 0; i < h->nmem; i++) {
		const struct hostinfo_memnode *n = &h->mem[i];

		fbuf_u64(b, n->node);
		fbuf_u64(b, n->nbits);
		fbuf_u64(b, n->nbits);
		fbuf_put(b, n->bits, (n->nbits + 63) / 64 * sizeof(uint64_t));
	}
	return 1;
}

static void
pmu_caps(struct fbuf *b, const struct hostinfo_pmu *p, int with_name)
{
	uint32_t i;

	fbuf_u32(b, p->ncaps);
	for (i = 0; i < p->ncaps; i++) {
		fbuf_string(b, p->caps[i].name);
		fbuf_string(b, p->caps[i].value);
	}
	if (with_name)
		fbuf_string(b, p->name);
}

/* CPU_PMU_CAPS: the core PMU's ("cpu") capabilities, if there is one. */
static int
feat_cpu_pmu_caps(struct fbuf *b, const struct hostinfo *h)
{
	uint32_t i;

	for (i = 0; i < h->npmus; i++)
		if (strcmp(h->pmus[i].name, "cpu") == 0) {
			pmu_caps(b, &h->pmus[i], 0);
			return 1;
		}
	return 0;
}

static int
feat_hybrid_topology(struct fbuf *b, const struct hostinfo *h)
{
	uint32_t i, n = 0;

	for (i = 0; i < h->npmus; i++)
		n += h->pmus[i].cpus != NULL;
	if (n == 0)
		return 0;
	fbuf_u32(b, n);
	for (i = 0; i < h->npmus; i++)
		if (h->pmus[i].cpus != NULL) {
			fbuf_string(b, h->pmus[i].name);
			fbuf_string(b, h->pmus[i].cpus);
		}
	return 1;
}

/*
 * PMU_CAPS: every PMU but "cpu" that has capabilities, hybrid core PMUs
 * first (older perf reads those as the hybrid CPU PMU caps); an empty
 * list when none has any, as perf record writes it.
 */
static int
feat_pmu_caps(struct fbuf *b, const struct hostinfo *h)
{
	uint32_t i, n = 0;
	int	 pass;

	if (!h->has_pmus)
		return 0;
	for (i = 0; i < h->npmus; i++)
		n += strcmp(h->pmus[i].name, "cpu") != 0 && h->pmus[i].ncaps > 0;
	fbuf_u32(b, n);
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < h->npmus; i++) {
			const struct hostinfo_pmu *p = &h->pmus[i];

			if (strcmp(p->name, "cpu") == 0 || p->ncaps == 0 ||
			    (p->cpus != NULL) != (pass == 0))
				continue;
			pmu_caps(b, p, 1);
		}
	return 1;
}

/* The features that come from the machine (hostinfo); 1 if FEAT is present. */
static int
feat_host(struct fbuf *b, int feat, const struct hostinfo *h)
{
	if (h == NULL)
		return 0;
	switch (feat) {
	case HEADER_NRCPUS:
		if (h->nr_cpus_avail == 0)
			return 0;
		fbuf_u32(b, h->nr_cpus_avail);
		fbuf_u32(b, h->nr_cpus_online);
		return 1;
	case HEADER_CPUDESC:
		if (h->cpudesc == NULL)
			return 0;
		fbuf_string(b, h->cpudesc);
		return 1;
	case HEADER_CPUID:
		if (h->cpuid == NULL)
			return 0;
		fbuf_string(b, h->cpuid);
		return 1;
	case HEADER_TOTAL_MEM:
		if (h->total_mem_kb == 0)
			return 0;
		fbuf_u64(b, h->total_mem_kb);
		return 1;
	case HEADER_CPU_TOPOLOGY:
		return feat_cpu_topology(b, h);
	case HEADER_NUMA_TOPOLOGY:
		return feat_numa_topology(b, h);
	case HEADER_PMU_MAPPINGS:
		return feat_pmu_mappings(b, h);
	case HEADER_CACHE:
		return feat_cache(b, h);
	case HEADER_MEM_TOPOLOGY:
		return feat_mem_topology(b, h);
	case HEADER_CPU_PMU_CAPS:
		return feat_cpu_pmu_caps(b, h);
	case HEADER_HYBRID_TOPOLOGY:
		return feat_hybrid_topology(b, h);
	case HEADER_PMU_CAPS:
		return feat_pmu_caps(b, h);
	default:
		return 0;
	}
}

/* Append payload of feature FEAT to B; returns 1 if the feature is present. */
static int
feat_payload(struct fbuf *b, int feat, const struct perfdata_attr *attrs,
    size_t nattrs, const struct perfdata_meta *m,
    const struct perfdata_buildid *bids, size_t nbids)
{
	int	 i;

	switch (feat) {
	case HEADER_BUILD_ID:
		feat_build_id(b, bids, nbids);
		return 1;
	case HEADER_HOSTNAME:
		fbuf_string(b, m->hostname ? m->hostname : "");
		return 1;
	case HEADER_OSRELEASE:
		fbuf_string(b, m->osrelease ? m->osrelease : "");
		return 1;
	case HEADER_VERSION:
		fbuf_string(b, m->version ? m->version : "");
		return 1;
	case HEADER_ARCH:
		fbuf_string(b, m->arch ? m->arch : "");
		return 1;
	case HEADER_CMDLINE:
		fbuf_u32(b, (uint32_t)m->argc);
		for (i = 0; i < m->argc; i++)
			fbuf_string(b, m->argv[i]);
		return 1;
	case HEADER_EVENT_DESC:
		feat_event_desc(b, attrs, nattrs);
		return 1;
	case HEADER_SAMPLE_TIME:
		if (m->first_time == 0 && m->last_time == 0)
			return 0;
		fbuf_u64(b, m->first_time);
		fbuf_u64(b, m->last_time);
		return 1;
	case HEADER_CLOCKID:
		if (m->clockid < 0)
			return 0;
		fbuf_u64(b, m->clockid_res_ns);
		return 1;
	case HEADER_COMPRESSED:
		if (m->comp.mmap_len == 0)
			return 0;
		fbuf_u32(b, m->comp.version);
		fbuf_u32(b, m->comp.type);
		fbuf_u32(b, m->comp.level);
		fbuf_u32(b, m->comp.ratio);
		fbuf_u32(b, m->comp.mmap_len);
		return 1;
	case HEADER_CLOCK_DATA:
		if (m->clockid < 0)
			return 0;
		fbuf_u32(b, 1);		/* data version */
		fbuf_u32(b, (uint32_t)m->clockid);
		fbuf_u64(b, m->clock_wall_ns);
		fbuf_u64(b, m->clock_ref_ns);
		return 1;
	default:
		return feat_host(b, feat, m->host);
	}
}

int
perfdata_finish(struct perfdata *pd, const struct perfdata_attr *attrs, size_t nattrs,
    const struct perfdata_meta *meta, const struct perfdata_buildid *bids, size_t nbids)
{
	/*
	 * Ascending, as the section table must be.  What perf record writes
	 * and a segment does not, and why:
	 *   TRACING_DATA, BRANCH_STACK, GROUP_DESC, AUXTRACE, STAT,
	 *   DIR_FORMAT: perf writes them only for tracepoint events, -b,
	 *     event groups, AUX tracing, perf stat record and --threads
	 *     directories; a segment has none of those.  COMPRESSED is
	 *     written when the records are (perfdata_compress, perf -z).
	 *   BPF_PROG_INFO, BPF_BTF: a copy of each BPF program's JIT image
	 *     and BTF, which perf takes from the programs it sees loaded
	 *     through bpf_event records; the daemon does not ask for those
	 *     records (nor for ksymbol), so a segment has no BPF program to
	 *     describe, and an empty list would claim there were none.
	 */
	static const int feats[] = {
		HEADER_BUILD_ID, HEADER_HOSTNAME, HEADER_OSRELEASE, HEADER_VERSION,
		HEADER_ARCH, HEADER_NRCPUS, HEADER_CPUDESC, HEADER_CPUID,
		HEADER_TOTAL_MEM, HEADER_CMDLINE, HEADER_EVENT_DESC,
		HEADER_CPU_TOPOLOGY, HEADER_NUMA_TOPOLOGY, HEADER_PMU_MAPPINGS,
		HEADER_CACHE, HEADER_SAMPLE_TIME, HEADER_MEM_TOPOLOGY,
		HEADER_CLOCKID, HEADER_COMPRESSED, HEADER_CPU_PMU_CAPS, HEADER_CLOCK_DATA,
		HEADER_HYBRID_TOPOLOGY, HEADER_PMU_CAPS,
	};
	const size_t	 nf = sizeof(feats) / sizeof(feats[0]);
	struct perf_file_header h;
	struct perf_file_section secs[sizeof(feats) / sizeof(feats[0])];
	struct fbuf	 payload = { 0 }, one = { 0 };
	struct perfdata_meta mcopy;
	const struct perfdata_meta *m = &mcopy;
	uint64_t	 feat_off, pos;
	size_t		 i, nsec = 0;
	int		 rc;

	mcopy = *meta;
	if ((rc = perfdata_flush(pd)) < 0)
		goto out;
	if (pd->z != NULL)
		compress_get_info(pd->z, &mcopy.comp);
	header_init(&h, 0, nattrs, pd->data_offset);
	h.attrs.offset = PERF_FILE_HEADER_SIZE;
	for (i = 0; i < nattrs; i++)
		h.attrs.offset += attrs[i].nids * sizeof(uint64_t);
	h.data.size = pd->data_size;

	/* Count present features first: the section table precedes the payloads. */
	for (i = 0; i < nf; i++) {
		one.len = 0;
		if (feat_payload(&one, feats[i], attrs, nattrs, m, bids, nbids))
			nsec++;
	}
	feat_off = pd->data_offset + pd->data_size;
	pos = feat_off + nsec * sizeof(struct perf_file_section);
	nsec = 0;
	for (i = 0; i < nf; i++) {
		size_t	 before = payload.len;

		if (!feat_payload(&payload, feats[i], attrs, nattrs, m, bids, nbids))
			continue;
		secs[nsec].offset = pos + before;
		secs[nsec].size = payload.len - before;
		nsec++;
		h.adds_features[feats[i] / 64] |= 1ULL << (feats[i] % 64);
	}
	if (payload.oom || one.oom) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = pwrite_all(pd->fd, secs, nsec * sizeof(secs[0]), (off_t)feat_off)) < 0 ||
	    (rc = pwrite_all(pd->fd, payload.p, payload.len, (off_t)pos)) < 0)
		goto out;
	if (ftruncate(pd->fd, (off_t)(pos + payload.len)) == -1) {
		rc = -errno;
		goto out;
	}
	/*
	 * The header last, then (pd->sync) one sync.  The caller renames the
	 * file only after this, so a file under its final name is complete on
	 * disk; one cut short by a power loss still has its .partial name, and
	 * repair rebuilds features and header from its records, which were
	 * written (data.size of them) before any of this.  Without the sync a
	 * power loss can leave the last files renamed but incomplete: repair
	 * checks those at the next start (repair_all).
	 */
	if ((rc = pwrite_all(pd->fd, &h, sizeof(h), 0)) < 0)
		goto out;
	if (pd->sync && fdatasync(pd->fd) == -1 && errno != EINVAL)
		rc = -errno;
out:
	free(payload.p);
	free(one.p);
	perfdata_close(pd);
	return rc;
}

void
perfdata_close(struct perfdata *pd)
{
	if (pd->fd >= 0)
		close(pd->fd);
	pd->fd = -1;
	free(pd->buf);
	pd->buf = NULL;
	compress_free(pd->z);
	pd->z = NULL;
}

/* --- reading ------------------------------------------------------------ */

static int
pread_all(int fd, void *buf, size_t len, off_t off)
{
	uint8_t	*p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, off);

		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

int
perfdata_open_segment(struct perfdata_file *f, char *path, char *err, size_t errlen)
{
	size_t	 n = strlen(path);

	if (perfdata_open(f, path, err, errlen) == 0)
		return 0;
	if (n <= 8 || strcmp(path + n - 8, ".partial") != 0)
		return -1;
	path[n - 8] = '\0';
	if (perfdata_open(f, path, err, errlen) == 0)
		return 0;
	path[n - 8] = '.';
	return -1;
}

int
perfdata_open(struct perfdata_file *f, const char *path, char *err, size_t errlen)
{
	struct stat st;
	size_t	 i;
	int	 rc;

	memset(f, 0, sizeof(*f));
	if ((f->fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(f->fd, &st) == -1 || pread_all(f->fd, &f->h, sizeof(f->h), 0) < 0) {
		snprintf(err, errlen, "%s: cannot read the header", path);
		goto fail;
	}
	f->file_size = (uint64_t)st.st_size;
	if (f->h.magic != PERF_MAGIC2 || f->h.size != PERF_FILE_HEADER_SIZE) {
		snprintf(err, errlen, "%s: not a perf.data file", path);
		goto fail;
	}
	if (f->h.attr_size < 64 + sizeof(struct perf_file_section) ||
	    f->h.attr_size > 4096 || f->h.attrs.size % f->h.attr_size != 0 ||
	    f->h.attrs.offset > f->file_size ||
	    f->h.attrs.size > f->file_size - f->h.attrs.offset ||
	    f->h.data.offset > f->file_size) {
		snprintf(err, errlen, "%s: corrupt header", path);
		goto fail;
	}
	f->nattrs = f->h.attrs.size / f->h.attr_size;
	if (f->nattrs == 0 || f->nattrs > 1024) {
		snprintf(err, errlen, "%s: bad attribute count", path);
		goto fail;
	}
	if ((f->attrs = calloc(f->nattrs, sizeof(*f->attrs))) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	for (i = 0; i < f->nattrs; i++) {
		uint8_t	 raw[4096];
		size_t	 asz = f->h.attr_size - sizeof(struct perf_file_section);

		rc = pread_all(f->fd, raw, f->h.attr_size,
		    (off_t)(f->h.attrs.offset + i * f->h.attr_size));
		if (rc < 0) {
			snprintf(err, errlen, "%s: cannot read attributes", path);
			goto fail;
		}
		memcpy(&f->attrs[i].attr, raw,
		    asz < sizeof(f->attrs[i].attr) ? asz : sizeof(f->attrs[i].attr));
		memcpy(&f->attrs[i].ids, raw + asz, sizeof(f->attrs[i].ids));
	}
	return 0;
fail:
	perfdata_file_close(f);
	return -1;
}

void
perfdata_file_close(struct perfdata_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	free(f->attrs);
	f->attrs = NULL;
}

#define WALK_BUF	(256 * 1024)

/* The comp_mmap_len to decompress with: the file's, or the writer's for a file not finished. */
static int
walk_comp_len(struct perfdata_file *f, uint32_t *len)
{
	struct compress_info ci;
	void	*p;
	size_t	 n;

	*len = COMPRESS_CHUNK;
	/* data.size 0: not finished, its feature table (if any) is not where the header says */
	if (f->h.data.size == 0 ||
	    !(f->h.adds_features[HEADER_COMPRESSED / 64] & (1ULL << (HEADER_COMPRESSED % 64))))
		return 0;
	/*
	 * Not there to read: a header that reached the disk without its
	 * feature table (a power loss after a close), which repair is to
	 * mend.  The writer's bound, as for a file not finished: refusing
	 * lost every record of the file.
	 */
	if (perfdata_read_feature(f, HEADER_COMPRESSED, &p, &n, 64) < 0 || n < sizeof(ci)) {
		free(p);
		return 0;
	}
	memcpy(&ci, p, sizeof(ci));
	free(p);
	if (ci.type != 1) {
		snprintf(f->error, sizeof(f->error), "compression type %u is not zstd (1)",
		    ci.type);
		return -1;
	}
	if (ci.mmap_len < sizeof(struct perf_event_header) ||
	    ci.mmap_len > COMPRESS_MMAP_LEN_MAX) {
		snprintf(f->error, sizeof(f->error), "comp_mmap_len %u out of range", ci.mmap_len);
		return -1;
	}
	*len = ci.mmap_len;
	return 0;
}

/* One COMPRESSED record's payload at POS: its records to CB.  0, 1 (CB stopped), -1. */
static int
walk_compressed(struct perfdata_file *f, struct decompress **dz, const uint8_t *p,
    size_t len, uint64_t pos, perfdata_record_fn cb, void *arg)
{
	const struct perf_event_header *r;
	char	 err[128];
	uint32_t mmap_len;
	int	 n;

	if (*dz == NULL) {
		if (walk_comp_len(f, &mmap_len) < 0)
			return -1;
		if ((*dz = decompress_new(mmap_len)) == NULL) {
			snprintf(f->error, sizeof(f->error), "out of memory to decompress");
			return -1;
		}
	}
	if (decompress_feed(*dz, p, len, err, sizeof(err)) < 0)
		goto bad;
	f->ncompressed++;
	while ((n = decompress_next(*dz, &r, err, sizeof(err))) == 1)
		if (cb != NULL && cb(r, arg) != 0)
			return 1;
	if (n == 0)
		return 0;
bad:
	snprintf(f->error, sizeof(f->error), "compressed record at offset %llu: %s",
	    (unsigned long long)pos, err);
	return -1;
}

int64_t
perfdata_walk(struct perfdata_file *f, perfdata_record_fn cb, void *arg)
{
	struct decompress *dz = NULL;
	uint64_t end, pos = f->h.data.offset, bufpos = 0, good = pos;
	uint8_t	*buf;
	size_t	 buflen = 0;
	int64_t	 rc = -1;

	f->ncompressed = 0;
	f->error[0] = '\0';
	/* data.offset <= file_size (perfdata_open); compare sizes so a huge data.size cannot wrap */
	end = f->file_size;
	if (f->h.data.size != 0 && f->h.data.size < f->file_size - f->h.data.offset)
		end = f->h.data.offset + f->h.data.size;
	/* records are at most 64 KiB: a buffer of WALK_BUF always holds a whole one */
	if ((buf = malloc(WALK_BUF)) == NULL)
		return -1;
	while (pos + sizeof(struct perf_event_header) <= end) {
		struct perf_event_header hh, *h;
		int	 n;

		/* a COMPRESSED record's size is not a multiple of 8: headers are copied out */
		if (pos < bufpos || pos + sizeof(hh) > bufpos + buflen ||
		    (memcpy(&hh, buf + (pos - bufpos), sizeof(hh)), pos + hh.size > bufpos + buflen)) {
			size_t	 want = end - pos < WALK_BUF ? (size_t)(end - pos) : WALK_BUF;

			if (pread_all(f->fd, buf, want, (off_t)pos) < 0)
				goto out;
			bufpos = pos;
			buflen = want;
			memcpy(&hh, buf, sizeof(hh));
		}
		h = (struct perf_event_header *)(buf + (pos - bufpos));
		if (hh.size < sizeof(hh) || pos + hh.size > end)
			break;	/* torn or garbage: stop at the last whole record */
		if (hh.type == PERF_RECORD_COMPRESSED) {
			n = walk_compressed(f, &dz, (const uint8_t *)h + sizeof(hh),
			    hh.size - sizeof(hh), pos, cb, arg);
			if (n != 0)
				break;
			pos += hh.size;
			if (decompress_pending(dz) == 0)
				good = pos;
			continue;
		}
		if (dz != NULL && decompress_pending(dz) > 0) {
			snprintf(f->error, sizeof(f->error), "offset %llu: a record inside "
			    "a compressed one's", (unsigned long long)pos);
			break;
		}
		if (cb != NULL && cb(h, arg) != 0)
			break;
		pos += hh.size;
		good = pos;
	}
	rc = (int64_t)(good - f->h.data.offset);
out:
	decompress_free(dz);
	free(buf);
	return rc;
}

int
perfdata_ids(struct perfdata_file *f, size_t i, uint64_t **ids, size_t *n)
{
	const struct perf_file_section *s = &f->attrs[i].ids;

	*ids = NULL;
	*n = s->size / sizeof(uint64_t);
	if (s->offset > f->file_size || s->size > f->file_size - s->offset ||
	    *n > 65536)
		return -1;
	if ((*ids = calloc(*n + 1, sizeof(uint64_t))) == NULL ||
	    pread_all(f->fd, *ids, *n * sizeof(uint64_t), (off_t)s->offset) < 0) {
		free(*ids);
		*ids = NULL;
		return -1;
	}
	return 0;
}

int
perfdata_layouts(struct perfdata_file *f, struct record_layouts *ls)
{
	uint64_t *ids;
	size_t	 i, n;
	int	 rc = 0;

	memset(ls, 0, sizeof(*ls));
	for (i = 0; i < f->nattrs; i++) {
		if (perfdata_ids(f, i, &ids, &n) < 0) {
			rc = -1;
			n = 0;
		}
		if (record_layouts_add(ls, &f->attrs[i].attr, ids, n) < 0)
			rc = -1;
		free(ids);
	}
	return rc;
}

int
perfdata_feature(struct perfdata_file *f, int feat, struct perf_file_section *sec)
{
	uint64_t off = f->h.data.offset + f->h.data.size;
	int	 bit, idx = 0;

	if (feat <= 0 || feat >= HEADER_FEAT_BITS ||
	    !(f->h.adds_features[feat / 64] & (1ULL << (feat % 64))))
		return -1;
	for (bit = 0; bit < feat; bit++)
		if (f->h.adds_features[bit / 64] & (1ULL << (bit % 64)))
			idx++;
	if (pread_all(f->fd, sec, sizeof(*sec), (off_t)(off + idx * sizeof(*sec))) < 0)
		return -1;
	if (sec->offset > f->file_size || sec->size > f->file_size - sec->offset)
		return -1;
	return 0;
}

/*
 * The table is read a window at a time: a user can make it any size (16,000
 * mapped links under 4 KiB paths are 64 MiB), and a reader that refused a
 * big one left its segment's binaries unprotected from eviction.  An entry
 * is at most 64 KiB (its header's size is 16 bits), so a window of 1 MiB
 * always holds one whole.
 */
#define BUILDIDS_WINDOW	((size_t)1 << 20)

int
perfdata_buildids(struct perfdata_file *f, perfdata_buildid_fn cb, void *arg)
{
	struct perf_file_section sec;
	uint8_t	*buf;
	uint64_t base = 0;		/* the section's offset of buf[0] */
	size_t	 cap, have = 0, want, off;
	int	 n = 0, stop = 0;

	if (perfdata_feature(f, HEADER_BUILD_ID, &sec) < 0 || sec.size == 0)
		return 0;
	cap = sec.size < BUILDIDS_WINDOW ? (size_t)sec.size : BUILDIDS_WINDOW;
	if ((buf = malloc(cap)) == NULL)
		return -1;
	for (;;) {
		want = cap - have;
		if (want > sec.size - base - have)
			want = (size_t)(sec.size - base - have);
		if (want > 0 && pread_all(f->fd, buf + have, want,
		    (off_t)(sec.offset + base + have)) < 0) {
			free(buf);
			return -1;
		}
		have += want;
		for (off = 0; off + sizeof(struct build_id_entry) <= have;) {
			struct build_id_entry *e = (struct build_id_entry *)(buf + off);
			struct perfdata_buildid b;
			size_t	 fnmax;
			int	 mode;

			if (e->header.size < sizeof(*e) ||
			    base + off + e->header.size > sec.size) {
				stop = 1;	/* damage: the rest is not read */
				break;
			}
			if (off + e->header.size > have)
				break;		/* the next window has it whole */
			fnmax = e->header.size - sizeof(*e);
			off += e->header.size;
			b.size = (e->header.misc & PERF_RECORD_MISC_BUILD_ID_SIZE) ?
			    e->build_id[20] : BUILD_ID_MAX;
			if (b.size == 0 || b.size > BUILD_ID_MAX || fnmax == 0 ||
			    memchr(e->filename, '\0', fnmax) == NULL)
				continue;
			memset(b.id, 0, sizeof(b.id));
			memcpy(b.id, e->build_id, b.size);
			mode = e->header.misc & PERF_RECORD_MISC_CPUMODE_MASK;
			b.kernel = mode == PERF_RECORD_MISC_KERNEL ||
			    mode == PERF_RECORD_MISC_GUEST_KERNEL;
			b.unlinked = (e->header.misc & PERFDATA_MISC_UNLINKED) != 0;
			b.filename = e->filename;
			n++;
			if (cb(&b, arg) != 0) {
				stop = 1;
				break;
			}
		}
		/*
		 * At the section's end, what is left is shorter than an entry
		 * (an entry cut short there stopped above); else the next
		 * window reads on from the first entry not taken whole, which
		 * fits in it: every pass makes progress.
		 */
		if (stop || base + have >= sec.size)
			break;
		memmove(buf, buf + off, have - off);
		base += off;
		have -= off;
	}
	free(buf);
	return n;
}

int
perfdata_read_feature(struct perfdata_file *f, int feat, void **buf, size_t *len, size_t max)
{
	struct perf_file_section sec;
	void	*p;

	*buf = NULL;
	*len = 0;
	if (perfdata_feature(f, feat, &sec) < 0 || sec.size > max)
		return -1;
	if ((p = malloc(sec.size + 1)) == NULL)
		return -1;
	if (pread_all(f->fd, p, sec.size, (off_t)sec.offset) < 0) {
		free(p);
		return -1;
	}
	((char *)p)[sec.size] = '\0';
	*buf = p;
	*len = sec.size;
	return 0;
}
