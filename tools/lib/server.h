/* nbd-libev-examples: several connections to one server (multi-conn).
 *
 * A server that advertises multi-conn (nbd_can_multi_conn) promises
 * that a flush on any one connection makes every write that had
 * completed before it, on every connection, durable and visible to reads
 * on all of them (the NBD protocol's NBD_FLAG_CAN_MULTI_CONN; nbdkit's
 * multi-conn filter documents write, then flush, then read).  Without
 * that flush a read on one connection may not see a write acknowledged
 * on another.  Such a server, nbdkit for one, may
 * also serve its connections in parallel, so a client that spreads its
 * requests over several gets more done.  nbdcopy does this by default,
 * with up to four connections and no more than the CPUs.
 *
 * A struct server is a set of struct conn (tools/lib/conn.h) to one server, all
 * watched by the one loop:
 *
 *  - server_connect opens the first connection and, once its handshake
 *    says whether the server advertises multi-conn, the others.  The
 *    default (wanted = 0) is DEFAULT_CONNECTIONS when the server
 *    advertises multi-conn, otherwise one.  A captive server the user
 *    named ([ CMD ... ]) gets one by default, since the program cannot
 *    know whether the command accepts more (qemu-nbd takes one client
 *    unless given --shared); the extra connections to a captive server
 *    go to the socket of the one it started.  A number asked for
 *    explicitly is refused for a server without multi-conn that will
 *    be written, since one flush would not cover the writes done on
 *    the other connections; a server that will only be read gets one.
 *    A server that refuses the extra connections (a connection limit)
 *    leaves the set with those it accepted.
 *
 *  - server_widen opens more while the program runs, up to s->most:
 *    LONG_CONNECTIONS where the count is the default, the count itself
 *    otherwise.  The program decides when (spread.h); none is closed
 *    before the end.
 *
 *  - server_pick chooses the connection for a new command: the one with
 *    the fewest commands in flight, so that a slow connection gets less
 *    work, taking them in turn among equals.
 *
 *  - Commands that concern the whole image, block status and the final
 *    flush, go to the first connection, s->v[0].
 */

#ifndef NBD_LIBEV_EXAMPLES_SERVER_H
#define NBD_LIBEV_EXAMPLES_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include <ev.h>

#include "bounds.h"
#include "conn.h"
#include "handle.h"
#include "stop.h"

struct image;                   /* tools/lib/image.h */

struct server {
  unsigned n;                   /* connections in use: v[0] to v[n - 1] */
  unsigned most;                /* server_widen opens no more */
  unsigned next;                /* where server_pick's turn starts */
  struct conn *v[MAX_CONNECTIONS];
  unsigned opened;              /* connections tried: c[0] to c[opened - 1] */
  struct conn c[MAX_CONNECTIONS];
  char *names[MAX_CONNECTIONS]; /* "source", or "source connection 2" */
  char *socket_uri;             /* a captive server's socket, for the
                                   extra connections, or NULL */
  bool pending[MAX_CONNECTIONS]; /* opened, its handshake not over */
  struct ev_loop *loop;         /* what server_connect was given, for */
  const char *name;             /* the connections opened later: opts */
  const struct image *img;      /* copied, as a caller's may not last */
  struct handle_options opts;
  double timeout;
  char differs[256];            /* a later connection's export is not
                                   the first's: server_check stops */
};

/* Connect to img (a URI, or a captive server that the first connection
 * starts), name labelling messages; img and name must last as long as
 * the server, for the connections server_widen opens.  wanted is the number of
 * connections asked for, or 0 for the default; writing says whether the
 * program will write to this server.  timeout as for conn_connect.
 * Returns when every connection is ready or, for the extra ones, given
 * up; fatal if the first fails.
 */
void server_connect (struct server *s, struct ev_loop *loop, const char *name,
                    const struct image *img, const struct handle_options *opts,
                    double timeout, unsigned wanted, bool writing);

/* Start opening connections, up to want in all and s->most, without
 * waiting: server_update puts each in use once its handshake is over.
 */
void server_widen (struct server *s, unsigned want);

/* The connection for a new command. */
struct conn *server_pick (struct server *s);

/* True if any connection has commands in flight (conn_busy). */
bool server_busy (const struct server *s);

/* conn_update and conn_check on every connection in use;
 * server_update also puts in use those whose handshake is over.
 */
void server_update (struct server *s);
void server_check (const struct server *s, struct stop *stop);

/* A clean disconnect of every connection of every set, in the loop
 * (conn_close_all), then close the handles.
 */
void server_close (struct server *const sets[], size_t n,
                   const struct stop *stop);

/* Set the describe callback, and its data, of every connection. */
void server_set_describe (struct server *s, conn_describe_fn describe,
                          void *data);

#endif /* NBD_LIBEV_EXAMPLES_SERVER_H */
