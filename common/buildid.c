/*
 * buildid.c - see buildid.h.
 *
 * The input is hostile: binaries come from any process on the host, and
 * copies in the build-id cache may be truncated.  A file may lie about
 * anything, its size included (a sparse file is as large as it says), so
 * nothing is sized from what it claims: the headers are decoded here, in
 * fixed chunks, and every count and read is capped.  Reading goes in
 * three steps:
 *
 *	1. buildid_check_ehdr: decode the ELF header and check that the
 *	   program and section header tables lie inside the file and hold at
 *	   most BUILDID_PHNUM_MAX / BUILDID_SHNUM_MAX entries;
 *	2. check that every section with contents lies inside the file - or
 *	   every segment, when there is no section table - so that a
 *	   truncated file is refused;
 *	3. read each SHT_NOTE section, then each PT_NOTE segment, with pread
 *	   and walk its notes here, every size checked against what is left;
 *	   at most BUILDID_NOTE_MAX bytes per region, BUILDID_READ_MAX per
 *	   file.
 *
 * Sections come first because they are what stays true in a separate
 * debug file: eu-strip -f and objcopy --only-keep-debug keep the program
 * headers of the stripped binary, pointing at offsets that now hold
 * something else or lie past the end.  Segments are the fallback, and the
 * only source for a binary whose section table was removed.
 *
 * Everything is read with pread, never mapped: a mapped file truncated by
 * someone else while we parse it would kill the daemon with SIGBUS.  The
 * memory a read takes is a few kilobytes of headers and the note regions
 * (bounded above), whatever the file says: a 20 KB sparse file claiming
 * millions of sections is refused after reading one header, where libelf
 * used to allocate per section (2 GB).
 */
#include <sys/stat.h>

#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildid.h"

#define BUILDID_NOTE_MAX	(1U << 20)	/* largest note region read */
#define BUILDID_READ_MAX	(8U << 20)	/* note bytes read per file */
#define BUILDID_SYSFS_MAX	(64U << 10)	/* largest sysfs notes file */
#define BUILDID_NHDR_SIZE	12		/* namesz, descsz, type */
#define BUILDID_SHNUM_MAX	65536		/* sections a file may have */
#define BUILDID_PHNUM_MAX	65535		/* segments (PN_XNUM - 1) */

#if __BYTE_ORDER == __LITTLE_ENDIAN
#define BUILDID_ELFDATA_NATIVE	ELFDATA2LSB
#else
#define BUILDID_ELFDATA_NATIVE	ELFDATA2MSB
#endif

/* One ELF file being read. */
struct buildid_file {
	int		 fd;
	uint64_t	 size;		/* st_size */
	int		 swap;		/* foreign byte order */
	int		 is64;
	uint64_t	 phoff, shoff;
	size_t		 phnum, shnum;
	size_t		 phentsize, shentsize;
	size_t		 budget;	/* note bytes left to read */
	int		 corrupt;	/* a note region did not parse */
	size_t		 code, nocode;	/* executable sections with contents, without */
};

/* A section or segment header, decoded: what the reader needs of it. */
struct buildid_hdr {
	uint32_t	 type;
	uint64_t	 offset, size, align;
	uint64_t	 flags;		/* sh_flags or p_flags */
};

/* Headers are read in chunks of this many bytes: no allocation per header. */
#define BUILDID_HDR_CHUNK	4096

static uint16_t
buildid_get16(const uint8_t *p, int swap)
{
	uint16_t	 v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap16(v) : v;
}

