/*
 * check_buildid_reader.c - the provenance rule of daemon/record/buildid_reader.c
 * and the deadlines of resolver.c, on real files: a build-id comes from the
 * mapped file (this test's own executable mapping, through map_files), or
 * from a path proven to be the mapped file; a symlink, a FIFO, another
 * inode, a file changed since the mapping, or a rewrite in place that keeps
 * the inode never yield the other file's build-id.  (The daemon-level
 * cases, with real processes and perf, are t_provenance*.sh.)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/fs.h>

#include <check.h>

#include "check_main.h"
#include "check_oom.h"

#include "buildid.h"
#include "record/buildid_reader.h"
#include "record/resolver.h"
#include "record/userfs.h"
#include "record/wallclock.h"
#include "walltime.h"

#define NOPID	0x7ffffff0u	/* no such process: map_files fails, the path is tried */

static char dir[PATH_MAX];

static uint64_t
wall_ns(int64_t plus_ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec +
	    (uint64_t)(plus_ms * 1000000LL);
}

/* A mapping made at wall-clock WALL, no step of the clock looked for. */
static struct bid_when
at(uint64_t wall)
{
	return (struct bid_when){ .wall_ns = wall, .since_ns = 0 };
}

static uint64_t
ts_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_bidreader.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
	char	 cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "%s/mnt", dir);
	umount2(cmd, MNT_DETACH);	/* test_resolver_pins_coarse's image, if it failed */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return;
}

/* Copy SRC to DIR/NAME (a new file); its path in OUT.  copy_to waits out the margin too. */
static void
copy_file(const char *src, const char *name, char *out, size_t len)
{
	char	 buf[65536];
	ssize_t	 n;
	int	 in, fd;

	snprintf(out, len, "%s/%s", dir, name);
	ck_assert_int_ge(in = open(src, O_RDONLY), 0);
	ck_assert_int_ge(fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0755), 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(fd, buf, (size_t)n), n);
	close(in);
	close(fd);
}

static void
copy_to(const char *src, const char *name, char *out, size_t len)
{
	copy_file(src, name, out, len);
	/* Older than the ctime margin: a read of it now may be cached. */
	usleep(30000);
}

/* A query about this process's map M (4096 bytes) of PATH in state ST, mapped at MAP_NS. */
static void
query_of_map(const char *path, void *m, const struct stat *st, uint64_t map_ns,
    struct bid_query *q)
{
	memset(q, 0, sizeof(*q));
	q->pid = (uint32_t)getpid();
	q->addr = (uint64_t)(uintptr_t)m;
	q->len = 4096;
	q->has_inode = 1;
	q->maj = major(st->st_dev);
	q->min = minor(st->st_dev);
	q->ino = st->st_ino;
	q->map.wall_ns = map_ns;
	q->filename = path;
}

/* A query about PATH, as a record of pid NOPID mapping it at MAP_NS would ask. */
static void
query_of(const char *path, uint64_t map_ns, struct bid_query *q)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	memset(q, 0, sizeof(*q));
	q->pid = NOPID;
	q->addr = 0x400000;
	q->len = 0x1000;
	q->has_inode = 1;
	q->maj = major(st.st_dev);
	q->min = minor(st.st_dev);
	q->ino = st.st_ino;
	q->map.wall_ns = map_ns;
	q->filename = path;
}

static int
ids_equal(const struct bid_answer *a, const char *path)
{
	uint8_t	 id[BUILD_ID_MAX];
	int	 n = buildid_read_path(path, id);

	return n > 0 && a->size == n && memcmp(a->id, id, (size_t)n) == 0;
}

/* Our own executable mapping: the very file, through map_files. */
/* A reader's guard that refuses every handle (counted). */
static int refusals;

static int
refuse_all(int pathfd, uint32_t pid, char *why, size_t whylen)
{
	(void)pathfd;
	(void)pid;
	snprintf(why, whylen, "refused");
	refusals++;
	return 1;
}

/* Which names are files whose build-id is wanted (perf's anonymous names are not). */
START_TEST(test_is_file)
{
	static const struct {
		const char *name;
		int	 file;
	} t[] = {
		{ "/usr/bin/true", 1 }, { "/", 1 }, { "/dev/null", 1 }, { "/dev/zer", 1 },
		{ "/memfd", 1 }, { "/anon", 1 }, { "/SYS", 1 }, { "/sysv", 1 }, { "/a", 1 },
		{ "//anon", 0 }, { "//anon (deleted)", 0 }, { "//x", 1 },
		{ "/memfd:jit (deleted)", 0 }, { "/dev/zero", 0 }, { "/dev/zero (deleted)", 0 },
		{ "/anon_hugepage", 0 }, { "/anon_hugepage (deleted)", 0 },
		{ "/SYSV00000000", 0 }, { "[vdso]", 0 }, { "[anon:x]", 0 }, { "", 0 },
		{ "x/y", 0 },
	};
	size_t	 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(buildid_reader_is_file(t[i].name) == t[i].file, "%s: %d",
		    t[i].name, !t[i].file);
}
END_TEST

START_TEST(test_map_files)
{
	struct buildid_reader br;
	struct bid_query q;
	struct bid_answer a;
	char	 line[PATH_MAX + 128], exe[PATH_MAX];
	unsigned long long start, end, ino;
	unsigned int maj, min;
	struct stat st;
	FILE	*f;
	ssize_t	 n;
	int	 found = 0, fd;

	ck_assert_int_gt(n = readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);
	exe[n] = '\0';
	ck_assert_ptr_nonnull(f = fopen("/proc/self/maps", "r"));
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		char	 perms[8];
		int	 off = 0;

		if (sscanf(line, "%llx-%llx %7s %*x %x:%x %llu %n", &start, &end, perms, &maj,
		    &min, &ino, &off) == 6 && perms[2] == 'x' && off > 0 &&
		    strncmp(line + off, exe, strlen(exe)) == 0)
			found = 1;
	}
	fclose(f);
	ck_assert(found);
	/* Linked just now (make, then this): older than the ctime margin before it is read. */
	while (stat(exe, &st) == 0 && ts_of(&st.st_ctim) + 50000000ULL > wall_ns(0))
		usleep(10000);
	ck_assert_int_eq(buildid_reader_init(&br), 0);
	memset(&q, 0, sizeof(q));
	q.pid = (uint32_t)getpid();
	q.addr = start;
	q.len = end - start;
	q.has_inode = 1;
	q.maj = maj;
	q.min = min;
	q.ino = ino;
	q.filename = exe;
	buildid_reader_resolve(&br, &q, &a, &fd);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert(ids_equal(&a, exe));
	ck_assert_int_eq(a.cached, 0);
	ck_assert_int_ge(fd, 0);	/* the file read, for the capture */
	close(fd);
	/* Again: from the cache, the mapped file's state unchanged. */
	buildid_reader_resolve(&br, &q, &a, &fd);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert_int_eq(a.cached, 1);
	ck_assert_int_eq(fd, -1);
	/*
	 * The record's generation another than the file's: its inode number
	 * was freed and handed to a new file (ext4 reuses numbers), which is
	 * not the mapped one, from the cache or read, on the same device.
	 * Before, only btrfs and overlayfs files were asked their generation.
	 */
	{
		unsigned int gen = 0;
		int	 efd = open(exe, O_RDONLY | O_CLOEXEC);

		ck_assert_int_ge(efd, 0);
		if (ioctl(efd, FS_IOC_GETVERSION, &gen) == 0) {
			q.gen = (uint32_t)gen ^ 1;
			buildid_reader_resolve(&br, &q, &a, NULL);
			ck_assert_int_eq(a.cause, BIDC_GONE);
			q.gen = (uint32_t)gen;
			buildid_reader_resolve(&br, &q, &a, NULL);
			ck_assert_int_eq(a.cause, BIDC_OK);
			ck_assert_int_eq(a.cached, 1);
			q.gen = 0;
		} else
			fprintf(stderr, "test_map_files: %s keeps no generation, not tried\n", exe);
		close(efd);
	}
	/* The range maps another inode than the record's: not this answer. */
	q.ino = ino + 1;
	q.filename = "/nonexistent/elsewhere";
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_GONE);
	buildid_reader_free(&br);

	/*
	 * A guard that refuses the file (a user's file system, the lane
	 * another thread's: resolver.c): "user-fs", through the mapping and
	 * by name, before anything is read; the cache is not asked either.
	 */
	ck_assert_int_eq(buildid_reader_init(&br), 0);
	br.guard = refuse_all;
	q.ino = ino;
	q.filename = exe;
	refusals = 0;
	buildid_reader_resolve(&br, &q, &a, &fd);
	ck_assert_int_eq(a.cause, BIDC_USERFS);
	ck_assert_int_eq(fd, -1);
	ck_assert_int_ge(refusals, 1);
	q.pid = 0x3fffffff;		/* no such process: by name, mapped a moment ago */
	q.map.wall_ns = wall_ns(0);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_USERFS);
	ck_assert_str_eq(buildid_cause_name(BIDC_USERFS), "user-fs");
	buildid_reader_free(&br);
}
END_TEST

/*
 * A library rewritten in place after it was mapped (cp over it: the same
 * inode, other bytes): map_files reaches the rewritten file, whose
 * build-id is not the mapping's.  Unknown (changed), not the new one.
 * Unlinked after the mapping (an upgrade renames a new file over it),
 * its bytes unchanged: still proven.
 */
START_TEST(test_map_files_rewritten)
{
	struct buildid_reader br;
	struct bid_query q;
	struct bid_answer a;
	struct stat st;
	char	 p[PATH_MAX], buf[65536];
	void	*m;
	ssize_t	 n;
	int	 fd, in;

	ck_assert_int_eq(buildid_reader_init(&br), 0);
	copy_to("/proc/self/exe", "lib", p, sizeof(p));
	ck_assert_int_ge(fd = open(p, O_RDONLY), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_ptr_ne(m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0), MAP_FAILED);
	close(fd);
	query_of_map(p, m, &st, wall_ns(0), &q);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert(ids_equal(&a, "/proc/self/exe"));
	usleep(60000);		/* the rewrite, 60 ms after the mapping */
	ck_assert_int_ge(in = open("/usr/bin/true", O_RDONLY), 0);
	ck_assert_int_ge(fd = open(p, O_WRONLY | O_TRUNC), 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(fd, buf, (size_t)n), n);
	close(in);
	close(fd);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_msg(a.cause == BIDC_CHANGED, "cause %d (the rewritten file's build-id: %d)",
	    a.cause, a.cause == BIDC_OK && ids_equal(&a, "/usr/bin/true"));
	ck_assert_int_eq(munmap(m, 4096), 0);
	/*
	 * Linked elsewhere and its mode changed after the mapping: taken for a
	 * write (cp -p sets the mtime back; the ctime no one sets).  Then
	 * unlinked (an upgrade: dpkg's .dpkg-tmp link, the rename over it, the
	 * link's removal), its bytes as they were: proven by its mtime.
	 */
	copy_to("/proc/self/exe", "lib2", p, sizeof(p));
	ck_assert_int_ge(fd = open(p, O_RDONLY), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_ptr_ne(m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0), MAP_FAILED);
	close(fd);
	q.addr = (uint64_t)(uintptr_t)m;
	q.ino = st.st_ino;
	q.map.wall_ns = wall_ns(0);
	usleep(60000);
	snprintf(buf, sizeof(buf), "%s.dpkg-tmp", p);
	ck_assert_int_eq(link(p, buf), 0);
	ck_assert_int_eq(chmod(p, 0700), 0);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_CHANGED);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(unlink(buf), 0);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert(ids_equal(&a, "/proc/self/exe"));
	ck_assert_int_eq(munmap(m, 4096), 0);
	buildid_reader_free(&br);
}
END_TEST

/*
 * A copy of this program named NAME (its path into P), its first page
 * mapped as a loader would, and *Q the query of that mapping, made now.
 */
