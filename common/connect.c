/* nbd-libev-examples: opening NBD connections.  See connect.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <libnbd.h>

#include "connect.h"
#include "util.h"

static int
hex_digit (int c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Percent-decode len bytes of s into a new string, or NULL. */
static char *
decode (const char *s, size_t len)
{
  char *r = malloc (len + 1), *p = r;
  size_t i;
  int hi, lo;

  if (r == NULL)
    return NULL;
  for (i = 0; i < len; i++) {
    if (s[i] != '%') {
      *p++ = s[i];
      continue;
    }
    if (i + 2 >= len) {
      free (r);
      return NULL;
    }
    hi = hex_digit ((unsigned char) s[i + 1]);
    lo = hex_digit ((unsigned char) s[i + 2]);
    if (hi < 0 || lo < 0) {
      free (r);
      return NULL;
    }
    *p++ = hi * 16 + lo;
    i += 2;
  }
  *p = '\0';
  return r;
}

/* Split the authority part of nbd://HOST[:PORT], where HOST may be an
 * IPv6 address in brackets.
 */
static int
parse_authority (const char *a, size_t len, struct nbd_uri *u,
                 const char **why)
{
  const char *end = a + len, *colon;

  if (len > 0 && a[0] == '[') {
    const char *close = memchr (a, ']', len);

    if (close == NULL) {
      *why = "unterminated IPv6 address";
      return -1;
    }
    u->host = decode (a + 1, close - a - 1);
    colon = close + 1 < end && close[1] == ':' ? close + 1 : NULL;
    if (colon == NULL && close + 1 != end) {
      *why = "junk after the IPv6 address";
      return -1;
    }
  }
  else {
    colon = memchr (a, ':', len);
    u->host = decode (a, colon ? (size_t) (colon - a) : len);
  }
  if (u->host == NULL || u->host[0] == '\0') {
    *why = "no host name";
    return -1;
  }
  if (colon && colon + 1 < end)
    u->port = decode (colon + 1, end - colon - 1);
  else
    u->port = strdup ("10809");         /* the NBD port from IANA */
  if (u->port == NULL) {
    *why = "bad port";
    return -1;
  }
  return 0;
}

/* Only socket= is understood; TLS and the other libnbd parameters need
 * libnbd to connect.
 */
static int
parse_query (const char *q, struct nbd_uri *u, const char **why)
{
  while (*q) {
    size_t n = strcspn (q, "&;");

    if (n > 7 && strncmp (q, "socket=", 7) == 0) {
      free (u->socket_path);
      u->socket_path = decode (q + 7, n - 7);
      if (u->socket_path == NULL) {
        *why = "bad socket path";
        return -1;
      }
    }
    else if (n > 0) {
      *why = "query parameters other than socket= are not supported";
      return -1;
    }
    q += n;
    if (*q)
      q++;
  }
  return 0;
}

int
nbd_uri_parse (const char *uri, struct nbd_uri *u, const char **why)
{
  const char *p, *auth_end, *path_end;

  memset (u, 0, sizeof *u);
  if (strncmp (uri, "nbd+unix://", 11) == 0) {
    u->unix_socket = true;
    p = uri + 11;
  }
  else if (strncmp (uri, "nbd://", 6) == 0)
    p = uri + 6;
  else {
    *why = "only nbd:// and nbd+unix:// URIs are supported";
    return -1;
  }

  auth_end = p + strcspn (p, "/?#");
  path_end = auth_end + strcspn (auth_end, "?#");

  /* The export name is the path without its leading slash. */
  if (auth_end < path_end)
    u->export_name = decode (auth_end + 1, path_end - auth_end - 1);
  else
    u->export_name = strdup ("");
  if (u->export_name == NULL) {
    *why = "bad export name";
    goto err;
  }

  if (*path_end == '?') {
    char *q = strndup (path_end + 1, strcspn (path_end + 1, "#"));
    int r = q ? parse_query (q, u, why) : -1;

    free (q);
    if (r == -1)
      goto err;
  }

  if (u->unix_socket) {
    if (auth_end != p) {
      *why = "nbd+unix:// takes no host";
      goto err;
    }
    if (u->socket_path == NULL) {
      *why = "nbd+unix:// needs ?socket=PATH";
      goto err;
    }
  }
  else {
    if (u->socket_path) {
      *why = "nbd:// takes no socket=";
      goto err;
    }
    if (parse_authority (p, auth_end - p, u, why) == -1)
      goto err;
  }
  return 0;

 err:
  nbd_uri_free (u);
  return -1;
}

