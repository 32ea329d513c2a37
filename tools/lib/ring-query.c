/* nbd-libev-examples: questions about a ring.  See ring-query.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stddef.h>
#include <stdint.h>

#include "ring.h"
#include "ring-query.h"

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
