/* nbd-libev-examples: the block hash of the data that passes through a
 * request ring.
 *
 * Joins common/blkhash (the digests) and common/pool (the threads) for
 * a program whose slots carry an image in offset order:
 *
 *  - Each slot of the ring gets a digest area of its own, room for the
 *    digests of a full request's blocks.  A hash thread fills it once
 *    slothash_give hands the slot over; the digests then wait there, however long, until
 *    the slots before it are fed too.  That is why a program that feeds
 *    the outer digest must use a RING_IN_ORDER ring: a slot is reused
 *    only once it has been fed.
 *
 *  - The loop thread feeds the outer digest in offset order: a data
 *    slot's digests with slothash_feed, a run of whole zero blocks with
 *    slothash_feed_zeroes, without any data or thread.
 *
 *  - Reads must start on block boundaries and hold whole blocks, except
 *    the last one of the image, so that no block straddles two slots.
 *
 *  - Optionally (slothash_record) it keeps the first 8 bytes of the
 *    digest of every data block fed, so that two hashes of the same
 *    length can say where they first differ.  Zero blocks cost nothing
 *    there either: a block missing from the record is a zero block.
 *
 * checksum-libev hashes what it reads; zero-extent-copy-libev hashes
 * what it copies, and the destination afterwards with --verify.
 */

#ifndef NBD_LIBEV_EXAMPLES_SLOTHASH_H
#define NBD_LIBEV_EXAMPLES_SLOTHASH_H

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
 * connection cannot deliver data as fast as they hash it (SHA-256 with
 * SHA-NI does about 1.8 GB/s per core), so more would only sit idle.
 */
#define SLOTHASH_MAX_THREADS 4

/* The most memory the slots' digest areas may take.  A tiny block size
 * with large requests would otherwise ask for gigabytes (1-byte blocks
 * in 32 MiB requests are a GiB of SHA-256 digests per slot).  Within
 * this limit every block size from 2 KiB up works with any request
 * shape the options allow, with digests of up to 64 bytes (SHA-512).
 */
#define SLOTHASH_MAX_MEMORY (256 * 1024 * 1024)

/* The most data blocks a record keeps: 64 MiB of entries, 256 GiB of
 * data in 64 KiB blocks.  Past it the record stops, and can no longer
 * say where two hashes differ.
 */
#define SLOTHASH_MAX_RECORD (4 * 1024 * 1024)

/* One data block in a record: its number and the start of its digest. */
struct slothash_entry {
  uint64_t block;
  uint64_t prefix;
};

struct slothash {
  struct blkhash hash;          /* the outer digest: loop thread only */
  struct pool pool;
  unsigned char *digests;       /* one area per slot */
  size_t area_size;             /* bytes per area */
  uint64_t bytes_fed;           /* the image below this is in the hash */
  bool recording;               /* slothash_record was called */
  bool record_full;             /* more than SLOTHASH_MAX_RECORD entries */
  struct slothash_entry *record;
  size_t record_len, record_alloc;
};

/* Check that the digest areas of nr_slots slots of request_size bytes
 * fit in SLOTHASH_MAX_MEMORY, and die with a message naming the options
 * if not.  Before any connection, so that bad options fail first.
 */
void slothash_check (const struct blkhash *hash, unsigned nr_slots,
                     uint64_t request_size);

/* Start the hash threads for ring, whose buffers the blkhash h (already
 * set up) will hash.  Takes over h.  Also stops and joins the threads
 * at exit: a thread still inside OpenSSL while exit () runs OpenSSL's
 * exit handler would race it.
 */
void slothash_start (struct slothash *sh, struct blkhash *h,
                     struct ev_loop *loop, struct ring *ring);

/* Loop thread: hand a slot whose buffer holds its data to the threads.
 * The slot becomes SLOT_HASHING; slothash_done says when it is over.
 */
void slothash_give (struct slothash *sh, struct slot *slot);

/* Loop thread: true once a slot given is hashed (SLOT_DONE) or failed
 * (SLOT_FAILED: out of memory in OpenSSL).
 */
bool slothash_done (struct slothash *sh, struct slot *slot);

/* Loop thread, in offset order: feed a hashed slot's digests, or
 * length bytes of whole zero blocks.
 */
void slothash_feed (struct slothash *sh, const struct slot *slot);
void slothash_feed_zeroes (struct slothash *sh, uint64_t length);

/* After the last feed: stop the threads and write the hex digest of an
 * image of size bytes to hex (BLKHASH_HEX_SIZE bytes).
 */
void slothash_final (struct slothash *sh, uint64_t size, char *hex);

/* Before the first feed: keep a record of the data blocks' digests. */
void slothash_record (struct slothash *sh);

/* The offset of the first block at which two recorded hashes of the
 * same block size differ, or -1 if the records cannot tell (one was
 * full, or they do not differ).
 */
int64_t slothash_first_difference (const struct slothash *a,
                                   const struct slothash *b);

/* Stop the threads (if still running) and free everything. */
void slothash_free (struct slothash *sh);

#endif /* NBD_LIBEV_EXAMPLES_SLOTHASH_H */
