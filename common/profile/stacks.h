/*
 * stacks.h - what a profile aggregates, in the shape pprof wants it:
 *
 *	strings    interned; index 0 is ""
 *	functions  (name, file) -> id, with the function's first line
 *	locations  (binary, ELF-relative address, leaf) -> id, each with
 *	           its lines (function, line), innermost inline frame first
 *	stacks     (pid, comm, location ids leaf first) -> samples, CPU ns
 *
 * Everything is keyed by what is distinct, so memory grows with the
 * number of different stacks, not with the number of samples.  Ids are
 * 1-based (pprof's convention: 0 means none).  The writers (pprof.c,
 * folded.c, svg.c) read the tables directly.
 */
#ifndef PERFMAPD_STACKS_H
#define PERFMAPD_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize.h"

struct stack_func {
	uint32_t	 name, file;	/* string indices */
	int64_t		 start_line;
};

struct stack_line {
	uint32_t	 func;		/* function id */
	int64_t		 line;
};

struct stack_loc {
	struct binary	*bin;		/* NULL: no mapping covered it */
	uint64_t	 addr;
	uint32_t	 line0, nlines;	/* into lines[] */
	int		 leaf;
};

struct stack {
	struct stack	*hnext;
	uint64_t	 hash;
	uint32_t	 pid, comm;	/* comm: string index */
	uint32_t	 n;		/* locations */
	uint64_t	 count, ns;
	uint32_t	 locs[];	/* leaf first */
};

struct stacks {
	struct symbolize *sym;
	/* strings */
	char		**str;
	size_t		 nstr, capstr;
	uint32_t	*strhash;	/* open addressing: index + 1, 0 empty */
	size_t		 strhcap;
	/* functions: funcs[id - 1] */
	struct stack_func *funcs;
	size_t		 nfuncs, capfuncs;
	uint32_t	*funchash;
	size_t		 funchcap;
	/* locations: locs[id - 1] */
	struct stack_loc *locs;
	size_t		 nlocs, caplocs;
	uint32_t	*lochash;
	size_t		 lochcap;
	struct stack_line *lines;
	size_t		 nlines, caplines;
	/* stacks, in a chained hash table; first..next in insertion order */
	struct stack	**stk;
	size_t		 nstk, stkcap;
	uint64_t	 samples, ns;
	int		 oom;
	/*
	 * What is distinct is what users make it (random call chains, random
	 * names): past STACKS_MAX_LOCS locations a new one is "[truncated]",
	 * and past STACKS_MAX_BYTES of stacks a new stack is the one
	 * "[truncated]" stack, its samples counted there (truncated_samples).
	 */
	size_t		 max_locs, max_bytes, stack_bytes;
	size_t		 max_folded;	/* folded_build: lines' bytes at most */
	uint32_t	 trunc_loc;
	struct stack	*trunc_stack;
	uint64_t	 truncated_samples;
	/*
	 * The strings' bytes: each name is at most STACKS_NAME_MAX, but a
	 * user's binary may give each of a million locations 16 inline frames
	 * of distinct long names; past max_str_bytes a new string is
	 * "[truncated]" (names_truncated).
	 */
	size_t		 str_bytes, max_str_bytes;
	uint64_t	 names_truncated;
};

#define STACKS_MAX_LOCS		(1u << 20)
#define STACKS_MAX_BYTES	((size_t)64 << 20)
/*
 * A name's bytes at most, "..." then (a user's binary may name a function
 * with 64 KB: 127 frames of such names were 8 MB of one folded line), and
 * the folded lines' bytes at most (FlameGraph's text and the SVG's): past
 * it a new line is the one "[truncated]" line.
 */
#define STACKS_NAME_MAX		4096
#define STACKS_MAX_FOLDED	((size_t)256 << 20)
#define STACKS_MAX_STR_BYTES	((size_t)256 << 20)
/* A string's cost besides its bytes: its NUL, malloc's chunk, its pointer and hash slots. */
#define STACKS_STR_COST		48

struct stacks *stacks_new(struct symbolize *);
void	stacks_free(struct stacks *);

/* A string's index (0 for ""), or 0 with s->oom set. */
uint32_t stacks_intern(struct stacks *, const char *);

/* The location for ADDR in BIN (NULL: unmapped), symbolized on creation; 0 on OOM. */
uint32_t stacks_location(struct stacks *, struct binary *, uint64_t addr, int leaf);

/* One sample: PID, COMM (string index), LOCS[N] leaf first, worth NS of CPU. */
int	stacks_add(struct stacks *, uint32_t pid, uint32_t comm, const uint32_t *locs,
	    size_t n, uint64_t ns);

/* A growable string. */
struct sbuf {
	char		*p;
	size_t		 len, cap;
	int		 oom;
};
void	sbuf_add(struct sbuf *, const char *, size_t);
void	sbuf_str(struct sbuf *, const char *);
void	sbuf_free(struct sbuf *);

/*
 * Append a location's frames as people read them, outermost first and
 * separated by ';': function names, "[binary]" for an address nothing
 * names, "[unknown]" for one outside every mapping.  Kernel frames end in
 * "_[k]" and JIT frames in "_[j]" (FlameGraph's convention); a ';' in a
 * name becomes ':' so the line still parses.
 */
void	stacks_loc_text(struct stacks *, uint32_t loc, struct sbuf *);
/*
 * NAME (a function's, a process's, a binary's) with ';' as ':' and control
 * characters and bytes that are not UTF-8 as '?': folded lines split on
 * ';' and end at a newline, so a process named "sshd;main" is not a
 * process and a frame, and a binary named "x\nsshd 99" forges no line.
 */
void	stacks_name_text(struct sbuf *, const char *name);

/* Writers: 0 or -1 with ERR.  *BYTES gets what was written. */
struct profile_req;
struct profile_meta {
	int64_t		 since_ns, until_ns;	/* the window */
	uint64_t	 period_ns;		/* CPU ns one sample stands for */
	const char	*event;			/* "cpu-clock", "cycles" */
	const char	*hostname;
	const char	*comment;
};
int	pprof_write(struct stacks *, const struct profile_meta *, int fd, uint64_t *bytes,
	    char *err, size_t errlen);
int	folded_write(struct stacks *, int fd, uint64_t *bytes, char *err, size_t errlen);
int	svg_write(struct stacks *, const struct profile_meta *, int fd, uint64_t *bytes,
	    char *err, size_t errlen);

/*
 * Folded lines, aggregated and sorted: shared by folded.c and svg.c.
 * LINES[i] is "comm;outer;...;inner" and COUNTS[i] its samples.
 */
struct folded {
	char		**lines;
	uint64_t	*counts;
	size_t		 n;
	uint64_t	 total;
};
int	folded_build(struct stacks *, struct folded *);
void	folded_free(struct folded *);

#endif
