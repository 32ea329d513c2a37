/* nbd-evcopy: copy a disk image between NBD servers, local files and
 * captive servers, from one libev loop.
 *
 * The tool beside the lessons in examples/: it does what
 * zero-extent-copy-libev shows (the source's extents, one write-zeroes
 * per zero extent, all-zero buffers sent as zeroes, nothing sent where
 * the destination already reads as zeroes) and what copy-libev shows
 * (--no-extents --no-sparse: every byte read and written), with what a
 * program people run needs around it: local files and [ CMD ARGS ... ]
 * (tools/lib/image.h), several connections per server
 * (tools/lib/server.h), --timeout, signals with the offset to resume
 * from (tools/lib/stop.h), --progress, --flush, and a copy verified
 * while it is made.  The loop is tools/lib/engine.h's, shared with
 * nbd-evsum; this file holds the copy's own steps (read, then write,
 * zero or nothing) and its options.
 *
 *  - --checksum: the source's block hash (common/blkhash.h), computed
 *    from the buffers the copy reads anyway, so a verified copy costs
 *    one pass.  Written buffers go to hash threads
 *    (tools/lib/ordered-hash.h); zero extents, skipped or zeroed, and
 *    all-zero buffers are hashed as zero blocks without any work.
 *    Commands complete in any order, but slots are given back in offset
 *    order, as in checksum-libev, and that is where the outer digest is
 *    fed.
 *
 *  - --verify: after the copy, a second pass reads the destination back
 *    as nbd-evsum reads an image (tools/lib/sum-pass.h), and its digest
 *    is compared with the source's.
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
#include <sys/stat.h>

#include <libnbd.h>

#include <ev.h>

#include "blkhash.h"
#include "block-size.h"
#include "captive.h"
#include "created.h"
#include "engine.h"
#include "extents.h"
#include "flush.h"
#include "image.h"
#include "iszero.h"
#include "options.h"
#include "ordered-hash.h"
#include "plan.h"
#include "ring-query.h"
#include "sum-pass.h"
#include "util.h"
#include "zero.h"

/* slot->flags of the copy's own (tools/lib/engine.h): the destination
 * reads as zeroes over the whole range, so that a buffer read back all
 * zero needs no command there.
 */
#define SLOT_ONTO_ZEROES SLOT_PASS_FLAG

/* The options, as parse_options stores them. */
struct copy_options {
  struct shared_options o;      /* --requests, --request-size and more */
  struct handle_options src, dst;
  bool allocated;               /* zero with NO_HOLE */
  bool destination_is_zero;
  bool sparse;                  /* all-zero read buffers become zeroes */
  bool flush;
  bool checksum;
  bool verify;
  bool resume_given;            /* --resume */
  uint64_t resume;              /* its offset */
  const char *digest;
  bool digest_given;            /* --checksum=DIGEST */
  uint64_t block_size;          /* of the hash; 0: not given */
  unsigned max_requests;        /* the most the depth may grow to */
  uint64_t max_size;
};

/* The copy: one run of the loop over the image (tools/lib/engine.h). */
struct copy {
  struct pass pass;             /* first: the ops cast back */
  struct endpoint *src;         /* what is read */
  struct endpoint *dst;         /* what is written */
  bool dst_created;             /* the destination is a new file */
  const char *dst_name;         /* as the user gave it */
  bool resumable;               /* --resume could go on from where it
                                   stops (not a stream, no hash) */
  struct extent_map read_map;   /* of what is read */
  struct extent_map dst_map;    /* the destination's, during the copy */
  struct copy_planner planner;  /* tools/lib/plan.h */
  bool sparse;                  /* all-zero read buffers become zeroes */
  bool want_flush;              /* --flush, once every write is done */
  struct flush flush;
  uint64_t zero_max;            /* the longest zero command to send */
  /* Counts for the summary under -v. */
  uint64_t nr_reads, nr_writes, nr_zeroes, bytes_skipped;
};

/* Write what the slot read (tools/lib/engine.h starts every step). */
static void
start_write (struct copy *c, struct slot *slot)
{
  c->nr_writes++;
  engine_start (&c->pass, slot, STEP_WRITE, c->dst, slot->offset,
                slot->length);
}

/* The most one zero piece covers: a zero command of at most zero_max
 * bytes or, if the destination cannot zero, a buffer of zeroes (the
 * planner keeps such ranges within a request).
 */
static uint64_t
zero_chunk (const struct copy *c)
{
  return c->planner.dst_can_zero ? c->zero_max : c->pass.e->ring->buf_size;
}

/* Send the slot's zero piece (tools/lib/zero.h): a zero command, or a
 * buffer of zeroes where the destination cannot zero.
 */
static void
send_zero_piece (struct copy *c, struct slot *slot)
{
  const struct zero_piece *p = engine_piece (&c->pass, slot);

  if (c->planner.dst_can_zero)
    c->nr_zeroes++;
  else
    c->nr_writes++;
  engine_start (&c->pass, slot,
                c->planner.dst_can_zero ? STEP_ZERO : STEP_WRITE_ZEROES,
                c->dst, p->at, p->length);
}

