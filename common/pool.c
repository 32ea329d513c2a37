/* nbd-libev-examples: worker threads beside a libev loop.  See pool.h. */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "pool.h"
#include "ring.h"

unsigned
pool_default_threads (unsigned max)
{
  long n = sysconf (_SC_NPROCESSORS_ONLN);

  if (n < 1)
    return 1;
  return (unsigned long) n > max ? max : (unsigned) n;
}

/* Worker: wait for the oldest queued slot and take it, or return NULL
 * when told to quit with nothing left to do.
 */
static struct slot *
take (struct pool *p)
{
  struct slot *slot = NULL;

  pthread_mutex_lock (&p->lock);
  while (p->len == 0 && !p->quit)
    pthread_cond_wait (&p->cond, &p->lock);
  /* Quitting drops what is still queued: the program is done with it,
   * and on an interrupt it should not wait for it.
   */
  if (!p->quit) {
    slot = p->queue[p->first];
    p->first = (p->first + 1) % p->size;
    p->len--;
  }
  pthread_mutex_unlock (&p->lock);
  return slot;
}

/* Worker: record the outcome under the lock, then wake the loop.  The
 * slot itself is left alone: its state is the loop thread's to change
 * (in pool_finished), so that the loop may look at every slot's state
 * without a lock.
 */
static void
finish (struct pool *p, struct slot *slot, int error)
{
  pthread_mutex_lock (&p->lock);
  p->outcome[slot->index] = error;
  pthread_mutex_unlock (&p->lock);
  ev_async_send (p->loop, &p->wake);
}

static void *
thread_main (void *arg)
{
  struct pool_thread *t = arg;
  struct pool *p = t->pool;
  struct slot *slot;

  while ((slot = take (p)) != NULL)
    finish (p, slot, p->ops->work (t->data, slot));
  return NULL;
}

/* Nothing to do here: the wake-up itself is the point, since the
 * program's prepare callback runs before the loop blocks again.
 */
static void
wake_cb (struct ev_loop *loop, ev_async *w, int revents)
{
}

int
pool_start (struct pool *p, struct ev_loop *loop, unsigned nr_threads,
            unsigned queue_size, const struct pool_ops *ops, void *opaque)
{
  struct pool_thread *t;
  unsigned i;
  int r;

  memset (p, 0, sizeof *p);
  if (nr_threads < 1 || nr_threads > POOL_MAX_THREADS) {
    errno = EINVAL;
    return -1;
  }
  p->queue = calloc (queue_size, sizeof *p->queue);
  p->outcome = calloc (queue_size, sizeof *p->outcome);
  if (p->queue == NULL || p->outcome == NULL) {
    free (p->queue);
    free (p->outcome);
    p->queue = NULL;
    errno = ENOMEM;
    return -1;
  }
  pthread_mutex_init (&p->lock, NULL);
  pthread_cond_init (&p->cond, NULL);
  p->size = queue_size;
  p->ops = ops;
  p->loop = loop;
  ev_async_init (&p->wake, wake_cb);
  ev_async_start (loop, &p->wake);

  /* A thread that cannot start stops those already running: the
   * caller gets an error, never a half-made pool.
   */
  for (i = 0; i < nr_threads; i++) {
    t = &p->threads[i];
    t->pool = p;
    t->data = ops->thread_init (opaque);
    r = t->data == NULL ? ENOMEM : pthread_create (&t->thread, NULL,
                                                    thread_main, t);
    if (r != 0) {
      if (t->data != NULL)
        ops->thread_cleanup (t->data);
      pool_stop (p);
      errno = r;
      return -1;
    }
    p->nr_threads++;
  }
  return 0;
}

void
pool_give (struct pool *p, struct slot *slot)
{
  pthread_mutex_lock (&p->lock);
  p->outcome[slot->index] = POOL_PENDING;
  p->queue[(p->first + p->len) % p->size] = slot;
  p->len++;
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
  if (outcome == POOL_PENDING)
    return false;
  ring_complete (slot, outcome);
  return true;
}

void
pool_stop (struct pool *p)
{
  unsigned i;

  if (p->queue == NULL)
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
  p->queue = NULL;
  p->outcome = NULL;
  pthread_cond_destroy (&p->cond);
  pthread_mutex_destroy (&p->lock);
}
