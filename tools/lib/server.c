/* nbd-libev-examples: several connections to one server.  See server.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>
#include <ev.h>

#include "conn.h"
#include "image.h"
#include "server.h"
#include "util.h"

/* Name connection i, with its number if numbered. */
static char *
name_connection (const char *name, unsigned i, bool numbered)
{
  size_t len = strlen (name) + 32;
  char *s = malloc (len);

  if (s == NULL)
    die ("cannot allocate %zu bytes for a connection's name: %s",
         len, strerror (errno));
  if (numbered)
    snprintf (s, len, "%s connection %u", name, i + 1);
  else
    snprintf (s, len, "%s", name);
  return s;
}

/* How many connections to open, once the first handshake says whether
 * the server advertises multi-conn (tools/lib/server.h has the rule).
 */
static unsigned
connections_wanted (const char *name, const struct image *img,
                    struct nbd_handle *nbd, unsigned wanted, bool writing)
{
  bool multi = nbd_can_multi_conn (nbd) == 1;
  unsigned want;

  if (wanted == 0 && img->kind == IMAGE_COMMAND)
    want = 1;
  else if (wanted == 0)
    want = multi ? DEFAULT_CONNECTIONS : 1;
  else if (wanted > 1 && !multi && writing)
    die ("%s: the server does not advertise multi-conn, so a flush on one "
         "of %u connections would not cover writes on the others; use "
         "--connections=1", name, wanted);
  /* Reading too: "In the absence of this flag, clients SHOULD NOT
   * multiplex their commands over more than one connection" (the NBD
   * protocol, NBD_FLAG_CAN_MULTI_CONN).  nbdcopy forces one as well.
   */
  else if (wanted > 1 && !multi)
    want = 1;
  else
    want = wanted;
  debug ("%s: %u connection%s (%s)", name, want, want == 1 ? "" : "s",
         want < wanted ? "not the ones asked for: the server does not "
         "advertise multi-conn"
         : wanted != 0 ? "asked for"
         : img->kind == IMAGE_COMMAND ? "a captive server may take only one"
         : multi ? "the server advertises multi-conn; more if they bring "
                   "more rate"
         : "the server does not advertise multi-conn");
  return want;
}

/* Start connection i to the server the first one reached, optional:
 * a server may accept fewer connections than it advertises use for (a
 * connection limit), and the program goes on with those it took.  A
 * captive server listens on the socket libnbd made for it, which
 * nbd_get_uri names; only the first connection starts (and will stop)
 * the server.  Once there are several, each connection's messages say
 * which.
 */
static void
open_extra (struct server *s, unsigned i)
{
  struct image others = *s->img;

  if (s->img->kind != IMAGE_URI && s->socket_uri == NULL) {
    s->socket_uri = nbd_get_uri (s->c[0].glue.nbd);
    if (s->socket_uri == NULL)
      die ("%s: %s", s->name, nbd_get_error ());
  }
  if (s->socket_uri != NULL) {
    others.kind = IMAGE_URI;
    others.uri = s->socket_uri;
  }
  if (i == 1) {
    free (s->names[0]);
    s->names[0] = name_connection (s->name, 0, true);
    s->c[0].name = s->names[0];
  }
  s->names[i] = name_connection (s->name, i, true);
  s->c[i].optional = true;
  s->c[i].describe = s->c[0].describe;
  s->c[i].describe_data = s->c[0].describe_data;
  conn_connect (&s->c[i], s->loop, s->names[i], &others, &s->opts,
                s->timeout);
  s->pending[i] = true;
  s->opened = i + 1;
}

/* Whether connection i's handshake describes the export the first
 * one's did: its size, and the flags that say what it may be sent.
 * Several connections are opened only where the server advertises
 * multi-conn, its promise that they all reach one export; one that
 * breaks it is a server not to copy from.  Returns false, with the
 * reason in s->differs, if they differ.
 */
static bool
same_export (struct server *s, unsigned i)
{
  struct nbd_handle *a = s->c[0].glue.nbd, *b = s->c[i].glue.nbd;
  int64_t first = nbd_get_size (a), size = nbd_get_size (b);

  if (size != first)
    snprintf (s->differs, sizeof s->differs, "%s: the server says the "
              "image is %" PRIi64 " bytes, where %s was told %" PRIi64,
              s->names[i], size, s->names[0], first);
  else if (nbd_is_read_only (a) != nbd_is_read_only (b) ||
           nbd_can_flush (a) != nbd_can_flush (b) ||
           nbd_can_zero (a) != nbd_can_zero (b) ||
           nbd_can_multi_conn (a) != nbd_can_multi_conn (b) ||
           nbd_can_meta_context (a, LIBNBD_CONTEXT_BASE_ALLOCATION) !=
           nbd_can_meta_context (b, LIBNBD_CONTEXT_BASE_ALLOCATION))
    snprintf (s->differs, sizeof s->differs, "%s: the server advertises "
              "other capabilities than to %s", s->names[i], s->names[0]);
  else
    return true;
  conn_stop (&s->c[i]);
  return false;
}

