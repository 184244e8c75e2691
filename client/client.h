/*
 * client.h - perfmapctl: the command table and the connection.
 */
#ifndef PERFMAPCTL_CLIENT_H
#define PERFMAPCTL_CLIENT_H

#include <stdio.h>
#include <jansson.h>

/* Exit statuses (perfmapctl(8)). */
#define EXIT_OK		0
#define EXIT_FAILED	1	/* the daemon answered with an error */
#define EXIT_USAGE	2
#define EXIT_NOCONNECT	3	/* no daemon at the socket */
#define EXIT_TIMEOUT	4	/* the daemon did not answer within the timeout */

/* Seconds a command waits for the daemon unless it is long work or -t says. */
#define CLIENT_TIMEOUT_S	30

struct client_opts {
	const char	*socket;
	const char	*state_dir;	/* queries without a daemon */
	int		 json;
	long		 timeout_s;	/* -t: 0 none, -1 the command's default */
};

struct client_cmd {
	const char	*name;
	const char	*method;
	const char	*usage;
	const char	*help;
	/* Turn argv (after the command name) into parameters; NULL + message on misuse. */
	json_t		*(*parse)(int argc, char **argv, char *err, size_t errlen);
	/* Print one reply's parameters for people. */
	void		 (*print)(json_t *params, FILE *);
	/*
	 * Optional: after the last reply (PARAMS of it, NULL after an error),
	 * in text and --json mode alike; returns the exit status (RC so far).
	 */
	int		 (*finish)(json_t *params, int rc);
	/*
	 * Long work, whose length grows with what is asked (store, export,
	 * profile; a call with "store": true, snapshot --store): no timeout
	 * unless -t gives one.  The others wait at most CLIENT_TIMEOUT_S for
	 * the daemon.
	 */
	int		 long_work;
};

extern const struct client_cmd client_cmds[];
extern const size_t client_ncmds;

const struct client_cmd *client_find(const char *name);

/* queries.c: lookup, history, buildid, segments */
json_t	*query_parse_lookup(int, char **, char *, size_t);
json_t	*query_parse_history(int, char **, char *, size_t);
json_t	*query_parse_buildid(int, char **, char *, size_t);
json_t	*query_parse_segments(int, char **, char *, size_t);
void	 query_print_lookup(json_t *, FILE *);
void	 query_print_history(json_t *, FILE *);
void	 query_print_buildid(json_t *, FILE *);
void	 query_print_segments(json_t *, FILE *);

/* profile.c */
json_t	*profile_parse(int, char **, char *, size_t);
void	 profile_print(json_t *, FILE *);
int	 profile_finish(json_t *, int);
int	 profile_offline(const struct client_opts *, json_t *params);

/* Run a query on STATE/index.db without a daemon; returns an exit status. */
int	client_offline(const struct client_opts *, const struct client_cmd *, json_t *params);

/* Connect, call, print every reply; returns an exit status. */
int	client_call(const struct client_opts *, const struct client_cmd *, json_t *params);

/* Fields of a reply: a string ("-" if absent), an integer (0 if absent). */
const char *client_str(json_t *, const char *key);
/* The same, control characters escaped (\xHH); valid until the fourth call after. */
const char *client_text(json_t *, const char *key);
/* S with control and text-reordering characters escaped; valid until the fourth call after. */
const char *client_escaped(const char *s);
/*
 * jansson's flags for --json on stdout: on a terminal, every character
 * past ASCII as \uXXXX (a C1 or a bidirectional override in a path goes
 * to the terminal as text); into a pipe or file, UTF-8 as it is.
 */
size_t	client_json_flags(void);
long long client_num(json_t *, const char *key);

/*
 * A new file beside DEST (".DEST.XXXXXX", its path in TMP), mode 0600, to
 * be renamed over DEST once whole; -1 with errno.
 */
int	client_open_temp(const char *dest, char *tmp, size_t len);
/* Copy IN to OUT (from their offsets); -1 with errno. */
int	client_copy_fd(int in, int out);

/* Output helpers: "1.5 GiB", aligned key/value lines. */
const char *client_fmt_size(char *buf, size_t len, long long bytes);
void	client_print_size(FILE *, long long bytes);
void	client_print_kv(FILE *, const char *key, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/*
 * A table printed with every column as wide as its widest cell: ALIGN has
 * one letter per column ('l' or 'r'); then one table_add per cell, row
 * after row, the heads first.  table_print frees it.
 */
struct table {
	const char	*align;
	size_t		 ncols;
	char		**cells;
	size_t		 ncells, cap;
	int		 oom;
};

/* A column of a table of JSON rows: its head, alignment, and what of the row it shows. */
enum column_kind {
	COL_STR,	/* a string ("-" if absent or null) */
	COL_NUM,	/* an integer ("-" if absent or null: not known) */
	COL_SIZE,	/* a size in bytes, as people read it ("-" if unknown) */
	COL_ANY,	/* a string or an integer */
};

struct column {
	const char	*head;
	char		 align;		/* 'l' or 'r' */
	enum column_kind kind;
	const char	*key;
};

/* ROWS (a JSON array of objects) as a table of COLS, each line after INDENT. */
void	client_print_table(FILE *, const char *indent, const struct column *cols, size_t ncols,
	    json_t *rows);

void	table_init(struct table *, const char *align);
void	table_add(struct table *, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void	table_print(struct table *, FILE *, const char *indent);

#endif
