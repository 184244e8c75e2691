/*
 * probe.c - the start-up probes (probe.h): does this kernel leak the
 * build-id flag into other tools' MMAP2 records, and does it really send
 * MMAP3 records when asked with the mmap3 bit?
 *
 * Neither can be told from perf_event_open's answer: a leaky kernel
 * accepts attr.build_id like a fixed one, and a kernel where the mmap3 bit
 * means something else accepts it too.  So the probe makes the kernel
 * show what it does:
 *
 *	probe file	a tiny ELF (one PT_NOTE: a GNU build-id of 20 random
 *			bytes) in a memfd (or an unlinked O_TMPFILE in the
 *			state directory), read back with common/buildid.c;
 *	events		dummy software events on our own thread, each with a
 *			small ring (probe.h says which and why);
 *	one mmap	of the file, PROT_EXEC, then the rings are read, the
 *			events closed and the file unmapped.
 *
 * probe_judge reads only what probe_run recorded; it never asks the
 * kernel.  A record counts only if its pid, tid, address and length are
 * those of our mapping, and its size is exactly what its layout says.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "buildid.h"
#include "log.h"
#include "probe.h"
#include "walltime.h"

#ifndef MFD_EXEC
#define MFD_EXEC	0x0010U		/* Linux >= 6.3 with vm.memfd_noexec */
#endif

#define PROBE_PAGE	4096		/* the probe file's size; pages are the system's (probe_page) */
#define PROBE_NOTE_OFF	(sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr))

static int
probe_perf_open(struct perf_event_attr *a)
{
	int fd = (int)syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	return fd == -1 ? -errno : fd;
}

/*
 * The probe file: ELF header, one PT_NOTE program header, the note, in
 * one page.  The kernel reads build-ids from the program headers of the
 * file's first page, as common/buildid.c does without a section table.
 */
