/* nbd-libev-examples: a local file or block device, read and written
 * by the program itself, from the same libev loop as its NBD servers.
 *
 * nbdcopy reads and writes local files itself (libnbd copy/file-ops.c)
 * instead of serving them over a socket, and so does this: a raw file
 * costs no server process and no copy of every byte through a Unix
 * socket.  The I/O goes through io_uring (liburing), the way liburing's
 * examples copy a file, and completions reach the loop without a
 * thread:
 *
 *  - Each read, write, zero (fallocate) and flush (fsync) is an entry
 *    on the file's submission queue, prepared when the program starts
 *    the command and submitted together, one io_uring_enter for all the
 *    commands a turn of the loop started (file_update, from the
 *    program's prepare callback, like conn_update for a socket).
 *    Buffered reads go to the kernel's worker threads (IOSQE_ASYNC),
 *    so that copying cached pages runs beside the loop, not inside
 *    its io_uring_enter.
 *
 *  - The completion queue signals an eventfd (io_uring_register_eventfd),
 *    which one ev_io watches.  Its callback reaps every completion and
 *    calls the command's callback with the result, exactly as libnbd
 *    calls a completion callback: (user_data, &error).  So a slot's
 *    command completes the same way whichever endpoint it went to.
 *
 *  - A read or write that moves fewer bytes than asked (a signal, a
 *    file system's limits) goes again for the rest; a read that meets
 *    the end of the file fails with ENODATA, since the program only
 *    reads within the size it was told.  (A file that shrinks under the
 *    program may also show the lost end as a hole, SEEK_DATA finding no
 *    data there, and it is then copied as zeroes: a local file changed
 *    during a copy gives no consistent copy in any case.)
 *
 *  - Zeroes are fallocate: PUNCH_HOLE (the file keeps its size, the
 *    range reads as zeroes and frees its blocks), or ZERO_RANGE when
 *    the range must stay allocated (NBD's NO_HOLE, --allocated).  On a
 *    block device the kernel turns these into the device's own zeroing
 *    (BLKZEROOUT), in whole sectors.  A file system or device that
 *    cannot (EOPNOTSUPP: vfat, tmpfs's ZERO_RANGE, a disk without
 *    write-zeroes for PUNCH_HOLE) fails the command, and the program
 *    writes buffers of zeroes instead (tools/copy/zeroes.c).
 *
 *  - cache none: O_DIRECT, which needs buffers, offsets and lengths
 *    aligned to the device's logical block size.  The ring's buffers
 *    are page-aligned, and nbd-evcopy plans pieces in multiples of
 *    file_block_size.  A piece that is not aligned all the same (the
 *    end of an image whose size is not a multiple of it, nbd-evsum's
 *    blocks smaller than it) goes through a second, buffered
 *    descriptor.
 *
 *  - Written through the page cache, a file keeps at most about 256 MiB
 *    of what the program wrote cached while the disk keeps up: older
 *    ranges are written back, waited for and dropped behind the copy
 *    (write-behind, file.c), so that a large copy takes back the pages
 *    it freed instead of new ones.  A writeback that fails is kept for
 *    file_behind_error.
 *
 * file_open fails (returning the errno) where io_uring cannot be set
 * up: an old kernel (or one before Linux 5.6, whose io_uring lacks
 * read, write or fallocate), a container whose seccomp profile forbids
 * io_uring_setup, or a build without liburing.  The caller then falls
 * back to a captive server (tools/lib/endpoint.h).
 */

#ifndef NBD_LIBEV_EXAMPLES_FILE_H
#define NBD_LIBEV_EXAMPLES_FILE_H

#include <stdbool.h>
#include <stdint.h>

#include <libnbd.h>
#include <ev.h>

#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

struct request;

/* A range of the file's bytes. */
struct range {
  uint64_t offset, length;
};

