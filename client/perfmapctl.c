/*
 * perfmapctl.c - drive perfmapd over its control socket.
 *
 *	perfmapctl [-s SOCKET | -c CONFIG] [-t SECONDS] [--json] COMMAND [ARGS]
 *
 * One call per run: connect, send, print the replies (several for a
 * streamed command), exit with a status that says what happened.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <unistd.h>
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

	fprintf(f, "usage: perfmapctl [-s|--socket PATH | -c|--config FILE | --pid PID]\n"
	    "                  [-t|--timeout SECONDS]\n"
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

/*
 * The control socket daemon PID listens on, into OUT: a listening Unix
 * socket of a path among its descriptors (/proc/PID/fd, /proc/net/unix).
 * Where it listens is what it bound at start, whatever its configuration
 * says now ([daemon] socket is applied at a restart): the unit's reload
 * finds it so after the file changed.  0, or an exit status with ERR.
 */
static int
socket_of_pid(const char *pid, char *out, size_t outlen, char *err, size_t errlen)
{
	char	 dir[64], fd[512], link[64], line[4096 + 128], *path;
	uint64_t inodes[256], ino;
	size_t	 n = 0, i;
	unsigned flags;
	struct dirent *de;
	DIR	*d;
	FILE	*f;
	ssize_t	 len;
	int	 found = 0;

	if (pid[strspn(pid, "0123456789")] != '\0' || *pid == '\0' || strlen(pid) > 10) {
		snprintf(err, errlen, "--pid %s: not a process id", pid);
		return EXIT_USAGE;
	}
	/* perfmapd's, not any daemon's: a command is not sent to another program */
	snprintf(dir, sizeof(dir), "/proc/%s/comm", pid);
	if ((f = fopen(dir, "re")) == NULL || fgets(line, sizeof(line), f) == NULL ||
	    strcmp(line, "perfmapd\n") != 0) {
		snprintf(err, errlen, "--pid %s: %s", pid, f == NULL ? strerror(errno) :
		    "not perfmapd");
		if (f != NULL)
			fclose(f);
		return EXIT_NOCONNECT;
	}
	fclose(f);
	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	if ((d = opendir(dir)) == NULL) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return EXIT_NOCONNECT;
	}
	while (n < sizeof(inodes) / sizeof(inodes[0]) && (de = readdir(d)) != NULL) {
		snprintf(fd, sizeof(fd), "%s/%s", dir, de->d_name);
		if ((len = readlink(fd, link, sizeof(link) - 1)) <= 0)
			continue;
		link[len] = '\0';
		if (sscanf(link, "socket:[%" SCNu64 "]", &ino) == 1)
			inodes[n++] = ino;
	}
	closedir(d);
	if ((f = fopen("/proc/net/unix", "re")) == NULL) {
		snprintf(err, errlen, "/proc/net/unix: %s", strerror(errno));
		return EXIT_NOCONNECT;
	}
	/* Num RefCount Protocol Flags Type St Inode Path; flags 0x10000: listening */
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%*s %*s %*s %x %*s %*s %" SCNu64, &flags, &ino) != 2 ||
		    !(flags & 0x10000) || (path = strchr(line, '/')) == NULL)
			continue;
		path[strcspn(path, "\n")] = '\0';
		for (i = 0; i < n && inodes[i] != ino; i++)
			;
		if (i < n && strlen(path) < outlen) {
			memcpy(out, path, strlen(path) + 1);
			found = 1;
		}
	}
	fclose(f);
	if (!found)
		snprintf(err, errlen, "--pid %s: no control socket among its descriptors (not "
		    "perfmapd, or not root's to look at)", pid);
	return found ? 0 : EXIT_NOCONNECT;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
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
	const char *config = NULL, *pid = NULL;
	static char pidsock[4096];
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
		case 'p':
			pid = optarg;
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
	if (optind >= argc || (o.socket != NULL) + (config != NULL) + (pid != NULL) > 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (pid != NULL) {
		if ((i = socket_of_pid(pid, pidsock, sizeof(pidsock), err, sizeof(err))) != 0) {
			fprintf(stderr, "perfmapctl: %s\n", err);
			return i;
		}
		o.socket = pidsock;
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
