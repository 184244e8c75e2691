/*
 * daemon.h - the daemon's top-level state, shared by main.c and the
 * control command handlers (control/cmd-*.c).
 */
#ifndef PERFMAPD_DAEMON_H
#define PERFMAPD_DAEMON_H

#include <stdint.h>

#include "config.h"
#include "record/binaries.h"
#include "record/recorder.h"

struct event_base;
struct event;
struct capture;
struct control;
struct index;

struct perfmapd {
	struct event_base *base;
	struct config	 conf;
	const char	*config_file;
	int		 config_explicit;
	char		 state_override[4096];
	char		 socket_override[108];
	struct binaries	 bins;		/* shared by the recorder and the index */
	struct recorder	 rec;		/* rings in, segments out */
	struct index	*index;		/* STATE/index.db (index/) */
	struct capture	*cap;		/* the build-id cache worker (capture/) */
	struct control	*control;
	struct event	*drain_ev;
	struct event	*notify_ev;		/* WATCHDOG=1 and STATUS= */
	uint64_t	 watchdog_usec;		/* 0: no watchdog */
	struct event	**cpu_evs;
	struct event	*sig_evs[8];
	int		 lockfd;
	uint64_t	 start_wall_ns;
	uint64_t	 snapshot_wall_ns;	/* the last snapshot (snapshot_pprof's period) */
};

/* Re-read the configuration; 0 or -1 with ERR set (old one kept). */
int	daemon_reload(struct perfmapd *, char *err, size_t errlen);
/* Leave the event loop: the segment is finished and the process exits. */
void	daemon_stop(struct perfmapd *);

#endif
