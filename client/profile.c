/*
 * profile.c - perfmapctl profile: a profile of a time window, as perf.data,
 * pprof, folded stacks or an SVG flame graph.
 *
 *	perfmapctl profile [--since TIME] [--until TIME] [--pid PID] [--comm NAME]
 *	                   [--format perf|pprof|folded|svg] -o FILE
 *
 * Dates are read here, in the user's time zone (default: the last 10
 * minutes); the format comes from -o's extension unless --format says.
 * With the daemon, its worker writes the profile under STATE/profiles/ and
 * the reply names it; it is copied to FILE here, so the daemon never writes
 * where a client points it.  With --state-dir the engine runs here.
 * Either way FILE appears whole or not at all: the profile is written to a
 * temporary file beside it and renamed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "client.h"
#include "index_reader.h"
#include "walltime.h"
#include "profile.h"

#define PROFILE_DEFAULT_WINDOW	(600LL * 1000000000LL)	/* 10 minutes */

static char	 profile_out[PATH_MAX];	/* -o FILE */

static const char *
opt_value(int argc, char **argv, int *i, const char *name, char *err, size_t errlen)
{
	const char *a = argv[*i];
	size_t	 n = strlen(name);

	if (a[n] == '=')
		return a + n + 1;
	if (*i + 1 >= argc || argv[*i + 1][0] == '\0') {
		snprintf(err, errlen, "%s needs a value", name);
		return NULL;
	}
	return argv[++*i];
}

