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
 *    follows the server (tools/lib/depth.h).
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
#include "block-size.h"
#include "captive.h"
#include "engine.h"
#include "extents.h"
#include "image.h"
#include "options.h"
#include "ordered-hash.h"
#include "plan.h"
#include "util.h"

/* Longest zero run in one slot.  The loop thread feeds zero runs to the
 * outer digest itself (there is nothing for a hash thread to compute),
 * and the cap keeps each such stall of the I/O short: 65536 digests,
 * about a millisecond.  Block status without 64-bit lengths never
 * reports more than this anyway.
 */
#define MAX_ZERO_RUN (UINT64_C (1) << 32)

/* The options, as parse_options stores them. */
struct sum_options {
  struct shared_options o;      /* --requests, --request-size and more */
  const char *digest;
  uint64_t block_size;
  unsigned max_requests;        /* the most the depth may grow to */
  uint64_t max_size;
  bool several;                 /* more than one image to hash */
};

/* One image's hash: the pass the engine runs (tools/lib/engine.h). */
struct sum {
  struct pass pass;             /* first: the ops cast back */
  struct endpoint *src;
  struct extent_map map;
  uint64_t block_size;
};

/* Fill idle slots: zero runs where block status says whole blocks read
 * as zeroes, reads everywhere else (tools/lib/plan.h).  The depth
 * (tools/lib/depth.h) is the reads in flight; as many slots again, within
 * the ring, may hold data read and waiting for the hash threads, so
 * that a backlog to hash does not stop the reads while a late server
 * is the bottleneck, nor grow without bound while the hashing is.  With
 * --requests the ring has that many slots, and they bound both
 * together.  A zero run needs no I/O and no hashing: it is over the
 * moment it is taken, and still goes through the ring so that it is
 * fed to the outer digest in its turn, after every read before it.
 */
static void
fill (struct pass *p)
{
  struct sum *s = (struct sum *) p;
  struct engine *e = p->e;
  const struct depth *d = &e->depth;
  uint64_t ahead = d->requests * d->request_size, length;
  struct slot *slot;

  /* A stream: one read at a time, as blksum reads standard input, while
   * the hash threads work on what came before.
   */
  if (p->open_ended) {
    if (e->reads == 0 && !endpoint_ended (s->src) &&
        e->ring->in_use < e->ring->nr_slots) {
      slot = engine_take (p, d->request_size, true);
      slot->flags = SLOT_DATA;
      engine_read (p, slot, s->src);
    }
    return;
  }

  while (p->next_offset < p->size && e->reads < d->requests &&
         e->ring->in_use < MIN (2 * d->requests, e->ring->nr_slots)) {
    /* Block status asks for a window of up to 4 GiB at a time, with one
     * command in flight; until the map reaches next_offset, wait for it.
     */
    endpoint_map_pump (s->src, &s->map, &e->stop, p->next_offset, ahead);
    switch (plan_sum (&s->map, p->next_offset, p->size, d->request_size,
                      s->block_size, MAX_ZERO_RUN, &length)) {
    case WORK_SKIP:
      slot = engine_take (p, length, false);
      slot->flags = SLOT_ZEROES;
      engine_finish (p, slot);
      slot_debug (slot, "zero run");
      break;
    case WORK_READ:
      slot = engine_take (p, length, true);
      slot->flags = SLOT_DATA;
      engine_read (p, slot, s->src);
      break;
    default:
      goto wait;
    }
  }
 wait:
  /* Also when the ring is full: the next window arrives while the reads
   * are in flight.
   */
  endpoint_map_pump (s->src, &s->map, &e->stop, p->next_offset, ahead);
}

/* A read is done, and every slot before it has moved on (the pass is
 * in order, tools/lib/engine.h): its data goes to the hash threads.
 * Once stopping, what is read is no longer hashed.  A stream that
 * ended with this read has its size: the digest includes it.
 */
static void
step_done (struct pass *p, struct slot *slot)
{
  struct sum *s = (struct sum *) p;

  if (slot->kind != STEP_READ || engine_stopping (p))
    return;
  if (endpoint_ended (s->src)) {
    p->size = p->next_offset = slot->offset + slot->length;
    debug ("%s ended after %" PRIu64 " bytes", s->src->name, p->size);
  }
  if (slot->length == 0)        /* nothing more came: nothing to hash */
    slot->flags = SLOT_ZEROES;
  engine_finish (p, slot);
}

/* After a signal: how far the hash of which image got.  A failure
 * names the image itself.
 */
static char *
where (const struct pass *p)
{
  char *s;
  int r;

  if (p->e->stop.signum == 0)
    return NULL;
  if (p->open_ended)
    r = asprintf (&s, " after hashing %" PRIu64 " bytes of %s; no digest",
                  p->bytes_done, p->name);
  else
    r = asprintf (&s, " after hashing %" PRIu64 " of %" PRIu64 " bytes of "
                  "%s; no digest", p->bytes_done, p->size, p->name);
  return r == -1 ? NULL : s;
}

static const struct pass_ops sum_ops = {
  .fill = fill,
  .step_done = step_done,
  .where = where,
};

/* Connect, check the image against the server's limits, and size the
 * depth and the ring.  Block status goes to one connection: the map is
 * one sequence.
 */
static void
open_image (struct engine *e, struct sum *s, const struct sum_options *so,
            struct image *img)
{
  /* Block status is what lets zero runs go unread; reads need no
   * zeroing by libnbd, as a failed read's buffer is never hashed.
   */
  const struct handle_options opts = {
    .pread_initialize = false, .want_extents = true,
    .socket_buffer = so->o.socket_buffer,
  };
  char adapt[64];

  image_prepare (img, NULL, false, so->o.cache);
  engine_init (e, &so->o);
  s->src = engine_open (e, img->name, img, &opts, false);
  engine_set_depth (e, so->o.requests, so->o.request_size,
                    so->o.request_size_given, so->max_requests,
                    so->max_size, so->block_size);
  s->pass.size = endpoint_size (s->src);
  s->pass.open_ended = s->pass.size == SIZE_UNKNOWN;
  endpoint_check_end (s->src, s->pass.size);
  endpoint_map_open (s->src, &s->map);
  debug ("hashing %" PRIu64 " bytes with %s, %" PRIu64 "-byte blocks, "
         "%u requests of %" PRIu64 " bytes (%s)", s->pass.size, so->digest,
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
  struct sum s = {
    .pass = {
      .ops = &sum_ops, .sample_reads = true, .in_order = true,
      .name = img->name, .other_command = "block status",
      /* With several images, each frame of the bar names its own. */
      .label = so->several ? img->name : NULL,
    },
    .block_size = so->block_size,
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
  debug ("%" PRIu64 " block-status commands", s.map.commands);
  printf ("%s  %s\n", hex, img->name);

  engine_close (&e);
  extents_free (&s.map);
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
"  --block-size=SIZE   bytes per hashed block, a power of two up to 32M\n"
"                      (default %dk, as blkhash)\n"
"  --requests=N        slots in flight, reads, data waiting to be hashed\n"
"                      and zero runs (1-%d); without it, start at %d\n"
"                      reads and adapt to the server\n"
"  --request-size=SIZE bytes per read, a multiple of the block size\n"
"                      (%d to %dM; suffixes k, M, G are powers of 1024);\n"
"                      without it, adapt from 256k or the block size if\n"
"                      larger, up to 1M or that if larger\n",
           progname, BLKHASH_BLOCK_SIZE / 1024, MAX_REQUESTS,
           CHECKSUM_REQUESTS, MIN_REQUEST_SIZE,
           MAX_REQUEST_SIZE / (1024 * 1024));
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
