/*
 * main.c - perfmapd: options, configuration, state directory, and the
 * event loop that owns the rings, the timers and the signals.
 *
 *	start (signals held) ─► config ─► nobody else on the socket
 *	      ─► state dir checked, taken over, locked
 *	      (statedir.c) ─► recorder_init (segments
 *	      repaired, events opened) ─► index open (reconciled with the
 *	      segments) ─► capture worker ─► both listen to the recorder
 *	      ─► recorder_start (events on, /proc scan, first segment)
 *	      ─► socket bound ─► READY=1 ─► loop (signals taken)
 *	      ─► SIGTERM ─► last segment finished ─► index closed
 *	      ─► capture worker joined (5 s at most, else _exit) ─► exit 0
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <event2/event.h>
#include <sqlite3.h>
#include <systemd/sd-daemon.h>

#include "capture/capture.h"
#include "config.h"
#include "control/control.h"
#include "control/querier.h"
#include "daemon.h"
#include "index/index.h"
#include "log.h"
#include "record/notify.h"
#include "record/recorder.h"
#include "record/segment.h"
#include "statedir.h"
#include "walltime.h"

#define DEFAULT_CONFIG	"/etc/perfmapd/perfmapd.conf"

static void
usage(void)
{
	fprintf(stderr, "usage: perfmapd [-f|--foreground] [-c|--config FILE] "
	    "[-n|--check-config] [-d|--debug]\n"
	    "                [--state-dir DIR] [--socket PATH] [--probe]\n");
	exit(2);
}

/*
 * A path from the command line, made absolute against the working
 * directory (`--state-dir ./state` is what `make run` uses), as the
 * configuration wants its paths.
 */
static int
copy_path(char *dst, size_t len, const char *src)
{
	char	 cwd[4096];
	int	 n;

	if (src[0] == '/')
		n = snprintf(dst, len, "%s", src);
	else if (getcwd(cwd, sizeof(cwd)) == NULL)
		n = -1;
	else
		n = snprintf(dst, len, "%s/%s", cwd, src[0] == '.' && src[1] == '/' ? src + 2 : src);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "perfmapd: %s: path too long\n", src);
		return -1;
	}
	return 0;
}

/*
 * perfmapd --probe: the start-up probes and the mode the configuration
 * would get, printed; nothing is recorded.  Exit 0, or 1 when the
 * configuration's mode would be refused.
 */
static int
probe_only(const struct config *c)
{
	struct events	 e;
	char		 err[1024];
	int		 rc;

	memset(&e, 0, sizeof(e));
	rc = events_probe_mode(&e, c, err, sizeof(err));
	printf("leak: %s: %s\n", probe_leak_name(e.probe.leak), e.probe.leak_why);
	printf("foreign_buildid_events: %s\n", e.probe.foreign ? "yes" : "no");
	printf("mmap3: %s: %s\n", probe_mmap3_name(e.probe.mmap3), e.probe.mmap3_why);
	if (rc < 0) {
		printf("buildid_mode: refused: %s\n", err);
		return 1;
	}
	printf("buildid_mode: %s: %s\n", events_mode_name(e.mode), e.mode_why);
	return 0;
}

static void
log_stats(struct perfmapd *d, const char *what)
{
	struct recorder_stats *s = &d->rec.st;
	struct mallinfo2 mi = mallinfo2();

	log_info("%s: samples=%llu records=%llu mmaps=%llu lost=%llu lost_samples=%llu "
	    "bad=%llu write_errors=%llu bytes=%llu segments=%llu no_buildid=%llu",
	    what, (unsigned long long)s->samples, (unsigned long long)s->records,
	    (unsigned long long)s->mmaps, (unsigned long long)s->lost,
	    (unsigned long long)s->lost_samples, (unsigned long long)s->bad_records,
	    (unsigned long long)s->write_errors, (unsigned long long)s->bytes,
	    (unsigned long long)s->segments, (unsigned long long)s->mmaps_no_id);
	log_info("%s: heap in use %zu kB of %zu kB from the system (SQLite %lld kB); "
	    "model %zu processes, %zu maps", what, mi.uordblks / 1024,
	    (mi.arena + mi.hblkhd) / 1024, (long long)(sqlite3_memory_used() / 1024),
	    d->rec.model.nprocs, d->rec.model.nmaps);
}

