/* nbd-libev-examples: a local file in the loop, through io_uring.
 * See file.h.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#include <libnbd.h>

#include <ev.h>

#ifdef HAVE_VALGRIND_MEMCHECK_H
#include <valgrind/memcheck.h>
#else
#define VALGRIND_MAKE_MEM_DEFINED(addr, len) ((void) 0)
#endif

#include "asan.h"
#include "bounds.h"
#include "file.h"
#include "util.h"

#ifdef HAVE_LIBURING

/* The alignment O_DIRECT needs of a regular file: the page size, which
 * every local file system accepts (a block device says its own).
 */
#define DIRECT_ALIGN 4096

/* Open the descriptors and learn the size; 0 or an errno, with why. */
static int
open_fds (struct file *f, bool writing, bool direct, char *why, size_t len)
{
  int flags = (writing ? O_RDWR : O_RDONLY) | O_CLOEXEC;
  struct stat st;
  int sector;

  f->fd = f->buffered_fd = f->event_fd = -1;
  f->align = 1;
  f->buffered_fd = open (f->path, flags);
  if (f->buffered_fd == -1 || fstat (f->buffered_fd, &st) == -1) {
    snprintf (why, len, "%s: %s", f->path, strerror (errno));
    return errno;
  }
  f->block_device = S_ISBLK (st.st_mode);
  f->size = st.st_size;
  if (f->block_device && ioctl (f->buffered_fd, BLKGETSIZE64, &f->size) == -1) {
    snprintf (why, len, "%s: cannot tell the device's size: %s", f->path,
              strerror (errno));
    return errno;
  }
  /* A device takes zeroes only in whole sectors, cached or not. */
  if (f->block_device && ioctl (f->buffered_fd, BLKSSZGET, &sector) == 0 &&
      sector > 0)
    f->align = sector;
  f->fd = f->buffered_fd;
  if (!direct)
    return 0;
  /* A file system that cannot bypass the page cache (tmpfs) refuses
   * O_DIRECT here, at open.
   */
  f->fd = open (f->path, flags | O_DIRECT);
  if (f->fd == -1) {
    snprintf (why, len, "%s: cannot open with O_DIRECT (--cache=none): %s",
              f->path, strerror (errno));
    return errno;
  }
  if (!f->block_device)
    f->align = DIRECT_ALIGN;
  f->direct = true;
  return 0;
}

static void
close_fds (struct file *f)
{
  if (f->fd != f->buffered_fd && f->fd >= 0)
    close (f->fd);
  if (f->buffered_fd >= 0)
    close (f->buffered_fd);
  f->fd = f->buffered_fd = -1;
}

/* Enough for every slot's command, a flush and write-behind's
 * evictions, at once.
 */
#define QUEUE_DEPTH 512

/* Write-behind.  A buffered write only copies into the page cache;
 * the kernel writes the dirty pages back in its own time and keeps
 * them cached after.  A copy into a new file then takes a new page for
 * every page it writes, from the free memory, and on a VM whose free
 * memory went back to its host (free page reporting) each of those
 * costs the host a fault: the same copy may take several times as long
 * from one run to the next (docs/techniques.md, section 14).  So the
 * pages written are given back behind the copy, as nbdcopy does from
 * its threads with sync_file_range and posix_fadvise:
 *
 *  - once more than BEHIND_WINDOW bytes written are still cached, up to
 *    BEHIND_CHUNK of the range written first is written back and waited
 *    for (sync_file_range), then dropped from the page cache
 *    (POSIX_FADV_DONTNEED, once the wait is over); its pages go back to
 *    the free lists, where the next writes find them still mapped.
 *    Writes complete out of order, so a write joins whichever of the
 *    last BEHIND_JOIN ranges it touches;
 *
 *  - at most BEHIND_EVICTING evictions are in flight.  The kernel's
 *    io_uring workers run them, and the same workers run the reads and
 *    writes of the copy (four per CPU): more evictions at once, or a
 *    start of writeback after every write, leave the copy waiting for
 *    workers, at the disk's pace.
 *
 * The copy does not wait for the disk as it goes: where the disk is
 * slower than the copy, more than the window stays cached at the end,
 * and the kernel writes it back after, as it does every page without
 * write-behind.  At the end, before a flush and when stopping, no new
 * eviction starts and those in flight are waited for, so that their
 * failures are known (file_behind_settled).
 *
 * A failed writeback is the file's, not a range's: the kernel keeps one
 * error for the file, and whichever sync_file_range looks first takes
 * it, so the pages lost may be those of another eviction, or of any
 * range still cached.  The range it was seen on only says when.
 */
