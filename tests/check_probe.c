/*
 * check_probe.c - unit tests for daemon/record/probe.c: what the start-up
 * probes conclude from what a kernel did (probe_judge), on records built
 * here the way each kind of kernel writes them: a leaky one, a fixed one,
 * one without attr.build_id, one that accepts the mmap3 bit and emits
 * nothing, the wrong record type, the wrong layout, the wrong build-id or
 * the wrong file; and the policy (probe_choose_mode) for every mode.  One
 * test runs the real probe on this machine's kernel.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "check_main.h"

#include "record/probe.h"

#define PROBE_NAME	"/memfd:perfmapd-probe (deleted)"
#define PROBE_ADDR	0x7f0000001000ULL

static const uint8_t probe_id[BUILD_ID_MAX] = {
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa,
	0xbb, 0xcc, 0xdd, 0xee, 0xf0, 0x01, 0x02, 0x03, 0x04, 0x05,
};

static struct probe_obs *
obs_new(int mmap3)
{
	struct probe_obs *o = calloc(1, sizeof(*o));
	struct probe_target *t;

	ck_assert_ptr_nonnull(o);
	t = &o->target;
	t->pid = 4242;
	t->tid = 4243;
	t->addr = PROBE_ADDR;
	t->len = 4096;
	t->maj = 0;
	t->min = 1;
	t->ino = 987654;
	memcpy(t->build_id, probe_id, sizeof(probe_id));
	t->build_id_size = BUILD_ID_MAX;
	o->mmap3_tried = mmap3;
	return o;
}

static size_t
name_pad(const char *name)
{
	return (strlen(name) + 1 + 7) & ~(size_t)7;
}

/* Append an MMAP2 record of the target to R: the plain form, or the build-id one. */
enum form { PLAIN, PLAIN_FLAGGED, WITH_ID, WITH_OTHER_ID };

static void
put_mmap2(struct probe_ring *r, const struct probe_target *t, uint64_t addr, enum form f)
{
	struct mmap2_record *m = (struct mmap2_record *)(r->data + r->len);
	size_t	 size = sizeof(*m) + name_pad(PROBE_NAME);

	ck_assert_uint_le(r->len + size, sizeof(r->data));
	memset(m, 0, size);
	m->header.type = PERF_RECORD_MMAP2;
	m->header.misc = PERF_RECORD_MISC_USER;
	m->header.size = (uint16_t)size;
	m->pid = t->pid;
	m->tid = t->tid;
	m->addr = addr;
	m->len = t->len;
	if (f == PLAIN || f == PLAIN_FLAGGED) {
		m->maj = t->maj;
		m->min = t->min;
		m->ino = t->ino;
		if (f == PLAIN_FLAGGED)
			m->header.misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	} else {
		m->header.misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		m->build_id_size = BUILD_ID_MAX;
		memcpy(m->build_id, t->build_id, BUILD_ID_MAX);
		if (f == WITH_OTHER_ID)
			m->build_id[3] ^= 0xff;
	}
	m->prot = 5;
	m->flags = 2;
	strcpy(m->filename, PROBE_NAME);
	r->len += size;
}

/* Append an MMAP3 record of the target; EXTRA bytes of layout error. */
static struct mmap3_record *
put_mmap3(struct probe_ring *r, const struct probe_target *t, uint32_t type, size_t extra)
{
	struct mmap3_record *m = (struct mmap3_record *)(r->data + r->len);
	size_t	 size = sizeof(*m) + name_pad(PROBE_NAME) + extra;

	ck_assert_uint_le(r->len + size, sizeof(r->data));
	memset(m, 0, size);
	m->header.type = (uint16_t)type;
	m->header.misc = PERF_RECORD_MISC_USER;
	m->header.size = (uint16_t)size;
	m->pid = t->pid;
	m->tid = t->tid;
	m->addr = t->addr;
	m->len = t->len;
	m->maj = t->maj;
	m->min = t->min;
	m->ino = t->ino;
	m->prot = 5;
	m->flags = 2;
	m->build_id_size = (uint8_t)t->build_id_size;
	memcpy(m->build_id, t->build_id, (size_t)t->build_id_size);
	strcpy(m->filename, PROBE_NAME);
	r->len += size;
	return m;
}