/* Zero the slot's range, one piece at a time. */
static void
start_zero (struct copy *c, struct slot *slot)
{
  slot->flags |= SLOT_ZEROES;
  zero_piece_first (engine_piece (&c->pass, slot), slot->offset,
                    slot->offset + slot->length, zero_chunk (c));
  send_zero_piece (c, slot);
}

/* A zero piece failed: if the destination refused it for its length,
 * send it again, shorter (tools/lib/zero.h).  A destination that says
 * it cannot zero at all (a local file whose fallocate answers
 * EOPNOTSUPP) gets buffers of zeroes from then on, as a server that
 * cannot zero does.  True if the slot goes on.
 */
static bool
retry (struct pass *p, struct slot *slot)
{
  struct copy *c = (struct copy *) p;
  struct zero_piece *piece = engine_piece (p, slot);
  uint64_t was = c->zero_max;

  if (slot->kind == STEP_ZERO &&
      endpoint_zero_unsupported (c->dst, slot->error)) {
    if (c->planner.dst_can_zero)
      debug ("destination cannot zero (%s): writing buffers of zeroes "
             "instead", strerror (slot->error));
    c->planner.dst_can_zero = false;
    zero_piece_again (piece, slot->offset + slot->length, zero_chunk (c));
    send_zero_piece (c, slot);
    return true;
  }
  if (slot->kind != STEP_ZERO ||
      !zero_refused (piece, slot->error, c->planner.block, &c->zero_max))
    return false;
  if (c->zero_max < was)
    debug ("destination refused a zero of %" PRIu64 " bytes (%s): zero "
           "commands of at most %" PRIu64 " bytes from now on",
           piece->length, strerror (slot->error), c->zero_max);
  zero_piece_again (piece, slot->offset + slot->length, zero_chunk (c));
  send_zero_piece (c, slot);
  return true;
}

/* A read came back.  Data is written (to null:, only hashed).
 * An all-zero buffer needs no write: nothing at all where the
 * destination reads as zeroes already (SLOT_ONTO_ZEROES, decided when
 * the read was planned), otherwise one zero command, which lets the
 * server keep a hole.  Only whole blocks may be zeroed, so the image's
 * unaligned tail is always written.  Whole blocks of zeroes: block is a
 * multiple of the hash's block size with --checksum, so they are hashed
 * as zero blocks, with no work for the hash threads.
 */
static void
read_complete (struct copy *c, struct slot *slot)
{
  slot_debug (slot, "read");
  if (!c->sparse || slot->length % c->planner.block != 0 ||
      !is_zero (slot->buf, slot->length)) {
    slot->flags |= SLOT_DATA;
    if (c->dst->discards)
      engine_finish (&c->pass, slot);
    else
      start_write (c, slot);
    return;
  }
  slot->flags |= SLOT_ZEROES;
  if (slot->flags & SLOT_ONTO_ZEROES) {
    slot_debug (slot, "skip zeroes");
    c->bytes_skipped += slot->length;
    engine_finish (&c->pass, slot);
    return;
  }
  start_zero (c, slot);
}

/* The source, a stream, ended with the slot's read: its size is now
 * known, and the slot is the last.
 */
static void
source_ended (struct copy *c, struct slot *slot)
{
  struct pass *p = &c->pass;

  p->size = p->next_offset = slot->offset + slot->length;
  c->planner.size = p->size;
  debug ("%s ended after %" PRIu64 " bytes", c->src->name, p->size);
}

/* The slot's step finished: the next one.  Once stopping, no new
 * command starts, but what is over is given back.
 */
static void
step_done (struct pass *p, struct slot *slot)
{
  struct copy *c = (struct copy *) p;
  struct zero_piece *piece = engine_piece (p, slot);
  uint64_t end = slot->offset + slot->length;

  switch ((enum step) slot->kind) {
  case STEP_READ:
    if (endpoint_ended (c->src))
      source_ended (c, slot);
    if (slot->length == 0)      /* a stream that had nothing more */
      engine_finish (p, slot);
    else if (!engine_stopping (p))
      read_complete (c, slot);
    break;
  case STEP_WRITE:
    engine_finish (p, slot);
    break;
  case STEP_ZERO:
  case STEP_WRITE_ZEROES:
    if (zero_piece_last (piece, end))
      engine_finish (p, slot);
    else if (!engine_stopping (p)) {
      zero_piece_next (piece, end, zero_chunk (c));
      send_zero_piece (c, slot);
    }
    break;
  case STEP_TAKEN:              /* not a step that completes */
  case STEP_HASH:               /* the engine's */
  case STEP_READY:
  case NR_STEPS:
    break;
  }
}

/* Ask for the reply that tells where the current extent ends.  True
 * if there is nothing to wait for: the command was refused, and its
 * range is already in the map as data, so plan again at once (nothing
 * else would wake the loop).
 */
static bool
want_more (struct copy *c, uint64_t offset, uint64_t length)
{
  endpoint_map_pump (c->src, &c->read_map, &c->pass.e->stop, offset,
                     length + 1);
  return !c->read_map.in_flight && !engine_stopping (&c->pass);
}

/* What to do from next_offset (tools/lib/plan.h), keeping a window or two
 * of extents ahead of the copy, so zero extents rarely wait for a
 * block-status round trip: both maps at once, and neither past the
 * size (a larger destination's would go on).
 */
