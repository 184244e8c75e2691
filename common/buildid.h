/*
 * buildid.h - the GNU build-id (NT_GNU_BUILD_ID, owner "GNU") of an ELF
 * file, of the running kernel and of its loaded modules, and its hex form.
 *
 * The readers return the id length (1..BUILD_ID_MAX) or a negative errno:
 *
 *	-ENOENT		no build-id note
 *	-ENOEXEC	not an ELF file, or a truncated or corrupt one
 *	-EINVAL		a build-id note that is empty or longer than BUILD_ID_MAX
 *	-EISDIR		the fd is a directory
 *	other		-errno of a failed system call
 *
 * ELF files of either class and byte order are read, executables, shared
 * objects, relocatable objects (.ko) and separate debug files alike,
 * through SHT_NOTE sections first and PT_NOTE segments second (the only
 * source when the section table was removed).
 * A file whose headers point past its end is refused as truncated even
 * when its note is intact: callers use the build-id to accept a copy of a
 * binary.  Nothing is sized from what the file claims: more than 65536
 * sections or 65535 segments is refused (-ENOEXEC), and the note bytes
 * read are capped, so a sparse file of any size with lying headers costs
 * a few kilobytes.  All functions are
 * thread-safe; none uses the file offset of the fd.
 */
#ifndef PERFMAPD_BUILDID_H
#define PERFMAPD_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#include "perf_abi.h"

/* 2 * BUILD_ID_MAX hex digits and a NUL */
#define BUILD_ID_HEX_MAX	(2 * BUILD_ID_MAX + 1)

int	buildid_read_fd(int fd, uint8_t id[BUILD_ID_MAX]);
/*
 * PATH opened by name, as it is: it follows symlinks and would wait in
 * open() on a FIFO.  For the tests' own files only; the daemon opens a
 * user's file through buildid_reader.h, never with this.
 */
int	buildid_read_path(const char *path, uint8_t id[BUILD_ID_MAX]);
/*
 * Is the ELF file FD a separate debug file (objcopy --only-keep-debug,
 * eu-strip -f): executable sections, all without their bytes?  1 yes, 0
 * no (or no sections to tell by), -errno if it does not parse.
 */
int	buildid_debug_only_fd(int fd);

/*
 * A raw note blob, as in /sys/kernel/notes or
 * /sys/module/NAME/notes/.note.gnu.build-id: native byte order, entries
 * padded to 4 bytes.
 */
int	buildid_parse_notes(const void *buf, size_t len,
	    uint8_t id[BUILD_ID_MAX]);
int	buildid_read_kernel(uint8_t id[BUILD_ID_MAX]);
int	buildid_read_module(const char *name, uint8_t id[BUILD_ID_MAX]);

/* Lower-case hex; out holds 2 * len + 1 bytes. */
void	buildid_to_hex(const uint8_t *id, size_t len, char *out);
/* Either case accepted; returns the byte length (1..BUILD_ID_MAX) or -EINVAL. */
int	buildid_from_hex(const char *hex, uint8_t id[BUILD_ID_MAX]);

#endif
