/* nbd-libev-examples: URIs, captive servers and local images.  See image.h. */

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
#include <sys/stat.h>
#include <unistd.h>

#include <libnbd.h>

#include "image.h"
#include "bounds.h"
#include "util.h"

/* A macro's value as a string literal: "16" for MAX_CONNECTIONS. */
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_ (x)

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
image_at_exit (void)
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

  if (!registered && atexit (image_at_exit) == 0)
    registered = true;
}

/* The URI schemes libnbd connects to.  Anything else is a path. */
static bool
is_uri (const char *s)
{
  static const char *const schemes[] = {
    "nbd:", "nbds:", "nbd+unix:", "nbds+unix:", "nbd+vsock:", "nbds+vsock:",
    NULL
  };
  size_t i;

  for (i = 0; schemes[i] != NULL; i++)
    if (strncmp (s, schemes[i], strlen (schemes[i])) == 0)
      return true;
  return false;
}

/* SCHEME://..., the scheme in letters, digits, '+', '-' and '.' as
 * RFC 3986 has it: a mistyped URI, more likely than a local path.
 */
static bool
looks_like_uri (const char *s)
{
  size_t n = strspn (s, "abcdefghijklmnopqrstuvwxyz"
                     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");

  return n > 0 && strncmp (s + n, "://", 3) == 0;
}

/* "[ CMD ARGS ... ]", as the user typed it, for messages, or NULL. */
static char *
join_command (char *const argv[], int n)
{
  size_t len = 4;
  char *s;
  int k;

  for (k = 0; k < n; k++)
    len += strlen (argv[k]) + 1;
  s = malloc (len);
  if (s == NULL)
    return NULL;
  strcpy (s, "[");
  for (k = 0; k < n; k++) {
    strcat (s, " ");
    strcat (s, argv[k]);
  }
  strcat (s, " ]");
  return s;
}

/* An image named by one word: null:, -, a URI or a local path. */
static int
parse_word (struct image *img, const char *word, char **err)
{
  img->name = strdup (word);
  /* Not a leak: image_free frees img->name, where img is one of
   * image_parse_args's array, which the analyser cannot follow.
   */
  ANALYZER_NOT_A_LEAK_BEGIN
  if (img->name == NULL)
    return set_error (err, "strdup: %s", strerror (errno));
  ANALYZER_NOT_A_LEAK_END
  /* A file of that name is ./null:, as for nbdcopy. */
  if (strcmp (word, "null:") == 0)
    img->kind = IMAGE_NULL;
  else if (strcmp (word, "-") == 0) {
    img->kind = IMAGE_STREAM;
    img->path = word;
    img->std_open[0] = fcntl (STDIN_FILENO, F_GETFD) != -1;
    img->std_open[1] = fcntl (STDOUT_FILENO, F_GETFD) != -1;
  }
  else if (is_uri (word)) {
    img->kind = IMAGE_URI;
    img->uri = word;
  }
  else if (looks_like_uri (word))
    return set_error (err, "%s: unknown URI scheme '%.*s': an NBD URI "
                      "starts with nbd://, nbds://, nbd+unix://, "
                      "nbds+unix://, nbd+vsock:// or nbds+vsock:// (a "
                      "local file of that name: ./%s)", word,
                      (int) strcspn (word, ":"), word, word);
  else {
    img->kind = IMAGE_FILE;
    img->path = word;
  }
  return 0;
}

/* A captive server's command, from the "[" at argv[first] to the
 * first "]" after it (a server's own arguments never are a lone "]",
 * as nbdcopy assumes too).  Sets *next past the "]".
 */
static int
parse_command (struct image *img, int argc, char *const argv[], int first,
               int *next, char **err)
{
  int end, k;

  for (end = first + 1; end < argc && strcmp (argv[end], "]") != 0; end++)
    ;
  if (end == argc)
    return set_error (err, "'[' without a matching ']' (each bracket is "
                      "an argument of its own: [ nbdkit memory 1G ])");
  if (end == first + 1)
    return set_error (err, "'[ ]' names no server command");
  img->kind = IMAGE_COMMAND;
  img->name = join_command (&argv[first + 1], end - first - 1);
  img->argv = malloc ((end - first) * sizeof (char *));
  /* Not a leak, as for a name in parse_word. */
  ANALYZER_NOT_A_LEAK_BEGIN
  if (img->name == NULL || img->argv == NULL)
    return set_error (err, "malloc: %s", strerror (errno));
  ANALYZER_NOT_A_LEAK_END
  for (k = first + 1; k < end; k++)
    img->argv[k - first - 1] = argv[k];
  img->argv[end - first - 1] = NULL;
  *next = end + 1;
  return 0;
}

int
image_parse (struct image *img, int argc, char *const argv[], int *i,
             char **err)
{
  int first = *i;

  memset (img, 0, sizeof *img);
  if (strcmp (argv[first], "[") == 0)
    return parse_command (img, argc, argv, first, i, err);
  if (parse_word (img, argv[first], err) == -1)
    return -1;
  *i = first + 1;
  return 0;
}

int
image_parse_args (int argc, char *const argv[], int first,
                  struct image *imgs, int max, char **err)
{
  int i = first, n = 0;

  while (i < argc) {
    /* getopt stopped at the first image ("+" in the option string, so
     * that a captive server's own options stay its own).  A local file
     * whose name starts with '-' can be given as ./-name.
     */
    if (argv[i][0] == '-' && argv[i][1] != '\0') {
      set_error (err, "'%s': options go before the first image; try "
                 "--help", argv[i]);
      break;
    }
    if (n == max)
      return max + 1;
    if (image_parse (&imgs[n++], argc, argv, &i, err) == -1)
      break;
  }
  if (i == argc)
    return n;
  /* What the images parsed so far allocated is theirs to free. */
  while (n > 0)
    image_free (&imgs[--n]);
  return -1;
}

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

/* The formats qemu-nbd serves, by their first bytes, as qemu probes
 * them (each block driver's probe): the magic at an offset.  Anything
 * else is raw, as for qemu.
 */
static const struct {
  const char *format;
  size_t offset;
  const char *magic;
  size_t len;
} formats[] = {
  { "qcow2", 0, "QFI\xfb", 4 },   /* version 1 is "qcow": below */
  { "qed", 0, "QED\0", 4 },
  { "vmdk", 0, "KDMV", 4 },
  { "vmdk", 0, "COWD", 4 },
  { "vmdk", 0, "# Disk DescriptorFile", 21 },
  { "vdi", 0x40, "\x7f\x10\xda\xbe", 4 },
  { "vhdx", 0, "vhdxfile", 8 },
  { "vpc", 0, "conectix", 8 },
  { "luks", 0, "LUKS\xba\xbe", 6 },
};

const char *
image_format_of (const void *first_bytes, size_t len)
{
  const unsigned char *head = first_bytes;
  size_t i;

  for (i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (formats[i].offset + formats[i].len <= len &&
        memcmp (head + formats[i].offset, formats[i].magic,
                formats[i].len) == 0)
      break;
  if (i == sizeof formats / sizeof formats[0])
    return "raw";
  /* qcow2's header: the version, big-endian, after the magic. */
  if (strcmp (formats[i].format, "qcow2") == 0 && len >= 8 &&
      head[4] == 0 && head[5] == 0 && head[6] == 0 && head[7] == 1)
    return "qcow";
  return formats[i].format;
}

/* The format of a local file, from its first bytes. */
static const char *
probe_format (const struct image *img, const char *who)
{
  unsigned char head[IMAGE_PROBE_SIZE];
  ssize_t r;
  int fd = open (img->path, O_RDONLY | O_CLOEXEC);

  if (fd == -1)
    die ("%s: %s", who, strerror (errno));
  r = pread (fd, head, sizeof head, 0);
  if (r == -1)
    die ("%s: cannot read: %s", who, strerror (errno));
  close (fd);
  return image_format_of (head, r);
}

/* The most words a server command of serve_file has, with its NULL. */
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

/* Messages start "source: disk.raw: ", or just "disk.raw: ". */
static void
name_who (const struct image *img, const char *role, char *who, size_t len)
{
  if (role != NULL)
    snprintf (who, len, "%s: %s", role, img->name);
  else
    snprintf (who, len, "%s", img->name);
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

  name_who (img, role, who, sizeof who);
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
  struct stat st;

  name_who (img, role, who, sizeof who);
  switch (img->kind) {
  case IMAGE_URI:
    return;
  case IMAGE_COMMAND:
    if (!installed (img->argv[0]))
      die ("%s: %s: command not found", who, img->argv[0]);
    return;
  case IMAGE_NULL:
    if (!writing)
      die ("%s can only be a destination", who);
    return;
  case IMAGE_STREAM:
    return;
  case IMAGE_FILE:
    if (stat (img->path, &st) == -1)
      die ("%s: %s", who, strerror (errno));
    /* An NBD server's socket is named by a URI. */
    if (S_ISSOCK (st.st_mode))
      die ("%s: a socket: for an NBD server listening there, give "
           "nbd+unix:///?socket=%s", who, img->path);
    /* Something with no offsets is read or written in order. */
    if (S_ISFIFO (st.st_mode) || S_ISCHR (st.st_mode)) {
      img->kind = IMAGE_STREAM;
      return;
    }
    if (!S_ISREG (st.st_mode) && !S_ISBLK (st.st_mode))
      die ("%s: not a regular file, a block device, a pipe or a character "
           "device", who);
    /* raw is read by the program itself, or image_serve_raw. */
    img->format = probe_format (img, who);
    if (strcmp (img->format, "raw") != 0)
      serve_qemu (img, who, writing, cache);
    return;
  }
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

void
image_free (struct image *img)
{
  free (img->name);
  free (img->argv);
  free (img->server_path);
  img->name = NULL;
  img->argv = NULL;
  img->server_path = NULL;
}
