/* nbd-libev-examples: a tool's extent maps.
 *
 * common/extents.c keeps an image's allocation map, fetched a window
 * ahead of the reader with one block-status command in flight.  A tool
 * adds what its messages and its stop need: a map that cannot be set
 * up is fatal, a failed block-status command is said under -v (its
 * range is read as data, which is always right), and a map that cannot
 * grow stops the program cleanly (tools/lib/stop.h), as a failed command
 * does.
 *
 * A local file the program reads itself (tools/lib/file.h) has a map
 * of the same kind, filled from SEEK_DATA and SEEK_HOLE: no command,
 * no round trip, so it grows when asked, a window at a time.
 */

#ifndef NBD_LIBEV_EXAMPLES_MAP_H
#define NBD_LIBEV_EXAMPLES_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include <libnbd.h>

#include "extents.h"
#include "file.h"
#include "stop.h"

/* How far ahead a file's map looks at a time: far enough that zero
 * extents are known before the copy gets there, near enough that a
 * file of many extents is not mapped all at once.
 */
#define FILE_MAP_WINDOW (64 * 1024 * 1024)

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

/* The map of a file: its holes read as zeroes.  A block device has no
 * holes to tell, and without want_extents (--no-extents) none is
 * looked for: every extent is data.
 */
void map_open_file (struct extent_map *map, const struct file *f,
                    const char *name, bool want_extents);

/* Grow a file's map to reach offset + ahead, fatal only if out of
 * memory (the program stops cleanly, s).
 */
void map_pump_file (struct stop *s, struct extent_map *map,
                    const struct file *f, uint64_t offset, uint64_t ahead);

#endif /* NBD_LIBEV_EXAMPLES_MAP_H */
