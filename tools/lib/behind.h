/* nbd-libev-examples: when write-behind (tools/lib/file.c) gives the
 * pages it wrote back, decided while the copy runs.
 *
 * Giving pages back costs a writeback while the copy runs, at the
 * disk's pace; it pays only where taking new pages for the page cache
 * is slower still (on a VM whose free memory went back to its host,
 * each new page costs the host a fault: docs/techniques.md, section
 * 14).  So the rule compares two rates:
 *
 *  - the disk's: once the window is full, the first BEHIND_PROBE bytes
 *    are written back and dropped as a probe, and the rate they were
 *    written back at is the disk's;
 *
 *  - the page cache's: the bytes of each BEHIND_SPAN of writes over the
 *    time one or more of them were in flight.
 *
 * The first span written into the cache slower than the disk writes
 * back starts write-behind for the rest of the copy (evicting); until
 * then no more is given back (watching).  It never stops once started:
 * the pages it gives back are the ones that make the cache fast again.
 *
 * What comes in: each write and eviction as it starts and ends, with
 * the time.  What goes out: whether an eviction may start.  No libev,
 * no liburing: the caller passes in the times, and tests/test-behind.c
 * simulates both sides.
 */

#ifndef NBD_LIBEV_EXAMPLES_BEHIND_H
#define NBD_LIBEV_EXAMPLES_BEHIND_H

#include <stdbool.h>
#include <stdint.h>

/* One round of evictions (file.c: 4 at once, 16 MiB each), enough
 * bytes that the disk's rate is not one request's latency.
 */
#define BEHIND_PROBE (64 * 1024 * 1024)

/* Long enough to span several requests' latencies, short enough that
 * a slow cache costs a fraction of a second before write-behind
 * starts.
 */
#define BEHIND_SPAN (64 * 1024 * 1024)

/* Time with one or more commands of a kind in flight. */
struct busy {
  unsigned in_flight;
  uint64_t since_ns;            /* when in_flight last left 0 */
  uint64_t busy_ns;             /* until then */
  uint64_t bytes;               /* of the commands over */
};

struct behind_rule {
  enum { RULE_PROBING, RULE_WATCHING, RULE_EVICTING } state;
  struct busy writes;           /* the current span's */
  struct busy evictions;        /* the probe's */
  uint64_t probe_started;       /* bytes of the probe's evictions */
  double disk_rate;             /* bytes a second, once probed */
  double cache_rate;            /* of the last span over */
};

/* A write, or an eviction, starts. */
void behind_rule_start (struct behind_rule *b, bool eviction,
                        uint64_t bytes, uint64_t now_ns);

/* A write, or an eviction, of bytes is over.  True if the state
 * changed, for a -v line.
 */
bool behind_rule_done (struct behind_rule *b, bool eviction,
                       uint64_t bytes, uint64_t now_ns);

/* Whether one more eviction may start now (if the window is full). */
bool behind_rule_may_evict (const struct behind_rule *b);

#endif /* NBD_LIBEV_EXAMPLES_BEHIND_H */
