/* Unit tests for common/blkhash.c: blkhash's published values, and the
 * zero-block shortcuts against hashing the same zeroes as data.  No
 * server is needed: the data is in memory.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "blkhash.h"
#include "check.h"


/* The block hash of an image held in memory, hashing every block as
 * data, in pieces of piece bytes (a multiple of the block size) as a
 * program that reads requests would.
 */
static void
hash_image (const char *digest, uint64_t block_size, const void *image,
            size_t size, size_t piece, char *hex)
{
  struct blkhash h;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new ();
  unsigned char *digests;
  size_t off, n;

  CHECK (blkhash_init (&h, digest, block_size) == 0);
  digests = malloc (blkhash_nr_blocks (&h, piece) * h.md_size);
  CHECK (ctx != NULL && digests != NULL);
  for (off = 0; off < size; off += n) {
    n = size - off < piece ? size - off : piece;
    CHECK (blkhash_blocks (&h, ctx, (const char *) image + off, n,
                           digests) == 0);
    CHECK (blkhash_feed (&h, digests, blkhash_nr_blocks (&h, n)) == 0);
  }
  CHECK (blkhash_final (&h, size, hex) == 0);
  blkhash_free (&h);
  free (digests);
  EVP_MD_CTX_free (ctx);
}

/* The values blkhash publishes for its test images ("" and "hello"). */
static void
test_published (void)
{
  char hex[BLKHASH_HEX_SIZE];

  hash_image ("sha256", 65536, "", 0, 65536, hex);
  CHECK (strcmp (hex, "af5570f5a1810b7af78caf4bc70a660f"
                 "0df51e42baf91d4de5b2328de0e83dfc") == 0);
  hash_image ("sha256", 65536, "hello", 5, 65536, hex);
  CHECK (strcmp (hex, "337355feb53a5309d5aba92796223c2c"
                 "84ffab930e706c01fef573a2722545e6") == 0);
  hash_image ("md5", 65536, "hello", 5, 65536, hex);
  CHECK (strcmp (hex, "f741ac9ce55f5325906bb14e9c05d467") == 0);
  /* Block size 4: "hell" and a short last block "o". */
  hash_image ("md5", 4, "hello", 5, 4, hex);
  CHECK (strcmp (hex, "8262896de34125dec173722c920e8bd0") == 0);
}

/* Zeroes fed as whole zero blocks, without data, give the digest of the
 * same zeroes hashed block by block (where blkhash_blocks takes its own
 * shortcut for a zero block), and so does every piece size.  The run is
 * longer than one update of copies of the zero digest, and the image
 * ends with a short block, which must be hashed as data.
 */
static void
test_zero_blocks (void)
{
  const uint64_t bs = 4096, nr_zero = 5000, tail = 100;
  const size_t size = nr_zero * bs + tail;
  unsigned char *image = calloc (1, size);
  char want[BLKHASH_HEX_SIZE], got[BLKHASH_HEX_SIZE];
  struct blkhash h;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new ();
  unsigned char digests[EVP_MAX_MD_SIZE];

  CHECK (image != NULL && ctx != NULL);
  image[size - 1] = 1;
  hash_image ("sha256", bs, image, size, 16 * bs, want);
  hash_image ("sha256", bs, image, size, bs, got);
  CHECK (strcmp (want, got) == 0);

  CHECK (blkhash_init (&h, "sha256", bs) == 0);
  CHECK (blkhash_feed_zero_blocks (&h, nr_zero) == 0);
  CHECK (blkhash_blocks (&h, ctx, image + nr_zero * bs, tail, digests) == 0);
  CHECK (blkhash_feed (&h, digests, 1) == 0);
  CHECK (blkhash_final (&h, size, got) == 0);
  blkhash_free (&h);
  CHECK (strcmp (want, got) == 0);

  /* A different image gives a different digest: the check can fail. */
  image[0] = 1;
  hash_image ("sha256", bs, image, size, 16 * bs, got);
  CHECK (strcmp (want, got) != 0);

  free (image);
  EVP_MD_CTX_free (ctx);
}

/* The size is part of the digest: the same zero blocks with a different
 * image size give a different digest.
 */
static void
test_size_counts (void)
{
  char a[BLKHASH_HEX_SIZE], b[BLKHASH_HEX_SIZE];
  struct blkhash h;

  CHECK (blkhash_init (&h, "sha256", 65536) == 0);
  CHECK (blkhash_feed_zero_blocks (&h, 1) == 0);
  CHECK (blkhash_final (&h, 65536, a) == 0);
  blkhash_free (&h);
  CHECK (blkhash_init (&h, "sha256", 65536) == 0);
  CHECK (blkhash_feed_zero_blocks (&h, 1) == 0);
  CHECK (blkhash_final (&h, 65535, b) == 0);
  blkhash_free (&h);
  CHECK (strcmp (a, b) != 0);
}

/* A digest OpenSSL does not know, and one without a fixed size, are
 * refused with errors the caller can word.
 */
static void
test_bad_digests (void)
{
  struct blkhash h;

  CHECK (blkhash_init (&h, "nosuch", 65536) == -1 && errno == ENOENT);
  CHECK (blkhash_init (&h, "shake128", 65536) == -1 && errno == EINVAL);
}

int
main (void)
{
  test_bad_digests ();
  test_published ();
  test_zero_blocks ();
  test_size_counts ();
  return check_status ("test-blkhash");
}
