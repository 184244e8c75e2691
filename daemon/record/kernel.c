/*
 * kernel.c - what the kernel provides a segment: the address of _text
 * (for the [kernel.kallsyms] map), the kernel's build-id, the loaded
 * modules with their addresses, build-ids and files, and the vDSO image
 * with its build-id (read once from our own address space: every process
 * maps the same one).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include "buildid.h"
#include "kernel.h"

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

int
vdso_load(struct vdso *v)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char	 line[512];
	FILE	*f;
	int	 fd, rc;

	memset(v, 0, sizeof(*v));
	if (base == 0 || (f = fopen("/proc/self/maps", "re")) == NULL)
		return -ENOENT;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long long s, e;

		if (strstr(line, "[vdso]") == NULL ||
		    sscanf(line, "%llx-%llx", &s, &e) != 2 || s != base)
			continue;
		if ((v->image = malloc(e - s)) != NULL) {
			memcpy(v->image, (const void *)base, e - s);
			v->len = e - s;
		}
		break;
	}
	fclose(f);
	if (v->image == NULL)
		return -ENOENT;
	if ((fd = memfd_create("perfmapd-vdso", MFD_CLOEXEC)) == -1)
		return -errno;
	if (write(fd, v->image, v->len) == (ssize_t)v->len &&
	    (rc = buildid_read_fd(fd, v->id)) > 0)
		v->idsize = (uint8_t)rc;
	close(fd);
	return 0;
}

void
vdso_free(struct vdso *v)
{
	free(v->image);
	memset(v, 0, sizeof(*v));
}
