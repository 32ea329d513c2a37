/* nbd-libev-examples: a pool of worker threads beside a libev loop.
 *
 * The loop thread does all the I/O; work that costs CPU (hashing a
 * buffer) goes to threads, so that it neither stalls the I/O nor is
 * limited to one core.  The unit of work is a ring slot:
 *
 *  - The loop thread queues a slot (pool_give); any thread takes the
 *    oldest queued one and runs the program's work on it, so slots may
 *    finish out of order.
 *
 *  - The thread records the outcome (0 or an errno: a thread never
 *    exits the program) and wakes the loop with an ev_async; the
 *    program's prepare callback then asks pool_finished, which moves
 *    the slot to SLOT_DONE or SLOT_FAILED.  Only the loop thread writes
 *    slot states, so it may scan them without a lock.  The outcome
 *    passes under the pool's lock, which also orders the data each way.
 *
 *  - Each thread has its own data (an OpenSSL context, say), made by
 *    thread_init before it starts and given to thread_cleanup once it
 *    is joined, both on the loop thread.  tests/test-pool.c tests it.
 */

#ifndef NBD_LIBEV_EXAMPLES_POOL_H
#define NBD_LIBEV_EXAMPLES_POOL_H

#include <pthread.h>
#include <stdbool.h>

#include <ev.h>

#include "ring.h"

/* More would outnumber the CPUs of most machines these run on. */
#define POOL_MAX_THREADS 16

struct pool_ops {
  void *(*thread_init) (void *opaque);  /* NULL: pool_start fails */
  int (*work) (void *thread_data, struct slot *slot); /* 0 or an errno */
  void (*thread_cleanup) (void *thread_data);
};

struct pool_thread {
  struct pool *pool;
  pthread_t thread;
  void *data;                   /* from ops->thread_init */
};

struct pool {
  pthread_mutex_t lock;
  pthread_cond_t cond;          /* signalled: a slot queued, or quit */
  struct slot **queue;          /* circular, room for every slot */
  int *outcome;                 /* by slot index: -1 while pending */
  unsigned size, first, len;
  bool quit;
  const struct pool_ops *ops;
  unsigned nr_threads;
  struct pool_thread threads[POOL_MAX_THREADS];
  struct ev_loop *loop;
  ev_async wake;                /* sent by a thread after each slot */
};

/* One thread per online CPU, at least 1 and at most max. */
unsigned pool_default_threads (unsigned max);

/* Start nr_threads threads (1 to POOL_MAX_THREADS) for a ring of
 * queue_size slots; -1 with errno set, and no thread left, on failure.
 */
int pool_start (struct pool *p, struct ev_loop *loop, unsigned nr_threads,
                unsigned queue_size, const struct pool_ops *ops,
                void *opaque);

/* Loop thread: queue a slot the caller has set SLOT_BUSY. */
void pool_give (struct pool *p, struct slot *slot);

/* Loop thread, for a slot given since it was taken: true once its work
 * is over (SLOT_DONE or SLOT_FAILED), false while queued or worked on.
 */
bool pool_finished (struct pool *p, struct slot *slot);

/* Let each thread finish its slot, drop the queue, join and clean up.
 * Safe again, or on a zeroed pool, so every exit path may call it.
 */
void pool_stop (struct pool *p);

#endif /* NBD_LIBEV_EXAMPLES_POOL_H */
