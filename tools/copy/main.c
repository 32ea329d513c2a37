/* nbd-evcopy: copy a disk image between NBD servers, local files and
 * captive servers, from one libev loop.
 *
 * The tool beside the lessons in examples/: it does what
 * zero-extent-copy-libev shows (the source's extents, one write-zeroes
 * per zero extent, all-zero buffers sent as zeroes, nothing sent where
 * the destination already reads as zeroes) and what copy-libev shows
 * (--no-extents --no-sparse: every byte read and written), with what a
 * program people run needs around it: local files and [ CMD ARGS ... ]
 * (tools/lib/image.h), several connections per server
 * (tools/lib/server.h), --timeout, signals with the offset to resume
 * from (tools/lib/stop.h), --progress, --flush, and a copy verified
 * while it is made.  The loop is tools/lib/engine.h's, shared with
 * nbd-evsum; the copy's own steps (read, then write, zero or nothing)
 * are copy.c's, and this file holds its options (nbd-evcopy.h lists
 * the others).
 *
 *  - --checksum: the source's block hash (common/blkhash.h), computed
 *    from the buffers the copy reads anyway, so a verified copy costs
 *    one pass.  Written buffers go to hash threads
 *    (tools/lib/ordered-hash.h); zero extents, skipped or zeroed, and
 *    all-zero buffers are hashed as zero blocks without any work.
 *    Commands complete in any order, but slots are given back in offset
 *    order, as in checksum-libev, and that is where the outer digest is
 *    fed.
 *
 *  - --verify: after the copy, a second pass reads the destination back
 *    as nbd-evsum reads an image (tools/lib/sum-pass.h), and its digest
 *    is compared with the source's.
 *
 * docs/nbd-evcopy.pod is its manual.  For example:
 *
 *   nbd-evcopy -p [ nbdkit pattern 1G ] [ nbdkit memory 1G ]
 *   nbd-evcopy --verify disk.qcow2 copy.raw
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "created.h"
#include "nbd-evcopy.h"
#include "util.h"

/* The copy's own long options. */
enum {
  OPT_INIT = 256, OPT_NO_INIT, OPT_ALLOCATED, OPT_DESTINATION_IS_ZERO,
  OPT_NO_SPARSE, OPT_FLUSH, OPT_CHECKSUM, OPT_BLOCK_SIZE, OPT_VERIFY,
  OPT_NO_EXTENTS, OPT_RESUME,
};

/* --help: what the program does and its own options, then those both
 * tools take (option_help_shared), on stdout.
 */
static void __attribute__ ((noreturn))
usage (void)
{
  struct help_sizes z;

  option_help_sizes (&z);
  printf ("Usage: %s [OPTIONS] SOURCE DESTINATION\n"
"Copy a disk image to another, reading only the source's data and zeroing\n"
"its holes with as few zero commands as the protocol allows\n"
"(--no-extents --no-sparse: every byte read and written).\n"
IMAGES_HELP ("read and written", "standard input or output")
"A DESTINATION file that does not exist is created, raw, as large as\n"
"the source.  DESTINATION null: drops everything, as nbdcopy's: to\n"
"measure reading, or with --checksum to hash the source.\n"
"\n"
"Options:\n"
"  --requests=N        requests in flight (1-%d); without it, start\n"
"                      at %d and adapt to the servers\n"
"  --request-size=SIZE bytes per data request (%s to %s; suffixes k, M,\n"
"                      G are powers of 1024); without it, adapt between\n"
"                      %s and %s (or the block size of --checksum,\n"
"                      if larger)\n"
"  --init              let libnbd zero read buffers before each read\n"
"  --no-init           do not (default; every read's error is checked)\n"
"  --allocated         zero with NO_HOLE, so the destination stays\n"
"                      allocated (default: the server may punch holes)\n"
"  --destination-is-zero\n"
"                      the destination reads as zeroes: send nothing for\n"
"                      zero extents (found out from block status if the\n"
"                      destination supports it)\n"
"  --no-extents        ask neither server for block status: read every\n"
"                      byte (buffers of zeroes still go as zero commands\n"
"                      unless --no-sparse)\n"
"  --no-sparse         write data buffers even if they are all zero\n"
"  --flush             flush the destination when the copy is done\n"
"  --checksum[=DIGEST] print the source's block hash, as nbd-evsum\n"
"                      and blksum print it, computed while copying\n"
"                      (DIGEST as nbd-evsum --digest, default sha256)\n"
"  --block-size=SIZE   with --checksum: bytes per hashed block, a power\n"
"                      of two up to %s (default %s)\n"
"  --verify            after the copy, hash the destination's first\n"
"                      SRC-size bytes the same way and fail unless the\n"
"                      digests match (implies --checksum)\n"
"  --resume=OFFSET     copy only from OFFSET on, into a destination that\n"
"                      holds the source below it: the command an\n"
"                      interrupted or failed copy prints\n",
           progname, MAX_REQUESTS, DEFAULT_REQUESTS, z.min, z.max, z.least,
           z.most, z.max, z.block);
  option_help_shared (stdout);
  printf ("\nExample: copy a local qcow2 image to an NBD server, and check "
          "it:\n"
          "  %s --verify disk.qcow2 nbd://server/export\n"
          "See %s(1) for more.\n", progname, progname);
  exit (EXIT_SUCCESS);
}

