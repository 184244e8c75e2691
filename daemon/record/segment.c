/*
 * segment.c - segment files and retention.  See segment.h.
 *
 *	segment_open ──► NAME.partial (header with data.size 0, attrs)
 *	segment_write ─► records (buffered)
 *	segment_close ─► features + header, fsync, rename NAME.partial -> NAME
 *
 * A NAME.partial found at start-up is a segment torn by a crash: repair.c
 * finishes it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "hash.h"
#include "log.h"
#include "record.h"
#include "segment.h"

static int
bidset_grow(struct bidset *s)
{
	struct bidset_entry *old = s->e;
	size_t	 oldcap = s->cap, i;

	s->cap = oldcap ? oldcap * 2 : 256;
	if ((s->e = calloc(s->cap, sizeof(*s->e))) == NULL) {
		s->e = old;
		s->cap = oldcap;
		return -ENOMEM;
	}
	for (i = 0; i < oldcap; i++) {
		size_t j;

		if (old[i].filename == NULL)
			continue;
		for (j = old[i].hash & (s->cap - 1); s->e[j].filename != NULL;
		    j = (j + 1) & (s->cap - 1))
			;
		s->e[j] = old[i];
	}
	free(old);
	return 0;
}

void
bidset_free(struct bidset *s)
{
	size_t	 i;

	for (i = 0; i < s->cap; i++)
		free(s->e[i].filename);
	free(s->e);
	memset(s, 0, sizeof(*s));
}

/* The pair (FILENAME, ID) in the table; UNLINKED marks it (perfdata.h) if not yet. */
static int
bidset_add(struct segment *seg, const char *filename, const uint8_t *id, uint8_t size,
    int kernel, int unlinked)
{
	struct bidset *s = &seg->bids;
	uint64_t h;
	size_t	 j;

	if (size == 0 || size > BUILD_ID_MAX)
		return 0;
	h = hash_str(filename, hash_bytes(id, size, HASH_INIT));
	if ((s->n + 1) * 2 > s->cap && bidset_grow(s) < 0)
		return -ENOMEM;
	for (j = h & (s->cap - 1); s->e[j].filename != NULL; j = (j + 1) & (s->cap - 1))
		if (s->e[j].hash == h && s->e[j].size == size &&
		    memcmp(s->e[j].id, id, size) == 0 &&
		    strcmp(s->e[j].filename, filename) == 0) {
			s->e[j].unlinked |= (uint8_t)(unlinked != 0);
			return 0;
		}
	if ((s->e[j].filename = strdup(filename)) == NULL)
		return -ENOMEM;
	s->e[j].hash = h;
	memcpy(s->e[j].id, id, size);
	s->e[j].size = size;
	s->e[j].kernel = (uint8_t)kernel;
	s->e[j].unlinked = (uint8_t)(unlinked != 0);
	s->n++;
	return 0;
}

int
segment_add_buildid(struct segment *seg, const char *filename, const uint8_t *id,
    uint8_t size, int kernel)
{
	return bidset_add(seg, filename, id, size, kernel, 0);
}

/*
 * B's seg_plain says its plain name is in the table already: set by the
 * plain name only (a " (deleted)" one first, then the plain one, as a
 * start state may list them, left the plain one out: perf buildid-list
 * lacked it).  seg_seq: listed by any name.
 *
 * A mapping named "X (deleted)" whose binary is X (the daemon saw the
 * file was unlinked when it was so named: binaries.h) lists X too, with
 * the build-id, marked so (perfdata.h PERFDATA_MISC_UNLINKED): what an
 * index rebuilt from the segment has to go by, as the record keeps the
 * kernel's name (rebuild.c).
 */
