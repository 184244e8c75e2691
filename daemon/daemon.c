/*
 * daemon.c - daemon-wide actions shared by the signal handlers (main.c)
 * and the control commands (control/cmd-reload.c, control/cmd-stop.c).
 */
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>
#include <systemd/sd-daemon.h>

#include "config.h"
#include "control/control.h"
#include "daemon.h"
#include "index/index.h"
#include "log.h"

/*
 * The keys a reload does not apply (perfmapd.conf(5), DESCRIPTION) that NC
 * changes, appended to OUT as "[section] key": they set up the events, the
 * state directory, its group and the socket, the segments' mode, the
 * index's connection and the build-id cache's worker, or are read by other
 * threads.
 */
static void
restart_keys(const struct perfmapd *d, const struct config *nc, json_t *out)
{
	const struct config *c = &d->conf;
	const struct { int changed; const char *name; } k[] = {
		{ d->state_override[0] == '\0' && strcmp(nc->state_dir, d->state_dir_conf) != 0,
		    "[daemon] state_dir" },
		{ d->socket_override[0] == '\0' && strcmp(nc->socket_path, c->socket_path) != 0,
		    "[daemon] socket" },
		{ strcmp(nc->control_group, c->control_group) != 0, "[daemon] control_group" },
		{ nc->event != c->event, "[record] event" },
		{ nc->frequency != c->frequency, "[record] frequency" },
		{ nc->callchain != c->callchain, "[record] callchain" },
		{ nc->buildid_mode != c->buildid_mode, "[record] buildid_mode" },
		{ nc->mmap2_on_leaky_kernel != c->mmap2_on_leaky_kernel,
		    "[record] mmap2_on_leaky_kernel" },
		{ nc->ring_size != c->ring_size, "[record] ring_size" },
		{ nc->wakeup_size != c->wakeup_size, "[record] wakeup_size" },
		{ nc->segment_mode != c->segment_mode, "[segments] mode" },
		{ nc->flight_size != c->flight_size, "[segments] flight_size" },
		{ nc->index_cache_size != c->index_cache_size, "[index] cache_size" },
		{ nc->index_max_size != c->index_max_size, "[index] db_max_size" },
		{ strcmp(nc->cache_dir, c->cache_dir) != 0, "[cache] dir" },
		{ nc->capture != c->capture, "[cache] capture" },
		{ nc->cache_max_size != c->cache_max_size, "[cache] max_size" },
		{ nc->capture_queue != c->capture_queue, "[cache] queue" },
		{ nc->debuginfod != c->debuginfod, "[cache] debuginfod" },
		{ nc->cache_user_bytes != c->cache_user_bytes, "[cache] user_bytes" },
		{ nc->cache_user_files != c->cache_user_files, "[cache] user_files" },
		{ nc->cache_user_interval_ms != c->cache_user_interval_ms,
		    "[cache] user_interval" },
	};
	size_t	 i;

	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (k[i].changed)
			json_array_append_new(out, json_string(k[i].name));
}

/* Apply a new configuration; the keys restart_keys names wait for a restart. */
int
daemon_reload(struct perfmapd *d, json_t **restart, char *err, size_t errlen)
{
	struct config nc;
	json_t	*later, *v;
	char	 keys[512];
	size_t	 i, n = 0;
	int	 present;

	sd_notify(0, "RELOADING=1");
	config_defaults(&nc);
	present = access(d->config_file, F_OK) == 0;
	/*
	 * A file that was read and is now gone (moved away while being
	 * edited, a package's upgrade) is not the defaults: applying them
	 * would set keep_size and the rest back, and the next rotation's
	 * retention delete what the operator's values kept.
	 */
	if (!present && !d->config_explicit && d->config_from_file)
		snprintf(err, errlen, "%s is gone (the running configuration was read from it); "
		    "an empty file gives the defaults", d->config_file);
	if ((!present && !d->config_explicit && d->config_from_file) ||
	    ((present || d->config_explicit) &&
	    (config_load(&nc, d->config_file, err, errlen) < 0 ||
	    config_validate(&nc, err, errlen) < 0))) {
		log_warnx("reload refused, old configuration kept: %s", err);
		sd_notify(0, "READY=1");
		return -1;
	}
	d->config_from_file = present || d->config_explicit;
	restart_keys(d, &nc, later = json_array());
	keys[0] = '\0';
	json_array_foreach(later, i, v)
		if (n < sizeof(keys))
			n += (size_t)snprintf(keys + n, sizeof(keys) - n, "%s%s", i > 0 ? ", " : "",
			    json_string_value(v));
	if (n > 0)
		log_warnx("reload: %s take effect at restart; the running values stay", keys);
	if (restart != NULL)
		*restart = later;
	else
		json_decref(later);
	d->conf.flight_age_ms = nc.flight_age_ms;
	d->conf.rotate_size = nc.rotate_size;
	d->conf.rotate_age_ms = nc.rotate_age_ms;
	d->conf.segment_sync = nc.segment_sync;
	d->conf.snapshot_pprof = nc.snapshot_pprof;
	d->conf.compress = nc.compress;			/* from the next segment on */
	d->conf.compress_level = nc.compress_level;
	d->conf.keep_size = nc.keep_size;
	d->conf.keep_count = nc.keep_count;
	d->conf.keep_age_ms = nc.keep_age_ms;
	d->conf.readonly_public = nc.readonly_public;
	d->conf.drain_interval_ms = nc.drain_interval_ms;
	d->conf.sb_holdoff_max_ms = nc.sb_holdoff_max_ms;
	d->conf.index_commit_ms = nc.index_commit_ms;
	d->conf.index_commit_rows = nc.index_commit_rows;
	d->conf.index_retention_ms = nc.index_retention_ms;
	if (recorder_retime(&d->rec) < 0 || index_retime(d->index) < 0)
		log_warnx("reload: cannot set the drain or commit timer to the new interval");
	control_reload(d->control);
	if (d->config_from_file)
		log_info("configuration reloaded from %s", d->config_file);
	else
		log_info("configuration reloaded: %s does not exist, the defaults stay", d->config_file);
	sd_notify(0, "READY=1");
	return 0;
}

void
daemon_stop(struct perfmapd *d)
{
	event_base_loopbreak(d->base);
}

