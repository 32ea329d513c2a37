/* nbd-libev-examples: what a pass reads from or writes to.
 *
 * An endpoint is an image as the loop sees it: its size and limits,
 * its extents, and read, write, zero and flush commands whose
 * completions come back to the loop as libnbd's do, through an
 * nbd_completion_callback.  Each kind of endpoint is an ops table
 * (struct endpoint_ops), as nbdcopy's copy loop calls its struct
 * rw_ops, and answers the questions a copy asks as capabilities in
 * struct endpoint, set when it is opened.  The engine and the tools
 * call the functions below and never ask what is behind an endpoint.
 * The kinds, chosen by endpoint_open from what the user gave
 * (tools/lib/image.h):
 *
 *  - NBD (nbd-ops.c): a URI, a captive server ([ CMD ... ]) or a local
 *    image that needs one (qcow2 goes to qemu-nbd), with several
 *    connections (tools/lib/server.h).
 *
 *  - local file (file-ops.c): a raw file or block device, read and
 *    written by the program itself through io_uring in the same loop
 *    (tools/lib/file.h).  Where io_uring cannot be set up, or when the
 *    environment variable NBD_EV_NO_IO_URING is set to anything but
 *    "0" or "", the file gets a captive nbdkit instead (its file
 *    plugin, tools/lib/image.h), and -v says so.
 *
 *  - stream (stream-ops.c): "-", a pipe or a character device, read or
 *    written in order (tools/lib/stream.h).  Its size is not known:
 *    endpoint_size says SIZE_UNKNOWN, and a pass reading one finds its
 *    end as it goes (endpoint_ended).  It has no extents and cannot
 *    zero.
 *
 *  - null (null-ops.c): null:, a destination that keeps nothing, as
 *    nbdcopy's.  A copy sends it nothing at all (endpoint->discards).
 */

#ifndef NBD_LIBEV_EXAMPLES_ENDPOINT_H
#define NBD_LIBEV_EXAMPLES_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libnbd.h>
#include <ev.h>

#include "conn.h"
#include "extents.h"
#include "flush.h"
#include "handle.h"
#include "image.h"
#include "ring.h"
#include "stop.h"

/* endpoint_size of a stream or of null:: it ends where it ends. */
#define SIZE_UNKNOWN UINT64_MAX

struct endpoint;

/* One kind of endpoint.  Members marked optional may be NULL: the
 * functions below then give the answer that suits every other kind.
 */
struct endpoint_ops {
  uint64_t (*size) (const struct endpoint *ep);
  /* Optional.  Fatal unless it takes a request that ends at size. */
  void (*check_end) (const struct endpoint *ep, uint64_t size);
  /* Optional.  The request size to use where the user gave none, and
   * the check of the one used (fatal), with max_size fitted too
   * (tools/lib/block-size.h).
   */
  uint64_t (*fit_request_size) (const struct endpoint *ep,
                                uint64_t request_size, uint64_t unit);
  uint64_t (*check_request_size) (const struct endpoint *ep,
                                  uint64_t request_size, uint64_t max_size);
  /* Optional.  Make it at least size bytes long: 0, or -1 with errno. */
  int (*extend) (struct endpoint *ep, uint64_t size);
  /* Optional, for a sequential endpoint: the end was met; a limit. */
  bool (*ended) (const struct endpoint *ep);
  void (*set_limit) (struct endpoint *ep, uint64_t limit);
  /* Optional.  Below what offset every written byte has reached it. */
  uint64_t (*complete_below) (const struct endpoint *ep, uint64_t fallback);
  /* Start a command: 0, or -1 with errno, and then cb is never called.
   * *conn is set to the connection it went to (NULL for a kind without
   * connections); a read that may give less sets *got before cb is
   * called.  zero is optional (a kind that cannot zero), and so are
   * write and read for null:.
   */
  int (*read) (struct endpoint *ep, void *buf, uint64_t length,
               uint64_t offset, uint64_t *got, nbd_completion_callback cb,
               struct conn **conn);
  int (*write) (struct endpoint *ep, const void *buf, uint64_t length,
                uint64_t offset, nbd_completion_callback cb,
                struct conn **conn);
  int (*zero) (struct endpoint *ep, uint64_t length, uint64_t offset,
               bool no_hole, nbd_completion_callback cb, struct conn **conn);
  /* Optional.  The errno to fail a slot with whose command on conn
   * could not start (default: errno, or EIO).
   */
  int (*issue_errno) (struct endpoint *ep, struct conn *conn);
  /* Optional.  True if err, from a zero command, says that it cannot
   * zero at all: the copy writes buffers of zeroes from then on.
   */
  bool (*zero_unsupported) (const struct endpoint *ep, int err);
  /* Optional (nothing to flush).  As endpoint_flush. */
  bool (*flush) (struct endpoint *ep, struct flush *f, struct stop *s);
  /* Optional.  As the functions of the same names below. */
  bool (*ready) (const struct endpoint *ep);
  bool (*busy) (const struct endpoint *ep);
  void (*check) (const struct endpoint *ep, struct stop *s);
  void (*stopping) (struct endpoint *ep);
  void (*update) (struct endpoint *ep);
  void (*widen) (struct endpoint *ep, unsigned connections);
  void (*set_describe) (struct endpoint *ep, conn_describe_fn describe,
                        void *data);
  /* Optional (the endpoint's name).  The name of the command's conn. */
  const char *(*conn_name) (const struct endpoint *ep,
                            const struct conn *conn);
  /* Optional (strerror).  The text of a command's error. */
  const char *(*strerror) (struct endpoint *ep, const struct conn *conn,
                           int err);
  /* Optional (a map that knows nothing: all data).  As below. */
  void (*map_open) (struct endpoint *ep, struct extent_map *map);
  void (*map_pump) (struct endpoint *ep, struct extent_map *map,
                    struct stop *s, uint64_t offset, uint64_t ahead);
  /* Close these endpoints, all of this kind, together, and free them. */
  void (*close) (struct endpoint *const eps[], size_t n,
                 const struct stop *s);
};

