/* nbd-libev-examples: an NBD handle in a libev loop.  See glue.h. */

#include <stdio.h>

#include <libnbd.h>
#include <ev.h>

#include "glue.h"

static int
wanted_events (struct nbd_handle *nbd)
{
  unsigned dir = nbd_aio_get_direction (nbd);

  return ((dir & LIBNBD_AIO_DIRECTION_READ) ? EV_READ : 0) |
    ((dir & LIBNBD_AIO_DIRECTION_WRITE) ? EV_WRITE : 0);
}

int
glue_notify (struct glue *g, int revents)
{
  int r = 0;

  /* Read first: a reply that has arrived is finished work waiting to
   * be collected, and collecting it frees the server for more.
   */
  if (revents & EV_READ)
    r = nbd_aio_notify_read (g->nbd);
  else if (revents & EV_WRITE)
    r = nbd_aio_notify_write (g->nbd);
  if (r == -1) {
    snprintf (g->error, sizeof g->error, "%s", nbd_get_error ());
    glue_stop (g);
  }
  return r;
}

static void
io_cb (struct ev_loop *loop, ev_io *w, int revents)
{
  glue_notify ((struct glue *) w, revents);
}

int
glue_start (struct glue *g, struct ev_loop *loop, struct nbd_handle *nbd)
{
  int fd = nbd_aio_get_fd (nbd);

  if (fd == -1)
    return -1;
  g->loop = loop;
  g->nbd = nbd;
  g->error[0] = '\0';
  ev_io_init (&g->io, io_cb, fd, wanted_events (nbd));
  ev_io_start (loop, &g->io);
  return 0;
}

void
glue_update (struct glue *g)
{
  int events = wanted_events (g->nbd);

  /* ev_io_set needs a stopped watcher, and a restart costs an
   * epoll_ctl: only when the mask changes.
   */
  if (g->error[0] != '\0' || events == (g->io.events & (EV_READ | EV_WRITE)))
    return;
  ev_io_stop (g->loop, &g->io);
  ev_io_set (&g->io, g->io.fd, events);
  ev_io_start (g->loop, &g->io);
}

void
glue_stop (struct glue *g)
{
  ev_io_stop (g->loop, &g->io);
}
