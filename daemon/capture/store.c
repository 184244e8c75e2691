/*
 * store.c - "store": make sure every build-id the given segments reference
 * is in the cache.  The list of build-ids is each segment's
 * HEADER_BUILD_ID table; segment arguments are names or paths inside
 * STATE/segments only (realpath and prefix check).  A build-id not cached
 * yet is copied from a live process that maps it, else fetched through
 * debuginfod when asked.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <elfutils/debuginfod.h>

#include "buildid.h"
#include "capture_int.h"
#include "log.h"
#include "procfs.h"
#include "perfdata.h"
#include "proto.h"
#include "record/buildid_reader.h"
#include "walltime.h"

void
segbids_free(struct segbid *v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		while (v[i].nalt > 0)
			free(v[i].alt[--v[i].nalt]);
	}
	free(v);
}

struct table_ctx {
	struct segbid	**v;
	size_t		*n;
	struct idset	*seen;
	int		 oom;
};

/* One entry of a segment's build-id table, unless an earlier segment had it. */
static int
table_entry_cb(const struct perfdata_buildid *b, void *arg)
{
	struct table_ctx *t = arg;
	struct segbid *nv, *o;
	uint32_t ix = (uint32_t)*t->n;
	size_t	 k;
	int	 rc;

	if ((rc = idset_add_ix(t->seen, b->id, b->size, &ix)) < 0) {
		t->oom = 1;
		return 1;
	}
	if (rc == 0) {
		/* another name of a build-id seen before: kept, a few of them */
		if (t->v == NULL || *t->v == NULL || ix >= *t->n)
			return 0;	/* an earlier segment's, the set's only (evict.c) */
		o = &(*t->v)[ix];
		if (o->nalt == SEGBID_ALT || strcmp(o->name, b->filename) == 0)
			return 0;
		for (k = 0; k < o->nalt; k++)
			if (strcmp(o->alt[k], b->filename) == 0)
				return 0;
		if ((o->alt[o->nalt] = strdup(b->filename)) == NULL) {
			t->oom = 1;
			return 1;
		}
		o->nalt++;
		return 0;
	}
	if ((nv = reallocarray(*t->v, *t->n + 1, sizeof(**t->v))) == NULL) {
		t->oom = 1;
		return 1;
	}
	*t->v = nv;
	memset(&nv[*t->n], 0, sizeof(nv[*t->n]));
	memcpy(nv[*t->n].id, b->id, b->size);
	nv[*t->n].len = b->size;
	nv[*t->n].kernel = b->kernel;
	if ((nv[*t->n].name = strdup(b->filename)) == NULL) {
		t->oom = 1;
		return 1;
	}
	(*t->n)++;
	return 0;
}

/*
 * A segment's build-id table, appended to *V (duplicates skipped through
 * SEEN), and its wall-clock end (0 if unknown).  Returns 1 without reading
 * the table if the segment ended before SINCE_NS (>= 0).
 */
int
read_segment(const char *path, int64_t since_ns, struct segbid **v, size_t *n,
    struct idset *seen, uint64_t *wall_end, char *err, size_t errlen)
{
	struct perfdata_file pf;
	struct perf_file_section st, cd;
	struct table_ctx tc;
	int	 rc = 0;

	*wall_end = 0;
	if (perfdata_open(&pf, path, err, errlen) < 0)
		return -1;
	if (perfdata_feature(&pf, HEADER_SAMPLE_TIME, &st) == 0 && st.size >= 16 &&
	    perfdata_feature(&pf, HEADER_CLOCK_DATA, &cd) == 0 && cd.size >= 24) {
		uint64_t t[2], clk[3];

		if (pread(pf.fd, t, sizeof(t), (off_t)st.offset) == sizeof(t) &&
		    pread(pf.fd, clk, sizeof(clk), (off_t)cd.offset) == sizeof(clk))
			*wall_end = clk[1] + (t[1] - clk[2]);
	}
	if (since_ns >= 0 && *wall_end != 0 && (int64_t)*wall_end < since_ns) {
		rc = 1;		/* ended before SINCE: not wanted */
		goto out;
	}
	tc.v = v;
	tc.n = n;
	tc.seen = seen;
	tc.oom = 0;
	if (perfdata_buildids(&pf, table_entry_cb, &tc) < 0 || tc.oom) {
		snprintf(err, errlen, "%s: cannot read its build-id table", path);
		rc = -1;
	}
out:
	perfdata_file_close(&pf);
	return rc;
}

