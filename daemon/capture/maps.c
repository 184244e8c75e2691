/*
 * maps.c - capture of a mapping at first sight, on the worker thread:
 * from the mapped file itself (right even after the path was replaced or
 * unlinked, or in another mount namespace), or from its path only if that
 * is proven to be the same file; the copy is kept only if its build-id is
 * the mapping's (see run_map).  What fails is remembered with its reasons
 * (worker-owned table) so that store can say why, and retries.  Also the
 * build-id sets both threads use.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildid.h"
#include "capture_int.h"
#include "hash.h"
#include "log.h"
#include "record.h"
#include "record/buildid_reader.h"

static size_t
id_hash(const uint8_t *id, size_t len)
{
	return (size_t)hash_bytes(id, len, HASH_INIT);
}

/* Insert; 1 if new, 0 if present, -1 out of memory. */
int
idset_add(struct idset *s, const uint8_t *id, size_t len)
{
	uint32_t ix = 0;

	return idset_add_ix(s, id, len, &ix);
}

int
idset_add_ix(struct idset *s, const uint8_t *id, size_t len, uint32_t *ix)
{
	size_t	 i, j;

	if ((s->n + 1) * 2 > s->cap) {
		struct idset ns = { NULL, 0, s->cap ? s->cap * 2 : 1024 };

		if ((ns.v = calloc(ns.cap, sizeof(*ns.v))) == NULL)
			return -1;
		for (i = 0; i < s->cap; i++)
			if (s->v[i].used) {
				for (j = id_hash(s->v[i].id, s->v[i].len) & (ns.cap - 1);
				    ns.v[j].used; j = (j + 1) & (ns.cap - 1))
					;
				ns.v[j] = s->v[i];
				ns.n++;
			}
		free(s->v);
		*s = ns;
	}
	for (j = id_hash(id, len) & (s->cap - 1); s->v[j].used; j = (j + 1) & (s->cap - 1))
		if (s->v[j].len == len && memcmp(s->v[j].id, id, len) == 0) {
			*ix = s->v[j].ix;
			return 0;
		}
	memcpy(s->v[j].id, id, len);
	s->v[j].len = (uint8_t)len;
	s->v[j].used = 1;
	s->v[j].ix = *ix;
	s->n++;
	return 1;
}

