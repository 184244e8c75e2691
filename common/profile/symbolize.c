/*
 * symbolize.c - binaries, their copies in the build-id cache, and names for
 * addresses.  See symbolize.h.
 *
 * A copy is found through the cache's link DIR/.build-id/xx/rest, the way
 * perf finds it, and used only if libdwfl reads the same build-id from it.
 * Each ELF copy gets a Dwfl of its own with the module at bias 0, so module
 * addresses are the file's own virtual addresses.  A "debug" file beside
 * the copy (perf's layout for separate debug info) is used for DWARF when
 * its build-id matches too; nothing is looked up anywhere else.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "bidcache.h"
#include "buildid.h"
#include "hash.h"
#include "record.h"
#include "symbolize.h"
#include "walltime.h"

/*
 * A copy's function symbols, sorted by address, for binary search:
 * libdwfl's dwfl_module_addrinfo walks the whole symbol table per lookup.
 */
struct elfsym {
	uint64_t	 addr, size;
	const char	*name;		/* in the ELF data, valid while the Dwfl is */
	int		 rank;		/* GLOBAL 2, WEAK 1, LOCAL 0 */
};

/*
 * DWARF's scopes are found by libdw recursively, a call per level of DIE
 * nesting: a user's binary whose DWARF nests lexical blocks 200,000 deep
 * (a few MB) overflowed the profile thread's stack and killed the daemon.
 * A compile unit is walked once, iteratively, before its scopes are
 * asked for: deeper than this, its inline frames are not read (the
 * function's name comes from the symbol table).  Real code nests a few
 * dozen levels.
 */
#define DWARF_DEPTH_MAX	512
#define CU_CHECKED	16

struct binary_elf {
	Dwfl		*dwfl;
	Dwfl_Module	*mod;
	struct elfsym	*syms;
	size_t		 nsyms;
	uint64_t	 cu_off[CU_CHECKED];	/* compile units walked (offset + 1) */
	uint8_t		 cu_deep[CU_CHECKED];	/* ... and found too deep */
	unsigned	 cu_next;
	struct binary	*owner;
	struct binary_elf *prev, *next;	/* LRU, most recent first */
};

/* Sorted (address, name) pairs: kallsyms and perf-PID.map files. */
struct ksyms {
	uint64_t	*addr;
	uint64_t	*size;		/* JIT: the entry's size; kallsyms: NULL */
	uint32_t	*name;		/* offsets into names */
	uint32_t	*mod;		/* kallsyms: its module's name in names, or NOMOD */
	char		*names;
	size_t		 n;
	uint64_t	 text, etext;	/* kallsyms: _text and _etext, 0 if not listed */
	struct modbase	*mods;		/* kallsyms: each module's lowest symbol */
	size_t		 nmods;
};

struct modbase {
	uint32_t	 name;		/* in the ksyms' names */
	uint64_t	 lo;
};

#define NOMOD	UINT32_MAX

struct jitmap {
	struct ksyms	 syms;
	dev_t		 dev;		/* the kept file it was read from */
	ino_t		 ino;
	off_t		 size;
	int64_t		 mtime_ns;
	int		 refs;		/* binaries sharing it */
};

struct symbolize {
	char		 cache[4096];
	struct binary	**hash;
	size_t		 hcap, nbin;
	struct binary	*first, *last;
	struct binary_elf *lru_head, *lru_tail;
	size_t		 nopen;
	size_t		 jit_bytes;	/* of JIT maps parsed, at most jit_budget */
	size_t		 jit_budget;
	struct symbolize_stats st;
};


struct symbolize *
symbolize_new(const char *cache_dir)
{
	struct symbolize *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	snprintf(s->cache, sizeof(s->cache), "%s", cache_dir);
	s->jit_budget = SYMBOLIZE_JIT_BUDGET;
	s->hcap = 1024;
	if ((s->hash = calloc(s->hcap, sizeof(*s->hash))) == NULL) {
		free(s);
		return NULL;
	}
	elf_version(EV_CURRENT);
	return s;
}

static void
ksyms_free(struct ksyms *k)
{
	free(k->addr);
	free(k->size);
	free(k->name);
	free(k->mod);
	free(k->mods);
	free(k->names);
	memset(k, 0, sizeof(*k));
}

static void
elf_close(struct symbolize *s, struct binary_elf *e)
{
	if (e->prev != NULL)
		e->prev->next = e->next;
	else
		s->lru_head = e->next;
	if (e->next != NULL)
		e->next->prev = e->prev;
	else
		s->lru_tail = e->prev;
	dwfl_end(e->dwfl);
	e->owner->elf = NULL;
	s->nopen--;
	free(e->syms);
	free(e);
}

