/* Unit tests for tools/lib/depth.c: the depth rule against simulated
 * servers.
 *
 * A simulated server is a round trip and a queue served in order by
 * one or more lanes, at a rate that may depend on the bytes in flight:
 * a slot taken at time t comes back once the round trip is over and its
 * lane has served the slots before it, plus its own bytes over the
 * lane's share of the rate.  Against servers with lanes per connection
 * (simulate_spread), each lane holds its request a fixed time, and one
 * wire then carries the bytes at the whole rate.  The loop below takes slots
 * up to the depth, moves the clock to the next slot to come back,
 * samples it and updates the depth, as nbd-evcopy and nbd-evsum do with
 * real replies; no time passes but the simulated one.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "depth.h"
#include "spread.h"
#include "check.h"

#define MIB (1024 * 1024)
#define MAX_SLOTS 256
#define MAX_LANES 256

struct server {
  const char *name;
  double rtprop_ns;                     /* the round trip alone */
  double (*rate) (double in_flight);    /* bytes per second served */
  double noise;                         /* each service time off by up
                                           to this fraction either way */
  unsigned lanes;                       /* requests served at once, each
                                           at rate / lanes */
  double holds;                         /* bytes the path holds */
  double warm_ns;                       /* until then, each service time
                                           and round trip is longer, slow
                                           times at first and less and
                                           less: a server and a kernel
                                           warming up */
  double slow;
  double big_slow;                      /* each request larger than
                                           256 KiB takes this many times
                                           as long per byte, as on a disk
                                           that splits them */
  double hold_ns;                       /* each request holds its lane
                                           this long before it is served,
                                           as nbdkit's delay filter sleeps
                                           in one of a connection's
                                           threads */
};

struct slot {
  uint64_t bytes, end_ns;
  struct depth_mark taken;
};

/* What a run found: the depth at the end, the most in flight, and when
 * the bytes in flight first reached what the path holds.
 */
struct outcome {
  unsigned requests;
  uint64_t request_size, most, reached_ns;
  uint64_t least_after;         /* the least depth once it was at its
                                   maximum */
  uint64_t at_most_ns;          /* when it first was at its maximum */
  uint64_t below_ns;            /* and when it first went below it */
  unsigned late_changes;        /* changes of the depth after the first
                                   second */
  uint64_t widened_ns;          /* when more connections first served */
  unsigned connections;         /* open at the end */
};

/* A fixed sequence in [-1, 1], the same on every machine. */
static double
jitter (void)
{
  static uint32_t seed = 1;

  seed = seed * 1103515245 + 12345;
  return ((int) ((seed >> 16) % 2001) - 1000) / 1000.0;
}

/* Against a server of per_conn lanes per connection (s->lanes is
 * then per_conn), starting with connections and opening more as
 * spread.h says, judged up to judged and not past most, each open after
 * a round trip, with left bytes of the pass yet to start all along: the
 * tools' cap on requests is what the open connections serve, within
 * max_requests.  per_conn 0: a fixed number of lanes and requests, no
 * connections.
 */
