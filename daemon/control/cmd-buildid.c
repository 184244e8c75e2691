/*
 * cmd-buildid.c - "buildid": where and when a build-id was seen, and its cached file.
 * Answered from the index (common/query.c), read-only.
 */
#include "command.h"

const struct control_command cmd_buildid = {
	.name = "buildid",
	.method = "io.perfmap.BuildId",
	.usage = "buildid ID",
	.help = "where and when a build-id was seen, and its cached file",
	.flags = 0,
	.params = { "build_id" },
	.handler = control_query,
};
