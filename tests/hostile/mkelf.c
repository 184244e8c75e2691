/*
 * mkelf.c - hostile ELF files for the adversarial tests.
 *
 *	mkelf lying-sections FILE   a 1 GiB sparse file of a few kilobytes
 *	                            whose section table claims 8 million
 *	                            sections (extended numbering): what took
 *	                            the daemon's RSS to 545 MB
 *	mkelf sparse COPY FILE ID   COPY (a real ELF with a build-id note),
 *	                            its build-id rewritten to ID (hex, the
 *	                            length of the one it has), then extended
 *	                            by a hole to 1 GiB: a valid binary that
 *	                            lies about its size
 *	mkelf forge COPY FILE ID    the same without the hole: any build-id
 *	                            can be written into a note
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define SPARSE_SIZE	(1LL << 30)

static void
die(const char *what)
{
	perror(what);
	exit(1);
}

static void
lying_sections(const char *path)
{
	Elf64_Ehdr	 e;
	Elf64_Shdr	 sh0;
	int		 fd;

	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0755)) == -1)
		die(path);
	memset(&e, 0, sizeof(e));
	memcpy(e.e_ident, ELFMAG, SELFMAG);
	e.e_ident[EI_CLASS] = ELFCLASS64;
	e.e_ident[EI_DATA] = ELFDATA2LSB;
	e.e_ident[EI_VERSION] = EV_CURRENT;
	e.e_type = ET_DYN;
	e.e_machine = EM_X86_64;
	e.e_version = EV_CURRENT;
	e.e_ehsize = sizeof(e);
	e.e_shoff = 4096;
	e.e_shentsize = sizeof(Elf64_Shdr);
	e.e_shnum = 0;			/* extended: the count is in section 0 */
	memset(&sh0, 0, sizeof(sh0));
	sh0.sh_size = 8000000;
	if (pwrite(fd, &e, sizeof(e), 0) != sizeof(e) ||
	    pwrite(fd, &sh0, sizeof(sh0), 4096) != sizeof(sh0) ||
	    ftruncate(fd, SPARSE_SIZE) == -1)
		die(path);
	close(fd);
}

/* Copy SRC to DST and rewrite its GNU build-id note to HEX. */
static void
forge(const char *src, const char *dst, const char *hex, int sparse)
{
	unsigned char	*buf, id[64];
	struct stat	 st;
	size_t		 len, i, n = strlen(hex) / 2;
	int		 in, out, done = 0;

	for (i = 0; i < n && i < sizeof(id); i++)
		if (sscanf(hex + 2 * i, "%2hhx", &id[i]) != 1)
			die("bad id");
	if ((in = open(src, O_RDONLY)) == -1 || fstat(in, &st) == -1)
		die(src);
	len = (size_t)st.st_size;
	if ((buf = malloc(len)) == NULL || read(in, buf, len) != (ssize_t)len)
		die(src);
	close(in);
	/* the note: namesz 4, descsz N, type 3, "GNU\0" */
	for (i = 0; i + 16 + n <= len && !done; i += 4) {
		uint32_t namesz, descsz, type;

		memcpy(&namesz, buf + i, 4);
		memcpy(&descsz, buf + i + 4, 4);
		memcpy(&type, buf + i + 8, 4);
		if (namesz == 4 && descsz == n && type == NT_GNU_BUILD_ID &&
		    memcmp(buf + i + 12, "GNU", 4) == 0) {
			memcpy(buf + i + 16, id, n);
			done = 1;
		}
	}
	if (!done) {
		fprintf(stderr, "%s: no build-id note of %zu bytes\n", src, n);
		exit(1);
	}
	if ((out = open(dst, O_RDWR | O_CREAT | O_TRUNC, 0755)) == -1 ||
	    write(out, buf, len) != (ssize_t)len ||
	    (sparse && ftruncate(out, SPARSE_SIZE) == -1))
		die(dst);
	close(out);
	free(buf);
}

int
main(int argc, char *argv[])
{
	if (argc == 3 && strcmp(argv[1], "lying-sections") == 0)
		lying_sections(argv[2]);
	else if (argc == 5 && strcmp(argv[1], "sparse") == 0)
		forge(argv[2], argv[3], argv[4], 1);
	else if (argc == 5 && strcmp(argv[1], "forge") == 0)
		forge(argv[2], argv[3], argv[4], 0);
	else {
		fprintf(stderr, "usage: mkelf lying-sections FILE | sparse|forge COPY FILE ID\n");
		return 2;
	}
	return 0;
}
