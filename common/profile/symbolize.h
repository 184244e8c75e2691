/*
 * symbolize.h - the binaries of a profile and their names for addresses.
 *
 * A binary is what a mapping maps, told apart by (path, build-id): two
 * versions of /usr/bin/foo are two binaries, so a window across an upgrade
 * names old samples from the old file and new ones from the new.  Names
 * come only from what proves to be that build-id:
 *
 *	ELF	the build-id cache's copy (STATE/debug, perf's layout): its
 *		symbol tables, and DWARF file:line and inline frames through
 *		libdwfl where the copy (or a "debug" file beside it) has them
 *	KERNEL	the cache's copy of kallsyms for the kernel's build-id;
 *		modules are named from it too
 *	JIT	a kept /tmp/perf-PID.map (STATE/segments/SEG.jit/perf-PID.map)
 *	ANON	anonymous executable memory without a kept map: no names
 *	NOID	a file whose build-id could not be proven: never symbolized
 *		("unknown" is better than another version's names)
 *
 * Addresses handed in and out are ELF-relative (the binary's own virtual
 * addresses, what addr2line and a re-symbolizing server take) for ELF
 * binaries whose copy was found, file offsets for those whose copy was not,
 * and run-time addresses for the kernel, modules and JIT code.
 *
 * At most SYMBOLIZE_OPEN ELF files are kept open (least recently used are
 * closed and reopened on demand); names handed out stay valid only until
 * the next call, so callers copy them (stacks.c interns them).
 */
#ifndef PERFMAPD_SYMBOLIZE_H
#define PERFMAPD_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "perf_abi.h"

#define SYMBOLIZE_OPEN		64	/* ELF files open at once */
#define SYMBOLIZE_MAX_INLINE	16	/* frames one address can expand to */
#define SYMBOLIZE_JIT_MAX	(64 << 20)	/* bytes of a perf-PID.map read */
#define SYMBOLIZE_JIT_BUDGET	(128 << 20)	/* bytes of perf-PID.map files, all told */
#define SYMBOLIZE_KALLSYMS_MAX	(256 << 20)

enum binary_kind {
	BIN_ELF = 0,
	BIN_KERNEL,
	BIN_MODULE,
	BIN_JIT,
	BIN_ANON,
	BIN_NOID,
};

struct symbolize;
struct binary_elf;
struct ksyms;
struct jitmap;

struct binary {
	char		*name;		/* as mapped, " (deleted)" stripped */
	char		*source;	/* JIT: the kept map's path */
	uint8_t		 id[BUILD_ID_MAX];
	uint8_t		 idlen;
	enum binary_kind kind;
	int		 state;		/* 0 not loaded yet, 1 loaded, -1 not found */
	struct binary_elf *elf;		/* ELF: open file, or NULL when closed */
	struct ksyms	*ksyms;		/* KERNEL: its kallsyms */
	struct binary	*kernel;	/* MODULE: the kernel it was loaded in */
	struct jitmap	*jit;		/* JIT */
	/* ELF with a copy: its executable PT_LOADs, for ELF-relative addresses */
	int		 nload;
	uint64_t	 lvaddr[4], loff[4], lsize[4];
	/* KERNEL, MODULE: the run-time range from the mapping */
	uint64_t	 map_start, map_end, map_pgoff;
	uint64_t	 lo, hi;	/* ELF-relative addresses seen (hi exclusive) */
	uint32_t	 mapping_id;	/* pprof Mapping id, 0 until a location uses it */
	uint64_t	 samples;	/* frames that landed in it */
	unsigned	 has_functions:1, has_filenames:1, has_lines:1, has_inlines:1;
	unsigned	 counted:1;
	struct binary	*hnext;		/* hash chain */
	struct binary	*next;		/* every binary, in creation order */
};

/* One frame an address expands to, innermost first. */
struct sym_frame {
	const char	*func;		/* NULL: no name */
	const char	*file;		/* NULL: unknown */
	int64_t		 line;		/* 0: unknown */
	int64_t		 start_line;	/* of the function, 0: unknown */
};

/* CACHE_DIR: the build-id cache (perf's layout); may not exist. */
struct symbolize *symbolize_new(const char *cache_dir);
void	symbolize_free(struct symbolize *);

/*
 * The binary for (NAME, ID) of KIND, created on first use.  IDLEN 0 for
 * JIT, ANON and NOID; SOURCE, part of the key, is a JIT's kept map's path,
 * a module's placement ("@ADDR": one binary per place it was loaded), else
 * NULL.  NULL only when out of memory.
 */
struct binary *symbolize_binary(struct symbolize *, enum binary_kind, const char *name,
	    const uint8_t *id, size_t idlen, const char *source);
/* Every binary, in creation order. */
struct binary *symbolize_first(struct symbolize *);

/*
 * The ELF-relative address of run-time IP in a mapping of B at
 * [START, ...) with file offset PGOFF (loads B's program headers on first
 * use; without a copy: the file offset).  Kernel, module and JIT
 * addresses are returned unchanged.
 */
uint64_t symbolize_rel(struct symbolize *, struct binary *, uint64_t ip, uint64_t start,
	    uint64_t pgoff);

/*
 * Where kernel K (BIN_KERNEL), whose _text a segment's kernel mapping puts
 * at TEXT (its pgoff), is placed against its cached kallsyms: *DELTA is
 * TEXT less the copy's _text (KASLR gives each boot its own); 1, or 0 if
 * either is not known.  Kernel addresses are looked up less it.  Modules
 * move apart from the kernel: see symbolize_module_placed.
 */
int	symbolize_kernel_delta(struct symbolize *, struct binary *k, uint64_t text,
	    int64_t *delta);
/*
 * Does module PATH, mapped at START, sit where kernel K's cached kallsyms
 * had it (its lowest symbol in the page at START)?  1 or 0.  A module
 * reloaded elsewhere (rmmod and modprobe; another boot) is not named from
 * the copy.
 */
int	symbolize_module_placed(struct symbolize *, struct binary *k, const char *path,
	    uint64_t start);
/*
 * Names for ADDR (from symbolize_rel) in B; LEAF is 0 for a return address
 * (the caller's line is looked up at ADDR - 1).  Fills up to
 * SYMBOLIZE_MAX_INLINE frames, innermost first; returns their number, 0
 * when nothing names ADDR.
 */
int	symbolize_addr(struct symbolize *, struct binary *, uint64_t addr, int leaf,
	    struct sym_frame *out);

/*
 * The JIT map MAP (a perf-PID.map) as an ELF file perf reads symbols from,
 * written to FD: ET_DYN, a NOBITS .text over the map's addresses, one
 * FUNC symbol per line at its run-time address, and a build-id computed
 * from the symbols.  A perf.data mapping of it at the JIT region with
 * pgoff = its start names JIT frames in stock perf report, which otherwise
 * reads /tmp/perf-PID.map only, while it exists.  0, or -1 with errno.
 */
int	symbolize_jit_elf(const char *map, int fd);

/* Counters for profile_stats. */
struct symbolize_stats {
	uint64_t	 uncached, unknown, jit_maps;
};
void	symbolize_stats(struct symbolize *, struct symbolize_stats *);
/* The bytes of perf-PID.map files parsed, all told (SYMBOLIZE_JIT_BUDGET). */
void	symbolize_jit_budget(struct symbolize *, size_t bytes);

#endif
