/*
 * control.h - the control socket: a unix stream socket speaking Varlink
 * (common/proto.h), served from the daemon's event loop.
 */
#ifndef PERFMAPD_CONTROL_H
#define PERFMAPD_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "proto.h"

struct perfmapd;
struct control;
struct control_client;

#define CONTROL_MAX_CLIENTS		64
#define CONTROL_RESERVED		8	/* of those, for root and the control group */
#define CONTROL_MAX_CLIENTS_PER_UID	16	/* for each other user */
#define CONTROL_IDLE_SECONDS		60	/* no call at all for this long: closed */
#define CONTROL_MESSAGE_SECONDS		10	/* a started message must end within this */
#define CONTROL_PARTIAL_WAIT_MS		50	/* another user's unfinished message: read again after */
#define CONTROL_ACCEPT_PAUSE_MS		100	/* out of descriptors: accept again after */
#define CONTROL_MAX_OUTPUT		(16 * 1024 * 1024)	/* unread replies: dropped */
/*
 * ... and an unprivileged user's, all connections together: a query's
 * reply is up to 4 MiB (QUERIER_MAX_BYTES), under the limit of one, and a
 * user's 16 connections left unread held 70 MB, 56 of them 240 MB.
 */
#define CONTROL_USER_OUTPUT		(16 * 1024 * 1024)
#define CONTROL_HIGH_OUTPUT		(256 * 1024)	/* ... no next call taken */
#define CONTROL_MAX_PENDING		(PROTO_MAX_MESSAGE + 1)	/* unread calls */

/* Listen on PATH, or on the socket systemd passed (sd_listen_fds). */
struct control *control_open(struct perfmapd *, const char *path, char *err, size_t errlen);
void	control_close(struct control *);
/*
 * 1 if PATH is a socket a process listens on, or one not known to be free
 * (*ERR says which): not for this daemon to take over.  main asks before
 * the start, control_open again at the bind.
 */
int	control_socket_busy(const char *path, char *err, size_t errlen);

/*
 * Send a message (stolen) to the client; for streamed replies.  A message
 * without "continues" is the call's final reply: the next call is taken
 * then.  Nothing is sent for a oneway call.
 */
int	control_send(struct control_client *, json_t *msg);
/* Run FN once the client's output has been written (e.g. stop after the reply). */
void	control_after_reply(struct control_client *, void (*fn)(void *), void *arg);
/*
 * Call FN when the client goes away (EOF, error, idle, shutdown), before it
 * is freed: work still running for it (store, export) must forget it.
 */
void	control_on_close(struct control_client *,
	    void (*fn)(struct control_client *, void *), void *arg);
/* The bytes of replies waiting for C to read them. */
size_t	control_output_pending(struct control_client *);
/*
 * While ON, a client waiting for a long streamed reply (store, export) is
 * not dropped as idle; a client that does not read is still dropped.
 */
void	control_keep_alive(struct control_client *, int on);

/*
 * A client's number, never reused while the daemon runs, and the client
 * it names if it is still connected (NULL once it left): work done off the
 * loop keeps the number, not the pointer.
 */
uint64_t control_client_id(const struct control_client *);
struct control_client *control_client_find(struct control *, uint64_t id);
/* The configuration was reloaded: the socket's mode follows public_queries (one we bound). */
void	control_reload(struct control *);

uid_t	control_client_uid(const struct control_client *);
int	control_client_privileged(const struct control_client *);
size_t	control_nclients(const struct control *);

#endif
