/* nbd-libev-examples: naming an image, and what a local path is.
 * See image.h.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "util.h"

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

void
image_who (const struct image *img, const char *role, char *who,
           size_t len)
{
  if (role != NULL)
    snprintf (who, len, "%s: %s", role, img->name);
  else
    snprintf (who, len, "%s", img->name);
}

void
image_probe (struct image *img, const char *role, bool writing)
{
  char who[4096];
  struct stat st;

  image_who (img, role, who, sizeof who);
  if (img->kind == IMAGE_NULL && !writing)
    die ("%s can only be a destination", who);
  if (img->kind != IMAGE_FILE)
    return;
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
  img->format = probe_format (img, who);
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
