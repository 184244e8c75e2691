/*
 * procs.c - one segment's processes, threads and mappings.  See procs.h.
 */
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "procs.h"

#define PROCS_HASH	4096

int
procs_init(struct procs *p)
{
	memset(p, 0, sizeof(*p));
	p->pcap = p->tcap = PROCS_HASH;
	p->ph = calloc(p->pcap, sizeof(*p->ph));
	p->th = calloc(p->tcap, sizeof(*p->th));
	p->kernel.pid = PROCS_KERNEL;
	p->maps_max = PROCS_MAPS_MAX;
	p->maps_global = PROCS_MAPS_GLOBAL;
	if (p->ph == NULL || p->th == NULL) {
		procs_free(p);
		return -1;
	}
	return 0;
}

static size_t
slot(uint32_t key, size_t cap)
{
	return hash_step(HASH_INIT, key) & (cap - 1);
}

static void
proc_free(struct procs *p, struct proc *pr)
{
	p->maps_alloc -= pr->cap;
	free(pr->maps);
	if (pr != &p->kernel)
		free(pr);
}

/* PR over a bound: its maps dropped, and none kept until its next exec. */
static void
shed(struct procs *p, struct proc *pr)
{
	p->maps_alloc -= pr->cap;
	free(pr->maps);
	pr->maps = NULL;
	pr->cap = pr->nmaps = 0;
	pr->shed = 1;
	p->shed++;
}

/* The process holding the most maps (allocated), not the kernel's; NULL if none. */
static struct proc *
biggest(struct procs *p)
{
	struct proc *pr, *big = NULL;
	size_t	 i;

	for (i = 0; i < p->pcap; i++)
		for (pr = p->ph[i]; pr != NULL; pr = pr->hnext)
			if (big == NULL || pr->cap > big->cap)
				big = pr;
	return big;
}

/*
 * Room for N maps in PR: 0, 1 if PR is shed instead, -1 out of memory.
 * Past maps_global, the process holding the most is shed (not the one
 * that asks: a root process forking after a user's filled the budget),
 * until the room is there or PR is that process.
 */
static int
maps_room(struct procs *p, struct proc *pr, size_t n)
{
	size_t	 ncap = pr->cap ? pr->cap : 16;
	struct proc *big;
	struct pmap *m;

	if (n <= pr->cap)
		return 0;
	while (ncap < n)
		ncap *= 2;
	if (pr != &p->kernel && n > p->maps_max) {
		shed(p, pr);
		return 1;
	}
	while (pr != &p->kernel && p->maps_alloc - pr->cap + ncap > p->maps_global) {
		if ((big = biggest(p)) == NULL || big == pr || big->cap <= pr->cap) {
			shed(p, pr);
			return 1;
		}
		shed(p, big);
	}
	if ((m = realloc(pr->maps, ncap * sizeof(*m))) == NULL)
		return -1;
	p->maps_alloc += ncap - pr->cap;
	pr->maps = m;
	pr->cap = ncap;
	return 0;
}

void
procs_clear(struct procs *p)
{
	size_t	 i;

	for (i = 0; i < p->pcap; i++) {
		struct proc *pr, *n;

		for (pr = p->ph[i]; pr != NULL; pr = n) {
			n = pr->hnext;
			proc_free(p, pr);
		}
		p->ph[i] = NULL;
	}
	for (i = 0; i < p->tcap; i++) {
		struct thr *t, *n;

		for (t = p->th[i]; t != NULL; t = n) {
			n = t->hnext;
			free(t);
		}
		p->th[i] = NULL;
	}
	p->np = p->nt = 0;
	p->ngrave = p->grave_next = 0;
	proc_free(p, &p->kernel);
	memset(&p->kernel, 0, sizeof(p->kernel));
	p->kernel.pid = PROCS_KERNEL;
}

void
procs_free(struct procs *p)
{
	if (p->ph != NULL && p->th != NULL)
		procs_clear(p);
	free(p->ph);
	free(p->th);
	free(p->kernel.maps);
	memset(p, 0, sizeof(*p));
}

