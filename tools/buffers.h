/* nbd-libev-examples: request buffers, the most recently used first.
 *
 * The tools allocate buffers for the deepest their depth may grow
 * (tools/depth.h): up to 256 of 1 MiB, of which a server that answers
 * at once keeps only a few in use.  The ring hands out its slots in
 * turn, so buffers tied to the slots would all be used in turn, and the
 * kernel would fault in and clear every page of all 256 MiB, a cost the
 * fixed defaults never paid (docs/techniques.md, section 13).  Instead
 * a slot takes a buffer from this stack when it is taken and puts it
 * back when it is given back: the next slot gets the buffer used last,
 * still mapped and likely still in the cache, and the memory touched is
 * that of the most slots ever in use at once.
 */

#ifndef NBD_LIBEV_EXAMPLES_BUFFERS_H
#define NBD_LIBEV_EXAMPLES_BUFFERS_H

#include <stddef.h>

#include "ring.h"

struct buffers {
  void **stack;                 /* stack[n - 1] is the next handed out */
  unsigned n;
};

/* nr page-aligned buffers of size bytes, not yet touched.  The ring
 * the slots belong to must have none of its own (ring_new with a
 * buf_size of 0).  -1 with errno set if they cannot be allocated.
 */
int buffers_init (struct buffers *b, unsigned nr, size_t size);

/* Give a slot just taken the buffer used last. */
void buffers_take (struct buffers *b, struct slot *slot);

/* The slot is being given back: its buffer goes on top of the stack. */
void buffers_give (struct buffers *b, struct slot *slot);

/* Free the buffers on the stack; ring_free frees those still in slots. */
void buffers_free (struct buffers *b);

#endif /* NBD_LIBEV_EXAMPLES_BUFFERS_H */
