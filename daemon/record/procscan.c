/*
 * procscan.c - the model at start-up, from /proc: every process's threads
 * and names, and its executable mappings with their build-ids.  After
 * that, the records keep the model up to date; /proc is never scanned
 * again.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mman.h>

#include "binaries.h"
#include "procscan.h"

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

/* Its mount and user namespaces: what the NAMESPACES records say of later ones. */
static void
scan_ns(struct model *m, uint32_t pid)
{
	char	 path[64];
	struct stat mnt, user;

	snprintf(path, sizeof(path), "/proc/%u/ns/mnt", pid);
	if (stat(path, &mnt) == -1)
		return;
	snprintf(path, sizeof(path), "/proc/%u/ns/user", pid);
	if (stat(path, &user) == -1)
		return;
	model_set_ns(m, pid, (uint64_t)mnt.st_ino, (uint64_t)user.st_ino);
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
		model_add_map(m, &r, r.build_id_size ? BID_USER : BID_NONE, BINARY_NONE);
	}
	fclose(f);
}

int
procscan_run(struct model *m, struct buildid_reader *br)
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
		scan_ns(m, pid);
		scan_maps(m, br, pid);
		n++;
	}
	closedir(d);
	return n;
}
