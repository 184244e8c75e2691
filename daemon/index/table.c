/*
 * table.c - the index's rows in memory, on the loop thread.  An object
 * (path, build-id) is a slot of ix->objs, found through an open-addressing
 * hash; a sighting updates the slot and puts it on the dirty list once.
 * Segment events and unresolved mappings are queued the same way.  The
 * commit (index.c) turns what is dirty into a batch for the writer.
 *
 * Times: first_seen/last_seen of an object move with each new mmap, with
 * the live state every segment starts with, and with the exit of a process
 * that had it mapped (the recorder reports the exit's maps).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hash.h"
#include "index_int.h"
#include "log.h"
#include "record.h"
#include "walltime.h"

/* ---------------------------------------------------------------- helpers */

uint64_t
index_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

const char *
arena_strdup(struct arena *a, const char *s)
{
	size_t	 len = strlen(s) + 1;
	char	*p, **nc;

	if (len > a->left) {
		size_t sz = len > ARENA_CHUNK ? len : ARENA_CHUNK;

		if ((nc = reallocarray(a->chunks, a->nchunks + 1, sizeof(*nc))) == NULL)
			return NULL;
		a->chunks = nc;
		if ((a->cur = malloc(sz)) == NULL)
			return NULL;
		a->chunks[a->nchunks++] = a->cur;
		a->left = sz;
	}
	p = a->cur;
	memcpy(p, s, len);
	a->cur += len;
	a->left -= len;
	return p;
}

void
arena_free(struct arena *a)
{
	size_t	 i;

	for (i = 0; i < a->nchunks; i++)
		free(a->chunks[i]);
	free(a->chunks);
	memset(a, 0, sizeof(*a));
}

struct write_op *
batch_add(struct write_batch *b, enum write_op_type type)
{
	struct write_op *n;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;

		if ((n = reallocarray(b->ops, cap, sizeof(*n))) == NULL)
			return NULL;
		b->ops = n;
		b->cap = cap;
	}
	n = &b->ops[b->n++];
	memset(n, 0, sizeof(*n));
	n->type = (uint8_t)type;
	return n;
}

static void
batch_clear(struct write_batch *b)
{
	size_t	 i;

	for (i = 0; i < b->n; i++) {
		free(b->ops[i].owned);
		free(b->ops[i].sect);
	}
	b->n = 0;
}

void
batch_free(struct write_batch *b)
{
	batch_clear(b);
	free(b->ops);
	b->ops = NULL;
	b->cap = 0;
}

/* Move every op of SRC to the end of DST. */
int
batch_move(struct write_batch *dst, struct write_batch *src)
{
	size_t	 i;

	for (i = 0; i < src->n; i++) {
		struct write_op *o = batch_add(dst, (enum write_op_type)src->ops[i].type);

		if (o == NULL)
			return -1;
		*o = src->ops[i];
	}
	src->n = 0;	/* ownership moved */
	return 0;
}

static const char *
unresolved_reason(int err)
{
	switch (-err) {
	case ENOENT: return "no build-id note, or file gone";
	case ENOEXEC: return "not an ELF file";
	case EINVAL: return "bad build-id note";
	case EACCES: case EPERM: return "permission denied";
	case ESRCH: return "process gone";
	case ENOMEM: return "out of memory";
	case 0: return "unknown";
	default: return "read error";
	}
}

/* ---------------------------------------------------------------- memory rows */

static int
ohash_grow(struct index *ix)
{
	size_t	 cap = ix->ohcap ? ix->ohcap * 2 : 1024, i, j;
	uint32_t *h;

	if ((h = calloc(cap, sizeof(*h))) == NULL)
		return -1;
	for (i = 0; i < ix->nobjs; i++) {
		for (j = OBJ(ix, i)->hash & (cap - 1); h[j] != 0; j = (j + 1) & (cap - 1))
			;
		h[j] = (uint32_t)i + 1;
	}
	free(ix->ohash);
	ix->ohash = h;
	ix->ohcap = cap;
	return 0;
}

static uint64_t
obj_hash(const char *path, const uint8_t *id, uint8_t size)
{
	return hash_str(path, hash_bytes(id, size, HASH_INIT));
}

