/* nbd-libev-examples: small helpers shared by the tools.
 *
 * Contract: nothing here knows about libev or libnbd, and each function
 * needs only libc and the others here, so a reader can copy any one of
 * them on its own.  The ones that compute a value (parse_size,
 * parse_count, human_size, option_size, round_down, round_up,
 * is_power_of_2)
 * have unit tests in tests/test-util.c.  The ones that print, exit or
 * read the clock (set_progname, message, die, die_error, now_ns,
 * status_line, debug) have none of their own: the shell tests check
 * their output through the programs (error messages, --progress, -v).
 */

#ifndef NBD_LIBEV_EXAMPLES_UTIL_H
#define NBD_LIBEV_EXAMPLES_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Fully parenthesised, as the arguments may be expressions.  Each
 * argument is evaluated twice, so never pass anything with a side effect.
 */
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* The program's name for messages, set from argv[0] by set_progname. */
extern const char *progname;
void set_progname (const char *argv0);

/* Print "progname: message" on a line of its own on stderr. */
void message (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* Print "progname: message" on stderr and exit with status 1. */
void die (const char *fmt, ...)
  __attribute__ ((format (printf, 1, 2), noreturn));

/* For parsers that report instead of exiting: set *err to the message
 * (allocated; NULL if even that fails) and return -1.  The caller
 * reports it with die_error, as die would have.
 */
int set_error (char **err, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* die ("%s", err), or an out-of-memory message if err is NULL. */
void die_error (char *err) __attribute__ ((noreturn));

/* Parse a size such as "512", "64k", "1M" or "2G" (powers of 1024, upper
 * or lower case, an optional trailing "B" or "iB").  Returns 0 and sets
 * *ret, or -1 with errno set (EINVAL for garbage or a negative number,
 * ERANGE for a value that does not fit in 63 bits).
 */
int parse_size (const char *str, uint64_t *ret);

/* Parse a decimal count in [min, max].  Returns 0 or -1 (errno set). */
int parse_count (const char *str, unsigned min, unsigned max, unsigned *ret);

/* Format a byte count for people, e.g. "1.0 GiB", into buf. */
const char *human_size (uint64_t bytes, char *buf, size_t len);

/* Format a byte count as the options take it, exactly, with the
 * largest of the suffixes k, M and G that divides it ("512", "256k",
 * "1M"), into buf: parse_size reads it back as the same number.  For
 * the help texts, which print the bounds from tools/lib/bounds.h.
 */
const char *option_size (uint64_t bytes, char *buf, size_t len);

/* v rounded down or up to a multiple of align (not 0).  Used for block
 * and request boundaries, which are at absolute offsets.
 */
static inline uint64_t
round_down (uint64_t v, uint64_t align)
{
  return v - v % align;
}

static inline uint64_t
round_up (uint64_t v, uint64_t align)
{
  return round_down (v + align - 1, align);
}

/* True if v is a power of two (and not 0). */
static inline bool
is_power_of_2 (uint64_t v)
{
  return v != 0 && (v & (v - 1)) == 0;
}

/* Around one statement that gcc 12's -fanalyzer (make analyze) reports
 * as leaking memory it has lost track of: a pointer stored in a struct
 * reached through an array index it cannot follow, or in a list.  Each
 * use says why the report is wrong.  Nothing for other compilers.
 */
#if defined (__GNUC__) && !defined (__clang__)
#define ANALYZER_NOT_A_LEAK_BEGIN \
  _Pragma ("GCC diagnostic push") \
  _Pragma ("GCC diagnostic ignored \"-Wanalyzer-malloc-leak\"")
#define ANALYZER_NOT_A_LEAK_END _Pragma ("GCC diagnostic pop")
#else
#define ANALYZER_NOT_A_LEAK_BEGIN
#define ANALYZER_NOT_A_LEAK_END
#endif

/* Monotonic time in nanoseconds, for request timings and throughput. */
uint64_t now_ns (void);

/* The status line: one line at the bottom of stderr, drawn over in
 * place (the progress bar).  A frame shorter than the last is padded
 * with spaces, or the end of the longer one would stay visible.
 * message (), die () and debug () start their lines below it.  At the
 * end it stays on screen if keep, else it is cleared.
 */
void status_line (const char *line);
void status_line_done (bool keep);

/* Opt-in debug output (-v): a line on stderr tagged with the seconds
 * since the first debug line, so a reader can watch the request ring
 * work.  The clock starts at that first line, not when the program
 * starts, because without -v debug returns before reading the clock at
 * all.  A line stays whole when several threads print.
 */
extern bool verbose;
void debug (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

#endif /* NBD_LIBEV_EXAMPLES_UTIL_H */