void
symbolize_free(struct symbolize *s)
{
	struct binary *b, *n;

	if (s == NULL)
		return;
	while (s->lru_head != NULL)
		elf_close(s, s->lru_head);
	for (b = s->first; b != NULL; b = n) {
		n = b->next;
		if (b->ksyms != NULL && b->kind == BIN_KERNEL) {
			ksyms_free(b->ksyms);
			free(b->ksyms);
		}
		if (b->jit != NULL && --b->jit->refs == 0) {
			ksyms_free(&b->jit->syms);
			free(b->jit);
		}
		free(b->name);
		free(b->source);
		free(b);
	}
	free(s->hash);
	free(s);
}

static uint64_t
binary_hash(enum binary_kind kind, const char *name, const uint8_t *id, size_t idlen,
    const char *source)
{
	uint64_t h = hash_bytes(&kind, sizeof(kind), HASH_INIT);

	h = hash_str(name, h);
	h = hash_bytes(id, idlen, h);
	return source != NULL ? hash_str(source, h) : h;
}

static int
binary_eq(const struct binary *b, enum binary_kind kind, const char *name, const uint8_t *id,
    size_t idlen, const char *source)
{
	return b->kind == kind && b->idlen == idlen && memcmp(b->id, id, idlen) == 0 &&
	    strcmp(b->name, name) == 0 &&
	    ((b->source == NULL && source == NULL) ||
	    (b->source != NULL && source != NULL && strcmp(b->source, source) == 0));
}

static int
hash_grow(struct symbolize *s)
{
	struct binary **nh, *b;
	size_t	 ncap = s->hcap * 2;

	if ((nh = calloc(ncap, sizeof(*nh))) == NULL)
		return -1;
	for (b = s->first; b != NULL; b = b->next) {
		size_t i = binary_hash(b->kind, b->name, b->id, b->idlen, b->source) & (ncap - 1);

		b->hnext = nh[i];
		nh[i] = b;
	}
	free(s->hash);
	s->hash = nh;
	s->hcap = ncap;
	return 0;
}

struct binary *
symbolize_binary(struct symbolize *s, enum binary_kind kind, const char *name,
    const uint8_t *id, size_t idlen, const char *source)
{
	static const uint8_t noid[BUILD_ID_MAX];
	struct binary *b;
	size_t	 i, nlen;

	if (id == NULL)
		id = noid, idlen = 0;
	if (idlen > BUILD_ID_MAX)
		idlen = BUILD_ID_MAX;
	nlen = record_name_len(name);
	{
		char	 nm[nlen + 1];

		memcpy(nm, name, nlen);
		nm[nlen] = '\0';
		i = binary_hash(kind, nm, id, idlen, source) & (s->hcap - 1);
		for (b = s->hash[i]; b != NULL; b = b->hnext)
			if (binary_eq(b, kind, nm, id, idlen, source))
				return b;
		if (s->nbin + 1 > s->hcap && hash_grow(s) == 0)
			i = binary_hash(kind, nm, id, idlen, source) & (s->hcap - 1);
		if ((b = calloc(1, sizeof(*b))) == NULL || (b->name = strdup(nm)) == NULL ||
		    (source != NULL && (b->source = strdup(source)) == NULL)) {
			if (b != NULL)
				free(b->name);
			free(b);
			return NULL;
		}
	}
	b->kind = kind;
	memcpy(b->id, id, idlen);
	b->idlen = (uint8_t)idlen;
	b->lo = UINT64_MAX;
	b->hnext = s->hash[i];
	s->hash[i] = b;
	if (s->last != NULL)
		s->last->next = b;
	else
		s->first = b;
	s->last = b;
	s->nbin++;
	return b;
}

struct binary *
symbolize_first(struct symbolize *s)
{
	return s->first;
}

/* DIR/.build-id/xx/rest/FILE for B, where FILE is elf, vdso or kallsyms. */
static int
cache_path(struct symbolize *s, const struct binary *b, char *out, size_t len)
{
	char	 hex[BUILD_ID_HEX_MAX];

	if (b->idlen == 0 || s->cache[0] == '\0')
		return -1;
	buildid_to_hex(b->id, b->idlen, hex);
	if ((size_t)snprintf(out, len, "%s/.build-id/%.2s/%s/%s", s->cache, hex, hex + 2,
	    bidcache_basename(b->kind == BIN_KERNEL ? BIDCACHE_KERNEL : b->name)) >= len)
		return -1;
	return 0;
}

/* Separate debug info: "debug" beside the copy, with the same build-id. */
static int
find_debuginfo_cb(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
    const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
    char **debuginfo_file_name)
{
	const unsigned char *want;
	GElf_Addr vaddr;
	uint8_t	 id[BUILD_ID_MAX];
	char	 path[4096], *slash;
	int	 fd, n, wantlen;

	if (file_name == NULL || (slash = strrchr(file_name, '/')) == NULL ||
	    (size_t)snprintf(path, sizeof(path), "%.*s/debug", (int)(slash - file_name),
	    file_name) >= sizeof(path))
		return -1;
	if ((wantlen = dwfl_module_build_id(mod, &want, &vaddr)) <= 0)
		return -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	n = buildid_read_fd(fd, id);
	if (n != wantlen || memcmp(id, want, (size_t)n) != 0 ||
	    (*debuginfo_file_name = strdup(path)) == NULL) {
		close(fd);
		return -1;
	}
	return fd;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = NULL,
	.find_debuginfo = find_debuginfo_cb,
	.section_address = dwfl_offline_section_address,
};

