/*
 * bidcache.c - the build-id cache; see bidcache.h for the layout.
 *
 * Insertion of build-id ID under NAME, each step safe to crash after:
 *
 *	check the source's build-id ──► mkdir DIR/<path>/<ID>/ (no symlink
 *	followed) ──► copy into DIR/.tmp/.tmp.PID.N (FICLONE ▸
 *	copy_file_range ▸ read/write) ──► fsync ──► check the copy's
 *	build-id ──► rename to DIR/<path>/<ID>/elf|kallsyms|vdso ──► symlink
 *	DIR/.tmp/.tmp.PID.N ──► rename to .build-id/xx/<rest>
 *
 * Until the last rename the entry does not exist for perf or for us.
 * Temporaries live in one directory, DIR/.tmp: what a crash leaves there
 * (a copy of hundreds of MB, outside max_size and any entry) is removed
 * at the next open, each file whose writer's pid is gone.
 * Directories are walked with openat(O_NOFOLLOW) from the cache's own fd,
 * so a symlink planted inside the cache cannot send a write elsewhere.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <lzma.h>
#include <zstd.h>

#include "bidcache.h"
#include "buildid.h"
#include "record.h"
#include "walltime.h"

#define DECOMPRESS_MAX	(512U << 20)	/* a decompressed module, at most */

const char *
bidcache_basename(const char *name)
{
	if (strcmp(name, BIDCACHE_KERNEL) == 0)
		return "kallsyms";
	if (strcmp(name, BIDCACHE_VDSO) == 0)
		return "vdso";
	return "elf";
}

/* The basename of an entry from its cache-relative directory. */
static const char *
entry_basename(const char *rel)
{
	if (strncmp(rel, BIDCACHE_KERNEL "/", sizeof(BIDCACHE_KERNEL)) == 0)
		return "kallsyms";
	if (strncmp(rel, BIDCACHE_VDSO "/", sizeof(BIDCACHE_VDSO)) == 0)
		return "vdso";
	return "elf";
}

static int	entry_name(const char *, const uint8_t *, size_t, char *, size_t);

int
bidcache_entry_name(const char *name, const uint8_t *id, size_t idlen, char *out,
    size_t outlen)
{
	return bidcache_entry_name_ns(name, 0, id, idlen, out, outlen);
}

int
bidcache_entry_name_ns(const char *name, uint64_t ns, const uint8_t *id, size_t idlen,
    char *out, size_t outlen)
{
	char	 rel[PATH_MAX];
	int	 rc;

	if (ns == 0)
		return entry_name(name, id, idlen, out, outlen);
	if ((rc = entry_name(name, id, idlen, rel, sizeof(rel))) < 0)
		return rc;
	if ((size_t)snprintf(out, outlen, BIDCACHE_NS_DIR "/%llu/%s", (unsigned long long)ns,
	    rel) >= outlen)
		return -ENAMETOOLONG;
	return 0;
}

static int
entry_name(const char *name, const uint8_t *id, size_t idlen, char *out, size_t outlen)
{
	char	 hex[BUILD_ID_HEX_MAX], path[PATH_MAX];
	const char *p, *c;
	size_t	 len = record_name_len(name), o = 0, n;

	if (idlen == 0 || idlen > BUILD_ID_MAX)
		return -EINVAL;
	buildid_to_hex(id, idlen, hex);
	if (strcmp(name, BIDCACHE_KERNEL) == 0 || strcmp(name, BIDCACHE_VDSO) == 0) {
		if ((size_t)snprintf(out, outlen, "%s/%s", name, hex) >= outlen)
			return -ENAMETOOLONG;
		return 0;
	}
	if (name[0] != '/')
		return -EINVAL;
	/* Components without the empty ones: "/a//b/" is "a/b". */
	for (p = name; p < name + len; p = c + 1) {
		for (c = p; c < name + len && *c != '/'; c++)
			;
		n = (size_t)(c - p);
		if (n == 0)
			continue;
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (o == 0 && ((n == sizeof(".build-id") - 1 && strncmp(p, ".build-id", n) == 0) ||
		    (n == sizeof(BIDCACHE_NS_DIR) - 1 && strncmp(p, BIDCACHE_NS_DIR, n) == 0)))
			return -EINVAL;
		if (o + n + 2 >= sizeof(path))
			return -ENAMETOOLONG;
		if (o > 0)
			path[o++] = '/';
		memcpy(path + o, p, n);
		o += n;
	}
	if (o == 0)
		return -EINVAL;
	path[o] = '\0';
	if ((size_t)snprintf(out, outlen, "%s/%s", path, hex) >= outlen)
		return -ENAMETOOLONG;
	return 0;
}

