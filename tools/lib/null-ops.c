/* nbd-libev-examples: null: as an endpoint (endpoint.h).
 *
 * A destination that keeps nothing, as nbdcopy's null:, to measure
 * reading or, with --checksum, to hash the source.  It is never
 * connected to and takes any size.  A copy sends it nothing at all
 * (endpoint->discards): a read buffer is over once read, and zeroes
 * are skipped, as on a destination that reads as zeroes already.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "util.h"

static const struct endpoint_ops null_ops;

struct endpoint *
endpoint_open_null (const char *name)
{
  struct endpoint *ep = malloc (sizeof *ep);

  if (ep == NULL)
    die ("malloc: %s", strerror (errno));
  *ep = (struct endpoint) {
    .ops = &null_ops, .name = name, .local = true, .discards = true,
    .can_zero = true, .min_block = 1,
  };
  debug ("%s: null:, nothing is sent to it", name);
  return ep;
}

static uint64_t
null_size (const struct endpoint *ep)
{
  return SIZE_UNKNOWN;
}

static void
null_close (struct endpoint *const eps[], size_t n, const struct stop *s)
{
  size_t i;

  for (i = 0; i < n; i++)
    free (eps[i]);
}

static const struct endpoint_ops null_ops = {
  .size = null_size,
  .close = null_close,
};
