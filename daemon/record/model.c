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
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define MODEL_BUCKETS	4096

/*
 * A map's file name is shared by every copy of the map (a fork copies all
 * of the parent's, a split makes two) and freed with the last: under an
 * exec storm, each fork would otherwise duplicate every name of the
 * parent only for the exec to drop them a moment later.
 */
struct name {
	uint32_t	 refs;
	char		 s[];
};

static struct name *
name_of(char *s)
{
	return (struct name *)(s - offsetof(struct name, s));
}

static char *
name_new(const char *s)
{
	size_t	 len = strlen(s) + 1;
	struct name *n = malloc(sizeof(*n) + len);

	if (n == NULL)
		return NULL;
	n->refs = 1;
	memcpy(n->s, s, len);
	return n->s;
}

static char *
name_ref(char *s)
{
	name_of(s)->refs++;
	return s;
}

static void
name_unref(char *s)
{
	if (s != NULL && --name_of(s)->refs == 0)
		free(name_of(s));
}

int
model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->nbuckets = MODEL_BUCKETS;
	m->buckets = calloc(m->nbuckets, sizeof(*m->buckets));
	return m->buckets == NULL ? -ENOMEM : 0;
}

static void
proc_free(struct model_proc *p)
{
	size_t	 i;

	for (i = 0; i < p->nmaps; i++)
		name_unref(p->maps[i].filename);
	free(p->maps);
	free(p->threads);
	free(p);
}

void
model_free(struct model *m)
{
	size_t	 i;

	for (i = 0; i < m->nbuckets && m->buckets != NULL; i++) {
		struct model_proc *p = m->buckets[i], *next;

		for (; p != NULL; p = next) {
			next = p->next;
			proc_free(p);
		}
	}
	free(m->buckets);
	memset(m, 0, sizeof(*m));
}

static size_t
bucket_of(const struct model *m, uint32_t pid)
{
	return (pid * 2654435761u) & (m->nbuckets - 1);
}

