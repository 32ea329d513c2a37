/* nbd-libev-examples: how many connections to each server.  See
 * spread.h.
 */

#include <config.h>

#include <stdbool.h>
#include <stdint.h>

#include "depth.h"
#include "spread.h"
#include "util.h"

void
spread_init (struct spread *sp, unsigned connections, unsigned judged_most,
             unsigned most)
{
  most = MAX (connections, most);
  *sp = (struct spread) {
    .connections = connections, .most = most,
    .judged_most = MIN (MAX (connections, judged_most), most),
  };
}

/* What the servers serve at once bounds the rate: the depth is at its
 * cap, and every request in flight is being served, none waits.  A
 * path that holds less than the cap queues the rest, and more
 * connections would only queue more.  Two measures tell it, each
 * within SPREAD_HELD: the path holds the cap (BtlBw times RTprop), or
 * the drain found no queue at the cap (the round trip before it, at
 * the cap, as short as the drain's).  The second is known as the drain
 * ends; the first once slots taken at the refilled cap are back, some
 * round trips later.  Only once the first drain has measured the
 * round trip, and not during a drain: a wider cap while starting would
 * end starting on the queue it makes in servers that are short of CPU,
 * and drain all the way to the floor.
 */
static bool
served_bound (const struct depth *d)
{
  double cap = (double) d->max_requests * d->max_size;

  if (d->drains == 0 || d->drain_ns > 0 ||
      d->requests < d->max_requests || d->request_size < d->max_size)
    return false;
  return d->btlbw * d->rtprop_ns / 1e9 * SPREAD_HELD >= cap ||
    (d->drain_from >= cap && d->drain_rtt_ns > 0 &&
     d->drain_from_rtt_ns <= SPREAD_HELD * d->drain_rtt_ns);
}

/* A doubling is judged once the depth has held the wider cap for three
 * epochs: a slot's rate is that of the depth a round trip before, and
 * the depth's buffers at the wider cap are touched for the first time,
 * so the first epochs there show less than the cap gives.  Requests
 * that only wait show sooner: the second epoch at the wider cap, the
 * first wholly at it, has queueing round trips.  One that brought too
 * little takes the cap back to where it was: the extra requests cost
 * the client CPU for no rate (the kernel's copies miss the caches).  A
 * depth that does not get there within SPREAD_EPOCHS of the wider cap
 * was asked for no more than the old one: the doubling brought
 * nothing.  Connections that never open leave the cap, and the count,
 * where they were.
 */
static void
judge (struct spread *sp, struct depth *d, uint64_t now_ns)
{
  if (d->max_requests <= sp->cap)
    return;
  if (sp->raised_at == 0)
    sp->raised_at = d->epochs + 1;
  if (!sp->held && d->requests == d->max_requests) {
    sp->held = true;
    sp->epochs_at = d->epochs;
  }
  if (sp->held && d->epochs > sp->epochs_at + 1 &&
      d->last_rtt_ns > QUEUE_RTT * d->rtprop_ns) {
    sp->judging = false;
    sp->over = true;
  }
  else if (sp->held ? d->epochs > sp->epochs_at + 2
                    : d->epochs + 1 > sp->raised_at + SPREAD_EPOCHS) {
    sp->judging = false;
    sp->over = !sp->held || d->btlbw < SPREAD_GROWTH * sp->rate_before;
    sp->far = !sp->over && d->btlbw >= SPREAD_FAR * sp->rate_measured;
  }
  if (!sp->judging && sp->over)
    sp->narrowed = depth_narrow (d, sp->cap, now_ns);
}

bool
spread_update (struct spread *sp, struct depth *d, uint64_t now_ns,
               uint64_t left)
{
  bool last;

  if (sp->judging)
    judge (sp, d, now_ns);
  if (sp->judging || sp->over || sp->connections >= sp->most ||
      !served_bound (d))
    return false;
  /* Past the judged doublings, the last only for a long pass from far
   * servers, and not judged (spread.h).
   */
  last = sp->connections >= sp->judged_most;
  if (last && (!sp->far || left < d->btlbw * (SPREAD_LONG_NS / 1e9)))
    return false;
  sp->judging = !last;
  sp->held = false;
  sp->raised_at = 0;
  sp->rate_measured = d->btlbw;
  /* Judged against the rate the cap gives, even where BtlBw has not
   * caught up with it yet.
   */
  depth_served (d);
  sp->rate_before = d->btlbw;
  sp->cap = d->max_requests;
  sp->connections = MIN (2 * sp->connections, sp->most);
  return true;
}
