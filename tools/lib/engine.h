/* nbd-libev-examples: the loop both tools run.
 *
 * nbd-evcopy and nbd-evsum run one loop: a ring of slots (common/ring.h),
 * each a piece of the image on its way through a few steps, in one libev
 * loop with one ev_prepare callback.  The engine owns what they share:
 * the endpoints, servers, local files or streams (tools/lib/endpoint.h),
 * the ring and its buffers (tools/lib/buffers.h), the depth
 * (tools/lib/depth.h), the stop and its signals (tools/lib/stop.h),
 * progress, and the prepare callback's frame.
 * What differs is a pass (struct pass): one run of the loop over an
 * image, with its own plan, steps and counters.  nbd-evsum runs one pass
 * per image; nbd-evcopy one to copy, and with --verify a second one that
 * reads the destination back.
 *
 * The prepare callback, before the loop blocks each time:
 *
 *  1. Lost connections and timeouts first (endpoint_check); then the
 *     failed slot with the lowest offset.  A pass may take a failed slot
 *     back (ops->retry: a zero command refused for its length goes again
 *     in smaller pieces).
 *  2. Each slot whose step finished goes to ops->step_done, a switch on
 *     its step: start the next step, or engine_finish it.  A pass with
 *     in_order set moves its slots on strictly in issue order, which is
 *     offset order: a slot only once every slot before it has.
 *     nbd-evsum hands its reads to the hash threads that way, so that
 *     the failure it reports is the first in offset order whichever
 *     read the server answered first: a failure is reported once every
 *     slot before it has moved on.
 *  3. The depth follows its estimates (depth_follow).
 *  4. ops->fill plans pieces and starts them while the depth allows;
 *     with a hash, the in-order consumer retires the head of the ring
 *     for as long as it is ready, and fill goes again, since retiring
 *     freed slots and nothing else would wake the loop for work that
 *     needs no I/O.
 *  5. Once every byte is done (and ops->finished agrees: a flush), or
 *     when stopping once nothing is in flight (and ops->stopped agrees),
 *     the loop breaks.  Last, each connection waits for what its handle
 *     now wants, each file submits what was started, and each stream
 *     watches its descriptor while it has work (endpoint_update).  When
 *     stopping, a stream's queued commands fail first
 *     (endpoint_stopping): nothing else would end them.
 *
 * A slot's step is kept in slot->kind (enum step); slot->state (the
 * ring's) says whether the step is running, finished or failed.  What
 * its range holds for the hash and the depth is in slot->flags (SLOT_DATA,
 * SLOT_ZEROES), set once it is known.
 *
 * The in-order consumer, the liburing examples' pattern: with a hash,
 * slots complete in any order but retire only from the head of the
 * ring, feeding the outer digest in offset order (tools/lib/ordered-hash.h):
 * a data slot's digests once the hash threads are done with it, a zero
 * slot's whole blocks without any work.  Without a hash a slot goes back
 * to the ring as soon as it is over.
 *
 * The engine's own state lives in struct engine, passed explicitly; the
 * prepare watcher is its first member, and the callback casts back.
 * engine-setup.c opens the endpoints and sizes the depth and the ring;
 * engine.c runs the loop and is the one place a slot's step changes.
 */

#ifndef NBD_LIBEV_EXAMPLES_ENGINE_H
#define NBD_LIBEV_EXAMPLES_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include <ev.h>

#include "buffers.h"
#include "depth.h"
#include "spread.h"
#include "endpoint.h"
#include "handle.h"
#include "image.h"
#include "options.h"
#include "ordered-hash.h"
#include "progress.h"
#include "ring.h"
#include "stop.h"
#include "zero.h"

/* What a slot is doing, in slot->kind.  Only engine_start changes it,
 * along the steps that engine.c's table allows (checked unless NDEBUG).
 */
enum step {
  STEP_TAKEN,           /* taken by engine_take: no step started yet */
  STEP_READ,            /* reading its range */
  STEP_WRITE,           /* writing what it read */
  STEP_ZERO,            /* a zero command for a piece (tools/lib/zero.h) */
  STEP_WRITE_ZEROES,    /* a piece written as a buffer of zeroes, where
                           the destination cannot zero */
  STEP_HASH,            /* with the hash threads */
  STEP_READY,           /* over: waits for its turn to retire */
  NR_STEPS
};
extern const char *const step_names[]; /* in enum order, for messages */

