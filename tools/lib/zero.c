/* nbd-libev-examples: zeroing in pieces.  See zero.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>

#include "extents.h"
#include "util.h"
#include "zero.h"

uint64_t
zero_max_for (uint64_t dst_max, uint64_t block)
{
  uint64_t max = round_down (MAX_LENGTH_32, ZERO_SPLIT);

  if (dst_max > 0)
    max = MIN (max, round_down (dst_max, block));
  return max;
}

uint64_t
zero_command_end (uint64_t offset, uint64_t zero_max, uint64_t extent_end)
{
  uint64_t end = offset + zero_max;

  if (end % ZERO_SPLIT < zero_max)
    end = round_down (end, ZERO_SPLIT);
  return MIN (extent_end, end);
}

void
zero_piece_first (struct zero_piece *p, uint64_t offset, uint64_t end,
                  uint64_t chunk)
{
  p->at = offset;
  p->length = MIN (end - offset, chunk);
}

void
zero_piece_next (struct zero_piece *p, uint64_t end, uint64_t chunk)
{
  p->at += p->length;
  p->length = MIN (end - p->at, chunk);
}

void
zero_piece_again (struct zero_piece *p, uint64_t end, uint64_t chunk)
{
  p->length = MIN (end - p->at, chunk);
}

bool
zero_refused (const struct zero_piece *p, int err, uint64_t block,
              uint64_t *zero_max)
{
  uint64_t half = p->length / 2;

  if ((err != EOVERFLOW && err != EINVAL) || p->length <= block)
    return false;
  /* Pieces already in flight may be refused too: halve once. */
  half = MAX (block, round_down (half, half >= ZERO_SPLIT ? ZERO_SPLIT
                                                          : block));
  if (half < *zero_max)
    *zero_max = half;
  return true;
}
