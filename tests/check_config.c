/*
 * check_config.c - unit tests for common/config.c: the key table and its
 * defaults, good and bad files (each bad one must name the file and the
 * right line), reload into a scratch copy, the size and duration syntax,
 * config_dump round trips, and that conf/perfmapd.conf and
 * man/perfmapd.conf.5 list every key of the table.  Run from the top of the
 * tree (the shipped files are opened by relative path).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include <check.h>

#include "check_main.h"

#include "config.h"

#define SHIPPED_CONF	"conf/perfmapd.conf"
#define SHIPPED_MAN	"man/perfmapd.conf.5"

/* Write LEN bytes (or strlen) to a new temporary file; PATH gets its name. */
static void
write_temp(const char *content, size_t len, char *path, size_t pathlen)
{
	int	 fd;

	snprintf(path, pathlen, "/tmp/check_config.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	if (len == (size_t)-1)
		len = strlen(content);
	ck_assert_int_eq(write(fd, content, len), (ssize_t)len);
	close(fd);
}

/* Defaults, then CONTENT on top, as perfmapd does at start-up. */
static int
load_string(const char *content, size_t len, struct config *conf, char *err,
    size_t errlen, char *path, size_t pathlen)
{
	int	 rv;

	config_defaults(conf);
	write_temp(content, len, path, pathlen);
	rv = config_load(conf, path, err, errlen);
	unlink(path);
	return rv;
}

/* What reload does: parse into a scratch copy, swap only on success. */
static int
reload(struct config *live, const char *file, char *err, size_t errlen)
{
	struct config	*scratch;
	int		 rv = -1;

	if ((scratch = malloc(sizeof(*scratch))) == NULL)
		goto out;
	config_defaults(scratch);
	if (config_load(scratch, file, err, errlen) == -1)
		goto out;
	*live = *scratch;
	rv = 0;
 out:
	free(scratch);
	return rv;
}

START_TEST(test_table_sane)
{
	const struct config_key	*k;
	size_t			 i, j;

	ck_assert_uint_gt(config_nkeys, 0);
	for (i = 0; i < config_nkeys; i++) {
		k = &config_keys[i];
		ck_assert_ptr_nonnull(k->section);
		ck_assert_ptr_nonnull(k->name);
		ck_assert_ptr_nonnull(k->defval);
		ck_assert_msg(k->help != NULL && strlen(k->help) > 10,
		    "%s has no help", k->name);
		ck_assert_msg(k->offset + k->size <= sizeof(struct config),
		    "%s outside struct config", k->name);
		if (k->type == CONFIG_ENUM)
			ck_assert_ptr_nonnull(k->names);
		for (j = 0; j < i; j++) {
			/* Unique names, and each section's keys adjacent. */
			ck_assert_msg(strcmp(config_keys[j].name, k->name) != 0,
			    "duplicate key %s", k->name);
			ck_assert_msg(config_keys[j].offset != k->offset,
			    "%s and %s share a field", k->name,
			    config_keys[j].name);
			if (j < i - 1 && strcmp(config_keys[j].section,
			    k->section) == 0)
				ck_assert_msg(strcmp(config_keys[i - 1].section,
				    k->section) == 0,
				    "section [%s] is split", k->section);
		}
	}
}
END_TEST

START_TEST(test_defaults_values)
{
	struct config	 c;
	char		 err[512];

	config_defaults(&c);
	ck_assert_str_eq(c.state_dir, "/var/lib/perfmapd");
	ck_assert_str_eq(c.socket_path, "/run/perfmapd/control.sock");
	ck_assert_str_eq(c.control_group, "perfmapd");
	ck_assert_int_eq(c.readonly_public, 0);
	ck_assert_int_eq(c.event, EVENT_AUTO);
	ck_assert_uint_eq(c.frequency, 99);
	ck_assert_int_eq(c.callchain, 1);
	ck_assert_int_eq(c.buildid_mode, BUILDID_AUTO);
	ck_assert_uint_eq(c.ring_size, 1024 * 1024);
	ck_assert_uint_eq(c.wakeup_size, 0);
	ck_assert_uint_eq(c.drain_interval_ms, 1000);
	ck_assert_uint_eq(c.sb_holdoff_max_ms, 80);
	ck_assert_uint_eq(c.rotate_size, 64ULL << 20);
	ck_assert_uint_eq(c.rotate_age_ms, 10 * 60 * 1000);
	ck_assert_uint_eq(c.keep_size, 1ULL << 30);
	ck_assert_uint_eq(c.keep_count, 0);
	ck_assert_uint_eq(c.keep_age_ms, 7ULL * 24 * 3600 * 1000);
	ck_assert_int_eq(c.segment_mode, SEGMENT_CONTINUOUS);
	ck_assert_uint_eq(c.flight_size, 64ULL << 20);
	ck_assert_uint_eq(c.flight_age_ms, 0);
	ck_assert_int_eq(config_validate(&c, err, sizeof(err)), 0);
}
END_TEST

/* Each field of the defaults is exactly what its table defval parses to. */
START_TEST(test_defaults_equal_table)
{
	struct config		 def, one;
	const struct config_key	*k;
	char			 err[512];
	size_t			 i;

	config_defaults(&def);
	for (i = 0; i < config_nkeys; i++) {
		k = &config_keys[i];
		memset(&one, 0xa5, sizeof(one));
		ck_assert_msg(config_set(&one, k->section, k->name, k->defval,
		    err, sizeof(err)) == 0, "%s: %s", k->name, err);
		ck_assert_msg(memcmp((char *)&one + k->offset,
		    (char *)&def + k->offset, k->size) == 0,
		    "%s differs from its defval", k->name);
	}
}
END_TEST

START_TEST(test_load_good)
{
	static const char good[] =
	    "\xEF\xBB\xBF# a comment\n"
	    "; another comment\n"
	    "[daemon]\n"
	    "state_dir = /srv/perfmapd\r\n"
	    "  socket=/tmp/p.sock\n"
	    "control_group = wheel ; inline comment\n"
	    "public_queries = YES\n"
	    "\n"
	    "[record]\n"
	    "\tevent = cpu-clock\n"
	    "frequency: 4999\n"
	    "callchain = none\n"
	    "buildid_mode = userspace\n"
	    "ring_size = 256KiB\n"
	    "wakeup_size = 64k\n"
	    "drain_interval = 250ms\n"
	    "sideband_holdoff = 320ms\n"
	    "[segments]\n"
	    "rotate_size = 1.5G\n"
	    "rotate_age = 2h\n"
	    "keep_size = 10G\n"
	    "keep_count = 12\n"
	    "keep_age = 30d\n"
	    "mode = flight\n"
	    "flight_size = 8M\n"
	    "flight_age = 30s\n";
	struct config	 c;
	char		 err[512], path[64];

	ck_assert_msg(load_string(good, -1, &c, err, sizeof(err), path,
	    sizeof(path)) == 0, "%s", err);
	ck_assert_str_eq(c.state_dir, "/srv/perfmapd");
	ck_assert_str_eq(c.socket_path, "/tmp/p.sock");
	ck_assert_str_eq(c.control_group, "wheel");
	ck_assert_int_eq(c.readonly_public, 1);
	ck_assert_int_eq(c.event, EVENT_CPU_CLOCK);
	ck_assert_uint_eq(c.frequency, 4999);
	ck_assert_int_eq(c.callchain, 0);
	ck_assert_int_eq(c.buildid_mode, BUILDID_USERSPACE);
	ck_assert_uint_eq(c.ring_size, 256 * 1024);
	ck_assert_uint_eq(c.wakeup_size, 64 * 1024);
	ck_assert_uint_eq(c.drain_interval_ms, 250);
	ck_assert_uint_eq(c.sb_holdoff_max_ms, 320);
	ck_assert_uint_eq(c.rotate_size, 3ULL << 29);
	ck_assert_uint_eq(c.rotate_age_ms, 2 * 3600 * 1000);
	ck_assert_uint_eq(c.keep_size, 10ULL << 30);
	ck_assert_uint_eq(c.keep_count, 12);
	ck_assert_uint_eq(c.keep_age_ms, 30ULL * 86400 * 1000);
	ck_assert_int_eq(c.segment_mode, SEGMENT_FLIGHT);
	ck_assert_uint_eq(c.flight_size, 8ULL << 20);
	ck_assert_uint_eq(c.flight_age_ms, 30 * 1000);
}
END_TEST

START_TEST(test_load_partial)
{
	struct config	 c, def;
	char		 err[512], path[64];

	config_defaults(&def);
	ck_assert_int_eq(load_string("", -1, &c, err, sizeof(err), path,
	    sizeof(path)), 0);
	ck_assert_mem_eq(&c, &def, sizeof(c));

	/* Only the keys given change; the last of duplicates wins. */
	ck_assert_msg(load_string("[record]\nfrequency = 10\nfrequency = 20\n"
	    "[daemon]\n[record]\n", -1, &c, err, sizeof(err), path,
	    sizeof(path)) == 0, "%s", err);
	ck_assert_uint_eq(c.frequency, 20);
	c.frequency = def.frequency;
	ck_assert_mem_eq(&c, &def, sizeof(c));

	/* 198 characters fit on a line (inih's buffer), 199 do not. */
	char	 longline[256];
	memset(longline, 0, sizeof(longline));
	memcpy(longline, "[record]\n#", 10);
	memset(longline + 10, 'x', 197);
	strcat(longline, "\n");
	ck_assert_msg(load_string(longline, -1, &c, err, sizeof(err), path,
	    sizeof(path)) == 0, "%s", err);
	memcpy(longline + 10 + 197, "\r\n", 3);
	ck_assert_msg(load_string(longline, -1, &c, err, sizeof(err), path,
	    sizeof(path)) == 0, "%s", err);
	longline[10 + 197] = '\0';
	ck_assert_msg(load_string(longline, -1, &c, err, sizeof(err), path,
	    sizeof(path)) == 0, "%s", err);
	memcpy(longline + 10 + 197, "x", 2);
	ck_assert_int_eq(load_string(longline, -1, &c, err, sizeof(err), path,
	    sizeof(path)), -1);
	memcpy(longline + 10 + 197, "x\n", 3);
	ck_assert_int_eq(load_string(longline, -1, &c, err, sizeof(err), path,
	    sizeof(path)), -1);
	ck_assert_ptr_nonnull(strstr(err, ":2: line too long (at most 198"));

	/* Booleans. */
	static const char *const yes[] = { "yes", "true", "on", "1", "On" };
	static const char *const no[] = { "no", "false", "off", "0", "NO" };
	size_t	 i;
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(config_set(&c, "daemon", "public_queries",
		    yes[i], err, sizeof(err)), 0);
		ck_assert_int_eq(c.readonly_public, 1);
		ck_assert_int_eq(config_set(&c, "daemon", "public_queries",
		    no[i], err, sizeof(err)), 0);
		ck_assert_int_eq(c.readonly_public, 0);
	}
}
END_TEST