void
idset_clear(struct idset *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

int
idset_has(const struct idset *s, const uint8_t *id, size_t len)
{
	size_t	 j;

	if (s->cap == 0)
		return 0;
	for (j = id_hash(id, len) & (s->cap - 1); s->v[j].used; j = (j + 1) & (s->cap - 1))
		if (s->v[j].len == len && memcmp(s->v[j].id, id, len) == 0)
			return 1;
	return 0;
}

struct failrec *
fail_find(struct capture *c, const uint8_t *id, size_t len)
{
	size_t	 i;

	for (i = 0; i < c->nfails; i++)
		if (c->fails[i].key.len == len && memcmp(c->fails[i].key.id, id, len) == 0)
			return &c->fails[i];
	return NULL;
}

void
fail_forget(struct capture *c, const uint8_t *id, size_t len)
{
	struct failrec *f = fail_find(c, id, len);

	if (f == NULL)
		return;
	free(f->reason);
	*f = c->fails[--c->nfails];
}

void
fail_note(struct capture *c, const uint8_t *id, size_t len, const char *reason)
{
	struct failrec *f = fail_find(c, id, len), *nf;

	if (f == NULL) {
		if (c->nfails >= FAIL_MAX)
			return;
		if (c->nfails == c->failcap) {
			if ((nf = reallocarray(c->fails, c->failcap ? c->failcap * 2 : 64,
			    sizeof(*nf))) == NULL)
				return;
			c->fails = nf;
			c->failcap = c->failcap ? c->failcap * 2 : 64;
		}
		f = &c->fails[c->nfails++];
		memset(f, 0, sizeof(*f));
		memcpy(f->key.id, id, len);
		f->key.len = (uint8_t)len;
	}
	free(f->reason);
	f->reason = strdup(reason);
}

void
name_strip_deleted(const char *name, char *out, size_t len)
{
	snprintf(out, len, "%.*s", (int)record_name_len(name), name);
}

int
cache_side(int rc)
{
	return rc == -ENOSPC || rc == -EDQUOT || rc == -EROFS || rc == -EIO ||
	    rc == -ENAMETOOLONG || rc == -ENOTDIR;
}

void
reason_add(char *buf, size_t len, const char *fmt, ...)
{
	size_t	 n = strlen(buf);
	va_list	 ap;

	if (n > 0 && n + 2 < len) {
		memcpy(buf + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/*
 * Does PID live in another mount namespace than PID 1's (a root
 * container: a trusted namespace, binaries_ns 0, whose paths are not the
 * host's)?  0 when it cannot be told (the process gone).
 */
static int
other_mount(const struct capture *c, uint32_t pid)
{
	struct stat st;
	char	 path[48];

	if (pid == 0 || c->host_mnt_ns == 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/ns/mnt", pid);
	return stat(path, &st) == 0 && (uint64_t)st.st_ino != c->host_mnt_ns;
}

/* FD into the cache under NAME: a root container's copy is root's only (other_mount). */
static int
add_copy(struct capture *c, const char *name, uint64_t ns, uint32_t pid, const uint8_t *id,
    size_t idlen, int fd, char *file, size_t filelen, char *err, size_t errlen)
{
	if (ns == 0 && other_mount(c, pid))
		return bidcache_add_fd_private(&c->cache, name, id, idlen, fd, file, filelen,
		    err, errlen);
	return bidcache_add_fd_ns(&c->cache, name, ns, id, idlen, fd, file, filelen, err,
	    errlen);
}

/*
 * Copy PATH (opened here; PID not 0: a map_files link of that process)
 * into the cache under NAME.  1 or 0 (present) on success; else -errno
 * with the reason appended to WHY.
 */
int
try_path(struct capture *c, const char *path, uint32_t pid, const char *name, uint64_t ns,
    const uint8_t *id, size_t idlen, char *file, size_t filelen, char *why, size_t whylen)
{
	struct stat st;
	char	 err[PATH_MAX + 128];
	int	 fd, rc;

	if ((fd = buildid_reader_open_regular(path, pid != 0, userfs_guard(err, pid), &st)) < 0) {
		reason_add(why, whylen, "%s: %s", path, fd == -ELOOP ?
		    "a symbolic link on the path, not followed" : fd == -EISDIR ?
		    "not a regular file, not opened" : fd == -EBID_GUARD ? err :
		    strerror(-fd));
		return fd;
	}
	rc = add_copy(c, name, ns, pid, id, idlen, fd, file, filelen, err, sizeof(err));
	close(fd);
	if (rc < 0)
		reason_add(why, whylen, "%s: %s", path, err);
	return rc;
}

void
count_result(struct capture *c, int rc)
{
	if (rc > 0)
		atomic_fetch_add(&c->n_captured, 1);
	else if (rc == 0)
		atomic_fetch_add(&c->n_present, 1);
	atomic_store(&c->cache_bytes, c->cache.size);
	atomic_store(&c->cache_entries, c->cache.entries);
}

/* Copy the open file FD (the mapped one) into the cache; the reason into WHY. */
static int
copy_fd(struct capture *c, struct job *j, int fd, const char *what, char *why, size_t whylen)
{
	char	 err[512];
	int	 rc;

	rc = add_copy(c, j->name, j->ns, j->pid, j->id, j->idlen, fd, NULL, 0, err, sizeof(err));
	if (rc < 0)
		reason_add(why, whylen, "%s: %s", what, err);
	return rc;
}

/*
 * A binary at its first mapping, copied from the mapped file itself: the
 * file the recorder read its build-id from, or map_files (pinned early by
 * the worker, or opened now); once the process is gone, from its path
 * only if that is proven to be the same file (the record's device and
 * inode, no symlink followed: buildid_reader_open_verified).  Never a
 * path by name with nothing to compare: the copy's build-id is checked
 * anyway, but a name leads wherever the mount namespace and the user
 * want (another namespace's file, one the user could not read).  A record
 * with the kernel's build-id carries no inode: for it, only the mapping.
 */
void
run_map(struct capture *c, struct job *j)
{
	char	 why[1024] = "", path[PATH_MAX + 64], plain[PATH_MAX], hex[BUILD_ID_HEX_MAX];
	char	 err[PATH_MAX + 128];
	struct stat st;
	int	 rc = -ENOENT, fd;

	/* present, unless a user's namespace made it and this is the host's */
	if (bidcache_find(&c->cache, j->id, j->idlen, NULL, 0) > 0 &&
	    (j->ns != 0 || !bidcache_untrusted(&c->cache, j->id, j->idlen))) {
		bidcache_touch(&c->cache, j->id, j->idlen);
		count_result(c, 0);
		return;
	}
	name_strip_deleted(j->name, plain, sizeof(plain));
	buildid_reader_map_files(path, sizeof(path), j->pid, j->addr, j->len);
	if (j->kind == JOB_MISSED)
		reason_add(why, sizeof(why), "capture queue was full");
	else if (j->fd >= 0 && userfs_fd(j->fd, j->pid, why, sizeof(why)))
		rc = -EPERM;	/* the reader's file, a user's FUSE: a copy could wait for ever */
	else {
		/* A pin the guard refused: refused again here, for the reason. */
		if ((fd = j->fd) < 0)
			fd = j->pin_errno != 0 && j->pin_errno != EBID_GUARD ? -j->pin_errno :
			    buildid_reader_open_mapped(j->pid, j->addr, j->len, j->has_inode,
			    j->maj, j->min, j->ino, j->gen, userfs_guard(err, j->pid), &st);
		if (fd >= 0) {
			rc = copy_fd(c, j, fd, path, why, sizeof(why));
			if (fd != j->fd)
				close(fd);
		} else
			reason_add(why, sizeof(why), "%s: %s", path,
			    fd == -ESTALE ? "maps another file now" : fd == -EBID_GUARD ?
			    err : strerror(-fd));
		/* By name, unless a user's process serves the file: by name too, it would. */
		if (rc < 0 && !cache_side(rc) && fd != -EBID_GUARD && j->pin_errno != EBID_GUARD) {
			if (!j->has_inode)
				reason_add(why, sizeof(why), "%s: no inode in the record to check "
				    "it against", plain);
			else if ((fd = buildid_reader_open_verified(plain, j->maj, j->min, j->ino,
			    j->gen, userfs_guard(err, 0), &st)) >= 0) {
				rc = copy_fd(c, j, fd, plain, why, sizeof(why));
				close(fd);
			} else
				reason_add(why, sizeof(why), "%s: %s", plain, fd == -ESTALE ?
				    "another file than the one mapped" : fd == -EBID_GUARD ?
				    err : strerror(-fd));
		}
	}
	if (rc >= 0) {
		fail_forget(c, j->id, j->idlen);
		count_result(c, rc);
		return;
	}
	atomic_fetch_add(&c->n_failed, 1);
	fail_note(c, j->id, j->idlen, why);
	buildid_to_hex(j->id, j->idlen, hex);
	log_debug("capture %s %s failed: %s", hex, j->name, why);
}

/* Read a whole (small, virtual) file such as /proc/kallsyms. */
