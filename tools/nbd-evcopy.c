/* nbd-evcopy: copy a disk image between NBD servers, local files and
 * captive servers, from one libev loop.
 *
 * The tool beside the lessons in examples/: it does what
 * zero-extent-copy-libev shows (the source's extents, one write-zeroes
 * per zero extent, all-zero buffers sent as zeroes, nothing sent where
 * the destination already reads as zeroes) and what copy-libev shows
 * (--no-extents --no-sparse: every byte read and written), with what a
 * program people run needs around it: local files and [ CMD ARGS ... ]
 * (tools/image.h), several connections per server (tools/server.h),
 * --timeout, signals with the offset to resume from (tools/stop.h),
 * --progress, --flush, and a copy verified in the same pass.
 *
 *  - --checksum: the source's block hash (common/blkhash.h), computed
 *    from the buffers the copy reads anyway, so a verified copy costs
 *    one pass.  Written buffers go to hash threads
 *    (tools/ordered-hash.h); zero extents, skipped or zeroed, and
 *    all-zero buffers are hashed as zero blocks without any work.
 *    Commands complete in any order, but slots are given back in offset
 *    order, as in checksum-libev, and that is where the outer digest is
 *    fed.
 *
 *  - --verify: after the copy, the destination is read back the same
 *    way and its digest compared with the source's.
 *
 * docs/nbd-evcopy.pod is its manual.  For example:
 *
 *   nbd-evcopy -p [ nbdkit pattern 1G ] [ nbdkit memory 1G ]
 *   nbd-evcopy --verify disk.qcow2 copy.raw
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include <ev.h>

#include "buffers.h"
#include "conn.h"
#include "server.h"
#include "handle.h"
#include "extents.h"
#include "iszero.h"
#include "flush.h"
#include "depth.h"
#include "image.h"
#include "options.h"
#include "ring.h"
#include "ring-query.h"
#include "ordered-hash.h"
#include "stop.h"
#include "util.h"

/* Zero commands take a slot of the ring, so they count against the
 * requests in flight; they need no buffer, though each slot holds one
 * (tools/buffers.h) in case the destination cannot zero.  A zero
 * extent goes out in as few commands as the destination allows
 * (zero_max):
 *  - At most its maximum block size, if it says one.  Until the NBD
 *    protocol's "Block size constraints" were relaxed in 2023, that
 *    maximum bound every command, and qemu's own client still keeps
 *    WRITE_ZEROES within it; libnbd 1.14, nbdkit 1.32 and qemu 7.2
 *    are of that time.
 *  - Else MAX_LENGTH_32 (common/extents.h), the 32-bit length field.
 * The spec still lets a server refuse a request longer than it likes
 * with NBD_EOVERFLOW or NBD_EINVAL: then zero_max halves and the same
 * range goes again in pieces (zero_piece).
 * Long extents are split at multiples of ZERO_SPLIT, absolute offsets,
 * not relative to the extent.  64 KiB is the largest minimum block
 * size the protocol allows and qcow2's default cluster size, so a
 * server never has to zero part of a block or cluster by writing it.
 */
#define ZERO_SPLIT 65536

/* What a slot is doing, kept in slot->kind for messages. */
enum op { OP_READ, OP_WRITE, OP_ZERO, OP_SKIP, OP_HASH };
static const char *const op_names[] = {
  [OP_READ] = "read",
  [OP_WRITE] = "write",
  [OP_ZERO] = "zero",
  [OP_SKIP] = "skip",
  [OP_HASH] = "hashing",
};

/* slot->flags, set and read by the loop thread only. */
enum {
  ONTO_ZEROES = 1,      /* the destination reads as zeroes here */
  HASH_DATA = 2,        /* --checksum: hash the buffer */
  HASH_ZEROES = 4,      /* --checksum: whole zero blocks, no hashing */
  HASH_GIVEN = 8,       /* --checksum: the hash threads have the buffer */
};

/* What the planner decided for the next piece of the image. */
enum work {
  WORK_WAIT,            /* the extent map must grow first */
  WORK_READ,            /* data: read, then write (or zero) */
  WORK_ZERO,            /* a zero extent: one zero command */
  WORK_SKIP,            /* a zero extent on a zero destination: nothing */
};

static struct server src, dst;  /* connections to each server */
/* The allocation map of what is read (the source's; the destination's
 * in the --verify pass) and of the destination, during the copy.
 */
static struct extent_map read_map, dst_map;
static struct server *reading = &src; /* where reads go */
static struct ring *ring;
static struct buffers buffers;  /* the slots' buffers (tools/buffers.h) */
static uint64_t size;           /* bytes to copy: the source's size */
static uint64_t request_size = DEFAULT_REQUEST_SIZE;
static uint64_t block = 1;      /* both servers' minimum block size */
static uint64_t next_offset;    /* where the next piece starts */
static uint64_t bytes_done;     /* written, zeroed or skipped */
static bool sparse = true;      /* turn all-zero read buffers into zeroes */
static bool dst_is_zero;        /* --destination-is-zero: skip every hole */
static bool dst_has_map;        /* dst_map tells where it reads as zero */
static bool dst_can_zero;
static uint32_t zero_flags;     /* 0 (may punch holes) or NO_HOLE */
static uint64_t zero_max;       /* the longest zero command to send */
/* Per slot: of a zero range, the piece in flight, [at, at + length);
 * of any, the depth's mark of when it was taken.
 */
static struct piece {
  uint64_t at, length;
  struct depth_mark taken;
} *pieces;
static struct depth depth;      /* requests in flight and their size */
static bool want_flush;
static struct flush flush;
static struct progress progress;
static struct stop stop;
static bool checksum;           /* --checksum: the source's block hash */
static bool verifying;          /* in the --verify pass */
static struct ordered_hash src_hash, dst_hash;
static struct ordered_hash *hashing = &src_hash; /* the one being fed */

