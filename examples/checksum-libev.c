/* checksum-libev: the block hash of an NBD image, from one libev loop.
 *
 * It prints the digest that blksum (blkhash 0.10 and later) and
 * nbdcopy --blkhash compute:
 *
 *   digest = H (H (block_0) || H (block_1) || ... || le64 (image size))
 *
 * with blocks of 64 KiB at absolute offsets, the last one hashed at its
 * real length.  What it shows:
 *
 *  - The in-order consumer of liburing's examples on top of the common
 *    request ring (RING_IN_ORDER): REQUESTS reads are in flight and
 *    complete in any order, but the hash is fed strictly in offset order
 *    as slots retire from the head of the ring.
 *
 *  - A pool of hash threads beside the loop.  The loop thread does all
 *    the I/O (hashing there stalled the reads: the server stops sending
 *    while a Unix socket's ~200 KiB buffer is full) and queues slots
 *    whose data is ready, in offset order.  Any hash thread takes any
 *    queued slot and writes the digests of its blocks into that slot's
 *    own digest area, so slots may finish hashing out of order.
 *    The loop feeds the outer digest, which is cheap (32 bytes per 64 KiB
 *    block), strictly in offset order: only while the head of the ring
 *    is fully hashed.  SHA-256 costs about 0.6 s of CPU per GiB, more
 *    than the server and the loop need together, so one hash thread was
 *    the bottleneck; the inner digests are independent, the outer one is
 *    not, which is what splits the work.
 *
 *  - Reading less: block status (common/extents.c) says which ranges
 *    read as zeroes.  Whole zero blocks are hashed without any I/O, as
 *    copies of H (zero block) computed once, so a 1 TiB hole costs 16 Mi
 *    digests fed to the outer hash and no reads at all.
 *
 *  - nbd_set_pread_initialize(false): libnbd need not clear each read
 *    buffer first.  Safe because a buffer is hashed only after its read
 *    succeeded; a failed read ends the program.
 *
 * Run it against a captive server:
 *
 *   nbdkit -U - data '"hello"' --run './checksum-libev "$uri"'
 *
 * which prints 337355feb53a5309d5aba92796223c2c84ffab930e706c01fef573a2722545e6,
 * the value blkhash publishes for that image.  Build it on its own from
 * the repository root:
 *
 *   cc -O2 -Icommon examples/checksum-libev.c common/connect.c \
 *     common/extents.c common/nbd-ev.c common/options.c common/ring.c \
 *     common/util.c \
 *     -o checksum-libev -pthread -lnbd -lev -lcrypto
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <libnbd.h>

#include <ev.h>

#include "conn.h"
#include "connect.h"
#include "extents.h"
#include "options.h"
#include "ring.h"
#include "util.h"

/* Reads in flight.  Enough to keep every hash thread busy with one slot
 * while the next few are read; more only add memory, as the hashing,
 * not the server, is the bottleneck.
 */
#define CHECKSUM_REQUESTS 8

/* Bytes per read: DEFAULT_REQUEST_SIZE (common/options.h), 1 MiB.  It is
 * also the unit of work of a hash thread: 16 blocks, about half a
 * millisecond of SHA-256, so handing slots over costs next to nothing.
 */

/* The block size and digest of blkhash; both must match to compare
 * digests with blksum.
 */
#define DEFAULT_BLOCK_SIZE (64 * 1024)
#define DEFAULT_DIGEST "sha256"

/* Hash threads: one per online CPU, at most this many.  More threads
 * hash more blocks at once, but each competes for a CPU with the server
 * (when it runs on the same machine) and the loop thread; past four, one
 * connection cannot deliver data as fast as they hash it (SHA-256 with
 * SHA-NI does about 1.8 GB/s per core), so more would only sit idle.
 */
#define MAX_HASH_THREADS 4

/* A zero run is hashed by feeding this many copies of the zero-block
 * digest per EVP_DigestUpdate (64 KiB for SHA-256): large updates keep
 * the per-call overhead negligible, so a 1 TiB hole hashes in well
 * under a second.
 */
