/*
 * export.c - "export": segments and their binaries in one file, laid out
 * as perf archive --all lays out its bundle, so that perf's own
 * instructions work on it:
 *
 *	FILE (compressed as its name says: .tar, .tar.gz, .tar.zst, ...)
 *	  perf-000042-20261122T125535Z.data	the segments, at the top
 *	  ...
 *	  perf.symbols.tar.bz2			the binaries, as perf archive packs
 *						them: .build-id/xx/rest links and
 *						<path>/<build-id>/elf (kallsyms,
 *						vdso), relative to ~/.debug
 *
 *	$ mkdir -p ~/.debug && tar xvf FILE && tar xvf perf.symbols.tar.bz2 -C ~/.debug
 *
 * puts the segments in the current directory and the binaries into the
 * build-id cache, and nothing else there.  The binaries are those the
 * segments' samples fall in (perf buildid-list --with-hits: common/hits.c),
 * kernel, modules and vDSO included when hit; all_binaries takes every one
 * the segments reference.  Members keep the mode of the cache files
 * (bidcache.h: kallsyms stays the owner's only), but the bundle is its
 * requester's: a cache file the control group may not read goes only into
 * root's bundles, which stay root's only in STATE/exports too (anyone
 * else's says how many were withheld).  Written with libarchive into
 * STATE/exports, created 0600; the client copies it where it was asked to.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <archive.h>
#include <archive_entry.h>

#include "buildid.h"
#include "capture_int.h"
#include "hits.h"
#include "log.h"
#include "proto.h"

#define SYMBOLS_NAME	"perf.symbols.tar.bz2"	/* perf archive --all's name */

/* A file as member NAME; PERM -1: the file's own permission bits. */
static int
tar_file(struct archive *a, const char *src, const char *name, int perm, char *err,
    size_t errlen)
{
	struct archive_entry *e;
	struct stat st;
	char	 buf[65536];
	ssize_t	 n;
	int	 fd, rc = -1;

	if ((fd = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1 || fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", src, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	e = archive_entry_new();
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, perm >= 0 ? (mode_t)perm : st.st_mode & 0777);
	archive_entry_set_size(e, st.st_size);
	archive_entry_set_mtime(e, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	if (archive_write_header(a, e) != ARCHIVE_OK)
		goto out;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (archive_write_data(a, buf, (size_t)n) != n)
			goto out;
	rc = n < 0 ? -1 : 0;
out:
	if (rc < 0)
		snprintf(err, errlen, "%s: %s", name, archive_error_string(a) ?
		    archive_error_string(a) : strerror(errno));
	archive_entry_free(e);
	close(fd);
	return rc;
}

static int
tar_link(struct archive *a, const char *name, const char *target)
{
	struct archive_entry *e = archive_entry_new();
	int	 rc;

	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFLNK);
	archive_entry_set_perm(e, 0777);
	archive_entry_set_symlink(e, target);
	archive_entry_set_mtime(e, time(NULL), 0);
	rc = archive_write_header(a, e) == ARCHIVE_OK ? 0 : -1;
	archive_entry_free(e);
	return rc;
}

static const char *
export_ext(const char *name)
{
	static const char *const exts[] = {
		".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar.zst", ".tar",
	};
	size_t	 i, n = name ? strlen(name) : 0;

	for (i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
		if (n > strlen(exts[i]) && strcmp(name + n - strlen(exts[i]), exts[i]) == 0)
			return exts[i];
	return ".tar";
}

/* Keep the newest KEEP files of DIR whose names start with PREFIX (their names sort by date). */
void
prune_dir(const char *dir, const char *prefix, size_t keep)
{
	char	**v = NULL, **nv;
	size_t	 n = 0, i;
	struct dirent *de;
	DIR	*d;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL ||
		    (nv[n] = strdup(de->d_name)) == NULL) {
			if (nv != NULL)
				v = nv;
			break;
		}
		v = nv;
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), strp_cmp);
	for (i = 0; i + keep < n; i++) {
		char	 path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", dir, v[i]);
		unlink(path);
	}
	free_strs(v, n);
}

static void
hit_cb(const uint8_t *id, size_t len, const char *name, void *arg)
{
	idset_add(arg, id, len);
}

/*
 * Keep of BIDS the build-ids the segments' samples hit.  If one segment
 * cannot be walked, every binary is kept (a larger bundle, not a wrong
 * one) and the reason is returned in WHY.
 */