/* Counts for the summary under -v. */
static uint64_t nr_reads, nr_writes, nr_zeroes, bytes_skipped;

/* Completion callbacks run inside libnbd while it holds the handle's
 * lock, so they must not start new commands on that handle:
 * ring_command_done (common/ring.h) only records the result in the
 * slot, and the prepare callback (pump_cb) acts on it in the next loop
 * iteration.
 */
static void
start_read (struct slot *slot)
{
  nbd_completion_callback cb = { .callback = ring_command_done,
                                 .user_data = slot };

  slot->kind = OP_READ;
  slot->conn = server_pick (reading);
  slot_debug (slot, "read");
  if (nbd_aio_pread (((struct conn *) slot->conn)->glue.nbd, slot->buf,
                     slot->length, slot->offset, cb, 0) == -1)
    ring_complete (slot, conn_issue_errno (slot->conn));
}

static void
start_write (struct slot *slot)
{
  nbd_completion_callback cb = { .callback = ring_command_done,
                                 .user_data = slot };

  slot->kind = OP_WRITE;
  slot->state = SLOT_BUSY;
  slot->conn = server_pick (&dst);
  slot_debug (slot, "write");
  if (nbd_aio_pwrite (((struct conn *) slot->conn)->glue.nbd, slot->buf,
                      slot->length, slot->offset, cb, 0) == -1)
    ring_complete (slot, conn_issue_errno (slot->conn));
}

/* Zero the slot's range, one piece at a time: a command of at most
 * zero_max bytes, or, if the destination cannot zero, a write of a
 * buffer of zeroes (the planner keeps such ranges within a buffer).
 */
static void
zero_piece (struct slot *slot)
{
  nbd_completion_callback cb = { .callback = ring_command_done,
                                 .user_data = slot };
  struct piece *p = &pieces[slot->index];
  struct nbd_handle *nbd;
  int r;

  p->length = MIN (slot->offset + slot->length - p->at,
                   dst_can_zero ? zero_max : ring->buf_size);
  slot->state = SLOT_BUSY;
  slot->conn = server_pick (&dst);
  nbd = ((struct conn *) slot->conn)->glue.nbd;
  if (dst_can_zero) {
    slot->kind = OP_ZERO;
    nr_zeroes++;
    r = nbd_aio_zero (nbd, p->length, p->at, cb, zero_flags);
  }
  else {
    slot->kind = OP_WRITE;
    memset (slot->buf, 0, p->length);
    nr_writes++;
    r = nbd_aio_pwrite (nbd, slot->buf, p->length, p->at, cb, 0);
  }
  if (p->at != slot->offset || p->length != slot->length)
    debug ("slot %u: %s piece offset %" PRIu64 " length %" PRIu64,
           slot->index, op_names[slot->kind], p->at, p->length);
  else
    slot_debug (slot, op_names[slot->kind]);
  if (r == -1)
    ring_complete (slot, conn_issue_errno (slot->conn));
}

static void
start_zero (struct slot *slot)
{
  slot->flags |= HASH_ZEROES;
  pieces[slot->index].at = slot->offset;
  zero_piece (slot);
}

/* A piece of a zero range is done: true if the whole range is. */
static bool
zero_advance (struct slot *slot)
{
  struct piece *p = &pieces[slot->index];

  p->at += p->length;
  if (p->at == slot->offset + slot->length)
    return true;
  zero_piece (slot);
  return false;
}

/* A zero piece failed.  NBD_EOVERFLOW or NBD_EINVAL for a piece longer
 * than a block is the server's limit (proto.md, "Block size
 * constraints": it MAY refuse a request over its maximum, or over one
 * it did not say): halve zero_max and go again.  True if the slot goes
 * on.  (NBD_ENOTSUP is left a failure: nbdkit and qemu-nbd answer it
 * only to FAST_ZERO, which is never sent, and write zeroes themselves
 * when their storage cannot zero.)
 */
static bool
zero_retry (struct slot *slot)
{
  const struct piece *p = &pieces[slot->index];
  uint64_t half = p->length / 2;

  if (slot->kind != OP_ZERO)
    return false;
  if ((slot->error == EOVERFLOW || slot->error == EINVAL) &&
      p->length > block) {
    /* Pieces already in flight may be refused too: say it once. */
    half = MAX (block, round_down (half, half >= ZERO_SPLIT ? ZERO_SPLIT
                                                            : block));
    if (half < zero_max) {
      zero_max = half;
      debug ("destination refused a zero of %" PRIu64 " bytes (%s): zero "
             "commands of at most %" PRIu64 " bytes from now on", p->length,
             strerror (slot->error), zero_max);
    }
  }
  else
    return false;
  slot->error = 0;
  zero_piece (slot);
  return true;
}

/* A failed command ends the copy, but cleanly (tools/stop.h): the
 * first failure is kept for the last line, no new command starts, and
 * the program exits once the commands in flight are over.  The slot's
 * buffer is never written anywhere after a failed read: with
 * pread_initialize off it holds whatever the previous request left,
 * not the source's data.
 */
