/*
 * queries.c - perfmapctl's index queries: lookup, history, buildid,
 * segments.  Arguments become parameters (dates are parsed here, in the
 * user's time zone), replies become tables.  The same printers serve the
 * daemon's replies and --state-dir (no daemon).
 */
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "walltime.h"


/* PATH [--at TIME] */
json_t *
query_parse_lookup(int argc, char **argv, char *err, size_t errlen)
{
	const char *path = NULL;
	int64_t	 at = -1;
	int	 i;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--at") == 0) {
			if (++i >= argc) {
				snprintf(err, errlen, "--at needs a TIME");
				return NULL;
			}
			if (walltime_parse(argv[i], walltime_now(), &at, err, errlen) < 0)
				return NULL;
		} else if (path == NULL && argv[i][0] != '-')
			path = argv[i];
		else {
			snprintf(err, errlen, "unexpected argument \"%s\"", argv[i]);
			return NULL;
		}
	}
	if (path == NULL) {
		snprintf(err, errlen, "a PATH is needed");
		return NULL;
	}
	return at >= 0 ? json_pack("{s:s, s:I}", "path", path, "at_ns", (json_int_t)at) :
	    json_pack("{s:s}", "path", path);
}

/* One ARG, under KEY. */
static json_t *
parse_one(int argc, char **argv, const char *key, const char *what, char *err,
    size_t errlen)
{
	if (argc != 1 || argv[0][0] == '-') {
		snprintf(err, errlen, argc == 0 ? "a %s is needed" : "one %s, no options", what);
		return NULL;
	}
	return json_pack("{s:s}", key, argv[0]);
}

json_t *
query_parse_history(int argc, char **argv, char *err, size_t errlen)
{
	return parse_one(argc, argv, "path", "PATH", err, errlen);
}

json_t *
query_parse_buildid(int argc, char **argv, char *err, size_t errlen)
{
	return parse_one(argc, argv, "build_id", "build-id", err, errlen);
}

/* [SEGMENT] [--all] */
json_t *
query_parse_segments(int argc, char **argv, char *err, size_t errlen)
{
	json_t	*p = json_object();
	int	 i;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--all") == 0)
			json_object_set_new(p, "all", json_true());
		else if (argv[i][0] != '-' && json_object_get(p, "segment") == NULL)
			json_object_set_new(p, "segment", json_string(argv[i]));
		else {
			snprintf(err, errlen, "unexpected argument \"%s\"", argv[i]);
			json_decref(p);
			return NULL;
		}
	}
	return p;
}

static void
print_object_line(json_t *o, FILE *f)
{
	fprintf(f, "%-40s  %-24s  %-24s  %5lld %5lld  %s\n", client_str(o, "build_id"),
	    client_str(o, "first_seen"), client_str(o, "last_seen"), client_num(o, "nr_maps"), client_num(o, "nr_procs"),
	    client_str(o, "source"));
}

static void
object_header(FILE *f)
{
	fprintf(f, "%-40s  %-24s  %-24s  %5s %5s  %s\n", "BUILD-ID", "FIRST SEEN",
	    "LAST SEEN", "MAPS", "PROCS", "SOURCE");
}

void
query_print_lookup(json_t *p, FILE *f)
{
	json_t	*cur = json_object_get(p, "current"), *mapped = json_object_get(p, "mapped");
	json_t	*o;
	size_t	 i;

	fprintf(f, "%s at %s\n", client_str(p, "path"), client_str(p, "at"));
	object_header(f);
	if (json_array_size(mapped) > 0)
		json_array_foreach(mapped, i, o)
			print_object_line(o, f);
	else if (json_is_object(cur)) {
		print_object_line(cur, f);
		fprintf(f, "(not mapped at that moment: the last version seen before it)\n");
	}
}

void
query_print_history(json_t *p, FILE *f)
{
	json_t	*o;
	size_t	 i;

	fprintf(f, "%s\n", client_str(p, "path"));
	fprintf(f, "%-40s  %-24s  %-24s  %5s %5s %5s  %s\n", "BUILD-ID", "FIRST SEEN",
	    "LAST SEEN", "MAPS", "PROCS", "SEGS", "SOURCE");
	json_array_foreach(json_object_get(p, "objects"), i, o)
		fprintf(f, "%-40s  %-24s  %-24s  %5lld %5lld %5lld  %s\n", client_str(o, "build_id"),
		    client_str(o, "first_seen"), client_str(o, "last_seen"), client_num(o, "nr_maps"),
		    client_num(o, "nr_procs"), client_num(o, "segments"), client_str(o, "source"));
}

void
query_print_buildid(json_t *p, FILE *f)
{
	json_t	*o;
	size_t	 i;

	client_print_kv(f, "build-id", "%s", client_str(p, "build_id"));
	client_print_kv(f, "seen", "%s .. %s", client_str(p, "first_seen"), client_str(p, "last_seen"));
	client_print_kv(f, "cached", "%s", client_str(p, "cached"));
	fprintf(f, "\npaths:\n");
	json_array_foreach(json_object_get(p, "objects"), i, o)
		fprintf(f, "  %s  (%s .. %s, %lld maps, %lld processes, %s)\n", client_str(o, "path"),
		    client_str(o, "first_seen"), client_str(o, "last_seen"), client_num(o, "nr_maps"),
		    client_num(o, "nr_procs"), client_str(o, "source"));
	fprintf(f, "\nsegments:\n");
	json_array_foreach(json_object_get(p, "segments"), i, o)
		fprintf(f, "  %6lld  %-40s  %s .. %s  %s\n", client_num(o, "seq"), client_str(o, "name"),
		    client_str(o, "seen_first"), client_str(o, "seen_last"), client_str(o, "state"));
}

static void
print_segment_line(json_t *s, FILE *f)
{
	fprintf(f, "%6lld  %-24s  %-24s  ", client_num(s, "seq"), client_str(s, "start"), client_str(s, "end"));
	client_print_size(f, client_num(s, "size"));
	fprintf(f, "\t%8lld %6lld  %-8s  %s\n", client_num(s, "samples"), client_num(s, "lost"),
	    client_str(s, "state"), client_str(s, "name"));
}

void
query_print_segments(json_t *p, FILE *f)
{
	json_t	*seg = json_object_get(p, "segment"), *o;
	size_t	 i;

	if (json_is_object(seg)) {
		fprintf(f, "segment %s (%s, %s .. %s)\n", client_str(seg, "name"), client_str(seg, "state"),
		    client_str(seg, "start"), client_str(seg, "end"));
		fprintf(f, "%-40s  %s\n", "BUILD-ID", "PATH");
		json_array_foreach(json_object_get(p, "objects"), i, o)
			fprintf(f, "%-40s  %s\n", client_str(o, "build_id"), client_str(o, "path"));
		return;
	}
	fprintf(f, "%6s  %-24s  %-24s  %s\t%8s %6s  %-8s  %s\n", "SEQ", "START", "END", "SIZE",
	    "SAMPLES", "LOST", "STATE", "NAME");
	json_array_foreach(json_object_get(p, "segments"), i, o)
		print_segment_line(o, f);
}
