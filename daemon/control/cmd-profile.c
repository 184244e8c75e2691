/*
 * cmd-profile.c - "profile": a profile of a time window, as perf.data,
 * pprof, folded stacks or an SVG flame graph (common/profile/).  The
 * parameters are checked here, on the loop, with the same code
 * perfmapctl --state-dir uses; the profile itself is made on the capture
 * module's profile thread, which writes it under STATE/profiles/ and
 * answers with its path (daemon/capture/profile.c).
 *
 *	parameters: since_ns, until_ns: wall-clock ns, [since, until)
 *	            format: "perf" | "pprof" | "folded" | "svg"
 *	            pid: i (optional), comm: s (optional)
 */
#include <string.h>

#include "capture/capture.h"
#include "command.h"
#include "log.h"
#include "daemon.h"
#include "profile.h"
#include "proto.h"

static json_t *
cmd_profile_run(struct control_request *req)
{
	struct profile_req pr;
	const char *param = NULL;
	json_t	*err = NULL;
	char	 msg[256];

	memset(&pr, 0, sizeof(pr));
	/*
	 * The standard error carries its parameter's name alone (the IDL of
	 * org.varlink.service); the why goes to the log (perfmapctl checks
	 * the same first, and says it).
	 */
	if (profile_params(req->params, &pr, &param, msg, sizeof(msg)) < 0) {
		log_debug("control: profile: %s", msg);
		return proto_invalid(param);
	}
	if (capture_profile(req->d->cap, req->client, req->params, &err) < 0)
		return err;
	return NULL;		/* the reply comes from the profile thread */
}

const struct control_command cmd_profile = {
	.name = "profile",
	.method = "io.perfmap.Profile",
	.usage = "profile [--since TIME] [--until TIME] [--pid PID] [--comm NAME] "
	    "[--format perf|pprof|folded|svg] -o FILE",
	.help = "a profile of a time window (default: the last 10 minutes) as perf.data, pprof, "
	    "folded stacks or an SVG flame graph",
	.flags = CMD_PRIV,
	.params = { "since_ns", "until_ns", "format", "pid", "comm" },
	.handler = cmd_profile_run,
};