/* Double a chained table when it holds more entries than buckets. */
static void
rehash(void ***tab, size_t *cap, size_t n, size_t next_off, size_t key_off)
{
	size_t	 ncap = *cap * 2, i;
	void	**nt;

	if (n < *cap || (nt = calloc(ncap, sizeof(*nt))) == NULL)
		return;
	for (i = 0; i < *cap; i++) {
		void	*e, *nx;

		for (e = (*tab)[i]; e != NULL; e = nx) {
			uint32_t key;
			size_t	 j;

			memcpy(&nx, (char *)e + next_off, sizeof(nx));
			memcpy(&key, (char *)e + key_off, sizeof(key));
			j = slot(key, ncap);
			memcpy((char *)e + next_off, &nt[j], sizeof(nt[j]));
			nt[j] = e;
		}
	}
	free(*tab);
	*tab = nt;
	*cap = ncap;
}

struct proc *
procs_get(struct procs *p, uint32_t pid, int create)
{
	struct proc *pr;
	size_t	 i;

	if (pid == PROCS_KERNEL)
		return &p->kernel;
	for (pr = p->ph[slot(pid, p->pcap)]; pr != NULL; pr = pr->hnext)
		if (pr->pid == pid)
			return pr;
	if (!create || (pr = calloc(1, sizeof(*pr))) == NULL)
		return NULL;
	rehash((void ***)&p->ph, &p->pcap, p->np, offsetof(struct proc, hnext),
	    offsetof(struct proc, pid));
	i = slot(pid, p->pcap);
	pr->pid = pid;
	pr->hnext = p->ph[i];
	p->ph[i] = pr;
	p->np++;
	return pr;
}