struct model_proc *
model_find(struct model *m, uint32_t pid)
{
	struct model_proc *p;

	for (p = m->buckets[bucket_of(m, pid)]; p != NULL; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

static struct model_proc *
proc_get(struct model *m, uint32_t pid)
{
	struct model_proc *p;
	size_t	 b;

	if ((p = model_find(m, pid)) != NULL)
		return p;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->pid = pid;
	b = bucket_of(m, pid);
	p->next = m->buckets[b];
	m->buckets[b] = p;
	m->nprocs++;
	return p;
}

static void	proc_remove(struct model *, struct model_proc *);

static struct model_thread *
thread_find(struct model_proc *p, uint32_t tid)
{
	size_t	 i;

	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			return &p->threads[i];
	return NULL;
}

static struct model_thread *
thread_get(struct model_proc *p, uint32_t tid)
{
	struct model_thread *t;

	if ((t = thread_find(p, tid)) != NULL)
		return t;
	if (p->nthreads == p->cthreads) {
		size_t	 n = p->cthreads ? p->cthreads * 2 : 2;

		if ((t = reallocarray(p->threads, n, sizeof(*t))) == NULL)
			return NULL;
		p->threads = t;
		p->cthreads = n;
	}
	t = &p->threads[p->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
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

static void
maps_remove(struct model *m, struct model_proc *p, size_t i)
{
	name_unref(p->maps[i].filename);
	memmove(&p->maps[i], &p->maps[i + 1], (p->nmaps - i - 1) * sizeof(p->maps[0]));
	p->nmaps--;
	m->nmaps--;
}

/*
 * Make room for [start, end): drop maps inside it, trim maps that stick
 * out of it on one side, split a map that covers it on both sides.
 */
static int
maps_punch(struct model *m, struct model_proc *p, uint64_t start, uint64_t end)
{
	size_t	 i = 0;

	while (i < p->nmaps) {
		struct model_map *mm = &p->maps[i];
		uint64_t ms = mm->addr, me = mm->addr + mm->len;

		if (me <= start || ms >= end) {
			i++;
			continue;
		}
		if (ms < start && me > end) {
			struct model_map tail = *mm;

			if (maps_reserve(p, 1) < 0)
				return -ENOMEM;
			mm = &p->maps[i];
			tail.filename = name_ref(mm->filename);
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
		} else if (me > end) {
			mm->pgoff += end - ms;
			mm->addr = end;
			mm->len = me - end;
			i++;
		} else
			maps_remove(m, p, i);
	}
	return 0;
}

int
model_add_map(struct model *m, const struct record_mmap *r, uint8_t source, uint32_t bin)
{
	struct model_proc *p;
	struct model_map *mm;
	size_t	 i;

	if (r->len == 0 || r->addr + r->len < r->addr)
		return 0;
	if ((p = proc_get(m, r->pid)) == NULL)
		return -ENOMEM;
	if (maps_punch(m, p, r->addr, r->addr + r->len) < 0 || maps_reserve(p, 1) < 0)
		return -ENOMEM;
	for (i = 0; i < p->nmaps && p->maps[i].addr < r->addr; i++)
		;
	memmove(&p->maps[i + 1], &p->maps[i], (p->nmaps - i) * sizeof(p->maps[0]));
	mm = &p->maps[i];
	memset(mm, 0, sizeof(*mm));
	if ((mm->filename = name_new(r->filename)) == NULL) {
		memmove(&p->maps[i], &p->maps[i + 1], (p->nmaps - i) * sizeof(p->maps[0]));
		return -ENOMEM;
	}
	mm->addr = r->addr;
	mm->len = r->len;
	mm->pgoff = r->pgoff;
	mm->prot = r->prot;
	mm->flags = r->flags;
	mm->maj = r->maj;
	mm->min = r->min;
	mm->ino = r->ino;
	mm->ino_generation = r->ino_generation;
	mm->build_id_size = r->build_id_size;
	memcpy(mm->build_id, r->build_id, sizeof(mm->build_id));
	mm->source = source;
	mm->bin = bin;
	p->nmaps++;
	m->nmaps++;
	return 0;
}

int
model_set_map_buildid(struct model *m, uint32_t pid, uint64_t addr, const uint8_t *id,
    uint8_t size, uint8_t source)
{
	struct model_proc *p;
	size_t	 lo = 0, hi, mid;

	if ((p = model_find(m, pid)) == NULL || size == 0 || size > BUILD_ID_MAX)
		return -ENOENT;
	hi = p->nmaps;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->maps[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->nmaps || p->maps[lo].addr != addr)
		return -ENOENT;
	memcpy(p->maps[lo].build_id, id, size);
	p->maps[lo].build_id_size = size;
	p->maps[lo].source = source;
	return 0;
}

int
model_set_comm(struct model *m, uint32_t pid, uint32_t tid, const char *comm, int exec)
{
	struct model_proc *p;
	struct model_thread *t;

	if ((p = proc_get(m, pid)) == NULL)
		return -ENOMEM;
	if (exec) {
		while (p->nmaps > 0)
			maps_remove(m, p, p->nmaps - 1);
		p->jit = 0;
		/* exec leaves one thread: the one that exec'd becomes pid */
		p->nthreads = 0;
	}
	if ((t = thread_get(p, tid)) == NULL)
		return -ENOMEM;
	strncpy(t->comm, comm, sizeof(t->comm) - 1);
	t->comm[sizeof(t->comm) - 1] = '\0';
	return 0;
}

int
model_fork(struct model *m, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct model_proc *parent = model_find(m, ppid), *p;
	struct model_thread *pt = parent ? thread_find(parent, ptid) : NULL, *t;
	char	 comm[16] = "";
	size_t	 i;

	if (pt != NULL)
		memcpy(comm, pt->comm, sizeof(comm));
	else if (parent != NULL && parent->nthreads > 0)
		memcpy(comm, parent->threads[0].comm, sizeof(comm));
	if (pid != ppid) {
		/* A new process: a previous one with this pid is long gone. */
		if ((p = model_find(m, pid)) != NULL)
			proc_remove(m, p);
		if ((p = proc_get(m, pid)) == NULL)
			return -ENOMEM;
		if (parent != NULL) {
			p->mnt_ns = parent->mnt_ns;
			p->user_ns = parent->user_ns;
		}
		if (parent != NULL && parent->nmaps > 0) {
			if (maps_reserve(p, parent->nmaps) < 0)
				return -ENOMEM;
			for (i = 0; i < parent->nmaps; i++) {
				p->maps[i] = parent->maps[i];
				name_ref(p->maps[i].filename);
			}
			p->nmaps = parent->nmaps;
			m->nmaps += parent->nmaps;
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
	return 0;
}

static void
proc_remove(struct model *m, struct model_proc *p)
{
	struct model_proc **pp;

	for (pp = &m->buckets[bucket_of(m, p->pid)]; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			m->nmaps -= p->nmaps;
			m->nprocs--;
			proc_free(p);
			return;
		}
}

void
model_exit(struct model *m, uint32_t pid, uint32_t tid)
{
	struct model_proc *p;
	size_t	 i;

	if ((p = model_find(m, pid)) == NULL)
		return;
	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid) {
			p->threads[i] = p->threads[--p->nthreads];
			break;
		}
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
	memset(r, 0, sizeof(*r));
	r->pid = r->tid = p->pid;
	r->addr = mm->addr;
	r->len = mm->len;
	r->pgoff = mm->pgoff;
	r->has_inode = 1;
	r->maj = mm->maj;
	r->min = mm->min;
	r->ino = mm->ino;
	r->ino_generation = mm->ino_generation;
	r->prot = mm->prot;
	r->flags = mm->flags;
	r->build_id_size = mm->build_id_size;
	memcpy(r->build_id, mm->build_id, sizeof(r->build_id));
	r->filename = mm->filename;
}

int
model_foreach(struct model *m, model_proc_fn fn, void *arg)
{
	size_t	 i;
	int	 rc;

	for (i = 0; i < m->nbuckets; i++) {
		struct model_proc *p, *next;

		for (p = m->buckets[i]; p != NULL; p = next) {
			next = p->next;
			if ((rc = fn(p, arg)) != 0)
				return rc;
		}
	}
	return 0;
}
