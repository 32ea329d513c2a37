/* copy-libev: copy an NBD image to another NBD server from one libev
 * loop, with a ring of asynchronous requests.
 *
 * What it shows:
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
 *   nbdkit -r -U - pattern 1G --run \
 *     'nbdkit -U - memory 1G --run "./copy-libev -v $uri \$uri"'
 *
 * Build it on its own from the repository root:
 *
 *   cc -O2 -Icommon examples/copy-libev.c common/glue.c common/ring.c \
 *     -o copy-libev -lnbd -lev
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

#include "glue.h"
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

/* What a slot is doing, kept in slot->kind. */
enum op { OP_READ, OP_WRITE };
static const char *const op_names[] = {
  [OP_READ] = "read",
  [OP_WRITE] = "write",
};

static struct glue src, dst;
static struct ring *ring;
static uint64_t size;           /* bytes to copy: the source's size */
static uint64_t request_size = REQUEST_SIZE;
static uint64_t next_offset;    /* where the next read starts */
static bool failed;             /* a command failed: start no more */

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

/* A slot's step is over: the next one, or give the slot back.  After a
 * failure nothing new starts, and a read's buffer is never written: with
 * pread_initialize off it may hold stale data.
 */
static void
step_done (struct slot *slot)
{
  slot_debug (slot, op_names[slot->kind]);
  if (slot->kind != OP_READ || failed)
    ring_release (slot);
  else
    start_write (slot);
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

  for (i = 0; i < ring->nr_slots; i++) {
    slot = &ring->slots[i];
    if (slot->state == SLOT_FAILED)
      failed = true;            /* the slot stays, to be reported */
    else if (slot->state == SLOT_DONE)
      step_done (slot);
  }

  while (!failed && next_offset < size && !ring_full (ring)) {
    length = size - next_offset < request_size ? size - next_offset
      : request_size;
    slot = ring_take (ring, next_offset, length);
    next_offset += length;
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
  const struct glue *g = slot->kind == OP_READ ? &src : &dst;

  warnx ("%s: %s failed at offset %" PRIu64 " length %" PRIu64 ": %s%s%s",
         g == &src ? "source" : "destination", op_names[slot->kind],
         slot->offset, slot->length, strerror (slot->error),
         g->error[0] ? "; connection lost: " : "", g->error);
}

static void __attribute__ ((noreturn))
usage (int status)
{
  fprintf (status ? stderr : stdout,
           "Usage: copy-libev [--requests=N] [--request-size=BYTES] [--init] "
           "[-v] SRC-URI DST-URI\n");
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
  ring_free (ring);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
