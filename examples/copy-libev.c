/* copy-libev: copy an NBD image to another NBD server from one libev loop.
 *
 * What it shows:
 *
 *  - libev integration: one ev_io watcher per NBD handle
 *    (common/conn.c), and as many handles per server as it allows
 *    (multi-conn, common/conns.c).  The program's one ev_prepare
 *    callback starts new commands and then asks each connection to wait
 *    for what its handle wants now, just before the loop blocks.
 *
 *  - A ring of requests (common/ring.c): REQUESTS slots, each with its
 *    own buffer, cycle through read -> write -> idle.  Any slot that
 *    finishes is reused at once, so one slow request never stalls the
 *    others.
 *
 *  - nbd_set_pread_initialize(false): libnbd need not clear each read
 *    buffer first, which was reported 3-10% faster on the libnbd list
 *    (docs/benchmarks.md has what make bench shows here).  It is safe here
 *    because a buffer is written only after its read succeeded.
 *
 * Run it with captive servers, which it starts and stops itself
 * (common/image.h), or on local image files:
 *
 *   ./copy-libev --progress [ nbdkit pattern 1G ] [ nbdkit memory 1G ]
 *   ./copy-libev disk.qcow2 copy.raw
 *
 * Build it on its own from the repository root:
 *
 *   cc -O2 -Icommon examples/copy-libev.c common/conn.c common/connect.c \
 *     common/conns.c common/flush.c common/image.c common/options.c \
 *     common/ring.c common/stop.c common/util.c -o copy-libev -lnbd -lev
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

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

#include "conn.h"
#include "conns.h"
#include "connect.h"
#include "flush.h"
#include "image.h"
#include "options.h"
#include "ring.h"
#include "stop.h"
#include "util.h"

/* What a slot is doing, kept in slot->kind for messages. */
enum op { OP_READ, OP_WRITE };
static const char *const op_names[] = {
  [OP_READ] = "read",
  [OP_WRITE] = "write",
};

static struct conns src, dst;  /* connections to each server */
static struct ring *ring;
static uint64_t size;           /* bytes to copy: the source's size */
static uint64_t next_offset;    /* where the next read starts */
static uint64_t bytes_done;     /* bytes the destination confirmed */
static bool want_flush;
static struct flush flush;
static struct progress progress;
static struct stop stop;

/* Completion callbacks run inside libnbd while it holds the handle's
 * lock, so they must not start new commands on that handle.  They only
 * record the result in the slot; the prepare callback (pump_cb) acts on
 * it in the next loop iteration.  Returning 1 retires the command, so
 * nbd_aio_command_completed is never needed.
 */
static int
read_done (void *user_data, int *error)
{
  ring_complete (user_data, *error, SLOT_READ_DONE);
  return 1;
}

static int
write_done (void *user_data, int *error)
{
  ring_complete (user_data, *error, SLOT_DONE);
  return 1;
}

static void
start_read (struct slot *slot)
{
  nbd_completion_callback cb = { .callback = read_done, .user_data = slot };

  slot->kind = OP_READ;
  slot->conn = conns_pick (&src);
  slot_debug (slot, "read");
  if (nbd_aio_pread (((struct conn *) slot->conn)->nbd, slot->buf, slot->length, slot->offset,
                     cb, 0) == -1)
    ring_complete (slot, conn_issue_errno (), SLOT_FAILED);
}

static void
start_write (struct slot *slot)
{
  nbd_completion_callback cb = { .callback = write_done, .user_data = slot };

  slot->kind = OP_WRITE;
  slot->state = SLOT_WRITING;
  slot->conn = conns_pick (&dst);
  slot_debug (slot, "write");
  if (nbd_aio_pwrite (((struct conn *) slot->conn)->nbd, slot->buf, slot->length, slot->offset,
                      cb, 0) == -1)
    ring_complete (slot, conn_issue_errno (), SLOT_FAILED);
}

/* A failed command ends the copy, but cleanly (common/stop.h): the
 * first failure is kept for the last line, no new command starts, and
 * the program exits once the commands in flight are over.  The slot's
 * buffer is never written anywhere after a failed read: with
 * pread_initialize off it holds whatever the previous request left,
 * not the source's data.
 */
