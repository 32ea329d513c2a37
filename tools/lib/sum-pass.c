/* nbd-libev-examples: the pass that reads an image and hashes it.  See
 * sum-pass.h.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "plan.h"
#include "sum-pass.h"
#include "util.h"

/* Longest zero run in one slot.  The loop thread feeds zero runs to the
 * outer digest itself (there is nothing for a hash thread to compute),
 * and the cap keeps each such stall of the I/O short: 65536 digests,
 * about a millisecond.  Block status without 64-bit lengths never
 * reports more than this anyway.
 */
#define MAX_ZERO_RUN (UINT64_C (1) << 32)

/* A stream: one read at a time, as blksum reads standard input, while
 * the hash threads work on what came before.
 */
static void
fill_from_stream (struct sum_pass *s)
{
  struct pass *p = &s->pass;
  struct engine *e = p->e;
  struct slot *slot;

  if (e->reads > 0 || endpoint_ended (s->src) ||
      e->ring->in_use >= e->ring->nr_slots)
    return;
  slot = engine_take (p, e->depth.request_size, true);
  slot->flags = SLOT_DATA;
  s->nr_reads++;
  engine_read (p, slot, s->src);
}

/* Fill idle slots: zero runs where block status says whole blocks read
 * as zeroes, reads everywhere else (tools/lib/plan.h).  The depth
 * (tools/lib/depth.h) is the reads in flight; as many slots again, within
 * the ring, may hold data read and waiting for the hash threads, so
 * that a backlog to hash does not stop the reads while a late server
 * is the bottleneck, nor grow without bound while the hashing is.  With
 * --requests the ring has that many slots, and they bound both
 * together.  A zero run needs no I/O and no hashing: it is over the
 * moment it is taken, and still goes through the ring so that it is
 * fed to the outer digest in its turn, after every read before it.
 * Block status asks for nothing past the pass's end, which may come
 * before the image's: no plan would wait for that reply, and the
 * command could still be in flight once the pass is over.
 */
static void
fill (struct pass *p)
{
  struct sum_pass *s = (struct sum_pass *) p;
  struct engine *e = p->e;
  const struct depth *d = &e->depth;
  uint64_t ahead, length;
  struct slot *slot;

  if (p->open_ended) {
    fill_from_stream (s);
    return;
  }
  while (p->next_offset < p->size && e->reads < d->requests &&
         e->ring->in_use < MIN (2 * d->requests, e->ring->nr_slots)) {
    /* Block status asks for a window of up to 4 GiB at a time, with one
     * command in flight; until the map reaches next_offset, wait for it.
     */
    ahead = MIN (d->requests * d->request_size, p->size - p->next_offset);
    endpoint_map_pump (s->src, &s->map, &e->stop, p->next_offset, ahead);
    switch (plan_sum (&s->map, p->next_offset, p->size, d->request_size,
                      s->block, MAX_ZERO_RUN, &length)) {
    case WORK_SKIP:
      slot = engine_take (p, length, false);
      slot->flags = SLOT_ZEROES;
      s->bytes_unread += length;
      engine_finish (p, slot);
      slot_debug (slot, "zero run");
      break;
    case WORK_READ:
      slot = engine_take (p, length, true);
      slot->flags = SLOT_DATA;
      s->nr_reads++;
      engine_read (p, slot, s->src);
      break;
    default:
      goto wait;
    }
  }
 wait:
  /* Also when the ring is full: the next window arrives while the reads
   * are in flight.
   */
  ahead = MIN (d->requests * d->request_size, p->size - p->next_offset);
  endpoint_map_pump (s->src, &s->map, &e->stop, p->next_offset, ahead);
}

/* A read is done, and every slot before it has moved on (the pass is
 * in order, tools/lib/engine.h): its data goes to the hash threads.
 * Once stopping, what is read is no longer hashed.  A stream that
 * ended with this read has its size: the digest includes it.
 */
static void
step_done (struct pass *p, struct slot *slot)
{
  struct sum_pass *s = (struct sum_pass *) p;

  if (slot->kind != STEP_READ || engine_stopping (p))
    return;
  if (endpoint_ended (s->src)) {
    p->size = p->next_offset = slot->offset + slot->length;
    debug ("%s ended after %" PRIu64 " bytes", s->src->name, p->size);
  }
  if (slot->length == 0)        /* nothing more came: nothing to hash */
    slot->flags = SLOT_ZEROES;
  engine_finish (p, slot);
}

/* Stopped: how far the pass got, and what that leaves.  A pass that is
 * the program's whole work names its image after a signal; a failure's
 * message names it already.  A stage of a larger work says which stage
 * stopped, after a failure too: the failure names only the endpoint,
 * which the stages before used as well.
 */
static char *
where (const struct pass *p)
{
  const struct sum_pass *s = (const struct sum_pass *) p;
  bool signal = p->e->stop.signum != 0;
  char *str;
  int r;

  if (s->stage != NULL)
    r = asprintf (&str, "%s %s, after %" PRIu64 " bytes; %s",
                  signal ? " during" : "; in", s->stage, p->bytes_done,
                  s->left);
  else if (!signal)
    return NULL;
  else if (p->open_ended)
    r = asprintf (&str, " after hashing %" PRIu64 " bytes of %s; %s",
                  p->bytes_done, p->name, s->left);
  else
    r = asprintf (&str, " after hashing %" PRIu64 " of %" PRIu64 " bytes "
                  "of %s; %s", p->bytes_done, p->size, p->name, s->left);
  return r == -1 ? NULL : str;
}

static const struct pass_ops sum_ops = {
  .fill = fill,
  .step_done = step_done,
  .where = where,
};

/* Both block sizes are powers of two, so the larger is a multiple of
 * the other: every piece holds whole hash blocks, and src takes it.
 * Block status goes to one connection: the map is one sequence.  The
 * timeout message names it when no read is outstanding: it is the only
 * other command the pass sends.
 */
void
sum_pass_open (struct sum_pass *s, struct endpoint *src, uint64_t size,
               uint64_t block_size)
{
  s->pass.ops = &sum_ops;
  s->pass.size = size;
  s->pass.open_ended = size == SIZE_UNKNOWN;
  s->pass.in_order = true;
  s->pass.sample_reads = true;
  s->pass.other_command = "block status";
  s->src = src;
  s->block = MAX (block_size, src->min_block);
  endpoint_map_open (src, &s->map);
}

void
sum_pass_close (struct sum_pass *s)
{
  debug ("%s: %" PRIu64 " reads, %" PRIu64 " bytes of zero blocks not "
         "read, %" PRIu64 " block-status commands", s->src->name,
         s->nr_reads, s->bytes_unread, s->map.commands);
  extents_free (&s->map);
}