/* An endpoint: a kind's own struct embeds it first, and its ops cast
 * back.  What the copy asks of it is answered here once it is open.
 */
struct endpoint {
  const struct endpoint_ops *ops;
  const char *name;             /* "source", or the image's name */
  bool want_extents;            /* its map may say where zeroes are */
  bool sequential;              /* read or written in order only, its
                                   size unknown: a stream */
  bool grows;                   /* a write past its end makes it longer */
  bool local;                   /* no server: this program does the I/O,
                                   with no round trip to adapt to */
  bool discards;                /* keeps nothing written: null: */
  bool can_zero;                /* takes zero commands */
  bool read_only;               /* refuses writes */
  uint64_t min_block;           /* every offset and length a multiple */
  uint64_t max_block;           /* the largest request, 0: no limit */
  unsigned served_at_once;      /* requests a server works on at once,
                                   over all its connections; 0: none */
  unsigned connections;         /* open to its server (0: none), and */
  unsigned most_connections;    /* the most endpoint_widen opens */
};

/* Open img (image_prepare'd) as the kind it needs, name labelling
 * messages; writing says whether the program writes to it.  timeout
 * and wanted (connections) as for server_connect, cache for a local
 * file.  Fatal, in one line, if it cannot.
 */
struct endpoint *endpoint_open (struct ev_loop *loop, const char *name,
                                struct image *img,
                                const struct handle_options *opts,
                                double timeout, unsigned wanted,
                                bool writing, enum image_cache cache);

/* The kinds' own open functions, for endpoint_open.  endpoint_open_file
 * returns NULL where the file needs a server instead.
 */
struct endpoint *endpoint_open_nbd (struct ev_loop *loop, const char *name,
                                    struct image *img,
                                    const struct handle_options *opts,
                                    double timeout, unsigned wanted,
                                    bool writing);
struct endpoint *endpoint_open_file (struct ev_loop *loop, const char *name,
                                     const struct image *img, bool writing,
                                     enum image_cache cache);
struct endpoint *endpoint_open_stream (struct ev_loop *loop,
                                       const char *name,
                                       const struct image *img,
                                       bool writing);
struct endpoint *endpoint_open_null (const char *name);

/* Its size, fatal if it cannot tell. */
uint64_t endpoint_size (const struct endpoint *ep);

/* Make it at least size bytes long where it grows (the holes a
 * stream's copy left at its end, which a write never reached): 0, or
 * -1 with errno.
 */
int endpoint_extend (struct endpoint *ep, uint64_t size);

/* A stream read: the end was met (the last read's *got says how much
 * it gave).  Always false for anything else.
 */
bool endpoint_ended (const struct endpoint *ep);

