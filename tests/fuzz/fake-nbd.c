/* nbd-libev-examples: libnbd played by the fuzz target.  See fake-nbd.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdlib.h>

#include <libnbd.h>

#include "fake-nbd.h"
#include "fuzz.h"

struct fake_nbd fake_nbd;

int64_t
nbd_get_size (struct nbd_handle *h)
{
  return fake_nbd.size;
}

int64_t
nbd_get_block_size (struct nbd_handle *h, int size_type)
{
  return size_type == LIBNBD_SIZE_MINIMUM ? fake_nbd.min_block : 0;
}

int
nbd_can_meta_context (struct nbd_handle *h, const char *metacontext)
{
  return fake_nbd.can_meta;
}

int
nbd_get_errno (void)
{
  return fake_nbd.refuse_errno;
}

/* extents.c keeps at most one block-status command in flight, and
 * asks only for what libnbd would send with its default strictness:
 * some bytes within the export, from an offset on the minimum block
 * size, and no more than the 32-bit length field holds.  Anything else
 * is a bug of extents.c, which the target must see, not a refusal.
 */
int64_t
nbd_aio_block_status (struct nbd_handle *h, uint64_t count, uint64_t offset,
                      nbd_extent_callback extent_callback,
                      nbd_completion_callback completion_callback,
                      uint32_t flags)
{
  uint64_t block = fake_nbd.min_block > 0 ? fake_nbd.min_block : 1;

  FUZZ_CHECK (!fake_nbd.pending);
  FUZZ_CHECK (count > 0 && count <= UINT32_MAX);
  FUZZ_CHECK (offset <= (uint64_t) fake_nbd.size &&
              count <= (uint64_t) fake_nbd.size - offset);
  FUZZ_CHECK (offset % block == 0);
  if (fake_nbd.refuse > 0) {
    fake_nbd.refuse--;
    return -1;
  }
  fake_nbd.pending = true;
  fake_nbd.offset = offset;
  fake_nbd.count = count;
  fake_nbd.extent = extent_callback;
  fake_nbd.done = completion_callback;
  return 1;
}
