/*
 * control.c - the control socket: Varlink (io.perfmap.varlink and
 * org.varlink.service) over a unix stream socket.
 *
 * Each client is a bufferevent with its credentials taken once, at accept
 * (SO_PEERCRED, SO_PEERGROUPS).  The life of a client:
 *
 *	accept ─► limits (clients, clients per uid) ─► credentials
 *	  ─► read: bytes up to NUL ─► parse ─► check call ─► interface, method
 *	     ─► privileges (from the command table's flags) ─► parameter names
 *	     ─► handler ─► reply(ies)
 *	  ─► ... until EOF, an error, a protocol violation, or a timeout
 *
 * One call at a time per connection, so replies come in call order, as
 * Varlink requires of pipelined calls:
 *
 *	idle ──call──► busy ──final reply sent (or dropped: oneway)──► idle
 *	                 │ a handler that hands the work to the capture worker
 *	                 │ returns NULL: busy until the worker's final reply
 *	                 └ later calls wait in the input buffer, unread
 *	                   (bounded: reading stops at CONTROL_MAX_PENDING)
 *
 * A reply with "continues" is not final.  A oneway call runs like any
 * other but whatever it would send is dropped.  At EOF the calls already
 * received are still answered before the connection is closed.
 *
 * Protocol violations (invalid JSON, a message over PROTO_MAX_MESSAGE, a
 * malformed call) get one error reply, then the connection is closed:
 * after garbage the stream cannot be trusted to be framed.  Unknown
 * methods and bad parameters are errors in a healthy stream: the
 * connection stays.  Nothing a client does blocks the loop for longer
 * than its handler; a client that does not read its replies is dropped
 * once CONTROL_MAX_OUTPUT bytes wait for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "control.h"
#include "command.h"
#include "daemon.h"
#include "interfaces.h"
#include "log.h"
#include "proto.h"

struct control_client {
	TAILQ_ENTRY(control_client) entry;
	struct control		*ctrl;
	uint64_t		 id;		/* control_client_id */
	struct bufferevent	*bev;
	struct event		*msg_timer;	/* a message started and not finished */
	uid_t			 uid;
	gid_t			 gid;
	pid_t			 pid;
	int			 priv;
	int			 closing;	/* close once the output is written */
	int			 dead;		/* freed from the timer, out of any callback */
	int			 busy;		/* a call's final reply is not sent yet */
	int			 oneway;	/* ... and it is oneway: send nothing */
	int			 eof;		/* the peer will send no more */
	size_t			 searched;	/* bytes of the input without a message's end */
	int			 held;		/* not read (another user's: hold_reads) */
	int			 waiting;	/* ... for CONTROL_PARTIAL_WAIT_MS (resume_ev) */
	struct event		*resume_ev;	/* take the next call (deferred) */
	void			(*after)(void *);
	void			*after_arg;
	void			(*on_close)(struct control_client *, void *);
	void			*on_close_arg;
};

struct control {
	struct perfmapd		*d;
	int			 fd;
	int			 activated;	/* from systemd: not ours to unlink */
	char			 path[108];
	dev_t			 path_dev;	/* the socket file bound at path: unlinked */
	ino_t			 path_ino;	/* at the end only if still this one */
	struct event		*accept_ev;
	struct event		*accept_pause;	/* accept_ev off: out of descriptors */
	int			 accept_failing;	/* logged, until an accept succeeds */
	gid_t			 group;
	int			 have_group;
	uint64_t		 next_id;
	size_t			 nclients;
	TAILQ_HEAD(, control_client) clients;
};

static void	client_free(struct control_client *);

/*
 * Drop a client from inside one of its own callbacks: the struct must stay
 * valid until the callback returns, so the free happens from a zero timer.
 */
static void
client_kill(struct control_client *c)
{
	struct timeval now = { 0, 0 };

	c->dead = c->closing = 1;
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	evtimer_del(c->msg_timer);
	evtimer_del(c->resume_ev);
	evtimer_add(c->msg_timer, &now);
}

uint64_t
control_client_id(const struct control_client *c)
{
	return c->id;
}

