/* nbd-libev-examples: flushing from the event loop.  See flush.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <string.h>

#include <libnbd.h>

#include "flush.h"
#include "util.h"

/* Runs inside libnbd: only record the result. */
static int
flush_done (void *user_data, int *error)
{
  struct flush *f = user_data;

  f->error = *error;
  f->state = FLUSH_DONE;
  return 1;
}

/* Once the flush is over: true, a failure handed to s. */
static bool
flush_over (struct flush *f, const char *name, struct stop *s)
{
  if (f->state != FLUSH_DONE)
    return false;
  if (f->error)
    stop_fail (s, "%s: flush failed: %s", name, strerror (f->error));
  return true;
}

bool
flush_advance (struct flush *f, struct nbd_handle *nbd, const char *name,
               struct stop *s)
{
  nbd_completion_callback cb = { .callback = flush_done, .user_data = f };

  if (f->state == FLUSH_NONE) {
    /* The NBD protocol forbids a flush to a server that does not
     * advertise one, so the client can do no more for durability.
     */
    if (nbd_can_flush (nbd) != 1) {
      debug ("%s does not advertise flush; none sent", name);
      f->state = FLUSH_DONE;
    }
    else {
      debug ("%s: flush", name);
      if (nbd_aio_flush (nbd, cb, 0) == -1) {
        stop_fail (s, "%s: flush: %s", name, nbd_get_error ());
        f->state = FLUSH_DONE;
      }
      else
        f->state = FLUSH_IN_FLIGHT;
    }
  }
  return flush_over (f, name, s);
}

bool
flush_file_advance (struct flush *f, struct file *file, const char *name,
                    struct stop *s)
{
  nbd_completion_callback cb = { .callback = flush_done, .user_data = f };

  if (f->state == FLUSH_NONE) {
    debug ("%s: fsync", name);
    if (file_flush (file, cb) == -1) {
      stop_fail (s, "%s: flush: %s", name, strerror (errno));
      f->state = FLUSH_DONE;
    }
    else
      f->state = FLUSH_IN_FLIGHT;
  }
  return flush_over (f, name, s);
}
