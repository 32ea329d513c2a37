/* nbd-libev-examples: one NBD connection in a libev loop.
 *
 * libnbd does its own non-blocking I/O but leaves the waiting to its
 * caller: nbd_aio_get_direction says whether the handle wants its socket
 * to become readable, writable or both, and nbd_aio_notify_read or
 * nbd_aio_notify_write moves the handle's state machine along once it
 * is.  A struct conn turns that into one ev_io watcher per handle.
 *
 * The contract:
 *
 *  - The program has one ev_prepare watcher.  Its callback first starts
 *    whatever new commands it has, then calls conn_update on every
 *    connection, so that the watcher waits for what the handle wants now
 *    that those commands are queued.  (libnbd's examples/copy-libev.c
 *    has the same shape.)  conn_update costs nothing when the events
 *    have not changed.
 *
 *  - When the socket is ready, the watcher's callback notifies libnbd of
 *    one event: read if the socket is readable, otherwise write.  Never
 *    both: the first notification may change the handle's state (a reply
 *    read may let the handle finish sending and go back to READY), and in
 *    that state the second is invalid and nbd_aio_notify_* fails.  A
 *    write readiness left unreported is not lost: the socket is still
 *    writable on the next loop iteration, and the watcher fires again.
 *    libnbd's lib/poll.c explains the same rule for nbd_poll.
 *
 *  - Errors on the connection are fatal: the program prints the
 *    connection's name and libnbd's message and exits.  A connection
 *    that is gone fails every command still in flight; conn_check, at
 *    the top of the prepare callback, reports the loss itself, once,
 *    before the program looks at those failures or starts commands on a
 *    handle that can no longer take them.
 */

#ifndef NBD_LIBEV_EXAMPLES_CONN_H
#define NBD_LIBEV_EXAMPLES_CONN_H

#include <libnbd.h>
#include <ev.h>

struct conn {
  ev_io io;                     /* first member: the callback casts back */
  struct ev_loop *loop;
  struct nbd_handle *nbd;
  const char *name;             /* "source" or "destination", for messages */
};

/* Start watching c->nbd, a connected handle, in loop.  name labels
 * messages.
 */
void conn_start (struct conn *c, struct ev_loop *loop, const char *name);

/* From the program's prepare callback, after it has queued this
 * iteration's commands: make the watcher wait for what the handle wants.
 */
void conn_update (struct conn *c);

/* Fatal, with one line naming the connection, if the server has closed
 * it or it has failed.
 */
void conn_check (const struct conn *c);

/* The text for a failed command's errno.  NBD servers answer commands
 * with ESHUTDOWN while they shut down, which strerror words for sockets.
 */
const char *conn_strerror (int err);

/* Stop the watcher; the handle stays open. */
void conn_stop (struct conn *c);

#endif /* NBD_LIBEV_EXAMPLES_CONN_H */
