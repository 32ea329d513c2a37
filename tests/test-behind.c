/* Unit tests for tools/lib/behind.c: write-behind's rule against
 * simulated page caches and disks.
 *
 * The simulated copy writes 1 MiB at a time, one after the other, as
 * fast as the page cache takes it, and evicts as tools/lib/file.c
 * does: once more than WINDOW bytes written are cached, CHUNK at a time
 * and up to EVICTING at once, if the rule lets it.  The disk writes
 * back one eviction after the other at its rate.  A write takes a page
 * an eviction gave back at the warm rate, any other page at the
 * cache's own rate, which may change after some bytes: memory the
 * host took back.  No time passes but the simulated one.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "behind.h"
#include "check.h"

#define MIB (1024 * 1024)
#define GB 1e9
#define WINDOW (256 * MIB)
#define CHUNK (16 * MIB)
#define EVICTING 4
#define WRITE MIB

struct sim {
  const char *name;
  double warm;                  /* bytes a second into pages given back,
                                   and into any page before cold_after */
  double cold;                  /* into other pages after cold_after */
  uint64_t cold_after;
  double disk;                  /* bytes a second written back */
  uint64_t size;                /* bytes the copy writes */
  bool off;                     /* no write-behind at all */
};

struct outcome {
  struct behind_rule rule;
  uint64_t evicted;             /* bytes given back */
  uint64_t cached;              /* when the last write is over */
  uint64_t written_at_start;    /* bytes written when evicting started,
                                   or size if it never did */
  double seconds;               /* until the last write is over */
};

static struct outcome
simulate (const struct sim *s, bool print)
{
  struct outcome o = { .written_at_start = s->size };
  struct behind_rule *b = &o.rule;
  uint64_t written = 0, cached = 0, given_back = 0;
  uint64_t disk_free_ns = 0, evict_done_ns[EVICTING];
  uint64_t t = 0, write_done;
  unsigned evicting = 0, i;
  double rate;

  *b = (struct behind_rule) { 0 };
  behind_rule_start (b, false, WRITE, t);
  rate = s->warm;
  write_done = t + WRITE * 1e9 / rate;
  while (written < s->size || evicting > 0) {
    /* The next event: an eviction over, or the write. */
    unsigned first = EVICTING;
    for (i = 0; i < evicting; i++)
      if (first == EVICTING || evict_done_ns[i] < evict_done_ns[first])
        first = i;
    if (first < EVICTING &&
        (written == s->size || evict_done_ns[first] <= write_done)) {
      t = evict_done_ns[first];
      evict_done_ns[first] = evict_done_ns[--evicting];
      behind_rule_done (b, true, CHUNK, t);
      given_back += CHUNK;
    }
    else {
      t = write_done;
      written += WRITE;
      cached += WRITE;
      behind_rule_done (b, false, WRITE, t);
      if (b->state == RULE_EVICTING && o.written_at_start == s->size)
        o.written_at_start = written;
      if (written < s->size) {
        /* The next write: into a page given back, if any. */
        if (given_back >= WRITE) {
          given_back -= WRITE;
          rate = s->warm;
        }
        else
          rate = written >= s->cold_after ? s->cold : s->warm;
        behind_rule_start (b, false, WRITE, t);
        write_done = t + WRITE * 1e9 / rate;
      }
    }
    if (written == s->size && o.seconds == 0) {
      o.seconds = t / 1e9;
      o.cached = cached;
    }
    while (!s->off && cached > WINDOW && evicting < EVICTING &&
           behind_rule_may_evict (b)) {
      behind_rule_start (b, true, CHUNK, t);
      if (disk_free_ns < t)
        disk_free_ns = t;
      disk_free_ns += CHUNK * 1e9 / s->disk;
      evict_done_ns[evicting++] = disk_free_ns;
      cached -= CHUNK;
      o.evicted += CHUNK;
    }
  }
  if (print)
    printf ("%-26s %.3f s, disk %.2f GB/s, cache %.2f GB/s, "
            "%llu MiB given back, evicting from %llu MiB, "
            "%llu MiB cached\n",
            s->name, o.seconds, b->disk_rate / GB, b->cache_rate / GB,
            (unsigned long long) o.evicted / MIB,
            (unsigned long long) o.written_at_start / MIB,
            (unsigned long long) o.cached / MIB);
  return o;
}

int
main (void)
{
  const uint64_t size = 2048ULL * MIB;
  struct sim s;
  struct outcome o, off;

  /* Memory still mapped: writing into the cache is faster than the
   * disk, so the probe is all that is given back.
   */
  s = (struct sim) { .name = "cache faster than the disk", .warm = 4 * GB,
                     .cold = 4 * GB, .disk = 1.8 * GB, .size = size };
  o = simulate (&s, true);
  CHECK (o.rule.state == RULE_WATCHING);
  CHECK (o.evicted == BEHIND_PROBE);
  CHECK (o.rule.disk_rate > 1.7 * GB && o.rule.disk_rate < 1.9 * GB);
  CHECK (o.rule.cache_rate > 3.9 * GB && o.rule.cache_rate < 4.1 * GB);

  /* A slow disk: giving pages back would only hold the copy to it. */
  s = (struct sim) { .name = "a slow disk", .warm = 4 * GB, .cold = 4 * GB,
                     .disk = 0.15 * GB, .size = size };
  o = simulate (&s, true);
  CHECK (o.rule.state == RULE_WATCHING);
  CHECK (o.evicted == BEHIND_PROBE);

  /* Memory the host took back, after 800 MiB: write-behind starts
   * within two spans of the slowdown, from then on gives back at
   * least as much as it writes, and the copy ends sooner than without
   * it.
   */
  s = (struct sim) { .name = "cache slow after 800 MiB", .warm = 4 * GB,
                     .cold = 0.35 * GB, .cold_after = 800 * MIB,
                     .disk = 1.8 * GB, .size = size };
  o = simulate (&s, true);
  CHECK (o.rule.state == RULE_EVICTING);
  CHECK (o.written_at_start > 800 * MIB);
  CHECK (o.written_at_start <= 800 * MIB + 2 * BEHIND_SPAN);
  CHECK (o.evicted - BEHIND_PROBE >= size - o.written_at_start);
  s.off = true;
  s.name = "the same, no write-behind";
  off = simulate (&s, true);
  CHECK (o.seconds < off.seconds / 2);

  /* Slow from the first page: write-behind starts when the probe is
   * over, from the spans written while probing.
   */
  s = (struct sim) { .name = "cache slow from the start", .warm = 4 * GB,
                     .cold = 0.35 * GB, .disk = 1.8 * GB, .size = size };
  o = simulate (&s, true);
  CHECK (o.rule.state == RULE_EVICTING);
  CHECK (o.written_at_start <= WINDOW + 2 * BEHIND_SPAN);

  /* A copy within the window gives nothing back and decides nothing. */
  s = (struct sim) { .name = "within the window", .warm = 4 * GB,
                     .cold = 0.35 * GB, .disk = 1.8 * GB, .size = WINDOW };
  o = simulate (&s, true);
  CHECK (o.rule.state == RULE_PROBING);
  CHECK (o.evicted == 0);

  return check_status ("test-behind");
}