int
segment_note_binary(struct segment *seg, struct binary *b, const char *name)
{
	size_t	 len = record_name_len(name);
	int	 rc, plain = name[len] == '\0';
	int	 unlinked = !plain && b->path != NULL && strlen(b->path) == len &&
	    strncmp(b->path, name, len) == 0;

	if (plain && b->seg_plain == seg->seq)
		return 0;
	if ((rc = segment_add_buildid(seg, name, b->bid, b->bidsize,
	    b->kind != BINARY_USER)) < 0)
		return rc;
	b->seg_seq = seg->seq;
	if (unlinked && (rc = bidset_add(seg, b->path, b->bid, b->bidsize,
	    b->kind != BINARY_USER, 1)) < 0)
		return rc;
	if (plain || unlinked)
		b->seg_plain = seg->seq;
	return 0;
}

int
segment_open(struct segment *seg, const char *dir, uint64_t seq, uint64_t t_start,
    uint64_t wall_start_ns, const struct perfdata_attr *attrs, size_t nattrs)
{
	struct tm tm;
	time_t	 t = (time_t)(wall_start_ns / 1000000000ULL);
	char	 stamp[32];
	int	 rc;

	memset(seg, 0, sizeof(*seg));
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if ((size_t)snprintf(seg->path, sizeof(seg->path), "%s/perf-%06llu-%s.data",
	    dir, (unsigned long long)seq, stamp) >= sizeof(seg->path) ||
	    (size_t)snprintf(seg->partial, sizeof(seg->partial), "%s.partial",
	    seg->path) >= sizeof(seg->partial))
		return -ENAMETOOLONG;
	if ((rc = perfdata_create(&seg->pd, seg->partial, attrs, nattrs)) < 0)
		return rc;
	seg->seq = seq;
	seg->t_start = t_start;
	seg->wall_start_ns = wall_start_ns;
	seg->open = 1;
	return 0;
}

int
segment_write(struct segment *seg, const void *buf, size_t len)
{
	return segment_append(seg, buf, len, 1);
}

int
segment_space_error(int rc)
{
	return rc == -ENOSPC || rc == -EDQUOT;
}

/* RC failed a write: room made if it was for want of space (1: try again). */
static int
segment_retry(struct segment *seg, int rc, int tries)
{
	return tries < SEGMENT_ROOM_TRIES && segment_space_error(rc) && seg->room != NULL &&
	    seg->room(seg->room_arg) == 0;
}

int
segment_append(struct segment *seg, const void *buf, size_t len, uint64_t nrec)
{
	int	 rc, tries;

	/* perfdata_write takes all of BUF or none of it: tried again whole */
	for (tries = 0; (rc = perfdata_write(&seg->pd, buf, len)) < 0 &&
	    segment_retry(seg, rc, tries); tries++)
		;
	if (rc == 0)
		seg->records += nrec;
	return rc;
}

int
segment_flush(struct segment *seg)
{
	int	 rc, tries;

	for (tries = 0; (rc = perfdata_flush(&seg->pd)) < 0 && segment_retry(seg, rc, tries);
	    tries++)
		;
	return rc;
}

void
segment_note_sample(struct segment *seg, uint64_t time)
{
	seg->samples++;
	if (time == 0)
		return;
	if (seg->first_sample == 0 || time < seg->first_sample)
		seg->first_sample = time;
	if (time > seg->last_sample)
		seg->last_sample = time;
}

static int
bid_cmp(const void *a, const void *b)
{
	const struct perfdata_buildid *x = a, *y = b;
	int	 c = strcmp(x->filename, y->filename);

	return c != 0 ? c : memcmp(x->id, y->id, BUILD_ID_MAX);
}

int
segment_close(struct segment *seg, const struct perfdata_attr *attrs, size_t nattrs,
    struct perfdata_meta *meta)
{
	struct perfdata_buildid *list;
	size_t	 i, n = 0;
	int	 rc;

