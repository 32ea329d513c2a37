/* nbd-evsum: the block hash of disk images, from one libev loop.
 *
 * The tool beside examples/checksum-libev.c: the same technique, with
 * several images, local files and captive servers, several
 * connections, timeouts, signals and progress around it.
 *
 * It prints the digest that blksum (blkhash 0.10 and later) and
 * nbdcopy --blkhash (libnbd after 1.22) compute: the digest of the
 * digests of the image's 64 KiB blocks and its size (common/blkhash.h
 * has the construction).  What it shows:
 *
 *  - The in-order consumer of liburing's examples on top of the common
 *    request ring, retired in issue order: reads are in flight and
 *    complete in any order, but the hash is fed strictly in offset order
 *    as slots retire from the head of the ring (tools/lib/engine.h, which
 *    runs the loop for both tools).  How many reads, and of what size,
 *    follows the server (tools/lib/depth.h).  The pass that reads and
 *    hashes an image is tools/lib/sum-pass.c, which nbd-evcopy --verify
 *    runs over its destination too.
 *
 *  - Work handed to threads beside the loop (common/pool.c, joined to
 *    the ring's digest areas in tools/lib/ordered-hash.c).  The loop
 *    thread does all the I/O and hashes no block itself, because
 *    hashing there would stall the reads: the server stops sending
 *    while the socket's buffer is full.  It gives slots whose data is
 *    ready to the hash threads, in offset order.  Any thread takes any
 *    slot and writes the digests of its blocks into that slot's own
 *    digest area, so slots may finish out of order.  The loop feeds the
 *    outer digest, which is cheap (32 bytes per 64 KiB block), strictly
 *    in offset order: only while the head of the ring is hashed.
 *    SHA-256 costs more CPU than the server and the loop need together,
 *    so a single hash thread would set the pace (docs/checksum.md); the
 *    inner digests are independent, the outer one is not, which is what
 *    splits the work.
 *
 *  - Reading less: block status (common/extents.c) says which ranges
 *    read as zeroes (tools/lib/plan.h decides what to read).  Whole
 *    zero blocks are hashed without any I/O, as copies of H (zero
 *    block) computed once, so a 1 TiB hole costs 16 Mi digests fed to
 *    the outer hash and no reads at all.
 *
 *  - nbd_set_pread_initialize(false): libnbd need not clear each read
 *    buffer first.  Safe because a buffer is hashed only after its read
 *    succeeded; a failed read ends the program.
 *
 *  - Several images, one line each, as sha256sum: each image is hashed
 *    in a child process of its own, one after the other, so that an
 *    image that fails costs only its own line.
 *
 * docs/nbd-evsum.pod is its manual.  For example:
 *
 *   nbd-evsum [ nbdkit data '"hello"' ]
 *   nbd-evsum disk.qcow2 disk.raw
 *
 * The first prints the value blkhash publishes for that image,
 * 337355feb53a5309d5aba92796223c2c84ffab930e706c01fef573a2722545e6.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libnbd.h>

#include <ev.h>

#include "blkhash.h"
#include "captive.h"
#include "engine.h"
#include "image.h"
#include "options.h"
#include "ordered-hash.h"
#include "sum-pass.h"
#include "util.h"

/* The options, as parse_options stores them. */
struct sum_options {
  struct shared_options o;      /* --requests, --request-size and more */
  const char *digest;
  uint64_t block_size;
  unsigned max_requests;        /* the most the depth may grow to */
  uint64_t max_size;
  bool several;                 /* more than one image to hash */
};

/* Connect, check the image against the server's limits, size the
 * depth and the ring, and ready the pass over the image.
 */
static void
open_image (struct engine *e, struct sum_pass *s,
            const struct sum_options *so, struct image *img)
{
  /* Block status is what lets zero runs go unread; reads need no
   * zeroing by libnbd, as a failed read's buffer is never hashed.
   */
  const struct handle_options opts = {
    .pread_initialize = false, .want_extents = true,
    .socket_buffer = so->o.socket_buffer,
    .socket_buffer_tcp = so->o.socket_buffer_given,
  };
  struct endpoint *src;
  uint64_t size;
  char adapt[64];

  image_prepare (img, NULL, false, so->o.cache);
  engine_init (e, &so->o);
  src = engine_open (e, img->name, img, &opts, false);
  engine_set_depth (e, so->o.requests, so->o.request_size,
                    so->o.request_size_given, so->max_requests,
                    so->max_size, so->block_size);
  size = endpoint_size (src);
  endpoint_check_end (src, size);
  sum_pass_open (s, src, size, so->block_size);
  debug ("hashing %" PRIu64 " bytes with %s, %" PRIu64 "-byte blocks, "
         "%u requests of %" PRIu64 " bytes (%s)", size, so->digest,
         so->block_size, e->depth.requests, e->depth.request_size,
         depth_describe (&e->depth, adapt, sizeof adapt));
}