int
strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
has_dotdot(const char *s)
{
	const char *p;

	for (p = s; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == s || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return 1;
	return 0;
}

static int
is_segment_name(const char *s)
{
	size_t	 n = strlen(s);

	return strncmp(s, "perf-", 5) == 0 && n > 10 && strcmp(s + n - 5, ".data") == 0;
}

/*
 * The first LEN bytes of path IN with "//" and "/./" made one "/" and no
 * trailing "/" into OUT: 0, or -1 if OUT is too short.
 */
static int
lexical(const char *in, size_t len, char *out, size_t outlen)
{
	size_t	 i, o = 0;

	for (i = 0; i < len; i++) {
		if (in[i] == '/' && o > 0 && out[o - 1] == '/')
			continue;
		if (in[i] == '.' && (i == 0 || in[i - 1] == '/') && (i + 1 == len || in[i + 1] == '/')) {
			i++;	/* "." as a component: gone, with its "/" */
			continue;
		}
		if (o + 1 >= outlen)
			return -1;
		out[o++] = in[i];
	}
	while (o > 1 && out[o - 1] == '/')
		o--;
	out[o] = '\0';
	return 0;
}

/* Path S's directory is, as written, DIR (both taken lexically): a path not walked. */
static int
dir_is(const char *s, const char *dir)
{
	char	 a[PATH_MAX], b[PATH_MAX];

	return lexical(s, (size_t)(strrchr(s, '/') - s), a, sizeof(a)) == 0 &&
	    lexical(dir, strlen(dir), b, sizeof(b)) == 0 && strcmp(a, b) == 0;
}

/*
 * The segment files a request names: its arguments, else every closed
 * segment, those ending at or after SINCE_NS if it is set.  Sorted by
 * name.  An argument is a file name in STATE/segments, or a path whose
 * directory is, as written, STATE/segments or its real path (as the
 * client's realpath gives it).  A user's path is never walked: as root
 * that would follow their symlinks, wait on their FUSE server, and tell
 * whether a file exists in a directory they cannot search.
 */
int
resolve_segments(struct capture *c, struct job *j, char ***out, size_t *nout, char *err,
    size_t errlen)
{
	char	 segreal[PATH_MAX], **v = NULL, **nv;
	size_t	 n = 0, i;
	int	 rc = -1;

	*out = NULL;
	*nout = 0;
	if (realpath(c->segdir, segreal) == NULL) {
		snprintf(err, errlen, "%s: %s", c->segdir, strerror(errno));
		return -1;
	}
	if (j->segments != NULL && json_array_size(j->segments) > 0) {
		for (i = 0; i < json_array_size(j->segments); i++) {
			const char *s = json_string_value(json_array_get(j->segments, i));
			char	 real[PATH_MAX];
			struct stat st;
			const char *base;

			if (s == NULL || *s == '\0' || has_dotdot(s)) {
				snprintf(err, errlen, "%s: not a segment name", s ? s : "?");
				goto out;
			}
			base = strrchr(s, '/') != NULL ? strrchr(s, '/') + 1 : s;
			if ((base != s && !dir_is(s, c->segdir) && !dir_is(s, segreal)) ||
			    !is_segment_name(base)) {
				snprintf(err, errlen, "%s: not a segment in %s", s, c->segdir);
				goto out;
			}
			/* STATE/segments is root's: its file, not through a symlink */
			if ((size_t)snprintf(real, sizeof(real), "%s/%s", segreal, base) >=
			    sizeof(real) || lstat(real, &st) == -1 || !S_ISREG(st.st_mode)) {
				snprintf(err, errlen, "%s: no segment %s in %s", s, base, c->segdir);
				goto out;
			}
			if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL)
				goto out;
			v = nv;
			if ((v[n] = strdup(real)) == NULL)
				goto out;
			n++;
		}
	} else {
		DIR	*d;
		struct dirent *de;

		if ((d = opendir(c->segdir)) == NULL) {
			snprintf(err, errlen, "%s: %s", c->segdir, strerror(errno));
			goto out;
		}
		/* errno cleared before each readdir: a success may leave it set */
		while ((errno = 0, de = readdir(d)) != NULL) {
			if (!is_segment_name(de->d_name))
				continue;
			if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL)
				break;
			v = nv;
			if (asprintf(&v[n], "%s/%s", segreal, de->d_name) < 0)
				break;
			n++;
		}
		/* a part of the list is not the list: eviction keeps what it names */
		if (de != NULL || errno != 0) {
			snprintf(err, errlen, "%s: %s", c->segdir,
			    strerror(de != NULL ? ENOMEM : errno));
			closedir(d);
			goto out;
		}
		closedir(d);
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), strp_cmp);
	rc = 0;