static uint32_t
buildid_get32(const uint8_t *p, int swap)
{
	uint32_t	 v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

static uint64_t
buildid_get64(const uint8_t *p, int swap)
{
	uint64_t	 v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap64(v) : v;
}

static uint64_t
buildid_align(uint64_t v, size_t align)
{
	return (v + align - 1) & ~((uint64_t)align - 1);
}

/* pread until LEN bytes or end of file; returns the count or -errno. */
static ssize_t
buildid_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t	 done = 0;
	ssize_t	 n;

	if (off > (uint64_t)INT64_MAX - len)
		return -EINVAL;
	while (done < len) {
		n = pread(fd, (uint8_t *)buf + done, len - done,
		    (off_t)(off + done));
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

/*
 * Walk the notes of BUF, entries padded to ALIGN from the start of BUF,
 * header words in foreign byte order if SWAP.  The last entry may lack
 * its trailing padding; trailing bytes too short for a header must be
 * zero.
 */
static int
buildid_walk_notes(const uint8_t *buf, size_t len, size_t align, int swap,
    uint8_t id[BUILD_ID_MAX])
{
	uint64_t	 off = 0, desc_off, next;
	uint32_t	 namesz, descsz, type;
	size_t		 i;

	while (len - off >= BUILDID_NHDR_SIZE) {
		namesz = buildid_get32(buf + off, swap);
		descsz = buildid_get32(buf + off + 4, swap);
		type = buildid_get32(buf + off + 8, swap);
		desc_off = buildid_align(off + BUILDID_NHDR_SIZE + namesz,
		    align);
		if (desc_off > len || descsz > len - desc_off)
			return -ENOEXEC;
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    memcmp(buf + off + BUILDID_NHDR_SIZE, "GNU", 4) == 0) {
			if (descsz == 0 || descsz > BUILD_ID_MAX)
				return -EINVAL;
			memcpy(id, buf + desc_off, descsz);
			return descsz;
		}
		next = buildid_align(desc_off + descsz, align);
		if (next >= len)
			return -ENOENT;
		off = next;
	}
	for (i = off; i < len; i++)
		if (buf[i] != 0)
			return -ENOEXEC;
	return -ENOENT;
}

int
buildid_parse_notes(const void *buf, size_t len, uint8_t id[BUILD_ID_MAX])
{
	if (buf == NULL || len == 0)
		return -ENOENT;
	return buildid_walk_notes(buf, len, 4, 0, id);
}

/* Is [OFF, OFF + LEN) inside the file? */
static int
buildid_in_file(const struct buildid_file *bf, uint64_t off, uint64_t len)
{
	return off <= bf->size && len <= bf->size - off;
}

/*
 * Step 1: decode the ELF header and check that the header tables are
 * inside the file and within the caps.  Sets the table fields of BF,
 * resolving the extended numbering (PN_XNUM, e_shnum 0) through section 0.
 */
static int
buildid_check_ehdr(struct buildid_file *bf, const uint8_t *ehdr, size_t len)
{
	uint8_t		 shdr0[sizeof(Elf64_Shdr)];
	uint64_t	 phoff, shoff, shnum, phnum;
	size_t		 phentsize, shentsize, want;
	ssize_t		 n;
	int		 swap = bf->swap, is64, r;

	is64 = ehdr[EI_CLASS] == ELFCLASS64;
	want = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	if (len < want || bf->size < want) {
		r = -ENOEXEC;
		goto out;
	}
	if (is64) {
		phoff = buildid_get64(ehdr + offsetof(Elf64_Ehdr, e_phoff), swap);
		shoff = buildid_get64(ehdr + offsetof(Elf64_Ehdr, e_shoff), swap);
		phentsize = buildid_get16(ehdr +
		    offsetof(Elf64_Ehdr, e_phentsize), swap);
		phnum = buildid_get16(ehdr + offsetof(Elf64_Ehdr, e_phnum), swap);
		shentsize = buildid_get16(ehdr +
		    offsetof(Elf64_Ehdr, e_shentsize), swap);
		shnum = buildid_get16(ehdr + offsetof(Elf64_Ehdr, e_shnum), swap);
	} else {
		phoff = buildid_get32(ehdr + offsetof(Elf32_Ehdr, e_phoff), swap);
		shoff = buildid_get32(ehdr + offsetof(Elf32_Ehdr, e_shoff), swap);
		phentsize = buildid_get16(ehdr +
		    offsetof(Elf32_Ehdr, e_phentsize), swap);
		phnum = buildid_get16(ehdr + offsetof(Elf32_Ehdr, e_phnum), swap);
		shentsize = buildid_get16(ehdr +
		    offsetof(Elf32_Ehdr, e_shentsize), swap);
		shnum = buildid_get16(ehdr + offsetof(Elf32_Ehdr, e_shnum), swap);
	}

	if (shoff == 0) {
		/* no section header table: nothing may need one */
		if (shnum != 0 || phnum == PN_XNUM) {
			r = -ENOEXEC;
			goto out;
		}
	} else {
		if (shentsize != (is64 ? sizeof(Elf64_Shdr) :
		    sizeof(Elf32_Shdr)) || !buildid_in_file(bf, shoff,
		    shentsize)) {
			r = -ENOEXEC;
			goto out;
		}
		if (shnum == 0 || phnum == PN_XNUM) {
			n = buildid_pread_full(bf->fd, shdr0, shentsize, shoff);
			if (n < 0) {
				r = n;
				goto out;
			}
			if ((size_t)n != shentsize) {
				r = -ENOEXEC;
				goto out;
			}
		}
		if (shnum == 0)
			shnum = is64 ? buildid_get64(shdr0 +
			    offsetof(Elf64_Shdr, sh_size), swap) :
			    buildid_get32(shdr0 +
			    offsetof(Elf32_Shdr, sh_size), swap);
		if (phnum == PN_XNUM)
			phnum = is64 ? buildid_get32(shdr0 +
			    offsetof(Elf64_Shdr, sh_info), swap) :
			    buildid_get32(shdr0 +
			    offsetof(Elf32_Shdr, sh_info), swap);
		/*
		 * shnum can be 2^64 - 1: compare without multiplying.  A
		 * sparse file can be as large as it claims, so the size is
		 * not enough: the count is capped too.
		 */
		if (shnum == 0 || shnum > BUILDID_SHNUM_MAX ||
		    shnum > (bf->size - shoff) / shentsize) {
			r = -ENOEXEC;
			goto out;
		}
	}

	if (phnum != 0 && (phentsize != (is64 ? sizeof(Elf64_Phdr) :
	    sizeof(Elf32_Phdr)) || phoff > bf->size || phnum > BUILDID_PHNUM_MAX ||
	    phnum > (bf->size - phoff) / phentsize)) {
		r = -ENOEXEC;
		goto out;
	}
	bf->is64 = is64;
	bf->phoff = phoff;
	bf->shoff = shoff;
	bf->phentsize = phentsize;
	bf->shentsize = shentsize;
	bf->phnum = phnum;
	bf->shnum = shoff == 0 ? 0 : shnum;
	r = 0;
out:
	return r;
}

/* Decode section header RAW. */
static void
buildid_decode_shdr(const struct buildid_file *bf, const uint8_t *raw,
    struct buildid_hdr *h)
{
	int	 swap = bf->swap;

	if (bf->is64) {
		h->type = buildid_get32(raw + offsetof(Elf64_Shdr, sh_type), swap);
		h->offset = buildid_get64(raw + offsetof(Elf64_Shdr, sh_offset), swap);
		h->size = buildid_get64(raw + offsetof(Elf64_Shdr, sh_size), swap);
		h->align = buildid_get64(raw + offsetof(Elf64_Shdr, sh_addralign), swap);
		h->flags = buildid_get64(raw + offsetof(Elf64_Shdr, sh_flags), swap);
	} else {
		h->type = buildid_get32(raw + offsetof(Elf32_Shdr, sh_type), swap);
		h->offset = buildid_get32(raw + offsetof(Elf32_Shdr, sh_offset), swap);
		h->size = buildid_get32(raw + offsetof(Elf32_Shdr, sh_size), swap);
		h->align = buildid_get32(raw + offsetof(Elf32_Shdr, sh_addralign), swap);
		h->flags = buildid_get32(raw + offsetof(Elf32_Shdr, sh_flags), swap);
	}
}

/* Decode program header RAW. */
static void
buildid_decode_phdr(const struct buildid_file *bf, const uint8_t *raw,
    struct buildid_hdr *h)
{
	int	 swap = bf->swap;

	if (bf->is64) {
		h->type = buildid_get32(raw + offsetof(Elf64_Phdr, p_type), swap);
		h->offset = buildid_get64(raw + offsetof(Elf64_Phdr, p_offset), swap);
		h->size = buildid_get64(raw + offsetof(Elf64_Phdr, p_filesz), swap);
		h->align = buildid_get64(raw + offsetof(Elf64_Phdr, p_align), swap);
		h->flags = buildid_get32(raw + offsetof(Elf64_Phdr, p_flags), swap);
	} else {
		h->type = buildid_get32(raw + offsetof(Elf32_Phdr, p_type), swap);
		h->offset = buildid_get32(raw + offsetof(Elf32_Phdr, p_offset), swap);
		h->size = buildid_get32(raw + offsetof(Elf32_Phdr, p_filesz), swap);
		h->align = buildid_get32(raw + offsetof(Elf32_Phdr, p_align), swap);
		h->flags = buildid_get32(raw + offsetof(Elf32_Phdr, p_flags), swap);
	}
}

/*
 * Call FN for each section header from FIRST on (SECTIONS) or each
 * program header, read in fixed chunks: the memory used does not depend
 * on what the file claims.  FN returns 0 to go on; anything else stops
 * the walk and is returned.  A table that ends early (the file shrank)
 * is -ENOEXEC.
 */
typedef int (*buildid_hdr_fn)(struct buildid_file *, const struct buildid_hdr *,
    uint8_t id[BUILD_ID_MAX]);

static int
buildid_foreach_hdr(struct buildid_file *bf, int sections, size_t first,
    buildid_hdr_fn fn, uint8_t id[BUILD_ID_MAX])
{
	uint8_t			 buf[BUILDID_HDR_CHUNK];
	struct buildid_hdr	 h;
	size_t			 ent, num, per, i, k, cnt;
	uint64_t		 off;
	ssize_t			 n;
	int			 r;

	ent = sections ? bf->shentsize : bf->phentsize;
	num = sections ? bf->shnum : bf->phnum;
	off = sections ? bf->shoff : bf->phoff;
	if (first >= num)
		return 0;
	per = sizeof(buf) / ent;
	for (i = first; i < num; i += cnt) {
		cnt = num - i < per ? num - i : per;
		if ((n = buildid_pread_full(bf->fd, buf, cnt * ent, off + i * ent)) < 0)
			return n;
		if ((size_t)n != cnt * ent)
			return -ENOEXEC;
		for (k = 0; k < cnt; k++) {
			if (sections)
				buildid_decode_shdr(bf, buf + k * ent, &h);
			else
				buildid_decode_phdr(bf, buf + k * ent, &h);
			if ((r = fn(bf, &h, id)) != 0)
				return r;
		}
	}
	return 0;
}

/* Step 2: every section with contents is inside the file ... */
static int
buildid_section_inside(struct buildid_file *bf, const struct buildid_hdr *h,
    uint8_t id[BUILD_ID_MAX])
{
	if (h->type != SHT_NULL && h->type != SHT_NOBITS &&
	    !buildid_in_file(bf, h->offset, h->size))
		return -ENOEXEC;
	return 0;
}

/* ... or, when there are no sections, every segment. */
static int
buildid_segment_inside(struct buildid_file *bf, const struct buildid_hdr *h,
    uint8_t id[BUILD_ID_MAX])
{
	if (h->type != PT_NULL && !buildid_in_file(bf, h->offset, h->size))
		return -ENOEXEC;
	return 0;
}

/*
 * Read one note region and look for the build-id in it.  Returns the id
 * length, -ENOENT (also for a region we decline to read), -EINVAL, or
 * -ENOEXEC when the region does not parse as notes.
 */
static int
buildid_read_region(struct buildid_file *bf, uint64_t off, uint64_t len,
    uint64_t align, uint8_t id[BUILD_ID_MAX])
{
	uint8_t		*buf = NULL;
	ssize_t		 n;
	int		 r;

	if (len == 0 || len > BUILDID_NOTE_MAX || len > bf->budget) {
		r = -ENOENT;
		goto out;
	}
	bf->budget -= len;
	if ((buf = malloc(len)) == NULL) {
		r = -ENOMEM;
		goto out;
	}
	if ((n = buildid_pread_full(bf->fd, buf, len, off)) < 0) {
		r = n;
		goto out;
	}
	if ((uint64_t)n != len) {
		/* the file shrank under us */
		r = -ENOEXEC;
		goto out;
	}
	r = buildid_walk_notes(buf, len, align == 8 ? 8 : 4, bf->swap, id);
	/* some linkers mark 4-byte aligned notes as 8-byte aligned */
	if (align == 8 && (r == -ENOENT || r == -ENOEXEC))
		r = buildid_walk_notes(buf, len, 4, bf->swap, id);
out:
	free(buf);
	return r;
}

/*
 * Step 3, per header: a note section, or a note segment inside the file
 * (a debug file's segments may lie past its end).  Returns the id length
 * (found: stops the walk), 0 to go on, or an error that stops it.
 */
static int
buildid_note_section(struct buildid_file *bf, const struct buildid_hdr *h,
    uint8_t id[BUILD_ID_MAX])
{
	int	 r;

	if (h->type != SHT_NOTE)
		return 0;
	r = buildid_read_region(bf, h->offset, h->size, h->align, id);
	if (r == -ENOEXEC)
		bf->corrupt = 1;
	return r == -ENOEXEC || r == -ENOENT ? 0 : r;
}

static int
buildid_note_segment(struct buildid_file *bf, const struct buildid_hdr *h,
    uint8_t id[BUILD_ID_MAX])
{
	if (h->type != PT_NOTE || !buildid_in_file(bf, h->offset, h->size))
		return 0;
	return buildid_note_section(bf, &(struct buildid_hdr){ SHT_NOTE, h->offset,
	    h->size, h->align, 0 }, id);
}

/*
 * BF for the ELF file FD, its header read and checked: 0, or -EISDIR,
 * -ENOEXEC (not a regular file: a device or a pipe has no size to check
 * the headers against; not ELF), -errno.
 */
static int
buildid_file_open(struct buildid_file *bf, int fd, size_t budget)
{
	uint8_t		 ehdr[sizeof(Elf64_Ehdr)];
	struct stat	 st;
	ssize_t		 n;

	memset(bf, 0, sizeof(*bf));
	bf->fd = fd;
	bf->budget = budget;
	if (fstat(fd, &st) == -1)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	bf->size = st.st_size;
	if ((n = buildid_pread_full(fd, ehdr, sizeof(ehdr), 0)) < 0)
		return (int)n;
	if (n < EI_NIDENT || memcmp(ehdr, ELFMAG, SELFMAG) != 0 ||
	    (ehdr[EI_CLASS] != ELFCLASS32 && ehdr[EI_CLASS] != ELFCLASS64) ||
	    (ehdr[EI_DATA] != ELFDATA2LSB && ehdr[EI_DATA] != ELFDATA2MSB))
		return -ENOEXEC;
	bf->swap = ehdr[EI_DATA] != BUILDID_ELFDATA_NATIVE;
	return buildid_check_ehdr(bf, ehdr, (size_t)n);
}

int
buildid_read_fd(int fd, uint8_t id[BUILD_ID_MAX])
{
	struct buildid_file	 bf;
	int			 r;

	if ((r = buildid_file_open(&bf, fd, BUILDID_READ_MAX)) < 0)
		goto out;
	if (bf.shnum > 0)
		r = buildid_foreach_hdr(&bf, 1, 1, buildid_section_inside, id);
	else
		r = buildid_foreach_hdr(&bf, 0, 0, buildid_segment_inside, id);
	if (r < 0)
		goto out;
	/* Sections first (a debug file's segments are stale), then segments. */
	if ((r = buildid_foreach_hdr(&bf, 1, 1, buildid_note_section, id)) != 0 ||
	    (r = buildid_foreach_hdr(&bf, 0, 0, buildid_note_segment, id)) != 0)
		goto out;
	r = bf.corrupt ? -ENOEXEC : -ENOENT;
out:
	return r;
}

/* An executable section: with its bytes in the file, or without (NOBITS). */
static int
buildid_count_code(struct buildid_file *bf, const struct buildid_hdr *h,
    uint8_t id[BUILD_ID_MAX])
{
	(void)id;
	if ((h->flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR))
		return 0;
	if (h->type == SHT_NOBITS)
		bf->nocode++;
	else if (h->size > 0)
		bf->code++;
	return 0;
}

int
buildid_debug_only_fd(int fd)
{
	struct buildid_file	 bf;
	int			 r;

	if ((r = buildid_file_open(&bf, fd, 0)) < 0)
		return r;
	if ((r = buildid_foreach_hdr(&bf, 1, 1, buildid_count_code, NULL)) < 0)
		return r;
	return bf.code == 0 && bf.nocode > 0;
}

int
buildid_read_path(const char *path, uint8_t id[BUILD_ID_MAX])
{
	int	 fd, r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		r = -errno;
		goto out;
	}
	r = buildid_read_fd(fd, id);
	close(fd);
out:
	return r;
}