/* Record the executable PT_LOADs of the copy (first load only). */
static void
elf_loads(struct binary *b, Dwfl_Module *mod)
{
	GElf_Addr bias;
	Elf	*elf = dwfl_module_getelf(mod, &bias);
	size_t	 i, n;

	if (elf == NULL || b->nload > 0 || elf_getphdrnum(elf, &n) != 0)
		return;
	for (i = 0; i < n && b->nload < 4; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || ph.p_filesz == 0)
			continue;
		b->lvaddr[b->nload] = ph.p_vaddr;
		b->loff[b->nload] = ph.p_offset;
		b->lsize[b->nload] = ph.p_filesz;
		b->nload++;
	}
}

static int
elfsym_cmp(const void *x, const void *y)
{
	const struct elfsym *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return b->rank - a->rank;	/* the best name first */
}

/* The function symbols of E's module (symtab, else dynsym, as libdwfl picks). */
static void
elfsym_load(struct binary_elf *e)
{
	int	 n = dwfl_module_getsymtab(e->mod), i;
	size_t	 k = 0, j;

	if (n <= 0 || (e->syms = calloc((size_t)n, sizeof(*e->syms))) == NULL)
		return;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(e->mod, i, &sym, &addr, &shndx,
		    NULL, NULL);

		if (name == NULL || *name == '\0' || shndx == SHN_UNDEF || addr == 0 ||
		    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
		    GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
			continue;
		e->syms[k].addr = addr;
		e->syms[k].size = sym.st_size;
		e->syms[k].name = name;
		e->syms[k].rank = GELF_ST_BIND(sym.st_info) == STB_GLOBAL ? 2 :
		    GELF_ST_BIND(sym.st_info) == STB_WEAK ? 1 : 0;
		k++;
	}
	qsort(e->syms, k, sizeof(*e->syms), elfsym_cmp);
	/* one name per address: the first, best ranked */
	for (i = 0, j = 0; (size_t)i < k; i++)
		if (j == 0 || e->syms[j - 1].addr != e->syms[i].addr)
			e->syms[j++] = e->syms[i];
	e->nsyms = j;
}

/* The function symbol holding A (a sized symbol covers [addr, addr+size)). */
static const char *
elfsym_find(const struct binary_elf *e, uint64_t a)
{
	size_t	 lo = 0, hi = e->nsyms;
	const struct elfsym *y;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	y = &e->syms[lo - 1];
	if (y->size > 0 && a - y->addr >= y->size)
		return NULL;
	return y->name;
}

/* Open B's copy (ELF kinds); 0, or -1 if there is none that proves to be B. */
static int
elf_open(struct symbolize *s, struct binary *b)
{
	struct binary_elf *e;
	const unsigned char *got;
	GElf_Addr vaddr;
	char	 path[4096];
	int	 n;

	if (b->elf != NULL) {
		e = b->elf;	/* to the front of the LRU */
		if (e != s->lru_head) {
			e->prev->next = e->next;
			if (e->next != NULL)
				e->next->prev = e->prev;
			else
				s->lru_tail = e->prev;
			e->prev = NULL;
			e->next = s->lru_head;
			s->lru_head->prev = e;
			s->lru_head = e;
		}
		return 0;
	}
	if (b->state < 0 || cache_path(s, b, path, sizeof(path)) < 0)
		goto missing;
	if (access(path, R_OK) != 0)
		goto missing;
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return -1;
	if ((e->dwfl = dwfl_begin(&dwfl_callbacks)) == NULL) {
		free(e);
		return -1;
	}
	dwfl_report_begin(e->dwfl);
	e->mod = dwfl_report_elf(e->dwfl, b->name, path, -1, 0, true);
	dwfl_report_end(e->dwfl, NULL, NULL);
	if (e->mod == NULL || (n = dwfl_module_build_id(e->mod, &got, &vaddr)) != b->idlen ||
	    memcmp(got, b->id, b->idlen) != 0) {
		dwfl_end(e->dwfl);
		free(e);
		goto missing;
	}
	while (s->nopen >= SYMBOLIZE_OPEN && s->lru_tail != NULL)
		elf_close(s, s->lru_tail);
	e->owner = b;
	e->next = s->lru_head;
	if (s->lru_head != NULL)
		s->lru_head->prev = e;
	s->lru_head = e;
	if (s->lru_tail == NULL)
		s->lru_tail = e;
	s->nopen++;
	b->elf = e;
	elfsym_load(e);
	if (b->state == 0)
		elf_loads(b, e->mod);
	b->state = 1;
	return 0;
missing:
	if (b->state == 0)
		s->st.uncached++;
	b->state = -1;
	return -1;
}

