/*
 * output.c - perfmapctl's text output helpers: sizes people read, aligned
 * key/value lines, and tables whose columns are as wide as their widest
 * cell (never tabs).  Cells come from the daemon and the index, that is
 * from paths anyone could have named: control characters, and those
 * that reorder or hide text, are shown escaped (\xHH), so a file name
 * cannot break a table, talk to the terminal or pass for another.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "client.h"

/* A string field of a reply, "-" if absent. */
const char *
client_str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "-";
}

static char *escape(const char *);

/*
 * client_str with control characters escaped as tables show them: for a
 * field that comes from a path.  Valid until the fourth call after.
 */
const char *
client_text(json_t *o, const char *k)
{
	return client_escaped(client_str(o, k));
}

/* An integer field of a reply, 0 if absent. */
long long
client_num(json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

const char *
client_fmt_size(char *buf, size_t len, long long bytes)
{
	static const char units[] = "BKMGTP";
	double	 v = bytes < 0 ? 0 : (double)bytes;
	int	 u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%lld B", bytes);
	else
		snprintf(buf, len, "%.1f %ciB", v, units[u]);
	return buf;
}

void
client_print_size(FILE *f, long long bytes)
{
	char	 buf[32];

	fputs(client_fmt_size(buf, sizeof(buf), bytes), f);
}

/*
 * The bytes at U that must not reach a terminal as they are: a control
 * character (C0, DEL, or a C1, U+0080 .. U+009F, which some terminals
 * obey as ESC sequences), a character that reorders or hides text (the
 * bidirectional overrides and isolates U+202A .. U+202E, U+2066 .. U+2069,
 * the zero-width and direction marks U+200B .. U+200F, the line and
 * paragraph separators U+2028, U+2029, U+FEFF), or the backslash (else
 * a name holding "\x1b" would read as one holding ESC).  Their count, 0
 * if none.
 */
static size_t
unsafe_len(const unsigned char *u)
{
	if (u[0] < 0x20 || u[0] == 0x7f || u[0] == '\\')
		return 1;
	if (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f)
		return 2;
	if (u[0] == 0xe2 && u[1] == 0x80 &&
	    ((u[2] >= 0x8b && u[2] <= 0x8f) || (u[2] >= 0xa8 && u[2] <= 0xae)))
		return 3;
	if (u[0] == 0xe2 && u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9)
		return 3;
	if (u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf)
		return 3;
	return 0;
}

/* S with those bytes as \xHH (a backslash as \\); malloc'd (NULL: out of memory). */
static char *
escape(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t	 n = 0, i, k;
	char	*out, *p;

	for (i = 0; u[i] != '\0'; i += k ? k : 1)
		n += (k = unsafe_len(u + i)) ? 4 * k : 1;
	if ((out = p = malloc(n + 1)) == NULL)
		return NULL;
	for (i = 0; u[i] != '\0'; i += k ? k : 1) {
		if ((k = unsafe_len(u + i)) == 0)
			*p++ = (char)u[i];
		else if (u[i] == '\\')
			p += sprintf(p, "\\\\");
		else
			for (size_t j = 0; j < k; j++)
				p += sprintf(p, "\\x%02x", u[i + j]);
	}
	*p = '\0';
	return out;
}

size_t
client_json_flags(void)
{
	return isatty(STDOUT_FILENO) ? JSON_ENSURE_ASCII : 0;
}

const char *
client_escaped(const char *s)
{
	static char *kept[4];
	static unsigned next;
	char	*e;

	if ((e = escape(s)) == NULL)
		return "?";
	free(kept[next % 4]);
	kept[next++ % 4] = e;
	return e;
}

void
table_init(struct table *t, const char *align)
{
	memset(t, 0, sizeof(*t));
	t->align = align;
	t->ncols = strlen(align);
}

void
table_add(struct table *t, const char *fmt, ...)
{
	char	*raw = NULL, *cell, **nc;
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(&raw, fmt, ap);
	va_end(ap);
	if (n < 0 || (cell = escape(raw)) == NULL) {
		free(n < 0 ? NULL : raw);
		t->oom = 1;
		cell = NULL;
	} else
		free(raw);
	if (t->ncells == t->cap) {
		size_t	 ncap = t->cap ? t->cap * 2 : 64;

		if ((nc = reallocarray(t->cells, ncap, sizeof(*nc))) == NULL) {
			free(cell);
			t->oom = 1;
			return;
		}
		t->cells = nc;
		t->cap = ncap;
	}
	t->cells[t->ncells++] = cell;
}

/* Two spaces between columns; the last one is not padded. */
void
table_print(struct table *t, FILE *f, const char *indent)
{
	size_t	*w, i, c;

	if (t->oom || (w = calloc(t->ncols, sizeof(*w))) == NULL) {
		fprintf(f, "(out of memory)\n");
		goto out;
	}
	for (i = 0; i < t->ncells; i++)
		if (t->cells[i] != NULL && strlen(t->cells[i]) > w[i % t->ncols])
			w[i % t->ncols] = strlen(t->cells[i]);
	for (i = 0; i + t->ncols <= t->ncells; i += t->ncols) {
		fputs(indent, f);
		for (c = 0; c < t->ncols; c++) {
			const char *s = t->cells[i + c] ? t->cells[i + c] : "";
			int	 last = c + 1 == t->ncols;

			if (t->align[c] == 'r')
				fprintf(f, "%*s", (int)w[c], s);
			else
				fprintf(f, "%-*s", last ? 0 : (int)w[c], s);
			fputs(last ? "\n" : "  ", f);
		}
	}
	free(w);
out:
	for (i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
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


void
client_print_table(FILE *f, const char *indent, const struct column *cols, size_t ncols,
    json_t *rows)
{
	struct table t;
	char	 align[32], buf[32];
	json_t	*o, *v;
	size_t	 i, c;

	if (ncols >= sizeof(align))
		ncols = sizeof(align) - 1;
	for (c = 0; c < ncols; c++)
		align[c] = cols[c].align;
	align[ncols] = '\0';
	table_init(&t, align);
	for (c = 0; c < ncols; c++)
		table_add(&t, "%s", cols[c].head);
	json_array_foreach(rows, i, o)
		for (c = 0; c < ncols; c++) {
			v = json_object_get(o, cols[c].key);
			if (json_is_string(v) && cols[c].kind != COL_NUM && cols[c].kind != COL_SIZE)
				table_add(&t, "%s", json_string_value(v));
			else if (json_is_integer(v) && cols[c].kind == COL_SIZE)
				table_add(&t, "%s", client_fmt_size(buf, sizeof(buf),
				    (long long)json_integer_value(v)));
			else if (json_is_integer(v) && cols[c].kind != COL_STR)
				table_add(&t, "%lld", (long long)json_integer_value(v));
			else
				table_add(&t, "-");
		}
	table_print(&t, f, indent);
}

/*
 * A new file beside DEST, ".DEST.XXXXXX", its path in TMP: mode 0600
 * (a profile or an export may hold the kernel's addresses), hidden until
 * it is whole, then renamed over DEST.  Never through a symlink at DEST,
 * and never an old file's mode.  -1 with errno.
 */
int
client_open_temp(const char *dest, char *tmp, size_t len)
{
	const char *slash = strrchr(dest, '/');
	int	 fd, n;

	if (slash != NULL)
		n = snprintf(tmp, len, "%.*s.%s.XXXXXX", (int)(slash - dest + 1), dest,
		    slash + 1);
	else
		n = snprintf(tmp, len, ".%s.XXXXXX", dest);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1)
		return -1;
	if (fchmod(fd, 0600) == -1) {
		close(fd);
		unlink(tmp);
		return -1;
	}
	return fd;
}

/* Copy IN to OUT from their current offsets; -1 with errno on error. */
int
client_copy_fd(int in, int out)
{
	char	 buf[65536];
	ssize_t	 n;

	while ((n = read(in, buf, sizeof(buf))) != 0) {
		char	*p = buf;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		while (n > 0) {
			ssize_t	 w = write(out, p, (size_t)n);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -1;
			p += w;
			n -= w;
		}
	}
	return 0;
}
