/*
 * querier.h - the index queries of the control socket (lookup, history,
 * buildid, segments) answered off the event loop, by a thread of their
 * own with its own read-only connection to the index.
 */
#ifndef PERFMAPD_QUERIER_H
#define PERFMAPD_QUERIER_H

#include <stddef.h>

#include <jansson.h>

struct perfmapd;
struct querier;
struct control_client;

/*
 * Waiting queries: root's and the control group's, and the other users'
 * (public_queries), each class on its own, so that no other user's
 * queries can keep root's out; and of each other user, at most
 * QUERIER_MAX_USER_JOBS (a job outlives the client that left it).
 */
#define QUERIER_MAX_JOBS	64
#define QUERIER_MAX_USER_JOBS	8
#define QUERIER_MAX_MS		2000	/* one query's SQLite time, at most */
/*
 * Rows in a reply's list at most (index_reader_set_limits): 10,000
 * objects are 3-4 MB of JSON, within what a client may leave unread
 * (CONTROL_MAX_OUTPUT), where one build-id copied to a million paths by
 * a user made a reply of hundreds of MB, built and serialized whole.
 */
#define QUERIER_MAX_ROWS	10000
/*
 * A reply's rows as JSON at most (index_reader_set_limits), within
 * CONTROL_MAX_OUTPUT: 10,000 rows of ordinary paths are 3-4 MB, but a
 * path can be 4 KB and each control byte in it six bytes of JSON, so
 * 10,000 rows of a user's long paths made a reply of some 250 MB, and
 * buildid's two lists twice that.
 */
#define QUERIER_MAX_BYTES	(4u << 20)

/* Start the thread (D's index, control socket and event base must exist). */
int	querier_start(struct querier **, struct perfmapd *d, char *err, size_t errlen);
/* Stop it; queries not answered yet are dropped. */
void	querier_stop(struct querier *);

/*
 * Queue METHOD(PARAMS) for client C (root and the control group, PRIV,
 * before the others); FIX, if not NULL, amends the answer on the loop
 * before it goes.  0: the reply comes later (the connection stays busy
 * until then); -1: its class's queue, or its user's share of it, is full,
 * or PARAMS are bad (query_check: checked before they are copied for the
 * thread): *ERR is the reply to send now.
 */
int	querier_submit(struct querier *, struct control_client *c, const char *method,
	    json_t *params, int priv, void (*fix)(struct perfmapd *, json_t *reply),
	    json_t **err);

#endif
