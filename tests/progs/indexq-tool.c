/*
 * indexq-tool.c - test-only front end to common/indexq: runs one query on
 * STATE/index.db (read-only, no daemon) and prints its JSON on one line.
 *
 *   indexq-tool STATE lookup PATH [TIME] | history PATH | buildid ID |
 *               segments [all] | segment SEG | kernel | summary
 *   indexq-tool - time STRING          prints the parsed time as ns and ISO
 *
 * Exit status: 0, 2 (-ENOENT: nothing found), 1 (error, on stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "indexq.h"

int
main(int argc, char *argv[])
{
	struct indexq *q;
	json_t	*out = NULL;
	char	 err[1024], buf[40];
	int64_t	 t;
	int	 rc = -1;

	if (argc < 3) {
		fprintf(stderr, "usage: indexq-tool STATE QUERY [ARGS]\n");
		return 1;
	}
	if (strcmp(argv[2], "time") == 0 && argc == 4) {
		if (indexq_parse_time(argv[3], indexq_now(), &t, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		indexq_format_time(t, buf, sizeof(buf));
		printf("%lld %s\n", (long long)t, buf);
		return 0;
	}
	if ((q = indexq_open(argv[1], err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	err[0] = '\0';
	if (strcmp(argv[2], "lookup") == 0 && (argc == 4 || argc == 5)) {
		t = indexq_now();
		if (argc == 5 && indexq_parse_time(argv[4], t, &t, err, sizeof(err)) < 0)
			goto out;
		rc = indexq_lookup(q, argv[3], t, &out, err, sizeof(err));
	} else if (strcmp(argv[2], "history") == 0 && argc == 4)
		rc = indexq_history(q, argv[3], &out, err, sizeof(err));
	else if (strcmp(argv[2], "buildid") == 0 && argc == 4)
		rc = indexq_buildid(q, argv[3], &out, err, sizeof(err));
	else if (strcmp(argv[2], "segments") == 0 && argc <= 4)
		rc = indexq_segments(q, argc == 4, &out, err, sizeof(err));
	else if (strcmp(argv[2], "segment") == 0 && argc == 4)
		rc = indexq_segment_buildids(q, argv[3], &out, err, sizeof(err));
	else if (strcmp(argv[2], "kernel") == 0 && argc == 3)
		rc = indexq_kernel(q, &out, err, sizeof(err));
	else if (strcmp(argv[2], "summary") == 0 && argc == 3)
		rc = indexq_summary(q, &out, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "unknown query %s", argv[2]);
out:
	if (rc == 0) {
		json_dumpf(out, stdout, JSON_COMPACT | JSON_SORT_KEYS);
		putchar('\n');
		json_decref(out);
	} else
		fprintf(stderr, "%s\n", err);
	indexq_close(q);
	return rc == 0 ? 0 : rc == -ENOENT ? 2 : 1;
}
