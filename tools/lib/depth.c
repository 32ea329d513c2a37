/* nbd-libev-examples: how many bytes to keep in flight.  See depth.h. */

#include <config.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "depth.h"
#include "util.h"

void
depth_init (struct depth *d, unsigned requests, uint64_t request_size,
            unsigned max_requests, uint64_t max_size)
{
  *d = (struct depth) {
    .requests = requests, .request_size = request_size,
    .min_requests = requests, .max_requests = max_requests,
    .min_size = request_size, .max_size = max_size, .startup = true,
    .settled = true,
  };
}

void
depth_start (struct depth *d, uint64_t size)
{
  if (size > d->min_size && size <= d->max_size)
    d->request_size = size;
}

/* A round trip measured with bytes in flight, less the time those
 * bytes wait in the servers by the drain's measure of the queue (none
 * until the drain measured one): the round trip without queue.  At
 * least 1 ns, 0 being "not measured".
 */
static uint64_t
unqueued (const struct depth *d, uint64_t rtt_ns, double bytes)
{
  double queue_ns = bytes * d->queue_ns_per_byte;

  return rtt_ns > queue_ns + 1 ? (uint64_t) (rtt_ns - queue_ns) : 1;
}

void
depth_sample (struct depth *d, uint64_t bytes, struct depth_mark taken,
              uint64_t now_ns)
{
  /* At least 1 ns: 0 stands for no round trip measured yet. */
  uint64_t rtt = MAX (now_ns - taken.ns, 1), free_ns;
  double rate;

  if (d->epoch_start_ns == 0) {
    d->epoch_start_ns = taken.ns;
    d->epoch_bytes = d->requests * d->request_size;
    d->epoch_delivered = d->delivered;
  }
  if (!d->settled && taken.ns >= d->change_ns)
    d->settled = true;
  d->delivered += bytes;
  /* BBR's delivery rate: what was delivered while this slot was out,
   * over how long it was out.  It is the rate of the depth the slot
   * was taken at, not mixed with later changes.
   */
  rate = (d->delivered - taken.delivered) * 1e9 / rtt;
  if (rate > d->epoch_rate)
    d->epoch_rate = rate;
  if (d->epoch_rtt_ns == 0 || rtt < d->epoch_rtt_ns)
    d->epoch_rtt_ns = rtt;
  free_ns = unqueued (d, rtt, taken.depth);
  if (d->epoch_free_ns == 0 || free_ns < d->epoch_free_ns)
    d->epoch_free_ns = free_ns;
  /* At the least, the drain counts only slots taken once the first
   * slot taken at it is back: the ones before it waited behind the
   * half's larger queue, and would make the least's round trip look
   * longer than it is.
   */
  if (d->drain_ns > 0 && !d->halved && d->least_from_ns == 0 &&
      taken.ns >= d->drain_ns)
    d->least_from_ns = now_ns;
  if (d->drain_ns > 0 && taken.ns >= d->drain_ns &&
      (d->halved || (d->least_from_ns > 0 &&
                     taken.ns >= d->least_from_ns))) {
    d->drained++;
    if (d->drain_rtt_ns == 0 || rtt < d->drain_rtt_ns)
      d->drain_rtt_ns = rtt;
  }
}

/* The estimates, each as BBR keeps it: the highest rate of the last
 * DEPTH_EPOCHS epochs, and the shortest round trip without queue
 * (rtt, 0 if the epoch had none); once that is RTPROP_WINDOW_NS old,
 * depth_update drains to measure it again.
 */
static void
estimate (struct depth *d, uint64_t rtt, uint64_t now_ns)
{
  unsigned i, n = d->epochs < DEPTH_EPOCHS ? d->epochs : DEPTH_EPOCHS;

  d->btlbw = 0;
  for (i = 0; i < n; i++)
    if (d->rate[i] > d->btlbw)
      d->btlbw = d->rate[i];
  if (rtt > 0 && (d->rtprop_ns == 0 || rtt <= d->rtprop_ns)) {
    d->rtprop_ns = rtt;
    d->rtprop_at_ns = now_ns;
  }
}

/* The least depth that holds target bytes: larger requests first, up
 * to the most that min_requests of them need, then more requests.
 */
static void
holding (const struct depth *d, double target, unsigned *requests,
         uint64_t *size)
{
  *size = d->min_size;
  *requests = d->min_requests;
  while (*size < d->max_size && *size * d->min_requests < target)
    *size = MIN (*size * 2, d->max_size);
  while (*requests < d->max_requests && (double) *requests * *size < target)
    (*requests)++;
}

/* Set the depth to requests of size.  True if it changed. */
static bool
set_to (struct depth *d, unsigned requests, uint64_t size)
{
  if (size == d->request_size && requests == d->requests)
    return false;
  d->request_size = size;
  d->requests = requests;
  return true;
}

