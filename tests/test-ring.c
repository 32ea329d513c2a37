/* Unit tests for common/ring.c (taking, completing and giving back
 * slots in both disciplines) and tools/lib/ring-query.c.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ring.h"
#include "ring-query.h"
#include "check.h"


/* Every slot has its own page-aligned buffer, and the ring hands out
 * exactly nr_slots slots before it is full.
 */
static void
test_take_until_full (void)
{
  struct ring *ring = ring_new (4, 65536);
  long page = sysconf (_SC_PAGESIZE);
  struct slot *s[4];
  unsigned i;

  CHECK (ring != NULL);
  CHECK (ring->in_use == 0);
  for (i = 0; i < 4; i++) {
    s[i] = ring_take (ring, i * 65536, 65536);
    CHECK (s[i] != NULL);
    CHECK (s[i]->state == SLOT_BUSY);
    CHECK (s[i]->seq == i);
    CHECK (s[i]->offset == i * 65536);
    CHECK ((uintptr_t) s[i]->buf % page == 0);
    if (i > 0)
      CHECK (s[i]->buf != s[i - 1]->buf);
  }
  CHECK (ring_full (ring));
  CHECK (ring_take (ring, 0, 1) == NULL);
  CHECK (ring->in_use == 4);
  ring_free (ring);
}

/* Any order (ring_release): a slot completed late in the ring is
 * reusable at once while older slots are still in flight (no
 * head-of-line blocking).
 */
static void
test_any_order_reuse (void)
{
  struct ring *ring = ring_new (3, 512);
  struct slot *a = ring_take (ring, 0, 512);
  struct slot *b = ring_take (ring, 512, 512);
  struct slot *c = ring_take (ring, 1024, 512);
  struct slot *d;

  ring_complete (c, 0);
  CHECK (c->state == SLOT_DONE);
  ring_release (c);
  CHECK (c->state == SLOT_IDLE);
  d = ring_take (ring, 1536, 512);
  CHECK (d == c);                       /* the freed slot, not a's */
  CHECK (d->seq == 3);
  CHECK (a->state == SLOT_BUSY && b->state == SLOT_BUSY);
  CHECK (ring->in_use > 0);
  ring_release (a);
  ring_release (b);
  ring_release (d);
  CHECK (ring->in_use == 0);
  ring_free (ring);
}

/* Issue order (ring_retire_head): slots completing out of order are
 * retired in issue order, and ring_head waits on the oldest.
 */
static void
test_in_order_retire (void)
{
  struct ring *ring = ring_new (3, 0);
  struct slot *s[3], *h;
  uint64_t expect = 0;
  unsigned round, i;

  CHECK (ring_head (ring) == NULL);
  for (round = 0; round < 5; round++) {
    for (i = 0; i < 3; i++)
      s[i] = ring_take (ring, (round * 3 + i) * 100, 100);
    /* Complete the newest first. */
    ring_complete (s[2], 0);
    ring_complete (s[1], 0);
    h = ring_head (ring);
    CHECK (h == s[0]);
    CHECK (h->state == SLOT_BUSY);   /* the consumer must wait */
    /* ... but may look past the head at what is already done. */
    for (i = 0; i < 3; i++)
      CHECK (&ring->slots[s[i]->seq % ring->nr_slots] == s[i]);
    ring_complete (s[0], 0);
    while ((h = ring_head (ring)) != NULL && h->state == SLOT_DONE) {
      CHECK (h->seq == expect);
      CHECK (h->offset == expect * 100);
      expect++;
      ring_retire_head (ring);
    }
    CHECK (ring->in_use == 0);
  }
  CHECK (expect == 15);
  ring_free (ring);
}

/* In-order retirement with a ring that is never drained completely: the
 * mapping from sequence number to slot must survive wrapping around.
 */
static void
test_in_order_wrap (void)
{
  struct ring *ring = ring_new (4, 0);
  uint64_t next = 0, expect = 0;
  struct slot *s, *h;
  unsigned step;

  for (step = 0; step < 1000; step++) {
    while ((s = ring_take (ring, next, 1)) != NULL) {
      next++;
      /* Odd sequence numbers complete at once, even ones a step later. */
      if (s->seq % 2)
        ring_complete (s, 0);
    }
    h = ring_head (ring);
    CHECK (h != NULL && h->seq == expect);
    CHECK (ring->slots[(ring->next_seq - 1) % ring->nr_slots].offset
           == next - 1);
    ring_complete (h, 0);
    while ((h = ring_head (ring)) != NULL && h->state == SLOT_DONE) {
      CHECK (h->offset == expect);
      expect++;
      ring_retire_head (ring);
      /* Retire only part of the ring each step. */
      if (expect % 3 == 0)
        break;
    }
  }
  CHECK (expect > 900);
  ring_free (ring);
}

