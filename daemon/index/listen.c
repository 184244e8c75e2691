/*
 * listen.c - the index's side of what the recorder publishes
 * (record/notify.h), and its commit timer on the loop.  Each call turns
 * into rows in memory (table.c); nothing here waits for SQLite.
 */
#include <stdint.h>

#include <event2/event.h>

#include "index_int.h"
#include "record.h"
#include "record/kernel.h"
#include "record/notify.h"
#include "record/segment.h"

static void
segment_opened_cb(void *arg, const struct segment *seg, const struct kinfo *k)
{
	struct index *ix = arg;

	index_segment_open(ix, seg->seq, seg->path, seg->wall_start_ns);
	index_scan_kernel(ix, k->id, k->idsize, "/proc/modules", "/sys/module",
	    seg->wall_start_ns);
}

static void
segment_closed_cb(void *arg, const struct segment *seg, uint64_t size)
{
	index_segment_close(arg, seg->seq, seg->wall_start_ns + (seg->t_end - seg->t_start),
	    size, seg->samples, seg->lost, seg->records);
}

static void
segment_deleted_cb(void *arg, const char *name)
{
	index_segment_deleted(arg, name);
}

static void
binary_gone_cb(void *arg, const struct binary *b)
{
	table_forget(arg, b);
}

static void
mapped_cb(void *arg, const struct binary *b, uint32_t pid, uint64_t wall_ns, uint8_t source)
{
	table_sight(arg, b, source, pid, wall_ns, 1);
}

static void
seen_cb(void *arg, const struct binary *b, uint32_t pid, uint64_t wall_ns)
{
	table_sight(arg, b, BID_NONE, pid, wall_ns, 0);
}

static void
unresolved_cb(void *arg, const char *path, int cause, uint64_t wall_ns)
{
	index_add_unresolved(arg, path, cause, wall_ns);
}

static void
tick_cb(void *arg)
{
	index_tick(arg);
}

void
index_listener(struct index *ix, struct recorder_listener *l)
{
	*l = (struct recorder_listener){
		.segment_opened = segment_opened_cb,
		.segment_closed = segment_closed_cb,
		.segment_deleted = segment_deleted_cb,
		.binary_gone = binary_gone_cb,
		.mapped = mapped_cb,
		.seen = seen_cb,
		.unresolved = unresolved_cb,
		.tick = tick_cb,
		.arg = ix,
	};
}

static void
index_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	index_tick(arg);
}

int
index_attach(struct index *ix, struct event_base *base)
{
	ix->base = base;
	return index_retime(ix);
}

int
index_retime(struct index *ix)
{
	struct timeval tv;
	uint64_t ms = ix->conf->index_commit_ms;

	/*
	 * The recorder's drain timer ticks the index (index_listener): a
	 * timer of its own only for a commit_interval shorter than that.
	 */
	if (ms >= ix->conf->drain_interval_ms) {
		if (ix->tick_ev != NULL)
			event_free(ix->tick_ev);
		ix->tick_ev = NULL;
		return 0;
	}
	if (ix->tick_ev != NULL && ix->tick_ms == ms)
		return 0;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	if (ix->tick_ev == NULL &&
	    (ix->tick_ev = event_new(ix->base, -1, EV_PERSIST, index_tick_cb, ix)) == NULL)
		return -1;
	if (event_add(ix->tick_ev, &tv) == -1)
		return -1;
	ix->tick_ms = ms;
	return 0;
}
