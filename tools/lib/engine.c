/* nbd-libev-examples: the loop both tools run.  See engine.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include <ev.h>

#include "engine.h"
#include "ring-query.h"
#include "util.h"

const char *const step_names[] = {
  [STEP_TAKEN] = "taken",
  [STEP_READ] = "read",
  [STEP_WRITE] = "write",
  [STEP_ZERO] = "zero",
  [STEP_WRITE_ZEROES] = "write zeroes",
  [STEP_HASH] = "hashing",
  [STEP_READY] = "ready",
};

/* The steps that may follow each step.  A copy reads, then writes,
 * zeroes (one piece after another, and buffers of zeroes once the
 * destination cannot zero) or has nothing to send; a hash takes its
 * data, and a slot of zeroes waits ready.  A failed zero piece may go
 * again as the same step.  STEP_HASH and STEP_READY end a slot: it
 * only retires.
 */
#define TO(step) (1u << (step))
static const unsigned next_steps[NR_STEPS] = {
  [STEP_TAKEN] = TO (STEP_READ) | TO (STEP_ZERO) | TO (STEP_WRITE_ZEROES) |
                 TO (STEP_READY),
  [STEP_READ] = TO (STEP_WRITE) | TO (STEP_ZERO) | TO (STEP_WRITE_ZEROES) |
                TO (STEP_HASH) | TO (STEP_READY),
  [STEP_WRITE] = TO (STEP_HASH) | TO (STEP_READY),
  [STEP_ZERO] = TO (STEP_ZERO) | TO (STEP_WRITE_ZEROES) | TO (STEP_READY),
  [STEP_WRITE_ZEROES] = TO (STEP_WRITE_ZEROES) | TO (STEP_READY),
};
#undef TO

/* Debug builds check every step against the table, and that a slot
 * starts one only while no step of it runs (or right after the take).
 */
static void
check_step (const struct slot *slot, enum step step)
{
  assert (slot->kind >= 0 && slot->kind < NR_STEPS);
  assert (next_steps[slot->kind] & (1u << step));
  assert (slot->state != SLOT_IDLE);
  assert (slot->state != SLOT_BUSY || slot->kind == STEP_TAKEN);
  (void) slot;
  (void) step;
}

/* A step's command, for messages: a buffer of zeroes is a write. */
static const char *
command_name (enum step step)
{
  return step == STEP_WRITE_ZEROES ? "write" : step_names[step];
}

/* The busy slot taken first whose command went to c and whose step is
 * one of kinds (n of them), or NULL.
 */
static const struct slot *
oldest_of (const struct engine *e, const struct conn *c,
           const enum step *kinds, size_t n)
{
  const struct slot *oldest = NULL, *slot;
  unsigned i;
  size_t k;

  for (i = 0; i < e->ring->nr_slots; i++) {
    slot = e->slots[i].slot;
    if (slot->state != SLOT_BUSY || e->slots[i].conn != c)
      continue;
    for (k = 0; k < n && slot->kind != (int) kinds[k]; k++)
      ;
    if (k < n && (oldest == NULL || slot->seq < oldest->seq))
      oldest = slot;
  }
  return oldest;
}

/* For the timeout message: the oldest command still waiting on c,
 * reads first, as they are the oldest step of a slot, then writes (of
 * data or of zeroes), then zero commands.
 */
static void
describe_oldest (const struct conn *c, void *data, char *buf, size_t len)
{
  static const enum step reads[] = { STEP_READ };
  static const enum step writes[] = { STEP_WRITE, STEP_WRITE_ZEROES };
  static const enum step zeroes[] = { STEP_ZERO };
  struct engine *e = data;
  const struct slot *slot = oldest_of (e, c, reads, 1);

  if (slot == NULL)
    slot = oldest_of (e, c, writes, 2);
  if (slot == NULL)
    slot = oldest_of (e, c, zeroes, 1);
  if (slot != NULL)
    snprintf (buf, len, "%s at offset %" PRIu64 " length %" PRIu64,
              command_name (slot->kind), e->slots[slot->index].at,
              e->slots[slot->index].length);
  else if (e->pass->other_command != NULL)
    snprintf (buf, len, "%s", e->pass->other_command);
  else
    snprintf (buf, len, "a command other than a read or write");
}