#define BEHIND_WINDOW (256 * 1024 * 1024)
#define BEHIND_CHUNK (16 * 1024 * 1024)
#define BEHIND_EVICTING 4
#define BEHIND_JOIN 16

/* One command, from its start to its callback.  A read or write that
 * moved fewer bytes than asked goes again from done.
 */
struct request {
  struct request *next;         /* on the file's list of spare ones */
  struct file *f;
  enum {
    REQ_READ, REQ_WRITE, REQ_ZERO, REQ_FLUSH,
    REQ_EVICT, REQ_DROP,        /* write-behind's own */
  } op;
  int fd;
  char *buf;
  uint64_t offset, length, done;
  int mode;                     /* REQ_ZERO: fallocate's */
  nbd_completion_callback cb;   /* none for write-behind's own */
};

/* An entry on the submission queue, submitting what is queued if it is
 * full.  NULL only if even that fails.
 */
static struct io_uring_sqe *
get_sqe (struct file *f)
{
  struct io_uring_sqe *sqe = io_uring_get_sqe (&f->ring);

  if (sqe == NULL && io_uring_submit (&f->ring) >= 0) {
    f->queued = 0;
    sqe = io_uring_get_sqe (&f->ring);
  }
  return sqe;
}

/* Queue the request (again, for what is left of it).  -1 with errno if
 * the queue takes nothing.
 */
static int
queue (struct request *r)
{
  struct io_uring_sqe *sqe = get_sqe (r->f);
  uint64_t done = r->done;

  if (sqe == NULL) {
    errno = EAGAIN;
    return -1;
  }
  /* What is left of a short O_DIRECT transfer may be unaligned. */
  if (done % r->f->align != 0)
    r->fd = r->f->buffered_fd;
  /* The kernel's access to the buffer is one ASan cannot see. */
  if (r->op == REQ_READ || r->op == REQ_WRITE)
    asan_check_range (r->buf + done, r->length - done);
  switch (r->op) {
  case REQ_READ:
    io_uring_prep_read (sqe, r->fd, r->buf + done, r->length - done,
                        r->offset + done);
    break;
  case REQ_WRITE:
    io_uring_prep_write (sqe, r->fd, r->buf + done, r->length - done,
                         r->offset + done);
    break;
  case REQ_ZERO:
    io_uring_prep_fallocate (sqe, r->fd, r->mode, r->offset, r->length);
    break;
  case REQ_FLUSH:
    io_uring_prep_fsync (sqe, r->fd, 0);
    break;
  case REQ_EVICT:
    io_uring_prep_sync_file_range (sqe, r->fd, r->length, r->offset,
                                   SYNC_FILE_RANGE_WAIT_BEFORE |
                                   SYNC_FILE_RANGE_WRITE |
                                   SYNC_FILE_RANGE_WAIT_AFTER);
    break;
  case REQ_DROP:
    io_uring_prep_fadvise (sqe, r->fd, r->offset, r->length,
                           POSIX_FADV_DONTNEED);
    break;
  }
  /* A buffered read of cached pages completes inside io_uring_enter,
   * on the loop's thread, one after the other.  IOSQE_ASYNC hands it to
   * the kernel's worker threads instead, which copy on the other cores
   * while the loop sends, writes and hashes.  Not the writes: ext4
   * hands every buffered write to a worker anyway, and IOSQE_ASYNC on
   * them too makes a copy slower (docs/techniques.md, section 14).
   * O_DIRECT reads go to the device and complete asynchronously anyway.
   */
  if (r->op == REQ_READ && !(r->f->direct && r->fd == r->f->fd))
    io_uring_sqe_set_flags (sqe, IOSQE_ASYNC);
  io_uring_sqe_set_data (sqe, r);
  r->f->queued++;
  return 0;
}

