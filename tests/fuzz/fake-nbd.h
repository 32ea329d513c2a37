/* nbd-libev-examples: a stand-in for the few libnbd calls that
 * common/extents.c makes, for the fuzz targets.
 *
 * The target plays the server: it sets the export's size, minimum
 * block size and base:allocation before extents_init, decides whether
 * libnbd refuses the next block-status commands, and then delivers the
 * pending command's extent callbacks and its completion itself, in any
 * order libnbd could (extent callbacks only while the command is
 * pending, the completion once).  Nothing is connected, and libnbd is
 * not linked.
 */

#ifndef NBD_LIBEV_EXAMPLES_FAKE_NBD_H
#define NBD_LIBEV_EXAMPLES_FAKE_NBD_H

#include <stdbool.h>
#include <stdint.h>

#include <libnbd.h>

struct fake_nbd {
  int64_t size;                 /* nbd_get_size: -1 is its failure */
  int64_t min_block;            /* nbd_get_block_size (MINIMUM) */
  int can_meta;                 /* nbd_can_meta_context */
  unsigned refuse;              /* commands still to refuse */
  int refuse_errno;             /* nbd_get_errno after a refusal */
  /* The block-status command in flight, if pending. */
  bool pending;
  uint64_t offset, count;
  nbd_extent_callback extent;
  nbd_completion_callback done;
};

extern struct fake_nbd fake_nbd;

/* A handle to pass where libnbd wants one: only compared, never read. */
#define FAKE_HANDLE ((struct nbd_handle *) &fake_nbd)

#endif /* NBD_LIBEV_EXAMPLES_FAKE_NBD_H */