static void
slot_failed (const struct slot *slot)
{
  slot_debug (slot, "failed");
  if (slot->kind == OP_HASH)
    stop_fail (&stop, "hashing failed at offset %" PRIu64 " length %"
               PRIu64 ": %s", slot->offset, slot->length,
               strerror (slot->error));
  else if (slot->flags & HASH_ZEROES && slot->kind != OP_SKIP)
    stop_fail (&stop, "%s: %s failed at offset %" PRIu64 " length %" PRIu64
             ": %s", ((const struct conn *) slot->conn)->name,
             op_names[slot->kind], pieces[slot->index].at,
             pieces[slot->index].length,
             conn_strerror (slot->conn, slot->error));
  else
    stop_fail (&stop, "%s: %s failed at offset %" PRIu64 " length %" PRIu64
             ": %s", ((const struct conn *) slot->conn)->name,
             op_names[slot->kind], slot->offset, slot->length,
             conn_strerror (slot->conn, slot->error));
}

/* A data slot is over: its round trip and bytes go to the depth's
 * estimates.  Zero commands and skipped ranges do not: they move no
 * data, and one zero command of gigabytes would pass for a huge rate.
 */
static void
sample (const struct slot *slot)
{
  if (slot->flags & HASH_DATA)
    depth_sample (&depth, slot->length, pieces[slot->index].taken, now_ns ());
}

/* A slot's last command is done: count it and give the slot back.
 * With --checksum a slot is given back only in offset order, once its
 * data or zeroes are in the hash (retire_hashed).
 */
static void
finish (struct slot *slot)
{
  if (checksum) {
    slot->state = SLOT_DONE;
    return;
  }
  sample (slot);
  bytes_done += slot->length;
  progress_update (&progress, bytes_done);
  buffers_give (&buffers, slot);
  ring_release (slot);
}

/* True once every byte is written and, with --flush, the flush is done.
 * The flush starts only when no write is in flight, so that it covers
 * them all.
 */
static bool
finish_copy (void)
{
  if (next_offset < size || ring->in_use > 0)
    return false;
  return !want_flush ||
    flush_advance (&flush, dst.v[0]->glue.nbd, "destination", &stop);
}

/* Once stopping: true when no command is in flight on any connection.
 * After a signal, --flush still makes the copy so far durable; by then
 * every write below the offset reported is complete.
 */
static bool
finish_stop (void)
{
  if (server_busy (&src) || server_busy (&dst))
    return false;
  /* Only a destination still connected, with no write failed, can make
   * the writes below the reported offset durable.
   */
  return stop.signum == 0 || !want_flush || !conn_ready (dst.v[0]) ||
    ring_first_failed (ring) != NULL ||
    flush_advance (&flush, dst.v[0]->glue.nbd, "destination", &stop);
}

/* For the timeout message: the oldest command still waiting on c. */
static void
describe_oldest (const struct conn *c, char *buf, size_t len)
{
  const struct slot *slot = ring_oldest (ring, c, OP_READ);

  if (slot == NULL)
    slot = ring_oldest (ring, c, OP_WRITE);
  if (slot == NULL)
    slot = ring_oldest (ring, c, OP_ZERO);
  if (slot == NULL)
    snprintf (buf, len, "a command other than a read or write");
  else
    snprintf (buf, len, "%s at offset %" PRIu64 " length %" PRIu64,
              op_names[slot->kind], slot->offset, slot->length);
}

/* --checksum: a written data slot goes to the hash threads (in the
 * --verify pass, a slot whose read is done).  Hashing after the write,
 * not before, keeps the copy itself at full pace; the slot's buffer
 * stays untouched until the slot is given back.  A slot given from
 * read_complete must be given at once: nothing else would wake the loop
 * for it.
 */
static void
give_to_hash (struct slot *slot)
{
  slot->kind = OP_HASH;
  slot->flags |= HASH_GIVEN;
  ordered_hash_give (hashing, slot);
}

/* A read came back.  An all-zero buffer needs no write: nothing at all
 * where the destination reads as zeroes already (ONTO_ZEROES, decided
 * when the read was planned), otherwise one zero command, which lets the
 * server keep a hole.  Only whole blocks may be zeroed, so the image's
 * unaligned tail is always written.
 */
static void
read_complete (struct slot *slot)
{
  slot_debug (slot, "read done");
  if (!sparse || slot->length % block != 0 ||
      !is_zero (slot->buf, slot->length)) {
    slot->flags |= HASH_DATA;
    if (verifying) {            /* nothing to write: hash it now */
      give_to_hash (slot);
      return;
    }
    nr_writes++;
    start_write (slot);
    return;
  }
  /* Whole blocks of zeroes: block is a multiple of the hash's block
   * size with --checksum, so they are hashed as zero blocks, with no
   * work for the hash threads.
   */
  slot->flags |= HASH_ZEROES;
  if (slot->flags & ONTO_ZEROES) {
    slot->kind = OP_SKIP;
    slot_debug (slot, "skip zeroes");
    bytes_skipped += slot->length;
    finish (slot);
    return;
  }
  start_zero (slot);
}

/* How far from offset, up to length bytes, the destination already
 * reads as zeroes: everything with --destination-is-zero, nothing with
 * --allocated or without its block status, else what its map says (0
 * where it holds data).  False while its map does not reach offset.
 * The map runs up to two windows ahead of the copy, like the source's,
 * so the two servers answer block status at the same time.
 */
static bool
dst_zero_run (uint64_t offset, uint64_t length, uint64_t *run)
{
  struct extent d;

  if (!dst_has_map) {
    *run = dst_is_zero ? length : 0;
    return true;
  }
  if (!extents_next (&dst_map, offset, length, &d))
    return false;
  *run = d.zero ? d.length : 0;
  return true;
}

/* Ask for the reply that tells where the current extent ends.  True
 * if there is nothing to wait for: the command was refused, and its
 * range is already in the map as data, so plan again at once (nothing
 * else would wake the loop).
 */
