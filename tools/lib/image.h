/* nbd-libev-examples: naming an image the way nbdcopy and blksum accept it.
 *
 * Wherever a tool takes an image, the user may give it in any of
 * three forms:
 *
 *  - An NBD URI (nbd://, nbds://, nbd+unix://, nbds+unix://,
 *    nbd+vsock://, nbds+vsock://): a server that is already running.
 *
 *  - [ CMD ARGS ... ]: a captive server, exactly nbdcopy's syntax: each
 *    bracket is an argument of its own, and "--" before the first
 *    image keeps the command's options from being taken as the
 *    program's.  The program starts it and stops it
 *    (tools/lib/captive.h).
 *
 *  - A path to a local image, a regular file or a block device.  Its
 *    format is probed from its first bytes as qemu probes it (qcow2,
 *    qcow, qed, vmdk, vdi, vhdx, vpc): such a file gets a captive
 *    qemu-nbd -f FORMAT; anything else is raw, which the program reads
 *    and writes itself (tools/lib/endpoint.h), or, where it cannot,
 *    serves with nbdkit's file plugin (tools/lib/captive.h).  A source
 *    is opened or served read-only.  A destination path that does not
 *    exist is created (tools/lib/created.h).
 *
 *  - "-", standard input as a source or standard output as a
 *    destination, or a path to a FIFO or character device: a stream,
 *    read or written in order (tools/lib/stream.h), as nbdcopy and
 *    blksum take them.
 *
 * Messages and output name the image as the user gave it ("disk.qcow2",
 * "[ nbdkit memory 1G ]"), never the captive server's socket.
 *
 * This module, for both tools' main and the modules that open images,
 * parses the images on a command line and finds what a local path is.
 * It starts no server and opens no connection: serving an image and
 * connecting to it are tools/lib/captive.h's.
 */

#ifndef NBD_LIBEV_EXAMPLES_IMAGE_H
#define NBD_LIBEV_EXAMPLES_IMAGE_H

#include <stdbool.h>
#include <stddef.h>

/* What every program's --help says about naming an image; io is how
 * the program uses one ("read and written", or "read"), and dash what
 * "-" stands for.
 */
#define IMAGES_HELP(io, dash) \
  "An image is an NBD URI (nbd://host/export, nbd+unix:///?socket=PATH),\n" \
  "a local file or block device (raw is " io " by the program\n" \
  "itself through io_uring, or by a captive nbdkit where it cannot be;\n" \
  "qcow2, vmdk and qemu's other formats, found from the first bytes, by\n" \
  "a captive qemu-nbd), [ CMD ARGS ... ]: an NBD server the program runs\n" \
  "with socket activation and stops at the end, or - for " dash "\n" \
  "(or a pipe's path), " io " in order.\n" \
  "Options go before the first image.\n"

enum image_kind {
  IMAGE_URI,                    /* an NBD URI */
  IMAGE_COMMAND,                /* [ CMD ARGS ... ] */
  IMAGE_FILE,                   /* a local file or block device */
  IMAGE_NULL,                   /* null:, a destination that drops
                                   everything, as nbdcopy's */
  IMAGE_STREAM,                 /* "-", a FIFO or a character device */
};

/* How the suite serves a local file: the page cache is used unless
 * IMAGE_CACHE_NONE asks the server to keep out of it (see
 * image_prepare in tools/lib/captive.h).
 */
enum image_cache {
  IMAGE_CACHE_DEFAULT,
  IMAGE_CACHE_NONE,
};

struct image {
  enum image_kind kind;
  char *name;                   /* as the user gave it, for messages */
  const char *uri;              /* IMAGE_URI */
  const char *path;             /* IMAGE_FILE, IMAGE_STREAM ("-") */
  char **argv;                  /* the captive server's command, NULL
                                   terminated: IMAGE_COMMAND, and
                                   IMAGE_FILE once served (qcow2 by
                                   image_prepare, raw by
                                   image_serve_raw, in
                                   tools/lib/captive.h) */
  const char *format;           /* IMAGE_FILE: "raw", or the format
                                   qemu-nbd serves it as ("qcow2",
                                   "vmdk", ...) */
  char *server_path;            /* IMAGE_FILE: the path as its server's
                                   command line gives it */
  bool std_open[2];             /* IMAGE_STREAM "-": whether standard
                                   input and output were open when the
                                   image was parsed, before the loop's
                                   own descriptors could take their
                                   numbers */
};

/* Take one image from argv[*i], argv[*i + 1], ... (argc in all), and
 * move *i past it.  Returns 0, or -1 with the message in *err
 * (set_error in tools/lib/util.h) on a '[' without its ']' or with no
 * command inside, or a name that looks like a URI of another scheme;
 * image_free frees what it allocated either way.  It prints nothing
 * and never exits, so that any words can be tried on it
 * (tests/fuzz/fuzz-parse.c).
 */
int image_parse (struct image *img, int argc, char *const argv[], int *i,
                 char **err);

/* Parse argv[first] to argv[argc - 1] as images into imgs, at most max
 * of them.  Returns how many there were, or max + 1 if there are more,
 * or -1 with the message in *err on an option among them (options go
 * before the first image) or an image image_parse refuses; the images
 * are freed then.
 */
int image_parse_args (int argc, char *const argv[], int first,
                      struct image *imgs, int max, char **err);

/* How many first bytes of a file image_format_of looks at. */
#define IMAGE_PROBE_SIZE 512

/* The format of a file that starts with len bytes of first_bytes
 * (IMAGE_PROBE_SIZE, or fewer in a shorter file), found from its magic
 * bytes as qemu finds it: "qcow2", "qcow", "qed", "vmdk", "vdi",
 * "vhdx", "vpc", "luks", or "raw" for anything else.
 */
const char *image_format_of (const void *first_bytes, size_t len);

/* Messages about img start with who, "source: disk.raw" for a role,
 * or "disk.raw" for a role of NULL (when the image's name says enough).
 */
void image_who (const struct image *img, const char *role, char *who,
                size_t len);

/* Find what img is before anything opens it.  A local path that is a
 * FIFO or a character device becomes a stream; a regular file or a
 * block device gets its format (image_format_of on its first bytes).
 * Fatal, in one line naming the role (as for image_who) and the
 * image, for a path that cannot be read or is of another type (a
 * socket's message gives the URI to use instead), or for null: when
 * not writing.  Does nothing for a URI or a command.
 */
void image_probe (struct image *img, const char *role, bool writing);

/* True for null:, which has no server to connect to. */
static inline bool
image_is_null (const struct image *img)
{
  return img->kind == IMAGE_NULL;
}

/* True for a prepared local raw file or block device: the program
 * reads and writes it itself (tools/lib/endpoint.h), or, where it
 * cannot, image_serve_raw (tools/lib/captive.h) gives it a server.
 */
static inline bool
image_is_local_raw (const struct image *img)
{
  return img->kind == IMAGE_FILE && img->argv == NULL;
}

/* Free what image_parse allocated, and the server's command that
 * image_prepare or image_serve_raw built.
 */
void image_free (struct image *img);

#endif /* NBD_LIBEV_EXAMPLES_IMAGE_H */
