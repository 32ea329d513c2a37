/* nbd-libev-examples: progress.  See progress.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"

void
progress_init (struct progress *p, int mode, uint64_t total,
               const char *label)
{
  static bool said;

  if (mode == PROGRESS_BAR && !isatty (STDERR_FILENO)) {
    if (!said)
      message ("-p: standard error is not a terminal, so no bar is drawn; "
               "--progress=2 writes progress lines there");
    said = true;
    mode = PROGRESS_NONE;
  }
  p->mode = mode;
  p->label = label;
  p->total = total;
  p->start_ns = p->last_ns = now_ns ();
  p->last_percent = -1;
  progress_update (p, 0);
}

const char *
progress_format (char *buf, size_t len, uint64_t done, uint64_t total,
                 uint64_t elapsed_ns)
{
  char a[32], b[32], r[32];
  double secs = elapsed_ns / 1e9;
  double pct = total ? 100.0 * done / total : 100.0;
  uint64_t rate = secs > 0 ? done / secs : 0;

  if (total == PROGRESS_TOTAL_UNKNOWN)
    snprintf (buf, len, "%s  %s/s  %.2f s", human_size (done, a, sizeof a),
              human_size (rate, r, sizeof r), secs);
  else
    snprintf (buf, len, "%5.1f%%  %s / %s  %s/s  %.2f s", pct,
              human_size (done, a, sizeof a),
              human_size (total, b, sizeof b),
              human_size (rate, r, sizeof r), secs);
  return buf;
}

/* Draw the frame over the last one (status_line). */
static void
draw_bar (struct progress *p, uint64_t done, uint64_t t)
{
  char frame[128], line[256];

  progress_format (frame, sizeof frame, done, p->total, t - p->start_ns);
  if (p->label == NULL)
    status_line (frame);
  else {
    snprintf (line, sizeof line, "%s: %s", p->label, frame);
    status_line (line);
  }
}

/* nbdcopy's machine-readable format: "N/100" when N changes. */
static void
write_percent (struct progress *p, uint64_t done)
{
  int pct = p->total ? (int) (100 * (double) done / p->total) : 100;

  if (p->total == PROGRESS_TOTAL_UNKNOWN)
    pct = 0;

  if (pct == p->last_percent)
    return;
  p->last_percent = pct;
  dprintf (p->mode, "%d/100\n", pct);
}

void
progress_update (struct progress *p, uint64_t done)
{
  uint64_t t;

  if (p->mode == PROGRESS_NONE)
    return;
  if (p->mode >= 0) {
    write_percent (p, done);
    return;
  }
  /* Drawing on every completion would cost more than the copy itself
   * for small requests: five times a second is enough for a person.
   */
  t = now_ns ();
  if (done > 0 && t - p->last_ns < 200000000)
    return;
  p->last_ns = t;
  draw_bar (p, done, t);
}

void
progress_done (struct progress *p, uint64_t done, bool keep_bar)
{
  if (p->mode >= 0)
    write_percent (p, done);
  if (p->mode != PROGRESS_BAR)
    return;
  if (keep_bar)
    draw_bar (p, done, now_ns ());
  status_line_done (keep_bar);
}
