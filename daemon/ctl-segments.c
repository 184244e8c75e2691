/*
 * ctl-segments.c - "segments": list segments (time range, size, samples, lost); with SEGMENT, the build-ids it references.
 * Answered from the index (common/query.c), read-only.
 */
#include "ctl.h"

const struct ctl_entry ctl_segments_entry = {
	.name = "segments",
	.method = "io.perfmap.Segments",
	.usage = "segments [SEGMENT] [--all]",
	.help = "list segments (time range, size, samples, lost); with SEGMENT, the build-ids it references",
	.flags = 0,
	.handler = ctl_query,
};
