/* nbd-libev-examples: shared command-line options.  See options.h. */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include "blkhash.h"
#include "options.h"
#include "progress.h"
#include "util.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "standalone"
#endif

/* A whole number from min to max for option --name, or a message that
 * says what it must be ("a number of seconds from 0 to 86400").
 */
static int
count_option (const char *name, const char *arg, unsigned min, unsigned max,
              const char *unit, unsigned *ret, char **err)
{
  if (parse_count (arg, min, max, ret) == -1)
    return set_error (err, "--%s: '%s' is not a number%s from %u to %u",
                      name, arg, unit, min, max);
  return 0;
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

int
option_request_size_in_blocks (struct shared_options *o, uint64_t block_size,
                               char **err)
{
  if (o->request_size % block_size == 0)
    return 0;
  if (o->request_size_given)
    return set_error (err, "--request-size: %s is not a multiple of the "
                      "block size (%" PRIu64 " bytes)", o->request_size_arg,
                      block_size);
  o->request_size = round_up (o->request_size, block_size);
  return 0;
}

int
option_requests (const char *arg, unsigned *ret, char **err)
{
  return count_option ("requests", arg, 1, MAX_REQUESTS, "", ret, err);
}

int
option_request_size (const char *arg, uint64_t *ret, char **err)
{
  if (parse_size (arg, ret) == -1)
    return set_error (err, "--request-size: '%s' is not a size: %s", arg,
                      strerror (errno));
  if (*ret < MIN_REQUEST_SIZE || *ret > MAX_REQUEST_SIZE)
    return set_error (err, "--request-size: '%s' is outside %d bytes to "
                      "%d MiB", arg, MIN_REQUEST_SIZE,
                      MAX_REQUEST_SIZE / (1024 * 1024));
  return 0;
}

int
option_block_size (const char *arg, uint64_t *ret, char **err)
{
  if (parse_size (arg, ret) == -1)
    return set_error (err, "--block-size: '%s' is not a size: %s", arg,
                      strerror (errno));
  if (!is_power_of_2 (*ret) || *ret > MAX_REQUEST_SIZE)
    return set_error (err, "--block-size: %s is not a power of two up to "
                      "%d MiB", arg, MAX_REQUEST_SIZE / (1024 * 1024));
  return 0;
}

int
option_socket_buffer (const char *arg, uint64_t *ret, char **err)
{
  char min[32], max[32];

  if (parse_size (arg, ret) == -1 || (*ret != 0 &&
      (*ret < MIN_SOCKET_BUFFER || *ret > MAX_SOCKET_BUFFER)))
    return set_error (err, "--socket-buffer: '%s' is not 0 or a size "
                      "from %s to %s", arg,
                      human_size (MIN_SOCKET_BUFFER, min, sizeof min),
                      human_size (MAX_SOCKET_BUFFER, max, sizeof max));
  return 0;
}

int
option_connections (const char *arg, unsigned max, unsigned *ret, char **err)
{
  return count_option ("connections", arg, 1, max, "", ret, err);
}

int
option_timeout (const char *arg, unsigned *ret, char **err)
{
  return count_option ("timeout", arg, 0, MAX_TIMEOUT, " of seconds", ret,
                       err);
}

int
option_cache (const char *arg, enum image_cache *ret, char **err)
{
  if (strcmp (arg, "default") == 0)
    *ret = IMAGE_CACHE_DEFAULT;
  else if (strcmp (arg, "none") == 0)
    *ret = IMAGE_CACHE_NONE;
  else
    return set_error (err, "--cache: '%s' is not 'default' or 'none'", arg);
  return 0;
}

int
option_progress (const char *arg, int *ret, char **err)
{
  unsigned fd;

  if (arg == NULL) {
    *ret = PROGRESS_BAR;
    return 0;
  }
  if (parse_count (arg, 0, INT_MAX, &fd) == -1)
    return set_error (err, "--progress: '%s' is not a file descriptor "
                      "number", arg);
  /* Better now, in one line, than a progress line lost at every update. */
  if (fcntl (fd, F_GETFD) == -1)
    return set_error (err, "--progress: file descriptor %u is not open", fd);
  *ret = fd;
  return 0;
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
option_help_sizes (struct help_sizes *s)
{
  option_size (MIN_REQUEST_SIZE, s->min, sizeof s->min);
  option_size (MAX_REQUEST_SIZE, s->max, sizeof s->max);
  option_size (DEFAULT_REQUEST_SIZE, s->least, sizeof s->least);
  option_size (ADAPT_MAX_SIZE, s->most, sizeof s->most);
  option_size (BLKHASH_BLOCK_SIZE, s->block, sizeof s->block);
}

void
option_help_shared (FILE *fp)
{
  char min[16], max[16], dflt[16];

  option_size (MIN_SOCKET_BUFFER, min, sizeof min);
  option_size (MAX_SOCKET_BUFFER, max, sizeof max);
  option_size (DEFAULT_SOCKET_BUFFER, dflt, sizeof dflt);
  fprintf (fp,
"  --socket-buffer=SIZE\n"
"                      SO_SNDBUF and SO_RCVBUF of every socket (%s to %s,\n"
"                      default %s; 0 for the kernel's)\n"
"  -C N, --connections=N\n"
"                      connections to each server (1-%d; default %d to\n"
"                      start with, and up to %d where they bring more\n"
"                      rate, %d for a long pass from far servers, if\n"
"                      the server advertises multi-conn, else 1;\n"
"                      a captive [ CMD ARGS ... ]: 1, never adapted)\n"
"  --cache=MODE        local image files: default (the page cache) or\n"
"                      none (O_DIRECT; their servers keep out of it)\n"
"  --timeout=SECONDS   fail if a server sends nothing for this long while\n"
"                      a command waits for it (0-%d, 0 for never;\n"
"                      default %d)\n"
"  -p, --progress      show a progress bar on stderr, if it is a terminal\n"
"  --progress=FD       write progress to file descriptor FD as N/100 lines\n"
"  -v, --verbose       print one line per request event, with timings\n"
"  -h, --help          show this help and exit\n"
"  -V, --version       show the version and exit\n",
           min, max, dflt, MAX_CONNECTIONS, DEFAULT_CONNECTIONS,
           ADAPT_CONNECTIONS, LONG_CONNECTIONS, MAX_TIMEOUT, DEFAULT_TIMEOUT);
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
  char *err = NULL;
  int r;

  switch (c) {
  case 'C':
    r = option_connections (arg, max_connections, &o->connections, &err);
    break;
  case 'p':
    r = option_progress (arg, &o->progress_mode, &err);
    break;
  case 'v':
    verbose = true;
    return true;
  case 'V':
    option_version ();
  case OPT_SOCKET_BUFFER:
    r = option_socket_buffer (arg, &o->socket_buffer, &err);
    o->socket_buffer_given = true;
    break;
  case OPT_TIMEOUT:
    r = option_timeout (arg, &o->timeout, &err);
    break;
  case OPT_CACHE:
    r = option_cache (arg, &o->cache, &err);
    break;
  case OPT_REQUESTS:
    r = option_requests (arg, &o->requests, &err);
    o->requests_given = true;
    break;
  case OPT_REQUEST_SIZE:
    r = option_request_size (arg, &o->request_size, &err);
    o->request_size_given = true;
    o->request_size_arg = arg;
    break;
  default:
    return false;
  }
  if (r == -1)
    die_error (err);
  return true;
}