/* A stream read fails with EFBIG past limit bytes (tools/lib/stream.h). */
void endpoint_set_limit (struct endpoint *ep, uint64_t limit);

/* Below what offset every byte has reached ep: for a stream, its
 * offset; for a local file whose writeback failed, 0; for anything
 * else, fallback (the caller's low water mark: writes complete in any
 * order).
 */
uint64_t endpoint_complete_below (const struct endpoint *ep,
                                  uint64_t fallback);

/* Fatal unless it accepts a request that ends at size (NBD's
 * check_image_end; a file takes any).
 */
void endpoint_check_end (const struct endpoint *ep, uint64_t size);

/* Its limits on the request size: fitted where the user gave none
 * (in multiples of unit), then checked, fatal if they do not suit, and
 * max_size fitted within them too.
 */
uint64_t endpoint_fit_request_size (const struct endpoint *ep,
                                    uint64_t request_size, uint64_t unit);
uint64_t endpoint_check_request_size (const struct endpoint *ep,
                                      uint64_t request_size,
                                      uint64_t max_size);

/* Start a command on the connection with the least in flight, or the
 * file or stream; *conn says which connection (NULL where the kind has
 * none).  A stream's read sets *got to what it gave before cb is
 * called.  -1 with errno if it could not start (endpoint_issue_errno
 * gives the errno to fail the slot with); then cb is never called.
 */
int endpoint_read (struct endpoint *ep, void *buf, uint64_t length,
                   uint64_t offset, uint64_t *got, nbd_completion_callback cb,
                   struct conn **conn);
int endpoint_write (struct endpoint *ep, const void *buf, uint64_t length,
                    uint64_t offset, nbd_completion_callback cb,
                    struct conn **conn);
int endpoint_zero (struct endpoint *ep, uint64_t length, uint64_t offset,
                   bool no_hole, nbd_completion_callback cb,
                   struct conn **conn);
int endpoint_issue_errno (struct endpoint *ep, struct conn *conn);

/* True if err, from a zero command, says it cannot zero at all (a file
 * system without fallocate's zeroing): it can_zero no more.
 */
bool endpoint_zero_unsupported (struct endpoint *ep, int err);

/* Flush, once every write is done (tools/lib/flush.h): true once over. */
bool endpoint_flush (struct endpoint *ep, struct flush *f, struct stop *s);

/* True if it can still take commands (no connection lost). */
bool endpoint_ready (const struct endpoint *ep);

/* True if commands are in flight. */
bool endpoint_busy (const struct endpoint *ep);

/* From the prepare callback: a lost connection or a timeout first
 * (server_check), and, last, submit or wait for what was started.
 */
void endpoint_check (const struct endpoint *ep, struct stop *s);
void endpoint_update (struct endpoint *ep);

/* Start opening connections to its server, up to connections in all
 * and ep->most_connections; endpoint_update puts them in use, and
 * updates ep->connections and ep->served_at_once, once each is up.
 */
void endpoint_widen (struct endpoint *ep, unsigned connections);

/* From the prepare callback, once the program is stopping, before it
 * asks whether anything is in flight: a stream's queued commands fail
 * (stream_cancel), since no earlier write will come to let them go and
 * a read may wait for its producer forever.
 */
void endpoint_stopping (struct endpoint *ep);

/* The timeout message's describe callback for its connections. */
void endpoint_set_describe (struct endpoint *ep, conn_describe_fn describe,
                            void *data);

/* The name for messages about a command on ep and conn, and the text
 * of its error err.
 */
const char *endpoint_conn_name (const struct endpoint *ep,
                                const struct conn *conn);
const char *endpoint_strerror (struct endpoint *ep, const struct conn *conn,
                               int err);

/* Open the map of its extents: block status, or SEEK_DATA and
 * SEEK_HOLE for a file; a stream's map knows nothing (all data).
 * Then, from the prepare callback, grow it to reach offset + ahead
 * (extents_pump, common/extents.h).
 */
void endpoint_map_open (struct endpoint *ep, struct extent_map *map);
void endpoint_map_pump (struct endpoint *ep, struct extent_map *map,
                        struct stop *s, uint64_t offset, uint64_t ahead);

/* Close and free every endpoint: a clean disconnect of the servers,
 * together in one loop (server_close), then the files and streams.
 */
void endpoint_close (struct endpoint *const eps[], size_t n,
                     const struct stop *s);

#endif /* NBD_LIBEV_EXAMPLES_ENDPOINT_H */