static void
slot_failed (const struct slot *slot)
{
  slot_debug (slot, "failed");
  stop_fail (&stop, "%s: %s failed at offset %" PRIu64 " length %" PRIu64
             ": %s", ((const struct conn *) slot->conn)->name,
             op_names[slot->kind], slot->offset, slot->length,
             conn_strerror (slot->error));
}

/* A slot's last command is done: count it and give the slot back. */
static void
finish (struct slot *slot)
{
  bytes_done += slot->length;
  progress_update (&progress, bytes_done);
  ring_release (slot);
}

/* True once every byte is written and, with --flush, the flush is done.
 * The flush starts only when no write is in flight, so that it covers
 * them all.
 */
static bool
copy_finished (void)
{
  if (next_offset < size || !ring_idle (ring))
    return false;
  return !want_flush || flush_finished (&flush, dst.v[0]->nbd, "destination");
}

/* Once stopping: true when no command is in flight on any connection.
 * After a signal, --flush still makes the copy so far durable; by then
 * every write below the offset reported is complete.
 */
static bool
stop_finished (void)
{
  if (conns_busy (&src) || conns_busy (&dst))
    return false;
  /* Only a destination still connected, with no write failed, can make
   * the writes below the reported offset durable.
   */
  return stop.signum == 0 || !want_flush || !conn_ready (dst.v[0]) ||
    ring_first_failed (ring) != NULL ||
    flush_finished (&flush, dst.v[0]->nbd, "destination");
}

/* For the timeout message: the oldest command still waiting on c. */
static void
describe_oldest (const struct conn *c, char *buf, size_t len)
{
  const struct slot *slot = ring_oldest (ring, SLOT_READING, c);

  if (slot == NULL)
    slot = ring_oldest (ring, SLOT_WRITING, c);
  if (slot == NULL)
    snprintf (buf, len, "a command other than a read or write");
  else
    snprintf (buf, len, "%s at offset %" PRIu64 " length %" PRIu64,
              op_names[slot->kind], slot->offset, slot->length);
}

/* The program's one prepare callback, run before the loop blocks each
 * time: act on every slot whose command completed, fill idle slots with
 * reads, and last, let each connection wait for what its handle now
 * wants, the commands just queued included.  A slot freed by a finished
 * write is reused in the same pass, whatever its position in the ring.
 */
static void
pump_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
  struct slot *slot;
  unsigned i;

  /* Failures first, and only the first: a lost connection fails every
   * command in flight on it, and a finished read must not start a write
   * on a handle that is gone.
   */
  conns_check (&src, &stop);
  conns_check (&dst, &stop);
  if ((slot = ring_first_failed (ring)) != NULL)
    slot_failed (slot);

  for (i = 0; i < ring->nr_slots; i++) {
    slot = &ring->slots[i];
    switch (slot->state) {
    case SLOT_READ_DONE:
      slot_debug (slot, "read done");
      if (!stop_requested (&stop))
        start_write (slot);
      break;
    case SLOT_DONE:
      slot_debug (slot, "done");
      finish (slot);
      break;
    case SLOT_FAILED:           /* reported above */
    case SLOT_IDLE:
    case SLOT_READING:
    case SLOT_WRITING:
    case SLOT_HASHING:
      break;
    }
  }

  while (!stop_requested (&stop) && next_offset < size &&
         (slot = ring_take (ring, next_offset,
                            MIN (ring->buf_size, size - next_offset))) != NULL) {
    next_offset += slot->length;
    start_read (slot);
  }

  if (stop_requested (&stop) ? stop_finished () : copy_finished ())
    ev_break (loop, EVBREAK_ALL);
  conns_update (&src);
  conns_update (&dst);
}

/* After a signal or a failure, once nothing is in flight: say what was
 * done, leave both servers with a clean disconnect, and exit.
 */
static void __attribute__ ((noreturn))
stopped (void)
{
  if (stop.signum != 0)
    message ("interrupted by %s after %" PRIu64 " bytes; the destination "
             "is complete below offset %" PRIu64, stop_signal_name (&stop),
             bytes_done, ring_low_water (ring, next_offset));
  conns_close ((struct conns *const []) { &src, &dst }, 2, &stop);
  stop_exit (&stop);
}

