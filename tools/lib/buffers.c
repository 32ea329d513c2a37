/* nbd-libev-examples: request buffers.  See buffers.h. */

#include <config.h>

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "asan.h"
#include "buffers.h"

/* The size of a transparent huge page on x86-64 and arm64 with 4 KiB
 * pages; elsewhere only the alignment is wasted.
 */
#define HUGE_PAGE (2 * 1024 * 1024)

int
buffers_init (struct buffers *b, struct ring *ring, size_t size)
{
  long page = sysconf (_SC_PAGESIZE);
  size_t stride, total;
  unsigned i;

  assert (ring->in_use == 0 && ring->nr_slots > 0);
  if (page <= 0)
    page = 4096;
  /* Each buffer page-aligned, as the ring's own are, for O_DIRECT;
   * in a sanitizer build followed by a redzone (asan.h).
   */
  if (size == 0 || size > SIZE_MAX / 2) {
    errno = ENOMEM;
    return -1;
  }
  stride = (size + page - 1) / page * page + ASAN_REDZONE_PAGES * page;
  if (stride > (SIZE_MAX - HUGE_PAGE) / ring->nr_slots) {
    errno = ENOMEM;
    return -1;
  }
  total = (stride * ring->nr_slots + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  b->stack = calloc (ring->nr_slots, sizeof *b->stack);
  if (b->stack == NULL)
    return -1;
  errno = posix_memalign (&b->area, HUGE_PAGE, total);
  if (errno != 0) {
    free (b->stack);
    return -1;
  }
#ifdef MADV_HUGEPAGE
  /* A hint: where the kernel gives transparent huge pages only on
   * request, a buffer first touched costs one fault per 2 MiB instead
   * of one per page.  Refused or not, the buffers work the same.
   */
  madvise (b->area, total, MADV_HUGEPAGE);
#endif
  /* Free buffers and redzones may not be touched until taken. */
  asan_poison (b->area, total);
  ring->buf_size = size;
  b->size = size;
  b->total = total;
  b->n = 0;
  for (i = ring->nr_slots; i > 0; i--)
    b->stack[b->n++] = (char *) b->area + (size_t) (i - 1) * stride;
  return 0;
}

void
buffers_take (struct buffers *b, struct slot *slot)
{
  assert (b->n > 0 && slot->buf == NULL);
  slot->buf = b->stack[--b->n];
  asan_unpoison (slot->buf, b->size);
}

void
buffers_give (struct buffers *b, struct slot *slot)
{
  asan_poison (slot->buf, b->size);
  b->stack[b->n++] = slot->buf;
  slot->buf = NULL;
}

void
buffers_free (struct buffers *b, struct ring *ring)
{
  unsigned i;

  for (i = 0; i < ring->nr_slots; i++)
    ring->slots[i].buf = NULL;
  asan_unpoison (b->area, b->total);
  free (b->area);
  free (b->stack);
  b->area = NULL;
  b->stack = NULL;
}
