/* Unit tests for tools/lib/plan.c: what nbd-evcopy and nbd-evsum do
 * with the next piece of an image, given extent maps made by hand.
 *
 * A map here is what common/extents.c would have built from block
 * status replies: extents in order from offset 0, known up to its end.
 * Nothing is connected; extents_next only reads the map.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "extents.h"
#include "plan.h"
#include "check.h"

#define KIB UINT64_C (1024)
#define MIB (1024 * KIB)

/* A map of size bytes known up to the end of the n extents given as
 * (length, zero) pairs.
 */
static void
make_map (struct extent_map *map, struct extent *v, uint64_t size,
          const uint64_t *lengths, const bool *zero, size_t n)
{
  uint64_t offset = 0;
  size_t i;

  memset (map, 0, sizeof *map);
  for (i = 0; i < n; i++) {
    v[i] = (struct extent) { .offset = offset, .length = lengths[i],
                             .zero = zero[i] };
    offset += lengths[i];
  }
  map->v = v;
  map->len = map->alloc = n;
  map->end = offset;
  map->size = size;
  map->supported = true;
  map->window = 4 * MIB;
  map->block = 1;
}

/* A copy onto a destination without a map, which holds data: data is
 * read in requests, a zero extent goes as one zero command, cut at
 * zero_max on a ZERO_SPLIT boundary.
 */
static void
test_copy_plain (void)
{
  static const uint64_t lengths[] = { 3 * MIB, 10 * MIB, MIB };
  static const bool zero[] = { false, true, false };
  struct extent v[3];
  struct extent_map src;
  struct copy_planner pl = {
    .read_map = &src, .dst_can_zero = true, .size = 14 * MIB, .block = 512,
  };
  uint64_t length;
  bool onto = true;

  make_map (&src, v, 14 * MIB, lengths, zero, 3);
  CHECK (plan_copy (&pl, 0, MIB, 4 * MIB, &length, &onto) == WORK_READ);
  CHECK (length == MIB && !onto);
  /* The last request of a data extent stops at the extent. */
  CHECK (plan_copy (&pl, 2 * MIB + 512, MIB, 4 * MIB, &length, &onto)
         == WORK_READ);
  CHECK (length == MIB - 512);
  CHECK (plan_copy (&pl, 3 * MIB, MIB, 4 * MIB, &length, &onto)
         == WORK_ZERO);
  CHECK (length == 4 * MIB);
  CHECK (plan_copy (&pl, 11 * MIB, MIB, 4 * MIB, &length, &onto)
         == WORK_ZERO);
  CHECK (length == 2 * MIB);
  /* The unaligned tail of a zero extent goes to the data path. */
  pl.block = 3 * MIB;
  CHECK (plan_copy (&pl, 12 * MIB, 4 * MIB, 4 * MIB, &length, &onto)
         == WORK_READ);
}

/* A destination that cannot zero gets buffers of zeroes, at most a
 * request each; --destination-is-zero skips zero extents whole.
 */
static void
test_copy_zero_kinds (void)
{
  static const uint64_t lengths[] = { 8 * MIB };
  static const bool zero[] = { true };
  struct extent v[1];
  struct extent_map src;
  struct copy_planner pl = {
    .read_map = &src, .size = 8 * MIB, .block = 512,
  };
  uint64_t length;
  bool onto = false;

  make_map (&src, v, 8 * MIB, lengths, zero, 1);
  CHECK (plan_copy (&pl, 0, MIB, 4 * MIB, &length, &onto) == WORK_ZERO);
  CHECK (length == MIB);
  pl.dst_is_zero = true;
  CHECK (plan_copy (&pl, 0, MIB, 4 * MIB, &length, &onto) == WORK_SKIP);
  CHECK (length == 8 * MIB);
}

/* The map ends inside an extent: a zero extent is not split into two
 * commands, nor is a data extent read in a short request, before the
 * rest of it is known (WORK_MORE); and nothing is known past the map's
 * end (WORK_WAIT).
 */