#define ZERO_RUN_DIGESTS 2048

/* Longest zero run in one slot.  The loop thread feeds zero runs to the
 * outer digest itself (there is nothing for a hash thread to compute),
 * and the cap keeps each such stall of the I/O short: 65536 digests,
 * about a millisecond.  Block status without 64-bit lengths never
 * reports more than this anyway.
 */
#define MAX_ZERO_RUN (UINT64_C (1) << 32)

/* What a slot covers, kept in slot->kind. */
enum slot_kind { KIND_DATA, KIND_ZERO };

/* The block hash: an outer digest fed with one inner digest per block.
 * Only the loop thread touches outer; the hash threads compute inner
 * digests with contexts of their own and read the rest, which is set
 * before they start and never changes.
 */
struct block_hash {
  EVP_MD *md;
  size_t md_size;
  uint64_t block_size;
  EVP_MD_CTX *outer;            /* the digest of digests */
  unsigned char zero_digest[EVP_MAX_MD_SIZE]; /* H (block_size zeroes) */
  unsigned char *zero_run;      /* ZERO_RUN_DIGESTS copies of zero_digest */
  unsigned char *digests;       /* one area per slot, see slot_digests */
  size_t area_size;             /* bytes per area */
};

struct hash_pool;

/* One hash thread.  EVP contexts are not thread-safe, so each thread
 * has its own for the block digests.
 */
struct hash_worker {
  struct hash_pool *pool;
  unsigned id;                  /* for debug output */
  pthread_t thread;
  EVP_MD_CTX *inner;
};

/* The hash threads and their queue.  The loop thread owns the ring; it
 * appends slots whose data is ready and any worker takes the oldest.  A
 * worker marks the slot SLOT_DONE under the lock when its digests are
 * written, and the loop reads the state of a queued slot only under the
 * lock: the mutex orders the read's data before the worker hashes it,
 * and the digests before the loop feeds them to the outer digest.
 */
struct hash_pool {
  pthread_mutex_t lock;
  pthread_cond_t cond;          /* signalled: a slot queued, or quit */
  struct slot **queue;          /* circular, room for every slot */
  unsigned size, first, len;
  bool quit;
  unsigned nr_workers;
  struct hash_worker workers[MAX_HASH_THREADS];
  struct ev_loop *loop;
  ev_async wake;                /* sent by a worker after each slot */
};

static struct conn src;
static struct ring *ring;
static struct extent_map map;
static struct block_hash hash;
static struct hash_pool pool = {
  .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
};
static uint64_t size;           /* the export size */
static uint64_t request_size;
static uint64_t next_offset;    /* where the next slot starts */
static uint64_t bytes_hashed;   /* everything before this is in the hash */
static uint64_t nr_passed;      /* slots queued for hashing or skipped */
static struct progress progress;

/* OpenSSL's digest calls fail only when out of memory or misused, but a
 * digest that silently skipped data would be worse than useless.
 */
static void
check_evp (int r, const char *what)
{
  if (r != 1)
    die ("%s failed", what);
}

/* With -v, both threads print slot lines, and debug () writes each line
 * in several stdio calls; holding the stream's lock keeps the lines
 * whole.  (The lock is recursive, so the calls inside still take it.)
 */
static void
trace (const struct slot *slot, const char *event)
{
  if (!verbose)
    return;
  flockfile (stderr);
  slot_debug (slot, event);
  funlockfile (stderr);
}

/* Set up the hash.  The zero-block digest is computed once here, from a
 * real block of zeroes, so that it cannot disagree with a data block
 * that happens to be all zero.
 */
