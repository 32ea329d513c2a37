/* nbd-libev-examples: the block hash of an image, as blksum computes it.
 *
 * blkhash (blksum, nbdcopy --blkhash) defines the digest of an image as
 *
 *   H (H (block_0) || H (block_1) || ... || H (block_n-1) || le64 (size))
 *
 * with blocks of block_size bytes (64 KiB by default) at absolute
 * offsets, the last one at its real length.  The inner digests are
 * independent, so any thread may compute them (blkhash_blocks, each
 * thread with an EVP_MD_CTX of its own); the outer one is fed by one
 * thread in block order (blkhash_feed*, blkhash_final).  Whole blocks
 * of zeroes are fed as copies of H (zero block), computed once: a 1 TiB
 * hole costs 16 Mi digests fed and nothing else.
 *
 * The digest is any fixed-size one OpenSSL knows; digest and block size
 * must both match to compare with blksum (sha256, 64 KiB).
 * tests/test-blkhash.c checks blkhash's published values.
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

/* Any thread, with a ctx of its own: the digests of the blocks of buf
 * (len bytes from a block boundary) into digests, room for
 * blkhash_nr_blocks (len) of them.  Returns 0, or -1 if OpenSSL failed.
 */
int blkhash_blocks (const struct blkhash *h, EVP_MD_CTX *ctx,
                    const void *buf, size_t len, unsigned char *digests);

/* One thread, in block order: nr_blocks digests that blkhash_blocks
 * made, or nr_blocks whole blocks of zeroes.  0, or -1 if OpenSSL failed.
 */
int blkhash_feed (struct blkhash *h, const unsigned char *digests,
                  uint64_t nr_blocks);
int blkhash_feed_zero_blocks (struct blkhash *h, uint64_t nr_blocks);

/* Finish with the image size; hex has BLKHASH_HEX_SIZE.  0 or -1. */
int blkhash_final (struct blkhash *h, uint64_t image_size, char *hex);

#endif /* NBD_LIBEV_EXAMPLES_BLKHASH_H */
