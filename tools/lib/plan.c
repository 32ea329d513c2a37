/* nbd-libev-examples: planning the next piece.  See plan.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "plan.h"
#include "util.h"
#include "zero.h"

/* How far from offset, up to length bytes, the destination already
 * reads as zeroes: everything with --destination-is-zero, nothing with
 * --allocated or without its block status, else what its map says (0
 * where it holds data).  False while its map does not reach offset.
 */
static bool
dst_zero_run (const struct copy_planner *pl, uint64_t offset,
              uint64_t length, uint64_t *run)
{
  struct extent d;

  if (!pl->dst_has_map) {
    *run = pl->dst_is_zero ? length : 0;
    return true;
  }
  if (!extents_next (pl->dst_map, offset, length, &d))
    return false;
  *run = d.zero ? d.length : 0;
  return true;
}

/* A zero extent [offset, extent_end), whole if the map knows where it
 * ends.  Zeroes onto zeroes are skipped, as far as both maps know, even
 * if that is less than the whole extent: skipping in pieces costs
 * nothing.  Where the destination may hold data, the whole extent is
 * zeroed, even the parts its map says read as zero already, so that a
 * fragmented destination still costs one command per extent.  WORK_READ
 * leaves an unaligned tail to the data path.
 */
static enum work
plan_zero (const struct copy_planner *pl, uint64_t offset,
           uint64_t extent_end, bool whole, uint64_t request_size,
           uint64_t zero_max, uint64_t *length)
{
  uint64_t end, run;

  if (!dst_zero_run (pl, offset, extent_end - offset, &run))
    return WORK_WAIT;
  end = round_down (offset + run, pl->block);
  if (end > offset) {
    *length = end - offset;
    return WORK_SKIP;
  }
  end = zero_command_end (offset, zero_max, extent_end);
  if (!pl->dst_can_zero)
    end = MIN (end, offset + request_size);
  /* Rather than send two commands where one would do, learn where the
   * extent ends first.
   */
  if (end == extent_end && !whole) {
    *length = extent_end - offset;
    return WORK_MORE;
  }
  end = round_down (end, pl->block);
  if (end > offset) {
    *length = end - offset;
    return WORK_ZERO;
  }
  return WORK_READ;
}

enum work
plan_copy (const struct copy_planner *pl, uint64_t offset,
           uint64_t request_size, uint64_t zero_max, uint64_t *length,
           bool *onto_zeroes)
{
  const struct extent_map *map = pl->read_map;
  struct extent e;
  uint64_t extent_end, end, run;
  enum work work;
  bool whole;

  /* Nothing past size, whatever the map knows. */
  if (!extents_next (pl->read_map, offset, pl->size - offset, &e))
    return WORK_WAIT;
  extent_end = offset + e.length;
  whole = extent_end < map->end || map->end >= pl->size;
  if (e.zero) {
    work = plan_zero (pl, offset, extent_end, whole, request_size, zero_max,
                      length);
    if (work != WORK_READ)
      return work;
  }

  if (e.length < request_size && !whole) {
    *length = e.length;
    return WORK_MORE;
  }
  end = MIN (extent_end, offset + request_size);
  end = MIN (round_up (end, pl->block), pl->size);
  *length = end - offset;
  /* Whether a buffer that reads back all zero may be skipped: only if
   * the destination reads as zeroes over the whole piece.  A zero run
   * that stops at the end of its map may go on: wait and see.
   */
  if (!dst_zero_run (pl, offset, *length, &run))
    return WORK_WAIT;
  if (run > 0 && run < *length && offset + run == pl->dst_map->end &&
      pl->dst_map->end < pl->dst_map->size)
    return WORK_WAIT;
  *onto_zeroes = run == *length;
  return WORK_READ;
}

/* True if the extent holds at least one whole block of zeroes. */
static bool
has_zero_block (const struct extent *e, uint64_t block_size)
{
  uint64_t start = round_up (e->offset, block_size);

  return e->zero && start + block_size <= e->offset + e->length;
}

/* Where a read that starts at offset (a block boundary) should end: over
 * data extents, and over zero extents too short to hold a whole block,
 * up to the next request boundary.  It stops at the first whole zero
 * block, which is hashed without reading.  Request boundaries are at
 * absolute multiples of the request size, so blocks never straddle two
 * reads.
 */
static uint64_t
read_end (struct extent_map *map, uint64_t offset, uint64_t size,
          uint64_t request_size, uint64_t block_size)
{
  uint64_t limit = MIN (round_down (offset, request_size) + request_size,
                        size);
  uint64_t end = offset;
  struct extent e;

  while (end < limit && extents_next (map, end, limit - end, &e)) {
    if (has_zero_block (&e, block_size)) {
      end = round_up (e.offset, block_size);
      break;
    }
    end = e.offset + e.length;
  }
  /* Partial blocks at either end of a zero extent are read as data. */
  return MIN (round_up (end, block_size), limit);
}

enum work
plan_sum (struct extent_map *map, uint64_t offset, uint64_t size,
          uint64_t request_size, uint64_t block_size, uint64_t max_zero_run,
          uint64_t *length)
{
  struct extent e;

  if (!extents_next (map, offset, size - offset, &e))
    return WORK_WAIT;
  if (has_zero_block (&e, block_size)) {
    /* offset is a block boundary, so the run starts there. */
    *length = round_down (e.offset + MIN (e.length, max_zero_run),
                          block_size) - offset;
    return WORK_SKIP;
  }
  *length = read_end (map, offset, size, request_size, block_size) - offset;
  return WORK_READ;
}
