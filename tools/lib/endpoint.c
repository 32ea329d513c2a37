/* nbd-libev-examples: what a pass reads from or writes to.
 * See endpoint.h.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include <ev.h>

#include "block-size.h"
#include "endpoint.h"
#include "map.h"
#include "util.h"

/* True if the user asked for captive servers for local files. */
static bool
no_io_uring (void)
{
  const char *s = getenv (NO_IO_URING_ENV);

  return s != NULL && strcmp (s, "") != 0 && strcmp (s, "0") != 0;
}

/* A local raw file, opened by the program itself; false if io_uring
 * is not to be had (or not wanted), and the file needs a server.
 */
static bool
open_file (struct endpoint *ep, struct ev_loop *loop, const char *name,
           const struct image *img, bool writing, enum image_cache cache)
{
  char why[4096];
  bool uring_failed;

  if (no_io_uring ()) {
    debug ("%s: %s is set: served by nbdkit", img->name, NO_IO_URING_ENV);
    return false;
  }
  if (file_open (&ep->file, loop, name, img->path, writing,
                 cache == IMAGE_CACHE_NONE, &uring_failed, why,
                 sizeof why) != 0) {
    if (!uring_failed)
      die ("%s: %s", name, why);
    debug ("%s: %s: served by nbdkit instead", img->name, why);
    return false;
  }
  ep->kind = ENDPOINT_FILE;
  debug ("%s: %s, read%s by this program through io_uring%s", name,
         ep->file.block_device ? "block device" : "raw file",
         writing ? " and written" : "",
         ep->file.direct ? ", O_DIRECT" : "");
  return true;
}

void
endpoint_open (struct endpoint *ep, struct ev_loop *loop, const char *name,
               struct image *img, const struct handle_options *opts,
               double timeout, unsigned wanted, bool writing,
               enum image_cache cache)
{
  memset (ep, 0, sizeof *ep);
  ep->name = name;
  ep->want_extents = opts->want_extents;
  if (image_is_local_raw (img) &&
      open_file (ep, loop, name, img, writing, cache))
    return;
  /* nbd-evsum names an endpoint by its image: no role to add. */
  if (image_is_local_raw (img))
    image_serve_raw (img, name == img->name ? NULL : name, writing, cache);
  ep->kind = ENDPOINT_NBD;
  server_connect (&ep->server, loop, name, img, opts, timeout, wanted,
                  writing);
}

/* The first connection: whole-image questions and commands go there. */
static struct nbd_handle *
first (const struct endpoint *ep)
{
  return ep->server.v[0]->glue.nbd;
}

uint64_t
endpoint_size (const struct endpoint *ep)
{
  if (ep->kind == ENDPOINT_FILE)
    return ep->file.size;
  return export_size (first (ep), ep->name);
}

uint64_t
endpoint_min_block (const struct endpoint *ep)
{
  if (ep->kind == ENDPOINT_FILE)
    return file_block_size (&ep->file);
  return min_block_size (first (ep));
}

uint64_t
endpoint_max_block (const struct endpoint *ep)
{
  if (ep->kind == ENDPOINT_FILE)
    return 0;
  return max_block_size (first (ep));
}

bool
endpoint_can_zero (const struct endpoint *ep)
{
  if (ep->kind == ENDPOINT_FILE)
    return true;
  return nbd_can_zero (first (ep)) == 1;
}

bool
endpoint_read_only (const struct endpoint *ep)
{
  /* A file opened for writing was opened read-write, or not at all. */
  if (ep->kind == ENDPOINT_FILE)
    return false;
  return nbd_is_read_only (first (ep)) == 1;
}

void
endpoint_check_end (const struct endpoint *ep, uint64_t size)
{
  if (ep->kind == ENDPOINT_NBD)
    check_image_end (first (ep), ep->name, size);
}

/* The handle of the connection picked for the slot's command. */
static struct nbd_handle *
pick (struct endpoint *ep, struct slot *slot)
{
  slot->conn = server_pick (&ep->server);
  return ((struct conn *) slot->conn)->glue.nbd;
}

int
endpoint_read (struct endpoint *ep, struct slot *slot, void *buf,
               uint64_t length, uint64_t offset, nbd_completion_callback cb)
{
  if (ep->kind == ENDPOINT_FILE) {
    slot->conn = &ep->file;
    return file_read (&ep->file, buf, length, offset, cb);
  }
  return nbd_aio_pread (pick (ep, slot), buf, length, offset, cb, 0) == -1 ?
    -1 : 0;
}