static int
ksyms_cmp(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;

	return a[0] < b[0] ? -1 : a[0] > b[0];
}

/*
 * Parse "ADDR [SIZE] [TYPE] NAME" lines (kallsyms: "ADDR T NAME [mod]";
 * perf-PID.map: "START SIZE NAME", hex, 0x optional) from BUF into K,
 * sorted by address.  JIT keeps sizes; kallsyms keeps only text symbols.
 */
static int
ksyms_parse(struct ksyms *k, char *buf, size_t len, int jit)
{
	uint64_t (*tmp)[4] = NULL;
	size_t	 cap = 0, n = 0, nlen = 0, i;
	char	*p = buf, *end = buf + len;
	int	 rc = -1;

	while (p < end) {
		char	*nl = memchr(p, '\n', (size_t)(end - p)), *q, *name, *mod = NULL;
		uint64_t a, sz = 0;

		if (nl == NULL)
			nl = end;
		*nl = '\0';
		a = strtoull(p, &q, 16);
		if (q == p || (*q != ' ' && *q != '\t'))
			goto next;
		if (jit) {
			p = q;
			sz = strtoull(p, &q, 16);
			if (q == p || (*q != ' ' && *q != '\t') || sz == 0)
				goto next;
			name = q + 1;
		} else {
			if (q[1] == '\0' || (q[2] != ' ' && q[2] != '\t') ||
			    strchr("tTwW", q[1]) == NULL)
				goto next;
			name = q + 3;
			q = name + strcspn(name, "\t ");
			if (*q != '\0') {	/* "\t[module]": its name kept, brackets dropped */
				*q++ = '\0';
				q += strspn(q, "\t ");
				if (*q == '[' && q[1] != '\0' && q[1] != ']' &&
				    (mod = strchr(q + 1, ']')) != NULL) {
					*mod = '\0';
					mod = q + 1;
				}
			}
			if (strcmp(name, "_text") == 0)
				k->text = a;
			else if (strcmp(name, "_etext") == 0)
				k->etext = a;
		}
		if (*name == '\0')
			goto next;
		if (n == cap) {
			size_t	 ncap = cap ? cap * 2 : 4096;
			void	*t = realloc(tmp, ncap * sizeof(*tmp));

			if (t == NULL)
				goto out;
			tmp = t;
			cap = ncap;
		}
		tmp[n][0] = a;
		tmp[n][1] = sz;
		tmp[n][2] = (uint64_t)(name - buf);
		tmp[n][3] = mod != NULL ? (uint64_t)(mod - buf) : UINT64_MAX;
		n++;
		nlen += strlen(name) + 1 + (mod != NULL ? strlen(mod) + 1 : 0);
	next:
		p = nl + 1;
	}
	if (n > 0)	/* tmp NULL: no line was one */
		qsort(tmp, n, sizeof(*tmp), ksyms_cmp);
	k->addr = malloc((n + 1) * sizeof(*k->addr));
	k->name = malloc((n + 1) * sizeof(*k->name));
	k->names = malloc(nlen + 1);
	k->size = jit ? malloc((n + 1) * sizeof(*k->size)) : NULL;
	k->mod = jit ? NULL : malloc((n + 1) * sizeof(*k->mod));
	if (k->addr == NULL || k->name == NULL || k->names == NULL || (jit && k->size == NULL) ||
	    (!jit && k->mod == NULL) || nlen >= UINT32_MAX)
		goto out;
	nlen = 0;
	for (i = 0; i < n; i++) {
		const char *nm = buf + tmp[i][2];
		size_t	 l = strlen(nm) + 1;

		k->addr[i] = tmp[i][0];
		if (jit)
			k->size[i] = tmp[i][1];
		k->name[i] = (uint32_t)nlen;
		memcpy(k->names + nlen, nm, l);
		nlen += l;
		if (jit)
			continue;
		k->mod[i] = NOMOD;
		if (tmp[i][3] != UINT64_MAX) {	/* a module's name is kept once per run of its symbols */
			nm = buf + tmp[i][3];
			l = strlen(nm) + 1;
			if (i > 0 && k->mod[i - 1] != NOMOD && strcmp(k->names + k->mod[i - 1], nm) == 0)
				k->mod[i] = k->mod[i - 1];
			else {
				k->mod[i] = (uint32_t)nlen;
				memcpy(k->names + nlen, nm, l);
				nlen += l;
			}
		}
	}
	k->n = n;
	rc = 0;
out:
	free(tmp);
	if (rc < 0)
		ksyms_free(k);
	return rc;
}

