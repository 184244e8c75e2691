/*
 * cmd-reload.c - "reload": re-read the configuration file, as SIGHUP does.
 * A bad file is refused and the old configuration stays in force; the
 * reply names the keys the file changes that wait for a restart.
 */
#include "command.h"
#include "daemon.h"
#include "proto.h"

static json_t *
cmd_reload_run(struct control_request *req)
{
	json_t	*restart;
	char	 err[1024];

	if (daemon_reload(req->d, &restart, err, sizeof(err)) < 0)
		return proto_errorf(PROTO_ERR_FAILED, "%s", err);
	return proto_reply(json_pack("{s:s, s:o}", "config", req->d->config_file,
	    "restart", restart), 0);
}

const struct control_command cmd_reload = {
	.name = "reload",
	.method = "io.perfmap.Reload",
	.usage = "reload",
	.help = "re-read the configuration file (a bad one is refused)",
	.flags = CMD_PRIV,
	.handler = cmd_reload_run,
};
