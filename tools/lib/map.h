/* nbd-libev-examples: a tool's extent maps.
 *
 * common/extents.c keeps an image's allocation map, fetched a window
 * ahead of the reader with one block-status command in flight.  A tool
 * adds what its messages and its stop need: a map that cannot be set
 * up is fatal, a failed block-status command is said under -v (its
 * range is read as data, which is always right), and a map that cannot
 * grow stops the program cleanly (tools/lib/stop.h), as a failed command
 * does.
 */

#ifndef NBD_LIBEV_EXAMPLES_MAP_H
#define NBD_LIBEV_EXAMPLES_MAP_H

#include <stdint.h>

#include <libnbd.h>

#include "extents.h"
#include "stop.h"

/* extents_init (common/extents.h) for a connected handle, fatal if
 * libnbd cannot tell the export's size.
 */
void map_open (struct extent_map *map, struct nbd_handle *nbd,
               const char *name);

/* extents_pump from a tool: a block-status command that failed is read
 * as data and said under -v; a map that cannot grow stops the program
 * cleanly (s), as a failed command does.
 */
void map_pump (struct stop *s, struct extent_map *map, uint64_t offset,
               uint64_t ahead);

#endif /* NBD_LIBEV_EXAMPLES_MAP_H */