/* A request, reused once over: no more are ever in flight than the
 * ring has slots, so after the first turns no command allocates.
 */
static struct request *
get_request (struct file *f)
{
  struct request *r = f->spare;

  if (r == NULL)
    return malloc (sizeof *r);
  f->spare = r->next;
  return r;
}

static void
put_request (struct file *f, struct request *r)
{
  r->next = f->spare;
  f->spare = r;
}

/* Queue r, filled in, and count it in *count: 0, or -1 with errno and
 * r put back if the queue takes nothing.
 */
static int
begin (struct file *f, struct request *r, unsigned *count)
{
  if (queue (r) == -1) {
    put_request (f, r);
    return -1;
  }
  (*count)++;
  return 0;
}

/* Start a command: -1 with errno if it cannot even be queued, as
 * libnbd's aio calls return, and then cb is never called.
 */
static int
start (struct file *f, int op, void *buf, uint64_t length, uint64_t offset,
       int mode, nbd_completion_callback cb)
{
  struct request *r = get_request (f);
  bool aligned = offset % f->align == 0 && length % f->align == 0;

  if (r == NULL)
    return -1;
  *r = (struct request) {
    .f = f, .op = op, .fd = aligned ? f->fd : f->buffered_fd, .buf = buf,
    .offset = offset, .length = length, .mode = mode, .cb = cb,
  };
  return begin (f, r, &f->in_flight);
}

/* A completion: 0 once the request is over, with its errno in *error;
 * 1 if it went again for the rest.
 */
static int
advance (struct request *r, int res, int *error)
{
  *error = res < 0 ? -res : 0;
  if (res < 0 || (r->op != REQ_READ && r->op != REQ_WRITE))
    return 0;
  /* A read at the end of the file: the file is shorter than it was. */
  if (res == 0) {
    *error = r->op == REQ_READ ? ENODATA : EIO;
    return 0;
  }
  /* The kernel wrote the buffer, which valgrind cannot see: say so,
   * or memcheck would take the data read for uninitialised.
   */
  if (r->op == REQ_READ)
    VALGRIND_MAKE_MEM_DEFINED (r->buf + r->done, res);
  r->done += res;
  if (r->done == r->length)
    return 0;
  if (queue (r) == -1) {
    *error = errno;
    return 0;
  }
  return 1;
}

/* Queue r as one of write-behind's own commands, on the file's
 * page-cache descriptor: 0, or -1 with r put back if the queue takes
 * nothing (the range then stays cached, as without write-behind).
 */
static int
behind_queue (struct file *f, struct request *r, int op, uint64_t offset,
              uint64_t length)
{
  *r = (struct request) {
    .f = f, .op = op, .fd = f->buffered_fd, .offset = offset,
    .length = length,
  };
  return begin (f, r, &f->behind_in_flight);
}

/* Evict the oldest ranges while more than the window is cached. */
static void
behind_evict (struct file *f)
{
  struct range *head;
  struct request *r;
  uint64_t length;

  while (f->write_behind && f->written_bytes > BEHIND_WINDOW &&
         f->evicting < BEHIND_EVICTING) {
    head = &f->written[f->written_first];
    length = MIN (head->length, BEHIND_CHUNK);
    r = get_request (f);
    if (r == NULL ||
        behind_queue (f, r, REQ_EVICT, head->offset, length) == -1)
      return;
    f->evicting++;
    f->written_bytes -= length;
    head->offset += length;
    head->length -= length;
    if (head->length == 0) {
      f->written_first = (f->written_first + 1) % f->written_alloc;
      f->written_len--;
    }
  }
}