static void *
map_copy(const char *name, char *p, size_t plen, struct bid_query *q)
{
	struct stat st;
	void	*m;
	int	 fd;

	copy_to("/proc/self/exe", name, p, plen);
	ck_assert_int_ge(fd = open(p, O_RDONLY), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_ptr_ne(m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0), MAP_FAILED);
	close(fd);
	memset(q, 0, sizeof(*q));
	q->pid = (uint32_t)getpid();
	q->addr = (uint64_t)(uintptr_t)m;
	q->len = 4096;
	q->has_inode = 1;
	q->maj = major(st.st_dev);
	q->min = minor(st.st_dev);
	q->ino = st.st_ino;
	q->map.wall_ns = wall_ns(0);
	q->filename = p;
	return m;
}

/* A guard that, at its second look, rewrites REWRITE_PATH in place with /usr/bin/true. */
static const char *rewrite_path;
static int rewrite_calls;

static int
rewrite_guard(int pathfd, uint32_t pid, char *why, size_t whylen)
{
	char	 buf[65536];
	ssize_t	 n;
	int	 in, fd;

	if (++rewrite_calls != 2)
		return 0;
	ck_assert_int_ge(in = open("/usr/bin/true", O_RDONLY), 0);
	ck_assert_int_ge(fd = open(rewrite_path, O_WRONLY | O_TRUNC), 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(fd, buf, (size_t)n), n);
	close(in);
	close(fd);
	return 0;
}

/*
 * Rewritten in place between rule 1's first look (its stat, unchanged
 * since the mapping) and the open it reads from: the file read is judged
 * too, and the answer is "changed", not the new bytes' build-id (before:
 * only the first look was).
 */
START_TEST(test_map_files_rewritten_between)
{
	struct buildid_reader br;
	struct bid_query q;
	struct bid_answer a;
	char	 p[PATH_MAX];
	void	*m;

	ck_assert_int_eq(buildid_reader_init(&br), 0);
	m = map_copy("libr", p, sizeof(p), &q);
	usleep(60000);		/* the rewrite comes 60 ms after the mapping */
	rewrite_path = p;
	rewrite_calls = 0;
	br.guard = rewrite_guard;
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_ge(rewrite_calls, 2);
	ck_assert_msg(a.cause == BIDC_CHANGED, "cause %d (the rewritten file's build-id: %d)",
	    a.cause, a.cause == BIDC_OK && ids_equal(&a, "/usr/bin/true"));
	ck_assert_int_eq(munmap(m, 4096), 0);
	buildid_reader_free(&br);
}
END_TEST

/*
 * A memfd whose inode number is a record's, mapped where the record's
 * file was (what a user can arrange by making memfds until one gets the
 * number of a system library): another device, so not the record's file,
 * neither read nor answered from the cache.
 */
START_TEST(test_map_files_device)
{
	struct buildid_reader br;
	struct bid_query q;
	struct bid_answer a;
	struct stat st, ost, root;
	char	 buf[65536], exe[PATH_MAX];
	ssize_t	 n;
	void	*p;
	int	 in, mfd, fd;

	ck_assert_int_gt(n = readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);
	exe[n] = '\0';
	ck_assert_int_ge(mfd = memfd_create("check-forged", MFD_CLOEXEC), 0);
	ck_assert_int_ge(in = open(exe, O_RDONLY), 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(mfd, buf, (size_t)n), n);
	close(in);
	ck_assert_int_eq(fstat(mfd, &st), 0);
	ck_assert_int_eq(stat("/", &root), 0);
	ck_assert_uint_ne(st.st_dev, root.st_dev);
	ck_assert_ptr_ne(p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, mfd, 0),
	    MAP_FAILED);
	usleep(30000);		/* older than the ctime margin */
	ck_assert_int_eq(buildid_reader_init(&br), 0);
	memset(&q, 0, sizeof(q));
	q.pid = (uint32_t)getpid();
	q.addr = (uint64_t)(uintptr_t)p;
	q.len = ((uint64_t)st.st_size + 4095) & ~4095ULL;
	q.has_inode = 1;
	q.maj = major(root.st_dev);	/* the record: a file of / with the memfd's inode number */
	q.min = minor(root.st_dev);
	q.ino = st.st_ino;
	q.filename = "/nonexistent/library.so";
	fd = -2;
	buildid_reader_resolve(&br, &q, &a, &fd);
	ck_assert_int_eq(a.cause, BIDC_GONE);
	ck_assert_int_eq(fd, -1);
	/* The memfd's own record: read, and remembered. */
	q.maj = major(st.st_dev);
	q.min = minor(st.st_dev);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert(ids_equal(&a, exe));
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cached, 1);
	/* The forged record again: not from the cache either. */
	q.maj = major(root.st_dev);
	q.min = minor(root.st_dev);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_GONE);
	/* Nor for the capture's opening of the same range. */
	ck_assert_int_eq(buildid_reader_open_mapped(q.pid, q.addr, q.len, 1, q.maj, q.min,
	    q.ino, 0, NULL, &ost), -ESTALE);
	buildid_reader_free(&br);
	munmap(p, (size_t)st.st_size);
	close(mfd);
}
END_TEST

/* A guard that refuses one device and counts what it is shown of it. */
static dev_t	 guard_dev;
static int	 guard_seen;
static ino_t	 guard_ino;		/* the inode last refused */

static int
refuse_dev(int pathfd, uint32_t pid, char *why, size_t whylen)
{
	struct stat st;

	if (fstat(pathfd, &st) == 0 && st.st_dev == guard_dev) {
		guard_ino = st.st_ino;
		snprintf(why, whylen, "refusal %d of device %u:%u", ++guard_seen,
		    major(st.st_dev), minor(st.st_dev));
		return 1;
	}
	return 0;
}

static char	 guard_why[128];
static const struct bid_guard refuse_dev_guard[1] = { { refuse_dev, guard_why,
    sizeof(guard_why), 0 } };

/* The guard's reason, as the caller gets it: the Nth refusal of the device. */
static void
guard_said(int n)
{
	char	 want[128];

	snprintf(want, sizeof(want), "refusal %d of device %u:%u", n, major(guard_dev),
	    minor(guard_dev));
	ck_assert_str_eq(guard_why, want);
	guard_why[0] = '\0';
}

/*
 * A descriptor's mount id from its fdinfo, userfs_host_mount's way before
 * Linux 5.8 (no STATX_MNT_ID): the mount statx names, on three mounts.
 */
START_TEST(test_fdinfo_mount_id)
{
	static const char *const files[] = { "/", "/proc/self/status", "/dev/null" };
	struct statx stx;
	uint64_t seen[3];

	for (size_t i = 0; i < 3; i++) {
		int	 fd = open(files[i], O_RDONLY | O_CLOEXEC);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx), 0);
		ck_assert(stx.stx_mask & STATX_MNT_ID);
		seen[i] = userfs_fdinfo_mount_id(fd);
		ck_assert_msg(seen[i] == stx.stx_mnt_id, "%s: fdinfo's mount %llu, statx's %llu",
		    files[i], (unsigned long long)seen[i], (unsigned long long)stx.stx_mnt_id);
		close(fd);
	}
	ck_assert(seen[0] != seen[1]);
	ck_assert_int_eq(userfs_fdinfo_mount_id(-1), 0);
}
END_TEST

/*
 * The openers' guard (the capture worker's userfs_fd): shown the mount a
 * path crosses before anything is looked up in it, and the file a
 * map_files link leads to at the open, whatever an earlier look said.
 * A tmpfs mounted in this test's own mount namespace stands for a user's
 * FUSE file system.
 */
