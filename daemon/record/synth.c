/*
 * synth.c - start-of-segment state; see synth.h.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include "buildid.h"
#include "log.h"
#include "synth.h"

#define SYNTH_BUF	(PATH_MAX + 256)

static uint64_t
kallsyms_text(void)
{
	FILE	*f;
	char	 line[512], name[256], type;
	unsigned long long addr, found = 0;

	if ((f = fopen("/proc/kallsyms", "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (strcmp(name, "_text") == 0) {
			found = addr;
			break;
		}
		if (found == 0 && strcmp(name, "_stext") == 0)
			found = addr;
	}
	fclose(f);
	return found;
}

/* Module name -> path from modules.dep, written into M->path if found. */
static void
module_paths(struct kmod *mods, size_t n)
{
	struct utsname u;
	FILE	*f;
	char	 dep[PATH_MAX], line[PATH_MAX * 2];
	size_t	 i;

	for (i = 0; i < n; i++)
		snprintf(mods[i].path, sizeof(mods[i].path), "[%s]", mods[i].name);
	if (uname(&u) == -1)
		return;
	snprintf(dep, sizeof(dep), "/lib/modules/%s/modules.dep", u.release);
	if ((f = fopen(dep, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char	*colon = strchr(line, ':'), *base, *dot, name[64];
		size_t	 j;

		if (colon == NULL)
			continue;
		*colon = '\0';
		base = strrchr(line, '/');
		base = base ? base + 1 : line;
		if (strlen(base) >= sizeof(name))
			continue;
		memcpy(name, base, strlen(base) + 1);
		if ((dot = strstr(name, ".ko")) != NULL)
			*dot = '\0';
		for (j = 0; name[j] != '\0'; j++)
			if (name[j] == '-')
				name[j] = '_';
		for (i = 0; i < n; i++)
			if (strcmp(mods[i].name, name) == 0 &&
			    (size_t)snprintf(mods[i].path, sizeof(mods[i].path),
			    "/lib/modules/%s/%s", u.release, line) >= sizeof(mods[i].path))
				snprintf(mods[i].path, sizeof(mods[i].path), "[%s]", name);
	}
	fclose(f);
}

int
kinfo_load(struct kinfo *k)
{
	FILE	*f;
	char	 line[1024];
	int	 rc;

	memset(k, 0, sizeof(*k));
	k->text = kallsyms_text();
	if ((rc = buildid_read_kernel(k->id)) > 0)
		k->idsize = (uint8_t)rc;
	if ((f = fopen("/proc/modules", "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		struct kmod *nm, m;
		unsigned long long size, addr;
		char	 state[32];

		memset(&m, 0, sizeof(m));
		if (sscanf(line, "%63s %llu %*d %*s %31s %llx", m.name, &size, state,
		    &addr) != 4 || addr == 0)
			continue;
		m.addr = addr;
		m.size = size;
		if ((rc = buildid_read_module(m.name, m.id)) > 0)
			m.idsize = (uint8_t)rc;
		if ((nm = reallocarray(k->mods, k->nmods + 1, sizeof(*nm))) == NULL)
			break;
		k->mods = nm;
		k->mods[k->nmods++] = m;
	}
	fclose(f);
	module_paths(k->mods, k->nmods);
	return 0;
}

void
kinfo_free(struct kinfo *k)
{
	free(k->mods);
	memset(k, 0, sizeof(*k));
}

static int
read_line(const char *path, char *buf, size_t len)
{
	FILE	*f = fopen(path, "re");
	char	*nl;

	if (f == NULL)
		return -1;
	if (fgets(buf, (int)len, f) == NULL) {
		fclose(f);
		return -1;
	}
	fclose(f);
	if ((nl = strchr(buf, '\n')) != NULL)
		*nl = '\0';
	return 0;
}

static void
scan_threads(struct model *m, uint32_t pid)
{
	char	 path[64], comm[64];
	DIR	*d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char	 cpath[96];
		uint32_t tid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		tid = (uint32_t)strtoul(de->d_name, NULL, 10);
		snprintf(cpath, sizeof(cpath), "/proc/%u/task/%u/comm", pid, tid);
		if (read_line(cpath, comm, sizeof(comm)) == 0)
			model_set_comm(m, pid, tid, comm, 0);
	}
	closedir(d);
}

static void
scan_maps(struct model *m, struct buildid_reader *br, uint32_t pid)
{
	char	 path[64], line[PATH_MAX + 256];
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		struct record_mmap r;
		unsigned long long start, end, off, ino;
		unsigned int maj, min;
		char	 perms[8], *nl;
		int	 n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms,
		    &off, &maj, &min, &ino, &n) < 7 || n == 0 || perms[2] != 'x')
			continue;
		if ((nl = strchr(line + n, '\n')) != NULL)
			*nl = '\0';
		memset(&r, 0, sizeof(r));
		r.pid = r.tid = pid;
		r.addr = start;
		r.len = end - start;
		r.pgoff = off;
		r.has_inode = 1;
		r.maj = maj;
		r.min = min;
		r.ino = ino;
		r.prot = (perms[0] == 'r' ? PROT_READ : 0) |
		    (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
		r.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		r.filename = line + n;
		if (r.filename[0] == '\0')
			r.filename = "//anon";
		/* A path the kernel marks " (deleted)" is still readable via map_files. */
		if (buildid_reader_is_file(r.filename))
			buildid_reader_resolve(br, &r);
		model_add_map(m, &r, r.build_id_size ? BID_USER : BID_NONE, -1);
	}
	fclose(f);
}

int
synth_scan_proc(struct model *m, struct buildid_reader *br)
{
	DIR	*d;
	struct dirent *de;
	int	 n = 0;

	if ((d = opendir("/proc")) == NULL)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		uint32_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (uint32_t)strtoul(de->d_name, NULL, 10);
		scan_threads(m, pid);
		if (model_find(m, pid) == NULL)
			continue;	/* gone already */
		scan_maps(m, br, pid);
		n++;
	}
	closedir(d);
	return n;
}

