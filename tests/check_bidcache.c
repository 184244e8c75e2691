/*
 * check_bidcache.c - the build-id cache (common/bidcache.c) without a
 * daemon: perf's layout, dedupe, verification of every copy (mismatch,
 * truncated, not ELF), a write that fails half-way (RLIMIT_FSIZE stands
 * in for a full disk), symlinks planted in the cache, names it must
 * refuse, eviction order with protected entries, and compressed modules.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <check.h>

#include "check_main.h"
#include "check_oom.h"

#include "bidcache.h"
#include "buildid.h"
#include "capture/capture_int.h"
#include "walltime.h"

static char	 dir[PATH_MAX], cdir[PATH_MAX];
static uint8_t	 self_id[BUILD_ID_MAX];
static int	 self_len;

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_bidcache.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cdir, sizeof(cdir), "%s/cache/debug", dir);
	self_len = buildid_read_path("/proc/self/exe", self_id);
	ck_assert_msg(self_len > 0, "the test binary has no build-id (%d)", self_len);
}

static void
teardown(void)
{
	char	 cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static int
open_self(void)
{
	int	 fd = open("/proc/self/exe", O_RDONLY);

	ck_assert_int_ge(fd, 0);
	return fd;
}

/* A file holding the first LEN bytes of the test binary (or TEXT). */
static int
make_file(const char *name, size_t len, const char *text)
{
	char	 path[PATH_MAX], buf[65536];
	int	 in, out;
	ssize_t	 n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(out, 0);
	if (text != NULL) {
		ck_assert_int_eq(write(out, text, strlen(text)), (ssize_t)strlen(text));
		return out;
	}
	in = open_self();
	while (len > 0 && (n = read(in, buf, len < sizeof(buf) ? len : sizeof(buf))) > 0) {
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
		len -= (size_t)n;
	}
	close(in);
	return out;
}