/* Add a range at the ring's end, or join it to one of the latest
 * ranges it touches.  -1 if the ring cannot grow.
 */
static int
behind_push (struct file *f, uint64_t offset, uint64_t length)
{
  struct range *v, *e;
  size_t i, alloc;

  for (i = 0; i < MIN (f->written_len, BEHIND_JOIN); i++) {
    e = &f->written[(f->written_first + f->written_len - 1 - i) %
                    f->written_alloc];
    if (e->offset + e->length == offset || offset + length == e->offset) {
      e->offset = MIN (e->offset, offset);
      e->length += length;
      f->written_bytes += length;
      return 0;
    }
  }
  if (f->written_len == f->written_alloc) {
    alloc = 2 * f->written_alloc + 16;
    v = malloc (alloc * sizeof *v);
    if (v == NULL)
      return -1;
    for (i = 0; i < f->written_len; i++)
      v[i] = f->written[(f->written_first + i) % f->written_alloc];
    free (f->written);
    f->written = v;
    f->written_alloc = alloc;
    f->written_first = 0;
  }
  f->written[(f->written_first + f->written_len) % f->written_alloc] =
    (struct range) { offset, length };
  f->written_len++;
  f->written_bytes += length;
  return 0;
}

/* A write is complete: note its range, and evict what is over the
 * window.
 */
static void
behind_written (struct file *f, const struct request *r)
{
  if (f->write_behind && behind_push (f, r->offset, r->length) == 0)
    behind_evict (f);
}

/* One of write-behind's own commands is over.  A range written back
 * is dropped next, with the same request.  The first failed writeback
 * is kept for file_behind_error, and write-behind stops there: the copy
 * is failing.  A drop that fails only leaves its pages cached.
 */
static void
behind_done (struct file *f, struct request *r, int res)
{
  f->behind_in_flight--;
  if (r->op == REQ_EVICT && res < 0 && f->behind_error == 0) {
    f->behind_error = -res;
    f->behind_failed = (struct range) { r->offset, r->length };
    f->write_behind = false;
  }
  if (r->op == REQ_EVICT && res >= 0) {
    if (behind_queue (f, r, REQ_DROP, r->offset, r->length) == 0)
      return;
  }
  else
    put_request (f, r);
  f->evicting--;
  behind_evict (f);
}

/* The eventfd is readable: completions are waiting.  Clear it first,
 * so that one posted while reaping wakes the loop again, then reap
 * every completion and call back.  Callbacks only record results
 * (common/ring.h): new commands start from the prepare callback.
 */
static void
completions_cb (struct ev_loop *loop, ev_io *w, int revents)
{
  struct file *f = (struct file *) w;
  struct io_uring_cqe *cqe;
  struct request *r;
  uint64_t count;
  int error, res;

  if (read (f->event_fd, &count, sizeof count) == -1 && errno != EAGAIN)
    die ("%s: eventfd: %s", f->name, strerror (errno));
  while (io_uring_peek_cqe (&f->ring, &cqe) == 0) {
    r = io_uring_cqe_get_data (cqe);
    res = cqe->res;
    io_uring_cqe_seen (&f->ring, cqe);
    if (r->op == REQ_EVICT || r->op == REQ_DROP) {
      behind_done (f, r, res);
      continue;
    }
    if (advance (r, res, &error) == 1)
      continue;
    f->in_flight--;
    if (r->op == REQ_WRITE && error == 0)
      behind_written (f, r);
    r->cb.callback (r->cb.user_data, &error);
    put_request (f, r);
  }
}

/* True if the kernel's io_uring has the n operations ops: rings older
 * than Linux 5.6 set up fine but fail those they lack with EINVAL.
 */
