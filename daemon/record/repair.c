/*
 * repair.c - a segment torn by a crash has a valid prologue (header with
 * data.size 0, ids, attrs: all written when it was created) and records up
 * to wherever the writes stopped.  perfdata_walk() finds the last whole
 * record; what the header lacks is rebuilt from the records themselves:
 * the build-id table from MMAP2 records in the build-id form, the time
 * range from the first and last time stamps, SAMPLE_TIME from the first
 * and last sample's.  The kernel's build-id and the machine's topology
 * (hostinfo.h) are added only if the file was written since this boot
 * (the running kernel and CPUs are then the ones that were recorded); an
 * older file gets only the CPU model (CPUDESC, CPUID: the same machine).
 * A compressed segment (PERF_RECORD_COMPRESSED) is cut at the end of the
 * last compressed record that ends on a whole record (perfdata_walk) and
 * gets its HEADER_COMPRESSED back.
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
#include <sys/utsname.h>

#include "buildid.h"
#include "log.h"
#include "record.h"
#include "repair.h"
#include "segment.h"

struct repair_ctx {
	struct record_layouts layouts;	/* each record by its event's attr */
	struct segment	 seg;		/* only its build-id set is used */
	uint64_t	 first, last;
	uint64_t	 records;
	uint64_t	 bytes;		/* of the records, decompressed */
	int		 kernel_map;
};

/*
 * A record of a type the daemon writes: the kernel's, and of perf's own
 * only the round markers.  Bytes after the last whole record (a short
 * write's tail left past the data on a full disk, then a crash) that read
 * as another are not a record: perf refuses a file with a record type it
 * does not know, and every good record before them would be lost with it.
 */
static int
repair_type_ok(const struct perf_event_header *h)
{
	if (h->type >= PERF_RECORD_USER_TYPE_START)
		return (h->type == PERF_RECORD_FINISHED_ROUND ||
		    h->type == PERF_RECORD_FINISHED_INIT) && h->size == sizeof(*h);
	return h->type != 0 && h->type < PERF_RECORD_MAX;
}

static int
repair_record_cb(const struct perf_event_header *h, void *arg)
{
	struct repair_ctx *c = arg;
	struct record rec;

	if (!repair_type_ok(h) ||
	    record_decode(h, h->size, record_layout_of(&c->layouts, h, h->size), &rec) < 0)
		return 1;	/* garbage after the last good record: stop */
	c->records++;
	c->bytes += h->size;
	if (rec.type == PERF_RECORD_SAMPLE)
		segment_note_sample(&c->seg, rec.has_sid ? rec.sid.time : 0);
	if (rec.has_sid && rec.sid.time != 0) {
		if (c->first == 0 || rec.sid.time < c->first)
			c->first = rec.sid.time;
		if (rec.sid.time > c->last)
			c->last = rec.sid.time;
	}
	if ((rec.type == PERF_RECORD_MMAP2 || rec.type == PERF_RECORD_MMAP) &&
	    rec.mmap.pid == (uint32_t)-1 && strncmp(rec.mmap.filename, "[kernel.kallsyms]", 17) == 0)
		c->kernel_map = 1;
	if (rec.type == PERF_RECORD_MMAP2 && rec.mmap.build_id_size > 0)
		segment_add_buildid(&c->seg, rec.mmap.filename, rec.mmap.build_id,
		    rec.mmap.build_id_size, rec.mmap.pid == (uint32_t)-1);
	return 0;
}

static time_t
boot_time(void)
{
	FILE	*f = fopen("/proc/stat", "re");
	char	 line[256];
	long long bt = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "btime %lld", &bt) == 1)
			break;
	fclose(f);
	return (time_t)bt;
}

/*
 * Is there something where F's first record should be, that is not one
 * (its walk kept none)?  Nothing there, or zeros (a power loss before
 * the data reached the disk, a preallocated tail), is an empty file.
 */
static int
data_damaged(const struct perfdata_file *f)
{
	uint8_t	 b[8];
	size_t	 i;

	if (f->file_size < f->h.data.offset || f->file_size - f->h.data.offset < sizeof(b) ||
	    pread(f->fd, b, sizeof(b), (off_t)f->h.data.offset) != (ssize_t)sizeof(b))
		return 0;
	for (i = 0; i < sizeof(b); i++)
		if (b[i] != 0)
			return 1;
	return 0;
}

