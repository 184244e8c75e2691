/*
 * record.c - decode and build perf records.  See record.h.
 *
 * Layout reminders (include/uapi/linux/perf_event.h):
 *   sample_id trailer:  [TID u32 pid,tid] [TIME u64] [ID u64] [STREAM_ID u64]
 *                       [CPU u32 cpu,res] [IDENTIFIER u64]
 *   SAMPLE body:        [IDENTIFIER] [IP] [TID] [TIME] [ADDR] [ID] [STREAM_ID]
 *                       [CPU] [PERIOD] [READ] [CALLCHAIN u64 nr, ips[nr]] ...
 * This file depends on libc and perf_abi.c only: kernel-patch/'s static guest
 * test links it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

static uint64_t
get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t
get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The sample_id trailer's size: 8 bytes for each of its fields T has. */
static size_t
sample_id_size(uint64_t t, int sample_id_all)
{
	size_t	 n = 0;

	if (!sample_id_all)
		return 0;
	if (t & PERF_SAMPLE_TID)
		n += 8;
	if (t & PERF_SAMPLE_TIME)
		n += 8;
	if (t & PERF_SAMPLE_ID)
		n += 8;
	if (t & PERF_SAMPLE_STREAM_ID)
		n += 8;
	if (t & PERF_SAMPLE_CPU)
		n += 8;
	if (t & PERF_SAMPLE_IDENTIFIER)
		n += 8;
	return n;
}

void
record_layout_init(struct record_layout *l, const struct perf_event_attr *a)
{
	memset(l, 0, sizeof(*l));
	l->sample_type = a->sample_type;
	l->sample_id_all = a->sample_id_all;
	l->build_id = perf_attr_get_flag(a, PERF_ATTR_FLAG_BUILD_ID_BIT);
	l->mmap3 = perf_attr_get_flag(a, PERF_ATTR_FLAG_MMAP3_BIT);
	l->sid_size = sample_id_size(l->sample_type, l->sample_id_all);
	l->sid_type = l->sample_type;
	l->sid_all = l->sample_id_all;
}

int
record_layouts_add(struct record_layouts *ls, const struct perf_event_attr *a,
    const uint64_t *ids, size_t n)
{
	struct record_layout l;
	size_t	 i;
	void	*nv;

	record_layout_init(&l, a);
	if (ls->n == 0 && ls->v == NULL)
		ls->dflt = l;
	if (n == 0)
		return 0;
	if ((nv = reallocarray(ls->v, ls->n + n, sizeof(*ls->v))) == NULL)
		return -ENOMEM;
	ls->v = nv;
	for (i = 0; i < n; i++) {
		ls->v[ls->n].id = ids[i];
		ls->v[ls->n].l = l;
		ls->n++;
	}
	return 0;
}

void
record_layouts_free(struct record_layouts *ls)
{
	free(ls->v);
	memset(ls, 0, sizeof(*ls));
}

const struct record_layout *
record_layout_of(const struct record_layouts *ls, const void *buf, size_t len)
{
	const struct perf_event_header *h = buf;
	const uint8_t *p = buf;
	uint64_t id;
	size_t	 i, off;

	if (ls->n == 0 || len < sizeof(*h) || h->size < sizeof(*h) + 8 || h->size > len ||
	    !(ls->dflt.sample_type & PERF_SAMPLE_IDENTIFIER) ||
	    h->type >= PERF_RECORD_USER_TYPE_START)
		return &ls->dflt;
	if (h->type == PERF_RECORD_SAMPLE)
		off = sizeof(*h);
	else if (ls->dflt.sample_id_all)
		off = h->size - 8;
	else
		return &ls->dflt;
	memcpy(&id, p + off, sizeof(id));
	for (i = 0; i < ls->n; i++)
		if (ls->v[i].id == id)
			return &ls->v[i].l;
	return &ls->dflt;
}

size_t
record_sample_id_size(const struct record_layout *l)
{
	/* a side-band record is decoded once or twice: the bits counted once */
	if (l->sid_type == l->sample_type && l->sid_all == l->sample_id_all)
		return l->sid_size;
	return sample_id_size(l->sample_type, l->sample_id_all);
}

static void
decode_sample_id(const struct record_layout *l, const uint8_t *p,
    struct record_sample_id *sid)
{
	uint64_t t = l->sample_type;