static bool
want_more (uint64_t offset, uint64_t length)
{
  handle_extents_pump (&stop, &read_map, offset, length + 1);
  return !read_map.in_flight && !stop_requested (&stop);
}

/* Decide what to do with the image from offset on, and how much of it.
 * Every piece starts and ends on a multiple of block (or at the end of
 * the image), so both servers see only aligned commands.  Zero extents
 * go out whole: if the map ends inside one, wait for the next reply
 * rather than send two commands where one would do.
 */
static enum work
plan (uint64_t offset, uint64_t *length, bool *onto_zeroes)
{
  struct extent e;
  uint64_t extent_end, end, run, ahead;
  bool whole;

  /* Keep a window or two of extents ahead of the copy, so zero extents
   * rarely wait for a block-status round trip; both maps at once, and
   * neither past size (a larger destination's would go on).
   */
  ahead = MIN (2 * read_map.window, size - offset);
  handle_extents_pump (&stop, &read_map, offset, ahead);
  if (dst_has_map)
    handle_extents_pump (&stop, &dst_map, offset, ahead);
  /* A larger destination's map in the --verify pass goes past size. */
  if (!extents_next (&read_map, offset, size - offset, &e))
    return WORK_WAIT;
  extent_end = offset + e.length;
  whole = extent_end < read_map.end || read_map.end >= size;

  if (e.zero) {
    /* Zeroes onto zeroes: skip as much as both maps know, even if it
     * is less than the whole extent; skipping in pieces costs nothing.
     */
    if (!dst_zero_run (offset, e.length, &run))
      return WORK_WAIT;
    end = round_down (offset + run, block);
    if (end > offset) {
      *length = end - offset;
      return WORK_SKIP;
    }
    /* The destination may hold data here: zero the whole extent, even
     * the parts of it that its map says read as zero already, so that
     * a fragmented destination still costs one command per extent.
     */
    end = offset + zero_max;
    if (end % ZERO_SPLIT < zero_max)
      end = round_down (end, ZERO_SPLIT);
    end = MIN (extent_end, end);
    if (!dst_can_zero)
      end = MIN (end, offset + depth.request_size);
    if (end == extent_end && !whole)
      return want_more (offset, e.length) ?
        plan (offset, length, onto_zeroes) : WORK_WAIT;
    /* The unaligned tail of a zero extent is left to the data path. */
    end = round_down (end, block);
    if (end > offset) {
      *length = end - offset;
      return WORK_ZERO;
    }
  }

  if (e.length < depth.request_size && !whole)
    return want_more (offset, e.length) ?
      plan (offset, length, onto_zeroes) : WORK_WAIT;
  end = MIN (extent_end, offset + depth.request_size);
  end = MIN (round_up (end, block), size);
  *length = end - offset;
  /* Whether a buffer that reads back all zero may be skipped: only if
   * the destination reads as zeroes over the whole piece.  A zero run
   * that stops at the end of its map may go on: wait and see.
   */
  if (!dst_zero_run (offset, *length, &run))
    return WORK_WAIT;
  if (run > 0 && run < *length && offset + run == dst_map.end &&
      dst_map.end < dst_map.size)
    return WORK_WAIT;
  *onto_zeroes = run == *length;
  return WORK_READ;
}

/* --checksum: a skipped range still takes a slot, so that its zero
 * blocks reach the hash in their turn.  It needs no I/O: done at once.
 */
static void
skip_slot (struct slot *slot)
{
  slot->kind = OP_SKIP;
  slot->flags |= HASH_ZEROES;
  slot->state = SLOT_DONE;
  slot_debug (slot, "skip zeroes");
  bytes_skipped += slot->length;
}

/* Plan pieces and start them while slots are free. */
static void
start_pieces (void)
{
  struct slot *slot;
  uint64_t length;
  enum work work;
  bool onto_zeroes = false;

  while (!stop_requested (&stop) && next_offset < size &&
         (work = plan (next_offset, &length, &onto_zeroes)) != WORK_WAIT) {
    if (work == WORK_SKIP && !checksum) {
      debug ("skip zero extent offset %" PRIu64 " length %" PRIu64,
             next_offset, length);
      next_offset += length;
      bytes_done += length;
      bytes_skipped += length;
      progress_update (&progress, bytes_done);
      continue;
    }
    if (ring->in_use >= depth.requests)
      break;
    slot = ring_take (ring, next_offset, length);
    buffers_take (&buffers, slot);
    next_offset += length;
    pieces[slot->index].taken = depth_mark (&depth, now_ns ());
    if (work == WORK_SKIP)
      skip_slot (slot);
    else if (work == WORK_ZERO)
      start_zero (slot);
    else {
      slot->flags = onto_zeroes ? ONTO_ZEROES : 0;
      nr_reads++;
      start_read (slot);
    }
  }
}

/* --checksum: the in-order consumer of nbd-evsum.  Commands
 * complete in any order, but the outer digest must be fed in offset
 * order, so slots are given back only from the head of the ring: while
 * the head is written (or zeroed, or skipped) and hashed, feed it and
 * retire it.  Returns how many retired.
 */
static unsigned
retire_hashed (void)
{
  struct slot *slot;
  unsigned n = 0;

  while ((slot = ring_head (ring)) != NULL) {
    if (slot->flags & HASH_GIVEN) {
      if (!ordered_hash_done (hashing, slot))
        break;
      if (slot->state == SLOT_FAILED) {
        slot_failed (slot);
        break;
      }
      ordered_hash_feed (hashing, slot);
    }
    else if (slot->state == SLOT_DONE && (slot->flags & HASH_ZEROES))
      ordered_hash_feed_zeroes (hashing, slot->length);
    else
      break;
    slot_debug (slot, "retired");
    sample (slot);
    bytes_done += slot->length;
    progress_update (&progress, bytes_done);
    buffers_give (&buffers, slot);
    ring_retire_head (ring);
    n++;
  }
  return n;
}

