/* nbd-evcopy: how far a copy got, and the command that resumes it.
 *
 * A copy stopped by a signal or a failure says how much of the
 * destination holds the source, and prints the command that copies the
 * rest: the one given, with --resume=OFFSET.  --resume starts a copy
 * there.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbd-evcopy.h"
#include "ring-query.h"
#include "util.h"

/* Write word to f, after a space unless first, as a POSIX shell reads
 * it back: in single quotes unless it needs none.
 */
static void
put_word (FILE *f, const char *word, bool first)
{
  static const char safe[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    "_@%+=:,./-";
  const char *q;

  if (!first)
    fputc (' ', f);
  if (word[0] != '\0' && word[strspn (word, safe)] == '\0') {
    fputs (word, f);
    return;
  }
  fputc ('\'', f);
  for (q = word; *q != '\0'; q++)
    if (*q == '\'')
      fputs ("'\\''", f);
    else
      fputc (*q, f);
  fputc ('\'', f);
}

/* Write to f the command that copies the rest from offset: this one,
 * with --resume=OFFSET in place of any --resume given, before the
 * images.
 */
static void
put_resume_command (FILE *f, const struct command_line *cmd,
                    uint64_t offset)
{
  char opt[64];
  int i;

  put_word (f, cmd->argv[0], true);
  for (i = 1; i < cmd->first; i++) {
    if (strncmp (cmd->argv[i], "--resume=", 9) == 0)
      continue;
    if (strcmp (cmd->argv[i], "--resume") == 0) {
      i++;
      continue;
    }
    put_word (f, cmd->argv[i], false);
  }
  snprintf (opt, sizeof opt, "--resume=%" PRIu64, offset);
  put_word (f, opt, false);
  for (i = cmd->first; i < cmd->argc; i++)
    put_word (f, cmd->argv[i], false);
}

/* After a signal or a failure: what was done, how much of the
 * destination holds the copy, and the command that copies the rest.
 * Writes complete in any order: below the ring's low water mark every
 * write is over, commands still in flight or not.  A file this copy
 * created is as large as the source from the start, so say that only
 * its beginning holds the copy.
 */
char *
copy_where (const struct pass *p)
{
  const struct copy *c = (const struct copy *) p;
  bool signal = p->e->stop.signum != 0;
  uint64_t below = 0;
  char *s = NULL;
  size_t len;
  FILE *f;

  if (!c->dst->discards)
    below = endpoint_complete_below (c->dst,
                                     ring_low_water (p->e->ring,
                                                     p->next_offset));
  /* A failure before any of a destination that was there holds the
   * copy: the command as given is the one to run again.
   */
  if (!signal && (c->dst->discards || (below == 0 && !c->dst_created)))
    return NULL;
  f = open_memstream (&s, &len);
  if (f == NULL)
    return NULL;
  if (c->dst->discards)
    fprintf (f, " after reading %" PRIu64 " bytes into null:",
             p->bytes_done);
  else {
    if (signal)
      fprintf (f, " after %" PRIu64 " bytes", p->bytes_done);
    if (c->dst_created)
      fprintf (f, "; %s was created by this copy and holds the source "
               "only below offset %" PRIu64, c->dst_name, below);
    else
      fprintf (f, "; the destination is complete below offset %" PRIu64,
               below);
    if (c->resumable && below < p->size) {
      fputs ("; to copy the rest: ", f);
      put_resume_command (f, c->cmd, below);
    }
  }
  if (fclose (f) == EOF) {
    free (s);
    return NULL;
  }
  return s;
}

/* --resume: start at offset, rounded down to 64 KiB, the largest
 * minimum block size the protocol allows, so that every request and
 * block-status command stays aligned.  The maps start there too: the
 * first block-status command asks from there.
 */
void
copy_resume_at (struct copy *c, uint64_t offset)
{
  if (!c->resumable)
    die ("--resume: a copy %s cannot resume",
         c->dst->discards ? "to null:" : "from or to a stream");
  if (offset > c->pass.size)
    die ("--resume: offset %" PRIu64 " is past the source's end (%" PRIu64
         " bytes)", offset, c->pass.size);
  offset = round_down (offset, 65536);
  c->pass.next_offset = c->pass.bytes_done = offset;
  c->read_map.end = offset;
  if (c->planner.dst_has_map)
    c->dst_map.end = offset;
  debug ("resuming at offset %" PRIu64, offset);
}
