/* nbd-libev-examples: opening handles, checking limits.  See handle.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

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
 * window can follow the size set here, larger or smaller.  Measured,
 * setting them after connect was as fast on Unix sockets and faster on
 * TCP; docs/techniques.md has the figures.
 *
 * Linux caps SO_SNDBUF/SO_RCVBUF at net.core.wmem_max/rmem_max; root
 * may go past that with the FORCE variants, which are tried first so
 * that a benchmark measures the size asked for.
 */
void
set_socket_buffers (struct nbd_handle *nbd, const char *name, uint64_t size)
{
  int fd = nbd_aio_get_fd (nbd);
  int v = size > INT32_MAX / 2 ? INT32_MAX / 2 : (int) size;
  int snd = 0, rcv = 0;
  socklen_t len = sizeof snd;

  if (fd == -1)
    die ("%s: %s", name, nbd_get_error ());
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
check_copy (struct nbd_handle *src, struct nbd_handle *dst,
            uint64_t request_size)
{
  uint64_t size = export_size (src, "source");
  uint64_t dst_size = export_size (dst, "destination");

  if (nbd_is_read_only (dst) == 1)
    die ("destination: the server is read-only");
  check_request_size (src, "source", request_size);
  check_request_size (dst, "destination", request_size);
  if (dst_size < size)
    die ("destination is smaller than the source (%" PRIu64 " < %" PRIu64
         " bytes)", dst_size, size);
  /* The last request is short when the size is not a multiple of the
   * request size; both servers must still accept it.
   */
  check_image_end (src, "source", size);
  check_image_end (dst, "destination", size);
  return size;
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

void
handle_extents (struct extent_map *map, struct nbd_handle *nbd,
                const char *name)
{
  if (extents_init (map, nbd, name) == -1)
    die ("%s: %s", name, nbd_get_error ());
  debug ("%s: %s", name, map->supported ? "reading extents with block status"
         : "no base:allocation: every extent is data");
}

void
handle_extents_pump (struct stop *s, struct extent_map *map,
                     uint64_t offset, uint64_t ahead)
{
  int r = extents_pump (map, offset, ahead);

  if (r > 0)
    debug ("%s: block status at offset %" PRIu64 " length %" PRIu64
           " failed (%s): reading that range as data", map->name,
           map->req_offset, map->req_length, strerror (r));
  else if (r == -1 && !stop_requested (s))
    stop_fail (s, "%s: cannot grow the extent map: %s", map->name,
               strerror (errno));
}
