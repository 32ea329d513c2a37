/* nbd-libev-examples: the request ring.  See ring.h for the contract. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "ring.h"
#include "util.h"

const char *const slot_state_names[SLOT_NR_STATES] = {
  [SLOT_IDLE] = "idle",
  [SLOT_READING] = "reading",
  [SLOT_READ_DONE] = "read-done",
  [SLOT_WRITING] = "writing",
  [SLOT_HASHING] = "hashing",
  [SLOT_DONE] = "done",
  [SLOT_FAILED] = "failed",
};

struct ring *
ring_new (unsigned nr_slots, size_t buf_size, enum ring_order order)
{
  struct ring *ring;
  long page = sysconf (_SC_PAGESIZE);
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
    struct slot *slot = &ring->slots[i];

    slot->ring = ring;
    slot->index = i;
    slot->state = SLOT_IDLE;
    if (buf_size > 0) {
      /* Through a socket the kernel copies the buffer whatever its
       * alignment; page alignment costs nothing at these sizes and lets
       * a reader reuse the ring for O_DIRECT file I/O, which needs it.
       * The buffer is not cleared: every byte is written by a read
       * before it is used.
       */
      r = posix_memalign (&slot->buf, page > 0 ? (size_t) page : 4096, buf_size);
      if (r != 0) {
        errno = r;
        goto err;
      }
    }
    /* Hand out slot 0 first: the stack is filled from the top down. */
    ring->free[nr_slots - 1 - i] = i;
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
  if (ring->slots)
    for (i = 0; i < ring->nr_slots; i++)
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
  /* In issue order the slots are given back in the order they were
   * taken, so at most nr_slots sequence numbers are outstanding and the
   * next one's slot, next_seq % nr_slots, is the one retired longest ago.
   */
  if (ring->order == RING_IN_ORDER)
    slot = &ring->slots[ring->next_seq % ring->nr_slots];
  else
    slot = &ring->slots[ring->free[--ring->nr_free]];
  assert (slot->state == SLOT_IDLE);
  slot->state = SLOT_READING;
  slot->kind = 0;
  slot->flags = 0;
  slot->conn = NULL;
  slot->seq = ring->next_seq++;
  slot->offset = offset;
  slot->length = length;
  slot->error = 0;
  /* Timings are only printed with -v; reading the clock on every request
   * would cost a system call on some machines for nothing.
   */
  slot->start_ns = verbose ? now_ns () : 0;
  ring->in_use++;
  return slot;
}

void
ring_complete (struct slot *slot, int error, enum slot_state next_state)
{
  if (error != 0) {
    slot->state = SLOT_FAILED;
    slot->error = error;
  }
  else
    slot->state = next_state;
}

struct slot *
ring_first_failed (struct ring *ring)
{
  struct slot *first = NULL;
  unsigned i;

  for (i = 0; i < ring->nr_slots; i++) {
    struct slot *slot = &ring->slots[i];

    if (slot->state == SLOT_FAILED &&
        (first == NULL || slot->offset < first->offset))
      first = slot;
  }
  return first;
}

struct slot *
ring_oldest (struct ring *ring, enum slot_state state, const void *conn)
{
  struct slot *oldest = NULL;
  unsigned i;

  for (i = 0; i < ring->nr_slots; i++) {
    struct slot *slot = &ring->slots[i];

    if (slot->state == state && (conn == NULL || slot->conn == conn) &&
        (oldest == NULL || slot->seq < oldest->seq))
      oldest = slot;
  }
  return oldest;
}

uint64_t
ring_low_water (const struct ring *ring, uint64_t next)
{
  uint64_t low = next;
  unsigned i;

  for (i = 0; i < ring->nr_slots; i++)
    if (ring->slots[i].state != SLOT_IDLE)
      low = MIN (low, ring->slots[i].offset);
  return low;
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

struct slot *
ring_at (struct ring *ring, uint64_t seq)
{
  struct slot *slot;

  assert (ring->order == RING_IN_ORDER);
  assert (seq >= ring->head_seq && seq < ring->next_seq);
  slot = &ring->slots[seq % ring->nr_slots];
  assert (slot->seq == seq);
  return slot;
}

void
ring_retire_head (struct ring *ring)
{
  struct slot *slot = ring_head (ring);

  assert (slot != NULL);
  assert (slot->seq == ring->head_seq);
  put_back (ring, slot);
  ring->head_seq++;
}

void
slot_debug (const struct slot *slot, const char *event)
{
  if (!verbose)
    return;
  debug ("slot %2u seq %-6" PRIu64 " %-9s %-10s offset %-12" PRIu64
         " length %-9" PRIu64 " %8.3f ms",
         slot->index, slot->seq, slot_state_names[slot->state], event,
         slot->offset, slot->length, (now_ns () - slot->start_ns) / 1e6);
}