struct control_client *
control_client_find(struct control *ctrl, uint64_t id)
{
	struct control_client *c;

	if (ctrl == NULL)
		return NULL;
	TAILQ_FOREACH(c, &ctrl->clients, entry)
		if (c->id == id)
			return c->dead ? NULL : c;
	return NULL;
}

/*
 * control_group's gid, looked up at open and not per connection: getgrnam
 * may ask a directory service, and a loop that waits for one answers
 * nobody.  The group is the state directory's too (statedir.c): a reload
 * does not change it (daemon.c, restart_keys).
 */
static void
control_group_lookup(struct control *ctrl)
{
	struct group *gr;

	ctrl->have_group = 0;
	if ((gr = getgrnam(ctrl->d->conf.control_group)) != NULL) {
		ctrl->group = gr->gr_gid;
		ctrl->have_group = 1;
	}
}

/*
 * The socket's owner (root, the control group if there is one) and mode
 * (0666 with public_queries, else 0660), of the socket we bound and only
 * that one: in a socket directory others may write (not the default), a
 * user could have put a symlink or another file in its place by a
 * reload, and chown or chmod by name would follow it.  The file is held
 * by an O_PATH handle that does not follow a symlink, checked to be our
 * socket, and changed through that handle.
 */
static int
socket_mode(const struct control *ctrl)
{
	struct stat st;
	char	 fdpath[32];
	int	 fd, rc = -1, saved;

	if ((fd = open(ctrl->path, O_PATH | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &st) == -1)
		goto out;
	if (!S_ISSOCK(st.st_mode) || st.st_dev != ctrl->path_dev || st.st_ino != ctrl->path_ino) {
		errno = ESTALE;		/* not the socket we bound */
		goto out;
	}
	if (ctrl->have_group && fchownat(fd, "", 0, ctrl->group, AT_EMPTY_PATH) == -1)
		log_warn("%s: chown to the control group", ctrl->path);
	/* an O_PATH handle has no fchmod; its /proc name reaches the inode itself */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	rc = chmod(fdpath, ctrl->d->conf.readonly_public ? 0666 : 0660);
out:
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

void
control_reload(struct control *ctrl)
{
	if (ctrl != NULL && !ctrl->activated && ctrl->path[0] != '\0' && socket_mode(ctrl) == -1)
		log_warn("%s: chmod%s", ctrl->path,
		    errno == ESTALE || errno == ELOOP ? " (no longer the socket it bound: left alone)" : "");
}

uid_t
control_client_uid(const struct control_client *c)
{
	return c->uid;
}

int
control_client_privileged(const struct control_client *c)
{
	return c->priv;
}

size_t
control_nclients(const struct control *ctrl)
{
	return ctrl->nclients;
}

/* The call in flight is answered: take the next one, from the loop. */
static void
call_done(struct control_client *c)
{
	struct timeval now = { 0, 0 };

	c->busy = c->oneway = 0;
	if (!c->dead)
		evtimer_add(c->resume_ev, &now);
}

/* The replies waiting for C's user, on all its connections. */
static size_t
user_output(const struct control_client *c)
{
	const struct control_client *o;
	size_t	 n = 0;

	TAILQ_FOREACH(o, &c->ctrl->clients, entry)
		if (o->uid == c->uid && o->bev != NULL)
			n += evbuffer_get_length(bufferevent_get_output(o->bev));
	return n;
}

int
control_send(struct control_client *c, json_t *msg)
{
	char	*s;
	size_t	 len;
	int	 rc = -1, final;

	if (msg == NULL)
		return -1;
	if (c->dead) {
		json_decref(msg);
		return -1;
	}
	final = !json_is_true(json_object_get(msg, "continues"));
	if (c->busy && c->oneway)
		rc = 0;			/* a oneway call: no reply, ever */
	else if ((s = proto_serialize(msg, &len)) != NULL) {
		rc = bufferevent_write(c->bev, s, len);
		free(s);
	}
	json_decref(msg);
	if (final && c->busy)
		call_done(c);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) > CONTROL_MAX_OUTPUT ||
	    (!c->priv && user_output(c) > CONTROL_USER_OUTPUT)) {
		log_warnx("control: uid %u pid %d does not read its replies; dropped",
		    (unsigned)c->uid, (int)c->pid);
		client_kill(c);
		return -1;
	}
	return rc;
}