/* Hash one image and print its line, then exit: status 0, or 1 with
 * the reason on stderr (die, stop_exit) whatever went wrong, or 128 +
 * the signal's number after SIGINT or SIGTERM.
 */
static void __attribute__ ((noreturn))
checksum_image (const struct sum_options *so, struct image *img)
{
  struct engine e;
  struct sum_pass s = {
    .pass = {
      .name = img->name,
      /* With several images, each frame of the bar names its own. */
      .label = so->several ? img->name : NULL,
    },
    .left = "no digest",
  };
  struct ordered_hash sh;
  struct blkhash hash;
  char hex[BLKHASH_HEX_SIZE];

  ordered_hash_setup (&hash, so->digest, so->block_size);
  open_image (&e, &s, so, img);
  ordered_hash_start (&sh, &hash, e.loop, e.ring);
  s.pass.hash = &sh;
  /* The digest follows on stdout: the bar is cleared, as blksum does. */
  engine_run (&e, &s.pass);
  ordered_hash_final (&sh, s.pass.size, hex);
  sum_pass_close (&s);
  printf ("%s  %s\n", hex, img->name);

  engine_close (&e);
  engine_free (&e);
  ordered_hash_free (&sh);
  image_free (img);
  exit (EXIT_SUCCESS);
}

/* The images named on the command line.  At file scope, not main's:
 * a child hashing one of them exits from inside checksum_image, and
 * valgrind, finding the list in no variable it can see from there,
 * would report it lost.
 */
static struct image *images;

/* For forward_signal, which as a signal handler has no other way to
 * reach them: the child hashing the current image, and the signal
 * caught, which ends the loop over the images.
 */
static volatile pid_t child;
static volatile sig_atomic_t caught;

/* SIGINT or SIGTERM while hashing several images: pass it to the child,
 * which stops the way one image stops (tools/lib/stop.h), and start no
 * other image.  The child is in a process group of its own, so a
 * Ctrl-C at the terminal reaches it only through here, once.
 */
static void
forward_signal (int signum)
{
  caught = signum;
  if (child > 0)
    kill (child, signum);
}

/* Run one child and wait for it: its wait status. */
static int
run_child (const struct sum_options *so, struct image *img)
{
  int ws;
  pid_t pid;

  fflush (stdout);
  pid = fork ();
  if (pid == -1)
    die ("fork: %s", strerror (errno));
  if (pid == 0) {
    setpgid (0, 0);
    signal (SIGINT, SIG_DFL);
    signal (SIGTERM, SIG_DFL);
    checksum_image (so, img);
  }
  /* Both sides set the group, so that it is set before either goes
   * on, whichever runs first.
   */
  setpgid (pid, pid);
  child = pid;
  while (waitpid (pid, &ws, 0) == -1)
    if (errno != EINTR)
      die ("waitpid: %s", strerror (errno));
  child = 0;
  return ws;
}

/* Several images: each is hashed in a child process, one after the
 * other.  The single-image code ends with exit status 1 on any error,
 * wherever it happens; in a child, that costs only its own image, and
 * the lines still come out in the order given.
 */
static int
checksum_each (const struct sum_options *so, int n)
{
  struct sigaction sa = { .sa_handler = forward_signal };
  int status = EXIT_SUCCESS, ws, i;

  sigemptyset (&sa.sa_mask);
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);
  for (i = 0; i < n && caught == 0; i++) {
    ws = run_child (so, &images[i]);
    if (WIFSIGNALED (ws))
      return 128 + WTERMSIG (ws);
    if (WEXITSTATUS (ws) != EXIT_SUCCESS)
      status = EXIT_FAILURE;
  }
  return caught != 0 ? 128 + caught : status;
}