/* slot->flags: what the slot's range holds, once known. */
enum {
  SLOT_DATA = 1,        /* data moved through the buffer: hashed from
                           it, and a sample for the depth */
  SLOT_ZEROES = 2,      /* whole blocks of zeroes: hashed without work */
  SLOT_PASS_FLAG = 4,   /* this bit and those above are the pass's */
};

struct pass;

struct pass_ops {
  /* Plan pieces and start them while the depth allows. */
  void (*fill) (struct pass *p);
  /* The slot's step finished (SLOT_DONE): start its next step, or
   * engine_finish it.  Called when stopping too.
   */
  void (*step_done) (struct pass *p, struct slot *slot);
  /* Optional.  The slot's step failed: true if the pass takes it back
   * (the slot is busy again), false to report the failure.
   */
  bool (*retry) (struct pass *p, struct slot *slot);
  /* Optional.  Every byte is done: true once the pass is over too (a
   * flush may still be on its way).
   */
  bool (*finished) (struct pass *p);
  /* Optional.  Stopping, with nothing in flight: true once the program
   * may exit.
   */
  bool (*stopped) (struct pass *p);
  /* Optional.  Stopped by a signal or a failure: how far the pass got,
   * as the end of a sentence that starts "interrupted by SIGINT" or
   * with the failure (" after 123 bytes; ..."), in a string the caller
   * frees; NULL to add nothing.
   */
  char *(*where) (const struct pass *p);
};

/* One run of the loop over an image.  A tool embeds it first in its
 * own struct, and its ops cast back.
 */
struct pass {
  const struct pass_ops *ops;
  struct engine *e;             /* set by engine_run */
  uint64_t size;                /* bytes the pass covers */
  bool open_ended;              /* size is only a bound until the source,
                                   a stream, ends (endpoint_ended): then
                                   the pass sets size */
  uint64_t next_offset;         /* where the next piece starts */
  uint64_t bytes_done;          /* covered: moved, zeroed, skipped, hashed */
  struct ordered_hash *hash;    /* if not NULL, fed in offset order */
  bool sample_reads;            /* the depth samples each read, not each
                                   slot as a whole (read to written) */
  bool keep_bar;                /* the progress bar stays at the end */
  const char *label;            /* starts the bar's frames, or NULL */
  bool in_order;                /* slots move on in issue order (above) */
  const char *name;             /* names the image in a failed hash's
                                   message, if not NULL */
  const char *other_command;    /* for the timeout message when no read
                                   or write is outstanding, if not NULL */
  bool no_hole;                 /* zero commands keep the range
                                   allocated (--allocated) */
  uint64_t acted;               /* in_order: the next slot to act on */
};

/* What the engine keeps of a slot, beside the ring's struct slot
 * (common/ring.h: its state, range and buffer), by slot index.
 * Completion callbacks find the engine here.
 */
struct engine_slot {
  struct engine *e;
  struct slot *slot;
  struct depth_mark taken;      /* when it was taken, for the depth */
  struct endpoint *ep;          /* where its last command went */
  struct conn *conn;            /* on which connection; NULL where the
                                   endpoint has none */
  uint64_t at, length;          /* the range of its step in flight: the
                                   slot's, or a zero piece's */
  struct zero_piece piece;      /* STEP_ZERO, STEP_WRITE_ZEROES: the
                                   piece in flight (tools/lib/zero.h) */
};

/* A pass reads from one endpoint and may write to another. */
#define ENGINE_MAX_ENDPOINTS 2

struct engine {
  ev_prepare prepare;           /* first: prepare_cb casts back */
  struct ev_loop *loop;
  struct stop stop;
  double timeout;               /* --timeout, seconds; 0: none */
  unsigned connections;         /* -C, 0 for the default */
  int progress_mode;
  enum image_cache cache;       /* --cache, for local files */
  unsigned nr_endpoints;
  struct endpoint *endpoints[ENGINE_MAX_ENDPOINTS];
  struct ring *ring;
  struct buffers buffers;       /* the slots' buffers */
  struct engine_slot *slots;    /* by slot index */
  struct depth depth;
  struct spread spread;         /* connections per server */
  unsigned served;              /* requests the servers serve at once */
  unsigned request_bound;       /* the depth's most requests, whatever
                                   the servers serve */
  unsigned reads;               /* reads in flight */
  struct progress progress;
  struct pass *pass;            /* the pass the loop runs */
};

