/* nbd-libev-examples: flushing the destination from the event loop.
 *
 * A copier that promises durable data (--flush) sends NBD_CMD_FLUSH
 * once every write has completed, and succeeds only if the flush does.
 * The flush is asynchronous like every other command: it is started
 * from the program's prepare watcher (never from a completion callback),
 * and the loop keeps running until its reply arrives.
 */

#ifndef NBD_LIBEV_EXAMPLES_FLUSH_H
#define NBD_LIBEV_EXAMPLES_FLUSH_H

#include <stdbool.h>

#include <libnbd.h>

#include "file.h"
#include "stop.h"

enum flush_state { FLUSH_NONE, FLUSH_IN_FLIGHT, FLUSH_DONE };

struct flush {
  enum flush_state state;
  int error;                    /* errno of a failed flush */
};

/* Call from the prepare callback once all writes have completed.  The
 * first call starts the flush; it returns true once the flush is over
 * (at once for a server that does not advertise flush, which must not
 * be sent one).  A flush that failed, or that libnbd would not send,
 * is a failure for s (tools/lib/stop.h), so that the program still leaves
 * its servers with a clean disconnect.
 */
bool flush_advance (struct flush *f, struct nbd_handle *nbd,
                    const char *name, struct stop *s);

/* The same for a local file (tools/lib/file.h): fsync, through its
 * io_uring like its writes.
 */
bool flush_file_advance (struct flush *f, struct file *file,
                         const char *name, struct stop *s);

#endif /* NBD_LIBEV_EXAMPLES_FLUSH_H */
