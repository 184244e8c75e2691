/*
 * profile.c - the profile thread: io.perfmap.Profile and the snapshot
 * period's pprof, run by the engine in common/profile/.  A profile of
 * hours reads every segment of the window; it runs here, never on the
 * loop, and not on the capture worker either (binaries of short-lived
 * processes must not wait behind it).  Results go back through the
 * capture's result queue like store's and export's.
 *
 * A client's profile is written to STATE/profiles/ (the newest
 * PROFILES_KEPT stay); the reply names it and perfmapctl copies it to
 * where it was asked to, so the daemon never writes where a client
 * points it.  A snapshot's period goes beside its segment, SEG.pb.gz,
 * for shippers to pick up.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "capture_int.h"
#include "log.h"
#include "profile.h"
#include "proto.h"

static const char *
profile_ext(enum profile_format f)
{
	switch (f) {
	case PROFILE_PERF:
		return ".data";
	case PROFILE_PPROF:
		return ".pb.gz";
	case PROFILE_FOLDED:
		return ".folded";
	default:
		return ".svg";
	}
}

static void
run_profile(struct capture *c, struct job *j)
{
	struct profile_req req;
	struct profile_stats st;
	const char *param = NULL;
	char	 path[PATH_MAX], tmp[PATH_MAX + 16], err[512], stamp[32];
	time_t	 now = time(NULL);
	struct tm tm;
	json_t	*reply;
	int	 fd = -1;

	memset(&req, 0, sizeof(req));
	req.pid = -1;
	if (j->params != NULL && profile_params(j->params, &req, &param, err, sizeof(err)) < 0) {
		log_debug("profile: %s", err);	/* the error names the parameter alone */
		result_post(c, j->req, proto_invalid(param), 1, 1);
		return;
	}
	if (j->params == NULL) {	/* a snapshot's period */
		req.since_ns = j->since_ns;
		req.until_ns = j->until_ns;
		req.format = PROFILE_PPROF;
		snprintf(path, sizeof(path), "%s.pb.gz", j->name);
	} else {
		if (mkdir(c->profiledir, 0750) == -1 && errno != EEXIST) {
			snprintf(err, sizeof(err), "%s: %s", c->profiledir, strerror(errno));
			goto fail;
		}
		gmtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(path, sizeof(path), "%s/perfmapd-profile-%s-%d%s", c->profiledir, stamp,
		    (int)(random() % 100000), profile_ext(req.format));
	}
	req.state_dir = c->statedir;
	req.cache_dir = c->cache.dir;
	/* the open segment's kernel: the running one (set at each segment's start) */
	pthread_mutex_lock(&c->mu);
	if (c->kernel_idlen <= sizeof(req.running_kernel)) {
		memcpy(req.running_kernel, c->kernel_id, c->kernel_idlen);
		req.running_kernel_size = (uint8_t)c->kernel_idlen;
	}
	pthread_mutex_unlock(&c->mu);
	snprintf(tmp, sizeof(tmp), "%s.partial", path);
	if ((fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640)) == -1) {
		snprintf(err, sizeof(err), "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	req.fd = fd;
	if (j->params == NULL) {
		/*
		 * The index lists the segment the snapshot closed once its
		 * writer thread has committed: give it a few seconds.
		 */
		int	 tries;

		/*
		 * The period is its segments, every sample of them: a sample's
		 * time on the wall clock is its segment's reading, and a cut's
		 * on another segment's may differ by a little (the wall clock
		 * slewed meanwhile), so a window by time alone could leave a
		 * sample at the cut in neither period, or in both.
		 */
		req.seq_min = j->seq_first;
		req.seq_max = j->seq_last;
		req.whole = 1;
		for (tries = 0; ; tries++) {
			int	 rc = profile_run(&req, &st, err, sizeof(err));

			if (rc == 0 && st.last_seq >= j->seq_last)
				break;
			if (tries == 50 || (rc < 0 && st.segments > 0))
				goto fail;
			usleep(100 * 1000);
			if (ftruncate(fd, 0) == -1 || lseek(fd, 0, SEEK_SET) == -1) {
				snprintf(err, sizeof(err), "%s: %s", tmp, strerror(errno));
				goto fail;
			}
		}
	} else if (profile_run(&req, &st, err, sizeof(err)) < 0)
		goto fail;
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		fd = -1;
		snprintf(err, sizeof(err), "%s: %s", path, strerror(errno));
		goto fail;
	}
	fd = -1;
	if (j->params == NULL) {
		log_info("profile of the period: %s (%llu samples)", path,
		    (unsigned long long)st.samples);
		return;
	}
	prune_dir(c->profiledir, "perfmapd-profile-", PROFILES_KEPT);
	reply = profile_reply(&req, &st);
	json_object_set_new(reply, "path", json_string(path));
	result_post(c, j->req, reply, 1, 0);
	return;
fail:
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	if (j->params == NULL)
		log_warnx("profile of the period before %s: %s", j->name, err);
	else
		result_post(c, j->req, proto_errorf(PROTO_ERR_FAILED, "%s", err), 1, 1);
}

void *
profile_main(void *arg)
{
	struct capture *c = arg;
	struct job *j;

	for (;;) {
		pthread_mutex_lock(&c->mu);
		while (!c->stop && TAILQ_EMPTY(&c->pjobs))
			pthread_cond_wait(&c->pcv, &c->mu);
		if (c->stop) {
			pthread_mutex_unlock(&c->mu);
			break;
		}
		j = TAILQ_FIRST(&c->pjobs);
		TAILQ_REMOVE(&c->pjobs, j, entry);
		pthread_mutex_unlock(&c->mu);
		run_profile(c, j);
		job_free(j);
	}
	return NULL;
}
