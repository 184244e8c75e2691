/*
 * synth.c - start-of-segment state; see synth.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buildid_reader.h"
#include "synth.h"

#define SYNTH_BUF	(PATH_MAX + 256)

struct synth_ctx {
	struct segment	*seg;
	const struct synth_args *a;
	struct record_sample_id sid;
	uint8_t		 buf[SYNTH_BUF];
	struct synth_stats *st;
	int		 rc;
};

static int
synth_proc_cb(struct model_proc *p, void *arg)
{
	struct synth_ctx *c = arg;
	size_t	 i, n;

	for (i = 0; i < p->nthreads; i++) {
		c->sid.pid = p->pid;
		c->sid.tid = p->threads[i].tid;
		n = record_build_comm(c->buf, p->pid, p->threads[i].tid,
		    p->threads[i].comm, 0, c->a->layout, &c->sid);
		if ((c->rc = segment_write(c->seg, c->buf, n)) < 0)
			return 1;
		c->st->threads++;
	}
	for (i = 0; i < p->nmaps; i++) {
		struct model_map *mm = &p->maps[i];
		struct binary *b = binaries_at(c->a->bins, mm->bin);
		struct record_mmap r;

		model_map_record(p, mm, &r);
		/* A file without a proven build-id is not written (sideband.c says why). */
		if (strlen(r.filename) >= PATH_MAX ||
		    (r.build_id_size == 0 && buildid_reader_is_file(r.filename)))
			continue;
		c->sid.pid = c->sid.tid = p->pid;
		n = record_build_mmap2(c->buf, &r, PERF_RECORD_MISC_USER, c->a->layout,
		    &c->sid);
		if ((c->rc = segment_write(c->seg, c->buf, n)) < 0)
			return 1;
		if (b != NULL) {
			if ((c->rc = segment_note_binary(c->seg, b, r.filename)) < 0)
				return 1;
			notify_seen(c->a->notify, b, p->pid, c->a->wall_ns);
		}
		c->st->maps++;
	}
	c->st->procs++;
	return 0;
}

static int
write_header_only(struct segment *seg, uint32_t type)
{
	struct perf_event_header h = { .type = type, .misc = 0, .size = sizeof(h) };

	return segment_write(seg, &h, sizeof(h));
}

int
synth_write(struct segment *seg, struct model *m, const struct kinfo *k,
    const struct synth_args *a, struct synth_stats *st)
{
	const struct record_layout *l = a->layout;
	struct synth_ctx *c;
	struct record_mmap r;
	size_t	 i, n;
	int	 rc = 0;

	memset(st, 0, sizeof(*st));
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return -ENOMEM;
	c->seg = seg;
	c->a = a;
	c->st = st;
	c->sid.id = a->id;
	c->sid.time = a->time;
	c->sid.pid = c->sid.tid = (uint32_t)-1;

	if (k->text != 0) {
		uint64_t end = ~0ULL;

		/*
		 * The kernel's map ends where the first module above it begins,
		 * as perf synthesizes it: perf looks addresses up among
		 * overlapping maps as it finds them, and a kernel map over the
		 * modules would take their samples.
		 */
		for (i = 0; i < k->nmods; i++)
			if (k->mods[i].addr > k->text && k->mods[i].addr < end)
				end = k->mods[i].addr;
		memset(&r, 0, sizeof(r));
		r.pid = (uint32_t)-1;
		r.addr = k->text;
		r.len = end - k->text;
		r.pgoff = k->text;
		r.filename = "[kernel.kallsyms]_text";
		n = record_build_mmap(c->buf, &r, PERF_RECORD_MISC_KERNEL, l, &c->sid);
		if ((rc = segment_write(seg, c->buf, n)) < 0)
			goto out;
	}
	if (k->idsize > 0 &&
	    (rc = segment_add_buildid(seg, "[kernel.kallsyms]", k->id, k->idsize, 1)) < 0)
		goto out;
	for (i = 0; i < k->nmods; i++) {
		memset(&r, 0, sizeof(r));
		r.pid = (uint32_t)-1;
		r.addr = k->mods[i].addr;
		r.len = k->mods[i].size;
		r.filename = k->mods[i].path;
		n = record_build_mmap(c->buf, &r, PERF_RECORD_MISC_KERNEL, l, &c->sid);
		if ((rc = segment_write(seg, c->buf, n)) < 0)
			goto out;
		if (k->mods[i].idsize > 0 &&
		    (rc = segment_add_buildid(seg, k->mods[i].path, k->mods[i].id,
		    k->mods[i].idsize, 1)) < 0)
			goto out;
	}
	if (k->vdso != NULL && k->vdso->idsize > 0 &&
	    (rc = segment_add_buildid(seg, "[vdso]", k->vdso->id, k->vdso->idsize, 0)) < 0)
		goto out;
	if (model_foreach(m, synth_proc_cb, c) != 0 && (rc = c->rc) < 0)
		goto out;
	if ((rc = write_header_only(seg, PERF_RECORD_FINISHED_INIT)) < 0)
		goto out;
	rc = write_header_only(seg, PERF_RECORD_FINISHED_ROUND);
out:
	free(c);
	return rc;
}
