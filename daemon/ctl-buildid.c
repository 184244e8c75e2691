/*
 * ctl-buildid.c - "buildid": where and when a build-id was seen, and its cached file.
 * Answered from the index (common/query.c), read-only.
 */
#include "ctl.h"

const struct ctl_entry ctl_buildid_entry = {
	.name = "buildid",
	.method = "io.perfmap.BuildId",
	.usage = "buildid ID",
	.help = "where and when a build-id was seen, and its cached file",
	.flags = 0,
	.handler = ctl_query,
};