/* The failed slot to report, if any, once the zero commands a server
 * refused for their length or kind are on their way again (zero_retry).
 */
static struct slot *
first_failure (void)
{
  struct slot *slot;

  while ((slot = ring_first_failed (ring)) != NULL &&
         !stop_requested (&stop) && zero_retry (slot))
    ;
  return slot;
}

/* The program's one prepare callback, run before the loop blocks each
 * time: act on every slot whose command completed, plan pieces and start
 * them while slots are free, and last, let each connection wait for what
 * its handle now wants.  Skipped pieces need no slot, so a run of them
 * costs no I/O at all.  With --checksum they do take one, and finish at
 * once, so a ring full of them is retired and refilled here, round after
 * round, as nothing else would wake the loop for them.
 */
static void
pump_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
  struct slot *slot;
  unsigned i, k, seen, in_use;

  /* Failures first, and only the first: a lost connection fails every
   * command in flight on it, and a finished read must not start a write
   * on a handle that is gone.
   */
  server_check (&src, &stop);
  server_check (&dst, &stop);
  if ((slot = first_failure ()) != NULL)
    slot_failed (slot);

  /* The slots in use are among the last taken: newest first, and only
   * until all of them were seen, as ring_first_failed, so that a ring
   * sized for the deepest depth is not scanned whole on every pass.
   */
  in_use = ring->in_use;
  i = ring->next_seq % ring->nr_slots;
  for (k = seen = 0; k < ring->nr_slots && seen < in_use; k++) {
    i = i ? i - 1 : ring->nr_slots - 1;
    slot = &ring->slots[i];
    seen += slot->state != SLOT_IDLE;
    switch (slot->state) {
    case SLOT_DONE:
      if (slot->kind == OP_READ) {
        if (!stop_requested (&stop))
          read_complete (slot);
      }
      else if ((slot->kind == OP_ZERO || slot->kind == OP_WRITE) &&
               (slot->flags & HASH_ZEROES) &&
               pieces[i].at + pieces[i].length < slot->offset + slot->length) {
        if (!stop_requested (&stop))
          zero_advance (slot);
      }
      else if (!checksum) {
        slot_debug (slot, "done");
        finish (slot);
      }
      else if ((slot->flags & (HASH_DATA | HASH_GIVEN)) == HASH_DATA)
        give_to_hash (slot);
      break;
    case SLOT_FAILED:           /* reported above */
    case SLOT_IDLE:
    case SLOT_BUSY:
      break;
    }
  }

  /* The depth follows the estimates (tools/depth.h): once an epoch, and
   * while starting as soon as a slot shows more rate.
   */
  if (!stop_requested (&stop))
    depth_follow (&depth, now_ns ());
  do
    start_pieces ();
  while (checksum && !stop_requested (&stop) && retire_hashed () > 0);

  /* A command libnbd refused above failed its slot in this pass, and
   * nothing would wake the loop for it: report it now.
   */
  if (!stop_requested (&stop) && (slot = first_failure ()) != NULL)
    slot_failed (slot);
  /* A failed flush ends the copy as a failure: stop at once. */
  if ((!stop_requested (&stop) && finish_copy () &&
       !stop_requested (&stop)) ||
      (stop_requested (&stop) && finish_stop ()))
    ev_break (loop, EVBREAK_ALL);
  server_update (&src);
  server_update (&dst);
}

/* After a signal or a failure, once nothing is in flight: say what was
 * done, leave both servers with a clean disconnect, and exit.
 */
static void __attribute__ ((noreturn))
stopped (void)
{
  if (stop.signum != 0 && verifying)
    message ("interrupted by %s while verifying, after %" PRIu64 " bytes; "
             "the copy itself is complete", stop_signal_name (&stop),
             bytes_done);
  else if (stop.signum != 0)
    message ("interrupted by %s after %" PRIu64 " bytes; the destination "
             "is complete below offset %" PRIu64, stop_signal_name (&stop),
             bytes_done, ring_low_water (ring, next_offset));
  server_close ((struct server *const []) { &src, &dst }, 2, &stop);
  stop_exit (&stop);
}

/* --verify, once the copy has succeeded: the same loop again, with the
 * destination as what is read and nothing to write.  Its own block
 * status decides what is read; zero extents are hashed without
 * reading, as in nbd-evsum.  The digest of its first size bytes
 * goes to dst_hex; the caller compares it with the source's.
 */
static void
verify_copy (struct ev_loop *loop, const char *digest, uint64_t block_size,
             int progress_mode, char *dst_hex)
{
  struct blkhash hash;

  verifying = true;
  reading = &dst;
  extents_free (&read_map);
  handle_extents (&read_map, dst.v[0]->glue.nbd, "destination");
  /* Every zero extent is skipped (hashed as zeroes), every data buffer
   * only hashed.
   */
  dst_has_map = false;
  dst_is_zero = true;
  sparse = true;
  want_flush = false;
  next_offset = bytes_done = 0;
  ordered_hash_setup (&hash, digest, block_size);
  ordered_hash_start (&dst_hash, &hash, loop, ring);
  ordered_hash_record (&dst_hash);
  hashing = &dst_hash;
  debug ("verifying the destination's first %" PRIu64 " bytes", size);

  progress_init (&progress, progress_mode, size);
  ev_now_update (loop);
  ev_run (loop, 0);
  progress_done (&progress, bytes_done, false);
  if (stop_requested (&stop))
    stopped ();
  ordered_hash_final (&dst_hash, size, dst_hex);
  debug ("verify: %" PRIu64 " block status, %" PRIu64 " reads in all",
         read_map.commands, nr_reads);
}

