/* nbd-libev-examples: the source's allocation map, fetched ahead.
 *
 * A reader that knows which ranges of the source read as zeroes can skip
 * reading them: a copier zeroes them with one command each, a checksum
 * hashes them without I/O.  The map comes from NBD_CMD_BLOCK_STATUS on
 * the base:allocation context, asked for asynchronously in windows as
 * large as the protocol allows (MAX_LENGTH_32; libnbd >= 1.18 with
 * extended headers takes 64-bit lengths).
 *
 * The contract:
 *
 *  - At most one block-status command is in flight.  A program calls
 *    extents_pump from its ev_prepare watcher (never from a completion
 *    callback) to start the next one when the map runs short.
 *
 *  - extents_next returns the extent at an offset if it is known, or
 *    false when the program must wait; the program then simply tries
 *    again on a later loop iteration, after the reply has come in.
 *
 *  - Consecutive extents of the same kind are merged, so a 1 TiB hole
 *    is one extent however the server chops it up.
 *
 *  - Maps of several exports may be pumped from the same loop: each
 *    has its own command in flight, so the servers answer concurrently.
 *
 *  - Fallbacks: a server without base:allocation, or a block-status
 *    command that fails or that libnbd refuses to send, yields data
 *    extents (the caller reads them, so the result is still correct,
 *    only slower).  With map->verbose, each command and each failure is
 *    a line on stderr.
 */

#ifndef NBD_LIBEV_EXAMPLES_EXTENTS_H
#define NBD_LIBEV_EXAMPLES_EXTENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libnbd.h>

/* The longest block-status or zero command without extended headers.
 * The protocol's length field is 32 bits, so stay below 4 GiB; 64 KiB
 * short of it keeps every window and split point a multiple of 64 KiB,
 * the largest minimum block size the protocol allows and qcow2's default
 * cluster size, so that no server has to handle part of a block.
 * qemu-nbd 7.2 and nbdkit 1.32 both take commands of this length
 * (tests/extents.sh and tests/zero-qcow2.sh send them).
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
  bool verbose;                 /* print commands and failures */
  uint64_t size;                /* export size */
  bool supported;               /* server has base:allocation */
  uint64_t window;              /* bytes asked for per command */

  /* Known extents, in offset order, covering [start, end).  Merged. */
  struct extent *v;
  size_t len, alloc;
  size_t first;                 /* index of the first extent still needed */
  uint64_t end;                 /* the map is known up to here */

  /* The one block-status command in flight, if any. */
  bool in_flight;
  uint64_t req_offset, req_length;
  int error;                    /* errno of a failed command, until pumped */

  uint64_t commands;            /* block-status commands sent, for -v */
};

/* Set up the map for a connected handle that asked for base:allocation
 * (nbd_add_meta_context before connecting).  name labels messages.
 * Returns -1 if libnbd cannot tell the export's size (nbd_get_error).
 */
int extents_init (struct extent_map *map, struct nbd_handle *nbd,
                  const char *name, bool verbose);
void extents_free (struct extent_map *map);

/* From the program's ev_prepare watcher: start the next block-status
 * command if none is in flight and the map does not yet reach offset +
 * ahead (or the end of the export).  Also turns a failed command into
 * data extents.  Returns -1 only if the map cannot grow (errno
 * ENOMEM).
 */
int extents_pump (struct extent_map *map, uint64_t offset, uint64_t ahead);

/* The extent containing offset, clipped to start at offset and to be at
 * most max_length long.  Returns false if the map does not reach offset
 * yet: call extents_pump and try again on a later iteration.  Extents
 * before offset are forgotten, so offsets must not go backwards.
 */
bool extents_next (struct extent_map *map, uint64_t offset,
                   uint64_t max_length, struct extent *e);

#endif /* NBD_LIBEV_EXAMPLES_EXTENTS_H */