/* The copy's own options (parse_options' enum), stored in co as given:
 * false if c is not one of them.
 */
static bool
copy_option (int c, struct copy_options *co)
{
  char *err;

  switch (c) {
  case OPT_INIT:
  case OPT_NO_INIT:
    co->src.pread_initialize = c == OPT_INIT;
    return true;
  case OPT_ALLOCATED:
    co->allocated = true;
    return true;
  case OPT_DESTINATION_IS_ZERO:
    co->destination_is_zero = true;
    return true;
  case OPT_NO_EXTENTS:
    /* Without the meta context, neither map is supported: every
     * extent is data, and the destination's holes are not looked for.
     */
    co->src.want_extents = co->dst.want_extents = false;
    return true;
  case OPT_NO_SPARSE:
    co->sparse = false;
    return true;
  case OPT_FLUSH:
    co->flush = true;
    return true;
  case OPT_CHECKSUM:
    co->checksum = true;
    if (optarg) {
      co->digest = optarg;
      co->digest_given = true;
    }
    return true;
  case OPT_BLOCK_SIZE:
    if (option_block_size (optarg, &co->block_size, &err) == -1)
      die_error (err);
    return true;
  case OPT_VERIFY:
    co->verify = co->checksum = true;
    return true;
  case OPT_RESUME:
    if (parse_size (optarg, &co->resume) == -1)
      die ("--resume: '%s' is not an offset: %s", optarg, strerror (errno));
    co->resume_given = true;
    return true;
  }
  return false;
}

/* Store the options in co, as given: the rules between them are
 * check_options'.
 */
static void
parse_options (int argc, char *argv[], struct copy_options *co)
{
  static const struct option long_options[] = {
    { "init",                no_argument,       NULL, OPT_INIT },
    { "no-init",             no_argument,       NULL, OPT_NO_INIT },
    { "allocated",           no_argument,       NULL, OPT_ALLOCATED },
    { "destination-is-zero", no_argument,       NULL, OPT_DESTINATION_IS_ZERO },
    { "no-extents",          no_argument,       NULL, OPT_NO_EXTENTS },
    { "no-sparse",           no_argument,       NULL, OPT_NO_SPARSE },
    { "flush",               no_argument,       NULL, OPT_FLUSH },
    { "checksum",            optional_argument, NULL, OPT_CHECKSUM },
    { "block-size",          required_argument, NULL, OPT_BLOCK_SIZE },
    { "verify",              no_argument,       NULL, OPT_VERIFY },
    { "resume",              required_argument, NULL, OPT_RESUME },
    { "help",                no_argument,       NULL, 'h' },
    SHARED_LONG_OPTIONS,
    { 0 }
  };
  int c;

  while ((c = getopt_long (argc, argv, "+:h" SHARED_SHORT_OPTIONS,
                           long_options, NULL)) != -1) {
    if (c == 'h')
      usage ();
    if (!copy_option (c, co) &&
        !option_shared (c, optarg, &co->o, MAX_CONNECTIONS))
      option_error (c, argv, long_options);
  }
}

/* A local file copied onto itself would be read while it is written:
 * refuse it, by device and inode, however the two paths are spelt.
 */
