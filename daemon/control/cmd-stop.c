/*
 * cmd-stop.c - "stop": finish the current segment and exit, like SIGTERM.
 * The reply goes out first; the loop ends once it is written.
 */
#include "control.h"
#include "command.h"
#include "daemon.h"
#include "proto.h"

static void
stop_after_reply(void *arg)
{
	daemon_stop(arg);
}

static json_t *
cmd_stop_run(struct control_request *req)
{
	control_after_reply(req->client, stop_after_reply, req->d);
	return proto_reply(json_pack("{s:b}", "stopping", 1), 0);
}

const struct control_command cmd_stop = {
	.name = "stop",
	.method = "io.perfmap.Stop",
	.usage = "stop",
	.help = "finish the current segment and stop the daemon",
	.flags = CMD_PRIV,
	.handler = cmd_stop_run,
};
