/*
 * svg.c - a profile as a flame graph: one self-contained SVG file (no
 * script, no external font or style), the way FlameGraph draws one.  The
 * x axis is the share of samples, sorted by name, the y axis the stack
 * depth from the process name at the bottom; each frame's <title> gives
 * its name and samples, which browsers show on hover.
 *
 * The folded stacks (folded.c) come sorted, so frames merge in one pass:
 * a frame opens where a line's stack leaves the previous line's and closes
 * (is drawn) where a later line leaves it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"
#include "stacks.h"

#define SVG_WIDTH	1200
#define SVG_PAD		10
#define SVG_FRAME	16
#define SVG_FONT	12
#define SVG_CHAR	7.2	/* width of a character at SVG_FONT, roughly */
#define SVG_MINWIDTH	0.1	/* frames narrower than this (px) are left out */
#define SVG_MAXDEPTH	1024

struct open_frame {
	const char	*name;
	size_t		 len;
	uint64_t	 start;
};

struct svg {
	FILE		*f;
	uint64_t	 total;
	double		 scale;		/* px per sample */
	int		 height;
};

/* Text with XML's five characters escaped; at most MAX bytes, on a UTF-8 boundary. */
static void
put_escaped(FILE *f, const char *s, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++) {
		switch (s[i]) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			fputc(s[i], f);
		}
	}
}

