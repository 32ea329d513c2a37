/* checksum-libev: the block hash of an NBD image, from one libev loop.
 *
 * It prints what blksum prints: SHA-256 of the SHA-256 digests of the
 * image's 64 KiB blocks and of its size (common/blkhash.h).  It shows:
 *
 *  - Reads in flight, fed to the outer digest strictly in order: reads
 *    complete in any order, but slots retire only from the head of the
 *    ring (common/ring.h), and the digest is fed there.
 *
 *  - Hashing on threads beside the loop (common/pool.h): the loop does
 *    the I/O, the threads the inner digests, each slot's into its own
 *    area.  Those are independent, the outer one is not: that is the
 *    split.  In the loop, hashing would stall the reads.
 *
 *  - Zero extents hashed without reading: where block status
 *    (common/extents.h) says whole blocks read as zeroes, copies of
 *    H (zero block) are fed, so a 1 TiB hole costs no read at all.
 *
 *  - nbd_set_pread_initialize(false), safe because a buffer is hashed
 *    only after its read succeeded.
 *
 * This prints blkhash's published value for "hello",
 * 337355feb53a5309d5aba92796223c2c84ffab930e706c01fef573a2722545e6:
 *
 *   nbdkit -r -U - data '"hello"' --run './checksum-libev $uri'
 *
 * Build it on its own from the repository root:
 *
 *   cc -O2 -Icommon examples/checksum-libev.c common/blkhash.c \
 *     common/extents.c common/glue.c common/pool.c common/ring.c \
 *     -o checksum-libev -pthread -lnbd -lev -lcrypto
 *
 * tools/nbd-evsum is the program to run on real images (several
 * images, files, timeouts, signals, progress, a URI naming a local file
 * such as tls-certificates=, which nbd_connect_uri refuses by default).
 */

#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include <ev.h>

#include "blkhash.h"
#include "extents.h"
#include "glue.h"
#include "pool.h"
#include "ring.h"

/* Reads in flight, REQUEST_SIZE each: the threads hash while the next
 * reads arrive, and more reads help a server that answers late. */
#define REQUESTS 16

/* 1 MiB as the copiers, in whole blocks: none straddles two slots. */
#define REQUEST_SIZE (16 * BLKHASH_BLOCK_SIZE)

/* Hash threads: one per CPU, at most this many.  Past four, one
 * connection rarely delivers data faster than they hash it.
 */
#define MAX_THREADS 4

/* Which step a slot is at, kept in slot->kind. */
enum step { STEP_READ, STEP_HASH, STEP_ZEROES };

static struct glue src;
static struct ring *ring;
static struct extent_map map;
static struct blkhash hash;
static struct pool pool;
static unsigned char *digests;  /* area_size bytes per slot, by index */
static size_t area_size;        /* a full slot's digests */
static uint64_t size;           /* the image's size */
static uint64_t next_offset;    /* where the next slot starts */
static bool failed;             /* a step failed: start no more */

/* The pool's work, on a hash thread with an OpenSSL context of its own
 * (contexts are not thread-safe).  It touches only the slot's buffer
 * and its digest area.
 */
static void *
thread_init (void *opaque)
{
  return EVP_MD_CTX_new ();
}

static int
hash_slot (void *ctx, struct slot *slot)
{
  return blkhash_blocks (&hash, ctx, slot->buf, slot->length,
                         digests + slot->index * area_size) ? ENOMEM : 0;
}

static void
thread_cleanup (void *ctx)
{
  EVP_MD_CTX_free (ctx);
}

static const struct pool_ops hash_ops = {
  .thread_init = thread_init,
  .work = hash_slot,
  .thread_cleanup = thread_cleanup,
};

/* The completion callback runs inside libnbd with the handle's lock
 * held: ring_command_done only marks the slot, and pump_cb hands it to
 * the threads.  A read libnbd refuses to send fails like any other.
 */
static void
start_read (struct slot *slot)
{
  nbd_completion_callback cb = { .callback = ring_command_done,
                                 .user_data = slot };

  slot->kind = STEP_READ;
  slot_debug (slot, "read");
  if (nbd_aio_pread (src.nbd, slot->buf, slot->length, slot->offset,
                     cb, 0) == -1) {
    ring_complete (slot, nbd_get_errno () ? nbd_get_errno () : EIO);
    failed = true;
  }
}

/* The next slot from next_offset: whole zero blocks in a run of their
 * own, which is done at once, or a read up to the block that holds the
 * end of the data.  False while the map does not reach next_offset: a
 * block-status reply is on its way.
 */
static bool
start_slot (void)
{
  uint64_t bs = hash.block_size, end;
  struct slot *slot;
  struct extent e;

  if (extents_pump (&map, next_offset, REQUESTS * REQUEST_SIZE) == -1) {
    warn ("extent map");
    failed = true;
  }
  if (failed || !extents_next (&map, next_offset, size - next_offset, &e))
    return false;
  /* next_offset is a block boundary; a zero run ends on one too. */
  end = e.offset + e.length;
  if (e.zero && end - end % bs > next_offset) {
    slot = ring_take (ring, next_offset, end - end % bs - next_offset);
    slot->kind = STEP_ZEROES;
    slot->state = SLOT_DONE;
    slot_debug (slot, "zeroes");
  }
  else {
    end = end + (bs - end % bs) % bs;
    if (end > next_offset + REQUEST_SIZE)
      end = next_offset + REQUEST_SIZE;
    if (end > size)
      end = size;
    slot = ring_take (ring, next_offset, end - next_offset);
    start_read (slot);
  }
  next_offset += slot->length;
  return true;
}

/* Feed the outer digest from the head of the ring, in offset order, for
 * as long as the head is ready: a zero run at once, a data slot once
 * its thread is done.  A failure stops it: that is the one to report.
 */
