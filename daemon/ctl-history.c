/*
 * ctl-history.c - "history": every build-id PATH has had, with first/last seen and process counts.
 * Answered from the index (common/query.c), read-only.
 */
#include "ctl.h"

const struct ctl_entry ctl_history_entry = {
	.name = "history",
	.method = "io.perfmap.History",
	.usage = "history PATH",
	.help = "every build-id PATH has had, with first/last seen and process counts",
	.flags = 0,
	.handler = ctl_query,
};
