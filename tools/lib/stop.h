/* nbd-libev-examples: stopping a libev program without hurting its
 * servers.
 *
 * A program that must stop in the middle of its work, because the user
 * pressed Ctrl-C (SIGINT), was sent SIGTERM, or a command failed, should
 * not simply exit: its servers are still answering the commands in
 * flight, and a server may not expect the client to vanish with replies
 * pending (nbdkit 1.32 aborts then, taking down a server that other
 * clients may share).  So it stops in steps:
 *
 *  1. stop_fail, or one of the signals, records why, once: the first
 *     failure is the one reported.  From then on stop_requested is true
 *     and the program's prepare callback starts no new commands.
 *
 *  2. The program keeps its loop running until no handle has a command
 *     in flight, then breaks out of it.  The connections' timeouts bound
 *     the wait (tools/lib/conn.h): a server silent for that long is given
 *     up as failed.  Without a timeout, a grace timer does it: after
 *     STOP_GRACE seconds the program exits with what it has.  A local
 *     file's commands (tools/lib/file.h) have no timeout of their own:
 *     with --timeout they are waited for until the kernel ends them.
 *     The first signal says at once what is being waited for, since the
 *     wait may be long; a second signal ends the program at once either
 *     way, after saying how far it got.
 *
 *  3. The program shuts its connections down cleanly (conn_close_all),
 *     says what it did, and calls stop_exit, which prints the recorded
 *     failure and exits: status 1 for a failure, 128 + the signal
 *     number for a signal, as a shell reports it.
 */

#ifndef NBD_LIBEV_EXAMPLES_STOP_H
#define NBD_LIBEV_EXAMPLES_STOP_H

#include <stdbool.h>

#include <ev.h>

/* How long the commands in flight get to finish once the program is
 * stopping, when the program has no timeout (--timeout=0) to bound the
 * wait: the user asked to wait for ever for a slow server, not for a
 * program that was asked to stop.
 */
#define STOP_GRACE 5.0

struct stop {
  ev_signal sigint, sigterm;
  /* Set once the program may have requests in flight; until then a
   * signal ends it at once, in one line.  Called on each signal
   * (signum) instead of the plain messages: the first (again false)
   * should say at once what the program waits for, the second (again
   * true), before the program exits, how far it got.
   */
  void (*say) (void *data, const struct stop *s, int signum, bool again);
  void *say_data;
  ev_timer grace;
  double grace_seconds;         /* 0: no grace timer */
  struct ev_loop *loop;
  int signum;                   /* the signal that stopped us, or 0 */
  int status;                   /* 0 while running, then the exit status */
  char message[512];            /* the failure to report, or "" */
};

/* Watch for SIGINT and SIGTERM in loop.  grace is how long the
 * commands in flight get once stopping, or 0 when the connections'
 * timeouts bound the wait.
 */
void stop_init (struct stop *s, struct ev_loop *loop, double grace);

/* Record a failure and start stopping.  Only the first is kept. */
void stop_fail (struct stop *s, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

static inline bool
stop_requested (const struct stop *s)
{
  return s->status != 0;
}

/* The signal's name, such as "SIGINT". */
const char *stop_signal_name (const struct stop *s);

/* Print the recorded failure, if any, and exit with the status. */
void stop_exit (struct stop *s) __attribute__ ((noreturn));

#endif /* NBD_LIBEV_EXAMPLES_STOP_H */
