/* nbd-evcopy: zeroes and their fallbacks.
 *
 * A zero extent, or a buffer read all zero, goes to the destination as
 * zero commands of at most zero_max bytes each, one piece after another
 * in its slot (tools/lib/zero.h), or as buffers of zeroes where the
 * destination cannot zero.  A destination that refuses a zero command
 * for its length gets shorter ones from then on; one that says it
 * cannot zero at all gets buffers of zeroes.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "nbd-evcopy.h"
#include "util.h"

/* The most one zero piece covers: a zero command of at most zero_max
 * bytes or, if the destination cannot zero, a buffer of zeroes (the
 * planner keeps such ranges within a request).
 */
static uint64_t
zero_chunk (const struct copy *c)
{
  return c->planner.dst_can_zero ? c->zero_max : c->pass.e->ring->buf_size;
}

/* Send the slot's zero piece (tools/lib/zero.h): a zero command, or a
 * buffer of zeroes where the destination cannot zero.
 */
static void
send_zero_piece (struct copy *c, struct slot *slot)
{
  const struct zero_piece *p = engine_piece (&c->pass, slot);

  if (c->planner.dst_can_zero)
    c->nr_zeroes++;
  else
    c->nr_writes++;
  engine_start (&c->pass, slot,
                c->planner.dst_can_zero ? STEP_ZERO : STEP_WRITE_ZEROES,
                c->dst, p->at, p->length);
}

/* Zero the slot's range, one piece at a time. */
void
copy_start_zero (struct copy *c, struct slot *slot)
{
  slot->flags |= SLOT_ZEROES;
  zero_piece_first (engine_piece (&c->pass, slot), slot->offset,
                    slot->offset + slot->length, zero_chunk (c));
  send_zero_piece (c, slot);
}

/* A zero piece is over: the slot is, once its last piece is; else the
 * next piece goes, unless the copy is stopping.
 */
void
copy_zero_done (struct copy *c, struct slot *slot)
{
  struct zero_piece *piece = engine_piece (&c->pass, slot);
  uint64_t end = slot->offset + slot->length;

  if (zero_piece_last (piece, end))
    engine_finish (&c->pass, slot);
  else if (!engine_stopping (&c->pass)) {
    zero_piece_next (piece, end, zero_chunk (c));
    send_zero_piece (c, slot);
  }
}

/* A zero piece failed: if the destination refused it for its length,
 * send it again, shorter (tools/lib/zero.h).  A destination that says
 * it cannot zero at all (a local file whose fallocate answers
 * EOPNOTSUPP) gets buffers of zeroes from then on, as a server that
 * cannot zero does.  True if the slot goes on.
 */
bool
copy_retry (struct pass *p, struct slot *slot)
{
  struct copy *c = (struct copy *) p;
  struct zero_piece *piece = engine_piece (p, slot);
  uint64_t was = c->zero_max;

  if (slot->kind == STEP_ZERO &&
      endpoint_zero_unsupported (c->dst, slot->error)) {
    if (c->planner.dst_can_zero)
      debug ("destination cannot zero (%s): writing buffers of zeroes "
             "instead", strerror (slot->error));
    c->planner.dst_can_zero = false;
    zero_piece_again (piece, slot->offset + slot->length, zero_chunk (c));
    send_zero_piece (c, slot);
    return true;
  }
  if (slot->kind != STEP_ZERO ||
      !zero_refused (piece, slot->error, c->planner.block, &c->zero_max))
    return false;
  if (c->zero_max < was)
    debug ("destination refused a zero of %" PRIu64 " bytes (%s): zero "
           "commands of at most %" PRIu64 " bytes from now on",
           piece->length, strerror (slot->error), c->zero_max);
  zero_piece_again (piece, slot->offset + slot->length, zero_chunk (c));
  send_zero_piece (c, slot);
  return true;
}

/* How the copy zeroes (tools/lib/zero.h), from what the destination says. */
void
copy_set_zeroes (struct copy *c, const struct copy_options *co)
{
  uint64_t max = c->dst->max_block;

  c->planner.dst_can_zero = c->dst->can_zero;
  if (!c->planner.dst_can_zero)
    debug ("destination cannot zero: writing buffers of zeroes instead");
  c->zero_max = zero_max_for (max, c->planner.block);
  if (max > 0)
    debug ("destination: zero commands of at most %" PRIu64 " bytes, its "
           "maximum block size", c->zero_max);
  c->pass.no_hole = co->allocated;
}
