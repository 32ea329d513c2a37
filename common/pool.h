/* nbd-libev-examples: a pool of worker threads beside a libev loop.
 *
 * The loop thread does all the I/O; work that costs CPU (hashing a
 * buffer) goes to N threads so that it neither stalls the I/O nor is
 * limited to one core.  The unit of work is a ring slot:
 *
 *  - The loop thread queues a slot with pool_give.  Any thread takes the
 *    oldest queued slot and runs the program's work function on it, so
 *    slots may finish out of order.
 *
 *  - When the work is done the thread records its outcome (0, or the
 *    error the work function returned: a thread never exits the program
 *    itself) and wakes the loop with an ev_async.  The loop's prepare
 *    callback then runs, and asks pool_finished which slots are done;
 *    pool_finished moves each to SLOT_DONE or SLOT_FAILED.
 *
 *  - A thread never writes the slot's state: only the loop thread does,
 *    so the loop may scan every slot's state (for failures, for the
 *    oldest command) without a lock.  The outcome passes under the
 *    pool's lock, which also orders the data: the buffer the loop filled
 *    is complete before a thread works on it, and whatever the thread
 *    wrote is complete before the loop reads it.
 *
 *  - Each thread has its own data (an OpenSSL context, say), made by the
 *    program's thread_init before the threads start and given to
 *    thread_cleanup after they are joined, both on the loop thread.
 *
 * tests/test-pool.c exercises it without any NBD server.
 */

#ifndef NBD_LIBEV_EXAMPLES_POOL_H
#define NBD_LIBEV_EXAMPLES_POOL_H

#include <pthread.h>
#include <stdbool.h>

#include <ev.h>

#include "ring.h"

/* The most threads a pool starts: a fixed array in struct pool keeps the
 * module free of another allocation, and more threads than this would
 * outnumber the CPUs of most machines these examples run on.
 */
#define POOL_MAX_THREADS 16

/* The outcome of a slot whose work is not over yet. */
#define POOL_PENDING (-1)

struct pool_ops {
  /* Loop thread, once per thread before it starts: the thread's own
   * data, or NULL if it cannot be made (pool_start then fails).
   */
  void *(*thread_init) (void *opaque);

  /* Worker thread: do the work of one slot.  Returns 0, or an errno
   * value that marks the slot SLOT_FAILED.
   */
  int (*work) (void *thread_data, struct slot *slot);

  /* Loop thread, once per thread after it has been joined. */
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
  int *outcome;                 /* by slot index: POOL_PENDING, or the
                                   work's result */
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

/* Start nr_threads threads (1 to POOL_MAX_THREADS) with a queue for up
 * to queue_size slots, waking loop when a slot is done.  Slots are told
 * apart by slot->index, which must be below queue_size: give the ring's
 * number of slots.  Returns 0, or -1 with errno set (and no thread
 * left running).
 */
int pool_start (struct pool *p, struct ev_loop *loop, unsigned nr_threads,
                 unsigned queue_size, const struct pool_ops *ops,
                 void *opaque);

/* Loop thread: queue a slot.  The caller has set it SLOT_BUSY, and
 * slot->kind to the step the work is.
 */
void pool_give (struct pool *p, struct slot *slot);

/* Loop thread: true if the slot's work is over; the slot is then
 * SLOT_DONE, or SLOT_FAILED with the work's error.  False while a thread
 * has it or it waits in the queue (its state is still what the caller
 * set before pool_give).
 */
bool pool_finished (struct pool *p, struct slot *slot);

/* Let each thread finish the slot it is working on, drop what is still
 * queued, join the threads, and clean up.  Safe
 * to call again, or on a pool never started (zeroed), so that an exit
 * handler may call it whatever the program did before.
 */
void pool_stop (struct pool *p);

#endif /* NBD_LIBEV_EXAMPLES_POOL_H */
