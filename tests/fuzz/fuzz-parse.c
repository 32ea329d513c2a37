/* nbd-libev-examples: fuzz target for the tools' parsers: sizes and
 * counts (tools/lib/util.c), option values (tools/lib/options.c), the
 * images on a command line and the format probe (tools/lib/image.c).
 *
 * The first byte of the input picks the parser, the rest is its
 * argument: a string (up to the first NUL), words separated by NULs,
 * or the first bytes of a file.  Each parser must give a result or an
 * error, never crash, print or exit (libFuzzer reports an exit), and
 * leak nothing (LeakSanitizer); and the result must be the model's:
 *
 *  - parse_size and parse_count: digits, then for a size one of
 *    k, m, g, t, p, e (any case) with an optional B, b or iB; the value
 *    computed here in 128 bits, ERANGE past 2^63 - 1 (a size) or out
 *    of [min, max] (a count), EINVAL for anything else;
 *  - the option_* parsers: a value within the option's bounds, or a
 *    message that names the option;
 *  - image_parse_args: the grammar of image.h, word by word;
 *  - image_format_of: the first magic that matches, in the order of
 *    qemu's formats as image.c lists them, else raw.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "fuzz.h"
#include "image.h"
#include "options.h"
#include "util.h"

/* The longest string or list of words tried. */
#define MAX_ARG 4096
#define MAX_WORDS 64

/* The input as a NUL-terminated string. */
static const char *
take_string (struct fuzz_input *in, char *buf)
{
  size_t n = MIN (in->len, (size_t) MAX_ARG);

  memcpy (buf, in->p, n);
  buf[n] = '\0';
  return buf;
}

static bool
is_digit (char c)
{
  return c >= '0' && c <= '9';
}

/* Digits as a number, saturated past 2^64 (*too_big set). */
static const char *
model_digits (const char *s, unsigned __int128 *v, bool *too_big)
{
  *v = 0;
  *too_big = false;
  for (; is_digit (*s); s++) {
    *v = *v * 10 + (*s - '0');
    if (*v > UINT64_MAX) {
      *too_big = true;
      *v = (unsigned __int128) UINT64_MAX + 1;
    }
  }
  return s;
}

/* parse_size's grammar: 0 and *ret, or an errno. */
static int
model_size (const char *s, uint64_t *ret)
{
  static const char units[] = "kKmMgGtTpPeE";
  unsigned __int128 v;
  const char *u;
  bool too_big;
  unsigned shift = 0;

  if (!is_digit (*s))
    return EINVAL;
  s = model_digits (s, &v, &too_big);
  if (too_big)
    return ERANGE;              /* strtoull's, before the suffix */
  if (*s != '\0') {
    u = strchr (units, *s);
    if (u == NULL)
      return EINVAL;
    shift = (u - units) / 2 + 1;
    s++;
    if (strcmp (s, "") != 0 && strcmp (s, "B") != 0 &&
        strcmp (s, "b") != 0 && strcmp (s, "iB") != 0)
      return EINVAL;
  }
  v <<= 10 * shift;
  if (v > INT64_MAX)
    return ERANGE;
  *ret = v;
  return 0;
}

/* parse_count's grammar, in [min, max]. */
static int
model_count (const char *s, unsigned min, unsigned max, unsigned *ret)
{
  unsigned __int128 v;
  bool too_big;

  if (!is_digit (*s))
    return EINVAL;
  s = model_digits (s, &v, &too_big);
  if (too_big)
    return ERANGE;
  if (*s != '\0')
    return EINVAL;
  if (v < min || v > max)
    return ERANGE;
  *ret = v;
  return 0;
}

static void
check_size (const char *s)
{
  uint64_t got = 0, want = 0;
  int err = model_size (s, &want);

  errno = 0;
  if (parse_size (s, &got) == 0)
    FUZZ_CHECK (err == 0 && got == want);
  else
    FUZZ_CHECK (err != 0 && errno == err);
}

static void
check_count (const char *s, unsigned min, unsigned max)
{
  unsigned got = 0, want = 0;
  int err = model_count (s, min, max, &want);

  errno = 0;
  if (parse_count (s, min, max, &got) == 0)
    FUZZ_CHECK (err == 0 && got == want);
  else
    FUZZ_CHECK (err != 0 && errno == err);
}

/* A parser's failure: -1 and a message that starts with prefix. */
static void
check_failure (int r, char *err, const char *prefix)
{
  FUZZ_CHECK (r == -1);
  FUZZ_CHECK (err != NULL && strncmp (err, prefix, strlen (prefix)) == 0);
  free (err);
}