/* The slot of (PATH, ID), created if new; -1 when out of memory. */
ssize_t
table_obj_get(struct index *ix, const char *path, const uint8_t *id, uint8_t size,
    int64_t known_id)
{
	uint64_t h = obj_hash(path, id, size);
	struct obj_row *e;
	size_t	 j;

	if ((ix->nobjs + 1) * 2 > ix->ohcap && ohash_grow(ix) < 0)
		return -1;
	for (j = h & (ix->ohcap - 1); ix->ohash[j] != 0; j = (j + 1) & (ix->ohcap - 1)) {
		e = OBJ(ix, (size_t)ix->ohash[j] - 1);
		if (e->hash == h && e->bidsize == size && memcmp(e->bid, id, size) == 0 &&
		    strcmp(e->path, path) == 0)
			return (ssize_t)ix->ohash[j] - 1;
	}
	if (ix->nobjs == ix->nchunks * OBJ_CHUNK) {
		struct obj_row **n = reallocarray(ix->objs, ix->nchunks + 1, sizeof(*n));

		if (n == NULL)
			return -1;
		ix->objs = n;
		if ((n[ix->nchunks] = malloc(OBJ_CHUNK * sizeof(**n))) == NULL)
			return -1;
		ix->nchunks++;
	}
	e = OBJ(ix, ix->nobjs);
	memset(e, 0, sizeof(*e));
	if ((e->path = arena_strdup(&ix->arena, path)) == NULL)
		return -1;
	e->hash = h;
	memcpy(e->bid, id, size);
	e->bidsize = size;
	e->id = known_id > 0 ? known_id : ix->next_id++;
	if (e->id >= ix->next_id)
		ix->next_id = e->id + 1;
	ix->ohash[j] = (uint32_t)ix->nobjs + 1;
	return (ssize_t)ix->nobjs++;
}

static void
mark_dirty(struct index *ix, size_t slot, uint8_t what)
{
	struct obj_row *e = OBJ(ix, slot);

	if (!(e->flags & OBJ_IN_DIRTY)) {
		if (ix->ndirty == ix->cdirty) {
			size_t	 cap = ix->cdirty ? ix->cdirty * 2 : 1024;
			uint32_t *n = reallocarray(ix->dirty, cap, sizeof(*n));

			if (n == NULL)
				return;
			ix->dirty = n;
			ix->cdirty = cap;
		}
		ix->dirty[ix->ndirty++] = (uint32_t)slot;
		e->flags |= OBJ_IN_DIRTY;
	}
	e->flags |= what;
}

/* A sighting of the object in SLOT; what was new about it into *OUT (may be NULL). */
static void
sight(struct index *ix, size_t slot, uint8_t source, uint8_t kind, uint32_t pid,
    uint64_t wall, int count, struct index_sighting *out)
{
	struct obj_row *e = OBJ(ix, slot);

	ix->stats.sightings++;
	/* The recorder's sightings (OUT given) mark it seen; scans of old segments do not. */
	if (out != NULL) {
		out->obj = (int32_t)slot;
		out->new_in_segment = ix->cur_seq == 0 || e->seg_seq != ix->cur_seq;
		out->new_in_run = !(e->flags & OBJ_SEEN);
		e->flags |= OBJ_SEEN;
	}
	if (e->first == 0 || wall < e->first)
		e->first = wall;
	if (wall > e->last)
		e->last = wall;
	if (source != BID_NONE)
		e->source = source;
	e->kind = kind;
	if (count)
		e->nr_maps++;
	/*
	 * Processes, counted in O(1) memory: a new mapping from another pid
	 * than the last one (a process maps its pieces of a file one after
	 * the other); a segment's initial state counts only for an object no
	 * process was counted for yet (what the start-up scan found running).
	 * Approximate by design: a pid reused for the same object, or two
	 * processes alternating, are not told apart.
	 */
	if (kind == KIND_USER && (count || e->nr_procs == 0)) {
		if (pid != e->last_pid)
			e->nr_procs++;
		e->last_pid = pid;
	}
	if (ix->cur_seq != 0) {
		if (e->seg_seq != ix->cur_seq) {
			struct write_op *o;

			/* Left behind by a rotation before a commit: queue it. */
			if ((e->flags & OBJ_SEG_DIRTY) && (o = batch_add(&ix->late, OP_OBJSEG)))
				op_from_objseg(o, e);
			e->flags &= (uint8_t)~OBJ_SEG_DIRTY;
			e->seg_seq = ix->cur_seq;
			e->seg_first = e->seg_last = wall;
			e->seg_maps = 0;
		}
		if (wall < e->seg_first)
			e->seg_first = wall;
		if (wall > e->seg_last)
			e->seg_last = wall;
		if (count)
			e->seg_maps++;
		mark_dirty(ix, (size_t)slot, OBJ_DIRTY | OBJ_SEG_DIRTY);
	} else
		mark_dirty(ix, (size_t)slot, OBJ_DIRTY);
	index_maybe_commit(ix);
}

void
table_add_object(struct index *ix, const char *path, const uint8_t *id, uint8_t idsize,
    uint8_t source, uint8_t kind, uint32_t pid, uint64_t wall, int count,
    struct index_sighting *out)
{
	ssize_t	 slot;

	if (idsize == 0 || idsize > BUILD_ID_MAX)
		return;
	if ((slot = table_obj_get(ix, path, id, idsize, 0)) < 0 || slot > INT32_MAX) {
		log_warnx("index: out of memory");
		return;
	}
	sight(ix, (size_t)slot, source, kind, pid, wall, count, out);
}

/*
 * The kernel names a file that was unlinked (replaced by an upgrade) when
 * it was mapped "PATH (deleted)"; /proc/PID/maps does the same for a
 * running process whose binary was replaced since.  The object is PATH
 * with its old build-id: that is what "history PATH" must show.
 */