static void
keep_hits(char **segs, size_t nsegs, struct segbid *bids, size_t *nbids, char *why,
    size_t whylen)
{
	struct idset hit = { 0 };
	char	 err[PATH_MAX + 128];
	size_t	 i, kept = 0;

	why[0] = '\0';
	for (i = 0; i < nsegs; i++)
		if (hits_read(segs[i], hit_cb, &hit, err, sizeof(err)) < 0) {
			snprintf(why, whylen, "every binary: %s", err);
			log_warnx("export: %s", why);
			free(hit.v);
			return;
		}
	for (i = 0; i < *nbids; i++) {
		if (idset_has(&hit, bids[i].id, bids[i].len)) {
			struct segbid t = bids[kept];

			bids[kept++] = bids[i];
			bids[i] = t;
		}
	}
	for (i = kept; i < *nbids; i++) {
		free(bids[i].name);
		bids[i].name = NULL;
		while (bids[i].nalt > 0)
			free(bids[i].alt[--bids[i].nalt]);
	}
	*nbids = kept;
	free(hit.v);
}

/* What perf archive prints, for this bundle (NAME quoted for a shell if need be). */
static char *
instructions(const char *name)
{
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	char	*s = NULL;

	int	 plain = strspn(base, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._+-") == strlen(base) && base[0] != '-';

	/* perf's words, and the mkdir that a HOME where perf never ran needs */
	return asprintf(&s, "Now please run:\n\n$ mkdir -p ~/.debug && tar xvf %s%s%s && "
	    "tar xvf " SYMBOLS_NAME " -C ~/.debug\n\nwherever you need to run 'perf report' on.",
	    plain ? "" : "'", base, plain ? "" : "'") < 0 ? NULL : s;
}

/*
 * PATH created for an archive, mode 0600 whatever the umask: its group
 * (the control group) may read it only once it is known to hold nothing
 * the group could not read in the cache.  The fd, or -1 with ERR set.
 */
static int
create_private(const char *path, char *err, size_t errlen)
{
	int	 fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd == -1)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return fd;
}

/*
 * The binaries, packed as perf archive packs them, into the file SYMS.
 * A cache file its group may not read (kallsyms; the copy of a binary
 * nobody else could read: bidcache.h) is packed only for root (*PRIVATE
 * counts them) and withheld from anyone else (*WITHHELD): the requester
 * gets the bundle, whatever the modes inside it say.
 */
static int
write_symbols(struct capture *c, struct job *j, struct storectx *x, struct segbid *bids,
    size_t nbids, const char *syms, size_t *packed, size_t *missing, size_t *withheld,
    size_t *private, char *err, size_t errlen)
{
	struct archive *a = archive_write_new();
	size_t	 i;
	int	 rc = -1, fd;

	if ((fd = create_private(syms, err, errlen)) == -1)
		goto out;
	if (archive_write_set_format_gnutar(a) != ARCHIVE_OK ||
	    archive_write_add_filter_bzip2(a) != ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		snprintf(err, errlen, "%s: %s", syms, archive_error_string(a));
		goto out;
	}
	for (i = 0; i < nbids && !job_cancelled(j); i++) {
		char	 file[PATH_MAX], hex[BUILD_ID_HEX_MAX], rel[PATH_MAX], lname[80];
		char	 target[PATH_MAX + 8], member[PATH_MAX];
		struct stat st;
		json_t	*r = store_one(c, x, &bids[i]);
		const char *base, *status = json_string_value(json_object_get(r, "status"));

		/* No reply (out of memory): missing, like a copy that failed. */
		if (status == NULL || strcmp(status, "OK") != 0 ||
		    bidcache_find(&c->cache, bids[i].id, bids[i].len, file, sizeof(file)) <= 0) {
			(*missing)++;
			result_post(c, j->req, r, 0, 0);
			continue;
		}
		json_decref(r);
		if (stat(file, &st) == 0 && !(st.st_mode & S_IRGRP)) {
			if (j->uid != 0) {
				(*withheld)++;
				continue;
			}
			(*private)++;
		}
		/* The entry as the cache names it: DIR/<rel>/<base>. */
		snprintf(rel, sizeof(rel), "%s", file + strlen(c->cache.dir) + 1);
		if ((base = strrchr(rel, '/')) == NULL)
			continue;
		*(char *)base = '\0';
		base = strrchr(file, '/') + 1;
		buildid_to_hex(bids[i].id, bids[i].len, hex);
		snprintf(lname, sizeof(lname), ".build-id/%.2s/%s", hex, hex + 2);
		snprintf(target, sizeof(target), "../../%s", rel);
		snprintf(member, sizeof(member), "%s/%s", rel, base);
		if (tar_file(a, file, member, -1, err, errlen) < 0 ||
		    tar_link(a, lname, target) < 0)
			goto out;
		(*packed)++;
	}
	if (archive_write_close(a) != ARCHIVE_OK) {
		snprintf(err, errlen, "%s: %s", syms, archive_error_string(a));
		goto out;
	}
	rc = 0;
out:
	archive_write_free(a);
	if (fd >= 0)
		close(fd);
	return rc;
}