/* Read a sysfs notes file whole and parse it. */
static int
buildid_read_notes_file(const char *path, uint8_t id[BUILD_ID_MAX])
{
	uint8_t		*buf = NULL;
	size_t		 len = 0;
	ssize_t		 n;
	int		 fd, r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		r = -errno;
		goto out;
	}
	if ((buf = malloc(BUILDID_SYSFS_MAX)) == NULL) {
		r = -ENOMEM;
		goto out;
	}
	while (len < BUILDID_SYSFS_MAX) {
		n = read(fd, buf + len, BUILDID_SYSFS_MAX - len);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += n;
	}
	r = buildid_parse_notes(buf, len, id);
out:
	free(buf);
	if (fd != -1)
		close(fd);
	return r;
}

int
buildid_read_kernel(uint8_t id[BUILD_ID_MAX])
{
	return buildid_read_notes_file("/sys/kernel/notes", id);
}

int
buildid_read_module(const char *name, uint8_t id[BUILD_ID_MAX])
{
	char	 path[PATH_MAX];
	int	 r;

	if (name == NULL || *name == '\0' || strchr(name, '/') != NULL ||
	    strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		r = -EINVAL;
		goto out;
	}
	if ((size_t)snprintf(path, sizeof(path),
	    "/sys/module/%s/notes/.note.gnu.build-id", name) >= sizeof(path)) {
		r = -ENAMETOOLONG;
		goto out;
	}
	r = buildid_read_notes_file(path, id);
out:
	return r;
}

void
buildid_to_hex(const uint8_t *id, size_t len, char *out)
{
	static const char	 digits[] = "0123456789abcdef";
	size_t			 i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 0xf];
	}
	out[2 * len] = '\0';
}

static int
buildid_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
buildid_from_hex(const char *hex, uint8_t id[BUILD_ID_MAX])
{
	uint8_t		 tmp[BUILD_ID_MAX];
	size_t		 len, i;
	int		 hi, lo, r;

	len = hex == NULL ? 0 : strnlen(hex, 2 * BUILD_ID_MAX + 1);
	if (len == 0 || len % 2 != 0 || len > 2 * BUILD_ID_MAX) {
		r = -EINVAL;
		goto out;
	}
	for (i = 0; i < len / 2; i++) {
		hi = buildid_hex_digit(hex[2 * i]);
		lo = buildid_hex_digit(hex[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			r = -EINVAL;
			goto out;
		}
		tmp[i] = hi << 4 | lo;
	}
	memcpy(id, tmp, len / 2);
	r = len / 2;
out:
	return r;
}