/* --help: what the program does and its own options, then those both
 * tools take (option_help_shared), on stdout.
 */
static void __attribute__ ((noreturn))
usage (void)
{
  struct help_sizes z;

  option_help_sizes (&z);
  printf ("Usage: %s [OPTIONS] IMAGE...\n"
"Print the block hash of each image, as blksum computes it (and\n"
"nbdcopy --blkhash in libnbd after 1.22): the digest of the digests\n"
"of its blocks and its size.  One line per image, in the order given,\n"
"as sha256sum prints them; the exit status is 1 if any failed.\n"
IMAGES_HELP ("read", "standard input")
"\n"
"Options:\n"
"  --digest=NAME       md5, sha1, sha256 (default), sha512, or any other\n"
"                      fixed-size digest OpenSSL knows\n"
"  --block-size=SIZE   bytes per hashed block, a power of two up to %s\n"
"                      (default %s, as blkhash)\n"
"  --requests=N        slots in flight, reads, data waiting to be hashed\n"
"                      and zero runs (1-%d); without it, start at %d\n"
"                      reads and adapt to the server\n"
"  --request-size=SIZE bytes per read, a multiple of the block size\n"
"                      (%s to %s; suffixes k, M, G are powers of 1024);\n"
"                      without it, adapt between %s and %s, or the\n"
"                      block size where it is larger\n",
           progname, z.max, z.block, MAX_REQUESTS, CHECKSUM_REQUESTS, z.min,
           z.max, z.least, z.most);
  option_help_shared (stdout);
  printf ("\nExample: the digest of a local qcow2 image's contents, as blksum "
          "prints it:\n"
          "  %s disk.qcow2\n"
          "See %s(1) for more.\n", progname, progname);
  exit (EXIT_SUCCESS);
}

/* Store the options in so; the images are the arguments after them. */
static void
parse_options (int argc, char *argv[], struct sum_options *so)
{
  enum { OPT_DIGEST = 256, OPT_BLOCK_SIZE };
  static const struct option long_options[] = {
    { "digest",       required_argument, NULL, OPT_DIGEST },
    { "block-size",   required_argument, NULL, OPT_BLOCK_SIZE },
    { "help",         no_argument,       NULL, 'h' },
    SHARED_LONG_OPTIONS,
    { 0 }
  };
  char *err;
  int c;

  while ((c = getopt_long (argc, argv, "+:h" SHARED_SHORT_OPTIONS,
                           long_options, NULL)) != -1) {
    switch (c) {
    case OPT_DIGEST:
      so->digest = optarg;
      break;
    case OPT_BLOCK_SIZE:
      if (option_block_size (optarg, &so->block_size, &err) == -1)
        die_error (err);
      break;
    case 'h':
      usage ();
    default:
      if (!option_shared (c, optarg, &so->o, MAX_CONNECTIONS))
        option_error (c, argv, long_options);
    }
  }
}

/* Check every option before connecting, so that a typo is reported as
 * such and not hidden behind a connection error; then the bounds of
 * the depth, within what the digests of a slot may take.
 */
static void
check_options (struct sum_options *so)
{
  struct shared_options *o = &so->o;
  char *err;

  if (option_request_size_in_blocks (o, so->block_size, &err) == -1)
    die_error (err);
  engine_bounds (o, so->digest, so->block_size, &so->max_requests,
                 &so->max_size);
}

int
main (int argc, char *argv[])
{
  struct sum_options so = {
    .o = SHARED_OPTIONS_INIT (CHECKSUM_REQUESTS),
    .digest = BLKHASH_DIGEST, .block_size = BLKHASH_BLOCK_SIZE,
  };
  char *err;
  int n;

  set_progname (argv[0]);
  parse_options (argc, argv, &so);
  images = calloc (argc - optind + 1, sizeof *images);
  if (images == NULL)
    die ("calloc: %s", strerror (errno));
  n = image_parse_args (argc, argv, optind, images, argc - optind, &err);
  if (n == -1)
    die_error (err);
  if (n == 0) {
    fprintf (stderr, "%s: expected an image; try --help\n", progname);
    exit (EXIT_FAILURE);
  }
  check_options (&so);
  so.several = n > 1;
  if (n == 1)
    checksum_image (&so, &images[0]);
  return checksum_each (&so, n);
}
