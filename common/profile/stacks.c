/*
 * stacks.c - the profile's tables: strings, functions, locations, stacks.
 * See stacks.h.  Every string is made valid UTF-8 without control
 * characters when it is interned (a symbol or a comm is whatever bytes a
 * binary or a process chose): pprof's strings, the folded lines and the
 * SVG's text all come from here.
 */
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "stacks.h"

void
sbuf_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t	 ncap = b->cap ? b->cap : 256;
		char	*np;

		while (ncap < b->len + n + 1)
			ncap *= 2;
		if ((np = realloc(b->p, ncap)) == NULL) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void
sbuf_str(struct sbuf *b, const char *s)
{
	sbuf_add(b, s, strlen(s));
}

void
sbuf_free(struct sbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* Length of the valid UTF-8 sequence at P (at most N bytes), 0 if invalid. */
static size_t
utf8_len(const unsigned char *p, size_t n)
{
	size_t	 len, i;
	uint32_t c;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, c = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	/* overlong, surrogates, past U+10FFFF; U+FFFE and U+FFFF, which XML forbids (the SVG) */
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff) || c >= 0xfffe)) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return len;
}

/*
 * S made printable UTF-8: bad bytes and control characters become '?';
 * past STACKS_NAME_MAX bytes, cut, and "..." (a character cut in two is
 * '?' bytes).
 */
static char *
clean_dup(const char *s)
{
	size_t	 n = strnlen(s, STACKS_NAME_MAX), i = 0, l;
	char	*d;
	int	 cut = s[n] != '\0';

	if (cut)
		n = STACKS_NAME_MAX - 3;
	if ((d = malloc(n + (cut ? 4 : 1))) == NULL)
		return NULL;
	while (i < n) {
		l = utf8_len((const unsigned char *)s + i, n - i);
		if (l == 0 || (l == 1 && ((unsigned char)s[i] < 0x20 || s[i] == 0x7f))) {
			d[i++] = '?';
			continue;
		}
		memcpy(d + i, s + i, l);
		i += l;
	}
	if (cut) {
		memcpy(d + n, "...", 3);
		n += 3;
	}
	d[n] = '\0';
	return d;
}

static int
grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t	 ncap;
	void	*np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 1024;
	while (ncap < need)
		ncap *= 2;
	if ((np = realloc(*p, ncap * size)) == NULL)
		return -1;
	*p = np;
	*cap = ncap;
	return 0;
}

/* An open-addressing table of ids (id + 0 never stored: 0 is empty). */
static int
table_rehash(uint32_t **t, size_t *cap, size_t n, uint64_t (*hashfn)(struct stacks *, uint32_t),
    struct stacks *s)
{
	size_t	 ncap = *cap ? *cap * 2 : 4096, i;
	uint32_t *nt;

	if ((n + 1) * 2 <= *cap)
		return 0;
	if ((nt = calloc(ncap, sizeof(*nt))) == NULL)
		return -1;
	for (i = 0; i < *cap; i++) {
		size_t j;

		if ((*t)[i] == 0)
			continue;
		for (j = hashfn(s, (*t)[i]) & (ncap - 1); nt[j] != 0; j = (j + 1) & (ncap - 1))
			;
		nt[j] = (*t)[i];
	}
	free(*t);
	*t = nt;
	*cap = ncap;
	return 0;
}

static uint64_t
str_hash_id(struct stacks *s, uint32_t id)
{
	return hash_str(s->str[id - 1], HASH_INIT);
}