static struct outcome
simulate_spread (const struct server *s, unsigned requests, uint64_t size,
                 unsigned max_requests, uint64_t max_size, double seconds,
                 unsigned per_conn, unsigned connections, unsigned judged,
                 unsigned most, uint64_t left)
{
  struct slot q[MAX_SLOTS];     /* in flight */
  double lane_free[MAX_LANES] = { 0 };
  unsigned n = 0, i, next, lane, lanes = s->lanes;
  struct depth d;
  struct spread sp;
  struct outcome o = { 0 };
  uint64_t now = 1, in_flight = 0, opening_at = 0;
  double wire_free = 0;

  if (per_conn > 0) {
    lanes = per_conn * connections;
    spread_init (&sp, connections, judged, most);
  }
  /* As the tools do: the size starts at its most. */
  depth_init (&d, requests, size,
              per_conn > 0 && lanes < max_requests ? lanes : max_requests,
              max_size);
  depth_start (&d, max_size);
  while (now < seconds * 1e9) {
    double service;

    /* Take slots up to the depth, each of the size of the moment, each
     * served by the lane free first.
     */
    while (n < d.requests) {
      double rtprop = s->rtprop_ns, slow = 1;

      if (now < s->warm_ns)
        slow += (s->slow - 1) * (1 - now / s->warm_ns);

      in_flight += d.request_size;
      service = d.request_size * 1e9 / s->rate (in_flight) * lanes *
        (1 + s->noise * jitter ()) * slow;
      if (d.request_size > 256 * 1024)
        service *= s->big_slow;
      for (lane = 0, i = 1; i < lanes; i++)
        if (lane_free[i] < lane_free[lane])
          lane = i;
      if (per_conn > 0) {
        /* A thread of a connection holds the request for hold_ns, then
         * one wire carries the bytes, in order, at the whole rate.
         */
        wire_free = fmax (fmax (now + rtprop, lane_free[lane]) + s->hold_ns,
                          wire_free) +
          d.request_size * 1e9 / s->rate (in_flight);
        lane_free[lane] = wire_free;
      }
      else
        lane_free[lane] = fmax (now + rtprop * slow, lane_free[lane]) +
          service;
      q[n++] = (struct slot) {
        .bytes = d.request_size, .end_ns = lane_free[lane],
        .taken = depth_mark (&d, now),
      };
    }
    if (in_flight > o.most)
      o.most = in_flight;
    /* The next to come back. */
    for (next = 0, i = 1; i < n; i++)
      if (q[i].end_ns < q[next].end_ns)
        next = i;
    now = q[next].end_ns;
    in_flight -= q[next].bytes;
    depth_sample (&d, q[next].bytes, q[next].taken, now);
    q[next] = q[--n];
    if (depth_update (&d, now) && now > 1e9)
      o.late_changes++;
    /* The connections asked for open a round trip later; then their
     * lanes serve, and the cap is what they serve.
     */
    if (per_conn > 0 && spread_update (&sp, &d, now, left))
      opening_at = now + s->rtprop_ns;
    if (opening_at > 0 && now >= opening_at) {
      opening_at = 0;
      for (i = lanes; i < per_conn * sp.connections; i++)
        lane_free[i] = now;
      lanes = per_conn * sp.connections;
      if (o.widened_ns == 0)
        o.widened_ns = now;
      depth_widen (&d, lanes < max_requests ? lanes : max_requests, now);
    }
    if (s->holds > 0 && o.reached_ns == 0 && in_flight >= s->holds)
      o.reached_ns = now;
    if ((o.least_after == 0 &&
         d.requests * d.request_size == max_requests * max_size) ||
        (o.least_after > 0 && d.requests * d.request_size < o.least_after))
      o.least_after = d.requests * d.request_size;
    if (o.at_most_ns == 0 && o.least_after > 0)
      o.at_most_ns = now;
    if (o.below_ns == 0 && o.at_most_ns > 0 &&
        d.requests * d.request_size < max_requests * max_size)
      o.below_ns = now;
  }
  o.requests = d.requests;
  o.request_size = d.request_size;
  o.connections = per_conn > 0 ? lanes / per_conn : 0;
  printf ("%s: %u requests of %llu bytes, at most %llu bytes in flight, "
          "%u changes after the first second",
          s->name, o.requests, (unsigned long long) o.request_size,
          (unsigned long long) o.most, o.late_changes);
  if (per_conn > 0)
    printf (", %u connections", o.connections);
  if (o.widened_ns)
    printf (", more from %.0f ms", o.widened_ns / 1e6);
  if (o.reached_ns)
    printf (", %.0f ms to hold %.0f MB", o.reached_ns / 1e6, s->holds / 1e6);
  if (o.least_after)
    printf (", never below %llu bytes once at its maximum",
            (unsigned long long) o.least_after);
  printf ("\n");
  return o;
}

/* A depth back at its cap of 64 requests of 1 MiB as the first drain
 * ends, with a round trip of 100 ms at half the cap and, before the
 * drain, rtt_at_cap_ns at the cap; BtlBw only two thirds of what the
 * cap gives, as when the drain came before the rate at the cap showed.
 * Does the count double, and against what rate is it judged?
 */
static bool
doubles_after_drain (double rtt_at_cap_ns, double *rate_before)
{
  struct depth d;
  struct spread sp;
  bool more;

  depth_init (&d, 64, MIB, 64, MIB);
  d.drains = 1;
  d.rtprop_ns = d.drain_rtt_ns = 100e6;
  d.btlbw = 64 * MIB / 0.1 * 2 / 3;
  d.drain_from = 64 * MIB;
  d.drain_from_rtt_ns = rtt_at_cap_ns;
  spread_init (&sp, 2, 4, 4);
  more = spread_update (&sp, &d, 1e9, 0);
  *rate_before = sp.rate_before;
  printf ("drain ended at the cap, %.0f ms there: %s\n", rtt_at_cap_ns / 1e6,
          more ? "more connections" : "as many");
  return more && sp.connections == 4;
}

/* A depth held at its cap of 64 requests of 1 MiB, served whole, whose
 * BtlBw is only two thirds of what the cap gives, widened to 128: for
 * the next round trips every slot still shows that rate, that of the
 * old depth.  Where is the depth then?
 */
