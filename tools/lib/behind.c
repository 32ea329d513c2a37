/* nbd-libev-examples: when write-behind gives pages back.  See
 * behind.h.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdbool.h>
#include <stdint.h>

#include "behind.h"

static void
busy_start (struct busy *t, uint64_t now_ns)
{
  if (t->in_flight++ == 0)
    t->since_ns = now_ns;
}

static void
busy_done (struct busy *t, uint64_t bytes, uint64_t now_ns)
{
  t->bytes += bytes;
  t->busy_ns += now_ns - t->since_ns;
  t->since_ns = now_ns;
  t->in_flight--;
}

/* Bytes a second; a time too short for the clock to see is fast. */
static double
busy_rate (const struct busy *t)
{
  if (t->busy_ns == 0)
    return 1e18;
  return t->bytes * 1e9 / t->busy_ns;
}

void
behind_rule_start (struct behind_rule *b, bool eviction, uint64_t bytes,
                   uint64_t now_ns)
{
  if (!eviction) {
    busy_start (&b->writes, now_ns);
    return;
  }
  busy_start (&b->evictions, now_ns);
  if (b->state == RULE_PROBING)
    b->probe_started += bytes;
}

bool
behind_rule_done (struct behind_rule *b, bool eviction, uint64_t bytes,
                  uint64_t now_ns)
{
  if (eviction) {
    busy_done (&b->evictions, bytes, now_ns);
    if (b->state != RULE_PROBING || b->evictions.bytes < BEHIND_PROBE)
      return false;
    /* The last span may have been slow already, while probing. */
    b->disk_rate = busy_rate (&b->evictions);
    b->state = b->cache_rate > 0 && b->cache_rate < b->disk_rate ?
      RULE_EVICTING : RULE_WATCHING;
    return true;
  }
  busy_done (&b->writes, bytes, now_ns);
  if (b->writes.bytes < BEHIND_SPAN)
    return false;
  b->cache_rate = busy_rate (&b->writes);
  b->writes.bytes = b->writes.busy_ns = 0;
  if (b->state == RULE_WATCHING && b->cache_rate < b->disk_rate) {
    b->state = RULE_EVICTING;
    return true;
  }
  return false;
}

bool
behind_rule_may_evict (const struct behind_rule *b)
{
  return b->state == RULE_EVICTING ||
    (b->state == RULE_PROBING && b->probe_started < BEHIND_PROBE);
}
