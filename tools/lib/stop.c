/* nbd-libev-examples: stopping cleanly.  See stop.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <ev.h>

#include "stop.h"
#include "util.h"

/* The grace period is over and commands are still in flight: their
 * servers are not answering, so there is nothing left to wait for.
 */
static void
grace_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
  struct stop *s = w->data;

  if (s->message[0] == '\0')
    message ("interrupted by %s; commands still in flight after %g s, "
             "exiting without waiting for them", stop_signal_name (s),
             s->grace_seconds);
  else
    message ("%s", s->message);
  exit (s->status);
}

/* Start stopping: the first reason wins, and the grace period starts. */
static void
begin (struct stop *s, int status)
{
  s->status = status;
  if (s->grace_seconds > 0) {
    ev_timer_set (&s->grace, s->grace_seconds, 0);
    ev_timer_start (s->loop, &s->grace);
  }
}

static void
signal_cb (struct ev_loop *loop, ev_signal *w, int revents)
{
  struct stop *s = w->data;

  /* A second signal, or a signal while stopping after a failure: the
   * user does not want to wait.
   */
  /* Still starting (no say yet): nothing is in flight but handshakes,
   * which need no goodbye, and a captive server exits with this
   * program, so there is nothing to wait for.
   */
  if (s->say == NULL && !stop_requested (s)) {
    message ("interrupted by %s while starting, before any request was "
             "sent", w->signum == SIGINT ? "SIGINT" : "SIGTERM");
    exit (128 + w->signum);
  }
  if (stop_requested (s)) {
    if (s->say)
      s->say (s->say_data, s, w->signum, true);
    else
      message ("interrupted again by %s: exiting at once",
               w->signum == SIGINT ? "SIGINT" : "SIGTERM");
    exit (128 + w->signum);
  }
  s->signum = w->signum;
  begin (s, 128 + w->signum);
  if (s->say)
    s->say (s->say_data, s, w->signum, false);
}

void
stop_init (struct stop *s, struct ev_loop *loop, double grace)
{
  s->loop = loop;
  s->grace_seconds = grace;
  s->signum = 0;
  s->status = 0;
  s->say = NULL;
  s->message[0] = '\0';
  ev_signal_init (&s->sigint, signal_cb, SIGINT);
  s->sigint.data = s;
  ev_signal_start (loop, &s->sigint);
  ev_signal_init (&s->sigterm, signal_cb, SIGTERM);
  s->sigterm.data = s;
  ev_signal_start (loop, &s->sigterm);
  ev_init (&s->grace, grace_cb);
  s->grace.data = s;
}

void
stop_fail (struct stop *s, const char *fmt, ...)
{
  va_list ap;

  if (stop_requested (s))
    return;
  va_start (ap, fmt);
  vsnprintf (s->message, sizeof s->message, fmt, ap);
  va_end (ap);
  begin (s, EXIT_FAILURE);
}

const char *
stop_signal_name (const struct stop *s)
{
  return s->signum == SIGINT ? "SIGINT" : s->signum == SIGTERM ? "SIGTERM"
    : "a signal";
}

void
stop_exit (struct stop *s)
{
  if (s->message[0] != '\0')
    die ("%s", s->message);
  exit (s->status);
}
