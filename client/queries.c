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


/* PATH [--at TIME] [--all-namespaces] */
json_t *
query_parse_lookup(int argc, char **argv, char *err, size_t errlen)
{
	const char *path = NULL;
	int64_t	 at = -1;
	int	 i, all = 0;
	json_t	*p;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--all-namespaces") == 0)
			all = 1;
		else if (strcmp(argv[i], "--at") == 0) {
			if (++i >= argc) {
				snprintf(err, errlen, "--at needs a TIME");
				return NULL;
			}
			if (walltime_parse(argv[i], walltime_now(), &at, err, errlen) < 0)
				return NULL;
			if (at < 0) {	/* not taken for "no --at": now */
				snprintf(err, errlen, "--at %s: before 1970, when nothing was "
				    "recorded", argv[i]);
				return NULL;
			}
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
	p = at >= 0 ? json_pack("{s:s, s:I}", "path", path, "at_ns", (json_int_t)at) :
	    json_pack("{s:s}", "path", path);
	if (p == NULL) {
		snprintf(err, errlen, "PATH is not UTF-8: the protocol carries text only");
		return NULL;
	}
	if (all)
		json_object_set_new(p, "all_namespaces", json_true());
	return p;
}

/* One ARG, under KEY. */
static json_t *
parse_one(int argc, char **argv, const char *key, const char *what, char *err,
    size_t errlen)
{
	json_t	*p;

	if (argc != 1 || argv[0][0] == '-') {
		snprintf(err, errlen, argc == 0 ? "a %s is needed" : "one %s, no options", what);
		return NULL;
	}
	if ((p = json_pack("{s:s}", key, argv[0])) == NULL)
		snprintf(err, errlen, "the %s is not UTF-8: the protocol carries text only", what);
	return p;
}

/* PATH [--all-namespaces] */
json_t *
query_parse_history(int argc, char **argv, char *err, size_t errlen)
{
	json_t	*p;

	if (argc == 2 && strcmp(argv[1], "--all-namespaces") == 0) {
		if ((p = parse_one(1, argv, "path", "PATH", err, errlen)) != NULL)
			json_object_set_new(p, "all_namespaces", json_true());
		return p;
	}
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
		else if (argv[i][0] != '-' && json_object_get(p, "segment") == NULL) {
			/* not dropped: a SEGMENT that is not text would list them all */
			if (json_object_set_new(p, "segment", json_string(argv[i])) < 0) {
				snprintf(err, errlen, "SEGMENT is not UTF-8: no segment has "
				    "such a name");
				json_decref(p);
				return NULL;
			}
		} else {
			snprintf(err, errlen, "unexpected argument \"%s\"", argv[i]);
			json_decref(p);
			return NULL;
		}
	}
	return p;
}

/*
 * Where the index keeps the mount namespace a path was seen in (issue 15's
 * provenance): when its rows carry this field, history and lookup show it
 * as a NAMESPACE column; until then the column is not printed.
 */
#define OBJECT_NS_KEY	"mnt_ns"

static const struct column obj_cols[] = {
	{ "BUILD-ID", 'l', COL_STR, "build_id" },
	{ "FIRST SEEN", 'l', COL_STR, "first_seen" },
	{ "LAST SEEN", 'l', COL_STR, "last_seen" },
	{ "MAPS", 'r', COL_NUM, "nr_maps" },
	{ "PROCS", 'r', COL_NUM, "nr_procs" },
	{ "SEGS", 'r', COL_NUM, "segments" },		/* history only */
	{ "SOURCE", 'l', COL_STR, "source" },		/* NAMESPACE: print_table_ns */
};

/*
 * COLS (N of them, at most 8) and a NAMESPACE column last when a row of
 * ROWS has one: a user's namespace's row beside the host's says whose it
 * is (without it, the text of buildid and segments SEG showed a user's
 * binary under a host path as the host's).
 */
static void
print_table_ns(FILE *f, const char *indent, const struct column *cols, size_t n, json_t *rows)
{
	static const struct column ns_col = { "NAMESPACE", 'l', COL_ANY, OBJECT_NS_KEY };
	struct column all[9];
	json_t	*o;
	size_t	 i;
	int	 ns = 0;

	json_array_foreach(rows, i, o)
		ns |= json_object_get(o, OBJECT_NS_KEY) != NULL;
	for (i = 0; i < n && i < 8; i++)
		all[i] = cols[i];
	if (ns)
		all[i++] = ns_col;
	client_print_table(f, indent, all, i, rows);
}