START_TEST(test_guard)
{
	struct stat st, ms;
	char	 cmd[2 * PATH_MAX], mnt[PATH_MAX], sub[PATH_MAX], file[PATH_MAX];
	void	*p;
	int	 fd;

	if (getenv("CK_FORK") != NULL && strcmp(getenv("CK_FORK"), "no") == 0)
		ck_abort_msg("needs CK_FORK: it unshares its mount namespace");
	if (unshare(CLONE_NEWNS) != 0 || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		ck_abort_msg("cannot unshare the mount namespace: %s", strerror(errno));
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	ck_assert_int_eq(mkdir(mnt, 0755), 0);
	ck_assert_int_eq(mount("check-guard", mnt, "tmpfs", 0, NULL), 0);
	snprintf(sub, sizeof(sub), "%s/sub", mnt);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe '%s/prog'", (int)getpid(), sub);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(file, sizeof(file), "%s/prog", sub);
	ck_assert_int_eq(stat(file, &st), 0);
	ck_assert_int_eq(stat(mnt, &ms), 0);
	guard_dev = ms.st_dev;

	/* By path: refused at the mount's root, before "sub" is looked up in it. */
	guard_seen = 0;
	ck_assert_int_eq(buildid_reader_open_verified(file, major(st.st_dev), minor(st.st_dev),
	    st.st_ino, 0, refuse_dev_guard, &ms), -EBID_GUARD);
	ck_assert_int_eq(guard_seen, 1);
	guard_said(1);
	guard_seen = 0;
	ck_assert_int_eq(buildid_reader_open_regular(file, 0, refuse_dev_guard, &ms), -EBID_GUARD);
	ck_assert_int_eq(guard_seen, 1);
	guard_said(1);
	/* A directory on the way that is a symlink: ELOOP, as without a guard. */
	snprintf(cmd, sizeof(cmd), "%s/lnk", dir);
	ck_assert_int_eq(symlink(sub, cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/lnk/prog", dir);
	ck_assert_int_eq(buildid_reader_open_regular(cmd, 0, refuse_dev_guard, &ms), -ELOOP);
	ck_assert_int_eq(buildid_reader_open_regular(cmd, 0, NULL, &ms), -ELOOP);
	/* Without a guard (the reader's), the same file opens. */
	ck_assert_int_ge(fd = buildid_reader_open_verified(file, major(st.st_dev),
	    minor(st.st_dev), st.st_ino, 0, NULL, &ms), 0);
	close(fd);

	/* Through map_files: the guard judges the mapped file itself. */
	ck_assert_int_ge(fd = open(file, O_RDONLY), 0);
	ck_assert_ptr_ne(p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0), MAP_FAILED);
	close(fd);
	guard_seen = 0;
	ck_assert_int_eq(buildid_reader_open_mapped((uint32_t)getpid(), (uint64_t)(uintptr_t)p,
	    4096, 1, major(st.st_dev), minor(st.st_dev), st.st_ino, 0, refuse_dev_guard, &ms),
	    -EBID_GUARD);
	ck_assert_int_eq(guard_seen, 1);
	guard_said(1);
	ck_assert_int_ge(fd = buildid_reader_open_mapped((uint32_t)getpid(),
	    (uint64_t)(uintptr_t)p, 4096, 1, major(st.st_dev), minor(st.st_dev), st.st_ino, 0,
	    NULL, &ms), 0);
	close(fd);
	munmap(p, 4096);
	umount2(mnt, MNT_DETACH);
}
END_TEST

/* A guard that refuses nothing and counts what it is shown. */
static int	 guard_shown;

static int
count_all(int pathfd, uint32_t pid, char *why, size_t whylen)
{
	(void)pathfd, (void)pid, (void)why, (void)whylen;
	guard_shown++;
	return 0;
}

static char	 count_why[128];
static const struct bid_guard count_guard[1] = { { count_all, count_why,
    sizeof(count_why), 0 } };

/* DIR/NAME made N directories "a" deep (mkdir -p), its path into OUT. */
static void
deep_dir(const char *name, int n, char *out, size_t len)
{
	size_t	 k = (size_t)snprintf(out, len, "%s/%s", dir, name);

	ck_assert_int_eq(mkdir(out, 0755), 0);
	for (int i = 0; i < n; i++) {
		ck_assert(k + 2 < len);
		k += (size_t)snprintf(out + k, len - k, "/a");
		ck_assert_int_eq(mkdir(out, 0755), 0);
	}
}

/*
 * A path's walk asks the guard once a mount, not once a directory: a
 * user's path of hundreds of directories costs what a short one does
 * (t_hostile_cachedirs: a dozen paths 400 deep kept the reads past their
 * deadline under ASan).  A mount crossed deep down is still judged before
 * anything is looked up in it.
 */
START_TEST(test_guard_deep)
{
	struct stat st, ms;
	char	 deep[PATH_MAX], file[PATH_MAX], mnt[PATH_MAX], cmd[2 * PATH_MAX];
	ino_t	 root;
	int	 fd, shallow;

	copy_file("/proc/self/exe", "prog", file, sizeof(file));
	guard_shown = 0;
	ck_assert_int_ge(fd = buildid_reader_open_regular(file, 0, count_guard, &st), 0);
	close(fd);
	shallow = guard_shown;
	deep_dir("deep", 300, deep, sizeof(deep));
	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe '%s/prog'", (int)getpid(), deep);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(file, sizeof(file), "%s/prog", deep);
	guard_shown = 0;
	ck_assert_int_ge(fd = buildid_reader_open_regular(file, 0, count_guard, &st), 0);
	close(fd);
	ck_assert_msg(guard_shown == shallow, "the guard was shown %d handles for a path "
	    "300 directories deep, %d for one beside it", guard_shown, shallow);

	/* A tmpfs 100 directories down, the file 100 further: refused at its root. */
	if (getenv("CK_FORK") != NULL && strcmp(getenv("CK_FORK"), "no") == 0)
		ck_abort_msg("needs CK_FORK: it unshares its mount namespace");
	if (unshare(CLONE_NEWNS) != 0 || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		ck_abort_msg("cannot unshare the mount namespace: %s", strerror(errno));
	deep_dir("over", 100, deep, sizeof(deep));
	ck_assert_int_eq(mount("check-guard-deep", deep, "tmpfs", 0, NULL), 0);
	snprintf(mnt, sizeof(mnt), "%s", deep);
	ck_assert_int_eq(stat(deep, &ms), 0);
	guard_dev = ms.st_dev;
	root = ms.st_ino;
	strcat(deep, "/b");
	ck_assert_int_eq(mkdir(deep, 0755), 0);
	for (int i = 0; i < 100; i++) {
		strcat(deep, "/a");
		ck_assert_int_eq(mkdir(deep, 0755), 0);
	}
	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe '%s/prog'", (int)getpid(), deep);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(file, sizeof(file), "%s/prog", deep);
	guard_seen = 0;
	ck_assert_int_eq(buildid_reader_open_regular(file, 0, refuse_dev_guard, &ms), -EBID_GUARD);
	ck_assert_int_eq(guard_seen, 1);
	ck_assert_msg(guard_ino == root, "refused at inode %lu, not at the mount's root %lu",
	    (unsigned long)guard_ino, (unsigned long)root);
	guard_said(1);
	umount2(mnt, MNT_DETACH);
}
END_TEST

/* The path of a gone process: only the proven file, unchanged since the mapping. */
START_TEST(test_by_name)
{
	struct buildid_reader br;
	struct bid_query q;
	struct bid_answer a;
	char	 p[PATH_MAX], link[PATH_MAX], sub[PATH_MAX], via[PATH_MAX];

	ck_assert_int_eq(buildid_reader_init(&br), 0);
	copy_to("/proc/self/exe", "prog", p, sizeof(p));
	/* Proven and unchanged since: mapped a second after its last change. */
	query_of(p, wall_ns(1000), &q);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert(ids_equal(&a, p));
	/* Changed after (or too close to) the mapping. */
	query_of(p, wall_ns(-60000), &q);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_CHANGED);
	/* When it was mapped is unknown (the start-up scan): nothing is proven, the path not walked. */
	query_of(p, 0, &q);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_GONE);
	/* Another inode at the path. */
	query_of(p, wall_ns(1000), &q);
	q.ino++;
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_REPLACED);
	query_of(p, wall_ns(1000), &q);
	q.min++;
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_REPLACED);
	/* Unlinked when it was mapped: nothing at a path to prove. */
	query_of(p, wall_ns(1000), &q);
	snprintf(via, sizeof(via), "%s (deleted)", p);
	q.filename = via;
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_GONE);
	/* No record identity: nothing to compare. */
	query_of(p, wall_ns(1000), &q);
	q.has_inode = 0;
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_GONE);
	/*
	 * A symlink, final or in the middle, is never followed: a final one
	 * is itself the file at the path (another inode), one in the middle
	 * leaves no path to the file.
	 */
	snprintf(link, sizeof(link), "%s/link", dir);
	ck_assert_int_eq(symlink(p, link), 0);
	query_of(p, wall_ns(1000), &q);
	q.filename = link;
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_REPLACED);
	snprintf(sub, sizeof(sub), "%s/dirlink", dir);
	ck_assert_int_eq(symlink(dir, sub), 0);
	snprintf(via, sizeof(via), "%s/prog", sub);
	q.filename = via;
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_GONE);
	buildid_reader_free(&br);
}
END_TEST

/*
 * The cheap proof (buildid_reader_known): the cache's answer only for the
 * record's inode at its path, unchanged since before the mapping, in the
 * state the cache read; never a read of its own.
 */
START_TEST(test_known)
{
	struct buildid_reader br;
	struct bid_query q;
	struct bid_answer a;
	struct timespec ts[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };
	char	 p[PATH_MAX], link[PATH_MAX];
	int	 fd;

	ck_assert_int_eq(buildid_reader_init(&br), 0);
	copy_to("/proc/self/exe", "prog", p, sizeof(p));
	query_of(p, wall_ns(1000), &q);
	/* Nothing cached yet: no answer, and nothing read. */
	ck_assert_int_eq(buildid_reader_known(&br, &q, at(q.map.wall_ns), &a, NULL), 0);
	ck_assert_uint_eq(br.reads, 0);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_OK);
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(buildid_reader_known(&br, &q, at(q.map.wall_ns), &a, NULL), 1);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert(ids_equal(&a, p));
	ck_assert_uint_eq(br.reads, 1);
	/* One mapping of the group made before the file's last change. */
	ck_assert_int_eq(buildid_reader_known(&br, &q, at(wall_ns(-60000)), &a, NULL), 0);
	ck_assert_int_eq(buildid_reader_known(&br, &q, at(0), &a, NULL), 0);
	/* Another inode, or no inode to compare. */
	q.ino++;
	ck_assert_int_eq(buildid_reader_known(&br, &q, at(q.map.wall_ns), &a, NULL), 0);
	query_of(p, wall_ns(1000), &q);
	q.has_inode = 0;
	ck_assert_int_eq(buildid_reader_known(&br, &q, at(q.map.wall_ns), &a, NULL), 0);
	/* A final symlink is not followed. */
	snprintf(link, sizeof(link), "%s/link", dir);
	ck_assert_int_eq(symlink(p, link), 0);
	query_of(p, wall_ns(1000), &q);
	q.filename = link;
	ck_assert_int_eq(buildid_reader_known(&br, &q, at(q.map.wall_ns), &a, NULL), 0);
	/* Written in place since the cache read it: its state is not the cache's. */
	ck_assert_int_ge(fd = open(p, O_WRONLY), 0);
	ck_assert_int_eq(pwrite(fd, "x", 1, 4096), 1);
	ck_assert_int_eq(futimens(fd, ts), 0);
	close(fd);
	query_of(p, wall_ns(1000), &q);
	ck_assert_int_eq(buildid_reader_known(&br, &q, at(q.map.wall_ns), &a, NULL), 0);
	buildid_reader_free(&br);
}
END_TEST


/*
 * The wall clock's steps (wallclock.h), on made-up readings: a move of the
 * offset by more than WALLCLOCK_STEP_NS from the last step's, at once or
 * added up, is a step, seen at the monotonic time of the look.
 */
START_TEST(test_wallclock_steps)
{
	const int64_t ms = 1000000, s = 1000 * ms, w0 = 1795000000LL * s;
	const uint64_t m0 = 1000000ULL * (uint64_t)s;	/* later than any real look here */
	uint64_t n0, slow;
	int64_t	 off;
	int	 i;

	/* The first look (or, after real looks, a step to these readings). */
	wallclock_look_at(w0, m0);
	n0 = wallclock_steps();
	ck_assert_int_eq(wallclock_offset(), w0 - (int64_t)m0);
	ck_assert(!wallclock_stepped_after(m0));
	/* Within the bound: no step, the offset kept. */
	wallclock_look_at(w0 + 10 * s + 4 * ms, m0 + 10 * (uint64_t)s);
	wallclock_look_at(w0 + 11 * s - 4 * ms, m0 + 11 * (uint64_t)s);
	ck_assert_uint_eq(wallclock_steps(), n0);
	ck_assert(!wallclock_stepped_after(m0));
	ck_assert_int_eq(wallclock_offset(), w0 - (int64_t)m0);
	/* Forward by 6 ms: a step, at that look. */
	wallclock_look_at(w0 + 20 * s + 6 * ms, m0 + 20 * (uint64_t)s);
	ck_assert_uint_eq(wallclock_steps(), n0 + 1);
	ck_assert(wallclock_stepped_after(m0 + 20 * (uint64_t)s - 1));
	ck_assert(!wallclock_stepped_after(m0 + 20 * (uint64_t)s));
	ck_assert_int_eq(wallclock_offset(), w0 + 6 * ms - (int64_t)m0);
	/* Back by a second. */
	wallclock_look_at(w0 + 29 * s + 6 * ms, m0 + 30 * (uint64_t)s);
	ck_assert_uint_eq(wallclock_steps(), n0 + 2);
	ck_assert(wallclock_stepped_after(m0 + 30 * (uint64_t)s - 1));
	/* Small steps, a millisecond back a look: the sixth adds up past the bound. */
	for (i = 1; i <= 5; i++)
		wallclock_look_at(w0 + (29 + i) * s + 6 * ms - i * ms, m0 + (30 + (uint64_t)i) * (uint64_t)s);
	ck_assert_uint_eq(wallclock_steps(), n0 + 2);
	wallclock_look_at(w0 + 35 * s, m0 + 36 * (uint64_t)s);
	ck_assert_uint_eq(wallclock_steps(), n0 + 3);
	ck_assert(wallclock_stepped_after(m0 + 36 * (uint64_t)s - 1));
	/* A look with an earlier monotonic time (another thread's) keeps the later step. */
	wallclock_look_at(w0 + 40 * s, m0 + 31 * (uint64_t)s);
	ck_assert_uint_eq(wallclock_steps(), n0 + 4);
	ck_assert(wallclock_stepped_after(m0 + 36 * (uint64_t)s - 1));
	ck_assert(!wallclock_stepped_after(m0 + 36 * (uint64_t)s));
	/*
	 * A look too slow to tell (its reads 4 ms apart), the offset as it
	 * was: no proof stands on it or spans it, but nothing is moved or
	 * dropped.
	 */
	off = wallclock_offset();
	slow = wallclock_slow_looks();
	wallclock_look_at_err(off + (int64_t)(m0 + 50 * (uint64_t)s), m0 + 50 * (uint64_t)s,
	    2 * (uint64_t)ms);
	ck_assert(wallclock_stepped_after(m0 + 50 * (uint64_t)s));
	ck_assert(!wallclock_stepped_after(m0 + 50 * (uint64_t)s + 1));
	ck_assert_uint_eq(wallclock_steps(), n0 + 4);
	ck_assert_int_eq(wallclock_offset(), off);
	ck_assert_uint_eq(wallclock_slow_looks(), slow + 1);
	/* A tight look (80 us) 4.95 ms off: within the bound, but not surely: a step. */
	wallclock_look_at_err(off + 4950000 + (int64_t)(m0 + 51 * (uint64_t)s),
	    m0 + 51 * (uint64_t)s, 80000);
	ck_assert_uint_eq(wallclock_steps(), n0 + 5);
	ck_assert_uint_eq(wallclock_slow_looks(), slow + 1);
	/* 4.9 ms further, within 40 us: within the bound surely, no step. */
	wallclock_look_at_err(off + 4950000 + 4900000 + (int64_t)(m0 + 52 * (uint64_t)s),
	    m0 + 52 * (uint64_t)s, 40000);
	ck_assert_uint_eq(wallclock_steps(), n0 + 5);
}
END_TEST