static int
probe_make_file(struct probe_target *t, const char *state_dir, unsigned flags)
{
	uint8_t		 page[PROBE_PAGE];
	Elf64_Ehdr	*eh = (Elf64_Ehdr *)page;
	Elf64_Phdr	*ph = (Elf64_Phdr *)(page + sizeof(*eh));
	Elf64_Nhdr	*nh = (Elf64_Nhdr *)(page + PROBE_NOTE_OFF);
	uint8_t		 id[BUILD_ID_MAX], back[BUILD_ID_MAX];
	struct timespec	 ts;
	int		 fd, n, i;

	if (getrandom(id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id)) {
		/* Unique is what matters, not secret. */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (i = 0; i < (int)sizeof(id); i++)
			id[i] = (uint8_t)((ts.tv_nsec >> (i % 8) * 8) ^ getpid() >> (i % 4) ^ i);
	}
	memset(page, 0, sizeof(page));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = __BYTE_ORDER == __LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	ph->p_type = PT_NOTE;
	ph->p_flags = PF_R;
	ph->p_offset = PROBE_NOTE_OFF;
	ph->p_filesz = ph->p_memsz = sizeof(*nh) + 4 + sizeof(id);
	ph->p_align = 4;
	nh->n_namesz = 4;
	nh->n_descsz = sizeof(id);
	nh->n_type = NT_GNU_BUILD_ID;
	memcpy(nh + 1, "GNU", 4);
	memcpy((uint8_t *)(nh + 1) + 4, id, sizeof(id));

	t->step = "memfd_create";
	fd = -1;
	if ((flags & PROBE_TMPFILE) == 0 &&
	    (fd = memfd_create("perfmapd-probe", MFD_CLOEXEC | MFD_EXEC)) == -1 &&
	    errno == EINVAL)			/* a kernel without MFD_EXEC */
		fd = memfd_create("perfmapd-probe", MFD_CLOEXEC);
	if (fd == -1) {
		t->step = "open(O_TMPFILE) in the state directory";
		fd = open(state_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	}
	if (fd == -1)
		return -errno;
	t->step = "write";
	if (pwrite(fd, page, sizeof(page), 0) != (ssize_t)sizeof(page)) {
		n = errno != 0 ? -errno : -EIO;
		close(fd);
		return n;
	}
	/* What the kernel should report is what our own reader finds. */
	t->step = "reading back its build-id";
	if ((n = buildid_read_fd(fd, back)) < 0 || n != (int)sizeof(id) ||
	    memcmp(back, id, sizeof(id)) != 0) {
		close(fd);
		return n < 0 ? n : -EILSEQ;
	}
	memcpy(t->build_id, id, sizeof(id));
	t->build_id_size = n;
	return fd;
}

static void
probe_attr(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = PERF_FILE_ATTR_SIZE;
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->disabled = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->exclude_kernel = 1;
}

struct probe_event {
	int	 fd;
	void	*ring;
};

/*
 * The system's page: a ring is whole pages (with 64 KiB pages, a ring of
 * 3 x 4 KiB was one page, no data page, and every record dropped), and a
 * map's length in the MMAP2 record is its page-rounded length.
 */
static size_t
probe_page(void)
{
	long	 page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (size_t)page : PROBE_PAGE;
}

#define PROBE_RING_BYTES	((PROBE_RING_PAGES + 1) * probe_page())

static void
probe_open(struct probe_event *ev, struct probe_ring *r, unsigned int bit)
{
	struct perf_event_attr a;

	ev->fd = -1;
	ev->ring = MAP_FAILED;
	probe_attr(&a);
	if (bit != 0)
		perf_attr_set_flag(&a, bit, 1);
	if ((r->open_err = probe_perf_open(&a)) < 0)
		return;
	ev->fd = r->open_err;
	r->open_err = 0;
	ev->ring = mmap(NULL, PROBE_RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, ev->fd, 0);
	if (ev->ring == MAP_FAILED)
		r->map_err = -errno;
}

/* Copy what the ring holds (it was never read before: the tail is 0). */
static void
probe_read(struct probe_event *ev, struct probe_ring *r)
{
	struct perf_event_mmap_page *pg = ev->ring;
	uint64_t head;

	if (ev->ring == MAP_FAILED)
		return;
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	if (head > PROBE_DATA_MAX) {
		r->overflow = 1;
		return;
	}
	memcpy(r->data, (uint8_t *)ev->ring + probe_page(), (size_t)head);
	r->len = (size_t)head;
}

static void
probe_close(struct probe_event *ev)
{
	if (ev->ring != MAP_FAILED)
		munmap(ev->ring, PROBE_RING_BYTES);
	if (ev->fd >= 0)
		close(ev->fd);
}

static void
probe_enable(struct probe_event *evs, size_t n, unsigned long req)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (evs[i].fd >= 0 && evs[i].ring != MAP_FAILED)
			ioctl(evs[i].fd, req, 0);
}

