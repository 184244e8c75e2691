/*
 * export.c - "export": a perf archive-style tarball of segments and the
 * binaries they reference, written with libarchive into STATE/exports.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <archive.h>
#include <archive_entry.h>

#include "buildid.h"
#include "capture_int.h"
#include "log.h"
#include "proto.h"

static int
tar_file(struct archive *a, const char *src, const char *name, char *err, size_t errlen)
{
	struct archive_entry *e;
	struct stat st;
	char	 buf[65536];
	ssize_t	 n;
	int	 fd, rc = -1;

	if ((fd = open(src, O_RDONLY | O_CLOEXEC)) == -1 || fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", src, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	e = archive_entry_new();
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
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

/* Keep the newest EXPORTS_KEPT files of STATE/exports. */
static void
prune_exports(struct capture *c)
{
	char	**v = NULL, **nv;
	size_t	 n = 0, i;
	struct dirent *de;
	DIR	*d;

	if ((d = opendir(c->exportdir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "perfmapd-export-", 16) != 0)
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
	for (i = 0; i + EXPORTS_KEPT < n; i++) {
		char	 path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", c->exportdir, v[i]);
		unlink(path);
	}
	free_strs(v, n);
}

void
run_export(struct capture *c, struct job *j)
{
	struct storectx x;
	struct segbid *bids;
	struct archive *a = NULL;
	char	**segs, path[PATH_MAX], tmp[PATH_MAX], err[PATH_MAX + 256], stamp[32];
	const char *ext = export_ext(j->name);
	size_t	 nsegs, nbids, i, packed = 0, missing = 0;
	struct stat st;
	struct tm tm;
	time_t	 now = time(NULL);
	int	 ok = 0;

	if (job_buildids(c, j, &segs, &nsegs, &bids, &nbids) < 0)
		return;
	memset(&x, 0, sizeof(x));
	x.job = j;
	x.debuginfod = j->debuginfod;
	if (nsegs == 0) {
		snprintf(err, sizeof(err), "no segment to export");
		goto out;
	}
	if (mkdir(c->exportdir, 0750) == -1 && errno != EEXIST) {
		snprintf(err, sizeof(err), "%s: %s", c->exportdir, strerror(errno));
		goto out;
	}
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(path, sizeof(path), "%s/perfmapd-export-%s-%d%s", c->exportdir, stamp,
	    (int)(random() % 100000), ext);
	snprintf(tmp, sizeof(tmp), "%s.partial", path);
	a = archive_write_new();
	if (archive_write_set_format_filter_by_ext(a, path) != ARCHIVE_OK &&
	    archive_write_set_format_pax_restricted(a) != ARCHIVE_OK) {
		snprintf(err, sizeof(err), "libarchive: %s", archive_error_string(a));
		goto out;
	}
	if (archive_write_open_filename(a, tmp) != ARCHIVE_OK) {
		snprintf(err, sizeof(err), "%s: %s", tmp, archive_error_string(a));
		goto out;
	}
	for (i = 0; i < nsegs && !job_cancelled(j); i++)
		if (tar_file(a, segs[i], strrchr(segs[i], '/') + 1, err, sizeof(err)) < 0)
			goto out;
	for (i = 0; i < nbids && !job_cancelled(j); i++) {
		char	 file[PATH_MAX], hex[BUILD_ID_HEX_MAX], rel[PATH_MAX], lname[80];
		char	 target[PATH_MAX + 8], member[PATH_MAX];
		json_t	*r = store_one(c, &x, &bids[i]);
		const char *base;

		if (strcmp(json_string_value(json_object_get(r, "status")), "OK") != 0 ||
		    bidcache_find(&c->cache, bids[i].id, bids[i].len, file, sizeof(file)) <= 0) {
			missing++;
			result_post(c, j->req, r, 0, 0);
			continue;
		}
		json_decref(r);
		/* The entry as the cache names it: DIR/<rel>/<base>. */
		snprintf(rel, sizeof(rel), "%s", file + strlen(c->cache.dir) + 1);
		base = strrchr(rel, '/');
		if (base == NULL)
			continue;
		*(char *)base = '\0';
		base = strrchr(file, '/') + 1;
		buildid_to_hex(bids[i].id, bids[i].len, hex);
		snprintf(lname, sizeof(lname), ".build-id/%.2s/%s", hex, hex + 2);
		snprintf(target, sizeof(target), "../../%s", rel);
		snprintf(member, sizeof(member), "%s/%s", rel, base);
		if (tar_file(a, file, member, err, sizeof(err)) < 0 ||
		    tar_link(a, lname, target) < 0)
			goto out;
		packed++;
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
	if (!ok) {
		unlink(tmp);
		result_post(c, j->req, proto_errorf(PROTO_ERR_FAILED, "%s", err), 1, 1);
	} else {
		prune_exports(c);
		result_post(c, j->req, json_pack("{s:s, s:I, s:I, s:I, s:I}", "path", path,
		    "segments", (json_int_t)nsegs, "buildids", (json_int_t)packed,
		    "missing", (json_int_t)missing,
		    "bytes", (json_int_t)(stat(path, &st) == 0 ? st.st_size : 0)), 1, 0);
	}
	if (x.dc != NULL)
		debuginfod_end(x.dc);
	live_free(&x);
	segbids_free(bids, nbids);
	free_strs(segs, nsegs);
}
