/*
 * buildid_reader.c - userspace build-id reads under the provenance rule,
 * and their cache; see buildid_reader.h.
 *
 *	query ─► stat map_files ──ok, same inode──► cache? ─hit─► answer
 *	              │                                │ miss
 *	              │                                ▼
 *	              │                 open map_files, read, fstat again ─► answer
 *	              └─gone─► openat2(path, O_PATH, no symlinks), fstat:
 *	                       regular, record's dev/ino, ctime before the map?
 *	                          no ─► replaced / changed / gone
 *	                          yes ─► cache? ─miss─► reopen, generation, read
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/openat2.h>

#include "buildid.h"
#include "buildid_reader.h"
#include "hash.h"
#include "wallclock.h"
#include "walltime.h"

#define READER_MAX	65536		/* cache entries before it is cleared */
/*
 * A file's ctime comes from a coarse clock (up to a tick, 10 ms at HZ=100,
 * behind the real time of the change): a ctime this close to the mapping
 * does not prove the change came before it.
 */
#define CTIME_SLACK_NS	(20LL * 1000 * 1000)

static const char *const cause_names[BIDC_NCAUSES] = {
	[BIDC_OK] = "ok",
	[BIDC_GONE] = "gone",
	[BIDC_REPLACED] = "replaced",
	[BIDC_CHANGED] = "changed",
	[BIDC_TIMEOUT] = "timeout",
	[BIDC_NO_NOTE] = "no-build-id",
	[BIDC_NOT_ELF] = "not-elf",
	[BIDC_NOT_FILE] = "not-regular",
	[BIDC_DENIED] = "denied",
	[BIDC_BUSY] = "busy",
	[BIDC_ERROR] = "error",
	[BIDC_CLOCK] = "clock",
	[BIDC_USERFS] = "user-fs",
};

const char *
buildid_cause_name(int cause)
{
	if (cause < 0 || cause >= BIDC_NCAUSES)
		return "error";
	return cause_names[cause];
}

int
buildid_reader_init(struct buildid_reader *b)
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->mu, NULL);
	b->cap = 1024;
	b->e = calloc(b->cap, sizeof(*b->e));
	return b->e == NULL ? -ENOMEM : 0;
}

void
buildid_reader_free(struct buildid_reader *b)
{
	free(b->e);
	pthread_mutex_destroy(&b->mu);
	memset(b, 0, sizeof(*b));
}

int
buildid_reader_is_file(const char *f)
{
	if (f[0] != '/')
		return 0;
	/* Asked of every mapping twice on the loop: one compare at most, by f[1]. */
	switch (f[1]) {
	case '/': return strncmp(f, "//anon", 6) != 0;
	case 'm': return strncmp(f, "/memfd:", 7) != 0;
	case 'd': return strncmp(f, "/dev/zero", 9) != 0;
	case 'a': return strncmp(f, "/anon_hugepage", 14) != 0;
	case 'S': return strncmp(f, "/SYSV", 5) != 0;
	default: return 1;
	}
}

/*
 * How coarse ST's timestamps are beyond the clock's tick: a second on a
 * file system that keeps no nanoseconds (ext3, ext4 with 128-byte
 * inodes), where two writes in one second leave size, mtime and ctime as
 * they were.  (Both at .000000000 by chance: a second too, harmless.)
 */
static int64_t
ts_gran(const struct stat *st)
{
	return st->st_ctim.tv_nsec == 0 && st->st_mtim.tv_nsec == 0 ? 1000000000LL : 0;
}

/*
 * How far the clock that stamps FD's file system's times may be from
 * ours: 0 where the kernel here stamps them; REMOTE_CLOCK_NS where a
 * server or another node does (NFS, SMB, Ceph, 9p, AFS, a FUSE server
 * root mounted: sshfs, virtiofs; cluster file systems), whose clock a
 * step of ours does not show either.  A server behind by more than the
 * margin put a rewrite after the mapping before it: the new build-id for
 * the old bytes.
 */
#define REMOTE_CLOCK_NS		2000000000LL

