/*
 * commands.c - perfmapctl's command table: for each command, how its
 * arguments become parameters and how a reply is printed for people.
 * It mirrors the daemon's table (daemon/ctl.c); --json prints replies as
 * they come.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "walltime.h"

static json_t *
parse_none(int argc, char **argv, char *err, size_t errlen)
{
	if (argc > 0) {
		snprintf(err, errlen, "unexpected argument \"%s\"", argv[0]);
		return NULL;
	}
	return json_object();
}


static void
print_ping(json_t *p, FILE *f)
{
	fprintf(f, "pong (perfmapd %s)\n", client_str(p, "version"));
}

/* "unknown   3 gone, 1 timeout": the causes with a count, if any. */
static void
print_unknown(FILE *f, json_t *causes)
{
	const char *k;
	json_t	*v;
	int	 n = 0;

	json_object_foreach(causes, k, v) {
		if (json_integer_value(v) == 0)
			continue;
		if (n++ == 0)
			fprintf(f, "%-18s ", "  unknown, why");
		else
			fputs(", ", f);
		fprintf(f, "%lld %s", (long long)json_integer_value(v), k);
	}
	if (n > 0)
		fputc('\n', f);
}

/* Why the mode, what the probes saw, and the perf limits shared with other users. */
static void
print_neighbours(json_t *p, FILE *f)
{
	json_t	*pr = json_object_get(p, "probes"), *l = json_object_get(p, "perf_limits");

	if (json_is_string(json_object_get(p, "buildid_mode_reason")))
		client_print_kv(f, "", "%s", client_str(p, "buildid_mode_reason"));
	if (json_is_object(pr)) {
		client_print_kv(f, "leak probe", "%s: %s", client_str(pr, "leak"),
		    client_str(pr, "leak_detail"));
		client_print_kv(f, "mmap3 probe", "%s: %s", client_str(pr, "mmap3"),
		    client_str(pr, "mmap3_detail"));
	}
	if (!json_is_object(l))
		return;
	client_print_kv(f, "sample rate cap", "%lld Hz (%lld at start, lowest %lld, %lld drops)",
	    client_num(l, "max_sample_rate"), client_num(l, "max_sample_rate_at_start"),
	    client_num(l, "max_sample_rate_lowest"), client_num(l, "max_sample_rate_drops"));
	client_print_kv(f, "locked rings", "%lld kB: %lld kB of root's %lld kB allowance "
	    "(%lld kB left), %lld kB beyond it", client_num(l, "rings_kb"),
	    client_num(l, "rings_charged_kb"), client_num(l, "mlock_allowance_kb"),
	    client_num(l, "mlock_left_kb"), client_num(l, "rings_pinned_kb"));
	client_print_kv(f, "PMU counters", "%lld per CPU", client_num(l, "hw_counters_per_cpu"));
}

