/* nbd-libev-examples: an NBD handle in a libev loop.
 *
 * libnbd does its own non-blocking I/O but leaves the waiting to its
 * caller: nbd_aio_get_direction says whether the handle wants its
 * socket readable, writable or both, and nbd_aio_notify_read or
 * nbd_aio_notify_write moves it along once the socket is.  A struct
 * glue turns that into one ev_io watcher per handle.
 *
 *  - The program has one ev_prepare watcher.  Its callback first starts
 *    whatever commands it has, then calls glue_update on every handle,
 *    so that the watcher waits for what the handle wants now that those
 *    commands are queued (libnbd's examples/copy-libev.c has the same
 *    shape).  glue_update costs nothing when the events are unchanged.
 *
 *  - When the socket is ready, libnbd is told of one event: read if the
 *    socket is readable, otherwise write.  Never both: reading a reply
 *    may let the handle finish and go back to READY, where a write
 *    notification is invalid and fails.  A write readiness left out is
 *    not lost: the socket is still writable next time round, and the
 *    watcher fires again.  libnbd's lib/poll.c gives the same rule.
 *
 *  - A failed notification means the connection is lost: libnbd fails
 *    every command in flight on it (their completion callbacks see the
 *    error), and g->error keeps libnbd's message for the program.
 *
 * The watcher is the first member, so its callback finds the struct
 * glue by a cast (ev.pod: "associating custom data with a watcher").
 */

#ifndef NBD_LIBEV_EXAMPLES_GLUE_H
#define NBD_LIBEV_EXAMPLES_GLUE_H

#include <libnbd.h>
#include <ev.h>

struct glue {
  ev_io io;                     /* first: the callback casts back */
  struct ev_loop *loop;
  struct nbd_handle *nbd;
  char error[256];              /* "" until the handle fails */
};

/* Watch nbd, connected or connecting.  -1 if it has no socket. */
int glue_start (struct glue *g, struct ev_loop *loop, struct nbd_handle *nbd);

/* From the prepare callback, after queuing commands. */
void glue_update (struct glue *g);

/* Tell libnbd of one event, read else write; -1 once the handle has
 * failed (g->error set, the watcher stopped).  A program that does more
 * per event sets its own callback (ev_set_cb) and calls this from it.
 */
int glue_notify (struct glue *g, int revents);

void glue_stop (struct glue *g);

#endif /* NBD_LIBEV_EXAMPLES_GLUE_H */