/*
 * Looks at the clocks on a machine whose CPUs are all busy see no step:
 * a thread preempted between the two reads of a look made the offset seem
 * moved by its wait (up to 20 ms here with six spinners on two CPUs, a
 * hundred times in 5 s), and a burst's build-ids were refused "clock" by
 * the thousand.
 */
START_TEST(test_wallclock_busy)
{
	pid_t	 spin[6];
	uint64_t n0, end;
	long	 looks = 0;

	wallclock_look(NULL);
	n0 = wallclock_steps();
	for (size_t i = 0; i < 6; i++) {
		ck_assert_int_ge(spin[i] = fork(), 0);
		if (spin[i] == 0) {
			/* gone with the test, whatever ends it */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				;
		}
	}
	for (end = mono_ns() + 2000000000ULL; mono_ns() < end; looks++)
		wallclock_look(NULL);
	for (size_t i = 0; i < 6; i++) {
		kill(spin[i], SIGKILL);
		waitpid(spin[i], NULL, 0);
	}
	ck_assert_msg(wallclock_steps() == n0, "%llu steps seen in %ld looks of a clock "
	    "nobody set", (unsigned long long)(wallclock_steps() - n0), looks);
}
END_TEST

/* A step the next look will see: the wall clock a second back, then as it is. */
static void
clock_step(void)
{
	struct timespec w, m;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &w);
	wallclock_look_at((int64_t)w.tv_sec * 1000000000LL + w.tv_nsec - 1000000000LL,
	    (uint64_t)m.tv_sec * 1000000000ULL + (uint64_t)m.tv_nsec);
	wallclock_look(NULL);
}

/*
 * A step of the wall clock after a mapping: its proof by name is refused
 * ("clock"), as is the cheap proof; the cache of reads is emptied (its
 * states' timestamps may come again); a mapping made after the step is
 * proven again, by a new read.
 */
START_TEST(test_clock_step)
{
	struct buildid_reader br;
	struct bid_query q;
	struct bid_answer a;
	char	 p[PATH_MAX];
	uint64_t before, steps;

	ck_assert_int_eq(buildid_reader_init(&br), 0);
	copy_to("/proc/self/exe", "prog", p, sizeof(p));
	wallclock_look(NULL);
	before = mono_ns();
	query_of(p, wall_ns(1000), &q);
	q.map.since_ns = before;
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert_int_eq(buildid_reader_known(&br, &q, q.map, &a, NULL), 1);
	ck_assert_uint_eq(br.reads, 1);

	steps = wallclock_steps();
	clock_step();
	ck_assert_uint_eq(wallclock_steps(), steps + 2);
	/* The mapping of before: no proof by time. */
	ck_assert_int_eq(buildid_reader_known(&br, &q, q.map, &a, NULL), 0);
	memset(&a, 0, sizeof(a));
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_CLOCK);
	ck_assert_str_eq(buildid_cause_name(BIDC_CLOCK), "clock");
	ck_assert_uint_eq(br.reads, 1);
	/* A mapping after it: proven, read again (the cache was emptied). */
	q.map.since_ns = mono_ns();
	ck_assert_int_eq(buildid_reader_known(&br, &q, q.map, &a, NULL), 0);
	memset(&a, 0, sizeof(a));
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert(!a.cached);
	ck_assert(ids_equal(&a, p));
	ck_assert_uint_eq(br.reads, 2);
	buildid_reader_free(&br);
}
END_TEST

/*
 * Rule 1 (map_files) after a step of the wall clock: its proof that the
 * mapped file was not rewritten since the mapping is by time too, and is
 * refused ("clock") as rule 2's (before: a step back could put a rewrite
 * before the mapping, and the new bytes' build-id was taken).
 */
START_TEST(test_map_files_clock_step)
{
	struct buildid_reader br;
	struct bid_query q;
	struct bid_answer a;
	char	 p[PATH_MAX];
	void	*m;

	ck_assert_int_eq(buildid_reader_init(&br), 0);
	m = map_copy("libc1", p, sizeof(p), &q);
	wallclock_look(NULL);
	q.map.since_ns = mono_ns();
	q.map.wall_ns = wall_ns(0);
	clock_step();
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_CLOCK);
	/* a mapping after the step: proven */
	q.map.since_ns = mono_ns();
	q.map.wall_ns = wall_ns(0);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert(ids_equal(&a, "/proc/self/exe"));
	ck_assert_int_eq(munmap(m, 4096), 0);
	buildid_reader_free(&br);
}
END_TEST

/*
 * A step no look has seen yet is seen by the proof's own look, made after
 * its fstat: the reference offset is set a second ahead of the clocks (as
 * if the wall clock had just stepped back a second), and a mapping made
 * after that setting is then refused "clock", not proven from a state the
 * step may have given old timestamps.  (Without that look the proof would
 * stand: nothing else looks at the clocks here.)
 */
START_TEST(test_step_seen_by_the_proof)
{
	struct buildid_reader br;
	struct bid_query q;
	struct bid_answer a;
	char	 p[PATH_MAX];
	uint64_t steps;

	ck_assert_int_eq(buildid_reader_init(&br), 0);
	copy_to("/proc/self/exe", "prog", p, sizeof(p));
	query_of(p, wall_ns(1000), &q);
	/* The reference a second ahead: a step at this look, none seen since. */
	wallclock_look_at((int64_t)wall_ns(1000), mono_ns());
	q.map.since_ns = mono_ns();
	steps = wallclock_steps();
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_msg(a.cause == BIDC_CLOCK, "cause %s: the proof did not look at the clocks "
	    "after its fstat", buildid_cause_name(a.cause));
	ck_assert_uint_eq(wallclock_steps(), steps + 1);
	ck_assert_uint_eq(br.reads, 0);
	/* Seen now: a mapping after it is proven. */
	q.map.since_ns = mono_ns();
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert(ids_equal(&a, p));
	buildid_reader_free(&br);
}
END_TEST

/*
 * resolver_pinned for a mapping made at TIME (read before the call) and
 * WHEN, the loop's look at the clock now, after TIME.
 */
static int
pin_proves(struct resolver *res, const struct record_mmap *m, uint64_t time, struct bid_when when,
    struct bid_answer *a)
{
	return resolver_pinned(res, m, time, when, mono_ns() + 1, a);
}

/* The record of pid NOPID mapping the file of BQ. */
static void
mmap_of(const struct bid_query *bq, struct record_mmap *m)
{
	memset(m, 0, sizeof(*m));
	m->pid = NOPID;
	m->addr = 0x400000;
	m->len = 0x1000;
	m->has_inode = 1;
	m->maj = bq->maj;
	m->min = bq->min;
	m->ino = bq->ino;
	m->filename = bq->filename;
}

/* Reads of one file queued together: one proof, every request answered. */
START_TEST(test_resolver_group)
{
	struct resolver *res;
	struct resolve_req *q[8];
	struct record_mmap m;
	struct bid_query bq;
	char	 p[PATH_MAX], err[256];
	uint64_t now;
	int	 i;

	copy_to("/proc/self/exe", "prog", p, sizeof(p));
	query_of(p, 0, &bq);
	mmap_of(&bq, &m);
	ck_assert_int_eq(resolver_start(&res, 0, err, sizeof(err)), 0);
	now = mono_ns();
	for (i = 0; i < 8; i++) {
		/* Every other one of another inode: answered on its own. */
		m.ino = bq.ino + (uint64_t)(i & 1);
		ck_assert_ptr_nonnull(q[i] = resolver_req_new(res, &m, at(wall_ns(1000)), now));
		resolver_queue(res, q[i]);
	}
	resolver_kick(res);
	for (i = 0; i < 8; i++) {
		resolver_wait(res, q[i]);
		ck_assert_int_eq(resolver_req_done(res, q[i], now, 0), 1);
		if (i & 1)
			ck_assert_int_eq(resolver_req_answer(q[i])->cause, BIDC_REPLACED);
		else {
			ck_assert_int_eq(resolver_req_answer(q[i])->cause, BIDC_OK);
			ck_assert(ids_equal(resolver_req_answer(q[i]), p));
		}
	}
	for (i = 0; i < 8; i++)
		resolver_req_put(res, q[i], 0);
	resolver_stop(res);
}
END_TEST

/* Three mappings of M joined, answered with PATH's build-id; by one proof if ALL. */
static void
join_batch(struct resolver *res, const struct record_mmap *m, uint64_t now, const char *path,
    int all)
{
	struct resolve_req *q[3];
	uint32_t idx[3];
	int	 i;

	for (i = 0; i < 3; i++) {
		ck_assert_ptr_nonnull(q[i] = resolver_req_join(res, m, at(wall_ns(1000 + i)), now,
		    &idx[i]));
		ck_assert_ptr_eq(q[i], q[0]);
		ck_assert_uint_eq(idx[i], (uint32_t)i);
	}
	resolver_kick(res);
	resolver_wait(res, q[0]);
	ck_assert_int_eq(resolver_req_done(res, q[0], now, 0), 1);
	ck_assert_int_eq(q[0]->all, all);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(resolver_req_answer_of(q[i], idx[i])->cause, BIDC_OK);
		ck_assert(ids_equal(resolver_req_answer_of(q[i], idx[i]), path));
		resolver_req_put(res, q[i], idx[i]);
	}
}

/*
 * Mappings of one file arriving together join one request: one proof for
 * all of them when the cache knows the file, with the earliest mapping's
 * time; else each is read on its own and has its own answer.
 */
START_TEST(test_resolver_join)
{
	struct resolver *res;
	struct resolve_req *q[RESOLVER_GROUP_MAX + 1], *other;
	struct resolver_stats st;
	struct record_mmap m;
	struct bid_query bq;
	char	 p[PATH_MAX], p2[PATH_MAX], err[256];
	uint32_t idx[RESOLVER_GROUP_MAX + 1], oidx;
	uint64_t now;
	int	 i;

	copy_to("/proc/self/exe", "prog", p, sizeof(p));
	snprintf(p2, sizeof(p2), "%s/hardlink", dir);
	ck_assert_int_eq(link(p, p2), 0);
	usleep(30000);		/* the link changed its ctime: older than the margin again */
	query_of(p, 0, &bq);
	mmap_of(&bq, &m);
	ck_assert_int_eq(resolver_start(&res, 0, err, sizeof(err)), 0);
	now = mono_ns();

	/*
	 * Three mappings joined; the file new to the cache: each answered on
	 * its own (the file read once).
	 */
	join_batch(res, &m, now, p, 0);
	/*
	 * The file known now; the first mapped after the file's last change,
	 * the second (the earliest) before it: no proof for both, each
	 * answered on its own.
	 */
	ck_assert_ptr_nonnull(q[0] = resolver_req_join(res, &m, at(wall_ns(1000)), now, &idx[0]));
	ck_assert_ptr_nonnull(q[1] = resolver_req_join(res, &m, at(wall_ns(-1000)), now, &idx[1]));
	ck_assert_ptr_eq(q[0], q[1]);
	ck_assert_uint_eq(idx[0], 0);
	ck_assert_uint_eq(idx[1], 1);
	/* Another name of the inode: a request of its own. */
	m.filename = p2;
	ck_assert_ptr_nonnull(other = resolver_req_join(res, &m, at(wall_ns(1000)), now, &oidx));
	ck_assert_ptr_ne(other, q[0]);
	m.filename = p;
	resolver_kick(res);
	resolver_wait(res, q[0]);
	resolver_wait(res, other);
	ck_assert_int_eq(resolver_req_done(res, q[0], now, 0), 1);
	ck_assert_int_eq(resolver_req_done(res, other, now, 0), 1);
	ck_assert_int_eq(q[0]->all, 0);
	ck_assert_int_eq(resolver_req_answer_of(q[0], idx[0])->cause, BIDC_OK);
	ck_assert(ids_equal(resolver_req_answer_of(q[0], idx[0]), p));
	ck_assert_int_eq(resolver_req_answer_of(q[0], idx[1])->cause, BIDC_CHANGED);
	ck_assert_int_eq(resolver_req_answer_of(other, oidx)->cause, BIDC_OK);
	resolver_req_put(res, q[0], idx[0]);
	resolver_req_put(res, q[0], idx[1]);
	resolver_req_put(res, other, oidx);
	/* Each mapped after the file's last change: one proof answers all. */
	join_batch(res, &m, now, p, 1);
	resolver_stats(res, &st);
	ck_assert_uint_eq(st.reads, 1);
	ck_assert_uint_eq(st.requests, 9);

	/* A request holds RESOLVER_GROUP_MAX mappings; the next starts another. */
	for (i = 0; i < RESOLVER_GROUP_MAX + 1; i++)
		ck_assert_ptr_nonnull(q[i] = resolver_req_join(res, &m, at(wall_ns(1000)), now,
		    &idx[i]));
	ck_assert_ptr_eq(q[RESOLVER_GROUP_MAX - 1], q[0]);
	ck_assert_ptr_ne(q[RESOLVER_GROUP_MAX], q[0]);
	ck_assert_uint_eq(idx[RESOLVER_GROUP_MAX], 0);
	resolver_kick(res);
	for (i = 0; i < RESOLVER_GROUP_MAX + 1; i++) {
		resolver_wait(res, q[i]);
		ck_assert_int_eq(resolver_req_done(res, q[i], now, 0), 1);
		ck_assert_int_eq(resolver_req_answer_of(q[i], idx[i])->cause, BIDC_OK);
	}
	for (i = 0; i < RESOLVER_GROUP_MAX + 1; i++)
		resolver_req_put(res, q[i], idx[i]);
	resolver_stop(res);
}
END_TEST