struct slot *
engine_take (struct pass *p, uint64_t length, bool buffer)
{
  struct engine *e = p->e;
  struct slot *slot = ring_take (e->ring, p->next_offset, length);

  if (buffer)
    buffers_take (&e->buffers, slot);
  slot->kind = STEP_TAKEN;
  slot->flags = 0;
  e->slots[slot->index].taken = depth_mark (&e->depth, now_ns ());
  p->next_offset += length;
  return slot;
}

struct zero_piece *
engine_piece (struct pass *p, const struct slot *slot)
{
  return &p->e->slots[slot->index].piece;
}

/* Every command's completion, whichever endpoint it went to.
 * Completion callbacks run inside libnbd while it holds the handle's
 * lock, so they must not start new commands on that handle:
 * ring_command_done (common/ring.h) only records the result in the
 * slot, and the prepare callback acts on it in the next loop
 * iteration.  A successful read is a sample of the round trip for a
 * pass that samples reads; the depth only counts, so it may be fed from
 * inside the callback.
 */
static int
command_done (void *user_data, int *error)
{
  struct engine_slot *es = user_data;
  struct engine *e = es->e;

  if (es->slot->kind == STEP_READ) {
    if (*error == 0 && e->pass->sample_reads)
      depth_sample (&e->depth, es->slot->length, es->taken, now_ns ());
    e->reads--;
  }
  return ring_command_done (es->slot, error);
}

/* Start the step's command; -1 with errno if it could not start. */
static int
issue (struct pass *p, struct slot *slot, enum step step,
       struct endpoint *ep, uint64_t at, uint64_t length)
{
  nbd_completion_callback cb = { .callback = command_done,
                                 .user_data = &p->e->slots[slot->index] };

  struct conn **conn = &p->e->slots[slot->index].conn;

  switch (step) {
  case STEP_READ:
    return endpoint_read (ep, slot->buf, length, at, &slot->length, cb,
                          conn);
  case STEP_WRITE:
    return endpoint_write (ep, slot->buf, length, at, cb, conn);
  case STEP_WRITE_ZEROES:
    memset (slot->buf, 0, length);
    return endpoint_write (ep, slot->buf, length, at, cb, conn);
  case STEP_ZERO:
    return endpoint_zero (ep, length, at, p->no_hole, cb, conn);
  default:
    abort ();                   /* engine_finish's steps: no command */
  }
}

void
engine_start (struct pass *p, struct slot *slot, enum step step,
              struct endpoint *ep, uint64_t at, uint64_t length)
{
  struct engine *e = p->e;
  struct engine_slot *es = &e->slots[slot->index];
  int err = 0;

  check_step (slot, step);
  slot->kind = step;
  slot->state = SLOT_BUSY;
  slot->error = 0;
  es->ep = ep;
  es->at = at;
  es->length = length;
  /* A command that cannot even start never calls command_done. */
  if (issue (p, slot, step, ep, at, length) == -1)
    err = endpoint_issue_errno (ep, es->conn);
  else if (step == STEP_READ)
    e->reads++;
  if (at != slot->offset || length != slot->length)
    debug ("slot %u: %s piece offset %" PRIu64 " length %" PRIu64,
           slot->index, step_names[step], at, length);
  else
    slot_debug (slot, step_names[step]);
  if (err != 0)
    ring_complete (slot, err);
}

void
engine_skip (struct pass *p, uint64_t length)
{
  p->next_offset += length;
  p->bytes_done += length;
  progress_update (&p->e->progress, p->bytes_done);
}

/* A slot is over: its bytes count, a data slot is a sample of the
 * round trip from its read to its end (unless the pass sampled its
 * read already), and its buffer goes back on the stack.  Zero commands
 * and skipped ranges are no sample: they move no data, and one zero
 * command of gigabytes would pass for a huge rate.
 */