static void
print_status(json_t *p, FILE *f)
{
	json_t	*c = json_object_get(p, "counters"), *s = json_object_get(p, "segment");
	json_t	*d = json_object_get(p, "disk"), *fl;
	long long up = client_num(p, "uptime_s");

	client_print_kv(f, "version", "%s (pid %lld)", client_str(p, "version"), client_num(p, "pid"));
	client_print_kv(f, "started", "%s (up %lldd %02lld:%02lld:%02lld)", client_str(p, "started"),
	    up / 86400, up / 3600 % 24, up / 60 % 60, up % 60);
	client_print_kv(f, "recording", "%s at %lld Hz on %lld CPUs%s", client_str(p, "event"),
	    client_num(p, "frequency"), client_num(p, "cpus"),
	    json_is_true(json_object_get(p, "callchain")) ? ", call chains" : "");
	client_print_kv(f, "build-id mode", "%s", client_str(p, "buildid_mode"));
	print_neighbours(p, f);
	client_print_kv(f, "state", "%s", client_str(p, "state_dir"));
	if (json_is_object(s)) {
		client_print_kv(f, "segment", "%s", client_str(s, "path"));
		fprintf(f, "%-18s since %s, %lld samples, ", "", client_str(s, "started"), client_num(s, "samples"));
		client_print_size(f, client_num(s, "bytes"));
		fputc('\n', f);
	} else if (json_is_object(fl = json_object_get(p, "flight"))) {
		client_print_kv(f, "segment", "none: flight recorder, a segment on snapshot");
		fprintf(f, "%-18s ", "flight buffer");
		client_print_size(f, client_num(fl, "bytes"));
		fputs(" of ", f);
		client_print_size(f, client_num(fl, "size"));
		fprintf(f, ", %lld records since %s\n", client_num(fl, "records"),
		    client_str(fl, "window_start"));
		fprintf(f, "%-18s %lld records dropped (space or age), %lld too big, %lld states "
		    "of ended processes\n", "", client_num(fl, "dropped_records"),
		    client_num(fl, "too_big"), client_num(fl, "states"));
	} else
		client_print_kv(f, "segment", "none (see the log)");
	client_print_kv(f, "samples", "%lld", client_num(c, "samples"));
	client_print_kv(f, "records", "%lld (%lld mmaps)", client_num(c, "records"), client_num(c, "mmaps"));
	client_print_kv(f, "build-ids", "%lld from the kernel, %lld read by perfmapd, %lld "
	    "unknown", client_num(c, "mmaps_kernel_buildid"), client_num(c, "mmaps_user_buildid"),
	    client_num(c, "mmaps_no_buildid"));
	print_unknown(f, json_object_get(c, "buildid_unknown"));
	if (json_is_object(json_object_get(p, "buildid_reads"))) {
		json_t *b = json_object_get(p, "buildid_reads");

		client_print_kv(f, "build-id reads", "%lld requests (%lld timed out), %lld files "
		    "read, %lld from the cache; %lld proven by %lld files held open",
		    client_num(b, "requests"), client_num(b, "timeouts"), client_num(b, "reads"),
		    client_num(b, "cache_hits"), client_num(b, "pinned"), client_num(b, "pins"));
	}
	client_print_kv(f, "lost", "%lld records, %lld samples", client_num(c, "lost"),
	    client_num(c, "lost_samples"));
	if (client_num(c, "write_errors") > 0 || client_num(c, "bad_records") > 0)
		client_print_kv(f, "errors", "%lld write errors, %lld malformed records",
		    client_num(c, "write_errors"), client_num(c, "bad_records"));
	fprintf(f, "%-18s %lld segments, ", "disk", client_num(d, "segments"));
	client_print_size(f, client_num(d, "segments_bytes"));
	fputc('\n', f);
	if (json_is_string(json_object_get(d, "error")))
		client_print_kv(f, "DISK TROUBLE", "%s: %lld records dropped, %lld segments "
		    "deleted to make room", client_str(d, "error"), client_num(d, "records_dropped"),
		    client_num(d, "segments_deleted_for_space"));
	else if (client_num(d, "segments_deleted_for_space") > 0)
		client_print_kv(f, "disk was full", "%lld records dropped, %lld segments deleted "
		    "to make room", client_num(d, "records_dropped"), client_num(d, "segments_deleted_for_space"));
	if (client_num(d, "segments_unfinished") > 0)
		client_print_kv(f, "unfinished", "%lld segments could not be closed (.partial files, "
		    "repaired at the stop or the next start)", client_num(d, "segments_unfinished"));
	if (json_is_object(json_object_get(p, "cache"))) {
		json_t *k = json_object_get(p, "cache");

		fprintf(f, "%-18s %lld entries, ", "cache", client_num(k, "entries"));
		client_print_size(f, client_num(k, "bytes"));
		fprintf(f, "; %lld captured, %lld failed, %lld missed (left for store)\n",
		    client_num(k, "captured"), client_num(k, "failed"), client_num(k, "missed"));
		if (client_num(k, "refused_full") > 0 || client_num(k, "refused_quota") > 0)
			client_print_kv(f, "cache refused", "%lld copies (no room under max_size), "
			    "%lld (a user's share used)", client_num(k, "refused_full"),
			    client_num(k, "refused_quota"));
		if (client_num(k, "jit_unwatched") > 0)
			client_print_kv(f, "jit unwatched", "%lld processes with JIT code (their "
			    "share of the watches, or the queue, was full): maps not kept",
			    client_num(k, "jit_unwatched"));
		if (client_num(k, "jit_unkept") > 0)
			client_print_kv(f, "jit unkept", "%lld JIT processes exited with no room "
			    "in the capture queue: maps not kept", client_num(k, "jit_unkept"));
	}
	if (json_is_object(json_object_get(p, "index"))) {
		json_t *x = json_object_get(p, "index");

		client_print_kv(f, "index", "%lld objects, %lld mappings without build-id%s",
		    client_num(x, "objects"), client_num(x, "unresolved"),
		    client_num(x, "errors") > 0 ? " (write errors: see the log)" : "");
	}
	client_print_kv(f, "processes", "%lld (%lld executable maps%s)",
	    client_num(p, "model_processes"), client_num(p, "model_maps"),
	    client_num(p, "model_maps_shed") > 0 ? "; some shed: see model_maps_shed" : "");
	if (json_is_object(json_object_get(p, "memory"))) {
		json_t *m = json_object_get(p, "memory");

		fprintf(f, "%-18s ", "memory");
		client_print_size(f, client_num(m, "heap_in_use"));
		fputs(" in use (SQLite ", f);
		client_print_size(f, client_num(m, "sqlite"));
		fputs("), ", f);
		client_print_size(f, client_num(m, "heap_from_system"));
		fputs(" of heap from the system\n", f);
	}
}