uint32_t
stacks_intern(struct stacks *s, const char *str)
{
	uint64_t h;
	size_t	 j;
	char	*c;

	if (str == NULL || *str == '\0')
		return 0;
	if ((c = clean_dup(str)) == NULL)
		goto oom;
	if (table_rehash(&s->strhash, &s->strhcap, s->nstr, str_hash_id, s) < 0)
		goto oom;
	h = hash_str(c, HASH_INIT);
	for (j = h & (s->strhcap - 1); s->strhash[j] != 0; j = (j + 1) & (s->strhcap - 1))
		if (strcmp(s->str[s->strhash[j] - 1], c) == 0) {
			free(c);
			return s->strhash[j] - 1;
		}
	if (s->str_bytes + strlen(c) + STACKS_STR_COST > s->max_str_bytes &&
	    strcmp(c, "[truncated]") != 0) {
		free(c);
		s->names_truncated++;
		return stacks_intern(s, "[truncated]");		/* made once, past the cap */
	}
	if (grow((void **)&s->str, &s->capstr, s->nstr + 1, sizeof(*s->str)) < 0)
		goto oom;
	s->str_bytes += strlen(c) + STACKS_STR_COST;
	s->str[s->nstr] = c;
	s->nstr++;
	s->strhash[j] = (uint32_t)s->nstr;
	return (uint32_t)s->nstr - 1;
oom:
	free(c);
	s->oom = 1;
	return 0;
}

struct stacks *
stacks_new(struct symbolize *sym)
{
	struct stacks *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->sym = sym;
	s->max_locs = STACKS_MAX_LOCS;
	s->max_bytes = STACKS_MAX_BYTES;
	s->max_folded = STACKS_MAX_FOLDED;
	s->max_str_bytes = STACKS_MAX_STR_BYTES;
	s->stkcap = 4096;
	if ((s->stk = calloc(s->stkcap, sizeof(*s->stk))) == NULL ||
	    grow((void **)&s->str, &s->capstr, 1, sizeof(*s->str)) < 0 ||
	    (s->str[0] = strdup("")) == NULL) {
		stacks_free(s);
		return NULL;
	}
	s->nstr = 1;
	return s;
}

void
stacks_free(struct stacks *s)
{
	size_t	 i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nstr; i++)
		free(s->str[i]);
	for (i = 0; i < s->stkcap && s->stk != NULL; i++) {
		struct stack *k, *n;

		for (k = s->stk[i]; k != NULL; k = n) {
			n = k->hnext;
			free(k);
		}
	}
	free(s->stk);
	free(s->str);
	free(s->strhash);
	free(s->funcs);
	free(s->funchash);
	free(s->locs);
	free(s->lochash);
	free(s->lines);
	free(s);
}

static uint64_t
func_hash(uint32_t name, uint32_t file)
{
	return hash_step(hash_step(HASH_INIT, name), file);
}

static uint64_t
func_hash_id(struct stacks *s, uint32_t id)
{
	return func_hash(s->funcs[id - 1].name, s->funcs[id - 1].file);
}

static uint32_t
stacks_function(struct stacks *s, const char *name, const char *file, int64_t start_line)
{
	uint32_t n = stacks_intern(s, name), f = stacks_intern(s, file);
	size_t	 j;

	if (s->oom || table_rehash(&s->funchash, &s->funchcap, s->nfuncs, func_hash_id, s) < 0)
		goto oom;
	for (j = func_hash(n, f) & (s->funchcap - 1); s->funchash[j] != 0;
	    j = (j + 1) & (s->funchcap - 1)) {
		struct stack_func *fn = &s->funcs[s->funchash[j] - 1];

		if (fn->name == n && fn->file == f) {
			if (fn->start_line == 0)
				fn->start_line = start_line;
			return s->funchash[j];
		}
	}
	if (grow((void **)&s->funcs, &s->capfuncs, s->nfuncs + 1, sizeof(*s->funcs)) < 0)
		goto oom;
	s->funcs[s->nfuncs].name = n;
	s->funcs[s->nfuncs].file = f;
	s->funcs[s->nfuncs].start_line = start_line;
	s->nfuncs++;
	s->funchash[j] = (uint32_t)s->nfuncs;
	return (uint32_t)s->nfuncs;
oom:
	s->oom = 1;
	return 0;
}

static uint64_t
loc_hash(const struct binary *b, uint64_t addr, int leaf)
{
	return hash_step(hash_step(hash_step(HASH_INIT, (uint64_t)(uintptr_t)b), addr),
	    (uint64_t)leaf);
}

static uint64_t
loc_hash_id(struct stacks *s, uint32_t id)
{
	const struct stack_loc *l = &s->locs[id - 1];

	return loc_hash(l->bin, l->addr, l->leaf);
}