/* A bad file: its content, the line the error must name, a message part. */
struct bad_case {
	const char	*content;
	size_t		 len;		/* -1: strlen */
	int		 line;		/* 0: "FILE: " without a line */
	const char	*msg;
};

static const struct bad_case bad_cases[] = {
	{ "[record]\nfrequency = abc\n", -1, 2,
	    "[record] frequency: \"abc\" is not a number" },
	{ "[daemon]\n\n[record]\nfoo = 1\n", -1, 4,
	    "unknown key \"foo\" in section [record]" },
	{ "[daemon]\nstate_dir = /x\n\n[bogus]\n", -1, 4,
	    "unknown section [bogus]" },
	{ "[record]\n[bogus]\nfrequency = 1\n", -1, 2,
	    "unknown section [bogus]" },
	{ "[record]\nfrequency = -1\n", -1, 2, "negative" },
	{ "[record]\nfrequency = 0\n", -1, 2, "out of range (1..100000)" },
	{ "[record]\nfrequency = 100001\n", -1, 2, "out of range" },
	{ "[record]\nfrequency = 4294967296\n", -1, 2, "too large" },
	{ "[record]\nfrequency = 18446744073709551616\n", -1, 2, "too large" },
	{ "[record]\nfrequency =\n", -1, 2, "frequency: value is empty" },
	{ "[record]\nfrequency = 99x\n", -1, 2, "is not a number" },
	{ "[record]\nfrequency = 9 9\n", -1, 2, "is not a number" },
	{ "[record]\nfrequency = 99 # no\n", -1, 2, "is not a number" },
	{ "[record]\nring_size = 64Mx\n", -1, 2, "\"64Mx\" is not a size" },
	{ "[record]\nring_size = 3M\n", -1, 2, "3M is not a power of two" },
	{ "[record]\nring_size = 4K\n", -1, 2, "4K is out of range (8K..1G)" },
	{ "[record]\nring_size = 2G\n", -1, 2, "out of range" },
	{ "[record]\nsideband_holdoff = 4ms\n", -1, 2, "out of range" },
	{ "[record]\nsideband_holdoff = 2s\n", -1, 2, "out of range" },
	/* a duration with no maximum of its own: 100 years (nanoseconds from now) */
	{ "[index]\nretention = 200000d\n", -1, 2, "200000d is out of range (0..36500d)" },
	{ "[segments]\nflight_age = 36501d\n", -1, 2, "out of range" },
	{ "[segments] keep_size = 50G\n", -1, 1, "text after [segments]" },
	{ "[record]\nring_size = 18446744073709551616\n", -1, 2, "too large" },
	{ "[segments]\nkeep_size = 18446744073709551615K\n", -1, 2,
	    "too large" },
	{ "[record]\nring_size = -1M\n", -1, 2, "negative" },
	{ "[record]\nring_size =\n", -1, 2, "value is empty" },
	{ "[record]\nring_size = 0.1K\n", -1, 2, "not a whole number of bytes" },
	{ "[record]\nring_size = K\n", -1, 2, "is not a size" },
	{ "[segments]\nrotate_age = 10x\n", -1, 2, "is not a duration" },
	{ "[segments]\nmode = overwrite\n", -1, 2, "overwrite" },
	{ "[segments]\nflight_size = 512K\n", -1, 2, "out of range" },
	{ "[segments]\nflight_size = 65G\n", -1, 2, "out of range" },
	{ "[segments]\nrotate_age = 10M\n", -1, 2, "is not a duration" },
	{ "[segments]\nrotate_age = 1.5ms\n", -1, 2, "milliseconds" },
	{ "[segments]\nrotate_age = -5m\n", -1, 2, "negative" },
	{ "[segments]\nrotate_age = 213503982335d\n", -1, 2, "too large" },
	{ "[record]\ndrain_interval = 1ms\n", -1, 2, "out of range (10ms..1h)" },
	{ "[segments]\nkeep_count = 1.5\n", -1, 2, "is not a number" },
	{ "[segments]\nkeep_count = 1K\n", -1, 2, "is not a number" },
	{ "[record]\nevent = foo\n", -1, 2,
	    "\"foo\" is not one of auto, cycles, cpu-clock" },
	{ "[record]\ncallchain = dwarf\n", -1, 2, "is not one of none, fp" },
	{ "[record]\nbuildid_mode = mmap4\n", -1, 2, "is not one of" },
	{ "[daemon]\npublic_queries = maybe\n", -1, 2, "is not a boolean" },
	{ "[daemon]\nstate_dir = relative/dir\n", -1, 2,
	    "is not an absolute path" },
	{ "[daemon]\nstate_dir =\n", -1, 2, "value is empty" },
	{ "[daemon]\ncontrol_group = a b\n", -1, 2, "is not a valid name" },
	{ "[daemon]\ncontrol_group = -x\n", -1, 2, "is not a valid name" },
	{ "[daemon]\nsocket = /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
	    -1, 2, "too long (at most 107 characters)" },
	/* A dumped "state_dir = ..." must fit on a line. */
	{ "[daemon]\nstate_dir=/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "a\n", -1, 2, "too long (at most 186 characters)" },
	{ "frequency = 99\n", -1, 1, "\"frequency\" is not in a [section]" },
	{ "[record]\nfrequency 99\n", -1, 2, "syntax error" },
	{ "[record\nfrequency = 99\n", -1, 1, "syntax error" },
	{ "[record]\n# ok\n\n#ok\nfrequency = 99\n"
	    "frequency = xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "\n", -1, 6, "line too long" },
	{ "[record]\nfrequency = 9\0009\n", 25, 2, "NUL byte" },
	{ "[record]\nfrequency = 9\0339\r9\n", -1, 2, "\"9?9?9\" is not" },
	/* Only the first error is reported. */
	{ "[record]\nfrequency = x\nfoo = 1\n[bogus]\n", -1, 2,
	    "frequency: \"x\" is not a number" },
	{ "[record]\nnot a key\nfrequency = x\n", -1, 2, "syntax error" },
	/* Cross-field errors blame the later of the keys set. */
	{ "[record]\nwakeup_size = 1M\n", -1, 2,
	    "wakeup_size (1M) must be less than ring_size (1M)" },
	{ "[record]\nring_size = 64K\n\n[record]\nwakeup_size = 32K\n"
	    "ring_size = 16K\n", -1, 6, "must be less than ring_size (16K)" },
	{ "[segments]\nkeep_size = 32M\n", -1, 2,
	    "rotate_size (64M) must be less than keep_size (32M)" },
	{ "[segments]\nkeep_age = 1m\nrotate_age = 5m\n", -1, 3,
	    "rotate_age (5m) must be less than keep_age (1m)" },
};

START_TEST(test_load_bad)
{
	const struct bad_case	*bc = &bad_cases[_i];
	struct config		 c;
	char			 err[512], path[64], prefix[128];

	ck_assert_msg(load_string(bc->content, bc->len, &c, err, sizeof(err),
	    path, sizeof(path)) == -1, "case %d loaded", _i);
	if (bc->line > 0)
		snprintf(prefix, sizeof(prefix), "%s:%d: ", path, bc->line);
	else
		snprintf(prefix, sizeof(prefix), "%s: ", path);
	ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0,
	    "case %d: \"%s\" does not start with \"%s\"", _i, err, prefix);
	ck_assert_msg(strstr(err, bc->msg) != NULL,
	    "case %d: \"%s\" does not contain \"%s\"", _i, err, bc->msg);
	ck_assert_msg(strchr(err, '\n') == NULL, "case %d: two lines", _i);
}
END_TEST

START_TEST(test_load_unreadable)
{
	struct config	 c;
	char		 err[512], path[64], want[128];

	config_defaults(&c);
	ck_assert_int_eq(config_load(&c, "/nonexistent/perfmapd.conf", err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "/nonexistent/perfmapd.conf: "
	    "No such file or directory");

	ck_assert_int_eq(config_load(&c, "/tmp", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "/tmp: Is a directory");

	/* Root reads anything: drop to nobody (we run in a forked child). */
	write_temp("[record]\n", -1, path, sizeof(path));
	ck_assert_int_eq(chmod(path, 0), 0);
	if (geteuid() == 0) {
		/* Nobody's own file, so that nobody may unlink it. */
		ck_assert_int_eq(chown(path, 65534, 65534), 0);
		ck_assert_int_eq(setuid(65534), 0);
	}
	ck_assert_int_eq(config_load(&c, path, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: Permission denied", path);
	ck_assert_str_eq(err, want);

	/* A tiny or missing error buffer is not a crash. */
	ck_assert_int_eq(config_load(&c, path, err, 4), -1);
	ck_assert_str_eq(err, "/tm");
	ck_assert_int_eq(config_load(&c, path, NULL, 0), -1);
	unlink(path);
}
END_TEST

/* A bad reload leaves the live configuration as it was. */
START_TEST(test_reload_keeps_old)
{
	struct config	 live, saved;
	char		 err[512], good[64], bad[64];

	write_temp("[record]\nfrequency = 500\n", -1, good, sizeof(good));
	write_temp("[record]\nfrequency = 1000\nring_size = 3M\n", -1, bad,
	    sizeof(bad));

	config_defaults(&live);
	ck_assert_int_eq(reload(&live, good, err, sizeof(err)), 0);
	ck_assert_uint_eq(live.frequency, 500);
	saved = live;
	ck_assert_int_eq(reload(&live, bad, err, sizeof(err)), -1);
	ck_assert_mem_eq(&live, &saved, sizeof(live));
	ck_assert_ptr_nonnull(strstr(err, ":3: "));

	/* config_load on a copy: the copy may change, the original not. */
	struct config	 copy = live;
	ck_assert_int_eq(config_load(&copy, bad, err, sizeof(err)), -1);
	ck_assert_mem_eq(&live, &saved, sizeof(live));

	/* Reload starts from the defaults: keys removed go back to them. */
	unlink(bad);
	write_temp("[record]\n", -1, bad, sizeof(bad));
	ck_assert_int_eq(reload(&live, bad, err, sizeof(err)), 0);
	ck_assert_uint_eq(live.frequency, 99);
	unlink(good);
	unlink(bad);
}
END_TEST

START_TEST(test_set_errors_leave_conf)
{
	struct config	 c, before;
	char		 err[512];

	config_defaults(&c);
	before = c;
	ck_assert_int_eq(config_set(&c, "record", "frequency", "abc", err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "[record] frequency: \"abc\" is not a number");
	ck_assert_int_eq(config_set(&c, "record", "ring_size", "3M", err,
	    sizeof(err)), -1);
	ck_assert_int_eq(config_set(&c, "daemon", "state_dir", "x", err,
	    sizeof(err)), -1);
	ck_assert_int_eq(config_set(&c, "nope", "x", "1", err, sizeof(err)),
	    -1);
	ck_assert_str_eq(err, "unknown section [nope]");
	ck_assert_mem_eq(&c, &before, sizeof(c));

	/* Strings are zero-filled so that structs compare with memcmp. */
	ck_assert_int_eq(config_set(&c, "daemon", "state_dir", "/a", err,
	    sizeof(err)), 0);
	ck_assert_int_eq(c.state_dir[5], 0);
	ck_assert_int_eq(c.state_dir[sizeof(c.state_dir) - 1], 0);

	/* Via config_set (never from a file): " ;" would not load back. */
	ck_assert_int_eq(config_set(&c, "daemon", "state_dir", "/a ;b", err,
	    sizeof(err)), -1);
	ck_assert_int_eq(config_set(&c, "daemon", "state_dir", "/a\nb", err,
	    sizeof(err)), -1);
}
END_TEST

START_TEST(test_validate)
{
	struct config	 c;
	char		 err[512];

	config_defaults(&c);
	c.ring_size = 3 << 20;
	ck_assert_int_eq(config_validate(&c, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "[record] ring_size: 3M is not a power of two");

	config_defaults(&c);
	c.ring_size = 4096;
	ck_assert_int_eq(config_validate(&c, err, sizeof(err)), -1);

	config_defaults(&c);
	c.event = (enum event_kind)7;
	ck_assert_int_eq(config_validate(&c, err, sizeof(err)), -1);
	config_defaults(&c);
	c.callchain = -1;
	ck_assert_int_eq(config_validate(&c, err, sizeof(err)), -1);
	config_defaults(&c);
	c.readonly_public = 2;
	ck_assert_int_eq(config_validate(&c, err, sizeof(err)), -1);
	config_defaults(&c);
	memset(c.control_group, 'a', sizeof(c.control_group));
	ck_assert_int_eq(config_validate(&c, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "too long"));
	config_defaults(&c);
	c.frequency = 0;
	ck_assert_int_eq(config_validate(&c, err, sizeof(err)), -1);
	config_defaults(&c);
	c.wakeup_size = c.ring_size / 2;
	ck_assert_int_eq(config_validate(&c, err, sizeof(err)), 0);
	c.rotate_size = 0;		/* 0 = off: no ordering */
	c.keep_size = 1;
	ck_assert_int_eq(config_validate(&c, err, sizeof(err)), 0);
}
END_TEST

struct size_case {
	const char	*s;
	int		 rv;		/* 0 or the errno */
	uint64_t	 v;
};

START_TEST(test_parse_size)
{
	static const struct size_case cases[] = {
		{ "0", 0, 0 }, { "512", 0, 512 }, { "512B", 0, 512 },
		{ "512b", 0, 512 }, { "1K", 0, 1024 }, { "1k", 0, 1024 },
		{ "1KB", 0, 1024 }, { "1KiB", 0, 1024 }, { "1kib", 0, 1024 },
		{ "64M", 0, 64ULL << 20 }, { "1G", 0, 1ULL << 30 },
		{ "1T", 0, 1ULL << 40 }, { "1 M", 0, 1ULL << 20 },
		{ "1.5G", 0, 3ULL << 29 }, { "1.5K", 0, 1536 },
		{ "0.5", EDOM, 0 }, { "2.0", 0, 2 }, { "0.1K", EDOM, 0 },
		{ "1.0000000000000000000000K", 0, 1024 },
		{ "1.0000000000000000000001K", EDOM, 0 },
		{ "1.0000000000000000000001X", EINVAL, 0 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551616", ERANGE, 0 },
		{ "99999999999999999999999999", ERANGE, 0 },
		{ "17179869184G", ERANGE, 0 }, { "16777216T", ERANGE, 0 },
		{ "16777215T", 0, 16777215ULL << 40 },
		{ "-1", EINVAL, 0 }, { "+1", EINVAL, 0 }, { "", EINVAL, 0 },
		{ " 1", EINVAL, 0 }, { "1.K", EINVAL, 0 }, { ".5K", EINVAL, 0 },
		{ "1e3", EINVAL, 0 }, { "0x10", EINVAL, 0 }, { "64Mx", EINVAL, 0 },
		{ "1P", EINVAL, 0 }, { "1KK", EINVAL, 0 }, { "1Bi", EINVAL, 0 },
		{ "1 ", EINVAL, 0 }, { "K", EINVAL, 0 }, { "1KiBB", EINVAL, 0 },
	};
	uint64_t	 v;
	size_t		 i;
	int		 rv;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = 12345;
		errno = 0;
		rv = config_parse_size(cases[i].s, &v);
		if (cases[i].rv == 0) {
			ck_assert_msg(rv == 0, "\"%s\" refused", cases[i].s);
			ck_assert_msg(v == cases[i].v, "\"%s\" gave %" PRIu64,
			    cases[i].s, v);
		} else {
			ck_assert_msg(rv == -1 && errno == cases[i].rv,
			    "\"%s\": rv %d errno %d", cases[i].s, rv, errno);
			ck_assert_msg(v == 12345, "\"%s\" wrote", cases[i].s);
		}
	}
}
END_TEST

START_TEST(test_parse_duration)
{
	static const struct size_case cases[] = {
		{ "0", 0, 0 }, { "0ms", 0, 0 }, { "500ms", 0, 500 },
		{ "10", 0, 10000 }, { "10s", 0, 10000 }, { "10m", 0, 600000 },
		{ "2h", 0, 7200000 }, { "7d", 0, 604800000 },
		{ "1.5s", 0, 1500 }, { "0.5m", 0, 30000 }, { "1.5", 0, 1500 },
		{ "1.5ms", EDOM, 0 }, { "0.0001s", EDOM, 0 },
		{ "10M", EINVAL, 0 }, { "10S", EINVAL, 0 }, { "10x", EINVAL, 0 },
		{ "10 s", 0, 10000 }, { "1h30m", EINVAL, 0 },
		{ "-1", EINVAL, 0 }, { "", EINVAL, 0 }, { "ms", EINVAL, 0 },
		{ "213503982334d", 0, 213503982334ULL * 86400000 },
		{ "213503982335d", ERANGE, 0 },
		{ "18446744073709551616ms", ERANGE, 0 },
	};
	uint64_t	 v;
	size_t		 i;
	int		 rv;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = 12345;
		errno = 0;
		rv = config_parse_duration(cases[i].s, &v);
		if (cases[i].rv == 0) {
			ck_assert_msg(rv == 0, "\"%s\" refused", cases[i].s);
			ck_assert_msg(v == cases[i].v, "\"%s\" gave %" PRIu64,
			    cases[i].s, v);
		} else {
			ck_assert_msg(rv == -1 && errno == cases[i].rv,
			    "\"%s\": rv %d errno %d", cases[i].s, rv, errno);
		}
	}
}
END_TEST

START_TEST(test_format)
{
	static const struct {
		uint64_t	 v;
		const char	*s;
	} sizes[] = {
		{ 0, "0" }, { 1, "1" }, { 512, "512" }, { 1000, "1000" },
		{ 1023, "1023" }, { 1024, "1K" }, { 1025, "1025" },
		{ 1152, "1.125K" }, { 1536, "1.5K" }, { 64ULL << 20, "64M" },
		{ 1310720, "1.25M" }, { 1ULL << 30, "1G" },
		{ 3ULL << 29, "1.5G" }, { 1ULL << 40, "1T" },
		{ 1ULL << 50, "1024T" },
		{ UINT64_MAX, "18446744073709551615" },
	}, durations[] = {
		{ 0, "0" }, { 1, "1ms" }, { 1000, "1s" }, { 1500, "1500ms" },
		{ 60000, "1m" }, { 90000, "90s" }, { 3600000, "1h" },
		{ 86400000, "1d" }, { 7 * 86400000ULL, "7d" },
		{ 25 * 3600000ULL, "25h" },
	};
	char		 buf[32];
	uint64_t	 v, back;
	size_t		 i;
	unsigned	 seed = 1;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		config_format_size(sizes[i].v, buf, sizeof(buf));
		ck_assert_str_eq(buf, sizes[i].s);
	}
	for (i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		config_format_duration(durations[i].v, buf, sizeof(buf));
		ck_assert_str_eq(buf, durations[i].s);
	}
	/* Truncation is not an overflow. */
	config_format_size(3ULL << 29, buf, 3);
	ck_assert_str_eq(buf, "1.");

	/* Whatever is printed parses back to the same value. */
	for (i = 0; i < 50000; i++) {
		v = ((uint64_t)rand_r(&seed) << 33) ^ ((uint64_t)rand_r(&seed)
		    << 2) ^ (uint64_t)rand_r(&seed);
		v >>= rand_r(&seed) % 64;
		if (i % 3 == 0)
			v &= ~((UINT64_C(1) << (rand_r(&seed) % 40)) - 1);
		config_format_size(v, buf, sizeof(buf));
		ck_assert_msg(config_parse_size(buf, &back) == 0 && back == v,
		    "size %" PRIu64 " -> %s", v, buf);
		config_format_duration(v, buf, sizeof(buf));
		ck_assert_msg(config_parse_duration(buf, &back) == 0 &&
		    back == v, "duration %" PRIu64 " -> %s", v, buf);
	}
}
END_TEST

/* Dump to a file and load it over the defaults: the same struct. */
static void
check_round_trip(const struct config *c)
{
	struct config	 back;
	char		 err[512], path[64];
	FILE		*fp;
	int		 fd;

	snprintf(path, sizeof(path), "/tmp/check_config.XXXXXX");
	ck_assert_int_ge(fd = mkstemp(path), 0);
	ck_assert_ptr_nonnull(fp = fdopen(fd, "w"));
	config_dump(c, fp);
	fclose(fp);
	config_defaults(&back);
	ck_assert_msg(config_load(&back, path, err, sizeof(err)) == 0, "%s",
	    err);
	unlink(path);
	ck_assert_mem_eq(&back, c, sizeof(back));
}

START_TEST(test_dump_round_trip)
{
	struct config	 c;
	char		 err[512], *buf = NULL;
	size_t		 len = 0, i;
	FILE		*fp;

	config_defaults(&c);
	check_round_trip(&c);

	/* The defaults print as the table writes them, in table order. */
	ck_assert_ptr_nonnull(fp = open_memstream(&buf, &len));
	config_dump(&c, fp);
	fclose(fp);
	ck_assert(strncmp(buf, "[daemon]\nstate_dir = /var/lib/perfmapd\n",
	    39) == 0);
	for (i = 0; i < config_nkeys; i++) {
		char	 line[256];

		snprintf(line, sizeof(line), "\n%s = %s\n", config_keys[i].name,
		    config_keys[i].defval);
		ck_assert_msg(strstr(buf, line) != NULL, "no \"%s\" in dump",
		    line + 1);
	}
	free(buf);

	/* Every key away from its default. */
	static const char *const set[][3] = {
		{ "daemon", "state_dir", "/srv/a b/ü" },
		{ "daemon", "socket", "/run/x;y#z" },
		{ "daemon", "control_group", "wheel.x_y-z" },
		{ "daemon", "public_queries", "on" },
		{ "record", "event", "CYCLES" },
		{ "record", "frequency", "100000" },
		{ "record", "callchain", "none" },
		{ "record", "buildid_mode", "mmap2" },
		{ "record", "ring_size", "1G" },
		{ "record", "wakeup_size", "1073741823" },
		{ "record", "drain_interval", "1.001s" },
		{ "segments", "rotate_size", "18446744073709551615" },
		{ "segments", "rotate_age", "0" },
		{ "segments", "keep_size", "0" },
		{ "segments", "keep_count", "18446744073709551615" },
		{ "segments", "keep_age", "36500d" },	/* the most a duration may be */
	};
	config_defaults(&c);
	for (i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		ck_assert_msg(config_set(&c, set[i][0], set[i][1], set[i][2],
		    err, sizeof(err)) == 0, "%s: %s", set[i][1], err);
	ck_assert_msg(config_validate(&c, err, sizeof(err)) == 0, "%s", err);
	check_round_trip(&c);
}
END_TEST

/* conf/perfmapd.conf: "#key = default" for every key, in its section. */
START_TEST(test_shipped_conf)
{
	struct config	 def, c;
	char		 section[64] = "", *line = NULL, *eq, err[512];
	const struct config_key *k;
	size_t		 linesz = 0, i, len;
	int		*seen;
	FILE		*fp;

	fp = fopen(SHIPPED_CONF, "r");
	ck_assert_msg(fp != NULL, "%s: %s (run from the top of the tree)",
	    SHIPPED_CONF, strerror(errno));
	ck_assert_ptr_nonnull(seen = calloc(config_nkeys, sizeof(*seen)));
	while (getline(&line, &linesz, fp) != -1) {
		line[strcspn(line, "\n")] = '\0';
		len = strlen(line);
		if (line[0] == '[' && len > 2 && line[len - 1] == ']') {
			snprintf(section, sizeof(section), "%.*s",
			    (int)(len - 2), line + 1);
			continue;
		}
		if (line[0] != '#' || (eq = strstr(line, " = ")) == NULL ||
		    strchr(line + 1, ' ') != eq)
			continue;
		*eq = '\0';
		for (i = 0; i < config_nkeys; i++)
			if (strcmp(config_keys[i].name, line + 1) == 0)
				break;
		if (i == config_nkeys)
			continue;	/* "#e.g. = ..." in a comment */
		k = &config_keys[i];
		ck_assert_msg(strcmp(k->section, section) == 0,
		    "%s is under [%s], not [%s]", k->name, section, k->section);
		ck_assert_msg(strcmp(eq + 3, k->defval) == 0,
		    "#%s = %s, but the default is %s", k->name, eq + 3,
		    k->defval);
		seen[i]++;
	}
	for (i = 0; i < config_nkeys; i++)
		ck_assert_msg(seen[i] == 1, "%s appears %d times in %s",
		    config_keys[i].name, seen[i], SHIPPED_CONF);
	free(seen);
	free(line);
	fclose(fp);

	config_defaults(&def);
	config_defaults(&c);
	ck_assert_msg(config_load(&c, SHIPPED_CONF, err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert_mem_eq(&c, &def, sizeof(c));
}
END_TEST

/* man/perfmapd.conf.5 documents every key (".It Cm key ...") and section. */
START_TEST(test_man_page)
{
	char	*text = NULL, want[128];
	size_t	 len = 0, i;
	FILE	*fp, *mem;
	int	 ch;

	fp = fopen(SHIPPED_MAN, "r");
	ck_assert_msg(fp != NULL, "%s: %s", SHIPPED_MAN, strerror(errno));
	ck_assert_ptr_nonnull(mem = open_memstream(&text, &len));
	while ((ch = fgetc(fp)) != EOF)
		fputc(ch, mem);
	fclose(mem);
	fclose(fp);
	for (i = 0; i < config_nkeys; i++) {
		snprintf(want, sizeof(want), "\n.It Cm %s ",
		    config_keys[i].name);
		ck_assert_msg(strstr(text, want) != NULL, "%s: no \"%s\"",
		    SHIPPED_MAN, want + 1);
		snprintf(want, sizeof(want), "\n.Ss \\&[%s]\\&\n",
		    config_keys[i].section);
		ck_assert_msg(strstr(text, want) != NULL, "%s: no \"%s\"",
		    SHIPPED_MAN, want + 1);
	}
	free(text);
}
END_TEST

static Suite *
config_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("config");

	tc = tcase_create("table");
	tcase_add_test(tc, test_table_sane);
	tcase_add_test(tc, test_defaults_values);
	tcase_add_test(tc, test_defaults_equal_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("load");
	tcase_add_test(tc, test_load_good);
	tcase_add_test(tc, test_load_partial);
	tcase_add_loop_test(tc, test_load_bad, 0,
	    sizeof(bad_cases) / sizeof(bad_cases[0]));
	tcase_add_test(tc, test_load_unreadable);
	tcase_add_test(tc, test_reload_keeps_old);
	tcase_add_test(tc, test_set_errors_leave_conf);
	tcase_add_test(tc, test_validate);
	suite_add_tcase(s, tc);

	tc = tcase_create("syntax");
	tcase_add_test(tc, test_parse_size);
	tcase_add_test(tc, test_parse_duration);
	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_dump_round_trip);
	suite_add_tcase(s, tc);

	tc = tcase_create("shipped");
	tcase_add_test(tc, test_shipped_conf);
	tcase_add_test(tc, test_man_page);
	suite_add_tcase(s, tc);

	return s;
}

CHECK_MAIN(config_suite)
