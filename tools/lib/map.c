/* nbd-libev-examples: a tool's extent maps.  See map.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <libnbd.h>

#include "map.h"
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
