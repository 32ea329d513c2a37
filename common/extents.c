/* nbd-libev-examples: the source's allocation map.  See extents.h. */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include "extents.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* With 64-bit lengths one command may cover much more; 1 TiB bounds the
 * memory a very fragmented reply can take.
 */
#define WINDOW_64 (UINT64_C (1) << 40)

/* Append an extent at the end of the map, merging it into the last one
 * when both are of the same kind.  Called from the extent callback: it
 * touches only the map, never the handle.
 */
static int
append (struct extent_map *map, uint64_t length, bool zero)
{
  struct extent *last = map->len > map->first ? &map->v[map->len - 1] : NULL;

  if (length == 0)
    return 0;
  if (last && last->zero == zero && last->offset + last->length == map->end) {
    last->length += length;
    map->end += length;
    return 0;
  }
  if (map->len == map->alloc) {
    size_t n = map->alloc ? map->alloc * 2 : 64;
    struct extent *v = realloc (map->v, n * sizeof *v);

    if (v == NULL)
      return -1;
    map->v = v;
    map->alloc = n;
  }
  map->v[map->len++] = (struct extent) {
    .offset = map->end, .length = length, .zero = zero,
  };
  map->end += length;
  return 0;
}

/* Add one extent from a reply, clipped to the range asked for: a server
 * may describe more than it was asked, and the map must stay contiguous.
 */
static int
add_reply_extent (struct extent_map *map, uint64_t length, uint64_t flags)
{
  uint64_t req_end = map->req_offset + map->req_length;

  if (map->end >= req_end)
    return 0;
  length = MIN (length, req_end - map->end);
  return append (map, length, (flags & LIBNBD_STATE_ZERO) != 0);
}

#ifdef LIBNBD_HAVE_NBD_AIO_BLOCK_STATUS_64
static int
extent64_cb (void *user_data, const char *metacontext, uint64_t offset,
             nbd_extent *entries, size_t nr_entries, int *error)
{
  struct extent_map *map = user_data;
  size_t i;

  if (*error || strcmp (metacontext, LIBNBD_CONTEXT_BASE_ALLOCATION) != 0)
    return 0;
  for (i = 0; i < nr_entries; i++)
    if (add_reply_extent (map, entries[i].length, entries[i].flags) == -1) {
      *error = ENOMEM;
      return -1;
    }
  return 0;
}
#else
static int
extent_cb (void *user_data, const char *metacontext, uint64_t offset,
           uint32_t *entries, size_t nr_entries, int *error)
{
  struct extent_map *map = user_data;
  size_t i;

  if (*error || strcmp (metacontext, LIBNBD_CONTEXT_BASE_ALLOCATION) != 0)
    return 0;
  /* entries holds pairs: length, then flags. */
  for (i = 0; i + 1 < nr_entries; i += 2)
    if (add_reply_extent (map, entries[i], entries[i + 1]) == -1) {
      *error = ENOMEM;
      return -1;
    }
  return 0;
}
#endif

static int
status_done (void *user_data, int *error)
{
  struct extent_map *map = user_data;

  map->in_flight = false;
  /* A reply that describes nothing would stall the reader forever;
   * treat it like a failure so the range is read as data instead.
   */
  if (*error == 0 && map->end == map->req_offset)
    map->error = EPROTO;
  else
    map->error = *error;
  return 1;
}

/* If map->verbose: one line on stderr, named after the export. */
static void
map_debug (const struct extent_map *map, const char *fmt, ...)
{
  va_list ap;

  if (!map->verbose)
    return;
  flockfile (stderr);
  fprintf (stderr, "%s: ", map->name);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  funlockfile (stderr);
}

int
extents_init (struct extent_map *map, struct nbd_handle *nbd,
              const char *name, bool verbose)
{
  int64_t size = nbd_get_size (nbd);

  if (size == -1)
    return -1;
  memset (map, 0, sizeof *map);
  map->verbose = verbose;
  map->nbd = nbd;
  map->name = name;
  map->size = size;
  map->supported =
    nbd_can_meta_context (nbd, LIBNBD_CONTEXT_BASE_ALLOCATION) == 1;
  map->window = MAX_LENGTH_32;
#ifdef LIBNBD_HAVE_NBD_AIO_BLOCK_STATUS_64
  if (nbd_get_extended_headers_negotiated (nbd) == 1)
    map->window = WINDOW_64;
#endif
  map_debug (map, "%s", map->supported ? "reading extents with block status"
             : "no base:allocation: every extent is data");
  return 0;
}

void
extents_free (struct extent_map *map)
{
  free (map->v);
  map->v = NULL;
  map->len = map->alloc = map->first = 0;
}

/* Forget extents the reader has passed, so the array stays small. */
static void
compact (struct extent_map *map)
{
  if (map->first < 64 || map->first < map->len / 2)
    return;
  memmove (map->v, map->v + map->first,
           (map->len - map->first) * sizeof *map->v);
  map->len -= map->first;
  map->first = 0;
}

int
extents_pump (struct extent_map *map, uint64_t offset, uint64_t ahead)
{
  uint64_t length;
  int64_t r;

  if (map->error) {
    /* Whatever the reply described before the error is still true; the
     * rest of the range asked for is read as data, which is always right.
     */
    map_debug (map, "block status at offset %" PRIu64 " length %" PRIu64
               " failed (%s): reading that range as data",
               map->req_offset, map->req_length, strerror (map->error));
    map->error = 0;
    if (append (map, map->req_offset + map->req_length - map->end, false) == -1)
      return -1;
  }
  if (!map->supported && map->end < map->size &&
      append (map, map->size - map->end, false) == -1)
    return -1;
  compact (map);

  if (map->in_flight || map->end >= map->size ||
      map->end >= offset + ahead)
    return 0;

  length = MIN (map->window, map->size - map->end);
  map->req_offset = map->end;
  map->req_length = length;
  map->in_flight = true;
  map->commands++;
  map_debug (map, "block status offset %" PRIu64 " length %" PRIu64,
             map->req_offset, length);
#ifdef LIBNBD_HAVE_NBD_AIO_BLOCK_STATUS_64
  r = nbd_aio_block_status_64 (map->nbd, length, map->end,
                               (nbd_extent64_callback) {
                                 .callback = extent64_cb, .user_data = map },
                               (nbd_completion_callback) {
                                 .callback = status_done, .user_data = map },
                               0);
#else
  r = nbd_aio_block_status (map->nbd, length, map->end,
                            (nbd_extent_callback) {
                              .callback = extent_cb, .user_data = map },
                            (nbd_completion_callback) {
                              .callback = status_done, .user_data = map },
                            0);
#endif
  /* A command libnbd refuses to send is a failed one: its range is
   * read as data, at once, as nothing else may wake the loop for it.
   */
  if (r == -1) {
    map->in_flight = false;
    map->error = nbd_get_errno () ? nbd_get_errno () : EIO;
    return extents_pump (map, offset, ahead);
  }
  return 0;
}

bool
extents_next (struct extent_map *map, uint64_t offset, uint64_t max_length,
              struct extent *e)
{
  const struct extent *x;

  while (map->first < map->len &&
         map->v[map->first].offset + map->v[map->first].length <= offset)
    map->first++;
  if (map->first == map->len)
    return false;
  x = &map->v[map->first];
  if (x->offset > offset)
    return false;               /* offsets went backwards: not allowed */
  e->offset = offset;
  e->length = MIN (x->offset + x->length - offset, max_length);
  e->zero = x->zero;
  return true;
}
