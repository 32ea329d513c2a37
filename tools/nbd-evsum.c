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
 *    as slots retire from the head of the ring.  How many reads, and of
 *    what size, follows the server (tools/depth.h).
 *
 *  - Work handed to threads beside the loop (common/pool.c, joined to
 *    the ring's digest areas in tools/ordered-hash.c).  The loop
 *    thread does all the I/O (hashing there stalled the reads: the
 *    server stops sending while a Unix socket's ~200 KiB buffer is full)
 *    and gives slots whose data is ready to the hash threads, in offset
 *    order.  Any thread takes any slot and writes the digests of its
 *    blocks into that slot's own digest area, so slots may finish out of
 *    order.  The loop feeds the outer digest, which is cheap (32 bytes
 *    per 64 KiB block), strictly in offset order: only while the head of
 *    the ring is hashed.  SHA-256 costs more CPU than the server and the
 *    loop need together (docs/checksum.md), so one hash thread was the
 *    bottleneck; the inner digests are independent, the outer one is
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
#include "buffers.h"
#include "conn.h"
#include "depth.h"
#include "server.h"
#include "handle.h"
#include "extents.h"
#include "image.h"
#include "options.h"
#include "ring.h"
#include "ordered-hash.h"
#include "stop.h"
#include "util.h"

/* Reads in flight to start with.  Against a server that answers at
 * once, enough to keep every hash thread busy with one slot while the
 * next few are read; more only add memory, as the hashing, not the
 * server, is the bottleneck.  Each read starts at DEFAULT_REQUEST_SIZE
 * (tools/options.h), 256 KiB: 4 blocks, about 0.15 ms of SHA-256
 * for a hash thread, so handing slots over costs next to nothing.
 * Against a server that answers late, the depth grows as the reads
 * are measured (tools/depth.h).
 */
#define CHECKSUM_REQUESTS 8

/* Longest zero run in one slot.  The loop thread feeds zero runs to the
 * outer digest itself (there is nothing for a hash thread to compute),
 * and the cap keeps each such stall of the I/O short: 65536 digests,
 * about a millisecond.  Block status without 64-bit lengths never
 * reports more than this anyway.
 */
#define MAX_ZERO_RUN (UINT64_C (1) << 32)

/* What a slot covers, kept in slot->kind. */
enum slot_kind { KIND_DATA, KIND_ZERO };

static const char *image;       /* the image as the user named it */
static struct server src;        /* connections to the server */
static struct ring *ring;
static struct buffers buffers;  /* the reads' buffers (tools/buffers.h) */
static struct extent_map map;
static struct ordered_hash sh;      /* digests on threads, fed in order */
static uint64_t block_size = BLKHASH_BLOCK_SIZE;
static uint64_t size;           /* the export size */
static uint64_t request_size;  /* bytes per read to start with */
static struct depth depth;      /* reads in flight and their size now */
static struct depth_mark *marks; /* per slot: when its read started */
static unsigned reads;          /* reads in flight */
static uint64_t next_offset;    /* where the next slot starts */
static uint64_t bytes_hashed;   /* everything before this is in the hash */
static uint64_t nr_passed;      /* slots given to the pool or passed over */
static struct progress progress;
static struct stop stop;

/* The slot of sequence number seq, between the head's and the next
 * one taken: an in-order ring hands out slots strictly in turn.
 */
static struct slot *
slot_at (uint64_t seq)
{
  return &ring->slots[seq % ring->nr_slots];
}

/* Completion callbacks run inside libnbd while it holds the handle's
 * lock, so they must not start new commands on that handle:
 * ring_command_done (common/ring.h) only records the result in the
 * slot, and the prepare callback (pump_cb) acts on it in the next loop
 * iteration.
 */
static int
read_done (void *user_data, int *error)
{
  struct slot *slot = user_data;

  /* A successful read is a sample of the round trip and the rate.  The
   * depth only counts, so it may be fed from inside the callback.
   */
  if (*error == 0)
    depth_sample (&depth, slot->length, marks[slot->index], now_ns ());
  reads--;
  return ring_command_done (slot, error);
}

static void
start_read (uint64_t offset, uint64_t length)
{
  struct slot *slot = ring_take (ring, offset, length);
  nbd_completion_callback cb = { .callback = read_done, .user_data = slot };

  buffers_take (&buffers, slot);
  marks[slot->index] = depth_mark (&depth, now_ns ());
  slot->kind = KIND_DATA;
  slot->conn = server_pick (&src);
  slot_debug (slot, "read");
  /* A read libnbd refuses to issue never calls read_done. */
  if (nbd_aio_pread (((struct conn *) slot->conn)->glue.nbd, slot->buf,
                     length, offset, cb, 0) == -1)
    ring_complete (slot, conn_issue_errno (slot->conn));
  else
    reads++;
}

/* A zero run needs no I/O and no hashing: the slot is done the moment
 * it is taken.  It still goes through the ring so that it is fed to the
 * outer digest in its turn, after every read before it.
 */
static void
start_zero_run (uint64_t offset, uint64_t length)
{
  struct slot *slot = ring_take (ring, offset, length);

  slot->kind = KIND_ZERO;
  slot->state = SLOT_DONE;
  slot_debug (slot, "zero run");
}

/* True if the extent holds at least one whole block of zeroes. */
static bool
has_zero_block (const struct extent *e)
{
  uint64_t start = round_up (e->offset, block_size);

  return e->zero && start + block_size <= e->offset + e->length;
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
  uint64_t limit = MIN (round_down (offset, depth.request_size) +
                        depth.request_size, size);
  uint64_t end = offset;
  struct extent e;

  while (end < limit && extents_next (&map, end, limit - end, &e)) {
    if (has_zero_block (&e)) {
      end = round_up (e.offset, block_size);
      break;
    }
    end = e.offset + e.length;
  }
  /* Partial blocks at either end of a zero extent are read as data. */
  return MIN (round_up (end, block_size), limit);
}

/* Fill idle slots: zero runs where block status says whole blocks read
 * as zeroes, reads everywhere else.  The depth (tools/depth.h) is the
 * reads in flight; as many slots again, within the ring, may hold data
 * read and waiting for the hash threads, so that a backlog to hash does
 * not stop the reads while a late server is the bottleneck, nor grow
 * without bound while the hashing is.  With --requests the ring has
 * that many slots, and they bound both together.
 */
static void
start_slots (void)
{
  uint64_t ahead = depth.requests * depth.request_size;
  struct extent e;
  uint64_t end;

  while (next_offset < size && reads < depth.requests &&
         ring->in_use < MIN (2 * depth.requests, ring->nr_slots)) {
    /* Block status asks for a window of up to 4 GiB at a time, with one
     * command in flight; until the map reaches next_offset, wait for it.
     */
    handle_extents_pump (&stop, &map, next_offset, ahead);
    if (!extents_next (&map, next_offset, size - next_offset, &e))
      break;
    if (has_zero_block (&e)) {
      /* next_offset is a block boundary, so the run starts there. */
      end = round_down (e.offset + MIN (e.length, MAX_ZERO_RUN),
                        block_size);
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
  handle_extents_pump (&stop, &map, next_offset, ahead);
}

/* A failed read or hash ends the program, cleanly (tools/stop.h): the
 * failure is kept for the last line, no new read starts, and the
 * program exits once the reads in flight are over, with no digest.  A
 * failed read's buffer is never hashed: with pread_initialize off it
 * holds whatever the previous read left.
 */
static void
slot_failed (const struct slot *slot, const char *what)
{
  slot_debug (slot, "failed");
  stop_fail (&stop, "%s: %s failed at offset %" PRIu64 " length %" PRIu64
             ": %s", ((const struct conn *) slot->conn)->name, what,
             slot->offset, slot->length,
             conn_strerror (slot->conn, slot->error));
}

/* Give slots to the hash threads in issue order, which is offset order,
 * for as long as the next one's data is ready; zero runs are passed
 * over.  A slot that finished reading early waits for the ones before
 * it; failures are noticed in the same order, so the error reported is
 * the first in offset order.  Giving out of order would only help while
 * the head's read is late, and with hashing the bottleneck there is
 * nearly always a backlog to hash.
 */
static void
give_ready (void)
{
  struct slot *slot;

  /* Sequence numbers are issue order; slot_at finds each slot. */
  while (nr_passed < ring->next_seq) {
    slot = slot_at (nr_passed);
    if (slot->kind == KIND_DATA) {
      if (slot->state == SLOT_FAILED) {
        slot_failed (slot, "read");
        break;
      }
      if (slot->state != SLOT_DONE)
        break;
      ordered_hash_give (&sh, slot);
    }
    nr_passed++;
  }
}

/* True if everything the outer digest needs from the slot is there: a
 * zero run has nothing to compute; a data slot once a hash thread is
 * done with it.
 */
static bool
slot_hashed (struct slot *slot)
{
  if (slot->kind == KIND_ZERO)
    return true;
  /* Not given to the hash threads yet: its read is still in flight. */
  if (slot->seq >= nr_passed)
    return false;
  return ordered_hash_done (&sh, slot);
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
    if (slot->state == SLOT_FAILED) {
      slot_failed (slot, "hashing");
      break;
    }
    if (slot->kind == KIND_ZERO)
      ordered_hash_feed_zeroes (&sh, slot->length);
    else
      ordered_hash_feed (&sh, slot);
    slot_debug (slot, "retired");
    if (slot->kind == KIND_DATA)
      buffers_give (&buffers, slot);
    bytes_hashed += slot->length;
    progress_update (&progress, bytes_hashed);
    ring_retire_head (ring);
    n++;
  }
  return n;
}

/* The program's one prepare callback, run before the loop blocks each
 * time: refill the ring, give out what is ready, retire what is hashed,
 * and go round again while retiring freed slots.  Zero runs are done the
 * moment they are taken and nothing else would wake the loop for them,
 * so a ring full of zero runs must be drained here.  A hash thread's
 * ev_async brings the loop back after each data slot.  Last, the
 * connection waits for what the handle now wants.
 */
static void
pump_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
  /* A lost connection fails every read in flight: report the loss. */
  server_check (&src, &stop);
  while (!stop_requested (&stop)) {
    start_slots ();
    give_ready ();
    if (retire_hashed () == 0)
      break;
  }
  /* The depth follows the estimates (tools/depth.h): once an epoch, and
   * while starting as soon as a read shows more rate.
   */
  if (!stop_requested (&stop))
    depth_follow (&depth, now_ns ());

  /* Stopping, on a signal or a failure: wait only for the commands in
   * flight.  What the hash threads still hold is theirs to finish.
   */
  if (stop_requested (&stop) ? !server_busy (&src) : bytes_hashed == size)
    ev_break (loop, EVBREAK_ALL);
  server_update (&src);
}

/* For the timeout message: the oldest read still in flight.  Slots
 * given to the hash threads are past reading, so the search starts
 * after them; reads are issued in order, so the first one still reading
 * is the oldest.
 */
static void
describe_oldest (const struct conn *c, char *buf, size_t len)
{
  const struct slot *slot;
  uint64_t seq;

  for (seq = nr_passed; seq < ring->next_seq; seq++) {
    slot = slot_at (seq);
    if (slot->kind == KIND_DATA && slot->state == SLOT_BUSY &&
        slot->conn == c) {
      snprintf (buf, len, "read at offset %" PRIu64 " length %" PRIu64,
                slot->offset, slot->length);
      return;
    }
  }
  snprintf (buf, len, "block status");
}

/* After a signal or a failure, once no read is in flight: say how far
 * the hash got, disconnect cleanly, and exit without a digest.
 */
static void __attribute__ ((noreturn))
stopped (void)
{
  if (stop.signum != 0)
    message ("interrupted by %s after hashing %" PRIu64 " of %" PRIu64
             " bytes; no digest", stop_signal_name (&stop), bytes_hashed,
             size);
  server_close ((struct server *const []) { &src }, 1, &stop);
  stop_exit (&stop);
}

static void __attribute__ ((noreturn))
usage (FILE *fp, int status)
{
  fprintf (fp,
"Usage: %s [OPTIONS] IMAGE...\n"
"Print the block hash of each image, as blksum computes it (and\n"
"nbdcopy --blkhash in libnbd after 1.22): the digest of the digests\n"
"of its blocks and its size.  One line per image, in the order given,\n"
"as sha256sum prints them; the exit status is 1 if any failed.\n"
IMAGES_HELP
"\n"
"Options:\n"
"  --digest=NAME       md5, sha1, sha256 (default), sha512, or any other\n"
"                      fixed-size digest OpenSSL knows\n"
"  --block-size=SIZE   bytes per hashed block, a power of two up to 32M\n"
"                      (default 64k, as blkhash)\n"
"  --requests=N        slots in flight, reads, data waiting to be hashed\n"
"                      and zero runs (1-%d); without it, start at %d\n"
"                      reads and adapt to the server\n"
"  --request-size=SIZE bytes per read, a multiple of the block size\n"
"                      (%d to %dM; suffixes k, M, G are powers of 1024);\n"
"                      without it, start at 256k or the block size if\n"
"                      larger, and adapt, up to 1M or the start if larger\n"
"  --socket-buffer=SIZE\n"
"                      set SO_SNDBUF and SO_RCVBUF of the socket\n"
"  -C N, --connections=N\n"
"                      connections to the server (1-%d; default up to\n"
"                      %d, one per CPU, if the server advertises\n"
"                      multi-conn, else 1)\n"
"  --cache=MODE        local image files: default (the page cache) or\n"
"                      none (the server keeps out of it)\n"
"  --timeout=SECONDS   fail if the server sends nothing for this long\n"
"                      while a read waits for it (default %d, 0 for never)\n"
"  -p, --progress      show a progress bar on stderr, if it is a terminal\n"
"  --progress=FD       write progress to file descriptor FD as N/100 lines\n"
"  -v, --verbose       print one line per request event, with timings\n"
"  -h, --help          show this help and exit\n"
"  -V, --version       show the version and exit\n",
           progname, MAX_REQUESTS, CHECKSUM_REQUESTS,
           MIN_REQUEST_SIZE, MAX_REQUEST_SIZE / (1024 * 1024),
           MAX_CONNECTIONS, DEFAULT_CONNECTIONS, DEFAULT_TIMEOUT);
  exit (status);
}

/* The options, set by main for checksum_image. */
static const char *digest = BLKHASH_DIGEST;
static unsigned requests = CHECKSUM_REQUESTS, max_requests;
static bool requests_given;     /* --requests: fixed, not adapted */
static bool request_size_given; /* --request-size: checked, fixed */
static uint64_t max_size;       /* the most request_size may grow to */
/* Block status is what lets zero runs go unread. */
static struct handle_options opts = {
  .pread_initialize = false, .want_extents = true,
};
static struct shared_options o = {
  .progress_mode = PROGRESS_NONE, .timeout = DEFAULT_TIMEOUT,
  .cache = IMAGE_CACHE_DEFAULT,
};

/* Hash one image and print its line, then exit: status 0, or 1 with
 * the reason on stderr (die, stop_exit) whatever went wrong, or 128 +
 * the signal's number after SIGINT or SIGTERM.
 */
static void __attribute__ ((noreturn))
checksum_image (struct image *img)
{
  struct blkhash hash;
  char hex[BLKHASH_HEX_SIZE], adapt[64];
  ev_prepare pump;
  struct ev_loop *loop;

  image = img->name;
  ordered_hash_setup (&hash, digest, block_size);
  image_prepare (img, NULL, false, o.cache);
  loop = EV_DEFAULT;
  /* With a timeout, the connection's timer bounds the wait for the
   * reads in flight when stopping; without, a grace period does.
   */
  stop_init (&stop, loop, o.timeout > 0 ? 0 : STOP_GRACE);
  server_connect (&src, loop, image, img, &opts, o.timeout, o.connections,
                 false);
  /* A server whose maximum block size is below the default gets
   * smaller requests; one asked for explicitly is checked as given.
   */
  if (!request_size_given)
    request_size = fit_request_size (src.v[0]->glue.nbd, image,
                                     request_size, block_size);
  check_request_size (src.v[0]->glue.nbd, image, request_size);
  max_size = fit_max_size (src.v[0]->glue.nbd, max_size, request_size);
  depth_init (&depth, requests, request_size, max_requests, max_size);
  size = export_size (src.v[0]->glue.nbd, image);
  check_image_end (src.v[0]->glue.nbd, image, size);
  /* Block status goes to one connection: the map is one sequence. */
  handle_extents (&map, src.v[0]->glue.nbd, image);

  /* Slots for the most the depth may reach, allocated once; their
   * buffers come from a stack, the one used last first.
   */
  ring = ring_new (max_requests, max_size);
  marks = calloc (max_requests, sizeof *marks);
  if (ring == NULL || marks == NULL || buffers_init (&buffers, ring) == -1)
    die ("cannot allocate %u requests of %" PRIu64 " bytes: %s",
         max_requests, max_size, strerror (errno));
  ring->verbose = verbose;
  debug ("hashing %" PRIu64 " bytes with %s, %" PRIu64 "-byte blocks, "
         "%u requests of %" PRIu64 " bytes (%s)", size, digest, block_size,
         requests, request_size, depth_describe (&depth, adapt, sizeof adapt));

  server_set_describe (&src, describe_oldest);
  ev_prepare_init (&pump, pump_cb);
  ev_prepare_start (loop, &pump);

  ordered_hash_start (&sh, &hash, loop, ring);

  progress_init (&progress, o.progress_mode, size);
  ev_now_update (loop);
  ev_run (loop, 0);
  /* The digest follows on stdout: clear the bar, as blksum does. */
  progress_done (&progress, bytes_hashed, false);
  if (stop_requested (&stop))
    stopped ();

  ev_prepare_stop (loop, &pump);
  ordered_hash_final (&sh, size, hex);
  debug ("%" PRIu64 " block-status commands", map.commands);
  printf ("%s  %s\n", hex, image);

  server_close ((struct server *const []) { &src }, 1, &stop);
  extents_free (&map);
  buffers_free (&buffers, ring);
  ring_free (ring);
  free (marks);
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

/* The child hashing the current image, for forward_signal. */
static volatile pid_t child;
static volatile sig_atomic_t caught;

/* SIGINT or SIGTERM while hashing several images: pass it to the child,
 * which stops the way one image stops (tools/stop.h), and start no
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

/* Several images: each is hashed in a child process, one after the
 * other.  The single-image code ends with exit status 1 on any error,
 * wherever it happens; in a child, that costs only its own image, and
 * the lines still come out in the order given.
 */
static int
checksum_each (int n)
{
  struct sigaction sa = { .sa_handler = forward_signal };
  int status = EXIT_SUCCESS, ws, i;
  pid_t pid;

  sigemptyset (&sa.sa_mask);
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);
  for (i = 0; i < n && caught == 0; i++) {
    fflush (stdout);
    pid = fork ();
    if (pid == -1)
      die ("fork: %s", strerror (errno));
    if (pid == 0) {
      setpgid (0, 0);
      signal (SIGINT, SIG_DFL);
      signal (SIGTERM, SIG_DFL);
      checksum_image (&images[i]);
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
    if (WIFSIGNALED (ws))
      return 128 + WTERMSIG (ws);
    if (WEXITSTATUS (ws) != EXIT_SUCCESS)
      status = EXIT_FAILURE;
  }
  return caught != 0 ? 128 + caught : status;
}

int
main (int argc, char *argv[])
{
  enum { OPT_DIGEST = 256, OPT_BLOCK_SIZE, OPT_REQUESTS, OPT_REQUEST_SIZE };
  static const struct option long_options[] = {
    { "digest",       required_argument, NULL, OPT_DIGEST },
    { "block-size",   required_argument, NULL, OPT_BLOCK_SIZE },
    { "requests",     required_argument, NULL, OPT_REQUESTS },
    { "request-size", required_argument, NULL, OPT_REQUEST_SIZE },
    { "help",         no_argument,       NULL, 'h' },
    SHARED_LONG_OPTIONS,
    { NULL }
  };
  const char *rs_arg = NULL;
  struct blkhash hash;
  int c, n;

  set_progname (argv[0]);
  while ((c = getopt_long (argc, argv, "+:h" SHARED_SHORT_OPTIONS,
                           long_options, NULL)) != -1) {
    switch (c) {
    case OPT_DIGEST:
      digest = optarg;
      break;
    case OPT_BLOCK_SIZE:
      block_size = option_block_size (optarg);
      break;
    case OPT_REQUESTS:
      requests = option_requests (optarg);
      requests_given = true;
      break;
    case OPT_REQUEST_SIZE:
      rs_arg = optarg;
      break;
    case 'h':
      usage (stdout, EXIT_SUCCESS);
    default:
      if (!option_shared (c, optarg, &o, MAX_CONNECTIONS))
        option_error (c, argv, long_options);
    }
  }
  opts.socket_buffer = o.socket_buffer;
  images = calloc (argc - optind + 1, sizeof *images);
  if (images == NULL)
    die ("calloc: %s", strerror (errno));
  n = image_parse_args (argc, argv, optind, images, argc - optind);
  if (n == 0) {
    fprintf (stderr, "%s: expected an image; try --help\n", progname);
    exit (EXIT_FAILURE);
  }

  /* Check every option before connecting, so that a typo is reported
   * as such and not hidden behind a connection error.
   */
  request_size = MAX ((uint64_t) DEFAULT_REQUEST_SIZE, block_size);
  if (rs_arg) {
    request_size = option_request_size (rs_arg);
    request_size_given = true;
    /* Every read holds whole blocks, or a block would straddle two. */
    if (request_size % block_size != 0)
      die ("--request-size: %s is not a multiple of the block size (%"
           PRIu64 " bytes)", rs_arg, block_size);
  }
  ordered_hash_setup (&hash, digest, block_size);
  max_size = adapt_max_size (request_size, request_size_given);
  max_requests = adapt_max_requests (requests, requests_given, max_size);
  ordered_hash_bound (&hash, requests, request_size, &max_requests,
                      &max_size);
  blkhash_free (&hash);

  if (n == 1)
    checksum_image (&images[0]);
  return checksum_each (n);
}
