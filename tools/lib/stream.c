/* nbd-libev-examples: a pipe or standard stream.  See stream.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream.h"
#include "util.h"

struct stream_command {
  struct stream_command *next;
  char *buf;                    /* read into, or written from */
  uint64_t offset, length, done;
  uint64_t *got;                /* a read's: bytes read, at the end */
  nbd_completion_callback cb;
};

/* The streams whose descriptors were made non-blocking, to be given
 * back their flags however the program ends: a shell whose standard
 * input was left non-blocking fails its next read.
 */
static struct stream *opened[2];

/* The pipe buffer asked for: the largest request (tools/lib/bounds.h). */
#define PIPE_SIZE (1024 * 1024)

static void
restore_flags (void)
{
  size_t i;

  for (i = 0; i < sizeof opened / sizeof opened[0]; i++)
    if (opened[i] != NULL && opened[i]->saved_flags != -1) {
      fcntl (opened[i]->fd, F_SETFL, opened[i]->saved_flags);
      opened[i]->saved_flags = -1;
    }
}

static void
remember (struct stream *s)
{
  static bool registered;
  size_t i;

  if (!registered && atexit (restore_flags) == 0)
    registered = true;
  for (i = 0; i < sizeof opened / sizeof opened[0]; i++)
    if (opened[i] == NULL) {
      opened[i] = s;
      return;
    }
}

static void
forget (struct stream *s)
{
  size_t i;

  for (i = 0; i < sizeof opened / sizeof opened[0]; i++)
    if (opened[i] == s)
      opened[i] = NULL;
}

static void io_cb (struct ev_loop *loop, ev_io *w, int revents);

/* open(2), which for a FIFO waits until its other end is opened too.
 * The loop's signal watchers cannot run meanwhile, so SIGINT and
 * SIGTERM get their default action back for the wait: nothing has been
 * read or written yet.  -1 with errno if it fails.
 */
