/*
 * binaries.h - every binary the daemon knows of in this run: one entry per
 * (path, build-id).  It is the identity the recorder, the index and the
 * capture worker share.  The recorder looks a mapping's binary up once
 * (binaries_get); what it tells the others (notify.h) carries the entry,
 * so nobody hashes the pair again: the index keeps its row of a binary at
 * the entry's id, the model keeps the id in each map.
 *
 * Entries are created by the recorder (a mapping) and by the index
 * (kernel and module scans, segments read back at start), and never move.
 * An entry no live process maps and the current segment does not
 * reference is forgotten at a rotation (binaries_prune, called by the
 * recorder, which tells the listeners first: notify.h binary_gone), and
 * its id is reused: a pointer or an id is valid until then.  So the table
 * holds what is live and what the current segment references, however
 * many binaries come and go (2,000 execs through long hard-linked paths
 * cost 17 MB for the run before).
 *
 * A binary is also told apart by the mount namespace it was mapped in,
 * when that namespace is not trusted: see NS below.
 *
 * The kernel names a file that was unlinked when it was mapped "PATH
 * (deleted)"; /proc/PID/maps does the same for a running process whose
 * binary was replaced since.  The entry is PATH with its build-id, what
 * the history of PATH must show, where the daemon saw that the file was
 * unlinked when it was so named (buildid_reader.h, struct bid_answer's
 * UNLINKED).  Elsewhere the name is kept whole: anyone may name a file
 * "/tmp/tool (deleted)" beside root's /tmp/tool, and its build-id must not
 * become /tmp/tool's.
 */
#ifndef PERFMAPD_BINARIES_H
#define PERFMAPD_BINARIES_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "perf_abi.h"

enum binary_kind {
	BINARY_USER = 0,
	BINARY_KERNEL,		/* [kernel.kallsyms] */
	BINARY_MODULE,
};

#define BINARY_NONE	UINT32_MAX	/* "no binary" where an id is kept */

/*
 * NS, the provenance of a binary: 0 when it was mapped by a process whose
 * mount namespace is the host's, or whose user namespace is the initial
 * one (only root can make or change such a mount namespace: a root
 * container, a systemd sandbox); otherwise the inode of the mapping
 * process's mount namespace, one a user made (unshare -Urm) and may fill
 * with bind mounts.  The same path and build-id from two such namespaces
 * are two binaries, so nothing seen in a user's namespace is counted as
 * the host's.  A process whose namespace is not known (its FORK lost, gone
 * before a look at /proc) has NS INDEX_MNT_NS_UNKNOWN: not the host's
 * either.
 */
struct binary {
	const char	*path;		/* arena, " (deleted)" proven the kernel's left out; NULL: free */
	uint64_t	 hash;
	uint64_t	 path_hash;	/* of PATH alone (hash_bytes from HASH_INIT) */
	uint64_t	 seg_seq;	/* recorder: last segment whose build-id table lists it */
	uint64_t	 seg_plain;	/* ... by its plain name (PATH) */
	uint64_t	 ns;		/* 0: a trusted namespace; else see NS above */
	uint64_t	 flight_at;	/* recorder, flight mode: last mapped (CLOCK_MONOTONIC) */
	uint32_t	 flight_pid;	/* ... by this process */
	uint32_t	 id;		/* 0, 1, 2, ...; a pruned entry's id is reused */
	int32_t		 ns_uid;	/* NS != 0: uid owning its user namespace, -1 unknown */
	uint8_t		 bid[BUILD_ID_MAX];
	uint8_t		 bidsize;	/* 0: a free entry */
	uint8_t		 kind;		/* enum binary_kind */
	uint8_t		 mapped;	/* recorder: mapped in this run (not only known) */
	uint8_t		 keep;		/* recorder: marked live before a prune */
};

#define BINARIES_CHUNK	16384		/* entries per chunk: entries never move */

struct binaries {
	struct binary	**chunks;
	size_t		 n, nchunks;	/* ids handed out (free ones included) */
	uint32_t	*slots;		/* id + 1, 0 = empty (open addressing) */
	uint32_t	*pslots;	/* the same by the path's hash alone (binaries_by_path) */
	size_t		 cap;		/* of each */
	uint32_t	*free_ids;	/* pruned entries, reused first */
	size_t		 nfree, cfree;
	size_t		 names_live;	/* bytes of the names of live entries */
	struct arena	 names;
};

int	binaries_init(struct binaries *);
void	binaries_free(struct binaries *);

/*
 * The entry of (NAME, ID), created if new (then *CREATED, if not NULL, is
 * 1); NAME without its " (deleted)" if UNLINKED says that is the kernel's
 * mark (see above).  NULL if IDSIZE is 0 or too large, or when out of
 * memory.
 */
struct binary *binaries_get(struct binaries *, const char *name, int unlinked,
	    const uint8_t *id, uint8_t idsize, int *created);
/* The same in provenance NS (see NS above); binaries_get is NS 0. */
struct binary *binaries_get_ns(struct binaries *, const char *name, int unlinked,
	    const uint8_t *id, uint8_t idsize, uint64_t ns, int *created);

/*
 * Is E the entry binaries_get_ns would give for (NAME, UNLINKED, ID,
 * IDSIZE, NS)?  (A free entry is no one's.)
 */
int	binaries_match(const struct binary *e, const char *name, int unlinked,
	    const uint8_t *id, uint8_t idsize, uint64_t ns);

/*
 * NS of a mapping by a process in mount namespace MNT_NS and user
 * namespace USER_NS; HOST_MNT_NS and INIT_USER_NS from procfs_host_ns.
 * 0 (the host's) for the initial user namespace (root's containers
 * included) or what is not known; else MNT_NS, or USER_NS for the host's
 * mount namespace (a user's chroot in a user namespace of their own).
 */
uint64_t binaries_ns(uint64_t host_mnt_ns, uint64_t init_user_ns, uint64_t mnt_ns,
	    uint64_t user_ns);

/* Live entries (ids handed out, less the free ones). */
static inline size_t
binaries_live(const struct binaries *b)
{
	return b->n - b->nfree;
}

/*
 * Forget every entry KEEP does not keep, calling GONE for each first; the
 * keep marks are cleared.  The names of the entries kept move to a new
 * arena when most of the old one is dead.  Returns the number forgotten.
 */
size_t	binaries_prune(struct binaries *, int (*keep)(const struct binary *, void *),
	    void (*gone)(const struct binary *, void *), void *arg);

/*
 * The ids of the entries whose path is PATH (every provenance, each once)
 * into IDS, at most MAX: their number, or SIZE_MAX when there are more, or
 * more than WALK_MAX slots of the path's hash to walk (a user's many
 * versions of one path).  The cost is that walk, not the table's size.
 */
size_t	binaries_by_path(const struct binaries *, const char *path, uint32_t *ids, size_t max,
	    size_t walk_max);

/* Every entry's MAPPED cleared: each is announced again at its next mapping. */
void	binaries_unmark(struct binaries *);

static inline struct binary *
binaries_at(const struct binaries *b, uint32_t id)
{
	if (id >= b->n)
		return NULL;
	return &b->chunks[id / BINARIES_CHUNK][id % BINARIES_CHUNK];
}

#endif