static void
hash_init (struct block_hash *h, const char *name, uint64_t block_size)
{
  unsigned char *zeroes;
  size_t i;

  h->md = EVP_MD_fetch (NULL, name, NULL);
  if (h->md == NULL)
    die ("unknown digest '%s'", name);
  h->md_size = EVP_MD_get_size (h->md);
  /* Extendable-output functions such as SHAKE have no fixed size (OpenSSL
   * 3 gives them a default one, which no other tool would agree on).
   */
  if ((EVP_MD_get_flags (h->md) & EVP_MD_FLAG_XOF) != 0 ||
      h->md_size == 0 || h->md_size > EVP_MAX_MD_SIZE)
    die ("digest '%s' has no fixed output size", name);
  h->block_size = block_size;
  h->outer = EVP_MD_CTX_new ();
  zeroes = calloc (1, block_size);
  h->zero_run = malloc (ZERO_RUN_DIGESTS * h->md_size);
  if (h->outer == NULL || zeroes == NULL || h->zero_run == NULL)
    die ("%s", strerror (ENOMEM));
  check_evp (EVP_DigestInit_ex2 (h->outer, h->md, NULL), "digest init");
  check_evp (EVP_Digest (zeroes, block_size, h->zero_digest, NULL,
                         h->md, NULL), "digest");
  free (zeroes);
  for (i = 0; i < ZERO_RUN_DIGESTS; i++)
    memcpy (h->zero_run + i * h->md_size, h->zero_digest, h->md_size);
}

/* Give each slot a digest area, allocated once: room for the digests of
 * a full request's blocks (the request size is a multiple of the block
 * size, and a shorter read has fewer blocks).  Per slot, not per worker,
 * so that a slot's digests wait there, however long, until the slots
 * before it are hashed too.
 */
static void
hash_alloc_areas (struct block_hash *h, unsigned nr_slots, uint64_t req_size)
{
  h->area_size = req_size / h->block_size * h->md_size;
  h->digests = malloc (nr_slots * h->area_size);
  if (h->digests == NULL)
    die ("%s", strerror (ENOMEM));
}

static void
hash_free (struct block_hash *h)
{
  EVP_MD_CTX_free (h->outer);
  EVP_MD_free (h->md);
  free (h->zero_run);
  free (h->digests);
}

/* The digest area of a data slot. */
static unsigned char *
slot_digests (const struct slot *slot)
{
  return hash.digests + slot->index * hash.area_size;
}

/* How many blocks a slot covers; the last one may be short. */
static uint64_t
slot_blocks (const struct slot *slot)
{
  return round_up (slot->length, hash.block_size) / hash.block_size;
}

/* Compute the digest of one block into md.  A full block of zeroes takes
 * the precomputed digest: checking costs far less than hashing.  A short
 * last block is always hashed, since H of fewer zeroes is a different
 * digest.
 */
static void
hash_block (const struct block_hash *h, EVP_MD_CTX *ctx,
            const void *buf, size_t len, unsigned char *md)
{
  if (len == h->block_size && is_zero (buf, len)) {
    memcpy (md, h->zero_digest, h->md_size);
    return;
  }
  check_evp (EVP_DigestInit_ex2 (ctx, h->md, NULL), "digest init");
  check_evp (EVP_DigestUpdate (ctx, buf, len), "digest update");
  check_evp (EVP_DigestFinal_ex (ctx, md, NULL), "digest final");
}

/* Hash thread: the digests of a data slot's blocks, into its area. */
static void
hash_slot (const struct block_hash *h, EVP_MD_CTX *ctx,
           const struct slot *slot)
{
  const unsigned char *buf = slot->buf;
  unsigned char *md = slot_digests (slot);
  uint64_t i, n;

  for (i = 0; i < slot->length; i += n) {
    n = MIN (h->block_size, slot->length - i);
    hash_block (h, ctx, buf + i, n, md);
    md += h->md_size;
  }
}

/* Loop thread: feed a hashed data slot's block digests to the outer
 * digest, all in one update.
 */
static void
hash_feed_slot (struct block_hash *h, const struct slot *slot)
{
  check_evp (EVP_DigestUpdate (h->outer, slot_digests (slot),
                               slot_blocks (slot) * h->md_size),
             "digest update");
}