/* ".build-id/xx" and "rest" of ID. */
static void
link_names(const uint8_t *id, size_t idlen, char *dir, size_t dirlen, char *rest,
    size_t restlen)
{
	char	 hex[BUILD_ID_HEX_MAX];

	buildid_to_hex(id, idlen, hex);
	snprintf(dir, dirlen, ".build-id/%.2s", hex);
	snprintf(rest, restlen, "%s", hex + 2);
}

/* Open (creating) the directory REL under DIRFD without following symlinks. */
static int
mkdirs_at(int dirfd, const char *rel)
{
	char	 buf[PATH_MAX], *p, *slash;
	int	 fd, nfd;

	if (strlen(rel) >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, rel, strlen(rel) + 1);
	if ((fd = dup(dirfd)) == -1)
		return -errno;
	for (p = buf; p != NULL && *p != '\0'; p = slash) {
		if ((slash = strchr(p, '/')) != NULL)
			*slash++ = '\0';
		if (*p == '\0')
			continue;
		if (mkdirat(fd, p, 0750) == -1 && errno != EEXIST) {
			int e = errno;

			close(fd);
			return -e;
		}
		nfd = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (nfd == -1)
			return errno == ELOOP ? -ENOTDIR : -errno;
		fd = nfd;
	}
	return fd;
}

uint64_t
bidcache_dirs_cost(const char *rel)
{
	uint64_t n = 2;		/* the entry's own directory's last component, and its link */
	const char *p;

	for (p = rel; *p != '\0'; p++)
		n += *p == '/' && p[1] != '/' && p[1] != '\0';
	return n * BIDCACHE_DIR_COST;
}

/* What the entry REL takes: its files' bytes and bidcache_dirs_cost. */
static int
entry_size(int cfd, const char *rel, uint64_t *size)
{
	struct dirent *de;
	struct stat st;
	DIR	*d;
	int	 fd;

	*size = 0;
	if ((fd = openat(cfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -errno;
	*size = bidcache_dirs_cost(rel);
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d)) != NULL)
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			*size += (uint64_t)st.st_size;
	closedir(d);
	return 0;
}

/* The entry directory (cache-relative) a .build-id link points to. */
static int
read_link(int dirfd, const char *linkrel, char *rel, size_t rellen)
{
	char	 target[PATH_MAX];
	ssize_t	 n;

	if ((n = readlinkat(dirfd, linkrel, target, sizeof(target) - 1)) == -1)
		return -errno;
	target[n] = '\0';
	if (strncmp(target, "../../", 6) != 0 || strstr(target + 6, "..") != NULL)
		return -EINVAL;
	if ((size_t)snprintf(rel, rellen, "%s", target + 6) >= rellen)
		return -ENAMETOOLONG;
	return 0;
}

int
bidcache_find(struct bidcache *c, const uint8_t *id, size_t idlen, char *path,
    size_t pathlen)
{
	char	 ldir[32], rest[BUILD_ID_HEX_MAX], linkrel[80], rel[PATH_MAX], file[PATH_MAX];
	struct stat st;
	int	 rc;

	if (idlen == 0 || idlen > BUILD_ID_MAX)
		return -EINVAL;
	link_names(id, idlen, ldir, sizeof(ldir), rest, sizeof(rest));
	snprintf(linkrel, sizeof(linkrel), "%s/%s", ldir, rest);
	if ((rc = read_link(c->dirfd, linkrel, rel, sizeof(rel))) < 0)
		return rc == -ENOENT ? 0 : rc;
	if ((size_t)snprintf(file, sizeof(file), "%s/%s", rel, entry_basename(rel)) >=
	    sizeof(file))
		return -ENAMETOOLONG;
	if (fstatat(c->dirfd, file, &st, AT_SYMLINK_NOFOLLOW) == -1 || !S_ISREG(st.st_mode))
		return 0;
	if (path != NULL)
		snprintf(path, pathlen, "%s/%s", c->dir, file);
	return 1;
}

void
bidcache_touch(struct bidcache *c, const uint8_t *id, size_t idlen)
{
	char	 ldir[32], rest[BUILD_ID_HEX_MAX], linkrel[80];

	link_names(id, idlen, ldir, sizeof(ldir), rest, sizeof(rest));
	snprintf(linkrel, sizeof(linkrel), "%s/%s", ldir, rest);
	utimensat(c->dirfd, linkrel, NULL, AT_SYMLINK_NOFOLLOW);
}

