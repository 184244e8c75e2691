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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hash.h"
#include "index_int.h"
#include "log.h"
#include "record.h"
#include "record/buildid_reader.h"
#include "walltime.h"

/* ---------------------------------------------------------------- helpers */

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

/*
 * All of SRC's ops to the end of DST, or none (-1, out of memory): a move
 * stopped half way left the ops moved in both, their strings owned twice
 * (DST freed as lost, SRC's kept for the next commit).
 */
int
batch_move(struct write_batch *dst, struct write_batch *src)
{
	if (src->n == 0)
		return 0;
	if (dst->cap - dst->n < src->n) {
		size_t	 cap = dst->cap ? dst->cap : 64;
		struct write_op *n;

		while (cap - dst->n < src->n) {
			if (cap > SIZE_MAX / 2)
				return -1;
			cap *= 2;
		}
		if ((n = reallocarray(dst->ops, cap, sizeof(*n))) == NULL)
			return -1;
		dst->ops = n;
		dst->cap = cap;
	}
	memcpy(dst->ops + dst->n, src->ops, src->n * sizeof(*src->ops));
	dst->n += src->n;
	src->n = 0;	/* ownership moved */
	return 0;
}

/* ---------------------------------------------------------------- memory rows */

struct obj_row *
table_row_slot(struct index *ix, uint32_t id)
{
	while ((size_t)id >= ix->nchunks * OBJ_CHUNK) {
		struct obj_row **n = reallocarray(ix->objs, ix->nchunks + 1, sizeof(*n));

		if (n == NULL)
			return NULL;
		ix->objs = n;
		if ((n[ix->nchunks] = calloc(OBJ_CHUNK, sizeof(**n))) == NULL)
			return NULL;
		ix->nchunks++;
	}
	return OBJ(ix, id);
}

struct obj_row *
table_row(struct index *ix, const struct binary *b)
{
	struct obj_row *e;

	if ((e = table_row_slot(ix, b->id)) == NULL)
		return NULL;
	if (e->id == 0) {
		e->id = ix->next_id++;
		ix->nobjs++;
	}
	return e;
}

void
table_forget(struct index *ix, const struct binary *b)
{
	struct obj_row *e;

	if ((size_t)b->id >= ix->nchunks * OBJ_CHUNK || (e = OBJ(ix, b->id))->id == 0)
		return;
	/* What it has not handed over yet goes now, while B is still B. */
	if (e->flags & OBJ_IN_DIRTY)
		index_commit(ix);
	memset(e, 0, sizeof(*e));
	ix->nobjs--;
	ix->forgot = 1;		/* the next batch is not plain (index_int.h) */
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

void
table_sight(struct index *ix, const struct binary *b, uint8_t source, uint32_t pid,
    uint64_t wall, int count)
{
	struct obj_row *e;

	if ((e = table_row(ix, b)) == NULL) {
		log_warnx("index: out of memory");
		return;
	}
	ix->stats.sightings++;
	if (e->first == 0 || wall < e->first)
		e->first = wall;
	if (wall > e->last)
		e->last = wall;
	if (source != BID_NONE)
		e->source = source;
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
	if (b->kind == BINARY_USER && (count || e->nr_procs == 0)) {
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
			e->flags &= (uint8_t)~(OBJ_SEG_DIRTY | OBJ_FOLD);
			e->seg_seq = ix->cur_seq;
			ix->news = 1;	/* its first sighting in this segment: a row of it */
			e->seg_first = e->seg_last = wall;
			e->seg_maps = e->seg_sent = 0;
		}
		if (wall < e->seg_first)
			e->seg_first = wall;
		if (wall > e->seg_last)
			e->seg_last = wall;
		if (count)
			e->seg_maps++;
		mark_dirty(ix, b->id, OBJ_DIRTY | OBJ_SEG_DIRTY);
	} else
		mark_dirty(ix, b->id, OBJ_DIRTY);
	if (!(e->flags & OBJ_WRITTEN))
		ix->news = 1;	/* a new object */
	index_maybe_commit(ix);
}

void
table_add_object(struct index *ix, const char *name, int unlinked, const uint8_t *id,
    uint8_t idsize, uint64_t ns, uint8_t source, uint8_t kind, uint32_t pid, uint64_t wall,
    int count)
{
	struct binary *b;

	if (idsize == 0 || idsize > BUILD_ID_MAX)
		return;
	if ((b = binaries_get_ns(ix->bins, name, unlinked, id, idsize, ns, NULL)) == NULL) {
		log_warnx("index: out of memory");
		return;
	}
	b->kind = kind;
	table_sight(ix, b, source, pid, wall, count);
}

void
index_add_mapping(struct index *ix, const char *path, const uint8_t *id, uint8_t idsize,
    uint8_t source, uint32_t pid, uint64_t wall_ns, int synthesized)
{
	if (ix != NULL)
		table_add_object(ix, path, 1, id, idsize, 0, source, BINARY_USER, pid, wall_ns,
		    !synthesized);
}

void
index_add_unresolved(struct index *ix, const char *path, int cause, uint64_t wall_ns)
{
	const char *reason = buildid_cause_name(cause);
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
	ix->news = 1;
found:
	if (wall_ns < u->first || u->first == 0)
		u->first = wall_ns;
	if (wall_ns > u->last)
		u->last = wall_ns;
	u->n++;
	u->dirty = 1;
	ix->unres_dirty = 1;
}

void
table_trim_unresolved(struct index *ix)
{
	if (ix->nunres <= UNRES_KEEP)
		return;
	/* All written: a path seen again starts a new row, which the writer adds up. */
	arena_free(&ix->arena);
	free(ix->uhash);
	ix->uhash = NULL;
	ix->uhcap = 0;
	ix->nunres = 0;
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
	/* Sightings until the next segment opens belong to none (flight mode). */
	if (ix->cur_seq == seq)
		ix->cur_seq = 0;
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
	/* the open one gone (a close that failed, then removed): sightings go to none */
	if (ix->cur_seq == seq)
		ix->cur_seq = 0;
	if ((o = batch_add(&ix->early, OP_SEG_DELETED)) != NULL) {
		o->v[0] = (int64_t)seq;
		o->v[1] = walltime_now();
	}
}