static void
notify_status(struct perfmapd *d)
{
	struct recorder_stats *s = &d->rec.st;

	sd_notifyf(0, "STATUS=recording (%s): %llu samples, %llu lost, %llu segments%s%s",
	    events_mode_name(d->rec.ev.mode), (unsigned long long)s->samples,
	    (unsigned long long)s->lost, (unsigned long long)s->segments,
	    d->rec.disk_error != 0 ? "; cannot write: " : "",
	    d->rec.disk_error != 0 ? strerror(d->rec.disk_error) : "");
}

/*
 * systemd's watchdog and status line, from the loop itself: if the loop
 * is stuck, WATCHDOG=1 stops and systemd restarts us.
 */
static void
notify_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct perfmapd *d = arg;

	if (d->watchdog_usec != 0)
		sd_notify(0, "WATCHDOG=1");
	perflimits_check(&d->limits, d->rec.ev.frequency);
	notify_status(d);
}

/* What we take of the limits every perf user shares (perflimits.h). */
static void
log_limits(struct perfmapd *d)
{
	struct perflimits *l = &d->limits;
	struct perflimits_mlock m;

	if (perflimits_init(l, NULL) < 0) {
		log_warnx("cannot read kernel.perf_event_max_sample_rate");
		return;
	}
	perflimits_mlock(l, events_locked_bytes(&d->rec.ev), (int)sysconf(_SC_NPROCESSORS_ONLN),
	    &m);
	log_info("perf limits: max_sample_rate %lld Hz, cpu_time_max_percent %lld, "
	    "paranoid %lld; rings %llu kB locked: %llu kB of root's %llu kB "
	    "perf_event_mlock_kb allowance (%llu kB left), %llu kB beyond it (VmPin)",
	    (long long)l->rate, (long long)l->cpu_time_max_percent,
	    (long long)l->paranoid, (unsigned long long)m.rings_kb,
	    (unsigned long long)m.charged_kb, (unsigned long long)m.budget_kb,
	    (unsigned long long)m.left_kb, (unsigned long long)m.pinned_kb);
}

/*
 * Files: two per CPU for the rings, and the clients, the pins, the held
 * /tmp directories, the readers' and the index's.  A host of 512 CPUs
 * needs more than the 1,024 that systemd (and most shells) give as the
 * soft limit, and a daemon at its limit fails its reads silently (EMFILE:
 * mappings unknown, copies failed).  The loop waits with epoll, never
 * select, and nothing is executed: the soft limit goes to the hard one,
 * as perf record does.  Before anything is opened.
 */
#define NOFILE_RESERVE	512	/* beside the rings: clients, pins, JIT roots, readers */

static void
raise_nofile(void)
{
	struct rlimit rl;
	rlim_t	 was, need;
	long	 ncpus = sysconf(_SC_NPROCESSORS_CONF);

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	was = rl.rlim_cur;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1) {
			log_warn("cannot raise the open-files limit from %llu to %llu",
			    (unsigned long long)was, (unsigned long long)rl.rlim_max);
			rl.rlim_cur = was;
		} else
			log_info("open-files limit raised from %llu to %llu",
			    (unsigned long long)was, (unsigned long long)rl.rlim_cur);
	}
	need = (rlim_t)(ncpus > 0 ? ncpus : 1) * 2 + NOFILE_RESERVE;
	if (rl.rlim_cur < need)
		log_warnx("the open-files limit (%llu) is below the %llu this host's %ld CPUs "
		    "may need: raise it (LimitNOFILE= in the unit)", (unsigned long long)rl.rlim_cur,
		    (unsigned long long)need, ncpus);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct perfmapd *d = arg;
	char	 err[1024];

	switch (sig) {
	case SIGTERM:
	case SIGINT:
		log_info("signal %d: stopping", (int)sig);
		event_base_loopbreak(d->base);
		break;
	case SIGUSR2:
		if (recorder_rotate(&d->rec, ROTATE_SIGNAL) == 0)
			log_debug("rotated on SIGUSR2");
		break;
	case SIGHUP:
		daemon_reload(d, NULL, err, sizeof(err));
		break;
	case SIGUSR1:
		log_stats(d, "statistics");
		break;
	}
}