static size_t
utf8_cut(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

static int
ends_with(const char *s, size_t len, const char *suffix)
{
	size_t	 n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

static void
frame_color(const char *name, size_t len, int depth, int *r, int *g, int *b)
{
	uint64_t h = hash_bytes(name, len, HASH_INIT);

	if (depth == 0) {
		*r = 200, *g = 200, *b = 200;
	} else if (depth == 1) {		/* the process */
		*r = 120 + (int)(h % 40), *g = 160 + (int)((h >> 8) % 40), *b = 220;
	} else if (ends_with(name, len, "_[k]")) {
		*r = 230 + (int)(h % 25), *g = 130 + (int)((h >> 8) % 60), *b = (int)((h >> 16) % 40);
	} else if (ends_with(name, len, "_[j]")) {
		*r = 50 + (int)(h % 60), *g = 180 + (int)((h >> 8) % 50), *b = 50 + (int)((h >> 16) % 60);
	} else if (len > 0 && name[0] == '[') {
		*r = 180 + (int)(h % 30), *g = *r, *b = *r;
	} else {
		*r = 205 + (int)(h % 50), *g = (int)((h >> 8) % 230), *b = (int)((h >> 16) % 55);
	}
}

static void
draw(struct svg *v, const char *name, size_t len, int depth, uint64_t start, uint64_t end)
{
	double	 x = SVG_PAD + (double)start * v->scale, w = (double)(end - start) * v->scale;
	int	 y = v->height - SVG_PAD - SVG_FRAME * (depth + 1), r, g, b;
	size_t	 chars;

	if (w < SVG_MINWIDTH)
		return;
	frame_color(name, len, depth, &r, &g, &b);
	fputs("<g><title>", v->f);
	put_escaped(v->f, name, len);
	fprintf(v->f, " (%llu samples, %.2f%%)</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
	    "height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>",
	    (unsigned long long)(end - start), 100.0 * (double)(end - start) / (double)v->total,
	    x, y, w, SVG_FRAME - 1, r, g, b);
	chars = (size_t)(w / SVG_CHAR);
	if (chars >= 3) {
		fprintf(v->f, "<text x=\"%.1f\" y=\"%d\">", x + 3, y + SVG_FRAME - 4);
		if (len <= chars)
			put_escaped(v->f, name, len);
		else {
			put_escaped(v->f, name, utf8_cut(name, len, chars - 2));
			fputs("..", v->f);
		}
		fputs("</text>", v->f);
	}
	fputs("</g>\n", v->f);
}

/* Split LINE at ';' into FR (at most SVG_MAXDEPTH); returns the count. */
static size_t
split(const char *line, struct open_frame *fr)
{
	size_t	 n = 0;
	const char *p = line, *q;

	while (n < SVG_MAXDEPTH) {
		q = strchr(p, ';');
		fr[n].name = p;
		fr[n].len = q != NULL ? (size_t)(q - p) : strlen(p);
		n++;
		if (q == NULL)
			break;
		p = q + 1;
	}
	return n;
}

int
svg_write(struct stacks *s, const struct profile_meta *m, int fd, uint64_t *bytes,
    char *err, size_t errlen)
{
	struct folded	 fo;
	struct open_frame *open = NULL, *cur = NULL;
	struct svg	 v;
	size_t		 nopen = 0, i, maxdepth = 1;
	uint64_t	 x = 0;
	int		 nfd, rc = -1;
	off_t		 end;

	memset(&v, 0, sizeof(v));
	if (folded_build(s, &fo) < 0 ||
	    (open = calloc(SVG_MAXDEPTH, sizeof(*open))) == NULL ||
	    (cur = calloc(SVG_MAXDEPTH, sizeof(*cur))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < fo.n; i++) {
		size_t	 d = split(fo.lines[i], cur);

		if (d > maxdepth)
			maxdepth = d;
	}
	v.total = fo.total > 0 ? fo.total : 1;
	v.scale = (double)(SVG_WIDTH - 2 * SVG_PAD) / (double)v.total;
	v.height = (int)(maxdepth + 1) * SVG_FRAME + 3 * SVG_FRAME + 2 * SVG_PAD;
	if ((nfd = dup(fd)) == -1 || (v.f = fdopen(nfd, "w")) == NULL) {
		snprintf(err, errlen, "writing the profile: %s", strerror(errno));
		if (nfd >= 0)
			close(nfd);
		goto out;
	}
	fprintf(v.f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
	    "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	    "viewBox=\"0 0 %d %d\">\n"
	    "<style>text { font-family: monospace; font-size: %dpx; fill: rgb(0,0,0); }\n"
	    "g:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
	    ".title { font-size: %dpx; text-anchor: middle; }</style>\n"
	    "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"rgb(248,248,248)\"/>\n",
	    SVG_WIDTH, v.height, SVG_WIDTH, v.height, SVG_FONT, SVG_FONT + 5, SVG_WIDTH, v.height);
	fprintf(v.f, "<text class=\"title\" x=\"%d\" y=\"%d\">Flame graph: ", SVG_WIDTH / 2,
	    SVG_PAD + SVG_FRAME);
	if (m->hostname != NULL) {
		put_escaped(v.f, m->hostname, strlen(m->hostname));
		fputs(", ", v.f);
	}
	put_escaped(v.f, m->comment, strlen(m->comment));
	fprintf(v.f, ", %llu samples of %s</text>\n", (unsigned long long)fo.total,
	    m->event != NULL ? m->event : "cpu");
	for (i = 0; i < fo.n; i++) {
		size_t	 d = split(fo.lines[i], cur), k = 0;

		while (k < nopen && k < d && open[k].len == cur[k].len &&
		    memcmp(open[k].name, cur[k].name, cur[k].len) == 0)
			k++;
		while (nopen > k) {
			nopen--;
			draw(&v, open[nopen].name, open[nopen].len, (int)nopen + 1,
			    open[nopen].start, x);
		}
		for (; nopen < d; nopen++) {
			open[nopen] = cur[nopen];
			open[nopen].start = x;
		}
		x += fo.counts[i];
	}
	while (nopen > 0) {
		nopen--;
		draw(&v, open[nopen].name, open[nopen].len, (int)nopen + 1, open[nopen].start, x);
	}
	draw(&v, "all", 3, 0, 0, fo.total > 0 ? fo.total : 1);
	fputs("</svg>\n", v.f);
	if (fflush(v.f) != 0 || ferror(v.f)) {
		snprintf(err, errlen, "writing the profile: %s", strerror(errno));
		fclose(v.f);
		goto out;
	}
	if (fclose(v.f) != 0) {
		snprintf(err, errlen, "writing the profile: %s", strerror(errno));
		goto out;
	}
	end = lseek(fd, 0, SEEK_END);
	*bytes = end > 0 ? (uint64_t)end : 0;
	rc = 0;
out:
	free(open);
	free(cur);
	folded_free(&fo);
	return rc;
}