/* One of the option parsers, with its value against its bounds. */
static void
check_option (unsigned which, const char *s)
{
  char *err = NULL;
  uint64_t size, v64;
  unsigned count, v;
  enum image_cache cache;
  int fd;

  switch (which % 8) {
  case 0:
    if (option_requests (s, &v, &err) == 0)
      FUZZ_CHECK (model_count (s, 1, MAX_REQUESTS, &count) == 0 && v == count);
    else
      check_failure (-1, err, "--requests: ");
    break;
  case 1:
    if (option_request_size (s, &v64, &err) == 0)
      FUZZ_CHECK (model_size (s, &size) == 0 && v64 == size &&
                  size >= MIN_REQUEST_SIZE && size <= MAX_REQUEST_SIZE);
    else
      check_failure (-1, err, "--request-size: ");
    break;
  case 2:
    if (option_block_size (s, &v64, &err) == 0)
      FUZZ_CHECK (model_size (s, &size) == 0 && v64 == size &&
                  is_power_of_2 (size) && size <= MAX_REQUEST_SIZE);
    else
      check_failure (-1, err, "--block-size: ");
    break;
  case 3:
    /* 0 is the kernel's own size; any other size is bounded. */
    if (option_socket_buffer (s, &v64, &err) == 0)
      FUZZ_CHECK (model_size (s, &size) == 0 && v64 == size &&
                  (size == 0 || (size >= MIN_SOCKET_BUFFER &&
                                 size <= MAX_SOCKET_BUFFER)));
    else
      check_failure (-1, err, "--socket-buffer: ");
    break;
  case 4:
    if (option_connections (s, which / 8 % 20, &v, &err) == 0)
      FUZZ_CHECK (model_count (s, 1, which / 8 % 20, &count) == 0 &&
                  v == count);
    else
      check_failure (-1, err, "--connections: ");
    break;
  case 5:
    if (option_timeout (s, &v, &err) == 0)
      FUZZ_CHECK (model_count (s, 0, MAX_TIMEOUT, &count) == 0 && v == count);
    else
      check_failure (-1, err, "--timeout: ");
    break;
  case 6:
    if (option_cache (s, &cache, &err) == 0)
      FUZZ_CHECK (strcmp (s, cache == IMAGE_CACHE_NONE ? "none"
                          : "default") == 0);
    else
      check_failure (-1, err, "--cache: ");
    break;
  default:
    /* Only descriptors this process has open are taken. */
    if (option_progress (s, &fd, &err) == 0)
      FUZZ_CHECK (model_count (s, 0, INT32_MAX, &count) == 0 &&
                  (unsigned) fd == count);
    else
      check_failure (-1, err, "--progress: ");
    break;
  }
}

/* image.h's grammar for one image at words[i]: its kind, or -1 for a
 * word image_parse refuses.  *next is the word after it.
 */