/* --verify failed: say so with both digests, and where the records of
 * block digests the two passes kept first differ, if they can tell.
 */
static void __attribute__ ((noreturn))
verify_failed (const char *src_hex, const char *dst_hex, uint64_t block_size)
{
  int64_t diff = ordered_hash_first_difference (&src_hash, &dst_hash);

  if (diff >= 0)
    die ("verify failed: the destination's digest %s is not the source's "
         "%s; the first block that differs is at offset %" PRId64
         " length %" PRIu64, dst_hex, src_hex, diff,
         MIN (block_size, size - diff));
  die ("verify failed: the destination's digest %s is not the source's %s",
       dst_hex, src_hex);
}

static void __attribute__ ((noreturn))
usage (FILE *fp, int status)
{
  fprintf (fp,
"Usage: %s [OPTIONS] SOURCE DESTINATION\n"
"Copy a disk image to another, reading only the source's data and zeroing\n"
"its holes with as few zero commands as the protocol allows\n"
"(--no-extents --no-sparse: every byte read and written).\n"
IMAGES_HELP
"A DESTINATION file that does not exist is created, raw, as large as\n"
"the source.\n"
"\n"
"Options:\n"
"  --requests=N        requests in flight (1-%d); without it, start\n"
"                      at %d and adapt to the servers\n"
"  --request-size=SIZE bytes per data request (%d to %dM; suffixes k, M,\n"
"                      G are powers of 1024); without it, start at 256k\n"
"                      and adapt, up to 1M (or the block size of\n"
"                      --checksum, if larger)\n"
"  --init              let libnbd zero read buffers before each read\n"
"  --no-init           do not (default; every read's error is checked)\n"
"  --allocated         zero with NO_HOLE, so the destination stays\n"
"                      allocated (default: the server may punch holes)\n"
"  --destination-is-zero\n"
"                      the destination reads as zeroes: send nothing for\n"
"                      zero extents (found out from block status if the\n"
"                      destination supports it)\n"
"  --no-extents        ask neither server for block status: read every\n"
"                      byte (buffers of zeroes still go as zero commands\n"
"                      unless --no-sparse)\n"
"  --no-sparse         write data buffers even if they are all zero\n"
"  --flush             flush the destination when the copy is done\n"
"  --checksum[=DIGEST] print the source's block hash, as nbd-evsum\n"
"                      and blksum print it, computed while copying\n"
"                      (DIGEST as nbd-evsum --digest, default sha256)\n"
"  --block-size=SIZE   with --checksum: bytes per hashed block, a power\n"
"                      of two up to 32M (default 64k)\n"
"  --verify            after the copy, hash the destination's first\n"
"                      SRC-size bytes the same way and fail unless the\n"
"                      digests match (implies --checksum)\n"
"  --socket-buffer=SIZE\n"
"                      set SO_SNDBUF and SO_RCVBUF of both sockets\n"
"  -C N, --connections=N\n"
"                      connections to each server (1-%d; default up to\n"
"                      %d, one per CPU, if the server advertises\n"
"                      multi-conn, else 1)\n"
"  --cache=MODE        local image files: default (the page cache) or\n"
"                      none (servers keep out of it)\n"
"  --timeout=SECONDS   fail if a server sends nothing for this long while\n"
"                      a command waits for it (default %d, 0 for never)\n"
"  -p, --progress      show a progress bar on stderr, if it is a terminal\n"
"  --progress=FD       write progress to file descriptor FD as N/100 lines\n"
"  -v, --verbose       print one line per request event, with timings\n"
"  -h, --help          show this help and exit\n"
"  -V, --version       show the version and exit\n",
           progname, MAX_REQUESTS, DEFAULT_REQUESTS,
           MIN_REQUEST_SIZE, MAX_REQUEST_SIZE / (1024 * 1024),
           MAX_CONNECTIONS, DEFAULT_CONNECTIONS, DEFAULT_TIMEOUT);
  exit (status);
}

