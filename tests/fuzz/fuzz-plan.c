/* nbd-libev-examples: fuzz target for tools/lib/plan.c and zero.c.
 *
 * The input describes an image (its size, from a few bytes to near
 * 2^63, and its extents of data and zeroes), a destination (with a map
 * of its own, all zeroes, or unknown; able to zero or not; a maximum
 * block size), the block, the request sizes of a depth that changes
 * between pieces, and how the maps grow: in pieces of any length, as
 * block-status replies arrive.  Then it drives the planners as the
 * tools do (nbd-evcopy's fill and next_work, nbd-evsum's fill), from
 * offset 0 or a --resume offset, with zero pieces sent and refused as
 * the input says, and checks every piece against the image itself:
 *
 *  - every byte is planned exactly once, in order, and no piece ends
 *    past the image or wraps;
 *  - a zero command or a skip covers only bytes the source's extents
 *    say are zero, and a skip or a read onto zeroes only bytes the
 *    destination reads as zeroes;
 *  - a read is at most a request, a zero command at most the longest
 *    zero command (or a request, where the destination cannot zero),
 *    and each zero piece within it, at most zero_max as it shrinks;
 *  - every piece starts on the block and ends on it, or at the end of
 *    the image; every zero piece sent is aligned to the servers'
 *    minimum block; nbd-evsum's reads stay within a request boundary
 *    and its zero runs are whole hash blocks;
 *  - the planner never waits for a map that is complete.
 *
 * Maps are made by hand as in tests/test-plan.c, and grow as
 * common/extents.c grows them: at the end, merged with the last extent
 * of the same kind.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "extents.h"
#include "fuzz.h"
#include "plan.h"
#include "util.h"
#include "zero.h"

#define MAX_EXTENTS 64

/* The most pieces planned per run: enough for every small image, and
 * a bound on the time a huge one takes, which is planned from near its
 * end (--resume) instead.
 */
#define MAX_PIECES 4096

/* What an image or a destination really holds: extents that cover it
 * from 0 to its size, and the map of it known so far.
 */
struct image {
  struct extent truth[MAX_EXTENTS];
  size_t nr;
  struct extent v[MAX_EXTENTS];
  struct extent_map map;
};

static struct image src, dst;

/* An image of size bytes made of up to MAX_EXTENTS runs from the input,
 * the last one to the end; nothing of it known yet.
 */
static void
make_image (struct fuzz_input *in, struct image *img, uint64_t size)
{
  uint64_t offset = 0, length;
  size_t n = 1 + take_u8 (in) % MAX_EXTENTS;
  bool zero;

  memset (img, 0, sizeof *img);
  for (img->nr = 0; offset < size && img->nr < n; img->nr++) {
    switch (take_u8 (in) % 4) {
    case 0: length = take_u8 (in); break;
    case 1: length = take_bytes (in, 2) << 4; break;
    case 2: length = take_bytes (in, 4) << 12; break;
    default: length = take_bytes (in, 8); break;
    }
    zero = take_bool (in);
    if (length == 0 || img->nr + 1 == n)
      length = size - offset;
    length = MIN (length, size - offset);
    img->truth[img->nr] = (struct extent) { offset, length, zero };
    offset += length;
  }
  if (offset < size)
    img->truth[img->nr++] = (struct extent) { offset, size - offset, false };
  img->map.v = img->v;
  img->map.alloc = MAX_EXTENTS;
  img->map.size = size;
  img->map.supported = true;
  img->map.window = MAX_LENGTH_32;
  img->map.block = 1;
}

/* The truth's kind at offset, and where that extent ends. */
static const struct extent *
truth_at (const struct image *img, uint64_t offset)
{
  size_t i;

  for (i = 0; i < img->nr; i++)
    if (offset - img->truth[i].offset < img->truth[i].length)
      return &img->truth[i];
  FUZZ_CHECK (!"an offset outside the image");
  return NULL;
}

/* True if [offset, offset + length) is all zero in the truth. */
static bool
all_zero (const struct image *img, uint64_t offset, uint64_t length)
{
  const struct extent *t;
  uint64_t end = offset + length;

  while (offset < end) {
    t = truth_at (img, offset);
    if (!t->zero)
      return false;
    offset = t->offset + t->length;
  }
  return true;
}

/* A block-status reply: the map learns the next bytes of the truth, a
 * whole extent or part of one.  False if it knows everything already.
 */