int
repair_segment(const char *partial, char *err, size_t errlen)
{
	struct perfdata_file f;
	struct perfdata_attr *attrs = NULL;
	struct perfdata	 pd;
	struct perfdata_meta meta;
	struct repair_ctx c;
	struct hostinfo	 hinfo;
	struct utsname	 u;
	struct stat	 st;
	char		 final[PATH_MAX], host[256];
	size_t		 i, len;
	int64_t		 good;
	int		 rc = -1, this_boot;

	memset(&c, 0, sizeof(c));
	memset(&hinfo, 0, sizeof(hinfo));
	memset(&pd, 0, sizeof(pd));
	pd.fd = -1;
	len = strlen(partial);
	if (len < 9 || strcmp(partial + len - 8, ".partial") != 0 || len - 8 >= sizeof(final)) {
		snprintf(err, errlen, "%s: not a .partial segment", partial);
		return -1;
	}
	memcpy(final, partial, len - 8);
	final[len - 8] = '\0';
	if (perfdata_open(&f, partial, err, errlen) < 0)
		return -1;
	if (perfdata_layouts(&f, &c.layouts) < 0) {
		snprintf(err, errlen, "%s: cannot read the sample ids", partial);
		goto out;
	}
	if ((good = perfdata_walk(&f, repair_record_cb, &c)) < 0) {
		snprintf(err, errlen, "%s: read error", partial);
		goto out;
	}
	/*
	 * Not one whole record (a power loss took them all, the start state
	 * too): nothing to keep, and a perf.data without data is one perf
	 * refuses ("data size field is 0").
	 */
	if (good == 0 && data_damaged(&f)) {
		/*
		 * Bytes that are not a record where the first one should be (a
		 * damaged header): not an empty file.  Kept as NAME.corrupt for
		 * whoever can read it, out of the way of the next repair.
		 */
		char	 bad[PATH_MAX + 16];

		snprintf(bad, sizeof(bad), "%s.corrupt", final);
		if (rename(partial, bad) == -1) {
			snprintf(err, errlen, "%s: its first record does not read, and it cannot "
			    "be renamed: %s", partial, strerror(errno));
			goto out;
		}
		log_warnx("%s: its first record does not read%s%s: kept as %s", partial,
		    f.error[0] != '\0' ? ": " : "", f.error, bad);
		rc = 1;
		goto out;
	}
	if (good == 0) {
		if (unlink(partial) == -1) {
			snprintf(err, errlen, "%s: no record to keep, cannot remove it: %s", partial,
			    strerror(errno));
			goto out;
		}
		log_warnx("%s: not one whole record to keep: removed", partial);
		rc = 1;
		goto out;
	}
	if ((attrs = calloc(f.nattrs, sizeof(*attrs))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < f.nattrs; i++) {
		uint64_t *ids;
		size_t	 n;

		if (perfdata_ids(&f, i, &ids, &n) < 0) {
			snprintf(err, errlen, "%s: cannot read the sample ids", partial);
			goto out;
		}
		attrs[i].attr = f.attrs[i].attr;
		attrs[i].name = perf_event_name(&attrs[i].attr);
		attrs[i].ids = ids;
		attrs[i].nids = n;
	}
	this_boot = fstat(f.fd, &st) == 0 && st.st_mtime >= boot_time();
	if (c.kernel_map && this_boot) {
		uint8_t	 id[BUILD_ID_MAX];
		int	 n = buildid_read_kernel(id);

		if (n > 0)
			segment_add_buildid(&c.seg, "[kernel.kallsyms]", id, (uint8_t)n, 1);
	}

	if ((pd.fd = open(partial, O_RDWR | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", partial, strerror(errno));
		goto out;
	}
	pd.data_offset = f.h.data.offset;
	pd.data_size = (uint64_t)good;
	memset(&meta, 0, sizeof(meta));
	uname(&u);
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "%s", u.nodename);
	meta.hostname = host;
	meta.osrelease = u.release;
	meta.arch = u.machine;
	meta.version = "perfmapd " PERFMAPD_VERSION " (repaired)";
	if (hostinfo_load(&hinfo, NULL) == 0) {
		if (!this_boot)
			hostinfo_cpu_model_only(&hinfo, (uint32_t)attrs[0].nids);
		meta.host = &hinfo;
	}
	meta.clockid = -1;
	/*
	 * Compressed records: HEADER_COMPRESSED as the writer would have
	 * written it; the level is not in the stream (0: unknown), and
	 * comp_mmap_len is the writer's (compress.h), the bound the walk
	 * just read the records under.
	 */
	if (f.ncompressed > 0 && good > 0)
		meta.comp = (struct compress_info){ .version = 1, .type = 1, .level = 0,
		    .ratio = (uint32_t)((c.bytes + (uint64_t)good / 2) / (uint64_t)good), .mmap_len = COMPRESS_CHUNK };
	c.seg.t_start = c.first;
	c.seg.t_end = c.last + 1;
	c.seg.pd = pd;
	c.seg.pd.sync = 1;	/* rare, and the last chance for these records */
	c.seg.open = 1;
	snprintf(c.seg.partial, sizeof(c.seg.partial), "%s", partial);
	snprintf(c.seg.path, sizeof(c.seg.path), "%s", final);
	pd.fd = -1;		/* owned by c.seg now */
	if ((rc = segment_close(&c.seg, attrs, f.nattrs, &meta)) < 0) {
		snprintf(err, errlen, "%s: %s", partial, strerror(-rc));
		rc = -1;
		goto out;
	}
	log_info_field("SEGMENT", final, "repaired %s: %llu records (%llu samples) kept, "
	    "%llu bytes of torn tail dropped%s%s", final, (unsigned long long)c.records,
	    (unsigned long long)c.seg.samples,
	    (unsigned long long)(f.file_size - f.h.data.offset - (uint64_t)good),
	    f.error[0] != '\0' ? ": " : "", f.error);
	rc = 0;
out:
	if (attrs != NULL)
		for (i = 0; i < f.nattrs; i++)
			free((void *)attrs[i].ids);
	free(attrs);
	record_layouts_free(&c.layouts);
	if (pd.fd >= 0)
		close(pd.fd);
	bidset_free(&c.seg.bids);
	hostinfo_free(&hinfo);
	perfdata_file_close(&f);
	return rc;
}

/* 1 if PATH reads back whole: header, every record of its data, features. */
static int
segment_whole(const char *path)
{
	struct perfdata_file f;
	struct perf_file_section sec;
	char	 err[512];
	int	 ok;

	if (perfdata_open(&f, path, err, sizeof(err)) < 0)
		return 0;
	ok = f.h.data.size > 0 && perfdata_walk(&f, NULL, NULL) == (int64_t)f.h.data.size &&
	    (!(f.h.adds_features[0] & (1ULL << HEADER_BUILD_ID)) ||
	    perfdata_feature(&f, HEADER_BUILD_ID, &sec) == 0);
	perfdata_file_close(&f);
	return ok;
}

/*
 * With [segments] sync = no, a power loss can leave the segments closed
 * just before it under their final names, incomplete on disk (the page
 * cache was not written back yet).  Those closed before this boot and
 * within RECENT_S of the newest such one are read back whole; one that
 * does not read is renamed NAME.partial, for the repair that follows.
 */
#define RECENT_S	120

static void
recheck_last(const char *dir)
{
	DIR	*d;
	struct dirent *de;
	struct stat st;
	char	 path[PATH_MAX], partial[PATH_MAX + 16];
	time_t	 boot = boot_time(), newest = 0;
	int	 pass;

	if (boot == 0 || (d = opendir(dir)) == NULL)
		return;
	for (pass = 0; pass < 2; pass++) {
		rewinddir(d);
		while ((de = readdir(d)) != NULL) {
			size_t	 len = strlen(de->d_name);

			if (strncmp(de->d_name, "perf-", 5) != 0 || len < 6 ||
			    strcmp(de->d_name + len - 5, ".data") != 0 ||
			    (size_t)snprintf(path, sizeof(path), "%s/%s", dir,
			    de->d_name) >= sizeof(path) ||
			    stat(path, &st) == -1 || st.st_mtime >= boot)
				continue;
			if (pass == 0) {
				if (st.st_mtime > newest)
					newest = st.st_mtime;
				continue;
			}
			if (st.st_mtime < newest - RECENT_S || segment_whole(path))
				continue;
			snprintf(partial, sizeof(partial), "%s.partial", path);
			if (rename(path, partial) == -1)
				log_warn("%s: unreadable after a power loss; cannot rename it", path);
			else
				log_warnx("%s: unreadable after a power loss: repairing it", path);
		}
	}
	closedir(d);
}

int
repair_partials(const char *dir, int *left)
{
	DIR	*d;
	struct dirent *de;
	char	 path[PATH_MAX], err[1024];
	int	 n = 0, failed = 0;

	if ((d = opendir(dir)) == NULL) {
		if (left != NULL)
			*left = 0;
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		int	 partial;

		/* segments only (a pprof's NAME.pb.gz.partial is the profile thread's) */
		if (segment_name_seq(de->d_name, &partial) == 0 || !partial)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path))
			continue;
		if (repair_segment(path, err, sizeof(err)) >= 0)
			n++;
		else {
			failed++;
			log_warnx("cannot repair: %s (left as is)", err);
		}
	}
	closedir(d);
	if (left != NULL)
		*left = failed;
	return n;
}

int
repair_all(const char *dir)
{
	recheck_last(dir);
	return repair_partials(dir, NULL);
}
