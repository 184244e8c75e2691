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
	/* \u0000 is valid JSON: such a string is refused where it is used (proto_has_nul) */
	j = json_loadb(buf, (size_t)(nul - buf), JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
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
	return proto_error(error, json_pack("{s:o}", "message", proto_string(msg)));
}

/*
 * The length of the valid UTF-8 sequence at P (LEFT bytes there), or 0
 * (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
 */
static size_t
utf8_len(const unsigned char *p, size_t left)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t	 n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;
		else if (p[0] == 0xed)
			hi = 0x9f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		if (p[0] == 0xf0)
			lo = 0x90;
		else if (p[0] == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (left < n || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

json_t *
proto_string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t	 len, i, n, o = 0;
	json_t	*j;
	char	*buf;

	if ((j = json_string(s)) != NULL)
		return j;
	len = strlen(s);
	if ((buf = malloc(3 * len + 1)) == NULL)
		return NULL;
	for (i = 0; i < len; i += n)
		if ((n = utf8_len(p + i, len - i)) > 0) {
			memcpy(buf + o, p + i, n);
			o += n;
		} else {
			memcpy(buf + o, "\xef\xbf\xbd", 3);	/* U+FFFD */
			o += 3;
			n = 1;
		}
	buf[o] = '\0';
	j = json_string(buf);
	free(buf);
	return j;
}

json_t *
proto_invalid(const char *key)
{
	return proto_error(PROTO_ERR_INVALID, json_pack("{s:s}", "parameter", key));
}

static int
flag(const json_t *msg, const char *key, int *out, char *err, size_t errlen)
{
	json_t	*v = json_object_get(msg, key);

	if (v != NULL && !json_is_boolean(v)) {
		snprintf(err, errlen, "\"%s\" must be a boolean", key);
		return -1;
	}
	*out = v != NULL && json_is_true(v);
	return 0;
}

int
proto_has_nul(const json_t *v)
{
	const char *key;
	json_t	*e;
	size_t	 i;

	switch (json_typeof(v)) {
	case JSON_STRING:
		return strlen(json_string_value(v)) != json_string_length(v);
	case JSON_ARRAY:
		json_array_foreach(v, i, e)
			if (proto_has_nul(e))
				return 1;
		return 0;
	case JSON_OBJECT:
		json_object_foreach((json_t *)v, key, e)
			if (proto_has_nul(e))
				return 1;
		return 0;
	default:
		return 0;
	}
}

int
proto_check_call(const json_t *msg, struct proto_call *call, char *err, size_t errlen)
{
	json_t	*m = json_object_get(msg, "method");
	json_t	*p = json_object_get(msg, "parameters");

	memset(call, 0, sizeof(*call));
	if (!json_is_string(m) || json_string_length(m) == 0) {
		snprintf(err, errlen, "\"method\" must be a non-empty string");
		return -1;
	}
	if (p != NULL && !json_is_object(p) && !json_is_null(p)) {
		snprintf(err, errlen, "\"parameters\" must be an object");
		return -1;
	}
	if (flag(msg, "more", &call->more, err, errlen) < 0 ||
	    flag(msg, "oneway", &call->oneway, err, errlen) < 0 ||
	    flag(msg, "upgrade", &call->upgrade, err, errlen) < 0)
		return -1;
	call->method = json_string_value(m);
	call->params = json_is_object(p) ? p : NULL;
	return 0;
}
