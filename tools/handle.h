/* nbd-libev-examples: opening NBD handles and checking their limits.
 *
 * Both tools open their handles the same way: create, set the options
 * that matter before the handshake, connect (inside their libev loop,
 * tools/conn.c), and check the sizes the program will use against the
 * server's block size limits before anything is read or written.
 */

#ifndef NBD_LIBEV_EXAMPLES_HANDLE_H
#define NBD_LIBEV_EXAMPLES_HANDLE_H

#include <stdbool.h>
#include <stdint.h>

#include <libnbd.h>

#include "extents.h"
#include "stop.h"

/* Largest request the tools send.  The NBD protocol says a client
 * should not send more than 32 MiB unless the server advertised a larger
 * maximum block size; staying below it works with every server.
 */
#define MAX_REQUEST_SIZE (32 * 1024 * 1024)

struct handle_options {
  /* nbd_set_pread_initialize: true makes libnbd zero every read buffer
   * before the read, which only matters for programs that might use a
   * buffer after a failed read.
   */
  bool pread_initialize;

  /* Ask for the base:allocation meta context, for block status. */
  bool want_extents;

  /* If not 0, the socket's SO_SNDBUF and SO_RCVBUF in bytes, set on
   * the socket libnbd connected (nbd_aio_get_fd) right after connecting.
   */
  uint64_t socket_buffer;
};

/* A new handle with the options set, not yet connected.  name
 * ("source", "destination") labels messages.  Fatal on failure.
 */
struct nbd_handle *open_handle (const char *name,
                                const struct handle_options *opts);

/* Set SO_SNDBUF and SO_RCVBUF of a connected handle's socket. */
void set_socket_buffers (struct nbd_handle *nbd, const char *name,
                         uint64_t size);

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

/* Everything a copier checks before it reads the first byte, so that
 * bad input never leaves a half-written destination: the destination is
 * writable and at least as large as the source, both servers take
 * request_size, and both take the last, short request that ends at the
 * source's size.  Returns the source's size.  Fatal if any check fails,
 * with a message naming the sizes.
 */
uint64_t check_copy (struct nbd_handle *src, struct nbd_handle *dst,
                     uint64_t request_size);

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

/* extents_init (common/extents.h) for a connected handle, fatal if
 * libnbd cannot tell the export's size.
 */
void handle_extents (struct extent_map *map, struct nbd_handle *nbd,
                     const char *name);

/* extents_pump from a tool: a block-status command that failed is read
 * as data and said under -v; a map that cannot grow stops the program
 * cleanly (s), as a failed command does.
 */
void handle_extents_pump (struct stop *s, struct extent_map *map,
                          uint64_t offset, uint64_t ahead);

#endif /* NBD_LIBEV_EXAMPLES_HANDLE_H */