/* Loop thread: feed nr_blocks whole zero blocks without touching any
 * data.
 */
static void
hash_zero_blocks (struct block_hash *h, uint64_t nr_blocks)
{
  uint64_t n;

  for (; nr_blocks > 0; nr_blocks -= n) {
    n = MIN (nr_blocks, (uint64_t) ZERO_RUN_DIGESTS);
    check_evp (EVP_DigestUpdate (h->outer, h->zero_run, n * h->md_size),
               "digest update");
  }
}

/* Finish: the image size, little-endian, then the outer digest in hex.
 * The size is what makes an image differ from the same image with a few
 * more zero bytes on the end.
 */
static void
hash_final (struct block_hash *h, uint64_t image_size, char *hex)
{
  unsigned char le[8], md[EVP_MAX_MD_SIZE];
  size_t i;

  for (i = 0; i < 8; i++)
    le[i] = image_size >> (8 * i);
  check_evp (EVP_DigestUpdate (h->outer, le, sizeof le), "digest update");
  check_evp (EVP_DigestFinal_ex (h->outer, md, NULL), "digest final");
  for (i = 0; i < h->md_size; i++)
    sprintf (hex + 2 * i, "%02x", md[i]);
}

/* Completion callbacks run inside libnbd while it holds the handle's
 * lock, so they must not start new commands on that handle.  This one
 * only records the result (ring_complete looks at *error first); the
 * prepare watcher (pump_cb) queues the slot for hashing in its turn.
 * Returning 1 retires the command.
 */
static int
read_done (void *user_data, int *error)
{
  ring_complete (user_data, *error, SLOT_READ_DONE);
  return 1;
}

static void
start_read (uint64_t offset, uint64_t length)
{
  struct slot *slot = ring_take (ring, offset, length);
  nbd_completion_callback cb = { .callback = read_done, .user_data = slot };

  slot->kind = KIND_DATA;
  trace (slot, "read");
  if (nbd_aio_pread (src.nbd, slot->buf, length, offset, cb, 0) == -1)
    die ("read at offset %" PRIu64 " length %" PRIu64 ": %s",
         offset, length, nbd_get_error ());
}

/* A zero run needs no I/O: the slot is done the moment it is taken.  It
 * still goes through the ring so that it is hashed in its turn, after
 * every read before it.
 */
static void
start_zero_run (uint64_t offset, uint64_t length)
{
  struct slot *slot = ring_take (ring, offset, length);

  slot->kind = KIND_ZERO;
  slot->state = SLOT_READ_DONE;
  trace (slot, "zero run");
}

/* True if the extent holds at least one whole block of zeroes. */
static bool
has_zero_block (const struct extent *e)
{
  uint64_t start = round_up (e->offset, hash.block_size);

  return e->zero && start + hash.block_size <= e->offset + e->length;
}

/* Where a read that starts at offset (a block boundary) should end: over
 * data extents, and over zero extents too short to hold a whole block,
 * up to the next request boundary.  It stops at the first whole zero
 * block, which is hashed without reading.  Request boundaries are at
 * absolute multiples of the request size, so blocks never straddle two
 * reads.
 */
static uint64_t
read_end (uint64_t offset)
{
  uint64_t limit = MIN (round_down (offset, request_size) + request_size,
                        size);
  uint64_t end = offset;
  struct extent e;

  while (end < limit && extents_next (&map, end, limit - end, &e)) {
    if (has_zero_block (&e)) {
      end = round_up (e.offset, hash.block_size);
      break;
    }
    end = e.offset + e.length;
  }
  /* Partial blocks at either end of a zero extent are read as data. */
  return MIN (round_up (end, hash.block_size), limit);
}

/* Fill idle slots: zero runs where block status says whole blocks read
 * as zeroes, reads everywhere else.
 */