void
control_after_reply(struct control_client *c, void (*fn)(void *), void *arg)
{
	c->after = fn;
	c->after_arg = arg;
}

void
control_on_close(struct control_client *c, void (*fn)(struct control_client *, void *),
    void *arg)
{
	c->on_close = fn;
	c->on_close_arg = arg;
}

size_t
control_output_pending(struct control_client *c)
{
	return evbuffer_get_length(bufferevent_get_output(c->bev));
}

void
control_keep_alive(struct control_client *c, int on)
{
	struct timeval idle = { CONTROL_IDLE_SECONDS, 0 };

	bufferevent_set_timeouts(c->bev, on ? NULL : &idle, &idle);
}

static void
client_free(struct control_client *c)
{
	struct control *ctrl = c->ctrl;

	if (c->on_close != NULL)
		c->on_close(c, c->on_close_arg);
	/*
	 * What waited for a reply that will never be written (the client
	 * gone first): the call was accepted, and is carried out (a Stop
	 * sent by a client that hung up at once stopped nothing).
	 */
	if (c->after != NULL) {
		void (*fn)(void *) = c->after;

		c->after = NULL;
		fn(c->after_arg);
	}

	TAILQ_REMOVE(&ctrl->clients, c, entry);
	ctrl->nclients--;
	if (c->msg_timer != NULL)
		event_free(c->msg_timer);
	if (c->resume_ev != NULL)
		event_free(c->resume_ev);
	bufferevent_free(c->bev);	/* closes the fd */
	free(c);
}

/* Reply with a protocol error and close once it is written. */
static void
client_protocol_error(struct control_client *c, const char *what)
{
	log_debug("control: uid %u pid %d: %s", (unsigned)c->uid, (int)c->pid, what);
	c->closing = 1;
	bufferevent_disable(c->bev, EV_READ);
	control_send(c, proto_errorf(PROTO_ERR_PROTOCOL, "%s", what));
}

static int
allowed(const struct control_client *c, const struct control_command *e)
{
	if (e->flags & CMD_PUBLIC)
		return 1;
	if (c->priv)
		return 1;
	if (e->flags & CMD_PRIV)
		return 0;
	return c->ctrl->d->conf.readonly_public;
}

/* org.varlink.service: GetInfo and GetInterfaceDescription; NULL: no such method. */
static json_t *
service_call(const char *name, json_t *params, const struct proto_call *pc)
{
	const struct control_interface *iface;
	json_t	*v, *names;
	const char *key;
	unsigned i;

	if (strcmp(name, "GetInfo") != 0 && strcmp(name, "GetInterfaceDescription") != 0)
		return NULL;
	if (pc->upgrade)
		return proto_error(PROTO_ERR_NOTIMPL, json_pack("{s:s}", "method", pc->method));
	if (strcmp(name, "GetInfo") == 0) {
		if (json_object_size(params) > 0)
			return proto_invalid(json_object_iter_key(json_object_iter(params)));
		names = json_array();
		for (i = 0; i < control_ninterfaces; i++)
			json_array_append_new(names, json_string(control_interfaces[i].name));
		return proto_reply(json_pack("{s:s, s:s, s:s, s:s, s:o}", "vendor", "perfmapd",
		    "product", "perfmapd", "version", PERFMAPD_VERSION, "url", "man:perfmapd(8)",
		    "interfaces", names), 0);
	}
	if (strcmp(name, "GetInterfaceDescription") == 0) {
		json_object_foreach(params, key, v)
			if (strcmp(key, "interface") != 0)
				return proto_invalid(key);
		if (!json_is_string(v = json_object_get(params, "interface")))
			return proto_invalid("interface");
		iface = control_interface_find(json_string_value(v),
		    (unsigned)json_string_length(v));
		if (iface == NULL)
			return proto_error(PROTO_ERR_NOIFACE, json_pack("{s:O}", "interface", v));
		return proto_reply(json_pack("{s:s}", "description", iface->description), 0);
	}
	return NULL;
}

/* A parameter with a NUL in a string (a C string would end there), or NULL. */
static const char *
nul_param(json_t *params)
{
	const char *key;
	json_t	*v;

	json_object_foreach(params, key, v)
		if (proto_has_nul(v))
			return key;
	return NULL;
}

