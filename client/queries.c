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

/* A number field, or "-" when the reply has none (null: not known yet). */
static const char *
num_or_dash(json_t *o, const char *k, char *buf, size_t len)
{
	json_t	*v = json_object_get(o, k);

	if (!json_is_integer(v))
		return "-";
	snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	return buf;
}

/*
 * Where the index keeps the mount namespace a path was seen in (issue 15's
 * provenance): when its rows carry this field, history and lookup show it
 * as a NAMESPACE column; until then the column is not printed.
 */
#define OBJECT_NS_KEY	"mnt_ns"

static int
any_namespace(json_t *objects)
{
	json_t	*o;
	size_t	 i;

	json_array_foreach(objects, i, o)
		if (json_object_get(o, OBJECT_NS_KEY) != NULL)
			return 1;
	return 0;
}

static const char *
namespace_of(json_t *o, char *buf, size_t len)
{
	json_t	*v = json_object_get(o, OBJECT_NS_KEY);

	if (json_is_string(v))
		return json_string_value(v);
	return num_or_dash(o, OBJECT_NS_KEY, buf, len);
}

/* Build-id rows of lookup (SEGS = 0) and history (SEGS = 1). */
static void
print_objects(json_t *objects, int segs, FILE *f)
{
	struct table t;
	json_t	*o;
	size_t	 i;
	char	 b[32];
	int	 ns = any_namespace(objects);

	table_init(&t, segs ? (ns ? "lllrrrll" : "lllrrrl") : (ns ? "lllrrll" : "lllrrl"),
	    "BUILD-ID", "FIRST SEEN", "LAST SEEN", "MAPS", "PROCS", NULL);
	if (segs)
		table_add(&t, "SEGS");
	table_add(&t, "SOURCE");
	if (ns)
		table_add(&t, "NAMESPACE");
	json_array_foreach(objects, i, o) {
		table_add(&t, "%s", client_str(o, "build_id"));
		table_add(&t, "%s", client_str(o, "first_seen"));
		table_add(&t, "%s", client_str(o, "last_seen"));
		table_add(&t, "%lld", client_num(o, "nr_maps"));
		table_add(&t, "%lld", client_num(o, "nr_procs"));
		if (segs)
			table_add(&t, "%lld", client_num(o, "segments"));
		table_add(&t, "%s", client_str(o, "source"));
		if (ns)
			table_add(&t, "%s", namespace_of(o, b, sizeof(b)));
	}
	table_print(&t, f, "");
}

void
query_print_lookup(json_t *p, FILE *f)
{
	json_t	*cur = json_object_get(p, "current"), *mapped = json_object_get(p, "mapped");
	json_t	*one;

	fprintf(f, "%s at %s\n", client_str(p, "path"), client_str(p, "at"));
	if (json_array_size(mapped) > 0)
		print_objects(mapped, 0, f);
	else if (json_is_object(cur)) {
		one = json_pack("[O]", cur);
		print_objects(one, 0, f);
		json_decref(one);
		fprintf(f, "(not mapped at that moment: the last version seen before it)\n");
	} else
		fprintf(f, "(never seen)\n");
}

void
query_print_history(json_t *p, FILE *f)
{
	fprintf(f, "%s\n", client_str(p, "path"));
	print_objects(json_object_get(p, "objects"), 1, f);
}

void
query_print_buildid(json_t *p, FILE *f)
{
	struct table t;
	json_t	*o;
	size_t	 i;

	client_print_kv(f, "build-id", "%s", client_str(p, "build_id"));
	client_print_kv(f, "seen", "%s .. %s", client_str(p, "first_seen"), client_str(p, "last_seen"));
	client_print_kv(f, "cached", "%s", client_str(p, "cached"));
	fprintf(f, "\npaths:\n");
	table_init(&t, "lllrrl", "PATH", "FIRST SEEN", "LAST SEEN", "MAPS", "PROCS", "SOURCE",
	    NULL);
	json_array_foreach(json_object_get(p, "objects"), i, o) {
		table_add(&t, "%s", client_str(o, "path"));
		table_add(&t, "%s", client_str(o, "first_seen"));
		table_add(&t, "%s", client_str(o, "last_seen"));
		table_add(&t, "%lld", client_num(o, "nr_maps"));
		table_add(&t, "%lld", client_num(o, "nr_procs"));
		table_add(&t, "%s", client_str(o, "source"));
	}
	table_print(&t, f, "  ");
	fprintf(f, "\nsegments:\n");
	table_init(&t, "rllll", "SEQ", "FIRST SEEN", "LAST SEEN", "STATE", "NAME", NULL);
	json_array_foreach(json_object_get(p, "segments"), i, o) {
		table_add(&t, "%lld", client_num(o, "seq"));
		table_add(&t, "%s", client_str(o, "seen_first"));
		table_add(&t, "%s", client_str(o, "seen_last"));
		table_add(&t, "%s", client_str(o, "state"));
		table_add(&t, "%s", client_str(o, "name"));
	}
	table_print(&t, f, "  ");
}

void
query_print_segments(json_t *p, FILE *f)
{
	struct table t;
	json_t	*seg = json_object_get(p, "segment"), *o;
	size_t	 i;
	char	 b[32];

	if (json_is_object(seg)) {
		fprintf(f, "segment %s (%s, %s .. %s)\n", client_str(seg, "name"),
		    client_str(seg, "state"), client_str(seg, "start"), client_str(seg, "end"));
		table_init(&t, "ll", "BUILD-ID", "PATH", NULL);
		json_array_foreach(json_object_get(p, "objects"), i, o) {
			table_add(&t, "%s", client_str(o, "build_id"));
			table_add(&t, "%s", client_str(o, "path"));
		}
		table_print(&t, f, "");
		return;
	}
	table_init(&t, "rllrrrll", "SEQ", "START", "END", "SIZE", "SAMPLES", "LOST", "STATE",
	    "NAME", NULL);
	json_array_foreach(json_object_get(p, "segments"), i, o) {
		table_add(&t, "%lld", client_num(o, "seq"));
		table_add(&t, "%s", client_str(o, "start"));
		table_add(&t, "%s", client_str(o, "end"));
		table_add(&t, "%s", json_is_integer(json_object_get(o, "size")) ?
		    client_fmt_size(b, sizeof(b), client_num(o, "size")) : "-");
		table_add(&t, "%s", num_or_dash(o, "samples", b, sizeof(b)));
		table_add(&t, "%s", num_or_dash(o, "lost", b, sizeof(b)));
		table_add(&t, "%s", client_str(o, "state"));
		table_add(&t, "%s", client_str(o, "name"));
	}
	table_print(&t, f, "");
}
