/* nbd-libev-examples: the source's allocation map, fetched ahead.
 *
 * A reader that knows which ranges of the source read as zeroes can skip
 * reading them: a copier zeroes them with one command each, a checksum
 * hashes them without I/O.  The map comes from NBD_CMD_BLOCK_STATUS on
 * the base:allocation context, asked for asynchronously in windows as
 * large as the protocol's 32-bit length allows (MAX_LENGTH_32).
 *
 * The contract:
 *
 *  - At most one block-status command is in flight.  A program calls
 *    extents_pump from its ev_prepare watcher (never from a completion
 *    callback) to start the next one when the map runs short.
 *
 *  - extents_next returns the extent at an offset if it is known, or
 *    false: the program tries again once the reply has come in.
 *
 *  - Consecutive extents of the same kind are merged, so a 1 TiB hole
 *    is one extent however the server chops it up.
 *
 *  - Fallbacks: a server without base:allocation, or a block-status
 *    command that fails or that libnbd refuses to send, yields data
 *    extents (the caller reads them, so the result is still correct,
 *    only slower), and extents_pump returns its errno once.
 */

#ifndef NBD_LIBEV_EXAMPLES_EXTENTS_H
#define NBD_LIBEV_EXAMPLES_EXTENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libnbd.h>

/* The longest block-status or zero command: the length field is 32
 * bits, and 64 KiB short of 4 GiB keeps every window and split point a
 * multiple of 64 KiB, the largest minimum block size the protocol
 * allows, so that no server handles part of a block.
 */
#define MAX_LENGTH_32 ((UINT64_C (1) << 32) - 65536)

struct extent {
  uint64_t offset;
  uint64_t length;
  bool zero;                    /* reads as zeroes (NBD_STATE_ZERO) */
};

struct extent_map {
  struct nbd_handle *nbd;
  const char *name;             /* for messages */
  uint64_t size;                /* export size */
  bool supported;               /* server has base:allocation */
  uint64_t window;              /* bytes asked for per command */
  uint64_t block;               /* the server's minimum block size */
  struct extent *v;             /* known extents, in order, merged */
  size_t len, alloc;
  size_t first;                 /* index of the first extent still needed */
  uint64_t end;                 /* the map is known up to here */
  bool in_flight;               /* the one block-status command */
  uint64_t req_offset, req_length;
  int error;                    /* errno of a failed command, until pumped */
  uint64_t commands;            /* block-status commands sent, for -v */
};

/* The map of a handle that asked for base:allocation before it
 * connected.  Returns -1 if libnbd cannot tell the size (nbd_get_error).
 */
int extents_init (struct extent_map *map, struct nbd_handle *nbd,
                  const char *name);
void extents_free (struct extent_map *map);

/* From the prepare callback: start the next block-status command if
 * none is in flight and the map does not reach offset + ahead, and turn
 * a failed one into data.  Returns the failed command's errno if it did
 * (req_offset and req_length say which), -1 if the map cannot grow.
 */
int extents_pump (struct extent_map *map, uint64_t offset, uint64_t ahead);

/* The extent at offset, clipped to start there and to max_length, or
 * false if the map does not reach offset yet.  Extents before offset are
 * forgotten: offsets must not go backwards.
 */
bool extents_next (struct extent_map *map, uint64_t offset,
                   uint64_t max_length, struct extent *e);

#endif /* NBD_LIBEV_EXAMPLES_EXTENTS_H */
