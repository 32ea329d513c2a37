/* nbd-libev-examples: the pass that reads an image and hashes it.
 *
 * One run of the engine's loop (tools/lib/engine.h) over an endpoint,
 * from offset 0, feeding the block hash of what it reads
 * (tools/lib/ordered-hash.h).  nbd-evsum runs one per image, and
 * nbd-evcopy --verify one over the destination once the copy is done,
 * so that verifying a copy and hashing the same image read it the same
 * way, report the same failure and adapt the depth alike:
 *
 *  - What is read comes from block status (plan_sum, tools/lib/plan.h):
 *    a run of whole zero blocks is hashed without any I/O, a zero run;
 *    everything else is read, up to the depth's request size.
 *
 *  - The pass is in order (struct pass, in_order): reads complete in
 *    any order but go to the hash threads in offset order, so that the
 *    failure reported is the first in offset order, whichever read the
 *    server answered first.
 *
 *  - The depth samples each read from its start to its reply
 *    (sample_reads), not the time its data then waits for the hash
 *    threads: it follows the server, which is what more reads in flight
 *    can help.
 *
 *  - A stream (tools/lib/stream.h) is read one request at a time, as
 *    blksum reads standard input, until it ends.
 */

#ifndef NBD_LIBEV_EXAMPLES_SUM_PASS_H
#define NBD_LIBEV_EXAMPLES_SUM_PASS_H

#include <stdint.h>

#include "endpoint.h"
#include "engine.h"
#include "extents.h"

struct sum_pass {
  struct pass pass;             /* first: the ops cast back */
  struct endpoint *src;         /* what is read */
  struct extent_map map;        /* src's extents */
  uint64_t block;               /* pieces start and end on multiples:
                                   the hash's block size, or src's
                                   minimum block size if larger */
  /* For the line a stopped pass ends with (struct pass_ops, where). */
  const char *stage;            /* the pass as one stage of the
                                   program's work ("the verify pass"),
                                   or NULL if it is the whole of it */
  const char *left;             /* what a stop leaves ("no digest") */
  /* For the summary under -v. */
  uint64_t nr_reads;
  uint64_t bytes_unread;        /* zero runs, hashed without a read */
};

/* Ready s to hash the first size bytes of src (SIZE_UNKNOWN: a stream,
 * to its end) in blocks of block_size: its ops and the engine's
 * settings for it, and the map of src's extents.  The caller zeroes s
 * first, and sets the rest of s->pass (hash, label, name, keep_bar),
 * stage and left itself, before engine_run.
 */
void sum_pass_open (struct sum_pass *s, struct endpoint *src, uint64_t size,
                    uint64_t block_size);

/* Once the pass is over: say under -v what it took, and free the map. */
void sum_pass_close (struct sum_pass *s);

#endif /* NBD_LIBEV_EXAMPLES_SUM_PASS_H */