struct synth_ctx {
	struct segment	*seg;
	const struct record_layout *layout;
	struct record_sample_id sid;
	uint8_t		 buf[SYNTH_BUF];
	struct synth_stats *st;
	int		 rc;
};

static int
synth_proc_cb(struct model_proc *p, void *arg)
{
	struct synth_ctx *c = arg;
	size_t	 i, n;

	for (i = 0; i < p->nthreads; i++) {
		c->sid.pid = p->pid;
		c->sid.tid = p->threads[i].tid;
		n = record_build_comm(c->buf, p->pid, p->threads[i].tid,
		    p->threads[i].comm, 0, c->layout, &c->sid);
		if ((c->rc = segment_write(c->seg, c->buf, n)) < 0)
			return 1;
		c->st->threads++;
	}
	for (i = 0; i < p->nmaps; i++) {
		struct model_map *mm = &p->maps[i];
		struct record_mmap r;

		memset(&r, 0, sizeof(r));
		r.pid = r.tid = p->pid;
		r.addr = mm->addr;
		r.len = mm->len;
		r.pgoff = mm->pgoff;
		r.maj = mm->maj;
		r.min = mm->min;
		r.ino = mm->ino;
		r.ino_generation = mm->ino_generation;
		r.prot = mm->prot;
		r.flags = mm->flags;
		r.build_id_size = mm->build_id_size;
		memcpy(r.build_id, mm->build_id, sizeof(r.build_id));
		r.filename = mm->filename;
		if (strlen(r.filename) >= PATH_MAX)
			continue;
		c->sid.pid = c->sid.tid = p->pid;
		n = record_build_mmap2(c->buf, &r, PERF_RECORD_MISC_USER, c->layout, &c->sid);
		if ((c->rc = segment_write(c->seg, c->buf, n)) < 0)
			return 1;
		if (r.build_id_size > 0 &&
		    (c->rc = segment_add_buildid(c->seg, r.filename, r.build_id,
		    r.build_id_size, 0)) < 0)
			return 1;
		c->st->maps++;
	}
	c->st->procs++;
	return 0;
}

static int
write_header_only(struct segment *seg, uint32_t type)
{
	struct perf_event_header h = { .type = type, .misc = 0, .size = sizeof(h) };

	return segment_write(seg, &h, sizeof(h));
}

int
synth_write(struct segment *seg, struct model *m, const struct kinfo *k,
    const struct record_layout *l, uint64_t id, uint64_t time, struct synth_stats *st)
{
	struct synth_ctx *c;
	struct record_mmap r;
	size_t	 i, n;
	int	 rc = 0;

	memset(st, 0, sizeof(*st));
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return -ENOMEM;
	c->seg = seg;
	c->layout = l;
	c->st = st;
	c->sid.id = id;
	c->sid.time = time;
	c->sid.pid = c->sid.tid = (uint32_t)-1;

	if (k->text != 0) {
		memset(&r, 0, sizeof(r));
		r.pid = (uint32_t)-1;
		r.addr = k->text;
		r.len = ~0ULL - k->text;
		r.pgoff = k->text;
		r.filename = "[kernel.kallsyms]_text";
		n = record_build_mmap(c->buf, &r, PERF_RECORD_MISC_KERNEL, l, &c->sid);
		if ((rc = segment_write(seg, c->buf, n)) < 0)
			goto out;
	}
	if (k->idsize > 0 &&
	    (rc = segment_add_buildid(seg, "[kernel.kallsyms]", k->id, k->idsize, 1)) < 0)
		goto out;
	for (i = 0; i < k->nmods; i++) {
		memset(&r, 0, sizeof(r));
		r.pid = (uint32_t)-1;
		r.addr = k->mods[i].addr;
		r.len = k->mods[i].size;
		r.filename = k->mods[i].path;
		n = record_build_mmap(c->buf, &r, PERF_RECORD_MISC_KERNEL, l, &c->sid);
		if ((rc = segment_write(seg, c->buf, n)) < 0)
			goto out;
		if (k->mods[i].idsize > 0 &&
		    (rc = segment_add_buildid(seg, k->mods[i].path, k->mods[i].id,
		    k->mods[i].idsize, 1)) < 0)
			goto out;
	}
	if (model_foreach(m, synth_proc_cb, c) != 0 && (rc = c->rc) < 0)
		goto out;
	if ((rc = write_header_only(seg, PERF_RECORD_FINISHED_INIT)) < 0)
		goto out;
	rc = write_header_only(seg, PERF_RECORD_FINISHED_ROUND);
out:
	free(c);
	return rc;
}