/* The one location past max_locs: "[truncated]", made once (beyond the cap by one). */
static uint32_t
truncated_loc(struct stacks *s)
{
	struct stack_loc *l;
	uint32_t f;

	if (s->trunc_loc != 0)
		return s->trunc_loc;
	if ((f = stacks_function(s, "[truncated]", NULL, 0)) == 0 ||
	    grow((void **)&s->locs, &s->caplocs, s->nlocs + 1, sizeof(*s->locs)) < 0 ||
	    grow((void **)&s->lines, &s->caplines, s->nlines + 1, sizeof(*s->lines)) < 0) {
		s->oom = 1;
		return 0;
	}
	l = &s->locs[s->nlocs];
	memset(l, 0, sizeof(*l));
	l->line0 = (uint32_t)s->nlines;
	l->nlines = 1;
	s->lines[s->nlines].func = f;
	s->lines[s->nlines].line = 0;
	s->nlines++;
	s->trunc_loc = (uint32_t)++s->nlocs;
	return s->trunc_loc;
}

uint32_t
stacks_location(struct stacks *s, struct binary *b, uint64_t addr, int leaf)
{
	struct sym_frame fr[SYMBOLIZE_MAX_INLINE];
	struct stack_loc *l;
	size_t	 j;
	int	 n, i;

	if (s->oom || table_rehash(&s->lochash, &s->lochcap, s->nlocs, loc_hash_id, s) < 0)
		goto oom;
	for (j = loc_hash(b, addr, leaf) & (s->lochcap - 1); s->lochash[j] != 0;
	    j = (j + 1) & (s->lochcap - 1)) {
		l = &s->locs[s->lochash[j] - 1];
		if (l->bin == b && l->addr == addr && l->leaf == leaf)
			return s->lochash[j];
	}
	if (s->nlocs >= s->max_locs)
		return truncated_loc(s);
	n = b != NULL ? symbolize_addr(s->sym, b, addr, leaf, fr) : 0;
	if (grow((void **)&s->locs, &s->caplocs, s->nlocs + 1, sizeof(*s->locs)) < 0 ||
	    grow((void **)&s->lines, &s->caplines, s->nlines + (size_t)n, sizeof(*s->lines)) < 0)
		goto oom;
	l = &s->locs[s->nlocs];
	l->bin = b;
	l->addr = addr;
	l->leaf = leaf;
	l->line0 = (uint32_t)s->nlines;
	l->nlines = 0;
	for (i = 0; i < n; i++) {
		const char *name = fr[i].func;
		uint32_t f;

		if (name == NULL)
			continue;
		if ((f = stacks_function(s, name, fr[i].file, fr[i].start_line)) == 0)
			goto oom;
		s->lines[s->nlines].func = f;
		s->lines[s->nlines].line = fr[i].line;
		s->nlines++;
		l->nlines++;
	}
	if (b != NULL) {
		if (addr < b->lo)
			b->lo = addr;
		if (addr >= b->hi)
			b->hi = addr + 1;
	}
	s->nlocs++;
	s->lochash[j] = (uint32_t)s->nlocs;
	return (uint32_t)s->nlocs;
oom:
	s->oom = 1;
	return 0;
}

static uint64_t
stack_hash(uint32_t pid, uint32_t comm, const uint32_t *locs, size_t n)
{
	return hash_bytes(locs, n * sizeof(*locs), hash_step(hash_step(HASH_INIT, pid), comm));
}

static int
stacks_rehash(struct stacks *s)
{
	size_t	 ncap = s->stkcap * 2, i;
	struct stack **nt;

	if ((nt = calloc(ncap, sizeof(*nt))) == NULL)
		return -1;
	for (i = 0; i < s->stkcap; i++) {
		struct stack *k, *n;

		for (k = s->stk[i]; k != NULL; k = n) {
			n = k->hnext;
			k->hnext = nt[k->hash & (ncap - 1)];
			nt[k->hash & (ncap - 1)] = k;
		}
	}
	free(s->stk);
	s->stk = nt;
	s->stkcap = ncap;
	return 0;
}