void
nbd_uri_free (struct nbd_uri *u)
{
  free (u->host);
  free (u->port);
  free (u->socket_path);
  free (u->export_name);
  memset (u, 0, sizeof *u);
}

/* Set both buffer sizes before connect: TCP chooses its window scale
 * in the handshake, so a later change cannot open the window fully.
 * Linux caps SO_SNDBUF/SO_RCVBUF at net.core.wmem_max/rmem_max; root
 * may go past that with the FORCE variants, which is tried first so
 * that a benchmark measures the size asked for.
 */
static void
set_buffers (int fd, uint64_t size, const char *name)
{
  int v = size > INT32_MAX / 2 ? INT32_MAX / 2 : (int) size;
  int snd = 0, rcv = 0;
  socklen_t len = sizeof snd;

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

static int
connect_unix (const struct nbd_uri *u, uint64_t bufsize, const char *name)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int fd;

  if (strlen (u->socket_path) >= sizeof addr.sun_path)
    die ("%s: socket path is too long: %s", name, u->socket_path);
  strcpy (addr.sun_path, u->socket_path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd == -1)
    die ("%s: socket: %s", name, strerror (errno));
  set_buffers (fd, bufsize, name);
  if (connect (fd, (struct sockaddr *) &addr, sizeof addr) == -1)
    die ("%s: cannot connect to %s: %s", name, u->socket_path,
         strerror (errno));
  return fd;
}

static int
connect_tcp (const struct nbd_uri *u, uint64_t bufsize, const char *name)
{
  struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
  struct addrinfo *res, *ai;
  int fd = -1, r, err = 0;

  r = getaddrinfo (u->host, u->port, &hints, &res);
  if (r != 0)
    die ("%s: %s:%s: %s", name, u->host, u->port, gai_strerror (r));
  for (ai = res; ai != NULL; ai = ai->ai_next) {
    fd = socket (ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                 ai->ai_protocol);
    if (fd == -1) {
      err = errno;
      continue;
    }
    set_buffers (fd, bufsize, name);
    if (connect (fd, ai->ai_addr, ai->ai_addrlen) == 0)
      break;
    err = errno;
    close (fd);
    fd = -1;
  }
  freeaddrinfo (res);
  if (fd == -1)
    die ("%s: cannot connect to %s:%s: %s", name, u->host, u->port,
         strerror (err));
  return fd;
}

/* Connect a socket ourselves, with the buffer sizes asked for, and let
 * libnbd do the NBD handshake on it.
 */
static void
connect_with_buffers (struct nbd_handle *nbd, const char *uri,
                      uint64_t bufsize, const char *name)
{
  struct nbd_uri u;
  const char *why = NULL;
  int fd;

  if (nbd_uri_parse (uri, &u, &why) == -1)
    die ("%s: --socket-buffer cannot be used with %s: %s", name, uri, why);
  fd = u.unix_socket ? connect_unix (&u, bufsize, name)
    : connect_tcp (&u, bufsize, name);
  if (nbd_set_export_name (nbd, u.export_name) == -1 ||
      nbd_connect_socket (nbd, fd) == -1)
    die ("%s: cannot connect to %s: %s", name, uri, nbd_get_error ());
  nbd_uri_free (&u);
}

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
  if (opts->socket_buffer > 0)
    connect_with_buffers (nbd, uri, opts->socket_buffer, name);
  else if (nbd_connect_uri (nbd, uri) == -1)
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
check_copy (struct nbd_handle *src, struct nbd_handle *dst,
            uint64_t request_size)
{
  uint64_t size = export_size (src, "source");
  uint64_t dst_size = export_size (dst, "destination");
  int64_t min = nbd_get_block_size (dst, LIBNBD_SIZE_MINIMUM);

  if (nbd_is_read_only (dst) == 1)
    die ("destination: the server is read-only");
  check_request_size (src, "source", request_size);
  check_request_size (dst, "destination", request_size);
  if (dst_size < size)
    die ("destination is smaller than the source (%" PRIu64 " < %" PRIu64
         " bytes)", dst_size, size);
  /* The last request is short when the size is not a multiple of the
   * request size; the destination must still accept it.
   */
  if (min > 1 && size % min != 0)
    die ("destination: the source's size (%" PRIu64 ") is not a multiple "
         "of the server's minimum block size %" PRIi64, size, min);
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