/* Every process root's. */
static uint32_t
uid_root(uint32_t pid)
{
	(void)pid;
	return 0;
}

/* Process 1 is user 1000's, 2 user 1001's, 3 gone (no owner read), anything else root's. */
static uint32_t
uid_users(uint32_t pid)
{
	return pid == 1 ? 1000 : pid == 2 ? 1001 : pid == 3 ? RESOLVER_UID_UNKNOWN : 0;
}

/*
 * A burst of mappings, as 60 programs starting with 100 libraries each
 * make: 6,000 mappings of a few files out at once, before any answer, are
 * all read, none "busy" (the loop held at most 4,096 mappings before: a
 * third of such a burst was unknown).  The bound that stays is on requests,
 * each a file's name: a mapping that would need one more than
 * RESOLVER_MAX_REQS is "busy", and once they are put there is room again.
 */
START_TEST(test_resolver_burst)
{
	enum { N = 6000, F = 4, R = RESOLVER_MAX_REQS + 1 };
	struct resolver *res;
	struct resolve_req **q;
	struct record_mmap m[F], o;
	struct bid_query bq[F];
	char	 p[F][PATH_MAX], name[32], err[256], (*names)[32];
	uint32_t *idx;
	uint64_t now;
	int	 i, n;

	for (i = 0; i < F; i++) {
		snprintf(name, sizeof(name), "lib%d", i);
		copy_to("/proc/self/exe", name, p[i], sizeof(p[i]));
		query_of(p[i], 0, &bq[i]);
		mmap_of(&bq[i], &m[i]);
	}
	ck_assert_ptr_nonnull(q = calloc(N + R, sizeof(*q)));
	ck_assert_ptr_nonnull(idx = calloc(N + R, sizeof(*idx)));
	ck_assert_ptr_nonnull(names = calloc(R, sizeof(*names)));
	ck_assert_int_eq(resolver_start(&res, 0, err, sizeof(err)), 0);
	resolver_test_uid_of(res, uid_root);	/* the global bounds: no user's share */
	/* deadlines far off: a slow (sanitized) worker is not a timeout here */
	now = mono_ns() + 30000000000ULL;
	for (i = 0; i < N; i++)
		ck_assert_ptr_nonnull(q[i] = resolver_req_join(res, &m[i % F],
		    at(wall_ns(1000)), now, &idx[i]));
	resolver_kick(res);
	for (i = 0; i < N; i++) {
		resolver_wait(res, q[i]);
		ck_assert_int_eq(resolver_req_done(res, q[i], now, 0), 1);
		ck_assert_msg(resolver_req_answer_of(q[i], idx[i])->cause == BIDC_OK,
		    "mapping %d of %d: %s", i, N,
		    buildid_cause_name(resolver_req_answer_of(q[i], idx[i])->cause));
	}
	for (i = 0; i < N; i++)
		resolver_req_put(res, q[i], idx[i]);

	/* R mappings of R names: the last would be request R, over the bound. */
	o = m[0];
	for (n = 0; n < R; n++) {
		snprintf(names[n], sizeof(names[n]), "/nonexistent/%d", n);
		o.filename = names[n];
		ck_assert_ptr_nonnull(q[n] = resolver_req_join(res, &o, at(wall_ns(1000)), now,
		    &idx[n]));
	}
	ck_assert_int_eq(resolver_req_done(res, q[R - 1], now, 0), 1);
	ck_assert_int_eq(resolver_req_answer_of(q[R - 1], idx[R - 1])->cause, BIDC_BUSY);
	ck_assert_int_eq(resolver_req_done(res, q[R - 2], now, 0), 0);
	resolver_kick(res);
	for (n = 0; n < R; n++) {
		resolver_wait(res, q[n]);
		resolver_req_put(res, q[n], idx[n]);
	}
	/* all put: a new file's mapping is read again */
	ck_assert_ptr_nonnull(q[0] = resolver_req_join(res, &m[1], at(wall_ns(1000)), now,
	    &idx[0]));
	resolver_kick(res);
	resolver_wait(res, q[0]);
	ck_assert_int_eq(resolver_req_answer_of(q[0], idx[0])->cause, BIDC_OK);
	resolver_req_put(res, q[0], idx[0]);
	resolver_stop(res);
	free(names);
	free(idx);
	free(q);
}
END_TEST

/* A FIFO at the path is not opened (that would block), only refused. */
START_TEST(test_fifo)
{
	struct buildid_reader br;
	struct bid_query q;
	struct bid_answer a;
	char	 p[PATH_MAX];
	struct stat st;
	int	 fd;

	ck_assert_int_eq(buildid_reader_init(&br), 0);
	snprintf(p, sizeof(p), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	query_of(p, wall_ns(1000), &q);
	alarm(5);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_NOT_FILE);
	ck_assert_int_eq(buildid_reader_open_verified(p, q.maj, q.min, q.ino, 0, NULL, &st), -EISDIR);
	fd = buildid_reader_open_verified(p, q.maj, q.min, q.ino + 1, 0, NULL, &st);
	ck_assert_int_eq(fd, -ESTALE);
	alarm(0);
	buildid_reader_free(&br);
}
END_TEST

/*
 * `cp v2 PATH` over v1 keeps the inode and changes the content: the cache
 * filled from v1 must not answer for v2.
 */
START_TEST(test_cp_over_inode)
{
	struct buildid_reader br;
	struct bid_query q;
	struct bid_answer a;
	struct stat before, after;
	char	 p[PATH_MAX], v2[PATH_MAX];
	uint8_t	 id1[BUILD_ID_MAX];
	int	 n1;

	ck_assert_int_eq(buildid_reader_init(&br), 0);
	copy_to("/proc/self/exe", "prog", p, sizeof(p));
	ck_assert_int_gt(n1 = buildid_read_path(p, id1), 0);
	query_of(p, wall_ns(1000), &q);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert_mem_eq(a.id, id1, (size_t)n1);
	ck_assert_int_eq(stat(p, &before), 0);
	/* v2: another ELF with another build-id, written over the same inode. */
	snprintf(v2, sizeof(v2), "%s", "/bin/true");
	{
		char	 buf[65536];
		ssize_t	 n;
		int	 in = open(v2, O_RDONLY), fd = open(p, O_WRONLY | O_TRUNC);

		ck_assert_int_ge(in, 0);
		ck_assert_int_ge(fd, 0);
		while ((n = read(in, buf, sizeof(buf))) > 0)
			ck_assert_int_eq(write(fd, buf, (size_t)n), n);
		close(in);
		close(fd);
	}
	ck_assert_int_eq(stat(p, &after), 0);
	ck_assert_uint_eq(after.st_ino, before.st_ino);
	/* Mapped after the rewrite: read again, v2's build-id. */
	query_of(p, wall_ns(1000), &q);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert_int_eq(a.cached, 0);
	ck_assert(ids_equal(&a, v2));
	/* Mapped before it: the file changed since, no answer. */
	query_of(p, wall_ns(-60000), &q);
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_int_eq(a.cause, BIDC_CHANGED);
	buildid_reader_free(&br);
}
END_TEST

/*
 * The resolver's deadlines: an unanswered request past its deadline is
 * "timeout" and marks its device slow, whose next requests are answered
 * "timeout" at once.  (A request for a gone process is answered quickly.)
 */
START_TEST(test_resolver_deadline)
{
	struct resolver *res;
	struct resolve_req *q, *q2;
	struct record_mmap m;
	struct bid_query bq;
	char	 err[256], p[PATH_MAX];
	uint64_t now = mono_ns();
	uint32_t idx;

	ck_assert_int_eq(resolver_start(&res, 0, err, sizeof(err)), 0);
	copy_to("/proc/self/exe", "prog", p, sizeof(p));
	query_of(p, 0, &bq);
	mmap_of(&bq, &m);
	/* Answered by a worker: a gone process, a path changed just now. */
	ck_assert_ptr_nonnull(q = resolver_req_new(res, &m, at(1), now));
	resolver_queue(res, q);
	resolver_kick(res);
	resolver_wait(res, q);
	ck_assert_int_eq(resolver_req_done(res, q, now, 0), 1);
	ck_assert_int_eq(resolver_req_answer(q)->cause, BIDC_CHANGED);
	resolver_req_put(res, q, 0);
	/* Queued behind a stuck worker, its deadline passed: timeout, device not slow. */
	ck_assert_ptr_nonnull(q = resolver_req_new(res, &m, at(1), now));
	ck_assert_int_eq(resolver_req_done(res, q, now + (RESOLVE_TIMEOUT_MS + 1) * 1000000ULL,
	    0), 1);
	ck_assert_int_eq(resolver_req_answer(q)->cause, BIDC_TIMEOUT);
	resolver_req_put(res, q, 0);
	ck_assert_ptr_nonnull(q = resolver_req_new(res, &m, at(1), now));
	ck_assert_int_eq(resolver_req_done(res, q, now, 0), 0);
	resolver_req_put(res, q, 0);
	/*
	 * A deadline passed proves nothing of the device (the wait in the
	 * queue, and for a CPU on a busy host, count toward it): timeout, and
	 * the device not slow, with no worker in a read.  Before, a request a
	 * worker had taken made its device slow at its deadline, and a busy
	 * host's root device left every mapping on it unknown for 30 s
	 * (t_store_stream on two CPUs).
	 */
	ck_assert_ptr_nonnull(q = resolver_req_new(res, &m, at(1), now));
	ck_assert_int_eq(resolver_req_done(res, q, now + (RESOLVE_TIMEOUT_MS + 1) * 1000000ULL,
	    0), 1);
	ck_assert_int_eq(resolver_req_answer(q)->cause, BIDC_TIMEOUT);
	resolver_check(res, now + 5000000000ULL);
	ck_assert_ptr_nonnull(q2 = resolver_req_new(res, &m, at(1), now + 1000000000ULL));
	ck_assert_int_eq(resolver_req_done(res, q2, now + 1000000000ULL, 0), 0);
	resolver_req_put(res, q, 0);
	resolver_req_put(res, q2, 0);
	/* A worker hung in the device for a second (as in a FUSE server): slow. */
	resolver_test_hang(res, makedev(m.maj, m.min), now);
	resolver_check(res, now + 500000000ULL);
	ck_assert_ptr_nonnull(q2 = resolver_req_new(res, &m, at(1), now + 500000000ULL));
	ck_assert_int_eq(resolver_req_done(res, q2, now + 500000000ULL, 0), 0);
	resolver_req_put(res, q2, 0);
	resolver_check(res, now + 1000000000ULL + 1);
	resolver_test_hang(res, 0, 0);
	ck_assert_ptr_nonnull(q2 = resolver_req_new(res, &m, at(1), now + 1000000000ULL));
	ck_assert_int_eq(resolver_req_done(res, q2, now + 1000000000ULL, 0), 1);
	ck_assert_int_eq(resolver_req_answer(q2)->cause, BIDC_TIMEOUT);
	resolver_req_put(res, q2, 0);
	/*
	 * A mapping joining a request on the slow device is answered
	 * "timeout" too, never by a member's answer that nobody wrote: here
	 * the pooled request's array still holds a build-id of its last use
	 * (the first joined request is put back with one written in).
	 */
	m.pid = getpid();
	ck_assert_ptr_nonnull(q = resolver_req_join(res, &m, at(1), now + 1000000000ULL, &idx));
	ck_assert_int_eq(resolver_req_done(res, q, now + 1000000000ULL, 0), 1);
	ck_assert_int_eq(resolver_req_answer_of(q, idx)->cause, BIDC_TIMEOUT);
	q->m[idx].a.cause = BIDC_OK;
	q->m[idx].a.size = 20;
	memset(q->m[idx].a.id, 0xab, 20);
	resolver_req_put(res, q, idx);
	resolver_kick(res);
	ck_assert_ptr_nonnull(q = resolver_req_join(res, &m, at(1), now + 1000000000ULL, &idx));
	ck_assert_int_eq(resolver_req_done(res, q, now + 1000000000ULL, 0), 1);
	ck_assert_int_eq(resolver_req_answer_of(q, idx)->cause, BIDC_TIMEOUT);
	ck_assert_int_eq(resolver_req_answer_of(q, idx)->size, 0);
	resolver_req_put(res, q, idx);
	resolver_kick(res);
	m.pid = NOPID;
	/* Another device is not slow. */
	m.maj++;
	ck_assert_ptr_nonnull(q = resolver_req_new(res, &m, at(1), now + 1000000000ULL));
	ck_assert_int_eq(resolver_req_done(res, q, now + 1000000000ULL, 0), 0);
	resolver_req_put(res, q, 0);
	resolver_stop(res);
}
END_TEST

