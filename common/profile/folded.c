/*
 * folded.c - a profile as folded stacks, FlameGraph's collapsed format:
 *
 *	comm;outermost;...;innermost COUNT
 *
 * one line per distinct stack, sorted, COUNT the samples.  The stacks of
 * several processes with the same comm and the same frames fold into one
 * line, so the counts add up to the pprof profile's samples.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"
#include "stacks.h"

struct fentry {
	char		*line;
	uint64_t	 count;
	uint64_t	 hash;
};

static int
entry_cmp(const void *x, const void *y)
{
	const struct fentry *a = x, *b = y;

	return strcmp(a->line, b->line);
}

void
folded_free(struct folded *f)
{
	size_t	 i;

	for (i = 0; i < f->n; i++)
		free(f->lines[i]);
	free(f->lines);
	free(f->counts);
	memset(f, 0, sizeof(*f));
}

/* SB's slot in TAB (CAP of them): its line's, or the empty one where it goes; *H its hash. */
static size_t
folded_find(const struct fentry *tab, size_t cap, const struct sbuf *sb, uint64_t *h)
{
	size_t	 j;

	*h = hash_bytes(sb->p, sb->len, HASH_INIT);
	for (j = *h & (cap - 1); tab[j].line != NULL; j = (j + 1) & (cap - 1))
		if (tab[j].hash == *h && strcmp(tab[j].line, sb->p) == 0)
			break;
	return j;
}

int
folded_build(struct stacks *s, struct folded *f)
{
	struct fentry *tab = NULL;
	struct sbuf sb = { 0 };
	size_t	 cap = 1024, n = 0, i, j, bytes = 0;
	int	 rc = -1;

	memset(f, 0, sizeof(*f));
	while (cap < s->nstk * 2)
		cap *= 2;
	if ((tab = calloc(cap, sizeof(*tab))) == NULL)
		return -1;
	for (i = 0; i < s->stkcap; i++) {
		struct stack *k;

		for (k = s->stk[i]; k != NULL; k = k->hnext) {
			uint64_t h;
			uint32_t l;

			sb.len = 0;
			stacks_name_text(&sb, s->str[k->comm]);
			for (l = k->n; l > 0; l--) {
				sbuf_add(&sb, ";", 1);
				stacks_loc_text(s, k->locs[l - 1], &sb);
			}
			if (sb.oom)
				goto out;
			j = folded_find(tab, cap, &sb, &h);
			/* past max_folded, a new line is the "[truncated]" one */
			if (tab[j].line == NULL && bytes + sb.len + 1 > s->max_folded) {
				sb.len = 0;
				sbuf_add(&sb, "[truncated]", 11);
				if (sb.oom)
					goto out;
				j = folded_find(tab, cap, &sb, &h);
			}
			if (tab[j].line == NULL) {
				if ((tab[j].line = strdup(sb.p)) == NULL)
					goto out;
				tab[j].hash = h;
				bytes += sb.len + 1;
				n++;
			}
			tab[j].count += k->count;
			f->total += k->count;
		}
	}
	/* compact and sort */
	for (i = j = 0; i < cap; i++)
		if (tab[i].line != NULL) {
			tab[j] = tab[i];
			if (i != j)
				tab[i].line = NULL;
			j++;
		}
	qsort(tab, n, sizeof(*tab), entry_cmp);
	if ((f->lines = calloc(n + 1, sizeof(*f->lines))) == NULL ||
	    (f->counts = calloc(n + 1, sizeof(*f->counts))) == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		f->lines[i] = tab[i].line;
		f->counts[i] = tab[i].count;
		tab[i].line = NULL;
	}
	f->n = n;
	rc = 0;
out:
	for (i = 0; i < cap; i++)
		free(tab[i].line);
	free(tab);
	sbuf_free(&sb);
	if (rc < 0)
		folded_free(f);
	return rc;
}

int
folded_write(struct stacks *s, int fd, uint64_t *bytes, char *err, size_t errlen)
{
	struct folded f;
	FILE	*out;
	size_t	 i;
	int	 nfd, rc = -1;

	if (folded_build(s, &f) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((nfd = dup(fd)) == -1 || (out = fdopen(nfd, "w")) == NULL) {
		snprintf(err, errlen, "writing the profile: %s", strerror(errno));
		if (nfd >= 0)
			close(nfd);
		folded_free(&f);
		return -1;
	}
	*bytes = 0;
	for (i = 0; i < f.n; i++) {
		int	 w = fprintf(out, "%s %llu\n", f.lines[i], (unsigned long long)f.counts[i]);

		if (w < 0)
			break;
		*bytes += (uint64_t)w;
	}
	if (fclose(out) != 0 || i < f.n)
		snprintf(err, errlen, "writing the profile: %s", strerror(errno));
	else
		rc = 0;
	folded_free(&f);
	return rc;
}