static struct thr *
thr_get(struct procs *p, uint32_t tid, int create)
{
	struct thr *t;
	size_t	 i;

	for (t = p->th[slot(tid, p->tcap)]; t != NULL; t = t->hnext)
		if (t->tid == tid)
			return t;
	if (!create || (t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	rehash((void ***)&p->th, &p->tcap, p->nt, offsetof(struct thr, hnext),
	    offsetof(struct thr, tid));
	i = slot(tid, p->tcap);
	t->tid = tid;
	t->hnext = p->th[i];
	p->th[i] = t;
	p->nt++;
	return t;
}

const char *
procs_comm(struct procs *p, uint32_t pid, uint32_t tid)
{
	struct thr *t = thr_get(p, tid, 0);
	struct proc *pr;

	if (t != NULL && t->comm[0] != '\0')
		return t->comm;
	if ((pr = procs_get(p, pid, 0)) != NULL && pr->comm[0] != '\0')
		return pr->comm;
	return NULL;
}

static void
set16(char *dst, const char *src)
{
	size_t	 n = strnlen(src, 15);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

int
procs_set_comm(struct procs *p, uint32_t pid, uint32_t tid, const char *comm, int exec)
{
	struct proc *pr = procs_get(p, pid, 1);
	struct thr *t = thr_get(p, tid, 1);

	if (pr == NULL || t == NULL)
		return -1;
	t->pid = pid;
	t->dead = 0;
	set16(t->comm, comm);
	if (pid == tid)
		pr->dead = 0;
	if (pid == tid || pr->comm[0] == '\0')
		set16(pr->comm, comm);
	if (exec) {		/* a new program: the old address space is gone */
		pr->nmaps = 0;
		pr->shed = 0;
		pr->jit = NULL;
		pr->jit_checked = 0;
	}
	return 0;
}

int
procs_fork(struct procs *p, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct proc *parent = procs_get(p, ppid, 0), *child;
	struct thr *pt = thr_get(p, ptid, 0), *t;
	const char *comm = pt != NULL && pt->comm[0] ? pt->comm :
	    parent != NULL ? parent->comm : "";
	int	 rc;

	if ((t = thr_get(p, tid, 1)) == NULL)
		return -1;
	t->pid = pid;
	t->dead = 0;
	set16(t->comm, comm);
	if (pid == ppid)
		return 0;	/* a thread: same process */
	if ((child = procs_get(p, pid, 1)) == NULL)
		return -1;
	child->dead = 0;
	child->jit = NULL;
	child->jit_checked = 0;
	set16(child->comm, comm);
	child->nmaps = 0;
	child->shed = 0;
	if (parent != NULL && parent->shed)
		shed(p, child);		/* the parent's maps are not known: nor the child's */
	else if (parent != NULL && parent->nmaps > 0) {
		if ((rc = maps_room(p, child, parent->nmaps)) != 0)
			return rc < 0 ? -1 : 0;
		if (parent->shed) {		/* the biggest, shed to make the room */
			shed(p, child);
			return 0;
		}
		memcpy(child->maps, parent->maps, parent->nmaps * sizeof(*child->maps));
		child->nmaps = parent->nmaps;
	}
	return 0;
}

/* Forget the thread TID (and its process, if it leads it) now. */
static void
forget(struct procs *p, uint32_t pid, uint32_t tid)
{
	size_t	 i = slot(tid, p->tcap);
	struct thr **tp;
	struct proc **pp;

	for (tp = &p->th[i]; *tp != NULL; tp = &(*tp)->hnext)
		if ((*tp)->tid == tid && (*tp)->dead) {
			struct thr *t = *tp;

			*tp = t->hnext;
			free(t);
			p->nt--;
			break;
		}
	if (pid != tid || pid == PROCS_KERNEL)
		return;
	for (pp = &p->ph[slot(pid, p->pcap)]; *pp != NULL; pp = &(*pp)->hnext)
		if ((*pp)->pid == pid && (*pp)->dead) {
			struct proc *pr = *pp;

			*pp = pr->hnext;
			proc_free(p, pr);
			p->np--;
			break;
		}
}

/* First map whose end is above A. */
static size_t
lower(const struct proc *pr, uint64_t a)
{
	size_t	 lo = 0, hi = pr->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pr->maps[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
procs_map(struct procs *p, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
    struct binary *bin)
{
	struct proc *pr = procs_get(p, pid, 1);
	struct pmap	 left, right, nm;
	uint64_t end = start + len;
	size_t	 i, j, nnew;
	int	 has_left = 0, has_right = 0, rc;

	if (pr == NULL)
		return -1;
	if (len == 0 || end < start)
		return 0;
	/* maps [i, j) overlap [start, end) */
	i = lower(pr, start);
	for (j = i; j < pr->nmaps && pr->maps[j].start < end; j++)
		;
	if (i < j && pr->maps[i].start < start) {
		left = pr->maps[i];
		left.end = start;
		has_left = 1;
	}
	if (i < j && pr->maps[j - 1].end > end) {
		right = pr->maps[j - 1];
		right.pgoff += end - right.start;
		right.start = end;
		has_right = 1;
	}
	if (pr->shed)
		return 0;
	nnew = (size_t)has_left + 1 + (size_t)has_right;
	if ((rc = maps_room(p, pr, pr->nmaps - (j - i) + nnew)) != 0)
		return rc < 0 ? -1 : 0;
	memmove(&pr->maps[i + nnew], &pr->maps[j], (pr->nmaps - j) * sizeof(*pr->maps));
	pr->nmaps = pr->nmaps - (j - i) + nnew;
	nm.start = start;
	nm.end = end;
	nm.pgoff = pgoff;
	nm.bin = bin;
	if (has_left)
		pr->maps[i++] = left;
	pr->maps[i++] = nm;
	if (has_right)
		pr->maps[i] = right;
	return 0;
}

const struct pmap *
procs_find(struct procs *p, uint32_t pid, uint64_t ip)
{
	struct proc *pr = procs_get(p, pid, 0);
	size_t	 i;

	if (pr == NULL)
		return NULL;
	i = lower(pr, ip);
	if (i < pr->nmaps && pr->maps[i].start <= ip)
		return &pr->maps[i];
	return NULL;
}

void
procs_exit(struct procs *p, uint32_t pid, uint32_t tid)
{
	size_t	 i = p->grave_next;
	struct thr *t = thr_get(p, tid, 0);
	struct proc *pr;

	if (t != NULL)
		t->dead = 1;
	if (pid == tid && pid != PROCS_KERNEL && (pr = procs_get(p, pid, 0)) != NULL)
		pr->dead = 1;
	if (p->ngrave == PROCS_GRAVE)
		forget(p, p->grave[i].pid, p->grave[i].tid);
	else
		p->ngrave++;
	p->grave[i].pid = pid;
	p->grave[i].tid = tid;
	p->grave_next = (i + 1) % PROCS_GRAVE;
}