/*
 * One user's burst of new files takes their share, not every request:
 * user 1000 maps RESOLVER_MAX_REQS files at once (requests of their own
 * each).  The first RESOLVER_FREE_REQS are charged to nobody, the next
 * RESOLVER_USER_REQS to the user, the rest are "busy" (user_full); user
 * 1001's new file and root's are read; root's mapping of a file one of the
 * user's requests at the back of the queue is for gets a request of its
 * own; processes of no known owner have a quarter of a share.  Twice: all
 * put, the shares are free again.  Before, the user's took all 4,096
 * and everyone's next new mapping was "busy".  Then the same with the
 * mappings of one file (joined, RESOLVER_GROUP_MAX a request): past
 * RESOLVER_FREE_PENDING, a quarter of RESOLVER_MAX_PENDING is the user's.
 * All put: the shares are free again.
 */
START_TEST(test_resolver_user_share)
{
	enum { R = RESOLVER_MAX_REQS, P = RESOLVER_FREE_PENDING + RESOLVER_USER_PENDING + 5,
	    U = RESOLVER_USER_REQS / 4 + 1, LAST = RESOLVER_FREE_REQS + RESOLVER_USER_REQS - 1 };
	struct resolver *res;
	struct resolve_req **q, *b, *root, *rj;
	struct resolver_stats st;
	struct record_mmap m, o;
	struct bid_query bq;
	char	 p[PATH_MAX], err[256], (*names)[32];
	uint32_t *idx, bidx, ridx, rjidx;
	uint64_t now, full = 0;
	int	 n, busy = 0, round;

	copy_to("/proc/self/exe", "share", p, sizeof(p));
	query_of(p, 0, &bq);
	mmap_of(&bq, &m);
	ck_assert_ptr_nonnull(q = calloc(P, sizeof(*q)));
	ck_assert_ptr_nonnull(idx = calloc(P, sizeof(*idx)));
	ck_assert_ptr_nonnull(names = calloc(R + U, sizeof(*names)));
	ck_assert_int_eq(resolver_start(&res, 0, err, sizeof(err)), 0);
	resolver_test_uid_of(res, uid_users);
	now = mono_ns() + 30000000000ULL;
	for (round = 0; round < 2; round++) {
	o = m;
	o.pid = 1;
	busy = 0;
	for (n = 0; n < R; n++) {
		snprintf(names[n], sizeof(names[n]), "/nonexistent/%d", n);
		o.filename = names[n];
		ck_assert_ptr_nonnull(q[n] = resolver_req_join(res, &o, at(wall_ns(1000)), now,
		    &idx[n]));
		if (resolver_req_done(res, q[n], now, 0) &&
		    resolver_req_answer_of(q[n], idx[n])->cause == BIDC_BUSY) {
			ck_assert_msg(n >= RESOLVER_FREE_REQS + RESOLVER_USER_REQS,
			    "user 1000's mapping %d is busy, within their share", n);
			busy++;
		}
	}
	ck_assert_int_eq(busy, R - RESOLVER_FREE_REQS - RESOLVER_USER_REQS);
	ck_assert_int_eq(q[LAST]->back, 1);
	ck_assert_int_eq(q[RESOLVER_FREE_REQS]->back, 0);
	/* root's mapping of the file of the user's last request: not joined to it, not back */
	o.pid = 4;
	o.filename = names[LAST];
	ck_assert_ptr_nonnull(rj = resolver_req_join(res, &o, at(wall_ns(1000)), now, &rjidx));
	ck_assert_ptr_ne(rj, q[LAST]);
	ck_assert_int_eq(rj->back, 0);
	/* processes of no known owner: a quarter of a share */
	o.pid = 3;
	for (n = 0; n < U; n++) {
		snprintf(names[R + n], sizeof(names[R + n]), "/nonexistent/u%d", n);
		o.filename = names[R + n];
		ck_assert_ptr_nonnull(q[R + n] = resolver_req_join(res, &o, at(wall_ns(1000)), now,
		    &idx[R + n]));
		ck_assert_int_eq(resolver_req_done(res, q[R + n], now, 0) &&
		    resolver_req_answer_of(q[R + n], idx[R + n])->cause == BIDC_BUSY, n == U - 1);
	}
	busy++;
	/* another user's new file, and root's: read */
	o.pid = 2;
	o.filename = "/nonexistent/b";
	ck_assert_ptr_nonnull(b = resolver_req_join(res, &o, at(wall_ns(1000)), now, &bidx));
	ck_assert_ptr_nonnull(root = resolver_req_join(res, &m, at(wall_ns(1000)), now, &ridx));
	resolver_kick(res);
	resolver_wait(res, b);
	resolver_wait(res, root);
	ck_assert_int_eq(resolver_req_done(res, b, now, 0), 1);
	ck_assert_int_eq(resolver_req_answer_of(b, bidx)->cause, BIDC_GONE);
	ck_assert_int_eq(resolver_req_answer_of(root, ridx)->cause, BIDC_OK);
	resolver_stats(res, &st);
	full += (uint64_t)busy;
	ck_assert_uint_eq(st.user_full, full);
	for (n = 0; n < R + U; n++) {
		resolver_wait(res, q[n]);
		resolver_req_put(res, q[n], idx[n]);
	}
	resolver_wait(res, rj);
	resolver_req_put(res, rj, rjidx);
	resolver_req_put(res, b, bidx);
	resolver_req_put(res, root, ridx);
	}

	/* One file mapped P times by user 1000: joined, charged past the free bound. */
	m.pid = 1;
	busy = 0;
	for (n = 0; n < P; n++) {
		ck_assert_ptr_nonnull(q[n] = resolver_req_join(res, &m, at(wall_ns(1000)), now,
		    &idx[n]));
		if (resolver_req_done(res, q[n], now, 0) &&
		    resolver_req_answer_of(q[n], idx[n])->cause == BIDC_BUSY)
			busy++;
	}
	ck_assert_int_eq(busy, P - RESOLVER_FREE_PENDING - RESOLVER_USER_PENDING);
	m.pid = 2;
	ck_assert_ptr_nonnull(b = resolver_req_join(res, &m, at(wall_ns(1000)), now, &bidx));
	resolver_kick(res);
	resolver_wait(res, b);
	ck_assert_int_eq(resolver_req_answer_of(b, bidx)->cause, BIDC_OK);
	for (n = 0; n < P; n++) {
		resolver_wait(res, q[n]);
		resolver_req_put(res, q[n], idx[n]);
	}
	resolver_req_put(res, b, bidx);
	/* all put: user 1000's next new file is read again */
	m.pid = 1;
	ck_assert_ptr_nonnull(q[0] = resolver_req_join(res, &m, at(wall_ns(1000)), now, &idx[0]));
	resolver_kick(res);
	resolver_wait(res, q[0]);
	ck_assert_int_eq(resolver_req_answer_of(q[0], idx[0])->cause, BIDC_OK);
	resolver_req_put(res, q[0], idx[0]);
	resolver_stats(res, &st);
	ck_assert_uint_eq(st.user_full, full + (uint64_t)(P - RESOLVER_FREE_PENDING -
	    RESOLVER_USER_PENDING));
	resolver_stop(res);
	free(names);
	free(idx);
	free(q);
}
END_TEST

/*
 * A request a worker reaches only after its deadline (queued behind
 * others) is not read, and its device is not marked slow: no read of it
 * held a worker.
 */
START_TEST(test_resolver_late_take)
{
	struct resolver *res;
	struct resolve_req *late, *q;
	struct record_mmap m;
	struct bid_query bq;
	char	 err[256], p[PATH_MAX];
	uint64_t now = mono_ns();

	ck_assert_int_eq(resolver_start(&res, 0, err, sizeof(err)), 0);
	copy_to("/proc/self/exe", "prog", p, sizeof(p));
	query_of(p, 0, &bq);
	mmap_of(&bq, &m);
	/* made a second ago: its deadline passed before any worker saw it */
	ck_assert_ptr_nonnull(late = resolver_req_new(res, &m, at(1), now - 1000000000ULL));
	resolver_queue(res, late);
	ck_assert_ptr_nonnull(q = resolver_req_new(res, &m, at(1), now));
	resolver_queue(res, q);
	resolver_wait(res, q);		/* the worker took both, one file */
	ck_assert_int_eq(resolver_req_done(res, q, now, 0), 1);
	ck_assert_int_eq(atomic_load(&late->done), 0);
	ck_assert_int_eq(resolver_req_done(res, late, now, 0), 1);
	ck_assert_int_eq(resolver_req_answer(late)->cause, BIDC_TIMEOUT);
	resolver_req_put(res, late, 0);
	resolver_req_put(res, q, 0);
	/* the device is not slow: the next request waits for a read */
	ck_assert_ptr_nonnull(q = resolver_req_new(res, &m, at(1), now));
	ck_assert_int_eq(resolver_req_done(res, q, now, 0), 0);
	resolver_req_put(res, q, 0);
	resolver_stop(res);
}
END_TEST

/*
 * PATH (a new copy) proven by name for mappings joined in one batch, the
 * file pinned if it may be: the resolver's pin count after.
 */
static uint64_t
pin_now(struct resolver *res, struct record_mmap *m, struct bid_query *bq, const char *path)
{
	struct resolver_stats st;

	query_of(path, 0, bq);
	mmap_of(bq, m);
	join_batch(res, m, mono_ns(), path, 0);	/* read: the cache knows the file */
	join_batch(res, m, mono_ns(), path, 1);	/* proven by name, the file brought back */
	resolver_stats(res, &st);
	return st.pins;
}

/* The same, past the margin of a coarse ctime first: mappings of now are after it. */
static uint64_t
pin_of(struct resolver *res, struct record_mmap *m, struct bid_query *bq, const char *path)
{
	usleep(30000);
	return pin_now(res, m, bq, path);
}