void
run_export(struct capture *c, struct job *j)
{
	struct storectx x;
	struct segbid *bids;
	struct archive *a = NULL;
	char	**segs, path[PATH_MAX], tmp[PATH_MAX], syms[PATH_MAX], err[PATH_MAX + 256];
	char	 stamp[32], why[PATH_MAX + 160], *how = NULL;
	const char *ext = export_ext(j->name);
	size_t	 nsegs, nbids, i, packed = 0, missing = 0, withheld = 0, private = 0;
	struct stat st;
	struct tm tm;
	struct timespec now;
	int	 ok = 0, fd = -1;

	if (job_buildids(c, j, &segs, &nsegs, &bids, &nbids) < 0)
		return;
	memset(&x, 0, sizeof(x));
	x.job = j;
	x.debuginfod = j->debuginfod;
	tmp[0] = syms[0] = '\0';
	if (nsegs == 0) {
		snprintf(err, sizeof(err), "no segment to export");
		goto out;
	}
	why[0] = '\0';
	if (!j->all_binaries)
		keep_hits(segs, nsegs, bids, &nbids, why, sizeof(why));
	x.bids = bids;		/* what is left of them: live_scan's paths */
	x.nbids = nbids;
	if (mkdir(c->exportdir, 0750) == -1 && errno != EEXIST) {
		snprintf(err, sizeof(err), "%s: %s", c->exportdir, strerror(errno));
		goto out;
	}
	/* the worker makes one export at a time: a symbols scratch file here is a crash's */
	prune_dir(c->exportdir, ".symbols-", 0);
	/*
	 * Named by the time to the ns, so names sort as the files were made
	 * (prune_exports keeps the last four by name: the one just made among
	 * them) and stay unique (the worker makes one at a time).
	 */
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	snprintf(path, sizeof(path), "%s/perfmapd-export-%s.%09ldZ%s", c->exportdir, stamp,
	    now.tv_nsec, ext);
	snprintf(tmp, sizeof(tmp), "%s.partial", path);
	snprintf(syms, sizeof(syms), "%s/.symbols-%s.%09ldZ.tar.bz2", c->exportdir, stamp,
	    now.tv_nsec);
	if (write_symbols(c, j, &x, bids, nbids, syms, &packed, &missing, &withheld, &private, err,
	    sizeof(err)) < 0)
		goto out;
	a = archive_write_new();
	if (archive_write_set_format_filter_by_ext(a, path) != ARCHIVE_OK &&
	    archive_write_set_format_pax_restricted(a) != ARCHIVE_OK) {
		snprintf(err, sizeof(err), "libarchive: %s", archive_error_string(a));
		goto out;
	}
	if ((fd = create_private(tmp, err, sizeof(err))) == -1)
		goto out;
	if (archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		snprintf(err, sizeof(err), "%s: %s", tmp, archive_error_string(a));
		goto out;
	}
	for (i = 0; i < nsegs && !job_cancelled(j); i++)
		if (tar_file(a, segs[i], strrchr(segs[i], '/') + 1, -1, err, sizeof(err)) < 0)
			goto out;
	/* it may hold the kernel's addresses: its owner's only, as the cache's kallsyms */
	if (tar_file(a, syms, SYMBOLS_NAME, 0600, err, sizeof(err)) < 0)
		goto out;
	/* readable by the group unless it holds what only root may read */
	if (private == 0 && fchmod(fd, 0640) == -1) {
		snprintf(err, sizeof(err), "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (job_cancelled(j)) {
		snprintf(err, sizeof(err), "cancelled");
		goto out;
	}
	if (archive_write_close(a) != ARCHIVE_OK) {
		snprintf(err, sizeof(err), "%s: %s", tmp, archive_error_string(a));
		goto out;
	}
	if (rename(tmp, path) == -1) {
		snprintf(err, sizeof(err), "%s: %s", path, strerror(errno));
		goto out;
	}
	ok = 1;
out:
	if (a != NULL)
		archive_write_free(a);
	if (fd >= 0)
		close(fd);
	if (syms[0] != '\0')
		unlink(syms);
	if (!ok) {
		if (tmp[0] != '\0')
			unlink(tmp);
		result_post(c, j->req, proto_errorf(PROTO_ERR_FAILED, "%s", err), 1, 1);
	} else {
		json_t	*r;

		prune_dir(c->exportdir, "perfmapd-export-", EXPORTS_KEPT);
		how = instructions(j->name != NULL ? j->name : path);
		r = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:s}", "path", path,
		    "segments", (json_int_t)nsegs, "buildids", (json_int_t)packed,
		    "missing", (json_int_t)missing, "withheld", (json_int_t)withheld,
		    "bytes", (json_int_t)(stat(path, &st) == 0 ? st.st_size : 0),
		    "instructions", how != NULL ? how : "");
		result_post(c, j->req, r, 1, 0);
	}
	free(how);
	if (x.dc != NULL)
		debuginfod_end(x.dc);
	live_free(&x);
	segbids_free(bids, nbids);
	free_strs(segs, nsegs);
}
