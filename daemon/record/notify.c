/*
 * notify.c - the recorder's listeners; see notify.h.
 */
#include "notify.h"

int
notify_listen(struct notify *n, const struct recorder_listener *l)
{
	if (n->n == NOTIFY_MAX)
		return -1;
	n->l[n->n++] = *l;
	return 0;
}

#define EACH(n, fn, ...) do {						\
	size_t i_;							\
	for (i_ = 0; i_ < (n)->n; i_++)					\
		if ((n)->l[i_].fn != NULL)				\
			(n)->l[i_].fn((n)->l[i_].arg, ##__VA_ARGS__);	\
} while (0)

void
notify_segment_opened(const struct notify *n, const struct segment *s, const struct kinfo *k)
{
	EACH(n, segment_opened, s, k);
}

void
notify_segment_closed(const struct notify *n, const struct segment *s, uint64_t size)
{
	EACH(n, segment_closed, s, size);
}

void
notify_segment_deleted(const struct notify *n, const char *name)
{
	EACH(n, segment_deleted, name);
}

void
notify_binary_new(const struct notify *n, const struct binary *b, const struct record_mmap *m,
    int fd)
{
	EACH(n, binary_new, b, m, fd);
}

void
notify_binary_gone(const struct notify *n, const struct binary *b)
{
	EACH(n, binary_gone, b);
}

void
notify_mapped(const struct notify *n, const struct binary *b, uint32_t pid, uint64_t wall_ns,
    uint8_t source)
{
	EACH(n, mapped, b, pid, wall_ns, source);
}

void
notify_seen(const struct notify *n, const struct binary *b, uint32_t pid, uint64_t wall_ns)
{
	EACH(n, seen, b, pid, wall_ns);
}

void
notify_unresolved(const struct notify *n, const char *path, int cause, uint64_t wall_ns)
{
	EACH(n, unresolved, path, cause, wall_ns);
}

int
notify_jit_mapped(const struct notify *n, uint32_t pid, uint32_t *uid)
{
	size_t	 i;
	int	 rc = 0;

	for (i = 0; i < n->n; i++)
		if (n->l[i].jit_mapped != NULL && n->l[i].jit_mapped(n->l[i].arg, pid, uid) < 0)
			rc = -1;
	return rc;
}

void
notify_jit_keep(const struct notify *n, uint32_t pid, uint32_t uid, const struct segment *s,
    uint64_t exited)
{
	EACH(n, jit_keep, pid, uid, s, exited);
}

void
notify_jit_close(const struct notify *n, const struct segment *s)
{
	EACH(n, jit_close, s);
}

void
notify_tick(const struct notify *n)
{
	EACH(n, tick);
}

int
notify_reannounce(const struct notify *n)
{
	size_t	 i;
	int	 any = 0;

	for (i = 0; i < n->n; i++)
		if (n->l[i].reannounce != NULL && n->l[i].reannounce(n->l[i].arg))
			any = 1;
	return any;
}
