/* nbd-libev-examples: progress, for -p / --progress[=FD].
 *
 * The figure is how much of the image the program has covered (read
 * and written, zeroed, skipped or hashed), and the rate is that many
 * bytes of the image per second, not bytes moved over the network: a
 * hole skipped in a millisecond counts in full.  progress_format has a
 * unit test (tests/test-util.c); the rest is checked through the
 * programs (tests/progress.sh).
 */

#ifndef NBD_LIBEV_EXAMPLES_PROGRESS_H
#define NBD_LIBEV_EXAMPLES_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The modes:
 *
 *  - PROGRESS_BAR: the status line on stderr (tools/lib/util.h),
 *    redrawn at most five times a second, and only when stderr is a
 *    terminal: in a log file the frames would pile up, so no frame is
 *    printed there (as blksum does), but one line, once, says so and
 *    names --progress=2, which writes lines a log can take.
 *
 *  - A file descriptor: nbdcopy's format for other programs, a line
 *    "N/100" whenever the whole percentage N changes.
 */
#define PROGRESS_NONE (-2)
#define PROGRESS_BAR (-1)

/* A total not known until the end (a stream's): the bar shows bytes
 * and rate without a percentage, and the fd gets "0/100" until the
 * total is known (the program sets it once the stream ended).
 */
#define PROGRESS_TOTAL_UNKNOWN UINT64_MAX

struct progress {
  int mode;                     /* PROGRESS_NONE, PROGRESS_BAR or an fd */
  const char *label;            /* before the bar's frames, or NULL */
  uint64_t total;               /* bytes of the image in all */
  uint64_t start_ns;
  uint64_t last_ns;             /* when the bar was last drawn */
  int last_percent;             /* last N written to the fd */
};
/* Start a bar, or the lines for an fd.  label, if not NULL, starts each
 * frame of the bar ("copy: ", "verify: "), so that each phase of a
 * program says which it is.
 */
void progress_init (struct progress *p, int mode, uint64_t total,
                    const char *label);
void progress_update (struct progress *p, uint64_t done);

/* At the end: the bar's final frame stays on screen if keep_bar, else
 * the line is cleared (for a program whose result follows on stdout).
 */
void progress_done (struct progress *p, uint64_t done, bool keep_bar);

/* One frame of the bar, without the carriage return, for example
 * " 50.0%  512.0 MiB / 1.0 GiB  1.2 GiB/s  0.42 s", or with total
 * PROGRESS_TOTAL_UNKNOWN "512.0 MiB  1.2 GiB/s  0.42 s".
 */
const char *progress_format (char *buf, size_t len, uint64_t done,
                             uint64_t total, uint64_t elapsed_ns);

#endif /* NBD_LIBEV_EXAMPLES_PROGRESS_H */
