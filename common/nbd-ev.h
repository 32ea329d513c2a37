/* nbd-libev-examples: the glue between a libnbd handle and a libev loop.
 *
 * libnbd does its own non-blocking I/O but leaves waiting to the caller:
 * nbd_aio_get_direction says whether the handle wants the socket to
 * become readable, writable or both, and nbd_aio_notify_read or
 * nbd_aio_notify_write moves the handle's state machine along once it is.
 * This module turns that into one ev_io watcher per handle:
 *
 *  - an ev_prepare watcher recomputes the ev_io's events from
 *    nbd_aio_get_direction just before the loop blocks, because only then
 *    are all of this iteration's new commands queued on the handle;
 *
 *  - the ev_io callback notifies libnbd, read before write, since a
 *    reply that has arrived frees the server to accept more requests.
 *
 * The prepare watcher runs at EV_MINPRI, after every prepare watcher of
 * the program itself at the default priority: a program that starts new
 * commands from its own prepare watcher has them counted here.
 *
 * Errors on the connection are fatal: the program prints the handle's
 * name and libnbd's message and exits.
 */

#ifndef NBD_LIBEV_EXAMPLES_NBD_EV_H
#define NBD_LIBEV_EXAMPLES_NBD_EV_H

#include <libnbd.h>
#include <ev.h>

struct nbd_ev {
  ev_io io;                     /* first member: callbacks cast back */
  ev_prepare prepare;           /* keeps io's events up to date */
  struct ev_loop *loop;
  struct nbd_handle *nbd;
  const char *name;             /* "source" or "destination", for messages */
};

/* Start watching a connected handle in loop. */
void nbd_ev_start (struct nbd_ev *ne, struct ev_loop *loop,
                   struct nbd_handle *nbd, const char *name);

/* Stop both watchers; the handle stays open. */
void nbd_ev_stop (struct nbd_ev *ne);

#endif /* NBD_LIBEV_EXAMPLES_NBD_EV_H */