static int64_t
clock_doubt(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) == -1)
		return REMOTE_CLOCK_NS;		/* not told: as far as any */
	switch ((unsigned long)sf.f_type) {
	case NFS_SUPER_MAGIC:
	case SMB_SUPER_MAGIC:
	case 0xfe534d42UL:		/* SMB2_MAGIC_NUMBER */
	case 0xff534d42UL:		/* CIFS_MAGIC_NUMBER */
	case 0x00c36400UL:		/* CEPH_SUPER_MAGIC */
	case 0x65735546UL:		/* FUSE_SUPER_MAGIC */
	case V9FS_MAGIC:
	case AFS_SUPER_MAGIC:
	case CODA_SUPER_MAGIC:
	case 0x01161970UL:		/* GFS2_MAGIC */
	case 0x7461636fUL:		/* OCFS2_SUPER_MAGIC */
		return REMOTE_CLOCK_NS;
	default:
		return 0;
	}
}

/* Is a change at CTIME_NS, of timestamps GRAN coarse, before WALL_NS by the margin? */
static int
ctime_before(int64_t ctime_ns, int64_t gran, int64_t wall_ns)
{
	return wall_ns > 0 && ctime_ns + gran + CTIME_SLACK_NS < wall_ns;
}

/*
 * Did the file in state ST last change before WALL_NS, however coarse its
 * timestamps, and however far (DOUBT, clock_doubt) the clock that stamped
 * them?
 */
static int
changed_before(const struct stat *st, int64_t doubt, int64_t wall_ns)
{
	return ctime_before(ts_ns(&st->st_ctim), ts_gran(st) + doubt, wall_ns);
}

/*
 * Were the bytes of the mapped file in state ST written clearly after
 * WALL_NS, the mapping (see resolve_mapped)?  A linked file by its ctime:
 * `cp -p` or `rsync --inplace -t` rewrite it and set the mtime back, and
 * no one sets the ctime (a chmod or a link after the mapping is then taken
 * for a write: unknown, not wrong).  A deleted one by its mtime: its
 * unlink, an upgrade's rename over it, moved the ctime and no byte.
 */
static int
written_after(const struct stat *st, int64_t doubt, int64_t wall_ns)
{
	/* a whole second's stamp S covers [S, S+1): a write then may be after the mapping */
	return ts_ns(st->st_nlink == 0 ? &st->st_mtim : &st->st_ctim) + ts_gran(st) + doubt >
	    wall_ns + CTIME_SLACK_NS;
}

/*
 * The same against a mapping's floor (bid_when: its process's start, the
 * mapping's own time unknown): by the mtime alone.  The window is the
 * process's whole life, in which links and chmods are common (perf record
 * hard-links the binaries it saw into its build-id cache), and each moves
 * the ctime; a rewrite in place (cp, an editor's save) moves the mtime.
 */
static int
written_after_floor(const struct stat *st, int64_t doubt, int64_t floor_ns)
{
	return ts_ns(&st->st_mtim) + ts_gran(st) + doubt > floor_ns + CTIME_SLACK_NS;
}

/* Was the file of ST (DOUBT: clock_doubt) written after the mapping of WHEN (its time, else its floor)? */
static int
written_after_when(const struct stat *st, int64_t doubt, struct bid_when w)
{
	if (w.wall_ns > 0)
		return written_after(st, doubt, (int64_t)w.wall_ns);
	return w.floor_ns > 0 && written_after_floor(st, doubt, (int64_t)w.floor_ns);
}

/* The wall clock now, by a look that sees its steps (wallclock.h). */
static int64_t
wall_now(void)
{
	return wallclock_look(NULL);
}

/*
 * May a proof by time about a mapping stand (wallclock.h)?  Asked after
 * the fstat whose state it judges: no step seen after SINCE.  Its look
 * at the clocks is the one cache_find needs after that fstat.
 */
static int
clock_held(uint64_t since)
{
	wallclock_look(NULL);
	return !wallclock_stepped_after(since);
}

/*
 * Was the file of ST (DOUBT: clock_doubt), mapped at W, unlinked when its
 * name was read (struct bid_answer's UNLINKED)?  No link left, and the
 * last change of its status, which the unlink was or came before, before
 * W's NAMED_NS by the margin: a file named "X (deleted)" unlinked after
 * its name was read moved its ctime past that.
 */
static int
unlinked_when_named(const struct stat *st, int64_t doubt, struct bid_when w)
{
	return st->st_nlink == 0 && changed_before(st, doubt, (int64_t)w.named_ns) &&
	    clock_held(w.since_ns);
}

