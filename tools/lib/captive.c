/* nbd-libev-examples: captive servers, their commands, handles and
 * logs.  See captive.h.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libnbd.h>

#include "bounds.h"
#include "captive.h"
#include "image.h"
#include "util.h"

/* A macro's value as a string literal: "16" for MAX_CONNECTIONS. */
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_ (x)

/* True if program is on $PATH (or, with a '/', if it is executable):
 * libnbd would only find out after forking, as a server that closed the
 * connection, which says nothing about why.
 */
static bool
installed (const char *program)
{
  const char *path = getenv ("PATH"), *p, *colon;
  char buf[4096];
  size_t dirlen;

  if (strchr (program, '/') != NULL)
    return access (program, X_OK) == 0;
  if (path == NULL)
    path = "/usr/bin:/bin";
  for (p = path; ; p = colon + 1) {
    colon = strchr (p, ':');
    dirlen = colon ? (size_t) (colon - p) : strlen (p);
    /* An empty entry means the current directory. */
    if (snprintf (buf, sizeof buf, "%.*s/%s", dirlen ? (int) dirlen : 1,
                  dirlen ? p : ".", program) < (int) sizeof buf &&
        access (buf, X_OK) == 0)
      return true;
    if (colon == NULL)
      return false;
  }
}

/* The most words of a server command built here, with its NULL. */
#define SERVER_ARGS 16

/* Append words to img->argv. */
static void
add_args (struct image *img, ...)
{
  va_list ap;
  const char *s;
  size_t n = 0;

  if (img->argv == NULL) {
    img->argv = calloc (SERVER_ARGS, sizeof (char *));
    if (img->argv == NULL)
      die ("calloc: %s", strerror (errno));
  }
  while (img->argv[n] != NULL)
    n++;
  va_start (ap, img);
  while ((s = va_arg (ap, const char *)) != NULL) {
    if (n == SERVER_ARGS - 1)
      die ("%s: more than %d words for its server", img->name,
           SERVER_ARGS - 1);
    img->argv[n++] = (char *) s;
  }
  va_end (ap);
}

/* The path as a server's command line must give it.  Either server
 * reads some file names as something else: nbdkit takes a word with
 * '=' for a parameter (nbdkit(1), "file=x=y.img" is the unambiguous
 * form), and qemu takes "a:b.qcow2" for protocol "a" unless a '/' comes
 * before the ':' (qemu-nbd(8), "./a:b.qcow2").
 */
static void
set_server_path (struct image *img, const char *prefix)
{
  free (img->server_path);
  if (asprintf (&img->server_path, "%s%s", prefix, img->path) == -1)
    die ("asprintf: %s", strerror (errno));
}

/* qemu-nbd, the only server here that reads formats other than raw,
 * with the format given (-f), never probed again.  It exits when its
 * last client has gone.  --shared lets the extra connections of
 * multi-conn in (qemu-nbd takes one client by default), and
 * --cache=none --aio=native is O_DIRECT with Linux AIO, as the libnbd
 * list's benchmarks ran it.  A destination gets --discard=unmap, so
 * that zeroing can free clusters.
 */
static void
serve_qemu (struct image *img, const char *who, bool writing,
            enum image_cache cache)
{
  set_server_path (img, img->path[0] == '/' ? "" : "./");
  /* LUKS needs its key, which qemu-nbd takes only as a secret object. */
  if (strcmp (img->format, "luks") == 0)
    die ("%s: a LUKS-encrypted image: serve it with qemu-nbd and its "
         "key (--object secret,...), and give its NBD URI", who);
  if (!installed ("qemu-nbd"))
    die ("%s: a %s image needs qemu-nbd, which is not installed "
         "(Debian package qemu-utils)", who, img->format);
  add_args (img, "qemu-nbd", "-f", img->format,
            "--shared=" STRINGIFY (MAX_CONNECTIONS), NULL);
  if (!writing)
    add_args (img, "--read-only", NULL);
  else
    add_args (img, "--discard=unmap", NULL);
  if (cache == IMAGE_CACHE_NONE)
    add_args (img, "--cache=none", "--aio=native", NULL);
  add_args (img, "--", img->server_path, NULL);
  debug ("%s: %s, served by qemu-nbd", img->name, img->format);
}

/* nbdkit's file plugin, for a raw file the program does not read
 * itself (tools/lib/endpoint.h).  It reports holes (SEEK_DATA/SEEK_HOLE)
 * for block status, punches them for zero commands, and serves a block
 * device as well as a file.  --exit-with-parent makes it exit with this
 * program, even one that was killed.  cache=none makes it drop the
 * pages it read or wrote from the page cache (posix_fadvise) instead of
 * leaving them there.
 */
void
image_serve_raw (struct image *img, const char *role, bool writing,
                 enum image_cache cache)
{
  char who[4096];

  image_who (img, role, who, sizeof who);
  set_server_path (img, "file=");
  if (!installed ("nbdkit"))
    die ("%s: a raw image is served by nbdkit, which is not installed "
         "(Debian package nbdkit)", who);
  add_args (img, "nbdkit", "--exit-with-parent", NULL);
  if (!writing)
    add_args (img, "--readonly", NULL);
  add_args (img, "file", img->server_path, NULL);
  if (cache == IMAGE_CACHE_NONE)
    add_args (img, "cache=none", NULL);
  debug ("%s: raw, served by nbdkit", img->name);
}