static void	print_store(json_t *, FILE *);
static int	finish_store(json_t *, int);

static json_t *
parse_snapshot(int argc, char **argv, char *err, size_t errlen)
{
	if (argc == 1 && strcmp(argv[0], "--store") == 0)
		return json_pack("{s:b}", "store", 1);
	return parse_none(argc, argv, err, errlen);
}

/* The closed segment's path; with --store, the store's lines follow. */
static void
print_snapshot(json_t *p, FILE *f)
{
	if (json_object_get(p, "buildids") != NULL && json_object_get(p, "path") != NULL &&
	    json_object_get(p, "status") == NULL)
		fprintf(f, "%s\n", client_str(p, "path"));
	else
		print_store(p, f);
}

static int
finish_snapshot(json_t *p, int rc)
{
	return json_object_get(p, "failed") != NULL ? finish_store(p, rc) : rc;
}

static void
print_reload(json_t *p, FILE *f)
{
	json_t	*v, *later = json_object_get(p, "restart");
	size_t	 i;

	fprintf(f, "configuration reloaded from %s\n", client_str(p, "config"));
	if (json_array_size(later) == 0)
		return;
	fprintf(f, "at the next start (the running values stay until then):");
	json_array_foreach(later, i, v)
		fprintf(f, "%s %s", i > 0 ? "," : "", json_is_string(v) ? json_string_value(v) : "?");
	fprintf(f, "\n");
}

static void
print_stop(json_t *p, FILE *f)
{
	fprintf(f, "perfmapd is stopping\n");
}

/*
 * store and export name segments by file name or path; a relative path is
 * made absolute here, since the daemon resolves paths from its own cwd.
 */
static int
add_segment(json_t *segs, const char *arg, char *err, size_t errlen)
{
	char	 real[PATH_MAX];

	if (strchr(arg, '/') != NULL && realpath(arg, real) != NULL)
		arg = real;
	else if (strchr(arg, '/') != NULL && arg[0] != '/') {
		snprintf(err, errlen, "%s: %s", arg, strerror(errno));
		return -1;
	}
	/* not dropped: without it, the others (or every segment) would be stored */
	if (json_array_append_new(segs, json_string(arg)) < 0) {
		snprintf(err, errlen, "%s: not UTF-8: no segment has such a name", arg);
		return -1;
	}
	return 0;
}

static char	 export_out[PATH_MAX];	/* -o FILE of export */
static char	*export_how;		/* its instructions, printed once it is written */

/*
 * Segments, --since TIME; store adds --all and --debuginfod, export -o FILE
 * and --all-binaries.
 */
