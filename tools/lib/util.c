/* nbd-libev-examples: small helpers shared by the tools.
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
#include <unistd.h>

#include "util.h"

const char *progname = "nbd-libev-example";
bool verbose = false;

/* Length of the status line on screen (the progress bar's frame), or
 * 0 if the cursor is at the start of a line.  Used with stderr's lock
 * held.
 */
static size_t bar_len;

/* Before any other line on stderr: move below the bar, which stays. */
static void
end_bar_line (void)
{
  if (bar_len > 0) {
    fputc ('\n', stderr);
    bar_len = 0;
  }
}

void
set_progname (const char *argv0)
{
  const char *slash = strrchr (argv0, '/');

  progname = slash ? slash + 1 : argv0;
}

/* "progname: message" on a line of its own, below the bar if one is
 * shown.
 */
static void vmessage (const char *fmt, va_list ap)
  __attribute__ ((format (printf, 1, 0)));

static void
vmessage (const char *fmt, va_list ap)
{
  flockfile (stderr);
  end_bar_line ();
  fprintf (stderr, "%s: ", progname);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  funlockfile (stderr);
}

void
message (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vmessage (fmt, ap);
  va_end (ap);
}

void
die (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vmessage (fmt, ap);
  va_end (ap);
  exit (EXIT_FAILURE);
}

int
set_error (char **err, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  if (vasprintf (err, fmt, ap) == -1)
    *err = NULL;
  va_end (ap);
  return -1;
}

void
die_error (char *err)
{
  if (err == NULL)
    die ("%s", strerror (ENOMEM));
  die ("%s", err);
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

const char *
option_size (uint64_t bytes, char *buf, size_t len)
{
  static const char units[] = "kMG";
  size_t i = 0;

  while (bytes != 0 && bytes % 1024 == 0 && i < sizeof units - 1) {
    bytes /= 1024;
    i++;
  }
  if (i == 0)
    snprintf (buf, len, "%" PRIu64, bytes);
  else
    snprintf (buf, len, "%" PRIu64 "%c", bytes, units[i - 1]);
  return buf;
}

uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void
status_line (const char *line)
{
  size_t n = strlen (line);

  flockfile (stderr);
  fprintf (stderr, "\r%s%*s", line, bar_len > n ? (int) (bar_len - n) : 0, "");
  bar_len = MAX (n, bar_len);
  fflush (stderr);
  funlockfile (stderr);
}

void
status_line_done (bool keep)
{
  flockfile (stderr);
  if (keep)
    fputc ('\n', stderr);
  else
    fprintf (stderr, "\r%*s\r", (int) bar_len, "");
  bar_len = 0;
  funlockfile (stderr);
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
  end_bar_line ();
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