/* Build-id rows of lookup (SEGS = 0) and history (SEGS = 1). */
static void
print_objects(json_t *objects, int segs, FILE *f)
{
	struct column cols[sizeof(obj_cols) / sizeof(obj_cols[0])];
	size_t	 i, n = 0;

	for (i = 0; i < sizeof(obj_cols) / sizeof(obj_cols[0]); i++)
		if (segs || strcmp(obj_cols[i].key, "segments") != 0)
			cols[n++] = obj_cols[i];
	print_table_ns(f, "", cols, n, objects);
}

/* A reply whose lists the daemon cut (QUERIER_MAX_ROWS, _BYTES): said, after them. */
static void
print_truncated(json_t *p, FILE *f)
{
	if (json_is_true(json_object_get(p, "truncated")))
		fprintf(f, "(truncated: the daemon sends at most 10000 rows of a list and "
		    "about 4 MiB of rows; perfmapctl --state-dir reads the index itself, whole)\n");
}

void
query_print_lookup(json_t *p, FILE *f)
{
	json_t	*cur = json_object_get(p, "current"), *mapped = json_object_get(p, "mapped");
	json_t	*one;

	fprintf(f, "%s at %s\n", client_text(p, "path"), client_str(p, "at"));
	if (json_array_size(mapped) > 0)
		print_objects(mapped, 0, f);
	else if (json_is_object(cur)) {
		one = json_pack("[O]", cur);
		print_objects(one, 0, f);
		json_decref(one);
		fprintf(f, "(not mapped at that moment: the last version seen before it)\n");
	} else
		fprintf(f, "(never seen)\n");
	print_truncated(p, f);
}

void
query_print_history(json_t *p, FILE *f)
{
	fprintf(f, "%s\n", client_text(p, "path"));
	print_objects(json_object_get(p, "objects"), 1, f);
	print_truncated(p, f);
}

void
query_print_buildid(json_t *p, FILE *f)
{
	static const struct column paths[] = {
		{ "PATH", 'l', COL_STR, "path" },
		{ "FIRST SEEN", 'l', COL_STR, "first_seen" },
		{ "LAST SEEN", 'l', COL_STR, "last_seen" },
		{ "MAPS", 'r', COL_NUM, "nr_maps" },
		{ "PROCS", 'r', COL_NUM, "nr_procs" },
		{ "SOURCE", 'l', COL_STR, "source" },
	}, segs[] = {
		{ "SEQ", 'r', COL_NUM, "seq" },
		{ "FIRST SEEN", 'l', COL_STR, "seen_first" },
		{ "LAST SEEN", 'l', COL_STR, "seen_last" },
		{ "STATE", 'l', COL_STR, "state" },
		{ "NAME", 'l', COL_STR, "name" },
	};

	client_print_kv(f, "build-id", "%s", client_str(p, "build_id"));
	client_print_kv(f, "seen", "%s .. %s", client_str(p, "first_seen"), client_str(p, "last_seen"));
	client_print_kv(f, "cached", "%s", client_str(p, "cached"));
	fprintf(f, "\npaths:\n");
	print_table_ns(f, "  ", paths, sizeof(paths) / sizeof(paths[0]),
	    json_object_get(p, "objects"));
	fprintf(f, "\nsegments:\n");
	client_print_table(f, "  ", segs, sizeof(segs) / sizeof(segs[0]),
	    json_object_get(p, "segments"));
	print_truncated(p, f);
}

void
query_print_segments(json_t *p, FILE *f)
{
	static const struct column list[] = {
		{ "SEQ", 'r', COL_NUM, "seq" },
		{ "START", 'l', COL_STR, "start" },
		{ "END", 'l', COL_STR, "end" },
		{ "SIZE", 'r', COL_SIZE, "size" },
		{ "SAMPLES", 'r', COL_NUM, "samples" },
		{ "LOST", 'r', COL_NUM, "lost" },
		{ "STATE", 'l', COL_STR, "state" },
		{ "NAME", 'l', COL_STR, "name" },
	}, one[] = {
		{ "BUILD-ID", 'l', COL_STR, "build_id" },
		{ "PATH", 'l', COL_STR, "path" },
	};
	json_t	*seg = json_object_get(p, "segment");

	if (json_is_object(seg)) {
		fprintf(f, "segment %s (%s, %s .. %s)\n", client_text(seg, "name"),
		    client_str(seg, "state"), client_str(seg, "start"), client_str(seg, "end"));
		print_table_ns(f, "", one, sizeof(one) / sizeof(one[0]),
		    json_object_get(p, "objects"));
		print_truncated(p, f);
		return;
	}
	client_print_table(f, "", list, sizeof(list) / sizeof(list[0]),
	    json_object_get(p, "segments"));
	print_truncated(p, f);
}
