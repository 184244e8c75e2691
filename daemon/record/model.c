/*
 * model.c - processes, threads and executable mappings; see model.h.
 *
 * Process lifecycle as the records drive it:
 *
 *	FORK(pid != ppid) ──► new process: parent's maps and comm copied
 *	FORK(pid == ppid) ──► new thread of pid (parent thread's comm)
 *	COMM(exec)        ──► name changes, all maps dropped (new image)
 *	MMAP2/MMAP3       ──► map added, overlapped maps trimmed or dropped
 *	EXIT              ──► thread gone; the process goes with its last
 *	                      thread, or with the leader if no other is known
 *
 * Records can arrive for a process the model never saw (it started before
 * we did and the /proc scan raced it): such a process is created on demand.
 *
 * Scale (a host of 10k processes with 200 maps each is 2M maps):
 *
 *	processes    open addressing by pid, the pid in the slot (a lookup
 *	             reads no process but the one found), at most half
 *	             full, doubling; the last one found kept (its records
 *	             come in runs); one removed inside model_foreach is a
 *	             tomb until the walk ends
 *	threads      per process, open addressing by tid, doubling at 3/4
 *	maps         per process, an array sorted by address: found, added
 *	             and punched by binary search; 48 bytes each
 *	files        what maps share (name, inode, build-id): chained hash,
 *	             doubling; one entry however many maps name it, counted,
 *	             so a fork copies 48 bytes and a count per map, and 2M
 *	             maps of 200 files hold 200 names; the last FILES_IDLE
 *	             to go out of use stay findable (an exec storm's binary
 *	             between two runs), each with the binary the recorder
 *	             found for it (recorder_file_binary)
 *	spares       a process that went is kept, arrays and all, for the
 *	             next one (SPARE_MAX): an exec storm allocates no process
 *
 * Nothing on a record's path scans the host's processes, a process's
 * threads or its maps.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "model.h"

#define MODEL_BUCKETS_MIN	64
/*
 * Processes that went are kept for the next ones (an exec storm makes and
 * drops a thousand a second, each with its map and thread arrays): at most
 * SPARE_MAX, each with room for at most SPARE_MAPS maps and SPARE_THREADS
 * threads (larger arrays go back to the allocator).
 */
#define SPARE_MAX		32
#define SPARE_MAPS		64
#define SPARE_THREADS		16

/* What a slot of a process removed inside model_foreach holds until the walk ends. */
static struct model_proc tomb;

static size_t
pid_slot(uint32_t pid, size_t nslots)
{
	return (size_t)hash_step(HASH_INIT, pid) & (nslots - 1);
}

/* ---- files ---------------------------------------------------------------- */

static uint64_t
file_hash(const char *name, const struct model_file *k)
{
	uint64_t h = hash_bytes(k->build_id, k->build_id_size, HASH_INIT);

	h = hash_step(h, k->ino);
	h = hash_step(h, k->ino_generation);
	h = hash_step(h, (uint64_t)k->maj << 32 | k->min);
	return hash_str(name, h);
}

static void
files_grow(struct model *m)
{
	struct model_file **nb, *f, *next;
	size_t	 n = m->nfbuckets * 2, i, b;

	if ((nb = calloc(n, sizeof(*nb))) == NULL)
		return;		/* longer chains, still right */
	for (i = 0; i < m->nfbuckets; i++)
		for (f = m->fbuckets[i]; f != NULL; f = next) {
			next = f->next;
			b = (size_t)f->hash & (n - 1);
			f->next = nb[b];
			nb[b] = f;
		}
	free(m->fbuckets);
	m->fbuckets = nb;
	m->nfbuckets = n;
}

/*
 * The slot of m->recent for inode K: an exec storm maps the same few
 * files thousands of times a second, and hashing each mapping's name and
 * build-id was the model's largest cost (file_hash's serial multiplies).
 */
static size_t
recent_slot(const struct model_file *k)
{
	return (size_t)(((k->ino ^ ((uint64_t)k->maj << 40) ^ ((uint64_t)k->min << 20)) *
	    0x9e3779b97f4a7c15ULL) >> (64 - FILES_RECENT_BITS));
}

