/*
 * ctl-ping.c - "ping": is the daemon there and answering?  Open to anyone
 * who can connect.
 */
#include "ctl.h"
#include "proto.h"

static json_t *
ctl_ping(struct ctl_request *req)
{
	return proto_reply(json_pack("{s:b, s:s}", "pong", 1, "version", PERFMAPD_VERSION), 0);
}

const struct ctl_entry ctl_ping_entry = {
	.name = "ping",
	.method = "io.perfmap.Ping",
	.usage = "ping",
	.help = "check that the daemon answers",
	.flags = CTL_PUBLIC,
	.handler = ctl_ping,
};
