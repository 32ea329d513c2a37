/* zero-extent-copy-libev: copy-libev, reading only the source's data
 * and zeroing its holes with as few commands as possible.
 *
 * What it adds to copy-libev:
 *
 *  - The source's allocation map (common/extents.h): block status on
 *    base:allocation, one command in flight, fetched ahead of the copy
 *    and merged, so that a 1 TiB hole is one extent.
 *
 *  - One NBD_CMD_WRITE_ZEROES per zero extent, split only where the
 *    32-bit length field or the server's maximum block size forces it:
 *    an empty 1 TiB image costs 257 commands (with no maximum), not
 *    four million reads and writes.  The original report on the list
 *    found it about 3x faster than qemu-img convert (docs/benchmarks.md).
 *
 *  - A buffer that reads back all zero becomes a zero command too, so
 *    a source without block status still makes a sparse copy.
 *
 * What it keeps from copy-libev, line for line:
 *
 *  - The ring (common/ring.h): REQUESTS slots, each with its own
 *    buffer, cycle through read -> write -> idle.  Whichever slot
 *    finishes first is reused at once, so one slow request never holds
 *    up the others, and the servers always have REQUESTS commands to
 *    work on.
 *
 *  - libnbd in a libev loop (common/glue.h): one ev_io watcher per
 *    handle, and one ev_prepare callback that starts new commands and
 *    then lets each watcher wait for what its handle wants now.
 *    Completion callbacks only mark the slot; the prepare callback acts.
 *
 *  - nbd_set_pread_initialize(false): libnbd need not clear each read
 *    buffer before the read, reported 3-10% faster on the libnbd list
 *    (docs/benchmarks.md has what make bench measures here; --init
 *    turns it back on to compare).  It is safe only because a buffer is
 *    written after its read succeeded and never otherwise.
 *
 * Run it with two captive nbdkit servers:
 *
 *   nbdkit -r -U - data '1 @1073741823 1' --run \
 *     'nbdkit -U - memory 1G --run "./zero-extent-copy-libev -v $uri \$uri"'
 *
 * Build it on its own from the repository root:
 *
 *   cc -O2 -Icommon examples/zero-extent-copy-libev.c common/extents.c \
 *     common/glue.c common/ring.c -o zero-extent-copy-libev -lnbd -lev
 *
 * tools/nbd-evcopy is the program to run on real images (files,
 * several connections, timeouts, signals, progress, a URI naming a local
 * file such as tls-certificates=, which nbd_connect_uri refuses by default).
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

#include "extents.h"
#include "glue.h"
#include "iszero.h"
#include "ring.h"

/* Requests in flight, each with a buffer of REQUEST_SIZE: more keep a
 * server that answers late busy, fewer use less memory.  16 is libnbd's
 * own example's choice; docs/techniques.md has what was measured here.
 */
#define REQUESTS 16

/* Bytes per request: 1 MiB, as libnbd's example.  Larger requests cost
 * fewer commands and put more bytes in flight for a server that answers
 * late; past a few MiB they only add memory and delay the first write.
 * 32 MiB is the most a server must take (docs/techniques.md section 4).
 */
#define REQUEST_SIZE (1024 * 1024)
#define MAX_REQUEST_SIZE (32 * 1024 * 1024)

/* A zero extent longer than one command holds is split at multiples
 * of ZERO_SPLIT: 64 KiB is the largest minimum block size the protocol
 * allows and qcow2's default cluster size, so no server zeroes part of
 * a block by writing it.  A zero command holds MAX_LENGTH_32 bytes
 * (common/extents.h), or the destination's maximum block size:
 * until 2023 the NBD protocol ("Block size constraints") bound every
 * command by it, and qemu's client still keeps zeroes within it.
 */
#define ZERO_SPLIT 65536

/* What a slot is doing, kept in slot->kind. */
enum op { OP_READ, OP_WRITE, OP_ZERO };
static const char *const op_names[] = {
  [OP_READ] = "read",
  [OP_WRITE] = "write",
  [OP_ZERO] = "zero",
};

