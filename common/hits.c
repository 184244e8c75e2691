/*
 * hits.c - which binaries a perf.data file's samples fall in; see hits.h.
 *
 * The maps of each process are kept as perf buildid-list keeps them while
 * it reads a file: a map per MMAP/MMAP2 record (the newest wins where they
 * overlap), copied at fork, dropped at exit; an exec drops nothing (the new
 * image's maps cover the old ones where they overlap, as in perf).  Bounded: past MAX_PROCS live
 * processes or MAX_MAPS maps in one, the walk gives up (-1) rather than
 * guess.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hits.h"
#include "perfdata.h"
#include "record.h"

#define MAX_PROCS	(1U << 20)
#define MAX_MAPS	(1U << 14)
#define KERNEL_PID	((uint32_t)-1)

struct hmap {
	uint64_t	 start, end;
	int		 entry;		/* index in the table of build-ids, -1: none */
};

struct hproc {
	uint32_t	 pid;
	int		 used;		/* 0: empty slot, 1: live, 2: gone (tombstone) */
	struct hmap	*maps;
	size_t		 n, cap;
};

/* A build-id the walk can name: from the table, or from an MMAP2 record. */
struct hentry {
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 size;
	uint8_t		 hit;
	char		*name;
};

struct hits {
	struct hentry	*tab;
	size_t		 ntab, tabcap;
	struct hproc	*procs;		/* open addressing by pid */
	size_t		 nprocs;	/* live */
	size_t		 nslots;	/* live and tombstones */
	size_t		 cap;
	struct hproc	 kernel;
	struct record_layouts layouts;	/* each record by its event's attr (record.h) */
	hits_fn		 cb;
	void		*arg;
	int		 nhits;
	int		 error;		/* ENOMEM, E2BIG: the walk gave up */
};

/* ---- the table of build-ids --------------------------------------------- */

static int
tab_add(struct hits *h, const uint8_t *id, size_t len, const char *name)
{
	struct hentry *nt;
	size_t	 i;

	for (i = 0; i < h->ntab; i++)
		if (h->tab[i].size == len && memcmp(h->tab[i].id, id, len) == 0 &&
		    strcmp(h->tab[i].name, name) == 0)
			return (int)i;
	if (h->ntab == h->tabcap) {
		size_t	 ncap = h->tabcap ? h->tabcap * 2 : 64;

		if ((nt = reallocarray(h->tab, ncap, sizeof(*nt))) == NULL)
			return -1;
		h->tab = nt;
		h->tabcap = ncap;
	}
	memset(&h->tab[h->ntab], 0, sizeof(h->tab[h->ntab]));
	memcpy(h->tab[h->ntab].id, id, len);
	h->tab[h->ntab].size = (uint8_t)len;
	if ((h->tab[h->ntab].name = strdup(name)) == NULL)
		return -1;
	return (int)h->ntab++;
}

static int
table_cb(const struct perfdata_buildid *b, void *arg)
{
	struct hits *h = arg;

	if (tab_add(h, b->id, b->size, b->filename) < 0) {
		h->error = ENOMEM;
		return 1;
	}
	return 0;
}

/* The table's entry for a map named NAME without a build-id in its record. */
static int
tab_find_name(struct hits *h, const char *name)
{
	size_t	 i, len = record_name_len(name);
	int	 found = -1;

	for (i = 0; i < h->ntab; i++)
		if (strncmp(h->tab[i].name, name, len) == 0 && h->tab[i].name[len] == '\0') {
			if (found >= 0)
				return -1;	/* two build-ids under one name: not provable */
			found = (int)i;
		}
	return found;
}

/* ---- processes and maps ------------------------------------------------- */

