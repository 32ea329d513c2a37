/* nbd-libev-examples: how many bytes to keep in flight, decided while
 * the program runs.
 *
 * The depth is two numbers: the requests that may be in flight
 * (requests) and the bytes of each data request (request_size).  The
 * program takes slots up to them.  What comes in: a sample for each
 * slot whose work is over (depth_sample: the bytes it moved, the mark
 * taken with the slot, the time now), and the time at each turn of the
 * loop (depth_update, or depth_follow with a -v line).  What goes out:
 * the two numbers, which only depth_init, depth_start and depth_update
 * set.  No libnbd, no libev: the program passes in the times.
 *
 * The rule is BBR's (Cardwell et al., "BBR: Congestion-Based
 * Congestion Control", ACM Queue 14(5), 2016).  It estimates the round
 * trip without queue (RTprop) and the bottleneck rate (BtlBw), and keeps
 * a gain times their product in flight.  It starts at STARTUP_GAIN
 * until the rate stops growing or the round trips show a queue (as
 * TCP's HyStart), drains to measure the round trip with little queued
 * (as BBR's PROBE_RTT: after starting, and whenever RTprop is
 * RTPROP_WINDOW_NS old), and then follows the estimates at STEADY_GAIN.
 * docs/techniques.md, section 13, says why each step is there.
 *
 * The bounds: never fewer than min_requests of min_size (what
 * depth_init was given), never more than max_requests of max_size.
 * Bytes in flight come first from larger requests, then from more of
 * them.  The program allocates buffers for the most once, so
 * max_requests x max_size bounds the memory.  A value an option fixes
 * (--requests, --request-size) is passed as its own maximum, and never
 * moves.
 */

#ifndef NBD_LIBEV_EXAMPLES_DEPTH_H
#define NBD_LIBEV_EXAMPLES_DEPTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* BtlBw is the highest rate of the last DEPTH_EPOCHS epochs, as BBR
 * keeps the highest of its last few round trips: a slow epoch alone
 * does not lower it.
 */
#define DEPTH_EPOCHS 4

/* RTprop is kept this long, as BBR keeps it, then measured afresh by a
 * drain.  It is long because a full path queues in the servers, and no
 * round trip is short again for as long as the depth stays there.
 */
#define RTPROP_WINDOW_NS 10000000000ULL /* 10 s */

/* An epoch is a round trip while starting and EPOCH_RTTS round trips
 * after, and at least EPOCH_MIN_NS: long enough to measure a rate,
 * short enough that the climb against a far server takes a fraction
 * of a second.
 */
#define EPOCH_RTTS 2
#define EPOCH_MIN_NS 20000000   /* 20 ms */

/* The gains: STARTUP_GAIN while starting doubles the rate every round
 * trip, as BBR's startup does; STEADY_GAIN after keeps more in flight
 * than the path is measured to hold, so that while more depth still
 * brings more rate the estimates keep asking for more.
 */
#define STARTUP_GAIN 2.885      /* 2 / ln 2 */
#define STEADY_GAIN 2.0

/* Once started, the depth follows the estimates only when they ask for
 * this many times more or less than it has, so that noise in the round
 * trips does not move it back and forth.
 */
#define DEPTH_HYSTERESIS 1.25

/* A round trip this many times the shortest is queueing in the
 * servers: it ends starting, and tells a drain to go on to the least.
 */
#define QUEUE_RTT 1.5

