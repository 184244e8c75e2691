/*
 * bidres.c - userspace build-id reads with a (dev, inode) cache; see bidres.h.
 * The cache is bounded: when full it is cleared (a stale miss costs one
 * more ELF read, never a wrong answer, since the key includes the inode
 * generation).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>

#include "buildid_reader.h"
#include "buildid.h"

#define BIDRES_MAX	65536

int
buildid_reader_init(struct buildid_reader *b)
{
	memset(b, 0, sizeof(*b));
	b->cap = 1024;
	b->e = calloc(b->cap, sizeof(*b->e));
	return b->e == NULL ? -ENOMEM : 0;
}

void
buildid_reader_free(struct buildid_reader *b)
{
	free(b->e);
	memset(b, 0, sizeof(*b));
}

int
buildid_reader_is_file(const char *f)
{
	return f[0] == '/' && strncmp(f, "//anon", 6) != 0 &&
	    strncmp(f, "/memfd:", 7) != 0 && strncmp(f, "/dev/", 5) != 0;
}

static uint64_t
key_of(const struct record_mmap *m)
{
	uint64_t h = 14695981039346656037ULL;
	uint64_t v[3] = { ((uint64_t)m->maj << 32) | m->min, m->ino, m->ino_generation };
	size_t	 i;

	for (i = 0; i < 3; i++) {
		h ^= v[i];
		h *= 1099511628211ULL;
		h ^= h >> 29;
	}
	return h | 1;
}

static struct buildid_reader_entry *
slot(struct buildid_reader *b, const struct record_mmap *m, uint64_t key)
{
	size_t	 j;

	for (j = key & (b->cap - 1); b->e[j].key != 0; j = (j + 1) & (b->cap - 1))
		if (b->e[j].key == key && b->e[j].maj == m->maj && b->e[j].min == m->min &&
		    b->e[j].ino == m->ino && b->e[j].gen == m->ino_generation)
			return &b->e[j];
	return &b->e[j];
}

static int
grow(struct buildid_reader *b)
{
	struct buildid_reader_entry *old = b->e, *ne;
	size_t	 oldcap = b->cap, i, j;

	if (b->cap * 2 > BIDRES_MAX) {
		memset(b->e, 0, b->cap * sizeof(*b->e));
		b->n = 0;
		return 0;
	}
	if ((ne = calloc(oldcap * 2, sizeof(*ne))) == NULL)
		return -ENOMEM;
	b->e = ne;
	b->cap = oldcap * 2;
	for (i = 0; i < oldcap; i++) {
		if (old[i].key == 0)
			continue;
		for (j = old[i].key & (b->cap - 1); b->e[j].key != 0; j = (j + 1) & (b->cap - 1))
			;
		b->e[j] = old[i];
	}
	free(old);
	return 0;
}

static int
read_mapping(const struct record_mmap *m, uint8_t id[BUILD_ID_MAX])
{
	char	 path[PATH_MAX + 64];
	int	 rc;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", m->pid,
	    (unsigned long long)m->addr, (unsigned long long)(m->addr + m->len));
	if ((rc = buildid_read_path(path, id)) > 0 || rc == -ENOEXEC)
		return rc;
	if (rc == -ENOENT && access(path, F_OK) == 0)
		return rc;	/* the file is there: it has no build-id */
	snprintf(path, sizeof(path), "/proc/%u/root%s", m->pid, m->filename);
	if ((rc = buildid_read_path(path, id)) > 0 || rc == -ENOEXEC)
		return rc;
	return buildid_read_path(m->filename, id);
}

int
buildid_reader_resolve(struct buildid_reader *b, struct record_mmap *m)
{
	struct buildid_reader_entry *e = NULL;
	uint8_t	 id[BUILD_ID_MAX];
	uint64_t key = 0;
	int	 rc;

	if (!buildid_reader_is_file(m->filename))
		return -ENOENT;
	if (m->has_inode && m->ino != 0) {
		key = key_of(m);
		e = slot(b, m, key);
		if (e->key != 0) {
			b->hits++;
			if (e->size < 0)
				return e->size;
			memcpy(m->build_id, e->id, (size_t)e->size);
			m->build_id_size = (uint8_t)e->size;
			return e->size;
		}
	}
	b->reads++;
	rc = read_mapping(m, id);
	if (rc > 0) {
		memcpy(m->build_id, id, (size_t)rc);
		m->build_id_size = (uint8_t)rc;
	} else
		b->failures++;
	/* Cache answers about the file, not about a vanished process. */
	if (e != NULL && (rc > 0 || rc == -ENOEXEC)) {
		if ((b->n + 1) * 2 > b->cap) {
			if (grow(b) < 0)
				return rc;
			e = slot(b, m, key);
		}
		e->key = key;
		e->maj = m->maj;
		e->min = m->min;
		e->ino = m->ino;
		e->gen = m->ino_generation;
		e->size = (int8_t)rc;
		if (rc > 0)
			memcpy(e->id, id, (size_t)rc);
		b->n++;
	}
	return rc;
}