/* A parameter the method does not take, or NULL. */
static const char *
unknown_param(const struct control_command *e, json_t *params)
{
	const char *key;
	json_t	*v;
	size_t	 i;

	json_object_foreach(params, key, v) {
		for (i = 0; e->params[i] != NULL; i++)
			if (strcmp(e->params[i], key) == 0)
				break;
		if (e->params[i] == NULL)
			return key;
	}
	return NULL;
}

/* Answer MSG's call: a reply now, or (NULL from a handler) later from the worker. */
static json_t *
call(struct control_client *c, json_t *msg, const struct proto_call *pc)
{
	const struct control_command *e;
	const struct control_interface *iface;
	struct control_request req;
	const char *dot = strrchr(pc->method, '.'), *bad, *key;
	json_t	*params = pc->params, *v;
	void	*tmp;

	if (params == NULL) {		/* absent or null: {} */
		params = json_object();
		json_object_set_new(msg, "parameters", params);
	}
	/* a NUL in the name: none ("io.perfmap.Ping\u0000x" is not Ping) */
	if (dot == NULL || dot == pc->method || dot[1] == '\0' ||
	    proto_has_nul(json_object_get(msg, "method")))
		return proto_error(PROTO_ERR_NOMETHOD, json_pack("{s:O}", "method",
		    json_object_get(msg, "method")));
	iface = control_interface_find(pc->method, (unsigned)(dot - pc->method));
	if (iface == NULL)
		return proto_error(PROTO_ERR_NOIFACE, json_pack("{s:s%}", "interface",
		    pc->method, (size_t)(dot - pc->method)));
	/*
	 * No method changes the connection's protocol: an upgrade of one that
	 * exists is not implemented, of one that does not, not found.
	 */
	if (strcmp(iface->name, "org.varlink.service") == 0) {
		json_t	*reply = service_call(dot + 1, params, pc);

		return reply != NULL ? reply : proto_error(PROTO_ERR_NOMETHOD,
		    json_pack("{s:s}", "method", pc->method));
	}
	if ((e = control_find_method(pc->method)) == NULL)
		return proto_error(PROTO_ERR_NOMETHOD, json_pack("{s:s}", "method", pc->method));
	if (pc->upgrade)
		return proto_error(PROTO_ERR_NOTIMPL, json_pack("{s:s}", "method", pc->method));
	if (!allowed(c, e))
		return proto_errorf(PROTO_ERR_DENIED, "%s needs root or membership "
		    "of group %s (uid %u is neither)", e->name, c->ctrl->d->conf.control_group,
		    (unsigned)c->uid);
	if ((bad = unknown_param(e, params)) != NULL || (bad = nul_param(params)) != NULL)
		return proto_invalid(bad);
	/*
	 * A field given as null is absent (Varlink: every optional field,
	 * ?type, may be null); one the method needs is then missing, and
	 * said so by the method.
	 */
	json_object_foreach_safe(params, tmp, key, v)
		if (json_is_null(v))
			json_object_del(params, key);
	memset(&req, 0, sizeof(req));
	req.entry = e;
	req.d = c->ctrl->d;
	req.client = c;
	req.params = params;
	req.more = pc->more || pc->oneway;	/* oneway: streamed, and every reply dropped */
	req.oneway = pc->oneway;
	log_debug("control: uid %u pid %d: %s%s", (unsigned)c->uid, (int)c->pid, pc->method,
	    pc->oneway ? " (oneway)" : "");
	return e->handler(&req);
}

static void
dispatch(struct control_client *c, json_t *msg)
{
	struct proto_call pc;
	json_t	*reply;
	char	 err[256];

	if (proto_check_call(msg, &pc, err, sizeof(err)) < 0) {
		client_protocol_error(c, err);
		return;
	}
	c->busy = 1;
	c->oneway = pc.oneway;
	if ((reply = call(c, msg, &pc)) != NULL)
		control_send(c, reply);		/* final: the connection is idle again */
}

static void
msg_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct control_client *c = arg;

	if (!c->dead)
		log_warnx("control: uid %u pid %d: message not finished within %d s; closed",
		    (unsigned)c->uid, (int)c->pid, CONTROL_MESSAGE_SECONDS);
	client_free(c);
}

