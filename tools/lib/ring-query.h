/* nbd-libev-examples: questions a tool asks of its request ring.
 *
 * The lessons need none of these; a tool's messages do: which command
 * a silent server still owes (the timeout's message), and below which
 * offset every slot's work is complete (where to resume after a
 * signal).  They only read the slots (tests/test-ring.c tests them).
 */

#ifndef NBD_LIBEV_EXAMPLES_RING_QUERY_H
#define NBD_LIBEV_EXAMPLES_RING_QUERY_H

#include <stdint.h>

#include "ring.h"

/* The busy slot taken first, or NULL: the oldest step still running.
 * With conn not NULL, only slots whose conn is that one count, and
 * kind, if not negative, must match too.
 */
struct slot *ring_oldest (struct ring *ring, const void *conn, int kind);

/* The lowest offset of a slot in use, or next if none is: when slots go
 * back to the ring as their work completes, everything below it is
 * done.
 */
uint64_t ring_low_water (const struct ring *ring, uint64_t next);

#endif /* NBD_LIBEV_EXAMPLES_RING_QUERY_H */