/*
 * Pins: a root-owned file proven by name is kept open by the loop, which
 * then proves its mappings by fstat of it: only while the file is as it
 * was read, for mappings made after its last change and before the look,
 * of its device and inode; a file another user could write, or of another
 * device, is not pinned; an idle or deleted one is let go.
 */
START_TEST(test_resolver_pins)
{
	struct resolver *res;
	struct resolver_stats st;
	struct record_mmap m;
	struct bid_query bq;
	struct bid_answer a;
	struct stat ds;
	char	 p[PATH_MAX], p2[PATH_MAX], err[256];
	uint64_t t;
	int	 fd;

	ck_assert_int_eq(stat(dir, &ds), 0);
	ck_assert_int_eq(resolver_start(&res, 0, err, sizeof(err)), 0);
	resolver_pin_devices(res, &ds.st_dev, 1);
	copy_to("/proc/self/exe", "prog", p, sizeof(p));
	ck_assert_uint_eq(pin_of(res, &m, &bq, p), 1);

	/* A mapping of it made before now, after its last change: proven, its build-id. */
	t = mono_ns();
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(pin_proves(res, &m, t, at(wall_ns(0)), &a), 1);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert_int_eq(a.cached, 1);
	ck_assert(ids_equal(&a, p));
	/* ... one before the look, without another fstat; not one from the future */
	ck_assert_int_eq(pin_proves(res, &m, t - 1, at(wall_ns(0)), &a), 1);
	ck_assert_int_eq(pin_proves(res, &m, mono_ns() + 1000000000ULL, at(wall_ns(0)), &a), 0);
	/* Mapped before the file's last change: not proven, the pin kept. */
	ck_assert_int_eq(pin_proves(res, &m, mono_ns(), at(wall_ns(-60000)), &a), 0);
	ck_assert_int_eq(pin_proves(res, &m, mono_ns(), at(0), &a), 0);
	/* Another inode, another device: not this pin's. */
	m.ino++;
	ck_assert_int_eq(pin_proves(res, &m, mono_ns(), at(wall_ns(0)), &a), 0);
	m.ino--;
	m.maj++;
	ck_assert_int_eq(pin_proves(res, &m, mono_ns(), at(wall_ns(0)), &a), 0);
	m.maj--;
	/*
	 * Its device and inode under another name (a user's bind mount of a
	 * pinned root binary over another path, in a mount namespace of
	 * theirs): not the pin's, read and judged on its own.
	 */
	m.filename = "/usr/bin/passwd";
	ck_assert_int_eq(pin_proves(res, &m, mono_ns(), at(wall_ns(0)), &a), 0);
	m.filename = bq.filename;
	ck_assert_int_eq(pin_proves(res, &m, mono_ns(), at(wall_ns(0)), &a), 1);
	resolver_stats(res, &st);
	ck_assert_uint_eq(st.pinned, 3);
	ck_assert_uint_eq(st.pins, 1);

	/* Rewritten in place (cp over it): the same inode, no more proofs, the pin let go. */
	usleep(30000);
	ck_assert_int_ge(fd = open(p, O_WRONLY), 0);
	ck_assert_int_eq(write(fd, "\177ELF", 4), 4);
	close(fd);
	ck_assert_int_eq(pin_proves(res, &m, mono_ns(), at(wall_ns(1000)), &a), 0);
	resolver_stats(res, &st);
	ck_assert_uint_eq(st.pins, 0);
	ck_assert_uint_eq(st.pins_dropped, 1);

	/* Writable by others, owned by another user, or on another device: not pinned. */
	copy_to("/proc/self/exe", "prog-gw", p2, sizeof(p2));
	ck_assert_int_eq(chmod(p2, 0775), 0);
	ck_assert_uint_eq(pin_of(res, &m, &bq, p2), 0);
	copy_to("/proc/self/exe", "prog-user", p2, sizeof(p2));
	ck_assert_int_eq(chown(p2, 65534, 65534), 0);
	ck_assert_uint_eq(pin_of(res, &m, &bq, p2), 0);
	copy_to("/proc/self/exe", "prog-dev", p2, sizeof(p2));
	resolver_pin_devices(res, NULL, 0);
	ck_assert_uint_eq(pin_of(res, &m, &bq, p2), 0);
	resolver_pin_devices(res, &ds.st_dev, 1);

	/* Its file deleted: let go at the next look (a second on), long before it is idle. */
	copy_to("/proc/self/exe", "prog-gone", p2, sizeof(p2));
	ck_assert_uint_eq(pin_of(res, &m, &bq, p2), 1);
	resolver_check(res, mono_ns() + 1100000000ULL);
	resolver_stats(res, &st);
	ck_assert_uint_eq(st.pins, 1);
	ck_assert_int_eq(unlink(p2), 0);
	resolver_check(res, mono_ns() + 2200000000ULL);
	resolver_stats(res, &st);
	ck_assert_uint_eq(st.pins, 0);
	/* Idle for RESOLVER_PIN_IDLE_S: let go. */
	copy_to("/proc/self/exe", "prog-idle", p2, sizeof(p2));
	ck_assert_uint_eq(pin_of(res, &m, &bq, p2), 1);
	resolver_check(res, mono_ns() + 3300000000ULL);
	resolver_stats(res, &st);
	ck_assert_uint_eq(st.pins, 1);
	resolver_check(res, mono_ns() + (RESOLVER_PIN_IDLE_S + 2) * 1000000000ULL);
	resolver_stats(res, &st);
	ck_assert_uint_eq(st.pins, 0);
	ck_assert_uint_eq(st.pins_dropped, 3);
	resolver_stop(res);
}
END_TEST

/*
 * A 16 MiB ext4 with 128-byte inodes (whole-second timestamps) at DIR/NAME,
 * mounted in this test's own mount namespace: it goes with the test's
 * process, pass or fail (CK_FORK=no would make it the whole run's).
 */
static void
mount_coarse(const char *name)
{
	char	 cmd[4 * PATH_MAX];

	if (getenv("CK_FORK") != NULL && strcmp(getenv("CK_FORK"), "no") == 0)
		ck_abort_msg("needs CK_FORK: it unshares its mount namespace");
	if (unshare(CLONE_NEWNS) != 0 || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		ck_abort_msg("cannot unshare the mount namespace: %s", strerror(errno));
	snprintf(cmd, sizeof(cmd), "truncate -s 16M '%s/%s.img' && "
	    "mkfs.ext4 -q -I 128 -F '%s/%s.img' >/dev/null 2>&1 && mkdir '%s/%s' && "
	    "mount -o loop '%s/%s.img' '%s/%s'", dir, name, dir, name, dir, name, dir, name,
	    dir, name);
	if (system(cmd) != 0)
		ck_abort_msg("cannot make and mount an ext4 image with 128-byte inodes "
		    "(root, mkfs.ext4 and a loop device)");
}

/*
 * Pins of a file whose timestamps are whole seconds (ext4 with 128-byte
 * inodes; and every system file of an image built by a tool that writes
 * the inodes itself): pinned once the cache knows it (which it does only
 * of a state older than the margin and a second: a change in the same
 * second as its ctime would not show); its mappings proven only from a
 * second and the margin after that ctime; a rewrite in place after the
 * proof, the same size, shows.  (Such files were never pinned: under an
 * exec storm on such a host every mapping went to a worker.)
 */
START_TEST(test_resolver_pins_coarse)
{
	struct resolver *res;
	struct resolver_stats st;
	struct record_mmap m;
	struct bid_query bq;
	struct bid_answer a;
	struct stat ds, fs;
	char	 cmd[4 * PATH_MAX], p[PATH_MAX], err[256];
	uint64_t changed;
	int	 fd;

	mount_coarse("mnt");
	copy_to("/proc/self/exe", "mnt/prog", p, sizeof(p));
	ck_assert_int_eq(stat(p, &fs), 0);
	ck_assert_int_eq(fs.st_ctim.tv_nsec, 0);	/* the case under test */
	ck_assert_int_eq(fs.st_mtim.tv_nsec, 0);
	changed = (uint64_t)fs.st_ctim.tv_sec * 1000000000ULL;
	ck_assert_int_eq(stat(p, &ds), 0);
	ck_assert_int_eq(resolver_start(&res, 0, err, sizeof(err)), 0);
	resolver_pin_devices(res, &ds.st_dev, 1);
	usleep(1100000);	/* the state a second and the margin old: remembered */
	ck_assert_uint_eq(pin_of(res, &m, &bq, p), 1);

	/* Mapped in the second of the last change, or in the margin after it: not proven. */
	ck_assert_int_eq(pin_proves(res, &m, mono_ns(), at(changed + 500000000ULL), &a), 0);
	ck_assert_int_eq(pin_proves(res, &m, mono_ns(), at(changed + 1010000000ULL), &a), 0);
	/* Mapped after: proven, its build-id. */
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(pin_proves(res, &m, mono_ns(), at(wall_ns(0)), &a), 1);
	ck_assert_int_eq(a.cause, BIDC_OK);
	ck_assert(ids_equal(&a, p));
	resolver_stats(res, &st);
	ck_assert_uint_eq(st.pins, 1);

	/* Rewritten in place, the same bytes: a later second's ctime, the pin let go. */
	ck_assert_int_ge(fd = open(p, O_WRONLY), 0);
	ck_assert_int_eq(write(fd, "\177ELF", 4), 4);
	close(fd);
	ck_assert_int_eq(stat(p, &fs), 0);
	ck_assert_uint_eq(fs.st_size, ds.st_size);
	ck_assert_int_eq(pin_proves(res, &m, mono_ns(), at(wall_ns(1000)), &a), 0);
	resolver_stats(res, &st);
	ck_assert_uint_eq(st.pins, 0);
	resolver_stop(res);
	snprintf(cmd, sizeof(cmd), "%s/mnt", dir);
	ck_assert_int_eq(umount2(cmd, MNT_DETACH), 0);
}
END_TEST

/*
 * Rule 1 on a file whose timestamps are whole seconds: mapped at S.2,
 * rewritten in place at S.5 (the same size or not, its ctime stays S.0):
 * the read after the rewrite cannot tell, and the mapping is "changed",
 * not the new file's build-id.  Before, "written after" compared the
 * ctime without its granularity, S.0 < S.2, and the new build-id was
 * given to the old bytes' mapping.
 */
START_TEST(test_rewrite_coarse_same_second)
{
	struct buildid_reader br;
	struct bid_query q;
	struct bid_answer a;
	struct stat st;
	char	 cmd[4 * PATH_MAX], p[PATH_MAX], buf[65536];
	void	*m;
	ssize_t	 n;
	int	 fd, in, tries;

	mount_coarse("mnt2");
	ck_assert_int_eq(buildid_reader_init(&br), 0);
	for (tries = 0; tries < 5; tries++) {
		while (wall_ns(0) % 1000000000ULL > 100000000ULL)	/* a second's start */
			usleep(5000);
		copy_file("/proc/self/exe", "mnt2/lib", p, sizeof(p));
		ck_assert_int_ge(fd = open(p, O_RDONLY), 0);
		ck_assert_int_eq(fstat(fd, &st), 0);
		ck_assert_int_eq(st.st_ctim.tv_nsec, 0);	/* the case under test */
		ck_assert_ptr_ne(m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0),
		    MAP_FAILED);
		close(fd);
		usleep(100000);
		query_of_map(p, m, &st, wall_ns(0), &q);	/* mapped at S.2 or so */
		usleep(200000);				/* rewritten in place at S.4 */
		ck_assert_int_ge(in = open("/usr/bin/true", O_RDONLY), 0);
		ck_assert_int_ge(fd = open(p, O_WRONLY | O_TRUNC), 0);
		while ((n = read(in, buf, sizeof(buf))) > 0)
			ck_assert_int_eq(write(fd, buf, (size_t)n), n);
		close(in);
		close(fd);
		ck_assert_int_eq(stat(p, &st), 0);
		if ((uint64_t)st.st_ctim.tv_sec == q.map.wall_ns / 1000000000ULL)
			break;
		munmap(m, 4096);			/* the second ran out: again */
		unlink(p);
	}
	ck_assert_msg(tries < 5, "the rewrite never fell in the second of the mapping");
	buildid_reader_resolve(&br, &q, &a, NULL);
	ck_assert_msg(a.cause == BIDC_CHANGED, "cause %d (the rewritten file's build-id: %d)",
	    a.cause, a.cause == BIDC_OK && ids_equal(&a, "/usr/bin/true"));
	ck_assert_int_eq(munmap(m, 4096), 0);
	buildid_reader_free(&br);
	snprintf(cmd, sizeof(cmd), "%s/mnt2", dir);
	ck_assert_int_eq(umount2(cmd, MNT_DETACH), 0);
}
END_TEST

