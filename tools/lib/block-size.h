/* nbd-libev-examples: a server's block size limits, and the checks
 * against them.
 *
 * A server may say a minimum, a preferred and a maximum block size
 * (the NBD protocol's "Block size constraints"; nbd_get_block_size).
 * Every command's offset and length must be a multiple of the minimum,
 * and no request longer than the maximum.  The tools check the sizes
 * they will use against both before anything is read or written, so
 * that bad input fails with one line instead of a refused command
 * half-way through, and fit their default request size to a server
 * whose maximum is smaller.
 */

#ifndef NBD_LIBEV_EXAMPLES_BLOCK_SIZE_H
#define NBD_LIBEV_EXAMPLES_BLOCK_SIZE_H

#include <stdint.h>

#include <libnbd.h>

/* The server's minimum block size, or 1 if it did not say: every
 * command's offset and length must be a multiple of it.
 */
uint64_t min_block_size (struct nbd_handle *nbd);
/* The server's maximum block size, or 0 if it did not say one. */
uint64_t max_block_size (struct nbd_handle *nbd);

/* Check that request_size suits the server: a multiple of its minimum
 * block size and no larger than its maximum.  Fatal if not.
 */
void check_request_size (struct nbd_handle *nbd, const char *name,
                         uint64_t request_size);

/* Check that the server accepts the last, short request of an image
 * that ends at size: size must be a multiple of its minimum block size.
 * Fatal if not, with a message naming both.
 */
void check_image_end (struct nbd_handle *nbd, const char *name,
                      uint64_t size);

/* The export size, or fatal. */
uint64_t export_size (struct nbd_handle *nbd, const char *name);

/* The request size to use with this server when the user gave none:
 * request_size, or, where the server's maximum block size is smaller,
 * the largest multiple of its preferred block size (the protocol says
 * clients SHOULD use multiples of it) and of unit within the maximum.
 * -v says so.
 */
uint64_t fit_request_size (struct nbd_handle *nbd, const char *name,
                           uint64_t request_size, uint64_t unit);

/* The largest size requests may grow to with this server: max_size,
 * a power of two, halved until it is within the server's maximum block
 * size, but never below floor, the size they start at.
 */
uint64_t fit_max_size (struct nbd_handle *nbd, uint64_t max_size,
                       uint64_t floor);

#endif /* NBD_LIBEV_EXAMPLES_BLOCK_SIZE_H */