struct file {
  ev_io watcher;                /* first: the callback casts back */
  struct ev_loop *loop;
  const char *name;             /* "source" or "destination" */
  const char *path;
  int fd;                       /* O_DIRECT with cache none */
  int buffered_fd;              /* for what O_DIRECT cannot do, else fd */
  int event_fd;                 /* the completion queue signals it */
  uint64_t size;                /* bytes, as opened */
  uint64_t align;               /* 1, or the logical block size: a
                                   block device's, or O_DIRECT's */
  bool block_device;
  bool direct;                  /* fd is O_DIRECT */
  unsigned in_flight;           /* commands submitted or queued */
  unsigned queued;              /* prepared, not yet submitted */
  struct request *spare;        /* requests over, to reuse (file.c) */
  /* Write-behind (file.c), for a file written through the page cache. */
  bool write_behind;
  struct range *written;        /* ring of ranges written, oldest first */
  size_t written_first, written_len, written_alloc;
  uint64_t written_bytes;       /* the sum of their lengths */
  unsigned behind_in_flight;    /* write-behind's own commands */
  unsigned evicting;            /* evictions among them */
  int behind_error;             /* the first failed writeback's errno */
  struct range behind_failed;   /* the eviction it was seen on */
#ifdef HAVE_LIBURING
  struct io_uring ring;
#endif
};

/* Open path for reading, or for reading and writing, with io_uring in
 * loop.  direct: O_DIRECT (--cache=none).  Returns 0, or an errno with a
 * line in why (len bytes at most): for a file that cannot be used at
 * all (missing, a directory), the caller dies with that line; for
 * io_uring alone (ENOSYS, EPERM, ENOTSUP for a build without liburing)
 * it may serve the file some other way.  *uring_failed says which.
 */
int file_open (struct file *f, struct ev_loop *loop, const char *name,
               const char *path, bool writing, bool direct,
               bool *uring_failed, char *why, size_t len);

/* Start a command; cb is called from the loop with its result, as
 * libnbd calls a completion callback.  Returns -1 with errno if the
 * command cannot even be queued, as libnbd's aio calls do, and then cb
 * is never called.  no_hole: zero with ZERO_RANGE.
 */
int file_read (struct file *f, void *buf, uint64_t length, uint64_t offset,
               nbd_completion_callback cb);
int file_write (struct file *f, const void *buf, uint64_t length,
                uint64_t offset, nbd_completion_callback cb);
int file_zero (struct file *f, uint64_t length, uint64_t offset,
               bool no_hole, nbd_completion_callback cb);
int file_flush (struct file *f, nbd_completion_callback cb);

/* From the program's prepare callback, after it has started this
 * turn's commands: submit them all at once.
 */
void file_update (struct file *f);

/* The alignment pieces must keep: 1, or the logical block size. */
static inline uint64_t
file_block_size (const struct file *f)
{
  return f->align;
}

/* True while commands are in flight, write-behind's too. */
static inline bool
file_busy (const struct file *f)
{
  return f->in_flight > 0 || f->behind_in_flight > 0;
}

/* The extents of [offset, offset + length) from SEEK_DATA and
 * SEEK_HOLE, one at a time: the length of the run starting at offset
 * (at most length) and whether it is a hole.  A file system or device
 * that cannot tell says data.
 */
uint64_t file_extent (const struct file *f, uint64_t offset, uint64_t length,
                      bool *hole);

/* 0, or the errno of the first writeback that failed under
 * write-behind (a disk error, say), with the range it was seen on.
 * Which pages were lost is not known: those of any range written (the
 * kernel keeps one error for the file, file.c), and the file's next
 * fsync would not say so again.
 */
int file_behind_error (const struct file *f, uint64_t *offset,
                       uint64_t *length);

/* Start no more write-behind (the writes are over, or the program is
 * stopping); true once none of its commands is in flight.
 */
bool file_behind_settled (struct file *f);

/* Stop watching and close, once nothing is in flight.  Write-behind's
 * own commands are waited for: file_behind_error may change.
 */
void file_close (struct file *f);

#endif /* NBD_LIBEV_EXAMPLES_FILE_H */