out:
	if (rc < 0) {
		for (i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return rc;
	}
	*out = v;
	*nout = n;
	return 0;
}

static int
debuginfod_progress_cb(debuginfod_client *dc, long a, long b)
{
	struct storectx *x = debuginfod_get_user_data(dc);

	return x->job->req != NULL && atomic_load(&x->job->req->cancelled);
}

void
live_free(struct storectx *x)
{
	size_t	 i;

	for (i = 0; i < x->nlive; i++)
		free(x->live[i].path);
	free(x->live);
	x->live = NULL;
	x->nlive = 0;
}

static int
livepath_cmp(const void *a, const void *b)
{
	return strcmp(((const struct livepath *)a)->path, ((const struct livepath *)b)->path);
}

static struct livepath *
live_find(struct storectx *x, const char *path)
{
	struct livepath key = { .path = (char *)(uintptr_t)path };

	return x->nlive == 0 ? NULL :
	    bsearch(&key, x->live, x->nlive, sizeof(*x->live), livepath_cmp);
}

/*
 * The live mappings of the paths the job's build-ids name, once per job
 * (a scan of every process's maps; only the first LIVE_PER_PATH of each
 * wanted path are kept, so a user's many mappings cost time, not memory).
 */
static void
live_scan(struct storectx *x)
{
	DIR	*d;
	struct dirent *de;
	char	 plain[PATH_MAX];
	size_t	 i, n = 0;

	x->live_done = 1;
	if (x->nbids == 0 || (x->live = calloc(x->nbids, sizeof(*x->live))) == NULL)
		return;
	for (i = 0; i < x->nbids; i++) {
		if (x->bids[i].name == NULL)
			continue;
		name_strip_deleted(x->bids[i].name, plain, sizeof(plain));
		if (plain[0] == '/' && (x->live[n].path = strdup(plain)) != NULL)
			n++;
	}
	qsort(x->live, n, sizeof(*x->live), livepath_cmp);
	for (i = 0, x->nlive = 0; i < n; i++)		/* one entry a path */
		if (x->nlive > 0 && strcmp(x->live[x->nlive - 1].path, x->live[i].path) == 0)
			free(x->live[i].path);
		else
			x->live[x->nlive++] = x->live[i];
	if (x->nlive == 0 || (d = opendir("/proc")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char	 path[64], line[PATH_MAX + 256];
		FILE	*f;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/maps", de->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		while (procfs_line(f, line, sizeof(line))) {
			unsigned long long s, e;
			struct livepath *lp;
			int	 off = 0;

			if (sscanf(line, "%llx-%llx %*s %*x %*x:%*x %*u %n", &s, &e, &off) < 2 ||
			    off == 0 || line[off] != '/')
				continue;
			name_strip_deleted(line + off, plain, sizeof(plain));
			if ((lp = live_find(x, plain)) == NULL || lp->n == LIVE_PER_PATH)
				continue;
			lp->m[lp->n].pid = (uint32_t)strtoul(de->d_name, NULL, 10);
			lp->m[lp->n].start = s;
			lp->m[lp->n].end = e;
			lp->n++;
		}
		fclose(f);
	}
	closedir(d);
}

