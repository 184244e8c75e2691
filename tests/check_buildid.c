/*
 * check_buildid.c - unit tests of common/buildid.c.
 *
 * Real ELF files are built at test time with cc and ld into a temporary
 * directory (an unchecked fixture, once, in the parent) and their ids are
 * compared with readelf -n.  Files of the other class and byte order, and
 * hostile headers, are crafted in memory.  Every prefix of a real file
 * must be refused as truncated, and random mutations must never crash.
 * The tools are in tests/deps.sh: a file that was not built fails its
 * case.  Only what the machine may lack (a readable /sys/kernel/notes,
 * loaded modules) prints SKIP with the reason.
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <check.h>

#include "check_main.h"
#include <dirent.h>
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buildid.h"

#define KNOWN_HEX	"0123456789abcdef0123456789abcdef01234567"
#define M32_HEX		"00112233445566778899aabbccddeeff00112233"
#define REL_HEX		"deadbeef000102030405060708090a0b0c0d0e0f"
#define LIB_HEX		"a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4"
#define LONG_HEX	"000102030405060708090a0b0c0d0e0f" \
			"101112131415161718191a1b1c1d1e1f"

static char	tmpdir[256];	/* short: paths under it fit in PATH_MAX */

static void
skip(const char *what, const char *why)
{
	fprintf(stderr, "SKIP: %s: %s\n", what, why);
}

/* A file build_files() makes with the tools of tests/deps.sh. */
#define NOT_BUILT(name, how)	ck_abort_msg("%s was not built (%s)", (name), (how))

static int	run_cmd(const char *, ...)
		    __attribute__((format(printf, 1, 2)));

static int
run_cmd(const char *fmt, ...)
{
	char	 cmd[4 * PATH_MAX];
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;
	return system(cmd) == 0 ? 0 : -1;
}

/* The path of a test file; a static buffer per call site is enough. */
static const char *
tpath(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", tmpdir, name);
	return buf;
}

static int
exists(const char *name)
{
	char	 p[PATH_MAX];

	return access(tpath(p, name), R_OK) == 0;
}

static void
write_text(const char *name, const char *text)
{
	char	 p[PATH_MAX];
	FILE	*f;

	if ((f = fopen(tpath(p, name), "w")) == NULL)
		return;
	fputs(text, f);
	fclose(f);
}