static json_t *
parse_segments(int argc, char **argv, int export, char *err, size_t errlen)
{
	json_t	*p = json_object(), *segs = json_array();
	int	 i;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--since") == 0 || strncmp(a, "--since=", 8) == 0) {
			const char *v = a[7] == '=' ? a + 8 : (i + 1 < argc ? argv[++i] : NULL);

			char	 at[48];
			int64_t	 ns;

			if (v == NULL || *v == '\0') {
				snprintf(err, errlen, "--since needs a TIME");
				goto fail;
			}
			/*
			 * Read here, in the user's time zone and clock (the daemon's
			 * may differ), and sent as the instant it names; said here,
			 * too: the daemon's error names the parameter only.
			 */
			if (walltime_parse(v, walltime_now(), &ns, err, errlen) < 0)
				goto fail;
			snprintf(at, sizeof(at), "@%lld.%09lld", (long long)(ns / 1000000000),
			    (long long)(ns % 1000000000));
			json_object_set_new(p, "since", json_string(at));
		} else if (!export && strcmp(a, "--all") == 0)
			json_object_set_new(p, "all", json_true());
		else if (!export && strcmp(a, "--debuginfod") == 0)
			json_object_set_new(p, "debuginfod", json_true());
		else if (export && strcmp(a, "--all-binaries") == 0)
			json_object_set_new(p, "all_binaries", json_true());
		else if (export && (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)) {
			if (i + 1 >= argc || argv[i + 1][0] == '\0') {
				snprintf(err, errlen, "%s needs a FILE", a);
				goto fail;
			}
			snprintf(export_out, sizeof(export_out), "%s", argv[++i]);
			json_object_set_new(p, "name", json_string(export_out));
		} else if (a[0] == '-' && a[1] != '\0') {
			snprintf(err, errlen, "unknown option \"%s\"", a);
			goto fail;
		} else if (add_segment(segs, a, err, errlen) < 0)
			goto fail;
	}
	if (json_array_size(segs) > 0)
		json_object_set(p, "segments", segs);
	json_decref(segs);
	if (export && export_out[0] == '\0') {
		snprintf(err, errlen, "-o FILE is required");
		json_decref(p);
		return NULL;
	}
	if (!export && json_object_size(p) == 0) {
		snprintf(err, errlen, "name segments, or use --since TIME or --all");
		json_decref(p);
		return NULL;
	}
	return p;
fail:
	json_decref(segs);
	json_decref(p);
	return NULL;
}

static json_t *
parse_store(int argc, char **argv, char *err, size_t errlen)
{
	return parse_segments(argc, argv, 0, err, errlen);
}

static json_t *
parse_export(int argc, char **argv, char *err, size_t errlen)
{
	return parse_segments(argc, argv, 1, err, errlen);
}

/* One line per build-id, as perf buildid-list --store would; then a summary. */
static void
print_store(json_t *p, FILE *f)
{
	const char *status = json_string_value(json_object_get(p, "status"));

	if (status != NULL && strcmp(status, "OK") == 0)
		fprintf(f, "OK %s %s\n", client_text(p, "buildid"), client_text(p, "path"));
	else if (status != NULL)
		fprintf(f, "FAIL %s %s: %s\n", client_text(p, "buildid"), client_text(p, "path"),
		    client_text(p, "reason"));
	else
		fprintf(f, "%lld build-ids in %lld segments: %lld stored (%lld new), "
		    "%lld failed; cache %s\n", client_num(p, "buildids"), client_num(p, "segments"),
		    client_num(p, "ok"), client_num(p, "added"), client_num(p, "failed"), client_str(p, "cache"));
}

static int
finish_store(json_t *p, int rc)
{
	if (rc == EXIT_OK && client_num(p, "failed") > 0) {
		fprintf(stderr, "perfmapctl: store: %lld build-ids could not be stored\n",
		    client_num(p, "failed"));
		return EXIT_FAILED;
	}
	return rc;
}

static void
print_export(json_t *p, FILE *f)
{
	const char *status = json_string_value(json_object_get(p, "status"));

	if (status != NULL)		/* a build-id that could not be packed */
		fprintf(f, "FAIL %s %s: %s\n", client_text(p, "buildid"), client_text(p, "path"),
		    client_text(p, "reason"));
	else {
		fprintf(f, "%s: %lld segments, %lld binaries (%lld missing", export_out,
		    client_num(p, "segments"), client_num(p, "buildids"), client_num(p, "missing"));
		if (client_num(p, "withheld") > 0)
			fprintf(f, ", %lld only root may export", client_num(p, "withheld"));
		fputs("), ", f);
		client_print_size(f, client_num(p, "bytes"));
		fputc('\n', f);
		/* as perf archive says it, once the file is there (finish_export) */
		if (json_is_string(json_object_get(p, "instructions")))
			export_how = strdup(client_str(p, "instructions"));
	}
}