static int
cause_of(int err)
{
	switch (err) {
	case -ENOENT: return BIDC_NO_NOTE;	/* buildid.h: no build-id note */
	case -ENOEXEC: case -EINVAL: return BIDC_NOT_ELF;
	case -EISDIR: return BIDC_NOT_FILE;
	case -EACCES: case -EPERM: return BIDC_DENIED;
	default: return BIDC_ERROR;
	}
}

/* ---- the cache ------------------------------------------------------ */

static uint64_t
key_of(const struct stat *st)
{
	uint64_t v[2] = { (uint64_t)st->st_dev, (uint64_t)st->st_ino };

	return hash_bytes(v, sizeof(v), HASH_INIT) | 1;
}

static int
same_file_state(const struct buildid_reader_entry *e, const struct stat *st)
{
	return e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
	    e->mtime_ns == ts_ns(&st->st_mtim) && e->ctime_ns == ts_ns(&st->st_ctim);
}

/* The slot of (dev, ino); under mu. */
static struct buildid_reader_entry *
slot(struct buildid_reader *b, const struct stat *st, uint64_t key)
{
	size_t	 j;

	for (j = key & (b->cap - 1); b->e[j].key != 0; j = (j + 1) & (b->cap - 1))
		if (b->e[j].key == key && b->e[j].dev == st->st_dev && b->e[j].ino == st->st_ino)
			return &b->e[j];
	return &b->e[j];
}

/*
 * The entries made before a step of the wall clock go (wallclock.h): a
 * state's timestamps may come again.  Under mu.
 */
static void
cache_epoch(struct buildid_reader *b)
{
	uint64_t steps = wallclock_steps();

	if (steps == b->epoch)
		return;
	memset(b->e, 0, b->cap * sizeof(*b->e));
	b->n = 0;
	b->epoch = steps;
}

/*
 * The answer remembered for the file in state ST, fstat'd before a look
 * at the clocks (a step before the fstat is seen: the cache of before it
 * is emptied first).  clock_held makes that look.
 */
static int
cache_find(struct buildid_reader *b, const struct stat *st, uint64_t gen, struct bid_answer *a)
{
	struct buildid_reader_entry *e;
	int	 hit = 0;

	pthread_mutex_lock(&b->mu);
	cache_epoch(b);
	e = slot(b, st, key_of(st));
	/*
	 * GEN, the record's generation (0: none), where the entry knows the
	 * file's: an inode number freed and handed to a new file, whose state
	 * the cache may know, is not the record's file (is_record_file).
	 */
	if (e->key != 0 && same_file_state(e, st) &&
	    (gen == 0 || !e->has_gen || e->gen == (uint32_t)gen)) {
		a->cause = e->cause;
		a->size = e->idsize;
		memcpy(a->id, e->id, e->idsize);
		a->cached = 1;
		b->hits++;
		hit = 1;
	}
	pthread_mutex_unlock(&b->mu);
	return hit;
}

/* The same, the look made here: the file in state ST was fstat'd just before. */
static int
cache_get(struct buildid_reader *b, const struct stat *st, uint64_t gen, struct bid_answer *a)
{
	wallclock_look(NULL);
	return cache_find(b, st, gen, a);
}