static unsigned
requests_after_widening (void)
{
  struct depth d;
  uint64_t now = 10000000000ULL, t;
  double rate = 64 * MIB / 0.1 * 2 / 3;
  unsigned i;

  depth_init (&d, 16, MIB, 64, MIB);
  d.requests = 64;
  d.startup = false;
  d.drains = 1;
  d.rtprop_ns = 100e6;
  d.rtprop_at_ns = now;
  d.delivered = 1000 * MIB;
  d.epochs = DEPTH_EPOCHS;
  for (i = 0; i < DEPTH_EPOCHS; i++)
    d.rate[i] = rate;
  d.btlbw = rate;
  depth_served (&d);
  depth_widen (&d, 96, now);
  depth_widen (&d, 128, now);
  for (t = now + 10000000; t <= now + 300000000; t += 10000000) {
    struct depth_mark m = {
      .ns = t - 100000000, .delivered = d.delivered - (uint64_t) (rate / 10),
      .depth = 64.0 * MIB,
    };

    depth_sample (&d, MIB, m, t);
    depth_update (&d, t);
  }
  printf ("widened from 64 to 128, the old rate for 300 ms: %u requests\n",
          d.requests);
  return d.requests;
}

static struct outcome
simulate (const struct server *s, unsigned requests, uint64_t size,
          unsigned max_requests, uint64_t max_size, double seconds)
{
  return simulate_spread (s, requests, size, max_requests, max_size,
                          seconds, 0, 0, 0, 0, 0);
}

/* A network path of 1 GB/s: more in flight than it holds only queues.
 * This is BBR's model.
 */
static double
pipe_rate (double x)
{
  (void) x;
  return 1e9;
}

/* A server that serves whatever is asked of it at once. */
static double
endless_rate (double x)
{
  (void) x;
  return 1e15;
}

/* The first stage of a drain: never more than half, never below the
 * least of 16 of 256 KiB.
 */
static void
check_half (unsigned requests, uint64_t size, unsigned want_requests,
            uint64_t want_size)
{
  struct depth d;
  unsigned r;
  uint64_t s;

  depth_init (&d, 16, 256 * 1024, 256, MIB);
  d.requests = requests;
  d.request_size = size;
  depth_half (&d, &r, &s);
  printf ("half of %u of %llu bytes: %u of %llu\n", requests,
          (unsigned long long) size, r, (unsigned long long) s);
  CHECK (r == want_requests && s == want_size);
}

