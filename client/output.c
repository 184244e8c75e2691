/*
 * output.c - perfmapctl's text output helpers: sizes people read, aligned
 * key/value lines.
 */
#include <stdarg.h>
#include <stdio.h>

#include "client.h"

/* A string field of a reply, "-" if absent. */
const char *
client_str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "-";
}

/* An integer field of a reply, 0 if absent. */
long long
client_num(json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

void
client_print_size(FILE *f, long long bytes)
{
	static const char units[] = "BKMGTP";
	double	 v = bytes < 0 ? 0 : (double)bytes;
	int	 u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		fprintf(f, "%lld B", bytes);
	else
		fprintf(f, "%.1f %ciB", v, units[u]);
}

void
client_print_kv(FILE *f, const char *key, const char *fmt, ...)
{
	va_list	 ap;

	fprintf(f, "%-18s ", key);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