const char *
table_strip_deleted(const char *path, char *buf, size_t len)
{
	size_t	 n = record_name_len(path);

	if (path[n] == '\0' || n >= len)
		return path;
	memcpy(buf, path, n);
	buf[n] = '\0';
	return buf;
}

void
index_add_mapping(struct index *ix, const char *path, const uint8_t *id, uint8_t idsize,
    uint8_t source, uint32_t pid, uint64_t wall_ns, int synthesized,
    struct index_sighting *out)
{
	char	 buf[PATH_MAX];

	if (out != NULL)
		out->obj = -1;		/* until a slot is found */
	if (ix == NULL)
		return;
	table_add_object(ix, table_strip_deleted(path, buf, sizeof(buf)), id, idsize, source, KIND_USER,
	    pid, wall_ns, !synthesized, out);
}

void
index_add_object(struct index *ix, int32_t obj, uint32_t pid, uint64_t wall_ns,
    int synthesized)
{
	if (ix == NULL || obj < 0 || (size_t)obj >= ix->nobjs)
		return;
	sight(ix, (size_t)obj, BID_NONE, KIND_USER, pid, wall_ns, !synthesized, NULL);
}

void
index_add_unresolved(struct index *ix, const char *path, int err, uint64_t wall_ns)
{
	const char *reason = unresolved_reason(err);
	struct unres_row *u;
	uint64_t h;
	size_t	 j, i;

	if (ix == NULL)
		return;
	ix->stats.unresolved++;
	h = hash_str(reason, hash_str(path, HASH_INIT));
	if ((ix->nunres + 1) * 2 > ix->uhcap) {
		size_t	 cap = ix->uhcap ? ix->uhcap * 2 : 256;
		uint32_t *n = calloc(cap, sizeof(*n));

		if (n == NULL)
			return;
		for (i = 0; i < ix->nunres; i++) {
			for (j = ix->unres[i].hash & (cap - 1); n[j] != 0; j = (j + 1) & (cap - 1))
				;
			n[j] = (uint32_t)i + 1;
		}
		free(ix->uhash);
		ix->uhash = n;
		ix->uhcap = cap;
	}
	for (j = h & (ix->uhcap - 1); ix->uhash[j] != 0; j = (j + 1) & (ix->uhcap - 1)) {
		u = &ix->unres[ix->uhash[j] - 1];
		if (u->hash == h && u->reason == reason && strcmp(u->path, path) == 0)
			goto found;
	}
	if (ix->nunres == ix->cunres) {
		size_t	 cap = ix->cunres ? ix->cunres * 2 : 256;
		struct unres_row *n = reallocarray(ix->unres, cap, sizeof(*n));

		if (n == NULL)
			return;
		ix->unres = n;
		ix->cunres = cap;
	}
	u = &ix->unres[ix->nunres];
	memset(u, 0, sizeof(*u));
	if ((u->path = arena_strdup(&ix->arena, path)) == NULL)
		return;
	u->hash = h;
	u->reason = reason;
	u->first = wall_ns;
	ix->uhash[j] = (uint32_t)++ix->nunres;
found:
	if (wall_ns < u->first || u->first == 0)
		u->first = wall_ns;
	if (wall_ns > u->last)
		u->last = wall_ns;
	u->n++;
	u->dirty = 1;
	ix->unres_dirty = 1;
}

/* ---------------------------------------------------------------- segments */

uint64_t
index_name_seq(const char *name)
{
	unsigned long long seq;
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	if (sscanf(base, "perf-%llu-", &seq) != 1)
		return 0;
	return seq;
}

void
index_segment_open(struct index *ix, uint64_t seq, const char *name, uint64_t wall_start_ns)
{
	const char *base;
	struct write_op *o;

	if (ix == NULL)
		return;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	ix->cur_seq = seq;
	if ((o = batch_add(&ix->early, OP_SEG_OPEN)) == NULL ||
	    (o->owned = strdup(base)) == NULL) {
		if (o != NULL)
			ix->early.n--;
		log_warnx("index: out of memory");
		return;
	}
	o->v[0] = (int64_t)seq;
	o->v[1] = (int64_t)wall_start_ns;
}

void
index_segment_close(struct index *ix, uint64_t seq, uint64_t wall_end_ns, uint64_t size,
    uint64_t samples, uint64_t lost, uint64_t records)
{
	struct write_op *o;

	if (ix == NULL)
		return;
	if ((o = batch_add(&ix->early, OP_SEG_CLOSE)) != NULL) {
		o->v[0] = (int64_t)seq;
		o->v[1] = (int64_t)wall_end_ns;
		o->v[2] = (int64_t)size;
		o->v[3] = (int64_t)samples;
		o->v[4] = (int64_t)lost;
		o->v[5] = (int64_t)records;
	}
	index_commit(ix);
}

void
index_segment_deleted(struct index *ix, const char *name)
{
	struct write_op *o;
	uint64_t seq = index_name_seq(name);

	if (ix == NULL || seq == 0)
		return;
	if ((o = batch_add(&ix->early, OP_SEG_DELETED)) != NULL) {
		o->v[0] = (int64_t)seq;
		o->v[1] = walltime_now();
	}
}
