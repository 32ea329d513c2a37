/* nbd-libev-examples: one NBD connection in a libev loop.  See conn.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <string.h>

#include <libnbd.h>
#include <ev.h>

#include "conn.h"
#include "util.h"

/* Translate libnbd's wish into libev's event mask. */
static int
wanted_events (struct nbd_handle *nbd)
{
  unsigned dir = nbd_aio_get_direction (nbd);
  int events = 0;

  if (dir & LIBNBD_AIO_DIRECTION_READ)
    events |= EV_READ;
  if (dir & LIBNBD_AIO_DIRECTION_WRITE)
    events |= EV_WRITE;
  return events;
}

/* Notify read, else write: see conn.h for why never both.  Read goes
 * first because a reply that has arrived is complete work waiting to be
 * collected, and collecting it frees the server to take more requests.
 */
static void
io_cb (struct ev_loop *loop, ev_io *w, int revents)
{
  struct conn *c = (struct conn *) w;
  int r;

  if (revents & EV_READ)
    r = nbd_aio_notify_read (c->nbd);
  else if (revents & EV_WRITE)
    r = nbd_aio_notify_write (c->nbd);
  else
    return;
  /* A failed notification leaves the handle dead: the connection is
   * lost, and libnbd's message says how.
   */
  if (r == -1)
    die ("%s: connection lost: %s", c->name, nbd_get_error ());
}

void
conn_start (struct conn *c, struct ev_loop *loop, const char *name)
{
  int fd = nbd_aio_get_fd (c->nbd);

  if (fd == -1)
    die ("%s: %s", name, nbd_get_error ());
  c->loop = loop;
  c->name = name;
  ev_io_init (&c->io, io_cb, fd, wanted_events (c->nbd));
  ev_io_start (loop, &c->io);
}

void
conn_update (struct conn *c)
{
  int events = wanted_events (c->nbd);

  /* ev_io_set may only be called on a stopped watcher, and restarting a
   * watcher costs an epoll_ctl, so do it only when the mask changes.
   */
  if (events == (c->io.events & (EV_READ | EV_WRITE)))
    return;
  ev_io_stop (c->loop, &c->io);
  ev_io_set (&c->io, c->io.fd, events);
  ev_io_start (c->loop, &c->io);
}

void
conn_check (const struct conn *c)
{
  /* A server that closes the socket cleanly leaves no error to report:
   * libnbd reads the end of the stream, fails the commands in flight
   * and marks the handle dead or closed.
   */
  if (nbd_aio_is_dead (c->nbd) == 1 || nbd_aio_is_closed (c->nbd) == 1)
    die ("%s: connection lost: the server closed it", c->name);
}

const char *
conn_strerror (int err)
{
  if (err == ESHUTDOWN)
    return "the server is shutting down";
  return strerror (err);
}

void
conn_stop (struct conn *c)
{
  ev_io_stop (c->loop, &c->io);
}