static void
start_slots (void)
{
  uint64_t ahead = ring->nr_slots * request_size;
  struct extent e;
  uint64_t end;

  while (next_offset < size && !ring_full (ring)) {
    /* Block status asks for a window of up to 4 GiB at a time, with one
     * command in flight; until the map reaches next_offset, wait for it.
     */
    extents_pump (&map, next_offset, ahead);
    if (!extents_next (&map, next_offset, size - next_offset, &e))
      break;
    if (has_zero_block (&e)) {
      /* next_offset is a block boundary, so the run starts there. */
      end = round_down (e.offset + MIN (e.length, MAX_ZERO_RUN),
                        hash.block_size);
      start_zero_run (next_offset, end - next_offset);
    }
    else {
      end = read_end (next_offset);
      start_read (next_offset, end - next_offset);
    }
    next_offset = end;
  }
  /* Also when the ring is full: the next window arrives while the reads
   * are in flight.
   */
  extents_pump (&map, next_offset, ahead);
}

/* Hash thread: wait for the oldest queued slot and take it, or return
 * NULL when told to quit with nothing left to hash.
 */
static struct slot *
pool_take (struct hash_pool *p)
{
  struct slot *slot = NULL;

  pthread_mutex_lock (&p->lock);
  while (p->len == 0 && !p->quit)
    pthread_cond_wait (&p->cond, &p->lock);
  if (p->len > 0) {
    slot = p->queue[p->first];
    p->first = (p->first + 1) % p->size;
    p->len--;
  }
  pthread_mutex_unlock (&p->lock);
  return slot;
}

/* Hash thread: mark the slot hashed and wake the loop, which feeds the
 * outer digest when the slot reaches the head of the ring.
 */
static void
pool_finish (struct hash_pool *p, struct slot *slot)
{
  pthread_mutex_lock (&p->lock);
  ring_complete (slot, 0, SLOT_DONE);
  pthread_mutex_unlock (&p->lock);
  ev_async_send (p->loop, &p->wake);
}

/* A hash thread: hash whichever slot is queued next, whatever its
 * offset.  It never touches the ring, libnbd or the outer digest.
 */
static void *
worker_main (void *arg)
{
  struct hash_worker *w = arg;
  struct slot *slot;
  char event[32];

  snprintf (event, sizeof event, "hashed w%u", w->id);
  while ((slot = pool_take (w->pool)) != NULL) {
    hash_slot (&hash, w->inner, slot);
    /* Before pool_finish: once the slot is done, the loop may retire and
     * reuse it at any moment.
     */
    trace (slot, event);
    pool_finish (w->pool, slot);
  }
  return NULL;
}

/* Loop thread: queue a slot for hashing. */
static void
pool_give (struct hash_pool *p, struct slot *slot)
{
  pthread_mutex_lock (&p->lock);
  p->queue[(p->first + p->len) % p->size] = slot;
  p->len++;
  pthread_cond_signal (&p->cond);
  pthread_mutex_unlock (&p->lock);
}

/* Loop thread: true if a worker has finished the slot.  Only under the
 * lock, which also makes the worker's digests visible here.
 */
static bool
pool_finished (struct hash_pool *p, const struct slot *slot)
{
  bool done;

  pthread_mutex_lock (&p->lock);
  done = slot->state == SLOT_DONE;
  pthread_mutex_unlock (&p->lock);
  return done;
}

/* Nothing to do here: the wake-up itself is the point, since pump_cb
 * runs before the loop blocks again.
 */
static void
wake_cb (struct ev_loop *loop, ev_async *w, int revents)
{
}

/* One worker per online CPU, at least one and at most MAX_HASH_THREADS. */
static unsigned
nr_hash_threads (void)
{
  long n = sysconf (_SC_NPROCESSORS_ONLN);

  if (n < 1)
    return 1;
  if (n > MAX_HASH_THREADS)
    return MAX_HASH_THREADS;
  return n;
}

