/* nbd-libev-examples: libnbd/libev glue.  See nbd-ev.h for the design. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <libnbd.h>
#include <ev.h>

#include "nbd-ev.h"
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

static void
io_cb (struct ev_loop *loop, ev_io *w, int revents)
{
  struct nbd_ev *ne = (struct nbd_ev *) w;

  /* Read first: draining replies runs completion callbacks, which lets
   * the program queue more work before this handle writes again.
   */
  if ((revents & EV_READ) && nbd_aio_notify_read (ne->nbd) == -1)
    die ("%s: %s", ne->name, nbd_get_error ());
  if ((revents & EV_WRITE) && nbd_aio_notify_write (ne->nbd) == -1)
    die ("%s: %s", ne->name, nbd_get_error ());
}

static void
prepare_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
  struct nbd_ev *ne = w->data;
  int events = wanted_events (ne->nbd);

  /* ev_io_set may only be called on a stopped watcher, and restarting
   * a watcher costs an epoll_ctl, so do it only when the mask changes.
   */
  if (events == (ne->io.events & (EV_READ | EV_WRITE)))
    return;
  ev_io_stop (loop, &ne->io);
  ev_io_set (&ne->io, ne->io.fd, events);
  ev_io_start (loop, &ne->io);
}

void
nbd_ev_start (struct nbd_ev *ne, struct ev_loop *loop,
              struct nbd_handle *nbd, const char *name)
{
  int fd = nbd_aio_get_fd (nbd);

  if (fd == -1)
    die ("%s: %s", name, nbd_get_error ());
  ne->loop = loop;
  ne->nbd = nbd;
  ne->name = name;

  ev_io_init (&ne->io, io_cb, fd, wanted_events (nbd));
  ev_io_start (loop, &ne->io);

  ev_prepare_init (&ne->prepare, prepare_cb);
  ne->prepare.data = ne;
  ev_set_priority (&ne->prepare, EV_MINPRI);
  ev_prepare_start (loop, &ne->prepare);
}

void
nbd_ev_stop (struct nbd_ev *ne)
{
  ev_io_stop (ne->loop, &ne->io);
  ev_prepare_stop (ne->loop, &ne->prepare);
}