static enum work
next_work (struct copy *c, uint64_t *length, bool *onto_zeroes)
{
  struct pass *p = &c->pass;
  struct engine *e = p->e;
  uint64_t ahead = MIN (2 * c->read_map.window, p->size - p->next_offset);
  enum work work;

  do {
    endpoint_map_pump (c->src, &c->read_map, &e->stop, p->next_offset,
                       ahead);
    if (c->planner.dst_has_map)
      endpoint_map_pump (c->dst, &c->dst_map, &e->stop, p->next_offset,
                         ahead);
    work = plan_copy (&c->planner, p->next_offset, e->depth.request_size,
                      c->zero_max, length, onto_zeroes);
  } while (work == WORK_MORE && want_more (c, p->next_offset, *length));
  return work == WORK_MORE ? WORK_WAIT : work;
}

/* A stream source: one read at a time, of the depth's request size.
 * The stream gives its bytes in order anyway; each buffer, once full,
 * goes to the destination at once, so that the destination still has
 * as many writes in flight as the depth allows.
 */
static void
fill_from_stream (struct copy *c)
{
  struct pass *p = &c->pass;
  struct engine *e = p->e;
  struct slot *slot;

  /* A destination of 0 bytes still gets its one read: of nothing, to
   * find out whether the stream has more (tools/lib/stream.h).
   */
  if (engine_stopping (p) || e->reads > 0 || endpoint_ended (c->src) ||
      (p->next_offset >= p->size && (p->size > 0 || c->nr_reads > 0)) ||
      e->ring->in_use >= e->depth.requests)
    return;
  slot = engine_take (p, MIN (e->depth.request_size,
                              p->size - p->next_offset), true);
  slot->flags = c->planner.dst_is_zero ? SLOT_ONTO_ZEROES : 0;
  c->nr_reads++;
  engine_read (p, slot, c->src);
}

/* Plan pieces and start them while slots are free.  Skipped pieces
 * need no slot, so a run of them costs no I/O at all; with a hash they
 * take one all the same, so that their zero blocks reach it in their
 * turn.
 */
static void
fill (struct pass *p)
{
  struct copy *c = (struct copy *) p;
  struct slot *slot;
  uint64_t length;
  enum work work;
  bool onto_zeroes = false;

  if (p->open_ended) {
    fill_from_stream (c);
    return;
  }
  while (!engine_stopping (p) && p->next_offset < p->size &&
         (work = next_work (c, &length, &onto_zeroes)) != WORK_WAIT) {
    if (work == WORK_SKIP && p->hash == NULL) {
      debug ("skip zero extent offset %" PRIu64 " length %" PRIu64,
             p->next_offset, length);
      c->bytes_skipped += length;
      engine_skip (p, length);
      continue;
    }
    if (p->e->ring->in_use >= p->e->depth.requests)
      break;
    slot = engine_take (p, length, true);
    if (work == WORK_SKIP) {
      slot->flags = SLOT_ZEROES;
      c->bytes_skipped += length;
      engine_finish (p, slot);
      slot_debug (slot, "skip zeroes");
    }
    else if (work == WORK_ZERO)
      start_zero (c, slot);
    else {
      slot->flags = onto_zeroes ? SLOT_ONTO_ZEROES : 0;
      c->nr_reads++;
      engine_read (p, slot, c->src);
    }
  }
}

/* Every byte is written: with --flush, over once the flush is.  It
 * starts only now that no write is in flight, so that it covers them
 * all.
 */
static bool
finished (struct pass *p)
{
  struct copy *c = (struct copy *) p;

  /* A stream's last zeroes may be holes past a new file's end. */
  if (p->open_ended && endpoint_extend (c->dst, p->size) == -1) {
    stop_fail (&p->e->stop, "destination: cannot make it %" PRIu64
               " bytes: %s", p->size, strerror (errno));
    return false;
  }
  return !c->want_flush || endpoint_flush (c->dst, &c->flush, &p->e->stop);
}

/* Stopping, with nothing in flight.  After a signal, --flush still
 * makes the copy so far durable; by then every write below the offset
 * reported is complete.  Only a destination still connected, with no
 * write failed, can do that.
 */
static bool
stopped (struct pass *p)
{
  struct copy *c = (struct copy *) p;
  struct engine *e = p->e;

  /* A stream's copy into a new file: zeroes below the offset reported
   * may be holes past the file's end, which must read as zeroes too.
   */
  if (e->stop.signum != 0 && p->open_ended &&
      endpoint_extend (c->dst, ring_low_water (e->ring,
                                               p->next_offset)) == -1)
    message ("destination: cannot extend it: %s", strerror (errno));
  return e->stop.signum == 0 || !c->want_flush ||
    !endpoint_ready (c->dst) || ring_first_failed (e->ring) != NULL ||
    endpoint_flush (c->dst, &c->flush, &e->stop);
}

/* The command line, for the command that resumes the copy. */
static int cmd_argc, cmd_first;
static char *const *cmd_argv;

/* Write word to f, after a space unless first, as a POSIX shell reads
 * it back: in single quotes unless it needs none.
 */
