/* nbd-libev-examples: captive servers, which the program starts for an
 * image and stops at the end.
 *
 * An image (tools/lib/image.h) gets a captive server in two ways:
 *
 *  - [ CMD ARGS ... ]: the user's own command.
 *
 *  - A local file the program cannot read itself: the suite's own
 *    server, built here.  qemu-nbd serves qcow2 and qemu's other
 *    formats (image_prepare); nbdkit's file plugin serves a raw file
 *    where io_uring cannot be had (image_serve_raw, called by
 *    tools/lib/endpoint.c).
 *
 * Either runs with systemd socket activation
 * (nbd_aio_connect_systemd_socket_activation, in image_aio_connect):
 * libnbd makes a Unix socket in a new temporary directory, starts the
 * command with that socket passed in LISTEN_FDS, connects to it, and,
 * when the handle is closed, stops the server (SIGTERM), waits for it
 * and removes the socket.  Nothing is left behind, and nobody else can
 * connect.  Each server's stderr goes to a log of its own, whose first
 * line explains a server that did not start (image_server_said).
 *
 * Every handle image_aio_connect starts is remembered here, so that a
 * program that ends early (die () in the main thread, or a second
 * signal) still closes it at exit, which stops the server: a captive
 * server must not outlive the program however it ends.  The servers
 * the suite starts itself are also told to exit with their parent
 * (nbdkit --exit-with-parent; qemu-nbd exits when its last client
 * goes), so not even SIGKILL leaves one behind.  tools/lib/conn.c
 * connects and closes every handle through here.
 */

#ifndef NBD_LIBEV_EXAMPLES_CAPTIVE_H
#define NBD_LIBEV_EXAMPLES_CAPTIVE_H

#include <stdbool.h>
#include <stddef.h>

#include <libnbd.h>

#include "image.h"

/* Before connecting to img: find what it is (image_probe); for a local
 * file in one of qemu's formats other than raw, build the captive
 * qemu-nbd's command, read-only unless writing.  Also, for every
 * captive server, check that its program is installed.  Fatal, in one
 * line naming the role ("source", or NULL when the image's name says
 * enough), the image and, for the suite's own servers, the Debian
 * package to install, if not.  Does nothing for a URI.
 */
void image_prepare (struct image *img, const char *role, bool writing,
                    enum image_cache cache);

/* Build the captive nbdkit's command for a local raw file, as
 * image_prepare does for qcow2 (the same role and rules).
 */
void image_serve_raw (struct image *img, const char *role, bool writing,
                      enum image_cache cache);

/* Start connecting nbd to img (libnbd's aio connect calls: the
 * handshake then runs in the caller's loop).  Returns -1 with libnbd's
 * error set if it cannot even start.  A captive server's handle is
 * remembered for the exit handler.
 */
int image_aio_connect (const struct image *img, struct nbd_handle *nbd);

/* If nbd started a captive server that wrote something on stderr,
 * copy its first line into buf (len bytes at most) and return true.
 * The servers' messages are kept out of the program's own output,
 * except with -v.
 */
bool image_server_said (struct nbd_handle *nbd, char *buf, size_t len);

/* Close a handle, forgetting it if it had a captive server.  Use this
 * instead of nbd_close for every handle that image_aio_connect started.
 */
void image_close_handle (struct nbd_handle *nbd);

#endif /* NBD_LIBEV_EXAMPLES_CAPTIVE_H */
