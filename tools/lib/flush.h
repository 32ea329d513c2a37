/* nbd-libev-examples: flushing the destination from the event loop.
 *
 * A copier that promises durable data (--flush) flushes the
 * destination once every write has completed, and succeeds only if the
 * flush does.  The flush is asynchronous like every other command: it
 * is started from the program's prepare watcher (never from a
 * completion callback), and the loop keeps running until it is over.
 * Each kind of endpoint starts its own (endpoint_flush,
 * tools/lib/endpoint.h); this is the state they share.
 */

#ifndef NBD_LIBEV_EXAMPLES_FLUSH_H
#define NBD_LIBEV_EXAMPLES_FLUSH_H

#include <stdbool.h>

#include "stop.h"

enum flush_state { FLUSH_NONE, FLUSH_IN_FLIGHT, FLUSH_DONE };

struct flush {
  enum flush_state state;
  int error;                    /* errno of a failed flush */
};

/* The flush's completion callback, with the struct flush as user_data:
 * it only records the result, as it runs inside libnbd or the file's
 * completion.
 */
int flush_done (void *user_data, int *error);

/* True once the flush is over (FLUSH_DONE), a failure handed to s
 * (tools/lib/stop.h), so that the program still leaves its servers with
 * a clean disconnect.
 */
bool flush_over (struct flush *f, const char *name, struct stop *s);

#endif /* NBD_LIBEV_EXAMPLES_FLUSH_H */
