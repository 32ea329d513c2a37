/* nbd-libev-examples: how many connections to keep to each server,
 * decided while the program runs, beside the depth (depth.h).
 *
 * A server works on a fixed number of requests per connection at once
 * (SERVED_AT_ONCE, bounds.h), and the depth's cap is what the open
 * connections serve.  Against a server whose requests each take long
 * (a server in front of slow storage, or one that limits each client),
 * the depth reaches that cap with every request being served and none
 * waiting: then only more connections bring more rate.  The rule: once
 * the first drain has measured the round trip, when the depth is at the
 * cap and it is served whole (within SPREAD_HELD: BtlBw times RTprop
 * holds the cap, or the drain found the round trip at the cap no
 * longer than with less in flight), double the connections to every
 * server, up to judged_most.  Once the depth has held the new cap for
 * three epochs, keep doubling only if BtlBw grew by SPREAD_GROWTH over
 * the rate the old cap gives; otherwise, or at once if the first epoch
 * wholly at the new cap has queueing round trips, add no more and take
 * the cap back to what it was.  Against a server that answers at once the
 * depth stays far below the cap and the count never moves.  No
 * connection is closed.
 *
 * Past the judged doublings, one more, not judged, where the servers
 * are far and the copy is long (SPREAD_FAR, SPREAD_LONG_NS).
 *
 * No libnbd, no libev: the program opens the connections, then raises
 * the depth's cap (depth_widen) once they are up.
 */

#ifndef NBD_LIBEV_EXAMPLES_SPREAD_H
#define NBD_LIBEV_EXAMPLES_SPREAD_H

#include <stdbool.h>

#include "depth.h"

/* A doubling of the connections must bring at least this much more
 * rate to be followed by another: as BBR's startup ends when the rate
 * grows by less than a quarter.
 */
#define SPREAD_GROWTH 1.25

/* The cap is served whole when BtlBw times RTprop is within this
 * factor of it, or the round trip at the cap within this factor of the
 * drain's: requests barely wait.  Against servers short of CPU the
 * round trips at the cap grow by a quarter and more.
 */
#define SPREAD_HELD 1.1

/* Epochs a wider cap may wait for the depth to reach it. */
#define SPREAD_EPOCHS 4

/* The last doubling, past the judged ones up to the most, is taken
 * only where the last judged one brought SPREAD_FAR times the rate
 * measured before it (the servers' connections, not the CPUs, set the
 * rate) and what is left of the pass takes SPREAD_LONG_NS at BtlBw,
 * long enough to pay for the new buffers' first touch.  It is not
 * judged: with that many requests in flight the CPUs that client and
 * servers share stretch every round trip, so neither the queue nor
 * BtlBw tells a doubling that pays, and one taken back leaves more
 * connections serving the old cap, slower than before it.
 */
#define SPREAD_FAR 1.5
#define SPREAD_LONG_NS 2000000000ULL

struct spread {
  unsigned connections;         /* per server, open or opening */
  unsigned judged_most;         /* per server, at most by judged doublings */
  unsigned most;                /* per server, at most */
  bool far;                     /* the last judged doubling brought
                                   SPREAD_FAR */
  bool over;                    /* a doubling brought too little: no more */
  bool narrowed;                /* and the depth came down for it */
  bool judging;                 /* a doubling awaits its verdict */
  bool held;                    /* and the depth has held the new cap */
  double rate_before;           /* the rate it is judged against */
  double rate_measured;         /* BtlBw as measured before it */
  unsigned raised_at;           /* 0, or 1 + the depth's epochs when
                                   the cap widened */
  unsigned epochs_at;           /* the depth's epochs when it held it */
  unsigned cap;                 /* the depth's cap before it */
};

/* connections open to each server now; judged_most, the most judged
 * doublings reach, and most, the most it may have (both connections
 * itself where the count is fixed: -C, no multi-conn).
 */
void spread_init (struct spread *sp, unsigned connections,
                  unsigned judged_most, unsigned most);

/* After each depth_update, with the bytes the pass has yet to start.
 * True if the program should open connections to every server, up to
 * sp->connections each.  A doubling judged to bring too little narrows
 * the depth's cap back (depth_narrow; sp->narrowed says whether the
 * depth changed).
 */
bool spread_update (struct spread *sp, struct depth *d, uint64_t now_ns,
                    uint64_t left);

#endif /* NBD_LIBEV_EXAMPLES_SPREAD_H */