/* Set the depth to hold target bytes, rounded up to a whole depth.
 * With grow_only, a target below the depth now changes nothing.  True
 * if the depth changed.
 */
static bool
set_depth (struct depth *d, double target, bool grow_only)
{
  uint64_t size;
  unsigned requests;

  holding (d, target, &requests, &size);
  if (grow_only && requests * size <= d->requests * d->request_size)
    return false;
  return set_to (d, requests, size);
}

/* While starting, the depth grows as soon as a slot shows more rate
 * than the estimate, not only once an epoch: each slot's rate is that
 * of the depth a round trip ago, so waiting for the epoch's end as well
 * would add a round trip to every step of the climb.  For the same
 * reason the estimate alone asks for too little while the depth
 * doubles: it grows also by the bytes delivered since the epoch began,
 * as TCP's slow start adds to its window what each acknowledgement
 * acknowledges, which doubles the depth every round trip whatever the
 * estimates lag; not in the first epoch of a start (the first, or the
 * one after the drain), whose round trips may be those of the queue
 * the starting depth makes in a near server, or of the first tenths of
 * a second, which are slow.  It grows to no more than the startup
 * gain times the depth the epoch began with, the most a round trip can
 * show to be needed, rounded up to whole requests.
 */
static bool
startup_grow (struct depth *d, uint64_t now_ns)
{
  double target;

  if (d->epoch_rate <= d->btlbw)
    return false;
  d->btlbw = d->epoch_rate;
  if (d->rtprop_ns == 0 || d->epoch_free_ns < d->rtprop_ns) {
    d->rtprop_ns = d->epoch_free_ns;
    d->rtprop_at_ns = now_ns;
  }
  if (d->epoch_rtt_ns > QUEUE_RTT * d->rtprop_ns)
    return false;               /* queueing: see depth_update */
  target = STARTUP_GAIN * d->btlbw * d->rtprop_ns / 1e9;
  if (d->startup_epochs > 0)
    target = MAX (target, (double) d->epoch_bytes +
                  (d->delivered - d->epoch_delivered));
  return set_depth (d, MIN (target, STARTUP_GAIN * d->epoch_bytes), true);
}

/* Once starting is over, the round trip is measured again with less in
 * flight, as BBR's PROBE_RTT does: the climb leaves requests queued in
 * the servers, and against a near server the shortest round trip seen
 * so far may be one of the slow first tenths of a second, so that what
 * the path holds would be taken for more than it is.
 *
 * The drain goes first to half the depth or less.  Requests queued in
 * a server take about half as long with half as many ahead of them;
 * against a server far away that was not queueing they take as long as
 * before.
 * So if the slots taken at half the depth come back no sooner than the
 * shortest round trip of the epoch before the drain over QUEUE_RTT,
 * nothing was queued: the depth goes back at once, and a far server's
 * drain costs about a round trip, not the two that emptying the path
 * and filling it again from the least would.  If they come back
 * QUEUE_RTT times sooner, the drain goes on to the least.  Each stage
 * lasts until min_requests slots taken since it began have come back.
 */
static void
drain_begins (struct depth *d, uint64_t now_ns)
{
  d->drain_ns = now_ns;
  d->least_from_ns = 0;
  d->drained = 0;
  d->drain_rtt_ns = 0;
}

/* The half is rounded down, one step below what holding gives, so that
 * it is never more than half unless half is below the least: rounded
 * up, 17 requests of 1 MiB would "halve" to 16 of them, which shows
 * nothing of a queue.  The step down is one request fewer, or at
 * min_requests, requests of half the size.
 */
void
depth_half (const struct depth *d, unsigned *requests, uint64_t *size)
{
  double half = (double) d->requests * d->request_size / 2;

  holding (d, half, requests, size);
  if ((double) *requests * *size > half) {
    if (*requests > d->min_requests)
      (*requests)--;
    else if (*size > d->min_size)
      *size /= 2;
  }
}

static bool
start_drain (struct depth *d, uint64_t rtt_ns, uint64_t now_ns)
{
  double least = (double) d->min_requests * d->min_size;
  uint64_t size;
  unsigned requests;

  d->drain_from = (double) d->requests * d->request_size;
  d->drain_from_rtt_ns = rtt_ns;
  d->half_bytes = d->half_rtt_ns = 0;
  depth_half (d, &requests, &size);
  d->halved = (double) requests * size > least;
  drain_begins (d, now_ns);
  return set_to (d, requests, size);
}

