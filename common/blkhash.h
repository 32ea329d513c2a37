/* nbd-libev-examples: the block hash of an image, as blksum computes it.
 *
 * blkhash (blksum, and nbdcopy --blkhash) defines the digest of an image
 * as
 *
 *   H (H (block_0) || H (block_1) || ... || H (block_n-1) || le64 (size))
 *
 * with blocks of block_size bytes (64 KiB by default) at absolute
 * offsets, the last one hashed at its real length.  The inner digests
 * are independent of each other, so any thread may compute them; the
 * outer digest must be fed in block order.  This module keeps the two
 * apart:
 *
 *  - blkhash_blocks computes the inner digests of a buffer's blocks
 *    into an array.  It touches nothing shared, so hash threads may
 *    call it at once, each with an EVP_MD_CTX of its own.
 *
 *  - blkhash_feed, blkhash_feed_zero_blocks and blkhash_final feed the
 *    outer digest.  One thread calls them, in block order.
 *
 * Whole blocks of zeroes, found in a buffer or known from block status,
 * are hashed as copies of H (zero block), computed once: a 1 TiB hole
 * costs 16 Mi digests fed to the outer hash and nothing else.
 *
 * The digest is any fixed-size one OpenSSL knows (sha256 by default in
 * blksum); both the digest and the block size must match to compare
 * results with blksum.  tests/test-blkhash.c checks blkhash's published
 * values.
 */

#ifndef NBD_LIBEV_EXAMPLES_BLKHASH_H
#define NBD_LIBEV_EXAMPLES_BLKHASH_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

/* blkhash's own defaults. */
#define BLKHASH_BLOCK_SIZE (64 * 1024)
#define BLKHASH_DIGEST "sha256"

/* Room for the hex digest and its terminating NUL. */
#define BLKHASH_HEX_SIZE (2 * EVP_MAX_MD_SIZE + 1)

struct blkhash {
  EVP_MD *md;
  size_t md_size;               /* bytes per digest */
  uint64_t block_size;
  EVP_MD_CTX *outer;            /* the digest of digests */
  unsigned char zero_digest[EVP_MAX_MD_SIZE]; /* H (block_size zeroes) */
  unsigned char *zero_run;      /* many copies of zero_digest */
};

/* Set up the hash with the named digest and block size (a power of
 * two).  Returns 0, or -1 with errno ENOENT (OpenSSL knows no such
 * digest), EINVAL (its output has no fixed size) or ENOMEM.
 */
int blkhash_init (struct blkhash *h, const char *digest, uint64_t block_size);
void blkhash_free (struct blkhash *h);

/* How many blocks len bytes cover; the last may be short. */
uint64_t blkhash_nr_blocks (const struct blkhash *h, uint64_t len);

/* Any thread: the digests of the blocks of buf (len bytes, starting on a
 * block boundary) into digests, which has room for
 * blkhash_nr_blocks (len) of them.  ctx is the calling thread's own.
 * Returns 0, or -1 if OpenSSL failed (out of memory): a thread beside
 * the loop reports that instead of exiting.
 */
int blkhash_blocks (const struct blkhash *h, EVP_MD_CTX *ctx,
                    const void *buf, size_t len, unsigned char *digests);

/* The feeding thread, in block order: nr_blocks digests from an array
 * that blkhash_blocks filled; nr_blocks whole blocks of zeroes, without
 * any data.  Return 0, or -1 if OpenSSL failed.
 */
int blkhash_feed (struct blkhash *h, const unsigned char *digests,
                  uint64_t nr_blocks);
int blkhash_feed_zero_blocks (struct blkhash *h, uint64_t nr_blocks);

/* Finish with the image size and write the digest in hex to hex, which
 * has room for BLKHASH_HEX_SIZE characters.  Returns 0 or -1.
 */
int blkhash_final (struct blkhash *h, uint64_t image_size, char *hex);

#endif /* NBD_LIBEV_EXAMPLES_BLKHASH_H */
