/*
 * ctl-lookup.c - "lookup": the build-id PATH had at TIME (default: now).
 * Answered from the index (common/query.c), read-only.
 */
#include "ctl.h"

const struct ctl_entry ctl_lookup_entry = {
	.name = "lookup",
	.method = "io.perfmap.Lookup",
	.usage = "lookup PATH [--at TIME]",
	.help = "the build-id PATH had at TIME (default: now)",
	.flags = 0,
	.handler = ctl_query,
};