/* Nothing more will come and nothing is left to answer: close once written. */
static void
client_finish_if_done(struct control_client *c)
{
	struct timeval now = { 0, 0 };

	if (!c->eof || c->busy || c->closing ||
	    evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
		return;
	c->closing = 1;
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
		c->dead = 1;	/* free from the timer, outside this callback */
		evtimer_add(c->msg_timer, &now);
	}
}

/*
 * Another user's connection is not read while nothing it sends can be
 * taken (its call is answered, its replies wait, or its message is
 * unfinished): what it sends waits in the kernel, held back by the
 * socket's buffer, and is read at once when it can be taken.  Reading it
 * byte by byte as it came cost the loop a read and a callback per byte
 * (a core for one user's 16 connections).
 */
static void
hold_reads(struct control_client *c)
{
	if (!c->held && !c->priv) {
		bufferevent_disable(c->bev, EV_READ);
		c->held = 1;
	}
}

static void
release_reads(struct control_client *c)
{
	if (c->held) {
		c->held = 0;
		if (!c->closing && !c->eof)
			bufferevent_enable(c->bev, EV_READ);
	}
}

static void
client_read_cb(struct bufferevent *bev, void *arg)
{
	struct control_client *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct timeval tv = { CONTROL_MESSAGE_SECONDS, 0 };
	char	 err[256];
	int	 next = 0;

	/*
	 * A client whose replies pile up unread is not served more until
	 * they drain (client_write_cb): its memory stays near
	 * CONTROL_HIGH_OUTPUT; past CONTROL_MAX_OUTPUT it is dropped.
	 */
	while (!c->closing && !c->busy && evbuffer_get_length(in) > 0 &&
	    evbuffer_get_length(bufferevent_get_output(bev)) < CONTROL_HIGH_OUTPUT) {
		size_t	 len = evbuffer_get_length(in), want;
		struct evbuffer_ptr from, end;
		const char *buf;
		json_t	*msg;
		long	 n;

		/*
		 * A message's end (its NUL) searched for in the bytes not
		 * searched yet, in place: a message sent a byte at a time
		 * costs its length once, not its length at every byte (each
		 * read gathered and searched it all: a core for one user).
		 */
		if (c->searched > len)
			c->searched = 0;
		end.pos = -1;
		if (evbuffer_ptr_set(in, &from, c->searched, EVBUFFER_PTR_SET) == 0)
			end = evbuffer_search(in, "", 1, &from);
		if (end.pos < 0) {
			if (len > PROTO_MAX_MESSAGE) {
				evbuffer_drain(in, len);
				snprintf(err, sizeof(err), "message longer than %d bytes",
				    PROTO_MAX_MESSAGE);
				client_protocol_error(c, err);
				return;
			}
			c->searched = len;
			if (c->eof) {		/* cut in the middle of a message */
				evbuffer_drain(in, len);
				c->searched = 0;
				break;
			}
			if (!evtimer_pending(c->msg_timer, NULL))
				evtimer_add(c->msg_timer, &tv);
			/* another user's: read again CONTROL_PARTIAL_WAIT_MS later */
			if (!c->priv) {
				struct timeval w = { 0, CONTROL_PARTIAL_WAIT_MS * 1000 };

				hold_reads(c);
				c->waiting = 1;
				evtimer_add(c->resume_ev, &w);
			}
			return;
		}
		c->searched = 0;
		want = (size_t)end.pos + 1;
		buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)want);
		n = proto_parse(buf, want, PROTO_MAX_MESSAGE, &msg, err, sizeof(err));
		if (n <= 0) {
			evbuffer_drain(in, len);
			client_protocol_error(c, n < 0 ? err : "unreadable message");
			return;
		}
		evtimer_del(c->msg_timer);
		evbuffer_drain(in, (size_t)n);
		dispatch(c, msg);	/* may free c only through write/event cbs */
		json_decref(msg);
		/*
		 * Another user's client: its next call in a callback of its
		 * own (resume_ev, at its low priority), so that root's and the
		 * rings' events run between two of its calls, not after every
		 * call its input holds (a thousand Status calls fit in one
		 * write).
		 */
		if (!c->priv && !c->closing && !c->busy && evbuffer_get_length(in) > 0) {
			next = 1;
			break;
		}
	}
	if (!c->closing) {
		if (c->busy ||
		    evbuffer_get_length(bufferevent_get_output(bev)) >= CONTROL_HIGH_OUTPUT)
			hold_reads(c);
		else if (!c->waiting)
			release_reads(c);
	}
	if (next) {
		struct timeval now = { 0, 0 };

		evtimer_add(c->resume_ev, &now);
		return;
	}
	client_finish_if_done(c);
}

