/* nbd-libev-examples: block size limits.  See block-size.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <stdint.h>

#include <libnbd.h>

#include "block-size.h"
#include "util.h"

uint64_t
min_block_size (struct nbd_handle *nbd)
{
  int64_t min = nbd_get_block_size (nbd, LIBNBD_SIZE_MINIMUM);

  /* 0 means the server did not say, and -1 that libnbd could not tell;
   * either way any offset will do, which is a block size of 1.
   */
  return min > 0 ? (uint64_t) min : 1;
}

uint64_t
max_block_size (struct nbd_handle *nbd)
{
  int64_t max = nbd_get_block_size (nbd, LIBNBD_SIZE_MAXIMUM);

  return max > 0 ? (uint64_t) max : 0;
}

void
check_request_size (struct nbd_handle *nbd, const char *name,
                    uint64_t request_size)
{
  uint64_t min = min_block_size (nbd);
  int64_t max = nbd_get_block_size (nbd, LIBNBD_SIZE_MAXIMUM);

  /* A maximum of 0 (not said) or -1 (not known) sets no limit past the
   * protocol's own, which the request size is already within.
   */
  if (request_size % min != 0)
    die ("%s: request size %" PRIu64 " is not a multiple of the server's "
         "minimum block size %" PRIu64, name, request_size, min);
  if (max > 0 && request_size > (uint64_t) max)
    die ("%s: request size %" PRIu64 " is larger than the server's "
         "maximum block size %" PRIi64, name, request_size, max);
}

void
check_image_end (struct nbd_handle *nbd, const char *name, uint64_t size)
{
  uint64_t min = min_block_size (nbd);

  if (size % min != 0)
    die ("%s: the image ends at %" PRIu64 ", not on a multiple of the "
         "server's minimum block size %" PRIu64 ", so the server would "
         "refuse its last %" PRIu64 " bytes", name, size, min, size % min);
}

uint64_t
export_size (struct nbd_handle *nbd, const char *name)
{
  int64_t size = nbd_get_size (nbd);

  if (size == -1)
    die ("%s: %s", name, nbd_get_error ());
  return size;
}

uint64_t
fit_request_size (struct nbd_handle *nbd, const char *name,
                  uint64_t request_size, uint64_t unit)
{
  int64_t max = nbd_get_block_size (nbd, LIBNBD_SIZE_MAXIMUM);
  int64_t preferred = nbd_get_block_size (nbd, LIBNBD_SIZE_PREFERRED);
  uint64_t fit;

  if (max <= 0 || request_size <= (uint64_t) max)
    return request_size;
  /* Block sizes are powers of two: the larger is a multiple of both. */
  if (preferred > 0 && (uint64_t) preferred <= (uint64_t) max)
    unit = MAX (unit, (uint64_t) preferred);
  fit = round_down (max, unit);
  if (fit == 0)
    return request_size;        /* check_request_size says why */
  debug ("%s: request size %" PRIu64 " instead of %" PRIu64 ", within the "
         "server's maximum block size %" PRIi64, name, fit, request_size,
         max);
  return fit;
}

uint64_t
fit_max_size (struct nbd_handle *nbd, uint64_t max_size, uint64_t floor)
{
  uint64_t max = max_block_size (nbd);

  while (max > 0 && max_size > floor && max_size > max)
    max_size /= 2;
  return MAX (max_size, floor);
}
