/*
 * mmap3-test.c - guest side of "make -C kernel-patch qemu-test".
 *
 * Runs as /init of a small initramfs.  Opens perf events on itself (one
 * with the mmap3 attribute bit, one with mainline's attr.build_id), maps
 * /target.so (an ELF shared object whose build-id the host wrote to
 * /expected-build-id) and /data.txt (not ELF) executable, reads the rings
 * and checks the records with perfmapd's own decoder (common/record.c).
 * MMAP3_EXPECT=stock (on the kernel command line, passed to init in its
 * environment) turns the mmap3 part around: the kernel must refuse the bit
 * with EINVAL.  Prints "MMAP3-TEST: ..." lines on the console, ends with
 * "MMAP3-TEST: RESULT PASS|FAIL" and reboots (qemu -no-reboot exits).
 *
 * Built on the host against Debian's 6.1 UAPI header, which has no mmap3
 * field: the bit is set in the flags word with perf_attr_set_flag().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>

#include "perf_abi.h"
#include "record.h"

#define TARGET		"/target.so"
#define DATAFILE	"/data.txt"
#define EXPECTED	"/expected-build-id"
#define RING_PAGES	16		/* data pages, a power of 2 */
#define SAMPLE_TYPE	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

static int failures;

static void
say(const char *fmt, ...)
{
	va_list ap;

	printf("MMAP3-TEST: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void
check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("MMAP3-TEST: %s ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!ok)
		failures++;
}

static void
finish(void)
{
	say("RESULT %s (%d failure%s)", failures ? "FAIL" : "PASS", failures,
	    failures == 1 ? "" : "s");
	fflush(stdout);
	sync();
	if (getpid() == 1) {
		reboot(RB_AUTOBOOT);
		for (;;)
			pause();
	}
	exit(failures ? 1 : 0);
}

static void
hex(char *out, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = '\0';
}

/*
 * An event on this process: a dummy software event whose only output is
 * the side-band records.
 *   MODE_PLAIN     mmap = 1, mmap2 = 1
 *   MODE_MMAP3     mmap2 = 1 and the mmap3 bit (no attr.mmap: mmap3 alone
 *                  enables the records)
 *   MODE_BUILD_ID  mainline's 5.12 form: mmap = 1, mmap2 = 1, build_id = 1
 *   MODE_BOTH      the mmap3 and build_id bits (refused with EINVAL)
 */
enum { MODE_PLAIN, MODE_MMAP3, MODE_BUILD_ID, MODE_BOTH };

static void
setup_attr(struct perf_event_attr *a, int mode)
{
	memset(a, 0, sizeof(*a));
	a->size = PERF_ATTR_SIZE_VER7;		/* 128 */
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_type = SAMPLE_TYPE;
	a->sample_id_all = 1;
	a->mmap2 = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	if (mode == MODE_PLAIN || mode == MODE_BUILD_ID)
		a->mmap = 1;
	perf_attr_set_flag(a, PERF_ATTR_FLAG_MMAP3_BIT, mode == MODE_MMAP3 || mode == MODE_BOTH);
	perf_attr_set_flag(a, PERF_ATTR_FLAG_BUILD_ID_BIT, mode == MODE_BUILD_ID || mode == MODE_BOTH);
}

static int
perf_open(struct perf_event_attr *a)
{
	return (int)syscall(SYS_perf_event_open, a, 0 /* self */, -1 /* any cpu */,
	    -1, PERF_FLAG_FD_CLOEXEC);
}

static int
read_expected(uint8_t *bid, size_t *n)
{
	char buf[128], *s;
	FILE *f;

	if ((f = fopen(EXPECTED, "r")) == NULL)
		return -1;
	s = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (s == NULL)
		return -1;
	for (*n = 0; *n < BUILD_ID_MAX && sscanf(s, "%2hhx", &bid[*n]) == 1; s += 2)
		(*n)++;
	return *n > 0 ? 0 : -1;
}

/* A mapped file and the mmap record found for it in one ring. */
struct seen {
	const char	*path;
	void		*addr;
	struct stat	 st;
	int		 found;
	struct record	 rec;
	uint8_t		 raw[256];	/* the record as the ring had it */
};

struct ring {
	const char	*name;
	int		 fd;
	struct perf_event_mmap_page *pg;
	uint8_t		*data;
	size_t		 size;		/* data area, a power of 2 */
	struct record_layout layout;
	int		 nrec, nbad, ntype[64];
};

static struct seen files[2] = { { .path = TARGET }, { .path = DATAFILE } };
static uint8_t expect[BUILD_ID_MAX];
static size_t expect_n;
static const uint8_t zero[BUILD_ID_MAX];

static int
ring_open(struct ring *r, const char *name, int mode)
{
	struct perf_event_attr a;
	size_t pagesz = (size_t)sysconf(_SC_PAGESIZE);

	memset(r, 0, sizeof(*r));
	r->name = name;
	r->layout.sample_type = SAMPLE_TYPE;
	r->layout.sample_id_all = 1;
	r->layout.mmap3 = mode == MODE_MMAP3;
	setup_attr(&a, mode);
	if ((r->fd = perf_open(&a)) < 0)
		return -1;
	r->size = RING_PAGES * pagesz;
	r->pg = mmap(NULL, pagesz + r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->pg == MAP_FAILED)
		return -1;
	r->data = (uint8_t *)r->pg + pagesz;
	return 0;
}

/* Map the test files executable (once, after the events are open). */
static int
map_files(void)
{
	size_t i;

	for (i = 0; i < 2; i++) {
		struct seen *sp = &files[i];
		int fd = open(sp->path, O_RDONLY);

		if (fd < 0 || fstat(fd, &sp->st) < 0) {
			check(0, "open %s: %s", sp->path, strerror(errno));
			return -1;
		}
		sp->addr = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (sp->addr == MAP_FAILED) {
			check(0, "mmap %s PROT_EXEC: %s", sp->path, strerror(errno));
			return -1;
		}
		close(fd);
	}
	return 0;
}

/* Read every record of R with record_decode(); remember those of FILES. */
static void
ring_drain(struct ring *r, struct seen *out)
{
	static uint8_t scratch[65536];
	uint64_t head, tail;
	size_t i;

	for (i = 0; i < 2; i++) {
		out[i] = files[i];
		out[i].found = 0;
	}
	head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	tail = r->pg->data_tail;
	while (tail < head) {
		struct perf_event_header hdr;
		struct record rec;
		size_t off = tail & (r->size - 1);
		int is_mmap;

		for (i = 0; i < sizeof(hdr); i++)
			((uint8_t *)&hdr)[i] = r->data[(off + i) & (r->size - 1)];
		if (hdr.size < sizeof(hdr) || tail + hdr.size > head) {
			check(0, "%s: torn record in the ring (size %u)", r->name, hdr.size);
			break;
		}
		for (i = 0; i < hdr.size; i++)		/* the record may wrap */
			scratch[i] = r->data[(off + i) & (r->size - 1)];
		tail += hdr.size;
		r->nrec++;
		if (record_decode(scratch, hdr.size, &r->layout, &rec) != 0) {
			say("%s: record %d: type %u size %u: record_decode refused it",
			    r->name, r->nrec, hdr.type, hdr.size);
			r->nbad++;
			continue;
		}
		r->ntype[rec.type & 63]++;
		is_mmap = rec.type == PERF_RECORD_MMAP2 ||
		    (rec.type == PERF_RECORD_MMAP3 && r->layout.mmap3);
		say("%s: record %d: %s size %u misc %#x%s%s", r->name, r->nrec,
		    record_type_name(rec.type, &r->layout), rec.size, rec.misc,
		    is_mmap ? " " : "", is_mmap ? rec.mmap.filename : "");
		if (!is_mmap)
			continue;
		for (i = 0; i < 2; i++) {
			if (strcmp(rec.mmap.filename, out[i].path) == 0 &&
			    rec.mmap.addr == (uint64_t)(uintptr_t)out[i].addr) {
				out[i].found = 1;
				out[i].rec = rec;
				memcpy(out[i].raw, scratch, hdr.size < sizeof(out[i].raw) ?
				    hdr.size : sizeof(out[i].raw));
			}
		}
	}
	__atomic_store_n(&r->pg->data_tail, tail, __ATOMIC_RELEASE);
	check(r->nbad == 0, "%s: %d records, all decoded by record_decode()", r->name,
	    r->nrec);
}

static void
check_common(const char *rn, struct seen *sp, uint32_t type)
{
	struct record_mmap *m = &sp->rec.mmap;

	check(sp->found && sp->rec.type == type, "%s: %s record for %s at %p", rn,
	    type == PERF_RECORD_MMAP3 ? "MMAP3" : "MMAP2", sp->path, sp->addr);
	if (!sp->found)
		return;
	check(m->pid == (uint32_t)getpid() && sp->rec.has_sid &&
	    sp->rec.sid.pid == (uint32_t)getpid(),
	    "%s: %s: pid %u, sample_id pid %u", rn, sp->path, m->pid, sp->rec.sid.pid);
	check((m->prot & PROT_EXEC) && m->len == 8192 && m->pgoff == 0,
	    "%s: %s: prot %#x len %llu pgoff %llu", rn, sp->path, m->prot,
	    (unsigned long long)m->len, (unsigned long long)m->pgoff);
}

static int
inode_ok(const struct seen *sp)
{
	const struct record_mmap *m = &sp->rec.mmap;

	return m->has_inode && m->maj == major(sp->st.st_dev) &&
	    m->min == minor(sp->st.st_dev) && m->ino == sp->st.st_ino;
}

static int
build_id_ok(const struct record_mmap *m)
{
	return m->build_id_size == expect_n && memcmp(m->build_id, expect, expect_n) == 0 &&
	    memcmp(m->build_id + expect_n, zero, BUILD_ID_MAX - expect_n) == 0;
}

/* The MMAP3 records of the patched kernel. */
static void
check_mmap3(struct ring *r)
{
	struct seen s[2];
	char h[2 * BUILD_ID_MAX + 1];
	size_t i;

	ring_drain(r, s);
	check(r->ntype[PERF_RECORD_MMAP2] == 0 && r->ntype[PERF_RECORD_MMAP] == 0,
	    "%s: no MMAP/MMAP2 records (attr.mmap3 takes precedence over attr.mmap2)",
	    r->name);
	for (i = 0; i < 2; i++) {
		struct seen *sp = &s[i];
		struct record_mmap *m = &sp->rec.mmap;
		const struct mmap3_record *raw = (const void *)sp->raw;

		check_common(r->name, sp, PERF_RECORD_MMAP3);
		if (!sp->found)
			continue;
		check(inode_ok(sp), "%s: %s: inode identity kept: maj %u min %u ino %llu (stat: %u:%u %llu)",
		    r->name, sp->path, m->maj, m->min, (unsigned long long)m->ino,
		    major(sp->st.st_dev), minor(sp->st.st_dev), (unsigned long long)sp->st.st_ino);
		check(!(sp->rec.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
		    raw->build_id_size == m->build_id_size && raw->__reserved_1 == 0 &&
		    raw->__reserved_2 == 0 &&
		    strcmp((const char *)sp->raw + offsetof(struct mmap3_record, filename),
		    sp->path) == 0,
		    "%s: %s: raw layout as perf_abi.h (build_id_size at 72, filename at 96)",
		    r->name, sp->path);
		hex(h, m->build_id, m->build_id_size);
		if (i == 0)
			check(build_id_ok(m), "%s: %s: build_id_size %u build-id %s", r->name,
			    sp->path, m->build_id_size, h);
		else
			check(m->build_id_size == 0 && memcmp(m->build_id, zero, BUILD_ID_MAX) == 0,
			    "%s: %s (not ELF): build_id_size %u, build_id zeroed", r->name,
			    sp->path, m->build_id_size);
	}
}

/* Mainline's attr.build_id MMAP2 records (5.12), on either kernel. */
static void
check_build_id(struct ring *r)
{
	struct seen s[2];
	char h[2 * BUILD_ID_MAX + 1];

	ring_drain(r, s);
	check_common(r->name, &s[0], PERF_RECORD_MMAP2);
	check_common(r->name, &s[1], PERF_RECORD_MMAP2);
	if (s[0].found) {
		hex(h, s[0].rec.mmap.build_id, s[0].rec.mmap.build_id_size);
		check((s[0].rec.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && build_id_ok(&s[0].rec.mmap) &&
		    !s[0].rec.mmap.has_inode,
		    "%s: %s: MISC_MMAP_BUILD_ID, build-id %s in place of maj/min/ino", r->name,
		    s[0].path, h);
	}
	if (s[1].found)
		check(!(s[1].rec.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && inode_ok(&s[1]),
		    "%s: %s (not ELF): plain maj/min/ino form", r->name, s[1].path);
}

/*
 * A plain MMAP2 event opened before the attr.build_id one (so iterated
 * after it: a task context lists the newest event first) must not get
 * PERF_RECORD_MISC_MMAP_BUILD_ID on its inode-form records.  Stock 6.1
 * leaks the flag (fixed by patch 0001): reported, not failed, there.
 */
static void
check_plain(struct ring *r, int patched)
{
	struct seen s[2];
	int leaked = 0, i;

	ring_drain(r, s);
	for (i = 0; i < 2; i++) {
		check_common(r->name, &s[i], PERF_RECORD_MMAP2);
		if (!s[i].found)
			continue;
		if (s[i].rec.misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
			leaked++;
		else
			check(inode_ok(&s[i]), "%s: %s: maj/min/ino form", r->name, s[i].path);
	}
	if (patched)
		check(leaked == 0, "%s: no MISC_MMAP_BUILD_ID leaked from the build_id event "
		    "into this event's records (%d leaked)", r->name, leaked);
	else
		say("info %s: MISC_MMAP_BUILD_ID leaked from the build_id event into %d "
		    "inode-form record%s of this event (6.1 bug, fixed by patch 0001)",
		    r->name, leaked, leaked == 1 ? "" : "s");
}

static void
run(int patched)
{
	struct ring r3, rb, rp;
	struct perf_event_attr a;
	char h[2 * BUILD_ID_MAX + 1];
	int fd, have3;

	if (read_expected(expect, &expect_n) < 0) {
		check(0, "reading %s", EXPECTED);
		return;
	}
	hex(h, expect, expect_n);
	say("expected build-id of %s (host readelf -n): %s", TARGET, h);

	setup_attr(&a, MODE_BOTH);
	fd = perf_open(&a);
	check(fd < 0 && errno == EINVAL, "attr.mmap3 + attr.build_id refused: %s",
	    fd < 0 ? strerror(errno) : "opened!");
	if (fd >= 0)
		close(fd);

	if (ring_open(&rp, "plain", MODE_PLAIN) < 0) {
		check(0, "perf_event_open with mmap2: %s", strerror(errno));
		return;
	}
	have3 = ring_open(&r3, "mmap3", MODE_MMAP3) == 0;
	if (patched)
		check(have3, "perf_event_open with attr.mmap3 (bit %d): %s",
		    PERF_ATTR_FLAG_MMAP3_BIT, have3 ? "ok" : strerror(errno));
	else
		check(!have3 && errno == EINVAL, "stock kernel refuses attr.mmap3 (bit %d): %s",
		    PERF_ATTR_FLAG_MMAP3_BIT, have3 ? "opened!" : strerror(errno));
	setup_attr(&a, MODE_PLAIN);
	fd = perf_open(&a);
	check(fd >= 0, "the same attr without the mmap3 bit opens: %s",
	    fd >= 0 ? "yes" : strerror(errno));
	if (fd >= 0)
		close(fd);
	if (ring_open(&rb, "build_id", MODE_BUILD_ID) < 0) {
		check(0, "perf_event_open with attr.build_id: %s", strerror(errno));
		return;
	}
	if (map_files() < 0)
		return;
	if (have3)
		check_mmap3(&r3);
	check_build_id(&rb);
	check_plain(&rp, patched);
}

int
main(void)
{
	struct utsname u;
	const char *expect = getenv("MMAP3_EXPECT");	/* kernel command line */

	setvbuf(stdout, NULL, _IONBF, 0);
	if (expect == NULL)
		expect = "patched";
	uname(&u);
	say("kernel %s %s, expecting a %s kernel", u.release, u.version, expect);
	run(strcmp(expect, "stock") != 0);
	finish();
	return 0;
}
