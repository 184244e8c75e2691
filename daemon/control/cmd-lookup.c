/*
 * cmd-lookup.c - "lookup": the build-id PATH had at TIME (default: now).
 * Answered from the index (common/query.c), read-only.
 */
#include "command.h"

const struct control_command cmd_lookup = {
	.name = "lookup",
	.method = "io.perfmap.Lookup",
	.usage = "lookup PATH [--at TIME] [--all-namespaces]",
	.help = "the build-id PATH had at TIME (default: now)",
	.flags = 0,
	.params = { "path", "at_ns", "all_namespaces" },
	.handler = control_query,
};