static void
pool_start (struct hash_pool *p, struct ev_loop *loop, unsigned nr_slots)
{
  struct hash_worker *w;
  unsigned i;
  int r;

  p->queue = calloc (nr_slots, sizeof *p->queue);
  if (p->queue == NULL)
    die ("%s", strerror (errno));
  p->size = nr_slots;
  p->loop = loop;
  ev_async_init (&p->wake, wake_cb);
  ev_async_start (loop, &p->wake);

  p->nr_workers = nr_hash_threads ();
  debug ("%u hash threads", p->nr_workers);
  for (i = 0; i < p->nr_workers; i++) {
    w = &p->workers[i];
    w->pool = p;
    w->id = i;
    w->inner = EVP_MD_CTX_new ();
    if (w->inner == NULL)
      die ("%s", strerror (ENOMEM));
    r = pthread_create (&w->thread, NULL, worker_main, w);
    if (r != 0)
      die ("cannot start hash thread %u: %s", i, strerror (r));
  }
}

/* Let the workers finish what is queued, then join them. */
static void
pool_stop (struct hash_pool *p)
{
  unsigned i;

  pthread_mutex_lock (&p->lock);
  p->quit = true;
  pthread_cond_broadcast (&p->cond);
  pthread_mutex_unlock (&p->lock);
  for (i = 0; i < p->nr_workers; i++) {
    pthread_join (p->workers[i].thread, NULL);
    EVP_MD_CTX_free (p->workers[i].inner);
  }
  ev_async_stop (p->loop, &p->wake);
  free (p->queue);
}

/* A failed read ends the program before its buffer is hashed: with
 * pread_initialize off it holds whatever the previous read left.
 */
static void __attribute__ ((noreturn))
slot_failed (const struct slot *slot)
{
  trace (slot, "failed");
  die ("read failed at offset %" PRIu64 " length %" PRIu64 ": %s",
       slot->offset, slot->length, strerror (slot->error));
}

/* Hand slots on in issue order, which is offset order, for as long as
 * the next one's data is ready: data slots to the pool (SLOT_WRITING,
 * the ring's second step, here means "being hashed"), while zero runs
 * need no hashing and stay as they are.  A slot that finished reading
 * early waits for the ones before it; failures are noticed in the same
 * order, so the error reported is the first in offset order.  Queueing
 * out of order would only help while the head's read is late, and with
 * hashing the bottleneck there is nearly always a backlog to hash.
 */
static void
queue_ready (void)
{
  struct slot *slot;

  /* Sequence numbers are issue order; ring_at finds each slot. */
  while (nr_passed < ring->next_seq) {
    slot = ring_at (ring, nr_passed);
    if (slot->state == SLOT_FAILED)
      slot_failed (slot);
    if (slot->state != SLOT_READ_DONE)
      break;
    if (slot->kind == KIND_DATA) {
      slot->state = SLOT_HASHING;
      trace (slot, "hashing");
      pool_give (&pool, slot);
    }
    nr_passed++;
  }
}

/* True if everything the outer digest needs from the slot is there: a
 * data slot's block digests, once a worker has finished it; a zero run
 * has nothing to compute.
 */
static bool
slot_hashed (const struct slot *slot)
{
  if (slot->kind == KIND_ZERO)
    return slot->state == SLOT_READ_DONE;
  return pool_finished (&pool, slot);
}

/* The in-order consumer: while the head of the ring is hashed, feed its
 * digests to the outer digest and retire it.  Slots behind the head may
 * be hashed already; they wait their turn.  Returns how many retired.
 */
static unsigned
retire_hashed (void)
{
  struct slot *slot;
  unsigned n = 0;

  while ((slot = ring_head (ring)) != NULL && slot_hashed (slot)) {
    if (slot->kind == KIND_ZERO)
      hash_zero_blocks (&hash, slot->length / hash.block_size);
    else
      hash_feed_slot (&hash, slot);
    trace (slot, "retired");
    bytes_hashed += slot->length;
    progress_update (&progress, bytes_hashed);
    ring_retire_head (ring);
    n++;
  }
  return n;
}

