/* nbd-libev-examples: the request ring.  See ring.h for the contract. */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ring.h"

const char *const slot_state_names[] = { "idle", "busy", "done", "failed" };

static uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * UINT64_C (1000000000) + ts.tv_nsec;
}

struct ring *
ring_new (unsigned nr_slots, size_t buf_size)
{
  long page = sysconf (_SC_PAGESIZE);
  struct ring *ring = calloc (1, sizeof *ring);
  unsigned i;

  if (ring == NULL || nr_slots == 0 ||
      (ring->slots = calloc (nr_slots, sizeof *ring->slots)) == NULL) {
    free (ring);
    errno = nr_slots == 0 ? EINVAL : ENOMEM;
    return NULL;
  }
  ring->nr_slots = nr_slots;
  ring->buf_size = buf_size;
  for (i = 0; i < nr_slots; i++) {
    /* Page-aligned, so that a reader may reuse the ring for O_DIRECT
     * file I/O.  Not cleared: a read fills every byte before use.
     */
    if (buf_size > 0 &&
        (errno = posix_memalign (&ring->slots[i].buf,
                                 page > 0 ? page : 4096, buf_size)) != 0) {
      ring_free (ring);
      return NULL;
    }
  }
  return ring;
}

void
ring_free (struct ring *ring)
{
  unsigned i;

  if (ring == NULL)
    return;
  for (i = 0; i < ring->nr_slots; i++)
    free (ring->slots[i].buf);
  free (ring->slots);
  free (ring);
}

struct slot *
ring_take (struct ring *ring, uint64_t offset, uint64_t length)
{
  unsigned i = ring->next_seq % ring->nr_slots;
  struct slot *slot;

  if (ring_full (ring))
    return NULL;
  /* In issue order, slot next_seq % nr_slots is the one retired longest
   * ago, and always idle; in any order, look on from there.
   */
  while (ring->slots[i].state != SLOT_IDLE)
    i = (i + 1) % ring->nr_slots;
  slot = &ring->slots[i];
  *slot = (struct slot) {
    .ring = ring, .index = i, .buf = slot->buf, .state = SLOT_BUSY,
    .seq = ring->next_seq++, .offset = offset, .length = length,
    .start_ns = ring->verbose ? now_ns () : 0,  /* no clock without -v */
  };
  ring->in_use++;
  return slot;
}

void
ring_complete (struct slot *slot, int error)
{
  slot->error = error;
  slot->state = error ? SLOT_FAILED : SLOT_DONE;
}

int
ring_command_done (void *slot, int *error)
{
  ring_complete (slot, *error);
  return 1;
}

struct slot *
ring_first_failed (struct ring *ring)
{
  struct slot *first = NULL, *s;
  unsigned i, seen, n = ring->nr_slots, j = ring->next_seq % n;

  /* Newest first, until every slot in use is seen: they are among the
   * last taken, so a ring far larger than its use is not scanned whole.
   */
  for (i = seen = 0; i < n && seen < ring->in_use; i++) {
    s = &ring->slots[j = j ? j - 1 : n - 1];
    seen += s->state != SLOT_IDLE;
    if (s->state == SLOT_FAILED && (!first || s->offset < first->offset))
      first = s;
  }
  return first;
}

void
ring_release (struct slot *slot)
{
  assert (slot->state != SLOT_IDLE);
  slot->state = SLOT_IDLE;
  slot->ring->in_use--;
}

struct slot *
ring_head (struct ring *ring)
{
  return ring->in_use ? &ring->slots[ring->head_seq % ring->nr_slots] : NULL;
}

void
ring_retire_head (struct ring *ring)
{
  struct slot *slot = ring_head (ring);

  assert (slot != NULL && slot->seq == ring->head_seq);
  ring_release (slot);
  ring->head_seq++;
}

void
slot_debug (const struct slot *slot, const char *event)
{
  if (slot->ring->verbose)
    fprintf (stderr, "slot %2u seq %-6" PRIu64 " %-6s %-12s offset %-12"
             PRIu64 " length %-9" PRIu64 " %8.3f ms\n",
             slot->index, slot->seq, slot_state_names[slot->state], event,
             slot->offset, slot->length, (now_ns () - slot->start_ns) / 1e6);
}