/*
 * The recorder, the index and the capture worker, in the order their
 * dependencies want (see the top of this file).  0, or -1 with ERR set and
 * everything released.
 */
/* Free space under which a failed open of the index is taken for a full disk. */
#define INDEX_OPEN_ROOM	(4ULL << 20)

static int
start(struct perfmapd *d, int argc, char *argv[], char *err, size_t errlen)
{
	struct recorder_listener l;
	struct event_config *cfg;
	int	 tries;

	/* Other users' callbacks one at a time between looks for new events. */
	if ((cfg = event_config_new()) == NULL ||
	    event_config_set_max_dispatch_interval(cfg, NULL, 1, LOOP_PRIO_OTHERS) < 0 ||
	    (d->base = event_base_new_with_config(cfg)) == NULL ||
	    event_base_priority_init(d->base, LOOP_PRIORITIES) < 0)
		fatalx("event_base_new failed");
	event_config_free(cfg);
	if (binaries_init(&d->bins) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (recorder_init(&d->rec, &d->conf, d->conf.state_dir, &d->bins, argc, argv,
	    err, errlen) < 0)
		goto fail_bins;
	d->period_seq = d->rec.seq + 1;		/* the first segment this run opens */
	/*
	 * A disk that filled while the daemon was stopped: the index's -wal
	 * and -shm, gone after a clean stop, cannot be made again.  The
	 * oldest segments make room, as they would for a segment's write.
	 */
	for (tries = 0; index_open(&d->index, d->conf.state_dir, &d->conf, &d->bins, err,
	    errlen) < 0; tries++) {
		struct statvfs sv;
		struct notify none = { 0 };

		/* (SQLite's words for what space would cure; not a lock held, a bad file) */
		if (tries == 8 || (strstr(err, "disk I/O error") == NULL &&
		    strstr(err, "database or disk is full") == NULL) ||
		    statvfs(d->conf.state_dir, &sv) == -1 ||
		    (uint64_t)sv.f_bavail * sv.f_frsize >= INDEX_OPEN_ROOM ||
		    segment_delete_oldest(d->rec.segdir, &none, NULL) != 1)
			goto fail_rec;
		log_warnx("%s: the disk is full: the oldest segment deleted to make room", err);
	}
	if (capture_start(&d->cap, &d->conf, d->conf.state_dir, err, errlen) < 0)
		goto fail_index;
	if (index_attach(d->index, d->base) < 0 || capture_attach(d->cap, d->base) < 0) {
		snprintf(err, errlen, "cannot watch the index and capture workers");
		goto fail_cap;
	}
	index_listener(d->index, &l);
	recorder_listen(&d->rec, &l);
	capture_listener(d->cap, &l);
	recorder_listen(&d->rec, &l);
	if (recorder_start(&d->rec, err, errlen) < 0)
		goto fail_cap;
	return 0;
fail_cap:
	if (capture_stop(d->cap)) {
		/* a thread stuck in a file system already: no exit handler beside it */
		log_warnx("%s", err);
		fflush(NULL);
		_exit(1);
	}
fail_index:
	index_close(d->index);
	goto fail_bins;
fail_rec:
	recorder_stop(&d->rec);
fail_bins:
	binaries_free(&d->bins);
	event_base_free(d->base);
	d->base = NULL;
	return -1;
}

/*
 * The last segment finished, then the workers that heard of it: the
 * index's last rows first, so that a capture worker stuck in a file
 * system (capture_stop gives up on it) cannot keep them from disk.
 */
enum {
	STOP_LEFT	= 1,	/* a capture thread is left running: _exit */
	STOP_UNFINISHED	= 2,	/* a segment is left partial: exit 3 */
};

static int
stop(struct perfmapd *d)
{
	int	 how = 0;

	if (recorder_stop(&d->rec) < 0)
		how |= STOP_UNFINISHED;
	capture_stop_begin(d->cap);	/* its keeps of JIT maps begin meanwhile */
	index_close(d->index);
	if (capture_stop(d->cap))
		how |= STOP_LEFT;
	binaries_free(&d->bins);
	return how;
}

/*
 * Everything main() set up around the loop, in reverse: the query thread
 * first (it waits on the index's writer), then the control socket, the
 * workers (they have events on the base), the loop's own events, the base.
 * Safe after a start that failed at the control socket.
 */
static int
finish(struct perfmapd *d)
{
	size_t	 k;
	int	 how;

	index_settle(d->index);	/* what a waiting query was promised: the loop is done */
	querier_stop(d->querier);
	control_close(d->control);
	how = stop(d);
	for (k = 0; k < sizeof(d->sig_evs) / sizeof(d->sig_evs[0]); k++)
		if (d->sig_evs[k] != NULL)
			event_free(d->sig_evs[k]);
	event_free(d->notify_ev);
	event_base_free(d->base);
	return how;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 'n' },
		{ "debug", no_argument, NULL, 'd' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "socket", required_argument, NULL, 's' },
		{ "probe", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2 };
	struct perfmapd	 d;
	sigset_t	 held;
	struct timeval	 tv;
	char		 err[1024];
	int		 ch, checkonly = 0, probeonly = 0, debug = 0, how, status;
	size_t		 k;

	/*
	 * The signals the loop handles are held from the start of main to
	 * the loop's first turn: one sent while the daemon starts (systemd's
	 * stop of a start that takes long, a script's kill) waits for the
	 * loop and stops it cleanly, where the default action would kill the
	 * daemon mid-start and a SIGINT a shell's background job ignores would
	 * be lost.  A held signal stays pending even while its action is to
	 * ignore it.  The threads start() makes keep them held.
	 */
	sigemptyset(&held);
	for (k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
		sigaddset(&held, sigs[k]);
	pthread_sigmask(SIG_BLOCK, &held, NULL);
	/*
	 * One malloc arena, set before any thread exists.  With glibc's
	 * default of one per thread, what the capture and index threads hand
	 * to the loop spreads the heap over several arenas, and a 10-minute
	 * soak's RSS crept up ~100 kB/min; with one it stays flat.  Those
	 * threads allocate little: no contention to speak of.
	 */
	mallopt(M_ARENA_MAX, 1);
	memset(&d, 0, sizeof(d));
	d.config_file = DEFAULT_CONFIG;
	while ((ch = getopt_long(argc, argv, "fc:ndh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			break;	/* always in the foreground: systemd or a shell runs us */
		case 'c':
			d.config_file = optarg;
			d.config_explicit = 1;
			break;
		case 'n':
			checkonly = 1;
			break;
		case 'P':
			probeonly = 1;
			break;
		case 'd':
			debug = 1;
			break;
		case 'S':
			if (copy_path(d.state_override, sizeof(d.state_override), optarg) < 0)
				return 2;
			break;
		case 's':
			if (copy_path(d.socket_override, sizeof(d.socket_override), optarg) < 0)
				return 2;
			break;
		case 'V':
			printf("perfmapd %s\n", PERFMAPD_VERSION);
			return 0;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	log_init("perfmapd", debug);

	config_defaults(&d.conf);
	if (d.config_explicit || access(d.config_file, F_OK) == 0) {
		if (config_load(&d.conf, d.config_file, err, sizeof(err)) < 0) {
			log_warnx("%s", err);
			return 1;
		}
		d.config_from_file = 1;
	}
	if (d.state_override[0] != '\0')
		snprintf(d.conf.state_dir, sizeof(d.conf.state_dir), "%s", d.state_override);
	if (d.socket_override[0] != '\0')
		snprintf(d.conf.socket_path, sizeof(d.conf.socket_path), "%s", d.socket_override);
	if (config_validate(&d.conf, err, sizeof(err)) < 0) {
		log_warnx("%s: %s", d.config_file, err);
		return 1;
	}
	if (checkonly) {
		if (debug)
			config_dump(&d.conf, stdout);
		fprintf(stderr, "configuration OK\n");
		return 0;
	}
	if (probeonly)
		return probe_only(&d.conf);

	/* Another daemon's socket: refused before anything starts (systemd's own: not asked). */
	if (getenv("LISTEN_FDS") == NULL &&
	    control_socket_busy(d.conf.socket_path, err, sizeof(err))) {
		log_warnx("control socket: %s", err);
		return 1;
	}
	raise_nofile();
	d.start_wall_ns = (uint64_t)walltime_now();
	/*
	 * Nothing the daemon creates is for others (statedir.h); the state
	 * directory's group reads what it must.  Then the directories it
	 * writes, checked before anything is written in them: from here on
	 * the state directory is named by its canonical path.
	 */
	umask(027);
	if (statedir_open(&d.sd, d.conf.state_dir, d.conf.control_group,
	    d.conf.cache_dir[0] == '\0', err, sizeof(err)) < 0 ||
	    (d.conf.cache_dir[0] != '\0' &&
	    statedir_check_dir(d.conf.cache_dir, err, sizeof(err)) < 0)) {
		log_warnx("%s", err);
		return 1;
	}
	snprintf(d.state_dir_conf, sizeof(d.state_dir_conf), "%s", d.conf.state_dir);
	snprintf(d.conf.state_dir, sizeof(d.conf.state_dir), "%s", d.sd.path);
	if (start(&d, argc, argv, err, sizeof(err)) < 0) {
		log_warnx("%s", err);
		statedir_close(&d.sd);
		return 1;
	}
	if (recorder_attach(&d.rec, d.base) < 0)
		fatalx("cannot watch the rings");
	for (k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++) {
		d.sig_evs[k] = evsignal_new(d.base, sigs[k], signal_cb, &d);
		if (d.sig_evs[k] == NULL || event_add(d.sig_evs[k], NULL) == -1)
			fatalx("cannot handle signal %d", sigs[k]);
	}
	signal(SIGPIPE, SIG_IGN);
	/* Status every 5 s, or twice per watchdog period if that is shorter. */
	if (sd_watchdog_enabled(0, &d.watchdog_usec) <= 0)
		d.watchdog_usec = 0;
	tv.tv_sec = 5;
	tv.tv_usec = 0;
	if (d.watchdog_usec != 0 && d.watchdog_usec / 2 < 5000000) {
		tv.tv_sec = (time_t)(d.watchdog_usec / 2 / 1000000);
		tv.tv_usec = (suseconds_t)(d.watchdog_usec / 2 % 1000000);
	}
	d.notify_ev = event_new(d.base, -1, EV_PERSIST, notify_timer_cb, &d);
	if (d.notify_ev == NULL || event_add(d.notify_ev, &tv) == -1)
		fatalx("cannot start the notify timer");

	if ((d.control = control_open(&d, d.conf.socket_path, err, sizeof(err))) == NULL ||
	    querier_start(&d.querier, &d, err, sizeof(err)) < 0) {
		log_warnx("control socket: %s", err);
		if (finish(&d) & STOP_LEFT) {
			fflush(NULL);
			_exit(1);
		}
		statedir_close(&d.sd);
		return 1;
	}
	log_limits(&d);
	if (d.conf.segment_mode == SEGMENT_FLIGHT)
		log_info("recording into memory (flight recorder); snapshots into %s/segments",
		    d.conf.state_dir);
	else
		log_info("recording into %s/segments", d.conf.state_dir);
	sd_notify(0, "READY=1");
	notify_status(&d);
	pthread_sigmask(SIG_UNBLOCK, &held, NULL);	/* what came during the start: the first turn's */
	/* The loop ends at a stop (0) or when libevent fails (-1): a failure, for systemd too. */
	status = event_base_dispatch(d.base) == -1;
	if (status)
		log_warn("the event loop failed: stopping");

	sd_notify(0, "STOPPING=1");
	how = finish(&d);
	if ((how & STOP_UNFINISHED) && status == 0) {
		/* Not 1: a stop was asked, and the unit's Restart=on-failure must not undo it. */
		log_warnx("stop: a segment could not be finished: exit status 3 (its .partial "
		    "file is repaired at the next start)");
		status = 3;
	}
	log_stats(&d, "stopped");
	statedir_close(&d.sd);
	if (how & STOP_LEFT) {
		/* A capture thread still runs: no exit handler (nor a sanitizer's) beside it. */
		fflush(NULL);
		_exit(status);
	}
	return status;
}
