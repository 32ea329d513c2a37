/* nbd-libev-examples: request buffers.  See buffers.h. */

#include <config.h>

#include <assert.h>
#include <stdlib.h>

#include "buffers.h"

int
buffers_init (struct buffers *b, struct ring *ring)
{
  unsigned i;

  assert (ring->in_use == 0);
  b->n = 0;
  b->stack = calloc (ring->nr_slots, sizeof *b->stack);
  if (b->stack == NULL)
    return -1;
  for (i = 0; i < ring->nr_slots; i++) {
    b->stack[b->n++] = ring->slots[i].buf;
    ring->slots[i].buf = NULL;
  }
  return 0;
}

void
buffers_take (struct buffers *b, struct slot *slot)
{
  assert (b->n > 0 && slot->buf == NULL);
  slot->buf = b->stack[--b->n];
}

void
buffers_give (struct buffers *b, struct slot *slot)
{
  b->stack[b->n++] = slot->buf;
  slot->buf = NULL;
}

void
buffers_free (struct buffers *b, struct ring *ring)
{
  unsigned i;

  for (i = 0; i < ring->nr_slots && b->n > 0; i++)
    if (ring->slots[i].buf == NULL)
      ring->slots[i].buf = b->stack[--b->n];
  free (b->stack);
  b->stack = NULL;
}
