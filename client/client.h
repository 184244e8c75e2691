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

struct client_opts {
	const char	*socket;
	const char	*state_dir;	/* queries without a daemon */
	int		 json;
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
};

extern const struct client_cmd client_cmds[];
extern const size_t client_ncmds;

const struct client_cmd *client_find(const char *name);

/* Connect, call, print every reply; returns an exit status. */
int	client_call(const struct client_opts *, const struct client_cmd *, json_t *params);

/* Output helpers: "1.5G", aligned key/value lines. */
void	client_print_size(FILE *, long long bytes);
void	client_print_kv(FILE *, const char *key, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

#endif
