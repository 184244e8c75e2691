/*
 * perfmapctl.c - drive perfmapd over its control socket.
 *
 *	perfmapctl [-s SOCKET | -c CONFIG] [-t SECONDS] [--json] COMMAND [ARGS]
 *
 * One call per run: connect, send, print the replies (several for a
 * streamed command), exit with a status that says what happened.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client.h"
#include "config.h"

#define DEFAULT_SOCKET	"/run/perfmapd/control.sock"
#define DEFAULT_CONFIG	"/etc/perfmapd/perfmapd.conf"

#define CONFIG_MAX	(1U << 20)	/* bytes: a configuration is a page or two */

/*
 * The socket the daemon's configuration FILE names ([daemon] socket), or
 * NULL with ERR if FILE does not load (absent, unreadable, not a plain
 * file of at most CONFIG_MAX bytes, refused: the daemon does not run with
 * it either).
 */
static const char *
config_socket(const char *file, char *err, size_t errlen)
{
	static struct config c;
	struct stat st;

	if (stat(file, &st) == -1) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > CONFIG_MAX) {
		snprintf(err, errlen, "%s: not a plain file of at most %u bytes", file, CONFIG_MAX);
		return NULL;
	}
	config_defaults(&c);
	if (config_load(&c, file, err, errlen) < 0)
		return NULL;
	return c.socket_path;
}

static void
usage(FILE *f)
{
	size_t	 i;

	fprintf(f, "usage: perfmapctl [-s|--socket PATH | -c|--config FILE] [-t|--timeout SECONDS]\n"
	    "                  [--json] COMMAND [ARGS]\n"
	    "       perfmapctl --state-dir DIR [--json] lookup|history|buildid|segments|profile ARGS\n"
	    "       perfmapctl COMMAND --help\n\ncommands:\n");
	for (i = 0; i < client_ncmds; i++) {
		if (strlen(client_cmds[i].usage) > 34)
			fprintf(f, "  %s\n  %-34s %s\n", client_cmds[i].usage, "",
			    client_cmds[i].help);
		else
			fprintf(f, "  %-34s %s\n", client_cmds[i].usage, client_cmds[i].help);
	}
	fprintf(f, "\nThe socket is also taken from PERFMAPD_SOCKET, else from the daemon's\n"
	    "configuration (%s), else %s.\n"
	    "Each wait for the daemon lasts at most %d s (store, export, profile and\n"
	    "snapshot --store: no limit) unless -t SECONDS says (0: none).  See perfmapctl(8).\n",
	    DEFAULT_CONFIG,
	    DEFAULT_SOCKET, CLIENT_TIMEOUT_S);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct client_opts o;
	const struct client_cmd *cmd;
	json_t	*params;
	char	 err[512];
	const char *config = NULL;
	char	*end;
	int	 ch, i;

	memset(&o, 0, sizeof(o));
	o.timeout_s = -1;
	/* "+": options stop at the command; its own options are its business */
	while ((ch = getopt_long(argc, argv, "+s:c:jt:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			o.socket = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'j':
			o.json = 1;
			break;
		case 'S':
			o.state_dir = optarg;
			break;
		case 't':
			errno = 0;
			o.timeout_s = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' || o.timeout_s < 0 ||
			    o.timeout_s > 86400) {
				fprintf(stderr, "perfmapctl: -t %s: a timeout is whole seconds, "
				    "0 (none) to 86400\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("perfmapctl %s\n", PERFMAPD_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc || (o.socket != NULL && config != NULL)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	/* -s, -c, PERFMAPD_SOCKET, the daemon's configuration, the default */
	if (config != NULL && (o.socket = config_socket(config, err, sizeof(err))) == NULL) {
		fprintf(stderr, "perfmapctl: %s\n", err);
		return EXIT_USAGE;
	}
	if (o.socket == NULL && ((o.socket = getenv("PERFMAPD_SOCKET")) == NULL ||
	    *o.socket == '\0') && (o.socket = config_socket(DEFAULT_CONFIG, err,
	    sizeof(err))) == NULL)
		o.socket = DEFAULT_SOCKET;	/* no configuration, or one the daemon refuses */
	if ((cmd = client_find(argv[optind])) == NULL) {
		fprintf(stderr, "perfmapctl: unknown command \"%s\" (perfmapctl --help "
		    "lists them)\n", argv[optind]);
		return EXIT_USAGE;
	}
	argc -= optind + 1;
	argv += optind + 1;
	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("usage: perfmapctl %s\n%s\n", cmd->usage, cmd->help);
			return EXIT_OK;
		}
	/* --json may also follow the command */
	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], "--json") == 0) {
			o.json = 1;
			memmove(&argv[i], &argv[i + 1], (size_t)(argc - i - 1) * sizeof(*argv));
			argc--;
			i--;
		}
	err[0] = '\0';
	if ((params = cmd->parse(argc, argv, err, sizeof(err))) == NULL) {
		/* one line: scripts read the error, people the --help */
		fprintf(stderr, "perfmapctl: %s: %s (perfmapctl %s --help)\n", cmd->name, err,
		    cmd->name);
		return EXIT_USAGE;
	}
	if (o.state_dir != NULL)
		return client_offline(&o, cmd, params);
	return client_call(&o, cmd, params);
}