/* The heart of the program, run before the loop blocks each time: refill
 * the ring, queue what is ready, retire what is hashed, and go round
 * again while retiring freed slots.  Zero runs are hashed the moment
 * they are taken and nothing else would wake the loop for them, so a
 * ring full of zero runs must be drained here.  A worker's ev_async
 * brings the loop back after each data slot.
 */
static void
pump_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
  do {
    start_slots ();
    queue_ready ();
  } while (retire_hashed () > 0);

  if (bytes_hashed == size)
    ev_break (loop, EVBREAK_ALL);
  conn_update (&src);
}

static void __attribute__ ((noreturn))
usage (FILE *fp, int status)
{
  fprintf (fp,
"Usage: %s [OPTIONS] URI\n"
"Print the block hash of an NBD image, as blksum and nbdcopy --blkhash\n"
"compute it: the digest of the digests of its blocks and its size.\n"
"The URI is as libnbd accepts it, for example nbd://host/export or\n"
"nbd+unix:///?socket=/path.\n"
"\n"
"Options:\n"
"  --digest=NAME       md5, sha1, sha256 (default), sha512, or any other\n"
"                      fixed-size digest OpenSSL knows\n"
"  --block-size=SIZE   bytes per hashed block, a power of two up to 32M\n"
"                      (default 64k, as blkhash)\n"
"  --requests=N        requests in flight, reads and zero runs\n"
"                      (1-%d, default %d)\n"
"  --request-size=SIZE bytes per read, a multiple of the block size\n"
"                      (%d to %dM, default 1M or the block size if larger);\n"
"                      suffixes k, M, G are powers of 1024\n"
"  --socket-buffer=SIZE\n"
"                      set SO_SNDBUF and SO_RCVBUF of the socket\n"
"                      (nbd:// and nbd+unix:// URIs only)\n"
"  --progress          show progress on stderr\n"
"  -v, --verbose       print one line per request event, with timings\n"
"  -h, --help          show this help and exit\n"
"  -V, --version       show the version and exit\n",
           progname, MAX_REQUESTS, CHECKSUM_REQUESTS,
           MIN_REQUEST_SIZE, MAX_REQUEST_SIZE / (1024 * 1024));
  exit (status);
}

/* Parse --block-size and --request-size and check them together: every
 * read must hold whole blocks, or a block would straddle two reads.
 */
static void
parse_sizes (const char *bs_arg, const char *rs_arg,
             uint64_t *block_size, uint64_t *req_size)
{
  *block_size = DEFAULT_BLOCK_SIZE;
  if (bs_arg) {
    if (parse_size (bs_arg, block_size) == -1)
      die ("--block-size: '%s' is not a size: %s", bs_arg, strerror (errno));
    if (!is_power_of_2 (*block_size) || *block_size > MAX_REQUEST_SIZE)
      die ("--block-size: %s is not a power of two up to %d MiB",
           bs_arg, MAX_REQUEST_SIZE / (1024 * 1024));
  }
  *req_size = MAX ((uint64_t) DEFAULT_REQUEST_SIZE, *block_size);
  if (rs_arg) {
    *req_size = option_request_size (rs_arg);
    if (*req_size % *block_size != 0)
      die ("--request-size: %s is not a multiple of the block size (%"
           PRIu64 " bytes)", rs_arg, *block_size);
  }
}

