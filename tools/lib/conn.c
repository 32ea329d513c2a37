/* nbd-libev-examples: one NBD connection in a libev loop.  See conn.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <libnbd.h>
#include <ev.h>

#include "captive.h"
#include "conn.h"
#include "glue.h"
#include "handle.h"
#include "image.h"
#include "util.h"

/* The server has failed us: keep why for conn_check, and stop waiting
 * for it.  Its commands in flight are abandoned.
 */
static void give_up (struct conn *c, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

static void
give_up (struct conn *c, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (c->failure, sizeof c->failure, fmt, ap);
  va_end (ap);
  conn_stop (c);
  c->waiting = false;
}

/* The handshake failed: fatal, with libnbd's reason.  A captive server
 * that said why it did not start (usually) has the first word: its
 * reason, not the lost connection that followed, is what to fix.
 * qemu-nbd refuses an image another process has open for writing
 * (its lock, "Failed to get ... lock"): say that plainly.
 */
static void
cannot_connect (const struct conn *c, const char *why)
{
  bool same = strcmp (c->name, c->uri) == 0;
  char said[256];

  if (!image_server_said (c->glue.nbd, said, sizeof said))
    die ("%s: cannot connect%s%s: %s", c->name, same ? "" : " to ",
         same ? "" : c->uri, why);
  if (strstr (said, "Failed to get") && strstr (said, "lock"))
    die ("%s: in use by another process (%s)", c->name, said);
  die ("%s: cannot connect%s%s: the server said: %s (then: %s)", c->name,
       same ? "" : " to ", same ? "" : c->uri, said, why);
}

/* The glue notifies libnbd (read, else write: common/glue.h says why
 * never both); this callback adds the timeout's one piece of
 * bookkeeping, and turns a failed notification into a lost connection.
 */
static void
io_cb (struct ev_loop *loop, ev_io *w, int revents)
{
  struct conn *c = (struct conn *) w;

  /* The server sent something.  ev_now is the loop's cached time, not
   * a system call.
   */
  if (revents & EV_READ)
    c->last_reply = ev_now (loop);
  /* A failed notification leaves the handle dead: the connection is
   * lost (or was never made), and libnbd's message says how.  The
   * program learns of it from conn_check.
   */
  if (glue_notify (&c->glue, revents) == -1) {
    if (!c->connected && !c->optional)
      cannot_connect (c, c->glue.error);
    give_up (c, "%s: %s", c->connected ? "connection lost" : "refused",
             c->glue.error);
  }
}

static void
timed_out (struct conn *c)
{
  char oldest[128];

  if (!c->connected && c->optional) {
    give_up (c, "no NBD handshake within %g s", c->handshake_timeout);
    return;
  }
  if (!c->connected && strcmp (c->name, c->uri) == 0)
    die ("%s: no NBD handshake within %g s", c->name, c->handshake_timeout);
  if (!c->connected)
    die ("%s: no NBD handshake from %s within %g s",
         c->name, c->uri, c->handshake_timeout);
  if (c->closing) {
    give_up (c, "no reply to the disconnect within %g s", c->timeout);
    return;
  }
  if (c->describe == NULL)
    give_up (c, "no reply from the server for %g s", c->timeout);
  else {
    c->describe (c, c->describe_data, oldest, sizeof oldest);
    give_up (c, "no reply from the server for %g s; oldest command in "
             "flight: %s", c->timeout, oldest);
  }
}

/* The timer fires at the earliest moment the time could be up.  It
 * rarely is: replies since the timer was set moved last_reply on, so
 * it sets itself for the new deadline and waits again.
 */
static void
timeout_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
  struct conn *c = w->data;
  double limit = c->connected ? c->timeout : c->handshake_timeout;
  ev_tstamp deadline = c->last_reply + limit;
  ev_tstamp now = ev_now (loop);

  if (limit <= 0) {
    ev_timer_stop (loop, w);    /* connected, and no timeout asked for */
    return;
  }
  if (c->waiting && deadline <= now) {
    timed_out (c);
    return;
  }
  /* Not waiting: nothing can time out before the next command, whose
   * wait starts a full period from then (conn_update), so look again a
   * full period from now.
   */
  w->repeat = c->waiting ? deadline - now : limit;
  ev_timer_again (loop, w);
}

/* Start the watchers on the handle, whose socket exists. */
static void
watch (struct conn *c, struct ev_loop *loop, struct nbd_handle *nbd)
{
  if (glue_start (&c->glue, loop, nbd) == -1)
    die ("%s: %s", c->name, nbd_get_error ());
  ev_set_cb (&c->glue.io, io_cb);
  c->last_reply = ev_now (loop);
  ev_init (&c->timer, timeout_cb);
  c->timer.data = c;
  if (c->handshake_timeout > 0) {
    c->timer.repeat = c->handshake_timeout;
    ev_timer_again (loop, &c->timer);
  }
}

void
conn_connect (struct conn *c, struct ev_loop *loop, const char *name,
              const struct image *img, const struct handle_options *opts,
              double timeout)
{
  struct nbd_handle *nbd = open_handle (name, opts);

  c->name = name;
  c->uri = img->name;
  c->timeout = timeout;
  /* An extra connection gets a short handshake even without a timeout:
   * a server that takes one connection at a time may never greet the
   * others (qemu-nbd stops accepting, and the kernel completes the
   * connect anyway), and the program can do without them.
   */
  c->handshake_timeout = timeout;
  if (c->optional && (timeout <= 0 || timeout > OPTIONAL_HANDSHAKE))
    c->handshake_timeout = OPTIONAL_HANDSHAKE;
  c->socket_buffer = opts->socket_buffer;
  c->socket_buffer_tcp = opts->socket_buffer_tcp;
  c->connected = false;
  c->waiting = true;            /* for the handshake */
  c->failure[0] = '\0';
  c->closing = false;
  /* This only starts connecting: the handshake goes on in the loop. */
  c->glue.nbd = nbd;
  if (image_aio_connect (img, nbd) == -1) {
    if (!c->optional)
      cannot_connect (c, nbd_get_error ());
    c->glue.loop = loop;
    snprintf (c->failure, sizeof c->failure, "refused: %s",
              nbd_get_error ());
    ev_init (&c->glue.io, io_cb);
    ev_init (&c->timer, timeout_cb);
    return;
  }
  watch (c, loop, nbd);
}

