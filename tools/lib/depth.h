/* nbd-libev-examples: how many bytes to keep in flight, found while
 * the program runs.
 *
 * A copy's speed is the bytes in flight divided by the time each
 * request takes to come back.  Against a server on the same machine a
 * request returns in well under a millisecond, and a few requests of
 * 1 MiB keep it busy; against one that answers after 10 ms (a server
 * across a network, remote storage) the same 4 MiB in flight move at
 * most 4 MiB per round trip.  No fixed setting suits both, so the tools
 * measure and adjust, in the way TCP's BBR congestion control does
 * (Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM
 * Queue 14(5), 2016):
 *
 *  - The round trip (RTprop): the shortest time a slot's work took
 *    (nbd-evcopy: from its read to the end of its write; nbd-evsum:
 *    its read), less its queue once the drain (below) has measured
 *    one, over the last RTPROP_WINDOW_NS, as BBR keeps it.  Queueing
 *    only ever adds to it, so the shortest is the path's own; the
 *    window is long because once the depth is larger than the path
 *    holds, requests queue in the servers and no round trip is short
 *    again for as long as that lasts.  When the window has passed with
 *    no shorter one, the depth drains again to measure it afresh, as
 *    BBR's PROBE_RTT does: taking the last epoch's round trip instead,
 *    queue and all, grew the depth by the gain every window.
 *  - The bottleneck rate (BtlBw): the highest delivery rate in the last
 *    few epochs, a slot's rate being the bytes delivered while it was
 *    out over the time it was out.
 *  - Their product is what the path holds; a multiple of it (the gain)
 *    is kept in flight, so that while more depth still brings more
 *    rate, each epoch's measured rate is higher and the depth grows
 *    again, and once the rate stops growing, the depth stops growing
 *    with it.  While starting, the gain is BBR's startup gain, 2/ln 2,
 *    which doubles the rate every round trip, and the depth grows as
 *    soon as a slot shows more rate than the estimate, not only at the
 *    end of an epoch, and from the second epoch of a start on by at
 *    least the bytes delivered since the epoch began, as TCP's slow
 *    start grows its window; once three epochs running brought less
 *    than a quarter more rate, the gain is 2.
 *
 * An epoch lasts a round trip while starting and EPOCH_RTTS round
 * trips after, and at least EPOCH_MIN_NS: long enough for a rate, short
 * enough to ramp up in a fraction of a second against a server 10 ms
 * away.
 *
 * Bytes in flight come first from larger requests (up to max_size,
 * within the servers' maximum block sizes), then from more of them (up
 * to max_requests, which the tools keep to what the servers serve at
 * once: SERVED_AT_ONCE in bounds.h).  The buffers are allocated once
 * for the most: max_requests x max_size is the bound on memory.
 *
 * Against a server on the same machine few bytes in flight are
 * fastest: each buffer is still in the CPU's cache when it is written
 * (docs/techniques.md, section 13).  Five things keep the depth from
 * growing for nothing:
 *  - While starting it grows at most by the startup gain per epoch,
 *    rounded up to whole requests.
 *  - Starting ends as soon as no slot of an epoch came back within
 *    QUEUE_RTT times the shortest round trip: the slots have begun to
 *    queue in the servers (TCP's HyStart leaves slow start so).
 *  - The first time starting ends, the depth drains, to measure the
 *    round trip with little queued (as BBR's PROBE_RTT does): to half
 *    or less (but not below its least) until a round of slots has come
 *    back, and if they came back QUEUE_RTT times sooner (the servers
 *    were queueing) on to its least for another round; then starting
 *    goes on from what the estimates ask for, never past where it was.
 *    The first tenths of a second against a near server are slow while
 *    the servers and the kernel warm up, and look like a far server;
 *    without the drain, the round trip of that time would keep the
 *    depth high.
 *  - A drain that went on to the least measures the queue: the half's
 *    round trip less the least's, over the bytes between them, is what
 *    each byte in flight adds by waiting in the servers.  If that
 *    accounts for more than a third of the least's own round trip, the
 *    least queues too (a disk that 16 requests of 256 KiB keep busy, a
 *    server bound by its CPU), and from then on every round trip goes
 *    into RTprop less the queue of the bytes in flight when its slot
 *    was taken.  Against such a server what the path holds comes out
 *    at about nothing, and the depth stays at its least; without it,
 *    the least's round trip, all queue, made the path look as if it
 *    held the least, the gain asked for twice that, and the larger
 *    requests that came with it were slower on this machine's disk.
 *  - After the second end, it follows the estimates only when they ask
 *    for more than DEPTH_HYSTERESIS times more or less than it has, so
 *    that noise in the round trips does not move it back and forth.
 * It never goes below its least: min_requests of min_size.
 *
 * An option given explicitly (--requests, --request-size) fixes its
 * value.  No libnbd, no libev: the program passes in the times.
 */

#ifndef NBD_LIBEV_EXAMPLES_DEPTH_H
#define NBD_LIBEV_EXAMPLES_DEPTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEPTH_EPOCHS 4          /* the window of the rate */
#define RTPROP_WINDOW_NS 10000000000ULL /* of the round trip: 10 s, as BBR */
#define EPOCH_RTTS 2
#define EPOCH_MIN_NS 20000000   /* 20 ms */
#define STARTUP_GAIN 2.885      /* 2 / ln 2 */
#define STEADY_GAIN 2.0
#define DEPTH_HYSTERESIS 1.25
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

/* For -v: "fixed", or how far the depth may grow. */
const char *depth_describe (const struct depth *d, char *buf, size_t len);

#endif /* NBD_LIBEV_EXAMPLES_DEPTH_H */
