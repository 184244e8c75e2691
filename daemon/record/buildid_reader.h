/*
 * bidres.h - the userspace build-id read: for a mapping whose record carries
 * no build-id, read it from the mapped file itself, through
 * /proc/PID/map_files/START-END (the mapped inode, even if the path was
 * replaced or unlinked), else /proc/PID/root/PATH, else PATH.  Results are
 * cached by (maj, min, ino, ino_generation), so each file is parsed once.
 */
#ifndef PERFMAPD_BIDRES_H
#define PERFMAPD_BIDRES_H

#include <stdint.h>

#include "record.h"

struct buildid_reader_entry {
	uint64_t	 key;		/* 0: empty */
	uint32_t	 maj, min;
	uint64_t	 ino, gen;
	int8_t		 size;		/* < 0: -errno of the failed read */
	uint8_t		 id[BUILD_ID_MAX];
};

struct buildid_reader {
	struct buildid_reader_entry *e;
	size_t		 n, cap;
	uint64_t	 reads, hits, failures;
};

int	buildid_reader_init(struct buildid_reader *);
void	buildid_reader_free(struct buildid_reader *);
/*
 * Fill M's build-id; returns its size, or -errno (-ENOENT: no build-id
 * note, -ENOEXEC: not ELF, -EACCES/-ENOENT from /proc: process gone).
 */
int	buildid_reader_resolve(struct buildid_reader *, struct record_mmap *m);
/* Is FILENAME a file path that can carry a build-id ("/..." but not "//anon")? */
int	buildid_reader_is_file(const char *filename);

#endif
