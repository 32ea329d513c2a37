/* nbd-libev-examples: opening NBD handles.
 *
 * Both tools open their handles the same way: create, set the options
 * that matter before the handshake, and connect (inside their libev
 * loop, tools/lib/conn.c); once connected, the socket's buffers may be set.
 * The checks against the server's limits are tools/lib/block-size.h's.
 */

#ifndef NBD_LIBEV_EXAMPLES_HANDLE_H
#define NBD_LIBEV_EXAMPLES_HANDLE_H

#include <stdbool.h>
#include <stdint.h>

#include <libnbd.h>

struct handle_options {
  /* nbd_set_pread_initialize: true makes libnbd zero every read buffer
   * before the read, which only matters for programs that might use a
   * buffer after a failed read.
   */
  bool pread_initialize;

  /* Ask for the base:allocation meta context, for block status. */
  bool want_extents;

  /* If not 0, the socket's SO_SNDBUF and SO_RCVBUF in bytes, set on
   * the socket libnbd connected (nbd_aio_get_fd) right after connecting:
   * on a TCP socket only if socket_buffer_tcp, since a size set there
   * turns off the kernel's tuning of it.
   */
  uint64_t socket_buffer;
  bool socket_buffer_tcp;
};

/* A new handle with the options set, not yet connected.  name
 * ("source", "destination") labels messages.  Fatal on failure.
 */
struct nbd_handle *open_handle (const char *name,
                                const struct handle_options *opts);

/* Set SO_SNDBUF and SO_RCVBUF of a connected handle's socket to size;
 * on TCP only if tcp.
 */
void set_socket_buffers (struct nbd_handle *nbd, const char *name,
                         uint64_t size, bool tcp);

#endif /* NBD_LIBEV_EXAMPLES_HANDLE_H */
