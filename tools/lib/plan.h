/* nbd-libev-examples: deciding what to do with the next piece of an
 * image, from its extent maps.
 *
 * The tools read an image from offset 0 to its end, a piece per slot
 * of the ring.  What a piece is, and how long, comes from the extent
 * maps (common/extents.h): the map of what is read and, for a copy,
 * the destination's.  Nothing here sends a command or reads the clock:
 * the planner only looks at the maps, and says WORK_MORE when the map
 * of what is read must grow before it can decide.  The caller then asks
 * for more block status (its pump) and plans again, or waits for the
 * reply.  tests/test-plan.c drives it with maps made by hand.
 *
 *  - plan_copy, for nbd-evcopy: zero extents go out whole (one zero
 *    command each, as long as the destination allows, tools/lib/zero.h), or
 *    as nothing at all where the destination reads as zeroes already;
 *    data in requests of the depth's size.  Every piece starts and ends
 *    on a multiple of the block (or at the end of the image), so both
 *    servers see only aligned commands.
 *
 *  - plan_sum, for nbd-evsum: reads over data, and over zero extents too
 *    short to hold a whole hash block; whole zero blocks as zero runs,
 *    hashed without reading.
 */

#ifndef NBD_LIBEV_EXAMPLES_PLAN_H
#define NBD_LIBEV_EXAMPLES_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "extents.h"

/* What the planner decided for the next piece of the image. */
enum work {
  WORK_WAIT,            /* a map must grow first: wait for its reply */
  WORK_MORE,            /* ask for the rest of the current extent first */
  WORK_READ,            /* data: read it (then write or hash it) */
  WORK_ZERO,            /* a zero extent: one zero command */
  WORK_SKIP,            /* zeroes that need no command: nothing to do */
};

/* A copy's settings, fixed for the pass. */
struct copy_planner {
  struct extent_map *read_map;  /* of what is read */
  struct extent_map *dst_map;   /* the destination's, if dst_has_map */
  bool dst_has_map;             /* dst_map says where it reads as zeroes */
  bool dst_is_zero;             /* without a map: all zeroes, or none */
  bool dst_can_zero;            /* else zeroes are written as buffers */
  uint64_t size;                /* bytes to copy */
  uint64_t block;               /* pieces start and end on multiples */
};

/* What to do from offset, and over *length bytes.  request_size is the
 * depth's now, zero_max the longest zero command.  WORK_READ also says
 * whether the destination reads as zeroes over the whole piece
 * (*onto_zeroes), so that a buffer read back all zero needs no command
 * there.  WORK_MORE sets *length to the extent known so far.
 */
enum work plan_copy (const struct copy_planner *pl, uint64_t offset,
                     uint64_t request_size, uint64_t zero_max,
                     uint64_t *length, bool *onto_zeroes);

/* What to hash from offset (a block boundary) of an image of size
 * bytes in blocks of block_size: WORK_SKIP for a run of whole zero
 * blocks of at most max_zero_run bytes, WORK_READ up to the next
 * request boundary or the first whole zero block, and WORK_WAIT while
 * the map does not reach offset.
 */
enum work plan_sum (struct extent_map *map, uint64_t offset, uint64_t size,
                    uint64_t request_size, uint64_t block_size,
                    uint64_t max_zero_run, uint64_t *length);

#endif /* NBD_LIBEV_EXAMPLES_PLAN_H */
