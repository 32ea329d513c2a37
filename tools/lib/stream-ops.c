/* nbd-libev-examples: a stream as an endpoint (endpoint.h).
 *
 * "-", a pipe or a character device, read or written in order
 * (tools/lib/stream.h).  Its size is not known until a read meets its
 * end; it has no extents, and no holes: zeroes go to it as buffers of
 * zeroes.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include <ev.h>

#include "endpoint.h"
#include "stream.h"
#include "util.h"

struct piped {
  struct endpoint ep;           /* first: the ops cast back */
  struct stream stream;
};

static const struct endpoint_ops piped_ops;

static struct stream *
stream_of (const struct endpoint *ep)
{
  return &((struct piped *) ep)->stream;
}

struct endpoint *
endpoint_open_stream (struct ev_loop *loop, const char *name,
                      const struct image *img, bool writing)
{
  const char *std = writing ? "standard output" : "standard input";
  struct piped *p;
  char why[4096];

  /* nbd-evsum names an endpoint by its image: "-" says little. */
  if (strcmp (name, "-") == 0)
    name = std;
  if (strcmp (img->path, "-") == 0 && !img->std_open[writing]) {
    if (name == std)
      die ("%s is closed", std);
    die ("%s: %s is closed", name, std);
  }
  p = calloc (1, sizeof *p);
  if (p == NULL)
    die ("calloc: %s", strerror (errno));
  if (stream_open (&p->stream, loop, name, img->path, writing, why,
                   sizeof why) != 0)
    die ("%s: %s", name, why);
  p->ep = (struct endpoint) {
    .ops = &piped_ops, .name = name, .sequential = true, .local = true,
    .min_block = 1,
  };
  debug ("%s: %s in order, no extents", name,
         writing ? "a stream, written" : "a stream, read");
  return &p->ep;
}

static uint64_t
piped_size (const struct endpoint *ep)
{
  return SIZE_UNKNOWN;
}

static bool
piped_ended (const struct endpoint *ep)
{
  return stream_of (ep)->ended;
}

static void
piped_set_limit (struct endpoint *ep, uint64_t limit)
{
  stream_of (ep)->limit = limit;
}

/* Its writes reach it in order: everything below its offset is there. */
static uint64_t
piped_complete_below (const struct endpoint *ep, uint64_t fallback)
{
  return stream_of (ep)->offset;
}

static int
piped_read (struct endpoint *ep, void *buf, uint64_t length,
            uint64_t offset, uint64_t *got, nbd_completion_callback cb,
            struct conn **conn)
{
  return stream_read (stream_of (ep), buf, length, offset, got, cb);
}

static int
piped_write (struct endpoint *ep, const void *buf, uint64_t length,
             uint64_t offset, nbd_completion_callback cb,
             struct conn **conn)
{
  return stream_write (stream_of (ep), buf, length, offset, cb);
}

/* One fsync, at the end: a stream is a pipe (nothing to flush) or a
 * regular file given as standard output.
 */
static bool
piped_flush (struct endpoint *ep, struct flush *f, struct stop *s)
{
  int err = stream_flush (stream_of (ep));

  if (err != 0)
    stop_fail (s, "%s: flush failed: %s", ep->name, strerror (err));
  return true;
}

static bool
piped_busy (const struct endpoint *ep)
{
  return stream_busy (stream_of (ep));
}

static void
piped_stopping (struct endpoint *ep)
{
  stream_cancel (stream_of (ep));
}

static void
piped_update (struct endpoint *ep)
{
  stream_update (stream_of (ep));
}

static const char *
piped_strerror (struct endpoint *ep, const struct conn *conn, int err)
{
  return stream_strerror (stream_of (ep), err);
}

static void
piped_close (struct endpoint *const eps[], size_t n, const struct stop *s)
{
  size_t i;

  for (i = 0; i < n; i++) {
    stream_close (stream_of (eps[i]));
    free (eps[i]);
  }
}

static const struct endpoint_ops piped_ops = {
  .size = piped_size,
  .ended = piped_ended,
  .set_limit = piped_set_limit,
  .complete_below = piped_complete_below,
  .read = piped_read,
  .write = piped_write,
  .flush = piped_flush,
  .busy = piped_busy,
  .stopping = piped_stopping,
  .update = piped_update,
  .strerror = piped_strerror,
  .close = piped_close,
};
