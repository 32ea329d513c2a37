/* nbd-libev-examples: what a pass reads from or writes to.
 *
 * An endpoint is an image as the loop sees it: its size and limits,
 * its extents, and read, write, zero and flush commands whose
 * completions come back to the loop as libnbd's do, through an
 * nbd_completion_callback.  The engine and the tools start commands on
 * an endpoint and never ask what is behind it, as nbdcopy's copy loop
 * calls its struct rw_ops.  Two kinds, chosen from what the user gave
 * (tools/lib/image.h):
 *
 *  - NBD: a URI, a captive server ([ CMD ... ]) or a local image that
 *    needs one (qcow2 goes to qemu-nbd), with several connections
 *    (tools/lib/server.h).
 *
 *  - FILE: a local raw file or block device, read and written by the
 *    program itself through io_uring in the same loop
 *    (tools/lib/file.h).  Where io_uring cannot be set up, or when the
 *    environment variable NBD_EV_NO_IO_URING is set to anything but
 *    "0" or "", the file gets a captive nbdkit instead, as every local
 *    file did before, and -v says so.
 *
 *  - STREAM: "-", a pipe or a character device, read or written in
 *    order (tools/lib/stream.h).  Its size is not known: endpoint_size
 *    says SIZE_UNKNOWN, and a pass reading one finds its end as it
 *    goes (endpoint_ended).  It has no extents and cannot zero.
 */

#ifndef NBD_LIBEV_EXAMPLES_ENDPOINT_H
#define NBD_LIBEV_EXAMPLES_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libnbd.h>
#include <ev.h>

#include "extents.h"
#include "file.h"
#include "flush.h"
#include "handle.h"
#include "image.h"
#include "ring.h"
#include "server.h"
#include "stop.h"
#include "stream.h"

/* endpoint_size of a stream: it ends where it ends. */
#define SIZE_UNKNOWN UINT64_MAX

/* Forces the captive server for local files, as where io_uring fails. */
#define NO_IO_URING_ENV "NBD_EV_NO_IO_URING"

enum endpoint_kind {
  ENDPOINT_NBD,
  ENDPOINT_FILE,
  ENDPOINT_STREAM,
};

struct endpoint {
  enum endpoint_kind kind;
  const char *name;             /* "source", or the image's name */
  bool want_extents;            /* its map may say where zeroes are */
  struct server server;         /* ENDPOINT_NBD */
  struct file file;             /* ENDPOINT_FILE */
  struct stream stream;         /* ENDPOINT_STREAM */
};

/* Connect to or open img (image_prepare'd), name labelling messages;
 * writing says whether the program writes to it.  timeout and wanted
 * (connections) as for server_connect, cache for a local file.  Fatal,
 * in one line, if it cannot.
 */
void endpoint_open (struct endpoint *ep, struct ev_loop *loop,
                    const char *name, struct image *img,
                    const struct handle_options *opts, double timeout,
                    unsigned wanted, bool writing, enum image_cache cache);

/* Its size, fatal if it cannot tell. */
uint64_t endpoint_size (const struct endpoint *ep);

/* True for a regular file, which a write past its end makes longer:
 * a destination that grows to what a stream gives.
 */
bool endpoint_grows (const struct endpoint *ep);

/* Make a file at least size bytes long (the holes a stream's copy
 * left at its end, which a write never reached): 0, or -1 with errno.
 */
int endpoint_extend (struct endpoint *ep, uint64_t size);

/* A stream read: the end was met (the last read's slot->length says
 * how much it gave).  Always false for anything else.
 */
bool endpoint_ended (const struct endpoint *ep);

/* A stream read fails with EFBIG past limit bytes (tools/lib/stream.h). */
void endpoint_set_limit (struct endpoint *ep, uint64_t limit);

/* Below what offset every byte has reached ep, for a stream; for
 * anything else, fallback (the caller's low water mark: writes
 * complete in any order).
 */
uint64_t endpoint_complete_below (const struct endpoint *ep,
                                  uint64_t fallback);

/* The smallest piece it takes and the largest (0: no limit). */
uint64_t endpoint_min_block (const struct endpoint *ep);
uint64_t endpoint_max_block (const struct endpoint *ep);

/* True if it takes zero commands; false if it takes no writes. */
bool endpoint_can_zero (const struct endpoint *ep);
bool endpoint_read_only (const struct endpoint *ep);

/* Fatal unless it accepts a request that ends at size (NBD's
 * check_image_end; a file takes any).
 */
void endpoint_check_end (const struct endpoint *ep, uint64_t size);

/* Start a command on the connection with the least in flight, or the
 * file or stream, recorded in slot->conn.  A stream's read sets
 * slot->length to what it gave before cb is called.  -1 with errno if it could not start
 * (endpoint_issue_errno gives the errno to fail the slot with); then
 * cb is never called.
 */
int endpoint_read (struct endpoint *ep, struct slot *slot, void *buf,
                   uint64_t length, uint64_t offset,
                   nbd_completion_callback cb);
int endpoint_write (struct endpoint *ep, struct slot *slot, const void *buf,
                    uint64_t length, uint64_t offset,
                    nbd_completion_callback cb);
int endpoint_zero (struct endpoint *ep, struct slot *slot, uint64_t length,
                   uint64_t offset, bool no_hole, nbd_completion_callback cb);
int endpoint_issue_errno (struct endpoint *ep, struct slot *slot);

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

/* From the prepare callback, once the program is stopping, before it
 * asks whether anything is in flight: a stream's queued commands fail
 * (stream_cancel), since no earlier write will come to let them go and
 * a read may wait for its producer forever.
 */
void endpoint_stopping (struct endpoint *ep);

/* True if conn (a slot's) is one of ep's.  Then the name for messages
 * about a command on it, and the text of its error err.
 */
bool endpoint_owns (const struct endpoint *ep, const void *conn);
const char *endpoint_conn_name (const struct endpoint *ep, const void *conn);
const char *endpoint_strerror (struct endpoint *ep, const void *conn,
                               int err);

/* Open the map of its extents: block status, or SEEK_DATA and SEEK_HOLE
 * for a file; a stream's map is not supported (all data).  Then, from the prepare callback, grow it to reach
 * offset + ahead (map_pump, tools/lib/map.h).
 */
void endpoint_map_open (struct endpoint *ep, struct extent_map *map);
void endpoint_map_pump (struct endpoint *ep, struct extent_map *map,
                        struct stop *s, uint64_t offset, uint64_t ahead);

/* Close every endpoint: a clean disconnect of the servers, together in
 * one loop (server_close), then the files and streams.
 */
void endpoint_close (struct endpoint *const eps[], size_t n,
                     const struct stop *s);

#endif /* NBD_LIBEV_EXAMPLES_ENDPOINT_H */