/* Rehash into NCAP slots, leaving the tombstones behind. */
static int
procs_rehash(struct hits *h, size_t ncap)
{
	struct hproc *old = h->procs, *nv;
	size_t	 ocap = h->cap, i, j;

	if ((nv = calloc(ncap, sizeof(*nv))) == NULL) {
		h->error = ENOMEM;
		return -1;
	}
	for (j = 0; j < ocap; j++)
		if (old[j].used == 1) {
			for (i = old[j].pid & (ncap - 1); nv[i].used; i = (i + 1) & (ncap - 1))
				;
			nv[i] = old[j];
		}
	free(old);
	h->procs = nv;
	h->cap = ncap;
	h->nslots = h->nprocs;
	return 0;
}

static struct hproc *
proc_find(struct hits *h, uint32_t pid, int create)
{
	size_t	 i, mask;

	if (pid == KERNEL_PID)
		return &h->kernel;
	if (h->cap == 0 && !create)
		return NULL;
	if (create && (h->nslots + 1) * 10 > h->cap * 7) {
		if (h->nprocs >= MAX_PROCS) {
			h->error = E2BIG;
			return NULL;
		}
		/* mostly tombstones: clean up in place; else grow */
		if (procs_rehash(h, h->cap == 0 ? 1024 :
		    h->nprocs * 2 < h->cap ? h->cap : h->cap * 2) < 0)
			return NULL;
	}
	mask = h->cap - 1;
	for (i = pid & mask; h->procs[i].used; i = (i + 1) & mask)
		if (h->procs[i].used == 1 && h->procs[i].pid == pid)
			return &h->procs[i];
	if (!create)
		return NULL;
	h->procs[i].used = 1;
	h->procs[i].pid = pid;
	h->nprocs++;
	h->nslots++;
	return &h->procs[i];
}

static void
proc_drop(struct hits *h, uint32_t pid)
{
	struct hproc *p;

	if (pid == KERNEL_PID || (p = proc_find(h, pid, 0)) == NULL)
		return;
	free(p->maps);
	p->maps = NULL;
	p->n = p->cap = 0;
	p->used = 2;
	h->nprocs--;
}

static void
proc_add_map(struct hits *h, struct hproc *p, uint64_t start, uint64_t len, int entry)
{
	struct hmap *nv;

	if (p->n == p->cap) {
		size_t	 ncap = p->cap ? p->cap * 2 : 16;

		if (p->n >= MAX_MAPS) {
			h->error = E2BIG;
			return;
		}
		if ((nv = reallocarray(p->maps, ncap, sizeof(*nv))) == NULL) {
			h->error = ENOMEM;
			return;
		}
		p->maps = nv;
		p->cap = ncap;
	}
	p->maps[p->n].start = start;
	p->maps[p->n].end = start + len < start ? UINT64_MAX : start + len;
	p->maps[p->n].entry = entry;
	p->n++;
}