/* Is F the file NAME with K's inode, build-id and what was proven of its name? */
static int
file_is(const struct model_file *f, const char *name, const struct model_file *k)
{
	return f->ino == k->ino && f->ino_generation == k->ino_generation &&
	    f->maj == k->maj && f->min == k->min && f->build_id_size == k->build_id_size &&
	    f->name_flags == k->name_flags &&
	    memcmp(f->build_id, k->build_id, k->build_id_size) == 0 &&
	    strcmp(f->name, name) == 0;
}

/* F found again: counted once more. */
static struct model_file *
file_ref(struct model *m, struct model_file *f)
{
	if (f->refs++ == 0)
		m->nfiles++;	/* an idle one back in use */
	return f;
}

/* The file NAME with K's inode and build-id, counted once more. */
static struct model_file *
file_get(struct model *m, const char *name, const struct model_file *k)
{
	struct model_file *f, **rp = &m->recent[recent_slot(k)];
	uint64_t h;
	size_t	 len, b;

	if (*rp != NULL && file_is(*rp, name, k))
		return file_ref(m, *rp);
	h = file_hash(name, k);
	for (f = m->fbuckets[h & (m->nfbuckets - 1)]; f != NULL; f = f->next)
		if (f->hash == h && file_is(f, name, k))
			return file_ref(m, *rp = f);
	if (m->nfiles + FILES_IDLE >= m->nfbuckets)
		files_grow(m);
	len = strlen(name) + 1;
	if ((f = malloc(sizeof(*f) + len)) == NULL)
		return NULL;
	memset(f, 0, sizeof(*f));
	f->hash = h;
	f->ino = k->ino;
	f->ino_generation = k->ino_generation;
	f->maj = k->maj;
	f->min = k->min;
	f->refs = 1;
	f->bin = UINT32_MAX;	/* BINARY_NONE: nothing cached */
	f->build_id_size = k->build_id_size;
	f->name_flags = k->name_flags;
	memcpy(f->build_id, k->build_id, k->build_id_size);
	memcpy(f->name, name, len);
	f->namelen = (uint16_t)(len - 1 > UINT16_MAX ? UINT16_MAX : len - 1);
	b = (size_t)h & (m->nfbuckets - 1);
	f->next = m->fbuckets[b];
	m->fbuckets[b] = f;
	m->nfiles++;
	return *rp = f;
}

static void
file_free(struct model *m, struct model_file *f)
{
	struct model_file **pp;

	for (pp = &m->fbuckets[f->hash & (m->nfbuckets - 1)]; *pp != f; pp = &(*pp)->next)
		;
	*pp = f->next;
	if (m->recent[recent_slot(f)] == f)
		m->recent[recent_slot(f)] = NULL;
	free(f);
}

/*
 * F's last map went: F stays, findable, as one of the FILES_IDLE last to
 * go (the binary an exec storm runs is mapped by no process between two
 * of its runs); the one it takes the place of goes unless back in use.
 */
static void
file_put(struct model *m, struct model_file *f)
{
	struct model_file *old;

	if (--f->refs > 0)
		return;
	m->nfiles--;
	if (f->idle)
		return;		/* still in the ring from before */
	if ((old = m->idle[m->idle_next]) != NULL) {
		old->idle = 0;
		if (old->refs == 0)
			file_free(m, old);
	}
	f->idle = 1;
	m->idle[m->idle_next] = f;
	m->idle_next = (m->idle_next + 1) % FILES_IDLE;
}

/* Binary BIN has DELTA (1 or -1) maps more (model.h: bin_maps). */
static void
bin_count(struct model *m, uint32_t bin, int delta)
{
	size_t	 n;
	uint32_t *v;

	if (bin == UINT32_MAX || m->bin_maps_lost)	/* BINARY_NONE */
		return;
	if (bin >= m->nbin_maps) {
		n = m->nbin_maps * 2 > (size_t)bin + 1 ? m->nbin_maps * 2 : (size_t)bin + 1;
		if (delta < 0 || (v = reallocarray(m->bin_maps, n, sizeof(*v))) == NULL) {
			m->bin_maps_lost = 1;	/* (a map let go never counted: a slip) */
			return;
		}
		memset(v + m->nbin_maps, 0, (n - m->nbin_maps) * sizeof(*v));
		m->bin_maps = v;
		m->nbin_maps = n;
	}
	if (delta < 0 && m->bin_maps[bin] == 0)
		m->bin_maps_lost = 1;
	else
		m->bin_maps[bin] += (uint32_t)delta;
}

