/*
 * hits.h - the binaries a perf.data file's samples fall in, as perf
 * buildid-list --with-hits finds them (tools/perf/util/build-id.c,
 * build_id__mark_dso_hit): each sample's IP is looked up in the maps of its
 * process (user mode) or in the kernel's and modules' maps (kernel mode),
 * and the binary mapped there is hit.  A map's build-id is the one its
 * MMAP2 record carries, else the build-id table's entry of that name
 * ([vdso], [kernel.kallsyms], a module).  Callers are not followed: a
 * binary seen only in call chains is not hit, as with perf 6.1.
 *
 * The records are taken in file order, which is time order in a segment
 * (the recorder merges the rings by time): a fork copies the parent's maps,
 * an exit drops them, and an exec keeps them under the new image's, as
 * perf does.
 */
#ifndef PERFMAPD_HITS_H
#define PERFMAPD_HITS_H

#include <stddef.h>
#include <stdint.h>

/* Called once per build-id hit. */
typedef void (*hits_fn)(const uint8_t *id, size_t len, const char *name, void *arg);

/*
 * Walk PATH.  Returns the number of build-ids hit, or -1 with ERR set when
 * the file cannot be read or holds more processes or maps than the bounds
 * allow: a caller that must not miss a binary then takes them all.
 */
int	hits_read(const char *path, hits_fn, void *arg, char *err, size_t errlen);

#endif