static bool
has_opcodes (struct io_uring *ring, const int *ops, size_t n)
{
  struct io_uring_probe *probe = io_uring_get_probe_ring (ring);
  bool ok = probe != NULL;
  size_t i;

  for (i = 0; ok && i < n; i++)
    ok = io_uring_opcode_supported (probe, ops[i]);
  if (probe != NULL)
    io_uring_free_probe (probe);
  return ok;
}

int
file_open (struct file *f, struct ev_loop *loop, const char *name,
           const char *path, bool writing, bool direct, bool *uring_failed,
           char *why, size_t len)
{
  static const int needed[] = { IORING_OP_READ, IORING_OP_WRITE,
                                IORING_OP_FALLOCATE, IORING_OP_FSYNC };
  static const int behind[] = { IORING_OP_SYNC_FILE_RANGE,
                                IORING_OP_FADVISE };
  int r;

  memset (f, 0, sizeof *f);
  f->loop = loop;
  f->name = name;
  f->path = path;
  *uring_failed = false;
  r = open_fds (f, writing, direct, why, len);
  if (r != 0) {
    close_fds (f);
    return r;
  }
  r = -io_uring_queue_init (QUEUE_DEPTH, &f->ring, 0);
  if (r != 0) {
    *uring_failed = true;
    snprintf (why, len, "io_uring_queue_init: %s", strerror (r));
    close_fds (f);
    return r;
  }
  if (!has_opcodes (&f->ring, needed, sizeof needed / sizeof needed[0])) {
    *uring_failed = true;
    snprintf (why, len, "this kernel's io_uring lacks read, write, "
              "fallocate or fsync");
    io_uring_queue_exit (&f->ring);
    close_fds (f);
    return ENOTSUP;
  }
  f->event_fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (f->event_fd == -1 ||
      (r = -io_uring_register_eventfd (&f->ring, f->event_fd)) != 0) {
    r = f->event_fd == -1 ? errno : r;
    *uring_failed = true;
    snprintf (why, len, "io_uring eventfd: %s", strerror (r));
    io_uring_queue_exit (&f->ring);
    if (f->event_fd >= 0)
      close (f->event_fd);
    f->event_fd = -1;
    close_fds (f);
    return r;
  }
  ev_io_init (&f->watcher, completions_cb, f->event_fd, EV_READ);
  ev_io_start (loop, &f->watcher);
  f->write_behind = writing && !f->direct &&
    has_opcodes (&f->ring, behind, sizeof behind / sizeof behind[0]);
  return 0;
}

int
file_read (struct file *f, void *buf, uint64_t length, uint64_t offset,
           nbd_completion_callback cb)
{
  return start (f, REQ_READ, buf, length, offset, 0, cb);
}

int
file_write (struct file *f, const void *buf, uint64_t length,
            uint64_t offset, nbd_completion_callback cb)
{
  return start (f, REQ_WRITE, (void *) buf, length, offset, 0, cb);
}

int
file_zero (struct file *f, uint64_t length, uint64_t offset, bool no_hole,
           nbd_completion_callback cb)
{
  int mode = (no_hole ? FALLOC_FL_ZERO_RANGE : FALLOC_FL_PUNCH_HOLE) |
    FALLOC_FL_KEEP_SIZE;

  return start (f, REQ_ZERO, NULL, length, offset, mode, cb);
}

int
file_flush (struct file *f, nbd_completion_callback cb)
{
  return start (f, REQ_FLUSH, NULL, 0, 0, 0, cb);
}

void
file_update (struct file *f)
{
  int r;

  if (f->queued == 0)
    return;
  r = io_uring_submit (&f->ring);
  if (r > 0)
    f->queued -= MIN ((unsigned) r, f->queued);
  /* The kernel took not all of them (short of memory for a moment):
   * wake the loop once more, so that this runs again, as nothing else
   * would.
   */
  if (f->queued > 0)
    ev_feed_event (f->loop, &f->watcher, EV_READ);
}