struct depth {
  unsigned requests;            /* slots that may be in use now */
  uint64_t request_size;        /* bytes per data request now */
  unsigned min_requests, max_requests;
  uint64_t min_size, max_size;
  uint64_t epoch_bytes;         /* startup: the depth's bytes when the
                                   epoch began */
  uint64_t epoch_delivered;     /* startup: delivered when it began */
  uint64_t drain_ns;            /* 0, or when the drain's stage began */
  unsigned drained;             /* slots back that were taken after */
  uint64_t drain_rtt_ns;        /* their shortest round trip */
  double drain_from;            /* the bytes in flight before it */
  bool halved;                  /* in its first stage, at half or less */
  uint64_t least_from_ns;       /* at the least: 0, or since when its
                                   slots count */
  double half_bytes;            /* the half stage's depth, once over */
  double half_rtt_ns;           /* and its shortest round trip */
  double queue_ns_per_byte;     /* what a byte in flight adds to the
                                   round trip, by the drain; 0 before */
  uint64_t drain_from_rtt_ns;   /* the last epoch's shortest round trip
                                   before it */
  bool refresh;                 /* this drain replaces the round trip */
  unsigned drains;              /* ends of starting: only the first
                                   drains (a stale RTprop drains too) */
  bool changed;                 /* the last depth_update changed them */
  uint64_t change_ns;           /* when they last changed */
  bool settled;                 /* a slot taken since then is back */
  double queue_floor;           /* until then, the least bytes in flight
                                   since the last settled depth */
  uint64_t epoch_start_ns;      /* 0: no epoch started yet */
  uint64_t delivered;           /* bytes of all slots sampled */
  double epoch_rate;            /* the highest delivery rate this epoch */
  uint64_t epoch_rtt_ns;        /* shortest round trip this epoch */
  uint64_t last_rtt_ns;         /* and of the last epoch ended */
  uint64_t epoch_free_ns;       /* and the shortest without queue */
  uint64_t rtprop_at_ns;        /* when rtprop_ns was measured */
  double rate[DEPTH_EPOCHS];    /* the last epochs' bytes per second */
  unsigned epochs;              /* epochs ended */
  bool startup;                 /* still looking for the most rate */
  double full_rate;             /* startup: the rate to beat by 25% */
  unsigned flat_epochs;         /* startup: epochs that did not */
  unsigned startup_epochs;      /* startup: epochs since it began */
  double btlbw, rtprop_ns;      /* the estimates, for messages */
};

/* Start at requests of request_size, and go no further than
 * max_requests of max_size.  A value that must not change is passed as
 * its own maximum.  max_size is request_size times a power of two.
 */
void depth_init (struct depth *d, unsigned requests, uint64_t request_size,
                 unsigned max_requests, uint64_t max_size);

/* Start at requests of size bytes, a power of two times the least
 * request and at most the largest, and not at the least: sizes still
 * fall to the least if the estimates ask for no more.
 */
void depth_start (struct depth *d, uint64_t size);

/* Let the number of requests grow to max_requests, if more than
 * before: more connections serve more at once (spread.h).  A depth
 * held at the old cap goes to the new one at once, as the rule widens
 * only where the estimates ask for more than the cap.  True if the
 * depth changed.
 */
bool depth_widen (struct depth *d, unsigned max_requests, uint64_t now_ns);

/* The cap is served whole (spread.h): its rate is the cap over RTprop,
 * and BtlBw is kept at least that.  Once the cap widens, the first
 * epochs show less, each slot's rate being that of the depth a round
 * trip before; a depth that followed them would fall back below the
 * new cap while it is still being filled.
 */
void depth_served (struct depth *d);

/* Let it grow to no more than max_requests again (never below the
 * least), and come down to them now if it has more: a wider cap that
 * brought no more rate (spread.h).  True if the depth changed.
 */
bool depth_narrow (struct depth *d, unsigned max_requests, uint64_t now_ns);

/* What a slot's sample needs of the moment it was taken: the time, and
 * the bytes delivered until then.
 */
struct depth_mark {
  uint64_t ns, delivered;
  double depth;                 /* the bytes whose queue its round trip
                                   is counted without */
};

static inline struct depth_mark
depth_mark (const struct depth *d, uint64_t now_ns)
{
  return (struct depth_mark) {
    .ns = now_ns, .delivered = d->delivered,
    .depth = d->settled ? (double) d->requests * d->request_size
                        : d->queue_floor,
  };
}

/* A slot's work is over: bytes moved since the mark taken with the
 * slot, and now now_ns.
 */
void depth_sample (struct depth *d, uint64_t bytes, struct depth_mark taken,
                   uint64_t now_ns);

/* Once an epoch, and while starting whenever a slot showed more rate
 * than the estimate, turn the estimates into requests and
 * request_size.  True if either changed.
 */
bool depth_update (struct depth *d, uint64_t now_ns);

/* The depth a drain goes to first: the largest that holds no more than
 * half the bytes in flight now, or the least if half is below it.
 */
void depth_half (const struct depth *d, unsigned *requests, uint64_t *size);

/* depth_update, and a -v line for each change, with the estimates
 * behind it.
 */
bool depth_follow (struct depth *d, uint64_t now_ns);

/* That -v line, for a change made otherwise (depth_widen, depth_narrow). */
void depth_say (const struct depth *d);

/* For -v: "fixed", or how far the depth may grow. */
const char *depth_describe (const struct depth *d, char *buf, size_t len);

#endif /* NBD_LIBEV_EXAMPLES_DEPTH_H */
