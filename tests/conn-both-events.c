/* conn-both-events URI: common/glue.c must survive a socket that is
 * readable and writable at once.
 *
 * The epoll behind libev reports both when a reply has arrived while the
 * send buffer has room, which is the usual state of a busy connection.
 * Notifying libnbd of both is wrong: the read lets the handle go back to
 * READY, where a write notification is invalid and fails.  The race is
 * hard to hit on purpose with real traffic, so this program sets up its
 * outcome directly: one read in flight, its reply waiting in the socket,
 * and then both events fed to the watcher (ev_feed_event), as epoll
 * would report them.  The read must complete and nothing may fail.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <libnbd.h>
#include <ev.h>

#include "glue.h"

/* The test's one way to fail: a message and exit status 1. */
static void __attribute__ ((noreturn))
die (const char *msg, const char *why)
{
  fprintf (stderr, "conn-both-events: %s: %s\n", msg, why);
  exit (EXIT_FAILURE);
}

static bool read_completed;
static int read_error = -1;

static int
read_done (void *user_data, int *error)
{
  read_completed = true;
  read_error = *error;
  return 1;
}

/* Block until the reply is in the socket, so that EV_READ is true. */
static void
wait_readable (int fd)
{
  struct pollfd p = { .fd = fd, .events = POLLIN };

  if (poll (&p, 1, 10000) != 1)
    die ("read", "no reply within 10 s");
}

int
main (int argc, char *argv[])
{
  nbd_completion_callback cb = { .callback = read_done };
  struct ev_loop *loop = EV_DEFAULT;
  struct nbd_handle *nbd;
  struct glue g;
  char buf[512];
  unsigned i;

  if (argc != 2)
    die ("usage", "conn-both-events URI");
  nbd = nbd_create ();
  if (nbd == NULL || nbd_connect_uri (nbd, argv[1]) == -1)
    die ("connect", nbd_get_error ());
  if (glue_start (&g, loop, nbd) == -1)
    die ("glue_start", nbd_get_error ());

  if (nbd_aio_pread (nbd, buf, sizeof buf, 0, cb, 0) == -1)
    die ("read", nbd_get_error ());
  /* A request this small is sent whole at once: only the reply is left. */
  if (nbd_aio_get_direction (nbd) != LIBNBD_AIO_DIRECTION_READ)
    die ("read", "the request was not sent at once");
  wait_readable (nbd_aio_get_fd (nbd));

  ev_feed_event (loop, &g.io, EV_READ | EV_WRITE);
  ev_run (loop, EVRUN_NOWAIT);
  /* On a busy machine the reply may have arrived in pieces, the rest
   * after the first poll: wait for it the usual way.
   */
  for (i = 0; !read_completed && i < 1000; i++) {
    glue_update (&g);
    ev_run (loop, EVRUN_ONCE);
  }
  if (!read_completed || read_error != 0)
    die ("read", "it did not complete");
  if (g.error[0] != '\0' || nbd_aio_is_ready (nbd) != 1)
    die ("the handle is not ready", g.error[0] ? g.error : nbd_get_error ());

  glue_stop (&g);
  nbd_shutdown (nbd, 0);
  nbd_close (nbd);
  printf ("conn-both-events: the read completed\n");
  return EXIT_SUCCESS;
}
