/*
 * hidenote.c - make a binary whose build-id the kernel cannot give: the
 * GNU build-id note inside the PT_NOTE segment (what the kernel reads for
 * MMAP2 with attr.build_id and for MMAP3) gets another note type, and a
 * copy of the note is appended to the file, where the .note.gnu.build-id
 * section header now points.  Readers that look at sections (readelf -n,
 * perf, perfmapd's ELF reader) still find the build-id; the kernel sends
 * the mapping's MMAP2 record in the plain form, so perfmapd must read the
 * build-id itself - in every build-id mode.
 * Usage: hidenote FILE (ELF64, little-endian; changed in place)
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

static int
die(const char *what)
{
	fprintf(stderr, "hidenote: %s\n", what);
	return 1;
}

int
main(int argc, char **argv)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	Elf64_Nhdr nh;
	struct stat st;
	unsigned char *note;
	off_t	 end, orig;
	int	 fd, i, done = 0;

	if (argc != 2)
		return die("usage: hidenote FILE");
	if ((fd = open(argv[1], O_RDWR)) == -1 || fstat(fd, &st) == -1)
		return die("cannot open the file");
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_shentsize != sizeof(sh))
		return die("not a little-endian ELF64 file");
	end = (st.st_size + 7) & ~(off_t)7;
	for (i = 0; i < eh.e_shnum && !done; i++) {
		off_t	 off = (off_t)eh.e_shoff + (off_t)i * (off_t)sizeof(sh);

		if (pread(fd, &sh, sizeof(sh), off) != sizeof(sh))
			return die("cannot read a section header");
		if (sh.sh_type != SHT_NOTE || sh.sh_size < sizeof(nh) || sh.sh_size > 4096)
			continue;
		if ((note = malloc(sh.sh_size)) == NULL ||
		    pread(fd, note, sh.sh_size, (off_t)sh.sh_offset) != (ssize_t)sh.sh_size)
			return die("cannot read a note");
		memcpy(&nh, note, sizeof(nh));
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp(note + sizeof(nh), "GNU", 4) != 0) {
			free(note);
			continue;
		}
		orig = (off_t)sh.sh_offset;
		/* The copy at the end, the section pointed at it ... */
		if (pwrite(fd, note, sh.sh_size, end) != (ssize_t)sh.sh_size)
			return die("cannot append the note");
		sh.sh_offset = (Elf64_Off)end;
		if (pwrite(fd, &sh, sizeof(sh), off) != sizeof(sh))
			return die("cannot rewrite the section header");
		/* ... and the loaded one is no build-id any more. */
		nh.n_type = 0x4844;
		if (pwrite(fd, &nh, sizeof(nh), orig) != sizeof(nh))
			return die("cannot write");
		free(note);
		done = 1;
	}
	if (!done)
		return die("no GNU build-id note section");
	return close(fd) == 0 ? 0 : die("close");
}