int
stacks_add(struct stacks *s, uint32_t pid, uint32_t comm, const uint32_t *locs, size_t n,
    uint64_t ns)
{
	uint64_t h = stack_hash(pid, comm, locs, n);
	struct stack *k;
	uint32_t trunc;

	for (k = s->stk[h & (s->stkcap - 1)]; k != NULL; k = k->hnext)
		if (k->hash == h && k->pid == pid && k->comm == comm && k->n == n &&
		    memcmp(k->locs, locs, n * sizeof(*locs)) == 0)
			goto found;
	if (s->stack_bytes + sizeof(*k) + n * sizeof(*locs) > s->max_bytes) {
		/* the one "[truncated]" stack: made once, past the cap by one */
		s->truncated_samples++;
		if ((k = s->trunc_stack) != NULL)
			goto found;
		if ((trunc = truncated_loc(s)) == 0)
			goto oom;
		pid = 0;
		if ((comm = stacks_intern(s, "[truncated]")) == 0)
			goto oom;
		locs = &trunc;
		n = 1;
		h = stack_hash(pid, comm, locs, n);
	}
	if (s->nstk + 1 > s->stkcap && stacks_rehash(s) < 0)
		goto oom;
	if ((k = malloc(sizeof(*k) + n * sizeof(*locs))) == NULL)
		goto oom;
	s->stack_bytes += sizeof(*k) + n * sizeof(*locs);
	if (locs == &trunc)
		s->trunc_stack = k;
	k->hash = h;
	k->pid = pid;
	k->comm = comm;
	k->n = (uint32_t)n;
	k->count = 0;
	k->ns = 0;
	memcpy(k->locs, locs, n * sizeof(*locs));
	k->hnext = s->stk[h & (s->stkcap - 1)];
	s->stk[h & (s->stkcap - 1)] = k;
	s->nstk++;
found:
	k->count++;
	k->ns += ns;
	s->samples++;
	s->ns += ns;
	return 0;
oom:
	s->oom = 1;
	return -1;
}

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL && slash[1] != '\0' ? slash + 1 : path;
}

void
stacks_name_text(struct sbuf *b, const char *name)
{
	const unsigned char *p = (const unsigned char *)name;
	size_t	 n = strlen(name), i = 0, l, run = 0;

	/* runs of good bytes copied whole; ';' and bad bytes written one by one */
	while (i < n) {
		l = utf8_len(p + i, n - i);
		if (l == 0 || (l == 1 && (p[i] < 0x20 || p[i] == 0x7f || p[i] == ';'))) {
			sbuf_add(b, name + run, i - run);
			sbuf_add(b, l == 1 && p[i] == ';' ? ":" : "?", 1);
			run = ++i;
			continue;
		}
		i += l;
	}
	sbuf_add(b, name + run, n - run);
}

void
stacks_loc_text(struct stacks *s, uint32_t loc, struct sbuf *b)
{
	const struct stack_loc *l = &s->locs[loc - 1];
	const char *suffix = "";
	uint32_t i;

	/* the kernel's, its build-id known or not (a closed segment's table without it) */
	if (l->bin != NULL && (l->bin->kind == BIN_KERNEL || l->bin->kind == BIN_MODULE ||
	    strcmp(l->bin->name, "[kernel.kallsyms]") == 0))
		suffix = "_[k]";
	else if (l->bin != NULL && l->bin->kind == BIN_JIT)
		suffix = "_[j]";
	if (l->nlines == 0) {
		const char *name = l->bin != NULL ? base_name(l->bin->name) : "unknown";

		if (name[0] != '[')
			sbuf_str(b, "[");
		stacks_name_text(b, name);
		if (name[0] != '[')
			sbuf_str(b, "]");
		sbuf_str(b, suffix);
		return;
	}
	for (i = l->nlines; i > 0; i--) {
		stacks_name_text(b, s->str[s->funcs[s->lines[l->line0 + i - 1].func - 1].name]);
		sbuf_str(b, suffix);
		if (i > 1)
			sbuf_add(b, ";", 1);
	}
}