/* While draining, once a round of the stage's slots is back: after the
 * half, if they came back QUEUE_RTT times sooner, on to the least;
 * otherwise the drain is over.  With the round trip measured again,
 * starting goes on from what the estimates ask for at the startup gain,
 * never past where it was before the drain.  Against a far server that
 * is about where it was, so the drain costs about a round trip, not a
 * second climb; against a near one that was warming up, the round trip
 * now measured is short and the depth a fraction of what it was.  The
 * next end of starting is for good.
 */
static bool
drain (struct depth *d, uint64_t now_ns)
{
  bool changed;
  double ends_at;               /* the least, or the half */
  uint64_t rtt;

  if (d->drained < d->min_requests)
    return false;
  if (d->halved && d->drain_rtt_ns * QUEUE_RTT < d->drain_from_rtt_ns) {
    d->halved = false;          /* they queued: on to the least */
    d->half_bytes = (double) d->requests * d->request_size;
    d->half_rtt_ns = d->drain_rtt_ns;
    drain_begins (d, now_ns);
    return set_to (d, d->min_requests, d->min_size);
  }
  d->drain_ns = 0;
  ends_at = (double) d->requests * d->request_size;
  if (d->half_rtt_ns > d->drain_rtt_ns && d->half_bytes > ends_at) {
    double per_byte = (d->half_rtt_ns - d->drain_rtt_ns) /
      (d->half_bytes - ends_at);

    /* Only if the floor queues too: its queue times QUEUE_RTT passes
     * its round trip, a queue of more than two thirds of it; otherwise
     * the floor is below what the path holds, where bytes in flight
     * add nothing to the round trip.
     */
    d->queue_ns_per_byte =
      ends_at * per_byte * QUEUE_RTT > d->drain_rtt_ns ? per_byte : 0;
  }
  rtt = unqueued (d, d->drain_rtt_ns, ends_at);
  if (rtt < d->rtprop_ns || d->refresh) {
    d->rtprop_ns = rtt;
    d->rtprop_at_ns = now_ns;
  }
  d->refresh = false;
  d->epoch_start_ns = now_ns;
  d->epoch_rate = 0;
  d->epoch_rtt_ns = 0;
  d->epoch_free_ns = 0;
  d->startup = true;
  d->full_rate = 0;
  d->flat_epochs = 0;
  d->startup_epochs = 0;
  changed = set_depth (d, MIN (STARTUP_GAIN * d->btlbw * d->rtprop_ns / 1e9,
                               d->drain_from), false);
  d->epoch_bytes = d->requests * d->request_size;
  d->epoch_delivered = d->delivered;
  return changed;
}

/* Starting is over: the first time, drain; the second, the steady
 * state.
 */
static bool
end_startup (struct depth *d, uint64_t rtt_ns, uint64_t now_ns)
{
  d->startup = false;
  if (d->drains++ > 0)
    return false;
  return start_drain (d, rtt_ns, now_ns);
}

/* One more epoch while starting.  Startup ends once the rate has grown
 * by less than a quarter in three epochs running: then the path is full
 * (BBR's "full bandwidth reached"); or at once when no slot of the
 * epoch came back within QUEUE_RTT of the shortest round trip: the
 * depth has begun to queue in the servers, as TCP's HyStart (Ha and
 * Rhee, "Taming the elephants", 2008) leaves slow start when round
 * trips grow.  It ends too after an epoch begun at the cap, which
 * the depth cannot pass: there is nothing more to find, and a wider
 * cap (spread.h) waits for the drain to measure the round trip.
 * True if the epoch's decision is made: startup ended with a change of
 * depth (d->changed) or a drain.
 */
static bool
startup_epoch (struct depth *d, double rate, uint64_t rtt, uint64_t now_ns)
{
  d->startup_epochs++;
  if (rate >= 1.25 * d->full_rate) {
    d->full_rate = rate;
    d->flat_epochs = 0;
  }
  else
    d->flat_epochs++;
  return (d->flat_epochs >= 3 || rtt > QUEUE_RTT * d->rtprop_ns ||
          d->epoch_bytes >= d->max_requests * d->max_size) &&
    ((d->changed = end_startup (d, rtt, now_ns)) || d->drain_ns > 0);
}

/* The depth follows what the path holds, times the gain: while
 * starting, only more (it may have started at larger requests than
 * its floor); once started, only a change of more than
 * DEPTH_HYSTERESIS either way.
 */
static void
follow_path (struct depth *d)
{
  double target = (d->startup ? STARTUP_GAIN : STEADY_GAIN) * d->btlbw *
    d->rtprop_ns / 1e9;
  double now = (double) d->requests * d->request_size;

  if (d->startup)
    target = MIN (target, STARTUP_GAIN * d->epoch_bytes);
  if (d->startup || target > now * DEPTH_HYSTERESIS ||
      target * DEPTH_HYSTERESIS < now)
    d->changed = set_depth (d, target, d->startup);
  d->epoch_bytes = d->requests * d->request_size;
  d->epoch_delivered = d->delivered;
}