/*
 * A resolver with every pin taken, by files prog0... of the test's
 * directory (PINNED: their mappings, looked up by device and inode).
 */
static char pin_names[RESOLVER_PINS][PATH_MAX];

static struct resolver *
pins_filled(struct record_mmap pinned[RESOLVER_PINS])
{
	struct resolver *res;
	struct bid_query bq;
	struct stat ds;
	char	 p[PATH_MAX], name[32], err[256];
	int	 i;

	ck_assert_int_eq(stat(dir, &ds), 0);
	ck_assert_int_eq(resolver_start(&res, 0, err, sizeof(err)), 0);
	resolver_pin_devices(res, &ds.st_dev, 1);
	/* RESOLVER_PINS files, then the margin once, then a pin each */
	for (i = 0; i < RESOLVER_PINS; i++) {
		snprintf(name, sizeof(name), "prog%d", i);
		copy_file("/proc/self/exe", name, p, sizeof(p));
	}
	usleep(30000);
	for (i = 0; i < RESOLVER_PINS; i++) {
		snprintf(p, sizeof(p), "%s/prog%d", dir, i);
		ck_assert_uint_eq(pin_now(res, &pinned[i], &bq, p), (uint64_t)i + 1);
		/* a pin stands for its file by the name it was proven by */
		snprintf(pin_names[i], sizeof(pin_names[i]), "%s", p);
		pinned[i].filename = pin_names[i];
	}
	return res;
}

/*
 * All pins taken: a new file is not pinned while every pin was used in
 * the last 100 ms; after, it takes the least recently used one's place.
 */
START_TEST(test_resolver_pins_full)
{
	struct resolver *res;
	struct resolver_stats st;
	struct record_mmap m, first, pinned[RESOLVER_PINS];
	struct bid_query bq;
	struct bid_answer a;
	char	 p[PATH_MAX];
	int	 i;

	res = pins_filled(pinned);
	first = pinned[0];
	copy_to("/proc/self/exe", "one-more", p, sizeof(p));
	/* read first (the cache knows it), then every pin used just now, then its proof */
	usleep(30000);
	query_of(p, 0, &bq);
	mmap_of(&bq, &m);
	join_batch(res, &m, mono_ns(), p, 0);
	for (i = 0; i < RESOLVER_PINS; i++)
		ck_assert_int_eq(pin_proves(res, &pinned[i], mono_ns(), at(wall_ns(0)), &a), 1);
	join_batch(res, &m, mono_ns(), p, 1);
	resolver_stats(res, &st);
	ck_assert_uint_eq(st.pins, RESOLVER_PINS);
	ck_assert_int_eq(pin_proves(res, &m, mono_ns(), at(wall_ns(0)), &a), 0);
	/* A second on, the first pin used again: another takes the new file's place. */
	usleep(1100000);
	ck_assert_int_eq(pin_proves(res, &first, mono_ns(), at(wall_ns(0)), &a), 1);
	copy_to("/proc/self/exe", "yet-another", p, sizeof(p));
	ck_assert_uint_eq(pin_of(res, &m, &bq, p), RESOLVER_PINS);
	ck_assert_int_eq(pin_proves(res, &m, mono_ns(), at(wall_ns(0)), &a), 1);
	ck_assert_int_eq(pin_proves(res, &first, mono_ns(), at(wall_ns(0)), &a), 1);
	resolver_stats(res, &st);
	ck_assert_uint_eq(st.pins_dropped, 1);
	resolver_stop(res);
}
END_TEST

/*
 * A hot pin is not taken: its mappings reach the loop after the side-band
 * holdoff, stamped before the last look at the file, and are proven
 * without one; each still counts as a use.  (Only a look counted: under an
 * exec storm a file mapped every few milliseconds went unused for 100 ms
 * between two looks, and a new file took its place, in t_hostile_pins under
 * TSan.)
 */
START_TEST(test_resolver_pins_hot)
{
	struct resolver *res;
	struct resolver_stats st;
	struct record_mmap m, hot, pinned[RESOLVER_PINS];
	struct bid_query bq;
	struct bid_answer a;
	char	 p[PATH_MAX];
	uint64_t t0;
	int	 i, k;

	res = pins_filled(pinned);
	hot = pinned[0];
	/* The hot file looked at now; 30 ms on, every other pin used. */
	t0 = mono_ns();
	ck_assert_int_eq(pin_proves(res, &hot, t0, at(wall_ns(0)), &a), 1);
	usleep(30000);
	for (i = 1; i < RESOLVER_PINS; i++)
		ck_assert_int_eq(pin_proves(res, &pinned[i], mono_ns(), at(wall_ns(0)), &a), 1);
	/* For 150 ms, mappings of the hot file stamped before the look arrive. */
	for (k = 0; k < 15; k++) {
		usleep(10000);
		ck_assert_int_eq(pin_proves(res, &hot, t0, at(wall_ns(0)), &a), 1);
	}
	/* A new file takes the place of a pin unused for 100 ms: not the hot one. */
	copy_to("/proc/self/exe", "new", p, sizeof(p));
	ck_assert_uint_eq(pin_of(res, &m, &bq, p), RESOLVER_PINS);
	resolver_stats(res, &st);
	ck_assert_uint_eq(st.pins_dropped, 1);
	ck_assert_int_eq(pin_proves(res, &m, mono_ns(), at(wall_ns(0)), &a), 1);
	ck_assert_msg(pin_proves(res, &hot, mono_ns(), at(wall_ns(0)), &a) == 1,
	    "the hot file's pin was taken by a new file");
	resolver_stop(res);
}
END_TEST

/*
 * A burst of requests asks its worker for no more files than there are
 * pins to take: the rest are proven without bringing theirs back open.
 * Once put, a request no longer counts.
 */
/*
 * Out of memory for a request's first member: no request, and none left
 * counted as asking for a pin (before: each such failure kept its ask, and
 * after RESOLVER_PINS of them no file was ever pinned again).
 */
START_TEST(test_resolver_pins_oom)
{
	struct resolver *res;
	struct resolve_req *q;
	struct record_mmap m;
	struct bid_query bq;
	struct stat ds;
	char	 p[PATH_MAX], err[256];
	uint32_t idx;
	int	 i;

	ck_assert_int_eq(stat(dir, &ds), 0);
	ck_assert_int_eq(resolver_start(&res, 0, err, sizeof(err)), 0);
	resolver_pin_devices(res, &ds.st_dev, 1);
	copy_file("/proc/self/exe", "oompin", p, sizeof(p));
	usleep(30000);		/* older than the ctime margin */
	query_of(p, 0, &bq);
	mmap_of(&bq, &m);
	for (i = 0; i < RESOLVER_PINS + 2; i++) {
		check_fail_reallocs = 1;
		q = resolver_req_join(res, &m, at(wall_ns(1000)), mono_ns(), &idx);
		check_fail_reallocs = 0;
		ck_assert_ptr_null(q);
	}
	ck_assert_ptr_nonnull(q = resolver_req_join(res, &m, at(wall_ns(1000)), mono_ns(), &idx));
	ck_assert_msg(q->want_pin == 1, "no pin asked after %d requests failed for memory",
	    RESOLVER_PINS + 2);
	resolver_kick(res);
	resolver_wait(res, q);
	ck_assert_int_eq(resolver_req_done(res, q, mono_ns(), 0), 1);
	resolver_req_put(res, q, idx);
	resolver_stop(res);
}
END_TEST

START_TEST(test_resolver_pins_asks)
{
	struct resolver *res;
	struct resolve_req *q[RESOLVER_PINS + 2];
	struct record_mmap m[RESOLVER_PINS + 2];
	struct bid_query bq[RESOLVER_PINS + 2];
	struct stat ds;
	char	 p[RESOLVER_PINS + 2][PATH_MAX], name[32], err[256];
	uint32_t idx;
	int	 i, asked = 0, n = RESOLVER_PINS + 2;

	ck_assert_int_eq(stat(dir, &ds), 0);
	ck_assert_int_eq(resolver_start(&res, 0, err, sizeof(err)), 0);
	resolver_pin_devices(res, &ds.st_dev, 1);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "ask%d", i);
		copy_file("/proc/self/exe", name, p[i], sizeof(p[i]));
	}
	usleep(30000);		/* older than the ctime margin */
	for (i = 0; i < n; i++) {
		query_of(p[i], 0, &bq[i]);
		mmap_of(&bq[i], &m[i]);
	}
	for (i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(q[i] = resolver_req_join(res, &m[i], at(wall_ns(1000)), mono_ns(),
		    &idx));
		asked += q[i]->want_pin;
	}
	ck_assert_int_eq(asked, RESOLVER_PINS);
	ck_assert_int_eq(q[n - 1]->want_pin, 0);
	resolver_kick(res);
	for (i = 0; i < n; i++) {
		resolver_wait(res, q[i]);
		ck_assert_int_eq(resolver_req_done(res, q[i], mono_ns(), 0), 1);
		resolver_req_put(res, q[i], 0);	/* each a file of its own: member 0 */
	}
	/* all put: room again */
	ck_assert_ptr_nonnull(q[0] = resolver_req_join(res, &m[n - 1], at(wall_ns(1000)), mono_ns(),
	    &idx));
	ck_assert_int_eq(q[0]->want_pin, 1);
	resolver_kick(res);
	resolver_wait(res, q[0]);
	ck_assert_int_eq(resolver_req_done(res, q[0], mono_ns(), 0), 1);
	resolver_req_put(res, q[0], idx);
	resolver_stop(res);
}
END_TEST

static Suite *
reader_suite(void)
{
	Suite	*s = suite_create("buildid_reader");
	TCase	*tc = tcase_create("provenance");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_is_file);
	tcase_add_test(tc, test_map_files);
	tcase_add_test(tc, test_map_files_device);
	tcase_add_test(tc, test_map_files_rewritten);
	tcase_add_test(tc, test_map_files_rewritten_between);
	tcase_add_test(tc, test_fdinfo_mount_id);
	tcase_add_test(tc, test_guard);
	tcase_add_test(tc, test_guard_deep);
	tcase_add_test(tc, test_by_name);
	tcase_add_test(tc, test_fifo);
	tcase_add_test(tc, test_cp_over_inode);
	tcase_add_test(tc, test_resolver_deadline);
	tcase_add_test(tc, test_resolver_burst);
	tcase_add_test(tc, test_resolver_user_share);
	tcase_add_test(tc, test_resolver_late_take);
	tcase_add_test(tc, test_known);
	tcase_add_test(tc, test_wallclock_steps);
	tcase_add_test(tc, test_wallclock_busy);
	tcase_add_test(tc, test_clock_step);
	tcase_add_test(tc, test_map_files_clock_step);
	tcase_add_test(tc, test_step_seen_by_the_proof);
	tcase_add_test(tc, test_resolver_group);
	tcase_add_test(tc, test_resolver_join);
	tcase_add_test(tc, test_resolver_pins);
	tcase_add_test(tc, test_resolver_pins_full);
	tcase_add_test(tc, test_resolver_pins_hot);
	tcase_add_test(tc, test_resolver_pins_asks);
	tcase_add_test(tc, test_resolver_pins_oom);
	tcase_add_test(tc, test_resolver_pins_coarse);
	tcase_add_test(tc, test_rewrite_coarse_same_second);
	tcase_set_timeout(tc, 30);	/* RESOLVER_PINS files copied, read and pinned; ASan */
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(reader_suite)