static void
put_word (FILE *f, const char *word, bool first)
{
  static const char safe[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    "_@%+=:,./-";
  const char *q;

  if (!first)
    fputc (' ', f);
  if (word[0] != '\0' && word[strspn (word, safe)] == '\0') {
    fputs (word, f);
    return;
  }
  fputc ('\'', f);
  for (q = word; *q != '\0'; q++)
    if (*q == '\'')
      fputs ("'\\''", f);
    else
      fputc (*q, f);
  fputc ('\'', f);
}

/* Write to f the command that copies the rest from offset: this one,
 * with --resume=OFFSET in place of any --resume given, before the
 * images.
 */
static void
put_resume_command (FILE *f, uint64_t offset)
{
  char opt[64];
  int i;

  put_word (f, cmd_argv[0], true);
  for (i = 1; i < cmd_first; i++) {
    if (strncmp (cmd_argv[i], "--resume=", 9) == 0)
      continue;
    if (strcmp (cmd_argv[i], "--resume") == 0) {
      i++;
      continue;
    }
    put_word (f, cmd_argv[i], false);
  }
  snprintf (opt, sizeof opt, "--resume=%" PRIu64, offset);
  put_word (f, opt, false);
  for (i = cmd_first; i < cmd_argc; i++)
    put_word (f, cmd_argv[i], false);
}

/* After a signal or a failure: what was done, how much of the
 * destination holds the copy, and the command that copies the rest.
 * Writes complete in any order: below the ring's low water mark every
 * write is over, commands still in flight or not.  A file this copy
 * created is as large as the source from the start, so say that only
 * its beginning holds the copy.
 */
static char *
where (const struct pass *p)
{
  const struct copy *c = (const struct copy *) p;
  bool signal = p->e->stop.signum != 0;
  uint64_t below = 0;
  char *s = NULL;
  size_t len;
  FILE *f;

  if (!c->dst->discards)
    below = endpoint_complete_below (c->dst,
                                     ring_low_water (p->e->ring,
                                                     p->next_offset));
  /* A failure before any of a destination that was there holds the
   * copy: the command as given is the one to run again.
   */
  if (!signal && (c->dst->discards || (below == 0 && !c->dst_created)))
    return NULL;
  f = open_memstream (&s, &len);
  if (f == NULL)
    return NULL;
  if (c->dst->discards)
    fprintf (f, " after reading %" PRIu64 " bytes into null:",
             p->bytes_done);
  else {
    if (signal)
      fprintf (f, " after %" PRIu64 " bytes", p->bytes_done);
    if (c->dst_created)
      fprintf (f, "; %s was created by this copy and holds the source "
               "only below offset %" PRIu64, c->dst_name, below);
    else
      fprintf (f, "; the destination is complete below offset %" PRIu64,
               below);
    if (c->resumable && below < p->size) {
      fputs ("; to copy the rest: ", f);
      put_resume_command (f, below);
    }
  }
  if (fclose (f) == EOF) {
    free (s);
    return NULL;
  }
  return s;
}

static const struct pass_ops copy_ops = {
  .fill = fill,
  .step_done = step_done,
  .retry = retry,
  .finished = finished,
  .stopped = stopped,
  .where = where,
};

/* Everything a copier checks before it reads the first byte, so that
 * bad input never leaves a half-written destination, after the request
 * size (engine_set_depth): the destination is at least as large as the
 * source, and both servers take the last, short request that ends at
 * the source's size.  Returns the source's size.  null: and a stream
 * take anything (SIZE_UNKNOWN).  A stream source's size is not known: a
 * destination that cannot grow bounds it, and the stream fails a read
 * past that (tools/lib/stream.h); a file grows to what it gives.
 */
static uint64_t
check_copy (struct endpoint *src, const struct endpoint *dst)
{
  uint64_t size = endpoint_size (src);
  uint64_t dst_size = endpoint_size (dst);

  if (size == SIZE_UNKNOWN) {
    if (dst_size == SIZE_UNKNOWN || dst->grows)
      return SIZE_UNKNOWN;
    endpoint_check_end (dst, dst_size);
    endpoint_set_limit (src, dst_size);
    return dst_size;
  }
  if (dst_size < size)
    die ("destination is smaller than the source (%" PRIu64 " < %" PRIu64
         " bytes)", dst_size, size);
  endpoint_check_end (src, size);
  endpoint_check_end (dst, size);
  return size;
}

/* Connect both ends.  A destination file
 * that does not exist yet is made once the source's size is known: raw
 * and all holes, as nbdcopy makes it.  It is removed again if a check
 * fails before the copy starts.
 */
static void
connect_both (struct engine *e, struct copy *c, const struct copy_options *co,
              struct image images[2])
{
  image_prepare (&images[0], "source", false, co->o.cache);
  c->src = engine_open (e, "source", &images[0], &co->src, false);
  /* A stream source's file starts empty and grows. */
  c->dst_created = image_missing (&images[1]);
  if (c->dst_created)
    image_create (&images[1], "destination",
                  c->src->sequential ? 0 : endpoint_size (c->src));
  image_prepare (&images[1], "destination", true, co->o.cache);
  c->dst = engine_open (e, "destination", &images[1], &co->dst, true);
}

/* How the copy zeroes (tools/lib/zero.h), from what the destination says. */
static void
set_zeroes (struct copy *c, const struct copy_options *co)
{
  uint64_t max = c->dst->max_block;

  c->planner.dst_can_zero = c->dst->can_zero;
  if (!c->planner.dst_can_zero)
    debug ("destination cannot zero: writing buffers of zeroes instead");
  c->zero_max = zero_max_for (max, c->planner.block);
  if (max > 0)
    debug ("destination: zero commands of at most %" PRIu64 " bytes, its "
           "maximum block size", c->zero_max);
  c->pass.no_hole = co->allocated;
}

/* Block status goes to one connection of each server: each map is one
 * sequence.  The destination's is needed only to skip holes that are
 * already there, which --allocated forbids.
 */
static void
open_maps (struct copy *c, const struct copy_options *co)
{
  struct copy_planner *pl = &c->planner;

  endpoint_map_open (c->src, &c->read_map);
  pl->read_map = &c->read_map;
  pl->dst_map = &c->dst_map;
  /* null: needs nothing for zeroes: skip them, as on a destination
   * that reads as zeroes.
   */
  pl->dst_is_zero = co->destination_is_zero || c->dst->discards;
  /* A stream's copy reads no map of the destination: a file made for
   * it holds nothing yet, so its zeroes stay holes (the file is made
   * long enough at the end).
   */
  if (c->pass.open_ended && c->dst_created && !co->allocated)
    pl->dst_is_zero = true;
  if (!co->allocated && !pl->dst_is_zero) {
    endpoint_map_open (c->dst, &c->dst_map);
    pl->dst_has_map = c->dst_map.supported;
  }
}

/* Say under -v how the copy will go. */
static void
describe_copy (const struct engine *e, const struct copy *c,
               const struct copy_options *co)
{
  const struct copy_planner *pl = &c->planner;
  char adapt[64];

  debug ("copying %" PRIu64 " bytes with %u requests of %" PRIu64
         " bytes (%s), block size %" PRIu64 ", zero extents %s",
         c->pass.size, e->depth.requests, e->depth.request_size,
         depth_describe (&e->depth, adapt, sizeof adapt), pl->block,
         !c->read_map.supported ? "unknown (no block status): every byte read"
         : pl->dst_is_zero ? "skipped" : co->allocated ? "zeroed with NO_HOLE"
         : pl->dst_has_map ? "skipped where the destination reads as zeroes, "
         "else zeroed" : "zeroed, holes allowed");
}

/* What a stream cannot do, checked before the first byte moves.  A
 * stream destination takes every byte in order, zeroes as buffers of
 * zeroes: no range may be skipped, and there is nothing to gain from
 * looking for zeroes in what was read.
 */
static void
check_streams (struct copy *c, const struct copy_options *co,
               const struct image *dst_img)
{
  struct stat st;

  c->pass.open_ended = c->src->sequential;
  /* A file the program writes itself grows to what the stream gives;
   * nbdkit's file plugin serves a file of the size it had.
   */
  if (c->pass.open_ended && !c->dst->grows && dst_img->kind == IMAGE_FILE &&
      stat (dst_img->path, &st) == 0 &&
      S_ISREG (st.st_mode))
    die ("destination: %s is served by nbdkit here (no io_uring), which "
         "cannot make it grow to what the stream gives", dst_img->name);
  if (!c->dst->sequential)
    return;
  if (co->verify)
    die ("--verify: %s cannot be read back", c->dst->name);
  if (co->checksum && strcmp (dst_img->path, "-") == 0)
    die ("--checksum: the digest goes to standard output, which is the "
         "destination");
  if (co->destination_is_zero)
    die ("--destination-is-zero: %s has no holes to leave", c->dst->name);
  c->sparse = false;
}

/* A copy between two local files, through the page cache, with
 * neither --requests nor --request-size: it gets a fixed depth
 * (FILE_COPY_REQUESTS, tools/lib/bounds.h).  Not with --checksum,
 * whose hash threads keep up better with more slots to work on.
 */
static bool
file_to_file (const struct copy *c, const struct copy_options *co)
{
  return c->src->local && !c->src->sequential && c->dst->local &&
    !c->dst->sequential && !c->dst->discards &&
    co->o.cache != IMAGE_CACHE_NONE &&
    !co->checksum && !co->o.requests_given && !co->o.request_size_given;
}

/* --resume: start at offset, rounded down to 64 KiB, the largest
 * minimum block size the protocol allows, so that every request and
 * block-status command stays aligned.  The maps start there too: the
 * first block-status command asks from there.
 */
static void
resume_at (struct copy *c, uint64_t offset)
{
  if (!c->resumable)
    die ("--resume: a copy %s cannot resume",
         c->dst->discards ? "to null:" : "from or to a stream");
  if (offset > c->pass.size)
    die ("--resume: offset %" PRIu64 " is past the source's end (%" PRIu64
         " bytes)", offset, c->pass.size);
  offset = round_down (offset, 65536);
  c->pass.next_offset = c->pass.bytes_done = offset;
  c->read_map.end = offset;
  if (c->planner.dst_has_map)
    c->dst_map.end = offset;
  debug ("resuming at offset %" PRIu64, offset);
}

/* Connect both ends and check every limit before the first byte is
 * read, so bad input never leaves a half-written destination; then the
 * depth, the ring and the maps.
 */
static void
setup_copy (struct engine *e, struct copy *c, const struct copy_options *co,
            struct image images[2])
{
  connect_both (e, c, co, images);
  if (c->dst->read_only)
    die ("destination: the server is read-only");
  check_streams (c, co, &images[1]);
  if (file_to_file (c, co))
    engine_set_depth (e, FILE_COPY_REQUESTS, FILE_COPY_REQUEST_SIZE, true,
                      FILE_COPY_REQUESTS, FILE_COPY_REQUEST_SIZE, 1);
  else
    engine_set_depth (e, co->o.requests, co->o.request_size,
                      co->o.request_size_given, co->max_requests,
                      co->max_size, co->checksum ? co->block_size : 1);
  c->pass.size = check_copy (c->src, c->dst);
  /* Both are powers of two, so the larger is a multiple of the other.
   * With --checksum, pieces start and end on hash blocks too, so that
   * each slot holds whole blocks, either data or zeroes.
   */
  c->planner.block = MAX (c->src->min_block, c->dst->min_block);
  if (co->checksum)
    c->planner.block = MAX (c->planner.block, co->block_size);
  c->planner.size = c->pass.size;
  set_zeroes (c, co);
  open_maps (c, co);
  c->dst_name = images[1].name;
  c->resumable = !c->dst->discards && !co->checksum &&
    !co->destination_is_zero && !c->src->sequential &&
    !c->dst->sequential;
  if (co->resume_given)
    resume_at (c, co->resume);
  describe_copy (e, c, co);
}

/* Start a hash of the ring's slots, with a record of its block digests
 * for --verify, which names the first block that differs.
 */
static void
start_hash (struct ordered_hash *sh, const struct engine *e,
            const struct copy_options *co)
{
  struct blkhash hash;

  ordered_hash_setup (&hash, co->digest, co->block_size);
  ordered_hash_start (sh, &hash, e->loop, e->ring);
  if (co->verify)
    ordered_hash_record (sh);
}

/* --verify, once the copy has succeeded: a second pass over the ring
 * and the connections, which hashes the destination's first size
 * bytes as nbd-evsum hashes an image (tools/lib/sum-pass.h): in offset
 * order, its own block status deciding what is read.  A stop in it
 * says that the copy itself is complete.  The digest goes to dst_hex.
 */
static void
verify_copy (struct engine *e, const struct copy *copy,
             const struct copy_options *co, struct ordered_hash *dst_hash,
             char *dst_hex)
{
  struct sum_pass v = {
    .pass = { .hash = dst_hash, .keep_bar = true, .label = "verify" },
    .stage = "the verify pass",
    .left = "the copy itself is complete",
  };

  sum_pass_open (&v, copy->dst, copy->pass.size, co->block_size);
  start_hash (dst_hash, e, co);
  debug ("verifying the destination's first %" PRIu64 " bytes",
         v.pass.size);
  engine_run (e, &v.pass);
  ordered_hash_final (dst_hash, v.pass.size, dst_hex);
  sum_pass_close (&v);
}

/* --verify found a difference: its own exit status, apart from the
 * errors' 1, as cmp(1) and qemu-img compare keep the two apart.
 */
#define EXIT_DIFFERENT 2

/* --verify failed: say so with both digests, and where the records of
 * block digests the two passes kept first differ, if they can tell.
 */
static void __attribute__ ((noreturn))
verify_failed (const struct ordered_hash *src_hash,
               const struct ordered_hash *dst_hash, const char *src_hex,
               const char *dst_hex, uint64_t block_size, uint64_t size)
{
  int64_t diff = ordered_hash_first_difference (src_hash, dst_hash);

  if (diff >= 0)
    message ("verify failed: the destination's digest %s is not the "
             "source's %s; the first block that differs is at offset %"
             PRId64 " length %" PRIu64, dst_hex, src_hex, diff,
             MIN (block_size, size - diff));
  else
    message ("verify failed: the destination's digest %s is not the "
             "source's %s", dst_hex, src_hex);
  exit (EXIT_DIFFERENT);
}

/* Say under -v what the copy took (tests/zero-functions.sh reads it). */
static void
describe_done (const struct copy *c)
{
  debug ("done: %" PRIu64 " + %" PRIu64 " block status, %" PRIu64
         " reads, %" PRIu64 " writes, %" PRIu64 " zeroes, %" PRIu64
         " bytes skipped", c->read_map.commands, c->dst_map.commands,
         c->nr_reads, c->nr_writes, c->nr_zeroes, c->bytes_skipped);
}

/* The copy itself, then --verify; 0 once every check passed. */
static int
copy_image (const struct copy_options *co, struct image images[2])
{
  struct engine e;
  struct copy c = {
    .pass = { .ops = &copy_ops },
    .sparse = co->sparse,
    .want_flush = co->flush,
  };
  struct ordered_hash src_hash, dst_hash;
  char hex[BLKHASH_HEX_SIZE], dst_hex[BLKHASH_HEX_SIZE];

  engine_init (&e, &co->o);
  setup_copy (&e, &c, co, images);
  if (co->checksum) {
    start_hash (&src_hash, &e, co);
    c.pass.hash = &src_hash;
    debug ("hashing with %s in %" PRIu64 "-byte blocks", co->digest,
           co->block_size);
  }
  /* Every check passed: from here on a destination file this program
   * created holds (part of) the copy and stays, as any destination.
   * The bar of each pass stays, labelled, on stderr; a digest goes to
   * stdout.
   */
  image_keep ();
  c.pass.keep_bar = true;
  c.pass.label = "copy";
  engine_run (&e, &c.pass);
  describe_done (&c);
  if (co->checksum)
    ordered_hash_final (&src_hash, c.pass.size, hex);
  if (co->verify)
    verify_copy (&e, &c, co, &dst_hash, dst_hex);

  /* A clean disconnect: the destination learns that the client is done
   * and may flush its caches in its own time.
   */
  engine_close (&e);
  if (co->verify && strcmp (hex, dst_hex) != 0)
    verify_failed (&src_hash, &dst_hash, hex, dst_hex, co->block_size,
                   c.pass.size);
  /* Only now is the copy a success: print the digest, and say that it
   * was verified where scripts reading the digest do not look.
   */
  if (co->verify)
    message ("verified: the destination's first %" PRIu64 " bytes have "
             "the source's digest", c.pass.size);
  if (co->checksum) {
    printf ("%s  %s\n", hex, images[0].name);
    ordered_hash_free (&src_hash);
  }
  if (co->verify)
    ordered_hash_free (&dst_hash);
  extents_free (&c.read_map);
  extents_free (&c.dst_map);
  engine_free (&e);
  return EXIT_SUCCESS;
}

/* --help: what the program does and its own options, then those both
 * tools take (option_help_shared), on stdout.
 */
static void __attribute__ ((noreturn))
usage (void)
{
  printf ("Usage: %s [OPTIONS] SOURCE DESTINATION\n"
"Copy a disk image to another, reading only the source's data and zeroing\n"
"its holes with as few zero commands as the protocol allows\n"
"(--no-extents --no-sparse: every byte read and written).\n"
IMAGES_HELP ("read and written", "standard input or output")
"A DESTINATION file that does not exist is created, raw, as large as\n"
"the source.  DESTINATION null: drops everything, as nbdcopy's: to\n"
"measure reading, or with --checksum to hash the source.\n"
"\n"
"Options:\n"
"  --requests=N        requests in flight (1-%d); without it, start\n"
"                      at %d and adapt to the servers\n"
"  --request-size=SIZE bytes per data request (%d to %dM; suffixes k, M,\n"
"                      G are powers of 1024); without it, adapt from\n"
"                      256k up to 1M (or the block size of\n"
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
"                      of two up to 32M (default %dk)\n"
"  --verify            after the copy, hash the destination's first\n"
"                      SRC-size bytes the same way and fail unless the\n"
"                      digests match (implies --checksum)\n"
"  --resume=OFFSET     copy only from OFFSET on, into a destination that\n"
"                      holds the source below it: the command an\n"
"                      interrupted or failed copy prints\n",
           progname, MAX_REQUESTS, DEFAULT_REQUESTS, MIN_REQUEST_SIZE,
           MAX_REQUEST_SIZE / (1024 * 1024), BLKHASH_BLOCK_SIZE / 1024);
  option_help_shared (stdout);
  printf ("\nExample: copy a local qcow2 image to an NBD server, and check "
          "it:\n"
          "  %s --verify disk.qcow2 nbd://server/export\n"
          "See %s(1) for more.\n", progname, progname);
  exit (EXIT_SUCCESS);
}

/* Store the options in co, as given: the rules between them are
 * check_options'.
 */
static void
parse_options (int argc, char *argv[], struct copy_options *co)
{
  enum { OPT_INIT = 256, OPT_NO_INIT, OPT_ALLOCATED, OPT_DESTINATION_IS_ZERO,
         OPT_NO_SPARSE, OPT_FLUSH, OPT_CHECKSUM, OPT_BLOCK_SIZE, OPT_VERIFY,
         OPT_NO_EXTENTS, OPT_RESUME };
  static const struct option long_options[] = {
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
    { "resume",              required_argument, NULL, OPT_RESUME },
    { "help",                no_argument,       NULL, 'h' },
    SHARED_LONG_OPTIONS,
    { 0 }
  };
  char *err;
  int c;

  while ((c = getopt_long (argc, argv, "+:h" SHARED_SHORT_OPTIONS,
                           long_options, NULL)) != -1) {
    switch (c) {
    case OPT_INIT:
      co->src.pread_initialize = true;
      break;
    case OPT_NO_INIT:
      co->src.pread_initialize = false;
      break;
    case OPT_ALLOCATED:
      co->allocated = true;
      break;
    case OPT_DESTINATION_IS_ZERO:
      co->destination_is_zero = true;
      break;
    case OPT_NO_EXTENTS:
      /* Without the meta context, neither map is supported: every
       * extent is data, and the destination's holes are not looked for.
       */
      co->src.want_extents = co->dst.want_extents = false;
      break;
    case OPT_NO_SPARSE:
      co->sparse = false;
      break;
    case OPT_FLUSH:
      co->flush = true;
      break;
    case OPT_CHECKSUM:
      co->checksum = true;
      if (optarg) {
        co->digest = optarg;
        co->digest_given = true;
      }
      break;
    case OPT_BLOCK_SIZE:
      if (option_block_size (optarg, &co->block_size, &err) == -1)
        die_error (err);
      break;
    case OPT_VERIFY:
      co->verify = co->checksum = true;
      break;
    case OPT_RESUME:
      if (parse_size (optarg, &co->resume) == -1)
        die ("--resume: '%s' is not an offset: %s", optarg, strerror (errno));
      co->resume_given = true;
      break;
    case 'h':
      usage ();
    default:
      if (!option_shared (c, optarg, &co->o, MAX_CONNECTIONS))
        option_error (c, argv, long_options);
    }
  }
}

/* A local file copied onto itself would be read while it is written:
 * refuse it, by device and inode, however the two paths are spelt.
 */
static void
check_not_same (const struct image *src, const struct image *dst)
{
  struct stat a, b;

  if (src->kind != IMAGE_FILE || dst->kind != IMAGE_FILE ||
      stat (src->path, &a) == -1 || stat (dst->path, &b) == -1)
    return;
  if ((a.st_dev == b.st_dev && a.st_ino == b.st_ino) ||
      (S_ISBLK (a.st_mode) && S_ISBLK (b.st_mode) && a.st_rdev == b.st_rdev))
    die ("%s and %s are the same file: nothing to copy", src->name,
         dst->name);
}

/* The rules between options, before anything is connected; then the
 * bounds of the depth, within what the digests of a slot may take.
 */
static void
check_options (struct copy_options *co)
{
  struct shared_options *o = &co->o;
  char *err;

  /* A destination that reads as zeroes may still be sparse, so skipping
   * its zero extents would break the promise of --allocated.
   */
  if (co->allocated && co->destination_is_zero)
    die ("--allocated and --destination-is-zero cannot be used together");
  if (co->block_size && !co->checksum)
    die ("--block-size needs --checksum");
  /* A hash covers the whole image, and the part below the offset is
   * not read again.
   */
  if (co->resume_given && co->checksum)
    die ("--resume cannot be used with --%s: the part below the offset "
         "is not read again; once the copy is complete, nbd-evsum hashes "
         "either side", co->verify ? "verify" : "checksum");
  /* Writes above the offset may have landed before the copy stopped. */
  if (co->resume_given && co->destination_is_zero)
    die ("--resume cannot be used with --destination-is-zero: writes past "
         "the offset may have landed before the copy stopped");
  /* --verify reads the destination back, over every connection: only a
   * flush once the writes are done makes them visible to reads on the
   * other connections (tools/lib/server.h), so the copy ends with one.
   */
  if (co->verify)
    co->flush = true;
  /* Both ends get the same socket buffers: a copy moves every byte
   * through both sockets, and the smaller buffer would set the pace.
   */
  co->src.socket_buffer = co->dst.socket_buffer = o->socket_buffer;
  if (co->checksum) {
    if (co->block_size == 0)
      co->block_size = BLKHASH_BLOCK_SIZE;
    if (option_request_size_in_blocks (o, co->block_size, &err) == -1)
      die_error (err);
  }
  engine_bounds (o, co->checksum ? co->digest : NULL, co->block_size,
                 &co->max_requests, &co->max_size);
}

int
main (int argc, char *argv[])
{
  /* Reads need no zeroing by libnbd (pread_initialize false): a failed
   * read stops the copy, and its buffer is never written.  The
   * destination is asked for extents too, to find out whether it
   * already reads as zeroes.
   */
  struct copy_options co = {
    .o = SHARED_OPTIONS_INIT (DEFAULT_REQUESTS),
    .src = { .want_extents = true },
    .dst = { .want_extents = true },
    .sparse = true,
    .digest = BLKHASH_DIGEST,
  };
  struct image images[2];
  char *err;
  int n, status;

  set_progname (argv[0]);
  parse_options (argc, argv, &co);
  cmd_argc = argc;
  cmd_argv = argv;
  cmd_first = optind;
  n = image_parse_args (argc, argv, optind, images, 2, &err);
  if (n == -1)
    die_error (err);
  if (n > 2 && co.checksum && !co.digest_given &&
      ordered_hash_is_digest (argv[optind]))
    die ("--checksum takes its digest after '=': --checksum=%s",
         argv[optind]);
  if (n != 2) {
    fprintf (stderr, "%s: expected SOURCE and DESTINATION; try --help\n",
             progname);
    exit (EXIT_FAILURE);
  }
  check_options (&co);
  check_not_same (&images[0], &images[1]);
  if (co.resume_given && image_missing (&images[1]))
    die ("--resume: %s does not exist: a copy resumes into the destination "
         "it was making", images[1].name);
  if (co.verify && image_is_null (&images[1]))
    die ("--verify: null: keeps nothing to read back");
  status = copy_image (&co, images);
  image_free (&images[0]);
  image_free (&images[1]);
  return status;
}
