/* nbd-libev-examples: a pipe or standard stream, read or written in
 * order from the same libev loop as the NBD servers.
 *
 * "-" (standard input as a source, standard output as a destination),
 * a FIFO or a character device has no offsets: its bytes come or go
 * one after the other.  nbdcopy drops to one request at a time for a
 * pipe; here only the pipe is sequential, and the NBD side keeps its
 * full depth:
 *
 *  - Writing: commands may be started in any order, as the copy's
 *    reads complete, and each waits in the stream's queue, kept in
 *    offset order, until every byte before it has gone.  This is the
 *    in-order consumer the hash uses (tools/lib/engine.h), here for
 *    bytes instead of digests.  A range of zeroes goes as a buffer of
 *    zeroes: a pipe has no holes.
 *
 *  - Reading: each read fills its buffer with the stream's next bytes.
 *    Its callback learns how many came (*got): fewer than asked only at
 *    the end of the stream.  The caller starts reads in offset order;
 *    the tools start one at a time, and each buffer, once full, goes to
 *    the destination at once.  With a limit (the size of a destination
 *    that cannot grow), a read that reaches it looks for one byte more,
 *    and if the stream has it, fails with EFBIG: the caller writes
 *    nothing more.
 *
 * The descriptor is watched by one ev_io, started only while the
 * command at the head of the queue can go (ev_io is level-triggered, so
 * a watcher with nothing to do would wake the loop at once, every
 * time).  A pipe or socket is made non-blocking while the program
 * uses it, and given back as it was, and each wake-up moves bytes until
 * it would block.  Anything else (a terminal, /dev/zero, a regular file
 * given as "-") stays as it was and gets one read or write per wake-up,
 * which readiness promises will not block; libev treats a regular file
 * as always ready.  Opening a FIFO waits for its other end, with
 * SIGINT and SIGTERM at their default action meanwhile, so that Ctrl-C
 * still ends a program that has read and written nothing yet.  SIGPIPE is ignored, so that a reader that goes away
 * (`| head -c 1M`) is a write failing with EPIPE, which the program
 * reports with its offset, not a death by signal.
 */

#ifndef NBD_LIBEV_EXAMPLES_STREAM_H
#define NBD_LIBEV_EXAMPLES_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include <libnbd.h>
#include <ev.h>

struct stream_command;

struct stream {
  ev_io watcher;                /* first: the callback casts back */
  struct ev_loop *loop;
  const char *name;             /* for messages */
  int fd;
  bool writing;
  bool close_fd;                /* opened here, not standard input or
                                   output */
  bool nonblocking;             /* a pipe or socket, made non-blocking:
                                   moved until EAGAIN; anything else one
                                   read or write per wake-up */
  int saved_flags;              /* fcntl flags to give back, or -1 */
  uint64_t offset;              /* bytes moved so far */
  uint64_t limit;               /* reading: the most it may give */
  bool ended;                   /* reading: the end was met */
  unsigned in_flight;           /* commands queued */
  struct stream_command *queue; /* in offset order */
  struct stream_command *spare; /* over, to reuse */
  char why[128];                /* stream_strerror's text */
};

/* Open path ("-" for standard input or output) for reading or writing,
 * in loop.  Returns 0, or an errno with a line in why (len bytes).
 */
int stream_open (struct stream *s, struct ev_loop *loop, const char *name,
                 const char *path, bool writing, char *why, size_t len);

/* Start reading length bytes at offset, which must be where the last
 * read ended; *got says how many came before cb is called.  Start
 * writing buf at offset, in any order.  Returns -1 with errno if the
 * command cannot even be queued; then cb is never called.
 */
int stream_read (struct stream *s, void *buf, uint64_t length,
                 uint64_t offset, uint64_t *got, nbd_completion_callback cb);
int stream_write (struct stream *s, const void *buf, uint64_t length,
                  uint64_t offset, nbd_completion_callback cb);

/* fsync, for --flush: 0, or an errno.  A pipe has nothing to flush. */
int stream_flush (struct stream *s);

/* From the program's prepare callback: watch the descriptor while the
 * command at the head of the queue can go.
 */
void stream_update (struct stream *s);

/* Fail every queued command with ECANCELED: once the program stops,
 * no earlier write will come to let a later one go.
 */
void stream_cancel (struct stream *s);

/* True while commands are queued. */
static inline bool
stream_busy (const struct stream *s)
{
  return s->in_flight > 0;
}

/* The text for err from a command on s (EFBIG: what the limit was). */
const char *stream_strerror (struct stream *s, int err);

/* Stop watching, give the descriptor its flags back, and close it if
 * it was opened here.
 */
void stream_close (struct stream *s);

#endif /* NBD_LIBEV_EXAMPLES_STREAM_H */
