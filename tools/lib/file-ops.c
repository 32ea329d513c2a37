/* nbd-libev-examples: a local file as an endpoint (endpoint.h).
 *
 * A raw file or block device that the program reads and writes itself
 * through io_uring (tools/lib/file.h).  Its extents come from
 * SEEK_DATA and SEEK_HOLE, into a map of the kind block status fills
 * (common/extents.h): no command, no round trip, so the map grows when
 * asked, a window at a time.  Its flush is an fsync, through its
 * io_uring like its writes.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libnbd.h>

#include <ev.h>

#include "endpoint.h"
#include "file.h"
#include "util.h"

/* Forces the captive server for local files, as where io_uring fails. */
#define NO_IO_URING_ENV "NBD_EV_NO_IO_URING"

/* How far ahead a file's map looks at a time: far enough that zero
 * extents are known before the copy gets there, near enough that a
 * file of many extents is not mapped all at once.
 */
#define FILE_MAP_WINDOW (64 * 1024 * 1024)

struct local {
  struct endpoint ep;           /* first: the ops cast back */
  struct file file;
};

static const struct endpoint_ops local_ops;

static struct file *
file_of (const struct endpoint *ep)
{
  return &((struct local *) ep)->file;
}

/* True if the user asked for captive servers for local files. */
static bool
no_io_uring (void)
{
  const char *s = getenv (NO_IO_URING_ENV);

  return s != NULL && strcmp (s, "") != 0 && strcmp (s, "0") != 0;
}

struct endpoint *
endpoint_open_file (struct ev_loop *loop, const char *name,
                    const struct image *img, bool writing,
                    enum image_cache cache)
{
  struct local *l;
  char why[4096];
  bool uring_failed;

  if (no_io_uring ()) {
    debug ("%s: %s is set: served by nbdkit", img->name, NO_IO_URING_ENV);
    return NULL;
  }
  l = calloc (1, sizeof *l);
  if (l == NULL)
    die ("calloc: %s", strerror (errno));
  if (file_open (&l->file, loop, name, img->path, writing,
                 cache == IMAGE_CACHE_NONE, &uring_failed, why,
                 sizeof why) != 0) {
    if (!uring_failed)
      die ("%s: %s", name, why);
    debug ("%s: %s: served by nbdkit instead", img->name, why);
    free (l);
    return NULL;
  }
  /* A file opened for writing was opened so, or not at all. */
  l->ep = (struct endpoint) {
    .ops = &local_ops, .name = name, .grows = !l->file.block_device,
    .local = true, .can_zero = true, .min_block = file_block_size (&l->file),
  };
  debug ("%s: %s, read%s by this program through io_uring%s", name,
         l->file.block_device ? "block device" : "raw file",
         writing ? " and written" : "",
         l->file.direct ? ", O_DIRECT" : "");
  return &l->ep;
}

static uint64_t
local_size (const struct endpoint *ep)
{
  return file_of (ep)->size;
}

static int
local_extend (struct endpoint *ep, uint64_t size)
{
  struct file *f = file_of (ep);

  if (!ep->grows || f->size >= size)
    return 0;
  if (ftruncate (f->buffered_fd, size) == -1)
    return -1;
  f->size = size;
  return 0;
}

/* After a failed writeback no range written is known to be on the
 * disk (tools/lib/file.h): none of the destination holds the copy.
 */
static uint64_t
local_complete_below (const struct endpoint *ep, uint64_t fallback)
{
  uint64_t offset, length;

  if (file_behind_error (file_of (ep), &offset, &length) != 0)
    return 0;
  return fallback;
}

static int
local_read (struct endpoint *ep, void *buf, uint64_t length,
            uint64_t offset, uint64_t *got, nbd_completion_callback cb,
            struct conn **conn)
{
  return file_read (file_of (ep), buf, length, offset, cb);
}

static int
local_write (struct endpoint *ep, const void *buf, uint64_t length,
             uint64_t offset, nbd_completion_callback cb,
             struct conn **conn)
{
  return file_write (file_of (ep), buf, length, offset, cb);
}

static int
local_zero (struct endpoint *ep, uint64_t length, uint64_t offset,
            bool no_hole, nbd_completion_callback cb, struct conn **conn)
{
  return file_zero (file_of (ep), length, offset, no_hole, cb);
}

/* fallocate's EOPNOTSUPP: the file system or device cannot zero that
 * way at all (tools/lib/file.h).
 */
static bool
local_zero_unsupported (const struct endpoint *ep, int err)
{
  return err == EOPNOTSUPP;
}