static bool
grow (struct fuzz_input *in, struct image *img)
{
  struct extent_map *map = &img->map;
  const struct extent *t;
  uint64_t length, part = take_bytes (in, 4);

  if (map->end >= map->size)
    return false;
  t = truth_at (img, map->end);
  length = t->offset + t->length - map->end;
  if (part > 0 && take_bool (in))
    length = MIN (length, part);
  /* Forget what the planner has passed, as extents_pump does. */
  if (map->len == map->alloc && map->first > 0) {
    memmove (map->v, map->v + map->first,
             (map->len - map->first) * sizeof *map->v);
    map->len -= map->first;
    map->first = 0;
  }
  if (map->len > map->first && map->v[map->len - 1].zero == t->zero)
    map->v[map->len - 1].length += length;
  else {
    FUZZ_CHECK (map->len < map->alloc);
    map->v[map->len++] = (struct extent) { map->end, length, t->zero };
  }
  map->end += length;
  return true;
}

/* A power of two from 1 up to 1 << max_shift. */
static uint64_t
take_pow2 (struct fuzz_input *in, unsigned max_shift)
{
  return UINT64_C (1) << (take_u8 (in) % (max_shift + 1));
}

/* A request size, a multiple of block, as the depth keeps it (the tools
 * refuse a --request-size that is not).
 */
static uint64_t
take_request_size (struct fuzz_input *in, uint64_t block)
{
  return block * (1 + take_u8 (in) % 64);
}

/* Send a zero command of [offset, offset + length) in pieces, as
 * nbd-evcopy's slot does, the destination refusing some for their
 * length, and check each piece.
 */
static void
send_zero (struct fuzz_input *in, const struct copy_planner *pl,
           uint64_t offset, uint64_t length, uint64_t chunk,
           uint64_t min_block, uint64_t *zero_max)
{
  struct zero_piece p;
  uint64_t end = offset + length, at = offset, was;
  unsigned refusals = 0;

  zero_piece_first (&p, offset, end, chunk);
  for (;;) {
    FUZZ_CHECK (p.at == at && p.length > 0 && p.length <= end - p.at);
    FUZZ_CHECK (p.length <= chunk);
    FUZZ_CHECK (p.at % min_block == 0);
    FUZZ_CHECK (p.length % min_block == 0 || p.at + p.length == end);
    if (pl->dst_can_zero && refusals < 8 && take_u8 (in) % 4 == 0) {
      was = *zero_max;
      if (zero_refused (&p, take_bool (in) ? EINVAL : EOVERFLOW, pl->block,
                        zero_max)) {
        refusals++;
        FUZZ_CHECK (*zero_max <= was && *zero_max > 0);
        FUZZ_CHECK (*zero_max >= pl->block || *zero_max == was);
        chunk = *zero_max;
        zero_piece_again (&p, end, chunk);
        continue;
      }
      /* Too short to shorten: a failure in the tool; here, sent. */
    }
    at += p.length;
    if (zero_piece_last (&p, end))
      break;
    zero_piece_next (&p, end, chunk);
  }
  FUZZ_CHECK (at == end);
}

/* One piece plan_copy chose: the properties above. */
static void
check_copy_piece (const struct copy_planner *pl, enum work work,
                  uint64_t offset, uint64_t length, bool onto_zeroes,
                  uint64_t request_size, uint64_t zero_max)
{
  uint64_t end = offset + length;

  FUZZ_CHECK (length > 0 && end > offset && end <= pl->size);
  FUZZ_CHECK (offset % pl->block == 0);
  FUZZ_CHECK (end % pl->block == 0 || end == pl->size);
  switch (work) {
  case WORK_READ:
    FUZZ_CHECK (length <= request_size);
    if (onto_zeroes)
      FUZZ_CHECK (pl->dst_has_map ? all_zero (&dst, offset, length)
                  : pl->dst_is_zero);
    break;
  case WORK_ZERO:
    FUZZ_CHECK (all_zero (&src, offset, length));
    FUZZ_CHECK (length <= (pl->dst_can_zero ? zero_max : request_size));
    break;
  case WORK_SKIP:
    FUZZ_CHECK (all_zero (&src, offset, length));
    FUZZ_CHECK (pl->dst_has_map ? all_zero (&dst, offset, length)
                : pl->dst_is_zero);
    break;
  default:
    FUZZ_CHECK (!"not a piece");
  }
}

/* nbd-evcopy: plan from offset to the end, growing the maps on
 * WORK_WAIT and WORK_MORE as its pumps would.
 */