static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct control_client *c = arg;

	if (c->dead)
		return;
	if (c->waiting) {
		/* what came meanwhile comes to client_read_cb with the read */
		c->waiting = 0;
		release_reads(c);
		return;
	}
	/* A oneway call wrote nothing: what waits for its reply runs now. */
	if (c->after != NULL && evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
		void (*fn)(void *) = c->after;

		c->after = NULL;
		fn(c->after_arg);
	}
	client_read_cb(c->bev, c);
}

static void
client_write_cb(struct bufferevent *bev, void *arg)
{
	struct control_client *c = arg;

	if (evbuffer_get_length(bufferevent_get_output(bev)) > 0)
		return;
	if (c->after != NULL) {
		void (*fn)(void *) = c->after;

		c->after = NULL;
		fn(c->after_arg);
	}
	if (c->closing)
		client_free(c);
	else if (!c->busy && !c->dead)
		client_read_cb(bev, c);		/* what waited for the output to drain */
}

static void
client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct control_client *c = arg;

	/* EOF: the calls received are answered first (half-closed clients, pipelines). */
	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR) && !c->dead) {
		c->eof = 1;
		bufferevent_disable(bev, EV_READ);
		client_read_cb(bev, c);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT)
		log_debug("control: uid %u pid %d idle; closed", (unsigned)c->uid, (int)c->pid);
	client_free(c);		/* error (peer gone mid-reply), or idle */
}

/*
 * Is the peer on FD in GROUP?  Its supplementary groups as they were at its
 * connect (SO_PEERGROUPS): most peers have a few, an administrator of a
 * directory service may have hundreds, the kernel allows NGROUPS_MAX
 * (65536).  A short buffer is grown to the size the kernel asks for, once.
 */
static int
in_group(int fd, gid_t group, gid_t primary)
{
	gid_t	 few[64], *groups = few;
	socklen_t len = sizeof(few);
	size_t	 i;
	int	 yes = 0;

	if (primary == group)
		return 1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == -1) {
		if (errno != ERANGE || len <= sizeof(few) ||
		    len > NGROUPS_MAX * sizeof(gid_t) || (groups = malloc(len)) == NULL ||
		    getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == -1) {
			if (groups != few)
				free(groups);
			log_debug("control: the peer's groups: %s", strerror(errno));
			return 0;
		}
	}
	for (i = 0; i < len / sizeof(gid_t) && !yes; i++)
		yes = groups[i] == group;
	if (groups != few)
		free(groups);
	return yes;
}

/* The listener watched again after a pause (accept_cb). */
static void
accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct control	*ctrl = arg;

	(void)fd;
	(void)what;
	event_add(ctrl->accept_ev, NULL);
}