/* MM is let go: its file put, its binary's count less one. */
static void
map_gone(struct model *m, struct model_proc *p, const struct model_map *mm)
{
	m->name_bytes -= mm->file->namelen;
	p->name_bytes -= mm->file->namelen;
	file_put(m, mm->file);
	bin_count(m, mm->bin, -1);
}

int
model_bin_mapped(const struct model *m, uint32_t bin)
{
	if (m->bin_maps_lost)
		return -1;
	return bin < m->nbin_maps && m->bin_maps[bin] > 0;
}

void
model_map_set_bin(struct model *m, struct model_map *mm, uint32_t bin)
{
	if (mm->bin == bin)
		return;
	bin_count(m, mm->bin, -1);
	mm->bin = bin;
	bin_count(m, bin, 1);
}

static int
recount_cb(struct model_proc *p, void *arg)
{
	struct model *m = arg;
	size_t	 i;

	for (i = 0; i < p->nmaps; i++)
		bin_count(m, p->maps[i].bin, 1);
	return 0;
}

int
model_bin_recount(struct model *m)
{
	if (m->nbin_maps > 0)
		memset(m->bin_maps, 0, m->nbin_maps * sizeof(*m->bin_maps));
	m->bin_maps_lost = 0;
	model_foreach(m, recount_cb, m);
	return m->bin_maps_lost ? -1 : 0;
}

/* ---- processes ------------------------------------------------------------ */

int
model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->maps_max = MODEL_MAPS_MAX;
	m->maps_global_max = MODEL_MAPS_GLOBAL_MAX;
	m->name_bytes_max = MODEL_NAME_BYTES_MAX;
	m->nslots = 2 * MODEL_BUCKETS_MIN;
	m->nfbuckets = MODEL_BUCKETS_MIN;
	m->slots = calloc(m->nslots, sizeof(*m->slots));
	m->fbuckets = calloc(m->nfbuckets, sizeof(*m->fbuckets));
	if (m->slots == NULL || m->fbuckets == NULL) {
		model_free(m);
		return -ENOMEM;
	}
	return 0;
}

/* P's maps let go; P kept as a spare (SPARE_MAX) when KEEP, else freed. */
static void
proc_free(struct model *m, struct model_proc *p, int keep)
{
	size_t	 i;

	for (i = 0; i < p->nmaps; i++)
		map_gone(m, p, &p->maps[i]);
	if (keep && m->nspare < SPARE_MAX && p->cmaps <= SPARE_MAPS &&
	    p->cthreads <= SPARE_THREADS) {
		p->nmaps = 0;
		p->next = m->spare;
		m->spare = p;
		m->nspare++;
		return;
	}
	free(p->maps);
	free(p->threads);
	free(p);
}

/* A process entry, all zero but the arrays a spare brings (empty). */
static struct model_proc *
proc_new(struct model *m)
{
	struct model_proc *p, keep;

	if ((p = m->spare) == NULL)
		return calloc(1, sizeof(*p));
	m->spare = p->next;
	m->nspare--;
	keep = *p;
	memset(p, 0, sizeof(*p));
	p->maps = keep.maps;
	p->cmaps = keep.cmaps;
	p->threads = keep.threads;
	p->cthreads = keep.cthreads;
	if (p->cthreads > 0)
		memset(p->threads, 0, p->cthreads * sizeof(*p->threads));
	return p;
}

void
model_free(struct model *m)
{
	struct model_proc *p;
	size_t	 i;

	for (i = 0; i < m->nslots && m->slots != NULL; i++)
		if ((p = m->slots[i].p) != NULL && p != &tomb)
			proc_free(m, p, 0);
	while ((p = m->spare) != NULL) {
		m->spare = p->next;
		proc_free(m, p, 0);
	}
	for (i = 0; i < FILES_IDLE; i++)
		if (m->idle[i] != NULL && m->idle[i]->refs == 0)
			free(m->idle[i]);
	free(m->bin_maps);
	free(m->slots);
	free(m->fbuckets);	/* empty but for the idle: each map's file went with it */
	memset(m, 0, sizeof(*m));
}