static struct glue src, dst;
static struct ring *ring;
static uint64_t size;           /* bytes to copy: the source's size */
static uint64_t request_size = REQUEST_SIZE;
static uint64_t next_offset;    /* where the next read starts */
static bool failed;             /* a command failed: start no more */
static struct extent_map map;   /* the source's */
static uint64_t block = 1;      /* both servers' minimum block size */
static bool can_zero;           /* the destination takes zero commands */
static uint64_t zero_max = MAX_LENGTH_32; /* the longest zero command */

/* An option's number, from min to max.  Errors found before the first
 * command, as this one, exit at once: nothing is in flight yet.
 */
static uint64_t
parse_number (const char *opt, const char *arg, uint64_t min, uint64_t max)
{
  char *end;
  uint64_t v;

  errno = 0;
  v = strtoull (arg, &end, 10);
  if (errno || *end || end == arg || *arg == '-' || v < min || v > max)
    errx (EXIT_FAILURE, "%s: '%s' is not a number from %" PRIu64 " to %"
          PRIu64, opt, arg, min, max);
  return v;
}

/* Connect to uri and watch the handle in loop.  The handshake blocks,
 * as in libnbd's example: there is nothing else to do meanwhile.  Then
 * check every limit before the first byte is read, so that bad input
 * never leaves a half-written destination: requests must be multiples
 * of the server's minimum block size and at most its maximum
 * (nbd_get_block_size(3)).  Returns the export's size.
 */
static uint64_t
connect_export (struct glue *g, struct ev_loop *loop, const char *uri,
                bool init)
{
  struct nbd_handle *nbd = nbd_create ();
  int64_t min, max, export_size;

  if (nbd == NULL ||
      nbd_set_pread_initialize (nbd, init) == -1 ||
      nbd_add_meta_context (nbd, LIBNBD_CONTEXT_BASE_ALLOCATION) == -1 ||
      nbd_connect_uri (nbd, uri) == -1 ||
      glue_start (g, loop, nbd) == -1 ||
      (export_size = nbd_get_size (nbd)) == -1)
    errx (EXIT_FAILURE, "%s: %s", uri, nbd_get_error ());
  min = nbd_get_block_size (nbd, LIBNBD_SIZE_MINIMUM);
  max = nbd_get_block_size (nbd, LIBNBD_SIZE_MAXIMUM);
  if (min > 0 && request_size % min != 0)
    errx (EXIT_FAILURE, "%s: request size %" PRIu64 " is not a multiple "
          "of the minimum block size %" PRId64, uri, request_size, min);
  if (max > 0 && request_size > (uint64_t) max)
    errx (EXIT_FAILURE, "%s: request size %" PRIu64 " is larger than the "
          "maximum block size %" PRId64, uri, request_size, max);
  if (min > (int64_t) block)
    block = min;                /* both are powers of two */
  if (g == &dst && max > 0 && (uint64_t) max < zero_max)
    zero_max = max;
  return export_size;
}

/* A command's completion callback runs inside libnbd with the handle's
 * lock held, so it must not start another command on the handle:
 * ring_command_done only marks the slot (by *error), and pump_cb acts
 * on it in the next loop iteration.  A command libnbd refuses to send
 * fails the slot like any other.
 */
static void
refused (struct slot *slot)
{
  ring_complete (slot, nbd_get_errno () ? nbd_get_errno () : EIO);
  failed = true;
}

static void
start_read (struct slot *slot)
{
  nbd_completion_callback cb = { .callback = ring_command_done,
                                 .user_data = slot };

  slot->kind = OP_READ;
  slot_debug (slot, "read");
  if (nbd_aio_pread (src.nbd, slot->buf, slot->length, slot->offset,
                     cb, 0) == -1)
    refused (slot);
}

static void
start_write (struct slot *slot)
{
  nbd_completion_callback cb = { .callback = ring_command_done,
                                 .user_data = slot };

  slot->kind = OP_WRITE;
  slot->state = SLOT_BUSY;
  slot_debug (slot, "write");
  if (nbd_aio_pwrite (dst.nbd, slot->buf, slot->length, slot->offset,
                      cb, 0) == -1)
    refused (slot);
}