/* The most the depth may grow to: option_depth_bounds, and with a
 * hash of digest in blocks of block_size, no more than the digests of a
 * slot may take (ordered_hash_bound).  digest NULL: no hash.  Fatal,
 * with the sizes, if even the starting depth's digests would not fit.
 */
void engine_bounds (const struct shared_options *o, const char *digest,
                    uint64_t block_size, unsigned *max_requests,
                    uint64_t *max_size);

/* The default loop, watching for SIGINT and SIGTERM, and the options
 * every pass shares.  With a timeout, the connections' timers bound the
 * wait for the commands in flight when stopping; without, a grace
 * period does (tools/lib/stop.h).
 */
void engine_init (struct engine *e, const struct shared_options *o);

/* Open an image (endpoint_open, with -C, --timeout and --cache), name
 * labelling messages; writing says whether the pass will write to it.
 */
struct endpoint *engine_open (struct engine *e, const char *name,
                              struct image *img,
                              const struct handle_options *opts,
                              bool writing);

/* The depth (tools/lib/depth.h) within every server's limits: unless
 * size_given, request_size is fitted to each server's maximum block
 * size in multiples of unit; then checked against each; max_size halves
 * to fit too.  Then the ring, for the most the depth may reach, with
 * its buffers on a stack (tools/lib/buffers.h).
 */
void engine_set_depth (struct engine *e, unsigned requests,
                       uint64_t request_size, bool size_given,
                       unsigned max_requests, uint64_t max_size,
                       uint64_t unit);

/* From the prepare callback, after the depth's update at now (ns),
 * with left bytes of the pass yet to start: more connections where
 * what the servers serve at once bounds the rate (tools/lib/spread.h),
 * and a wider cap on requests once they are up.
 */
void engine_widen (struct engine *e, uint64_t now, uint64_t left);

/* Run the loop over p until it is over.  Stopped by a signal or a
 * failure, it disconnects cleanly and exits instead (tools/lib/stop.h).
 */
void engine_run (struct engine *e, struct pass *p);

/* True once the pass is stopping: no new command may start. */
static inline bool
engine_stopping (const struct pass *p)
{
  return stop_requested (&p->e->stop);
}

/* A slot for the next piece, [p->next_offset, + length), at
 * STEP_TAKEN, and next_offset moved past it.  With buffer, the slot
 * takes the buffer used last (tools/lib/buffers.h); a slot that does
 * no I/O needs none.
 */
struct slot *engine_take (struct pass *p, uint64_t length, bool buffer);

/* Start the slot's next step: the one place a step begins.  For a
 * command (read, write, zero, write zeroes), on ep, over [at, at +
 * length): the slot's range, or a zero piece within it.  Each command
 * completes the same way, and the slot is the pass's again, through
 * ops->step_done, in a later turn of the loop.  STEP_HASH and
 * STEP_READY are engine_finish's.
 */
void engine_start (struct pass *p, struct slot *slot, enum step step,
                   struct endpoint *ep, uint64_t at, uint64_t length);

/* Start reading the slot's whole range from ep (STEP_READ). */
static inline void
engine_read (struct pass *p, struct slot *slot, struct endpoint *ep)
{
  engine_start (p, slot, STEP_READ, ep, slot->offset, slot->length);
}

/* The zero piece of a slot (tools/lib/zero.h), kept by the engine. */
struct zero_piece *engine_piece (struct pass *p, const struct slot *slot);

/* A range that needs no slot at all is done (a skipped hole). */
void engine_skip (struct pass *p, uint64_t length);

/* The slot's I/O is over.  With a hash, data goes to the hash threads
 * (STEP_HASH) and zeroes wait for their turn (STEP_READY); without, the
 * slot goes back to the ring at once.
 */
void engine_finish (struct pass *p, struct slot *slot);

/* Disconnect every server cleanly, close every file (endpoint_close). */
void engine_close (struct engine *e);

/* Free the ring and its buffers, once no hash thread holds a slot. */
void engine_free (struct engine *e);

#endif /* NBD_LIBEV_EXAMPLES_ENGINE_H */
