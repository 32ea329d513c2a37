/* nbd-libev-examples: the source's allocation map.  See extents.h. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include "extents.h"

/* Append length bytes of one kind at the end of the map, merged into
 * the last extent if it is of the same kind.  It touches only the map,
 * so the extent callback may call it.
 */
static int
append (struct extent_map *map, uint64_t length, bool zero)
{
  struct extent *v;

  if (length > 0 && map->len > map->first && map->v[map->len - 1].zero == zero)
    map->v[map->len - 1].length += length;
  else if (length > 0) {
    if (map->len == map->alloc) {
      v = realloc (map->v, (2 * map->alloc + 64) * sizeof *v);
      if (v == NULL)
        return -1;
      map->v = v;
      map->alloc = 2 * map->alloc + 64;
    }
    map->v[map->len++] = (struct extent) { map->end, length, zero };
  }
  map->end += length;
  return 0;
}

/* One reply's extents from offset: entries holds pairs, a length and
 * its flags, clipped to the range asked for, as a server may describe
 * more.  A second call for one command (a buggy server, see
 * nbd_block_status(3)) starts behind the map's end: it is ignored.
 */
static int
extent_cb (void *user_data, const char *metacontext, uint64_t offset,
           uint32_t *entries, size_t nr_entries, int *error)
{
  struct extent_map *map = user_data;
  uint64_t req_end = map->req_offset + map->req_length, length;
  size_t i;

  if (*error || offset != map->end ||
      strcmp (metacontext, LIBNBD_CONTEXT_BASE_ALLOCATION) != 0)
    return 0;
  for (i = 0; i + 1 < nr_entries && map->end < req_end; i += 2) {
    length = entries[i] < req_end - map->end ? entries[i] : req_end - map->end;
    if (append (map, length, entries[i + 1] & LIBNBD_STATE_ZERO) == -1) {
      *error = ENOMEM;
      return -1;
    }
  }
  return 0;
}

static int
status_done (void *user_data, int *error)
{
  struct extent_map *map = user_data;

  map->in_flight = false;
  /* An empty reply would stall the reader: fail it, read it as data. */
  map->error = *error == 0 && map->end == map->req_offset ? EPROTO : *error;
  return 1;
}

int
extents_init (struct extent_map *map, struct nbd_handle *nbd,
              const char *name)
{
  int64_t size = nbd_get_size (nbd);
  int64_t min = nbd_get_block_size (nbd, LIBNBD_SIZE_MINIMUM);

  if (size == -1)
    return -1;
  *map = (struct extent_map) {
    .nbd = nbd, .name = name, .size = size, .window = MAX_LENGTH_32,
    .block = min > 0 ? min : 1,
    .supported = nbd_can_meta_context (nbd,
                                       LIBNBD_CONTEXT_BASE_ALLOCATION) == 1,
  };
  return 0;
}

void
extents_free (struct extent_map *map)
{
  free (map->v);
  *map = (struct extent_map) { .v = NULL };
}

int
extents_pump (struct extent_map *map, uint64_t offset, uint64_t ahead)
{
  nbd_extent_callback extent = { .callback = extent_cb, .user_data = map };
  nbd_completion_callback done = { .callback = status_done, .user_data = map };
  int failed = map->error;
  uint64_t pad, want = offset + ahead < offset ? UINT64_MAX : offset + ahead;

  /* Whatever a failed reply described is still true; the rest of the
   * range asked for is read as data, which is always right.
   */
  map->error = 0;
  if (failed &&
      append (map, map->req_offset + map->req_length - map->end, false) == -1)
    return -1;
  if (!map->supported && append (map, map->size - map->end, false) == -1)
    return -1;
  /* A short reply may end off the minimum block size, where libnbd
   * refuses the next request (nbd_get_block_size(3)): read that as data.
   */
  pad = map->block - map->end % map->block;
  if (!map->in_flight && pad < map->block && map->end < map->size &&
      append (map, map->size - map->end < pad ? map->size - map->end : pad,
              false) == -1)
    return -1;
  /* Forget the extents the reader has passed, so the array stays small. */
  if (map->first >= 64 && map->first >= map->len / 2) {
    memmove (map->v, map->v + map->first,
             (map->len - map->first) * sizeof *map->v);
    map->len -= map->first;
    map->first = 0;
  }

  if (map->in_flight || map->end >= map->size || map->end >= want)
    return failed;
  map->req_offset = map->end;
  map->req_length = map->size - map->end < map->window ?
    map->size - map->end : map->window;
  map->in_flight = true;
  map->commands++;
  /* A command libnbd refuses to send is a failed one: its range is read
   * as data at once, as nothing else may wake the loop for it.
   */
  if (nbd_aio_block_status (map->nbd, map->req_length, map->req_offset,
                            extent, done, 0) == -1) {
    map->in_flight = false;
    map->error = nbd_get_errno () ? nbd_get_errno () : EIO;
    return extents_pump (map, offset, ahead);
  }
  return failed;
}

bool
extents_next (struct extent_map *map, uint64_t offset, uint64_t max_length,
              struct extent *e)
{
  const struct extent *x;

  while (map->first < map->len &&
         map->v[map->first].offset + map->v[map->first].length <= offset)
    map->first++;
  if (map->first == map->len || map->v[map->first].offset > offset)
    return false;               /* not known yet (or offsets went back) */
  x = &map->v[map->first];
  e->offset = offset;
  e->length = x->offset + x->length - offset;
  if (e->length > max_length)
    e->length = max_length;
  e->zero = x->zero;
  return true;
}
