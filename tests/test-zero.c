/* Unit tests for tools/lib/zero.c: how nbd-evcopy splits a zero extent
 * into commands, walks a slot's range piece by piece, and shortens a
 * piece the destination refused for its length.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdint.h>

#include "extents.h"
#include "zero.h"
#include "check.h"

#define KIB UINT64_C (1024)
#define MIB (1024 * KIB)
#define GIB (1024 * MIB)

/* Without a maximum block size, a zero command is as long as the
 * 32-bit length field allows, in whole ZERO_SPLITs; with one, no longer
 * than it, in whole blocks.
 */
static void
test_max (void)
{
  CHECK (zero_max_for (0, 1) == MAX_LENGTH_32);
  CHECK (zero_max_for (0, 1) % ZERO_SPLIT == 0);
  CHECK (zero_max_for (32 * MIB, 4096) == 32 * MIB);
  CHECK (zero_max_for (100000, 4096) == 24 * 4096);
  CHECK (zero_max_for (8 * GIB, 512) == MAX_LENGTH_32);
}

/* A command cut short ends on a multiple of ZERO_SPLIT, at an absolute
 * offset; one that reaches the extent's end ends there.
 */
static void
test_command_end (void)
{
  CHECK (zero_command_end (0, MIB, 10 * MIB) == MIB);
  CHECK (zero_command_end (4096, MIB, 10 * MIB) == MIB);
  CHECK (zero_command_end (4096, MIB, 100 * KIB) == 100 * KIB);
  CHECK (zero_command_end (ZERO_SPLIT, MIB, 10 * MIB) == MIB + ZERO_SPLIT);
  /* Less than a split: nothing to round down to, the whole max goes. */
  CHECK (zero_command_end (512, 4096, 10 * MIB) == 4608);
}

/* The pieces of a range cover it once, in order, none longer than the
 * chunk.
 */
static void
test_pieces (void)
{
  struct zero_piece p;
  uint64_t covered = 0, n = 1;

  zero_piece_first (&p, 1000, 1000 + 10 * MIB + 5, 4 * MIB);
  CHECK (p.at == 1000 && p.length == 4 * MIB);
  covered += p.length;
  while (!zero_piece_last (&p, 1000 + 10 * MIB + 5)) {
    zero_piece_next (&p, 1000 + 10 * MIB + 5, 4 * MIB);
    CHECK (p.at == 1000 + covered);
    CHECK (p.length <= 4 * MIB);
    covered += p.length;
    n++;
  }
  CHECK (covered == 10 * MIB + 5);
  CHECK (n == 3);
  /* A range within one chunk is one piece. */
  zero_piece_first (&p, 0, 512, MIB);
  CHECK (p.length == 512 && zero_piece_last (&p, 512));
  /* Going again with a smaller chunk shortens the piece in place. */
  zero_piece_first (&p, 0, 8 * MIB, 8 * MIB);
  zero_piece_again (&p, 8 * MIB, 2 * MIB);
  CHECK (p.at == 0 && p.length == 2 * MIB);
}

/* EOVERFLOW or EINVAL for a piece longer than a block halves zero_max,
 * rounded to ZERO_SPLIT while that large, to the block below; anything
 * else, or a piece of one block, is a failure.
 */
static void
test_refused (void)
{
  struct zero_piece p = { .at = 0, .length = 64 * MIB };
  uint64_t max = 64 * MIB;

  CHECK (zero_refused (&p, EOVERFLOW, 512, &max));
  CHECK (max == 32 * MIB);
  /* Another piece in flight refused at the old length: no second halving. */
  CHECK (zero_refused (&p, EINVAL, 512, &max));
  CHECK (max == 32 * MIB);
  CHECK (!zero_refused (&p, EIO, 512, &max));
  CHECK (!zero_refused (&p, ENOTSUP, 512, &max));
  p.length = 3 * ZERO_SPLIT;
  max = p.length;
  CHECK (zero_refused (&p, EINVAL, 512, &max));
  CHECK (max == ZERO_SPLIT);
  p.length = 3000;
  max = p.length;
  CHECK (zero_refused (&p, EINVAL, 512, &max));
  CHECK (max == 1024);
  p.length = 4096;
  max = p.length;
  CHECK (!zero_refused (&p, EINVAL, 4096, &max));
  CHECK (max == 4096);
  /* Never below a block. */
  p.length = 6144;
  max = p.length;
  CHECK (zero_refused (&p, EOVERFLOW, 4096, &max));
  CHECK (max == 4096);
}

int
main (void)
{
  test_max ();
  test_command_end ();
  test_pieces ();
  test_refused ();
  return check_status ("test-zero");
}
