/* nbd-libev-examples: the blkhash block hash.  See blkhash.h. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "blkhash.h"
#include "iszero.h"

/* A run of zero blocks is fed this many digests per EVP_DigestUpdate
 * (64 KiB for SHA-256): large updates keep the per-call cost
 * negligible, so a 1 TiB hole hashes in well under a second.
 */
#define ZERO_RUN_DIGESTS 2048

/* OpenSSL's digest calls fail only when out of memory or misused, but
 * a digest that skipped data would be worse than useless: every failure
 * is returned.
 */
int
blkhash_init (struct blkhash *h, const char *digest, uint64_t block_size)
{
  unsigned char *zeroes;
  size_t i;
  int ok;

  memset (h, 0, sizeof *h);
  h->md = EVP_MD_fetch (NULL, digest, NULL);
  if (h->md == NULL) {
    errno = ENOENT;
    return -1;
  }
  /* Extendable-output functions such as SHAKE have no fixed size
   * (OpenSSL 3 gives them a default one, which no other tool agrees on).
   */
  h->md_size = EVP_MD_get_size (h->md);
  if ((EVP_MD_get_flags (h->md) & EVP_MD_FLAG_XOF) != 0 ||
      h->md_size == 0 || h->md_size > EVP_MAX_MD_SIZE) {
    blkhash_free (h);
    errno = EINVAL;
    return -1;
  }
  h->block_size = block_size;
  h->outer = EVP_MD_CTX_new ();
  h->zero_run = malloc (ZERO_RUN_DIGESTS * h->md_size);
  /* H (zero block) comes from a real block of zeroes, so that it cannot
   * disagree with a data block that happens to be all zero.
   */
  zeroes = calloc (1, block_size);
  ok = h->outer && h->zero_run && zeroes &&
    EVP_DigestInit_ex2 (h->outer, h->md, NULL) == 1 &&
    EVP_Digest (zeroes, block_size, h->zero_digest, NULL, h->md, NULL) == 1;
  free (zeroes);
  if (!ok) {
    blkhash_free (h);
    errno = ENOMEM;
    return -1;
  }
  for (i = 0; i < ZERO_RUN_DIGESTS; i++)
    memcpy (h->zero_run + i * h->md_size, h->zero_digest, h->md_size);
  return 0;
}

void
blkhash_free (struct blkhash *h)
{
  EVP_MD_CTX_free (h->outer);
  EVP_MD_free (h->md);
  free (h->zero_run);
  memset (h, 0, sizeof *h);
}

uint64_t
blkhash_nr_blocks (const struct blkhash *h, uint64_t len)
{
  return (len + h->block_size - 1) / h->block_size;
}

/* Each block's digest into digests.  A full block of zeroes takes the
 * precomputed digest: checking costs far less than hashing.  A short
 * last block is always hashed: H of fewer zeroes is another digest.
 */
int
blkhash_blocks (const struct blkhash *h, EVP_MD_CTX *ctx,
                const void *buf, size_t len, unsigned char *digests)
{
  const unsigned char *p = buf;
  size_t i, n;

  for (i = 0; i < len; i += n, digests += h->md_size) {
    n = len - i < h->block_size ? len - i : h->block_size;
    if (n == h->block_size && is_zero (p + i, n))
      memcpy (digests, h->zero_digest, h->md_size);
    else if (EVP_DigestInit_ex2 (ctx, h->md, NULL) != 1 ||
             EVP_DigestUpdate (ctx, p + i, n) != 1 ||
             EVP_DigestFinal_ex (ctx, digests, NULL) != 1)
      return -1;
  }
  return 0;
}

int
blkhash_feed (struct blkhash *h, const unsigned char *digests,
              uint64_t nr_blocks)
{
  return EVP_DigestUpdate (h->outer, digests, nr_blocks * h->md_size) == 1
    ? 0 : -1;
}

int
blkhash_feed_zero_blocks (struct blkhash *h, uint64_t nr_blocks)
{
  uint64_t n;

  for (; nr_blocks > 0; nr_blocks -= n) {
    n = nr_blocks < ZERO_RUN_DIGESTS ? nr_blocks : ZERO_RUN_DIGESTS;
    if (blkhash_feed (h, h->zero_run, n) == -1)
      return -1;
  }
  return 0;
}

/* The size, little-endian, is what makes an image differ from the same
 * image with a few more zero bytes on the end.
 */
int
blkhash_final (struct blkhash *h, uint64_t image_size, char *hex)
{
  unsigned char le[8], md[EVP_MAX_MD_SIZE];
  size_t i;

  for (i = 0; i < 8; i++)
    le[i] = image_size >> (8 * i);
  if (EVP_DigestUpdate (h->outer, le, sizeof le) != 1 ||
      EVP_DigestFinal_ex (h->outer, md, NULL) != 1)
    return -1;
  for (i = 0; i < h->md_size; i++)
    sprintf (hex + 2 * i, "%02x", md[i]);
  return 0;
}
