/* Unit tests for tools/lib/util.c. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iszero.h"
#include "progress.h"
#include "util.h"
#include "check.h"


static void
size_ok (const char *s, uint64_t expect)
{
  uint64_t v = 0;

  if (parse_size (s, &v) == -1 || v != expect) {
    fprintf (stderr, "parse_size (\"%s\") gave %d/%llu, expected %llu\n",
             s, errno, (unsigned long long) v, (unsigned long long) expect);
    failures++;
  }
}

static void
size_bad (const char *s, int expect_errno)
{
  uint64_t v = 12345;

  errno = 0;
  if (parse_size (s, &v) != -1 || errno != expect_errno || v != 12345) {
    fprintf (stderr, "parse_size (\"%s\") was accepted or gave errno %d\n",
             s, errno);
    failures++;
  }
}

static void
test_parse_size (void)
{
  size_ok ("0", 0);
  size_ok ("512", 512);
  size_ok ("64k", 65536);
  size_ok ("64K", 65536);
  size_ok ("1M", 1048576);
  size_ok ("1m", 1048576);
  size_ok ("1MiB", 1048576);
  size_ok ("1MB", 1048576);
  size_ok ("2G", 2147483648ULL);
  size_ok ("1T", 1ULL << 40);
  size_ok ("7E", 7ULL << 60);
  size_ok ("9223372036854775807", INT64_MAX);

  size_bad ("", EINVAL);
  size_bad ("M", EINVAL);
  size_bad ("-1", EINVAL);
  size_bad (" 1", EINVAL);
  size_bad ("+1", EINVAL);
  size_bad ("1x", EINVAL);
  size_bad ("1MM", EINVAL);
  size_bad ("1M ", EINVAL);
  size_bad ("1.5M", EINVAL);
  size_bad ("0x10", EINVAL);
  size_bad ("8E", ERANGE);              /* 2^63 is past INT64_MAX */
  size_bad ("9223372036854775808", ERANGE);
  size_bad ("99999999999999999999999", ERANGE);
  size_bad ("16777216T", ERANGE);
}

static void
test_parse_count (void)
{
  unsigned v = 0;

  CHECK (parse_count ("16", 1, 256, &v) == 0 && v == 16);
  CHECK (parse_count ("1", 1, 256, &v) == 0 && v == 1);
  CHECK (parse_count ("256", 1, 256, &v) == 0 && v == 256);
  CHECK (parse_count ("0", 1, 256, &v) == -1);
  CHECK (parse_count ("257", 1, 256, &v) == -1);
  CHECK (parse_count ("-1", 1, 256, &v) == -1);
  CHECK (parse_count ("1k", 1, 256, &v) == -1);
  CHECK (parse_count ("", 1, 256, &v) == -1);
  CHECK (parse_count ("99999999999999999999", 1, 256, &v) == -1);
}

static void
test_is_zero (void)
{
  static char buf[1024 * 1024 + 7];
  size_t lens[] = { 0, 1, 15, 16, 17, 4096, sizeof buf };
  size_t i, pos;

  for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
    CHECK (is_zero (buf, lens[i]));
    /* A single non-zero byte anywhere, including the very last. */
    for (pos = 0; pos < lens[i]; pos += (lens[i] > 64 ? lens[i] / 7 : 1)) {
      buf[pos] = 1;
      CHECK (!is_zero (buf, lens[i]));
      buf[pos] = 0;
    }
    if (lens[i] > 0) {
      buf[lens[i] - 1] = (char) 0x80;
      CHECK (!is_zero (buf, lens[i]));
      buf[lens[i] - 1] = 0;
    }
  }
}

static void
test_human_size (void)
{
  char buf[32];

  CHECK (strcmp (human_size (0, buf, sizeof buf), "0 bytes") == 0);
  CHECK (strcmp (human_size (1023, buf, sizeof buf), "1023 bytes") == 0);
  CHECK (strcmp (human_size (1024, buf, sizeof buf), "1.0 KiB") == 0);
  CHECK (strcmp (human_size (1536 * 1024, buf, sizeof buf), "1.5 MiB") == 0);
  CHECK (strcmp (human_size (1ULL << 40, buf, sizeof buf), "1.0 TiB") == 0);
}

/* The help texts print sizes as the options take them, and each must
 * read back as the number it stands for.
 */
static void
test_option_size (void)
{
  static const uint64_t sizes[] = {
    0, 512, 1000, 4096, 256 * 1024, 1536 * 1024, 1024 * 1024,
    32 * 1024 * 1024, 1ULL << 30, 1ULL << 40,
  };
  char buf[32];
  size_t i;

  CHECK (strcmp (option_size (0, buf, sizeof buf), "0") == 0);
  CHECK (strcmp (option_size (512, buf, sizeof buf), "512") == 0);
  CHECK (strcmp (option_size (4096, buf, sizeof buf), "4k") == 0);
  CHECK (strcmp (option_size (1536 * 1024, buf, sizeof buf), "1536k") == 0);
  CHECK (strcmp (option_size (32 * 1024 * 1024, buf, sizeof buf), "32M")
         == 0);
  CHECK (strcmp (option_size (1ULL << 30, buf, sizeof buf), "1G") == 0);
  CHECK (strcmp (option_size (1ULL << 40, buf, sizeof buf), "1024G") == 0);
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    size_ok (option_size (sizes[i], buf, sizeof buf), sizes[i]);
}

/* A progress frame names the unit of the rate as it scales: an empty
 * 1 TiB image hashed in a third of a second covers terabytes a second.
 */
static void
test_progress_format (void)
{
  char buf[128];
  const uint64_t gib = UINT64_C (1) << 30;

  CHECK (strcmp (progress_format (buf, sizeof buf, gib, gib, 500000000),
                 "100.0%  1.0 GiB / 1.0 GiB  2.0 GiB/s  0.50 s") == 0);
  CHECK (strcmp (progress_format (buf, sizeof buf, 1024 * gib, 1024 * gib,
                                  320000000),
                 "100.0%  1.0 TiB / 1.0 TiB  3.1 TiB/s  0.32 s") == 0);
  CHECK (strcmp (progress_format (buf, sizeof buf, 0, gib, 0),
                 "  0.0%  0 bytes / 1.0 GiB  0 bytes/s  0.00 s") == 0);
  /* An empty image is done from the start. */
  CHECK (strcmp (progress_format (buf, sizeof buf, 0, 0, 1000000),
                 "100.0%  0 bytes / 0 bytes  0 bytes/s  0.00 s") == 0);
}

static void
test_round (void)
{
  CHECK (round_down (0, 512) == 0);
  CHECK (round_down (511, 512) == 0);
  CHECK (round_down (512, 512) == 512);
  CHECK (round_down (1000, 7) == 994);
  CHECK (round_up (0, 512) == 0);
  CHECK (round_up (1, 512) == 512);
  CHECK (round_up (512, 512) == 512);
  CHECK (round_up (513, 512) == 1024);
  CHECK (round_up (UINT64_C (1) << 40, 65536) == UINT64_C (1) << 40);
}

static void
test_power_of_2 (void)
{
  CHECK (!is_power_of_2 (0));
  CHECK (is_power_of_2 (1));
  CHECK (is_power_of_2 (65536));
  CHECK (!is_power_of_2 (65537));
  CHECK (is_power_of_2 (1ULL << 63));
}

int
main (void)
{
  test_parse_size ();
  test_parse_count ();
  test_is_zero ();
  test_human_size ();
  test_option_size ();
  test_progress_format ();
  test_round ();
  test_power_of_2 ();
  return check_status ("test-util");
}
