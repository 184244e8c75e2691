/*
 * cmd-ping.c - "ping": is the daemon there and answering?  Open to anyone
 * who can connect.
 */
#include "command.h"
#include "proto.h"

static json_t *
cmd_ping_run(struct control_request *req)
{
	return proto_reply(json_pack("{s:b, s:s}", "pong", 1, "version", PERFMAPD_VERSION), 0);
}

const struct control_command cmd_ping = {
	.name = "ping",
	.method = "io.perfmap.Ping",
	.usage = "ping",
	.help = "check that the daemon answers",
	.flags = CMD_PUBLIC,
	.handler = cmd_ping_run,
};
