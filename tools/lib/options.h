/* nbd-libev-examples: the command-line options the tools share.
 *
 * Both tools take the same ring options (--requests, --request-size),
 * the same connection and progress options, and report a mistake on
 * the command line the way they report every other error: one line on
 * stderr, exit status 1.  Each option_* parser takes one option's
 * value as typed and returns 0 with the value in *ret, or -1 with a
 * message naming the option and the value in *err (set_error in
 * tools/lib/util.h); it never prints or exits, so that any string can
 * be tried on it (tests/fuzz/fuzz-parse.c).  option_shared parses all
 * the options both tools take, and reports a wrong value with
 * die_error.
 */

#ifndef NBD_LIBEV_EXAMPLES_OPTIONS_H
#define NBD_LIBEV_EXAMPLES_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bounds.h"
#include "image.h"
#include "progress.h"

/* --requests=N: 1 to MAX_REQUESTS. */
int option_requests (const char *arg, unsigned *ret, char **err);

/* --request-size=SIZE: MIN_REQUEST_SIZE to MAX_REQUEST_SIZE. */
int option_request_size (const char *arg, uint64_t *ret, char **err);

/* --block-size=SIZE: a block hash's block size, a power of two up to
 * MAX_REQUEST_SIZE, so that a request can always hold a whole block.
 */
int option_block_size (const char *arg, uint64_t *ret, char **err);

/* --socket-buffer=SIZE: MIN_SOCKET_BUFFER to MAX_SOCKET_BUFFER, or 0
 * for the kernel's.
 */
int option_socket_buffer (const char *arg, uint64_t *ret, char **err);

/* -C N, --connections=N: 1 to max. */
int option_connections (const char *arg, unsigned max, unsigned *ret,
                        char **err);

/* --timeout=SECONDS: whole seconds, 0 (no timeout) to MAX_TIMEOUT. */
int option_timeout (const char *arg, unsigned *ret, char **err);

/* --cache=MODE: how a local file, read by the program or by the
 * suite's own server, uses the page cache (tools/lib/endpoint.h):
 * "default" or "none".
 */
int option_cache (const char *arg, enum image_cache *ret, char **err);

/* -p, --progress[=FD]: PROGRESS_BAR without a value, else FD, which
 * must be an open file descriptor (tools/lib/progress.h has the formats).
 */
int option_progress (const char *arg, int *ret, char **err);

/* Call when getopt_long returns ':' or '?', with main's argv.  The
 * option string must start with ':' so that getopt prints nothing itself.
 */
void option_error (int c, char *const argv[],
                   const struct option *long_options)
  __attribute__ ((noreturn));

/* --version: print "progname VERSION" on stdout and exit 0. */
void option_version (void) __attribute__ ((noreturn));

/* The options both tools take: getopt_long's codes for those without
 * a short name (above any code a tool gives its own), the short ones,
 * and the long ones, to put in each tool's table.
 */
enum {
  OPT_SOCKET_BUFFER = 1024, OPT_TIMEOUT, OPT_CACHE, OPT_REQUESTS,
  OPT_REQUEST_SIZE,
};
#define SHARED_SHORT_OPTIONS "C:pvV"
#define SHARED_LONG_OPTIONS \
  { "connections",   required_argument, NULL, 'C' }, \
  { "progress",      optional_argument, NULL, 'p' }, \
  { "verbose",       no_argument,       NULL, 'v' }, \
  { "version",       no_argument,       NULL, 'V' }, \
  { "socket-buffer", required_argument, NULL, OPT_SOCKET_BUFFER }, \
  { "timeout",       required_argument, NULL, OPT_TIMEOUT }, \
  { "cache",         required_argument, NULL, OPT_CACHE }, \
  { "requests",      required_argument, NULL, OPT_REQUESTS }, \
  { "request-size",  required_argument, NULL, OPT_REQUEST_SIZE }

/* What they set; the caller fills in the defaults first. */
struct shared_options {
  unsigned connections;         /* -C; 0: decided by multi-conn */
  int progress_mode;            /* -p: PROGRESS_NONE, PROGRESS_BAR or FD */
  uint64_t socket_buffer;       /* 0: the kernel's */
  bool socket_buffer_given;     /* --socket-buffer: on TCP too */
  unsigned timeout;             /* seconds; 0: none */
  enum image_cache cache;
  unsigned requests;            /* --requests, or where to start */
  bool requests_given;          /* --requests: fixed, not adapted */
  uint64_t request_size;        /* --request-size, or the least */
  bool request_size_given;      /* --request-size: checked, fixed */
  const char *request_size_arg; /* --request-size as typed */
};

/* The values before the options: no progress, the default timeout,
 * socket buffers and cache, and nr_requests in flight.  Unless
 * --request-size fixes it, DEFAULT_REQUEST_SIZE is the least the
 * adapting request size goes down to, not where it starts: with an
 * NBD server it starts at the most (tools/lib/engine-setup.c).
 */
#define SHARED_OPTIONS_INIT(nr_requests) {                              \
    .progress_mode = PROGRESS_NONE, .timeout = DEFAULT_TIMEOUT,         \
    .socket_buffer = DEFAULT_SOCKET_BUFFER,                             \
    .cache = IMAGE_CACHE_DEFAULT, .requests = (nr_requests),            \
    .request_size = DEFAULT_REQUEST_SIZE,                               \
  }

/* The sizes both tools' --help texts print, each written as the
 * options take it ("256k", "1M"), so that the texts cannot drift from
 * bounds.h: --request-size's bounds, the least and the most an
 * adapting request size takes, and the block size of the hash.
 */
struct help_sizes {
  char min[16], max[16], least[16], most[16], block[16];
};
void option_help_sizes (struct help_sizes *s);

/* The end of both tools' --help: the options both take, but for the
 * ring's, which each words for itself.
 */
void option_help_shared (FILE *fp);

/* If c is one of the shared options, parse it into o (-v sets verbose,
 * -V prints the version and exits, -C allows up to max_connections) and
 * return true; else return false.
 */
bool option_shared (int c, const char *arg, struct shared_options *o,
                    unsigned max_connections);

/* Both tools' rule for the request size of a block hash in blocks of
 * block_size (a power of two): every request holds whole blocks, or a
 * block would straddle two slots.  0 with o->request_size a multiple
 * of block_size: as given, or without --request-size the least size
 * requests adapt down to, rounded up to one.  -1 for a --request-size that
 * block_size does not divide, with a message naming it as typed in
 * *err.
 */
int option_request_size_in_blocks (struct shared_options *o,
                                   uint64_t block_size, char **err);

/* The most the depth may grow to (tools/lib/depth.h) before the servers'
 * own limits, from --requests and --request-size in o: a value given
 * explicitly is its own maximum.
 */
void option_depth_bounds (const struct shared_options *o,
                          unsigned *max_requests, uint64_t *max_size);

#endif /* NBD_LIBEV_EXAMPLES_OPTIONS_H */
