/*
 * ctl-reload.c - "reload": re-read the configuration file, as SIGHUP does.
 * A bad file is refused and the old configuration stays in force.
 */
#include "ctl.h"
#include "daemon.h"
#include "proto.h"

static json_t *
ctl_reload(struct ctl_request *req)
{
	char	 err[1024];

	if (daemon_reload(req->d, err, sizeof(err)) < 0)
		return proto_errorf(PROTO_ERR_FAILED, "%s", err);
	return proto_reply(json_pack("{s:s}", "config", req->d->config_file), 0);
}

const struct ctl_entry ctl_reload_entry = {
	.name = "reload",
	.method = "io.perfmap.Reload",
	.usage = "reload",
	.help = "re-read the configuration file (a bad one is refused)",
	.flags = CTL_PRIV,
	.handler = ctl_reload,
};