static void
account (struct engine *e, struct pass *p, struct slot *slot)
{
  if ((slot->flags & SLOT_DATA) && !p->sample_reads)
    depth_sample (&e->depth, slot->length, e->slots[slot->index].taken,
                  now_ns ());
  p->bytes_done += slot->length;
  progress_update (&e->progress, p->bytes_done);
  if (slot->buf != NULL)
    buffers_give (&e->buffers, slot);
}

void
engine_finish (struct pass *p, struct slot *slot)
{
  if (p->hash == NULL) {
    slot_debug (slot, step_names[slot->kind]);
    account (p->e, p, slot);
    ring_release (slot);
  }
  else if (slot->flags & SLOT_DATA) {
    /* The buffer stays untouched until the slot retires. */
    check_step (slot, STEP_HASH);
    slot->kind = STEP_HASH;
    slot->state = SLOT_BUSY;
    slot_debug (slot, step_names[STEP_HASH]);
    ordered_hash_give (p->hash, slot);
  }
  else {
    check_step (slot, STEP_READY);
    slot->kind = STEP_READY;
    slot->state = SLOT_DONE;
  }
}

/* The in-order consumer: while the head of the ring is hashed (or holds
 * zeroes), feed it to the outer digest and retire it.  Slots behind the
 * head may be over already; they wait their turn.  A hash that failed
 * stays at the head, for report_failure.  Returns how many retired.
 */
static unsigned
retire (struct engine *e, struct pass *p)
{
  struct slot *slot;
  unsigned n = 0;

  while ((slot = ring_head (e->ring)) != NULL) {
    if (slot->kind == STEP_HASH) {
      if (!ordered_hash_done (p->hash, slot) || slot->state == SLOT_FAILED)
        break;
      ordered_hash_feed (p->hash, slot);
    }
    else if (slot->kind == STEP_READY)
      ordered_hash_feed_zeroes (p->hash, slot->length);
    else
      break;
    slot_debug (slot, "retired");
    account (e, p, slot);
    ring_retire_head (e->ring);
    n++;
  }
  return n;
}

/* A failed step ends the pass, but cleanly (tools/lib/stop.h): the first
 * failure is kept for the last line, no new command starts, and the
 * program exits once the commands in flight are over.  A failed read's
 * buffer is never written or hashed: with pread_initialize off it holds
 * whatever the previous request left, not the image's data.
 */
static void
report_failure (struct engine *e, struct pass *p, const struct slot *slot)
{
  const struct engine_slot *es = &e->slots[slot->index];

  slot_debug (slot, "failed");
  if (slot->kind == STEP_HASH) {
    stop_fail (&e->stop, "%s%shashing failed at offset %" PRIu64
               " length %" PRIu64 ": %s", p->name ? p->name : "",
               p->name ? ": " : "", slot->offset, slot->length,
               strerror (slot->error));
    return;
  }
  stop_fail (&e->stop, "%s: %s failed at offset %" PRIu64 " length %"
             PRIu64 ": %s", endpoint_conn_name (es->ep, es->conn),
             command_name (slot->kind), es->at, es->length,
             endpoint_strerror (es->ep, es->conn, slot->error));
}

/* The failed slot with the lowest offset, once the pass has taken back
 * those it retries, is reported, once: after that the pass is stopping.
 * A pass in order waits until every slot before it has moved on
 * (act_in_order stops there).  Any other reports it at once: a
 * destination shutting down answers every write with an error and then
 * closes, and a copy should stop writing sooner rather than later.
 */
static void
check_failures (struct engine *e, struct pass *p)
{
  struct slot *slot;
  unsigned i;

  while ((slot = ring_first_failed (e->ring)) != NULL &&
         !stop_requested (&e->stop) && p->ops->retry != NULL &&
         p->ops->retry (p, slot))
    ;
  if (slot == NULL || stop_requested (&e->stop) ||
      (p->in_order && slot->seq != p->acted))
    return;
  /* A handle found dead since the loop's last look refuses commands
   * with ENOTCONN: its lost connection is the failure to report.
   */
  for (i = 0; i < e->nr_endpoints; i++)
    endpoint_check (e->endpoints[i], &e->stop);
  if (!stop_requested (&e->stop))
    report_failure (e, p, slot);
}

