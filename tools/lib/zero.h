/* nbd-libev-examples: zeroing a range of the destination in pieces.
 *
 * nbd-evcopy sends each zero extent of the source in as few commands
 * as the destination allows.  This module holds the arithmetic alone,
 * with no command sent and no loop, so that tests/test-zero.c can
 * check it:
 *
 *  - The longest zero command (zero_max_for): the destination's maximum
 *    block size, if it says one.  Until the NBD protocol's "Block size
 *    constraints" were relaxed in 2023, that maximum bound every
 *    command, and qemu's own client still keeps WRITE_ZEROES within it;
 *    libnbd 1.14, nbdkit 1.32 and qemu 7.2 are of that time.  Else
 *    MAX_LENGTH_32 (common/extents.h), the 32-bit length field.
 *
 *  - Long extents are split at multiples of ZERO_SPLIT, absolute
 *    offsets, not relative to the extent (zero_command_end).
 *
 *  - A slot zeroes its range one piece at a time (struct zero_piece):
 *    a command of at most zero_max bytes, or, where the destination
 *    cannot zero, a write of a buffer of zeroes.
 *
 *  - The spec still lets a server refuse a request longer than it likes
 *    with NBD_EOVERFLOW or NBD_EINVAL (proto.md, "Block size
 *    constraints": it MAY refuse a request over its maximum, or over one
 *    it did not say): zero_refused halves zero_max, and the same piece
 *    goes again, shorter.  NBD_ENOTSUP is left a failure: nbdkit and
 *    qemu-nbd answer it only to FAST_ZERO, which is never sent, and
 *    write zeroes themselves when their storage cannot zero.
 */

#ifndef NBD_LIBEV_EXAMPLES_ZERO_H
#define NBD_LIBEV_EXAMPLES_ZERO_H

#include <stdbool.h>
#include <stdint.h>

/* 64 KiB is the largest minimum block size the protocol allows and
 * qcow2's default cluster size, so splitting there means a server never
 * has to zero part of a block or cluster by writing it.
 */
#define ZERO_SPLIT 65536

/* The longest zero command to send to a destination whose maximum
 * block size is dst_max (0: it said none), in multiples of block.
 */
uint64_t zero_max_for (uint64_t dst_max, uint64_t block);

/* Where one zero command that starts at offset ends: at most zero_max
 * bytes later, at a multiple of ZERO_SPLIT if it is cut short, and no
 * further than extent_end.
 */
uint64_t zero_command_end (uint64_t offset, uint64_t zero_max,
                           uint64_t extent_end);

/* The piece of a slot's range in flight: [at, at + length). */
struct zero_piece {
  uint64_t at, length;
};

/* The first piece of the range [offset, end), at most chunk bytes. */
void zero_piece_first (struct zero_piece *p, uint64_t offset, uint64_t end,
                       uint64_t chunk);

/* True if the piece is the last of the range [..., end). */
static inline bool
zero_piece_last (const struct zero_piece *p, uint64_t end)
{
  return p->at + p->length == end;
}

/* The piece is done, and not the last: move to the next, at most chunk
 * bytes.
 */
void zero_piece_next (struct zero_piece *p, uint64_t end, uint64_t chunk);

/* The piece is going again after a refusal: its length is recomputed
 * with the current chunk.
 */
void zero_piece_again (struct zero_piece *p, uint64_t end, uint64_t chunk);

/* The destination refused a zero piece with err.  True if that was for
 * its length (EOVERFLOW or EINVAL, for a piece longer than block): then
 * *zero_max is halved, if no other piece halved it already, and the
 * piece may go again.  False if the refusal is a failure.
 */
bool zero_refused (const struct zero_piece *p, int err, uint64_t block,
                   uint64_t *zero_max);

#endif /* NBD_LIBEV_EXAMPLES_ZERO_H */