int
file_behind_error (const struct file *f, uint64_t *offset, uint64_t *length)
{
  *offset = f->behind_failed.offset;
  *length = f->behind_failed.length;
  return f->behind_error;
}

bool
file_behind_settled (struct file *f)
{
  f->write_behind = false;
  return f->behind_in_flight == 0;
}

/* Wait for write-behind's own commands, for their failures: at most
 * BEHIND_EVICTING evictions, BEHIND_CHUNK each, and no new one starts.
 * A command of the caller's still in flight (the program is closing
 * after a failure) is forgotten, its callback never called.
 */
static void
behind_drain (struct file *f)
{
  struct io_uring_cqe *cqe;
  struct request *r;
  int ret;

  f->write_behind = false;
  while (f->behind_in_flight > 0) {
    ret = io_uring_submit_and_wait (&f->ring, 1);
    if (ret < 0 && ret != -EINTR)
      return;
    while (io_uring_peek_cqe (&f->ring, &cqe) == 0) {
      r = io_uring_cqe_get_data (cqe);
      if (r->op == REQ_EVICT || r->op == REQ_DROP)
        behind_done (f, r, cqe->res);
      else
        put_request (f, r);
      io_uring_cqe_seen (&f->ring, cqe);
    }
  }
}

void
file_close (struct file *f)
{
  struct request *r;

  if (f->event_fd >= 0) {
    ev_io_stop (f->loop, &f->watcher);
    behind_drain (f);
    io_uring_queue_exit (&f->ring);
    close (f->event_fd);
    f->event_fd = -1;
  }
  close_fds (f);
  while ((r = f->spare) != NULL) {
    f->spare = r->next;
    free (r);
  }
  free (f->written);
  f->written = NULL;
}

#else /* !HAVE_LIBURING */

/* Built without liburing: every local file is served some other way
 * (tools/lib/endpoint.h), and nothing below is ever reached.
 */
int
file_open (struct file *f, struct ev_loop *loop, const char *name,
           const char *path, bool writing, bool direct, bool *uring_failed,
           char *why, size_t len)
{
  memset (f, 0, sizeof *f);
  f->fd = f->buffered_fd = f->event_fd = -1;
  *uring_failed = true;
  snprintf (why, len, "built without liburing");
  return ENOTSUP;
}

int
file_read (struct file *f, void *buf, uint64_t length, uint64_t offset,
           nbd_completion_callback cb)
{
  errno = ENOTSUP;
  return -1;
}

int
file_write (struct file *f, const void *buf, uint64_t length,
            uint64_t offset, nbd_completion_callback cb)
{
  errno = ENOTSUP;
  return -1;
}

int
file_zero (struct file *f, uint64_t length, uint64_t offset, bool no_hole,
           nbd_completion_callback cb)
{
  errno = ENOTSUP;
  return -1;
}

int
file_flush (struct file *f, nbd_completion_callback cb)
{
  errno = ENOTSUP;
  return -1;
}

void
file_update (struct file *f)
{
}

int
file_behind_error (const struct file *f, uint64_t *offset, uint64_t *length)
{
  return 0;
}

bool
file_behind_settled (struct file *f)
{
  return true;
}

void
file_close (struct file *f)
{
}

#endif /* !HAVE_LIBURING */

uint64_t
file_extent (const struct file *f, uint64_t offset, uint64_t length,
             bool *hole)
{
  off_t data, end;

  *hole = false;
  if (f->block_device)
    return length;
  data = lseek (f->buffered_fd, offset, SEEK_DATA);
  if (data == -1 && errno == ENXIO) {
    /* No data from offset to the end of the file. */
    *hole = true;
    return length;
  }
  if (data == -1)
    return length;
  if ((uint64_t) data > offset) {
    *hole = true;
    return MIN ((uint64_t) data - offset, length);
  }
  end = lseek (f->buffered_fd, offset, SEEK_HOLE);
  if (end == -1 || (uint64_t) end <= offset)
    return length;
  return MIN ((uint64_t) end - offset, length);
}
