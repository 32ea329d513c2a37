/* nbd-libev-examples: opening handles.  See handle.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <libnbd.h>

#include "handle.h"
#include "util.h"

/* Set both buffer sizes on the socket libnbd connected.  Doing it after
 * the connection is made needs no socket code of our own, so it works
 * for every URI libnbd accepts, TLS included.  Setting the sizes before
 * connect would change one thing on TCP: Linux picks the window scale
 * for the connection's lifetime from the receive buffer at connect time,
 * and a small buffer then would cap the window for good.  Set after,
 * the scale is already chosen from the system's largest buffer, so the
 * window can follow the size set here, larger or smaller.  So set
 * after connect, the sizes do as well as set before on Unix sockets,
 * and better on TCP (docs/techniques.md, section 8).
 *
 * Linux caps SO_SNDBUF/SO_RCVBUF at net.core.wmem_max/rmem_max; root
 * may go past that with the FORCE variants, which are tried first so
 * that a benchmark measures the size asked for.
 *
 * On TCP, a size set locks the buffer and turns off the kernel's
 * autotuning of it (tcp(7)), which grows a buffer with the
 * bandwidth-delay product of the path, up to net.ipv4.tcp_rmem and
 * tcp_wmem's maximum: a fixed 1 MiB would cap a far connection near
 * 1 MiB per round trip.  So TCP keeps the kernel's unless asked (tcp).
 */
void
set_socket_buffers (struct nbd_handle *nbd, const char *name, uint64_t size,
                    bool tcp)
{
  int fd = nbd_aio_get_fd (nbd);
  int v = size > INT32_MAX / 2 ? INT32_MAX / 2 : (int) size;
  int snd = 0, rcv = 0;
  socklen_t len = sizeof snd;
  struct sockaddr_storage addr = { .ss_family = AF_UNSPEC };
  socklen_t addr_len = sizeof addr;

  if (fd == -1)
    die ("%s: %s", name, nbd_get_error ());
  if (!tcp && getsockname (fd, (struct sockaddr *) &addr, &addr_len) == 0 &&
      (addr.ss_family == AF_INET || addr.ss_family == AF_INET6)) {
    debug ("%s: TCP: socket buffers left to the kernel's autotuning "
           "(--socket-buffer sets them)", name);
    return;
  }
  if (setsockopt (fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof v) == -1 &&
      setsockopt (fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v) == -1)
    die ("%s: SO_SNDBUF: %s", name, strerror (errno));
  if (setsockopt (fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof v) == -1 &&
      setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v) == -1)
    die ("%s: SO_RCVBUF: %s", name, strerror (errno));
  /* Linux reports double the value set, to account for its overhead. */
  getsockopt (fd, SOL_SOCKET, SO_SNDBUF, &snd, &len);
  len = sizeof rcv;
  getsockopt (fd, SOL_SOCKET, SO_RCVBUF, &rcv, &len);
  debug ("%s: asked for %d byte socket buffers, kernel reports "
         "SO_SNDBUF %d, SO_RCVBUF %d", name, v, snd, rcv);
}

struct nbd_handle *
open_handle (const char *name, const struct handle_options *opts)
{
  struct nbd_handle *nbd = nbd_create ();

  if (nbd == NULL)
    die ("%s: %s", name, nbd_get_error ());
  if (nbd_set_pread_initialize (nbd, opts->pread_initialize) == -1)
    die ("%s: %s", name, nbd_get_error ());
  if (opts->want_extents &&
      nbd_add_meta_context (nbd, LIBNBD_CONTEXT_BASE_ALLOCATION) == -1)
    die ("%s: %s", name, nbd_get_error ());
  /* A URI may name local files: a TLS pre-shared key (tls-psk-file=)
   * or certificates directory (tls-certificates=).  libnbd refuses them
   * unless allowed, which matters for URIs from an untrusted source; the
   * user typed this one, so allow it, as nbdcopy and nbdinfo do.
   */
  if (nbd_set_uri_allow_local_file (nbd, true) == -1)
    die ("%s: %s", name, nbd_get_error ());
  return nbd;
}