static int
grow(struct buildid_reader *b)
{
	struct buildid_reader_entry *old = b->e, *ne;
	size_t	 oldcap = b->cap, i, j;

	if (b->cap * 2 > READER_MAX) {
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

/* Remember what the file in state ST holds (answers about the file only). */
static void
cache_put(struct buildid_reader *b, const struct stat *st, int has_gen, uint32_t gen,
    const struct bid_answer *a)
{
	struct buildid_reader_entry *e;
	uint64_t key = key_of(st);

	if (a->cause != BIDC_OK && a->cause != BIDC_NO_NOTE && a->cause != BIDC_NOT_ELF)
		return;
	pthread_mutex_lock(&b->mu);
	cache_epoch(b);
	e = slot(b, st, key);
	if (e->key == 0) {
		if ((b->n + 1) * 2 > b->cap) {
			if (grow(b) < 0)
				goto out;
			e = slot(b, st, key);
		}
		b->n++;
	}
	e->key = key;
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	e->size = st->st_size;
	e->mtime_ns = ts_ns(&st->st_mtim);
	e->ctime_ns = ts_ns(&st->st_ctim);
	e->cause = (int8_t)a->cause;
	e->idsize = a->size;
	memcpy(e->id, a->id, a->size);
	e->has_gen = (uint8_t)(has_gen != 0);
	e->gen = gen;
out:
	pthread_mutex_unlock(&b->mu);
}

/* ---- opening a user's file ----------------------------------------- */

void
buildid_reader_map_files(char *buf, size_t len, uint32_t pid, uint64_t addr, uint64_t size)
{
	snprintf(buf, len, "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)addr,
	    (unsigned long long)(addr + size));
}

/* The generation of the open file FD into *GEN: 0, or -1 where its file system keeps none. */
static int
file_generation(int fd, uint32_t *gen)
{
	unsigned int v = 0;	/* the kernel writes an int, whatever the ioctl's name says */

	if (ioctl(fd, FS_IOC_GETVERSION, &v) == -1)
		return -1;
	*gen = (uint32_t)v;
	return 0;
}

/* Is the file's generation GEN (where the record and the file system give one)? */
static int
same_generation(int fd, uint64_t gen)
{
	uint32_t v;

	if (gen == 0 || file_generation(fd, &v) < 0)
		return 1;
	return v == (uint32_t)gen;
}

/* The file behind an O_PATH fd, opened for reading (the same inode). */
static int
reopen_read(int pathfd)
{
	char	 self[64];
	int	 fd;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", pathfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	return fd == -1 ? -errno : fd;
}

/*
 * Whether ST, the state of the file FD, is the file a record names by
 * device MAJ:MIN and inode INO (generation GEN, 0: not given).  The inode
 * number alone is not: any user can make tmpfs files or memfds until one
 * gets the number of a system library, and map it where the library was.
 * btrfs and overlayfs are the file systems whose st_dev is not the super
 * block's device that the kernel puts in the record (st_dev names the
 * subvolume, or the overlay); there the inode and, where the file system
 * keeps one, its generation are all there is to compare.
 */
static int
is_record_file(int fd, const struct stat *st, uint32_t maj, uint32_t min, uint64_t ino,
    uint64_t gen)
{
	struct statfs sf;

	if (st->st_ino != ino)
		return 0;
	if (st->st_dev == makedev(maj, min))
		return same_generation(fd, gen);
	if (fstatfs(fd, &sf) == -1)
		return 0;
	return ((unsigned long)sf.f_type == BTRFS_SUPER_MAGIC ||
	    (unsigned long)sf.f_type == OVERLAYFS_SUPER_MAGIC) && same_generation(fd, gen);
}

/* Does GUARD (NULL: none) refuse the O_PATH handle PFD?  Its reason in its buffer. */
static int
refused(const struct bid_guard *guard, int pfd)
{
	return guard != NULL && guard->fn(pfd, guard->pid, guard->why, guard->whylen);
}

int
buildid_reader_open_mapped(uint32_t pid, uint64_t addr, uint64_t len, int has_inode,
    uint32_t maj, uint32_t min, uint64_t ino, uint64_t gen, const struct bid_guard *guard,
    struct stat *st)
{
	char	 path[96];
	int	 fd;

	/*
	 * A magic link to the mapped file: following it is the point.  GUARD
	 * looks at what it leads to at the open (a user can map another file
	 * at the range after any earlier look).
	 */
	buildid_reader_map_files(path, sizeof(path), pid, addr, len);
	fd = buildid_reader_open_regular(path, 1, guard, st);
	if (fd >= 0 && has_inode && !is_record_file(fd, st, maj, min, ino, gen)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* PATH as O_PATH without following any symlink: no open(2) of what it names. */
static int
open_path_nofollow(const char *path)
{
	struct open_how how;
	int	 fd;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	return fd == -1 ? -errno : fd;
}

/*
 * Was directory DFD's mount (id and device) the one of the directory the
 * guard last let pass in this walk, *LAST (mask 0: none yet)?  Then it
 * needs no verdict of its own: a guard judges a handle by its mount (struct
 * bid_guard), and a mount crossed on the way has another id.  Else *LAST
 * is made DFD's, for the caller to ask the guard.  Without STATX_MNT_ID
 * (before Linux 5.8) every directory is judged.
 */
static int
same_mount_passed(int dfd, struct statx *last)
{
	struct statx stx;

	if (statx(dfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == -1 ||
	    !(stx.stx_mask & STATX_MNT_ID)) {
		last->stx_mask = 0;
		return 0;
	}
	if ((last->stx_mask & STATX_MNT_ID) && stx.stx_mnt_id == last->stx_mnt_id &&
	    stx.stx_dev_major == last->stx_dev_major && stx.stx_dev_minor == last->stx_dev_minor)
		return 1;
	*last = stx;
	return 0;
}

/*
 * The same, one component at a time with GUARD (NULL: at once) shown each
 * mount a directory of the path is on before anything is looked up in it:
 * a mount crossed on the way (a user's FUSE file system mounted on a
 * directory of the path) is refused before its server is asked about the
 * next name.  The guard is asked once a mount, not once a directory: a
 * user's path of 2,000 directories made the reader judge the same mount
 * 2,000 times (its block devices looked at in sysfs each time), and a
 * dozen such paths kept the reads past their deadline.  The file itself
 * is always judged.  -EBID_GUARD: GUARD refused.
 */
static int
open_path_guarded(const char *path, const struct bid_guard *guard)
{
	struct open_how how;
	struct statx passed = { .stx_mask = 0 };
	char	 buf[PATH_MAX], *comp, *next, *save = NULL;
	int	 dfd, nfd;

	if (guard == NULL)
		return open_path_nofollow(path);
	if (path[0] != '/' || strlen(path) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, path, strlen(path) + 1);
	if ((dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -errno;
	memset(&how, 0, sizeof(how));
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	for (comp = strtok_r(buf, "/", &save); comp != NULL; comp = next) {
		if (!same_mount_passed(dfd, &passed) && refused(guard, dfd)) {
			close(dfd);
			return -EBID_GUARD;
		}
		/* A directory on the way that is a symlink: ELOOP, as a whole walk says. */
		next = strtok_r(NULL, "/", &save);
		how.flags = O_PATH | O_CLOEXEC | (next == NULL ? O_NOFOLLOW : O_DIRECTORY);
		nfd = (int)syscall(SYS_openat2, dfd, comp, &how, sizeof(how));
		close(dfd);
		if (nfd == -1)
			return -errno;
		dfd = nfd;
	}
	if (refused(guard, dfd)) {	/* the file itself: a FUSE file bind-mounted there */
		close(dfd);
		return -EBID_GUARD;
	}
	return dfd;
}

int
buildid_reader_reopen_regular(int pfd, struct stat *st)
{
	struct stat rst;
	int	 fd;

	if (fstat(pfd, st) == -1)
		return -errno;
	if (!S_ISREG(st->st_mode))
		return S_ISLNK(st->st_mode) ? -ELOOP : -EISDIR;
	if ((fd = reopen_read(pfd)) < 0)
		return fd;
	if (fstat(fd, &rst) == -1 || rst.st_dev != st->st_dev || rst.st_ino != st->st_ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int
buildid_reader_open_regular(const char *path, int magic, const struct bid_guard *guard,
    struct stat *st)
{
	int	 pfd, fd;

	/* O_PATH: the magic link followed, no open(2) of a FIFO or a device yet. */
	if (magic) {
		if ((pfd = open(path, O_PATH | O_CLOEXEC)) == -1)
			pfd = -errno;
		else if (refused(guard, pfd)) {
			close(pfd);
			pfd = -EBID_GUARD;
		}
	} else
		pfd = open_path_guarded(path, guard);
	if (pfd < 0)
		return pfd;
	fd = buildid_reader_reopen_regular(pfd, st);
	close(pfd);
	return fd;
}

int
buildid_reader_open_verified(const char *path, uint32_t maj, uint32_t min, uint64_t ino,
    uint64_t gen, const struct bid_guard *guard, struct stat *st)
{
	int	 pfd, fd;

	if ((pfd = open_path_guarded(path, guard)) < 0)
		return pfd;
	/* Another file than the record's is not opened at all. */
	if (fstat(pfd, st) == -1)
		fd = -errno;
	else if (st->st_dev != makedev(maj, min) || st->st_ino != ino)
		fd = -ESTALE;
	else if ((fd = buildid_reader_reopen_regular(pfd, st)) >= 0 &&
	    !same_generation(fd, gen)) {
		close(fd);
		fd = -ESTALE;
	}
	close(pfd);
	return fd;
}

/* ---- reading -------------------------------------------------------- */

/*
 * Read the build-id of FD, a regular file whose state was ST; the answer
 * stands only if the file did not change while it was read.
 */
static void
read_fd(struct buildid_reader *b, int fd, const struct stat *st, struct bid_answer *a)
{
	struct stat after;
	uint32_t gen = 0;
	int64_t	 at = wall_now();
	int	 rc;

	pthread_mutex_lock(&b->mu);
	b->reads++;
	pthread_mutex_unlock(&b->mu);
	rc = buildid_read_fd(fd, a->id);
	if (fstat(fd, &after) == -1 || after.st_size != st->st_size ||
	    ts_ns(&after.st_mtim) != ts_ns(&st->st_mtim) ||
	    ts_ns(&after.st_ctim) != ts_ns(&st->st_ctim)) {
		a->cause = BIDC_CHANGED;
		a->size = 0;
		return;
	}
	if (rc > 0) {
		a->cause = BIDC_OK;
		a->size = (uint8_t)rc;
	} else {
		a->cause = cause_of(rc);
		a->size = 0;
	}
	/*
	 * Remembered only if the file's state was already old when it was
	 * read: a write after the read then shows in the state.  (A write in
	 * the same tick, or second, as the state's ctime would not: the cache
	 * would answer the old content for the new.)
	 */
	if (changed_before(st, clock_doubt(fd), at)) {
		int	 has_gen = file_generation(fd, &gen) == 0;

		cache_put(b, st, has_gen, gen, a);
	}
}

/* The file a build-id was just read from goes to *KEEP if wanted. */
static void
keep_or_close(int fd, const struct bid_answer *a, int *keep)
{
	if (keep != NULL && a->cause == BIDC_OK)
		*keep = fd;
	else
		close(fd);
}

/*
 * Rule 1: through map_files.  Returns 1 when answered, 0 when the mapping
 * is gone (the process exited, or the range now maps another file).
 */
static int
resolve_mapped(struct buildid_reader *b, const struct bid_query *q, struct bid_answer *a,
    int *keep)
{
	struct stat st, fst;
	char	 path[96], why[256];
	const struct bid_guard *guard = bid_guard_of(b->guard, why, q->pid);
	int64_t	 doubt;
	int	 fd, pfd, rc;

	/*
	 * The magic link followed as O_PATH: the file reached, nothing asked
	 * of its file system yet; the guard sees it before the stat does.
	 */
	buildid_reader_map_files(path, sizeof(path), q->pid, q->addr, q->len);
	if ((pfd = open(path, O_PATH | O_CLOEXEC)) == -1) {
		if (errno == ENOENT || errno == ESRCH)
			return 0;
		a->cause = errno == EACCES || errno == EPERM ? BIDC_DENIED : BIDC_ERROR;
		return 1;
	}
	if (refused(guard, pfd)) {
		close(pfd);
		a->cause = BIDC_USERFS;
		return 1;
	}
	/* Whose path the kernel's name is (struct bid_answer). */
	a->foreign = b->host_mount != NULL && b->host_mount(pfd) != 1;
	rc = fstat(pfd, &st);
	doubt = rc == 0 ? clock_doubt(pfd) : 0;
	close(pfd);
	if (rc == -1) {
		a->cause = errno == EACCES || errno == EPERM ? BIDC_DENIED : BIDC_ERROR;
		return 1;
	}
	/* The device is compared once the file is open (the cache: when it is the record's). */
	if (q->has_inode && st.st_ino != q->ino)
		return 0;
	if (!S_ISREG(st.st_mode)) {
		a->cause = BIDC_NOT_FILE;
		return 1;
	}
	a->unlinked = (uint8_t)unlinked_when_named(&st, doubt, q->map);
	/*
	 * Its bytes now are the mapped ones unless it was written since: a
	 * file rewritten in place (cp over a loaded library) keeps its inode,
	 * and map_files reaches it.  Written clearly after the mapping:
	 * changed.  A write within the margin of the mapping is not told from
	 * a build just before the run (cc, then exec) and is not refused.
	 */
	if (written_after_when(&st, doubt, q->map)) {
		a->cause = BIDC_CHANGED;
		return 1;
	}
	/*
	 * That is a proof by time: it stands only if no step of the wall
	 * clock was seen after the mapping (wallclock.h), since a step back
	 * would put a rewrite's ctime before it.
	 */
	if (q->map.wall_ns > 0 && !clock_held(q->map.since_ns)) {
		a->cause = BIDC_CLOCK;
		return 1;
	}
	if ((!q->has_inode || st.st_dev == makedev(q->maj, q->min)) &&
	    cache_get(b, &st, q->gen, a))
		return 1;
	if ((fd = buildid_reader_open_mapped(q->pid, q->addr, q->len, q->has_inode, q->maj,
	    q->min, q->ino, q->gen, guard, &fst)) < 0) {
		if (fd == -ENOENT || fd == -ESRCH || fd == -ESTALE)
			return 0;
		a->cause = fd == -EISDIR ? BIDC_NOT_FILE : fd == -EBID_GUARD ? BIDC_USERFS :
		    cause_of(fd);
		return 1;
	}
	/*
	 * The file read is the one judged, as above: it may have been written
	 * between that look and this open (the guard's wait, the cache's lock).
	 */
	if (written_after_when(&fst, clock_doubt(fd), q->map)) {
		a->cause = BIDC_CHANGED;
		close(fd);
		return 1;
	}
	if (q->map.wall_ns > 0 && !clock_held(q->map.since_ns)) {
		a->cause = BIDC_CLOCK;
		close(fd);
		return 1;
	}
	/* Proven by inode and generation (btrfs, overlayfs): the cache by the file's own state. */
	if (fst.st_dev != makedev(q->maj, q->min) && cache_get(b, &fst, q->gen, a)) {
		close(fd);
		return 1;
	}
	read_fd(b, fd, &fst, a);
	keep_or_close(fd, a, keep);
	return 1;
}

/* Rule 2: the path, if it is proven to be the mapped file, unchanged. */
static void
resolve_by_name(struct buildid_reader *b, const struct bid_query *q, struct bid_answer *a,
    int *keep)
{
	struct stat st;
	char	 why[256];
	int	 pfd, fd;

	/* The file found is the host's at the record's path, if any (struct bid_answer). */
	a->cause = BIDC_GONE;
	a->unlinked = a->foreign = 0;
	/*
	 * Nothing to compare, unlinked when it was mapped, or mapped at an
	 * unknown time (the start-up scan): no state of the file could be
	 * proven older than the mapping, so the path is not walked (its file
	 * system, maybe a user's server, is asked nothing).
	 */
	if (!q->has_inode || q->map.wall_ns == 0 || q->filename[0] != '/' ||
	    record_name_len(q->filename) != strlen(q->filename))
		return;
	if ((pfd = open_path_guarded(q->filename, bid_guard_of(b->guard, why, 0))) < 0) {
		if (pfd == -EACCES || pfd == -EPERM)
			a->cause = BIDC_DENIED;
		else if (pfd == -EBID_GUARD)
			a->cause = BIDC_USERFS;
		return;		/* not there, or through a symlink: not provably it */
	}
	if (fstat(pfd, &st) == -1) {
		a->cause = BIDC_ERROR;
		goto out;
	}
	if (st.st_dev != makedev(q->maj, q->min) || st.st_ino != q->ino) {
		a->cause = BIDC_REPLACED;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		a->cause = BIDC_NOT_FILE;
		goto out;
	}
	/* Its content is the mapped content only if it last changed before the mapping. */
	if (!changed_before(&st, clock_doubt(pfd), (int64_t)q->map.wall_ns)) {
		a->cause = BIDC_CHANGED;
		goto out;
	}
	if (!clock_held(q->map.since_ns)) {
		a->cause = BIDC_CLOCK;
		goto out;
	}
	if (cache_find(b, &st, q->gen, a))
		goto out;
	if ((fd = reopen_read(pfd)) < 0) {
		a->cause = cause_of(fd);
		goto out;
	}
	if (!same_generation(fd, q->gen))
		a->cause = BIDC_REPLACED;
	else
		read_fd(b, fd, &st, a);
	keep_or_close(fd, a, keep);
out:
	close(pfd);
}

/* File systems whose fstat of an open file does no I/O and asks no server. */
static int
local_fs(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) == -1)
		return 0;
	/*
	 * Not tmpfs: its inode numbers wrap at 2^32, so two live files can
	 * share one and a pin would answer for the other.  Not btrfs: its
	 * records' device is not the one fstat gives (no proof by name there
	 * either).
	 */
	switch ((unsigned long)sf.f_type) {
	case EXT4_SUPER_MAGIC:		/* ext2, ext3 and ext4 share it */
	case XFS_SUPER_MAGIC:
		return 1;
	default:
		return 0;
	}
}

/* A linked regular file whose content only root can change (an ACL shows in the group bits). */
static int
root_only(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == 0 &&
	    (st->st_mode & (S_IWGRP | S_IWOTH)) == 0 && st->st_nlink > 0;
}

/*
 * May the file behind PFD, in state ST, with answer A, be pinned
 * (buildid_reader.h)?  Its state must be older than now by the margin, a
 * second more for whole-second timestamps (as every state the cache
 * remembers is): any change after this proof then shows in the state, the
 * same second included.  Whole seconds are common: images built by tools
 * that write inodes themselves give every system file a ctime of
 * .000000000, and refusing them refused every pin on such hosts.
 */
static int
pinnable(int pfd, const struct stat *st, const struct bid_answer *a)
{
	return a->cause == BIDC_OK && a->size > 0 && root_only(st) &&
	    changed_before(st, 0, wall_now()) && local_fs(pfd);
}

int
buildid_pin_holds(const struct bid_pin *p, const struct stat *st)
{
	return p->fd >= 0 && st->st_dev == p->dev && st->st_ino == p->ino &&
	    st->st_size == p->size && ts_ns(&st->st_mtim) == p->mtime_ns &&
	    ts_ns(&st->st_ctim) == p->ctime_ns && root_only(st);
}

int
buildid_pin_before(const struct bid_pin *p, uint64_t map_wall_ns)
{
	return ctime_before(p->ctime_ns, p->gran, (int64_t)map_wall_ns);
}

int
buildid_reader_known(struct buildid_reader *b, const struct bid_query *q, struct bid_when when,
    struct bid_answer *a, struct bid_pin *pin)
{
	struct bid_answer ca;
	struct stat st;
	char	 why[256];
	int	 pfd, rc = 0;

	if (!q->has_inode || when.wall_ns == 0 || !buildid_reader_is_file(q->filename) ||
	    record_name_len(q->filename) != strlen(q->filename))
		return 0;
	/* a refusal: no proof by name; each mapping is then read on its own */
	if ((pfd = open_path_guarded(q->filename, bid_guard_of(b->guard, why, 0))) < 0)
		return 0;
	/* Rule 2's tests, and a cache entry for the file in this very state. */
	memset(&ca, 0, sizeof(ca));
	if (fstat(pfd, &st) == 0 && st.st_dev == makedev(q->maj, q->min) &&
	    st.st_ino == q->ino && S_ISREG(st.st_mode) &&
	    changed_before(&st, clock_doubt(pfd), (int64_t)when.wall_ns) &&
	    clock_held(when.since_ns) &&
	    cache_find(b, &st, q->gen, &ca)) {
		*a = ca;
		rc = 1;
		if (pin != NULL && pin->fd < 0 && pinnable(pfd, &st, &ca)) {
			pin->fd = pfd;
			pin->dev = st.st_dev;
			pin->ino = st.st_ino;
			pin->size = st.st_size;
			pin->mtime_ns = ts_ns(&st.st_mtim);
			pin->ctime_ns = ts_ns(&st.st_ctim);
			pin->gran = ts_gran(&st);
			pin->steps = wallclock_steps();	/* pinnable looked after the fstat */
			pin->a = ca;
			return rc;
		}
	}
	close(pfd);
	return rc;
}

void
buildid_reader_resolve(struct buildid_reader *b, const struct bid_query *q, struct bid_answer *a,
    int *fd)
{
	memset(a, 0, sizeof(*a));
	if (fd != NULL)
		*fd = -1;
	if (!buildid_reader_is_file(q->filename)) {
		a->cause = BIDC_NOT_FILE;
		return;
	}
	if (!resolve_mapped(b, q, a, fd))
		resolve_by_name(b, q, a, fd);
}