	if (t & PERF_SAMPLE_TID) {
		sid->pid = get_u32(p);
		sid->tid = get_u32(p + 4);
		p += 8;
	}
	if (t & PERF_SAMPLE_TIME) {
		sid->time = get_u64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_ID) {
		sid->id = get_u64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_STREAM_ID) {
		sid->stream_id = get_u64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_CPU) {
		sid->cpu = get_u32(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		sid->id = get_u64(p);
}

size_t
record_name_len(const char *name)
{
	static const char deleted[] = " (deleted)";
	size_t	 n = strlen(name), s = sizeof(deleted) - 1;

	return n > s && memcmp(name + n - s, deleted, s) == 0 ? n - s : n;
}

void
record_module_name(const char *path, char *out, size_t len)
{
	const char *b = strrchr(path, '/');
	size_t	 i;

	if (len == 0)
		return;
	b = b != NULL ? b + 1 : path;
	if (*b == '[')
		b++;
	for (i = 0; i + 1 < len && b[i] != '\0' && b[i] != '.' && b[i] != ']'; i++)
		out[i] = b[i] == '-' ? '_' : b[i];
	out[i] = '\0';
}

int
record_name_is_anon(const char *name)
{
	/* by the first bytes, then one compare at most: asked of every executable map */
	if (name[0] == '[')
		return strncmp(name, "[anon:", 6) == 0;
	if (name[0] != '/')
		return 0;
	switch (name[1]) {
	case '/':
		return strncmp(name, "//anon", 6) == 0;
	case 'd':
		return strncmp(name, "/dev/zero", 9) == 0;
	case 'a':
		return strncmp(name, "/anon_hugepage", 14) == 0;
	default:
		return 0;
	}
}

/* Offset of the time stamp in the record at BUF, or 0 if it carries none. */
static size_t
time_offset(const void *buf, size_t len, const struct record_layout *l)
{
	const struct perf_event_header *h = buf;
	uint64_t t = l->sample_type;
	size_t	 off, sidsz;

	if (len < sizeof(*h) || h->size < sizeof(*h) || h->size > len || !(t & PERF_SAMPLE_TIME))
		return 0;
	if (h->type == PERF_RECORD_SAMPLE) {
		/* IDENTIFIER, IP, TID come before TIME in a sample */
		off = sizeof(*h) + 8 * (((t & PERF_SAMPLE_IDENTIFIER) != 0) +
		    ((t & PERF_SAMPLE_IP) != 0) + ((t & PERF_SAMPLE_TID) != 0));
	} else {
		if (h->type >= PERF_RECORD_USER_TYPE_START || !l->sample_id_all)
			return 0;
		/* in the trailer, only TID comes before TIME */
		sidsz = record_sample_id_size(l);
		if (h->size < sizeof(*h) + sidsz)
			return 0;
		off = h->size - sidsz + 8 * ((t & PERF_SAMPLE_TID) != 0);
	}
	if (off + 8 > h->size)
		return 0;
	return off;
}

int
record_time(const void *buf, size_t len, const struct record_layout *l, uint64_t *time)
{
	size_t	 off = time_offset(buf, len, l);

	if (off == 0)
		return -1;
	*time = get_u64((const uint8_t *)buf + off);
	return 0;
}

void
record_clock_init(struct record_clock *c, const struct record_layout *l)
{
	uint64_t t = l->sample_type;

	c->sample_off = c->sid_size = c->sid_back = 0;
	if (!(t & PERF_SAMPLE_TIME))
		return;
	/* time_offset's rules, once */
	c->sample_off = sizeof(struct perf_event_header) + 8 * (((t & PERF_SAMPLE_IDENTIFIER) != 0) +
	    ((t & PERF_SAMPLE_IP) != 0) + ((t & PERF_SAMPLE_TID) != 0));
	if (!l->sample_id_all)
		return;
	c->sid_size = record_sample_id_size(l);
	c->sid_back = c->sid_size - 8 * ((t & PERF_SAMPLE_TID) != 0);
}

int
record_set_time(void *buf, size_t len, const struct record_layout *l, uint64_t time)
{
	size_t	 off = time_offset(buf, len, l);

	if (off == 0)
		return -1;
	memcpy((uint8_t *)buf + off, &time, sizeof(time));
	return 0;
}

void
record_encode_sample_id(const struct record_layout *l,
    const struct record_sample_id *sid, void *out)
{
	uint64_t t = l->sample_type;
	uint8_t	*p = out;
	uint32_t zero = 0;

	if (!l->sample_id_all)
		return;
	if (t & PERF_SAMPLE_TID) {
		memcpy(p, &sid->pid, 4);
		memcpy(p + 4, &sid->tid, 4);
		p += 8;
	}
	if (t & PERF_SAMPLE_TIME) {
		memcpy(p, &sid->time, 8);
		p += 8;
	}
	if (t & PERF_SAMPLE_ID) {
		memcpy(p, &sid->id, 8);
		p += 8;
	}
	if (t & PERF_SAMPLE_STREAM_ID) {
		memcpy(p, &sid->stream_id, 8);
		p += 8;
	}
	if (t & PERF_SAMPLE_CPU) {
		memcpy(p, &sid->cpu, 4);
		memcpy(p + 4, &zero, 4);
		p += 8;
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		memcpy(p, &sid->id, 8);
}

/* A NUL-terminated string at P, within END; NULL if unterminated. */
static const char *
get_string(const uint8_t *p, const uint8_t *end)
{
	if (p >= end || memchr(p, '\0', end - p) == NULL)
		return NULL;
	return (const char *)p;
}

static int
decode_sample(const uint8_t *p, const uint8_t *end, const struct record_layout *l,
    struct record *r)
{
	uint64_t t = l->sample_type;

#define NEED(n) do { if ((size_t)(end - p) < (n)) return -EINVAL; } while (0)
	if (t & PERF_SAMPLE_IDENTIFIER) {
		NEED(8);
		r->sid.id = get_u64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_IP) {
		NEED(8);
		r->sample.ip = get_u64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_TID) {
		NEED(8);
		r->sid.pid = get_u32(p);
		r->sid.tid = get_u32(p + 4);
		p += 8;
	}
	if (t & PERF_SAMPLE_TIME) {
		NEED(8);
		r->sid.time = get_u64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_ADDR) {
		NEED(8);
		p += 8;
	}
	if (t & PERF_SAMPLE_ID) {
		NEED(8);
		r->sid.id = get_u64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_STREAM_ID) {
		NEED(8);
		r->sid.stream_id = get_u64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_CPU) {
		NEED(8);
		r->sid.cpu = get_u32(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_PERIOD) {
		NEED(8);
		r->sample.period = get_u64(p);
		p += 8;
	}
	r->has_sid = 1;
	if (t & PERF_SAMPLE_READ)
		return 0;	/* variable layout we never ask for: stop here */
	if (t & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr;

		NEED(8);
		nr = get_u64(p);
		p += 8;
		if (nr > (uint64_t)(end - p) / 8)
			return -EINVAL;
		r->sample.nr = nr;
		r->sample.ips = (const uint64_t *)(const void *)p;
	}
#undef NEED
	return 0;
}

/*
 * The body of an MMAP, MMAP2 or MMAP3 record.  An MMAP2 body is in the
 * build-id form only when its event has attr.build_id (BUILD_ID) and the
 * flag says so; a flag on a record of any other event is the kernel's leak
 * (see record.h) and the body is maj/min/ino.
 */
static int
decode_mmap(const uint8_t *p, const uint8_t *end, uint32_t type,
    uint16_t misc, int build_id, struct record_mmap *m)
{
	size_t	 fixed;

	fixed = type == PERF_RECORD_MMAP ? 32 : type == PERF_RECORD_MMAP2 ? 64 : 88;
	if ((size_t)(end - p) < fixed)
		return -EINVAL;
	m->pid = get_u32(p);
	m->tid = get_u32(p + 4);
	m->addr = get_u64(p + 8);
	m->len = get_u64(p + 16);
	m->pgoff = get_u64(p + 24);
	p += 32;
	if (type == PERF_RECORD_MMAP2 && build_id && (misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
		m->build_id_size = p[0];
		if (m->build_id_size > BUILD_ID_MAX)
			return -EINVAL;
		memcpy(m->build_id, p + 4, BUILD_ID_MAX);
		m->prot = get_u32(p + 24);
		m->flags = get_u32(p + 28);
		p += 32;
	} else if (type != PERF_RECORD_MMAP) {
		m->has_inode = 1;
		m->maj = get_u32(p);
		m->min = get_u32(p + 4);
		m->ino = get_u64(p + 8);
		m->ino_generation = get_u64(p + 16);
		m->prot = get_u32(p + 24);
		m->flags = get_u32(p + 28);
		p += 32;
		if (type == PERF_RECORD_MMAP3) {
			m->build_id_size = p[0];
			if (m->build_id_size > BUILD_ID_MAX)
				return -EINVAL;
			memcpy(m->build_id, p + 4, BUILD_ID_MAX);
			p += 24;
		}
	}
	if ((m->filename = get_string(p, end)) == NULL)
		return -EINVAL;
	return 0;
}

int
record_decode(const void *buf, size_t len, const struct record_layout *l,
    struct record *r)
{
	/*
	 * Copied, not memset: for its ~160 bytes the compiler emits rep stos,
	 * whose start-up was ~45% of this function under an exec storm (the
	 * side-band decodes each record once or twice); a copy is plain
	 * vector stores.
	 */
	static const struct record zero;
	const struct perf_event_header *h = buf;
	const uint8_t	*p = buf, *end;
	size_t		 sidsz;
	uint32_t	 type;

	*r = zero;
	if (len < sizeof(*h))
		return -EINVAL;
	r->type = type = h->type;
	r->misc = h->misc;
	r->size = h->size;
	if (h->size < sizeof(*h) || h->size > len || (h->size & 7) != 0)
		return -EINVAL;
	end = p + h->size;
	p += sizeof(*h);

	if (type == PERF_RECORD_SAMPLE)
		return decode_sample(p, end, l, r);
	if (type >= PERF_RECORD_USER_TYPE_START)
		return 0;	/* perf-tool records carry no sample_id */

	sidsz = record_sample_id_size(l);
	if (sidsz > 0) {
		if ((size_t)(end - p) < sidsz)
			return -EINVAL;
		end -= sidsz;
		decode_sample_id(l, end, &r->sid);
		r->has_sid = 1;
	}

	switch (type) {
	case PERF_RECORD_MMAP3:
		if (!l->mmap3)
			return 0;
		/* FALLTHROUGH */
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return decode_mmap(p, end, type, r->misc, l->build_id, &r->mmap);
	case PERF_RECORD_COMM:
		if (end - p < 8)
			return -EINVAL;
		r->comm.pid = get_u32(p);
		r->comm.tid = get_u32(p + 4);
		if ((r->comm.comm = get_string(p + 8, end)) == NULL)
			return -EINVAL;
		return 0;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (end - p < 24)
			return -EINVAL;
		r->task.pid = get_u32(p);
		r->task.ppid = get_u32(p + 4);
		r->task.tid = get_u32(p + 8);
		r->task.ptid = get_u32(p + 12);
		r->task.time = get_u64(p + 16);
		return 0;
	case PERF_RECORD_LOST:
		if (end - p < 16)
			return -EINVAL;
		r->lost.id = get_u64(p);
		r->lost.lost = get_u64(p + 8);
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		if (end - p < 8)
			return -EINVAL;
		r->lost_samples.lost = get_u64(p);
		return 0;
	case PERF_RECORD_NAMESPACES: {
		uint64_t nr;

		/* pid, tid, nr_namespaces, then { dev, inode } each */
		if (end - p < 16)
			return -EINVAL;
		r->ns.pid = get_u32(p);
		r->ns.tid = get_u32(p + 4);
		nr = get_u64(p + 8);
		if (nr > (uint64_t)(end - p - 16) / 16)
			return -EINVAL;
		if (nr > MNT_NS_INDEX)
			r->ns.mnt_ns = get_u64(p + 16 + 16 * MNT_NS_INDEX + 8);
		if (nr > USER_NS_INDEX)
			r->ns.user_ns = get_u64(p + 16 + 16 * USER_NS_INDEX + 8);
		return 0;
	}
	default:
		return 0;
	}
}

/* Copy NAME NUL-padded to 8 at P; returns the padded length. */
static size_t
put_name(uint8_t *p, const char *name)
{
	size_t	 n = strlen(name) + 1, padded = (n + 7) & ~(size_t)7;

	memcpy(p, name, n);
	memset(p + n, 0, padded - n);
	return padded;
}

static size_t
finish_record(uint8_t *out, size_t body, uint32_t type, uint16_t misc,
    const struct record_layout *l, const struct record_sample_id *sid)
{
	struct perf_event_header h;
	size_t	 sidsz = record_sample_id_size(l);

	record_encode_sample_id(l, sid, out + body);
	h.type = type;
	h.misc = misc;
	h.size = (uint16_t)(body + sidsz);
	memcpy(out, &h, sizeof(h));
	return body + sidsz;
}

static size_t
build_mmap2(void *out, const struct record_mmap *m, uint16_t misc, int with_id,
    const struct record_layout *l, const struct record_sample_id *sid)
{
	struct mmap2_record r;
	uint8_t	*p = out;
	size_t	 n;

	memset(&r, 0, sizeof(r));
	r.pid = m->pid;
	r.tid = m->tid;
	r.addr = m->addr;
	r.len = m->len;
	r.pgoff = m->pgoff;
	if (with_id) {
		r.build_id_size = m->build_id_size > BUILD_ID_MAX ? BUILD_ID_MAX : m->build_id_size;
		memcpy(r.build_id, m->build_id, r.build_id_size);
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	} else {
		r.maj = m->maj;
		r.min = m->min;
		r.ino = m->ino;
		r.ino_generation = m->ino_generation;
		misc &= ~PERF_RECORD_MISC_MMAP_BUILD_ID;
	}
	r.prot = m->prot;
	r.flags = m->flags;
	memcpy(p, &r, sizeof(r));
	n = sizeof(r) + put_name(p + sizeof(r), m->filename);
	return finish_record(p, n, PERF_RECORD_MMAP2, misc, l, sid);
}

size_t
record_build_mmap2(void *out, const struct record_mmap *m, uint16_t misc,
    const struct record_layout *l, const struct record_sample_id *sid)
{
	return build_mmap2(out, m, misc, m->build_id_size > 0, l, sid);
}

size_t
record_build_mmap2_plain(void *out, const struct record_mmap *m, uint16_t misc,
    const struct record_layout *l, const struct record_sample_id *sid)
{
	return build_mmap2(out, m, misc, 0, l, sid);
}

size_t
record_build_mmap(void *out, const struct record_mmap *m, uint16_t misc,
    const struct record_layout *l, const struct record_sample_id *sid)
{
	uint8_t	*p = out;
	size_t	 n;

	memcpy(p + 8, &m->pid, 4);
	memcpy(p + 12, &m->tid, 4);
	memcpy(p + 16, &m->addr, 8);
	memcpy(p + 24, &m->len, 8);
	memcpy(p + 32, &m->pgoff, 8);
	n = 40 + put_name(p + 40, m->filename);
	return finish_record(p, n, PERF_RECORD_MMAP, misc, l, sid);
}

size_t
record_build_comm(void *out, uint32_t pid, uint32_t tid, const char *comm,
    uint16_t misc, const struct record_layout *l, const struct record_sample_id *sid)
{
	uint8_t	*p = out;
	size_t	 n;

	memcpy(p + 8, &pid, 4);
	memcpy(p + 12, &tid, 4);
	n = 16 + put_name(p + 16, comm);
	return finish_record(p, n, PERF_RECORD_COMM, misc, l, sid);
}

size_t
record_build_namespaces(void *out, uint32_t pid, uint32_t tid, uint64_t mnt_ns, uint64_t user_ns,
    const struct record_layout *l, const struct record_sample_id *sid)
{
	uint8_t	*p = out;
	uint64_t nr = NR_NAMESPACES;
	size_t	 n = 24 + NR_NAMESPACES * 16;

	/* pid, tid, nr_namespaces, then { dev, inode } each; what is not known, 0 */
	memset(p + 8, 0, n - 8);
	memcpy(p + 8, &pid, 4);
	memcpy(p + 12, &tid, 4);
	memcpy(p + 16, &nr, 8);
	memcpy(p + 24 + 16 * USER_NS_INDEX + 8, &user_ns, 8);
	memcpy(p + 24 + 16 * MNT_NS_INDEX + 8, &mnt_ns, 8);
	return finish_record(p, n, PERF_RECORD_NAMESPACES, 0, l, sid);
}

const char *
record_type_name(uint32_t type, const struct record_layout *l)
{
	static const char *const names[] = {
		[PERF_RECORD_MMAP] = "MMAP", [PERF_RECORD_LOST] = "LOST",
		[PERF_RECORD_COMM] = "COMM", [PERF_RECORD_EXIT] = "EXIT",
		[PERF_RECORD_THROTTLE] = "THROTTLE",
		[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
		[PERF_RECORD_FORK] = "FORK", [PERF_RECORD_READ] = "READ",
		[PERF_RECORD_SAMPLE] = "SAMPLE", [PERF_RECORD_MMAP2] = "MMAP2",
		[PERF_RECORD_AUX] = "AUX", [PERF_RECORD_ITRACE_START] = "ITRACE_START",
		[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
		[PERF_RECORD_SWITCH] = "SWITCH",
		[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
		[PERF_RECORD_NAMESPACES] = "NAMESPACES",
		[PERF_RECORD_KSYMBOL] = "KSYMBOL", [PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
		[PERF_RECORD_CGROUP] = "CGROUP", [PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
		[PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	};

	if (type == PERF_RECORD_MMAP3 && l != NULL && l->mmap3)
		return "MMAP3";
	if (type == PERF_RECORD_FINISHED_ROUND)
		return "FINISHED_ROUND";
	if (type == PERF_RECORD_FINISHED_INIT)
		return "FINISHED_INIT";
	if (type < sizeof(names) / sizeof(names[0]) && names[type] != NULL)
		return names[type];
	return "UNKNOWN";
}