/* The newest map of P holding ADDR. */
static const struct hmap *
proc_lookup(const struct hproc *p, uint64_t addr)
{
	size_t	 i;

	for (i = p->n; i-- > 0;)
		if (addr >= p->maps[i].start && addr < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

/* ---- records -------------------------------------------------------------- */

static void
on_mmap(struct hits *h, const struct record *rec)
{
	const struct record_mmap *m = &rec->mmap;
	struct hproc *p;
	int	 entry;

	if (m->len == 0)
		return;
	if (m->build_id_size > 0) {
		if ((entry = tab_add(h, m->build_id, m->build_id_size, m->filename)) < 0) {
			h->error = ENOMEM;
			return;
		}
	} else if (m->pid == KERNEL_PID && strncmp(m->filename, "[kernel.kallsyms]", 17) == 0)
		entry = tab_find_name(h, "[kernel.kallsyms]");
	else
		entry = tab_find_name(h, m->filename);
	if ((p = proc_find(h, m->pid, 1)) != NULL)
		proc_add_map(h, p, m->addr, m->len, entry);
}

static void
on_fork(struct hits *h, const struct record *rec)
{
	struct hproc *parent, *child;
	struct hmap *copy;
	size_t	 n;

	if (rec->task.pid == rec->task.ppid)
		return;			/* a thread: same maps */
	proc_drop(h, rec->task.pid);
	if ((parent = proc_find(h, rec->task.ppid, 0)) == NULL || parent->n == 0)
		return;
	n = parent->n;
	if ((copy = calloc(n, sizeof(*copy))) == NULL) {
		h->error = ENOMEM;
		return;
	}
	/* copied first: PARENT moves if the table grows for the child */
	memcpy(copy, parent->maps, n * sizeof(*copy));
	if ((child = proc_find(h, rec->task.pid, 1)) == NULL) {
		free(copy);
		return;
	}
	free(child->maps);
	child->maps = copy;
	child->n = child->cap = n;
}

static void
mark(struct hits *h, int entry)
{
	if (entry < 0 || (size_t)entry >= h->ntab || h->tab[entry].hit)
		return;
	h->tab[entry].hit = 1;
	h->nhits++;
	h->cb(h->tab[entry].id, h->tab[entry].size, h->tab[entry].name, h->arg);
}

static void
on_sample(struct hits *h, const struct record *rec, const struct record_layout *l)
{
	const struct hmap *m = NULL;
	struct hproc *p;
	uint16_t mode = rec->misc & PERF_RECORD_MISC_CPUMODE_MASK;

	if (!rec->has_sid || !(l->sample_type & PERF_SAMPLE_IP))
		return;
	if (mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL)
		m = proc_lookup(&h->kernel, rec->sample.ip);
	else if ((p = proc_find(h, rec->sid.pid, 0)) != NULL)
		m = proc_lookup(p, rec->sample.ip);
	if (m != NULL)
		mark(h, m->entry);
}

static int
record_cb(const struct perf_event_header *hdr, void *arg)
{
	struct hits *h = arg;
	const struct record_layout *l = record_layout_of(&h->layouts, hdr, hdr->size);
	struct record rec;

	if (record_decode(hdr, hdr->size, l, &rec) < 0)
		return 0;		/* perf skips what it cannot read too */
	switch (rec.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		on_mmap(h, &rec);
		break;
	case PERF_RECORD_FORK:
		on_fork(h, &rec);
		break;
	case PERF_RECORD_EXIT:
		if (rec.task.pid == rec.task.tid)
			proc_drop(h, rec.task.pid);
		break;
	case PERF_RECORD_SAMPLE:
		on_sample(h, &rec, l);
		break;
	}
	return h->error != 0;
}

int
hits_read(const char *path, hits_fn cb, void *arg, char *err, size_t errlen)
{
	struct perfdata_file f;
	struct hits h;
	size_t	 i;
	int	 rc = -1;

	memset(&h, 0, sizeof(h));
	h.cb = cb;
	h.arg = arg;
	if (perfdata_open(&f, path, err, errlen) < 0)
		return -1;
	if (perfdata_layouts(&f, &h.layouts) < 0) {
		snprintf(err, errlen, "%s: cannot read its sample ids", path);
		goto out;
	}
	if (perfdata_buildids(&f, table_cb, &h) < 0 || h.error != 0) {
		snprintf(err, errlen, "%s: cannot read its build-id table", path);
		goto out;
	}
	if (perfdata_walk_ordered(&f, &h.layouts, record_cb, &h) < 0) {
		snprintf(err, errlen, "%s: read error", path);
		goto out;
	}
	if (h.error != 0) {
		snprintf(err, errlen, "%s: %s", path, h.error == E2BIG ?
		    "more processes or maps than the walk takes" : strerror(h.error));
		goto out;
	}
	rc = h.nhits;
out:
	for (i = 0; i < h.ntab; i++)
		free(h.tab[i].name);
	free(h.tab);
	for (i = 0; i < h.cap; i++)
		free(h.procs[i].maps);
	free(h.procs);
	free(h.kernel.maps);
	record_layouts_free(&h.layouts);
	perfdata_file_close(&f);
	return rc;
}
