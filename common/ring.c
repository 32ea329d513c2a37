/* nbd-libev-examples: the request ring.  See ring.h for the contract. */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ring.h"

const char *const slot_state_names[SLOT_NR_STATES] = {
  [SLOT_IDLE] = "idle",
  [SLOT_BUSY] = "busy",
  [SLOT_DONE] = "done",
  [SLOT_FAILED] = "failed",
};

static uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * UINT64_C (1000000000) + ts.tv_nsec;
}

struct ring *
ring_new (unsigned nr_slots, size_t buf_size, enum ring_order order)
{
  long page = sysconf (_SC_PAGESIZE);
  struct ring *ring;
  unsigned i;
  int r;

  if (nr_slots == 0) {
    errno = EINVAL;
    return NULL;
  }
  ring = calloc (1, sizeof *ring);
  if (ring == NULL)
    return NULL;
  ring->order = order;
  ring->nr_slots = nr_slots;
  ring->buf_size = buf_size;
  ring->slots = calloc (nr_slots, sizeof *ring->slots);
  ring->free = calloc (nr_slots, sizeof *ring->free);
  if (ring->slots == NULL || ring->free == NULL)
    goto err;
  for (i = 0; i < nr_slots; i++) {
    ring->slots[i].ring = ring;
    ring->slots[i].index = i;
    /* Page-aligned, so that a reader may reuse the ring for O_DIRECT
     * file I/O.  Not cleared: a read fills every byte before use.
     */
    if (buf_size > 0) {
      r = posix_memalign (&ring->slots[i].buf,
                          page > 0 ? (size_t) page : 4096, buf_size);
      if (r != 0) {
        errno = r;
        goto err;
      }
    }
    ring->free[nr_slots - 1 - i] = i;   /* slot 0 is handed out first */
  }
  ring->nr_free = nr_slots;
  return ring;

 err:
  ring_free (ring);
  return NULL;
}

void
ring_free (struct ring *ring)
{
  unsigned i;

  if (ring == NULL)
    return;
  for (i = 0; ring->slots && i < ring->nr_slots; i++)
    free (ring->slots[i].buf);
  free (ring->slots);
  free (ring->free);
  free (ring);
}

struct slot *
ring_take (struct ring *ring, uint64_t offset, uint64_t length)
{
  struct slot *slot;

  if (ring_full (ring))
    return NULL;
  /* In issue order at most nr_slots sequence numbers are outstanding,
   * so the next one's slot is the one retired longest ago.
   */
  if (ring->order == RING_IN_ORDER)
    slot = &ring->slots[ring->next_seq % ring->nr_slots];
  else
    slot = &ring->slots[ring->free[--ring->nr_free]];
  assert (slot->state == SLOT_IDLE);
  slot->state = SLOT_BUSY;
  slot->kind = 0;
  slot->flags = 0;
  slot->conn = NULL;
  slot->seq = ring->next_seq++;
  slot->offset = offset;
  slot->length = length;
  slot->error = 0;
  /* Without -v, no clock read per request. */
  slot->start_ns = ring->verbose ? now_ns () : 0;
  ring->in_use++;
  return slot;
}

void
ring_complete (struct slot *slot, int error)
{
  slot->error = error;
  slot->state = error ? SLOT_FAILED : SLOT_DONE;
}

struct slot *
ring_first_failed (struct ring *ring)
{
  struct slot *first = NULL;
  unsigned i;

  for (i = 0; i < ring->nr_slots; i++)
    if (ring->slots[i].state == SLOT_FAILED &&
        (first == NULL || ring->slots[i].offset < first->offset))
      first = &ring->slots[i];
  return first;
}

static void
put_back (struct ring *ring, struct slot *slot)
{
  assert (slot->state != SLOT_IDLE);
  slot->state = SLOT_IDLE;
  if (ring->order == RING_ANY_ORDER)
    ring->free[ring->nr_free++] = slot->index;
  ring->in_use--;
}

void
ring_release (struct slot *slot)
{
  assert (slot->ring->order == RING_ANY_ORDER);
  put_back (slot->ring, slot);
}

struct slot *
ring_head (struct ring *ring)
{
  assert (ring->order == RING_IN_ORDER);
  if (ring->in_use == 0)
    return NULL;
  return &ring->slots[ring->head_seq % ring->nr_slots];
}

void
ring_retire_head (struct ring *ring)
{
  struct slot *slot = ring_head (ring);

  assert (slot != NULL && slot->seq == ring->head_seq);
  put_back (ring, slot);
  ring->head_seq++;
}

void
slot_debug (const struct slot *slot, const char *event)
{
  if (!slot->ring->verbose)
    return;
  fprintf (stderr, "slot %2u seq %-6" PRIu64 " %-6s %-12s offset %-12"
           PRIu64 " length %-9" PRIu64 " %8.3f ms\n",
           slot->index, slot->seq, slot_state_names[slot->state], event,
           slot->offset, slot->length, (now_ns () - slot->start_ns) / 1e6);
}