static void
accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct control	*ctrl = arg;
	struct control_client *c, *o;
	struct ucred	 cred;
	socklen_t	 len = sizeof(cred);
	struct timeval	 idle = { CONTROL_IDLE_SECONDS, 0 };
	size_t		 peruid = 0;
	int		 fd, priv;

	if ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1) {
		int	 err = errno;

		if (err == EAGAIN || err == EINTR || err == ECONNABORTED)
			return;
		if (!ctrl->accept_failing)
			log_warn("control: accept (tried again every %d ms until it works)",
			    CONTROL_ACCEPT_PAUSE_MS);
		ctrl->accept_failing = 1;
		/*
		 * Out of descriptors or memory: the connection stays queued
		 * and the listener readable, so the loop would run this again
		 * at once, for ever.  Left alone for a while instead.
		 */
		if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
			struct timeval tv = { 0, CONTROL_ACCEPT_PAUSE_MS * 1000 };

			event_del(ctrl->accept_ev);
			evtimer_add(ctrl->accept_pause, &tv);
		}
		return;
	}
	if (ctrl->accept_failing) {
		log_info("control: accepting connections again");
		ctrl->accept_failing = 0;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		log_warn("control: SO_PEERCRED");
		close(fd);
		return;
	}
	TAILQ_FOREACH(o, &ctrl->clients, entry)
		if (o->uid == cred.uid)
			peruid++;
	priv = cred.uid == 0 || (ctrl->have_group && in_group(fd, ctrl->group, cred.gid));
	/*
	 * CONTROL_RESERVED of the slots are for root and the control group:
	 * other users, however many of them and however many connections
	 * they hold, cannot lock the administrator out.
	 */
	if (ctrl->nclients >= CONTROL_MAX_CLIENTS || (!priv &&
	    (ctrl->nclients >= CONTROL_MAX_CLIENTS - CONTROL_RESERVED ||
	    peruid >= CONTROL_MAX_CLIENTS_PER_UID))) {
		static const char busy[] = "{\"error\":\"" PROTO_ERR_BUSY "\",\"parameters\":"
		    "{\"message\":\"too many clients\"}}";

		(void)!write(fd, busy, sizeof(busy));	/* includes the NUL frame end */
		close(fd);
		log_debug("control: uid %u refused: too many clients", (unsigned)cred.uid);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		close(fd);
		return;
	}
	c->ctrl = ctrl;
	c->id = ++ctrl->next_id;
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->pid = cred.pid;
	c->priv = priv;
	c->bev = bufferevent_socket_new(ctrl->d->base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->msg_timer = evtimer_new(ctrl->d->base, msg_timeout_cb, c);
	c->resume_ev = evtimer_new(ctrl->d->base, resume_cb, c);
	if (c->bev == NULL || c->msg_timer == NULL || c->resume_ev == NULL) {
		if (c->bev != NULL)
			bufferevent_free(c->bev);
		else
			close(fd);
		if (c->msg_timer != NULL)
			event_free(c->msg_timer);
		if (c->resume_ev != NULL)
			event_free(c->resume_ev);
		free(c);
		return;
	}
	/* Other users' work waits behind root's and the recorder's (daemon.h). */
	if (!priv && (bufferevent_priority_set(c->bev, LOOP_PRIO_OTHERS) < 0 ||
	    event_priority_set(c->msg_timer, LOOP_PRIO_OTHERS) < 0 ||
	    event_priority_set(c->resume_ev, LOOP_PRIO_OTHERS) < 0))
		log_warnx("control: uid %u: cannot lower its priority", (unsigned)cred.uid);
	TAILQ_INSERT_TAIL(&ctrl->clients, c, entry);
	ctrl->nclients++;
	bufferevent_setcb(c->bev, client_read_cb, client_write_cb, client_event_cb, c);
	bufferevent_set_timeouts(c->bev, &idle, &idle);
	/* Calls waiting behind a busy one are left unread beyond this. */
	bufferevent_setwatermark(c->bev, EV_READ, 0, CONTROL_MAX_PENDING);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

/*
 * Does a process listen on the socket SUN names?  0: nobody (refused, or
 * no such file: a socket left by a crash), 1: yes (accepted, or its
 * backlog is full), -1: not known (errno: another kind of socket, no
 * permission), which is not taken for "nobody".
 */
static int
listening(const struct sockaddr_un *sun)
{
	int	 fd, rc, e;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	rc = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	e = errno;
	close(fd);
	if (rc == 0 || e == EAGAIN)
		return 1;
	if (e == ECONNREFUSED || e == ENOENT)
		return 0;
	errno = e;
	return -1;
}

/* Is PATH a socket some process listens on (or one not known to be free)?  *ERR says. */
int
control_socket_busy(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	struct stat	 st;
	int		 rc;

	if (lstat(path, &st) == -1 || !S_ISSOCK(st.st_mode) || strlen(path) >= sizeof(sun.sun_path))
		return 0;	/* listen_path says what is wrong with it */
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((rc = listening(&sun)) == 0)
		return 0;
	if (rc > 0)
		snprintf(err, errlen, "%s: another daemon listens on it", path);
	else
		snprintf(err, errlen, "%s: a socket not known to be free (%s)", path,
		    strerror(errno));
	return 1;
}

static int
listen_path(struct control *ctrl, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	struct stat	 st;
	char		 dir[108], *slash;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "socket path %s is too long", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	memcpy(dir, path, strlen(path) + 1);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) == 0) {
			int	 dfd;

			/*
			 * 0755 whatever the daemon's umask (027): the socket's own
			 * mode says who may connect, and a directory only root may
			 * search would keep the control group (and, with
			 * public_queries, everyone) from it.
			 */
			if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
			    fchmod(dfd, 0755) == -1)
				log_warn("socket directory %s: chmod 0755", dir);
			if (dfd >= 0)
				close(dfd);
		} else if (errno != EEXIST) {
			snprintf(err, errlen, "socket directory %s: %s", dir, strerror(errno));
			return -1;
		}
	}
	/*
	 * A stale socket from a previous run: remove it, but nothing else,
	 * and not one a daemon still listens on (another instance, started
	 * with another state directory but this socket, took a running
	 * daemon's socket over and deleted it when it stopped).
	 */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s exists and is not a socket", path);
			return -1;
		}
		if (control_socket_busy(path, err, errlen))
			return -1;
		unlink(path);
	}
	if ((ctrl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/*
	 * Bound with the daemon's umask (027: srwxr-x---, which nobody but
	 * root can connect to), then given its mode by chmod before listen.
	 * Not by changing the umask around bind: the umask is the process's,
	 * and a thread creating a directory meanwhile (the capture's
	 * .build-id/xx) got 0640, which root without CAP_DAC_OVERRIDE (the
	 * unit's) cannot create anything in.
	 */
	if (bind(ctrl->fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (lstat(path, &st) == 0) {
		ctrl->path_dev = st.st_dev;
		ctrl->path_ino = st.st_ino;
	}
	snprintf(ctrl->path, sizeof(ctrl->path), "%s", path);
	if (socket_mode(ctrl) == -1) {
		snprintf(err, errlen, "%s: chmod: %s", path, strerror(errno));
		return -1;
	}
	if (listen(ctrl->fd, 64) == -1) {
		snprintf(err, errlen, "listen on %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

struct control *
control_open(struct perfmapd *d, const char *path, char *err, size_t errlen)
{
	struct control	*ctrl;
	int		 n;

	if ((ctrl = calloc(1, sizeof(*ctrl))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ctrl->d = d;
	ctrl->fd = -1;
	TAILQ_INIT(&ctrl->clients);
	control_group_lookup(ctrl);
	n = sd_listen_fds(1);
	if (n >= 1 && sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0) > 0) {
		ctrl->fd = SD_LISTEN_FDS_START;
		ctrl->activated = 1;
		evutil_make_socket_nonblocking(ctrl->fd);
		evutil_make_socket_closeonexec(ctrl->fd);
		log_info("control socket from systemd (fd %d)", ctrl->fd);
	} else if (listen_path(ctrl, path, err, errlen) < 0)
		goto fail;
	ctrl->accept_ev = event_new(d->base, ctrl->fd, EV_READ | EV_PERSIST, accept_cb, ctrl);
	ctrl->accept_pause = evtimer_new(d->base, accept_resume_cb, ctrl);
	if (ctrl->accept_ev == NULL || ctrl->accept_pause == NULL ||
	    event_add(ctrl->accept_ev, NULL) == -1) {
		snprintf(err, errlen, "cannot watch the control socket");
		goto fail;
	}
	return ctrl;
fail:
	control_close(ctrl);
	return NULL;
}

void
control_close(struct control *ctrl)
{
	if (ctrl == NULL)
		return;
	while (!TAILQ_EMPTY(&ctrl->clients))
		client_free(TAILQ_FIRST(&ctrl->clients));
	if (ctrl->accept_ev != NULL)
		event_free(ctrl->accept_ev);
	if (ctrl->accept_pause != NULL)
		event_free(ctrl->accept_pause);
	if (ctrl->fd >= 0 && !ctrl->activated) {
		struct stat st;

		close(ctrl->fd);
		if (ctrl->path[0] != '\0' && lstat(ctrl->path, &st) == 0 &&
		    st.st_dev == ctrl->path_dev && st.st_ino == ctrl->path_ino)
			unlink(ctrl->path);
	}
	free(ctrl);
}