void
probe_run(struct probe_obs *o, const char *state_dir, unsigned flags)
{
	struct probe_event ev[4];
	struct probe_ring *rings[4] = { &o->plain_old, &o->with_id, &o->plain_new, &o->mmap3 };
	const unsigned int bits[4] = { 0, PERF_ATTR_FLAG_BUILD_ID_BIT, 0, PERF_ATTR_FLAG_MMAP3_BIT };
	struct probe_target *t = &o->target;
	struct stat st;
	void	*map = MAP_FAILED;
	size_t	 i, n = (flags & PROBE_MMAP3) ? 4 : 3;
	int	 fd;

	memset(o, 0, sizeof(*o));
	o->mmap3_tried = (flags & PROBE_MMAP3) != 0;
	if ((fd = probe_make_file(t, state_dir, flags)) < 0) {
		t->err = fd;
		return;
	}
	t->step = "fstat";
	if (fstat(fd, &st) == -1) {
		t->err = -errno;
		close(fd);
		return;
	}
	t->maj = major(st.st_dev);
	t->min = minor(st.st_dev);
	t->ino = st.st_ino;
	t->pid = (uint32_t)getpid();
	t->tid = (uint32_t)gettid();
	t->len = probe_page();

	for (i = 0; i < n; i++)
		probe_open(&ev[i], rings[i], bits[i]);
	probe_enable(ev, n, PERF_EVENT_IOC_ENABLE);
	t->step = "mmap";
	map = mmap(NULL, t->len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		t->err = -errno;
	else
		t->addr = (uint64_t)(uintptr_t)map;
	probe_enable(ev, n, PERF_EVENT_IOC_DISABLE);
	for (i = 0; i < n; i++) {
		probe_read(&ev[i], rings[i]);
		probe_close(&ev[i]);
	}
	if (map != MAP_FAILED)
		munmap(map, t->len);
	close(fd);
}

/* The size a record of FIXED bytes and a NUL-terminated name must have. */
static int
probe_name_fits(const uint8_t *rec, size_t size, size_t fixed)
{
	const char *name = (const char *)rec + fixed;
	size_t	 len;

	if (size <= fixed)
		return 0;
	len = strnlen(name, size - fixed);
	if (len == size - fixed)
		return 0;
	return size == fixed + ((len + 1 + 7) & ~(size_t)7);
}

/*
 * Walk R's records; for each one call FN(record, size, arg) and stop at its
 * first non-zero return.  Returns that value, 0 at the end, or -1 for a
 * torn ring (a size that is zero, not 8-aligned or past the end).
 */
static int
probe_walk(const struct probe_ring *r,
    int (*fn)(const struct perf_event_header *, void *), void *arg)
{
	const struct perf_event_header *h;
	size_t	 off;
	int	 rc;

	for (off = 0; off + sizeof(*h) <= r->len; off += h->size) {
		h = (const struct perf_event_header *)(r->data + off);
		if (h->size < sizeof(*h) || h->size % 8 != 0 || h->size > r->len - off)
			return -1;
		if ((rc = fn(h, arg)) != 0)
			return rc;
	}
	return 0;
}

struct probe_find {
	const struct probe_target *t;
	const struct mmap2_record *m2;	/* the MMAP2 record of our mapping */
	const struct perf_event_header *other;	/* first record of another type */
	const struct mmap3_record *m3;	/* the MMAP3 record of our mapping */
	int	 bad_layout;		/* an MMAP3-typed record of another size */
	uint16_t bad_size;
};

static int
probe_ours(const struct probe_target *t, uint32_t pid, uint32_t tid, uint64_t addr,
    uint64_t len)
{
	return pid == t->pid && tid == t->tid && addr == t->addr && len == t->len;
}

static int
probe_find_mmap2_cb(const struct perf_event_header *h, void *arg)
{
	struct probe_find *f = arg;
	const struct mmap2_record *m = (const void *)h;

	if (h->type != PERF_RECORD_MMAP2 ||
	    !probe_name_fits((const uint8_t *)h, h->size, sizeof(*m)))
		return 0;
	if (!probe_ours(f->t, m->pid, m->tid, m->addr, m->len))
		return 0;
	f->m2 = m;
	return 1;
}

/* The MMAP2 record of our mapping in R, or NULL. */
static const struct mmap2_record *
probe_find_mmap2(const struct probe_target *t, const struct probe_ring *r)
{
	struct probe_find f = { .t = t };

	probe_walk(r, probe_find_mmap2_cb, &f);
	return f.m2;
}

static int
probe_leaked(const struct mmap2_record *m)
{
	return m != NULL && (m->header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) != 0;
}

static const char *
probe_errname(int err)
{
	return strerror(-err);
}

static int
probe_ring_failed(const struct probe_ring *r, const char *what, char *why, size_t len)
{
	if (r->open_err != 0)
		snprintf(why, len, "perf_event_open of the %s event: %s", what,
		    probe_errname(r->open_err));
	else if (r->map_err != 0)
		snprintf(why, len, "mmap of the %s event's ring: %s", what,
		    probe_errname(r->map_err));
	else if (r->overflow)
		snprintf(why, len, "the %s event's ring overflowed", what);
	else
		return 0;
	return 1;
}

static int
probe_denied(int err)
{
	return err == -EACCES || err == -EPERM;
}

static void
probe_judge_leak(const struct probe_obs *o, struct probe_report *rep)
{
	const struct probe_target *t = &o->target;
	const struct mmap2_record *old, *bid, *new;
	char	*why = rep->leak_why;
	size_t	 wl = sizeof(rep->leak_why);
	char	 hex[BUILD_ID_HEX_MAX];

	rep->leak = PROBE_LEAK_UNKNOWN;
	if (o->with_id.open_err == -EINVAL || o->with_id.open_err == -E2BIG) {
		rep->leak = PROBE_LEAK_NA;
		snprintf(why, wl, "no attr.build_id in this kernel (%s): nothing to leak",
		    probe_errname(o->with_id.open_err));
		return;
	}
	if (probe_ring_failed(&o->with_id, "build-id", why, wl) ||
	    probe_ring_failed(&o->plain_old, "plain", why, wl) ||
	    probe_ring_failed(&o->plain_new, "plain", why, wl))
		return;
	if (t->err != 0) {
		snprintf(why, wl, "the probe file: %s: %s", t->step, probe_errname(t->err));
		return;
	}
	old = probe_find_mmap2(t, &o->plain_old);
	bid = probe_find_mmap2(t, &o->with_id);
	new = probe_find_mmap2(t, &o->plain_new);
	if (probe_leaked(old) || probe_leaked(new)) {
		rep->leak = PROBE_LEAK_YES;
		rep->foreign = probe_leaked(old) && probe_leaked(new);
		snprintf(why, wl, "a plain MMAP2 record carried PERF_RECORD_MISC_MMAP_BUILD_ID "
		    "over maj/min/ino%s", rep->foreign ? "; another tool's attr.build_id "
		    "event was active too" : "");
		return;
	}
	if (bid == NULL || old == NULL || new == NULL) {
		snprintf(why, wl, "no MMAP2 record of the probe mapping on the %s event",
		    bid == NULL ? "build-id" : "plain");
		return;
	}
	if (!probe_leaked(bid)) {
		snprintf(why, wl, "the kernel did not read the probe file's build-id, "
		    "so a leak could not show");
		return;
	}
	if (bid->build_id_size != t->build_id_size ||
	    memcmp(bid->build_id, t->build_id, (size_t)t->build_id_size) != 0) {
		buildid_to_hex(bid->build_id, bid->build_id_size <= BUILD_ID_MAX ?
		    bid->build_id_size : BUILD_ID_MAX, hex);
		snprintf(why, wl, "the build-id event reported build-id '%s' for the "
		    "probe file, not the one written", hex);
		return;
	}
	rep->leak = PROBE_LEAK_NO;
	snprintf(why, wl, "plain MMAP2 records after a build-id one kept maj/min/ino");
}

static int
probe_find_mmap3_cb(const struct perf_event_header *h, void *arg)
{
	struct probe_find *f = arg;
	const struct mmap3_record *m = (const void *)h;

	if (h->type != PERF_RECORD_MMAP3) {
		if (f->other == NULL)
			f->other = h;
		return 0;
	}
	if (!probe_name_fits((const uint8_t *)h, h->size, sizeof(*m)) ||
	    m->__reserved_1 != 0 || m->__reserved_2 != 0 || m->build_id_size > BUILD_ID_MAX) {
		f->bad_layout = 1;
		f->bad_size = h->size;
		return 0;
	}
	if (probe_ours(f->t, m->pid, m->tid, m->addr, m->len) && f->m3 == NULL)
		f->m3 = m;
	return 0;
}

static void
probe_judge_mmap3(const struct probe_obs *o, struct probe_report *rep)
{
	const struct probe_target *t = &o->target;
	const struct mmap3_record *m;
	struct probe_find f = { .t = t };
	char	*why = rep->mmap3_why;
	size_t	 wl = sizeof(rep->mmap3_why);
	char	 got[BUILD_ID_HEX_MAX], want[BUILD_ID_HEX_MAX];

	if (!o->mmap3_tried) {
		rep->mmap3 = PROBE_MMAP3_NOT_RUN;
		snprintf(why, wl, "not probed");
		return;
	}
	rep->mmap3 = PROBE_MMAP3_FAILED;
	if (o->mmap3.open_err == -EINVAL || o->mmap3.open_err == -E2BIG) {
		rep->mmap3 = PROBE_MMAP3_REFUSED;
		snprintf(why, wl, "the kernel refuses attribute bit %d (%s): no mmap3 "
		    "(kernel-patch/) in this kernel", PERF_ATTR_FLAG_MMAP3_BIT,
		    probe_errname(o->mmap3.open_err));
		return;
	}
	if (probe_ring_failed(&o->mmap3, "mmap3", why, wl))
		return;
	if (t->err != 0) {
		snprintf(why, wl, "the probe file: %s: %s", t->step, probe_errname(t->err));
		return;
	}
	if (probe_walk(&o->mmap3, probe_find_mmap3_cb, &f) < 0) {
		snprintf(why, wl, "attribute bit %d is accepted but its ring holds a torn "
		    "record", PERF_ATTR_FLAG_MMAP3_BIT);
		return;
	}
	if (f.other != NULL) {
		snprintf(why, wl, "attribute bit %d is accepted but the kernel sent a record "
		    "of type %u where MMAP3 (type %d) was expected", PERF_ATTR_FLAG_MMAP3_BIT,
		    f.other->type, PERF_RECORD_MMAP3);
		return;
	}
	if (f.bad_layout) {
		snprintf(why, wl, "a record of the MMAP3 type (%d) with another layout "
		    "(%u bytes)", PERF_RECORD_MMAP3, f.bad_size);
		return;
	}
	if ((m = f.m3) == NULL) {
		snprintf(why, wl, "attribute bit %d is accepted but no MMAP3 record of the "
		    "probe mapping came", PERF_ATTR_FLAG_MMAP3_BIT);
		return;
	}
	if (m->maj != t->maj || m->min != t->min || m->ino != t->ino) {
		snprintf(why, wl, "the MMAP3 record names file %u:%u:%llu, the probe file "
		    "is %u:%u:%llu", m->maj, m->min, (unsigned long long)m->ino, t->maj,
		    t->min, (unsigned long long)t->ino);
		return;
	}
	if (m->build_id_size == 0) {
		snprintf(why, wl, "the MMAP3 record of the probe file has no build-id");
		return;
	}
	if (m->build_id_size != t->build_id_size ||
	    memcmp(m->build_id, t->build_id, (size_t)t->build_id_size) != 0) {
		buildid_to_hex(m->build_id, m->build_id_size, got);
		buildid_to_hex(t->build_id, (size_t)t->build_id_size, want);
		snprintf(why, wl, "the MMAP3 record carries build-id %s, the probe file "
		    "has %s", got, want);
		return;
	}
	rep->mmap3 = PROBE_MMAP3_PROVEN;
	snprintf(why, wl, "an MMAP3 record (type %d, bit %d) carried the probe file's "
	    "build-id and inode", PERF_RECORD_MMAP3, PERF_ATTR_FLAG_MMAP3_BIT);
}

void
probe_judge(const struct probe_obs *o, struct probe_report *rep)
{
	const struct probe_ring *rings[4] = { &o->plain_old, &o->with_id, &o->plain_new,
	    &o->mmap3 };
	size_t	 i;

	memset(rep, 0, sizeof(*rep));
	for (i = 0; i < 4; i++)
		if (probe_denied(rings[i]->open_err))
			rep->denied = rings[i]->open_err;
	probe_judge_leak(o, rep);
	probe_judge_mmap3(o, rep);
}

void
probe_all(struct probe_report *rep, const char *state_dir, unsigned flags)
{
	struct probe_obs *o;
	uint64_t t0 = mono_ns();

	memset(rep, 0, sizeof(*rep));
	if ((o = malloc(sizeof(*o))) == NULL) {
		rep->mmap3 = (flags & PROBE_MMAP3) ? PROBE_MMAP3_FAILED : PROBE_MMAP3_NOT_RUN;
		snprintf(rep->leak_why, sizeof(rep->leak_why), "out of memory");
		snprintf(rep->mmap3_why, sizeof(rep->mmap3_why), "out of memory");
		return;
	}
	probe_run(o, state_dir, flags);
	probe_judge(o, rep);
	if (rep->leak == PROBE_LEAK_UNKNOWN && rep->denied == 0) {
		log_debug("leak probe: %s; once more", rep->leak_why);
		probe_run(o, state_dir, flags);
		probe_judge(o, rep);
	}
	free(o);
	rep->duration_us = (mono_ns() - t0) / 1000;
}

int
probe_choose_mode(enum buildid_mode want, int accept_leak, const struct probe_report *rep,
    enum buildid_mode *got, char *why, size_t whylen, char *err, size_t errlen)
{
	if (want == BUILDID_USERSPACE) {
		*got = BUILDID_USERSPACE;
		snprintf(why, whylen, "buildid_mode = userspace");
		return 0;
	}
	if (rep->denied != 0) {
		snprintf(err, errlen, "perf_event_open: %s (run as root or with CAP_PERFMON; "
		    "see /proc/sys/kernel/perf_event_paranoid)", strerror(-rep->denied));
		return -1;
	}
	if (want == BUILDID_AUTO || want == BUILDID_MMAP3) {
		if (rep->mmap3 == PROBE_MMAP3_PROVEN) {
			*got = BUILDID_MMAP3;
			snprintf(why, whylen, "mmap3 proven: %s", rep->mmap3_why);
			return 0;
		}
		if (want == BUILDID_MMAP3) {
			snprintf(err, errlen, "buildid_mode = mmap3: not proven: %s; it needs "
			    "a kernel with kernel-patch/", rep->mmap3_why);
			return -1;
		}
	}
	switch (rep->leak) {
	case PROBE_LEAK_NA:
		if (want == BUILDID_MMAP2) {
			snprintf(err, errlen, "buildid_mode = mmap2: %s; Linux 5.12 or later "
			    "is needed", rep->leak_why);
			return -1;
		}
		*got = BUILDID_USERSPACE;
		snprintf(why, whylen, "%s", rep->leak_why);
		return 0;
	case PROBE_LEAK_NO:
		*got = BUILDID_MMAP2;
		snprintf(why, whylen, "this kernel does not leak the build-id flag");
		return 0;
	default:
		break;
	}
	if (accept_leak) {
		*got = BUILDID_MMAP2;
		snprintf(why, whylen, "kernel build-ids on a kernel that %s, accepted by "
		    "mmap2_on_leaky_kernel = yes: other tools' perf record may abort",
		    rep->leak == PROBE_LEAK_YES ? "leaks the build-id flag" :
		    "could not be proven not to leak");
		return 0;
	}
	if (want == BUILDID_MMAP2) {
		snprintf(err, errlen, "buildid_mode = mmap2: this kernel %s (%s): attr.build_id "
		    "events would break other tools' perf record; set [record] "
		    "mmap2_on_leaky_kernel = yes to accept that", rep->leak == PROBE_LEAK_YES ?
		    "leaks the build-id flag" : "could not be proven not to leak the build-id "
		    "flag", rep->leak_why);
		return -1;
	}
	*got = BUILDID_USERSPACE;
	snprintf(why, whylen, "this kernel %s (%s): no attr.build_id events, so other "
	    "tools' perf record keeps working", rep->leak == PROBE_LEAK_YES ?
	    "leaks the build-id flag" : "could not be proven not to leak the build-id flag",
	    rep->leak_why);
	return 0;
}

const char *
probe_leak_name(enum probe_leak l)
{
	switch (l) {
	case PROBE_LEAK_NO:
		return "no";
	case PROBE_LEAK_YES:
		return "yes";
	case PROBE_LEAK_NA:
		return "n/a";
	default:
		return "unknown";
	}
}

const char *
probe_mmap3_name(enum probe_mmap3 m)
{
	switch (m) {
	case PROBE_MMAP3_PROVEN:
		return "proven";
	case PROBE_MMAP3_REFUSED:
		return "refused";
	case PROBE_MMAP3_FAILED:
		return "failed";
	default:
		return "not run";
	}
}
