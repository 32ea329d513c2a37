/* nbd-libev-examples: a question a tool asks of its request ring.
 *
 * The lessons need none; a tool's messages do: below which offset
 * every slot's work is complete (where to resume after a signal).  It
 * only reads the slots (tests/test-ring.c tests it).
 */

#ifndef NBD_LIBEV_EXAMPLES_RING_QUERY_H
#define NBD_LIBEV_EXAMPLES_RING_QUERY_H

#include <stdint.h>

#include "ring.h"

/* The lowest offset of a slot in use, or next if none is: when slots go
 * back to the ring as their work completes, everything below it is
 * done.
 */
uint64_t ring_low_water (const struct ring *ring, uint64_t next);

#endif /* NBD_LIBEV_EXAMPLES_RING_QUERY_H */
