/*
 * daemon.h - the daemon's top-level state, shared by main.c and the
 * control command handlers (control/cmd-*.c).
 */
#ifndef PERFMAPD_DAEMON_H
#define PERFMAPD_DAEMON_H

#include <stdint.h>

#include <jansson.h>

#include "config.h"
#include "record/binaries.h"
#include "record/perflimits.h"
#include "record/recorder.h"
#include "statedir.h"

/*
 * The loop's priorities (libevent runs the active events of the most
 * urgent priority first): everything of the daemon's own, root's and the
 * control group's clients and the accept at LOOP_PRIO_DEFAULT; other
 * users' clients at LOOP_PRIO_OTHERS, and the loop looks for new events
 * after each of their callbacks, so that however much work they queue,
 * root's call and the rings wait for at most one of them
 * (control/control.c).
 */
#define LOOP_PRIORITIES		3
#define LOOP_PRIO_DEFAULT	1	/* libevent's default for 3: the middle one */
#define LOOP_PRIO_OTHERS	2

struct event_base;
struct event;
struct capture;
struct control;
struct querier;
struct index;

struct perfmapd {
	struct event_base *base;
	struct config	 conf;
	const char	*config_file;
	int		 config_explicit;
	int		 config_from_file;	/* the running configuration was read from config_file */
	char		 state_override[4096];
	char		 socket_override[108];
	struct binaries	 bins;		/* shared by the recorder and the index */
	struct recorder	 rec;		/* rings in, segments out */
	struct perflimits limits;	/* the host's shared perf limits, watched */
	struct index	*index;		/* STATE/index.db (index/) */
	struct capture	*cap;		/* the build-id cache worker (capture/) */
	struct control	*control;
	struct querier	*querier;	/* index queries off the loop (control/querier.c) */
	struct event	*notify_ev;		/* WATCHDOG=1 and STATUS= */
	uint64_t	 watchdog_usec;		/* 0: no watchdog */
	struct event	*sig_evs[8];
	struct statedir	 sd;		/* checked, locked (statedir.h) */
	char		 state_dir_conf[4096];	/* as configured; conf.state_dir is canonical */
	uint64_t	 start_wall_ns;
	uint64_t	 snapshot_wall_ns;	/* the last snapshot (snapshot_pprof's period) */
	uint64_t	 period_seq;		/* the period's first segment: the first after
						   the last snapshot's, or this run's first */
};

/*
 * Re-read the configuration; 0 or -1 with ERR set (old one kept).  With
 * RESTART, *RESTART is a new JSON array of the keys the file changes that
 * take effect only at the next start ("[record] frequency", ...).
 */
int	daemon_reload(struct perfmapd *, json_t **restart, char *err, size_t errlen);
/* Leave the event loop: the segment is finished and the process exits. */
void	daemon_stop(struct perfmapd *);

#endif
