/*
 * kernel.h - what the kernel provides a segment: _text, the kernel's
 * build-id, the loaded modules, and the vDSO.  kinfo_load reads them for
 * each segment (modules come and go); the vDSO is read once.
 */
#ifndef PERFMAPD_KERNEL_H
#define PERFMAPD_KERNEL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "perf_abi.h"

struct kmod {
	char		 name[64];
	char		 path[PATH_MAX];	/* /lib/modules/.../x.ko.xz or [name] */
	uint64_t	 addr, size;
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 idsize;
};

/* Our own vDSO image: every process maps the same one. */
struct vdso {
	void		*image;
	size_t		 len;
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 idsize;		/* 0: no build-id */
};

struct kinfo {
	uint64_t	 text;			/* _text, 0 if hidden (kptr_restrict) */
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 idsize;
	struct kmod	*mods;
	size_t		 nmods;
	const struct vdso *vdso;		/* the recorder's, may be NULL */
};

/* Read _text, the kernel build-id and /proc/modules. */
int	kinfo_load(struct kinfo *);
void	kinfo_free(struct kinfo *);

/* Copy the vDSO from our address space and read its build-id; 0 or -errno. */
int	vdso_load(struct vdso *);
void	vdso_free(struct vdso *);

#endif