static int
open_waiting (const char *path, bool writing)
{
  struct sigaction dfl = { .sa_handler = SIG_DFL }, old_int, old_term;
  int fd, err;

  sigemptyset (&dfl.sa_mask);
  sigaction (SIGINT, &dfl, &old_int);
  sigaction (SIGTERM, &dfl, &old_term);
  fd = open (path, (writing ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
  err = errno;
  sigaction (SIGINT, &old_int, NULL);
  sigaction (SIGTERM, &old_term, NULL);
  errno = err;
  return fd;
}

/* Only a pipe or socket may block once ready: a write of more than
 * the pipe holds waits for the reader, and the loop with it.  So it is
 * made non-blocking, and its flags given back at exit.  0, or -1 with
 * errno.
 */
static int
make_nonblocking (struct stream *s, const struct stat *st)
{
  int flags = fcntl (s->fd, F_GETFL);

  if (flags == -1 ||
      (!(flags & O_NONBLOCK) &&
       fcntl (s->fd, F_SETFL, flags | O_NONBLOCK) == -1))
    return -1;
  if (!(flags & O_NONBLOCK)) {
    s->saved_flags = flags;
    remember (s);
  }
  s->nonblocking = true;
#ifdef F_SETPIPE_SZ
  /* A pipe holds 64 KiB by default: a request of 1 MiB would take
   * sixteen wake-ups of each side.  Linux lets any process grow it to
   * /proc/sys/fs/pipe-max-size (1 MiB by default); where it cannot,
   * the pipe stays as it was, only slower.
   */
  if (S_ISFIFO (st->st_mode) && fcntl (s->fd, F_SETPIPE_SZ, PIPE_SIZE) == -1)
    debug ("%s: the pipe stays at its size: F_SETPIPE_SZ: %s", s->name,
           strerror (errno));
#endif
  return 0;
}

int
stream_open (struct stream *s, struct ev_loop *loop, const char *name,
             const char *path, bool writing, char *why, size_t len)
{
  struct stat st;

  memset (s, 0, sizeof *s);
  s->loop = loop;
  s->name = name;
  s->writing = writing;
  s->limit = UINT64_MAX;
  s->saved_flags = -1;
  if (strcmp (path, "-") == 0)
    s->fd = writing ? STDOUT_FILENO : STDIN_FILENO;
  else {
    s->fd = open_waiting (path, writing);
    if (s->fd == -1) {
      snprintf (why, len, "%s: %s", path, strerror (errno));
      return errno;
    }
    s->close_fd = true;
  }
  if (fstat (s->fd, &st) == -1) {
    snprintf (why, len, "%s: %s", path, strerror (errno));
    return errno;
  }
  /* Binary data on a terminal helps nobody, as gzip says too. */
  if (writing && isatty (s->fd)) {
    snprintf (why, len, "%s is a terminal: redirect it or pipe it into a "
              "program", s->close_fd ? path : "standard output");
    return ENOTTY;
  }
  if ((S_ISFIFO (st.st_mode) || S_ISSOCK (st.st_mode)) &&
      make_nonblocking (s, &st) == -1) {
    snprintf (why, len, "%s: fcntl: %s", path, strerror (errno));
    return errno;
  }
  if (writing)
    signal (SIGPIPE, SIG_IGN);
  ev_io_init (&s->watcher, io_cb, s->fd, writing ? EV_WRITE : EV_READ);
  return 0;
}

/* A command from the spare list, or a new one. */
static struct stream_command *
new_command (struct stream *s)
{
  struct stream_command *c = s->spare;

  if (c != NULL)
    s->spare = c->next;
  else
    c = malloc (sizeof *c);
  return c;
}

/* Queue c in offset order.  Writes may come in any order; reads come
 * in order, and so go last.
 */
static void
enqueue (struct stream *s, struct stream_command *c)
{
  struct stream_command **p = &s->queue;

  while (*p != NULL && (*p)->offset <= c->offset)
    p = &(*p)->next;
  c->next = *p;
  *p = c;
  s->in_flight++;
}

static int
queue_command (struct stream *s, void *buf, uint64_t length, uint64_t offset,
               uint64_t *got, nbd_completion_callback cb)
{
  struct stream_command *c = new_command (s);

  if (c == NULL)
    return -1;
  *c = (struct stream_command) {
    .buf = buf, .offset = offset, .length = length, .got = got, .cb = cb,
  };
  enqueue (s, c);
  /* Not a leak: enqueue linked c into s->queue, from where a
   * completion puts it on the spare list and stream_free frees it.
   */
  ANALYZER_NOT_A_LEAK_BEGIN
  return 0;
  ANALYZER_NOT_A_LEAK_END
}

int
stream_read (struct stream *s, void *buf, uint64_t length, uint64_t offset,
             uint64_t *got, nbd_completion_callback cb)
{
  return queue_command (s, buf, length, offset, got, cb);
}

int
stream_write (struct stream *s, const void *buf, uint64_t length,
              uint64_t offset, nbd_completion_callback cb)
{
  return queue_command (s, (void *) buf, length, offset, NULL, cb);
}

/* The head of the queue is over: take it off and call its callback,
 * as libnbd calls a completion callback.
 */
static void
complete_head (struct stream *s, int err)
{
  struct stream_command *c = s->queue;

  s->queue = c->next;
  s->in_flight--;
  if (c->got != NULL)
    *c->got = c->done;
  c->cb.callback (c->cb.user_data, &err);
  if (c->cb.free != NULL)
    c->cb.free (c->cb.user_data);
  c->next = s->spare;
  s->spare = c;
}

/* True if the head of the queue can go now: a write only once every
 * byte before it has gone.
 */
static bool
head_ready (const struct stream *s)
{
  return s->queue != NULL &&
    (!s->writing || s->queue->offset + s->queue->done == s->offset);
}

/* A read at the limit: one byte more says whether the stream ends
 * there.  0 and *more once known, or -1 with errno (EAGAIN: not yet).
 */
static int
probe (struct stream *s, bool *more)
{
  char byte;
  ssize_t r = read (s->fd, &byte, 1);

  if (r == -1)
    return -1;
  *more = r == 1;
  return 0;
}

/* Move bytes for the head of the queue.  0 once it made progress or
 * is over, -1 with errno (EAGAIN: wait for the descriptor).
 */
static int
step_head (struct stream *s)
{
  struct stream_command *c = s->queue;
  ssize_t r;
  bool more;

  if (c->done == c->length) {
    /* A read that reached the limit, with the end not yet seen. */
    if (probe (s, &more) == -1)
      return -1;
    s->ended = !more;
    complete_head (s, more ? EFBIG : 0);
    return 0;
  }
  if (s->writing)
    r = write (s->fd, c->buf + c->done, c->length - c->done);
  else
    r = read (s->fd, c->buf + c->done, c->length - c->done);
  if (r == -1)
    return -1;
  if (r == 0 && !s->writing) {
    s->ended = true;
    complete_head (s, 0);
    return 0;
  }
  c->done += r;
  s->offset += r;
  if (c->done == c->length &&
      (s->writing || s->offset < s->limit || s->ended))
    complete_head (s, 0);
  return 0;
}

/* The descriptor is ready: move bytes until it would block, or until
 * the head of the queue must wait for a write not yet started.  A
 * failure fails every queued command: a stream cannot skip a range.
 */
static void
io_cb (struct ev_loop *loop, ev_io *w, int revents)
{
  struct stream *s = (struct stream *) w;
  int err;

  while (head_ready (s)) {
    if (s->ended && !s->writing) {
      complete_head (s, 0);     /* nothing more will come */
      continue;
    }
    if (step_head (s) == 0) {
      if (!s->nonblocking)
        break;                  /* the next might block: wait to be told */
      continue;
    }
    if (errno == EINTR)
      continue;
    err = errno;
    if (err == EAGAIN || err == EWOULDBLOCK)
      break;
    while (s->queue != NULL)
      complete_head (s, err);
  }
  stream_update (s);
}

void
stream_update (struct stream *s)
{
  bool want = head_ready (s);

  if (want && !ev_is_active (&s->watcher))
    ev_io_start (s->loop, &s->watcher);
  else if (!want && ev_is_active (&s->watcher))
    ev_io_stop (s->loop, &s->watcher);
}

void
stream_cancel (struct stream *s)
{
  while (s->queue != NULL)
    complete_head (s, ECANCELED);
  stream_update (s);
}

int
stream_flush (struct stream *s)
{
  if (fsync (s->fd) == -1 && errno != EINVAL && errno != EROFS)
    return errno;
  return 0;
}

const char *
stream_strerror (struct stream *s, int err)
{
  if (err == EFBIG && !s->writing) {
    snprintf (s->why, sizeof s->why, "more data than the destination "
              "holds (%" PRIu64 " bytes)", s->limit);
    return s->why;
  }
  return strerror (err);
}

void
stream_close (struct stream *s)
{
  struct stream_command *c;

  if (ev_is_active (&s->watcher))
    ev_io_stop (s->loop, &s->watcher);
  if (s->saved_flags != -1) {
    fcntl (s->fd, F_SETFL, s->saved_flags);
    s->saved_flags = -1;
  }
  forget (s);
  if (s->close_fd)
    close (s->fd);
  s->fd = -1;
  while ((c = s->spare) != NULL) {
    s->spare = c->next;
    free (c);
  }
}
