/* nbd-libev-examples: the CHECK macro of the C unit tests.
 *
 * A failed CHECK prints the file, the line and the expression, counts
 * the failure and goes on, so that one run shows every check that
 * fails; check_status ends the test with the exit status automake's
 * test driver reads.
 */

#ifndef NBD_LIBEV_EXAMPLES_CHECK_H
#define NBD_LIBEV_EXAMPLES_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int failures;

#define CHECK(expr)                                                     \
  do {                                                                  \
    if (!(expr)) {                                                      \
      fprintf (stderr, "%s:%d: CHECK failed: %s\n",                     \
               __FILE__, __LINE__, #expr);                              \
      failures++;                                                       \
    }                                                                   \
  } while (0)

/* Return from main: 0 if every check passed. */
static inline int
check_status (const char *test)
{
  if (failures) {
    fprintf (stderr, "%s: %d checks failed\n", test, failures);
    return EXIT_FAILURE;
  }
  printf ("%s: all checks passed\n", test);
  return EXIT_SUCCESS;
}

#endif /* NBD_LIBEV_EXAMPLES_CHECK_H */