/* Copy the daemon's file (STATE/exports/...) to -o FILE. */
static int
finish_export(json_t *p, int rc)
{
	const char *src = json_string_value(json_object_get(p, "path"));
	char	 tmp[PATH_MAX];
	int	 in, out;

	if (rc != EXIT_OK || src == NULL)
		return rc;
	if ((in = open(src, O_RDONLY | O_CLOEXEC)) == -1) {
		fprintf(stderr, "perfmapctl: export: %s: %s (the export stays there)\n", src,
		    strerror(errno));
		return EXIT_FAILED;
	}
	/* the owner's only (the bundle may hold the kernel's symbol addresses), whole or not at all */
	if ((out = client_open_temp(export_out, tmp, sizeof(tmp))) == -1) {
		fprintf(stderr, "perfmapctl: export: %s: %s (the export is at %s)\n",
		    export_out, strerror(errno), src);
		close(in);
		return EXIT_FAILED;
	}
	if (client_copy_fd(in, out) < 0 || close(out) == -1 || rename(tmp, export_out) == -1) {
		fprintf(stderr, "perfmapctl: export: writing %s: %s (the export is at %s)\n",
		    export_out, strerror(errno), src);
		unlink(tmp);
		close(in);
		return EXIT_FAILED;
	}
	close(in);
	if (export_how != NULL)
		printf("\n%s\n", export_how);
	free(export_how);
	export_how = NULL;
	/* as store: a bundle short of binaries is written, and said, not a success */
	if (client_num(p, "missing") > 0) {
		fprintf(stderr, "perfmapctl: export: %lld binaries could not be packed "
		    "(%s holds the rest)\n", client_num(p, "missing"), export_out);
		return EXIT_FAILED;
	}
	return rc;
}

const struct client_cmd client_cmds[] = {
	{ "status", "io.perfmap.Status", "status",
	    "mode, event, current segment, counters, disk use, uptime",
	    parse_none, print_status, NULL, 0 },
	{ "snapshot", "io.perfmap.Snapshot", "snapshot [--store]",
	    "close the current segment now and print its path; --store also stores its binaries",
	    parse_snapshot, print_snapshot, finish_snapshot, 0 },
	{ "store", "io.perfmap.Store",
	    "store [SEGMENT... | --since TIME | --all] [--debuginfod]",
	    "put every binary the segments reference into the build-id cache",
	    parse_store, print_store, finish_store, 1 },
	{ "export", "io.perfmap.Export",
	    "export [--since TIME | SEGMENT...] [--all-binaries] -o FILE",
	    "segments and the binaries their samples hit, as perf archive --all bundles them",
	    parse_export, print_export, finish_export, 1 },
	{ "profile", "io.perfmap.Profile",
	    "profile [--since TIME] [--until TIME] [--pid PID] [--comm NAME] "
	    "[--format perf|pprof|folded|svg] -o FILE",
	    "a profile of a time window (default: the last 10 minutes) as perf.data, pprof, "
	    "folded stacks or an SVG flame graph",
	    profile_parse, profile_print, profile_finish, 1 },
	{ "segments", "io.perfmap.Segments", "segments [SEGMENT] [--all]",
	    "list segments (time range, size, samples, lost); with SEGMENT, the build-ids it references",
	    query_parse_segments, query_print_segments, NULL, 0 },
	{ "lookup", "io.perfmap.Lookup", "lookup PATH [--at TIME] [--all-namespaces]",
	    "the build-id PATH had at TIME (default: now)", query_parse_lookup, query_print_lookup, NULL, 0 },
	{ "history", "io.perfmap.History", "history PATH [--all-namespaces]",
	    "every build-id PATH has had, with first/last seen and process counts",
	    query_parse_history, query_print_history, NULL, 0 },
	{ "buildid", "io.perfmap.BuildId", "buildid ID",
	    "where and when a build-id was seen, and its cached file",
	    query_parse_buildid, query_print_buildid, NULL, 0 },
	{ "reload", "io.perfmap.Reload", "reload",
	    "re-read the configuration file (a bad one is refused)", parse_none, print_reload,
	    NULL, 0 },
	{ "stop", "io.perfmap.Stop", "stop",
	    "finish the current segment and stop the daemon", parse_none, print_stop, NULL, 0 },
	{ "ping", "io.perfmap.Ping", "ping", "check that the daemon answers",
	    parse_none, print_ping, NULL, 0 },
};
const size_t client_ncmds = sizeof(client_cmds) / sizeof(client_cmds[0]);

const struct client_cmd *
client_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < client_ncmds; i++)
		if (strcmp(client_cmds[i].name, name) == 0)
			return &client_cmds[i];
	return NULL;
}