int
main (int argc, char *argv[])
{
  enum { OPT_REQUESTS = 256, OPT_REQUEST_SIZE, OPT_INIT, OPT_NO_INIT,
         OPT_ALLOCATED, OPT_DESTINATION_IS_ZERO, OPT_NO_SPARSE, OPT_FLUSH,
         OPT_CHECKSUM, OPT_BLOCK_SIZE, OPT_VERIFY, OPT_NO_EXTENTS };
  static const struct option long_options[] = {
    { "requests",            required_argument, NULL, OPT_REQUESTS },
    { "request-size",        required_argument, NULL, OPT_REQUEST_SIZE },
    { "init",                no_argument,       NULL, OPT_INIT },
    { "no-init",             no_argument,       NULL, OPT_NO_INIT },
    { "allocated",           no_argument,       NULL, OPT_ALLOCATED },
    { "destination-is-zero", no_argument,       NULL, OPT_DESTINATION_IS_ZERO },
    { "no-extents",          no_argument,       NULL, OPT_NO_EXTENTS },
    { "no-sparse",           no_argument,       NULL, OPT_NO_SPARSE },
    { "flush",               no_argument,       NULL, OPT_FLUSH },
    { "checksum",            optional_argument, NULL, OPT_CHECKSUM },
    { "block-size",          required_argument, NULL, OPT_BLOCK_SIZE },
    { "verify",              no_argument,       NULL, OPT_VERIFY },
    { "help",                no_argument,       NULL, 'h' },
    SHARED_LONG_OPTIONS,
    { NULL }
  };
  unsigned requests = DEFAULT_REQUESTS, max_requests;
  bool requests_given = false;
  uint64_t max_size;
  char adapt[64];
  /* Reads need no zeroing by libnbd (pread_initialize false): a failed
   * read stops the copy, and its buffer is never written.  The
   * destination is asked for extents too, to find out whether it
   * already reads as zeroes.
   */
  struct handle_options src_opts = { .want_extents = true };
  struct handle_options dst_opts = { .want_extents = true };
  struct shared_options o = {
    .progress_mode = PROGRESS_NONE, .timeout = DEFAULT_TIMEOUT,
    .cache = IMAGE_CACHE_DEFAULT,
  };
  struct image images[2];
  bool allocated = false, destination_is_zero = false;
  bool request_size_given = false, verify = false;
  const char *digest = BLKHASH_DIGEST;
  uint64_t block_size = 0;      /* 0: not given */
  struct blkhash hash;
  char hex[BLKHASH_HEX_SIZE], dst_hex[BLKHASH_HEX_SIZE];
  ev_prepare pump;
  struct ev_loop *loop;
  int c;

  set_progname (argv[0]);
  while ((c = getopt_long (argc, argv, "+:h" SHARED_SHORT_OPTIONS,
                           long_options, NULL)) != -1) {
    switch (c) {
    case OPT_REQUESTS:
      requests = option_requests (optarg);
      requests_given = true;
      break;
    case OPT_REQUEST_SIZE:
      request_size = option_request_size (optarg);
      request_size_given = true;
      break;
    case OPT_INIT:
      src_opts.pread_initialize = true;
      break;
    case OPT_NO_INIT:
      src_opts.pread_initialize = false;
      break;
    case OPT_ALLOCATED:
      allocated = true;
      break;
    case OPT_DESTINATION_IS_ZERO:
      destination_is_zero = true;
      break;
    case OPT_NO_EXTENTS:
      /* Without the meta context, neither map is supported: every
       * extent is data, and the destination's holes are not looked for.
       */
      src_opts.want_extents = dst_opts.want_extents = false;
      break;
    case OPT_NO_SPARSE:
      sparse = false;
      break;
    case OPT_FLUSH:
      want_flush = true;
      break;
    case OPT_CHECKSUM:
      checksum = true;
      if (optarg)
        digest = optarg;
      break;
    case OPT_BLOCK_SIZE:
      block_size = option_block_size (optarg);
      break;
    case OPT_VERIFY:
      verify = checksum = true;
      break;
    case 'h':
      usage (stdout, EXIT_SUCCESS);
    default:
      if (!option_shared (c, optarg, &o, MAX_CONNECTIONS))
        option_error (c, argv, long_options);
    }
  }
  /* Both ends get the same socket buffers: a copy moves every byte
   * through both sockets, and the smaller buffer would set the pace.
   */
  src_opts.socket_buffer = dst_opts.socket_buffer = o.socket_buffer;
  if (image_parse_args (argc, argv, optind, images, 2) != 2) {
    fprintf (stderr, "%s: expected SOURCE and DESTINATION; try --help\n",
             progname);
    exit (EXIT_FAILURE);
  }
  /* A destination that reads as zeroes may still be sparse, so skipping
   * its zero extents would break the promise of --allocated.
   */
  if (allocated && destination_is_zero)
    die ("--allocated and --destination-is-zero cannot be used together");
  if (block_size && !checksum)
    die ("--block-size needs --checksum");
  /* --verify reads the destination back, over every connection: only a
   * flush once the writes are done makes them visible to reads on the
   * other connections (tools/server.h), so the copy ends with one.
   */
  if (verify)
    want_flush = true;
  if (checksum) {
    if (block_size == 0)
      block_size = BLKHASH_BLOCK_SIZE;
    /* Every piece holds whole blocks, or a block would straddle two
     * slots; a request must hold at least one.
     */
    if (request_size % block_size != 0) {
      if (request_size_given)
        die ("--request-size: %" PRIu64 " is not a multiple of the block "
             "size (%" PRIu64 " bytes)", request_size, block_size);
      request_size = block_size;
    }
  }
  /* The most the depth may grow to (tools/depth.h), before the
   * servers' own limits.
   */
  max_size = adapt_max_size (request_size, request_size_given);
  max_requests = adapt_max_requests (requests, requests_given, max_size);
  if (checksum) {
    ordered_hash_setup (&hash, digest, block_size);
    ordered_hash_bound (&hash, requests, request_size, &max_requests,
                        &max_size);
  }

  /* Connect both ends and check every limit before the first byte is
   * read, so bad input never leaves a half-written destination.
   */
  loop = EV_DEFAULT;
  /* With a timeout, the connections' timers bound the wait for the
   * commands in flight when stopping; without, a grace period does.
   */
  stop_init (&stop, loop, o.timeout > 0 ? 0 : STOP_GRACE);
  image_prepare (&images[0], "source", false, o.cache);
  server_connect (&src, loop, "source", &images[0], &src_opts, o.timeout,
                 o.connections, false);
  /* A destination file that does not exist yet is made now that the
   * source's size is known: raw and all holes, as nbdcopy makes it.
   * It is removed again if a check fails before the copy starts.
   */
  if (image_missing (&images[1]))
    image_create (&images[1], "destination",
                  export_size (src.v[0]->glue.nbd, "source"));
  image_prepare (&images[1], "destination", true, o.cache);
  server_connect (&dst, loop, "destination", &images[1], &dst_opts,
                 o.timeout, o.connections, true);
  /* A server whose maximum block size is below the default gets
   * smaller requests; one asked for explicitly is checked as given.
   */
  if (!request_size_given) {
    request_size = fit_request_size (src.v[0]->glue.nbd, "source",
                                     request_size, checksum ? block_size : 1);
    request_size = fit_request_size (dst.v[0]->glue.nbd, "destination",
                                     request_size, checksum ? block_size : 1);
  }
  size = check_copy (src.v[0]->glue.nbd, dst.v[0]->glue.nbd, request_size);
  /* Requests grow by doubling, within both servers' maximum. */
  max_size = fit_max_size (src.v[0]->glue.nbd, max_size, request_size);
  max_size = fit_max_size (dst.v[0]->glue.nbd, max_size, request_size);
  depth_init (&depth, requests, request_size, max_requests, max_size);
  /* Both are powers of two, so the larger is a multiple of the other. */
  block = MAX (min_block_size (src.v[0]->glue.nbd),
               min_block_size (dst.v[0]->glue.nbd));
  /* --checksum: pieces start and end on hash blocks too, so that each
   * slot holds whole blocks, either data or zeroes.
   */
  if (checksum)
    block = MAX (block, block_size);

  dst_can_zero = nbd_can_zero (dst.v[0]->glue.nbd) == 1;
  if (!dst_can_zero)
    debug ("destination cannot zero: writing buffers of zeroes instead");
  zero_max = round_down (MAX_LENGTH_32, ZERO_SPLIT);
  if (max_block_size (dst.v[0]->glue.nbd) > 0) {
    zero_max = MIN (zero_max, round_down (max_block_size (dst.v[0]->glue.nbd),
                                          block));
    debug ("destination: zero commands of at most %" PRIu64 " bytes, its "
           "maximum block size", zero_max);
  }
  zero_flags = allocated ? LIBNBD_CMD_FLAG_NO_HOLE : 0;
  dst_is_zero = destination_is_zero;

  /* With --checksum, slots are given back in offset order, so that the
   * hash is fed in order.  Slots for the most the depth may reach; their
   * buffers come from a stack, the one used last first.
   */
  ring = ring_new (max_requests, max_size);
  if (ring == NULL || buffers_init (&buffers, ring) == -1)
    die ("cannot allocate %u requests of %" PRIu64 " bytes: %s",
         max_requests, max_size, strerror (errno));
  ring->verbose = verbose;
  pieces = calloc (max_requests, sizeof *pieces);
  if (pieces == NULL)
    die ("calloc: %s", strerror (errno));
  /* Block status goes to one connection of each server: each map is
   * one sequence.  The destination's is needed only to skip holes that
   * are already there, which --allocated forbids.
   */
  handle_extents (&read_map, src.v[0]->glue.nbd, "source");
  if (!allocated && !destination_is_zero) {
    handle_extents (&dst_map, dst.v[0]->glue.nbd, "destination");
    dst_has_map = dst_map.supported;
  }
  debug ("copying %" PRIu64 " bytes with %u requests of %" PRIu64
         " bytes (%s), block size %" PRIu64 ", zero extents %s", size,
         requests, request_size, depth_describe (&depth, adapt, sizeof adapt),
         block,
         !read_map.supported ? "unknown (no block status): every byte read"
         : dst_is_zero ? "skipped" : allocated ? "zeroed with NO_HOLE"
         : dst_has_map ? "skipped where the destination reads as zeroes, "
         "else zeroed" : "zeroed, holes allowed");

  server_set_describe (&src, describe_oldest);
  server_set_describe (&dst, describe_oldest);
  ev_prepare_init (&pump, pump_cb);
  ev_prepare_start (loop, &pump);
  if (checksum) {
    ordered_hash_start (&src_hash, &hash, loop, ring);
    /* --verify names the first block that differs, from the records. */
    if (verify)
      ordered_hash_record (&src_hash);
    debug ("hashing with %s in %" PRIu64 "-byte blocks", digest,
           block_size);
  }

  /* Every check passed: from here on a destination file this program
   * created holds (part of) the copy and stays, as any destination.
   */
  image_keep ();
  progress_init (&progress, o.progress_mode, size);
  /* The checks above may have taken a while outside the loop: start the
   * timeouts from now, not from the loop's last look at the clock.
   */
  ev_now_update (loop);
  ev_run (loop, 0);
  /* A digest follows on stdout: then clear the bar, as blksum does. */
  progress_done (&progress, bytes_done, !checksum);
  if (stop_requested (&stop))
    stopped ();
  debug ("done: %" PRIu64 " + %" PRIu64 " block status, %" PRIu64
         " reads, %" PRIu64 " writes, %" PRIu64 " zeroes, %" PRIu64
         " bytes skipped", read_map.commands, dst_map.commands, nr_reads,
         nr_writes, nr_zeroes, bytes_skipped);
  if (checksum)
    ordered_hash_final (&src_hash, size, hex);
  if (verify)
    verify_copy (loop, digest, block_size, o.progress_mode, dst_hex);

  ev_prepare_stop (loop, &pump);
  /* A clean disconnect: the destination learns that the client is done
   * and may flush its caches in its own time.
   */
  server_close ((struct server *const []) { &src, &dst }, 2, &stop);
  if (verify && strcmp (hex, dst_hex) != 0)
    verify_failed (hex, dst_hex, block_size);
  /* Only now is the copy a success: print the digest. */
  if (checksum) {
    printf ("%s  %s\n", hex, images[0].name);
    ordered_hash_free (&src_hash);
    ordered_hash_free (&dst_hash);
  }
  image_free (&images[0]);
  image_free (&images[1]);
  extents_free (&read_map);
  extents_free (&dst_map);
  buffers_free (&buffers, ring);
  ring_free (ring);
  free (pieces);
  return EXIT_SUCCESS;
}
