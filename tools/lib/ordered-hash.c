/* nbd-libev-examples: the block hash of a ring's data.  See ordered-hash.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "ordered-hash.h"
#include "util.h"

/* The hash whose threads may be running, for the exit handler. */
static struct ordered_hash *running;

static unsigned char *
slot_digests (const struct ordered_hash *sh, const struct slot *slot)
{
  return sh->digests + slot->index * sh->area_size;
}

/* What each hash thread has: its own OpenSSL context (contexts are not
 * thread-safe), and the hash it works for.
 */
struct thread {
  EVP_MD_CTX *ctx;
  const struct ordered_hash *sh;
};

static void *
thread_init (void *opaque)
{
  struct thread *t = malloc (sizeof *t);

  if (t == NULL)
    return NULL;
  t->sh = opaque;
  t->ctx = EVP_MD_CTX_new ();
  if (t->ctx == NULL) {
    free (t);
    return NULL;
  }
  return t;
}

/* Hash thread: the digests of a slot's blocks, into its area.  It never
 * touches the ring's other slots, libnbd or the outer digest.
 */
static int
work (void *thread_data, struct slot *slot)
{
  struct thread *t = thread_data;
  int r = blkhash_blocks (&t->sh->hash, t->ctx, slot->buf, slot->length,
                          slot_digests (t->sh, slot));

  /* Before the pool marks the slot done: from then on the loop may
   * retire and reuse it at any moment.
   */
  slot_debug (slot, "hashed");
  return r == 0 ? 0 : ENOMEM;
}

static void
thread_cleanup (void *thread_data)
{
  struct thread *t = thread_data;

  EVP_MD_CTX_free (t->ctx);
  free (t);
}

static const struct pool_ops ops = {
  .thread_init = thread_init,
  .work = work,
  .thread_cleanup = thread_cleanup,
};

/* die () exits from the loop thread while hash threads may be busy:
 * every exit stops and joins them first.
 */
static void
stop_at_exit (void)
{
  if (running)
    pool_stop (&running->pool);
}

bool
ordered_hash_is_digest (const char *name)
{
  EVP_MD *md = EVP_MD_fetch (NULL, name, NULL);

  EVP_MD_free (md);
  return md != NULL;
}

void
ordered_hash_setup (struct blkhash *h, const char *digest,
                    uint64_t block_size)
{
  if (blkhash_init (h, digest, block_size) == 0)
    return;
  if (errno == ENOENT)
    die ("unknown digest '%s'", digest);
  if (errno == EINVAL)
    die ("digest '%s' has no fixed output size", digest);
  die ("digest '%s': %s", digest, strerror (errno));
}

static uint64_t
digests_memory (const struct blkhash *hash, unsigned nr_slots,
                uint64_t request_size)
{
  return nr_slots * blkhash_nr_blocks (hash, request_size) * hash->md_size;
}

void
ordered_hash_bound (const struct blkhash *hash, unsigned requests,
                    uint64_t request_size, unsigned *max_requests,
                    uint64_t *max_size)
{
  while (*max_requests > requests &&
         digests_memory (hash, *max_requests, *max_size) >
         ORDERED_HASH_MAX_MEMORY)
    *max_requests = MAX (*max_requests / 2, requests);
  while (*max_size > request_size &&
         digests_memory (hash, *max_requests, *max_size) >
         ORDERED_HASH_MAX_MEMORY)
    *max_size /= 2;
  ordered_hash_check (hash, *max_requests, *max_size);
}

void
ordered_hash_check (const struct blkhash *hash, unsigned nr_slots,
                    uint64_t request_size)
{
  uint64_t area = blkhash_nr_blocks (hash, request_size) * hash->md_size;

  if (nr_slots * area > ORDERED_HASH_MAX_MEMORY)
    die ("%u requests of %" PRIu64 " bytes in %" PRIu64 "-byte blocks "
         "need %" PRIu64 " MiB for block digests, more than %d MiB; use "
         "larger blocks, or smaller or fewer requests", nr_slots,
         request_size, hash->block_size, nr_slots * area / (1024 * 1024),
         ORDERED_HASH_MAX_MEMORY / (1024 * 1024));
}

void
ordered_hash_start (struct ordered_hash *sh, struct blkhash *h,
                    struct ev_loop *loop, struct ring *ring)
{
  static bool registered;