	if ((list = calloc(seg->bids.n + 1, sizeof(*list))) == NULL) {
		segment_abandon(seg);
		return -ENOMEM;
	}
	for (i = 0; i < seg->bids.cap; i++) {
		struct bidset_entry *e = &seg->bids.e[i];

		if (e->filename == NULL)
			continue;
		memcpy(list[n].id, e->id, e->size);
		list[n].size = e->size;
		list[n].kernel = e->kernel;
		list[n].unlinked = e->unlinked;
		list[n].filename = e->filename;
		n++;
	}
	qsort(list, n, sizeof(*list), bid_cmp);
	/* perf record's SAMPLE_TIME: the samples', not the cut's (t_start, t_end) */
	meta->first_time = seg->first_sample;
	meta->last_time = seg->last_sample;
	/*
	 * The records still in memory first, room made for them as for any
	 * write (the finish flushes once, and on a full disk threw away up to
	 * its buffer's worth of records: the repair then had only the file's).
	 */
	if ((rc = segment_flush(seg)) == 0)
		rc = perfdata_finish(&seg->pd, attrs, nattrs, meta, list, n);
	else
		perfdata_close(&seg->pd);
	free(list);
	if (rc == 0 && rename(seg->partial, seg->path) == -1)
		rc = -errno;
	seg->open = 0;
	bidset_free(&seg->bids);
	return rc;
}

void
segment_abandon(struct segment *seg)
{
	perfdata_close(&seg->pd);
	bidset_free(&seg->bids);
	seg->open = 0;
}

uint64_t
segment_name_seq(const char *name, int *partial)
{
	unsigned long long seq;
	size_t	 len = strlen(name);
	int	 n = 0;

	if (sscanf(name, "perf-%llu-%*16[0-9TZ].data%n", &seq, &n) < 1 || n == 0)
		return 0;
	*partial = strcmp(name + n, ".partial") == 0;
	if ((size_t)n != len && !*partial)
		return 0;
	return seq;
}

uint64_t
segment_last_seq(const char *dir)
{
	DIR	*d;
	struct dirent *de;
	uint64_t max = 0, s;
	int	 partial;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if ((s = segment_name_seq(de->d_name, &partial)) > max)
			max = s;
	closedir(d);
	return max;
}

struct segfile {
	uint64_t seq;
	uint64_t size;
	time_t	 mtime;
	char	 name[256];
};

static int
segfile_cmp(const void *a, const void *b)
{
	const struct segfile *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int	segfiles_list(const char *, int, struct segfile **, size_t *, uint64_t *);

/*
 * The bytes of the plain files in directory NAME of DFD (a segment's
 * .jit/), each link its share of its file: a map unchanged across closes
 * is one file linked into each segment's .jit (capture/jit.c), and counted
 * whole in each it made retention delete history that took no room.
 */
static uint64_t
dir_bytes(int dfd, const char *name)
{
	DIR	*d;
	struct dirent *de;
	struct stat st;
	uint64_t n = 0;
	int	 fd;

	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return 0;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL)
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			n += ((uint64_t)st.st_size + st.st_nlink - 1) /
			    (st.st_nlink > 0 ? st.st_nlink : 1);
	closedir(d);
	return n;
}