/* The entry covering A: the last at or below it (JIT: within its size); -1 if none. */
static ssize_t
ksyms_index(const struct ksyms *k, uint64_t a)
{
	size_t	 lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->addr[mid] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	lo--;
	if (k->size != NULL && a - k->addr[lo] >= k->size[lo])
		return -1;
	return (ssize_t)lo;
}

/* The name covering A: the last entry at or below it (JIT: within its size). */
static const char *
ksyms_find(const struct ksyms *k, uint64_t a)
{
	ssize_t	 i = ksyms_index(k, a);

	return i < 0 ? NULL : k->names + k->name[i];
}

/*
 * The kallsyms name covering A, an address where the copy's kernel was
 * placed: MOD NULL, a symbol of the kernel itself below _etext; else one
 * of module MOD.  The symbol just below an address of a module, of a BPF
 * program or past the kernel's text is another's, never its name.
 */
static const char *
ksyms_find_kernel(const struct ksyms *k, uint64_t a, const char *mod)
{
	ssize_t	 i = ksyms_index(k, a);

	if (i < 0)
		return NULL;
	if (mod == NULL ? k->mod[i] != NOMOD || (k->etext != 0 && a >= k->etext) :
	    k->mod[i] == NOMOD || strcmp(k->names + k->mod[i], mod) != 0)
		return NULL;
	return k->names + k->name[i];
}