static void __attribute__ ((noreturn))
usage (FILE *fp, int status)
{
  fprintf (fp,
"Usage: %s [OPTIONS] SOURCE DESTINATION\n"
"Copy an NBD image to another NBD server with a ring of asynchronous\n"
"requests in one libev event loop.\n"
IMAGES_HELP
"A DESTINATION file that does not exist is created, raw, as large as\n"
"the source.\n"
"\n"
"Options:\n"
"  --requests=N        requests in flight (1-%d, default %d)\n"
"  --request-size=SIZE bytes per request (%d to %dM, default 256k);\n"
"                      suffixes k, M, G are powers of 1024\n"
"  --init              let libnbd zero read buffers before each read\n"
"  --no-init           do not (default; every read's error is checked)\n"
"  --flush             flush the destination when the copy is done\n"
"  --socket-buffer=SIZE\n"
"                      set SO_SNDBUF and SO_RCVBUF of both sockets\n"
"  -C N, --connections=N\n"
"                      connections to each server (1-%d; default up to\n"
"                      %d, one per CPU, if the server advertises\n"
"                      multi-conn, else 1)\n"
"  --cache=MODE        local image files: default (the page cache) or\n"
"                      none (servers keep out of it)\n"
"  --timeout=SECONDS   fail if a server sends nothing for this long while\n"
"                      a command waits for it (default %d, 0 for never)\n"
"  -p, --progress      show a progress bar on stderr, if it is a terminal\n"
"  --progress=FD       write progress to file descriptor FD as N/100 lines\n"
"  -v, --verbose       print one line per request event, with timings\n"
"  -h, --help          show this help and exit\n"
"  -V, --version       show the version and exit\n",
           progname, MAX_REQUESTS, DEFAULT_REQUESTS,
           MIN_REQUEST_SIZE, MAX_REQUEST_SIZE / (1024 * 1024),
           MAX_CONNECTIONS, DEFAULT_CONNECTIONS, DEFAULT_TIMEOUT);
  exit (status);
}