/* What is kept with segment NAME of DFD: its period's pprof, its JIT maps. */
static uint64_t
companion_bytes(int dfd, const char *name)
{
	char	 path[300];
	struct stat st;
	uint64_t n = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s.pb.gz", name) < sizeof(path) &&
	    fstatat(dfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
		n += (uint64_t)st.st_size;
	if ((size_t)snprintf(path, sizeof(path), "%s.jit", name) < sizeof(path))
		n += dir_bytes(dfd, path);
	return n;
}

static int	delete_one(const char *, const char *, const char *,
		    const struct notify *);

int
segment_retention(const char *dir, uint64_t keep_count, uint64_t keep_size,
    uint64_t keep_age_ms, const struct notify *notify, struct segment_usage *usage)
{
	struct segfile	*v;
	size_t		 n, i;
	uint64_t	 total;
	time_t		 now = time(NULL);
	int		 deleted = 0;

	/* with sizes always: status reads them (a walk per call was a user's to make) */
	if (segfiles_list(dir, 1, &v, &n, &total) < 0)
		return -errno;
	for (i = 0; i + 1 < n; i++) {		/* the newest stays */
		/* a file from the future (the clock went back) is not old */
		int	 old = keep_age_ms != 0 && v[i].mtime < now &&
		    (uint64_t)(now - v[i].mtime) * 1000 > keep_age_ms;

		if (!((keep_count != 0 && n - i > keep_count) ||
		    (keep_size != 0 && total > keep_size) || old))
			break;
		if (delete_one(dir, v[i].name, "retention", notify) < 0)
			continue;
		total -= v[i].size;
		deleted++;
	}
	free(v);
	if (usage != NULL)
		*usage = (struct segment_usage){ .count = n - (size_t)deleted, .bytes = total,
		    .known = 1 };
	return deleted;
}

int
segment_delete_oldest(const char *dir, const struct notify *notify, struct segment_usage *usage)
{
	struct segfile	*v;
	size_t		 n;
	uint64_t	 total, freed = 0;
	int		 rc = 0, dfd;

	if (segfiles_list(dir, 0, &v, &n, &total) < 0)
		return -errno;
	if (n > 0 && usage != NULL &&
	    (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		freed = v[0].size + companion_bytes(dfd, v[0].name);
		close(dfd);
	}
	if (n > 0 && delete_one(dir, v[0].name, "disk full", notify) == 0) {
		rc = 1;
		/* status's figures (the last retention pass's) less what went */
		if (usage != NULL && usage->known && usage->count > 0) {
			usage->count--;
			usage->bytes -= freed < usage->bytes ? freed : usage->bytes;
		}
	}
	free(v);
	return rc;
}

/* Remove DIR and the plain files in it (a segment's .jit directory). */
static void
remove_dir(const char *dir)
{
	DIR	*d;
	struct dirent *de;
	int	 fd;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' || (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	if (rmdir(dir) == -1 && errno != ENOENT)
		log_warn("rmdir %s", dir);
}

static int
delete_one(const char *dir, const char *name, const char *why, const struct notify *notify)
{
	char	 path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path) ||
	    unlink(path) == -1) {
		log_warn("%s: unlink %s", why, path);
		return -1;
	}
	/* what is kept with it: its JIT maps (NAME.jit/), its period's pprof */
	if ((size_t)snprintf(path, sizeof(path), "%s/%s.pb.gz", dir, name) < sizeof(path))
		unlink(path);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s.jit", dir, name) < sizeof(path))
		remove_dir(path);
	log_info_field("SEGMENT", name, "%s: deleted %s", why, name);
	if (notify != NULL)
		notify_segment_deleted(notify, name);
	return 0;
}

/*
 * The closed segments of DIR, oldest first, and their total size, each
 * with what is kept with it if SIZES (a user's JIT maps count: they are
 * copies of users' files; a look in each .jit directory).
 */
static int
segfiles_list(const char *dir, int sizes, struct segfile **out, size_t *np, uint64_t *totalp)
{
	DIR		*d;
	struct dirent	*de;
	struct segfile	*v = NULL, *nv;
	size_t		 n = 0;
	uint64_t	 total = 0;
	int		 partial, dfd;

	if ((d = opendir(dir)) == NULL)
		return -1;
	dfd = dirfd(d);
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		uint64_t seq = segment_name_seq(de->d_name, &partial);

		if (seq == 0 || partial || fstatat(dfd, de->d_name, &st, 0) == -1)
			continue;
		if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL)
			break;
		v = nv;
		v[n].seq = seq;
		v[n].size = (uint64_t)st.st_size + (sizes ? companion_bytes(dfd, de->d_name) : 0);
		v[n].mtime = st.st_mtime;
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		total += v[n].size;
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(v, n, sizeof(*v), segfile_cmp);
	*out = v;
	*np = n;
	*totalp = total;
	return 0;
}
