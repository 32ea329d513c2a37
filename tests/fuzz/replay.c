/* nbd-libev-examples: run a fuzz target over inputs kept in files.
 *
 * Linked with one target of tests/fuzz/ instead of libFuzzer, and
 * built by any compiler, so that make check replays every target's
 * committed inputs in seconds, as an ordinary test:
 *
 *   tests/fuzz/replay-extents [FILE | DIRECTORY]...
 *
 * Without arguments it replays the target's seeds and regression
 * inputs, $abs_top_srcdir/tests/fuzz/corpus/TARGET/ and regress/TARGET/
 * (TARGET is compiled in; the regression directory may be absent).  A
 * property that does not hold aborts, and the input that did it is
 * named on stderr first, so the test fails and says which.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#ifndef FUZZ_TARGET
#error "FUZZ_TARGET must name the target, as in -DFUZZ_TARGET=\"extents\""
#endif

/* The largest input read: far more than any committed one. */
#define MAX_INPUT_SIZE (1024 * 1024)

/* The input being run, for the abort handler. */
static const char *current;

/* A failed property aborts: name the input, then die of the signal as
 * before, so that the exit status still says what happened.  Only
 * write(2), which is safe in a signal handler.
 */
static void
say (const char *s)
{
  ssize_t r = write (STDERR_FILENO, s, strlen (s));

  (void) r;                     /* nothing better to do if it fails */
}

static void
name_input (int sig)
{
  if (current != NULL) {
    say ("replay: the input that failed: ");
    say (current);
    say ("\n");
  }
  signal (sig, SIG_DFL);
  raise (sig);
}

/* Run the target on one file's contents.  Returns -1 if it cannot be
 * read.
 */
static int
replay_file (const char *path)
{
  static uint8_t buf[MAX_INPUT_SIZE];
  FILE *fp = fopen (path, "rb");
  size_t n;

  if (fp == NULL) {
    fprintf (stderr, "replay: %s: %s\n", path, strerror (errno));
    return -1;
  }
  n = fread (buf, 1, sizeof buf, fp);
  fclose (fp);
  current = path;
  /* libFuzzer's rule: the target sees exactly n bytes, in a copy it
   * must not keep.
   */
  LLVMFuzzerTestOneInput (buf, n);
  current = NULL;
  return 0;
}

/* Every file of a directory, in name order, so that runs compare.  A
 * name starting with '.' is not an input.  Returns how many files ran,
 * or -1.
 */
static int
replay_dir (const char *dir)
{
  struct dirent **names;
  char path[4096];
  int n, i, ran = 0, failed = 0;

  n = scandir (dir, &names, NULL, alphasort);
  if (n == -1) {
    fprintf (stderr, "replay: %s: %s\n", dir, strerror (errno));
    return -1;
  }
  for (i = 0; i < n; i++) {
    if (names[i]->d_name[0] != '.') {
      snprintf (path, sizeof path, "%s/%s", dir, names[i]->d_name);
      if (replay_file (path) == -1)
        failed = 1;
      else
        ran++;
    }
    free (names[i]);
  }
  free (names);
  return failed ? -1 : ran;
}

/* A file, or every file of a directory.  Returns how many ran, or -1. */
static int
replay_path (const char *path)
{
  struct stat st;

  if (stat (path, &st) == -1) {
    fprintf (stderr, "replay: %s: %s\n", path, strerror (errno));
    return -1;
  }
  if (S_ISDIR (st.st_mode))
    return replay_dir (path);
  return replay_file (path) == -1 ? -1 : 1;
}

int
main (int argc, char *argv[])
{
  const char *srcdir = getenv ("abs_top_srcdir");
  char corpus[4096], regress[4096];
  struct stat st;
  int i, n, total = 0;

  signal (SIGABRT, name_input);
  if (argc > 1) {
    for (i = 1; i < argc; i++) {
      if ((n = replay_path (argv[i])) == -1)
        return EXIT_FAILURE;
      total += n;
    }
  }
  else {
    if (srcdir == NULL)
      srcdir = ".";
    snprintf (corpus, sizeof corpus, "%s/tests/fuzz/corpus/%s",
              srcdir, FUZZ_TARGET);
    snprintf (regress, sizeof regress, "%s/tests/fuzz/regress/%s",
              srcdir, FUZZ_TARGET);
    if ((n = replay_path (corpus)) == -1)
      return EXIT_FAILURE;
    total += n;
    if (stat (regress, &st) == 0) {
      if ((n = replay_path (regress)) == -1)
        return EXIT_FAILURE;
      total += n;
    }
  }
  /* An empty corpus would pass without checking anything. */
  if (total == 0) {
    fprintf (stderr, "replay: %s: no input to replay\n", FUZZ_TARGET);
    return EXIT_FAILURE;
  }
  printf ("replay: %s: %d inputs, every property held\n", FUZZ_TARGET,
          total);
  return EXIT_SUCCESS;
}
