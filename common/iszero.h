/* nbd-libev-examples: is a buffer all zero?
 *
 * Checks the first 16 bytes, then compares the buffer with itself
 * shifted by 16 bytes, which lets memcmp use its vector code.  The idea
 * comes from nbdkit's common/include/iszero.h (tests/test-util.c).
 */

#ifndef NBD_LIBEV_EXAMPLES_ISZERO_H
#define NBD_LIBEV_EXAMPLES_ISZERO_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

static inline bool
is_zero (const void *buf, size_t len)
{
  const unsigned char *p = buf;
  size_t i, head = len < 16 ? len : 16;

  for (i = 0; i < head; i++)
    if (p[i] != 0)
      return false;
  return len <= 16 || memcmp (p, p + 16, len - 16) == 0;
}

#endif /* NBD_LIBEV_EXAMPLES_ISZERO_H */