static int
store_user(struct capture *c, struct storectx *x, const struct segbid *b, char *file,
    size_t filelen, const char **source, char *why, size_t whylen)
{
	char	 plain[PATH_MAX], path[128], err[512];
	struct livepath *lp;
	size_t	 i, tried = 0;
	int	 rc, fd;

	name_strip_deleted(b->name, plain, sizeof(plain));
	*source = "path";
	if (plain[0] == '/') {
		rc = try_path(c, plain, 0, b->name, 0, b->id, b->len, file, filelen, why, whylen);
		if (rc >= 0 || cache_side(rc))
			return rc;
	} else
		reason_add(why, whylen, "%s: not a file path", b->name);
	*source = "map_files";
	if (!x->live_done)
		live_scan(x);
	for (i = 0, lp = live_find(x, plain); lp != NULL && i < lp->n; i++) {
		tried++;
		buildid_reader_map_files(path, sizeof(path), lp->m[i].pid, lp->m[i].start,
		    lp->m[i].end - lp->m[i].start);
		rc = try_path(c, path, lp->m[i].pid, b->name, 0, b->id, b->len, file, filelen, why,
		    whylen);
		if (rc >= 0 || cache_side(rc))
			return rc;
	}
	if (tried == 0)
		reason_add(why, whylen, "no live process maps it");
	if (!x->debuginfod)
		return -ENOENT;
	*source = "debuginfod";
	if (x->dc == NULL && (x->dc = debuginfod_begin()) != NULL) {
		debuginfod_set_user_data(x->dc, x);
		debuginfod_set_progressfn(x->dc, debuginfod_progress_cb);
	}
	if (x->dc == NULL) {
		reason_add(why, whylen, "debuginfod: cannot start a client");
		return -ENOMEM;
	}
	if ((fd = debuginfod_find_executable(x->dc, b->id, (int)b->len, NULL)) < 0) {
		reason_add(why, whylen, "debuginfod: %s", fd == -ENOSYS ?
		    "DEBUGINFOD_URLS is not set in perfmapd's environment" : strerror(-fd));
		return fd;
	}
	/* served to any client, so readable by all (bidcache.h's policy) */
	rc = bidcache_add_fd_public(&c->cache, b->name, b->id, b->len, fd, file, filelen, err,
	    sizeof(err));
	close(fd);
	if (rc < 0)
		reason_add(why, whylen, "debuginfod: %s", err);
	return rc;
}

/* Make sure B is in the cache; the reply parameters for it. */
json_t *
store_one(struct capture *c, struct storectx *x, const struct segbid *b)
{
	char	 hex[BUILD_ID_HEX_MAX], file[PATH_MAX], why[2048] = "";
	const char *source = "cache", *name = b->name;
	struct failrec *f;
	int	 rc, untrusted;

	buildid_to_hex(b->id, b->len, hex);
	file[0] = '\0';
	/*
	 * Present, unless a user's namespace or a user's file made the copy:
	 * anyone can write any build-id note, so the trusted sources are
	 * tried first (a copy from one replaces it), and only if none has
	 * the file is that copy kept as the answer.  (A segment does not say
	 * which namespace its name is of.)
	 */
	if ((untrusted = bidcache_find(&c->cache, b->id, b->len, file, sizeof(file)) > 0) &&
	    !bidcache_untrusted(&c->cache, b->id, b->len)) {
		bidcache_touch(&c->cache, b->id, b->len);
		rc = 0;
	} else if (strcmp(b->name, BIDCACHE_KERNEL) == 0) {
		source = "kallsyms";
		rc = store_kallsyms(c, b->id, b->len, file, sizeof(file), why, sizeof(why));
	} else if (strcmp(b->name, BIDCACHE_VDSO) == 0) {
		source = "vdso";
		rc = store_vdso(c, b->id, b->len, file, sizeof(file), why, sizeof(why));
	} else if (b->kernel) {
		source = "module";
		rc = store_module(c, b->name, b->id, b->len, file, sizeof(file), why,
		    sizeof(why));
	} else {
		struct segbid alt = *b;
		const char *s2;
		size_t	 k;
		int	 r2;

		/* Each of its names while the copy is not a trusted one (or none is). */
		rc = store_user(c, x, b, file, sizeof(file), &source, why, sizeof(why));
		for (k = 0; k < b->nalt && (rc < 0 || bidcache_untrusted(&c->cache, b->id, b->len));
		    k++) {
			alt.name = b->alt[k];
			if ((r2 = store_user(c, x, &alt, file, sizeof(file), &s2, why,
			    sizeof(why))) > rc) {
				rc = r2;
				name = alt.name;	/* the name the copy came by */
				source = s2;
			}
		}
	}
	if (rc < 0 && untrusted && bidcache_find(&c->cache, b->id, b->len, file,
	    sizeof(file)) > 0) {
		bidcache_touch(&c->cache, b->id, b->len);
		rc = 0;
		source = "cache";
	}
	count_result(c, rc >= 0 ? rc : -1);
	if (rc >= 0) {
		fail_forget(c, b->id, b->len);
		x->ok++;
		if (rc > 0)
			x->added++;
		return json_pack("{s:s, s:o, s:s, s:o, s:s}", "buildid", hex, "path",
		    proto_string(name), "status", "OK", "file", proto_string(file), "source",
		    rc > 0 ? source : "cache");
	}
	if ((f = fail_find(c, b->id, b->len)) != NULL && f->reason != NULL)
		reason_add(why, sizeof(why), "at first sight: %s", f->reason);
	if (cache_side(rc) && strstr(why, strerror(-rc)) == NULL)
		reason_add(why, sizeof(why), "%s", strerror(-rc));
	x->failed++;
	return json_pack("{s:s, s:o, s:s, s:o}", "buildid", hex, "path", proto_string(b->name),
	    "status", "FAIL", "reason", proto_string(why[0] ? why : "not found"));
}