static void
judge(const struct probe_obs *o, struct probe_report *rep)
{
	probe_judge(o, rep);
	/* Every answer comes with a reason. */
	ck_assert_uint_gt(strlen(rep->leak_why), 0);
	ck_assert_uint_gt(strlen(rep->mmap3_why), 0);
}

/* The leak probe */

enum { NONE = -1 };

/* What each ring holds (a form, or NONE), and what that must mean. */
struct leak_case {
	int		 old, bid, new;
	int		 bid_open_err;
	enum probe_leak	 want;
	int		 foreign;
	const char	*says;
};

static const struct leak_case leak_cases[] = {
	/* newest first: plain_new, with_id, then plain_old gets the flag */
	{ PLAIN_FLAGGED, WITH_ID, PLAIN, 0, PROBE_LEAK_YES, 0, "carried" },
	/* a kernel that reports oldest first leaks into the newer plain event */
	{ PLAIN, WITH_ID, PLAIN_FLAGGED, 0, PROBE_LEAK_YES, 0, "carried" },
	/* both flagged: another tool's build-id event came before ours */
	{ PLAIN_FLAGGED, WITH_ID, PLAIN_FLAGGED, 0, PROBE_LEAK_YES, 1, "another tool" },
	{ PLAIN, WITH_ID, PLAIN, 0, PROBE_LEAK_NO, 0, "kept maj/min/ino" },
	/* clean plain records prove nothing when there was no build-id to leak */
	{ PLAIN, PLAIN, PLAIN, 0, PROBE_LEAK_UNKNOWN, 0, "did not read" },
	{ PLAIN, WITH_OTHER_ID, PLAIN, 0, PROBE_LEAK_UNKNOWN, 0, "not the one written" },
	{ NONE, NONE, NONE, 0, PROBE_LEAK_UNKNOWN, 0, "no MMAP2 record" },
	{ PLAIN, WITH_ID, NONE, 0, PROBE_LEAK_UNKNOWN, 0, "no MMAP2 record" },
	{ PLAIN, NONE, PLAIN, -EINVAL, PROBE_LEAK_NA, 0, "no attr.build_id" },
	{ PLAIN, NONE, PLAIN, -EMFILE, PROBE_LEAK_UNKNOWN, 0, "Too many open files" },
};

START_TEST(test_leak)
{
	const struct leak_case *c = &leak_cases[_i];
	struct probe_obs *o = obs_new(0);
	struct probe_report rep;

	if (c->old != NONE)
		put_mmap2(&o->plain_old, &o->target, PROBE_ADDR, c->old);
	if (c->bid != NONE)
		put_mmap2(&o->with_id, &o->target, PROBE_ADDR, c->bid);
	if (c->new != NONE)
		put_mmap2(&o->plain_new, &o->target, PROBE_ADDR, c->new);
	o->with_id.open_err = c->bid_open_err;
	judge(o, &rep);
	ck_assert_msg(rep.leak == c->want, "case %d: %s (%s)", _i, probe_leak_name(rep.leak),
	    rep.leak_why);
	ck_assert_int_eq(rep.foreign, c->foreign);
	ck_assert_msg(strstr(rep.leak_why, c->says) != NULL, "case %d: %s", _i, rep.leak_why);
	ck_assert_int_eq(rep.mmap3, PROBE_MMAP3_NOT_RUN);
	free(o);
}
END_TEST

/* A flagged record of another mapping is not ours: it proves nothing. */
START_TEST(test_leak_other_mapping_ignored)
{
	struct probe_obs *o = obs_new(0);
	struct probe_report rep;

	put_mmap2(&o->plain_old, &o->target, PROBE_ADDR + 0x10000, PLAIN_FLAGGED);
	put_mmap2(&o->plain_old, &o->target, PROBE_ADDR, PLAIN);
	put_mmap2(&o->with_id, &o->target, PROBE_ADDR, WITH_ID);
	put_mmap2(&o->plain_new, &o->target, PROBE_ADDR, PLAIN);
	judge(o, &rep);
	ck_assert_int_eq(rep.leak, PROBE_LEAK_NO);
	free(o);
}
END_TEST

