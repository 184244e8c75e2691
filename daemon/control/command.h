/*
 * command.h - the control command table.  One command per file (cmd-NAME.c)
 * exporting `const struct control_command cmd_NAME`; command.c lists them.  The
 * dispatcher (control.c) checks privileges once, from the entry's flags,
 * before the handler runs: handlers never check them again.
 */
#ifndef PERFMAPD_COMMAND_H
#define PERFMAPD_COMMAND_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct perfmapd;
struct control_client;

#define CMD_PRIV	0x01	/* root or the control group only */
#define CMD_PUBLIC	0x02	/* anyone who may connect (ping, GetInfo) */
				/* neither: read-only, public if public_queries = yes */

#define CMD_MAXPARAMS	5

struct control_command;

struct control_request {
	const struct control_command	*entry;
	struct perfmapd		*d;
	struct control_client	*client;
	json_t			*params;	/* always an object */
	int			 more;		/* the caller accepts several replies */
	int			 oneway;	/* the caller wants no reply (it is dropped) */
};

struct control_command {
	const char	*name;		/* perfmapctl command: "snapshot" */
	const char	*method;	/* "io.perfmap.Snapshot" */
	const char	*usage;		/* "snapshot [--store]" */
	const char	*help;		/* one line */
	int		 flags;
	/* The parameters it takes, as io.perfmap.varlink declares them; others are refused. */
	const char	*params[CMD_MAXPARAMS + 1];
	/* Returns the final message, or NULL when the replies come later (the worker). */
	json_t		*(*handler)(struct control_request *);
};

extern const struct control_command *const control_commands[];
extern const size_t control_ncommands;

const struct control_command *control_find_method(const char *method);

/* The handler of the index queries (lookup, history, buildid, segments). */
json_t	*control_query(struct control_request *);
/*
 * The same; FIX(d, reply) runs on the loop when the answer is there, before
 * it is sent (what only the daemon knows: the open segment's figures).
 */
json_t	*control_query_then(struct control_request *,
	    void (*fix)(struct perfmapd *, json_t *reply));

/* Parameter helpers: -1 and *ERR (a proto_error message) on a wrong type. */
int	control_param_string(struct control_request *, const char *key, int required,
	    const char **out, json_t **err);
int	control_param_bool(struct control_request *, const char *key, int *out, json_t **err);
/*
 * The segment selection that store and export share (cmd-store.c): a
 * "segments" array of names, or "since" (a time as users type it), or
 * neither.
 */
int	control_segment_params(struct control_request *, json_t **segments, int64_t *since_ns,
	    json_t **err);

#endif
