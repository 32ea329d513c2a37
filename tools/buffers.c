/* nbd-libev-examples: request buffers.  See buffers.h. */

#include <config.h>

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "buffers.h"

int
buffers_init (struct buffers *b, unsigned nr, size_t size)
{
  long page = sysconf (_SC_PAGESIZE);
  int err;

  b->n = 0;
  b->stack = calloc (nr, sizeof *b->stack);
  if (b->stack == NULL)
    return -1;
  /* Page-aligned, as the ring's own, for O_DIRECT file I/O. */
  for (b->n = 0; b->n < nr; b->n++) {
    err = posix_memalign (&b->stack[b->n], page > 0 ? page : 4096, size);
    if (err != 0) {
      buffers_free (b);
      errno = err;
      return -1;
    }
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
buffers_free (struct buffers *b)
{
  while (b->n > 0)
    free (b->stack[--b->n]);
  free (b->stack);
  b->stack = NULL;
}