/* A record whose size disagrees with its name is not read. */
START_TEST(test_leak_torn_record)
{
	struct probe_obs *o = obs_new(0);
	struct probe_report rep;
	struct mmap2_record *m;

	put_mmap2(&o->plain_old, &o->target, PROBE_ADDR, PLAIN_FLAGGED);
	m = (struct mmap2_record *)o->plain_old.data;
	m->header.size += 8;			/* past what was written */
	put_mmap2(&o->with_id, &o->target, PROBE_ADDR, WITH_ID);
	put_mmap2(&o->plain_new, &o->target, PROBE_ADDR, PLAIN);
	judge(o, &rep);
	ck_assert_int_eq(rep.leak, PROBE_LEAK_UNKNOWN);
	free(o);
}
END_TEST

START_TEST(test_leak_no_file)
{
	struct probe_obs *o = obs_new(1);
	struct probe_report rep;

	o->target.err = -EPERM;
	o->target.step = "mmap";
	judge(o, &rep);
	ck_assert_int_eq(rep.leak, PROBE_LEAK_UNKNOWN);
	ck_assert_ptr_nonnull(strstr(rep.leak_why, "mmap"));
	ck_assert_int_eq(rep.mmap3, PROBE_MMAP3_FAILED);
	ck_assert_int_eq(rep.denied, 0);
	free(o);
}
END_TEST

/* The mmap3 proof */

/* What a kernel that accepts (or refuses) the bit did. */
enum mmap3_kernel {
	K_EMITS,	/* the MMAP3 record of our mapping, as kernel-patch/ writes it */
	K_REFUSES,	/* EINVAL */
	K_SILENT,	/* accepts the bit, sends nothing */
	K_MMAP2,	/* the bit means something else: MMAP2 as usual */
	K_STRAY,	/* MMAP3, and a record of another type */
	K_MMAP2_LAYOUT,	/* the MMAP3 type number over MMAP2's build-id layout */
	K_TRAILING,	/* 8 bytes more than the layout */
	K_WRONG_ID,
	K_NO_ID,
	K_WRONG_FILE,
	K_OVERFLOW,
};

static const struct mmap3_case {
	enum mmap3_kernel k;
	enum probe_mmap3 want;
	const char	*says;
} mmap3_cases[] = {
	{ K_EMITS, PROBE_MMAP3_PROVEN, "carried the probe file's build-id" },
	{ K_REFUSES, PROBE_MMAP3_REFUSED, "refuses" },
	{ K_SILENT, PROBE_MMAP3_FAILED, "no MMAP3 record" },
	{ K_MMAP2, PROBE_MMAP3_FAILED, "type 10" },
	{ K_STRAY, PROBE_MMAP3_FAILED, "was expected" },
	{ K_MMAP2_LAYOUT, PROBE_MMAP3_FAILED, "another layout" },
	{ K_TRAILING, PROBE_MMAP3_FAILED, "another layout" },
	{ K_WRONG_ID, PROBE_MMAP3_FAILED, "carries build-id" },
	{ K_NO_ID, PROBE_MMAP3_FAILED, "no build-id" },
	{ K_WRONG_FILE, PROBE_MMAP3_FAILED, "names file" },
	{ K_OVERFLOW, PROBE_MMAP3_FAILED, "overflowed" },
};

START_TEST(test_mmap3)
{
	const struct mmap3_case *c = &mmap3_cases[_i];
	struct probe_obs *o = obs_new(1);
	struct probe_ring *r = &o->mmap3;
	struct probe_report rep;
	struct mmap3_record *m = NULL;

	switch (c->k) {
	case K_EMITS:
	case K_WRONG_ID:
	case K_NO_ID:
	case K_WRONG_FILE:
		m = put_mmap3(r, &o->target, PERF_RECORD_MMAP3, 0);
		break;
	case K_REFUSES:
		r->open_err = -EINVAL;
		break;
	case K_SILENT:
		break;
	case K_MMAP2:
		put_mmap2(r, &o->target, PROBE_ADDR, PLAIN);
		break;
	case K_STRAY:
		put_mmap3(r, &o->target, PERF_RECORD_MMAP3, 0);
		put_mmap3(r, &o->target, PERF_RECORD_MMAP3 + 1, 0);
		break;
	case K_MMAP2_LAYOUT:
		put_mmap2(r, &o->target, PROBE_ADDR, WITH_ID);
		((struct perf_event_header *)r->data)->type = PERF_RECORD_MMAP3;
		break;
	case K_TRAILING:
		put_mmap3(r, &o->target, PERF_RECORD_MMAP3, 8);
		break;
	case K_OVERFLOW:
		r->overflow = 1;
		break;
	}
	if (c->k == K_WRONG_ID)
		m->build_id[19] ^= 1;
	if (c->k == K_NO_ID) {
		m->build_id_size = 0;
		memset(m->build_id, 0, sizeof(m->build_id));
	}
	if (c->k == K_WRONG_FILE)
		m->ino++;
	judge(o, &rep);
	ck_assert_msg(rep.mmap3 == c->want, "case %d: %s (%s)", _i, probe_mmap3_name(rep.mmap3),
	    rep.mmap3_why);
	ck_assert_msg(strstr(rep.mmap3_why, c->says) != NULL, "case %d: %s", _i, rep.mmap3_why);
	free(o);
}
END_TEST

