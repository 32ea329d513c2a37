/* nbd-evcopy: connecting both ends and checking every limit.
 *
 * Everything is checked before the first byte is read, so that bad
 * input never leaves a half-written destination: the sizes, the
 * servers' block sizes, what a stream or null: cannot do.  Then the
 * depth, the ring, the planner and the maps.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "captive.h"
#include "created.h"
#include "nbd-evcopy.h"
#include "util.h"

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

/* Connect both ends and check every limit before the first byte is
 * read, so bad input never leaves a half-written destination; then the
 * depth, the ring and the maps.
 */
void
copy_setup (struct engine *e, struct copy *c, const struct copy_options *co,
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
  copy_set_zeroes (c, co);
  open_maps (c, co);
  c->dst_name = images[1].name;
  c->resumable = !c->dst->discards && !co->checksum &&
    !co->destination_is_zero && !c->src->sequential &&
    !c->dst->sequential;
  if (co->resume_given)
    copy_resume_at (c, co->resume);
  describe_copy (e, c, co);
}
