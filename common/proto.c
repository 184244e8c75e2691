/*
 * proto.c - Varlink framing and message helpers; see proto.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

long
proto_parse(const char *buf, size_t len, size_t max, json_t **out, char *err,
    size_t errlen)
{
	const char	*nul;
	json_error_t	 je;
	json_t		*j;
	size_t		 n;

	*out = NULL;
	if (len == 0)
		return 0;
	n = len < max + 1 ? len : max + 1;
	if ((nul = memchr(buf, '\0', n)) == NULL) {
		if (len > max) {
			snprintf(err, errlen, "message longer than %zu bytes", max);
			return -1;
		}
		return 0;
	}
	j = json_loadb(buf, (size_t)(nul - buf), JSON_REJECT_DUPLICATES, &je);
	if (j == NULL) {
		snprintf(err, errlen, "invalid JSON at %d: %s", je.position, je.text);
		return -1;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		snprintf(err, errlen, "a message must be a JSON object");
		return -1;
	}
	*out = j;
	return (long)(nul - buf) + 1;
}

char *
proto_serialize(const json_t *msg, size_t *len)
{
	char	*s = json_dumps(msg, JSON_COMPACT);
	size_t	 n;

	if (s == NULL)
		return NULL;
	n = strlen(s);
	/* json_dumps gives n + 1 bytes: the NUL terminator is the frame end */
	*len = n + 1;
	return s;
}

json_t *
proto_call(const char *method, json_t *params, int more)
{
	json_t	*m = json_object();

	json_object_set_new(m, "method", json_string(method));
	json_object_set_new(m, "parameters", params ? params : json_object());
	if (more)
		json_object_set_new(m, "more", json_true());
	return m;
}

json_t *
proto_reply(json_t *params, int continues)
{
	json_t	*m = json_object();

	json_object_set_new(m, "parameters", params ? params : json_object());
	if (continues)
		json_object_set_new(m, "continues", json_true());
	return m;
}

json_t *
proto_error(const char *error, json_t *params)
{
	json_t	*m = json_object();

	json_object_set_new(m, "error", json_string(error));
	json_object_set_new(m, "parameters", params ? params : json_object());
	return m;
}

json_t *
proto_errorf(const char *error, const char *fmt, ...)
{
	char	 msg[1024];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return proto_error(error, json_pack("{s:s}", "message", msg));
}

int
proto_check_call(const json_t *msg, const char **method, json_t **params, int *more,
    char *err, size_t errlen)
{
	json_t	*m = json_object_get(msg, "method");
	json_t	*p = json_object_get(msg, "parameters");
	json_t	*mo = json_object_get(msg, "more");

	if (!json_is_string(m) || json_string_length(m) == 0) {
		snprintf(err, errlen, "\"method\" must be a non-empty string");
		return -1;
	}
	if (p != NULL && !json_is_object(p)) {
		snprintf(err, errlen, "\"parameters\" must be an object");
		return -1;
	}
	if (mo != NULL && !json_is_boolean(mo)) {
		snprintf(err, errlen, "\"more\" must be a boolean");
		return -1;
	}
	*method = json_string_value(m);
	*params = p;
	*more = mo != NULL && json_is_true(mo);
	return 0;
}
