/* nbd-libev-examples: small helpers shared by the examples.
 * See util.h for the contract of each function.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

const char *progname = "nbd-libev-example";
bool verbose = false;

void
set_progname (const char *argv0)
{
  const char *slash = strrchr (argv0, '/');

  progname = slash ? slash + 1 : argv0;
}

void
die (const char *fmt, ...)
{
  va_list ap;

  fprintf (stderr, "%s: ", progname);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (EXIT_FAILURE);
}

/* Multiply by 1024 'shift' times, refusing to go past INT64_MAX: sizes
 * end up in the int64_t that libnbd uses for export sizes.
 */
static int
scale (uint64_t v, unsigned shift, uint64_t *ret)
{
  while (shift-- > 0) {
    if (v > (uint64_t) INT64_MAX / 1024) {
      errno = ERANGE;
      return -1;
    }
    v *= 1024;
  }
  if (v > (uint64_t) INT64_MAX) {
    errno = ERANGE;
    return -1;
  }
  *ret = v;
  return 0;
}

int
parse_size (const char *str, uint64_t *ret)
{
  static const char suffixes[] = "kmgtpe";
  const char *p = str;
  const char *s;
  char *end;
  unsigned long long v;
  unsigned shift = 0;

  /* strtoull accepts leading space and a minus sign (and negates!), so
   * insist on a digit first.
   */
  if (!isdigit ((unsigned char) *p)) {
    errno = EINVAL;
    return -1;
  }
  errno = 0;
  v = strtoull (p, &end, 10);
  if (errno == ERANGE)
    return -1;
  p = end;
  if (*p != '\0') {
    s = strchr (suffixes, tolower ((unsigned char) *p));
    if (s == NULL) {
      errno = EINVAL;
      return -1;
    }
    shift = s - suffixes + 1;
    p++;
    /* Accept "1M", "1MB" and "1MiB" alike; all mean 1024 * 1024. */
    if (strcmp (p, "iB") == 0 || strcmp (p, "B") == 0 || strcmp (p, "b") == 0)
      p += strlen (p);
  }
  if (*p != '\0') {
    errno = EINVAL;
    return -1;
  }
  return scale (v, shift, ret);
}

int
parse_count (const char *str, unsigned min, unsigned max, unsigned *ret)
{
  char *end;
  unsigned long v;

  if (!isdigit ((unsigned char) *str)) {
    errno = EINVAL;
    return -1;
  }
  errno = 0;
  v = strtoul (str, &end, 10);
  if (errno == ERANGE || *end != '\0') {
    if (errno == 0)
      errno = EINVAL;
    return -1;
  }
  if (v < min || v > max) {
    errno = ERANGE;
    return -1;
  }
  *ret = v;
  return 0;
}

const char *
human_size (uint64_t bytes, char *buf, size_t len)
{
  static const char *units[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
  double v = bytes;
  size_t i = 0;

  if (bytes < 1024) {
    snprintf (buf, len, "%" PRIu64 " bytes", bytes);
    return buf;
  }
  while (v >= 1024 && i < sizeof units / sizeof units[0] - 1) {
    v /= 1024;
    i++;
  }
  snprintf (buf, len, "%.1f %s", v, units[i]);
  return buf;
}

bool
is_zero (const void *buf, size_t len)
{
  const unsigned char *p = buf;
  size_t i, head = MIN (len, (size_t) 16);

  for (i = 0; i < head; i++)
    if (p[i] != 0)
      return false;
  if (len <= 16)
    return true;
  /* The first 16 bytes are zero; if every later byte equals the byte 16
   * places before it, they all are.
   */
  return memcmp (p, p + 16, len - 16) == 0;
}

uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void
progress_init (struct progress *p, bool enabled, uint64_t total)
{
  p->enabled = enabled;
  p->total = total;
  p->start_ns = p->last_ns = now_ns ();
}

static void
progress_print (struct progress *p, uint64_t done, uint64_t t, char end)
{
  char a[32], b[32];
  double secs = (t - p->start_ns) / 1e9;
  double pct = p->total ? 100.0 * done / p->total : 100.0;
  double mibs = secs > 0 ? done / secs / (1024 * 1024) : 0;

  fprintf (stderr, "\r%5.1f%%  %s / %s  %.1f MiB/s  %.2f s%c",
           pct, human_size (done, a, sizeof a),
           human_size (p->total, b, sizeof b), mibs, secs, end);
  fflush (stderr);
}

void
progress_update (struct progress *p, uint64_t done)
{
  uint64_t t;

  if (!p->enabled)
    return;
  /* Printing on every completion would cost more than the copy itself
   * for small requests: five times a second is enough for a person.
   */
  t = now_ns ();
  if (t - p->last_ns < 200000000)
    return;
  p->last_ns = t;
  progress_print (p, done, t, ' ');
}

void
progress_done (struct progress *p, uint64_t done)
{
  if (p->enabled)
    progress_print (p, done, now_ns (), '\n');
}

void
debug (const char *fmt, ...)
{
  static uint64_t start;
  va_list ap;
  uint64_t t;

  /* Called on hot paths: without -v, not even the clock is read. */
  if (!verbose)
    return;
  /* The line is written in several stdio calls; holding the stream's
   * lock keeps it whole when threads print too.
   */
  flockfile (stderr);
  t = now_ns ();
  if (start == 0)
    start = t;
  fprintf (stderr, "%s: [%10.6f] ", progname, (t - start) / 1e9);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  funlockfile (stderr);
}