static bool
local_flush (struct endpoint *ep, struct flush *f, struct stop *s)
{
  nbd_completion_callback cb = { .callback = flush_done, .user_data = f };

  /* Write-behind's evictions first: a failure they meet is reported
   * (local_check) in place of the fsync, which would not see it again.
   */
  if (f->state == FLUSH_NONE && !file_behind_settled (file_of (ep)))
    return false;
  if (f->state == FLUSH_NONE) {
    debug ("%s: fsync", ep->name);
    if (file_flush (file_of (ep), cb) == -1) {
      stop_fail (s, "%s: flush: %s", ep->name, strerror (errno));
      f->state = FLUSH_DONE;
    }
    else
      f->state = FLUSH_IN_FLIGHT;
  }
  return flush_over (f, ep->name, s);
}

static bool
local_busy (const struct endpoint *ep)
{
  return file_busy (file_of (ep));
}

/* True if a writeback failed under write-behind (tools/lib/file.h),
 * with the line that says so in why: any range written may have missed
 * the disk, and nothing else would say so.
 */
static bool
writeback_failed (const struct endpoint *ep, char *why, size_t len)
{
  uint64_t offset, length;
  int err = file_behind_error (file_of (ep), &offset, &length);

  if (err != 0)
    snprintf (why, len, "%s: writing back to the disk failed (seen on %"
              PRIu64 " bytes at offset %" PRIu64 "): %s", ep->name, length,
              offset, strerror (err));
  return err != 0;
}

static void
local_check (const struct endpoint *ep, struct stop *s)
{
  char why[256];

  if (!stop_requested (s) && writeback_failed (ep, why, sizeof why))
    stop_fail (s, "%s", why);
}

/* Stopping: the evictions in flight are waited for (local_busy), so
 * that the offset a resume starts from knows of their failures.
 */
static void
local_stopping (struct endpoint *ep)
{
  file_behind_settled (file_of (ep));
}

static void
local_update (struct endpoint *ep)
{
  file_update (file_of (ep));
}

/* A read that met the end of the file: it shrank under the program. */
static const char *
local_strerror (struct endpoint *ep, const struct conn *conn, int err)
{
  return err == ENODATA ? "unexpected end of file" : strerror (err);
}

static void
local_map_open (struct endpoint *ep, struct extent_map *map)
{
  const struct file *f = file_of (ep);

  *map = (struct extent_map) {
    .name = ep->name, .size = f->size,
    .supported = ep->want_extents && !f->block_device,
    .window = FILE_MAP_WINDOW, .block = 1,
  };
  debug ("%s: %s", ep->name, map->supported ?
         "reading extents with SEEK_DATA and SEEK_HOLE" :
         "every extent is data");
}

/* Add an extent at the map's end.  common/extents.c keeps its own
 * appending for block status, which merges neighbours of one kind; here
 * SEEK_DATA and SEEK_HOLE alternate, so there is nothing to merge, and
 * the lessons' module stays as small as they need.
 */
static int
push (struct extent_map *map, uint64_t length, bool zero)
{
  struct extent *v;

  if (map->len == map->alloc) {
    v = realloc (map->v, (2 * map->alloc + 64) * sizeof *v);
    if (v == NULL)
      return -1;
    map->v = v;
    map->alloc = 2 * map->alloc + 64;
  }
  map->v[map->len++] = (struct extent) { map->end, length, zero };
  map->end += length;
  return 0;
}

/* One lseek or two per extent, and only as far as asked: a file of
 * many small extents is mapped as the reader goes.
 */
static void
local_map_pump (struct endpoint *ep, struct extent_map *map, struct stop *s,
                uint64_t offset, uint64_t ahead)
{
  uint64_t want = MIN (map->size, offset + ahead), length;
  bool hole;

  while (map->end < want) {
    if (map->supported)
      length = file_extent (file_of (ep), map->end, map->size - map->end,
                            &hole);
    else {
      length = map->size - map->end;
      hole = false;
    }
    map->commands++;
    if (push (map, length, hole) == -1) {
      if (!stop_requested (s))
        stop_fail (s, "%s: cannot grow the extent map: %s", map->name,
                   strerror (errno));
      return;
    }
  }
  /* Only to forget what the reader has passed: the map now reaches
   * offset + ahead (or the end), so no block-status command is sent on
   * its missing handle.
   */
  extents_pump (map, offset, ahead);
}

static void
local_close (struct endpoint *const eps[], size_t n, const struct stop *s)
{
  size_t i;
  char why[256];

  for (i = 0; i < n; i++) {
    file_close (file_of (eps[i]));
    /* Failed as the copy ended, after the loop's last look. */
    if (!stop_requested (s) && writeback_failed (eps[i], why, sizeof why))
      die ("%s", why);
    free (eps[i]);
  }
}

static const struct endpoint_ops local_ops = {
  .size = local_size,
  .extend = local_extend,
  .complete_below = local_complete_below,
  .read = local_read,
  .write = local_write,
  .zero = local_zero,
  .zero_unsupported = local_zero_unsupported,
  .flush = local_flush,
  .busy = local_busy,
  .check = local_check,
  .stopping = local_stopping,
  .update = local_update,
  .strerror = local_strerror,
  .map_open = local_map_open,
  .map_pump = local_map_pump,
  .close = local_close,
};
