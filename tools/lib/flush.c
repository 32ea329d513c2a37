/* nbd-libev-examples: flushing from the event loop.  See flush.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <string.h>

#include "flush.h"

int
flush_done (void *user_data, int *error)
{
  struct flush *f = user_data;

  f->error = *error;
  f->state = FLUSH_DONE;
  return 1;
}

bool
flush_over (struct flush *f, const char *name, struct stop *s)
{
  if (f->state != FLUSH_DONE)
    return false;
  if (f->error)
    stop_fail (s, "%s: flush failed: %s", name, strerror (f->error));
  return true;
}