static int
is_opt(const char *a, const char *name)
{
	size_t	 n = strlen(name);

	return strncmp(a, name, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

json_t *
profile_parse(int argc, char **argv, char *err, size_t errlen)
{
	const char *since = NULL, *until = NULL, *comm = NULL, *format = NULL, *v;
	enum profile_format f;
	int64_t	 now = walltime_now(), s, u;
	long long pid = -1;
	json_t	*p;
	int	 i;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (is_opt(a, "--since") || is_opt(a, "--until") || is_opt(a, "--pid") ||
		    is_opt(a, "--comm") || is_opt(a, "--format") || is_opt(a, "--output") ||
		    strcmp(a, "-o") == 0) {
			const char *name = a[1] == 'o' ? "-o" : a;
			char	 opt[16];

			snprintf(opt, sizeof(opt), "%.*s", (int)strcspn(name, "="), name);
			if ((v = opt_value(argc, argv, &i, opt, err, errlen)) == NULL)
				return NULL;
			if (strcmp(opt, "--since") == 0)
				since = v;
			else if (strcmp(opt, "--until") == 0)
				until = v;
			else if (strcmp(opt, "--comm") == 0)
				comm = v;
			else if (strcmp(opt, "--format") == 0)
				format = v;
			else if (strcmp(opt, "--pid") == 0) {
				char	*end;

				errno = 0;
				pid = strtoll(v, &end, 10);
				if (errno != 0 || *end != '\0' || pid < 0 || pid > INT32_MAX) {
					snprintf(err, errlen, "--pid: \"%s\" is not a process id", v);
					return NULL;
				}
			} else
				snprintf(profile_out, sizeof(profile_out), "%s", v);
		} else {
			snprintf(err, errlen, "unexpected argument \"%s\"", a);
			return NULL;
		}
	}
	if (profile_out[0] == '\0') {
		snprintf(err, errlen, "-o FILE is required");
		return NULL;
	}
	if (format != NULL ? profile_format_parse(format, &f) < 0 :
	    profile_format_from_path(profile_out, &f) < 0) {
		if (format != NULL)
			snprintf(err, errlen, "--format: \"%s\" is not perf, pprof, folded or svg",
			    format);
		else
			snprintf(err, errlen, "cannot tell the format from \"%s\" (.data, .pb.gz, "
			    ".folded, .txt, .svg): give --format", profile_out);
		return NULL;
	}
	if (walltime_window(since, until, now, PROFILE_DEFAULT_WINDOW, &s, &u, err, errlen) < 0)
		return NULL;
	if (comm != NULL && (strlen(comm) == 0 || strlen(comm) > 15)) {
		snprintf(err, errlen, "--comm: a command name has 1 to 15 characters");
		return NULL;
	}
	p = json_pack("{s:I, s:I, s:s}", "since_ns", (json_int_t)s, "until_ns", (json_int_t)u,
	    "format", profile_format_name(f));
	if (pid >= 0)
		json_object_set_new(p, "pid", json_integer(pid));
	/* not dropped: a name that is not text would make it the whole host's profile */
	if (comm != NULL && json_object_set_new(p, "comm", json_string(comm)) < 0) {
		snprintf(err, errlen, "--comm: the name is not UTF-8: the protocol carries "
		    "text only");
		json_decref(p);
		return NULL;
	}
	return p;
}

void
profile_print(json_t *p, FILE *f)
{
	fprintf(f, "%s: %s, %lld samples from %lld segments (%s .. %s)\n", profile_out,
	    client_str(p, "format"), client_num(p, "samples"), client_num(p, "segments"),
	    client_str(p, "since"), client_str(p, "until"));
	if (client_num(p, "frames") > 0)
		fprintf(f, "  %lld frames in %lld binaries: %lld without a name, %lld outside "
		    "any mapping; %lld binaries not in the cache, %lld with an unknown build-id",
		    client_num(p, "frames"), client_num(p, "binaries"),
		    client_num(p, "frames_unsymbolized"), client_num(p, "frames_unmapped"),
		    client_num(p, "binaries_uncached"), client_num(p, "binaries_unknown"));
	if (client_num(p, "jit_maps") > 0)
		fprintf(f, "; %lld JIT maps", client_num(p, "jit_maps"));
	if (client_num(p, "frames") > 0)
		fputc('\n', f);
	if (client_num(p, "lost") > 0)
		fprintf(f, "  the kernel lost %lld records in these segments\n",
		    client_num(p, "lost"));
	if (client_num(p, "samples_truncated") > 0)
		fprintf(f, "  %lld samples in the \"[truncated]\" stack: the distinct stacks "
		    "took the memory a profile may (a shorter window, --pid or --comm)\n",
		    client_num(p, "samples_truncated"));
	if (client_num(p, "segments_gone") > 0)
		fprintf(f, "  %lld segments of the window were gone before they were read\n",
		    client_num(p, "segments_gone"));
	if (client_num(p, "segments_damaged") > 0)
		fprintf(f, "  %lld segments are damaged: their records after the damage were "
		    "not read\n", client_num(p, "segments_damaged"));
}

/* Copy the daemon's file (STATE/profiles/...) to -o FILE. */
int
profile_finish(json_t *p, int rc)
{
	const char *src = json_string_value(json_object_get(p, "path"));
	char	 tmp[PATH_MAX];
	int	 in, out;

	if (rc != EXIT_OK || src == NULL)
		return rc;
	if ((in = open(src, O_RDONLY | O_CLOEXEC)) == -1) {
		fprintf(stderr, "perfmapctl: profile: %s: %s\n", src, strerror(errno));
		return EXIT_FAILED;
	}
	if ((out = client_open_temp(profile_out, tmp, sizeof(tmp))) == -1) {
		fprintf(stderr, "perfmapctl: profile: %s: %s (the profile is at %s)\n",
		    profile_out, strerror(errno), src);
		close(in);
		return EXIT_FAILED;
	}
	if (client_copy_fd(in, out) < 0 || close(out) == -1 || rename(tmp, profile_out) == -1) {
		fprintf(stderr, "perfmapctl: profile: writing %s: %s\n", profile_out,
		    strerror(errno));
		unlink(tmp);
		close(in);
		return EXIT_FAILED;
	}
	close(in);
	unlink(src);	/* the daemon's copy is not needed any more */
	return rc;
}

/* --state-dir: the engine runs here, on the state directory's files. */
int
profile_offline(const struct client_opts *o, json_t *params)
{
	struct profile_req req;
	struct profile_stats st;
	const char *param;
	char	 err[512], tmp[PATH_MAX];
	json_t	*reply;
	int	 fd;

	memset(&req, 0, sizeof(req));
	if (profile_params(params, &req, &param, err, sizeof(err)) < 0) {
		fprintf(stderr, "perfmapctl: profile: %s: %s\n", param, err);
		return EXIT_USAGE;
	}
	req.state_dir = o->state_dir;
	if ((fd = client_open_temp(profile_out, tmp, sizeof(tmp))) == -1) {
		fprintf(stderr, "perfmapctl: profile: %s: %s\n", profile_out, strerror(errno));
		return EXIT_FAILED;
	}
	req.fd = fd;
	if (profile_run(&req, &st, err, sizeof(err)) < 0) {
		fprintf(stderr, "perfmapctl: profile: %s\n", err);
		close(fd);
		unlink(tmp);
		return EXIT_FAILED;
	}
	if (close(fd) == -1 || rename(tmp, profile_out) == -1) {
		fprintf(stderr, "perfmapctl: profile: writing %s: %s\n", profile_out,
		    strerror(errno));
		unlink(tmp);
		return EXIT_FAILED;
	}
	reply = profile_reply(&req, &st);
	if (o->json) {
		json_dumpf(reply, stdout, JSON_INDENT(2) | JSON_SORT_KEYS | client_json_flags());
		putchar('\n');
	} else
		profile_print(reply, stdout);
	json_decref(reply);
	return EXIT_OK;
}