static void
build_files(void)
{
	char	*d;

	snprintf(tmpdir, sizeof(tmpdir), "%s/check_buildid.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		tmpdir[0] = '\0';
		return;
	}
	d = tmpdir;
	write_text("main.c", "int main(void) { return 0; }\n");
	write_text("lib.c", "int lib_add(int x) { return x + 1; }\n");
	write_text("start32.c", "void _start(void) { for (;;); }\n");
	write_text("note.s",
	    "\t.section .note.gnu.build-id,\"a\",@note\n"
	    "\t.p2align 2\n"
	    "\t.long 4\n\t.long 20\n\t.long 3\n"
	    "\t.asciz \"GNU\"\n"
	    "\t.byte 0xde,0xad,0xbe,0xef,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	    "\t.text\n\t.globl f\nf:\tret\n");

#define Q	" >/dev/null 2>&1"
	run_cmd("cc -o '%s/known' '%s/main.c' -Wl,--build-id=0x" KNOWN_HEX Q,
	    d, d);
	run_cmd("cc -o '%s/sha1' '%s/main.c' -Wl,--build-id=sha1" Q, d, d);
	run_cmd("cc -o '%s/none' '%s/main.c' -Wl,--build-id=none" Q, d, d);
	run_cmd("cc -o '%s/short' '%s/main.c' -Wl,--build-id=0xdeadbeef" Q,
	    d, d);
	run_cmd("cc -o '%s/long' '%s/main.c' -Wl,--build-id=0x" LONG_HEX Q,
	    d, d);
	run_cmd("cc -shared -fPIC -o '%s/lib.so' '%s/lib.c'"
	    " -Wl,--build-id=0x" LIB_HEX Q, d, d);
	run_cmd("objcopy --strip-all '%s/sha1' '%s/stripped'" Q, d, d);
	/* separate debug files keep stale program headers */
	run_cmd("objcopy --only-keep-debug '%s/known' '%s/known.debug'" Q,
	    d, d);
	run_cmd("eu-strip -f '%s/known.eu-debug' -o '%s/known.eu-stripped'"
	    " '%s/known'" Q, d, d, d);
	run_cmd("cc -c -o '%s/plain.o' '%s/lib.c'" Q, d, d);
	run_cmd("cc -c -o '%s/rel.o' '%s/note.s'" Q, d, d);
	/* no 32-bit libc is needed: a freestanding _start, linked by ld */
	if (run_cmd("cc -m32 -ffreestanding -fno-pic -c -o '%s/start32.o'"
	    " '%s/start32.c'" Q, d, d) == 0)
		run_cmd("ld -m elf_i386 -e _start --build-id=0x" M32_HEX
		    " -o '%s/m32' '%s/start32.o'" Q, d, d);
#undef Q
}

static void
remove_files(void)
{
	if (tmpdir[0] != '\0')
		run_cmd("rm -rf '%s'", tmpdir);
}

/* The id readelf -n prints for PATH, as hex; -1 if none. */
static int
readelf_hex(const char *path, char *hex, size_t len)
{
	char	 cmd[2 * PATH_MAX], line[512], *p;
	FILE	*f;
	int	 r = -1;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	if ((f = popen(cmd, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if ((p = strstr(line, "Build ID: ")) == NULL)
			continue;
		p += strlen("Build ID: ");
		p[strcspn(p, " \r\n")] = '\0';
		if (strlen(p) < len) {
			memcpy(hex, p, strlen(p) + 1);
			r = 0;
		}
		break;
	}
	pclose(f);
	return r;
}

/* Read NAME from the test directory and compare with WANT (hex). */
static void
expect_file_hex(const char *name, const char *want)
{
	uint8_t	 id[BUILD_ID_MAX];
	char	 p[PATH_MAX], hex[BUILD_ID_HEX_MAX], rhex[256];
	int	 r;

	if (!exists(name))
		NOT_BUILT(name, "cc, objcopy, eu-strip or ld");
	r = buildid_read_path(tpath(p, name), id);
	ck_assert_int_eq(r, (int)strlen(want) / 2);
	buildid_to_hex(id, r, hex);
	ck_assert_str_eq(hex, want);
	if (readelf_hex(p, rhex, sizeof(rhex)) == 0)
		ck_assert_str_eq(rhex, want);
}

static uint8_t *
slurp(const char *path, size_t *lenp)
{
	struct stat	 st;
	uint8_t		*buf;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	if (fstat(fd, &st) == -1 || (buf = malloc(st.st_size + 1)) == NULL) {
		close(fd);
		return NULL;
	}
	if (read(fd, buf, st.st_size) != st.st_size) {
		free(buf);
		close(fd);
		return NULL;
	}
	close(fd);
	*lenp = st.st_size;
	return buf;
}

static uint8_t *
slurp_test(const char *name, size_t *lenp)
{
	char	 p[PATH_MAX];

	return slurp(tpath(p, name), lenp);
}

static int
memfd_with(const void *buf, size_t len)
{
	int	 fd;

	fd = memfd_create("check_buildid", MFD_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	if (len > 0)
		ck_assert_int_eq(pwrite(fd, buf, len, 0), (ssize_t)len);
	return fd;
}

static int
read_mem(const void *buf, size_t len, uint8_t id[BUILD_ID_MAX])
{
	int	 fd, r;

	fd = memfd_with(buf, len);
	r = buildid_read_fd(fd, id);
	close(fd);
	return r;
}

/*
 * Crafted files: an ELF header, NPH PT_NOTE headers all pointing at one
 * note region, the region, and a section table (null, SHT_NOTE) - either
 * class, either byte order.
 */
#define CRAFT_PHDR	0x1
#define CRAFT_SHDR	0x2

struct craft {
	uint8_t	*buf;
	size_t	 len;
	int	 is64, be;
	size_t	 phoff, phentsize, nph;
	size_t	 noteoff, notelen;
	size_t	 shoff, shentsize;
};

static void
craft_put(uint8_t *p, int be, uint64_t v, size_t width)
{
	size_t	 i;

	for (i = 0; i < width; i++)
		p[be ? width - 1 - i : i] = v >> (8 * i);
}

#define CRAFT_SET(c, base, T, f, v)					\
	((c)->is64 ?							\
	    craft_put((c)->buf + (base) + offsetof(Elf64_##T, f), (c)->be,\
		(v), sizeof(((Elf64_##T *)0)->f)) :			\
	    craft_put((c)->buf + (base) + offsetof(Elf32_##T, f), (c)->be,\
		(v), sizeof(((Elf32_##T *)0)->f)))

/* Append one note (4-byte padding) in byte order BE; returns its size. */
static size_t
note_put(uint8_t *out, int be, uint32_t namesz, const char *name,
    uint32_t type, const uint8_t *desc, uint32_t descsz)
{
	size_t	 off = 12, nlen = name != NULL ? strlen(name) + 1 : 0;

	craft_put(out, be, namesz, 4);
	craft_put(out + 4, be, descsz, 4);
	craft_put(out + 8, be, type, 4);
	memset(out + off, 0, (namesz + 3) & ~3U);
	if (name != NULL)
		memcpy(out + off, name, nlen < namesz ? nlen : namesz);
	off += (namesz + 3) & ~3U;
	memset(out + off, 0, (descsz + 3) & ~3U);
	if (desc != NULL)
		memcpy(out + off, desc, descsz);
	off += (descsz + 3) & ~3U;
	return off;
}

static int
native_be(void)
{
	return __BYTE_ORDER == __BIG_ENDIAN;
}

static void
craft_elf(struct craft *c, int is64, int be, int flags, size_t nph,
    const uint8_t *notes, size_t notelen)
{
	size_t	 ehsize, i, base;

	memset(c, 0, sizeof(*c));
	c->is64 = is64;
	c->be = be;
	ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	c->phentsize = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	c->shentsize = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	c->nph = flags & CRAFT_PHDR ? nph : 0;
	c->phoff = ehsize;
	c->noteoff = c->phoff + c->nph * c->phentsize;
	c->notelen = notelen;
	c->shoff = (c->noteoff + notelen + 7) & ~(size_t)7;
	c->len = c->shoff + (flags & CRAFT_SHDR ? 2 * c->shentsize : 0);
	c->buf = calloc(1, c->len);
	ck_assert_ptr_nonnull(c->buf);

	memcpy(c->buf, ELFMAG, SELFMAG);
	c->buf[EI_CLASS] = is64 ? ELFCLASS64 : ELFCLASS32;
	c->buf[EI_DATA] = be ? ELFDATA2MSB : ELFDATA2LSB;
	c->buf[EI_VERSION] = EV_CURRENT;
	CRAFT_SET(c, 0, Ehdr, e_type, c->nph ? ET_EXEC : ET_REL);
	CRAFT_SET(c, 0, Ehdr, e_machine, is64 ? EM_X86_64 : EM_386);
	CRAFT_SET(c, 0, Ehdr, e_version, EV_CURRENT);
	CRAFT_SET(c, 0, Ehdr, e_ehsize, ehsize);
	if (c->nph) {
		CRAFT_SET(c, 0, Ehdr, e_phoff, c->phoff);
		CRAFT_SET(c, 0, Ehdr, e_phentsize, c->phentsize);
		CRAFT_SET(c, 0, Ehdr, e_phnum, c->nph);
	}
	for (i = 0; i < c->nph; i++) {
		base = c->phoff + i * c->phentsize;
		CRAFT_SET(c, base, Phdr, p_type, PT_NOTE);
		CRAFT_SET(c, base, Phdr, p_flags, PF_R);
		CRAFT_SET(c, base, Phdr, p_offset, c->noteoff);
		CRAFT_SET(c, base, Phdr, p_filesz, notelen);
		CRAFT_SET(c, base, Phdr, p_memsz, notelen);
		CRAFT_SET(c, base, Phdr, p_align, 4);
	}
	if (notelen > 0)
		memcpy(c->buf + c->noteoff, notes, notelen);
	if (flags & CRAFT_SHDR) {
		CRAFT_SET(c, 0, Ehdr, e_shoff, c->shoff);
		CRAFT_SET(c, 0, Ehdr, e_shentsize, c->shentsize);
		CRAFT_SET(c, 0, Ehdr, e_shnum, 2);
		base = c->shoff + c->shentsize;
		CRAFT_SET(c, base, Shdr, sh_type, SHT_NOTE);
		CRAFT_SET(c, base, Shdr, sh_flags, SHF_ALLOC);
		CRAFT_SET(c, base, Shdr, sh_offset, c->noteoff);
		CRAFT_SET(c, base, Shdr, sh_size, notelen);
		CRAFT_SET(c, base, Shdr, sh_addralign, 4);
	}
}

static const uint8_t	test_id[BUILD_ID_MAX] = {
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19,
	0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23
};

/* A crafted file with an ABI-tag note, then the build-id note. */
static void
craft_good(struct craft *c, int is64, int be, int flags)
{
	uint8_t	 notes[256], abi[16] = { 0 };
	size_t	 n;

	n = note_put(notes, be, 4, "GNU", NT_GNU_ABI_TAG, abi, sizeof(abi));
	n += note_put(notes + n, be, 4, "GNU", NT_GNU_BUILD_ID, test_id,
	    sizeof(test_id));
	craft_elf(c, is64, be, flags, 1, notes, n);
}

static void
expect_craft(const struct craft *c, int want)
{
	uint8_t	 id[BUILD_ID_MAX];

	ck_assert_int_eq(read_mem(c->buf, c->len, id), want);
}

/* Refused, for a reason that depends on how the garbage reads. */
static void
expect_craft_refused(const struct craft *c)
{
	uint8_t	 id[BUILD_ID_MAX];
	int	 r;

	r = read_mem(c->buf, c->len, id);
	ck_assert(r == -ENOENT || r == -ENOEXEC);
}

/* Real files: known id, sha1, shared, relocatable, stripped, 32-bit. */

START_TEST(test_known_id)
{
	expect_file_hex("known", KNOWN_HEX);
	expect_file_hex("lib.so", LIB_HEX);
	expect_file_hex("rel.o", REL_HEX);
	expect_file_hex("short", "deadbeef");
}
END_TEST

START_TEST(test_matches_readelf)
{
	static const char	*sys[] = {
		"/bin/sh", "/bin/ls", "/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libelf.so.1"
	};
	const char		*names[] = { "sha1", "stripped", "known" };
	uint8_t			 id[BUILD_ID_MAX];
	char			 p[PATH_MAX], hex[BUILD_ID_HEX_MAX], want[256];
	size_t			 i;
	int			 r, n = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!exists(names[i]))
			NOT_BUILT(names[i], "cc, objcopy");
		ck_assert_msg(readelf_hex(tpath(p, names[i]), want, sizeof(want)) == 0,
		    "readelf -n printed no build-id for %s", names[i]);
		expect_file_hex(names[i], want);
		n++;
	}
	for (i = 0; i < sizeof(sys) / sizeof(sys[0]); i++) {
		if (readelf_hex(sys[i], want, sizeof(want)) == -1)
			continue;
		r = buildid_read_path(sys[i], id);
		ck_assert_int_eq(r, (int)strlen(want) / 2);
		buildid_to_hex(id, r, hex);
		ck_assert_str_eq(hex, want);
		n++;
	}
	ck_assert_int_ge(n, 3);
}
END_TEST

START_TEST(test_debug_files)
{
	if (!exists("known.debug"))
		NOT_BUILT("known.debug", "objcopy --only-keep-debug");
	expect_file_hex("known.debug", KNOWN_HEX);
	if (!exists("known.eu-debug"))
		NOT_BUILT("known.eu-debug", "eu-strip -f");
	expect_file_hex("known.eu-debug", KNOWN_HEX);
	expect_file_hex("known.eu-stripped", KNOWN_HEX);
}
END_TEST

START_TEST(test_elf32)
{
	if (!exists("m32"))
		NOT_BUILT("m32", "cc -m32 -ffreestanding -c, ld -m elf_i386");
	expect_file_hex("m32", M32_HEX);
}
END_TEST

START_TEST(test_no_buildid)
{
	uint8_t	 id[BUILD_ID_MAX];
	char	 p[PATH_MAX];

	if (!exists("none") || !exists("plain.o"))
		NOT_BUILT("none, plain.o", "cc");
	ck_assert_int_eq(buildid_read_path(tpath(p, "none"), id), -ENOENT);
	ck_assert_int_eq(buildid_read_path(tpath(p, "plain.o"), id), -ENOENT);
}
END_TEST

START_TEST(test_long_id)
{
	uint8_t	 id[BUILD_ID_MAX];
	char	 p[PATH_MAX], want[256];

	if (!exists("long"))
		NOT_BUILT("long", "ld --build-id=0x<32 bytes>");
	if (readelf_hex(tpath(p, "long"), want, sizeof(want)) == 0)
		ck_assert_str_eq(want, LONG_HEX);
	ck_assert_int_eq(buildid_read_path(p, id), -EINVAL);
}
END_TEST

/* The phdr path alone: a real executable with its section table cut off. */
START_TEST(test_phdr_only)
{
	uint8_t	 id[BUILD_ID_MAX], *buf;
	char	 hex[BUILD_ID_HEX_MAX];
	size_t	 len;

	if ((buf = slurp_test("known", &len)) == NULL)
		NOT_BUILT("known", "cc");
	ck_assert_int_eq(buf[EI_CLASS], ELFCLASS64);
	memset(buf + offsetof(Elf64_Ehdr, e_shoff), 0, 8);
	memset(buf + offsetof(Elf64_Ehdr, e_shnum), 0, 2);
	memset(buf + offsetof(Elf64_Ehdr, e_shstrndx), 0, 2);
	ck_assert_int_eq(read_mem(buf, len, id), BUILD_ID_MAX);
	buildid_to_hex(id, BUILD_ID_MAX, hex);
	ck_assert_str_eq(hex, KNOWN_HEX);
	free(buf);
}
END_TEST

START_TEST(test_fd_offset)
{
	uint8_t	 id[BUILD_ID_MAX];
	char	 p[PATH_MAX];
	int	 fd;

	if (!exists("known"))
		NOT_BUILT("known", "cc");
	fd = open(tpath(p, "known"), O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(lseek(fd, 1234, SEEK_SET), 1234);
	ck_assert_int_eq(buildid_read_fd(fd, id), BUILD_ID_MAX);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 1234);
	ck_assert_int_eq(buildid_read_fd(fd, id), BUILD_ID_MAX);
	close(fd);
}
END_TEST

/* Crafted: both classes, both byte orders, via phdrs, sections, both. */
START_TEST(test_crafted_layouts)
{
	static const int	 modes[] = {
		CRAFT_PHDR, CRAFT_SHDR, CRAFT_PHDR | CRAFT_SHDR
	};
	struct craft		 c;
	uint8_t			 id[BUILD_ID_MAX];
	char			 p[PATH_MAX], hex[BUILD_ID_HEX_MAX], rhex[256];
	size_t			 m;
	int			 is64, be, fd;

	for (is64 = 0; is64 <= 1; is64++)
	for (be = 0; be <= 1; be++)
	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		craft_good(&c, is64, be, modes[m]);
		memset(id, 0, sizeof(id));
		ck_assert_int_eq(read_mem(c.buf, c.len, id), BUILD_ID_MAX);
		ck_assert_mem_eq(id, test_id, BUILD_ID_MAX);

		/* and readelf, another implementation, agrees */
		tpath(p, "crafted");
		fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, c.buf, c.len), (ssize_t)c.len);
		close(fd);
		buildid_to_hex(test_id, BUILD_ID_MAX, hex);
		if (readelf_hex(p, rhex, sizeof(rhex)) == 0)
			ck_assert_str_eq(rhex, hex);
		free(c.buf);
	}
}
END_TEST

/* Sections first; segments as the fallback; stale segments ignored. */
START_TEST(test_sections_and_segments)
{
	struct craft	 c;
	size_t		 sh1;
	int		 is64;

	for (is64 = 0; is64 <= 1; is64++) {
		craft_good(&c, is64, is64, CRAFT_PHDR | CRAFT_SHDR);
		sh1 = c.shoff + c.shentsize;
		/* a debug file: the note segment lies past the end */
		CRAFT_SET(&c, c.phoff, Phdr, p_offset, c.len + 4096);
		expect_craft(&c, BUILD_ID_MAX);
		/* no note section: the segment is used */
		CRAFT_SET(&c, c.phoff, Phdr, p_offset, c.noteoff);
		CRAFT_SET(&c, sh1, Shdr, sh_type, SHT_PROGBITS);
		expect_craft(&c, BUILD_ID_MAX);
		/* neither */
		CRAFT_SET(&c, c.phoff, Phdr, p_type, PT_LOAD);
		expect_craft(&c, -ENOENT);
		free(c.buf);
	}
}
END_TEST

/* Every prefix of a file is truncated, and refused as such. */
static void
expect_prefixes_refused(const uint8_t *buf, size_t len, size_t dense)
{
	uint8_t	 id[BUILD_ID_MAX];
	size_t	 cut;
	int	 fd, r;

	fd = memfd_with(buf, len);
	ck_assert_int_gt(buildid_read_fd(fd, id), 0);
	for (cut = len; cut-- > 0; ) {
		/* every byte near both ends, a stride in between */
		if (cut > dense && cut < len - dense && cut % 7 != 0)
			continue;
		ck_assert_int_eq(ftruncate(fd, cut), 0);
		r = buildid_read_fd(fd, id);
		if (r != -ENOEXEC)
			ck_abort_msg("prefix of %zu of %zu bytes: %d", cut, len,
			    r);
	}
	close(fd);
}

START_TEST(test_truncated)
{
	static const char	*names[] = {
		"known", "lib.so", "rel.o", "m32", "stripped", "known.debug",
		"known.eu-debug"
	};
	struct craft		 c;
	uint8_t			*buf;
	size_t			 i, len;
	int			 is64;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((buf = slurp_test(names[i], &len)) == NULL)
			NOT_BUILT(names[i], "cc, objcopy, eu-strip or ld");
		expect_prefixes_refused(buf, len, 2048);
		free(buf);
	}
	for (is64 = 0; is64 <= 1; is64++) {
		craft_good(&c, is64, 1, CRAFT_PHDR | CRAFT_SHDR);
		expect_prefixes_refused(c.buf, c.len, c.len);
		free(c.buf);
	}
}
END_TEST

START_TEST(test_not_elf)
{
	static const char	 text[] = "#!/bin/sh\necho not an ELF file\n";
	uint8_t			 id[BUILD_ID_MAX], *buf;
	size_t			 len;
	int			 fd;

	ck_assert_int_eq(read_mem(NULL, 0, id), -ENOEXEC);
	ck_assert_int_eq(read_mem(text, sizeof(text) - 1, id), -ENOEXEC);
	ck_assert_int_eq(read_mem(ELFMAG, SELFMAG, id), -ENOEXEC);
	ck_assert_int_eq(buildid_read_path("/dev/null", id), -ENOEXEC);
	ck_assert_int_eq(buildid_read_path("/", id), -EISDIR);
	ck_assert_int_eq(buildid_read_path("/nonexistent/file", id), -ENOENT);
	ck_assert_int_eq(buildid_read_fd(-1, id), -EBADF);

	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(buildid_read_fd(fd, id), -EISDIR);
	close(fd);

	/* a pipe has no size to check the headers against */
	{
		int	 pfd[2];

		ck_assert_int_eq(pipe(pfd), 0);
		ck_assert_int_eq(buildid_read_fd(pfd[0], id), -ENOEXEC);
		close(pfd[0]);
		close(pfd[1]);
	}

	if ((buf = slurp_test("known", &len)) == NULL)
		NOT_BUILT("known", "cc");
	/* the ELF header only */
	ck_assert_int_eq(read_mem(buf, 64, id), -ENOEXEC);
	/* bad class, bad data encoding */
	buf[EI_CLASS] = 3;
	ck_assert_int_eq(read_mem(buf, len, id), -ENOEXEC);
	buf[EI_CLASS] = ELFCLASS64;
	buf[EI_DATA] = 0;
	ck_assert_int_eq(read_mem(buf, len, id), -ENOEXEC);
	free(buf);
}
END_TEST

/* Notes whose sizes run past their region. */
START_TEST(test_note_overflow)
{
	static const uint32_t	 sizes[][2] = {
		{ 0xffffffff, 20 }, { 4, 0xffffffff }, { 4, 0xfffffff0 },
		{ 0xfffffffc, 0xfffffffc }, { 4, 21 }, { 9, 20 }
	};
	struct craft		 c;
	uint8_t			 notes[64];
	size_t			 i, n;
	int			 is64;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
	for (is64 = 0; is64 <= 1; is64++) {
		n = note_put(notes, 0, 4, "GNU", NT_GNU_BUILD_ID, test_id,
		    sizeof(test_id));
		craft_put(notes, 0, sizes[i][0], 4);
		craft_put(notes + 4, 0, sizes[i][1], 4);
		craft_elf(&c, is64, 0, CRAFT_PHDR | CRAFT_SHDR, 1, notes, n);
		expect_craft(&c, -ENOEXEC);
		free(c.buf);
	}

	/* a section one byte short of its note */
	n = note_put(notes, 1, 4, "GNU", NT_GNU_BUILD_ID, test_id,
	    sizeof(test_id));
	craft_elf(&c, 1, 1, CRAFT_SHDR, 0, notes, n - 1);
	expect_craft(&c, -ENOEXEC);
	free(c.buf);
}
END_TEST

START_TEST(test_hostile_headers)
{
	struct craft	 c;
	size_t		 sh1;
	int		 is64;

	for (is64 = 0; is64 <= 1; is64++) {
		/* a segment far past the end */
		craft_good(&c, is64, 0, CRAFT_PHDR);
		CRAFT_SET(&c, c.phoff, Phdr, p_offset, is64 ? ~0ULL : ~0U);
		expect_craft(&c, -ENOEXEC);
		CRAFT_SET(&c, c.phoff, Phdr, p_offset, c.noteoff);
		CRAFT_SET(&c, c.phoff, Phdr, p_filesz, is64 ? ~0ULL : ~0U);
		expect_craft(&c, -ENOEXEC);
		/* a note segment over the ELF header itself */
		CRAFT_SET(&c, c.phoff, Phdr, p_offset, 0);
		CRAFT_SET(&c, c.phoff, Phdr, p_filesz, c.len);
		expect_craft(&c, -ENOEXEC);
		/* the header table past the end, or with a bad entry size */
		CRAFT_SET(&c, c.phoff, Phdr, p_offset, c.noteoff);
		CRAFT_SET(&c, c.phoff, Phdr, p_filesz, c.notelen);
		expect_craft(&c, BUILD_ID_MAX);
		CRAFT_SET(&c, 0, Ehdr, e_phnum, 0xfffe);
		expect_craft(&c, -ENOEXEC);
		CRAFT_SET(&c, 0, Ehdr, e_phnum, PN_XNUM);
		expect_craft(&c, -ENOEXEC);
		CRAFT_SET(&c, 0, Ehdr, e_phnum, 1);
		CRAFT_SET(&c, 0, Ehdr, e_phentsize, c.phentsize + 1);
		expect_craft(&c, -ENOEXEC);
		CRAFT_SET(&c, 0, Ehdr, e_phentsize, c.phentsize);
		CRAFT_SET(&c, 0, Ehdr, e_phoff, c.len);
		expect_craft(&c, -ENOEXEC);
		free(c.buf);

		craft_good(&c, is64, 1, CRAFT_SHDR);
		sh1 = c.shoff + c.shentsize;
		/* extended numbering with an absurd count in section 0 */
		CRAFT_SET(&c, 0, Ehdr, e_shnum, 0);
		CRAFT_SET(&c, c.shoff, Shdr, sh_size, is64 ? ~0ULL : ~0U);
		expect_craft(&c, -ENOEXEC);
		/* ... and with the right count */
		CRAFT_SET(&c, c.shoff, Shdr, sh_size, 2);
		expect_craft(&c, BUILD_ID_MAX);
		CRAFT_SET(&c, 0, Ehdr, e_shnum, 2);
		CRAFT_SET(&c, c.shoff, Shdr, sh_size, 0);
		/* a section past the end */
		CRAFT_SET(&c, sh1, Shdr, sh_offset, c.len + 1);
		expect_craft(&c, -ENOEXEC);
		CRAFT_SET(&c, sh1, Shdr, sh_offset, c.noteoff);
		CRAFT_SET(&c, sh1, Shdr, sh_size, is64 ? ~0ULL : ~0U);
		expect_craft(&c, -ENOEXEC);
		/* a zero-size note section */
		CRAFT_SET(&c, sh1, Shdr, sh_size, 0);
		expect_craft(&c, -ENOENT);
		/* a note section over the section table itself */
		CRAFT_SET(&c, sh1, Shdr, sh_offset, c.shoff);
		CRAFT_SET(&c, sh1, Shdr, sh_size, 2 * c.shentsize);
		expect_craft_refused(&c);
		/* a section table past the end */
		CRAFT_SET(&c, 0, Ehdr, e_shoff, c.len - c.shentsize);
		expect_craft(&c, -ENOEXEC);
		CRAFT_SET(&c, 0, Ehdr, e_shoff, 0);
		expect_craft(&c, -ENOEXEC);
		free(c.buf);
	}
}
END_TEST

/* Thousands of note headers over one large region stay cheap. */
START_TEST(test_many_notes)
{
	struct craft	 c;
	uint8_t		*notes;
	size_t		 len = 1U << 20;
	struct timespec	 t0, t1;

	notes = calloc(1, len);
	ck_assert_ptr_nonnull(notes);
	craft_elf(&c, 1, 0, CRAFT_PHDR | CRAFT_SHDR, 60000, notes, len);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	expect_craft(&c, -ENOENT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 20);
	free(c.buf);
	free(notes);
}
END_TEST

/*
 * A file that lies about its size: a sparse file of 1 GiB holding a few
 * kilobytes, whose headers claim millions of sections (extended
 * numbering), or the most sections allowed, each as large as the file.
 * Such a file is refused or read without its claims sizing any memory:
 * the peak RSS of this test process grows by less than 16 MiB (libelf
 * allocated per claimed section: 2 GiB for the first file).
 */
static void
sparse_elf(const char *name, uint64_t nsec, int big_sections)
{
	char	 p[PATH_MAX];
	uint8_t	 ehdr[sizeof(Elf64_Ehdr)] = { 0 }, sh[sizeof(Elf64_Shdr)];
	uint64_t i, shoff = 4096;
	int	 fd;

	fd = open(tpath(p, name), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	memcpy(ehdr, ELFMAG, SELFMAG);
	ehdr[EI_CLASS] = ELFCLASS64;
	ehdr[EI_DATA] = native_be() ? ELFDATA2MSB : ELFDATA2LSB;
	ehdr[EI_VERSION] = EV_CURRENT;
	((Elf64_Ehdr *)ehdr)->e_type = ET_EXEC;
	((Elf64_Ehdr *)ehdr)->e_shoff = shoff;
	((Elf64_Ehdr *)ehdr)->e_shentsize = sizeof(Elf64_Shdr);
	((Elf64_Ehdr *)ehdr)->e_shnum = nsec >= SHN_LORESERVE ? 0 : (uint16_t)nsec;
	ck_assert_int_eq(pwrite(fd, ehdr, sizeof(ehdr), 0), (ssize_t)sizeof(ehdr));
	memset(sh, 0, sizeof(sh));
	if (nsec >= SHN_LORESERVE)
		((Elf64_Shdr *)sh)->sh_size = nsec;
	ck_assert_int_eq(pwrite(fd, sh, sizeof(sh), shoff), (ssize_t)sizeof(sh));
	for (i = 1; big_sections && i < nsec; i++) {
		memset(sh, 0, sizeof(sh));
		((Elf64_Shdr *)sh)->sh_type = i % 2 ? SHT_PROGBITS : SHT_NOTE;
		((Elf64_Shdr *)sh)->sh_offset = 1U << 20;
		((Elf64_Shdr *)sh)->sh_size = (1ULL << 30) - (1U << 20);
		((Elf64_Shdr *)sh)->sh_addralign = 4;
		ck_assert_int_eq(pwrite(fd, sh, sizeof(sh), shoff + i * sizeof(sh)),
		    (ssize_t)sizeof(sh));
	}
	ck_assert_int_eq(ftruncate(fd, 1LL << 30), 0);
	close(fd);
}

static long
maxrss_kb(void)
{
	struct rusage	 ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

START_TEST(test_sparse_lies)
{
	char	 p[PATH_MAX];
	uint8_t	 id[BUILD_ID_MAX];
	long	 before;

	sparse_elf("sparse-many", 8000000, 0);
	sparse_elf("sparse-big", 65536, 1);
	before = maxrss_kb();
	ck_assert_int_eq(buildid_read_path(tpath(p, "sparse-many"), id), -ENOEXEC);
	ck_assert_int_lt(maxrss_kb() - before, 16 * 1024);
	/* 65536 sections over 1 GiB: every one inside the file, no note read whole */
	ck_assert_int_eq(buildid_read_path(tpath(p, "sparse-big"), id), -ENOENT);
	ck_assert_int_lt(maxrss_kb() - before, 16 * 1024);
	sparse_elf("sparse-over", 65537, 0);
	ck_assert_int_eq(buildid_read_path(tpath(p, "sparse-over"), id), -ENOEXEC);
	unlink(p);
	unlink(tpath(p, "sparse-many"));
	unlink(tpath(p, "sparse-big"));
}
END_TEST

/* Random byte flips of real files: any answer, never a crash. */
START_TEST(test_mutations)
{
	static const char	*names[] = { "known", "rel.o", "m32" };
	uint8_t			 id[BUILD_ID_MAX], *orig, *buf;
	unsigned int		 seed = 12345;
	size_t			 i, len, k, nflip;
	int			 iter, r, fd;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((orig = slurp_test(names[i], &len)) == NULL)
			continue;
		buf = malloc(len);
		ck_assert_ptr_nonnull(buf);
		fd = memfd_with(orig, len);
		for (iter = 0; iter < 1500; iter++) {
			memcpy(buf, orig, len);
			nflip = 1 + rand_r(&seed) % 8;
			for (k = 0; k < nflip; k++) {
				/* the headers are where it hurts */
				size_t	 at = rand_r(&seed) % 2 ?
				    rand_r(&seed) % (len < 256 ? len : 256) :
				    rand_r(&seed) % len;

				buf[at] = rand_r(&seed);
			}
			ck_assert_int_eq(pwrite(fd, buf, len, 0),
			    (ssize_t)len);
			r = buildid_read_fd(fd, id);
			ck_assert(r == -ENOENT || r == -ENOEXEC ||
			    r == -EINVAL || (r > 0 && r <= BUILD_ID_MAX));
		}
		close(fd);
		free(buf);
		free(orig);
	}
}
END_TEST

/* Concurrent readers share the one-time libelf set-up. */
static void *
thread_read(void *arg)
{
	uint8_t	 id[BUILD_ID_MAX];
	char	 hex[BUILD_ID_HEX_MAX];
	int	 i, r;

	for (i = 0; i < 200; i++) {
		r = buildid_read_path(arg, id);
		if (r != BUILD_ID_MAX)
			return (void *)1;
		buildid_to_hex(id, r, hex);
		if (strcmp(hex, KNOWN_HEX) != 0)
			return (void *)1;
	}
	return NULL;
}

START_TEST(test_threads)
{
	pthread_t	 t[4];
	char		 p[PATH_MAX];
	void		*ret;
	size_t		 i;

	if (!exists("known"))
		NOT_BUILT("known", "cc");
	tpath(p, "known");
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, thread_read, p),
		    0);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(pthread_join(t[i], &ret), 0);
		ck_assert_ptr_null(ret);
	}
}
END_TEST

/* Raw note blobs, as sysfs gives them. */
START_TEST(test_parse_notes)
{
	uint8_t	 blob[256], big[64], id[BUILD_ID_MAX], *shifted;
	size_t	 n, n1, cut;
	int	 be = native_be(), r;

	/* a Linux note first, as in /sys/kernel/notes */
	n1 = note_put(blob, be, 6, "Linux", 0x100, (const uint8_t *)"\1\1\0",
	    4);
	n = n1 + note_put(blob + n1, be, 4, "GNU", NT_GNU_BUILD_ID, test_id,
	    sizeof(test_id));
	memset(id, 0, sizeof(id));
	ck_assert_int_eq(buildid_parse_notes(blob, n, id), BUILD_ID_MAX);
	ck_assert_mem_eq(id, test_id, BUILD_ID_MAX);

	/* at an odd address */
	shifted = malloc(n + 1);
	ck_assert_ptr_nonnull(shifted);
	memcpy(shifted + 1, blob, n);
	ck_assert_int_eq(buildid_parse_notes(shifted + 1, n, id),
	    BUILD_ID_MAX);
	free(shifted);

	/* trailing zero padding is fine, trailing garbage is not */
	memset(blob + n, 0, 8);
	ck_assert_int_eq(buildid_parse_notes(blob, n + 8, id), BUILD_ID_MAX);
	ck_assert_int_eq(buildid_parse_notes(blob, n1 + 8, id), -ENOEXEC);

	/* every truncation */
	for (cut = 0; cut < n; cut++) {
		r = buildid_parse_notes(blob, cut, id);
		ck_assert(r == -ENOENT || r == -ENOEXEC);
		if (cut == 0 || cut == n1)
			ck_assert_int_eq(r, -ENOENT);
	}
	ck_assert_int_eq(buildid_parse_notes(NULL, 0, id), -ENOENT);

	/* misaligned: the first name was not padded */
	n1 = note_put(blob, be, 3, "ab", 1, NULL, 0) - 1;
	n = n1 + note_put(blob + n1, be, 4, "GNU", NT_GNU_BUILD_ID, test_id,
	    sizeof(test_id));
	ck_assert_int_eq(buildid_parse_notes(blob, n, id), -ENOEXEC);

	/* wrong owner, owner without its NUL, wrong type */
	n = note_put(blob, be, 4, "GNV", NT_GNU_BUILD_ID, test_id, 20);
	ck_assert_int_eq(buildid_parse_notes(blob, n, id), -ENOENT);
	n = note_put(blob, be, 3, "GNU", NT_GNU_BUILD_ID, test_id, 20);
	ck_assert_int_eq(buildid_parse_notes(blob, n, id), -ENOENT);
	n = note_put(blob, be, 4, "GNU", NT_GNU_ABI_TAG, test_id, 20);
	ck_assert_int_eq(buildid_parse_notes(blob, n, id), -ENOENT);

	/* short, empty and over-long ids */
	n = note_put(blob, be, 4, "GNU", NT_GNU_BUILD_ID, test_id, 1);
	ck_assert_int_eq(buildid_parse_notes(blob, n, id), 1);
	ck_assert_int_eq(id[0], test_id[0]);
	n = note_put(blob, be, 4, "GNU", NT_GNU_BUILD_ID, NULL, 0);
	ck_assert_int_eq(buildid_parse_notes(blob, n, id), -EINVAL);
	memset(big, 0xab, sizeof(big));
	n = note_put(blob, be, 4, "GNU", NT_GNU_BUILD_ID, big, 21);
	ck_assert_int_eq(buildid_parse_notes(blob, n, id), -EINVAL);
	n = note_put(blob, be, 4, "GNU", NT_GNU_BUILD_ID, big, 32);
	ck_assert_int_eq(buildid_parse_notes(blob, n, id), -EINVAL);

	/* sizes past the end */
	n = note_put(blob, be, 4, "GNU", NT_GNU_BUILD_ID, test_id, 20);
	craft_put(blob, be, 0xffffffff, 4);
	ck_assert_int_eq(buildid_parse_notes(blob, n, id), -ENOEXEC);
	craft_put(blob, be, 4, 4);
	craft_put(blob + 4, be, 0xfffffffd, 4);
	ck_assert_int_eq(buildid_parse_notes(blob, n, id), -ENOEXEC);
}
END_TEST

START_TEST(test_hex)
{
	uint8_t	 id[BUILD_ID_MAX], back[BUILD_ID_MAX];
	char	 hex[BUILD_ID_HEX_MAX];
	size_t	 len;

	for (len = 1; len <= BUILD_ID_MAX; len++) {
		buildid_to_hex(test_id, len, hex);
		ck_assert_uint_eq(strlen(hex), 2 * len);
		ck_assert_int_eq(buildid_from_hex(hex, back), (int)len);
		ck_assert_mem_eq(back, test_id, len);
	}
	buildid_to_hex((const uint8_t *)"\x00\xff\xa5", 3, hex);
	ck_assert_str_eq(hex, "00ffa5");
	ck_assert_int_eq(buildid_from_hex(KNOWN_HEX, id), BUILD_ID_MAX);
	buildid_to_hex(id, BUILD_ID_MAX, hex);
	ck_assert_str_eq(hex, KNOWN_HEX);
	ck_assert_int_eq(buildid_from_hex("DEADbeef", id), 4);
	ck_assert_int_eq(id[0], 0xde);
	ck_assert_int_eq(id[3], 0xef);

	memset(id, 0x5a, sizeof(id));
	ck_assert_int_eq(buildid_from_hex("", id), -EINVAL);
	ck_assert_int_eq(buildid_from_hex(NULL, id), -EINVAL);
	ck_assert_int_eq(buildid_from_hex("abc", id), -EINVAL);
	ck_assert_int_eq(buildid_from_hex("zz", id), -EINVAL);
	ck_assert_int_eq(buildid_from_hex("0g", id), -EINVAL);
	ck_assert_int_eq(buildid_from_hex("0x12", id), -EINVAL);
	ck_assert_int_eq(buildid_from_hex(" 012", id), -EINVAL);
	ck_assert_int_eq(buildid_from_hex(KNOWN_HEX "00", id), -EINVAL);
	ck_assert_int_eq(buildid_from_hex(LONG_HEX, id), -EINVAL);
	/* a refused string leaves the output alone */
	ck_assert_int_eq(buildid_from_hex("0011zz", id), -EINVAL);
	ck_assert_int_eq(id[0], 0x5a);
}
END_TEST

/* The first line of `perf buildid-list -k`, if perf works here. */
static int
perf_kernel_hex(char *hex, size_t len)
{
	char	 line[256];
	FILE	*f;
	int	 r = -1;

	if ((f = popen("perf buildid-list -k 2>/dev/null", "r")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, " \r\n")] = '\0';
		if (strlen(line) == 2 * BUILD_ID_MAX && len > strlen(line)) {
			memcpy(hex, line, strlen(line) + 1);
			r = 0;
		}
	}
	pclose(f);
	return r;
}

START_TEST(test_kernel)
{
	uint8_t	 id[BUILD_ID_MAX];
	char	 hex[BUILD_ID_HEX_MAX], want[64];
	int	 r;

	if (access("/sys/kernel/notes", R_OK) != 0) {
		skip("kernel", "/sys/kernel/notes is not readable");
		return;
	}
	r = buildid_read_kernel(id);
	ck_assert_int_eq(r, BUILD_ID_MAX);
	buildid_to_hex(id, r, hex);
	ck_assert_msg(perf_kernel_hex(want, sizeof(want)) == 0,
	    "perf buildid-list -k gave nothing (perf is in tests/deps.sh)");
	ck_assert_str_eq(hex, want);
}
END_TEST

START_TEST(test_module)
{
	uint8_t		 id[BUILD_ID_MAX];
	char		 p[PATH_MAX];
	struct dirent	*de;
	DIR		*d;
	int		 found = 0;

	ck_assert_int_eq(buildid_read_module("no_such_module_xyz", id),
	    -ENOENT);
	ck_assert_int_eq(buildid_read_module("", id), -EINVAL);
	ck_assert_int_eq(buildid_read_module("..", id), -EINVAL);
	ck_assert_int_eq(buildid_read_module("../kernel", id), -EINVAL);
	ck_assert_int_eq(buildid_read_module(NULL, id), -EINVAL);

	if ((d = opendir("/sys/module")) == NULL) {
		skip("module", "no /sys/module");
		return;
	}
	while (!found && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p),
		    "/sys/module/%s/notes/.note.gnu.build-id", de->d_name);
		if (access(p, R_OK) != 0)
			continue;
		ck_assert_int_eq(buildid_read_module(de->d_name, id),
		    BUILD_ID_MAX);
		found = 1;
	}
	closedir(d);
	if (!found)
		skip("module", "no loaded module has a build-id note");
}
END_TEST

static Suite *
buildid_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("buildid");
	tc = tcase_create("buildid");
	tcase_add_unchecked_fixture(tc, build_files, remove_files);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_known_id);
	tcase_add_test(tc, test_matches_readelf);
	tcase_add_test(tc, test_debug_files);
	tcase_add_test(tc, test_elf32);
	tcase_add_test(tc, test_no_buildid);
	tcase_add_test(tc, test_long_id);
	tcase_add_test(tc, test_phdr_only);
	tcase_add_test(tc, test_fd_offset);
	tcase_add_test(tc, test_crafted_layouts);
	tcase_add_test(tc, test_sections_and_segments);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_not_elf);
	tcase_add_test(tc, test_note_overflow);
	tcase_add_test(tc, test_hostile_headers);
	tcase_add_test(tc, test_many_notes);
	tcase_add_test(tc, test_sparse_lies);
	tcase_add_test(tc, test_mutations);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_parse_notes);
	tcase_add_test(tc, test_hex);
	tcase_add_test(tc, test_kernel);
	tcase_add_test(tc, test_module);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(buildid_suite)