/* Copy [OFF, OFF + LEN) of SRC to the same offset of DST. */
static int
copy_range(int src, int dst, uint64_t off, uint64_t len)
{
	char	 buf[65536];
	loff_t	 in = (loff_t)off, out = (loff_t)off;
	uint64_t end = off + len;
	ssize_t	 n, w, o;

	while ((uint64_t)in < end) {
		n = copy_file_range(src, &in, dst, &out, (size_t)(end - (uint64_t)in), 0);
		if (n > 0)
			continue;
		if (n == 0)
			return 0;		/* shorter than fstat said */
		if (errno == EINTR)
			continue;
		if (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
		    errno == EOPNOTSUPP || errno == EBADF || errno == EPERM)
			break;		/* not between these files: bytes */
		return -errno;
	}
	while ((uint64_t)in < end) {
		n = pread(src, buf, end - (uint64_t)in < sizeof(buf) ?
		    (size_t)(end - (uint64_t)in) : sizeof(buf), in);
		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (o = 0; o < n; o += w)
			if ((w = pwrite(dst, buf + o, (size_t)(n - o), out + o)) < 0) {
				if (errno == EINTR) {
					w = 0;
					continue;
				}
				return -errno;
			}
		in += n;
		out += n;
	}
	return 0;
}

/*
 * Copy SRC (SIZE bytes) into DST: a reflink, else the data extents only
 * (SEEK_DATA/SEEK_HOLE), so a sparse file stays sparse: a 1 GiB file of
 * 20 KB data costs 20 KB, never a dense copy.
 */
static int
copy_fd(int src, int dst, uint64_t size)
{
	off_t	 data, hole = 0;
	int	 rc;

	/*
	 * A reflink takes the whole file as it is now: cut to the SIZE that
	 * was admitted, or a user growing the file meanwhile (cloning into
	 * its tail) would get a copy beyond max_size and their share.
	 */
	if (ioctl(dst, FICLONE, src) == 0)
		return ftruncate(dst, (off_t)size) == -1 ? -errno : 0;
	for (;;) {
		if ((data = lseek(src, hole, SEEK_DATA)) == -1) {
			if (errno == ENXIO)
				break;			/* only a hole left */
			if (errno != EINVAL && errno != EOPNOTSUPP)
				return -errno;
			data = hole;			/* no SEEK_DATA here: all data */
			hole = (off_t)size;
		} else if ((hole = lseek(src, data, SEEK_HOLE)) == -1)
			return -errno;
		if ((uint64_t)data >= size)
			break;
		if ((uint64_t)hole > size)
			hole = (off_t)size;
		if ((rc = copy_range(src, dst, (uint64_t)data, (uint64_t)(hole - data))) < 0)
			return rc;
		if ((uint64_t)hole >= size)
			break;
	}
	return ftruncate(dst, (off_t)size) == -1 ? -errno : 0;
}

static void
id_error(int rc, const uint8_t *got, char *err, size_t errlen)
{
	char	 hex[BUILD_ID_HEX_MAX];

	switch (rc) {
	case -ENOEXEC:
		snprintf(err, errlen, "not an ELF file, or a truncated one");
		break;
	case -ENOENT:
		snprintf(err, errlen, "no build-id note");
		break;
	case -EILSEQ:
		buildid_to_hex(got, BUILD_ID_MAX, hex);
		snprintf(err, errlen, "build-id mismatch (the file has %s)", hex);
		break;
	default:
		snprintf(err, errlen, "reading its build-id: %s", strerror(-rc));
	}
}

/* 0 if FD carries ID, else -errno as bidcache_add_fd documents. */
static int
check_id(int fd, const uint8_t *id, size_t idlen, uint8_t got[BUILD_ID_MAX])
{
	int	 rc;

	memset(got, 0, BUILD_ID_MAX);
	if ((rc = buildid_read_fd(fd, got)) < 0)
		return rc;
	/* perf pads 20-byte ids; compare what both have. */
	if ((size_t)rc != idlen || memcmp(got, id, idlen) != 0)
		return -EILSEQ;
	return 0;
}

static int
make_link(struct bidcache *c, const uint8_t *id, size_t idlen, const char *rel,
    char *err, size_t errlen)
{
	char	 ldir[32], rest[BUILD_ID_HEX_MAX], target[PATH_MAX], tmp[64];
	int	 fd, rc = 0;

	link_names(id, idlen, ldir, sizeof(ldir), rest, sizeof(rest));
	if ((size_t)snprintf(target, sizeof(target), "../../%s", rel) >= sizeof(target))
		return -ENAMETOOLONG;
	if ((fd = mkdirs_at(c->dirfd, ldir)) < 0) {
		snprintf(err, errlen, "%s/%s: %s", c->dir, ldir, strerror(-fd));
		return fd;
	}
	snprintf(tmp, sizeof(tmp), ".tmp.%ld.%ld", (long)getpid(), (long)random());
	if (symlinkat(target, c->tmpfd, tmp) == -1 || renameat(c->tmpfd, tmp, fd, rest) == -1) {
		rc = -errno;
		snprintf(err, errlen, "%s/%s/%s: %s", c->dir, ldir, rest, strerror(errno));
		unlinkat(c->tmpfd, tmp, 0);
	}
	close(fd);
	return rc;
}