void
image_prepare (struct image *img, const char *role, bool writing,
               enum image_cache cache)
{
  char who[4096];

  image_probe (img, role, writing);
  image_who (img, role, who, sizeof who);
  if (img->kind == IMAGE_COMMAND && !installed (img->argv[0]))
    die ("%s: %s: command not found", who, img->argv[0]);
  /* raw is read by the program itself, or image_serve_raw. */
  if (img->kind == IMAGE_FILE && strcmp (img->format, "raw") != 0)
    serve_qemu (img, who, writing, cache);
}

/* Every handle image_aio_connect started and nobody has closed yet,
 * for the exit handler, which atexit calls without any data of ours.
 * A program has at most two images open at once, each with at most
 * MAX_CONNECTIONS connections; only the first connection to a captive
 * server starts it, the others connect to its socket
 * (tools/lib/server.c).
 */
static struct open_handle {
  struct nbd_handle *nbd;
  bool captive;                 /* it started the server */
  int log_fd;                   /* the captive server's stderr, or -1 */
} handles[2 * MAX_CONNECTIONS];

/* At exit, however the program ends: close every handle still open,
 * which makes libnbd stop each captive server and remove its socket.
 * The handles that started no server go first: nbd_close on the handle
 * that started a captive server sends it SIGTERM and then waits for it
 * to exit (libnbd's lib/handle.c), and a server still serving another
 * connection of ours may take its time over that.
 */
static void
captive_at_exit (void)
{
  size_t i, pass;

  for (pass = 0; pass < 2; pass++) {
    for (i = 0; i < sizeof handles / sizeof handles[0]; i++) {
      if (handles[i].nbd != NULL && handles[i].captive == (pass == 1)) {
        nbd_close (handles[i].nbd);
        handles[i].nbd = NULL;
      }
    }
  }
}

static void
register_at_exit (void)
{
  static bool registered;

  if (!registered && atexit (captive_at_exit) == 0)
    registered = true;
}

/* A file for a captive server's stderr, already unlinked, or -1.  The
 * server's messages would otherwise land in the middle of the
 * program's output; kept here, the first of them explains a server
 * that did not start (image_server_said).  With -v they go to stderr
 * as they come.
 */
static int
server_log (void)
{
  const char *dir = getenv ("TMPDIR");
  char path[4096];
  int fd;

  if (verbose)
    return -1;
  snprintf (path, sizeof path, "%s/nbd-libev-serverXXXXXX",
            dir != NULL && dir[0] != '\0' ? dir : "/tmp");
  fd = mkostemp (path, O_CLOEXEC);
  if (fd == -1)
    return -1;
  unlink (path);
  return fd;
}

/* Remember nbd for the exit handler. */
static struct open_handle *
remember (struct nbd_handle *nbd, const char *name)
{
  size_t i;

  register_at_exit ();
  for (i = 0; i < sizeof handles / sizeof handles[0]; i++) {
    if (handles[i].nbd == NULL) {
      handles[i].nbd = nbd;
      handles[i].captive = false;
      handles[i].log_fd = -1;
      return &handles[i];
    }
  }
  die ("%s: more connections than the program expects", name);
}

int
image_aio_connect (const struct image *img, struct nbd_handle *nbd)
{
  struct open_handle *h = remember (nbd, img->name);
  int saved, r;

  if (img->kind == IMAGE_URI)
    return nbd_aio_connect_uri (nbd, img->uri);

  /* Remembered before the server starts, so that it is stopped even if
   * connecting fails half-way.
   */
  h->captive = true;
  h->log_fd = server_log ();

  /* libnbd forks the server inside this call, and the child inherits
   * file descriptor 2 as it is at that moment: point it at the log for
   * just that long.  No other thread runs yet.
   */
  saved = h->log_fd >= 0 ? dup (STDERR_FILENO) : -1;
  if (saved >= 0)
    dup2 (h->log_fd, STDERR_FILENO);
  r = nbd_aio_connect_systemd_socket_activation (nbd, img->argv);
  if (saved >= 0) {
    dup2 (saved, STDERR_FILENO);
    close (saved);
  }
  return r;
}

bool
image_server_said (struct nbd_handle *nbd, char *buf, size_t len)
{
  ssize_t r;
  size_t i;
  char *nl;

  for (i = 0; i < sizeof handles / sizeof handles[0]; i++)
    if (handles[i].nbd == nbd && handles[i].log_fd >= 0)
      break;
  if (i == sizeof handles / sizeof handles[0] || len == 0)
    return false;
  r = pread (handles[i].log_fd, buf, len - 1, 0);
  if (r <= 0)
    return false;
  buf[r] = '\0';
  nl = strchr (buf, '\n');
  if (nl != NULL)
    *nl = '\0';
  return buf[0] != '\0';
}

void
image_close_handle (struct nbd_handle *nbd)
{
  size_t i;

  for (i = 0; i < sizeof handles / sizeof handles[0]; i++) {
    if (handles[i].nbd == nbd) {
      handles[i].nbd = NULL;
      if (handles[i].log_fd >= 0)
        close (handles[i].log_fd);
    }
  }
  nbd_close (nbd);
}
