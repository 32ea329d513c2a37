/* nbd-libev-examples: worker threads beside a libev loop.  See pool.h. */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "pool.h"
#include "ring.h"

#define PENDING (-1)            /* the outcome of work not over yet */

unsigned
pool_default_threads (unsigned max)
{
  long n = sysconf (_SC_NPROCESSORS_ONLN);

  return n < 1 ? 1 : (unsigned long) n > max ? max : (unsigned) n;
}

/* Worker: take the oldest queued slot, run the work, record the outcome
 * under the lock and wake the loop; until told to quit.  Quitting drops
 * what is still queued: on an interrupt the program should not wait
 * for it.  The slot's state is left to the loop thread (pool_finished).
 */
static void *
thread_main (void *arg)
{
  struct pool_thread *t = arg;
  struct pool *p = t->pool;
  struct slot *slot;
  int r;

  for (;;) {
    pthread_mutex_lock (&p->lock);
    while (p->len == 0 && !p->quit)
      pthread_cond_wait (&p->cond, &p->lock);
    if (p->quit) {
      pthread_mutex_unlock (&p->lock);
      return NULL;
    }
    slot = p->queue[p->first];
    p->first = (p->first + 1) % p->size;
    p->len--;
    pthread_mutex_unlock (&p->lock);

    r = p->ops->work (t->data, slot);
    pthread_mutex_lock (&p->lock);
    p->outcome[slot->index] = r;
    pthread_mutex_unlock (&p->lock);
    ev_async_send (p->loop, &p->wake);
  }
}

/* The wake-up is the point: the prepare callback runs next. */
static void
wake_cb (struct ev_loop *loop, ev_async *w, int revents)
{
}

int
pool_start (struct pool *p, struct ev_loop *loop, unsigned nr_threads,
            unsigned queue_size, const struct pool_ops *ops, void *opaque)
{
  struct pool_thread *t;
  int r = nr_threads < 1 || nr_threads > POOL_MAX_THREADS ? EINVAL : 0;

  memset (p, 0, sizeof *p);
  p->queue = calloc (queue_size, sizeof *p->queue);
  p->outcome = calloc (queue_size, sizeof *p->outcome);
  pthread_mutex_init (&p->lock, NULL);
  pthread_cond_init (&p->cond, NULL);
  p->size = queue_size;
  p->ops = ops;
  p->loop = loop;
  ev_async_init (&p->wake, wake_cb);
  ev_async_start (loop, &p->wake);

  /* A thread that cannot start stops those already running: the caller
   * gets an error, never a half-made pool.
   */
  if (r == 0 && (p->queue == NULL || p->outcome == NULL))
    r = ENOMEM;
  while (r == 0 && p->nr_threads < nr_threads) {
    t = &p->threads[p->nr_threads];
    t->pool = p;
    t->data = ops->thread_init (opaque);
    r = t->data ? pthread_create (&t->thread, NULL, thread_main, t) : ENOMEM;
    if (r == 0)
      p->nr_threads++;
    else if (t->data)
      ops->thread_cleanup (t->data);
  }
  if (r != 0) {
    pool_stop (p);
    errno = r;
    return -1;
  }
  return 0;
}

void
pool_give (struct pool *p, struct slot *slot)
{
  pthread_mutex_lock (&p->lock);
  p->outcome[slot->index] = PENDING;
  p->queue[(p->first + p->len++) % p->size] = slot;
  pthread_cond_signal (&p->cond);
  pthread_mutex_unlock (&p->lock);
}

bool
pool_finished (struct pool *p, struct slot *slot)
{
  int outcome;

  pthread_mutex_lock (&p->lock);
  outcome = p->outcome[slot->index];
  pthread_mutex_unlock (&p->lock);
  if (outcome == PENDING)
    return false;
  ring_complete (slot, outcome);
  return true;
}

void
pool_stop (struct pool *p)
{
  unsigned i;

  if (p->loop == NULL)
    return;                     /* never started, or stopped already */
  pthread_mutex_lock (&p->lock);
  p->quit = true;
  pthread_cond_broadcast (&p->cond);
  pthread_mutex_unlock (&p->lock);
  for (i = 0; i < p->nr_threads; i++) {
    pthread_join (p->threads[i].thread, NULL);
    p->ops->thread_cleanup (p->threads[i].data);
  }
  ev_async_stop (p->loop, &p->wake);
  free (p->queue);
  free (p->outcome);
  pthread_cond_destroy (&p->cond);
  pthread_mutex_destroy (&p->lock);
  memset (p, 0, sizeof *p);
}
