/* nbd-evcopy: the copy pass.
 *
 * One run of the engine's loop over the image (tools/lib/engine.h):
 * plan pieces from both maps (tools/lib/plan.h), read the source's
 * data, and write it, zero it (zeroes.c) or send nothing where the
 * destination reads as zeroes already.  A stream source is read one
 * piece at a time, in order, until it ends.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "iszero.h"
#include "nbd-evcopy.h"
#include "ring-query.h"
#include "util.h"

/* Write what the slot read (tools/lib/engine.h starts every step). */
static void
start_write (struct copy *c, struct slot *slot)
{
  c->nr_writes++;
  engine_start (&c->pass, slot, STEP_WRITE, c->dst, slot->offset,
                slot->length);
}

/* A read came back.  Data is written (to null:, only hashed).
 * An all-zero buffer needs no write: nothing at all where the
 * destination reads as zeroes already (SLOT_ONTO_ZEROES, decided when
 * the read was planned), otherwise one zero command, which lets the
 * server keep a hole.  Only whole blocks may be zeroed, so the image's
 * unaligned tail is always written.  Whole blocks of zeroes: block is a
 * multiple of the hash's block size with --checksum, so they are hashed
 * as zero blocks, with no work for the hash threads.
 */
static void
read_complete (struct copy *c, struct slot *slot)
{
  slot_debug (slot, "read");
  if (!c->sparse || slot->length % c->planner.block != 0 ||
      !is_zero (slot->buf, slot->length)) {
    slot->flags |= SLOT_DATA;
    if (c->dst->discards)
      engine_finish (&c->pass, slot);
    else
      start_write (c, slot);
    return;
  }
  slot->flags |= SLOT_ZEROES;
  if (slot->flags & SLOT_ONTO_ZEROES) {
    slot_debug (slot, "skip zeroes");
    c->bytes_skipped += slot->length;
    engine_finish (&c->pass, slot);
    return;
  }
  copy_start_zero (c, slot);
}

/* The source, a stream, ended with the slot's read: its size is now
 * known, and the slot is the last.
 */
static void
source_ended (struct copy *c, struct slot *slot)
{
  struct pass *p = &c->pass;

  p->size = p->next_offset = slot->offset + slot->length;
  c->planner.size = p->size;
  debug ("%s ended after %" PRIu64 " bytes", c->src->name, p->size);
}

/* The slot's step finished: the next one.  Once stopping, no new
 * command starts, but what is over is given back.
 */
static void
step_done (struct pass *p, struct slot *slot)
{
  struct copy *c = (struct copy *) p;

  switch ((enum step) slot->kind) {
  case STEP_READ:
    if (endpoint_ended (c->src))
      source_ended (c, slot);
    if (slot->length == 0)      /* a stream that had nothing more */
      engine_finish (p, slot);
    else if (!engine_stopping (p))
      read_complete (c, slot);
    break;
  case STEP_WRITE:
    engine_finish (p, slot);
    break;
  case STEP_ZERO:
  case STEP_WRITE_ZEROES:
    copy_zero_done (c, slot);
    break;
  case STEP_TAKEN:              /* not a step that completes */
  case STEP_HASH:               /* the engine's */
  case STEP_READY:
  case NR_STEPS:
    break;
  }
}

/* Ask for the reply that tells where the current extent ends.  True
 * if there is nothing to wait for: the command was refused, and its
 * range is already in the map as data, so plan again at once (nothing
 * else would wake the loop).
 */
static bool
want_more (struct copy *c, uint64_t offset, uint64_t length)
{
  endpoint_map_pump (c->src, &c->read_map, &c->pass.e->stop, offset,
                     length + 1);
  return !c->read_map.in_flight && !engine_stopping (&c->pass);
}

/* What to do from next_offset (tools/lib/plan.h), keeping a window or two
 * of extents ahead of the copy, so zero extents rarely wait for a
 * block-status round trip: both maps at once, and neither past the
 * size (a larger destination's would go on).
 */
static enum work
next_work (struct copy *c, uint64_t *length, bool *onto_zeroes)
{
  struct pass *p = &c->pass;
  struct engine *e = p->e;
  uint64_t ahead = MIN (2 * c->read_map.window, p->size - p->next_offset);
  enum work work;

  do {
    endpoint_map_pump (c->src, &c->read_map, &e->stop, p->next_offset,
                       ahead);
    if (c->planner.dst_has_map)
      endpoint_map_pump (c->dst, &c->dst_map, &e->stop, p->next_offset,
                         ahead);
    work = plan_copy (&c->planner, p->next_offset, e->depth.request_size,
                      c->zero_max, length, onto_zeroes);
  } while (work == WORK_MORE && want_more (c, p->next_offset, *length));
  return work == WORK_MORE ? WORK_WAIT : work;
}

