/* nbd-libev-examples: the engine before its loop runs.  See engine.h.
 *
 * Opening the endpoints, the bounds of the depth within every server's
 * limits, and the ring with its buffers, sized for the most the depth
 * may reach.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "engine.h"
#include "util.h"

void
engine_bounds (const struct shared_options *o, const char *digest,
               uint64_t block_size, unsigned *max_requests,
               uint64_t *max_size)
{
  struct blkhash hash;

  option_depth_bounds (o, max_requests, max_size);
  if (digest == NULL)
    return;
  ordered_hash_setup (&hash, digest, block_size);
  ordered_hash_bound (&hash, o->requests, o->request_size, max_requests,
                      max_size);
  blkhash_free (&hash);
}

void
engine_init (struct engine *e, const struct shared_options *o)
{
  memset (e, 0, sizeof *e);
  e->loop = EV_DEFAULT;
  e->timeout = o->timeout;
  e->connections = o->connections;
  e->progress_mode = o->progress_mode;
  e->cache = o->cache;
  stop_init (&e->stop, e->loop, o->timeout > 0 ? 0 : STOP_GRACE);
}

struct endpoint *
engine_open (struct engine *e, const char *name, struct image *img,
             const struct handle_options *opts, bool writing)
{
  struct endpoint *ep = endpoint_open (e->loop, name, img, opts, e->timeout,
                                       e->connections, writing, e->cache);

  e->endpoints[e->nr_endpoints++] = ep;
  return ep;
}

/* The ring and what goes beside it: n slots of the largest request the
 * depth may reach.
 */
static void
alloc_ring (struct engine *e, unsigned n)
{
  unsigned i;
  uint64_t size = e->depth.max_size;

  e->ring = ring_new (n, 0);
  e->slots = calloc (n, sizeof *e->slots);
  if (e->ring == NULL || e->slots == NULL ||
      buffers_init (&e->buffers, e->ring, size) == -1)
    die ("cannot allocate %u requests of %" PRIu64 " bytes: %s", n, size,
         strerror (errno));
  e->ring->verbose = verbose;
  for (i = 0; i < n; i++)
    e->slots[i] = (struct engine_slot) { .e = e,
                                         .slot = &e->ring->slots[i] };
}

/* The most requests the servers work on at once, summed over those a
 * slot passes through; 0 if there is none.
 */
static unsigned
served_at_once (const struct engine *e)
{
  unsigned i, n = 0;

  for (i = 0; i < e->nr_endpoints; i++)
    n += e->endpoints[i]->served_at_once;
  return n;
}

/* The same, once every server has the most connections it may open. */
static unsigned
served_at_most (const struct engine *e)
{
  const struct endpoint *ep;
  unsigned i, n = 0;

  for (i = 0; i < e->nr_endpoints; i++) {
    ep = e->endpoints[i];
    n += ep->connections == 0 ? ep->served_at_once
      : ep->served_at_once / ep->connections * ep->most_connections;
  }
  return n;
}

/* The connections per server, and the most the rule may open
 * (spread.h).  It widens every server alike, so it may only where every
 * server may have more, and only while the servers, not the options,
 * bound the number of requests.
 */
static void
spread_setup (struct engine *e, bool served_bound)
{
  const struct endpoint *ep;
  unsigned i, open = 0, most = LONG_CONNECTIONS;

  for (i = 0; i < e->nr_endpoints; i++) {
    ep = e->endpoints[i];
    if (ep->connections > 0) {
      open = MAX (open, ep->connections);
      most = MIN (most, ep->most_connections);
    }
  }
  if (!served_bound)
    most = open;
  spread_init (&e->spread, open, MIN (most, ADAPT_CONNECTIONS), most);
}

void
engine_set_depth (struct engine *e, unsigned requests, uint64_t request_size,
                  bool size_given, unsigned max_requests, uint64_t max_size,
                  uint64_t unit)
{
  unsigned i, served = served_at_once (e), nr_slots = max_requests;
  bool served_bound = max_requests > requests && served > 0 &&
    served < max_requests;

  /* An adapting number of requests grows no further than the servers
   * work on at once: past that, requests only wait in them.  The ring
   * keeps twice as many slots as the servers serve with the most
   * connections, within what it had, for nbd-evsum's slots that wait
   * for the hash threads once read.
   */
  e->served = served;
  e->request_bound = max_requests;
  if (served_bound) {
    max_requests = MAX (requests, served);
    nr_slots = MIN (nr_slots, 2 * MAX (max_requests, served_at_most (e)));
  }
  spread_setup (e, served_bound);

  /* A server whose maximum block size is below the default gets
   * smaller requests; one asked for explicitly is checked as given.
   * Requests grow by doubling, within every server's maximum.  A local
   * file takes any.
   */
  for (i = 0; i < e->nr_endpoints && !size_given; i++)
    request_size = endpoint_fit_request_size (e->endpoints[i], request_size,
                                              unit);
  for (i = 0; i < e->nr_endpoints; i++)
    max_size = endpoint_check_request_size (e->endpoints[i], request_size,
                                            max_size);
  depth_init (&e->depth, requests, request_size, max_requests, max_size);
  /* With an NBD server, an adapting size starts at the largest: against
   * a far server the climb is shorter, and against a near one the
   * estimates bring it down (docs/techniques.md, section 13).  Between
   * local files and streams alone it starts at the least, whose
   * buffers of zeroes become holes more often.
   */
  if (served > 0)
    depth_start (&e->depth, max_size);
  alloc_ring (e, nr_slots);
}

void
engine_widen (struct engine *e, uint64_t now, uint64_t left)
{
  unsigned i, served = served_at_once (e);

  if (served > e->served) {
    e->served = served;
    debug ("connections: %u requests served at once", served);
    if (depth_widen (&e->depth, MIN (served, e->request_bound), now))
      depth_say (&e->depth);
  }
  if (!spread_update (&e->spread, &e->depth, now, left)) {
    if (e->spread.narrowed) {
      e->spread.narrowed = false;
      debug ("connections: no more rate for more requests");
      depth_say (&e->depth);
    }
    return;
  }
  debug ("connections: opening up to %u per server (%.0f MB/s)",
         e->spread.connections, e->depth.btlbw / 1e6);
  for (i = 0; i < e->nr_endpoints; i++)
    endpoint_widen (e->endpoints[i], e->spread.connections);
}