static bool
update (struct depth *d, uint64_t now_ns)
{
  uint64_t length, rtt, free_ns;
  unsigned slot;

  d->changed = false;
  if (d->epoch_start_ns == 0 || d->epoch_rtt_ns == 0)
    return false;               /* nothing measured yet */
  if (d->drain_ns > 0)
    return d->changed = drain (d, now_ns);
  length = now_ns - d->epoch_start_ns;
  if (length < EPOCH_MIN_NS ||
      length < (d->startup ? 1 : EPOCH_RTTS) * d->epoch_rtt_ns)
    return d->changed = d->startup && startup_grow (d, now_ns);

  slot = d->epochs++ % DEPTH_EPOCHS;
  d->rate[slot] = d->epoch_rate;
  rtt = d->last_rtt_ns = d->epoch_rtt_ns;
  free_ns = d->epoch_free_ns;
  d->epoch_start_ns = now_ns;
  d->epoch_rate = 0;
  d->epoch_rtt_ns = 0;
  d->epoch_free_ns = 0;
  estimate (d, free_ns, now_ns);
  /* No shorter round trip for RTPROP_WINDOW_NS: measure it again with
   * a drain, whose round trip replaces it (BBR's PROBE_RTT).
   */
  if (!d->startup && d->drains > 0 &&
      now_ns - d->rtprop_at_ns > RTPROP_WINDOW_NS) {
    d->refresh = true;
    d->changed = start_drain (d, rtt, now_ns);
    return d->changed;
  }
  if (d->startup && startup_epoch (d, d->rate[slot], rtt, now_ns))
    return d->changed;
  follow_path (d);
  return d->changed;
}

/* After a change the slots taken first wait behind fewer bytes than
 * the new depth, or the old depth if it was less: until the first
 * slot taken since the change is back, a slot's queue is counted as
 * the least depth since the last settled one.
 */
static void
changed_at (struct depth *d, double before, uint64_t now_ns)
{
  if (d->settled)
    d->queue_floor = before;
  d->queue_floor = MIN (d->queue_floor,
                        (double) d->requests * d->request_size);
  d->settled = false;
  d->change_ns = now_ns;
}

bool
depth_update (struct depth *d, uint64_t now_ns)
{
  double before = (double) d->requests * d->request_size;

  if (!update (d, now_ns))
    return false;
  changed_at (d, before, now_ns);
  return true;
}

/* The number of requests set outside depth_update, from its cap. */
static void
set_requests (struct depth *d, unsigned requests, uint64_t now_ns)
{
  double before = (double) d->requests * d->request_size;

  d->requests = requests;
  changed_at (d, before, now_ns);
}

bool
depth_widen (struct depth *d, unsigned max_requests, uint64_t now_ns)
{
  bool held = d->requests == d->max_requests &&
    d->request_size == d->max_size && d->drain_ns == 0;

  if (max_requests <= d->max_requests)
    return false;
  d->max_requests = max_requests;
  if (held)
    set_requests (d, max_requests, now_ns);
  return held;
}

void
depth_served (struct depth *d)
{
  double served;
  unsigned i;

  if (d->rtprop_ns == 0)
    return;
  served = (double) d->max_requests * d->max_size * 1e9 / d->rtprop_ns;
  for (i = 0; i < DEPTH_EPOCHS; i++)
    d->rate[i] = MAX (d->rate[i], served);
  d->btlbw = MAX (d->btlbw, served);
}

bool
depth_narrow (struct depth *d, unsigned max_requests, uint64_t now_ns)
{
  d->max_requests = MAX (max_requests, d->min_requests);
  if (d->requests <= d->max_requests)
    return false;
  set_requests (d, d->max_requests, now_ns);
  return true;
}

void
depth_say (const struct depth *d)
{
  debug ("depth: %u requests of %" PRIu64 " bytes (%.0f MB/s, round trip "
         "%.3f ms without queue)", d->requests, d->request_size,
         d->btlbw / 1e6, d->rtprop_ns / 1e6);
}

bool
depth_follow (struct depth *d, uint64_t now_ns)
{
  if (!depth_update (d, now_ns))
    return false;
  depth_say (d);
  return true;
}

const char *
depth_describe (const struct depth *d, char *buf, size_t len)
{
  if (d->max_requests == d->min_requests && d->max_size == d->min_size)
    snprintf (buf, len, "fixed");
  else
    snprintf (buf, len, "adapting up to %u of %" PRIu64, d->max_requests,
              d->max_size);
  return buf;
}
