/*
 * cmd-segments.c - "segments": list segments (time range, size, samples, lost); with SEGMENT, the build-ids it references.
 * Answered from the index (common/query.c), read-only.
 */
#include "command.h"

const struct control_command cmd_segments = {
	.name = "segments",
	.method = "io.perfmap.Segments",
	.usage = "segments [SEGMENT] [--all]",
	.help = "list segments (time range, size, samples, lost); with SEGMENT, the build-ids it references",
	.flags = 0,
	.params = { "segment", "all" },
	.handler = control_query,
};