START_TEST(test_denied)
{
	struct probe_obs *o = obs_new(1);
	struct probe_report rep;
	enum buildid_mode got;
	char	 why[512], err[512];

	o->plain_old.open_err = o->with_id.open_err = o->plain_new.open_err =
	    o->mmap3.open_err = -EACCES;
	judge(o, &rep);
	ck_assert_int_eq(rep.denied, -EACCES);
	ck_assert_int_eq(probe_choose_mode(BUILDID_AUTO, 0, &rep, &got, why, sizeof(why),
	    err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "perf_event_paranoid"));
	free(o);
}
END_TEST

/* The policy */

struct policy_case {
	enum buildid_mode want;
	int		 accept;
	enum probe_leak	 leak;
	enum probe_mmap3 mmap3;
	int		 rc;
	enum buildid_mode got;
	const char	*says;		/* in WHY (rc 0) or ERR (rc -1) */
};

static const struct policy_case policy_cases[] = {
	/* auto: proven mmap3 first, whatever the leak */
	{ BUILDID_AUTO, 0, PROBE_LEAK_YES, PROBE_MMAP3_PROVEN, 0, BUILDID_MMAP3, "proven" },
	/* auto on a leaky kernel: userspace by default, mmap2 if accepted */
	{ BUILDID_AUTO, 0, PROBE_LEAK_YES, PROBE_MMAP3_REFUSED, 0, BUILDID_USERSPACE, "leaks" },
	{ BUILDID_AUTO, 1, PROBE_LEAK_YES, PROBE_MMAP3_REFUSED, 0, BUILDID_MMAP2,
	  "mmap2_on_leaky_kernel = yes" },
	/* a bit accepted without proof is never mmap3 */
	{ BUILDID_AUTO, 0, PROBE_LEAK_NO, PROBE_MMAP3_FAILED, 0, BUILDID_MMAP2, "does not leak" },
	{ BUILDID_AUTO, 0, PROBE_LEAK_UNKNOWN, PROBE_MMAP3_FAILED, 0, BUILDID_USERSPACE,
	  "could not be proven" },
	{ BUILDID_AUTO, 1, PROBE_LEAK_UNKNOWN, PROBE_MMAP3_REFUSED, 0, BUILDID_MMAP2,
	  "could not be proven" },
	{ BUILDID_AUTO, 0, PROBE_LEAK_NA, PROBE_MMAP3_REFUSED, 0, BUILDID_USERSPACE,
	  "no attr.build_id" },
	{ BUILDID_AUTO, 1, PROBE_LEAK_NA, PROBE_MMAP3_REFUSED, 0, BUILDID_USERSPACE,
	  "no attr.build_id" },
	/* mmap3 asked for: proof or nothing */
	{ BUILDID_MMAP3, 0, PROBE_LEAK_NO, PROBE_MMAP3_PROVEN, 0, BUILDID_MMAP3, "proven" },
	{ BUILDID_MMAP3, 1, PROBE_LEAK_NO, PROBE_MMAP3_FAILED, -1, 0, "not proven" },
	{ BUILDID_MMAP3, 1, PROBE_LEAK_NO, PROBE_MMAP3_REFUSED, -1, 0, "kernel-patch" },
	/* mmap2 asked for */
	{ BUILDID_MMAP2, 0, PROBE_LEAK_NO, PROBE_MMAP3_NOT_RUN, 0, BUILDID_MMAP2, "does not leak" },
	{ BUILDID_MMAP2, 0, PROBE_LEAK_YES, PROBE_MMAP3_NOT_RUN, -1, 0,
	  "mmap2_on_leaky_kernel = yes" },
	{ BUILDID_MMAP2, 0, PROBE_LEAK_UNKNOWN, PROBE_MMAP3_NOT_RUN, -1, 0,
	  "mmap2_on_leaky_kernel" },
	{ BUILDID_MMAP2, 1, PROBE_LEAK_YES, PROBE_MMAP3_NOT_RUN, 0, BUILDID_MMAP2, "accepted" },
	{ BUILDID_MMAP2, 1, PROBE_LEAK_NA, PROBE_MMAP3_NOT_RUN, -1, 0, "5.12" },
	/* userspace is never overridden */
	{ BUILDID_USERSPACE, 1, PROBE_LEAK_NO, PROBE_MMAP3_PROVEN, 0, BUILDID_USERSPACE,
	  "userspace" },
};