/* A zero command needs no buffer, so its length may exceed the slot's
 * buffer.
 */
static void
start_zero (struct slot *slot)
{
  nbd_completion_callback cb = { .callback = ring_command_done,
                                 .user_data = slot };

  slot->kind = OP_ZERO;
  slot->state = SLOT_BUSY;
  slot_debug (slot, "zero");
  if (nbd_aio_zero (dst.nbd, slot->length, slot->offset, cb, 0) == -1)
    refused (slot);
}

/* A slot's step is over: the next one, or give the slot back.  After a
 * failure nothing new starts, and a read's buffer is never written: with
 * pread_initialize off it may hold stale data.  A buffer of zeroes goes
 * as a zero command, which lets the server keep a hole; only whole
 * blocks may be zeroed, so an unaligned tail is written.
 */
static void
step_done (struct slot *slot)
{
  slot_debug (slot, op_names[slot->kind]);
  if (slot->kind != OP_READ || failed)
    ring_release (slot);
  else if (can_zero && slot->length % block == 0 &&
           is_zero (slot->buf, slot->length))
    start_zero (slot);
  else
    start_write (slot);
}

/* The next piece of the image from offset: its length, and whether it
 * is zeroes.  False while the map does not reach far enough: a
 * block-status reply is on its way, and the loop runs again when it
 * comes.  Pieces start and end on block boundaries (or at the end of
 * the image), so both servers see only aligned commands.
 */
static bool
plan (uint64_t offset, uint64_t *length, bool *zero)
{
  struct extent e;
  uint64_t end;

  /* Two windows ahead, so that the copy rarely waits for a reply. */
  if (extents_pump (&map, offset, 2 * map.window) == -1) {
    warn ("%s: extent map", map.name);
    failed = true;
  }
  if (failed || !extents_next (&map, offset, size - offset, &e))
    return false;
  end = offset + e.length;
  /* A zero extent goes out whole: if the map ends inside it, wait to
   * learn where it ends, rather than send two commands where one would
   * do.
   */
  if (e.zero && can_zero && end == map.end && end < size) {
    if (extents_pump (&map, offset, e.length + 1) == -1) {
      warn ("%s: extent map", map.name);
      failed = true;
    }
    /* A refused command's range is data in the map already: plan again
     * at once, as no reply will wake the loop.
     */
    return !failed && !map.in_flight && plan (offset, length, zero);
  }
  if (e.zero && can_zero && e.length > zero_max) {
    end = offset + zero_max;
    if (end % ZERO_SPLIT < zero_max)
      end -= end % ZERO_SPLIT;
  }
  *zero = e.zero && can_zero && end - end % block > offset;
  if (*zero)
    end -= end % block;         /* an unaligned tail is data */
  else {
    if (end > offset + request_size)
      end = offset + request_size;
    end += (block - end % block) % block;
    if (end > size)
      end = size;
  }
  *length = end - offset;
  return true;
}

/* The program's one prepare callback, run each time before the loop
 * blocks: act on the slots whose command completed, fill idle slots with
 * reads, then let both watchers wait for what their handles now want.
 */
static void
pump_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
  struct slot *slot;
  uint64_t length;
  unsigned i;
  bool zero;

  for (i = 0; i < ring->nr_slots; i++) {
    slot = &ring->slots[i];
    if (slot->state == SLOT_FAILED)
      failed = true;            /* the slot stays, to be reported */
    else if (slot->state == SLOT_DONE)
      step_done (slot);
  }

  while (!failed && next_offset < size && !ring_full (ring) &&
         plan (next_offset, &length, &zero)) {
    slot = ring_take (ring, next_offset, length);
    next_offset += length;
    if (zero)
      start_zero (slot);
    else
      start_read (slot);
  }

  /* Done, or failed, and no command in flight: before NBD_CMD_DISC a
   * client "SHOULD wait until there are no inflight requests" (proto.md).
   */
  if (nbd_aio_in_flight (src.nbd) == 0 && nbd_aio_in_flight (dst.nbd) == 0 &&
      (failed || next_offset == size))
    ev_break (loop, EVBREAK_ALL);
  glue_update (&src);
  glue_update (&dst);
}

