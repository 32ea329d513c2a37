/* nbd-libev-examples: what the fuzz targets of tests/fuzz/ share.
 *
 * Each target is one LLVMFuzzerTestOneInput that reads its input as a
 * little program (sizes, choices, operations) with the take_*
 * functions below, drives one module with it and checks a property of
 * the result against a simple model of its own.  A property that does
 * not hold is a crash: FUZZ_CHECK prints the expression and aborts, so
 * that libFuzzer keeps the input (make fuzz) and the replay of the
 * committed inputs fails (tests/fuzz/replay.c, make check).
 *
 * An input that runs out reads as zeroes from then on, so that every
 * input means something and a shorter one is a simpler case.
 */

#ifndef NBD_LIBEV_EXAMPLES_FUZZ_H
#define NBD_LIBEV_EXAMPLES_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* libFuzzer's entry point, which every target defines. */
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define FUZZ_CHECK(expr)                                                \
  do {                                                                  \
    if (!(expr)) {                                                      \
      fprintf (stderr, "%s:%d: property does not hold: %s\n",           \
               __FILE__, __LINE__, #expr);                              \
      abort ();                                                         \
    }                                                                   \
  } while (0)

/* The part of the input not read yet. */
struct fuzz_input {
  const uint8_t *p;
  size_t len;
};

/* True while some input is left. */
static inline bool
fuzz_more (const struct fuzz_input *in)
{
  return in->len > 0;
}

/* The next byte, or 0 at the end. */
static inline uint8_t
take_u8 (struct fuzz_input *in)
{
  uint8_t v = 0;

  if (in->len > 0) {
    v = *in->p++;
    in->len--;
  }
  return v;
}

/* The next bytes (1 to 8) as a little-endian number. */
static inline uint64_t
take_bytes (struct fuzz_input *in, unsigned bytes)
{
  uint64_t v = 0;
  unsigned i;

  for (i = 0; i < bytes; i++)
    v |= (uint64_t) take_u8 (in) << (8 * i);
  return v;
}

static inline bool
take_bool (struct fuzz_input *in)
{
  return take_u8 (in) & 1;
}

#endif /* NBD_LIBEV_EXAMPLES_FUZZ_H */
