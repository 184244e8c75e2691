/*
 * commands.c - perfmapctl's command table: for each command, how its
 * arguments become parameters and how a reply is printed for people.
 * It mirrors the daemon's table (daemon/ctl.c); --json prints replies as
 * they come.
 */
#include <stdio.h>
#include <string.h>

#include "client.h"

static json_t *
parse_none(int argc, char **argv, char *err, size_t errlen)
{
	if (argc > 0) {
		snprintf(err, errlen, "unexpected argument \"%s\"", argv[0]);
		return NULL;
	}
	return json_object();
}

static const char *
str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "-";
}

static long long
num(json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

static void
print_ping(json_t *p, FILE *f)
{
	fprintf(f, "pong (perfmapd %s)\n", str(p, "version"));
}

static void
print_status(json_t *p, FILE *f)
{
	json_t	*c = json_object_get(p, "counters"), *s = json_object_get(p, "segment");
	json_t	*d = json_object_get(p, "disk");
	long long up = num(p, "uptime_s");

	client_print_kv(f, "version", "%s (pid %lld)", str(p, "version"), num(p, "pid"));
	client_print_kv(f, "started", "%s (up %lldd %02lld:%02lld:%02lld)", str(p, "started"),
	    up / 86400, up / 3600 % 24, up / 60 % 60, up % 60);
	client_print_kv(f, "recording", "%s at %lld Hz on %lld CPUs%s", str(p, "event"),
	    num(p, "frequency"), num(p, "cpus"),
	    json_is_true(json_object_get(p, "callchain")) ? ", call chains" : "");
	client_print_kv(f, "build-id mode", "%s", str(p, "buildid_mode"));
	client_print_kv(f, "state", "%s", str(p, "state_dir"));
	if (json_is_object(s)) {
		client_print_kv(f, "segment", "%s", str(s, "path"));
		fprintf(f, "%-18s since %s, %lld samples, ", "", str(s, "started"), num(s, "samples"));
		client_print_size(f, num(s, "bytes"));
		fputc('\n', f);
	} else
		client_print_kv(f, "segment", "none (see the log)");
	client_print_kv(f, "samples", "%lld", num(c, "samples"));
	client_print_kv(f, "records", "%lld (%lld mmaps)", num(c, "records"), num(c, "mmaps"));
	client_print_kv(f, "build-ids", "%lld from the kernel, %lld read by perfmapd, %lld "
	    "without", num(c, "mmaps_kernel_buildid"), num(c, "mmaps_user_buildid"),
	    num(c, "mmaps_no_buildid"));
	client_print_kv(f, "lost", "%lld records, %lld samples", num(c, "lost"),
	    num(c, "lost_samples"));
	if (num(c, "write_errors") > 0 || num(c, "bad_records") > 0)
		client_print_kv(f, "errors", "%lld write errors, %lld malformed records",
		    num(c, "write_errors"), num(c, "bad_records"));
	fprintf(f, "%-18s %lld segments, ", "disk", num(d, "segments"));
	client_print_size(f, num(d, "segments_bytes"));
	fputc('\n', f);
	client_print_kv(f, "processes", "%lld (%lld executable maps)",
	    num(p, "model_processes"), num(p, "model_maps"));
}

static void
print_snapshot(json_t *p, FILE *f)
{
	fprintf(f, "%s\n", str(p, "path"));
}

static void
print_reload(json_t *p, FILE *f)
{
	fprintf(f, "configuration reloaded from %s\n", str(p, "config"));
}

static void
print_stop(json_t *p, FILE *f)
{
	fprintf(f, "perfmapd is stopping\n");
}

const struct client_cmd client_cmds[] = {
	{ "status", "io.perfmap.Status", "status",
	    "mode, event, current segment, counters, disk use, uptime",
	    parse_none, print_status },
	{ "snapshot", "io.perfmap.Snapshot", "snapshot",
	    "close the current segment now and print its path", parse_none, print_snapshot },
	{ "reload", "io.perfmap.Reload", "reload",
	    "re-read the configuration file (a bad one is refused)", parse_none, print_reload },
	{ "stop", "io.perfmap.Stop", "stop",
	    "finish the current segment and stop the daemon", parse_none, print_stop },
	{ "ping", "io.perfmap.Ping", "ping", "check that the daemon answers",
	    parse_none, print_ping },
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
