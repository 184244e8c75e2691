/*
 * synth.c - start-of-segment state; see synth.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buildid_reader.h"
#include "index_reader.h"
#include "synth.h"

struct synth_ctx {
	struct segment	*seg;
	const struct synth_args *a;
	struct record_sample_id sid;
	uint8_t		 buf[SYNTH_BUF];
	struct synth_stats *st;
};

int
synth_proc(const struct model_proc *p, const struct record_layout *l,
    const struct synth_host *host, struct record_sample_id *base, uint8_t *buf,
    synth_emit_fn emit, void *arg)
{
	struct record_sample_id s = *base, *sid = &s;
	struct record_mmap r;
	struct model_thread *t = NULL;
	size_t	 i, n;
	int	 rc, host_ns;

	/* Not known before the scan read it (model.h): dated then, or left out. */
	if (p->dated && p->scan_ns > s.time) {
		if (p->dated == MODEL_UNREAD)
			return 0;
		s.time = p->scan_ns;
	}
	while ((t = model_thread_next(p, t)) != NULL) {
		sid->pid = p->pid;
		sid->tid = t->tid;
		n = record_build_comm(buf, p->pid, t->tid, t->comm, 0, l, sid);
		if ((rc = emit(buf, n, p, NULL, arg)) != 0)
			return rc;
	}
	host_ns = host == NULL ||
	    binaries_ns(host->mnt_ns, host->user_ns, p->mnt_ns, p->user_ns) == 0;
	if (!host_ns) {
		sid->pid = sid->tid = p->pid;
		n = record_build_namespaces(buf, p->pid, p->pid, p->mnt_ns, p->user_ns, l, sid);
		if ((rc = emit(buf, n, p, NULL, arg)) != 0)
			return rc;
	}
	for (i = 0; i < p->nmaps; i++) {
		int	 foreign;

		model_map_record(p, &p->maps[i], &r);
		/* A file without a proven build-id is not written (sideband.c says why). */
		if (strlen(r.filename) >= PATH_MAX ||
		    (r.build_id_size == 0 && buildid_reader_is_file(r.filename)))
			continue;
		/* Another namespace's mount, mapped from the host's: recorder_write_foreign. */
		foreign = host_ns && host != NULL && host->mnt_ns != 0 &&
		    p->mnt_ns == host->mnt_ns && (r.name_flags & MMAP_NAME_FOREIGN);
		sid->pid = sid->tid = p->pid;
		if (foreign) {
			n = record_build_namespaces(buf, p->pid, p->pid, INDEX_MNT_NS_UNKNOWN, 0,
			    l, sid);
			if ((rc = emit(buf, n, p, NULL, arg)) != 0)
				return rc;
		}
		n = record_build_mmap2(buf, &r, PERF_RECORD_MISC_USER, l, sid);
		if ((rc = emit(buf, n, p, &p->maps[i], arg)) != 0)
			return rc;
		if (foreign) {
			n = record_build_namespaces(buf, p->pid, p->pid, p->mnt_ns, p->user_ns,
			    l, sid);
			if ((rc = emit(buf, n, p, NULL, arg)) != 0)
				return rc;
		}
	}
	return 0;
}

/* Into the segment; a map's binary into its build-id table, and "seen". */
static int
synth_emit_cb(const void *rec, size_t len, const struct model_proc *p,
    const struct model_map *mm, void *arg)
{
	struct synth_ctx *c = arg;
	const struct synth_filter *f = c->a->filter;
	struct binary *b;
	int	 rc;

	if (mm != NULL && f != NULL && f->keep != NULL && !f->keep(p, mm, f->arg))
		return 0;
	if ((rc = segment_write(c->seg, rec, len)) < 0)
		return rc;
	if (mm == NULL) {
		/* a COMM per thread; a process's NAMESPACES is not one */
		if (((const struct perf_event_header *)rec)->type == PERF_RECORD_COMM)
			c->st->threads++;
		return 0;
	}
	if ((b = binaries_at(c->a->bins, mm->bin)) != NULL) {
		if ((rc = segment_note_binary(c->seg, b, mm->file->name)) < 0)
			return rc;
		/* a dated process's maps were seen when the scan read them (model.h) */
		notify_seen(c->a->notify, b, p->pid, p->dated && p->scan_ns > c->a->time ?
		    c->a->wall_ns + (p->scan_ns - c->a->time) : c->a->wall_ns);
	}
	c->st->maps++;
	return 0;
}

static int
synth_proc_cb(struct model_proc *p, void *arg)
{
	struct synth_ctx *c = arg;
	const struct synth_filter *f = c->a->filter;
	int	 rc;

	if (f != NULL && f->keep != NULL && !f->keep(p, NULL, f->arg))
		return 0;
	if ((rc = synth_proc(p, c->a->layout, c->a->host, &c->sid, c->buf, synth_emit_cb, c)) != 0)
		return rc;
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
	if ((rc = model_foreach(m, synth_proc_cb, c)) < 0)
		goto out;
	if (a->filter != NULL && a->filter->more != NULL && (rc = a->filter->more(seg,
	    a->filter->arg)) < 0)
		goto out;
	if ((rc = write_header_only(seg, PERF_RECORD_FINISHED_INIT)) < 0)
		goto out;
	rc = write_header_only(seg, PERF_RECORD_FINISHED_ROUND);
out:
	free(c);
	return rc;
}
