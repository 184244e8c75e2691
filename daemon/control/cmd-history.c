/*
 * cmd-history.c - "history": every build-id PATH has had, with first/last seen and process counts.
 * Answered from the index (common/query.c), read-only.
 */
#include "command.h"

const struct control_command cmd_history = {
	.name = "history",
	.method = "io.perfmap.History",
	.usage = "history PATH [--all-namespaces]",
	.help = "every build-id PATH has had, with first/last seen and process counts",
	.flags = 0,
	.params = { "path", "all_namespaces" },
	.handler = control_query,
};