  memset (sh, 0, sizeof *sh);
  sh->hash = *h;
  sh->area_size = blkhash_nr_blocks (h, ring->buf_size) * h->md_size;
  sh->digests = malloc (ring->nr_slots * sh->area_size);
  if (sh->digests == NULL)
    die ("cannot allocate %zu bytes for block digests: %s",
         ring->nr_slots * sh->area_size, strerror (errno));
  /* Registered after OpenSSL set up its own exit handler, so it runs
   * before it.
   */
  if (!registered) {
    atexit (stop_at_exit);
    registered = true;
  }
  running = sh;
  if (pool_start (&sh->pool, loop,
                  pool_default_threads (ORDERED_HASH_MAX_THREADS),
                  ring->nr_slots, &ops, sh) == -1)
    die ("cannot start the hash threads: %s", strerror (errno));
  debug ("%u hash threads", sh->pool.nr_threads);
}

void
ordered_hash_give (struct ordered_hash *sh, struct slot *slot)
{
  pool_give (&sh->pool, slot);
}

bool
ordered_hash_done (struct ordered_hash *sh, struct slot *slot)
{
  return pool_finished (&sh->pool, slot);
}

/* Keep the start of each digest of a slot fed, with its block number. */
static void
record (struct ordered_hash *sh, const struct slot *slot)
{
  uint64_t i, n = blkhash_nr_blocks (&sh->hash, slot->length);
  uint64_t first = sh->bytes_fed / sh->hash.block_size;
  const unsigned char *d = slot_digests (sh, slot);
  struct ordered_hash_entry *v;
  size_t alloc;

  if (sh->record_full)
    return;
  if (sh->record_len + n > ORDERED_HASH_MAX_RECORD) {
    debug ("more than %d data blocks: the record of digests stops",
           ORDERED_HASH_MAX_RECORD);
    sh->record_full = true;
    return;
  }
  if (sh->record_len + n > sh->record_alloc) {
    alloc = MAX (sh->record_alloc * 2, sh->record_len + n);
    v = realloc (sh->record, alloc * sizeof *v);
    if (v == NULL) {
      sh->record_full = true;   /* the digest itself is still right */
      return;
    }
    sh->record = v;
    sh->record_alloc = alloc;
  }
  for (i = 0; i < n; i++, d += sh->hash.md_size) {
    v = &sh->record[sh->record_len++];
    v->block = first + i;
    memcpy (&v->prefix, d, MIN (sh->hash.md_size, sizeof v->prefix));
  }
}

void
ordered_hash_feed (struct ordered_hash *sh, const struct slot *slot)
{
  if (sh->recording)
    record (sh, slot);
  if (blkhash_feed (&sh->hash, slot_digests (sh, slot),
                    blkhash_nr_blocks (&sh->hash, slot->length)) == -1)
    die ("digest update failed");
  sh->bytes_fed += slot->length;
}

void
ordered_hash_feed_zeroes (struct ordered_hash *sh, uint64_t length)
{
  if (blkhash_feed_zero_blocks (&sh->hash,
                                length / sh->hash.block_size) == -1)
    die ("digest update failed");
  sh->bytes_fed += length;
}

void
ordered_hash_record (struct ordered_hash *sh)
{
  sh->recording = true;
}

/* The prefix of block number block in a record, from index *i on (the
 * blocks are in order, so the walk never goes back): a block that is
 * not there is a zero block.
 */
static uint64_t
prefix_at (const struct ordered_hash *sh, size_t *i, uint64_t block)
{
  uint64_t zero = 0;

  while (*i < sh->record_len && sh->record[*i].block < block)
    (*i)++;
  if (*i < sh->record_len && sh->record[*i].block == block)
    return sh->record[*i].prefix;
  memcpy (&zero, sh->hash.zero_digest,
          MIN (sh->hash.md_size, sizeof zero));
  return zero;
}

int64_t
ordered_hash_first_difference (const struct ordered_hash *a,
                               const struct ordered_hash *b)
{
  size_t i = 0, j = 0, ia = 0, ib = 0;
  uint64_t block;

  if (!a->recording || !b->recording || a->record_full || b->record_full)
    return -1;
  /* Only blocks that are data in one record or the other can differ. */
  while (i < a->record_len || j < b->record_len) {
    if (j >= b->record_len ||
        (i < a->record_len && a->record[i].block <= b->record[j].block))
      block = a->record[i++].block;
    else
      block = b->record[j++].block;
    if (prefix_at (a, &ia, block) != prefix_at (b, &ib, block))
      return block * a->hash.block_size;
  }
  return -1;
}

void
ordered_hash_final (struct ordered_hash *sh, uint64_t size, char *hex)
{
  pool_stop (&sh->pool);
  if (blkhash_final (&sh->hash, size, hex) == -1)
    die ("digest final failed");
}

void
ordered_hash_free (struct ordered_hash *sh)
{
  pool_stop (&sh->pool);
  if (running == sh)
    running = NULL;
  blkhash_free (&sh->hash);
  free (sh->digests);
  free (sh->record);
  sh->digests = NULL;
  sh->record = NULL;
}
