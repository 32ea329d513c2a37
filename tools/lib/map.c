/* nbd-libev-examples: a tool's extent maps.  See map.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include "map.h"
#include "stop.h"
#include "util.h"

void
map_open (struct extent_map *map, struct nbd_handle *nbd, const char *name)
{
  if (extents_init (map, nbd, name) == -1)
    die ("%s: %s", name, nbd_get_error ());
  debug ("%s: %s", name, map->supported ? "reading extents with block status"
         : "no base:allocation: every extent is data");
}

void
map_pump (struct stop *s, struct extent_map *map, uint64_t offset,
          uint64_t ahead)
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

void
map_open_file (struct extent_map *map, const struct file *f, const char *name,
               bool want_extents)
{
  *map = (struct extent_map) {
    .name = name, .size = f->size,
    .supported = want_extents && !f->block_device,
    .window = FILE_MAP_WINDOW, .block = 1,
  };
  debug ("%s: %s", name, map->supported ?
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

void
map_pump_file (struct stop *s, struct extent_map *map, const struct file *f,
               uint64_t offset, uint64_t ahead)
{
  uint64_t want = MIN (map->size, offset + ahead), length;
  bool hole;

  /* One lseek or two per extent, and only as far as asked: a file of
   * many small extents is mapped as the reader goes.
   */
  while (map->end < want) {
    if (map->supported)
      length = file_extent (f, map->end, map->size - map->end, &hole);
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
