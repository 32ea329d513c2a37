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
 *  - Hashing on a second thread: the loop thread does all the I/O and
 *    queues slots whose data is ready, in offset order; a hash thread
 *    hashes them and wakes the loop with an ev_async so that it retires
 *    them from the head.  Hashing in the loop stalled the reads (the
 *    server stops sending while a Unix socket's ~200 KiB buffer is full),
 *    and SHA-256 alone costs about 0.6 s of CPU per GiB.
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

#include <openssl/evp.h>

#include <libnbd.h>

#include <ev.h>

#include "connect.h"
#include "extents.h"
#include "nbd-ev.h"
#include "options.h"
#include "ring.h"
#include "util.h"

/* Reads in flight.  Hashing, not the server, is the bottleneck here, so
 * a few requests are enough to keep data ready whenever the hash wants
 * it; more only add memory.
 */
#define DEFAULT_REQUESTS 8

/* Bytes per read.  1 MiB keeps the number of commands (and callbacks)
 * low without leaving the pipeline empty while one huge read arrives.
 */
#define DEFAULT_REQUEST_SIZE (1024 * 1024)

/* The block size and digest of blkhash; both must match to compare
 * digests with blksum.
 */
#define DEFAULT_BLOCK_SIZE (64 * 1024)
#define DEFAULT_DIGEST "sha256"

/* A zero run is hashed by feeding this many copies of the zero-block
 * digest per EVP_DigestUpdate (64 KiB for SHA-256): large updates keep
 * the per-call overhead negligible, so a 1 TiB hole hashes in well
 * under a second.
 */
#define ZERO_RUN_DIGESTS 2048

/* Longest zero run in one slot.  Runs are hashed on the hash thread, so
 * even a long one never blocks the loop; the cap only keeps each
 * hand-over short (65536 digests, about a millisecond) so that reads
 * behind a hole are hashed soon after they arrive.  Block status without
 * 64-bit lengths never reports more than this anyway.
 */
#define MAX_ZERO_RUN (UINT64_C (1) << 32)

/* What a slot covers, kept in slot->kind. */
enum slot_kind { KIND_DATA, KIND_ZERO };

/* The block hash: an outer digest fed with one inner digest per block. */
struct block_hash {
  EVP_MD *md;
  size_t md_size;
  uint64_t block_size;
  EVP_MD_CTX *outer;            /* the digest of digests */
  EVP_MD_CTX *inner;            /* reused for every block */
  unsigned char zero_digest[EVP_MAX_MD_SIZE]; /* H (block_size zeroes) */
  unsigned char *zero_run;      /* ZERO_RUN_DIGESTS copies of zero_digest */
};

/* The hash thread's queue, the only state both threads touch.  The
 * loop thread owns the ring and every slot's state; it appends slots
 * whose data is ready, strictly in offset order, and the thread hashes
 * them in the order queued, counting each one it finishes.  The mutex
 * orders everything the loop wrote to a slot (the read's data, its
 * offset and length) before the thread reads it.
 */
struct hash_thread {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;          /* signalled: a slot queued, or quit */
  struct slot **queue;          /* circular, room for every slot */
  unsigned size, first, len;
  unsigned finished;            /* hashed, not yet collected by the loop */
  bool quit;
  struct ev_loop *loop;
  ev_async wake;                /* sent by the thread after each slot */
};

static struct nbd_ev src;
static struct ring *ring;
static struct extent_map map;
static struct block_hash hash;
static struct hash_thread hasher = {
  .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
};
static uint64_t size;           /* the export size */
static uint64_t request_size;
static uint64_t next_offset;    /* where the next slot starts */
static uint64_t bytes_hashed;   /* everything before this is in the hash */
static uint64_t nr_queued;      /* slots handed to the hash thread */
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

static uint64_t
round_down (uint64_t v, uint64_t align)
{
  return v - v % align;
}

static uint64_t
round_up (uint64_t v, uint64_t align)
{
  return round_down (v + align - 1, align);
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
  h->inner = EVP_MD_CTX_new ();
  zeroes = calloc (1, block_size);
  h->zero_run = malloc (ZERO_RUN_DIGESTS * h->md_size);
  if (h->outer == NULL || h->inner == NULL || zeroes == NULL ||
      h->zero_run == NULL)
    die ("%s", strerror (ENOMEM));
  check_evp (EVP_DigestInit_ex2 (h->outer, h->md, NULL), "digest init");
  check_evp (EVP_Digest (zeroes, block_size, h->zero_digest, NULL,
                         h->md, NULL), "digest");
  free (zeroes);
  for (i = 0; i < ZERO_RUN_DIGESTS; i++)
    memcpy (h->zero_run + i * h->md_size, h->zero_digest, h->md_size);
}

static void
hash_free (struct block_hash *h)
{
  EVP_MD_CTX_free (h->outer);
  EVP_MD_CTX_free (h->inner);
  EVP_MD_free (h->md);
  free (h->zero_run);
}

/* Hash one block of data into the outer digest.  A full block of zeroes
 * takes the precomputed digest: checking costs far less than hashing.
 * A short last block is always hashed, since H of fewer zeroes is a
 * different digest.
 */
static void
hash_block (struct block_hash *h, const void *buf, size_t len)
{
  unsigned char md[EVP_MAX_MD_SIZE];

  if (len == h->block_size && is_zero (buf, len)) {
    check_evp (EVP_DigestUpdate (h->outer, h->zero_digest, h->md_size),
               "digest update");
    return;
  }
  check_evp (EVP_DigestInit_ex2 (h->inner, h->md, NULL), "digest init");
  check_evp (EVP_DigestUpdate (h->inner, buf, len), "digest update");
  check_evp (EVP_DigestFinal_ex (h->inner, md, NULL), "digest final");
  check_evp (EVP_DigestUpdate (h->outer, md, h->md_size), "digest update");
}

/* Hash a buffer that starts on a block boundary, block by block. */
static void
hash_data (struct block_hash *h, const unsigned char *buf, uint64_t len)
{
  uint64_t i, n;

  for (i = 0; i < len; i += n) {
    n = MIN (h->block_size, len - i);
    hash_block (h, buf + i, n);
  }
}

/* Hash nr_blocks whole zero blocks without touching any data. */
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
 * prepare watcher (pump_cb) hashes the slot when it reaches the head of
 * the ring.  Returning 1 retires the command.
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
  slot_debug (slot, "read");
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
  slot_debug (slot, "zero run");
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

/* The hash thread: take the oldest queued slot, hash it, count it and
 * wake the loop.  It never touches the ring or libnbd.
 */
static void *
hash_thread_main (void *arg)
{
  struct hash_thread *t = arg;
  struct slot *slot;

  for (;;) {
    pthread_mutex_lock (&t->lock);
    while (t->len == 0 && !t->quit)
      pthread_cond_wait (&t->cond, &t->lock);
    if (t->len == 0) {
      pthread_mutex_unlock (&t->lock);
      return NULL;              /* quit, and nothing left to hash */
    }
    slot = t->queue[t->first];
    t->first = (t->first + 1) % t->size;
    t->len--;
    pthread_mutex_unlock (&t->lock);

    if (slot->kind == KIND_ZERO)
      hash_zero_blocks (&hash, slot->length / hash.block_size);
    else
      hash_data (&hash, slot->buf, slot->length);

    pthread_mutex_lock (&t->lock);
    t->finished++;
    pthread_mutex_unlock (&t->lock);
    ev_async_send (t->loop, &t->wake);
  }
}

/* Loop thread: queue a slot for hashing. */
static void
hash_thread_give (struct hash_thread *t, struct slot *slot)
{
  pthread_mutex_lock (&t->lock);
  t->queue[(t->first + t->len) % t->size] = slot;
  t->len++;
  pthread_cond_signal (&t->cond);
  pthread_mutex_unlock (&t->lock);
}

/* Loop thread: how many slots were hashed since the last call. */
static unsigned
hash_thread_collect (struct hash_thread *t)
{
  unsigned n;

  pthread_mutex_lock (&t->lock);
  n = t->finished;
  t->finished = 0;
  pthread_mutex_unlock (&t->lock);
  return n;
}

/* Nothing to do here: the wake-up itself is the point, since pump_cb
 * runs before the loop blocks again.
 */
static void
wake_cb (struct ev_loop *loop, ev_async *w, int revents)
{
}

static void
hash_thread_start (struct hash_thread *t, struct ev_loop *loop,
                   unsigned nr_slots)
{
  int r;

  t->queue = calloc (nr_slots, sizeof *t->queue);
  if (t->queue == NULL)
    die ("%s", strerror (errno));
  t->size = nr_slots;
  t->loop = loop;
  ev_async_init (&t->wake, wake_cb);
  ev_async_start (loop, &t->wake);
  r = pthread_create (&t->thread, NULL, hash_thread_main, t);
  if (r != 0)
    die ("cannot start the hash thread: %s", strerror (r));
}

static void
hash_thread_stop (struct hash_thread *t)
{
  pthread_mutex_lock (&t->lock);
  t->quit = true;
  pthread_cond_signal (&t->cond);
  pthread_mutex_unlock (&t->lock);
  pthread_join (t->thread, NULL);
  ev_async_stop (t->loop, &t->wake);
  free (t->queue);
}

/* A failed read ends the program before its buffer is hashed: with
 * pread_initialize off it holds whatever the previous read left.
 */
static void __attribute__ ((noreturn))
slot_failed (const struct slot *slot)
{
  slot_debug (slot, "failed");
  die ("read failed at offset %" PRIu64 " length %" PRIu64 ": %s",
       slot->offset, slot->length, strerror (slot->error));
}

/* Retire the slots the hash thread finished.  It hashes in the order
 * they were queued, which is ring order, so they are at the head.
 */
static void
retire_hashed (void)
{
  unsigned n = hash_thread_collect (&hasher);
  struct slot *slot;

  while (n-- > 0) {
    slot = ring_head (ring);
    slot_debug (slot, "hashed");
    bytes_hashed += slot->length;
    progress_update (&progress, bytes_hashed);
    ring_retire_head (ring);
  }
}

/* The in-order consumer: queue slots for hashing in issue order, which
 * is offset order, for as long as the next one's data is ready.  A slot
 * that finished reading early waits for the ones before it.  The queued
 * slots are in SLOT_WRITING, the ring's second step, which here means
 * "being hashed".  Failures are noticed in the same order, so the error
 * reported is the first in offset order.
 */
static void
queue_ready (void)
{
  struct slot *slot;

  /* Sequence numbers are issue order; ring_at finds each slot. */
  while (nr_queued < ring->next_seq) {
    slot = ring_at (ring, nr_queued);
    if (slot->state == SLOT_FAILED)
      slot_failed (slot);
    if (slot->state != SLOT_READ_DONE)
      break;
    slot->state = SLOT_WRITING;
    slot_debug (slot, "hashing");
    hash_thread_give (&hasher, slot);
    nr_queued++;
  }
}

/* The heart of the program, run before the loop blocks each time:
 * retire what the hash thread finished, refill the ring, then queue what
 * is ready.  Refilling comes before queueing so that zero runs, ready
 * the moment they are taken, are queued at once.  The thread's ev_async
 * brings the loop back here after each slot.
 */
static void
pump_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
  retire_hashed ();
  start_slots ();
  queue_ready ();

  if (bytes_hashed == size)
    ev_break (loop, EVBREAK_ALL);
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
           progname, MAX_REQUESTS, DEFAULT_REQUESTS,
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
  unsigned requests = DEFAULT_REQUESTS;
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
  nbd_ev_start (&src, loop, src.nbd, "source");
  /* Default priority: runs before the glue's prepare watcher, which sits
   * at EV_MINPRI and then sees the commands queued here.
   */
  ev_prepare_init (&pump, pump_cb);
  ev_prepare_start (loop, &pump);

  hash_thread_start (&hasher, loop, requests);

  progress_init (&progress, show_progress, size);
  ev_run (loop, 0);
  progress_done (&progress, bytes_hashed);

  hash_thread_stop (&hasher);
  ev_prepare_stop (loop, &pump);
  nbd_ev_stop (&src);
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
