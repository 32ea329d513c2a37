/* nbd-libev-examples: what a pass reads from or writes to.
 * See endpoint.h.  The kinds are nbd-ops.c, file-ops.c, stream-ops.c
 * and null-ops.c; this file opens the one an image needs and calls
 * its table.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include <ev.h>

#include "captive.h"
#include "endpoint.h"
#include "util.h"

struct endpoint *
endpoint_open (struct ev_loop *loop, const char *name, struct image *img,
               const struct handle_options *opts, double timeout,
               unsigned wanted, bool writing, enum image_cache cache)
{
  struct endpoint *ep = NULL;

  if (image_is_null (img))
    ep = endpoint_open_null (name);
  else if (img->kind == IMAGE_STREAM)
    ep = endpoint_open_stream (loop, name, img, writing);
  else if (image_is_local_raw (img)) {
    ep = endpoint_open_file (loop, name, img, writing, cache);
    /* nbd-evsum names an endpoint by its image: no role to add. */
    if (ep == NULL)
      image_serve_raw (img, name == img->name ? NULL : name, writing, cache);
  }
  if (ep == NULL)
    ep = endpoint_open_nbd (loop, name, img, opts, timeout, wanted, writing);
  ep->want_extents = opts->want_extents;
  return ep;
}

uint64_t
endpoint_size (const struct endpoint *ep)
{
  return ep->ops->size (ep);
}

int
endpoint_extend (struct endpoint *ep, uint64_t size)
{
  return ep->ops->extend ? ep->ops->extend (ep, size) : 0;
}

bool
endpoint_ended (const struct endpoint *ep)
{
  return ep->ops->ended && ep->ops->ended (ep);
}

void
endpoint_set_limit (struct endpoint *ep, uint64_t limit)
{
  if (ep->ops->set_limit)
    ep->ops->set_limit (ep, limit);
}

uint64_t
endpoint_complete_below (const struct endpoint *ep, uint64_t fallback)
{
  return ep->ops->complete_below ? ep->ops->complete_below (ep, fallback)
    : fallback;
}

void
endpoint_check_end (const struct endpoint *ep, uint64_t size)
{
  if (ep->ops->check_end)
    ep->ops->check_end (ep, size);
}

uint64_t
endpoint_fit_request_size (const struct endpoint *ep, uint64_t request_size,
                           uint64_t unit)
{
  return ep->ops->fit_request_size ?
    ep->ops->fit_request_size (ep, request_size, unit) : request_size;
}

uint64_t
endpoint_check_request_size (const struct endpoint *ep,
                             uint64_t request_size, uint64_t max_size)
{
  return ep->ops->check_request_size ?
    ep->ops->check_request_size (ep, request_size, max_size) : max_size;
}

int
endpoint_read (struct endpoint *ep, void *buf, uint64_t length,
               uint64_t offset, uint64_t *got, nbd_completion_callback cb,
               struct conn **conn)
{
  *conn = NULL;
  if (ep->ops->read == NULL) {
    errno = ENOTSUP;
    return -1;
  }
  return ep->ops->read (ep, buf, length, offset, got, cb, conn);
}

int
endpoint_write (struct endpoint *ep, const void *buf, uint64_t length,
                uint64_t offset, nbd_completion_callback cb,
                struct conn **conn)
{
  *conn = NULL;
  if (ep->ops->write == NULL) {
    errno = ENOTSUP;
    return -1;
  }
  return ep->ops->write (ep, buf, length, offset, cb, conn);
}

int
endpoint_zero (struct endpoint *ep, uint64_t length, uint64_t offset,
               bool no_hole, nbd_completion_callback cb, struct conn **conn)
{
  *conn = NULL;
  /* The caller asked can_zero first. */
  if (ep->ops->zero == NULL || !ep->can_zero) {
    errno = ENOTSUP;
    return -1;
  }
  return ep->ops->zero (ep, length, offset, no_hole, cb, conn);
}

int
endpoint_issue_errno (struct endpoint *ep, struct conn *conn)
{
  if (ep->ops->issue_errno)
    return ep->ops->issue_errno (ep, conn);
  return errno ? errno : EIO;
}

bool
endpoint_zero_unsupported (struct endpoint *ep, int err)
{
  if (ep->ops->zero_unsupported == NULL ||
      !ep->ops->zero_unsupported (ep, err))
    return false;
  ep->can_zero = false;
  return true;
}

bool
endpoint_flush (struct endpoint *ep, struct flush *f, struct stop *s)
{
  return ep->ops->flush == NULL || ep->ops->flush (ep, f, s);
}

bool
endpoint_ready (const struct endpoint *ep)
{
  return ep->ops->ready == NULL || ep->ops->ready (ep);
}

bool
endpoint_busy (const struct endpoint *ep)
{
  return ep->ops->busy && ep->ops->busy (ep);
}

void
endpoint_check (const struct endpoint *ep, struct stop *s)
{
  if (ep->ops->check)
    ep->ops->check (ep, s);
}

void
endpoint_stopping (struct endpoint *ep)
{
  if (ep->ops->stopping)
    ep->ops->stopping (ep);
}

void
endpoint_update (struct endpoint *ep)
{
  if (ep->ops->update)
    ep->ops->update (ep);
}

void
endpoint_widen (struct endpoint *ep, unsigned connections)
{
  if (ep->ops->widen)
    ep->ops->widen (ep, connections);
}

void
endpoint_set_describe (struct endpoint *ep, conn_describe_fn describe,
                       void *data)
{
  if (ep->ops->set_describe)
    ep->ops->set_describe (ep, describe, data);
}

const char *
endpoint_conn_name (const struct endpoint *ep, const struct conn *conn)
{
  return ep->ops->conn_name ? ep->ops->conn_name (ep, conn) : ep->name;
}

const char *
endpoint_strerror (struct endpoint *ep, const struct conn *conn, int err)
{
  return ep->ops->strerror ? ep->ops->strerror (ep, conn, err)
    : strerror (err);
}

void
endpoint_map_open (struct endpoint *ep, struct extent_map *map)
{
  if (ep->ops->map_open)
    ep->ops->map_open (ep, map);
  else
    *map = (struct extent_map) { .name = ep->name, .size = SIZE_UNKNOWN,
                                 .supported = false, .block = 1 };
}

void
endpoint_map_pump (struct endpoint *ep, struct extent_map *map,
                   struct stop *s, uint64_t offset, uint64_t ahead)
{
  if (ep->ops->map_pump)
    ep->ops->map_pump (ep, map, s, offset, ahead);
}

/* Each kind closes its own together: the NBD servers disconnect in one
 * loop, all at once, rather than one after the other.  The kinds are
 * found by their tables, in the order the endpoints came.
 */
void
endpoint_close (struct endpoint *const eps[], size_t n,
                const struct stop *s)
{
  struct endpoint **same = calloc (n + 1, sizeof *same);
  bool *done = calloc (n + 1, sizeof *done);
  size_t i, j, k;

  if (same == NULL || done == NULL)
    die ("calloc: %s", strerror (errno));
  for (i = 0; i < n; i++) {
    if (done[i])
      continue;
    for (j = i, k = 0; j < n; j++)
      if (!done[j] && eps[j]->ops == eps[i]->ops) {
        same[k++] = eps[j];
        done[j] = true;
      }
    same[0]->ops->close (same, k, s);
  }
  free (same);
  free (done);
}