static void
run_copy (struct fuzz_input *in)
{
  struct copy_planner pl = { .read_map = &src.map, .dst_map = &dst.map };
  uint64_t size, offset, request_size, zero_max, length, min_block;
  uint64_t buf_size, dst_max;
  unsigned pieces = 0;
  enum work work;
  bool onto_zeroes, grew;

  size = take_bool (in) ? take_bytes (in, 3) : INT64_MAX - take_bytes (in, 4);
  min_block = take_pow2 (in, 16);
  /* The block may be larger: --checksum's block size. */
  pl.block = take_u8 (in) % 8 == 0 ? take_pow2 (in, 25) : min_block;
  pl.block = MAX (pl.block, min_block);
  pl.size = size;
  pl.dst_has_map = take_bool (in);
  pl.dst_is_zero = !pl.dst_has_map && take_bool (in);
  pl.dst_can_zero = take_u8 (in) % 4 != 0;
  dst_max = take_bool (in) ? 0 : min_block * (1 + take_bytes (in, 2));
  zero_max = zero_max_for (dst_max, pl.block);
  FUZZ_CHECK (zero_max <= MAX_LENGTH_32 && zero_max % min_block == 0);
  FUZZ_CHECK (dst_max == 0 || zero_max <= dst_max);
  make_image (in, &src, size);
  /* A destination as large, or larger. */
  make_image (in, &dst, size + MIN (take_bytes (in, 2), INT64_MAX - size));
  /* --resume: the pass starts at a block boundary past 0. */
  offset = size > MAX_PIECES || take_bool (in) ?
    round_down (size - MIN (size, take_bytes (in, 4)), pl.block) : 0;
  buf_size = 64 * pl.block;
  request_size = take_request_size (in, pl.block);

  while (offset < size && pieces < MAX_PIECES) {
    onto_zeroes = false;        /* set for WORK_READ only */
    work = plan_copy (&pl, offset, request_size, zero_max, &length,
                      &onto_zeroes);
    if (work == WORK_WAIT || work == WORK_MORE) {
      grew = grow (in, &src);
      if (work == WORK_WAIT && pl.dst_has_map)
        grew = grow (in, &dst) || grew;
      /* Waiting for a map that cannot grow would wait for ever. */
      FUZZ_CHECK (grew);
      continue;
    }
    check_copy_piece (&pl, work, offset, length, onto_zeroes, request_size,
                      zero_max);
    if (work == WORK_ZERO)
      send_zero (in, &pl, offset, length,
                 pl.dst_can_zero ? zero_max : buf_size,
                 MIN (min_block, ZERO_SPLIT), &zero_max);
    offset += length;
    pieces++;
    if (take_u8 (in) % 8 == 0)
      request_size = take_request_size (in, pl.block);
  }
}

/* nbd-evsum: plan the hash of the image from 0 to the end. */
static void
run_sum (struct fuzz_input *in)
{
  uint64_t size, block_size, request_size, max_zero_run, offset = 0, length;
  unsigned pieces = 0;
  enum work work;

  size = take_bool (in) ? take_bytes (in, 3) : INT64_MAX - take_bytes (in, 4);
  block_size = take_pow2 (in, 16);
  request_size = block_size * (1 + take_u8 (in) % 64);
  max_zero_run = take_bool (in) ? UINT64_C (1) << 32
    : block_size * (1 + take_u8 (in));
  make_image (in, &src, size);
  /* Past MAX_PIECES the rest is not planned: start a huge image at a
   * block boundary near its end.
   */
  if (size > MAX_PIECES)
    offset = round_down (size - MIN (size, take_bytes (in, 4)), block_size);

  while (offset < size && pieces < MAX_PIECES) {
    work = plan_sum (&src.map, offset, size, request_size, block_size,
                     max_zero_run, &length);
    if (work == WORK_WAIT) {
      FUZZ_CHECK (grow (in, &src));
      continue;
    }
    FUZZ_CHECK (length > 0 && offset + length > offset &&
                offset + length <= size);
    FUZZ_CHECK (offset % block_size == 0);
    if (work == WORK_SKIP) {
      FUZZ_CHECK (all_zero (&src, offset, length));
      FUZZ_CHECK (length % block_size == 0 && length <= max_zero_run);
    }
    else {
      FUZZ_CHECK (work == WORK_READ);
      FUZZ_CHECK ((offset + length) % block_size == 0 ||
                  offset + length == size);
      FUZZ_CHECK (offset / request_size ==
                  (offset + length - 1) / request_size);
    }
    offset += length;
    pieces++;
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct fuzz_input in = { data, size };

  if (take_bool (&in))
    run_sum (&in);
  else
    run_copy (&in);
  return 0;
}