int
job_cancelled(const struct job *j)
{
	return j->req != NULL && atomic_load(&j->req->cancelled);
}

/* The build-ids of the job's segments; NULL + error result if bad input. */
int
job_buildids(struct capture *c, struct job *j, char ***segs, size_t *nsegs,
    struct segbid **bids, size_t *nbids)
{
	struct idset seen = { 0 };
	char	 err[PATH_MAX + 128];
	size_t	 i, kept = 0;
	uint64_t end;

	*bids = NULL;
	*nbids = 0;
	if (resolve_segments(c, j, segs, nsegs, err, sizeof(err)) < 0) {
		result_post(c, j->req, proto_error(PROTO_ERR_NOSEGMENT,
		    json_pack("{s:o}", "message", proto_string(err))), 1, 1);
		return -1;
	}
	for (i = 0; i < *nsegs; i++) {
		int64_t since = j->segments != NULL && json_array_size(j->segments) > 0 ?
		    -1 : j->since_ns;
		int	 rc = read_segment((*segs)[i], since, bids, nbids, &seen, &end, err,
		    sizeof(err));

		if (rc < 0)
			log_warnx("%s", err);
		if (rc != 0) {
			free((*segs)[i]);
			continue;
		}
		(*segs)[kept++] = (*segs)[i];
	}
	*nsegs = kept;
	free(seen.v);
	return 0;
}

void
free_strs(char **v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
run_store(struct capture *c, struct job *j)
{
	struct storectx x;
	struct segbid *bids;
	char	**segs;
	size_t	 nsegs, nbids, i;

	if (job_buildids(c, j, &segs, &nsegs, &bids, &nbids) < 0)
		return;
	memset(&x, 0, sizeof(x));
	x.job = j;
	x.debuginfod = j->debuginfod;
	x.bids = bids;
	x.nbids = nbids;
	for (i = 0; i < nbids && !job_cancelled(j) && !stop_late(c); i++)
		result_post(c, j->req, store_one(c, &x, &bids[i]), 0, 0);
	if (j->req == NULL && x.failed > 0)
		log_info("lazy capture of %s: %llu of %zu build-ids could not be stored",
		    nsegs == 1 ? segs[0] : "segments", (unsigned long long)x.failed, nbids);
	if (i < nbids && atomic_load(&c->stop_asked) != 0)
		log_warnx("lazy capture of %s: stopping: %zu of %zu build-ids not stored within "
		    "%d ms", nsegs == 1 ? segs[0] : "segments", nbids - i, nbids,
		    CAPTURE_STOP_KEEP_MS);
	result_post(c, j->req, json_pack("{s:I, s:I, s:I, s:I, s:I, s:s}",
	    "segments", (json_int_t)nsegs, "buildids", (json_int_t)nbids,
	    "ok", (json_int_t)x.ok, "failed", (json_int_t)x.failed,
	    "added", (json_int_t)x.added, "cache", c->cache.dir), 1, 0);
	if (x.dc != NULL)
		debuginfod_end(x.dc);
	live_free(&x);
	segbids_free(bids, nbids);
	free_strs(segs, nsegs);
}
