/* nbd-libev-examples: questions about a ring.  See ring-query.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stddef.h>
#include <stdint.h>

#include "ring.h"
#include "ring-query.h"

struct slot *
ring_oldest (struct ring *ring, const void *conn, int kind)
{
  struct slot *oldest = NULL, *slot;
  unsigned i;

  for (i = 0; i < ring->nr_slots; i++) {
    slot = &ring->slots[i];
    if (slot->state == SLOT_BUSY && (conn == NULL || slot->conn == conn) &&
        (kind < 0 || slot->kind == kind) &&
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
    if (ring->slots[i].state != SLOT_IDLE && ring->slots[i].offset < low)
      low = ring->slots[i].offset;
  return low;
}
