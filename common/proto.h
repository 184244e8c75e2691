/*
 * proto.h - the control protocol: the Varlink wire format.
 *
 *   call:   {"method": "io.perfmap.Snapshot", "parameters": {...},
 *            "more": true?, "oneway": true?, "upgrade": true?}\0
 *   reply:  {"parameters": {...}, "continues": true?}\0
 *   error:  {"error": "io.perfmap.NoSuchSegment", "parameters": {...}}\0
 *
 * Messages are JSON objects terminated by a NUL byte on a SOCK_STREAM unix
 * socket.  A call with "more": true may get several replies, each but the
 * last with "continues": true (store progress, long listings); a call with
 * "oneway": true gets none.  "parameters" absent or null means {}, as the
 * reference clients send it.  The interfaces themselves are described in
 * daemon/control/io.perfmap.varlink.
 * This file only frames and parses; it knows nothing of sockets or events.
 */
#ifndef PERFMAPD_PROTO_H
#define PERFMAPD_PROTO_H

#include <stddef.h>
#include <jansson.h>

#define PROTO_MAX_MESSAGE	(256 * 1024)	/* a call larger than this is refused */
#define PROTO_INTERFACE		"io.perfmap"

/*
 * Typed errors.  Those of org.varlink.service carry exactly their standard
 * parameter ({"parameter"}, {"method"}, {"interface"}); perfmapd's own
 * carry {"message"} (io.perfmap.varlink).
 */
#define PROTO_ERR_INVALID	"org.varlink.service.InvalidParameter"
#define PROTO_ERR_NOMETHOD	"org.varlink.service.MethodNotFound"
#define PROTO_ERR_NOTIMPL	"org.varlink.service.MethodNotImplemented"
#define PROTO_ERR_NOIFACE	"org.varlink.service.InterfaceNotFound"
#define PROTO_ERR_MORE		"org.varlink.service.ExpectedMore"
#define PROTO_ERR_DENIED	"io.perfmap.PermissionDenied"
#define PROTO_ERR_PROTOCOL	"io.perfmap.ProtocolError"
#define PROTO_ERR_FAILED	"io.perfmap.Failed"
#define PROTO_ERR_NOSEGMENT	"io.perfmap.NoSuchSegment"
#define PROTO_ERR_NOTFOUND	"io.perfmap.NotFound"
#define PROTO_ERR_BUSY		"io.perfmap.Busy"

/*
 * Take one message off the front of BUF (LEN bytes).  Returns the number of
 * bytes consumed (message + NUL) with *OUT set, 0 if no NUL yet (and LEN is
 * still under MAX), or -1 with ERR set: too large, not JSON, not an object.
 */
long	proto_parse(const char *buf, size_t len, size_t max, json_t **out,
	    char *err, size_t errlen);

/* Serialize MSG compactly with the trailing NUL; free() the result. */
char	*proto_serialize(const json_t *msg, size_t *len);

/* Build messages (steal PARAMS; NULL means {}). */
json_t	*proto_call(const char *method, json_t *params, int more);
json_t	*proto_reply(json_t *params, int continues);
json_t	*proto_error(const char *error, json_t *params);
json_t	*proto_errorf(const char *error, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));	/* parameters: {"message": ...} */

/*
 * S as a JSON string.  JSON text is UTF-8 and a path is bytes: a byte that
 * is not part of a valid UTF-8 sequence is sent as U+FFFD (where
 * json_string() would give NULL and the key would go missing).  NULL only
 * when out of memory.
 */
json_t	*proto_string(const char *s);

/* org.varlink.service.InvalidParameter for KEY. */
json_t	*proto_invalid(const char *key);

struct proto_call {
	const char	*method;
	json_t		*params;	/* borrowed; NULL when absent or null */
	int		 more, oneway, upgrade;
};

/*
 * Validate a call: method a non-empty string, parameters absent, null or
 * an object, more, oneway and upgrade absent or booleans.  Returns 0 or
 * -1 with ERR set.
 */
int	proto_check_call(const json_t *msg, struct proto_call *, char *err, size_t errlen);
/* Does V hold a string with a NUL in it (\u0000: valid JSON, not a C string)? */
int	proto_has_nul(const json_t *);

#endif