static int
count_files(const char *root)
{
	char	 cmd[PATH_MAX + 64];
	FILE	*p;
	int	 n = -1;

	snprintf(cmd, sizeof(cmd), "find '%s' -type f -o -type l | wc -l", root);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

START_TEST(test_entry_names)
{
	uint8_t	 id[4] = { 0xab, 0xcd, 0xef, 0x01 };
	char	 out[PATH_MAX];

	ck_assert_int_eq(bidcache_entry_name("/usr/bin/ls", id, 4, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "usr/bin/ls/abcdef01");
	ck_assert_int_eq(bidcache_entry_name("/tmp/x (deleted)", id, 4, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "tmp/x/abcdef01");
	ck_assert_int_eq(bidcache_entry_name("//a///b/", id, 4, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "a/b/abcdef01");
	ck_assert_int_eq(bidcache_entry_name("[kernel.kallsyms]", id, 4, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "[kernel.kallsyms]/abcdef01");
	ck_assert_int_eq(bidcache_entry_name("[vdso]", id, 4, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "[vdso]/abcdef01");
	ck_assert_str_eq(bidcache_basename("[vdso]"), "vdso");
	ck_assert_str_eq(bidcache_basename("[kernel.kallsyms]"), "kallsyms");
	ck_assert_str_eq(bidcache_basename("/bin/sh"), "elf");
	/* Refused: relative, "..", ".", the link tree, nothing, no id. */
	ck_assert_int_eq(bidcache_entry_name("usr/bin/ls", id, 4, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(bidcache_entry_name("/a/../../etc", id, 4, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(bidcache_entry_name("/a/./b", id, 4, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(bidcache_entry_name("/.build-id/ab", id, 4, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(bidcache_entry_name("/", id, 4, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(bidcache_entry_name("[other]", id, 4, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(bidcache_entry_name("/x", id, 0, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(bidcache_entry_name("/x", id, 4, out, 8), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_add_layout_dedupe)
{
	struct bidcache c;
	char	 err[512], path[PATH_MAX], hex[BUILD_ID_HEX_MAX], want[PATH_MAX], lnk[PATH_MAX];
	char	 target[PATH_MAX];
	uint8_t	 got[BUILD_ID_MAX];
	ssize_t	 n;
	int	 fd;

	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	ck_assert_int_eq(bidcache_find(&c, self_id, (size_t)self_len, path, sizeof(path)), 0);
	fd = open_self();
	ck_assert_int_eq(bidcache_add_fd(&c, "/opt/app/bin/prog (deleted)", self_id,
	    (size_t)self_len, fd, path, sizeof(path), err, sizeof(err)), 1);
	buildid_to_hex(self_id, (size_t)self_len, hex);
	snprintf(want, sizeof(want), "%s/opt/app/bin/prog/%s/elf", cdir, hex);
	ck_assert_str_eq(path, want);
	ck_assert_int_eq(buildid_read_path(want, got), self_len);
	ck_assert_mem_eq(got, self_id, (size_t)self_len);
	/* .build-id/xx/rest -> ../../<path>/<id>, and it resolves. */
	snprintf(lnk, sizeof(lnk), "%s/.build-id/%.2s/%s", cdir, hex, hex + 2);
	n = readlink(lnk, target, sizeof(target) - 1);
	ck_assert_int_gt(n, 0);
	target[n] = '\0';
	snprintf(want, sizeof(want), "../../opt/app/bin/prog/%s", hex);
	ck_assert_str_eq(target, want);
	snprintf(want, sizeof(want), "%s/elf", lnk);
	ck_assert_int_eq(access(want, R_OK), 0);
	ck_assert_uint_gt(c.size, 0);
	ck_assert_uint_eq(c.entries, 1);
	/* Found; a second insertion under another name is a no-op. */
	ck_assert_int_eq(bidcache_find(&c, self_id, (size_t)self_len, path, sizeof(path)), 1);
	ck_assert_int_eq(bidcache_add_fd(&c, "/other/name", self_id, (size_t)self_len, fd, NULL,
	    0, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/other", cdir);
	ck_assert_int_ne(access(want, F_OK), 0);
	close(fd);
	/* Reopening sums what is there. */
	bidcache_close(&c);
	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.entries, 1);
	bidcache_close(&c);
	/* A link whose target vanished counts as absent and is replaced. */
	snprintf(want, sizeof(want), "%s/opt/app/bin/prog/%s/elf", cdir, hex);
	ck_assert_int_eq(unlink(want), 0);
	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	ck_assert_int_eq(bidcache_find(&c, self_id, (size_t)self_len, NULL, 0), 0);
	fd = open_self();
	ck_assert_int_eq(bidcache_add_fd(&c, "/opt/app/bin/prog", self_id, (size_t)self_len, fd,
	    NULL, 0, err, sizeof(err)), 1);
	ck_assert_int_eq(bidcache_find(&c, self_id, (size_t)self_len, NULL, 0), 1);
	close(fd);
	bidcache_close(&c);
}
END_TEST

START_TEST(test_verification)
{
	struct bidcache c;
	uint8_t	 wrong[BUILD_ID_MAX];
	char	 err[512];
	int	 fd, before;

	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	memcpy(wrong, self_id, sizeof(wrong));
	wrong[0] ^= 0xff;
	fd = open_self();
	ck_assert_int_eq(bidcache_add_fd(&c, "/bin/x", wrong, (size_t)self_len, fd, NULL, 0,
	    err, sizeof(err)), -EILSEQ);
	ck_assert_msg(strstr(err, "build-id mismatch") != NULL, "%s", err);
	close(fd);
	fd = make_file("trunc", 3000, NULL);
	ck_assert_int_eq(bidcache_add_fd(&c, "/bin/t", self_id, (size_t)self_len, fd, NULL, 0,
	    err, sizeof(err)), -ENOEXEC);
	ck_assert_msg(strstr(err, "truncated") != NULL, "%s", err);
	close(fd);
	fd = make_file("text", 0, "#!/bin/sh\necho hello\n");
	ck_assert_int_eq(bidcache_add_fd(&c, "/bin/s", self_id, (size_t)self_len, fd, NULL, 0,
	    err, sizeof(err)), -ENOEXEC);
	close(fd);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(bidcache_add_fd(&c, "/bin/d", self_id, (size_t)self_len, fd, NULL, 0,
	    err, sizeof(err)), -EINVAL);
	close(fd);
	fd = open_self();
	ck_assert_int_eq(bidcache_add_fd(&c, "../../etc/passwd", self_id, (size_t)self_len, fd,
	    NULL, 0, err, sizeof(err)), -EINVAL);
	close(fd);
	before = count_files(cdir);
	ck_assert_int_eq(before, 0);		/* nothing was kept, no temporary left */
	ck_assert_uint_eq(c.entries, 0);
	bidcache_close(&c);
}
END_TEST

/* A write that fails half-way, as on a full disk: nothing is left behind. */
START_TEST(test_write_fails)
{
	struct bidcache c;
	struct rlimit rl = { 4096, 4096 };
	char	 err[512];
	int	 fd;

	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	fd = open_self();
	ck_assert_int_eq(bidcache_add_fd(&c, "/bin/big", self_id, (size_t)self_len, fd, NULL, 0,
	    err, sizeof(err)), -EFBIG);
	ck_assert_msg(strstr(err, "File too large") != NULL, "%s", err);
	close(fd);
	ck_assert_int_eq(bidcache_find(&c, self_id, (size_t)self_len, NULL, 0), 0);
	ck_assert_int_eq(count_files(cdir), 0);
	bidcache_close(&c);
}
END_TEST

/* A symlink planted inside the cache is not followed out of it. */
START_TEST(test_planted_symlink)
{
	struct bidcache c;
	char	 err[512], path[PATH_MAX], outside[PATH_MAX];
	int	 fd;

	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	snprintf(outside, sizeof(outside), "%s/outside", dir);
	ck_assert_int_eq(mkdir(outside, 0755), 0);
	snprintf(path, sizeof(path), "%s/usr", cdir);
	ck_assert_int_eq(symlink(outside, path), 0);
	fd = open_self();
	ck_assert_int_lt(bidcache_add_fd(&c, "/usr/bin/prog", self_id, (size_t)self_len, fd,
	    NULL, 0, err, sizeof(err)), 0);
	close(fd);
	ck_assert_int_eq(count_files(outside), 0);
	bidcache_close(&c);
}
END_TEST

START_TEST(test_kallsyms_buf)
{
	struct bidcache c;
	static const char text[] = "ffffffff81000000 T _text\nffffffff81000100 T start\n";
	uint8_t	 kid[20];
	char	 err[512], path[PATH_MAX], buf[256];
	FILE	*f;

	memset(kid, 0x42, sizeof(kid));
	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	ck_assert_int_eq(bidcache_add_buf(&c, BIDCACHE_KERNEL, kid, sizeof(kid), text,
	    strlen(text), path, sizeof(path), err, sizeof(err)), 1);
	ck_assert_ptr_nonnull(strstr(path, "/[kernel.kallsyms]/4242"));
	ck_assert_ptr_nonnull(strstr(path, "/kallsyms"));
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	ck_assert_uint_eq(fread(buf, 1, sizeof(buf), f), strlen(text));
	fclose(f);
	ck_assert_mem_eq(buf, text, strlen(text));
	/* The vDSO is an ELF: a text buffer is refused. */
	kid[0] = 0x43;
	ck_assert_int_eq(bidcache_add_buf(&c, BIDCACHE_VDSO, kid, sizeof(kid), text,
	    strlen(text), NULL, 0, err, sizeof(err)), -ENOEXEC);
	bidcache_close(&c);
}
END_TEST

static mode_t
mode_of(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_mode & 07777;
}

/*
 * One mode policy: group and others read a copy when they could read its
 * source; debuginfod's files and the vDSO are public, kallsyms is root's.
 * The umask does not change it.
 */
START_TEST(test_modes)
{
	struct bidcache c;
	static const char text[] = "ffffffff81000000 T _text\n";
	char	 err[512], path[PATH_MAX], copy[PATH_MAX], c2[PATH_MAX], c3[PATH_MAX];
	uint8_t	 kid[20];
	int	 fd;

	umask(077);
	snprintf(copy, sizeof(copy), "%s/prog", dir);
	snprintf(c2, sizeof(c2), "%s/cache2", dir);
	snprintf(c3, sizeof(c3), "%s/cache3", dir);
	close(make_file("prog", (size_t)-1, NULL));

	/* a private binary stays private */
	ck_assert_int_eq(chmod(copy, 0700), 0);
	ck_assert_int_ge(fd = open(copy, O_RDONLY), 0);
	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	ck_assert_int_eq(bidcache_add_fd(&c, "/opt/private", self_id, (size_t)self_len, fd,
	    path, sizeof(path), err, sizeof(err)), 1);
	ck_assert_uint_eq(mode_of(path), 0600);
	bidcache_close(&c);
	close(fd);

	/* a world-readable one is world-readable (whatever the umask) */
	ck_assert_int_eq(chmod(copy, 0755), 0);
	ck_assert_int_ge(fd = open(copy, O_RDONLY), 0);
	ck_assert_int_eq(bidcache_open(&c, c2, err, sizeof(err)), 0);
	ck_assert_int_eq(bidcache_add_fd(&c, "/opt/public", self_id, (size_t)self_len, fd,
	    path, sizeof(path), err, sizeof(err)), 1);
	ck_assert_uint_eq(mode_of(path), 0644);
	bidcache_close(&c);

	/*
	 * ... but not a file of another mount namespace (a container's):
	 * its name, walked in the daemon's namespace (here /usr/bin, open to
	 * all), says nothing of the directories above it in its own, which
	 * may be closed (/var/lib/docker is root's only).
	 */
	ck_assert_int_eq(bidcache_open(&c, c3, err, sizeof(err)), 0);
	ck_assert_int_eq(bidcache_add_fd_ns(&c, "/usr/bin/server", 4026532999ULL, self_id,
	    (size_t)self_len, fd, path, sizeof(path), err, sizeof(err)), 1);
	ck_assert_uint_eq(mode_of(path), 0600);
	bidcache_close(&c);
	snprintf(c3, sizeof(c3), "%s/cache4", dir);

	/* fetched from debuginfod (its client's cache file is 0600): public */
	ck_assert_int_eq(fchmod(fd, 0600), 0);
	ck_assert_int_eq(bidcache_open(&c, c3, err, sizeof(err)), 0);
	ck_assert_int_eq(bidcache_add_fd_public(&c, "/opt/fetched", self_id, (size_t)self_len,
	    fd, path, sizeof(path), err, sizeof(err)), 1);
	ck_assert_uint_eq(mode_of(path), 0644);
	close(fd);

	/* the kernel's symbols, with its addresses: root's only */
	memset(kid, 0x42, sizeof(kid));
	ck_assert_int_eq(bidcache_add_buf(&c, BIDCACHE_KERNEL, kid, sizeof(kid), text,
	    strlen(text), path, sizeof(path), err, sizeof(err)), 1);
	ck_assert_uint_eq(mode_of(path), 0600);
	bidcache_close(&c);
}
END_TEST

static int
keep_second(const uint8_t *id, size_t len, int64_t ref_ns, void *arg)
{
	return id[0] == 2;
}

START_TEST(test_evict)
{
	struct bidcache c;
	char	 err[512], body[1000], lnk[PATH_MAX], hex[BUILD_ID_HEX_MAX];
	uint8_t	 id[20];
	uint64_t left, each;
	int	 i;

	/*
	 * An entry takes its files and a block for each of its directories
	 * and its link: here "[kernel.kallsyms]/<hex>" and the link.
	 */
	ck_assert_uint_eq(bidcache_dirs_cost("usr/bin/ls/0123abcd"), 5 * BIDCACHE_DIR_COST);
	ck_assert_uint_eq(bidcache_dirs_cost("a//b/c/"), 4 * BIDCACHE_DIR_COST);
	each = 1000 + bidcache_dirs_cost(BIDCACHE_KERNEL "/0123abcd");
	ck_assert_uint_eq(each, 1000 + 3 * BIDCACHE_DIR_COST);
	memset(body, 'x', sizeof(body));
	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	/* Four 1000-byte entries referenced at t = 1, 2, 3, 4 (seconds). */
	for (i = 1; i <= 4; i++) {
		struct timespec ts[2] = { { i, 0 }, { i, 0 } };

		memset(id, 0, sizeof(id));
		id[0] = (uint8_t)i;
		ck_assert_int_eq(bidcache_add_buf(&c, BIDCACHE_KERNEL, id, sizeof(id), body,
		    sizeof(body), NULL, 0, err, sizeof(err)), 1);
		buildid_to_hex(id, sizeof(id), hex);
		snprintf(lnk, sizeof(lnk), "%s/.build-id/%.2s/%s", cdir, hex, hex + 2);
		ck_assert_int_eq(utimensat(AT_FDCWD, lnk, ts, AT_SYMLINK_NOFOLLOW), 0);
	}
	ck_assert_uint_eq(c.size, 4 * each);
	/* Under 2.5 entries: the oldest go first, but #2 is protected, so #1 and #3. */
	ck_assert_int_eq(bidcache_evict(&c, 5 * each / 2, keep_second, NULL, &left), 2);
	ck_assert_uint_eq(left, 2 * each);
	for (i = 1; i <= 4; i++) {
		memset(id, 0, sizeof(id));
		id[0] = (uint8_t)i;
		ck_assert_int_eq(bidcache_find(&c, id, sizeof(id), NULL, 0), i == 2 || i == 4);
	}
	/* Touching #2... is protected anyway; touch #4 and evict to 0 without KEEP. */
	memset(id, 0, sizeof(id));
	id[0] = 4;
	bidcache_touch(&c, id, sizeof(id));
	ck_assert_int_eq(bidcache_evict(&c, each, NULL, NULL, &left), 1);
	ck_assert_int_eq(bidcache_find(&c, id, sizeof(id), NULL, 0), 1);	/* newest stays */
	ck_assert_int_eq(bidcache_evict(&c, 0, NULL, NULL, &left), 1);
	ck_assert_uint_eq(left, 0);
	ck_assert_int_eq(count_files(cdir), 0);	/* links and files gone */
	bidcache_close(&c);
}
END_TEST

/*
 * The capture's eviction (evict_to) keeps what the retained segments
 * reference; when it cannot tell what that is for want of memory (or
 * descriptors), it evicts nothing.  Before, a list of segments cut short
 * by a failed allocation was taken whole, and every binary not touched
 * since the daemon started went, a retained segment's too: its samples
 * unresolvable.
 * A segment whose table is damaged holds nothing back (perf could not
 * name its binaries either).
 */
static struct capture *
evict_capture(void)
{
	struct capture *c;
	char	 err[512], body[1000], lnk[PATH_MAX], hex[BUILD_ID_HEX_MAX];
	uint8_t	 id[20];
	struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };

	ck_assert_ptr_nonnull(c = calloc(1, sizeof(*c)));
	ck_assert_int_eq(bidcache_open(&c->cache, cdir, err, sizeof(err)), 0);
	snprintf(c->segdir, sizeof(c->segdir), "%s/segments", dir);
	ck_assert_int_eq(mkdir(c->segdir, 0700), 0);
	c->max_size = 1;
	c->start_wall_ns = (uint64_t)walltime_now();
	memset(body, 'x', sizeof(body));
	memset(id, 7, sizeof(id));
	ck_assert_int_eq(bidcache_add_buf(&c->cache, BIDCACHE_KERNEL, id, sizeof(id), body,
	    sizeof(body), NULL, 0, err, sizeof(err)), 1);
	buildid_to_hex(id, sizeof(id), hex);	/* last referenced long before the start */
	snprintf(lnk, sizeof(lnk), "%s/.build-id/%.2s/%s", cdir, hex, hex + 2);
	ck_assert_int_eq(utimensat(AT_FDCWD, lnk, ts, AT_SYMLINK_NOFOLLOW), 0);
	return c;
}

START_TEST(test_evict_blind)
{
	struct capture *c;
	char	 path[PATH_MAX + 64];
	uint8_t	 id[20];
	int	 fd;

	memset(id, 7, sizeof(id));
	c = evict_capture();
	snprintf(path, sizeof(path), "%s/perf-000001-20261118T110640Z.data", c->segdir);
	ck_assert_int_ge(fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600), 0);
	ck_assert_int_eq(write(fd, "not a perf.data file", 20), 20);
	close(fd);
	/* out of memory listing the segments: nothing evicted, and said */
	check_fail_reallocs = 1;
	evict_to(c, 0, 1);
	check_fail_reallocs = 0;
	ck_assert_msg(bidcache_find(&c->cache, id, sizeof(id), NULL, 0) == 1,
	    "evicted while the retained segments could not be listed");
	ck_assert_int_eq(c->evict_stuck, 1);
	/* listed: the damaged segment names nothing, and the entry goes */
	evict_to(c, 0, 1);
	ck_assert_int_eq(bidcache_find(&c->cache, id, sizeof(id), NULL, 0), 0);
	ck_assert_uint_eq(c->cache.size, 0);
	ck_assert_int_eq(c->evict_stuck, 0);
	bidcache_close(&c->cache);
	free(c);
}
END_TEST

/*
 * Out of memory listing the cache's entries: eviction fails and removes
 * nothing (before: the list's capacity grew before its allocation did,
 * and the next entry was written past the end of the list).
 */
START_TEST(test_evict_scan_oom)
{
	struct bidcache c;
	char	 err[512], body[100];
	uint8_t	 id[20];
	uint64_t left = 0;
	int	 i;

	memset(body, 'x', sizeof(body));
	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	for (i = 1; i <= 3; i++) {	/* three .build-id/xx directories */
		memset(id, i, sizeof(id));
		ck_assert_int_eq(bidcache_add_buf(&c, BIDCACHE_KERNEL, id, sizeof(id), body,
		    sizeof(body), NULL, 0, err, sizeof(err)), 1);
	}
	check_fail_reallocs = 1;
	ck_assert_int_eq(bidcache_evict(&c, 0, NULL, NULL, &left), -ENOMEM);
	check_fail_reallocs = 0;
	for (i = 1; i <= 3; i++) {
		memset(id, i, sizeof(id));
		ck_assert_int_eq(bidcache_find(&c, id, sizeof(id), NULL, 0), 1);
	}
	ck_assert_int_eq(bidcache_evict(&c, 0, NULL, NULL, &left), 3);
	bidcache_close(&c);
}
END_TEST

/*
 * A sparse file is copied sparse: the self binary followed by a 1 GiB
 * hole keeps its build-id (the notes are at the front) and costs the copy
 * what the data costs, not 1 GiB.
 */
START_TEST(test_sparse_copy)
{
	struct bidcache c;
	char	 err[512], path[PATH_MAX];
	struct stat st;
	int	 fd;

	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	fd = make_file("sparse", 1U << 30, NULL);	/* as much of the binary as there is */
	ck_assert_int_eq(ftruncate(fd, 1LL << 30), 0);
	ck_assert_int_eq(bidcache_add_fd(&c, "/opt/sparse", self_id, (size_t)self_len, fd, path,
	    sizeof(path), err, sizeof(err)), 1);
	close(fd);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 1LL << 30);
	ck_assert_int_lt((long long)st.st_blocks * 512, 64LL << 20);
	bidcache_close(&c);
}
END_TEST

static int	 admits, admit_uid;

static int
refuse_cb(void *arg, unsigned uid, uint64_t size, char *err, size_t errlen)
{
	admits++;
	admit_uid = (int)uid;
	snprintf(err, errlen, "refused by policy");
	return -EDQUOT;
}

/* The admission is asked before the copy, with the file's owner; a refusal leaves nothing. */
START_TEST(test_admit)
{
	struct bidcache c;
	char	 err[512];
	int	 fd;

	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	c.admit = refuse_cb;
	fd = make_file("copy", 1U << 30, NULL);
	ck_assert_int_eq(fchown(fd, 4321, 4321), 0);
	ck_assert_int_eq(bidcache_add_fd(&c, "/opt/app", self_id, (size_t)self_len, fd, NULL, 0,
	    err, sizeof(err)), -EDQUOT);
	close(fd);
	ck_assert_int_eq(admits, 1);
	ck_assert_int_eq(admit_uid, 4321);
	ck_assert_str_eq(err, "refused by policy");
	ck_assert_int_eq(count_files(cdir), 0);
	ck_assert_int_eq(bidcache_find(&c, self_id, (size_t)self_len, NULL, 0), 0);
	bidcache_close(&c);
}
END_TEST

/*
 * A separate debug file (objcopy --only-keep-debug) has the binary's
 * build-id and none of its code: not taken as the binary.  Before, the
 * first one mapped (a user can map any readable .debug file) was the
 * build-id's entry for good.  The binary itself is then cached.
 */
START_TEST(test_debug_only_refused)
{
	struct bidcache c;
	char	 err[512], path[PATH_MAX], cmd[2 * PATH_MAX + 64];
	int	 fd;

	snprintf(path, sizeof(path), "%s/self.debug", dir);
	snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug /proc/%d/exe %s", (int)getpid(), path);
	if (system(cmd) != 0) {
		ck_abort_msg("objcopy --only-keep-debug failed (binutils is in the project's deps)");
	}
	ck_assert_int_ge(fd = open(path, O_RDONLY), 0);
	ck_assert_int_eq(buildid_debug_only_fd(fd), 1);
	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	ck_assert_int_eq(bidcache_add_fd(&c, "/usr/bin/app", self_id, (size_t)self_len, fd, NULL,
	    0, err, sizeof(err)), -ENOEXEC);
	close(fd);
	ck_assert_msg(strstr(err, "debug file") != NULL, "message '%s'", err);
	ck_assert_int_eq(bidcache_find(&c, self_id, (size_t)self_len, NULL, 0), 0);
	fd = open_self();
	ck_assert_int_eq(buildid_debug_only_fd(fd), 0);
	ck_assert_int_eq(bidcache_add_fd(&c, "/usr/bin/app", self_id, (size_t)self_len, fd, NULL,
	    0, err, sizeof(err)), 1);
	close(fd);
	bidcache_close(&c);
}
END_TEST

/*
 * What a crash leaves in the middle of a copy (a temporary of hundreds of
 * MB, in no entry and outside max_size) is removed at the next open: each
 * temporary whose writer's pid is gone, or is this process's (an earlier
 * process's with the same pid: a container's daemon is pid 1 each time);
 * another live writer's (pid 1 here) stays.  Before, it was named at
 * random in the entry directory and stayed for good.  An insertion
 * leaves nothing there.
 */
START_TEST(test_crash_leftovers)
{
	struct bidcache c;
	char	 err[512], path[PATH_MAX], mine[64];
	struct stat st;
	int	 fd;

	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	bidcache_close(&c);
	snprintf(path, sizeof(path), "%s/.tmp/.tmp.999999999.7", cdir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 100 << 20), 0);
	close(fd);
	snprintf(mine, sizeof(mine), ".tmp.%d.8", (int)getpid());
	snprintf(path, sizeof(path), "%s/.tmp/%s", cdir, mine);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/.tmp/.tmp.1.9", cdir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.tmp_removed, 2);
	snprintf(path, sizeof(path), "%s/.tmp/.tmp.999999999.7", cdir);
	ck_assert_int_eq(stat(path, &st), -1);
	snprintf(path, sizeof(path), "%s/.tmp/%s", cdir, mine);
	ck_assert_int_eq(stat(path, &st), -1);		/* an earlier process's with our pid */
	snprintf(path, sizeof(path), "%s/.tmp/.tmp.1.9", cdir);
	ck_assert_int_eq(stat(path, &st), 0);		/* a live writer's */
	ck_assert_int_eq(unlink(path), 0);
	fd = open_self();
	ck_assert_int_eq(bidcache_add_fd(&c, "/usr/bin/app", self_id, (size_t)self_len, fd, NULL,
	    0, err, sizeof(err)), 1);
	close(fd);
	snprintf(path, sizeof(path), "%s/.tmp", cdir);
	ck_assert_int_eq(count_files(path), 0);
	bidcache_close(&c);
}
END_TEST

static char	 changed_path[PATH_MAX];

/* The policy's call, before the copy: the file is written over meanwhile (cp v2 over it). */
static int
change_cb(void *arg, unsigned uid, uint64_t size, char *err, size_t errlen)
{
	(void)arg;
	(void)uid;
	(void)size;
	(void)err;
	(void)errlen;
	ck_assert_int_eq(truncate(changed_path, 8192), 0);
	return 0;
}

/*
 * A file cut short or written over while it is copied is not cached: its
 * first pages (the note) would name the old build-id over the rest.
 * Before: a short read left zeros to the old size, the copy's note
 * checked out, and the entry stood for good.
 */
START_TEST(test_changed_while_copied)
{
	struct bidcache c;
	char	 err[512];
	int	 fd;

	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	c.admit = change_cb;
	fd = make_file("lib.so", 1U << 30, NULL);
	snprintf(changed_path, sizeof(changed_path), "%s/lib.so", dir);
	ck_assert_int_eq(bidcache_add_fd(&c, "/usr/lib/lib.so", self_id, (size_t)self_len, fd,
	    NULL, 0, err, sizeof(err)), -ESTALE);
	close(fd);
	ck_assert_msg(strstr(err, "changed while it was copied") != NULL, "message '%s'", err);
	ck_assert_int_eq(bidcache_find(&c, self_id, (size_t)self_len, NULL, 0), 0);
	ck_assert_int_eq(count_files(cdir), 0);
	bidcache_close(&c);
}
END_TEST

/*
 * A copy from a user's mount namespace lives under .ns/NS/, never under
 * the host path; the first host copy of that build-id replaces it (the
 * first file with a build-id must not win), and a later user copy never
 * replaces the host's.
 */
START_TEST(test_namespaces)
{
	struct bidcache c;
	char	 err[512], path[PATH_MAX], want[PATH_MAX], hex[BUILD_ID_HEX_MAX];
	int	 fd;

	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	buildid_to_hex(self_id, (size_t)self_len, hex);
	fd = open_self();
	ck_assert_int_eq(bidcache_add_fd_ns(&c, "/usr/bin/passwd", 4026532999ULL, self_id,
	    (size_t)self_len, fd, path, sizeof(path), err, sizeof(err)), 1);
	snprintf(want, sizeof(want), "%s/.ns/4026532999/usr/bin/passwd/%s/elf", cdir, hex);
	ck_assert_str_eq(path, want);
	ck_assert_int_eq(bidcache_untrusted(&c, self_id, (size_t)self_len), 1);
	/* another user's namespace: present */
	ck_assert_int_eq(bidcache_add_fd_ns(&c, "/usr/bin/other", 4026533000ULL, self_id,
	    (size_t)self_len, fd, path, sizeof(path), err, sizeof(err)), 0);
	/* the host's copy replaces it, and the user's directory goes */
	ck_assert_int_eq(bidcache_add_fd(&c, "/usr/bin/passwd", self_id, (size_t)self_len, fd,
	    path, sizeof(path), err, sizeof(err)), 1);
	snprintf(want, sizeof(want), "%s/usr/bin/passwd/%s/elf", cdir, hex);
	ck_assert_str_eq(path, want);
	ck_assert_int_eq(bidcache_untrusted(&c, self_id, (size_t)self_len), 0);
	snprintf(want, sizeof(want), "%s/.ns", cdir);
	ck_assert_int_eq(access(want, F_OK), -1);
	ck_assert_uint_eq(c.entries, 1);
	/* ... and stays */
	ck_assert_int_eq(bidcache_add_fd_ns(&c, "/usr/bin/passwd", 4026532999ULL, self_id,
	    (size_t)self_len, fd, path, sizeof(path), err, sizeof(err)), 0);
	ck_assert_int_eq(bidcache_untrusted(&c, self_id, (size_t)self_len), 0);
	/* a host path cannot pose as the namespaces' tree */
	ck_assert_int_eq(bidcache_entry_name("/.ns/1/usr/bin/x", self_id, (size_t)self_len, want,
	    sizeof(want)), -EINVAL);
	close(fd);
	bidcache_close(&c);
}
END_TEST

/*
 * Compressed modules: .ko.xz and .ko.zst decompress to the ELF inside,
 * also when it compresses far more than the first buffer's 4x (zeros
 * after the ELF: about 400x), which grows as the decoder asks.
 */
START_TEST(test_decompress)
{
	static const char *const tools[][3] = {
		{ "xz", "m.ko.xz", "" }, { "zstd -q", "m.ko.zst", "" },
		{ "xz", "z.ko.xz", "; head -c 4194304 /dev/zero" },
		{ "zstd -q", "z.ko.zst", "; head -c 4194304 /dev/zero" },
	};
	struct bidcache c;
	char	 cmd[PATH_MAX * 2], path[PATH_MAX], err[512];
	uint8_t	 got[BUILD_ID_MAX];
	size_t	 i;
	int	 fd, dfd;

	ck_assert_int_eq(bidcache_open(&c, cdir, err, sizeof(err)), 0);
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, tools[i][1]);
		snprintf(cmd, sizeof(cmd), "{ cat /proc/%d/exe%s; } | %s -c > '%s'", (int)getpid(),
		    tools[i][2], tools[i][0], path);
		ck_assert_msg(system(cmd) == 0, "%s: cannot run %s (xz-utils and zstd are in "
		    "tests/deps.sh)", tools[i][1], tools[i][0]);
		ck_assert_int_ge(fd = open(path, O_RDONLY), 0);
		dfd = bidcache_decompress(fd, path);
		ck_assert_msg(dfd >= 0, "%s: %d", path, dfd);
		ck_assert_int_eq(buildid_read_fd(dfd, got), self_len);
		ck_assert_mem_eq(got, self_id, (size_t)self_len);
		if (i == 0) {
			/*
			 * A user's file with the module's build-id came first: the
			 * module's own copy, from root's file, replaces it (the
			 * memfd was mode 0777, and so as untrusted as the fake).
			 */
			int	 ufd = make_file("fake", 1U << 30, NULL);
			struct stat st;

			ck_assert_int_eq(fchown(ufd, 4321, 4321), 0);
			ck_assert_int_eq(bidcache_add_fd(&c, "/home/u/fake.ko", self_id,
			    (size_t)self_len, ufd, NULL, 0, err, sizeof(err)), 1);
			close(ufd);
			ck_assert_int_eq(bidcache_untrusted(&c, self_id, (size_t)self_len), 1);
			ck_assert_int_eq(fstat(dfd, &st), 0);
			ck_assert_msg(bidcache_trusted_file(&st), "decompressed %s: mode %o, uid %d",
			    path, (unsigned)st.st_mode, (int)st.st_uid);
			ck_assert_int_eq(bidcache_add_fd(&c, "/lib/modules/6.1/m.ko.xz", self_id,
			    (size_t)self_len, dfd, NULL, 0, err, sizeof(err)), 1);
			ck_assert_int_eq(bidcache_untrusted(&c, self_id, (size_t)self_len), 0);
		}
		close(dfd);
		if (i == 1) {
			/* A module file others may write is no more trusted decompressed. */
			struct stat st;

			ck_assert_int_eq(fchmod(fd, 0666), 0);
			ck_assert_int_ge(dfd = bidcache_decompress(fd, path), 0);
			ck_assert_int_eq(fstat(dfd, &st), 0);
			ck_assert_msg(!bidcache_trusted_file(&st), "decompressed from a file mode 0666: "
			    "trusted (mode %o)", (unsigned)st.st_mode);
			close(dfd);
		}
		/* Cut in half: refused, not a crash. */
		ck_assert_int_ge(dfd = open(path, O_RDWR), 0);
		ck_assert_int_eq(ftruncate(dfd, 200), 0);
		close(dfd);
		ck_assert_int_lt(bidcache_decompress(fd, path), 0);
		close(fd);
	}
	fd = open_self();
	ck_assert_int_eq(bidcache_decompress(fd, "/x/m.ko"), -EINVAL);
	close(fd);
	bidcache_close(&c);
}
END_TEST

/*
 * A streamed request whose client reads nothing: the worker waits for it
 * (CAPTURE_RESULTS_MAX replies undelivered) at most stream_wait_ms in all,
 * then the request is stopped and its last reply is an error.  Before, the
 * worker waited for as long as the client stayed, and every binary the
 * host mapped meanwhile was missed.
 */
START_TEST(test_stream_stalled)
{
	struct capture *c;
	struct creq q;
	struct result *r;
	uint64_t t0;
	int	 i, n = 0;

	ck_assert_ptr_nonnull(c = calloc(1, sizeof(*c)));
	pthread_mutex_init(&c->mu, NULL);
	results_init(c);
	ck_assert_int_ge(c->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), 0);
	c->stream_wait_ms = 300;
	memset(&q, 0, sizeof(q));
	q.more = 1;
	for (i = 0; i < CAPTURE_RESULTS_MAX; i++)
		result_post(c, &q, json_pack("{s:i}", "n", i), 0, 0);
	ck_assert_uint_eq(q.queued, CAPTURE_RESULTS_MAX);
	ck_assert_int_eq(atomic_load(&q.cancelled), 0);
	t0 = mono_ns();
	result_post(c, &q, json_pack("{s:i}", "n", i), 0, 0);	/* waits, then stops it */
	ck_assert_uint_ge(mono_ns() - t0, 250ULL * 1000000);
	ck_assert_int_eq(q.stalled, 1);
	ck_assert_int_eq(atomic_load(&q.cancelled), 1);
	/* a cancelled request's worker posts without waiting; its end is an error */
	t0 = mono_ns();
	result_post(c, &q, json_pack("{s:i}", "n", i + 1), 0, 0);
	result_post(c, &q, json_pack("{s:s}", "summary", "x"), 1, 0);
	ck_assert_uint_lt(mono_ns() - t0, 100ULL * 1000000);
	r = TAILQ_LAST(&c->results, result_head);
	ck_assert_int_eq(r->final, 1);
	ck_assert_int_eq(r->error, 1);
	while ((r = TAILQ_FIRST(&c->results)) != NULL) {
		TAILQ_REMOVE(&c->results, r, entry);
		json_decref(r->msg);
		free(r);
		n++;
	}
	ck_assert_int_eq(n, CAPTURE_RESULTS_MAX + 3);
	close(c->efd);
	pthread_cond_destroy(&c->rcv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
END_TEST

static Suite *
bidcache_suite(void)
{
	Suite	*s = suite_create("bidcache");
	TCase	*tc;

	tc = tcase_create("cache");
	/*
	 * test_decompress runs xz and zstd over 4 MiB: under 1 s alone, but
	 * it outran check's default 4 s twice in CI beside the other unit
	 * tests and the sanitizer builds.
	 */
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_entry_names);
	tcase_add_test(tc, test_add_layout_dedupe);
	tcase_add_test(tc, test_verification);
	tcase_add_test(tc, test_write_fails);
	tcase_add_test(tc, test_planted_symlink);
	tcase_add_test(tc, test_kallsyms_buf);
	tcase_add_test(tc, test_modes);
	tcase_add_test(tc, test_evict);
	tcase_add_test(tc, test_evict_blind);
	tcase_add_test(tc, test_evict_scan_oom);
	tcase_add_test(tc, test_decompress);
	tcase_add_test(tc, test_sparse_copy);
	tcase_add_test(tc, test_admit);
	tcase_add_test(tc, test_changed_while_copied);
	tcase_add_test(tc, test_debug_only_refused);
	tcase_add_test(tc, test_crash_leftovers);
	tcase_add_test(tc, test_namespaces);
	tcase_add_test(tc, test_stream_stalled);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(bidcache_suite)
