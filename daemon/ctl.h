/*
 * ctl.h - the control command table.  One command per file (ctl-NAME.c)
 * exporting `const struct ctl_entry ctl_NAME_entry`; ctl.c lists them.  The
 * dispatcher (control.c) checks privileges once, from the entry's flags,
 * before the handler runs: handlers never check them again.
 */
#ifndef PERFMAPD_CTL_H
#define PERFMAPD_CTL_H

#include <stddef.h>
#include <jansson.h>

struct perfmapd;
struct control_client;

#define CTL_PRIV	0x01	/* root or the control group only */
#define CTL_PUBLIC	0x02	/* anyone who may connect (ping, GetInfo) */
				/* neither: read-only, public if public_queries = yes */

struct ctl_entry;

struct ctl_request {
	const struct ctl_entry	*entry;
	struct perfmapd		*d;
	struct control_client	*client;
	json_t			*params;	/* always an object */
	int			 more;		/* the caller accepts several replies */
};

struct ctl_entry {
	const char	*name;		/* perfmapctl command: "snapshot" */
	const char	*method;	/* "io.perfmap.Snapshot" */
	const char	*usage;		/* "snapshot [--store]" */
	const char	*help;		/* one line */
	int		 flags;
	/* Returns the final message (proto_reply or proto_error). */
	json_t		*(*handler)(struct ctl_request *);
};

extern const struct ctl_entry *const ctl_table[];
extern const size_t ctl_ntable;

const struct ctl_entry *ctl_find_method(const char *method);

/* The handler of the index queries (lookup, history, buildid, segments). */
json_t	*ctl_query(struct ctl_request *);

/* Parameter helpers: -1 and *ERR (a proto_error message) on a wrong type. */
int	ctl_param_string(struct ctl_request *, const char *key, int required,
	    const char **out, json_t **err);
int	ctl_param_bool(struct ctl_request *, const char *key, int *out, json_t **err);

#endif