/* A failed completion keeps the error and does not become done. */
static void
test_failure (void)
{
  struct ring *ring = ring_new (1, 512);
  struct slot *s = ring_take (ring, 4096, 512);

  ring_complete (s, 5);
  CHECK (s->state == SLOT_FAILED);
  CHECK (s->error == 5);
  ring_release (s);
  s = ring_take (ring, 0, 512);
  CHECK (s->error == 0);               /* a reused slot starts clean */
  CHECK (slot_state_names[SLOT_FAILED] != NULL);
  ring_free (ring);
}

/* Of several failed slots, the one with the lowest offset is reported,
 * whatever its position in the ring or its sequence number.
 */
static void
test_first_failed (void)
{
  struct ring *ring = ring_new (4, 0);
  struct slot *s[4];
  unsigned i;

  for (i = 0; i < 4; i++)
    s[i] = ring_take (ring, (4 - i) * 100, 100);  /* offsets fall */
  CHECK (ring_first_failed (ring) == NULL);
  ring_complete (s[1], 5);
  CHECK (ring_first_failed (ring) == s[1]);
  ring_complete (s[0], 5);
  ring_complete (s[3], 5);
  CHECK (ring_first_failed (ring) == s[3]);
  ring_complete (s[2], 0);
  CHECK (ring_first_failed (ring) == s[3]);
  ring_free (ring);
}

/* The same in a ring far larger than its use, which is searched newest
 * first and only until every slot in use was seen: failed slots are
 * found wherever they are, on both sides of the wrap, behind idle ones
 * and behind a slot taken long before the others.
 */
static void
test_first_failed_sparse (void)
{
  struct ring *ring = ring_new (16, 0);
  struct slot *old, *a, *b, *t;
  unsigned i;

  old = ring_take (ring, 0, 100);               /* slot 0, stays busy */
  for (i = 1; i < 14; i++)                      /* slots 1-13, given back */
    ring_release (ring_take (ring, i * 100, 100));
  a = ring_take (ring, 1400, 100);              /* slot 14 */
  ring_release (ring_take (ring, 1500, 100));   /* slot 15 */
  b = ring_take (ring, 1600, 100);              /* slot 1, after the wrap */
  CHECK (a->index == 14 && b->index == 1 && ring->in_use == 3);
  CHECK (ring_first_failed (ring) == NULL);
  ring_complete (a, 5);
  CHECK (ring_first_failed (ring) == a);
  ring_complete (old, 5);                       /* behind them all */
  CHECK (ring_first_failed (ring) == old);
  ring_release (old);
  ring_complete (b, 5);
  CHECK (ring_first_failed (ring) == a);
  t = ring_take (ring, 1700, 100);              /* a third, busy */
  CHECK (ring_first_failed (ring) == a && t->state == SLOT_BUSY);
  ring_free (ring);
}

/* The low water mark is the lowest offset still in use, or the next
 * offset.
 */
static void
test_low_water (void)
{
  struct ring *ring = ring_new (3, 0);
  struct slot *a = ring_take (ring, 200, 100);
  struct slot *b = ring_take (ring, 0, 100);
  struct slot *c = ring_take (ring, 100, 100);

  ring_complete (a, 0);
  CHECK (ring_low_water (ring, 300) == 0);
  ring_release (b);
  CHECK (ring_low_water (ring, 300) == 100);
  ring_release (c);
  ring_release (a);
  CHECK (ring_low_water (ring, 300) == 300);
  ring_free (ring);
}

int
main (void)
{
  CHECK (ring_new (0, 512) == NULL);
  test_take_until_full ();
  test_any_order_reuse ();
  test_in_order_retire ();
  test_in_order_wrap ();
  test_failure ();
  test_first_failed ();
  test_first_failed_sparse ();
  test_low_water ();
  return check_status ("test-ring");
}