static void
test_copy_map_ends (void)
{
  static const uint64_t lengths[] = { 512 * KIB, 2 * MIB };
  static const bool zero[] = { false, true };
  struct extent v[2];
  struct extent_map src;
  struct copy_planner pl = {
    .read_map = &src, .dst_can_zero = true, .size = 64 * MIB, .block = 512,
  };
  uint64_t length;
  bool onto;

  make_map (&src, v, 64 * MIB, lengths, zero, 2);
  CHECK (plan_copy (&pl, 0, MIB, 4 * MIB, &length, &onto) == WORK_READ);
  CHECK (length == 512 * KIB);
  CHECK (plan_copy (&pl, 512 * KIB, MIB, 64 * MIB, &length, &onto)
         == WORK_MORE);
  CHECK (length == 2 * MIB);
  /* Cut at zero_max anyway: no need to know where it ends. */
  CHECK (plan_copy (&pl, 512 * KIB, MIB, MIB, &length, &onto) == WORK_ZERO);
  CHECK (length == MIB);
  CHECK (plan_copy (&pl, 2 * MIB + 512 * KIB, MIB, MIB, &length, &onto)
         == WORK_WAIT);
}

/* With the destination's map: zeroes onto zeroes are skipped as far as
 * both maps say; zeroes onto data are zeroed whole; a data piece is
 * marked onto zeroes only where the destination reads as zeroes over
 * all of it.
 */
static void
test_copy_dst_map (void)
{
  static const uint64_t src_lengths[] = { MIB, 3 * MIB };
  static const bool src_zero[] = { false, true };
  static const uint64_t dst_lengths[] = { 2 * MIB, MIB, MIB };
  static const bool dst_zero[] = { true, false, true };
  struct extent sv[2], dv[3];
  struct extent_map src, dst;
  struct copy_planner pl = {
    .read_map = &src, .dst_map = &dst, .dst_has_map = true,
    .dst_can_zero = true, .size = 4 * MIB, .block = 512,
  };
  uint64_t length;
  bool onto = false;

  make_map (&src, sv, 4 * MIB, src_lengths, src_zero, 2);
  make_map (&dst, dv, 4 * MIB, dst_lengths, dst_zero, 3);
  CHECK (plan_copy (&pl, 0, MIB, 4 * MIB, &length, &onto) == WORK_READ);
  CHECK (length == MIB && onto);
  CHECK (plan_copy (&pl, MIB, MIB, 4 * MIB, &length, &onto) == WORK_SKIP);
  CHECK (length == MIB);
  CHECK (plan_copy (&pl, 2 * MIB, MIB, 4 * MIB, &length, &onto)
         == WORK_ZERO);
  CHECK (length == 2 * MIB);
}

/* nbd-evsum: reads stop at request boundaries and at the first whole
 * zero block; a zero extent shorter than a block is read; whole zero
 * blocks are a zero run, at most max_zero_run long.
 */
static void
test_sum (void)
{
  static const uint64_t lengths[] = { 100 * KIB, 20 * KIB, 300 * KIB,
                                      4 * MIB };
  static const bool zero[] = { false, true, false, true };
  struct extent v[4];
  struct extent_map map;
  uint64_t length, size = 420 * KIB + 4 * MIB;

  make_map (&map, v, size, lengths, zero, 4);
  /* 100 KiB of data, 20 KiB of zeroes (no whole 64 KiB block), data. */
  CHECK (plan_sum (&map, 0, size, 256 * KIB, 64 * KIB, MIB, &length)
         == WORK_READ);
  CHECK (length == 256 * KIB);
  /* Up to the block that holds the start of the long zero extent. */
  CHECK (plan_sum (&map, 256 * KIB, size, 256 * KIB, 64 * KIB, MIB,
                   &length) == WORK_READ);
  CHECK (length == 192 * KIB);
  CHECK (plan_sum (&map, 448 * KIB, size, 256 * KIB, 64 * KIB, MIB,
                   &length) == WORK_SKIP);
  CHECK (length == MIB);
  CHECK (plan_sum (&map, 448 * KIB, size, 256 * KIB, 64 * KIB, 8 * MIB,
                   &length) == WORK_SKIP);
  CHECK (length == size - 448 * KIB - (size % (64 * KIB)));
  CHECK (plan_sum (&map, size, size + MIB, 256 * KIB, 64 * KIB, MIB,
                   &length) == WORK_WAIT);
}

int
main (void)
{
  test_copy_plain ();
  test_copy_zero_kinds ();
  test_copy_map_ends ();
  test_copy_dst_map ();
  test_sum ();
  return check_status ("test-plan");
}
