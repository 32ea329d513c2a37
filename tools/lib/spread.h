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
 * server, up to the most.  Once the depth has held the new cap for
 * three epochs, keep doubling only if BtlBw grew by SPREAD_GROWTH over
 * the rate the old cap gives; otherwise, or at once if the first epoch
 * wholly at the new cap has queueing round trips, add no more and take
 * the cap back to what it was.  Against a server that answers at once the
 * depth stays far below the cap and the count never moves.  No
 * connection is closed.
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

struct spread {
  unsigned connections;         /* per server, open or opening */
  unsigned most;                /* per server, at most */
  bool over;                    /* a doubling brought too little: no more */
  bool narrowed;                /* and the depth came down for it */
  bool judging;                 /* a doubling awaits its verdict */
  bool held;                    /* and the depth has held the new cap */
  double rate_before;           /* BtlBw before it */
  unsigned raised_at;           /* 0, or 1 + the depth's epochs when
                                   the cap widened */
  unsigned epochs_at;           /* the depth's epochs when it held it */
  unsigned cap;                 /* the depth's cap before it */
};

/* connections open to each server now; most, the most it may have
 * (connections itself where the count is fixed: -C, no multi-conn).
 */
void spread_init (struct spread *sp, unsigned connections, unsigned most);

/* After each depth_update.  True if the program should open
 * connections to every server, up to sp->connections each.  A doubling
 * judged to bring too little narrows the depth's cap back
 * (depth_narrow; sp->narrowed says whether the depth changed).
 */
bool spread_update (struct spread *sp, struct depth *d, uint64_t now_ns);

#endif /* NBD_LIBEV_EXAMPLES_SPREAD_H */
