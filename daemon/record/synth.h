/*
 * synth.h - the state a segment starts with: kernel and module maps, and
 * COMM + MMAP2 records for every live process, from the model.  The model
 * itself is filled once at start-up from /proc (synth_scan_proc).
 */
#ifndef PERFMAPD_SYNTH_H
#define PERFMAPD_SYNTH_H

#include <limits.h>
#include <stdint.h>

#include "buildid_reader.h"
#include "model.h"
#include "record.h"
#include "segment.h"

struct kmod {
	char		 name[64];
	char		 path[PATH_MAX];	/* /lib/modules/.../x.ko.xz or [name] */
	uint64_t	 addr, size;
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 idsize;
};

struct kinfo {
	uint64_t	 text;			/* _text, 0 if hidden (kptr_restrict) */
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 idsize;
	struct kmod	*mods;
	size_t		 nmods;
};

/* Read _text, the kernel build-id and /proc/modules. */
int	kinfo_load(struct kinfo *);
void	kinfo_free(struct kinfo *);

/* Fill the model from /proc; returns the number of processes seen. */
int	synth_scan_proc(struct model *, struct buildid_reader *);

struct synth_stats {
	uint64_t	 procs, threads, maps;
};

/*
 * Write the synthesized state into SEG: kernel + module MMAPs, then COMM
 * and MMAP2 records per process, then FINISHED_INIT and FINISHED_ROUND.
 * Records carry TIME and ID (the first event's id) in their sample_id.
 */
int	synth_write(struct segment *, struct model *, const struct kinfo *,
	    const struct record_layout *, uint64_t id, uint64_t time,
	    struct synth_stats *);

#endif