int
main (int argc, char *argv[])
{
  enum { OPT_REQUESTS = 256, OPT_REQUEST_SIZE, OPT_INIT, OPT_NO_INIT,
         OPT_FLUSH, OPT_SOCKET_BUFFER, OPT_TIMEOUT, OPT_CACHE };
  static const struct option long_options[] = {
    { "requests",            required_argument, NULL, OPT_REQUESTS },
    { "request-size",        required_argument, NULL, OPT_REQUEST_SIZE },
    { "init",                no_argument,       NULL, OPT_INIT },
    { "no-init",             no_argument,       NULL, OPT_NO_INIT },
    { "flush",               no_argument,       NULL, OPT_FLUSH },
    { "progress",            optional_argument, NULL, 'p' },
    { "socket-buffer",       required_argument, NULL, OPT_SOCKET_BUFFER },
    { "cache",               required_argument, NULL, OPT_CACHE },
    { "timeout",             required_argument, NULL, OPT_TIMEOUT },
    { "connections",         required_argument, NULL, 'C' },
    { "verbose",             no_argument,       NULL, 'v' },
    { "help",                no_argument,       NULL, 'h' },
    { "version",             no_argument,       NULL, 'V' },
    { NULL }
  };
  unsigned requests = DEFAULT_REQUESTS;
  uint64_t request_size = DEFAULT_REQUEST_SIZE;
  struct connect_options src_opts = { .pread_initialize = false };
  struct connect_options dst_opts = { .pread_initialize = false };
  int progress_mode = PROGRESS_NONE;
  unsigned timeout = DEFAULT_TIMEOUT;
  unsigned connections = 0;     /* 0: decided by multi-conn */
  enum image_cache cache = IMAGE_CACHE_DEFAULT;
  struct image images[2];
  ev_prepare pump;
  struct ev_loop *loop;
  int c;

  set_progname (argv[0]);
  while ((c = getopt_long (argc, argv, "+:C:pvhV", long_options, NULL)) != -1) {
    switch (c) {
    case OPT_REQUESTS:
      requests = option_requests (optarg);
      break;
    case OPT_REQUEST_SIZE:
      request_size = option_request_size (optarg);
      break;
    case OPT_INIT:
      src_opts.pread_initialize = true;
      break;
    case OPT_NO_INIT:
      src_opts.pread_initialize = false;
      break;
    case OPT_FLUSH:
      want_flush = true;
      break;
    case OPT_SOCKET_BUFFER:
      /* Both ends get the same size: a copy moves every byte through
       * both sockets, and the smaller buffer would set the pace.
       */
      src_opts.socket_buffer = option_socket_buffer (optarg);
      dst_opts.socket_buffer = src_opts.socket_buffer;
      break;
    case OPT_TIMEOUT:
      timeout = option_timeout (optarg);
      break;
    case OPT_CACHE:
      cache = option_cache (optarg);
      break;
    case 'C':
      connections = option_connections (optarg, MAX_CONNECTIONS);
      break;
    case 'p':
      progress_mode = option_progress (optarg);
      break;
    case 'v':
      verbose = true;
      break;
    case 'h':
      usage (stdout, EXIT_SUCCESS);
    case 'V':
      option_version ();
    default:
      option_error (c, argv, long_options);
    }
  }
  if (image_parse_args (argc, argv, optind, images, 2) != 2) {
    fprintf (stderr, "%s: expected SOURCE and DESTINATION; try --help\n",
             progname);
    exit (EXIT_FAILURE);
  }

  /* Connect both ends and check every limit before the first byte is
   * read, so bad input never leaves a half-written destination.
   */
  loop = EV_DEFAULT;
  /* With a timeout, the connections' timers bound the wait for the
   * commands in flight when stopping; without, a grace period does.
   */
  stop_init (&stop, loop, timeout > 0 ? 0 : STOP_GRACE);
  image_prepare (&images[0], "source", false, cache);
  conns_connect (&src, loop, "source", &images[0], &src_opts, timeout,
                 connections, false);
  /* A destination file that does not exist yet is made now that the
   * source's size is known: raw and all holes, as nbdcopy makes it.
   * It is removed again if a check fails before the copy starts.
   */
  if (image_missing (&images[1]))
    image_create (&images[1], "destination",
                  export_size (src.v[0]->nbd, "source"));
  image_prepare (&images[1], "destination", true, cache);
  conns_connect (&dst, loop, "destination", &images[1], &dst_opts,
                 timeout, connections, true);
  size = check_copy (src.v[0]->nbd, dst.v[0]->nbd, request_size);

  ring = ring_new (requests, request_size, RING_ANY_ORDER);
  if (ring == NULL)
    die ("cannot allocate %u requests of %" PRIu64 " bytes: %s",
         requests, request_size, strerror (errno));
  debug ("copying %" PRIu64 " bytes with %u requests of %" PRIu64
         " bytes, read buffers %s", size, requests, request_size,
         src_opts.pread_initialize ? "initialized" : "not initialized");

  conns_set_describe (&src, describe_oldest);
  conns_set_describe (&dst, describe_oldest);
  ev_prepare_init (&pump, pump_cb);
  ev_prepare_start (loop, &pump);

  /* Every check passed: from here on a destination file this program
   * created holds (part of) the copy and stays, as any destination.
   */
  image_keep ();
  progress_init (&progress, progress_mode, size);
  /* The checks above may have taken a while outside the loop: start the
   * timeouts from now, not from the loop's last look at the clock.
   */
  ev_now_update (loop);
  ev_run (loop, 0);
  progress_done (&progress, bytes_done, true);
  if (stop_requested (&stop))
    stopped ();

  ev_prepare_stop (loop, &pump);
  /* A clean disconnect: the destination learns that the client is done
   * and may flush its caches in its own time.
   */
  conns_close ((struct conns *const []) { &src, &dst }, 2, &stop);
  image_free (&images[0]);
  image_free (&images[1]);
  ring_free (ring);
  return EXIT_SUCCESS;
}
