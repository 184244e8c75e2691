/*
 * call.c - one Varlink call over the control socket: connect, send, read
 * replies until the last one, print each (text or --json).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include "client.h"
#include "index_reader.h"
#include "proto.h"
#include "query.h"

/*
 * Connected to PATH, each wait for the daemon (the connect itself, whose
 * backlog a stuck daemon leaves full; a write; each read) bounded by
 * TIMEOUT_S seconds (0: none): -1, or -2 when the connect timed out.
 */
static int
connect_socket(const char *path, long timeout_s)
{
	struct sockaddr_un sun;
	struct timeval tv = { .tv_sec = timeout_s };
	struct ucred cred;
	socklen_t credlen = sizeof(cred);
	int	 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "perfmapctl: %s: socket path too long\n", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    (timeout_s > 0 && (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1)) ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		if (fd >= 0 && errno == EAGAIN) {
			fprintf(stderr, "perfmapctl: %s: the daemon took no connection within "
			    "%ld s (-t sets the timeout)\n", path, timeout_s);
			close(fd);
			return -2;
		}
		fprintf(stderr, "perfmapctl: cannot connect to %s: %s (is perfmapd "
		    "running?)\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/*
	 * perfmapd runs as root: a socket a user's program serves is not its
	 * (a path where a user may bind, a process named perfmapd for --pid),
	 * and nothing is sent to it, nor a reply taken from it (a profile's
	 * reply names a file the client reads and removes).
	 */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &credlen) == 0 && cred.uid != 0) {
		fprintf(stderr, "perfmapctl: %s: served by uid %u, not root: not perfmapd\n",
		    path, (unsigned)cred.uid);
		close(fd);
		return -1;
	}
	return fd;
}

static int
write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		/* no SIGPIPE: a daemon that refused us has said why (read below) */
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Print an error reply on stderr, one line. */
static void
print_error(const char *cmd, json_t *msg)
{
	const char *err = json_string_value(json_object_get(msg, "error"));
	json_t	*p = json_object_get(msg, "parameters");
	const char *m = json_string_value(json_object_get(p, "message"));
	const char *param = json_string_value(json_object_get(p, "parameter"));

	/* the daemon's words repeat the caller's (a path): one line, nothing for the terminal */
	fprintf(stderr, "perfmapctl: %s: %s", cmd, err ? client_escaped(err) : "error");
	if (param != NULL)
		fprintf(stderr, ": parameter %s", client_escaped(param));
	if (m != NULL)
		fprintf(stderr, ": %s", client_escaped(m));
	fputc('\n', stderr);
}

/* Print one reply (or error) message; returns 1 if it was the last one. */
static int
handle_message(const struct client_opts *o, const struct client_cmd *cmd, json_t *msg,
    int *rc)
{
	json_t	*p = json_object_get(msg, "parameters");
	int	 done;

	if (json_object_get(msg, "error") != NULL) {
		if (o->json)
			json_dumpf(msg, stdout, JSON_INDENT(2) | client_json_flags()),
			    putchar('\n');
		print_error(cmd->name, msg);
		*rc = EXIT_FAILED;
		return 1;
	}
	if (o->json) {
		json_dumpf(p, stdout, JSON_INDENT(2) | JSON_SORT_KEYS | client_json_flags());
		putchar('\n');
	} else
		cmd->print(p, stdout);
	fflush(stdout);
	done = !json_is_true(json_object_get(msg, "continues"));
	if (done && cmd->finish != NULL)
		*rc = cmd->finish(p, *rc);
	return done;
}

/*
 * Without a daemon: the index queries run here, on STATE/index.db opened
 * read-only (a copied state directory works), through the same code the
 * daemon uses to answer them.
 */
int
client_offline(const struct client_opts *o, const struct client_cmd *cmd, json_t *params)
{
	struct index_reader *q;
	json_t	*reply;
	char	 err[512];
	int	 rc = EXIT_OK;

	if (strcmp(cmd->method, "io.perfmap.Profile") == 0) {
		rc = profile_offline(o, params);
		json_decref(params);
		return rc;
	}
	if (!query_is_query(cmd->method)) {
		fprintf(stderr, "perfmapctl: %s needs the daemon; --state-dir serves "
		    "lookup, history, buildid, segments and profile\n", cmd->name);
		json_decref(params);
		return EXIT_USAGE;
	}
	if ((q = index_reader_open(o->state_dir, err, sizeof(err))) == NULL) {
		fprintf(stderr, "perfmapctl: %s\n", err);
		json_decref(params);
		return EXIT_FAILED;
	}
	reply = query_run(q, cmd->method, params);
	handle_message(o, cmd, reply, &rc);
	json_decref(reply);
	json_decref(params);
	index_reader_close(q);
	return rc;
}

int
client_call(const struct client_opts *o, const struct client_cmd *cmd, json_t *params)
{
	char	*out, *buf = NULL, err[256];
	size_t	 outlen, len = 0, cap = 0;
	json_t	*call, *msg;
	long	 timeout_s = o->timeout_s;
	int	 fd, rc = EXIT_OK, done = 0;

	/* snapshot --store stores as store does: long work too */
	if (timeout_s < 0)
		timeout_s = cmd->long_work || json_is_true(json_object_get(params, "store")) ? 0 :
		    CLIENT_TIMEOUT_S;
	if ((fd = connect_socket(o->socket, timeout_s)) < 0) {
		json_decref(params);
		return fd == -2 ? EXIT_TIMEOUT : EXIT_NOCONNECT;
	}
	call = proto_call(cmd->method, params, 1);
	out = proto_serialize(call, &outlen);
	json_decref(call);
	if (out == NULL || (write_all(fd, out, outlen) < 0 && errno != EPIPE &&
	    errno != ECONNRESET)) {
		rc = errno == EAGAIN ? EXIT_TIMEOUT : EXIT_FAILED;
		fprintf(stderr, "perfmapctl: write to %s: %s\n", o->socket, errno == EAGAIN ?
		    "the daemon took nothing within the timeout" : strerror(errno));
		free(out);
		close(fd);
		return rc;
	}
	free(out);
	while (!done) {
		long	 n;
		ssize_t	 r;

		while ((n = proto_parse(buf, len, 64 * 1024 * 1024, &msg, err, sizeof(err))) > 0) {
			memmove(buf, buf + n, len - (size_t)n);
			len -= (size_t)n;
			done = handle_message(o, cmd, msg, &rc);
			json_decref(msg);
			if (done)
				break;
		}
		if (done)
			break;
		if (n < 0) {
			fprintf(stderr, "perfmapctl: bad reply: %s\n", err);
			rc = EXIT_FAILED;
			break;
		}
		if (len == cap) {
			char *nb = realloc(buf, cap ? cap * 2 : 65536);

			if (nb == NULL) {
				rc = EXIT_FAILED;
				break;
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		if ((r = read(fd, buf + len, cap - len)) <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
				fprintf(stderr, "perfmapctl: %s: no answer from the daemon within "
				    "%ld s (-t sets the timeout)\n", cmd->name, timeout_s);
				rc = EXIT_TIMEOUT;
				break;
			}
			fprintf(stderr, "perfmapctl: %s: connection closed before the reply\n",
			    cmd->name);
			rc = EXIT_FAILED;
			break;
		}
		len += (size_t)r;
	}
	free(buf);
	close(fd);
	return rc;
}

