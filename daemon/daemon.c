/*
 * daemon.c - daemon-wide actions shared by the signal handlers (main.c)
 * and the control commands (control/cmd-reload.c, control/cmd-stop.c).
 */
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "config.h"
#include "control/control.h"
#include "daemon.h"
#include "log.h"

/* Apply a new configuration; what needs the events reopened waits for a restart. */
int
daemon_reload(struct perfmapd *d, char *err, size_t errlen)
{
	struct config nc;

	sd_notify(0, "RELOADING=1");
	config_defaults(&nc);
	if ((access(d->config_file, F_OK) == 0 || d->config_explicit) &&
	    (config_load(&nc, d->config_file, err, errlen) < 0 ||
	    config_validate(&nc, err, errlen) < 0)) {
		log_warnx("reload refused, old configuration kept: %s", err);
		sd_notify(0, "READY=1");
		return -1;
	}
	if (nc.frequency != d->conf.frequency || nc.event != d->conf.event ||
	    nc.callchain != d->conf.callchain || nc.buildid_mode != d->conf.buildid_mode ||
	    nc.mmap2_on_leaky_kernel != d->conf.mmap2_on_leaky_kernel ||
	    nc.ring_size != d->conf.ring_size || nc.wakeup_size != d->conf.wakeup_size ||
	    (d->state_override[0] == '\0' && strcmp(nc.state_dir, d->state_dir_conf) != 0) ||
	    (d->socket_override[0] == '\0' && strcmp(nc.socket_path, d->conf.socket_path) != 0))
		log_warnx("reload: changes to [record], state_dir and socket take effect "
		    "at restart");
	if (nc.segment_mode != d->conf.segment_mode || nc.flight_size != d->conf.flight_size)
		log_warnx("reload: changes to [segments] mode and flight_size take effect "
		    "at restart");
	d->conf.flight_age_ms = nc.flight_age_ms;
	d->conf.rotate_size = nc.rotate_size;
	d->conf.rotate_age_ms = nc.rotate_age_ms;
	d->conf.segment_sync = nc.segment_sync;
	d->conf.compress = nc.compress;			/* from the next segment on */
	d->conf.compress_level = nc.compress_level;
	d->conf.keep_size = nc.keep_size;
	d->conf.keep_count = nc.keep_count;
	d->conf.keep_age_ms = nc.keep_age_ms;
	d->conf.readonly_public = nc.readonly_public;
	memcpy(d->conf.control_group, nc.control_group, sizeof(nc.control_group));
	d->conf.drain_interval_ms = nc.drain_interval_ms;
	d->conf.sb_holdoff_max_ms = nc.sb_holdoff_max_ms;
	d->conf.index_commit_ms = nc.index_commit_ms;
	d->conf.index_commit_rows = nc.index_commit_rows;
	d->conf.index_retention_ms = nc.index_retention_ms;
	control_reload(d->control);
	log_info("configuration reloaded from %s", d->config_file);
	sd_notify(0, "READY=1");
	return 0;
}

void
daemon_stop(struct perfmapd *d)
{
	event_base_loopbreak(d->base);
}