int
endpoint_write (struct endpoint *ep, struct slot *slot, const void *buf,
                uint64_t length, uint64_t offset, nbd_completion_callback cb)
{
  if (ep->kind == ENDPOINT_FILE) {
    slot->conn = &ep->file;
    return file_write (&ep->file, buf, length, offset, cb);
  }
  return nbd_aio_pwrite (pick (ep, slot), buf, length, offset, cb, 0) == -1 ?
    -1 : 0;
}

int
endpoint_zero (struct endpoint *ep, struct slot *slot, uint64_t length,
               uint64_t offset, bool no_hole, nbd_completion_callback cb)
{
  if (ep->kind == ENDPOINT_FILE) {
    slot->conn = &ep->file;
    return file_zero (&ep->file, length, offset, no_hole, cb);
  }
  return nbd_aio_zero (pick (ep, slot), length, offset, cb,
                       no_hole ? LIBNBD_CMD_FLAG_NO_HOLE : 0) == -1 ? -1 : 0;
}

int
endpoint_issue_errno (struct endpoint *ep, struct slot *slot)
{
  if (ep->kind == ENDPOINT_FILE)
    return errno ? errno : EIO;
  return conn_issue_errno (slot->conn);
}

bool
endpoint_flush (struct endpoint *ep, struct flush *f, struct stop *s)
{
  if (ep->kind == ENDPOINT_FILE)
    return flush_file_advance (f, &ep->file, ep->name, s);
  return flush_advance (f, first (ep), ep->name, s);
}

bool
endpoint_ready (const struct endpoint *ep)
{
  return ep->kind == ENDPOINT_FILE || conn_ready (ep->server.v[0]);
}

bool
endpoint_busy (const struct endpoint *ep)
{
  if (ep->kind == ENDPOINT_FILE)
    return file_busy (&ep->file);
  return server_busy (&ep->server);
}

void
endpoint_check (const struct endpoint *ep, struct stop *s)
{
  if (ep->kind == ENDPOINT_NBD)
    server_check (&ep->server, s);
}

void
endpoint_update (struct endpoint *ep)
{
  if (ep->kind == ENDPOINT_FILE)
    file_update (&ep->file);
  else
    server_update (&ep->server);
}

bool
endpoint_owns (const struct endpoint *ep, const void *conn)
{
  unsigned i;

  if (ep->kind == ENDPOINT_FILE)
    return conn == &ep->file;
  for (i = 0; i < ep->server.n; i++)
    if (conn == ep->server.v[i])
      return true;
  return false;
}

const char *
endpoint_conn_name (const struct endpoint *ep, const void *conn)
{
  if (ep->kind == ENDPOINT_FILE)
    return ep->name;
  return ((const struct conn *) conn)->name;
}

const char *
endpoint_strerror (const struct endpoint *ep, const void *conn, int err)
{
  /* A read that met the end of the file: it shrank under the program. */
  if (ep->kind == ENDPOINT_FILE && err == ENODATA)
    return "unexpected end of file";
  if (ep->kind == ENDPOINT_FILE)
    return strerror (err);
  return conn_strerror (conn, err);
}

void
endpoint_map_open (struct endpoint *ep, struct extent_map *map)
{
  if (ep->kind == ENDPOINT_FILE)
    map_open_file (map, &ep->file, ep->name, ep->want_extents);
  else
    map_open (map, first (ep), ep->name);
}

void
endpoint_map_pump (struct endpoint *ep, struct extent_map *map,
                   struct stop *s, uint64_t offset, uint64_t ahead)
{
  if (ep->kind == ENDPOINT_FILE)
    map_pump_file (s, map, &ep->file, offset, ahead);
  else
    map_pump (s, map, offset, ahead);
}

void
endpoint_close (struct endpoint *const eps[], size_t n,
                const struct stop *s)
{
  struct server **sets = calloc (n + 1, sizeof *sets);
  size_t i, nr_sets = 0;

  if (sets == NULL)
    die ("calloc: %s", strerror (errno));
  for (i = 0; i < n; i++)
    if (eps[i]->kind == ENDPOINT_NBD)
      sets[nr_sets++] = &eps[i]->server;
  server_close (sets, nr_sets, s);
  free (sets);
  for (i = 0; i < n; i++)
    if (eps[i]->kind == ENDPOINT_FILE)
      file_close (&eps[i]->file);
}
