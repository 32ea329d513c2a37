/* nbd-libev-examples: what a pass reads from or writes to.
 * See endpoint.h.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* "-", a pipe or a character device: read or written in order. */
static void
open_stream (struct endpoint *ep, struct ev_loop *loop, const char *name,
             const struct image *img, bool writing)
{
  char why[4096];

  const char *std = writing ? "standard output" : "standard input";

  /* nbd-evsum names an endpoint by its image: "-" says little. */
  if (strcmp (name, "-") == 0)
    ep->name = name = std;
  if (strcmp (img->path, "-") == 0 && !img->std_open[writing]) {
    if (name == std)
      die ("%s is closed", std);
    die ("%s: %s is closed", name, std);
  }
  if (stream_open (&ep->stream, loop, name, img->path, writing, why,
                   sizeof why) != 0)
    die ("%s: %s", name, why);
  ep->kind = ENDPOINT_STREAM;
  debug ("%s: %s in order, no extents", name,
         writing ? "a stream, written" : "a stream, read");
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
  if (img->kind == IMAGE_STREAM) {
    open_stream (ep, loop, name, img, writing);
    return;
  }
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
  if (ep->kind == ENDPOINT_STREAM)
    return SIZE_UNKNOWN;
  return export_size (first (ep), ep->name);
}

bool
endpoint_grows (const struct endpoint *ep)
{
  return ep->kind == ENDPOINT_FILE && !ep->file.block_device;
}

int
endpoint_extend (struct endpoint *ep, uint64_t size)
{
  if (ep->kind != ENDPOINT_FILE || ep->file.size >= size)
    return 0;
  if (ftruncate (ep->file.buffered_fd, size) == -1)
    return -1;
  ep->file.size = size;
  return 0;
}

bool
endpoint_ended (const struct endpoint *ep)
{
  return ep->kind == ENDPOINT_STREAM && ep->stream.ended;
}

void
endpoint_set_limit (struct endpoint *ep, uint64_t limit)
{
  if (ep->kind == ENDPOINT_STREAM)
    ep->stream.limit = limit;
}

uint64_t
endpoint_complete_below (const struct endpoint *ep, uint64_t fallback)
{
  return ep->kind == ENDPOINT_STREAM ? ep->stream.offset : fallback;
}

uint64_t
endpoint_min_block (const struct endpoint *ep)
{
  if (ep->kind == ENDPOINT_FILE)
    return file_block_size (&ep->file);
  if (ep->kind == ENDPOINT_STREAM)
    return 1;
  return min_block_size (first (ep));
}

uint64_t
endpoint_max_block (const struct endpoint *ep)
{
  if (ep->kind != ENDPOINT_NBD)
    return 0;
  return max_block_size (first (ep));
}

bool
endpoint_can_zero (const struct endpoint *ep)
{
  if (ep->kind == ENDPOINT_FILE)
    return true;
  /* A pipe has no holes: zeroes go as buffers of zeroes. */
  if (ep->kind == ENDPOINT_STREAM)
    return false;
  return nbd_can_zero (first (ep)) == 1;
}

bool
endpoint_read_only (const struct endpoint *ep)
{
  /* A file or stream opened for writing was opened so, or not at all. */
  if (ep->kind != ENDPOINT_NBD)
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
  if (ep->kind == ENDPOINT_STREAM) {
    slot->conn = &ep->stream;
    return stream_read (&ep->stream, buf, length, offset, &slot->length,
                        cb);
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
  if (ep->kind == ENDPOINT_STREAM) {
    slot->conn = &ep->stream;
    return stream_write (&ep->stream, buf, length, offset, cb);
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
  if (ep->kind == ENDPOINT_STREAM) {
    errno = ENOTSUP;            /* endpoint_can_zero said so */
    return -1;
  }
  return nbd_aio_zero (pick (ep, slot), length, offset, cb,
                       no_hole ? LIBNBD_CMD_FLAG_NO_HOLE : 0) == -1 ? -1 : 0;
}

int
endpoint_issue_errno (struct endpoint *ep, struct slot *slot)
{
  if (ep->kind != ENDPOINT_NBD)
    return errno ? errno : EIO;
  return conn_issue_errno (slot->conn);
}

bool
endpoint_flush (struct endpoint *ep, struct flush *f, struct stop *s)
{
  int err;

  if (ep->kind == ENDPOINT_FILE)
    return flush_file_advance (f, &ep->file, ep->name, s);
  /* One fsync, at the end: a stream is a pipe (nothing to flush) or a
   * regular file given as standard output.
   */
  if (ep->kind == ENDPOINT_STREAM) {
    if ((err = stream_flush (&ep->stream)) != 0)
      stop_fail (s, "%s: flush failed: %s", ep->name, strerror (err));
    return true;
  }
  return flush_advance (f, first (ep), ep->name, s);
}

bool
endpoint_ready (const struct endpoint *ep)
{
  return ep->kind != ENDPOINT_NBD || conn_ready (ep->server.v[0]);
}

bool
endpoint_busy (const struct endpoint *ep)
{
  if (ep->kind == ENDPOINT_FILE)
    return file_busy (&ep->file);
  if (ep->kind == ENDPOINT_STREAM)
    return stream_busy (&ep->stream);
  return server_busy (&ep->server);
}

void
endpoint_check (const struct endpoint *ep, struct stop *s)
{
  if (ep->kind == ENDPOINT_NBD)
    server_check (&ep->server, s);
}

void
endpoint_stopping (struct endpoint *ep)
{
  if (ep->kind == ENDPOINT_STREAM)
    stream_cancel (&ep->stream);
}

void
endpoint_update (struct endpoint *ep)
{
  if (ep->kind == ENDPOINT_FILE)
    file_update (&ep->file);
  else if (ep->kind == ENDPOINT_STREAM)
    stream_update (&ep->stream);
  else
    server_update (&ep->server);
}

bool
endpoint_owns (const struct endpoint *ep, const void *conn)
{
  unsigned i;

  if (ep->kind == ENDPOINT_FILE)
    return conn == &ep->file;
  if (ep->kind == ENDPOINT_STREAM)
    return conn == &ep->stream;
  for (i = 0; i < ep->server.n; i++)
    if (conn == ep->server.v[i])
      return true;
  return false;
}

const char *
endpoint_conn_name (const struct endpoint *ep, const void *conn)
{
  if (ep->kind != ENDPOINT_NBD)
    return ep->name;
  return ((const struct conn *) conn)->name;
}

const char *
endpoint_strerror (struct endpoint *ep, const void *conn, int err)
{
  if (ep->kind == ENDPOINT_STREAM)
    return stream_strerror (&ep->stream, err);
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
  else if (ep->kind == ENDPOINT_STREAM)
    *map = (struct extent_map) { .name = ep->name, .size = SIZE_UNKNOWN,
                                 .supported = false, .block = 1 };
  else
    map_open (map, first (ep), ep->name);
}

void
endpoint_map_pump (struct endpoint *ep, struct extent_map *map,
                   struct stop *s, uint64_t offset, uint64_t ahead)
{
  if (ep->kind == ENDPOINT_FILE)
    map_pump_file (s, map, &ep->file, offset, ahead);
  else if (ep->kind == ENDPOINT_NBD)
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
    else if (eps[i]->kind == ENDPOINT_STREAM)
      stream_close (&eps[i]->stream);
}