bool
conn_poll_connected (struct conn *c)
{
  if (c->connected || c->failure[0] != '\0')
    return true;
  if (nbd_aio_is_connecting (c->glue.nbd) == 1)
    return false;
  if (nbd_aio_is_ready (c->glue.nbd) != 1 && c->optional) {
    give_up (c, "refused: the server closed the connection");
    return true;
  }
  if (nbd_aio_is_ready (c->glue.nbd) != 1)
    cannot_connect (c, "the server closed the connection");
  c->connected = true;
  /* Set after connecting, for every kind of URI: tools/lib/handle.c
   * explains why that does as well as setting them before connect.
   */
  if (c->socket_buffer > 0)
    set_socket_buffers (c->glue.nbd, c->name, c->socket_buffer,
                        c->socket_buffer_tcp);
  debug ("%s: connected to %s", c->name, c->uri);
  return true;
}

void
conn_wait_connected (struct conn *const conns[], size_t n)
{
  struct ev_loop *loop = conns[0]->glue.loop;
  bool all;
  size_t i;

  for (;;) {
    all = true;
    for (i = 0; i < n; i++) {
      if (!conn_poll_connected (conns[i]))
        all = false;
      conn_update (conns[i]);
    }
    if (all)
      return;
    ev_run (loop, EVRUN_ONCE);
  }
}

void
conn_update (struct conn *c)
{
  bool waiting;

  if (c->failure[0] != '\0')
    return;
  /* A wait starts now: the server has had no chance to answer yet, so
   * the time it spent idle before does not count against it.  Without
   * a timeout there is nothing to keep.
   */
  if (c->timeout > 0) {
    waiting = !c->connected || c->closing ||
      nbd_aio_in_flight (c->glue.nbd) > 0;
    if (waiting && !c->waiting)
      c->last_reply = ev_now (c->glue.loop);
    c->waiting = waiting;
  }
  glue_update (&c->glue);
}

bool
conn_busy (const struct conn *c)
{
  return c->failure[0] == '\0' && nbd_aio_in_flight (c->glue.nbd) > 0;
}

bool
conn_ready (const struct conn *c)
{
  return c->failure[0] == '\0' && nbd_aio_is_ready (c->glue.nbd) == 1;
}

void
conn_check (const struct conn *c, struct stop *s)
{
  if (c->failure[0] != '\0')
    stop_fail (s, "%s: %s", c->name, c->failure);
  /* A server that closes the socket cleanly leaves no error to report:
   * libnbd reads the end of the stream, fails the commands in flight
   * and marks the handle dead or closed.
   */
  else if (nbd_aio_is_dead (c->glue.nbd) == 1 ||
           nbd_aio_is_closed (c->glue.nbd) == 1)
    stop_fail (s, "%s: connection lost: the server closed it", c->name);
}

int
conn_issue_errno (struct conn *c)
{
  int err = nbd_get_errno ();

  if (err == 0)
    err = EIO;
  if (c->refused_errno == 0) {
    c->refused_errno = err;
    snprintf (c->refused, sizeof c->refused, "%s", nbd_get_error ());
  }
  return err;
}

const char *
conn_strerror (const struct conn *c, int err)
{
  static char text[512];
  const char *s = err == ESHUTDOWN ? "the server is shutting down"
    : strerror (err);

  if (c == NULL || err != c->refused_errno || c->refused[0] == '\0')
    return s;
  snprintf (text, sizeof text, "%s (%s)", s, c->refused);
  return text;
}

/* True once c needs nothing more from the loop to close. */
static bool
closed (const struct conn *c)
{
  return c->failure[0] != '\0' || nbd_aio_is_closed (c->glue.nbd) == 1 ||
    nbd_aio_is_dead (c->glue.nbd) == 1;
}

void
conn_close_all (struct conn *const conns[], size_t n, const struct stop *s)
{
  struct ev_loop *loop = conns[0]->glue.loop;
  bool stopping = stop_requested (s), all;
  size_t i;

  for (i = 0; i < n; i++)
    if (conn_ready (conns[i]) &&
        nbd_aio_disconnect (conns[i]->glue.nbd, 0) == 0)
      conns[i]->closing = true;
  for (;;) {
    all = true;
    for (i = 0; i < n; i++) {
      if (!closed (conns[i]))
        all = false;
      conn_update (conns[i]);
    }
    /* A signal now means: do not wait for the goodbyes.  (A program
     * already stopping gets "interrupted again" from tools/lib/stop.c.)
     */
    if (all || (!stopping && stop_requested (s)))
      break;
    ev_run (loop, EVRUN_ONCE);
  }
  /* Last first: closing the handle that started a captive server sends
   * it SIGTERM and waits for it to exit (libnbd's lib/handle.c), so the
   * other connections to it, opened after it, are closed before, and
   * the server has no client left to finish with.
   */
  for (i = n; i-- > 0; ) {
    conn_stop (conns[i]);
    image_close_handle (conns[i]->glue.nbd);
  }
}

void
conn_stop (struct conn *c)
{
  glue_stop (&c->glue);
  ev_timer_stop (c->glue.loop, &c->timer);
}
