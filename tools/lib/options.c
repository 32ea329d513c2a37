/* nbd-libev-examples: shared command-line options.  See options.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include "options.h"
#include "progress.h"
#include "util.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "standalone"
#endif

/* A whole number from min to max for option --name, or a message that
 * says what it must be ("a number of seconds from 0 to 86400").
 */
static unsigned
count_option (const char *name, const char *arg, unsigned min, unsigned max,
              const char *unit)
{
  unsigned v;

  if (parse_count (arg, min, max, &v) == -1)
    die ("--%s: '%s' is not a number%s from %u to %u",
         name, arg, unit, min, max);
  return v;
}

void
option_depth_bounds (const struct shared_options *o, unsigned *max_requests,
                     uint64_t *max_size)
{
  *max_size = o->request_size_given ? o->request_size
    : MAX (o->request_size, ADAPT_MAX_SIZE);
  *max_requests = o->requests_given ? o->requests
    : MAX (o->requests, MIN (MAX_REQUESTS, ADAPT_MEMORY / *max_size));
}

unsigned
option_requests (const char *arg)
{
  return count_option ("requests", arg, 1, MAX_REQUESTS, "");
}

uint64_t
option_request_size (const char *arg)
{
  uint64_t v;

  if (parse_size (arg, &v) == -1)
    die ("--request-size: '%s' is not a size: %s", arg, strerror (errno));
  if (v < MIN_REQUEST_SIZE || v > MAX_REQUEST_SIZE)
    die ("--request-size: '%s' is outside %d bytes to %d MiB",
         arg, MIN_REQUEST_SIZE, MAX_REQUEST_SIZE / (1024 * 1024));
  return v;
}

uint64_t
option_block_size (const char *arg)
{
  uint64_t v;

  if (parse_size (arg, &v) == -1)
    die ("--block-size: '%s' is not a size: %s", arg, strerror (errno));
  if (!is_power_of_2 (v) || v > MAX_REQUEST_SIZE)
    die ("--block-size: %s is not a power of two up to %d MiB",
         arg, MAX_REQUEST_SIZE / (1024 * 1024));
  return v;
}

uint64_t
option_socket_buffer (const char *arg)
{
  char min[32], max[32];
  uint64_t v;

  if (parse_size (arg, &v) == -1 ||
      v < MIN_SOCKET_BUFFER || v > MAX_SOCKET_BUFFER)
    die ("--socket-buffer: '%s' is not a size from %s to %s", arg,
         human_size (MIN_SOCKET_BUFFER, min, sizeof min),
         human_size (MAX_SOCKET_BUFFER, max, sizeof max));
  return v;
}

unsigned
option_connections (const char *arg, unsigned max)
{
  return count_option ("connections", arg, 1, max, "");
}

unsigned
option_timeout (const char *arg)
{
  return count_option ("timeout", arg, 0, 86400, " of seconds");
}

enum image_cache
option_cache (const char *arg)
{
  if (strcmp (arg, "default") == 0)
    return IMAGE_CACHE_DEFAULT;
  if (strcmp (arg, "none") == 0)
    return IMAGE_CACHE_NONE;
  die ("--cache: '%s' is not 'default' or 'none'", arg);
}

int
option_progress (const char *arg)
{
  unsigned fd;

  if (arg == NULL)
    return PROGRESS_BAR;
  if (parse_count (arg, 0, INT_MAX, &fd) == -1)
    die ("--progress: '%s' is not a file descriptor number", arg);
  /* Better now, in one line, than a progress line lost at every update. */
  if (fcntl (fd, F_GETFD) == -1)
    die ("--progress: file descriptor %u is not open", fd);
  return fd;
}

/* getopt's own messages are silenced (the ':' that starts the option
 * string): they name argv[0] rather than progname, and a full usage
 * after them would bury the one line that matters.  c is what
 * getopt_long returned: ':' for a missing value, '?' otherwise.
 */
void
option_error (int c, char *const argv[], const struct option *long_options)
{
  /* A long option always uses up its argv element, so the one that
   * getopt rejected is the last one it stepped over.
   */
  const char *arg = argv[optind - 1];
  const struct option *o;

  /* getopt sets optopt to the option's val when a long option lacks a
   * value it needs or has one it does not take, to the character for an
   * unknown short option, and to 0 for an unknown or ambiguous long one.
   */
  for (o = long_options; optopt != 0 && o->name != NULL; o++) {
    if (o->val == optopt)
      die ("option '--%s' %s; try --help",
           o->name, c == ':' ? "needs a value" : "takes no value");
  }
  if (optopt != 0)
    die ("unknown option '-%c'; try --help", optopt);
  die ("unknown or ambiguous option '%s'; try --help", arg);
}

void
option_help_shared (FILE *fp)
{
  fprintf (fp,
"  --socket-buffer=SIZE\n"
"                      set SO_SNDBUF and SO_RCVBUF of every socket\n"
"  -C N, --connections=N\n"
"                      connections to each server (1-%d; default up to\n"
"                      %d, one per CPU, if the server advertises\n"
"                      multi-conn, else 1)\n"
"  --cache=MODE        local image files: default (the page cache) or\n"
"                      none (O_DIRECT; their servers keep out of it)\n"
"  --timeout=SECONDS   fail if a server sends nothing for this long while\n"
"                      a command waits for it (default %d, 0 for never)\n"
"  -p, --progress      show a progress bar on stderr, if it is a terminal\n"
"  --progress=FD       write progress to file descriptor FD as N/100 lines\n"
"  -v, --verbose       print one line per request event, with timings\n"
"  -h, --help          show this help and exit\n"
"  -V, --version       show the version and exit\n",
           MAX_CONNECTIONS, DEFAULT_CONNECTIONS, DEFAULT_TIMEOUT);
}

/* The program's version and, as nbdcopy prints it, the libnbd it runs
 * with, which a handle says.
 */
void
option_version (void)
{
  struct nbd_handle *nbd = nbd_create ();

  printf ("%s %s\n", progname, PACKAGE_VERSION);
  if (nbd != NULL) {
    printf ("libnbd %s\n", nbd_get_version (nbd));
    nbd_close (nbd);
  }
  exit (EXIT_SUCCESS);
}

bool
option_shared (int c, const char *arg, struct shared_options *o,
               unsigned max_connections)
{
  switch (c) {
  case 'C':
    o->connections = option_connections (arg, max_connections);
    return true;
  case 'p':
    o->progress_mode = option_progress (arg);
    return true;
  case 'v':
    verbose = true;
    return true;
  case 'V':
    option_version ();
  case OPT_SOCKET_BUFFER:
    o->socket_buffer = option_socket_buffer (arg);
    return true;
  case OPT_TIMEOUT:
    o->timeout = option_timeout (arg);
    return true;
  case OPT_CACHE:
    o->cache = option_cache (arg);
    return true;
  case OPT_REQUESTS:
    o->requests = option_requests (arg);
    o->requests_given = true;
    return true;
  case OPT_REQUEST_SIZE:
    o->request_size = option_request_size (arg);
    o->request_size_given = true;
    o->request_size_arg = arg;
    return true;
  default:
    return false;
  }
}
