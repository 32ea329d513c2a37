/* nbd-evcopy: what its files share.
 *
 * nbd-evcopy is a few files along the lines of nbdcopy's copy/:
 *
 *  - main.c: the options and the rules between them, then copy_image;
 *  - verify.c: copy_image, the copy with its hash and --verify;
 *  - setup.c: both ends connected and every limit checked before the
 *    first byte moves;
 *  - copy.c: the copy pass the engine runs (tools/lib/engine.h);
 *  - zeroes.c: zero commands, and buffers of zeroes where they fail;
 *  - resume.c: how far a stopped copy got, and --resume.
 */

#ifndef NBD_LIBEV_EXAMPLES_NBD_EVCOPY_H
#define NBD_LIBEV_EXAMPLES_NBD_EVCOPY_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "extents.h"
#include "flush.h"
#include "handle.h"
#include "image.h"
#include "options.h"
#include "plan.h"

/* slot->flags of the copy's own (tools/lib/engine.h): the destination
 * reads as zeroes over the whole range, so that a buffer read back all
 * zero needs no command there.
 */
#define SLOT_ONTO_ZEROES SLOT_PASS_FLAG

/* The command line as given, for the command that resumes a copy. */
struct command_line {
  int argc;
  char *const *argv;
  int first;                    /* the first image's index */
};

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
  struct command_line cmd;
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
  const struct command_line *cmd;
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

/* copy.c: the copy pass's ops, and its -v summary once over. */
extern const struct pass_ops copy_ops;
void copy_describe_done (const struct copy *c);

/* zeroes.c: how the copy zeroes, from what the destination says; zero
 * a slot's range, one piece at a time; a piece is over; a failed piece
 * taken back (struct pass_ops retry).
 */
void copy_set_zeroes (struct copy *c, const struct copy_options *co);
void copy_start_zero (struct copy *c, struct slot *slot);
void copy_zero_done (struct copy *c, struct slot *slot);
bool copy_retry (struct pass *p, struct slot *slot);

/* resume.c: how far a stopped copy got (struct pass_ops where); start
 * the copy at offset (--resume), fatal where it cannot resume.
 */
char *copy_where (const struct pass *p);
void copy_resume_at (struct copy *c, uint64_t offset);

/* setup.c: connect both ends and check every limit before the first
 * byte is read; then the depth, the ring and the maps.
 */
void copy_setup (struct engine *e, struct copy *c,
                 const struct copy_options *co, struct image images[2]);

/* verify.c: the copy itself, then --verify; 0 once every check passed,
 * exit status 2 if the destination differs.
 */
int copy_image (const struct copy_options *co, struct image images[2]);

#endif /* NBD_LIBEV_EXAMPLES_NBD_EVCOPY_H */
