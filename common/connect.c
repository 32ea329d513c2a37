/* nbd-libev-examples: opening NBD connections.  See connect.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <stdint.h>

#include <libnbd.h>

#include "connect.h"
#include "util.h"

struct nbd_handle *
connect_uri (const char *uri, const char *name,
             const struct connect_options *opts)
{
  struct nbd_handle *nbd = nbd_create ();

  if (nbd == NULL)
    die ("%s: %s", name, nbd_get_error ());
  if (nbd_set_pread_initialize (nbd, opts->pread_initialize) == -1)
    die ("%s: %s", name, nbd_get_error ());
  if (opts->want_extents &&
      nbd_add_meta_context (nbd, LIBNBD_CONTEXT_BASE_ALLOCATION) == -1)
    die ("%s: %s", name, nbd_get_error ());
  if (nbd_connect_uri (nbd, uri) == -1)
    die ("%s: cannot connect to %s: %s", name, uri, nbd_get_error ());
  return nbd;
}

void
check_request_size (struct nbd_handle *nbd, const char *name,
                    uint64_t request_size)
{
  int64_t min = nbd_get_block_size (nbd, LIBNBD_SIZE_MINIMUM);
  int64_t max = nbd_get_block_size (nbd, LIBNBD_SIZE_MAXIMUM);

  /* 0 means the server did not say; -1 is an error we can ignore in the
   * same way, since the request size is already within the protocol's
   * safe range.
   */
  if (min > 0 && request_size % min != 0)
    die ("%s: request size %" PRIu64 " is not a multiple of the server's "
         "minimum block size %" PRIi64, name, request_size, min);
  if (max > 0 && request_size > (uint64_t) max)
    die ("%s: request size %" PRIu64 " is larger than the server's "
         "maximum block size %" PRIi64, name, request_size, max);
}

uint64_t
export_size (struct nbd_handle *nbd, const char *name)
{
  int64_t size = nbd_get_size (nbd);

  if (size == -1)
    die ("%s: %s", name, nbd_get_error ());
  return size;
}