/* The process table again in N slots (a power of two), without tombs. */
static int
procs_rehash(struct model *m, size_t n)
{
	struct model_slot *ns;
	struct model_proc *p;
	size_t	 i, j;

	if ((ns = calloc(n, sizeof(*ns))) == NULL)
		return -1;
	for (i = 0; i < m->nslots; i++) {
		if ((p = m->slots[i].p) == NULL || p == &tomb)
			continue;
		for (j = pid_slot(p->pid, n); ns[j].p != NULL; j = (j + 1) & (n - 1))
			;
		ns[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = ns;
	m->nslots = n;
	m->ntombs = 0;
	return 0;
}

/* The slot of PID, or the empty slot ending its probe run. */
static struct model_slot *
proc_slot(const struct model *m, uint32_t pid)
{
	struct model_slot *sl;
	size_t	 i, mask = m->nslots - 1;

	for (i = pid_slot(pid, m->nslots); (sl = &m->slots[i])->p != NULL; i = (i + 1) & mask)
		if (sl->pid == pid && sl->p != &tomb)
			return sl;
	return sl;
}

struct model_proc *
model_find(struct model *m, uint32_t pid)
{
	struct model_proc *p;

	if (m->last != NULL && m->last->pid == pid)
		return m->last;
	if ((p = proc_slot(m, pid)->p) != NULL)
		m->last = p;
	return p;
}

static struct model_proc *
proc_get(struct model *m, uint32_t pid)
{
	struct model_slot *sl;
	struct model_proc *p;

	if (m->last != NULL && m->last->pid == pid)
		return m->last;
	if ((sl = proc_slot(m, pid))->p != NULL)
		return m->last = sl->p;
	/* at most half used, tombs counted; a walk moves no slot (a new one fills an empty) */
	if ((m->nprocs + m->ntombs + 1) * 2 > m->nslots) {
		if (m->walking) {
			if ((m->nprocs + m->ntombs + 1) * 4 > m->nslots * 3)
				return NULL;
		} else if (procs_rehash(m, m->nprocs * 4 > m->nslots ? m->nslots * 2 :
		    m->nslots) < 0) {
			if ((m->nprocs + m->ntombs + 1) * 4 > m->nslots * 3)
				return NULL;
		} else
			sl = proc_slot(m, pid);
	}
	if ((p = proc_new(m)) == NULL)
		return NULL;
	p->pid = pid;
	sl->pid = pid;
	sl->p = p;
	m->nprocs++;
	return m->last = p;
}

/* Empty slot I, moving up the entries of its probe run that may take it. */
static void
procs_del(struct model *m, size_t i)
{
	size_t	 mask = m->nslots - 1, j = i, k;

	for (;;) {
		m->slots[i].p = NULL;
		for (;;) {
			j = (j + 1) & mask;
			if (m->slots[j].p == NULL)
				return;
			k = pid_slot(m->slots[j].pid, m->nslots);
			/* j's entry may move to i unless its home k is in (i, j] */
			if (i <= j ? (k <= i || k > j) : (k <= i && k > j))
				break;
		}
		m->slots[i] = m->slots[j];
		i = j;
	}
}

static void
proc_remove(struct model *m, struct model_proc *p)
{
	struct model_slot *sl = proc_slot(m, p->pid);

	if (sl->p != p)
		return;
	if (m->last == p)
		m->last = NULL;
	if (m->walking) {
		sl->p = &tomb;	/* the walk's position stays where it is */
		m->ntombs++;
	} else
		procs_del(m, (size_t)(sl - m->slots));
	m->nmaps -= p->nmaps;
	m->nprocs--;
	proc_free(m, p, 1);
}

/* ---- threads -------------------------------------------------------------- */

static size_t
tid_slot(uint32_t tid, size_t nslots)
{
	return (size_t)hash_step(HASH_INIT, tid) & (nslots - 1);
}

static struct model_thread *
thread_find(const struct model_proc *p, uint32_t tid)
{
	size_t	 i, mask;

	if (p->cthreads == 0)
		return NULL;
	mask = p->cthreads - 1;
	for (i = tid_slot(tid, p->cthreads); p->threads[i].used; i = (i + 1) & mask)
		if (p->threads[i].tid == tid)
			return &p->threads[i];
	return NULL;
}

/* A free slot for TID in table T of N slots (one is free: the load stays below 3/4). */
static struct model_thread *
thread_slot(struct model_thread *t, size_t n, uint32_t tid)
{
	size_t	 i;

	for (i = tid_slot(tid, n); t[i].used; i = (i + 1) & (n - 1))
		;
	memset(&t[i], 0, sizeof(t[i]));
	t[i].used = 1;
	t[i].tid = tid;
	return &t[i];
}

static struct model_thread *
thread_get(struct model_proc *p, uint32_t tid)
{
	struct model_thread *t, *nt;
	size_t	 i, n;

	if ((t = thread_find(p, tid)) != NULL)
		return t;
	if ((p->nthreads + 1) * 4 > p->cthreads * 3) {
		n = p->cthreads ? p->cthreads * 2 : 2;
		if ((nt = calloc(n, sizeof(*nt))) == NULL)
			return NULL;
		for (i = 0; i < p->cthreads; i++)
			if (p->threads[i].used)
				memcpy(thread_slot(nt, n, p->threads[i].tid)->comm,
				    p->threads[i].comm, sizeof(nt->comm));
		free(p->threads);
		p->threads = nt;
		p->cthreads = n;
	}
	p->nthreads++;
	return thread_slot(p->threads, p->cthreads, tid);
}

/* Free T's slot, moving up the entries of its probe run that may take it. */
static void
thread_del(struct model_proc *p, struct model_thread *t)
{
	size_t	 mask = p->cthreads - 1, i = (size_t)(t - p->threads), j = i, k;

	for (;;) {
		p->threads[i].used = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (!p->threads[j].used)
				goto out;
			k = tid_slot(p->threads[j].tid, p->cthreads);
			/* j's entry may move to i unless its home k is in (i, j] */
			if (i <= j ? (k <= i || k > j) : (k <= i && k > j))
				break;
		}
		p->threads[i] = p->threads[j];
		i = j;
	}
out:
	p->nthreads--;
}

struct model_thread *
model_thread_next(const struct model_proc *p, struct model_thread *prev)
{
	size_t	 i = prev == NULL ? 0 : (size_t)(prev - p->threads) + 1;

	for (; i < p->cthreads; i++)
		if (p->threads[i].used)
			return &p->threads[i];
	return NULL;
}

const char *
model_comm(struct model *m, uint32_t pid, uint32_t tid)
{
	struct model_proc *p = model_find(m, pid);
	struct model_thread *t;

	if (p == NULL || (t = thread_find(p, tid)) == NULL || t->comm[0] == '\0')
		return NULL;
	return t->comm;
}

/* ---- maps ----------------------------------------------------------------- */

static int
maps_reserve(struct model_proc *p, size_t extra)
{
	struct model_map *nm;
	size_t	 n;

	if (p->nmaps + extra <= p->cmaps)
		return 0;
	n = p->cmaps ? p->cmaps * 2 : 8;
	while (n < p->nmaps + extra)
		n *= 2;
	if ((nm = reallocarray(p->maps, n, sizeof(*nm))) == NULL)
		return -ENOMEM;
	p->maps = nm;
	p->cmaps = n;
	return 0;
}

/* The index of P's first map that ends after ADDR (ends grow with starts). */
static size_t
maps_after(const struct model_proc *p, uint64_t addr)
{
	size_t	 lo = 0, hi = p->nmaps, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->maps[mid].addr + p->maps[mid].len <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Make room for [start, end): drop maps inside it, trim maps that stick
 * out of it on one side, split a map that covers it on both sides.
 */
static int
maps_punch(struct model *m, struct model_proc *p, uint64_t start, uint64_t end)
{
	struct model_map *mm;
	size_t	 i = maps_after(p, start), j;
	uint64_t ms, me;

	if (i == p->nmaps || p->maps[i].addr >= end)
		return 0;
	mm = &p->maps[i];
	ms = mm->addr;
	me = mm->addr + mm->len;
	if (ms < start && me > end) {
		struct model_map tail = *mm;

		if (maps_reserve(p, 1) < 0)
			return -ENOMEM;
		mm = &p->maps[i];
		mm->file->refs++;
		m->name_bytes += mm->file->namelen;
		p->name_bytes += mm->file->namelen;
		bin_count(m, mm->bin, 1);
		tail.pgoff += end - ms;
		tail.addr = end;
		tail.len = me - end;
		mm->len = start - ms;
		memmove(&p->maps[i + 2], &p->maps[i + 1],
		    (p->nmaps - i - 1) * sizeof(p->maps[0]));
		p->maps[i + 1] = tail;
		p->nmaps++;
		m->nmaps++;
		return 0;
	}
	if (ms < start) {
		mm->len = start - ms;
		i++;
	}
	for (j = i; j < p->nmaps && p->maps[j].addr + p->maps[j].len <= end; j++)
		map_gone(m, p, &p->maps[j]);
	memmove(&p->maps[i], &p->maps[j], (p->nmaps - j) * sizeof(p->maps[0]));
	p->nmaps -= j - i;
	m->nmaps -= j - i;
	if (i < p->nmaps && p->maps[i].addr < end) {
		mm = &p->maps[i];
		me = mm->addr + mm->len;
		mm->pgoff += end - mm->addr;
		mm->addr = end;
		mm->len = me - end;
	}
	return 0;
}

/* P's maps where KEEP says, the rest let go. */
static void
maps_keep(struct model *m, struct model_proc *p, int (*keep)(const struct model_map *))
{
	size_t	 i, o = 0;

	for (i = 0; i < p->nmaps; i++) {
		if (keep != NULL && keep(&p->maps[i]))
			p->maps[o++] = p->maps[i];
		else
			map_gone(m, p, &p->maps[i]);
	}
	m->nmaps -= p->nmaps - o;
	p->nmaps = o;
}

/* Not anonymous memory: a file's map (by name: a record with a build-id has no inode), [vdso]. */
static int
map_named(const struct model_map *mm)
{
	return !record_name_is_anon(mm->file->name);
}

/* P holds as many maps as a process can: some are stale (model.h, maps_max). */
static void
maps_shed(struct model *m, struct model_proc *p)
{
	struct model_map *nm;
	size_t	 n;

	m->maps_shed++;
	maps_keep(m, p, map_named);
	if (p->nmaps > m->maps_max / 2)
		maps_keep(m, p, NULL);
	/* the room given back: a shed process does not keep megabytes it does not use */
	for (n = 8; n < p->nmaps * 2; n *= 2)
		;
	if (n < p->cmaps && (nm = reallocarray(p->maps, n, sizeof(*nm))) != NULL) {
		p->maps = nm;
		p->cmaps = n;
	}
}

struct biggest {
	struct model_proc *p;
	size_t		 weight;
	int		 bytes;		/* weighed by names' bytes, not maps */
};

static int
biggest_cb(struct model_proc *p, void *arg)
{
	struct biggest *b = arg;
	size_t	 w = b->bytes ? p->name_bytes : p->nmaps;

	if (b->p == NULL || w > b->weight) {
		b->p = p;
		b->weight = w;
	}
	return 0;
}

/*
 * The model holds more maps than maps_global_max, or names of more bytes
 * than name_bytes_max: the process with the most (maps, or bytes: each
 * process keeps its count) is shed (its anonymous maps, or all of them),
 * again until it is under (7/8 of the bytes).  A walk of the processes
 * each time: it happens only past the budget.  Not during a walk.
 */
static void
maps_budget(struct model *m)
{
	struct biggest b;
	struct model_proc *big;
	size_t	 before;

	while (!m->walking && (m->nmaps > m->maps_global_max ||
	    m->name_bytes > m->name_bytes_max / 8 * 7)) {
		b.p = NULL;
		b.weight = 0;
		b.bytes = m->nmaps <= m->maps_global_max;
		model_foreach(m, biggest_cb, &b);
		if ((big = b.p) == NULL || big->nmaps == 0)
			break;
		before = big->nmaps;
		m->maps_shed_global++;
		maps_shed(m, big);
		if (big->nmaps == before)
			maps_keep(m, big, NULL);	/* nothing anonymous: all of them */
	}
}

int
model_add_map(struct model *m, const struct record_mmap *r, uint8_t source, uint32_t bin)
{
	struct model_map *mm;

	return model_add_map_at(m, r, source, bin, &mm);
}

int
model_add_map_at(struct model *m, const struct record_mmap *r, uint8_t source, uint32_t bin,
    struct model_map **out)
{
	struct model_proc *p;
	struct model_file k, *f;
	struct model_map *mm;
	size_t	 i;

	*out = NULL;
	if (r->len == 0 || r->addr + r->len < r->addr)
		return 0;
	if ((p = proc_get(m, r->pid)) == NULL)
		return -ENOMEM;
	memset(&k, 0, sizeof(k));
	k.maj = r->maj;
	k.min = r->min;
	k.ino = r->ino;
	k.ino_generation = r->ino_generation;
	k.build_id_size = r->build_id_size < BUILD_ID_MAX ? r->build_id_size : BUILD_ID_MAX;
	k.name_flags = r->name_flags;
	memcpy(k.build_id, r->build_id, k.build_id_size);
	if ((f = file_get(m, r->filename, &k)) == NULL)
		return -ENOMEM;
	if (p->nmaps >= m->maps_max)
		maps_shed(m, p);
	if (maps_punch(m, p, r->addr, r->addr + r->len) < 0 || maps_reserve(p, 1) < 0) {
		file_put(m, f);
		return -ENOMEM;
	}
	i = maps_after(p, r->addr);
	memmove(&p->maps[i + 1], &p->maps[i], (p->nmaps - i) * sizeof(p->maps[0]));
	mm = &p->maps[i];
	memset(mm, 0, sizeof(*mm));
	mm->addr = r->addr;
	mm->len = r->len;
	mm->pgoff = r->pgoff;
	mm->file = f;
	mm->prot = r->prot;
	mm->flags = r->flags;
	mm->source = source;
	mm->bin = bin;
	bin_count(m, bin, 1);
	p->nmaps++;
	m->nmaps++;
	m->name_bytes += f->namelen;
	p->name_bytes += f->namelen;
	if (m->nmaps > m->maps_global_max || m->name_bytes > m->name_bytes_max) {
		maps_budget(m);
		/* the new map may have gone with its process's: found again, or none */
		if ((i = maps_after(p, r->addr)) < p->nmaps && p->maps[i].addr == r->addr)
			mm = &p->maps[i];
		else
			mm = NULL;
	}
	*out = mm;
	return 0;
}

int
model_set_map_buildid(struct model *m, uint32_t pid, uint64_t addr, const uint8_t *id,
    uint8_t size, unsigned name_flags, uint8_t source)
{
	struct model_proc *p;
	struct model_map *mm;
	struct model_file k, *f;
	size_t	 i;

	if ((p = model_find(m, pid)) == NULL || size == 0 || size > BUILD_ID_MAX)
		return -ENOENT;
	if ((i = maps_after(p, addr)) == p->nmaps || p->maps[i].addr != addr)
		return -ENOENT;
	mm = &p->maps[i];
	/* Its own file entry: other maps of the name keep what they had. */
	k = *mm->file;
	memset(k.build_id, 0, sizeof(k.build_id));
	memcpy(k.build_id, id, size);
	k.build_id_size = size;
	k.name_flags = (uint8_t)name_flags;
	if ((f = file_get(m, mm->file->name, &k)) == NULL)
		return -ENOMEM;
	file_put(m, mm->file);
	mm->file = f;
	mm->source = source;
	return 0;
}

int
model_set_comm(struct model *m, uint32_t pid, uint32_t tid, const char *comm, int exec)
{
	struct model_proc *p;
	struct model_thread *t;
	size_t	 i;

	if ((p = proc_get(m, pid)) == NULL)
		return -ENOMEM;
	if (exec) {
		for (i = 0; i < p->nmaps; i++)
			map_gone(m, p, &p->maps[i]);
		m->nmaps -= p->nmaps;
		p->nmaps = 0;
		p->jit = 0;
		/* exec leaves one thread: the one that exec'd becomes pid */
		for (i = 0; i < p->cthreads; i++)
			p->threads[i].used = 0;
		p->nthreads = 0;
	}
	if ((t = thread_get(p, tid)) == NULL)
		return -ENOMEM;
	strncpy(t->comm, comm, sizeof(t->comm) - 1);
	t->comm[sizeof(t->comm) - 1] = '\0';
	return 0;
}

void
model_forget_maps(struct model *m, struct model_proc *p)
{
	maps_keep(m, p, NULL);
	p->jit = 0;
}

int
model_fork(struct model *m, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct model_proc *parent = model_find(m, ppid), *p;
	struct model_thread *pt = parent ? thread_find(parent, ptid) : NULL, *t;
	char	 comm[16] = "";
	size_t	 i;

	/* An unknown parent thread: the leader's name, else any thread's. */
	if (pt == NULL && parent != NULL && (pt = thread_find(parent, ppid)) == NULL)
		pt = model_thread_next(parent, NULL);
	if (pt != NULL)
		memcpy(comm, pt->comm, sizeof(comm));
	if (pid != ppid) {
		/* A new process: a previous one with this pid is long gone. */
		if ((p = model_find(m, pid)) != NULL)
			proc_remove(m, p);
		if ((p = proc_get(m, pid)) == NULL)
			return -ENOMEM;
		if (parent != NULL) {
			p->mnt_ns = parent->mnt_ns;
			p->user_ns = parent->user_ns;
			p->ns_epoch = parent->ns_epoch;	/* as stale as its parent's */
		}
		if (parent != NULL && parent->nmaps > 0) {
			if (maps_reserve(p, parent->nmaps) < 0)
				return -ENOMEM;
			memcpy(p->maps, parent->maps, parent->nmaps * sizeof(p->maps[0]));
			for (i = 0; i < parent->nmaps; i++) {
				p->maps[i].file->refs++;
				m->name_bytes += p->maps[i].file->namelen;
				p->name_bytes += p->maps[i].file->namelen;
				bin_count(m, p->maps[i].bin, 1);
			}
			p->nmaps = parent->nmaps;
			m->nmaps += parent->nmaps;
			if (m->nmaps > m->maps_global_max || m->name_bytes > m->name_bytes_max)
				maps_budget(m);
		}
	} else if ((p = proc_get(m, pid)) == NULL)
		return -ENOMEM;
	if ((t = thread_get(p, tid)) == NULL)
		return -ENOMEM;
	memcpy(t->comm, comm, sizeof(t->comm));
	return 0;
}

int
model_set_ns(struct model *m, uint32_t pid, uint64_t mnt_ns, uint64_t user_ns)
{
	struct model_proc *p;

	if ((p = proc_get(m, pid)) == NULL)
		return -ENOMEM;
	p->mnt_ns = mnt_ns;
	p->user_ns = user_ns;
	p->ns_epoch = m->ns_epoch;
	return 0;
}

void
model_exit(struct model *m, uint32_t pid, uint32_t tid)
{
	struct model_proc *p;
	struct model_thread *t;

	if ((p = model_find(m, pid)) == NULL)
		return;
	if ((t = thread_find(p, tid)) != NULL)
		thread_del(p, t);
	/*
	 * The leader may exit before its threads (pthread_exit in main): the
	 * process, and its maps, live until its last known thread is gone.
	 */
	if (tid == pid)
		p->leader_gone = 1;
	if (p->leader_gone && p->nthreads == 0)
		proc_remove(m, p);
}

void
model_map_record(const struct model_proc *p, const struct model_map *mm, struct record_mmap *r)
{
	const struct model_file *f = mm->file;

	memset(r, 0, sizeof(*r));
	r->pid = r->tid = p->pid;
	r->addr = mm->addr;
	r->len = mm->len;
	r->pgoff = mm->pgoff;
	r->has_inode = 1;
	r->maj = f->maj;
	r->min = f->min;
	r->ino = f->ino;
	r->ino_generation = f->ino_generation;
	r->prot = mm->prot;
	r->flags = mm->flags;
	r->build_id_size = f->build_id_size;
	memcpy(r->build_id, f->build_id, sizeof(r->build_id));
	r->filename = f->name;
	r->name_flags = f->name_flags;
}

int
model_foreach(struct model *m, model_proc_fn fn, void *arg)
{
	struct model_proc *p;
	size_t	 i;
	int	 rc = 0;

	m->walking++;
	for (i = 0; i < m->nslots && rc == 0; i++)
		if ((p = m->slots[i].p) != NULL && p != &tomb)
			rc = fn(p, arg);
	/* the tombs go with the walk (a failed rehash leaves them: still right) */
	if (--m->walking == 0 && m->ntombs > 0)
		procs_rehash(m, m->nslots);
	return rc;
}
