/* Unit tests for tools/depth.c: the depth rule against simulated
 * servers.
 *
 * A simulated server is a round trip and a queue served in order at a
 * rate that may depend on the bytes in flight: a slot taken at time t
 * comes back once the round trip is over and the slots before it are
 * served, plus its own bytes over the rate.  The loop below takes slots
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
#include "check.h"

#define MIB (1024 * 1024)
#define MAX_SLOTS 256

struct server {
  const char *name;
  double rtprop_ns;                     /* the round trip alone */
  double (*rate) (double in_flight);    /* bytes per second served */
  double noise;                         /* each service time off by up
                                           to this fraction either way */
};

struct slot {
  uint64_t bytes, start_ns, end_ns, delivered;
};

/* What a run found: the depth at the end, and the most in flight. */
struct outcome {
  unsigned requests;
  uint64_t request_size, most;
};

/* A fixed sequence in [-1, 1], the same on every machine. */
static double
jitter (void)
{
  static uint32_t seed = 1;

  seed = seed * 1103515245 + 12345;
  return ((int) ((seed >> 16) % 2001) - 1000) / 1000.0;
}

static struct outcome
simulate (const struct server *s, unsigned requests, uint64_t size,
          unsigned max_requests, uint64_t max_size, double seconds)
{
  struct slot q[MAX_SLOTS];     /* in flight, a queue served in order */
  unsigned head = 0, n = 0;
  struct depth d;
  struct outcome o = { 0 };
  uint64_t now = 1, in_flight = 0, last_end = 0;

  depth_init (&d, requests, size, max_requests, max_size);
  while (now < seconds * 1e9) {
    struct slot *slot;
    double service;

    /* Take slots up to the depth, each of the size of the moment. */
    while (n < d.requests) {
      slot = &q[(head + n++) % MAX_SLOTS];
      in_flight += d.request_size;
      service = d.request_size * 1e9 / s->rate (in_flight) *
        (1 + s->noise * jitter ());
      last_end = fmax (now + s->rtprop_ns, last_end) + service;
      *slot = (struct slot) {
        .bytes = d.request_size, .start_ns = now, .end_ns = last_end,
        .delivered = d.delivered,
      };
    }
    if (in_flight > o.most)
      o.most = in_flight;
    /* The next to come back is the oldest. */
    slot = &q[head];
    head = (head + 1) % MAX_SLOTS;
    n--;
    now = slot->end_ns;
    in_flight -= slot->bytes;
    depth_sample (&d, slot->bytes, slot->start_ns, slot->delivered, now);
    depth_update (&d, now);
  }
  o.requests = d.requests;
  o.request_size = d.request_size;
  printf ("%s: %u requests of %llu bytes, at most %llu bytes in flight\n",
          s->name, o.requests, (unsigned long long) o.request_size,
          (unsigned long long) o.most);
  return o;
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

int
main (void)
{
  const struct server pipe = { "pipe", 10e6, pipe_rate, 0 };
  const struct server noisy_pipe = { "noisy pipe", 10e6, pipe_rate, 0.5 };
  const struct server near = { "near", 0.2e6, pipe_rate, 0 };
  const struct server endless = { "endless", 10e6, endless_rate, 0 };
  struct outcome o;

  /* The path holds 10 MB: the depth grows past the 4 MiB it starts at,
   * larger requests first, and settles at about twice what the path
   * holds, with noise too.
   */
  o = simulate (&pipe, 16, 256 * 1024, 256, MIB, 5);
  CHECK (o.request_size == MIB);
  CHECK ((uint64_t) o.requests * o.request_size >= 10000000);
  CHECK ((uint64_t) o.requests * o.request_size <= 30000000);
  CHECK (o.most <= 64 * MIB);
  o = simulate (&noisy_pipe, 16, 256 * 1024, 256, MIB, 5);
  CHECK ((uint64_t) o.requests * o.request_size >= 10000000);
  CHECK ((uint64_t) o.requests * o.request_size <= 30000000);

  /* A server 0.2 ms away holds 0.2 MB: the depth stays where it
   * started, and never goes below.
   */
  o = simulate (&near, 16, 256 * 1024, 256, MIB, 5);
  CHECK (o.requests == 16 && o.request_size == 256 * 1024);

  /* However much rate the server gives, the depth stays within its
   * maximum.
   */
  o = simulate (&endless, 16, 256 * 1024, 256, MIB, 5);
  CHECK (o.requests == 256 && o.request_size == MIB);
  CHECK (o.most <= 256 * MIB);

  /* A depth given as its own maximum does not change. */
  o = simulate (&pipe, 16, MIB, 16, MIB, 2);
  CHECK (o.requests == 16 && o.request_size == MIB);
  CHECK (o.most == 16 * MIB);

  return check_status ("test-depth");
}