static int
model_image (char **words, int n, int i, int *next)
{
  static const char *const schemes[] = {
    "nbd:", "nbds:", "nbd+unix:", "nbds+unix:", "nbd+vsock:", "nbds+vsock:",
  };
  const char *w = words[i];
  size_t k, letters;
  int end;

  *next = i + 1;
  if (strcmp (w, "[") == 0) {
    for (end = i + 1; end < n && strcmp (words[end], "]") != 0; end++)
      ;
    if (end == n || end == i + 1)
      return -1;
    *next = end + 1;
    return IMAGE_COMMAND;
  }
  if (strcmp (w, "null:") == 0)
    return IMAGE_NULL;
  if (strcmp (w, "-") == 0)
    return IMAGE_STREAM;
  for (k = 0; k < sizeof schemes / sizeof schemes[0]; k++)
    if (strncmp (w, schemes[k], strlen (schemes[k])) == 0)
      return IMAGE_URI;
  letters = strspn (w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789+-.");
  if (letters > 0 && strncmp (w + letters, "://", 3) == 0)
    return -1;
  return IMAGE_FILE;
}

/* "[ CMD ARGS ]" as image.h names a command. */
static bool
is_command_name (const char *name, char **words, int first, int end)
{
  size_t at = 1;
  int k;

  if (name[0] != '[')
    return false;
  for (k = first; k < end; k++) {
    if (name[at] != ' ' ||
        strncmp (name + at + 1, words[k], strlen (words[k])) != 0)
      return false;
    at += 1 + strlen (words[k]);
  }
  return strcmp (name + at, " ]") == 0;
}

/* The images on a command line: words separated by NULs. */
static void
check_images (struct fuzz_input *in, unsigned max)
{
  static char buf[MAX_ARG + 1];
  char *words[MAX_WORDS] = { NULL };
  struct image imgs[MAX_WORDS];
  char *err = NULL, *p;
  size_t len = MIN (in->len, (size_t) MAX_ARG);
  int n = 0, got, i, k, kind, next, want = 0;

  /* k NULs make k + 1 words, the last one ended by buf's own NUL. */
  memcpy (buf, in->p, len);
  buf[len] = '\0';
  for (p = buf; len > 0 && n < MAX_WORDS && p <= buf + len;
       p += strlen (p) + 1)
    words[n++] = p;

  got = image_parse_args (n, words, 0, imgs, max, &err);
  /* The model, word by word. */
  for (i = 0; i < n; i = next, want++) {
    if (words[i][0] == '-' && words[i][1] != '\0') {
      want = -1;
      break;
    }
    if ((unsigned) want == max) {
      want = max + 1;
      break;
    }
    kind = model_image (words, n, i, &next);
    if (kind == -1) {
      want = -1;
      break;
    }
    /* Compared only where both parsed an image, so that a wrong
     * count fails below, not here on an image never parsed.
     */
    if (want < MIN (got, (int) max)) {
      FUZZ_CHECK ((int) imgs[want].kind == kind);
      if (kind == IMAGE_COMMAND) {
        FUZZ_CHECK (is_command_name (imgs[want].name, words, i + 1,
                                     next - 1));
        for (k = i + 1; k < next - 1; k++)
          FUZZ_CHECK (imgs[want].argv[k - i - 1] == words[k]);
        FUZZ_CHECK (imgs[want].argv[next - i - 2] == NULL);
      }
      else
        FUZZ_CHECK (strcmp (imgs[want].name, words[i]) == 0);
      if (kind == IMAGE_FILE)
        FUZZ_CHECK (imgs[want].path == words[i]);
      if (kind == IMAGE_URI)
        FUZZ_CHECK (imgs[want].uri == words[i]);
    }
  }
  FUZZ_CHECK (got == want);
  if (got == -1) {
    FUZZ_CHECK (err != NULL && err[0] != '\0');
    free (err);
    return;
  }
  for (i = 0; i < MIN (got, (int) max); i++)
    image_free (&imgs[i]);
}

/* The magic at offset, if the bytes reach that far. */
static bool
magic_at (const uint8_t *b, size_t len, size_t offset, const char *magic,
          size_t n)
{
  return offset + n <= len && memcmp (b + offset, magic, n) == 0;
}

static void
check_format (const uint8_t *b, size_t len)
{
  const char *got = image_format_of (b, MIN (len, (size_t) IMAGE_PROBE_SIZE));
  const char *want = "raw";

  len = MIN (len, (size_t) IMAGE_PROBE_SIZE);
  if (magic_at (b, len, 0, "QFI\xfb", 4))
    want = magic_at (b, len, 4, "\0\0\0\1", 4) ? "qcow" : "qcow2";
  else if (magic_at (b, len, 0, "QED\0", 4))
    want = "qed";
  else if (magic_at (b, len, 0, "KDMV", 4) || magic_at (b, len, 0, "COWD", 4)
           || magic_at (b, len, 0, "# Disk DescriptorFile", 21))
    want = "vmdk";
  else if (magic_at (b, len, 0x40, "\x7f\x10\xda\xbe", 4))
    want = "vdi";
  else if (magic_at (b, len, 0, "vhdxfile", 8))
    want = "vhdx";
  else if (magic_at (b, len, 0, "conectix", 8))
    want = "vpc";
  else if (magic_at (b, len, 0, "LUKS\xba\xbe", 6))
    want = "luks";
  FUZZ_CHECK (strcmp (got, want) == 0);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static char buf[MAX_ARG + 1];
  struct fuzz_input in = { data, size };
  uint8_t which = take_u8 (&in), arg;
  unsigned min, max;

  switch (which % 5) {
  case 0:
    check_size (take_string (&in, buf));
    break;
  case 1:
    min = take_bytes (&in, 4);
    max = take_bytes (&in, 4);
    check_count (take_string (&in, buf), min, max);
    break;
  case 2:
    arg = take_u8 (&in);
    check_option (arg, take_string (&in, buf));
    break;
  case 3:
    check_images (&in, 1 + which / 5 % 4);
    break;
  default:
    check_format (in.p, in.len);
    break;
  }
  return 0;
}