/* A stream source: one read at a time, of the depth's request size.
 * The stream gives its bytes in order anyway; each buffer, once full,
 * goes to the destination at once, so that the destination still has
 * as many writes in flight as the depth allows.
 */
static void
fill_from_stream (struct copy *c)
{
  struct pass *p = &c->pass;
  struct engine *e = p->e;
  struct slot *slot;

  /* A destination of 0 bytes still gets its one read: of nothing, to
   * find out whether the stream has more (tools/lib/stream.h).
   */
  if (engine_stopping (p) || e->reads > 0 || endpoint_ended (c->src) ||
      (p->next_offset >= p->size && (p->size > 0 || c->nr_reads > 0)) ||
      e->ring->in_use >= e->depth.requests)
    return;
  slot = engine_take (p, MIN (e->depth.request_size,
                              p->size - p->next_offset), true);
  slot->flags = c->planner.dst_is_zero ? SLOT_ONTO_ZEROES : 0;
  c->nr_reads++;
  engine_read (p, slot, c->src);
}

/* Plan pieces and start them while slots are free.  Skipped pieces
 * need no slot, so a run of them costs no I/O at all; with a hash they
 * take one all the same, so that their zero blocks reach it in their
 * turn.
 */
static void
fill (struct pass *p)
{
  struct copy *c = (struct copy *) p;
  struct slot *slot;
  uint64_t length;
  enum work work;
  bool onto_zeroes = false;

  if (p->open_ended) {
    fill_from_stream (c);
    return;
  }
  while (!engine_stopping (p) && p->next_offset < p->size &&
         (work = next_work (c, &length, &onto_zeroes)) != WORK_WAIT) {
    if (work == WORK_SKIP && p->hash == NULL) {
      debug ("skip zero extent offset %" PRIu64 " length %" PRIu64,
             p->next_offset, length);
      c->bytes_skipped += length;
      engine_skip (p, length);
      continue;
    }
    if (p->e->ring->in_use >= p->e->depth.requests)
      break;
    slot = engine_take (p, length, true);
    if (work == WORK_SKIP) {
      slot->flags = SLOT_ZEROES;
      c->bytes_skipped += length;
      engine_finish (p, slot);
      slot_debug (slot, "skip zeroes");
    }
    else if (work == WORK_ZERO)
      copy_start_zero (c, slot);
    else {
      slot->flags = onto_zeroes ? SLOT_ONTO_ZEROES : 0;
      c->nr_reads++;
      engine_read (p, slot, c->src);
    }
  }
}

/* Every byte is written: with --flush, over once the flush is.  It
 * starts only now that no write is in flight, so that it covers them
 * all.
 */
static bool
finished (struct pass *p)
{
  struct copy *c = (struct copy *) p;

  /* A stream's last zeroes may be holes past a new file's end. */
  if (p->open_ended && endpoint_extend (c->dst, p->size) == -1) {
    stop_fail (&p->e->stop, "destination: cannot make it %" PRIu64
               " bytes: %s", p->size, strerror (errno));
    return false;
  }
  return !c->want_flush || endpoint_flush (c->dst, &c->flush, &p->e->stop);
}

/* Stopping, with nothing in flight.  After a signal, --flush still
 * makes the copy so far durable; by then every write below the offset
 * reported is complete.  Only a destination still connected, with no
 * write failed, can do that.
 */
static bool
stopped (struct pass *p)
{
  struct copy *c = (struct copy *) p;
  struct engine *e = p->e;

  /* A stream's copy into a new file: zeroes below the offset reported
   * may be holes past the file's end, which must read as zeroes too.
   */
  if (e->stop.signum != 0 && p->open_ended &&
      endpoint_extend (c->dst, ring_low_water (e->ring,
                                               p->next_offset)) == -1)
    message ("destination: cannot extend it: %s", strerror (errno));
  return e->stop.signum == 0 || !c->want_flush ||
    !endpoint_ready (c->dst) || ring_first_failed (e->ring) != NULL ||
    endpoint_flush (c->dst, &c->flush, &e->stop);
}

const struct pass_ops copy_ops = {
  .fill = fill,
  .step_done = step_done,
  .retry = copy_retry,
  .finished = finished,
  .stopped = stopped,
  .where = copy_where,
};

/* Say under -v what the copy took (tests/zero-functions.sh reads it). */
void
copy_describe_done (const struct copy *c)
{
  debug ("done: %" PRIu64 " + %" PRIu64 " block status, %" PRIu64
         " reads, %" PRIu64 " writes, %" PRIu64 " zeroes, %" PRIu64
         " bytes skipped", c->read_map.commands, c->dst_map.commands,
         c->nr_reads, c->nr_writes, c->nr_zeroes, c->bytes_skipped);
}