/* The first failure in the image: which command, where, and why, with
 * libnbd's message if the connection itself was lost.
 */
static void
report_failure (void)
{
  const struct slot *slot = ring_first_failed (ring);
  const struct glue *g;

  if (slot == NULL)
    return;                     /* the extent map's, said at once */
  g = slot->kind == OP_READ ? &src : &dst;

  warnx ("%s: %s failed at offset %" PRIu64 " length %" PRIu64 ": %s%s%s",
         g == &src ? "source" : "destination", op_names[slot->kind],
         slot->offset, slot->length, strerror (slot->error),
         g->error[0] ? "; connection lost: " : "", g->error);
}

static void __attribute__ ((noreturn))
usage (int status)
{
  fprintf (status ? stderr : stdout,
           "Usage: zero-extent-copy-libev [--requests=N] "
           "[--request-size=BYTES] [--init] [-v] SRC-URI DST-URI\n");
  exit (status);
}

int
main (int argc, char *argv[])
{
  enum { OPT_REQUESTS = 256, OPT_REQUEST_SIZE, OPT_INIT };
  static const struct option options[] = {
    { "requests", required_argument, NULL, OPT_REQUESTS },
    { "request-size", required_argument, NULL, OPT_REQUEST_SIZE },
    { "init", no_argument, NULL, OPT_INIT },
    { "verbose", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { 0 }
  };
  unsigned requests = REQUESTS;
  bool init = false, verbose = false;
  struct ev_loop *loop = EV_DEFAULT;
  ev_prepare pump;
  int c;

  while ((c = getopt_long (argc, argv, "vh", options, NULL)) != -1) {
    if (c == OPT_REQUESTS)
      requests = parse_number ("--requests", optarg, 1, 1024);
    else if (c == OPT_REQUEST_SIZE)
      request_size = parse_number ("--request-size", optarg, 512,
                                   MAX_REQUEST_SIZE);
    else if (c == OPT_INIT)
      init = true;
    else if (c == 'v')
      verbose = true;
    else
      usage (c == 'h' ? EXIT_SUCCESS : EXIT_FAILURE);
  }
  if (argc - optind != 2)
    usage (EXIT_FAILURE);

  size = connect_export (&src, loop, argv[optind], init);
  if (connect_export (&dst, loop, argv[optind + 1], init) < size)
    errx (EXIT_FAILURE, "%s: smaller than the source (%" PRIu64 " bytes)",
          argv[optind + 1], size);
  if (nbd_is_read_only (dst.nbd) == 1)
    errx (EXIT_FAILURE, "%s: read-only", argv[optind + 1]);
  can_zero = nbd_can_zero (dst.nbd) == 1;
  if (extents_init (&map, src.nbd, argv[optind]) == -1)
    errx (EXIT_FAILURE, "%s: %s", argv[optind], nbd_get_error ());
  ring = ring_new (requests, request_size);
  if (ring == NULL)
    err (EXIT_FAILURE, "cannot allocate %u requests of %" PRIu64 " bytes",
         requests, request_size);
  ring->verbose = verbose;

  ev_prepare_init (&pump, pump_cb);
  ev_prepare_start (loop, &pump);
  ev_run (loop, 0);

  if (failed)
    report_failure ();
  /* Nothing is in flight now: disconnect cleanly (NBD_CMD_DISC), which
   * also tells the destination it may flush in its own time.
   */
  glue_stop (&src);
  glue_stop (&dst);
  nbd_shutdown (src.nbd, 0);
  nbd_shutdown (dst.nbd, 0);
  nbd_close (src.nbd);
  nbd_close (dst.nbd);
  extents_free (&map);
  ring_free (ring);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
