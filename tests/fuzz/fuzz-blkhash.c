/* nbd-libev-examples: fuzz target for common/blkhash.c.
 *
 * The property: however a program splits an image into updates (the
 * digests of a few blocks of data, fed in order) and runs of whole zero
 * blocks fed without data, the block hash is the one computed from the
 * whole image in one go by the definition in blkhash.h,
 *
 *   H (H (block_0) || ... || H (block_n-1) || le64 (size)),
 *
 * which the model below computes with OpenSSL alone, block by block,
 * as tests/blkhash-ref.py does.
 *
 * The input: a digest and a block size, then the image as segments of
 * data (bytes from the input) and zeroes, then the split, one choice
 * per piece.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "blkhash.h"
#include "fuzz.h"

/* Small images and blocks keep each run fast; a 1 byte block and a
 * last block of any length are the cases that matter.  At most
 * MAX_BLOCKS blocks, which is still more than one update of copies of
 * the zero digest (2048) in blkhash.c: with 1 byte blocks, each one
 * hashed twice, a 64 KiB image would take a tenth of a second.
 */
#define MAX_IMAGE (64 * 1024)
#define MAX_BLOCK_SHIFT 12
#define MAX_BLOCKS 4096

static const char *const digests[] = { "sha256", "md5", "sha1" };

/* The model: the definition, one block at a time, without blkhash.c. */
static void
model_digest (const char *digest, uint64_t block_size,
              const unsigned char *image, size_t size, char *hex)
{
  EVP_MD *md = EVP_MD_fetch (NULL, digest, NULL);
  EVP_MD_CTX *outer = EVP_MD_CTX_new ();
  unsigned char d[EVP_MAX_MD_SIZE], le[8];
  unsigned int n;
  size_t off, len, i;

  FUZZ_CHECK (md != NULL && outer != NULL);
  FUZZ_CHECK (EVP_DigestInit_ex2 (outer, md, NULL) == 1);
  for (off = 0; off < size; off += len) {
    len = size - off < block_size ? size - off : block_size;
    FUZZ_CHECK (EVP_Digest (image + off, len, d, &n, md, NULL) == 1);
    FUZZ_CHECK (EVP_DigestUpdate (outer, d, n) == 1);
  }
  for (i = 0; i < 8; i++)
    le[i] = (uint64_t) size >> (8 * i);
  FUZZ_CHECK (EVP_DigestUpdate (outer, le, 8) == 1);
  FUZZ_CHECK (EVP_DigestFinal_ex (outer, d, &n) == 1);
  for (i = 0; i < n; i++)
    sprintf (hex + 2 * i, "%02x", d[i]);
  EVP_MD_CTX_free (outer);
  EVP_MD_free (md);
}

/* The image: segments of data from the input and of zeroes, up to
 * max bytes.  Returns its size.
 */
static size_t
make_image (struct fuzz_input *in, unsigned char *image, size_t max)
{
  size_t size = 0, n, i, nr_segments = take_u8 (in) % 16;

  for (i = 0; i < nr_segments && size < max; i++) {
    if (take_bool (in)) {
      n = take_u8 (in);
      n = n < in->len ? n : in->len;
      n = n < max - size ? n : max - size;
      memcpy (image + size, in->p, n);
      in->p += n;
      in->len -= n;
    }
    else {
      n = take_bytes (in, 2);
      n = n < max - size ? n : max - size;
      memset (image + size, 0, n);
    }
    size += n;
  }
  return size;
}

/* For each whole block, how many whole blocks of zeroes start there
 * (runs[b]), counted from the end in one pass.  Returns how many whole
 * blocks there are.
 */
static size_t
zero_runs (const unsigned char *image, size_t size, uint64_t block_size,
           uint32_t *runs)
{
  size_t nr = size / block_size, b, i;

  for (b = nr; b-- > 0; ) {
    for (i = 0; i < block_size && image[b * block_size + i] == 0; i++)
      ;
    runs[b] = i < block_size ? 0 : 1 + (b + 1 < nr ? runs[b + 1] : 0);
  }
  return nr;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static unsigned char image[MAX_IMAGE];
  static uint32_t runs[MAX_IMAGE];
  struct fuzz_input in = { data, size };
  const char *digest = digests[take_u8 (&in) % 3];
  uint64_t block_size =
    UINT64_C (1) << (take_u8 (&in) % (MAX_BLOCK_SHIFT + 1));
  char want[BLKHASH_HEX_SIZE], got[BLKHASH_HEX_SIZE];
  unsigned char *d;
  EVP_MD_CTX *ctx;
  struct blkhash h;
  size_t image_size, offset, len, nr_whole;
  uint64_t zeroes, k;

  image_size = make_image (&in, image,
                           block_size * MAX_BLOCKS < MAX_IMAGE ?
                           block_size * MAX_BLOCKS : MAX_IMAGE);
  nr_whole = zero_runs (image, image_size, block_size, runs);
  model_digest (digest, block_size, image, image_size, want);

  FUZZ_CHECK (blkhash_init (&h, digest, block_size) == 0);
  ctx = EVP_MD_CTX_new ();
  /* Room for the digests of the longest piece below, 256 blocks. */
  d = malloc (256 * h.md_size);
  FUZZ_CHECK (ctx != NULL && d != NULL);
  for (offset = 0; offset < image_size; offset += len) {
    zeroes = offset / block_size < nr_whole ? runs[offset / block_size] : 0;
    k = 1 + take_u8 (&in);      /* blocks in this piece, at most 256 */
    if (zeroes > 0 && take_bool (&in)) {
      /* 256: the whole run, which may be longer than one update of
       * copies of the zero digest in blkhash.c.
       */
      k = k < zeroes && k < 256 ? k : zeroes;
      FUZZ_CHECK (blkhash_feed_zero_blocks (&h, k) == 0);
      len = k * block_size;
      continue;
    }
    len = image_size - offset < k * block_size ? image_size - offset
      : k * block_size;
    FUZZ_CHECK (blkhash_nr_blocks (&h, len) == (len + block_size - 1)
                / block_size);
    FUZZ_CHECK (blkhash_blocks (&h, ctx, image + offset, len, d) == 0);
    FUZZ_CHECK (blkhash_feed (&h, d, blkhash_nr_blocks (&h, len)) == 0);
  }
  FUZZ_CHECK (blkhash_final (&h, image_size, got) == 0);
  FUZZ_CHECK (strcmp (got, want) == 0);
  blkhash_free (&h);
  EVP_MD_CTX_free (ctx);
  free (d);
  return 0;
}
