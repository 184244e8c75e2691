/*
 * kernel.c - the kernel and its loaded modules in the index: build-ids
 * from /sys/kernel/notes and /sys/module/NAME/notes, section addresses
 * from /sys/module/NAME/sections, so a module's samples can be placed on
 * another host.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildid.h"
#include "index_int.h"
#include "log.h"
#include "record.h"

static int
section_cmp(const void *a, const void *b)
{
	return strcmp(((const struct index_section *)a)->name,
	    ((const struct index_section *)b)->name);
}

int
index_read_sections(const char *dir, struct index_section **out, size_t *n)
{
	struct index_section *v = NULL, *nv;
	struct dirent *de;
	DIR	*d;
	size_t	 cnt = 0;

	*out = NULL;
	*n = 0;
	if ((d = opendir(dir)) == NULL)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		char	 path[PATH_MAX], buf[64], *end;
		unsigned long long addr;
		ssize_t	 len;
		int	 fd;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strlen(de->d_name) >= sizeof(v->name) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path))
			continue;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		errno = 0;
		addr = strtoull(buf, &end, 16);
		if (errno != 0 || end == buf || (*end != '\0' && !isspace((unsigned char)*end)))
			continue;
		if ((nv = reallocarray(v, cnt + 1, sizeof(*v))) == NULL) {
			closedir(d);
			free(v);
			return -ENOMEM;
		}
		v = nv;
		snprintf(v[cnt].name, sizeof(v[cnt].name), "%s", de->d_name);
		v[cnt].addr = addr;
		cnt++;
	}
	closedir(d);
	if (cnt > 0)
		qsort(v, cnt, sizeof(*v), section_cmp);
	*out = v;
	*n = cnt;
	return 0;
}

static int
read_module_id(const char *sys_module, const char *name, uint8_t id[BUILD_ID_MAX])
{
	char	 path[PATH_MAX];
	uint8_t	 buf[4096];
	ssize_t	 len;
	int	 fd;

	snprintf(path, sizeof(path), "%s/%s/notes/.note.gnu.build-id", sys_module, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -errno;
	len = read(fd, buf, sizeof(buf));
	close(fd);
	if (len <= 0)
		return -ENOENT;
	return buildid_parse_notes(buf, (size_t)len, id);
}

int
index_scan_kernel(struct index *ix, const uint8_t *id, uint8_t idsize,
    const char *proc_modules, const char *sys_module, uint64_t wall_ns)
{
	struct mod_row *seen = NULL, *ns;
	size_t	 nseen = 0, i;
	FILE	*f;
	char	 line[1024];

	if (ix == NULL)
		return 0;
	if (idsize > 0)
		table_add_object(ix, "[kernel.kallsyms]", 0, id, idsize, 0, BID_KERNEL, BINARY_KERNEL,
		    0, wall_ns, 0);
	if ((f = fopen(proc_modules, "re")) == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL) {
		struct mod_row m;
		struct write_op *o;
		unsigned long long size, addr;
		char	 path[PATH_MAX + 64], dir[PATH_MAX];
		int	 rc, known = 0;

		memset(&m, 0, sizeof(m));
		if (sscanf(line, "%63s %llu %*d %*s %*s %llx", m.name, &size, &addr) != 3)
			continue;
		m.addr = addr;
		if ((rc = read_module_id(sys_module, m.name, m.bid)) > 0)
			m.bidsize = (uint8_t)rc;
		snprintf(path, sizeof(path), "[%s]", m.name);
		if (m.bidsize > 0)
			table_add_object(ix, path, 0, m.bid, m.bidsize, 0, BID_KERNEL, BINARY_MODULE, 0,
			    wall_ns, 0);
		for (i = 0; i < ix->nmods; i++)
			if (strcmp(ix->mods[i].name, m.name) == 0 && ix->mods[i].addr == m.addr &&
			    ix->mods[i].bidsize == m.bidsize &&
			    memcmp(ix->mods[i].bid, m.bid, m.bidsize) == 0)
				known = 1;
		if ((o = batch_add(&ix->early, OP_MODULE)) == NULL ||
		    (o->owned = strdup(m.name)) == NULL) {
			if (o != NULL)
				ix->early.n--;
			continue;
		}
		memcpy(o->bid, m.bid, m.bidsize);
		o->bidsize = m.bidsize;
		o->v[0] = (int64_t)addr;
		o->v[1] = (int64_t)size;
		o->v[2] = o->v[3] = (int64_t)wall_ns;
		if (!known) {		/* new or changed: its sections too */
			snprintf(dir, sizeof(dir), "%s/%s/sections", sys_module, m.name);
			index_read_sections(dir, &o->sect, &o->nsect);
			log_debug("index: module %s at 0x%llx, %zu sections", m.name, addr,
			    o->nsect);
		}
		if ((ns = reallocarray(seen, nseen + 1, sizeof(*ns))) != NULL) {
			seen = ns;
			seen[nseen++] = m;
		}
	}
	fclose(f);
	free(ix->mods);
	ix->mods = seen;
	ix->nmods = nseen;
	return (int)nseen;
}
