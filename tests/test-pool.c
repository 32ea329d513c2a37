/* Unit tests for common/pool.c: slots given to the worker threads come
 * back done, each worked on exactly once, with the threads' writes
 * visible to the loop; a work function's error marks its slot failed;
 * per-thread data is made and cleaned up once per thread.  A real libev
 * loop runs, woken only by the pool's ev_async, and no NBD server is
 * needed.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "pool.h"
#include "ring.h"
#include "check.h"


#define NR_THREADS 3
#define NR_SLOTS 5
#define NR_WORK 500
#define FAILING_SEQ 123         /* this slot's work fails */
#define BUF_SIZE 4096

/* Each thread counts the slots it did in its own data. */
struct counter {
  unsigned done;
};

static unsigned nr_init, nr_cleanup, total_done;
static unsigned worked[NR_WORK];        /* written by the threads */

static void *
thread_init (void *opaque)
{
  CHECK (opaque == &nr_init);
  nr_init++;
  return calloc (1, sizeof (struct counter));
}

/* Fill the buffer with the slot's sequence number, so that the loop can
 * check it sees what the thread wrote.
 */
static int
work (void *thread_data, struct slot *slot)
{
  struct counter *c = thread_data;

  c->done++;
  worked[slot->seq]++;
  memset (slot->buf, slot->seq & 0xff, BUF_SIZE);
  return slot->seq == FAILING_SEQ ? EIO : 0;
}

static void
thread_cleanup (void *thread_data)
{
  struct counter *c = thread_data;

  nr_cleanup++;
  total_done += c->done;
  free (c);
}

static const struct pool_ops ops = {
  .thread_init = thread_init,
  .work = work,
  .thread_cleanup = thread_cleanup,
};

static struct ring *ring;
static struct pool pool;
static uint64_t given, returned;
static bool failure_seen;

/* Retire what the threads finished, then give them more; stop when all
 * the work has come back.
 */
static void
prepare_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
  struct slot *slot;
  unsigned i;
  const unsigned char *p;

  for (i = 0; i < ring->nr_slots; i++) {
    slot = &ring->slots[i];
    if (slot->state == SLOT_IDLE || !pool_finished (&pool, slot))
      continue;
    p = slot->buf;
    CHECK (p[0] == (slot->seq & 0xff) && p[BUF_SIZE - 1] == p[0]);
    if (slot->seq == FAILING_SEQ) {
      CHECK (slot->state == SLOT_FAILED && slot->error == EIO);
      failure_seen = true;
    }
    else
      CHECK (slot->state == SLOT_DONE);
    returned++;
    ring_release (slot);
  }
  while (given < NR_WORK && (slot = ring_take (ring, given, 1)) != NULL) {
    slot->kind = 1;             /* the step the pool runs */
    pool_give (&pool, slot);
    given++;
  }
  if (returned == NR_WORK)
    ev_break (loop, EVBREAK_ALL);
}

int
main (void)
{
  struct ev_loop *loop = EV_DEFAULT;
  ev_prepare prepare;
  unsigned i;

  CHECK (pool_default_threads (1) == 1);
  CHECK (pool_default_threads (POOL_MAX_THREADS) >= 1);

  ring = ring_new (NR_SLOTS, BUF_SIZE);
  CHECK (ring != NULL);
  /* A pool of no threads is refused, and leaves nothing running. */
  CHECK (pool_start (&pool, loop, 0, NR_SLOTS, &ops, &nr_init) == -1);
  CHECK (errno == EINVAL && nr_init == 0);
  CHECK (pool_start (&pool, loop, NR_THREADS, NR_SLOTS, &ops, &nr_init) == 0);
  CHECK (nr_init == NR_THREADS);
  ev_prepare_init (&prepare, prepare_cb);
  ev_prepare_start (loop, &prepare);
  /* Nothing but the pool's wake-ups can end this loop's waits. */
  ev_run (loop, 0);
  ev_prepare_stop (loop, &prepare);
  pool_stop (&pool);

  CHECK (returned == NR_WORK);
  CHECK (failure_seen);
  for (i = 0; i < NR_WORK; i++)
    CHECK (worked[i] == 1);
  CHECK (nr_cleanup == NR_THREADS);
  CHECK (total_done == NR_WORK);
  ring_free (ring);
  return check_status ("test-pool");
}
