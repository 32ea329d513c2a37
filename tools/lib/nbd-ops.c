/* nbd-libev-examples: an NBD server as an endpoint (endpoint.h).
 *
 * A set of connections to one server (tools/lib/server.h).  Each
 * command goes to the connection with the least in flight; what
 * concerns the whole image (its size and block sizes, block status,
 * the flush) goes to the first, v[0].  The extent map is common/
 * extents.c's, with what a tool adds: a map that cannot be set up is
 * fatal, a failed block-status command is said under -v (its range is
 * read as data, which is always right), and a map that cannot grow
 * stops the program cleanly (tools/lib/stop.h).
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include <ev.h>

#include "block-size.h"
#include "endpoint.h"
#include "server.h"
#include "util.h"

struct remote {
  struct endpoint ep;           /* first: the ops cast back */
  struct server server;
};

static const struct endpoint_ops remote_ops;

static struct server *
server_of (const struct endpoint *ep)
{
  return &((struct remote *) ep)->server;
}

/* The first connection: whole-image questions and commands go there. */
static struct nbd_handle *
first (const struct endpoint *ep)
{
  return server_of (ep)->v[0]->glue.nbd;
}

struct endpoint *
endpoint_open_nbd (struct ev_loop *loop, const char *name, struct image *img,
                   const struct handle_options *opts, double timeout,
                   unsigned wanted, bool writing)
{
  struct remote *n = calloc (1, sizeof *n);
  struct endpoint *ep = &n->ep;

  if (n == NULL)
    die ("calloc: %s", strerror (errno));
  server_connect (&n->server, loop, name, img, opts, timeout, wanted,
                  writing);
  *ep = (struct endpoint) {
    .ops = &remote_ops, .name = name,
    .can_zero = nbd_can_zero (first (ep)) == 1,
    .read_only = nbd_is_read_only (first (ep)) == 1,
    .min_block = min_block_size (first (ep)),
    .max_block = max_block_size (first (ep)),
    .served_at_once = n->server.n * SERVED_AT_ONCE,
    .connections = n->server.n, .most_connections = n->server.most,
  };
  return ep;
}

static uint64_t
remote_size (const struct endpoint *ep)
{
  return export_size (first (ep), ep->name);
}

static void
remote_check_end (const struct endpoint *ep, uint64_t size)
{
  check_image_end (first (ep), ep->name, size);
}

static uint64_t
remote_fit_request_size (const struct endpoint *ep, uint64_t request_size,
                         uint64_t unit)
{
  return fit_request_size (first (ep), ep->name, request_size, unit);
}

static uint64_t
remote_check_request_size (const struct endpoint *ep, uint64_t request_size,
                           uint64_t max_size)
{
  check_request_size (first (ep), ep->name, request_size);
  return fit_max_size (first (ep), max_size, request_size);
}

/* The handle of the connection picked for a command, recorded in
 * *conn.
 */
static struct nbd_handle *
pick (struct endpoint *ep, struct conn **conn)
{
  *conn = server_pick (server_of (ep));
  return (*conn)->glue.nbd;
}

static int
remote_read (struct endpoint *ep, void *buf, uint64_t length,
             uint64_t offset, uint64_t *got, nbd_completion_callback cb,
             struct conn **conn)
{
  return nbd_aio_pread (pick (ep, conn), buf, length, offset, cb, 0) == -1 ?
    -1 : 0;
}

static int
remote_write (struct endpoint *ep, const void *buf, uint64_t length,
              uint64_t offset, nbd_completion_callback cb,
              struct conn **conn)
{
  return nbd_aio_pwrite (pick (ep, conn), buf, length, offset, cb, 0) == -1 ?
    -1 : 0;
}

static int
remote_zero (struct endpoint *ep, uint64_t length, uint64_t offset,
             bool no_hole, nbd_completion_callback cb, struct conn **conn)
{
  return nbd_aio_zero (pick (ep, conn), length, offset, cb,
                       no_hole ? LIBNBD_CMD_FLAG_NO_HOLE : 0) == -1 ? -1 : 0;
}

static int
remote_issue_errno (struct endpoint *ep, struct conn *conn)
{
  return conn_issue_errno (conn);
}