int
main (void)
{
  const struct server pipe =
    { "pipe", 10e6, pipe_rate, 0, 1, 10e6, 0, 1, 1, 0 };
  const struct server noisy_pipe =
    { "noisy pipe", 10e6, pipe_rate, 0.5, 1, 10e6, 0, 1, 1, 0 };
  const struct server near =
    { "near", 0.2e6, pipe_rate, 0, 1, 0, 0, 1, 1, 0 };
  const struct server near4 =
    { "near, 4 at once", 0.2e6, pipe_rate, 0, 4, 0, 0, 1, 1, 0 };
  const struct server disk =
    { "near, larger requests slower", 0.2e6, pipe_rate, 0, 4, 0, 0, 1, 2,
      0 };
  const struct server far =
    { "far", 50e6, pipe_rate, 0, 1, 50e6, 0, 1, 1, 0 };
  const struct server warming_pipe =
    { "pipe, warming up", 10e6, pipe_rate, 0, 1, 10e6, 200e6, 10, 1, 0 };
  const struct server endless =
    { "endless", 10e6, endless_rate, 0, 1, 0, 0, 1, 1, 0 };
  const struct server warming =
    { "near, warming up", 0.2e6, pipe_rate, 0, 1, 0, 300e6, 20, 1, 0 };
  const struct server noisy_near =
    { "noisy near", 0.2e6, pipe_rate, 0.5, 1, 0, 0, 1, 1, 0 };
  const struct server held =
    { "16 per connection, 50 ms each", 0.1e6, endless_rate, 0, 16, 0, 0,
      1, 1, 50e6 };
  const struct server held_near =
    { "16 per connection, at once", 0.2e6, pipe_rate, 0, 16, 0, 0, 1, 1,
      0 };
  const struct server held_pipe =
    { "16 per connection, 50 ms each, 1 GB/s", 0.1e6, pipe_rate, 0, 16, 0,
      0, 1, 1, 50e6 };
  struct outcome o;
  double rate;

  /* Half, rounded down: one request fewer, or at 16 requests, requests
   * of half the size.  17 of 1 MiB rounded up would be 16 of 1 MiB, 94%
   * of them, and show nothing of a queue.  At the least it stays.
   */
  check_half (64, MIB, 32, MIB);
  check_half (33, MIB, 16, MIB);
  check_half (24, MIB, 16, 512 * 1024);
  check_half (17, MIB, 16, 512 * 1024);
  check_half (16, MIB, 16, 512 * 1024);
  check_half (16, 256 * 1024, 16, 256 * 1024);

  /* The path holds 10 MB: the depth starts at 16 of 1 MiB, holds it
   * from the first round trip, and settles at about twice what the
   * path holds, with noise too.
   */
  o = simulate (&pipe, 16, 256 * 1024, 256, MIB, 5);
  CHECK (o.request_size == MIB);
  CHECK ((uint64_t) o.requests * o.request_size >= 10000000);
  CHECK ((uint64_t) o.requests * o.request_size <= 30000000);
  CHECK (o.most <= 64 * MIB);
  o = simulate (&noisy_pipe, 16, 256 * 1024, 256, MIB, 5);
  CHECK ((uint64_t) o.requests * o.request_size >= 10000000);
  CHECK ((uint64_t) o.requests * o.request_size <= 30000000);

  /* A server 0.2 ms away holds 0.2 MB.  The tools start at 16 of
   * 1 MiB, which against it only queue: the depth never grows past
   * them, and comes down to the least.
   */
  o = simulate (&near, 16, 256 * 1024, 256, MIB, 5);
  CHECK (o.requests == 16 && o.request_size == 256 * 1024);
  CHECK (o.most <= 16 * MIB);
  /* With a server that serves four requests at once, as a disk with a
   * queue does, it never grows past where it started either.  16 of
   * 256 KiB queue there too: the drain measures how much each byte in
   * flight adds to the round trip, finds the least's round trip nearly
   * all queue, and the depth stays at the least.
   */
  o = simulate (&near4, 16, 256 * 1024, 256, MIB, 5);
  CHECK (o.requests == 16 && o.request_size == 256 * 1024);
  CHECK (o.most <= 16 * MIB);
  /* Where each request larger than 256 KiB takes twice as long per
   * byte, as on this machine's virtual disk, which splits them
   * (docs/techniques.md, section 4), the depth comes down to the
   * least, and after RTPROP_WINDOW_NS, when the round trip is measured
   * again, it stays there: the round trip of that time is taken
   * without its queue.
   */
  o = simulate (&disk, 16, 256 * 1024, 256, MIB, 5);
  CHECK (o.requests == 16 && o.request_size == 256 * 1024);
  o = simulate (&disk, 16, 256 * 1024, 256, MIB, 25);
  CHECK (o.requests == 16 && o.request_size == 256 * 1024);
  CHECK (o.late_changes <= 4);

  /* A near server that starts 20 times slower and is fast after
   * 0.3 s, as the servers and the kernel warm up, looks far while it
   * lasts, and its rate grows: the depth may grow then, but by no more
   * than the startup gain per epoch (rounded up to whole requests), and
   * starting ends once the round trips grow: never past the 16 MiB it
   * starts at.
   */
  o = simulate (&warming, 16, 256 * 1024, 256, MIB, 5);
  CHECK (o.most <= 16 * MIB);
  /* Noise in every service time, up to half of it either way, moves
   * the depth a few times at most once the first second is over, near
   * or far.
   */
  o = simulate (&noisy_near, 16, 256 * 1024, 256, MIB, 5);
  CHECK ((uint64_t) o.requests * o.request_size <= 4 * MIB);
  CHECK (o.late_changes <= 2);
  o = simulate (&noisy_pipe, 16, 256 * 1024, 256, MIB, 5);
  CHECK (o.late_changes <= 2);
  /* Far, for longer than RTPROP_WINDOW_NS: the round trip is measured
   * again by a drain every 10 s, not taken from an epoch whose round
   * trips have the queue of twice what the path holds in them, which
   * doubled the depth every 10 s.
   */
  o = simulate (&noisy_pipe, 16, 256 * 1024, 256, MIB, 25);
  CHECK ((uint64_t) o.requests * o.request_size >= 10000000);
  CHECK ((uint64_t) o.requests * o.request_size <= 30000000);

  /* A path 50 ms away that holds 50 MB, with the depth kept to 32 of
   * 1 MiB, as the tools keep it to what the servers serve at once: the
   * depth reaches its maximum and stays there but for the drain, which
   * finds the round trip no shorter at half the depth and goes no
   * lower.
   */
  o = simulate (&far, 16, 256 * 1024, 32, MIB, 5);
  CHECK (o.requests == 32 && o.request_size == MIB);
  CHECK (o.least_after == 16 * MIB);
  /* Once there, nothing more is to be found: starting ends after the
   * epoch begun at the maximum, and the drain follows within three
   * round trips, not after three epochs of a rate that cannot grow.
   */
  printf ("far: at its maximum at %.0f ms, drained at %.0f ms\n",
          o.at_most_ns / 1e6, o.below_ns / 1e6);
  CHECK (o.below_ns > 0 && o.below_ns - o.at_most_ns <= 150000000);
  /* Kept to 20 of 1 MiB, half is 10 MiB: the drain goes to no more
   * than that (16 of 512 KiB; rounded up, 16 of 1 MiB, which would
   * hide a queue), and no lower.
   */
  o = simulate (&far, 16, 256 * 1024, 20, MIB, 5);
  CHECK (o.requests == 20 && o.request_size == MIB);
  CHECK (o.least_after == 8 * MIB);
  /* A path 10 ms away that holds 10 MB, slow for its first 200 ms:
   * RTprop from those round trips is too long, and a cap of 32 MiB
   * comes back as fast as it.  Only the drain finds the real round
   * trip, and brings the depth down to about twice what the path
   * holds; at the cap, round trips as long as RTprop keep it from ever
   * being measured again.
   */
  o = simulate (&warming_pipe, 16, 256 * 1024, 32, MIB, 5);
  CHECK ((uint64_t) o.requests * o.request_size <= 24 * MIB);

  /* However much rate the server gives, the depth stays within its
   * maximum.
   */
  o = simulate (&endless, 16, 256 * 1024, 256, MIB, 5);
  CHECK (o.requests == 256 && o.request_size == MIB);
  CHECK (o.most <= 256 * MIB);

  /* Servers that serve 16 requests per connection at once, each taking
   * 50 ms: the depth is held at what two connections serve, every
   * request being served, so the connections double while each
   * doubling brings more rate, to the most, and the depth follows.
   */
  o = simulate_spread (&held, 16, 256 * 1024, 256, MIB, 5, 16, 2, 8, 8, 0);
  CHECK (o.connections == 8);
  CHECK (o.requests == 128 && o.request_size == MIB);
  /* The drain ends finding no queue at the cap: the count doubles then,
   * without waiting for BtlBw, and the doubling is judged against the
   * rate the cap gives.  A queue at the cap (its round trips 1.3 times
   * the drain's) leaves the count as it is.
   */
  CHECK (doubles_after_drain (105e6, &rate));
  CHECK (rate > 0.99 * 64 * MIB / 0.1);
  CHECK (!doubles_after_drain (130e6, &rate));
  /* And the wider depth is kept while its rate shows. */
  CHECK (requests_after_widening () == 128);
  /* Judged doublings up to 4, as the tools have them: the last, to 8,
   * only where the one before brought 1.5 times the rate and the pass
   * has long enough left at that rate.
   */
  o = simulate_spread (&held, 16, 256 * 1024, 256, MIB, 5, 16, 2, 4, 8,
                       (uint64_t) 4 << 30);
  CHECK (o.connections == 8);
  CHECK (o.requests == 128 && o.request_size == MIB);
  o = simulate_spread (&held, 16, 256 * 1024, 256, MIB, 5, 16, 2, 4, 8,
                       256 * MIB);
  CHECK (o.connections == 4);
  o = simulate_spread (&held_pipe, 16, 256 * 1024, 256, MIB, 5, 16, 2, 4, 8,
                       (uint64_t) 4 << 30);
  CHECK (o.connections == 4);
  /* With -C or without multi-conn the most is the count: it stays. */
  o = simulate_spread (&held, 16, 256 * 1024, 256, MIB, 5, 16, 2, 2, 2, 0);
  CHECK (o.connections == 2 && o.requests == 32);
  /* The same servers answering at once: the depth stays far below
   * what two connections serve, and so does the count.
   */
  o = simulate_spread (&held_near, 16, 256 * 1024, 256, MIB, 5, 16, 2, 8, 8, 0);
  CHECK (o.connections == 2);
  /* Behind a path of 1 GB/s, a doubling that only queues more in the
   * path is the last.
   */
  o = simulate_spread (&held_pipe, 16, 256 * 1024, 256, MIB, 5, 16, 2, 8, 8, 0);
  CHECK (o.connections == 4);

  /* A depth given as its own maximum does not change. */
  o = simulate (&pipe, 16, MIB, 16, MIB, 2);
  CHECK (o.requests == 16 && o.request_size == MIB);
  CHECK (o.most == 16 * MIB);

  return check_status ("test-depth");
}
