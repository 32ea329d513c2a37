/* nbd-evcopy: the copy, with its hash and --verify.
 *
 * copy_image runs the copy pass and, with --verify, a second pass that
 * reads the destination back as nbd-evsum reads an image
 * (tools/lib/sum-pass.h); the two digests must match.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "created.h"
#include "nbd-evcopy.h"
#include "sum-pass.h"
#include "util.h"

/* Start a hash of the ring's slots, with a record of its block digests
 * for --verify, which names the first block that differs.
 */
static void
start_hash (struct ordered_hash *sh, const struct engine *e,
            const struct copy_options *co)
{
  struct blkhash hash;

  ordered_hash_setup (&hash, co->digest, co->block_size);
  ordered_hash_start (sh, &hash, e->loop, e->ring);
  if (co->verify)
    ordered_hash_record (sh);
}

/* --verify, once the copy has succeeded: a second pass over the ring
 * and the connections, which hashes the destination's first size
 * bytes as nbd-evsum hashes an image (tools/lib/sum-pass.h): in offset
 * order, its own block status deciding what is read.  A stop in it
 * says that the copy itself is complete.  The digest goes to dst_hex.
 */
static void
verify_copy (struct engine *e, const struct copy *copy,
             const struct copy_options *co, struct ordered_hash *dst_hash,
             char *dst_hex)
{
  struct sum_pass v = {
    .pass = { .hash = dst_hash, .keep_bar = true, .label = "verify" },
    .stage = "the verify pass",
    .left = "the copy itself is complete",
  };

  sum_pass_open (&v, copy->dst, copy->pass.size, co->block_size);
  start_hash (dst_hash, e, co);
  debug ("verifying the destination's first %" PRIu64 " bytes",
         v.pass.size);
  engine_run (e, &v.pass);
  ordered_hash_final (dst_hash, v.pass.size, dst_hex);
  sum_pass_close (&v);
}

/* --verify found a difference: its own exit status, apart from the
 * errors' 1, as cmp(1) and qemu-img compare keep the two apart.
 */
#define EXIT_DIFFERENT 2

/* --verify failed: say so with both digests, and where the records of
 * block digests the two passes kept first differ, if they can tell.
 */
static void __attribute__ ((noreturn))
verify_failed (const struct ordered_hash *src_hash,
               const struct ordered_hash *dst_hash, const char *src_hex,
               const char *dst_hex, uint64_t block_size, uint64_t size)
{
  int64_t diff = ordered_hash_first_difference (src_hash, dst_hash);

  if (diff >= 0)
    message ("verify failed: the destination's digest %s is not the "
             "source's %s; the first block that differs is at offset %"
             PRId64 " length %" PRIu64, dst_hex, src_hex, diff,
             MIN (block_size, size - diff));
  else
    message ("verify failed: the destination's digest %s is not the "
             "source's %s", dst_hex, src_hex);
  exit (EXIT_DIFFERENT);
}

/* The copy itself, then --verify; 0 once every check passed. */
int
copy_image (const struct copy_options *co, struct image images[2])
{
  struct engine e;
  struct copy c = {
    .pass = { .ops = &copy_ops },
    .sparse = co->sparse,
    .want_flush = co->flush,
    .cmd = &co->cmd,
  };
  struct ordered_hash src_hash, dst_hash;
  char hex[BLKHASH_HEX_SIZE], dst_hex[BLKHASH_HEX_SIZE];

  engine_init (&e, &co->o);
  copy_setup (&e, &c, co, images);
  if (co->checksum) {
    start_hash (&src_hash, &e, co);
    c.pass.hash = &src_hash;
    debug ("hashing with %s in %" PRIu64 "-byte blocks", co->digest,
           co->block_size);
  }
  /* Every check passed: from here on a destination file this program
   * created holds (part of) the copy and stays, as any destination.
   * The bar of each pass stays, labelled, on stderr; a digest goes to
   * stdout.
   */
  image_keep ();
  c.pass.keep_bar = true;
  c.pass.label = "copy";
  engine_run (&e, &c.pass);
  copy_describe_done (&c);
  if (co->checksum)
    ordered_hash_final (&src_hash, c.pass.size, hex);
  if (co->verify)
    verify_copy (&e, &c, co, &dst_hash, dst_hex);

  /* A clean disconnect: the destination learns that the client is done
   * and may flush its caches in its own time.
   */
  engine_close (&e);
  if (co->verify && strcmp (hex, dst_hex) != 0)
    verify_failed (&src_hash, &dst_hash, hex, dst_hex, co->block_size,
                   c.pass.size);
  /* Only now is the copy a success: print the digest, and say that it
   * was verified where scripts reading the digest do not look.
   */
  if (co->verify)
    message ("verified: the destination's first %" PRIu64 " bytes have "
             "the source's digest", c.pass.size);
  if (co->checksum) {
    printf ("%s  %s\n", hex, images[0].name);
    ordered_hash_free (&src_hash);
  }
  if (co->verify)
    ordered_hash_free (&dst_hash);
  extents_free (&c.read_map);
  extents_free (&c.dst_map);
  engine_free (&e);
  return EXIT_SUCCESS;
}
