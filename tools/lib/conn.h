/* nbd-libev-examples: one NBD connection of a tool, in a libev loop.
 *
 * The watching itself is common/glue.h's (one ev_io per handle, notify
 * read else write, events recomputed from the program's one prepare
 * callback).  A struct conn adds what a tool needs around it: images
 * and captive servers, a timeout, a clean disconnect, and failures
 * handed to the program's struct stop.
 *
 * The contract:
 *
 *  - conn_connect starts connecting with nbd_aio_connect_uri, or for a
 *    captive server nbd_aio_connect_systemd_socket_activation
 *    (tools/lib/captive.c), and the handshake runs in the loop like any
 *    other I/O; conn_wait_connected runs the loop until every
 *    connection given is ready.  At the end, conn_close_all disconnects
 *    the same way.  (Name lookup for nbd:// URIs still blocks, inside
 *    nbd_aio_connect_uri; so does libnbd's fork of a captive server.)
 *
 *  - The program's prepare callback calls conn_update on every
 *    connection after queuing its commands (glue_update, and the
 *    timeout's bookkeeping).
 *
 *  - The timeout, the way libev's documentation recommends ("Be smart
 *    about timeouts" in ev.pod): each connection keeps the time its
 *    server last sent anything, a plain store per read notification, and
 *    one timer that, when it fires, works out from that stamp whether
 *    the time is really up or when to look again.  Nothing is done per
 *    command, and a server that is slow but keeps answering never times
 *    out, however long the whole run takes.  Only a connection that is
 *    waiting for its server (commands in flight, the handshake or the
 *    disconnect) can time out.  A handshake that times out is fatal at
 *    once, unless the connection is optional.  Otherwise the
 *    connection is given up, its commands in flight abandoned, and
 *    conn_check hands the program's struct stop a line naming the
 *    connection, the time waited and, through the program's describe
 *    callback, the oldest command still outstanding.
 *
 *  - A connection that fails or that the server closes is lost for
 *    good, and every command still in flight on it fails too.  The glue
 *    keeps libnbd's message; conn_check, at the top of the prepare
 *    callback, hands the loss to the program's struct stop
 *    (tools/lib/stop.h) as a failure, before the program looks at those
 *    failed commands or starts new ones on a handle that cannot take
 *    them.  If another failure came first, that one is reported.
 *
 * The io watcher finds the struct conn by a cast (the glue, and with it
 * the watcher, is the first member); the timer through its data
 * pointer.
 */

#ifndef NBD_LIBEV_EXAMPLES_CONN_H
#define NBD_LIBEV_EXAMPLES_CONN_H

#include <stdbool.h>
#include <stddef.h>

#include <libnbd.h>
#include <ev.h>

#include "bounds.h"
#include "glue.h"
#include "handle.h"
#include "stop.h"

struct image;                   /* tools/lib/image.h */

/* The longest an optional connection (an extra one of several, see
 * tools/lib/server.h) may take over its handshake, whatever --timeout says:
 * a server greets a connection it accepts within milliseconds.
 */
#define OPTIONAL_HANDSHAKE 10

struct conn;

/* Fills buf with the oldest command still outstanding on c, such as
 * "read at offset 0 length 1048576", for the timeout message; data is
 * the program's, as given with the callback.
 */
typedef void (*conn_describe_fn) (const struct conn *c, void *data,
                                  char *buf, size_t len);

struct conn {
  struct glue glue;             /* first: io_cb casts back; the handle */
  ev_timer timer;
  const char *name;             /* "source" or "destination", for messages */
  const char *uri;              /* the image as the user named it */
  double timeout;               /* seconds; 0: none */
  double handshake_timeout;     /* seconds for the handshake; 0: none */
  uint64_t socket_buffer;       /* set once connected, if not 0 */
  bool socket_buffer_tcp;       /* on a TCP socket too */
  bool connected;               /* the handshake is done */
  bool waiting;                 /* at the last update, waiting for the server */
  ev_tstamp last_reply;         /* the server last sent something, or we
                                   started waiting for it */
  conn_describe_fn describe;    /* optional, for the timeout message */
  void *describe_data;          /* its data */
  bool optional;                /* set before conn_connect: a failed
                                   handshake gives the server up, with
                                   the reason in failure, instead of
                                   ending the program */
  bool closing;                 /* disconnecting: waiting for the close */
  char failure[256];            /* why the server was given up, or "" */
  int refused_errno;            /* the first command libnbd refused: */
  char refused[256];            /* its errno and libnbd's message */
};

/* Open a handle and start connecting it to img (tools/lib/image.h), in
 * loop.  timeout (in
 * seconds, 0 for none) covers the handshake and, later, every wait for
 * a reply.  Fatal if the URI is bad or the connection is refused, unless
 * c->optional was set: then the connection is given up, with the reason
 * in c->failure.
 */
void conn_connect (struct conn *c, struct ev_loop *loop, const char *name,
                   const struct image *img, const struct handle_options *opts,
                   double timeout);

/* True once c's handshake is over, or c was given up; fatal if it
 * failed, unless c is optional.  It does not wait.
 */
bool conn_poll_connected (struct conn *c);

/* Run the loop until every connection in conns has finished its
 * handshake, or failed: fatal, except for an optional connection, which
 * is given up.
 */
void conn_wait_connected (struct conn *const conns[], size_t n);

/* From the program's prepare callback, after it has queued this
 * iteration's commands: make the watcher wait for what the handle wants.
 */
void conn_update (struct conn *c);

/* If the connection is lost or its server timed out, record that as a
 * failure in s: the program then stops, and reports it unless an
 * earlier failure came first.
 */
void conn_check (const struct conn *c, struct stop *s);

/* True if commands are in flight on c and its server has not been given
 * up: what a stopping program still waits for.
 */
bool conn_busy (const struct conn *c);

/* True if c can take a new command: its server has not been given up
 * (a given-up handle may still look ready to libnbd) and it is ready.
 */
bool conn_ready (const struct conn *c);

/* Disconnect every connection cleanly (NBD_CMD_DISC), running the loop
 * until each server has closed or its timeout passed, or a signal came
 * (a program already stopping exits on a second one, tools/lib/stop.c);
 * then close the handles, the last one first.
 */
void conn_close_all (struct conn *const conns[], size_t n,
                     const struct stop *s);

/* The errno to record for a command that libnbd refused to start on c
 * (EIO if libnbd gave none): the slot then fails like any other
 * command, and the program stops cleanly instead of dying.  The first
 * refusal's message (nbd_get_error) is kept for conn_strerror.
 */
int conn_issue_errno (struct conn *c);

/* The text for a command on c that failed with err.  NBD servers
 * answer commands with ESHUTDOWN while they shut down, which strerror
 * words for sockets.  If libnbd refused a command on c with err, its
 * own message follows, as the errno alone ("Invalid argument") says
 * little.  The text stays valid until the next call.
 */
const char *conn_strerror (const struct conn *c, int err);

/* Stop both watchers; the handle stays open. */
void conn_stop (struct conn *c);

#endif /* NBD_LIBEV_EXAMPLES_CONN_H */