/* Connection i has finished its handshake, or was given up: in use
 * from now on, or said under -v and left out.  One that reaches
 * another export is left out too, and stops the program: at once while
 * connecting (nothing is copied yet), else at the next server_check.
 */
static void
settle (struct server *s, unsigned i, bool connecting)
{
  s->pending[i] = false;
  if (s->c[i].failure[0] != '\0')
    debug ("%s: %s; going on with fewer connections",
           s->names[i], s->c[i].failure);
  else if (!same_export (s, i)) {
    if (connecting)
      die ("%s", s->differs);
    debug ("%s", s->differs);
  }
  else
    s->v[s->n++] = &s->c[i];
}

/* Open connections 1 to want - 1 beside the first, and wait for them. */
static void
connect_others (struct server *s, unsigned want)
{
  struct conn *extra[MAX_CONNECTIONS];
  unsigned i;

  for (i = 1; i < want; i++) {
    open_extra (s, i);
    extra[i - 1] = &s->c[i];
  }
  conn_wait_connected (extra, want - 1);
  for (i = 1; i < want; i++)
    settle (s, i, true);
}

void
server_connect (struct server *s, struct ev_loop *loop, const char *name,
               const struct image *img, const struct handle_options *opts,
               double timeout, unsigned wanted, bool writing)
{
  unsigned want;

  s->n = s->next = 0;
  s->differs[0] = '\0';
  s->socket_uri = NULL;
  s->loop = loop;
  s->name = name;
  s->img = img;
  s->opts = *opts;
  s->timeout = timeout;
  s->names[0] = name_connection (name, 0, false);
  conn_connect (&s->c[0], loop, s->names[0], img, opts, timeout);
  s->opened = 1;
  conn_wait_connected ((struct conn *const []) { &s->c[0] }, 1);
  s->v[s->n++] = &s->c[0];

  /* Whether the server advertises multi-conn is only known now, from
   * the first handshake.
   */
  want = connections_wanted (name, img, s->c[0].glue.nbd, wanted, writing);
  /* The default may grow while the program runs (spread.h); a count
   * asked for, or one connection a server must keep to, may not.
   */
  s->most = wanted == 0 && want > 1 ? LONG_CONNECTIONS : want;
  if (want > 1)
    connect_others (s, want);
}

void
server_widen (struct server *s, unsigned want)
{
  while (s->opened < MIN (want, s->most))
    open_extra (s, s->opened);
}

struct conn *
server_pick (struct server *s)
{
  struct conn *best = NULL;
  int64_t fewest = INT64_MAX, in_flight;
  unsigned k;

  /* server_connect made the first connection or stopped the program. */
  assert (s->n > 0);
  for (k = 0; k < s->n; k++) {
    struct conn *c = s->v[(s->next + k) % s->n];

    in_flight = nbd_aio_in_flight (c->glue.nbd);
    if (in_flight < fewest) {
      best = c;
      fewest = in_flight;
    }
  }
  /* The next search starts one further on, so equals take turns. */
  s->next = (s->next + 1) % s->n;
  return best;
}

bool
server_busy (const struct server *s)
{
  unsigned i;

  for (i = 0; i < s->n; i++)
    if (conn_busy (s->v[i]))
      return true;
  return false;
}

void
server_update (struct server *s)
{
  unsigned i;

  for (i = 0; i < s->n; i++)
    conn_update (s->v[i]);
  /* Connections server_widen opened join once their handshake is
   * over; until then the loop watches them for it.
   */
  for (i = 1; i < s->opened; i++) {
    if (!s->pending[i])
      continue;
    if (conn_poll_connected (&s->c[i]))
      settle (s, i, false);
    /* Its events too, at once: a handshake that ended inside a write
     * notification leaves the watcher waiting to write, and the next
     * write event would reach a handle with nothing to send.
     */
    conn_update (&s->c[i]);
  }
}

void
server_check (const struct server *s, struct stop *stop)
{
  unsigned i;

  for (i = 0; i < s->n; i++)
    conn_check (s->v[i], stop);
  if (s->differs[0] != '\0')
    stop_fail (stop, "%s", s->differs);
}

void
server_set_describe (struct server *s, conn_describe_fn describe,
                     void *data)
{
  unsigned i;

  for (i = 0; i < s->opened; i++) {
    s->c[i].describe = describe;
    s->c[i].describe_data = data;
  }
}

void
server_close (struct server *const sets[], size_t n, const struct stop *stop)
{
  struct conn *all[2 * MAX_CONNECTIONS];
  size_t i, j, k = 0;

  /* Every connection opened, the refused ones included: their handles
   * need closing too.
   */
  for (i = 0; i < n; i++)
    for (j = 0; j < sets[i]->opened && k < 2 * MAX_CONNECTIONS; j++)
      all[k++] = &sets[i]->c[j];
  if (k > 0)
    conn_close_all (all, k, stop);
  for (i = 0; i < n; i++) {
    for (j = 0; j < sets[i]->opened; j++)
      free (sets[i]->names[j]);
    free (sets[i]->socket_uri);
  }
}
