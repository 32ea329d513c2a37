/* nbd-libev-examples: request buffers, the most recently used first.
 *
 * The tools allocate their ring for the deepest their depth may grow
 * (tools/lib/depth.h): up to 256 slots with a buffer of 1 MiB each, of which
 * a server that answers at once keeps only a few in use.  The ring hands
 * out its slots in turn, so with the buffers tied to the slots all of
 * them would be used in turn, and the kernel would fault in and clear
 * every page of all 256 MiB, a cost the fixed defaults never paid
 * (docs/techniques.md, section 13).  Instead the ring's buffers go on
 * this stack: a slot takes one when it is taken and puts it back when it
 * is given back, so the next slot gets the buffer used last, still
 * mapped and likely still in the cache, and the memory touched is that
 * of the most slots ever in use at once.
 */

#ifndef NBD_LIBEV_EXAMPLES_BUFFERS_H
#define NBD_LIBEV_EXAMPLES_BUFFERS_H

#include "ring.h"

struct buffers {
  void **stack;                 /* stack[n - 1] is the next handed out */
  unsigned n;
};

/* Move every buffer of a ring with no slot in use onto the stack.  -1
 * with errno set if the stack cannot be allocated.
 */
int buffers_init (struct buffers *b, struct ring *ring);

/* Give a slot just taken the buffer used last. */
void buffers_take (struct buffers *b, struct slot *slot);

/* The slot is being given back: its buffer goes on top of the stack. */
void buffers_give (struct buffers *b, struct slot *slot);

/* Hand the buffers on the stack back to the slots without one, so that
 * ring_free frees them all, and free the stack.
 */
void buffers_free (struct buffers *b, struct ring *ring);

#endif /* NBD_LIBEV_EXAMPLES_BUFFERS_H */