START_TEST(test_policy)
{
	const struct policy_case *c = &policy_cases[_i];
	struct probe_report rep;
	enum buildid_mode got = (enum buildid_mode)-1;
	char	 why[512] = "", err[512] = "";
	int	 rc;

	memset(&rep, 0, sizeof(rep));
	rep.leak = c->leak;
	rep.mmap3 = c->mmap3;
	snprintf(rep.leak_why, sizeof(rep.leak_why), "%s", c->leak == PROBE_LEAK_NA ?
	    "no attr.build_id in this kernel" : "leak probe said so");
	snprintf(rep.mmap3_why, sizeof(rep.mmap3_why), "mmap3 probe said so");
	rc = probe_choose_mode(c->want, c->accept, &rep, &got, why, sizeof(why), err,
	    sizeof(err));
	ck_assert_msg(rc == c->rc, "case %d: rc %d (%s%s)", _i, rc, why, err);
	if (rc == 0) {
		ck_assert_msg(got == c->got, "case %d: mode %d, want %d", _i, got, c->got);
		ck_assert_msg(strstr(why, c->says) != NULL, "case %d: \"%s\"", _i, why);
	} else
		ck_assert_msg(strstr(err, c->says) != NULL, "case %d: \"%s\"", _i, err);
}
END_TEST

/*
 * The real probe on this machine's kernel gives a definite answer, with
 * the probe file in a memfd and in the state directory (the service's
 * system call filter refuses memfd_create).
 */
START_TEST(test_real_kernel)
{
	struct probe_report rep;
	char	 dir[] = "/tmp/check_probe.XXXXXX";
	unsigned flags = PROBE_MMAP3 | (_i ? PROBE_TMPFILE : 0);

	if (geteuid() != 0) {
		fprintf(stderr, "test_real_kernel: not root, the real probe is left to "
		    "t_coexist\n");
		return;
	}
	ck_assert_ptr_nonnull(mkdtemp(dir));
	probe_all(&rep, dir, flags);
	ck_assert_msg(rmdir(dir) == 0, "the probe left a file in the state directory");
	ck_assert_int_eq(rep.denied, 0);
	ck_assert_msg(rep.leak != PROBE_LEAK_UNKNOWN, "leak probe: %s", rep.leak_why);
	ck_assert_msg(rep.mmap3 != PROBE_MMAP3_NOT_RUN, "%s", rep.mmap3_why);
	ck_assert_uint_lt(rep.duration_us, 1000000);
}
END_TEST

static Suite *
probe_suite(void)
{
	Suite	*s = suite_create("probe");
	TCase	*tc;

	tc = tcase_create("leak");
	tcase_add_loop_test(tc, test_leak, 0, sizeof(leak_cases) / sizeof(leak_cases[0]));
	tcase_add_test(tc, test_leak_other_mapping_ignored);
	tcase_add_test(tc, test_leak_torn_record);
	tcase_add_test(tc, test_leak_no_file);
	suite_add_tcase(s, tc);

	tc = tcase_create("mmap3");
	tcase_add_loop_test(tc, test_mmap3, 0, sizeof(mmap3_cases) / sizeof(mmap3_cases[0]));
	tcase_add_test(tc, test_denied);
	suite_add_tcase(s, tc);

	tc = tcase_create("policy");
	tcase_add_loop_test(tc, test_policy, 0, sizeof(policy_cases) / sizeof(policy_cases[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("kernel");
	tcase_add_loop_test(tc, test_real_kernel, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(probe_suite)
