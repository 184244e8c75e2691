/*
 * bidcache.h - the build-id cache, in perf's layout (~/.debug), so that
 * `perf --buildid-dir DIR report` symbolizes from it and elfutils
 * `debuginfod -F DIR` serves it:
 *
 *	DIR/<path>/<build-id>/elf			a binary (path without the leading /)
 *	DIR/[kernel.kallsyms]/<build-id>/kallsyms	a copy of /proc/kallsyms
 *	DIR/[vdso]/<build-id>/vdso			the vDSO image
 *	DIR/.build-id/<xx>/<rest> -> ../../<path>/<build-id>
 *
 * perf finds an entry through the .build-id link only, so there is one
 * entry per build-id (the first name it was seen under) and the link is
 * what makes an entry exist.  Insertion is atomic: the file is written
 * under a temporary name in DIR/.tmp, synced, its build-id checked,
 * renamed into the entry directory, and only then is the link created
 * (itself through a temporary name in DIR/.tmp and a rename).  A crash
 * leaves at worst a temporary in DIR/.tmp, removed at the next open (its
 * writer's pid gone), and an empty entry directory.
 *
 * Copies are made with FICLONE (a reflink: shared blocks, copy on write),
 * else copy_file_range, else read/write, of the data extents only
 * (SEEK_DATA/SEEK_HOLE): a sparse file stays sparse.  A copy is 0644 only
 * if anyone could read the original (its directories too), else 0600; the
 * cache's directories are 0750, so that means the cache directory's group
 * (the control group's, for the default one).  Hard links to the source are not
 * used: `cp new old` rewrites a binary in place, and a hard-linked cache
 * copy would silently change with it.
 *
 * Eviction: an entry's "last reference" is the mtime of its .build-id link
 * (set at insertion, refreshed by bidcache_touch).  bidcache_evict removes
 * the least recently referenced entries that KEEP does not protect.
 *
 * Nothing here knows about the daemon; every call may block (disk I/O,
 * ELF parsing): the daemon calls them from its capture worker only.
 */
#ifndef PERFMAPD_BIDCACHE_H
#define PERFMAPD_BIDCACHE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "perf_abi.h"

#define BIDCACHE_KERNEL		"[kernel.kallsyms]"
#define BIDCACHE_VDSO		"[vdso]"
/*
 * Entries from a mount namespace a user made (NS != 0, see the daemon's
 * record/binaries.h) live under DIR/.ns/<NS>/<path>/<build-id>/: never
 * under a host path, and replaced by the first copy from a trusted one.
 * So do the host's copies of files a user could have written (not root's,
 * or writable by its group or others: bidcache_trusted_file), under
 * NS BIDCACHE_NS_USER: a user who writes the build-id of a system binary
 * into a file of theirs and maps it before the system binary runs must
 * not make it the system binary's copy.
 */
#define BIDCACHE_NS_DIR		".ns"
#define BIDCACHE_NS_USER	1	/* no mount namespace has inode 1 */

struct bidcache {
	int		 dirfd;
	int		 tmpfd;		/* DIR/.tmp: every temporary (bidcache.c) */
	uint64_t	 tmp_removed;	/* left by a crash, removed at open */
	char		 dir[PATH_MAX];
	uint64_t	 size;		/* what entries take (bidcache_dirs_cost), kept by add/evict */
	uint64_t	 entries;
	/*
	 * Asked before each copy, with the source file's owner and size: 0
	 * to go on, or -errno (the copy is refused, ERR says why).  NULL:
	 * every copy is made.  The daemon's quotas live there.
	 */
	int		(*admit)(void *arg, unsigned uid, uint64_t size, char *err,
			    size_t errlen);
	void		*admit_arg;
};

/* Create DIR (and its parents) if needed and open it; sums the entries' sizes. */
int	bidcache_open(struct bidcache *, const char *dir, char *err, size_t errlen);
void	bidcache_close(struct bidcache *);

/*
 * Is ID in the cache?  1 with PATH (if not NULL) set to its file, 0 if not
 * (a link whose target is gone counts as absent), -errno on error.
 */
int	bidcache_find(struct bidcache *, const uint8_t *id, size_t idlen,
	    char *path, size_t pathlen);

/*
 * Insert ID under NAME (an absolute path, BIDCACHE_KERNEL or BIDCACHE_VDSO)
 * from the file open at FD (read with pread; its offset is not used).
 * Except for the kernel's kallsyms, the source and then the copy must carry
 * ID as their build-id.  Returns 1 if inserted, 0 if ID was already there,
 * or -errno with a reason in ERR:
 *	-EILSEQ		the build-id differs (ERR names the one found)
 *	-ENOEXEC	not an ELF file, or a truncated one
 *	-ENOENT		no build-id note
 *	-EINVAL		NAME is not a path the cache can hold ("..", relative,
 *			".build-id" or ".ns" first)
 *	-ENOSPC, ...	from writing the copy, or from ADMIT
 * PATH (if not NULL) gets the cached file's path on success.
 *
 * Who may read the copy, one policy for every cache file (perfmapd.conf(5)):
 * the owner (root) always; group and others exactly when they could read
 * where it came from.  A binary copied from a mapped file or its path is
 * 0644 when anyone could read that file (readable by others, and every
 * directory on its path searchable by others), else 0600 (the copy's group is
 * the cache's, not the file's: its group bit says nothing here); a file of
 * another mount namespace is 0600, its path's directories being another
 * namespace's; the kernel's symbol table (kallsyms, with the kernel's
 * addresses) is the owner's only, as the kernel shows it to root only; a
 * file from a debuginfod server, which hands it to any client, is readable
 * by all (bidcache_add_fd_public), as is the vDSO, mapped into every process
 * (from memory: readable by all, written by the daemon alone).
 */
