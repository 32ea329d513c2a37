/* nbd-libev-examples: several connections to one server.  See server.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* nbdcopy's default: DEFAULT_CONNECTIONS, but no more than the online
 * CPUs (nbdcopy runs a thread per connection and as many threads as
 * CPUs).  It suits one loop too: every connection is another server
 * thread, and with local servers more connections than CPUs make a
 * copy slower, their threads competing for the CPUs with the client
 * (docs/techniques.md, section 10).
 */
static unsigned
default_connections (void)
{
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);

  if (cpus < 1)
    return 1;
  return cpus < DEFAULT_CONNECTIONS ? (unsigned) cpus : DEFAULT_CONNECTIONS;
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
    want = multi ? default_connections () : 1;
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
         : multi ? "the server advertises multi-conn; at most one per CPU"
         : "the server does not advertise multi-conn");
  return want;
}

/* Open connections 1 to want - 1 beside the first.  The extra
 * connections go to the same server.  A captive server listens on the
 * socket libnbd made for it, which nbd_get_uri names; only the first
 * connection starts (and will stop) the server.
 */
static void
connect_others (struct server *s, struct ev_loop *loop, const char *name,
                const struct image *img, const struct handle_options *opts,
                double timeout, unsigned want)
{
  struct conn *extra[MAX_CONNECTIONS];
  struct image others = *img;
  unsigned i;

  if (img->kind != IMAGE_URI) {
    s->socket_uri = nbd_get_uri (s->c[0].glue.nbd);
    if (s->socket_uri == NULL)
      die ("%s: %s", name, nbd_get_error ());
    others.kind = IMAGE_URI;
    others.uri = s->socket_uri;
  }

  /* Once there are several, each connection's messages say which. */
  free (s->names[0]);
  s->names[0] = name_connection (name, 0, true);
  s->c[0].name = s->names[0];
  for (i = 1; i < want; i++) {
    s->names[i] = name_connection (name, i, true);
    s->c[i].optional = true;
    conn_connect (&s->c[i], loop, s->names[i], &others, opts, timeout);
    extra[i - 1] = &s->c[i];
  }
  s->opened = want;
  conn_wait_connected (extra, want - 1);

  /* A server may accept fewer connections than it advertises use for (a
   * connection limit): carry on with those it took.
   */
  for (i = 1; i < want; i++) {
    if (s->c[i].failure[0] != '\0')
      debug ("%s: %s; going on with fewer connections",
             s->names[i], s->c[i].failure);
    else
      s->v[s->n++] = &s->c[i];
  }
}

void
server_connect (struct server *s, struct ev_loop *loop, const char *name,
               const struct image *img, const struct handle_options *opts,
               double timeout, unsigned wanted, bool writing)
{
  unsigned want;

  s->n = s->next = 0;
  s->socket_uri = NULL;
  s->names[0] = name_connection (name, 0, false);
  conn_connect (&s->c[0], loop, s->names[0], img, opts, timeout);
  s->opened = 1;
  conn_wait_connected ((struct conn *const []) { &s->c[0] }, 1);
  s->v[s->n++] = &s->c[0];

  /* Whether the server advertises multi-conn is only known now, from
   * the first handshake.
   */
  want = connections_wanted (name, img, s->c[0].glue.nbd, wanted, writing);
  if (want > 1)
    connect_others (s, loop, name, img, opts, timeout, want);
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
}

void
server_check (const struct server *s, struct stop *stop)
{
  unsigned i;

  for (i = 0; i < s->n; i++)
    conn_check (s->v[i], stop);
}

void
server_set_describe (struct server *s, conn_describe_fn describe,
                     void *data)
{
  unsigned i;

  for (i = 0; i < s->n; i++) {
    s->v[i]->describe = describe;
    s->v[i]->describe_data = data;
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