static void
retire_in_order (void)
{
  struct slot *slot;
  int r = 0;

  while (!failed && (slot = ring_head (ring)) != NULL) {
    if (slot->kind == STEP_HASH && slot->state == SLOT_BUSY &&
        !pool_finished (&pool, slot))
      return;                   /* its thread is still at it */
    if (slot->state == SLOT_DONE && slot->kind == STEP_ZEROES)
      r = blkhash_feed_zero_blocks (&hash, slot->length / hash.block_size);
    else if (slot->state == SLOT_DONE && slot->kind == STEP_HASH)
      r = blkhash_feed (&hash, digests + slot->index * area_size,
                        blkhash_nr_blocks (&hash, slot->length));
    else if (slot->state != SLOT_FAILED)
      return;                   /* still reading */
    if (r == -1)
      ring_complete (slot, ENOMEM);
    if (slot->state == SLOT_FAILED) {
      failed = true;
      return;
    }
    slot_debug (slot, "hashed");
    ring_retire_head (ring);
  }
}

/* The one prepare callback: hand finished reads to the threads, feed
 * the outer digest and start slots until neither moves (zero runs wake
 * nothing), and let the watcher wait for what the handle now wants.
 */
static void
pump_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
  struct slot *slot;
  unsigned i;

  for (i = 0; i < ring->nr_slots; i++) {
    slot = &ring->slots[i];
    if (slot->state == SLOT_FAILED)
      failed = true;
    else if (slot->state == SLOT_DONE && slot->kind == STEP_READ && !failed) {
      slot->kind = STEP_HASH;
      slot->state = SLOT_BUSY;
      slot_debug (slot, "hash");
      pool_give (&pool, slot);
    }
  }
  do
    retire_in_order ();
  while (!failed && next_offset < size && !ring_full (ring) && start_slot ());

  /* Done, or failed, and no command in flight (threads stop after): before
   * NBD_CMD_DISC, "SHOULD wait until there are no inflight requests".
   */
  if (nbd_aio_in_flight (src.nbd) == 0 &&
      (failed || (next_offset == size && ring->in_use == 0)))
    ev_break (loop, EVBREAK_ALL);
  glue_update (&src);
}

int
main (int argc, char *argv[])
{
  static const struct option options[] = {
    { "verbose", 0, NULL, 'v' }, { "help", 0, NULL, 'h' }, { 0 } };
  bool verbose = false;
  struct ev_loop *loop = EV_DEFAULT;
  char hex[BLKHASH_HEX_SIZE];
  const struct slot *slot;
  struct nbd_handle *nbd;
  ev_prepare pump;
  int c;

  while ((c = getopt_long (argc, argv, "vh", options, NULL)) == 'v')
    verbose = true;
  if (c != -1 || argc - optind != 1) {
    fprintf (c == 'h' ? stdout : stderr, "Usage: checksum-libev [-v] URI\n");
    exit (c == 'h' ? EXIT_SUCCESS : EXIT_FAILURE);
  }

  /* Connect, as in copy-libev, asking for base:allocation too. */
  nbd = nbd_create ();
  if (nbd == NULL ||
      nbd_set_pread_initialize (nbd, false) == -1 ||
      nbd_add_meta_context (nbd, LIBNBD_CONTEXT_BASE_ALLOCATION) == -1 ||
      nbd_connect_uri (nbd, argv[optind]) == -1 ||
      glue_start (&src, loop, nbd) == -1 ||
      extents_init (&map, nbd, argv[optind]) == -1)
    errx (EXIT_FAILURE, "%s: %s", argv[optind], nbd_get_error ());
  size = map.size;
  if (nbd_get_block_size (nbd, LIBNBD_SIZE_MAXIMUM) > 0 &&
      nbd_get_block_size (nbd, LIBNBD_SIZE_MAXIMUM) < REQUEST_SIZE)
    errx (EXIT_FAILURE, "%s: the server's maximum block size is below %d",
          argv[optind], REQUEST_SIZE);

  if (blkhash_init (&hash, BLKHASH_DIGEST, BLKHASH_BLOCK_SIZE) == -1)
    err (EXIT_FAILURE, "%s", BLKHASH_DIGEST);
  ring = ring_new (REQUESTS, REQUEST_SIZE);
  area_size = blkhash_nr_blocks (&hash, REQUEST_SIZE) * hash.md_size;
  digests = malloc (REQUESTS * area_size);
  if (ring == NULL || digests == NULL ||
      pool_start (&pool, loop, pool_default_threads (MAX_THREADS), REQUESTS,
                  &hash_ops, NULL) == -1)
    err (EXIT_FAILURE, "cannot set up the requests and hash threads");
  ring->verbose = verbose;

  ev_prepare_init (&pump, pump_cb);
  ev_prepare_start (loop, &pump);
  ev_run (loop, 0);
  /* Every exit path stops and joins the threads first. */
  pool_stop (&pool);

  if (failed) {
    slot = ring_first_failed (ring);
    if (slot != NULL)
      warnx ("%s failed at offset %" PRIu64 " length %" PRIu64 ": %s%s%s",
             slot->kind == STEP_HASH ? "hashing" : "read", slot->offset,
             slot->length, strerror (slot->error),
             src.error[0] ? "; connection lost: " : "", src.error);
  }
  else if (blkhash_final (&hash, size, hex) == 0)
    printf ("%s  %s\n", hex, argv[optind]);
  else
    failed = true;
  glue_stop (&src);
  nbd_shutdown (nbd, 0);
  nbd_close (nbd);
  extents_free (&map);
  blkhash_free (&hash);
  ring_free (ring);
  free (digests);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