/*
 * Can anyone reach the file at NAME (an absolute path as the kernel names
 * a mapping: no symlink in it) through its directories, each searchable
 * by others?  No for a path that cannot be walked now (gone, replaced by
 * a symlink, too long): the copy stays root's.
 */
static int
reachable(const char *name)
{
	char	 comp[NAME_MAX + 1];
	const char *p = name, *slash;
	struct stat st;
	size_t	 len = record_name_len(name), n;
	int	 fd, next, ok = 0;

	if (name[0] != '/' || (fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return 0;
	for (;;) {
		if (fstat(fd, &st) == -1 || !S_ISDIR(st.st_mode) || !(st.st_mode & S_IXOTH))
			break;
		while (p < name + len && *p == '/')
			p++;
		if ((slash = memchr(p, '/', (size_t)(name + len - p))) == NULL) {
			ok = 1;		/* P is the file's own name */
			break;
		}
		if ((n = (size_t)(slash - p)) > NAME_MAX)
			break;
		memcpy(comp, p, n);
		comp[n] = '\0';
		next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if ((fd = next) == -1)
			return 0;
		p = slash;
	}
	close(fd);
	return ok;
}

/*
 * The copy's mode under the policy of bidcache.h; PUBLIC: anyone could
 * fetch it; FOREIGN: NAME is a path of another mount namespace, whose
 * directories the daemon cannot walk (its own /usr/bin says nothing of a
 * container's under a root-only /var/lib/docker): root's only.
 */
static mode_t
copy_mode(const char *name, const struct stat *src, int public, int foreign)
{
	if (strcmp(name, BIDCACHE_KERNEL) == 0 || (foreign && public <= 0) || public < 0)
		return 0600;
	/* a file anyone could read, in a directory not everyone may enter */
	if (!public && name[0] == '/' && (src->st_mode & S_IROTH) && !reachable(name))
		return 0600;
	/*
	 * The copy's group is the cache's (the daemon's control group), not
	 * the original's: its members may read it only if anyone could read
	 * the original (a binary of group shadow, mode 0750, stays root's).
	 */
	return public ? 0644 : (src->st_mode & S_IROTH) ? 0644 : 0600;
}

int
bidcache_trusted_file(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* Is the entry ID's link names an untrusted one (under BIDCACHE_NS_DIR)? */
static int
entry_untrusted(struct bidcache *c, const uint8_t *id, size_t idlen, char *rel, size_t rellen)
{
	char	 ldir[32], rest[BUILD_ID_HEX_MAX], linkrel[80];

	link_names(id, idlen, ldir, sizeof(ldir), rest, sizeof(rest));
	snprintf(linkrel, sizeof(linkrel), "%s/%s", ldir, rest);
	return read_link(c->dirfd, linkrel, rel, rellen) == 0 &&
	    strncmp(rel, BIDCACHE_NS_DIR "/", sizeof(BIDCACHE_NS_DIR)) == 0;
}

int
bidcache_untrusted(struct bidcache *c, const uint8_t *id, size_t idlen)
{
	char	 rel[PATH_MAX];

	return entry_untrusted(c, id, idlen, rel, sizeof(rel));
}

static void	remove_dir_entry(struct bidcache *, const char *rel);

/* FD is the file *BEFORE was (same inode, size, times): 0, else -ESTALE (or fstat's error). */
static int
unchanged(int fd, const struct stat *before)
{
	struct stat st;

	if (fstat(fd, &st) == -1)
		return -errno;
	if (st.st_ino != before->st_ino || st.st_dev != before->st_dev ||
	    st.st_size != before->st_size ||
	    st.st_mtim.tv_sec != before->st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != before->st_mtim.tv_nsec ||
	    st.st_ctim.tv_sec != before->st_ctim.tv_sec ||
	    st.st_ctim.tv_nsec != before->st_ctim.tv_nsec)
		return -ESTALE;
	return 0;
}

/*
 * The insertion of bidcache.h; PUBLIC: anyone could fetch the file (1),
 * the policy says (0), root's only (-1); NS: its namespace.
 */
static int
add_fd(struct bidcache *c, const char *name, uint64_t ns, const uint8_t *id, size_t idlen,
    int fd, int public, char *path, size_t pathlen, char *err, size_t errlen)
{
	char	 rel[PATH_MAX], tmp[64], old[PATH_MAX] = "";
	const char *base = bidcache_basename(name);
	uint8_t	 got[BUILD_ID_MAX];
	struct stat st;
	uint64_t cost;
	int	 rc, efd = -1, tfd = -1, elf = strcmp(name, BIDCACHE_KERNEL) != 0, foreign;

	err[0] = '\0';
	if (fstat(fd, &st) == -1) {
		rc = -errno;
		snprintf(err, errlen, "fstat: %s", strerror(errno));
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		return -EINVAL;
	}
	foreign = ns != 0 && ns != BIDCACHE_NS_USER;
	/* The host's, from a file a user could have written: not trusted either. */
	if (ns == 0 && !bidcache_trusted_file(&st))
		ns = BIDCACHE_NS_USER;
	if ((rc = bidcache_entry_name_ns(name, ns, id, idlen, rel, sizeof(rel))) < 0) {
		snprintf(err, errlen, "%s: not a path the cache can hold", name);
		return rc;
	}
	if ((rc = bidcache_find(c, id, idlen, path, pathlen)) != 0) {
		/*
		 * Present: done, unless an untrusted copy put it there (a user's
		 * namespace, or a user's file) and this one is trusted; that one
		 * replaces it (the first file with a build-id must not win:
		 * anyone can write any build-id note).
		 */
		if (rc > 0 && (ns != 0 || !entry_untrusted(c, id, idlen, old, sizeof(old)))) {
			bidcache_touch(c, id, idlen);
			return 0;
		}
		/* a damaged link, or an untrusted entry: replaced below */
	}

	if (elf && (rc = check_id(fd, id, idlen, got)) < 0) {
		id_error(rc, got, err, errlen);
		return rc;
	}
	/*
	 * A separate debug file carries the binary's build-id but not its
	 * code (a user can map /usr/lib/debug/.build-id/xx/yyyy.debug): kept
	 * as the binary, it would be that build-id's entry for good, with
	 * nothing for perf annotate or debuginfod's executable.
	 */
	if (elf && buildid_debug_only_fd(fd) == 1) {
		snprintf(err, errlen, "a separate debug file (its code sections are empty), "
		    "not the binary");
		return -ENOEXEC;
	}
	/* Before the copy: room in max_size, its owner's share (the daemon's policy). */
	cost = (uint64_t)st.st_size + bidcache_dirs_cost(rel);
	if (c->admit != NULL &&
	    (rc = c->admit(c->admit_arg, st.st_uid, cost, err, errlen)) < 0)
		return rc;
	if ((efd = mkdirs_at(c->dirfd, rel)) < 0) {
		rc = efd;
		snprintf(err, errlen, "%s/%s: %s", c->dir, rel, strerror(-rc));
		return rc;
	}
	snprintf(tmp, sizeof(tmp), ".tmp.%ld.%ld", (long)getpid(), (long)random());
	tfd = openat(c->tmpfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	/* exactly the policy's mode, whatever the umask */
	if (tfd == -1 || fchmod(tfd, copy_mode(name, &st, public, foreign)) == -1) {
		rc = -errno;
		snprintf(err, errlen, "%s/%s: %s", c->dir, rel, strerror(errno));
		goto out;
	}
	if ((rc = copy_fd(fd, tfd, (uint64_t)st.st_size)) < 0 ||
	    (fsync(tfd) == -1 && (rc = -errno) < 0)) {
		snprintf(err, errlen, "writing %s/%s: %s", c->dir, rel, strerror(-rc));
		goto out;
	}
	if (elf && (rc = check_id(tfd, id, idlen, got)) < 0) {
		char	 why[128];

		id_error(rc, got, why, sizeof(why));
		snprintf(err, errlen, "the copy is damaged: %s", why);
		goto out;
	}
	/*
	 * The file as it was before the copy, and still the build-id's: one
	 * written over while it was copied (cp v2 over a library: its first
	 * pages v1's, the rest v2's or the zeros of a short read) would hold
	 * v1's note over v2's code, and every reader take it for v1.
	 */
	if ((rc = unchanged(fd, &st)) < 0 || (elf && check_id(fd, id, idlen, got) < 0)) {
		rc = rc < 0 ? rc : -ESTALE;
		snprintf(err, errlen, "the file changed while it was copied: not cached");
		goto out;
	}
	if (renameat(c->tmpfd, tmp, efd, base) == -1) {
		rc = -errno;
		snprintf(err, errlen, "%s/%s/%s: %s", c->dir, rel, base, strerror(errno));
		goto out;
	}
	tmp[0] = '\0';
	if ((rc = make_link(c, id, idlen, rel, err, errlen)) < 0) {
		unlinkat(efd, base, 0);
		goto out;
	}
	c->size += cost;
	c->entries++;
	/* (gone already when the admission's eviction took it: counted then) */
	if (old[0] != '\0') {
		uint64_t osize = 0;

		if (entry_size(c->dirfd, old, &osize) == 0) {
			c->size -= osize <= c->size ? osize : c->size;
			c->entries--;
		}
		remove_dir_entry(c, old);
	}
	if (path != NULL)
		snprintf(path, pathlen, "%s/%s/%s", c->dir, rel, base);
	rc = 1;
out:
	if (tfd >= 0)
		close(tfd);
	if (tmp[0] != '\0')
		unlinkat(c->tmpfd, tmp, 0);
	if (efd >= 0)
		close(efd);
	return rc;
}

int
bidcache_add_fd(struct bidcache *c, const char *name, const uint8_t *id, size_t idlen,
    int fd, char *path, size_t pathlen, char *err, size_t errlen)
{
	return add_fd(c, name, 0, id, idlen, fd, 0, path, pathlen, err, errlen);
}

int
bidcache_add_fd_ns(struct bidcache *c, const char *name, uint64_t ns, const uint8_t *id,
    size_t idlen, int fd, char *path, size_t pathlen, char *err, size_t errlen)
{
	return add_fd(c, name, ns, id, idlen, fd, 0, path, pathlen, err, errlen);
}

int
bidcache_add_fd_public(struct bidcache *c, const char *name, const uint8_t *id, size_t idlen,
    int fd, char *path, size_t pathlen, char *err, size_t errlen)
{
	return add_fd(c, name, 0, id, idlen, fd, 1, path, pathlen, err, errlen);
}

int
bidcache_add_fd_private(struct bidcache *c, const char *name, const uint8_t *id, size_t idlen,
    int fd, char *path, size_t pathlen, char *err, size_t errlen)
{
	return add_fd(c, name, 0, id, idlen, fd, -1, path, pathlen, err, errlen);
}

int
bidcache_add_buf(struct bidcache *c, const char *name, const uint8_t *id, size_t idlen,
    const void *buf, size_t len, char *path, size_t pathlen, char *err, size_t errlen)
{
	const char *p = buf;
	size_t	 off = 0;
	ssize_t	 n;
	int	 fd, rc;

	/*
	 * The daemon's own memory: a trusted source, readable by anyone as a
	 * memfd's 0777 was (bidcache_trusted_file, copy_mode), not writable.
	 */
	if ((fd = memfd_create("perfmapd-bidcache", MFD_CLOEXEC)) == -1 || fchmod(fd, 0644) == -1) {
		rc = -errno;
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	while (off < len) {
		if ((n = write(fd, p + off, len - off)) < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			snprintf(err, errlen, "memfd write: %s", strerror(errno));
			close(fd);
			return rc;
		}
		off += (size_t)n;
	}
	rc = bidcache_add_fd(c, name, id, idlen, fd, path, pathlen, err, errlen);
	close(fd);
	return rc;
}

/* One entry as found through its link, for sizing and eviction. */
struct centry {
	uint8_t		 id[BUILD_ID_MAX];
	size_t		 idlen;
	int64_t		 ref_ns;
	uint64_t	 size;
	char		*rel;
};

static int
centry_cmp(const void *a, const void *b)
{
	const struct centry *x = a, *y = b;

	return x->ref_ns < y->ref_ns ? -1 : x->ref_ns > y->ref_ns;
}

static void	free_entries(struct centry *, size_t);

/* Every entry of the cache, from the .build-id links: 0, or -ENOMEM and none. */
static int
scan(struct bidcache *c, struct centry **out, size_t *nout)
{
	struct centry *v = NULL, *nv;
	size_t	 n = 0, cap = 0;
	DIR	*top, *sub;
	struct dirent *de, *se;
	int	 fd;

	*out = NULL;
	*nout = 0;
	if ((fd = openat(c->dirfd, ".build-id", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -errno;
	if ((top = fdopendir(fd)) == NULL) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(top)) != NULL) {
		char	 hex[BUILD_ID_HEX_MAX + 8];

		if (strlen(de->d_name) != 2 || de->d_name[0] == '.')
			continue;
		if ((fd = openat(dirfd(top), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC)) == -1 || (sub = fdopendir(fd)) == NULL) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		while ((se = readdir(sub)) != NULL) {
			char	 linkrel[80], rel[PATH_MAX];
			struct stat st;
			struct centry e;
			int	 len;

			if (se->d_name[0] == '.' || strlen(se->d_name) > 2 * BUILD_ID_MAX - 2)
				continue;
			snprintf(hex, sizeof(hex), "%s%s", de->d_name, se->d_name);
			memset(&e, 0, sizeof(e));
			if ((len = buildid_from_hex(hex, e.id)) < 0)
				continue;
			e.idlen = (size_t)len;
			snprintf(linkrel, sizeof(linkrel), ".build-id/%s/%s", de->d_name,
			    se->d_name);
			if (fstatat(c->dirfd, linkrel, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
			    read_link(c->dirfd, linkrel, rel, sizeof(rel)) < 0)
				continue;
			e.ref_ns = ts_ns(&st.st_mtim);
			entry_size(c->dirfd, rel, &e.size);
			if ((e.rel = strdup(rel)) == NULL)
				goto oom;
			if (n == cap) {
				if ((nv = reallocarray(v, cap ? cap * 2 : 256, sizeof(*v))) == NULL) {
					free(e.rel);
					goto oom;
				}
				v = nv;
				cap = cap ? cap * 2 : 256;
			}
			v[n++] = e;
		}
		closedir(sub);
	}
	closedir(top);
	*out = v;
	*nout = n;
	return 0;
oom:
	/* a part of the list is not the list: eviction would choose among a few */
	closedir(sub);
	closedir(top);
	free_entries(v, n);
	return -ENOMEM;
}

static void
free_entries(struct centry *v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free(v[i].rel);
	free(v);
}

/* An entry directory REL: its files, itself, and each parent left empty. */
static void
remove_dir_entry(struct bidcache *c, const char *rel)
{
	char	 buf[PATH_MAX], *slash;
	struct dirent *de;
	DIR	*d;
	int	 fd;

	if ((fd = openat(c->dirfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) >= 0 && (d = fdopendir(fd)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
				unlinkat(dirfd(d), de->d_name, 0);
		closedir(d);
	} else if (fd >= 0)
		close(fd);
	snprintf(buf, sizeof(buf), "%s", rel);
	while (unlinkat(c->dirfd, buf, AT_REMOVEDIR) == 0 &&
	    (slash = strrchr(buf, '/')) != NULL)
		*slash = '\0';
}

/* Remove an entry: the link first (perf stops seeing it), then its directory. */
static void
remove_entry(struct bidcache *c, const struct centry *e)
{
	char	 ldir[32], rest[BUILD_ID_HEX_MAX], linkrel[80];

	link_names(e->id, e->idlen, ldir, sizeof(ldir), rest, sizeof(rest));
	snprintf(linkrel, sizeof(linkrel), "%s/%s", ldir, rest);
	unlinkat(c->dirfd, linkrel, 0);
	remove_dir_entry(c, e->rel);
}

int
bidcache_evict(struct bidcache *c, uint64_t target, bidcache_keep_fn keep, void *arg,
    uint64_t *left)
{
	struct centry *v;
	uint64_t total = 0;
	size_t	 n, i;
	int	 rc, removed = 0;

	if ((rc = scan(c, &v, &n)) < 0)
		return rc;
	for (i = 0; i < n; i++)
		total += v[i].size;
	if (n > 1)
		qsort(v, n, sizeof(*v), centry_cmp);
	for (i = 0; i < n && total > target; i++) {
		if (keep != NULL && keep(v[i].id, v[i].idlen, v[i].ref_ns, arg))
			continue;
		remove_entry(c, &v[i]);
		total -= v[i].size;
		removed++;
	}
	c->size = total;
	c->entries = n - (size_t)removed;
	if (left != NULL)
		*left = total;
	free_entries(v, n);
	return removed;
}

/*
 * The temporaries in TMPFD whose writer is gone (a crash, a kill -9 in a
 * copy): removed; their count.  At the open this process has written
 * none, so one with its pid is an earlier process's that had the same
 * one (a container's daemon is pid 1 at every start); another live
 * process's (a second daemon on the same cache) stays.
 */
static uint64_t
sweep_tmp(int tmpfd)
{
	struct dirent *de;
	uint64_t n = 0;
	long	 pid;
	DIR	*d;
	int	 fd;

	if ((fd = dup(tmpfd)) == -1)
		return 0;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (sscanf(de->d_name, ".tmp.%ld.", &pid) != 1 || pid <= 0 ||
		    pid == (long)getpid() || (kill((pid_t)pid, 0) == -1 && errno == ESRCH)) {
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
			    unlinkat(tmpfd, de->d_name, 0) == 0)
				n++;
		}
	}
	closedir(d);
	return n;
}

int
bidcache_open(struct bidcache *c, const char *dir, char *err, size_t errlen)
{
	struct centry *v;
	char	 buf[PATH_MAX], *p;
	size_t	 n, i;
	int	 rc;

	memset(c, 0, sizeof(*c));
	c->dirfd = c->tmpfd = -1;
	if (dir[0] != '/' || strlen(dir) >= sizeof(buf)) {
		snprintf(err, errlen, "%s: the cache directory must be an absolute path", dir);
		return -EINVAL;
	}
	memcpy(buf, dir, strlen(dir) + 1);
	for (p = buf + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(buf, 0750) == -1 && errno != EEXIST) {
			rc = -errno;
			snprintf(err, errlen, "%s: %s", buf, strerror(errno));
			return rc;
		}
		*p = '/';
	}
	if (mkdir(dir, 0750) == -1 && errno != EEXIST) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return rc;
	}
	if ((c->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return rc;
	}
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	if ((mkdirat(c->dirfd, ".tmp", 0700) == -1 && errno != EEXIST) ||
	    (c->tmpfd = openat(c->dirfd, ".tmp", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		rc = -errno;
		snprintf(err, errlen, "%s/.tmp: %s", dir, strerror(errno));
		close(c->dirfd);
		c->dirfd = -1;
		return rc;
	}
	c->tmp_removed = sweep_tmp(c->tmpfd);
	srandom((unsigned)time(NULL) ^ (unsigned)getpid());
	if (scan(c, &v, &n) == 0) {
		for (i = 0; i < n; i++)
			c->size += v[i].size;
		c->entries = n;
		free_entries(v, n);
	}
	return 0;
}

void
bidcache_close(struct bidcache *c)
{
	if (c->dirfd >= 0)
		close(c->dirfd);
	if (c->tmpfd >= 0)
		close(c->tmpfd);
	c->dirfd = c->tmpfd = -1;
}

int
bidcache_decompress(int fd, const char *path)
{
	size_t	 n = strlen(path), inlen;
	uint8_t	*in = NULL, *out = NULL;
	size_t	 outcap = 0, outlen = 0;
	struct stat st;
	int	 mfd = -1, rc = -ENOEXEC;

	if (fstat(fd, &st) == -1)
		return -errno;
	if ((uint64_t)st.st_size > DECOMPRESS_MAX)
		return -EFBIG;
	inlen = (size_t)st.st_size;
	if ((in = malloc(inlen ? inlen : 1)) == NULL)
		return -ENOMEM;
	if (pread(fd, in, inlen, 0) != (ssize_t)inlen) {
		rc = -EIO;
		goto out;
	}
	if (n > 3 && strcmp(path + n - 3, ".xz") == 0) {
		lzma_stream s = LZMA_STREAM_INIT;
		lzma_ret r;

		if (lzma_stream_decoder(&s, DECOMPRESS_MAX, 0) != LZMA_OK)
			goto out;
		s.next_in = in;
		s.avail_in = inlen;
		do {
			if (outlen == outcap) {
				uint8_t *no;

				outcap = outcap ? outcap * 2 : inlen * 4 + 4096;
				if (outcap > DECOMPRESS_MAX || (no = realloc(out, outcap)) == NULL) {
					lzma_end(&s);
					goto out;
				}
				out = no;
			}
			s.next_out = out + outlen;
			s.avail_out = outcap - outlen;
			r = lzma_code(&s, LZMA_FINISH);
			outlen = outcap - s.avail_out;
		} while (r == LZMA_OK);
		lzma_end(&s);
		if (r != LZMA_STREAM_END)
			goto out;
	} else if (n > 4 && strcmp(path + n - 4, ".zst") == 0) {
		ZSTD_DStream *z = ZSTD_createDStream();
		ZSTD_inBuffer ib = { in, inlen, 0 };
		size_t	 zr = 1;

		if (z == NULL)
			goto out;
		ZSTD_initDStream(z);
		while (ib.pos < ib.size && zr != 0) {
			ZSTD_outBuffer ob;

			if (outlen == outcap) {
				uint8_t *no;

				outcap = outcap ? outcap * 2 : inlen * 4 + 4096;
				if (outcap > DECOMPRESS_MAX || (no = realloc(out, outcap)) == NULL)
					break;
				out = no;
			}
			ob.dst = out + outlen;
			ob.size = outcap - outlen;
			ob.pos = 0;
			zr = ZSTD_decompressStream(z, &ob, &ib);
			outlen += ob.pos;
			if (ZSTD_isError(zr))
				break;
		}
		ZSTD_freeDStream(z);
		if (zr != 0)
			goto out;
	} else {
		rc = -EINVAL;
		goto out;
	}
	/*
	 * The memfd is root's and mode 0777: as trusted as the file it came
	 * from (bidcache_trusted_file), not as a user's.  A user's file with
	 * the module's build-id, mapped before the module loaded, must not
	 * stay the module's entry because its copy looked no better.
	 */
	if ((mfd = memfd_create("perfmapd-module", MFD_CLOEXEC)) == -1 ||
	    fchmod(mfd, bidcache_trusted_file(&st) ? (st.st_mode & 0755) : 0666) == -1 ||
	    write(mfd, out, outlen) != (ssize_t)outlen) {
		rc = -errno;
		if (mfd >= 0)
			close(mfd);
		mfd = -1;
		goto out;
	}
	rc = mfd;
out:
	free(in);
	free(out);
	return rc;
}