static void
check_not_same (const struct image *src, const struct image *dst)
{
  struct stat a, b;

  if (src->kind != IMAGE_FILE || dst->kind != IMAGE_FILE ||
      stat (src->path, &a) == -1 || stat (dst->path, &b) == -1)
    return;
  if ((a.st_dev == b.st_dev && a.st_ino == b.st_ino) ||
      (S_ISBLK (a.st_mode) && S_ISBLK (b.st_mode) && a.st_rdev == b.st_rdev))
    die ("%s and %s are the same file: nothing to copy", src->name,
         dst->name);
}

/* The rules between options, before anything is connected; then the
 * bounds of the depth, within what the digests of a slot may take.
 */
static void
check_options (struct copy_options *co)
{
  struct shared_options *o = &co->o;
  char *err;

  /* A destination that reads as zeroes may still be sparse, so skipping
   * its zero extents would break the promise of --allocated.
   */
  if (co->allocated && co->destination_is_zero)
    die ("--allocated and --destination-is-zero cannot be used together");
  if (co->block_size && !co->checksum)
    die ("--block-size needs --checksum");
  /* A hash covers the whole image, and the part below the offset is
   * not read again.
   */
  if (co->resume_given && co->checksum)
    die ("--resume cannot be used with --%s: the part below the offset "
         "is not read again; once the copy is complete, nbd-evsum hashes "
         "either side", co->verify ? "verify" : "checksum");
  /* Writes above the offset may have landed before the copy stopped. */
  if (co->resume_given && co->destination_is_zero)
    die ("--resume cannot be used with --destination-is-zero: writes past "
         "the offset may have landed before the copy stopped");
  /* --verify reads the destination back, over every connection: only a
   * flush once the writes are done makes them visible to reads on the
   * other connections (tools/lib/server.h), so the copy ends with one.
   */
  if (co->verify)
    co->flush = true;
  /* Both ends get the same socket buffers: a copy moves every byte
   * through both sockets, and the smaller buffer would set the pace.
   */
  co->src.socket_buffer = co->dst.socket_buffer = o->socket_buffer;
  co->src.socket_buffer_tcp = co->dst.socket_buffer_tcp =
    o->socket_buffer_given;
  if (co->checksum) {
    if (co->block_size == 0)
      co->block_size = BLKHASH_BLOCK_SIZE;
    if (option_request_size_in_blocks (o, co->block_size, &err) == -1)
      die_error (err);
  }
  engine_bounds (o, co->checksum ? co->digest : NULL, co->block_size,
                 &co->max_requests, &co->max_size);
}

int
main (int argc, char *argv[])
{
  /* Reads need no zeroing by libnbd (pread_initialize false): a failed
   * read stops the copy, and its buffer is never written.  The
   * destination is asked for extents too, to find out whether it
   * already reads as zeroes.
   */
  struct copy_options co = {
    .o = SHARED_OPTIONS_INIT (DEFAULT_REQUESTS),
    .src = { .want_extents = true },
    .dst = { .want_extents = true },
    .sparse = true,
    .digest = BLKHASH_DIGEST,
  };
  struct image images[2];
  char *err;
  int n, status;

  set_progname (argv[0]);
  parse_options (argc, argv, &co);
  co.cmd = (struct command_line) { .argc = argc, .argv = argv,
                                   .first = optind };
  n = image_parse_args (argc, argv, optind, images, 2, &err);
  if (n == -1)
    die_error (err);
  if (n > 2 && co.checksum && !co.digest_given &&
      ordered_hash_is_digest (argv[optind]))
    die ("--checksum takes its digest after '=': --checksum=%s",
         argv[optind]);
  if (n != 2) {
    fprintf (stderr, "%s: expected SOURCE and DESTINATION; try --help\n",
             progname);
    exit (EXIT_FAILURE);
  }
  check_options (&co);
  check_not_same (&images[0], &images[1]);
  if (co.resume_given && image_missing (&images[1]))
    die ("--resume: %s does not exist: a copy resumes into the destination "
         "it was making", images[1].name);
  if (co.verify && image_is_null (&images[1]))
    die ("--verify: null: keeps nothing to read back");
  status = copy_image (&co, images);
  image_free (&images[0]);
  image_free (&images[1]);
  return status;
}