/* A pass in order: act on slots in issue order, from the first not yet
 * moved on, and stop at one whose step is still running, failed, or
 * did not move on (stopping).  Slots given to the hash threads, or
 * ready to retire, have moved on.  An in-order ring keeps slot seq at
 * seq % nr_slots.
 */
static void
act_in_order (struct engine *e, struct pass *p)
{
  struct ring *ring = e->ring;
  struct slot *slot;
  int kind;

  p->acted = MAX (p->acted, ring->head_seq);
  for (; p->acted < ring->next_seq; p->acted++) {
    slot = &ring->slots[p->acted % ring->nr_slots];
    if (slot->kind == STEP_HASH || slot->kind == STEP_READY)
      continue;
    kind = slot->kind;
    if (slot->state != SLOT_DONE)
      break;
    p->ops->step_done (p, slot);
    if (slot->kind == kind)
      break;
  }
}

/* Act on every slot whose step finished.  The slots in use are among
 * the last taken: newest first, and only until all of them were seen,
 * as ring_first_failed, so that a ring sized for the deepest depth is
 * not scanned whole on every pass.
 */
static void
act_on_finished (struct engine *e, struct pass *p)
{
  struct ring *ring = e->ring;
  unsigned i = ring->next_seq % ring->nr_slots, k, seen, in_use = ring->in_use;
  struct slot *slot;

  if (p->in_order) {
    act_in_order (e, p);
    return;
  }
  for (k = seen = 0; k < ring->nr_slots && seen < in_use; k++) {
    i = i ? i - 1 : ring->nr_slots - 1;
    slot = &ring->slots[i];
    seen += slot->state != SLOT_IDLE;
    if (slot->state == SLOT_DONE && slot->kind != STEP_READY &&
        slot->kind != STEP_HASH)
      p->ops->step_done (p, slot);
  }
}

static bool
endpoints_busy (const struct engine *e)
{
  unsigned i;

  for (i = 0; i < e->nr_endpoints; i++)
    if (endpoint_busy (e->endpoints[i]))
      return true;
  return false;
}

/* True when the loop may end: every byte is done and the pass agrees
 * (a flush that fails stops the pass instead), or, when stopping, once
 * nothing is in flight and the pass agrees.
 */
static bool
pass_over (struct engine *e, struct pass *p)
{
  if (!stop_requested (&e->stop) && p->next_offset >= p->size &&
      e->ring->in_use == 0 &&
      (p->ops->finished == NULL || p->ops->finished (p)) &&
      !stop_requested (&e->stop))
    return true;
  return stop_requested (&e->stop) && !endpoints_busy (e) &&
    (p->ops->stopped == NULL || p->ops->stopped (p));
}

/* The program's one prepare callback, run before the loop blocks each
 * time (engine.h has the steps).  Failures first, and only the first: a
 * lost connection fails every command in flight on it, and a finished
 * read must not start a write on a handle that is gone.
 */
static void
prepare_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
  struct engine *e = (struct engine *) w;
  struct pass *p = e->pass;
  unsigned i;

  for (i = 0; i < e->nr_endpoints; i++)
    endpoint_check (e->endpoints[i], &e->stop);
  check_failures (e, p);
  act_on_finished (e, p);
  /* The depth follows the estimates (tools/lib/depth.h): once an epoch, and
   * while starting as soon as a slot shows more rate.
   */
  if (!stop_requested (&e->stop)) {
    uint64_t now = now_ns ();

    depth_follow (&e->depth, now);
    engine_widen (e, now, p->size > p->next_offset ?
                  p->size - p->next_offset : 0);
  }
  do
    if (!stop_requested (&e->stop))
      p->ops->fill (p);
  while (p->hash && !stop_requested (&e->stop) && retire (e, p) > 0);
  /* A command libnbd refused above failed its slot in this pass, and
   * nothing would wake the loop for it: report it now.
   */
  check_failures (e, p);
  if (stop_requested (&e->stop))
    for (i = 0; i < e->nr_endpoints; i++)
      endpoint_stopping (e->endpoints[i]);
  if (pass_over (e, p))
    ev_break (loop, EVBREAK_ALL);
  for (i = 0; i < e->nr_endpoints; i++)
    endpoint_update (e->endpoints[i]);
}

