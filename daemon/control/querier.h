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

#define QUERIER_MAX_JOBS	64	/* waiting queries, all clients together */
#define QUERIER_MAX_MS		2000	/* one query's SQLite time, at most */

/* Start the thread (D's index, control socket and event base must exist). */
int	querier_start(struct querier **, struct perfmapd *d, char *err, size_t errlen);
/* Stop it; queries not answered yet are dropped. */
void	querier_stop(struct querier *);

/*
 * Queue METHOD(PARAMS) for client C (root and the control group, PRIV,
 * before the others).  0: the reply comes later (the connection stays busy
 * until then); -1: the queue is full, *ERR is the reply to send now.
 */
int	querier_submit(struct querier *, struct control_client *c, const char *method,
	    json_t *params, int priv, json_t **err);

#endif