int
main (int argc, char *argv[])
{
  enum { OPT_DIGEST = 256, OPT_BLOCK_SIZE, OPT_REQUESTS, OPT_REQUEST_SIZE,
         OPT_PROGRESS, OPT_SOCKET_BUFFER };
  static const struct option long_options[] = {
    { "digest",       required_argument, NULL, OPT_DIGEST },
    { "block-size",   required_argument, NULL, OPT_BLOCK_SIZE },
    { "requests",     required_argument, NULL, OPT_REQUESTS },
    { "request-size", required_argument, NULL, OPT_REQUEST_SIZE },
    { "progress",     no_argument,       NULL, OPT_PROGRESS },
    { "socket-buffer", required_argument, NULL, OPT_SOCKET_BUFFER },
    { "verbose",      no_argument,       NULL, 'v' },
    { "help",         no_argument,       NULL, 'h' },
    { "version",      no_argument,       NULL, 'V' },
    { NULL }
  };
  const char *digest = DEFAULT_DIGEST;
  const char *bs_arg = NULL, *rs_arg = NULL;
  unsigned requests = CHECKSUM_REQUESTS;
  uint64_t block_size;
  /* Block status is what lets zero runs go unread. */
  struct connect_options opts = {
    .pread_initialize = false, .want_extents = true,
  };
  bool show_progress = false;
  char hex[2 * EVP_MAX_MD_SIZE + 1];
  ev_prepare pump;
  struct ev_loop *loop;
  const char *uri;
  int c;

  set_progname (argv[0]);
  while ((c = getopt_long (argc, argv, ":vhV", long_options, NULL)) != -1) {
    switch (c) {
    case OPT_DIGEST:
      digest = optarg;
      break;
    case OPT_BLOCK_SIZE:
      bs_arg = optarg;
      break;
    case OPT_REQUESTS:
      requests = option_requests (optarg);
      break;
    case OPT_REQUEST_SIZE:
      rs_arg = optarg;
      break;
    case OPT_SOCKET_BUFFER:
      opts.socket_buffer = option_socket_buffer (optarg);
      break;
    case OPT_PROGRESS:
      show_progress = true;
      break;
    case 'v':
      verbose = true;
      break;
    case 'h':
      usage (stdout, EXIT_SUCCESS);
    case 'V':
      option_version ();
    default:
      /* A long option always uses up its argv element, so the one that
       * getopt rejected is the last one it stepped over.
       */
      option_error (c, argv[optind - 1], long_options);
    }
  }
  if (argc - optind != 1) {
    fprintf (stderr, "%s: expected one URI; try --help\n", progname);
    exit (EXIT_FAILURE);
  }
  uri = argv[optind];

  /* Check every option before connecting, so that a typo is reported
   * as such and not hidden behind a connection error.
   */
  parse_sizes (bs_arg, rs_arg, &block_size, &request_size);
  hash_init (&hash, digest, block_size);

  src.nbd = connect_uri (uri, "source", &opts);
  check_request_size (src.nbd, "source", request_size);
  size = export_size (src.nbd, "source");
  extents_init (&map, src.nbd, "source");

  ring = ring_new (requests, request_size, RING_IN_ORDER);
  if (ring == NULL)
    die ("cannot allocate %u requests of %" PRIu64 " bytes: %s",
         requests, request_size, strerror (errno));
  debug ("hashing %" PRIu64 " bytes with %s, %" PRIu64 "-byte blocks, "
         "%u requests of %" PRIu64 " bytes", size, digest, block_size,
         requests, request_size);

  loop = EV_DEFAULT;
  conn_start (&src, loop, "source");
  ev_prepare_init (&pump, pump_cb);
  ev_prepare_start (loop, &pump);

  hash_alloc_areas (&hash, requests, request_size);
  pool_start (&pool, loop, requests);

  progress_init (&progress, show_progress, size);
  ev_run (loop, 0);
  progress_done (&progress, bytes_hashed);

  pool_stop (&pool);
  ev_prepare_stop (loop, &pump);
  conn_stop (&src);
  hash_final (&hash, size, hex);
  debug ("%" PRIu64 " block-status commands", map.commands);
  printf ("%s  %s\n", hex, uri);

  nbd_shutdown (src.nbd, 0);
  nbd_close (src.nbd);
  extents_free (&map);
  ring_free (ring);
  hash_free (&hash);
  return EXIT_SUCCESS;
}