/* After a signal or a failure, once nothing is in flight: say how far
 * the pass got, leave every server with a clean disconnect, and exit.
 * The ring stays: hash threads may still be working on its buffers,
 * and exit stops them (tools/lib/ordered-hash.c).
 */
static void __attribute__ ((noreturn))
stopped (struct engine *e, struct pass *p)
{
  char *where = p->ops->where ? p->ops->where (p) : NULL;

  engine_close (e);
  if (e->stop.signum != 0)
    message ("interrupted by %s%s", stop_signal_name (&e->stop),
             where ? where : "");
  else if (where != NULL && e->stop.message[0] != '\0') {
    message ("%s%s", e->stop.message, where);
    e->stop.message[0] = '\0';
  }
  free (where);
  stop_exit (&e->stop);
}

/* The stop's word on a signal (tools/lib/stop.h): the first says at
 * once what the program now waits for, which against a server that
 * answers late, or with a long --timeout, may take a while; the second
 * how far the pass got, as the program exits without waiting.
 */
static void
say (void *data, const struct stop *s, int signum, bool again)
{
  struct engine *e = data;
  struct pass *p = e->pass;
  const char *name = signum == SIGINT ? "SIGINT" : "SIGTERM";
  char *where;

  if (p == NULL || e->ring == NULL)
    return;
  if (!again) {
    const char *more = signum == SIGINT ? "press Ctrl-C" : "send it";
    unsigned i;

    if (e->ring->in_use > 0) {
      message ("stopping on %s: waiting for the %u requests in flight; "
               "%s again to stop at once", name, e->ring->in_use, more);
      return;
    }
    /* No request, but a command of the endpoint's own: a flush. */
    for (i = 0; i < e->nr_endpoints; i++)
      if (endpoint_busy (e->endpoints[i])) {
        message ("stopping on %s: waiting for the commands in flight on "
                 "%s; %s again to stop at once", name,
                 e->endpoints[i]->name, more);
        return;
      }
    return;
  }
  where = p->ops->where ? p->ops->where (p) : NULL;
  message ("interrupted again by %s: exiting at once%s", name,
           where ? where : "");
  free (where);
}

void
engine_run (struct engine *e, struct pass *p)
{
  unsigned i;

  e->pass = p;
  p->e = e;
  p->acted = e->ring->next_seq;
  for (i = 0; i < e->nr_endpoints; i++)
    endpoint_set_describe (e->endpoints[i], describe_oldest, e);
  e->stop.say = say;
  e->stop.say_data = e;
  ev_prepare_init (&e->prepare, prepare_cb);
  ev_prepare_start (e->loop, &e->prepare);
  progress_init (&e->progress, e->progress_mode,
                 p->open_ended ? PROGRESS_TOTAL_UNKNOWN : p->size, p->label);
  /* The checks before may have taken a while outside the loop: start
   * the timeouts from now, not from the loop's last look at the clock.
   */
  ev_now_update (e->loop);
  ev_run (e->loop, 0);
  if (p->open_ended && !stop_requested (&e->stop))
    e->progress.total = p->size;
  progress_done (&e->progress, p->bytes_done, p->keep_bar);
  ev_prepare_stop (e->loop, &e->prepare);
  if (stop_requested (&e->stop))
    stopped (e, p);
}

void
engine_close (struct engine *e)
{
  endpoint_close (e->endpoints, e->nr_endpoints, &e->stop);
  e->nr_endpoints = 0;
}

void
engine_free (struct engine *e)
{
  if (e->ring != NULL) {
    buffers_free (&e->buffers, e->ring);
    ring_free (e->ring);
    e->ring = NULL;
  }
  free (e->slots);
  e->slots = NULL;
}