/* A regular file opened for reading, never through a symlink, and its state; -1 if not. */
static int
open_regular(const char *path, struct stat *st)
{
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) == -1)
		return -1;
	if (fstat(fd, st) == -1 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The file FD, in state ST, whole if it is at most MAX bytes; NULL if not. */
static char *
read_open(int fd, const struct stat *st, size_t max, size_t *lenp)
{
	char	*buf;
	size_t	 len = 0;

	if ((uint64_t)st->st_size > max || (buf = malloc((size_t)st->st_size + 1)) == NULL)
		return NULL;
	while (len < (size_t)st->st_size) {
		ssize_t	 r = read(fd, buf + len, (size_t)st->st_size - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	*lenp = len;
	return buf;
}

/* Read at most MAX bytes of a regular file, never through a symlink. */
static char *
read_small(const char *path, size_t max, size_t *lenp)
{
	struct stat st;
	char	*buf;
	int	 fd;

	if ((fd = open_regular(path, &st)) < 0)
		return NULL;
	buf = read_open(fd, &st, max, lenp);
	close(fd);
	return buf;
}

/* Each module's lowest symbol in kallsyms K (sorted by address): K->mods. */
static int
ksyms_modbases(struct ksyms *k)
{
	size_t	 i, j, last = 0, cap = 0;

	for (i = 0; i < k->n; i++) {
		const char *m;

		if (k->mod[i] == NOMOD)
			continue;
		m = k->names + k->mod[i];
		/* the same module as the last symbol's (its symbols run together): the same entry */
		if (k->nmods > 0 && (k->mods[last].name == k->mod[i] ||
		    strcmp(k->names + k->mods[last].name, m) == 0))
			continue;
		for (j = 0; j < k->nmods && strcmp(k->names + k->mods[j].name, m) != 0; j++)
			;
		if (j == k->nmods) {
			if (k->nmods == cap) {
				struct modbase *n = realloc(k->mods, (cap ? cap * 2 : 64) *
				    sizeof(*n));

				if (n == NULL)
					return -1;
				k->mods = n;
				cap = cap ? cap * 2 : 64;
			}
			k->mods[k->nmods].name = k->mod[i];
			k->mods[k->nmods].lo = k->addr[i];	/* the lowest: sorted */
			k->nmods++;
		}
		last = j;
	}
	return 0;
}

static int
kernel_load(struct symbolize *s, struct binary *b)
{
	char	 path[4096], *buf;
	size_t	 len;
	struct ksyms *k;

	if (b->state != 0)
		return b->state > 0 ? 0 : -1;
	b->state = -1;
	if (cache_path(s, b, path, sizeof(path)) < 0 ||
	    (buf = read_small(path, SYMBOLIZE_KALLSYMS_MAX, &len)) == NULL) {
		s->st.uncached++;
		return -1;
	}
	if ((k = calloc(1, sizeof(*k))) == NULL || ksyms_parse(k, buf, len, 0) < 0 ||
	    k->n == 0 || k->addr[k->n - 1] == 0) {	/* all zero: kptr_restrict */
		if (k != NULL)
			ksyms_free(k);
		free(k);
		free(buf);
		s->st.uncached++;
		return -1;
	}
	free(buf);
	if (ksyms_modbases(k) < 0) {
		ksyms_free(k);
		free(k);
		return -1;
	}
	b->ksyms = k;
	b->state = 1;
	b->has_functions = 1;
	return 0;
}

/* A loaded JIT map of the kept file in state ST (an unchanged map is linked, not copied, into each segment's directory), or NULL. */
static struct jitmap *
jit_loaded(struct symbolize *s, const struct stat *st)
{
	struct binary *o;

	for (o = s->first; o != NULL; o = o->next)
		if (o->kind == BIN_JIT && o->jit != NULL && o->jit->dev == st->st_dev &&
		    o->jit->ino == st->st_ino && o->jit->size == st->st_size &&
		    o->jit->mtime_ns == ts_ns(&st->st_mtim))
			return o->jit;
	return NULL;
}

/*
 * A kept perf-PID.map, parsed once per file however many segments link
 * it, and at most SYMBOLIZE_JIT_BUDGET bytes of maps in all: a user's
 * processes each keeping a 64 MiB map in each segment made a profile hold
 * gigabytes.  Past it, JIT frames stay unnamed (counted as unsymbolized).
 */
static int
jit_load(struct symbolize *s, struct binary *b)
{
	struct jitmap *j;
	struct stat st;
	char	*buf = NULL;
	size_t	 len;
	int	 fd;

	if (b->state != 0)
		return b->state > 0 ? 0 : -1;
	b->state = -1;
	if (b->source == NULL || (fd = open_regular(b->source, &st)) < 0)
		return -1;
	if ((j = jit_loaded(s, &st)) != NULL) {
		close(fd);
		j->refs++;
		goto loaded;
	}
	if (s->jit_bytes <= s->jit_budget)
		buf = read_open(fd, &st, s->jit_budget - s->jit_bytes < SYMBOLIZE_JIT_MAX ?
		    s->jit_budget - s->jit_bytes : SYMBOLIZE_JIT_MAX, &len);
	close(fd);
	if (buf == NULL)
		return -1;
	if ((j = calloc(1, sizeof(*j))) == NULL || ksyms_parse(&j->syms, buf, len, 1) < 0) {
		free(j);
		free(buf);
		return -1;
	}
	free(buf);
	s->jit_bytes += len;
	j->dev = st.st_dev;
	j->ino = st.st_ino;
	j->size = st.st_size;
	j->mtime_ns = ts_ns(&st.st_mtim);
	j->refs = 1;
	s->st.jit_maps++;
loaded:
	b->jit = j;
	b->state = 1;
	b->has_functions = 1;
	return 0;
}

uint64_t
symbolize_rel(struct symbolize *s, struct binary *b, uint64_t ip, uint64_t start,
    uint64_t pgoff)
{
	uint64_t off;
	int	 i;

	if (b->kind != BIN_ELF && b->kind != BIN_NOID)
		return ip;
	off = ip - start + pgoff;
	if (b->kind == BIN_ELF && b->state == 0)
		elf_open(s, b);
	for (i = 0; i < b->nload; i++)
		if (off >= b->loff[i] && off - b->loff[i] < b->lsize[i])
			return off - b->loff[i] + b->lvaddr[i];
	return off;
}

static const char *
die_call_file(Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word idx;
	size_t	 nfiles;

	if (dwarf_attr(die, DW_AT_call_file, &attr) == NULL ||
	    dwarf_formudata(&attr, &idx) != 0 ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static int64_t
die_int(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (dwarf_attr(die, name, &attr) == NULL || dwarf_formudata(&attr, &v) != 0)
		return 0;
	return (int64_t)v;
}

/* Does CU nest DIEs deeper than DWARF_DEPTH_MAX?  Walked without recursion, once. */
static int
cu_too_deep(struct binary_elf *e, Dwarf_Die *cu)
{
	Dwarf_Die stack[DWARF_DEPTH_MAX + 1], child;
	uint64_t key = dwarf_dieoffset(cu) + 1;
	unsigned i;
	int	 depth = 0, deep = 0;

	for (i = 0; i < CU_CHECKED; i++)
		if (e->cu_off[i] == key)
			return e->cu_deep[i];
	stack[0] = *cu;
	for (;;) {
		if (dwarf_child(&stack[depth], &child) == 0) {
			if (depth == DWARF_DEPTH_MAX) {
				deep = 1;
				break;
			}
			stack[++depth] = child;
			continue;
		}
		/* no child: the next sibling here, or of a level up */
		while (depth > 0 && dwarf_siblingof(&stack[depth], &child) != 0)
			depth--;
		if (depth == 0)
			break;
		stack[depth] = child;
	}
	i = e->cu_next++ % CU_CHECKED;
	e->cu_off[i] = key;
	e->cu_deep[i] = (uint8_t)deep;
	return deep;
}

/*
 * The ELF lookup: the symbol, the line, and the inline chain.  For an
 * address inside inlined code, DWARF's scopes give, innermost first, each
 * DW_TAG_inlined_subroutine (its name, and where it was called from:
 * DW_AT_call_file/line, the line of the next frame out), then the
 * subprogram, which is named from the symbol table when it has the address.
 */
static int
elf_lookup(struct symbolize *s, struct binary *b, uint64_t a, struct sym_frame *out)
{
	Dwfl_Module *mod = b->elf->mod;
	Dwarf_Die *cu, *scopes = NULL;
	Dwarf_Addr bias = 0;
	Dwfl_Line *line;
	const char *symname, *file = NULL;
	int	 lineno = 0, nscopes, i, n = 0;
	int64_t	 cur_line;

	symname = elfsym_find(b->elf, a);
	if (symname != NULL)
		b->has_functions = 1;
	if ((line = dwfl_module_getsrc(mod, a)) != NULL)
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	if (file != NULL) {
		b->has_filenames = 1;
		if (lineno > 0)
			b->has_lines = 1;
	}
	cur_line = lineno;
	cu = dwfl_module_addrdie(mod, a, &bias);
	nscopes = cu != NULL && !cu_too_deep(b->elf, cu) ?
	    dwarf_getscopes(cu, a - bias, &scopes) : 0;
	for (i = 0; i < nscopes && n < SYMBOLIZE_MAX_INLINE - 1; i++) {
		int	 tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram) {
			int	 l;

			if (symname == NULL)
				symname = dwarf_diename(&scopes[i]);
			out[n].start_line = dwarf_decl_line(&scopes[i], &l) == 0 ? l : 0;
			break;
		}
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		out[n].func = dwarf_diename(&scopes[i]);
		out[n].file = file;
		out[n].line = cur_line;
		if (out[n].func == NULL)
			continue;
		b->has_inlines = 1;
		n++;
		file = die_call_file(cu, &scopes[i]);
		cur_line = die_int(&scopes[i], DW_AT_call_line);
	}
	free(scopes);
	if (symname == NULL && n == 0)
		return 0;
	out[n].func = symname;
	out[n].file = file;
	out[n].line = cur_line;
	return n + 1;
}

int
symbolize_addr(struct symbolize *s, struct binary *b, uint64_t addr, int leaf,
    struct sym_frame *out)
{
	uint64_t a = leaf || addr == 0 ? addr : addr - 1;
	const char *name;
	struct binary *k;
	char	 mod[64];

	memset(out, 0, SYMBOLIZE_MAX_INLINE * sizeof(*out));
	switch (b->kind) {
	case BIN_ELF:
		if (elf_open(s, b) < 0)
			return 0;
		return elf_lookup(s, b, a, out);
	case BIN_KERNEL:
	case BIN_MODULE:
		k = b->kind == BIN_KERNEL ? b : b->kernel;
		if (k == NULL || kernel_load(s, k) < 0)
			return 0;
		if (b->kind == BIN_MODULE)
			record_module_name(b->name, mod, sizeof(mod));
		if ((name = ksyms_find_kernel(k->ksyms, a, b->kind == BIN_MODULE ? mod : NULL)) ==
		    NULL)
			return 0;
		b->has_functions = 1;
		out->func = name;
		return 1;
	case BIN_JIT:
		if (jit_load(s, b) < 0 || (name = ksyms_find(&b->jit->syms, a)) == NULL)
			return 0;
		out->func = name;
		return 1;
	default:
		return 0;
	}
}

int
symbolize_module_placed(struct symbolize *s, struct binary *k, const char *path,
    uint64_t start)
{
	char	 mod[64];
	size_t	 i;

	if (k == NULL || k->kind != BIN_KERNEL || kernel_load(s, k) < 0)
		return 0;
	record_module_name(path, mod, sizeof(mod));
	for (i = 0; i < k->ksyms->nmods; i++)
		if (strcmp(k->ksyms->names + k->ksyms->mods[i].name, mod) == 0)
			return (k->ksyms->mods[i].lo & ~(uint64_t)4095) == start;
	return 0;
}

void
symbolize_jit_budget(struct symbolize *s, size_t bytes)
{
	s->jit_budget = bytes;
}

int
symbolize_kernel_delta(struct symbolize *s, struct binary *k, uint64_t text, int64_t *delta)
{
	if (k == NULL || k->kind != BIN_KERNEL || text == 0 || kernel_load(s, k) < 0 ||
	    k->ksyms->text == 0)
		return 0;
	*delta = (int64_t)(text - k->ksyms->text);
	return 1;
}

void
symbolize_stats(struct symbolize *s, struct symbolize_stats *st)
{
	struct binary *b;

	*st = s->st;
	st->unknown = 0;
	for (b = s->first; b != NULL; b = b->next)
		if (b->kind == BIN_NOID && b->samples > 0)
			st->unknown++;
}

/* The ELF file of symbolize_jit_elf, laid out in memory. */
static int
jit_elf_build(const struct ksyms *k, uint8_t **out, size_t *outlen)
{
	static const char shstr[] = "\0.note.gnu.build-id\0.text\0.symtab\0.strtab\0.shstrtab";
	Elf64_Ehdr eh;
	Elf64_Shdr sh[6];
	Elf64_Sym sym;
	uint64_t lo = UINT64_MAX, hi = 0, h = HASH_INIT, h2;
	size_t	 i, strsz = 1, symoff, stroff, shstroff, noteoff, shoff, len;
	uint8_t	*b;
	uint32_t note[4] = { 4, 20, 3, 0x00554e47 };	/* "GNU\0" */

	for (i = 0; i < k->n; i++) {
		if (k->addr[i] < lo)
			lo = k->addr[i];
		if (k->addr[i] + k->size[i] > hi)
			hi = k->addr[i] + k->size[i];
		strsz += strlen(k->names + k->name[i]) + 1;
		h = hash_step(hash_step(hash_str(k->names + k->name[i], h), k->addr[i]), k->size[i]);
	}
	if (k->n == 0 || strsz > UINT32_MAX)
		return -1;
	noteoff = sizeof(eh);
	symoff = noteoff + sizeof(note) + 20 + 4;	/* 4: padding to 8 */
	stroff = symoff + (k->n + 1) * sizeof(sym);
	shstroff = stroff + strsz;
	shoff = (shstroff + sizeof(shstr) + 7) & ~(size_t)7;
	len = shoff + sizeof(sh);
	if ((b = calloc(1, len)) == NULL)
		return -1;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_shoff = shoff;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 6;
	eh.e_shstrndx = 5;
	memcpy(b, &eh, sizeof(eh));
	memcpy(b + noteoff, note, sizeof(note));
	h2 = hash_step(h, k->n);		/* 20 bytes of build-id from the symbols */
	memcpy(b + noteoff + sizeof(note), &h, 8);
	memcpy(b + noteoff + sizeof(note) + 8, &h2, 8);
	h2 = hash_step(h2, lo);
	memcpy(b + noteoff + sizeof(note) + 16, &h2, 4);
	for (i = 0, strsz = 1; i < k->n; i++) {
		const char *nm = k->names + k->name[i];

		memset(&sym, 0, sizeof(sym));
		sym.st_name = (uint32_t)strsz;
		sym.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		sym.st_shndx = 2;
		sym.st_value = k->addr[i];
		sym.st_size = k->size[i];
		memcpy(b + symoff + (i + 1) * sizeof(sym), &sym, sizeof(sym));
		memcpy(b + stroff + strsz, nm, strlen(nm) + 1);
		strsz += strlen(nm) + 1;
	}
	memcpy(b + shstroff, shstr, sizeof(shstr));
	memset(sh, 0, sizeof(sh));
	sh[1].sh_name = 1;				/* .note.gnu.build-id */
	sh[1].sh_type = SHT_NOTE;
	sh[1].sh_flags = SHF_ALLOC;
	sh[1].sh_offset = noteoff;
	sh[1].sh_size = sizeof(note) + 20;
	sh[1].sh_addralign = 4;
	sh[2].sh_name = 20;				/* .text: no bytes, the JIT's addresses */
	sh[2].sh_type = SHT_NOBITS;
	sh[2].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
	sh[2].sh_addr = lo;
	sh[2].sh_offset = lo;		/* sh_addr - sh_offset = 0: perf leaves the symbols as they are */
	sh[2].sh_size = hi - lo;
	sh[2].sh_addralign = 16;
	sh[3].sh_name = 26;				/* .symtab */
	sh[3].sh_type = SHT_SYMTAB;
	sh[3].sh_offset = symoff;
	sh[3].sh_size = (k->n + 1) * sizeof(sym);
	sh[3].sh_link = 4;
	sh[3].sh_info = 1;
	sh[3].sh_entsize = sizeof(sym);
	sh[3].sh_addralign = 8;
	sh[4].sh_name = 34;				/* .strtab */
	sh[4].sh_type = SHT_STRTAB;
	sh[4].sh_offset = stroff;
	sh[4].sh_size = strsz;
	sh[4].sh_addralign = 1;
	sh[5].sh_name = 42;				/* .shstrtab */
	sh[5].sh_type = SHT_STRTAB;
	sh[5].sh_offset = shstroff;
	sh[5].sh_size = sizeof(shstr);
	sh[5].sh_addralign = 1;
	memcpy(b + shoff, sh, sizeof(sh));
	*out = b;
	*outlen = len;
	return 0;
}

int
symbolize_jit_elf(const char *map, int fd)
{
	struct ksyms k;
	uint8_t	*elf = NULL;
	char	*buf;
	size_t	 len, off = 0;
	int	 rc = -1;

	memset(&k, 0, sizeof(k));
	if ((buf = read_small(map, SYMBOLIZE_JIT_MAX, &len)) == NULL)
		return -1;
	if (ksyms_parse(&k, buf, len, 1) < 0 || jit_elf_build(&k, &elf, &len) < 0)
		goto out;
	while (off < len) {
		ssize_t	 n = write(fd, elf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out;
		off += (size_t)n;
	}
	rc = 0;
out:
	free(elf);
	ksyms_free(&k);
	free(buf);
	return rc;
}
