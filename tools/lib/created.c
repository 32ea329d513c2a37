/* nbd-libev-examples: the destination file the program creates.
 * See created.h.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "created.h"
#include "image.h"
#include "util.h"

/* The file this program created, for the exit handler, which atexit
 * calls without any data of ours.
 */
static const char *created;     /* a destination file, or NULL */
static bool keep_created;

/* At exit, however the program ends: remove the file a failed program
 * created.  The handler that stops the captive servers is another one,
 * and their order does not matter: a server that still has the file
 * open (nbdkit's file plugin) writes on to a file that no name
 * reaches, which goes when the server closes it.
 */
static void
created_at_exit (void)
{
  if (created != NULL && !keep_created)
    unlink (created);
}

bool
image_missing (const struct image *img)
{
  struct stat st;

  return img->kind == IMAGE_FILE && stat (img->path, &st) == -1 &&
    errno == ENOENT;
}

/* The format a file's name says, from its extension, if it names one
 * of qemu's other than raw; NULL otherwise.
 */
static const char *
format_named (const char *path)
{
  static const char *const named[][2] = {
    { "qcow2", "qcow2" }, { "qcow", "qcow" }, { "qed", "qed" },
    { "vdi", "vdi" }, { "vhdx", "vhdx" }, { "vhd", "vpc" },
    { "vmdk", "vmdk" },
  };
  const char *dot = strrchr (path, '.');
  size_t i;

  if (dot == NULL || strchr (dot, '/') != NULL)
    return NULL;
  for (i = 0; i < sizeof named / sizeof named[0]; i++)
    if (strcasecmp (dot + 1, named[i][0]) == 0)
      return named[i][1];
  return NULL;
}

void
image_create (struct image *img, const char *role, uint64_t size)
{
  static bool registered;
  int fd;
  const char *format = format_named (img->path);

  /* A raw file behind a name that says otherwise would be taken for
   * that format by whatever opens it next, and fail there.
   */
  if (format != NULL)
    die ("%s: %s does not exist, and this program creates only raw "
         "files: for a %s image, run 'qemu-img create -f %s %s %" PRIu64
         "' first", role, img->name, format, format, img->name, size);

  /* O_EXCL: never truncate a file that appeared since image_missing. */
  fd = open (img->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd == -1)
    die ("%s: %s: cannot create: %s", role, img->name, strerror (errno));
  if (!registered && atexit (created_at_exit) == 0)
    registered = true;
  created = img->path;
  if (ftruncate (fd, size) == -1 || close (fd) == -1)
    die ("%s: %s: cannot make it %" PRIu64 " bytes: %s",
         role, img->name, size, strerror (errno));
  debug ("%s: %s: created, %" PRIu64 " bytes of holes", role, img->name,
         size);
}

void
image_keep (void)
{
  keep_created = true;
}