int	bidcache_add_fd(struct bidcache *, const char *name, const uint8_t *id,
	    size_t idlen, int fd, char *path, size_t pathlen, char *err, size_t errlen);
/* The same for content anyone could have fetched (debuginfod): 0644. */
int	bidcache_add_fd_public(struct bidcache *, const char *name, const uint8_t *id,
	    size_t idlen, int fd, char *path, size_t pathlen, char *err, size_t errlen);
/*
 * The same, the copy root's only whatever the file's mode (a trusted
 * namespace's file reached by a path of another mount namespace: the
 * daemon's own walk of NAME says nothing of who can reach it there).
 */
int	bidcache_add_fd_private(struct bidcache *, const char *name, const uint8_t *id,
	    size_t idlen, int fd, char *path, size_t pathlen, char *err, size_t errlen);
/*
 * The same from a mount namespace NS (0: a trusted one, as
 * bidcache_add_fd).  An entry of ID that another namespace's copy made is
 * replaced by a copy from NS 0; a copy from NS != 0 never replaces one.
 */
int	bidcache_add_fd_ns(struct bidcache *, const char *name, uint64_t ns,
	    const uint8_t *id, size_t idlen, int fd, char *path, size_t pathlen,
	    char *err, size_t errlen);
/* The same from memory (kallsyms text, the vDSO image). */
int	bidcache_add_buf(struct bidcache *, const char *name, const uint8_t *id,
	    size_t idlen, const void *buf, size_t len, char *path, size_t pathlen,
	    char *err, size_t errlen);

/*
 * What an entry's directories take beside its files, charged to its size
 * (SIZE above, max_size, a user's share): BIDCACHE_DIR_COST for each
 * component of its cache-relative name REL (bidcache_entry_name: the
 * mapped path's directories, its name, the build-id's directory) and its
 * .build-id link.  A binary's whole path is made into directories, the
 * shared ones counted again for each entry; without the charge, a user's
 * 1 KB binaries under 2,000-component paths (4 KB each, ext4: an inode
 * and a block) filled the state file system's inodes and blocks while
 * the cache counted a megabyte.
 */
#define BIDCACHE_DIR_COST	4096
uint64_t bidcache_dirs_cost(const char *rel);

/* Could only root have written the file of ST (root's, not writable by group or others)? */
int	bidcache_trusted_file(const struct stat *st);

/* Is the entry of ID from a user's namespace or a user's file (under BIDCACHE_NS_DIR)? */
int	bidcache_untrusted(struct bidcache *, const uint8_t *id, size_t idlen);

/* Mark ID as referenced now (for eviction order). */
void	bidcache_touch(struct bidcache *, const uint8_t *id, size_t idlen);

/*
 * Remove least recently referenced entries until the cache holds at most
 * TARGET bytes.  KEEP (may be NULL) returns non-zero for an entry that
 * must stay (referenced by a retained segment); REF_NS is the entry's
 * last reference (wall clock).  Returns the number of entries removed;
 * *LEFT (if not NULL) gets the size after eviction.
 */
typedef int (*bidcache_keep_fn)(const uint8_t *id, size_t idlen, int64_t ref_ns, void *arg);
int	bidcache_evict(struct bidcache *, uint64_t target, bidcache_keep_fn keep, void *arg,
	    uint64_t *left);

/*
 * The cache-relative name of NAME's entry directory, "<path>/<hex>" with
 * " (deleted)" stripped; -EINVAL if NAME is not absolute, has "." or ".."
 * components, or is too long.  Exposed for tests and for export.
 */
int	bidcache_entry_name(const char *name, const uint8_t *id, size_t idlen,
	    char *out, size_t outlen);
/* ... under BIDCACHE_NS_DIR/<NS>/ when NS != 0. */
int	bidcache_entry_name_ns(const char *name, uint64_t ns, const uint8_t *id,
	    size_t idlen, char *out, size_t outlen);
/*
 * A compressed kernel module (PATH ends in .xz or .zst) open at FD,
 * decompressed into a memfd: its fd, or -EINVAL (not a known suffix),
 * -ENOEXEC (corrupt), -EFBIG, -errno.  The memfd is as trusted
 * (bidcache_trusted_file) as the file at FD: its mode is that file's when
 * that one is trusted, 0666 otherwise.
 */
int	bidcache_decompress(int fd, const char *path);
/* "elf", "kallsyms" or "vdso" for NAME. */
const char *bidcache_basename(const char *name);

#endif