/* The NBD protocol forbids a flush to a server that does not advertise
 * one, so the client can do no more for durability.
 */
static bool
remote_flush (struct endpoint *ep, struct flush *f, struct stop *s)
{
  nbd_completion_callback cb = { .callback = flush_done, .user_data = f };

  if (f->state == FLUSH_NONE) {
    if (nbd_can_flush (first (ep)) != 1) {
      debug ("%s does not advertise flush; none sent", ep->name);
      f->state = FLUSH_DONE;
    }
    else {
      debug ("%s: flush", ep->name);
      if (nbd_aio_flush (first (ep), cb, 0) == -1) {
        stop_fail (s, "%s: flush: %s", ep->name, nbd_get_error ());
        f->state = FLUSH_DONE;
      }
      else
        f->state = FLUSH_IN_FLIGHT;
    }
  }
  return flush_over (f, ep->name, s);
}

static bool
remote_ready (const struct endpoint *ep)
{
  return conn_ready (server_of (ep)->v[0]);
}

static bool
remote_busy (const struct endpoint *ep)
{
  return server_busy (server_of (ep));
}

static void
remote_check (const struct endpoint *ep, struct stop *s)
{
  server_check (server_of (ep), s);
}

static void
remote_update (struct endpoint *ep)
{
  struct server *s = server_of (ep);

  server_update (s);
  ep->connections = s->n;
  ep->served_at_once = s->n * SERVED_AT_ONCE;
}

static void
remote_widen (struct endpoint *ep, unsigned connections)
{
  server_widen (server_of (ep), connections);
}

static void
remote_set_describe (struct endpoint *ep, conn_describe_fn describe,
                     void *data)
{
  server_set_describe (server_of (ep), describe, data);
}

static const char *
remote_conn_name (const struct endpoint *ep, const struct conn *conn)
{
  return conn->name;
}

static const char *
remote_strerror (struct endpoint *ep, const struct conn *conn, int err)
{
  return conn_strerror (conn, err);
}

/* Block status goes to the first connection: a map is one sequence. */
static void
remote_map_open (struct endpoint *ep, struct extent_map *map)
{
  if (extents_init (map, first (ep), ep->name) == -1)
    die ("%s: %s", ep->name, nbd_get_error ());
  debug ("%s: %s", ep->name, map->supported ?
         "reading extents with block status" :
         "no base:allocation: every extent is data");
}

static void
remote_map_pump (struct endpoint *ep, struct extent_map *map,
                 struct stop *s, uint64_t offset, uint64_t ahead)
{
  int r = extents_pump (map, offset, ahead);

  if (r > 0)
    debug ("%s: block status at offset %" PRIu64 " length %" PRIu64
           " failed (%s): reading that range as data", map->name,
           map->req_offset, map->req_length, strerror (r));
  else if (r == -1 && !stop_requested (s))
    stop_fail (s, "%s: cannot grow the extent map: %s", map->name,
               strerror (errno));
}

/* Every server's connections disconnect together, in one loop. */
static void
remote_close (struct endpoint *const eps[], size_t n, const struct stop *s)
{
  struct server **sets = calloc (n + 1, sizeof *sets);
  size_t i;

  if (sets == NULL)
    die ("calloc: %s", strerror (errno));
  for (i = 0; i < n; i++)
    sets[i] = server_of (eps[i]);
  server_close (sets, n, s);
  free (sets);
  for (i = 0; i < n; i++)
    free (eps[i]);
}

static const struct endpoint_ops remote_ops = {
  .size = remote_size,
  .check_end = remote_check_end,
  .fit_request_size = remote_fit_request_size,
  .check_request_size = remote_check_request_size,
  .read = remote_read,
  .write = remote_write,
  .zero = remote_zero,
  .issue_errno = remote_issue_errno,
  .flush = remote_flush,
  .ready = remote_ready,
  .busy = remote_busy,
  .check = remote_check,
  .update = remote_update,
  .widen = remote_widen,
  .set_describe = remote_set_describe,
  .conn_name = remote_conn_name,
  .strerror = remote_strerror,
  .map_open = remote_map_open,
  .map_pump = remote_map_pump,
  .close = remote_close,
};
