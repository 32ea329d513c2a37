/* nbd-libev-examples: the block hash of the data that passes through a
 * request ring.
 *
 * Joins common/blkhash (the digests) and common/pool (the threads) for
 * a program whose slots carry an image in offset order:
 *
 *  - Each slot of the ring gets a digest area of its own, room for the
 *    digests of a full request's blocks.  A hash thread fills it once
 *    ordered_hash_give hands the slot over; the digests then wait
 *    there, however long, until the slots before it are fed too.  That
 *    is why a program that feeds the outer digest must retire its slots
 *    in order (ring_retire_head): a slot is reused only once it has
 *    been fed.
 *
 *  - The loop thread feeds the outer digest in offset order: a data
 *    slot's digests with ordered_hash_feed, a run of whole zero blocks
 *    with ordered_hash_feed_zeroes, without any data or thread.
 *
 *  - Reads must start on block boundaries and hold whole blocks, except
 *    the last one of the image, so that no block straddles two slots.
 *
 *  - Optionally (ordered_hash_record) it keeps the first 8 bytes of the
 *    digest of every data block fed, so that two hashes of the same
 *    length can say where they first differ.  Zero blocks cost nothing
 *    there either: a block missing from the record is a zero block.
 *
 * nbd-evsum hashes what it reads; nbd-evcopy --checksum hashes what it
 * copies, and the destination afterwards with --verify.
 */

#ifndef NBD_LIBEV_EXAMPLES_ORDERED_HASH_H
#define NBD_LIBEV_EXAMPLES_ORDERED_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ev.h>

#include "blkhash.h"
#include "pool.h"
#include "ring.h"

/* Hash threads: one per online CPU, at most this many.  More threads
 * hash more blocks at once, but each competes for a CPU with the server
 * (when it runs on the same machine) and the loop thread; past four, one
 * connection cannot deliver data as fast as they hash it, so more would
 * only sit idle (docs/techniques.md, section 6).
 */
#define ORDERED_HASH_MAX_THREADS 4

/* The most memory the slots' digest areas may take.  A tiny block size
 * with large requests would otherwise ask for gigabytes (1-byte blocks
 * in 32 MiB requests are a GiB of SHA-256 digests per slot).  Within
 * this limit every block size from 2 KiB up works with any request
 * shape the options allow, with digests of up to 64 bytes (SHA-512).
 */
#define ORDERED_HASH_MAX_MEMORY (256 * 1024 * 1024)

/* The most data blocks a record keeps: 64 MiB of entries, 256 GiB of
 * data in 64 KiB blocks.  Past it the record stops, and can no longer
 * say where two hashes differ.
 */
#define ORDERED_HASH_MAX_RECORD (4 * 1024 * 1024)

/* One data block in a record: its number and the start of its digest. */
struct ordered_hash_entry {
  uint64_t block;
  uint64_t prefix;
};

struct ordered_hash {
  struct blkhash hash;          /* the outer digest: loop thread only */
  struct pool pool;
  unsigned char *digests;       /* one area per slot */
  size_t area_size;             /* bytes per area */
  uint64_t bytes_fed;           /* the image below this is in the hash */
  bool recording;               /* ordered_hash_record was called */
  bool record_full;             /* more than ORDERED_HASH_MAX_RECORD entries */
  struct ordered_hash_entry *record;
  size_t record_len, record_alloc;
};

/* True if OpenSSL knows a digest of that name. */
bool ordered_hash_is_digest (const char *name);

/* blkhash_init, fatal with a message naming the digest if it fails. */
void ordered_hash_setup (struct blkhash *h, const char *digest,
                         uint64_t block_size);

/* The depth's bounds (tools/lib/depth.h), *max_requests and *max_size,
 * made small enough for their digest areas to fit in
 * ORDERED_HASH_MAX_MEMORY, first by fewer requests, then by smaller
 * ones, but never below the requests and request_size it starts at;
 * then ordered_hash_check.
 */
void ordered_hash_bound (const struct blkhash *hash, unsigned requests,
                         uint64_t request_size, unsigned *max_requests,
                         uint64_t *max_size);

/* Check that the digest areas of nr_slots slots of request_size bytes
 * fit in ORDERED_HASH_MAX_MEMORY, and die with a message naming the options
 * if not.  Before any connection, so that bad options fail first.
 */
void ordered_hash_check (const struct blkhash *hash, unsigned nr_slots,
                         uint64_t request_size);

/* Start the hash threads for ring, whose buffers the blkhash h (already
 * set up) will hash.  Takes over h.  Also stops and joins the threads
 * at exit: a thread still inside OpenSSL while exit () runs OpenSSL's
 * exit handler would race it.
 */
void ordered_hash_start (struct ordered_hash *sh, struct blkhash *h,
                         struct ev_loop *loop, struct ring *ring);

/* Loop thread: hand a slot whose buffer holds its data to the threads,
 * the caller having made it SLOT_BUSY (engine_finish);
 * ordered_hash_done says when it is over.
 */
void ordered_hash_give (struct ordered_hash *sh, struct slot *slot);

/* Loop thread: true once a slot given is hashed (SLOT_DONE) or failed
 * (SLOT_FAILED: out of memory in OpenSSL).
 */
bool ordered_hash_done (struct ordered_hash *sh, struct slot *slot);

/* Loop thread, in offset order: feed a hashed slot's digests, or
 * length bytes of whole zero blocks.
 */
void ordered_hash_feed (struct ordered_hash *sh, const struct slot *slot);
void ordered_hash_feed_zeroes (struct ordered_hash *sh, uint64_t length);

/* After the last feed: stop the threads and write the hex digest of an
 * image of size bytes to hex (BLKHASH_HEX_SIZE bytes).
 */
void ordered_hash_final (struct ordered_hash *sh, uint64_t size, char *hex);

/* Before the first feed: keep a record of the data blocks' digests. */
void ordered_hash_record (struct ordered_hash *sh);

/* The offset of the first block at which two recorded hashes of the
 * same block size differ, or -1 if the records cannot tell (one was
 * full, or they do not differ).
 */
int64_t ordered_hash_first_difference (const struct ordered_hash *a,
                                       const struct ordered_hash *b);

/* Stop the threads (if still running) and free everything. */
void ordered_hash_free (struct ordered_hash *sh);

#endif /* NBD_LIBEV_EXAMPLES_ORDERED_HASH_H */
