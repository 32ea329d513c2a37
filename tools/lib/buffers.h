/* nbd-libev-examples: request buffers, the most recently used first.
 *
 * The tools allocate their ring for the deepest their depth may grow
 * (tools/lib/depth.h): up to 256 slots with a buffer of 1 MiB each, of which
 * a server that answers at once keeps only a few in use.  The ring hands
 * out its slots in turn, so with the buffers tied to the slots all of
 * them would be used in turn, and the kernel would fault in and clear
 * every page of all 256 MiB, however few are in flight
 * (docs/techniques.md, section 13).  Instead the buffers go on this
 * stack: a slot takes one when it is taken and puts it back when it is
 * given back, so the next slot gets the buffer used last, still mapped
 * and likely still in the cache, and the memory touched is that of the
 * most slots ever in use at once.
 *
 * The buffers are one allocation, asked to be backed by transparent
 * huge pages: each page first touched is a fault, and with 4 KiB pages
 * a buffer of 1 MiB costs 256 of them, system time that a copy against
 * a near server would spend whenever the depth grows
 * (docs/techniques.md, section 13).
 */

#ifndef NBD_LIBEV_EXAMPLES_BUFFERS_H
#define NBD_LIBEV_EXAMPLES_BUFFERS_H

#include "ring.h"

struct buffers {
  void **stack;                 /* stack[n - 1] is the next handed out */
  unsigned n;
  void *area;                   /* all the buffers */
  size_t size;                  /* of each buffer */
  size_t total;                 /* of the area */
};

/* Allocate a buffer of size bytes for every slot of a ring made
 * without buffers and with no slot in use, all on the stack, the
 * lowest address on top; set the ring's buf_size.  -1 with errno set if
 * they cannot be allocated.
 */
int buffers_init (struct buffers *b, struct ring *ring, size_t size);

/* Give a slot just taken the buffer used last. */
void buffers_take (struct buffers *b, struct slot *slot);

/* The slot is being given back: its buffer goes on top of the stack. */
void buffers_give (struct buffers *b, struct slot *slot);

/* Free the buffers and the stack; no slot keeps a buffer, so that
 * ring_free frees only the slots.
 */
void buffers_free (struct buffers *b, struct ring *ring);

#endif /* NBD_LIBEV_EXAMPLES_BUFFERS_H */
